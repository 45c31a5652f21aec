/* The store's reads for the InfluxDB exporter (coord_store_export.h). Record queries walk a table's
 * primary key from a cursor, so each call reads only rows not yet exported. */
#include "coord_store_export.h"

#include "coord_store_internal.h"

#include <errno.h>

typedef struct s_query {
    const char *sql;
    int n_binds; // 0: none, 2: run, attempt, 5: run, attempt, a, b, limit
} s_query_t;

static const s_query_t s_queries[COORD_EXPORT_COUNT] = {
    [COORD_EXPORT_ATTEMPTS] =
        {"SELECT r.id, r.attempt, r.state, r.board, b.type, b.platform, r.workload, r.started_us,"
         " r.finished_us, r.fail_reason FROM runs r LEFT JOIN boards b ON b.name = r.board"
         " WHERE r.attempt > 0 ORDER BY r.ord",
         0},
    [COORD_EXPORT_T0] = {"SELECT t0_us FROM telemetry_series WHERE run = ?1 AND attempt = ?2", 2},
    [COORD_EXPORT_TELEMETRY] = {"SELECT seq, idx, t_us, sample FROM telemetry_json"
                                " WHERE run = ?1 AND attempt = ?2 AND (seq, idx) > (?3, ?4)"
                                " ORDER BY seq, idx LIMIT ?5",
                                5},
    [COORD_EXPORT_MINIBATCHES] =
        {"SELECT * FROM (SELECT epoch, idx, samples, fetch_stall_us, compute_us, loss,"
         " SUM(fetch_stall_us + compute_us) OVER (ORDER BY epoch, idx) AS cum_us FROM minibatches"
         " WHERE run = ?1 AND attempt = ?2) WHERE (epoch, idx) > (?3, ?4) ORDER BY epoch, idx"
         " LIMIT ?5",
         5},
    [COORD_EXPORT_EPOCHS] =
        {"SELECT * FROM (SELECT epoch, warmup, e2e_us, fetch_stall_us, compute_us, samples, loss,"
         " energy_mj, avg_power_mw, peak_power_mw, SUM(e2e_us) OVER (ORDER BY epoch) AS cum_us"
         " FROM epochs WHERE run = ?1 AND attempt = ?2) WHERE (epoch, 0) > (?3, ?4 * 0)"
         " ORDER BY epoch LIMIT ?5",
         5},
    [COORD_EXPORT_RESULT] = {"SELECT count(*), sum(e2e_us), sum(energy_mj) FROM epochs"
                             " WHERE run = ?1 AND attempt = ?2",
                             2},
    [COORD_EXPORT_FLEET] = {"SELECT (SELECT count(*) FROM boards WHERE online = 1),"
                            " (SELECT count(*) FROM boards WHERE platform <> 'imported'),"
                            " (SELECT count(*) FROM runs WHERE state = 'pending'),"
                            " (SELECT count(*) FROM runs WHERE state IN ('assigned', 'running')),"
                            " (SELECT count(*) FROM runs WHERE state = 'done'),"
                            " (SELECT count(*) FROM runs WHERE state = 'failed')",
                            0},
    [COORD_EXPORT_SWEEPS] =
        {"SELECT s.name, count(r.id), total(r.state = 'pending'),"
         " total(r.state IN ('assigned', 'running')), total(r.state = 'done'),"
         " total(r.state = 'failed') FROM sweeps s JOIN sweep_runs sr ON sr.sweep = s.name"
         " JOIN runs r ON r.id = sr.run WHERE s.source = 'fleet' GROUP BY s.name ORDER BY s.name",
         0},
    [COORD_EXPORT_STORE_ID] = {"SELECT value FROM meta WHERE key = 'store_id'", 0},
};

static void s_row_from_stmt(coord_db_stmt_t *st, coord_export_row_t *row)
{
    int n = coord_db_col_count(st);
    row->ncols = n < COORD_EXPORT_COLS_MAX ? n : COORD_EXPORT_COLS_MAX;
    for (int c = 0; c < row->ncols; c++) {
        coord_db_type_t type = coord_db_col_type(st, c);
        row->kind[c] = type == COORD_DB_T_INT    ? COORD_VALUE_INT
                       : type == COORD_DB_T_REAL ? COORD_VALUE_REAL
                       : type == COORD_DB_T_NULL ? COORD_VALUE_NULL
                                                 : COORD_VALUE_TEXT;
        row->i[c] = coord_db_col_int64(st, c);
        row->d[c] = coord_db_col_double(st, c);
        row->s[c] = coord_db_col_text(st, c);
    }
}

static coord_db_stmt_t *s_prepare(coord_store_t *self, coord_export_query_t q,
                                  const coord_export_key_t *key, jf_err_t *err)
{
    const s_query_t *query = &s_queries[q];
    if (query->n_binds == 0) {
        return coord_store_stmt(self, query->sql, COORD_NO_BINDS, err);
    }
    if (query->n_binds == 2) {
        return coord_store_stmt(self, query->sql,
                                COORD_BINDS(coord_text(key->run), coord_int(key->attempt)), err);
    }
    return coord_store_stmt(self, query->sql,
                            COORD_BINDS(coord_text(key->run), coord_int(key->attempt),
                                        coord_int(key->a), coord_int(key->b),
                                        coord_int(key->limit)),
                            err);
}

int coord_store_export_each(coord_store_t *self, coord_export_query_t q,
                            const coord_export_key_t *key, coord_export_row_fn fn, void *arg,
                            jf_err_t *err)
{
    if ((int) q < 0 || q >= COORD_EXPORT_COUNT) {
        return jf_err_set(err, -EINVAL, "store: unknown export query %d", (int) q);
    }
    coord_db_stmt_t *st = s_prepare(self, q, key, err);
    if (!st) {
        return -EIO;
    }
    int rc = 0;
    int step = COORD_DB_ROW;
    while (rc == 0 && (step = coord_db_step(st)) == COORD_DB_ROW) {
        coord_export_row_t row = {0};
        s_row_from_stmt(st, &row);
        rc = fn(&row, arg);
    }
    if (rc == 0 && step != COORD_DB_DONE) {
        rc = coord_store_fail(self, err, "reading rows to export");
    }
    coord_db_reset(st);
    return rc;
}
