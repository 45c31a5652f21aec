/* Store: the tidy tables the CLI lists and exports (docs/store.md §Exports). Times are exported
 * in seconds, computed here from the stored microseconds; only each run's current attempt. The
 * run's factors and the epoch and minibatch columns come from their schemas (docs/schema.md). */
#include "coord_store_internal.h"

#include <errno.h>
#include <sqlite3.h> // sqlite3_str: string building only
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

// Each table's SQL around its generated columns: the run's factors from the run spec's schema
// (after the board's facts) and, for a table of records, the record's columns from its schema,
// every field with an export header, converted to the unit its header names. A new field is
// exported with no edit here. What no schema describes (attempt, the derived samples_per_s, the
// measure record's residency) stays explicit.
typedef enum s_rec_mode {
    S_REC_NONE = 0, // no record columns
    S_REC_EACH,     // one row per record: every field with a header
    S_REC_MEAN,     // a run's summary: the mean of every summary_mean field over its epochs
} s_rec_mode_t;

typedef struct s_table_sql {
    const char *head;                // SELECT up to the factors; NULL: no factors
    const char *mid;                 // after the factors, before the record columns
    s_rec_mode_t rec_mode;           // which record columns follow mid
    const jf_schema_t *(*rec)(void); // the record's schema (S_REC_EACH, S_REC_MEAN)
    const char *alias;               // the record table's alias in the SQL
    const char *tail;                // the rest
} s_table_sql_t;

#define S_SAMPLES_PER_S "e.samples * 1e6 / nullif(e.e2e_us, 0)" // of an epoch (alias e)

