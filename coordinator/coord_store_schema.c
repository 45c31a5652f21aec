/* Store schema and migrations. PRAGMA user_version holds the version; migration i takes the
 * store from version i to i + 1 inside one transaction. Never edit a released migration: add one. */
#include "coord_store_internal.h"

#include <errno.h>
#include <stdio.h>

static const char *const s_migrations[] = {
    // 0 -> 1: the foundation schema (docs/store.md).
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "INSERT INTO meta(key, value) VALUES('coordinator_epoch', 0);"
    "CREATE TABLE boards(name TEXT PRIMARY KEY, type TEXT NOT NULL, platform TEXT NOT NULL,"
    " facts TEXT, online INTEGER NOT NULL DEFAULT 0, first_seen_us INTEGER NOT NULL,"
    " last_change_us INTEGER NOT NULL);"
    "CREATE TABLE sweeps(name TEXT PRIMARY KEY, file TEXT NOT NULL, yaml TEXT NOT NULL,"
    " description TEXT NOT NULL, submitted_us INTEGER NOT NULL, updated_us INTEGER NOT NULL,"
    " cancelled_us INTEGER);"
    "CREATE TABLE runs(id TEXT PRIMARY KEY, ord INTEGER NOT NULL, board TEXT NOT NULL,"
    " workload TEXT NOT NULL, model TEXT NOT NULL, dataset TEXT NOT NULL,"
    " epochs INTEGER NOT NULL, power_mode_id INTEGER NOT NULL, power_mode TEXT NOT NULL,"
    " storage TEXT NOT NULL, workers INTEGER NOT NULL, prefetch INTEGER NOT NULL,"
    " batch_size INTEGER NOT NULL, repeat INTEGER NOT NULL, threads INTEGER NOT NULL,"
    " seed INTEGER NOT NULL, drop_caches INTEGER NOT NULL, telemetry_hz INTEGER NOT NULL,"
    " timeout_us INTEGER NOT NULL, params TEXT NOT NULL,"
    " state TEXT NOT NULL CHECK(state IN ('pending','assigned','running','done','failed')),"
    " attempt INTEGER NOT NULL DEFAULT 0, acked_seq INTEGER NOT NULL DEFAULT 0,"
    " created_us INTEGER NOT NULL, assigned_us INTEGER, started_us INTEGER,"
    " finished_us INTEGER, fail_reason TEXT, fail_detail TEXT, info TEXT);"
    "CREATE INDEX runs_board_state ON runs(board, state, ord);"
    "CREATE TABLE sweep_runs(sweep TEXT NOT NULL REFERENCES sweeps(name),"
    " run TEXT NOT NULL REFERENCES runs(id), ord INTEGER NOT NULL,"
    " PRIMARY KEY(sweep, run)) WITHOUT ROWID;"
    "CREATE INDEX sweep_runs_run ON sweep_runs(run);"
    "CREATE TABLE epochs(run TEXT NOT NULL REFERENCES runs(id), attempt INTEGER NOT NULL,"
    " epoch INTEGER NOT NULL, warmup INTEGER NOT NULL, e2e_us INTEGER NOT NULL,"
    " fetch_stall_us INTEGER NOT NULL, compute_us INTEGER NOT NULL, samples INTEGER NOT NULL,"
    " loss REAL, PRIMARY KEY(run, attempt, epoch)) WITHOUT ROWID;"
    "CREATE TABLE minibatches(run TEXT NOT NULL REFERENCES runs(id), attempt INTEGER NOT NULL,"
    " epoch INTEGER NOT NULL, idx INTEGER NOT NULL, samples INTEGER NOT NULL,"
    " fetch_stall_us INTEGER NOT NULL, compute_us INTEGER NOT NULL, loss REAL,"
    " PRIMARY KEY(run, attempt, epoch, idx)) WITHOUT ROWID;"
    "CREATE TABLE telemetry(run TEXT NOT NULL REFERENCES runs(id), attempt INTEGER NOT NULL,"
    " seq INTEGER NOT NULL, idx INTEGER NOT NULL, t_us INTEGER NOT NULL, sample TEXT NOT NULL,"
    " PRIMARY KEY(run, attempt, seq, idx)) WITHOUT ROWID;"
    "CREATE TABLE events(id INTEGER PRIMARY KEY, t_us INTEGER NOT NULL, kind TEXT NOT NULL,"
    " board TEXT, run TEXT, attempt INTEGER, detail TEXT);",
    // 1 -> 2: attempts are counted from the run's last (re)submission, so a failed run that is
    // submitted again gets max_attempts fresh ones while attempt numbers keep growing.
    "ALTER TABLE runs ADD COLUMN attempt_base INTEGER NOT NULL DEFAULT 0;",
    // 2 -> 3: how each attempt was measured (docs/protocol.md §5.4.1). Energy per epoch and the
    // dataset's page-cache residency around it; NULL where not measured, never 0. The measure
    // record as the agent sent it, keys sorted.
    "ALTER TABLE epochs ADD COLUMN energy_mj REAL;"
    "ALTER TABLE epochs ADD COLUMN avg_power_mw REAL;"
    "ALTER TABLE epochs ADD COLUMN peak_power_mw REAL;"
    "ALTER TABLE epochs ADD COLUMN cache_resident_before REAL;"
    "ALTER TABLE epochs ADD COLUMN cache_resident_after REAL;"
    "ALTER TABLE runs ADD COLUMN measure TEXT;",
    // 3 -> 4: custom power modes and DVFS off (docs/protocol.md §5.2.1). The custom point's
    // cores and clocks, NULL where the run has none or leaves a clock to its mode; dvfs_off;
    // and the power setting as one readable label (jf_run_spec_power_label). Every earlier run
    // had only its nvpmodel mode, so its label is the mode's name.
    "ALTER TABLE runs ADD COLUMN dvfs_off INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE runs ADD COLUMN custom_cores INTEGER;"
    "ALTER TABLE runs ADD COLUMN custom_cpu_hz INTEGER;"
    "ALTER TABLE runs ADD COLUMN custom_gpu_hz INTEGER;"
    "ALTER TABLE runs ADD COLUMN custom_emc_hz INTEGER;"
    "ALTER TABLE runs ADD COLUMN power TEXT;"
    "UPDATE runs SET power = power_mode;",
    // 4 -> 5: a run's spec is stored once, in its columns (one per field of the run spec's
    // schema table, docs/schema.md); the params JSON copy goes. Every column was written with
    // params since the migration that added it, and runs older than the custom point have none.
    "ALTER TABLE runs DROP COLUMN params;",
    // 5 -> 6: clock offset and round-trip time per board, from heartbeats (docs/protocol.md
    // §4.2.1), and the estimate in force when each run's current attempt started. NULL where
    // none was measured (older agents, or a run started before the first estimate).
    "ALTER TABLE boards ADD COLUMN clock_offset_us INTEGER;"
    "ALTER TABLE boards ADD COLUMN clock_rtt_us INTEGER;"
    "ALTER TABLE boards ADD COLUMN clock_at_us INTEGER;"
    "ALTER TABLE runs ADD COLUMN clock_offset_us INTEGER;"
    "ALTER TABLE runs ADD COLUMN clock_rtt_us INTEGER;"
    "ALTER TABLE runs ADD COLUMN clock_at_us INTEGER;",
    // 6 -> 7: sweeps loaded by `jetfleet import` (docs/import.md). source says where a sweep's
    // runs came from ('fleet': measured by this fleet; 'imported': read from a CSV file); origin
    // is the file's own source label ('simulated' for bench/simtable's tables, a lab's name for
    // real data), NULL where the file gives none and for fleet sweeps.
    "ALTER TABLE sweeps ADD COLUMN source TEXT NOT NULL DEFAULT 'fleet';"
    "ALTER TABLE sweeps ADD COLUMN origin TEXT;",
    // 7 -> 8: fitted time/power/energy models (docs/analysis.md "Models"): what they were fitted
    // on (sweep, a board or a board type, workload), their input features and parameters as
    // JSON, how many runs trained them, their cross-validated MAPE, and the model a transfer
    // started from.
    "CREATE TABLE models(id INTEGER PRIMARY KEY, name TEXT NOT NULL, sweep TEXT NOT NULL,"
    " scope TEXT NOT NULL CHECK(scope IN ('board','type')), scope_value TEXT NOT NULL,"
    " workload TEXT NOT NULL, target TEXT NOT NULL CHECK(target IN ('time','power','energy')),"
    " kind TEXT NOT NULL CHECK(kind IN ('linear','mlp')), features TEXT NOT NULL,"
    " params TEXT NOT NULL, training_runs INTEGER NOT NULL, cv_mape_pct REAL,"
    " transfer_from INTEGER REFERENCES models(id), created_us INTEGER NOT NULL);",
    // 8 -> 9: typed telemetry (docs/store.md, "Telemetry storage"): a series per run attempt
    // (t0_us: its first sample's time), its layouts (base samples, the first of each shape)
    // and one packed row per sample (coord_telemetry_pack.h), or per second's mean once
    // retention averaged it (mean_of: how many samples). The views keep the old table's
    // columns; telemetry_json needs the store's SQL function (coord_tpack_sql_register). The
    // old rows are moved by coord_store_telemetry_migrate_v8 in this transaction.
    "ALTER TABLE telemetry RENAME TO telemetry_v8;"
    "CREATE TABLE telemetry_series(id INTEGER PRIMARY KEY, run TEXT NOT NULL REFERENCES runs(id),"
    " attempt INTEGER NOT NULL, t0_us INTEGER NOT NULL, averaged INTEGER NOT NULL DEFAULT 0,"
    " UNIQUE(run, attempt));"
    "CREATE TABLE telemetry_layout(series INTEGER NOT NULL REFERENCES telemetry_series(id),"
    " n INTEGER NOT NULL, t_us INTEGER NOT NULL, base TEXT NOT NULL,"
    " PRIMARY KEY(series, n)) WITHOUT ROWID;"
    "CREATE TABLE telemetry_sample(series INTEGER NOT NULL REFERENCES telemetry_series(id),"
    " seq INTEGER NOT NULL, idx INTEGER NOT NULL, t_rel_us INTEGER NOT NULL,"
    " layout INTEGER NOT NULL, mean_of INTEGER, vals BLOB NOT NULL,"
    " PRIMARY KEY(series, seq, idx)) WITHOUT ROWID;"
    "CREATE VIEW telemetry AS SELECT s.run, s.attempt, t.seq, t.idx, s.t0_us + t.t_rel_us AS t_us,"
    " t.mean_of FROM telemetry_sample t JOIN telemetry_series s ON s.id = t.series;"
    "CREATE VIEW telemetry_json AS SELECT s.run, s.attempt, t.seq, t.idx,"
    " s.t0_us + t.t_rel_us AS t_us, t.mean_of,"
    " coord_telemetry_json(l.base, l.t_us, s.t0_us + t.t_rel_us, t.vals) AS sample"
    " FROM telemetry_sample t JOIN telemetry_series s ON s.id = t.series"
    " JOIN telemetry_layout l ON l.series = t.series AND l.n = t.layout;",
    // Concurrent training and inference (issue #15, docs/concurrent.md): what the inference
    // beside training did in each epoch of a concurrent run; NULL in a training-only epoch. The
    // runs table's concurrent_* columns come from the run spec's schema on open.
    "ALTER TABLE epochs ADD COLUMN concurrent_requests INTEGER;"
    "ALTER TABLE epochs ADD COLUMN concurrent_infer_batches INTEGER;"
    "ALTER TABLE epochs ADD COLUMN concurrent_infer_us INTEGER;"
    "ALTER TABLE epochs ADD COLUMN concurrent_switch_us INTEGER;"
    "ALTER TABLE epochs ADD COLUMN concurrent_latency_p50_us INTEGER;"
    "ALTER TABLE epochs ADD COLUMN concurrent_latency_p99_us INTEGER;"
    "ALTER TABLE epochs ADD COLUMN concurrent_latency_max_us INTEGER;"
    "ALTER TABLE epochs ADD COLUMN concurrent_within_budget REAL;",
    // Roofline (docs/roofline.md): an epoch of a roofline run names its microbenchmark and the
    // work it did; NULL for training epochs. (The runs' roofline column comes from the run
    // spec's table, added on open.)
    "ALTER TABLE epochs ADD COLUMN bench TEXT;"
    "ALTER TABLE epochs ADD COLUMN work_flop REAL;"
    "ALTER TABLE epochs ADD COLUMN work_bytes REAL;",
    // Federated rounds (issue 14, docs/store.md "Weight blobs" and "Federated rounds"): weight
    // blobs by sha256, the chunks of a run's returned weights until its run.done assembles them,
    // the weights each attempt returned, and the rounds' records.
    "CREATE TABLE blobs(sha256 TEXT PRIMARY KEY, size_bytes INTEGER NOT NULL,"
    " data BLOB NOT NULL, created_us INTEGER NOT NULL);"
    "CREATE TABLE weight_chunks(run TEXT NOT NULL, attempt INTEGER NOT NULL,"
    " \"offset\" INTEGER NOT NULL, blob TEXT NOT NULL, size_bytes INTEGER NOT NULL,"
    " data BLOB NOT NULL, PRIMARY KEY(run, attempt, \"offset\"));"
    "CREATE TABLE run_weights(run TEXT NOT NULL, attempt INTEGER NOT NULL,"
    " blob TEXT NOT NULL REFERENCES blobs(sha256), PRIMARY KEY(run, attempt));"
    "CREATE TABLE fl_rounds(id INTEGER PRIMARY KEY, name TEXT NOT NULL, file TEXT NOT NULL,"
    " policy TEXT NOT NULL, straggler TEXT NOT NULL, rounds INTEGER NOT NULL,"
    " workload TEXT NOT NULL, batch_size INTEGER NOT NULL, timeout_us INTEGER NOT NULL,"
    " started_us INTEGER NOT NULL, finished_us INTEGER, state TEXT NOT NULL,"
    " detail TEXT);"
    "CREATE TABLE fl_round(rounds INTEGER NOT NULL REFERENCES fl_rounds(id),"
    " round INTEGER NOT NULL, init_blob TEXT, avg_blob TEXT, boards INTEGER NOT NULL,"
    " boards_in INTEGER NOT NULL, samples INTEGER, loss REAL, round_s REAL, spread_s REAL,"
    " spread_pct REAL, energy_j REAL, simulated INTEGER NOT NULL DEFAULT 0,"
    " started_us INTEGER NOT NULL, finished_us INTEGER, PRIMARY KEY(rounds, round));"
    "CREATE TABLE fl_round_board(rounds INTEGER NOT NULL, round INTEGER NOT NULL,"
    " board TEXT NOT NULL, run TEXT, status TEXT NOT NULL, simulated INTEGER NOT NULL,"
    " mode TEXT, minibatches INTEGER, samples INTEGER, loss REAL, start_s REAL, finish_s REAL,"
    " idle_s REAL, energy_j REAL, pred_s REAL, pred_j REAL, blob TEXT, detail TEXT,"
    " PRIMARY KEY(rounds, round, board), FOREIGN KEY(rounds, round) REFERENCES"
    " fl_round(rounds, round));",
    // The phys model kind (docs/analysis.md "Physical models"): the models table again with the
    // kind's check widened (neither back end alters a check in place alike), rows and ids kept.
    // On PostgreSQL s_models_ids_pg then moves the new id sequence past the copied ids.
    "CREATE TABLE models_v13(id INTEGER PRIMARY KEY, name TEXT NOT NULL, sweep TEXT NOT NULL,"
    " scope TEXT NOT NULL CHECK(scope IN ('board','type')), scope_value TEXT NOT NULL,"
    " workload TEXT NOT NULL, target TEXT NOT NULL CHECK(target IN ('time','power','energy')),"
    " kind TEXT NOT NULL CHECK(kind IN ('linear','mlp','phys')), features TEXT NOT NULL,"
    " params TEXT NOT NULL, training_runs INTEGER NOT NULL, cv_mape_pct REAL,"
    " transfer_from INTEGER REFERENCES models_v13(id), created_us INTEGER NOT NULL);"
    "INSERT INTO models_v13 SELECT * FROM models;"
    "DROP TABLE models;"
    "ALTER TABLE models_v13 RENAME TO models;",
};

