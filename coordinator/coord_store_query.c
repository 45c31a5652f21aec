/* Store: the tidy tables the CLI lists and exports (docs/store.md §Exports). Times are exported
 * in seconds, computed here from the stored microseconds; only each run's current attempt. The
 * run's factors come from the run spec's schema (docs/schema.md). */
#include "coord_store_internal.h"

#include <errno.h>
#include <string.h>

#define S_SWEEP_FILTER "(?1 IS NULL OR r.id IN (SELECT run FROM sweep_runs WHERE sweep = ?1))"
#define S_STATE_FILTER "(?2 IS NULL OR r.state = ?2)"
// How the attempt was measured, from its measure record (docs/protocol.md §5.4.1); NULL for a run
// without one (not finished, or from an agent that predates it).
#define S_MEASURE                                                                                  \
    "json_extract(r.measure, '$.telemetry.source') AS telemetry_source, "                          \
    "json_extract(r.measure, '$.telemetry.achieved_rate_hz') AS telemetry_achieved_hz, "           \
    "json_extract(r.measure, '$.telemetry.samples') AS telemetry_samples, "                        \
    "json_extract(r.measure, '$.telemetry.late') AS telemetry_late, "                              \
    "json_extract(r.measure, '$.telemetry.missed') AS telemetry_missed, "                          \
    "json_extract(r.measure, '$.energy.total') AS energy_total, "                                  \
    "json_extract(r.measure, '$.energy.energy_mj') AS run_energy_mj, "                             \
    "json_extract(r.measure, '$.energy.avg_power_mw') AS run_avg_power_mw, "                       \
    "json_extract(r.measure, '$.energy.peak_power_mw') AS run_peak_power_mw, "                     \
    "json_extract(r.measure, '$.power_mode.mode_id') AS mode_in_force_id, "                        \
    "json_extract(r.measure, '$.power_mode.mode_name') AS mode_in_force, "                         \
    "json_extract(r.measure, '$.power_mode.dvfs_off') AS dvfs_off_in_force, "                      \
    "json_extract(r.measure, '$.storage.mount') AS dataset_mount, "                                \
    "json_extract(r.measure, '$.storage.device') AS dataset_device, "                              \
    "json_extract(r.measure, '$.drop_caches') AS cache_drop, "                                     \
    "json_extract(r.measure, '$.disk.reads') AS disk_reads, "                                      \
    "json_extract(r.measure, '$.disk.read_bytes') AS disk_read_bytes, "                            \
    "json_extract(r.measure, '$.dataset_bytes') AS dataset_bytes"

// Each table's SQL around the run's factors, which come from the run spec's schema (every field
// with an export header, converted to the unit its header names) after the board's facts, so a
// new run field is exported with no edit here. head is NULL for a table without them.
typedef struct s_table_sql {
    const char *head; // SELECT up to the factors
    const char *tail; // the rest
} s_table_sql_t;

static const s_table_sql_t s_sql[COORD_TABLE_COUNT] = {
    [COORD_TABLE_RUNS] =
        {"SELECT r.id AS run, ",
         ", r.state, r.attempt, r.fail_reason, r.fail_detail, r.created_us, "
         "r.assigned_us, r.started_us, r.finished_us, (r.finished_us - r.started_us) / 1e6 AS "
         "duration_s, " S_MEASURE ", r.info, r.measure FROM runs r LEFT JOIN boards b ON "
         "b.name = r.board WHERE " S_SWEEP_FILTER " AND " S_STATE_FILTER " ORDER BY r.ord"},
    [COORD_TABLE_EPOCHS] =
        {"SELECT e.run, ",
         ", e.attempt, e.epoch, e.warmup, e.e2e_us / 1e6 AS e2e_s, "
         "e.fetch_stall_us / 1e6 AS fetch_stall_s, e.compute_us / 1e6 AS compute_s, e.samples, "
         "e.samples * 1e6 / nullif(e.e2e_us, 0) AS samples_per_s, e.loss, e.energy_mj, "
         "e.avg_power_mw, e.peak_power_mw, e.cache_resident_before, e.cache_resident_after "
         "FROM epochs e "
         "JOIN runs r ON r.id = e.run AND r.attempt = e.attempt LEFT JOIN boards b ON "
         "b.name = r.board WHERE " S_SWEEP_FILTER " AND " S_STATE_FILTER
         " ORDER BY r.ord, e.epoch"},
    [COORD_TABLE_MINIBATCHES] =
        {"SELECT m.run, ",
         ", m.attempt, m.epoch, m.idx AS minibatch, m.samples, "
         "m.fetch_stall_us / 1e6 AS fetch_stall_s, m.compute_us / 1e6 AS compute_s, m.loss FROM "
         "minibatches m JOIN runs r ON r.id = m.run AND r.attempt = m.attempt LEFT JOIN boards b "
         "ON b.name = r.board WHERE " S_SWEEP_FILTER " AND " S_STATE_FILTER
         " ORDER BY r.ord, m.epoch, m.idx"},
    [COORD_TABLE_TELEMETRY] =
        {NULL,
         "SELECT t.run, r.board, t.attempt, t.seq, t.idx AS sample, t.t_us, "
         "replace(substr(j.fullkey, 3), '\"', '') AS metric, j.value FROM telemetry t JOIN runs r "
         "ON r.id = t.run AND r.attempt = t.attempt, json_tree(t.sample) j WHERE j.type IN "
         "('integer', 'real') AND j.parent IS NOT NULL AND j.key IS NOT 't_us' AND " S_SWEEP_FILTER
         " AND " S_STATE_FILTER " ORDER BY r.ord, t.seq, t.idx, j.id"},
    [COORD_TABLE_SWEEPS] =
        {NULL,
         "SELECT s.name AS sweep, s.file, s.description, s.submitted_us, s.cancelled_us, "
         "count(r.id) AS runs, sum(r.state = 'pending') AS pending, sum(r.state = 'assigned') AS "
         "assigned, sum(r.state = 'running') AS running, sum(r.state = 'done') AS done, "
         "sum(r.state = 'failed') AS failed FROM sweeps s LEFT JOIN sweep_runs sr ON sr.sweep = "
         "s.name LEFT JOIN runs r ON r.id = sr.run WHERE (?1 IS NULL OR s.name = ?1) AND "
         "(?2 IS NULL OR ?2 = ?2) GROUP BY s.name ORDER BY s.submitted_us"},
    [COORD_TABLE_RESULTS] =
        {"SELECT r.id AS run, ",
         ", count(e.epoch) AS epochs_measured, "
         "avg(e.e2e_us) / 1e6 AS e2e_s, avg(e.fetch_stall_us) / 1e6 AS fetch_stall_s, "
         "avg(e.compute_us) / 1e6 AS compute_s, avg(e.samples * 1e6 / nullif(e.e2e_us, 0)) AS "
         "samples_per_s, avg(e.energy_mj) AS energy_mj, avg(e.avg_power_mw) AS avg_power_mw, "
         "json_extract(r.measure, '$.energy.source') AS energy_source, "
         "(SELECT loss FROM epochs x WHERE x.run = r.id AND x.attempt = r.attempt "
         "ORDER BY x.epoch DESC LIMIT 1) AS final_loss FROM runs r LEFT JOIN epochs e ON "
         "e.run = r.id AND e.attempt = r.attempt AND e.warmup = 0 LEFT JOIN boards b ON "
         "b.name = r.board WHERE r.state = 'done' AND " S_SWEEP_FILTER " AND " S_STATE_FILTER
         " GROUP BY r.id ORDER BY r.ord"},
};