static const s_table_sql_t s_sql[COORD_TABLE_COUNT] = {
    [COORD_TABLE_RUNS] =
        {.head = "SELECT r.id AS run, ",
         .tail = ", r.state, r.attempt, r.fail_reason, r.fail_detail, r.created_us, "
                 "r.assigned_us, r.started_us, r.finished_us, (r.finished_us - r.started_us) / "
                 "1e6 AS duration_s, " S_MEASURE ", r.info, r.measure FROM runs r LEFT JOIN "
                 "boards b ON b.name = r.board WHERE " S_SWEEP_FILTER " AND " S_STATE_FILTER
                 " ORDER BY r.ord"},
    [COORD_TABLE_EPOCHS] =
        {.head = "SELECT e.run, ",
         .mid = ", e.attempt",
         .rec_mode = S_REC_EACH,
         .rec = jf_epoch_rec_schema,
         .alias = "e",
         // The measure record's residency stays right after the energy columns, where it was
         // before they were generated (measure_e2e reads them together).
         .tail = ", e.cache_resident_before, e.cache_resident_after, " S_SAMPLES_PER_S
                 " AS samples_per_s FROM epochs e JOIN runs r ON r.id = e.run AND "
                 "r.attempt = e.attempt LEFT JOIN boards b ON b.name = r.board "
                 "WHERE " S_SWEEP_FILTER " AND " S_STATE_FILTER " ORDER BY r.ord, e.epoch"},
    [COORD_TABLE_MINIBATCHES] =
        {.head = "SELECT m.run, ",
         .mid = ", m.attempt",
         .rec_mode = S_REC_EACH,
         .rec = jf_minibatch_rec_schema,
         .alias = "m",
         .tail = " FROM minibatches m JOIN runs r ON r.id = m.run AND r.attempt = m.attempt "
                 "LEFT JOIN boards b ON b.name = r.board WHERE " S_SWEEP_FILTER
                 " AND " S_STATE_FILTER " ORDER BY r.ord, m.epoch, m.idx"},
    [COORD_TABLE_TELEMETRY] =
        {.tail = "SELECT t.run, r.board, t.attempt, t.seq, t.idx AS sample, t.t_us, "
                 "replace(substr(j.fullkey, 3), '\"', '') AS metric, j.value FROM telemetry_json t "
                 "JOIN runs r ON r.id = t.run AND r.attempt = t.attempt, json_tree(t.sample) j "
                 "WHERE j.type IN ('integer', 'real') AND j.parent IS NOT NULL AND (j.key IS "
                 "NULL OR j.key <> 't_us') AND " S_SWEEP_FILTER " AND " S_STATE_FILTER
                 " ORDER BY r.ord, t.seq, t.idx, j.id"},
    [COORD_TABLE_SWEEPS] =
        {.tail = "SELECT s.name AS sweep, s.file, s.description, s.submitted_us, "
                 "s.cancelled_us, count(r.id) AS runs, sum(r.state = 'pending') AS pending, "
                 "sum(r.state = 'assigned') AS assigned, sum(r.state = 'running') AS running, "
                 "sum(r.state = 'done') AS done, sum(r.state = 'failed') AS failed, s.source, s.origin "
                 "FROM sweeps s "
                 "LEFT JOIN sweep_runs sr ON sr.sweep = s.name LEFT JOIN runs r ON r.id = sr.run "
                 "WHERE (?1 IS NULL OR s.name = ?1) AND (?2 IS NULL OR ?2 = ?2) GROUP BY s.name "
                 "ORDER BY s.submitted_us"},
    [COORD_TABLE_RESULTS] =
        {.head = "SELECT r.id AS run, ",
         .mid = ", count(e.epoch) AS epochs_measured",
         .rec_mode = S_REC_MEAN,
         .rec = jf_epoch_rec_schema,
         .alias = "e",
         .tail = ", avg(" S_SAMPLES_PER_S ") AS samples_per_s, "
                 "json_extract(r.measure, '$.energy.source') AS energy_source, "
                 "(SELECT loss FROM epochs x WHERE x.run = r.id AND x.attempt = r.attempt "
                 "ORDER BY x.epoch DESC LIMIT 1) AS final_loss FROM runs r LEFT JOIN epochs e ON "
                 "e.run = r.id AND e.attempt = r.attempt AND e.warmup = 0 LEFT JOIN boards b ON "
                 "b.name = r.board WHERE r.state = 'done' AND " S_SWEEP_FILTER
                 " AND " S_STATE_FILTER " GROUP BY r.id, b.name ORDER BY r.ord"},
    // Federated rounds (docs/rounds.md "Records"): ?1 is the rounds run's id as text; ?2 is
    // unused. simulated = 1: times and energy are the simulator's modelled figures.
    [COORD_TABLE_FL_ROUNDS] =
        {.tail = "SELECT f.id AS rounds, f.name, f.policy, f.straggler, x.round, x.boards, "
                 "x.boards_in, x.samples, x.loss, x.round_s, x.spread_s, x.spread_pct, "
                 "x.energy_j, x.simulated, x.init_blob, x.avg_blob, x.started_us, x.finished_us "
                 "FROM fl_round x JOIN fl_rounds f ON f.id = x.rounds "
                 "WHERE (?1 IS NULL OR f.id = CAST(?1 AS INTEGER)) AND (?2 IS NULL OR ?2 = ?2) "
                 "ORDER BY f.id, x.round"},
    // trained_minibatches: what the board's run trained, its samples in minibatches of the
    // rounds' batch size (fewer than `minibatches`, the plan's, when its shard holds fewer).
    [COORD_TABLE_FL_BOARDS] =
        {.tail = "SELECT b.rounds, b.round, b.board, b.status, b.simulated, b.mode, "
                 "b.minibatches, b.samples, b.loss, b.start_s, b.finish_s, b.idle_s, b.energy_j, "
                 "b.pred_s, b.pred_j, b.run, b.blob, b.detail, CASE WHEN b.status = 'in' THEN "
                 "(b.samples + f.batch_size - 1) / f.batch_size END AS trained_minibatches "
                 "FROM fl_round_board b JOIN fl_rounds f ON f.id = b.rounds "
                 "WHERE (?1 IS NULL OR b.rounds = CAST(?1 AS INTEGER)) AND (?2 IS NULL OR ?2 = ?2) "
                 "ORDER BY b.rounds, b.round, b.board"},
};

// How the walker writes one table's generated columns.
typedef struct s_cols {
    sqlite3_str *sql;  // the query being built
    const char *alias; // the SQL alias of the table the columns are in
    const char *skip;  // a column written before the generated ones ("board"); NULL: none
    bool mean;         // only summary_mean fields, as their mean over the rows
} s_cols_t;

