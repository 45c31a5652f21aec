/* Store: the rooflines' reads (coord_store_roofline.h, docs/roofline.md). */
#include "coord_store_roofline.h"
#include "coord_store_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

// ?2 NULL selects every power setting. The energy sum counts only when every epoch has one.
static const char s_bench_sql[] =
    "SELECT coalesce(r.power, r.power_mode) AS pw, e.bench, coalesce(b.platform, ''), count(*),"
    " sum(e.work_flop), sum(e.work_bytes), sum(e.e2e_us),"
    " count(e.energy_mj) = count(*), sum(e.energy_mj)"
    " FROM runs AS r JOIN epochs AS e ON e.run = r.id AND e.attempt = r.attempt"
    " LEFT JOIN boards AS b ON b.name = r.board"
    " WHERE r.board = ?1 AND r.roofline = 1 AND r.state = 'done' AND e.warmup = 0"
    " AND e.bench IS NOT NULL AND e.work_flop IS NOT NULL"
    " AND (?2 IS NULL OR coalesce(r.power, r.power_mode) = ?2)"
    // One board (?1), so one platform: naming it in GROUP BY changes no group, and PostgreSQL
    // wants every selected column grouped; WHERE repeats pw's expression for the same reason.
    " GROUP BY pw, e.bench, b.platform ORDER BY pw, e.bench";

static const char s_measured_sql[] =
    "SELECT coalesce(r.power, r.power_mode) AS pw, r.model, r.batch_size, count(*),"
    " sum((e.samples + r.batch_size - 1) / r.batch_size), sum(e.compute_us),"
    " count(e.energy_mj) = count(*),"
    " sum(e.energy_mj * e.compute_us / max(e.e2e_us, 1))"
    " FROM runs AS r JOIN epochs AS e ON e.run = r.id AND e.attempt = r.attempt"
    " WHERE r.board = ?1 AND coalesce(r.roofline, 0) = 0 AND r.state = 'done' AND e.warmup = 0"
    // Plain bare training only, as analysis/coord_run_kind.c decides it: no idle baseline, no
    // concurrent inference, not in a container (docs/analysis.md "Run kinds").
    " AND coalesce(r.idle_s, 0) = 0 AND coalesce(r.concurrent_infer_model, '') = ''"
    " AND coalesce(nullif(r.runtime, ''), 'bare') = 'bare'"
    " AND (?2 IS NULL OR coalesce(r.power, r.power_mode) = ?2)"
    " GROUP BY pw, r.model, r.batch_size ORDER BY pw, r.model, r.batch_size";

static void s_text(char *dst, coord_db_stmt_t *st, int col)
{
    const char *t = coord_db_col_text(st, col);
    (void) snprintf(dst, COORD_ROOFLINE_NAME_MAX + 1, "%s", t ? (const char *) t : "");
}

static void s_bench_row(coord_db_stmt_t *st, coord_roofline_bench_t *b)
{
    memset(b, 0, sizeof *b);
    s_text(b->power, st, 0);
    s_text(b->bench, st, 1);
    s_text(b->platform, st, 2);
    b->epochs = (int) coord_db_col_int64(st, 3);
    b->flop = coord_db_col_double(st, 4);
    b->bytes = coord_db_col_double(st, 5);
    b->time_us = coord_db_col_int64(st, 6);
    b->has_energy = coord_db_col_int64(st, 7) != 0;
    b->energy_mj = b->has_energy ? coord_db_col_double(st, 8) : 0.0;
}

static void s_measured_row(coord_db_stmt_t *st, coord_roofline_measured_t *m)
{
    memset(m, 0, sizeof *m);
    s_text(m->power, st, 0);
    s_text(m->model, st, 1);
    m->batch_size = (int) coord_db_col_int64(st, 2);
    m->epochs = (int) coord_db_col_int64(st, 3);
    m->minibatches = coord_db_col_int64(st, 4);
    m->compute_us = coord_db_col_int64(st, 5);
    m->has_energy = coord_db_col_int64(st, 6) != 0;
    m->compute_energy_mj = m->has_energy ? coord_db_col_double(st, 7) : 0.0;
}

static coord_db_stmt_t *s_prepare(coord_store_t *self, const char *sql, const char *board,
                                  const char *power, jf_err_t *err)
{
    // A NULL text binds NULL: every power setting.
    return coord_store_stmt(self, sql, COORD_BINDS(coord_text(board), coord_text(power)), err);
}

int coord_store_roofline_benches(coord_store_t *self, const char *board, const char *power,
                                 coord_roofline_bench_fn fn, void *arg, jf_err_t *err)
{
    coord_db_stmt_t *st = s_prepare(self, s_bench_sql, board, power, err);
    if (!st) {
        return -EIO;
    }
    int rc = 0, step;
    coord_roofline_bench_t b;
    while (rc == 0 && (step = coord_db_step(st)) == COORD_DB_ROW) {
        s_bench_row(st, &b);
        rc = fn(&b, arg);
    }
    if (rc == 0 && step != COORD_DB_DONE) {
        rc = coord_store_fail(self, err, "reading roofline benchmarks");
    }
    coord_db_reset(st); // the statement stays cached; its error was reported above
    return rc;
}

int coord_store_roofline_measured(coord_store_t *self, const char *board, const char *power,
                                  coord_roofline_measured_fn fn, void *arg, jf_err_t *err)
{
    coord_db_stmt_t *st = s_prepare(self, s_measured_sql, board, power, err);
    if (!st) {
        return -EIO;
    }
    int rc = 0, step;
    coord_roofline_measured_t m;
    while (rc == 0 && (step = coord_db_step(st)) == COORD_DB_ROW) {
        s_measured_row(st, &m);
        rc = fn(&m, arg);
    }
    if (rc == 0 && step != COORD_DB_DONE) {
        rc = coord_store_fail(self, err, "reading measured runs for the roofline");
    }
    coord_db_reset(st); // the statement stays cached; its error was reported above
    return rc;
}