// After the models table was copied with its ids: PostgreSQL's identity sequence of the new table
// starts at 1 whatever rows were inserted with explicit ids, so the next model would collide.
// SQLite takes max(id) + 1 by itself.
static int s_models_ids_pg(coord_store_t *self, jf_err_t *err)
{
    if (coord_db_kind(self->db) != COORD_DB_POSTGRES) {
        return 0;
    }
    if (coord_db_exec_script(self->db,
                             "SELECT setval(pg_get_serial_sequence('models', 'id'),"
                             " coalesce(max(id), 0) + 1, false) FROM models",
                             NULL) != 0) {
        return jf_err_set(err, -EIO, "models id sequence: %s", coord_db_errmsg(self->db));
    }
    return 0;
}

// C steps run after a migration's SQL, in its transaction (NULL: none).
typedef int (*s_step_fn)(coord_store_t *self, jf_err_t *err);
static const s_step_fn s_steps[] = {
    [8] = coord_store_telemetry_migrate_v8,
    [12] = s_models_ids_pg,
};

#define S_N_MIGRATIONS ((int) (sizeof s_migrations / sizeof s_migrations[0]))

int coord_store_schema_latest(void)
{
    return S_N_MIGRATIONS;
}

int coord_store_user_version(coord_store_t *self, int64_t *ret_version, jf_err_t *err)
{
    // PostgreSQL: see coord_db_pg (PRAGMA user_version is SQLite's).
    return coord_store_scalar(self, "PRAGMA user_version", COORD_NO_BINDS, ret_version, err);
}