// One field's column under its export header, in the header's unit (the struct's unit divided
// by header_scale: microseconds become seconds here, the one place they are converted).
static int s_column(const jf_schema_leaf_t *leaf, void *arg)
{
    const s_cols_t *c = arg;
    const jf_schema_field_t *f = leaf->field;
    bool skip = c->skip && strcmp(leaf->column, c->skip) == 0;
    if (!f->header || f->derived || !leaf->column[0] || skip || (c->mean && !f->summary_mean)) {
        return 0;
    }
    sqlite3_str_appendf(c->sql, ", %s%s.%s%s", c->mean ? "avg(" : "", c->alias, leaf->column,
                        c->mean ? ")" : "");
    if (f->header_scale > 1) {
        sqlite3_str_appendf(c->sql, " / %lld.0", (long long) f->header_scale);
    }
    sqlite3_str_appendf(c->sql, " AS %s", f->header);
    return 0;
}

static void s_build_sql(sqlite3_str *sql, const s_table_sql_t *t)
{
    if (t->head) {
        sqlite3_str_appendall(sql, t->head);
        sqlite3_str_appendall(sql, "r.board, b.type AS board_type, b.platform, r.power");
        s_cols_t factors = {.sql = sql, .alias = "r", .skip = "board"};
        (void) jf_schema_each_leaf(jf_run_spec_schema(), s_column, &factors); // cannot fail
    }
    if (t->mid) {
        sqlite3_str_appendall(sql, t->mid);
    }
    if (t->rec_mode != S_REC_NONE) {
        s_cols_t rec = {.sql = sql, .alias = t->alias, .mean = t->rec_mode == S_REC_MEAN};
        (void) jf_schema_each_leaf(t->rec(), s_column, &rec); // cannot fail
    }
    sqlite3_str_appendall(sql, t->tail);
}

static const char *s_table_sql(coord_store_t *self, coord_table_t table, jf_err_t *err)
{
    if (!self->table_sql[table]) {
        sqlite3_str *sql = sqlite3_str_new(NULL);
        s_build_sql(sql, &s_sql[table]);
        self->table_sql[table] = sqlite3_str_finish(sql);
    }
    if (!self->table_sql[table]) {
        jf_err_set(err, -ENOMEM, "store: out of memory building a table's query");
    }
    return self->table_sql[table];
}

static coord_value_kind_t s_kind(coord_db_type_t type)
{
    return type == COORD_DB_T_INT    ? COORD_VALUE_INT
           : type == COORD_DB_T_REAL ? COORD_VALUE_REAL
           : type == COORD_DB_T_NULL ? COORD_VALUE_NULL
                                     : COORD_VALUE_TEXT;
}

int coord_store_select(coord_store_t *self, coord_table_t table, const char *sweep,
                       const char *state, coord_row_fn fn, void *arg, jf_err_t *err)
{
    if ((unsigned) table >= COORD_TABLE_COUNT) {
        return jf_err_set(err, -EINVAL, "store: no such table");
    }
    const char *sql = s_table_sql(self, table, err);
    coord_db_stmt_t *st =
        sql ? coord_store_stmt(self, sql, COORD_BINDS(coord_text(sweep), coord_text(state)), err)
            : NULL;
    if (!st) {
        return -EIO;
    }
    int ncols = coord_db_col_count(st);
    if (ncols > COORD_TABLE_COLS_MAX) {
        // Never drop a column silently: raise COORD_TABLE_COLS_MAX with the new fields.
        return jf_err_set(err, -E2BIG, "store: the table has %d columns, more than %d", ncols,
                          COORD_TABLE_COLS_MAX);
    }
    const char *names[COORD_TABLE_COLS_MAX] = {0};
    const char *values[COORD_TABLE_COLS_MAX] = {0};
    coord_value_kind_t kinds[COORD_TABLE_COLS_MAX] = {0};
    for (int i = 0; i < ncols; i++) {
        names[i] = coord_db_col_name(st, i);
    }
    int rc = 0, ret = 0;
    while (ret == 0 && (rc = coord_db_step(st)) == COORD_DB_ROW) {
        for (int i = 0; i < ncols; i++) {
            kinds[i] = s_kind(coord_db_col_type(st, i));
            values[i] = coord_db_col_text(st, i);
        }
        ret = fn(ncols, names, values, kinds, arg);
    }
    if (ret == 0 && rc != COORD_DB_DONE) {
        ret = coord_store_fail(self, err, "reading a table");
    } else if (ret != 0) {
        jf_err_set(err, ret, "writing the table failed: %s", strerror(-ret));
    }
    coord_db_reset(st);
    return ret;
}