// One run factor: the field's column under its export header, in the header's unit. The board
// leads the factors with its facts (not run fields), so it is not repeated.
static int s_factor(const jf_schema_leaf_t *leaf, void *arg)
{
    const jf_schema_field_t *f = leaf->field;
    if (!f->header || f->derived || !leaf->column[0] || strcmp(leaf->column, "board") == 0) {
        return 0;
    }
    if (f->header_scale > 1) {
        sqlite3_str_appendf(arg, ", r.%s / %lld.0 AS %s", leaf->column, (long long)f->header_scale,
                            f->header);
    } else {
        sqlite3_str_appendf(arg, ", r.%s AS %s", leaf->column, f->header);
    }
    return 0;
}

static const char *s_table_sql(coord_store_t *self, coord_table_t table, jf_err_t *err)
{
    if (!self->table_sql[table]) {
        sqlite3_str *sql = sqlite3_str_new(NULL);
        if (s_sql[table].head) {
            sqlite3_str_appendall(sql, s_sql[table].head);
            sqlite3_str_appendall(sql, "r.board, b.type AS board_type, b.platform, r.power");
            (void)jf_schema_each_leaf(jf_run_spec_schema(), s_factor, sql); // cannot fail
        }
        sqlite3_str_appendall(sql, s_sql[table].tail);
        self->table_sql[table] = sqlite3_str_finish(sql);
    }
    if (!self->table_sql[table]) {
        jf_err_set(err, -ENOMEM, "store: out of memory building a table's query");
    }
    return self->table_sql[table];
}

static coord_value_kind_t s_kind(int sqlite_type)
{
    return sqlite_type == SQLITE_INTEGER ? COORD_VALUE_INT
           : sqlite_type == SQLITE_FLOAT ? COORD_VALUE_REAL
           : sqlite_type == SQLITE_NULL  ? COORD_VALUE_NULL
                                         : COORD_VALUE_TEXT;
}

int coord_store_select(coord_store_t *self, coord_table_t table, const char *sweep,
                       const char *state, coord_row_fn fn, void *arg, jf_err_t *err)
{
    if ((unsigned) table >= COORD_TABLE_COUNT) {
        return jf_err_set(err, -EINVAL, "store: no such table");
    }
    const char *sql = s_table_sql(self, table, err);
    sqlite3_stmt *st =
        sql ? coord_store_stmt(self, sql, COORD_BINDS(coord_text(sweep), coord_text(state)), err)
            : NULL;
    if (!st) {
        return -EIO;
    }
    int ncols = sqlite3_column_count(st);
    if (ncols > COORD_TABLE_COLS_MAX) {
        // Never drop a column silently: raise COORD_TABLE_COLS_MAX with the new fields.
        return jf_err_set(err, -E2BIG, "store: the table has %d columns, more than %d", ncols,
                          COORD_TABLE_COLS_MAX);
    }
    const char *names[COORD_TABLE_COLS_MAX] = {0};
    const char *values[COORD_TABLE_COLS_MAX] = {0};
    coord_value_kind_t kinds[COORD_TABLE_COLS_MAX] = {0};
    for (int i = 0; i < ncols; i++) {
        names[i] = sqlite3_column_name(st, i);
    }
    int rc = 0, ret = 0;
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < ncols; i++) {
            kinds[i] = s_kind(sqlite3_column_type(st, i));
            values[i] = (const char *) sqlite3_column_text(st, i);
        }
        ret = fn(ncols, names, values, kinds, arg);
    }
    if (ret == 0 && rc != SQLITE_DONE) {
        ret = coord_store_fail(self, err, "reading a table");
    } else if (ret != 0) {
        jf_err_set(err, ret, "writing the table failed: %s", strerror(-ret));
    }
    (void) sqlite3_reset(st);
    return ret;
}