// Writes the schema version inside the migration's transaction. Returns 0 or -EIO (the
// connection's error says why).
static int s_set_user_version(coord_store_t *self, int version)
{
    // PostgreSQL: see coord_db_pg (PRAGMA user_version is SQLite's).
    char pragma[64] = {0};
    (void) snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", version);
    return coord_db_exec_script(self->db, pragma, NULL);
}

int coord_store_schema_version(coord_store_t *self)
{
    int64_t v = -1;
    if (coord_store_user_version(self, &v, NULL) != 0) {
        return -1;
    }
    return (int) v;
}

// PostgreSQL's BEGIN takes no database-wide write lock as SQLite's BEGIN IMMEDIATE does, so
// coordinators sharing a database (docs/store.md §10) that start at once would run one
// migration twice: there the migration's transaction first takes an advisory lock and reads the
// version again. *ret_done is true when another connection has migrated past from meanwhile.
static int s_lock_migration(coord_store_t *self, int from, bool *ret_done)
{
    *ret_done = false;
    if (coord_db_kind(self->db) != COORD_DB_POSTGRES) {
        return 0;
    }
    int64_t now = 0;
    // 7022137: the migrations' lock key (the compat script takes 7022136, coord_db_pg_compat.c).
    int rc = coord_db_exec_script(self->db, "SELECT pg_advisory_xact_lock(7022137)", NULL);
    rc = rc ? rc : coord_store_user_version(self, &now, NULL);
    *ret_done = rc == 0 && now > from;
    return rc;
}

static int s_apply(coord_store_t *self, int from, jf_err_t *err)
{
    s_step_fn step = from < (int) (sizeof s_steps / sizeof s_steps[0]) ? s_steps[from] : NULL;
    jf_err_t step_err = {0};
    const char *why = NULL;
    bool done = false;
    if (coord_db_exec_script(self->db, "BEGIN IMMEDIATE", NULL) != 0 ||
        s_lock_migration(self, from, &done) != 0) {
        why = coord_db_errmsg(self->db);
    } else if (done) {
        return coord_db_exec_script(self->db, "COMMIT", NULL) == 0
                   ? 0
                   : jf_err_set(err, -EIO, "%s: migration %d -> %d: %s", self->path, from, from + 1,
                                coord_db_errmsg(self->db));
    } else if (coord_db_exec_script(self->db, s_migrations[from], NULL) != 0) {
        why = coord_db_errmsg(self->db);
    } else if (step && step(self, &step_err) != 0) {
        why = step_err.msg;
    } else if (s_set_user_version(self, from + 1) != 0 ||
               coord_db_exec_script(self->db, "COMMIT", NULL) != 0) {
        why = coord_db_errmsg(self->db);
    }
    if (why) {
        jf_err_set(err, -EIO, "%s: migration %d -> %d failed: %s", self->path, from, from + 1, why);
        if (coord_db_in_transaction(self->db)) {
            (void) coord_db_exec_script(self->db, "ROLLBACK", NULL); // the error is reported
        }
        return -EIO;
    }
    return 0;
}

int coord_store_migrate(coord_store_t *self, jf_err_t *err)
{
    int version = coord_store_schema_version(self);
    if (version < 0) {
        return coord_store_fail(self, err, "reading the schema version");
    }
    if (version > S_N_MIGRATIONS) {
        return jf_err_set(err, -EPROTO,
                          "%s: store schema version %d is newer than this program's (%d); "
                          "use a newer jetfleet",
                          self->path, version, S_N_MIGRATIONS);
    }
    for (int v = version; v < S_N_MIGRATIONS; v++) {
        int rc = s_apply(self, v, err);
        if (rc != 0) {
            return rc;
        }
    }
    return coord_store_spec_sync_columns(self, err);
}
