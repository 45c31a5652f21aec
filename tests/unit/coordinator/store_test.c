/* Unit tests for coord_store: opening and the schema version (and migrations), sweeps
 * (resubmission keeps done runs, retries failed ones), the run state machine and its
 * stale-attempt guards, requeue up to max_attempts, idempotent records, counts, cancel and
 * transactions. The CLI tables are store_tables_test.c; helpers are store_support.h. */
#include "coord_db.h"
#include "coord_store.h"

#include "jf_units.h"
#include "store_support.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

// ---------------------------------------------------------------------------------------------
// Opening and the schema

static void test_open_creates_schema_and_reopens(void **state)
{
    tstore_ctx_t *c = *state;
    assert_true(coord_store_schema_latest() >= 1);
    assert_int_equal(coord_store_schema_version(c->store), coord_store_schema_latest());
    int64_t epoch = 0;
    assert_int_equal(coord_store_bump_epoch(c->store, &epoch, NULL), 0);
    assert_int_equal(epoch, 1);
    coord_store_destroy(&c->store);
    assert_null(c->store);
    coord_store_destroy(&c->store); // accepts *self_p == NULL
    coord_store_destroy(NULL);

    jf_err_t err = {0};
    c->store = coord_store_open(c->path, false, &err);
    assert_non_null(c->store);
    assert_int_equal(coord_store_schema_version(c->store), coord_store_schema_latest());
    assert_int_equal(coord_store_bump_epoch(c->store, &epoch, NULL), 0);
    assert_int_equal(epoch, 2); // the epoch survived the reopen

    coord_store_t *ro = coord_store_open(c->path, true, &err);
    assert_non_null(ro);
    assert_int_equal(coord_store_schema_version(ro), coord_store_schema_latest());
    coord_store_destroy(&ro);
}

static void t_set_user_version(const char *path, int version)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char sql[64];
    (void)snprintf(sql, sizeof sql, "PRAGMA user_version = %d", version);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

static void test_open_refuses_newer_schema(void **state)
{
    tstore_skip_on_postgres("it sets the version with SQLite on the store file");
    tstore_ctx_t *c = *state;
    coord_store_destroy(&c->store);
    t_set_user_version(c->path, coord_store_schema_latest() + 1);
    jf_err_t err = {0};
    assert_null(coord_store_open(c->path, false, &err));
    assert_int_equal(err.code, -EPROTO);
    assert_non_null(strstr(err.msg, c->path));
    assert_non_null(strstr(err.msg, "is newer than this program's"));
    char want[64];
    (void)snprintf(want, sizeof want, "version %d", coord_store_schema_latest() + 1);
    assert_non_null(strstr(err.msg, want));
    err = (jf_err_t){0};
    assert_null(coord_store_open(c->path, true, &err));
    assert_int_equal(err.code, -EPROTO);
    assert_non_null(strstr(err.msg, c->path));
}

static void test_open_failures(void **state)
{
    tstore_skip_on_postgres("it opens files that are not stores");
    tstore_ctx_t *c = *state;
    char path[PATH_MAX + 32];
    // Not a database at all.
    (void)snprintf(path, sizeof path, "%s/notes.txt", c->dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs("these are not the runs you are looking for\n", f) >= 0);
    assert_int_equal(fclose(f), 0);
    jf_err_t err = {0};
    assert_null(coord_store_open(path, true, &err));
    assert_true(err.code < 0);
    assert_non_null(strstr(err.msg, path));
    err = (jf_err_t){0};
    assert_null(coord_store_open(path, false, &err));
    assert_true(err.code < 0);
    assert_non_null(strstr(err.msg, path));
    // A SQLite database that is not a store.
    (void)snprintf(path, sizeof path, "%s/other.db", c->dir);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
    err = (jf_err_t){0};
    assert_null(coord_store_open(path, true, &err));
    assert_int_equal(err.code, -EPROTO);
    assert_non_null(strstr(err.msg, "not a jetfleet store"));
    // Missing file, read-only: not created.
    (void)snprintf(path, sizeof path, "%s/missing.db", c->dir);
    err = (jf_err_t){0};
    assert_null(coord_store_open(path, true, &err));
    assert_int_equal(err.code, -EIO);
    assert_non_null(strstr(err.msg, path));
    assert_int_equal(access(path, F_OK), -1);
}

// ---------------------------------------------------------------------------------------------
// Sweeps and resubmission

static void test_sweep_put_twice(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[3] = {tstore_spec(TSTORE_BOARD, 0), tstore_spec(TSTORE_BOARD, 1), tstore_spec("nx-02", 0)};
    tstore_expect_result(tstore_put(c->store, runs, 3), 3, 3, 0, 0);
    tstore_expect_result(tstore_put(c->store, runs, 3), 3, 0, 0, 0);
    coord_state_counts_t n = {0};
    assert_int_equal(coord_store_counts(c->store, "smoke", &n, NULL), 0);
    assert_int_equal(n.n[COORD_RUN_PENDING], 3);
    // A duplicate inside one sweep is stored once.
    jf_run_spec_t dup[2] = {tstore_spec(TSTORE_BOARD, 7), tstore_spec(TSTORE_BOARD, 7)};
    tstore_expect_result(tstore_put(c->store, dup, 2), 2, 1, 0, 0);
    assert_int_equal(coord_store_counts(c->store, NULL, &n, NULL), 0);
    assert_int_equal(n.n[COORD_RUN_PENDING], 4);
}

static void test_resubmit_keeps_done_and_retries_failed(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[3] = {tstore_spec(TSTORE_BOARD, 0), tstore_spec(TSTORE_BOARD, 1), tstore_spec(TSTORE_BOARD, 2)};
    tstore_put(c->store, runs, 3);
    assert_int_equal(tstore_complete(c->store, runs[0].run_id, true), 1);
    assert_int_equal(tstore_complete(c->store, runs[1].run_id, false), 1);
    tstore_expect_result(tstore_put(c->store, runs, 3), 3, 0, 1, 1);
    assert_int_equal(tstore_row(c->store, runs[0].run_id).state, COORD_RUN_DONE);
    assert_int_equal(tstore_row(c->store, runs[1].run_id).state, COORD_RUN_PENDING);
    assert_int_equal(tstore_row(c->store, runs[2].run_id).state, COORD_RUN_PENDING);
    // The done run is never handed out again; the retried one is, with a new attempt.
    jf_run_spec_t next = {0};
    assert_int_equal(coord_store_next_pending(c->store, TSTORE_BOARD, &next, NULL), 0);
    assert_string_equal(next.run_id, runs[1].run_id);
    assert_int_equal(tstore_assign(c->store, runs[1].run_id), 2);
    assert_int_equal(coord_store_next_pending(c->store, TSTORE_BOARD, &next, NULL), 0);
    assert_string_equal(next.run_id, runs[2].run_id);
    tstore_assign(c->store, runs[2].run_id);
    assert_int_equal(coord_store_next_pending(c->store, TSTORE_BOARD, &next, NULL), -ENOENT);
    // A third submission still does not add the done run back as pending.
    tstore_expect_result(tstore_put(c->store, runs, 3), 3, 0, 1, 0);
    assert_int_equal(tstore_row(c->store, runs[0].run_id).state, COORD_RUN_DONE);
}

static void test_next_pending_and_run_spec(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[3] = {tstore_spec("nx-02", 0), tstore_spec(TSTORE_BOARD, 5), tstore_spec(TSTORE_BOARD, 3)};
    runs[1].drop_caches = true;
    runs[1].seed = UINT64_C(1) << 53;
    jf_run_spec_compute_id(&runs[1]);
    tstore_put(c->store, runs, 3);
    jf_run_spec_t got = {0};
    assert_int_equal(coord_store_next_pending(c->store, TSTORE_BOARD, &got, NULL), 0);
    assert_string_equal(got.run_id, runs[1].run_id); // sweep order, this board only
    assert_true(got.drop_caches);
    assert_int_equal(got.seed, runs[1].seed);
    jf_run_spec_compute_id(&got);
    assert_string_equal(got.run_id, runs[1].run_id); // every field came back
    assert_int_equal(coord_store_run_spec(c->store, runs[2].run_id, &got, NULL), 0);
    assert_int_equal(got.repeat, 3);
    assert_int_equal(coord_store_run_spec(c->store, "r00000000000000ff", &got, NULL), -ENOENT);
    assert_int_equal(coord_store_next_pending(c->store, "nano-9", &got, NULL), -ENOENT);
    coord_run_row_t row = {0};
    assert_int_equal(coord_store_run_get(c->store, "r00000000000000ff", &row, NULL), -ENOENT);
}

// ---------------------------------------------------------------------------------------------
// The run state machine

static void test_assign_increments_attempt(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {tstore_spec(TSTORE_BOARD, 0)};
    tstore_put(c->store, runs, 1);
    const char *id = runs[0].run_id;
    coord_run_row_t row = tstore_row(c->store, id);
    assert_int_equal(row.state, COORD_RUN_PENDING);
    assert_int_equal(row.attempt + row.assigned_us, 0);
    assert_string_equal(row.board, TSTORE_BOARD);
    int64_t before = jf_clock_wall_us();
    assert_int_equal(tstore_assign(c->store, id), 1);
    row = tstore_row(c->store, id);
    assert_int_equal(row.state, COORD_RUN_ASSIGNED);
    assert_int_equal(row.attempt, 1);
    assert_in_range(row.assigned_us, before, jf_clock_wall_us());
    int64_t attempt = 99;
    jf_err_t err = {0};
    tstore_expect_stale(coord_store_run_assign(c->store, id, &attempt, &err), &err, id);
    bool failed = true;
    assert_int_equal(coord_store_run_requeue(c->store, id, 1, 3, "agent gone", &failed, NULL), 0);
    assert_false(failed);
    assert_int_equal(tstore_assign(c->store, id), 2);
    err = (jf_err_t){0};
    tstore_expect_stale(coord_store_run_assign(c->store, "r00000000000000ff", &attempt, &err), &err,
                   "r00000000000000ff");
}

static void test_run_start_only_from_assigned(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {tstore_spec(TSTORE_BOARD, 0)};
    tstore_put(c->store, runs, 1);
    const char *id = runs[0].run_id;
    jf_err_t err = {0};
    tstore_expect_stale(coord_store_run_start(c->store, id, 0, &err), &err, id); // pending
    assert_int_equal(tstore_assign(c->store, id), 1);
    tstore_expect_stale(coord_store_run_start(c->store, id, 2, &err), &err, id); // wrong attempt
    assert_int_equal(tstore_row(c->store, id).state, COORD_RUN_ASSIGNED);
    assert_int_equal(coord_store_run_start(c->store, id, 1, &err), 0);
    assert_int_equal(tstore_row(c->store, id).state, COORD_RUN_RUNNING);
    tstore_expect_stale(coord_store_run_start(c->store, id, 1, &err), &err, id); // already running
    // A late run.accept of an older attempt does not start the newer one.
    bool failed = true;
    assert_int_equal(coord_store_run_requeue(c->store, id, 1, 3, "agent gone", &failed, NULL), 0);
    assert_int_equal(tstore_assign(c->store, id), 2);
    tstore_expect_stale(coord_store_run_start(c->store, id, 1, &err), &err, id);
    assert_int_equal(tstore_row(c->store, id).state, COORD_RUN_ASSIGNED);
    assert_int_equal(coord_store_run_start(c->store, id, 2, &err), 0);
}

static void test_finish_guards_the_attempt(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[2] = {tstore_spec(TSTORE_BOARD, 0), tstore_spec(TSTORE_BOARD, 1)};
    tstore_put(c->store, runs, 2);
    const char *id = runs[0].run_id;
    jf_err_t err = {0};
    tstore_expect_stale(coord_store_run_finish(c->store, id, 0, true, NULL, NULL, &err), &err, id);
    assert_int_equal(tstore_assign(c->store, id), 1);
    assert_int_equal(coord_store_run_start(c->store, id, 1, NULL), 0);
    tstore_expect_stale(coord_store_run_finish(c->store, id, 2, true, NULL, NULL, &err), &err, id);
    tstore_expect_stale(coord_store_run_finish(c->store, id, 0, false, "oom", "x", &err), &err, id);
    assert_int_equal(tstore_row(c->store, id).state, COORD_RUN_RUNNING);
    assert_int_equal(coord_store_run_finish(c->store, id, 1, true, NULL, NULL, &err), 0);
    assert_int_equal(tstore_row(c->store, id).state, COORD_RUN_DONE);
    tstore_expect_stale(coord_store_run_finish(c->store, id, 1, false, "oom", "late", &err), &err, id);
    assert_int_equal(tstore_row(c->store, id).state, COORD_RUN_DONE);
    // An assigned run that never started may fail directly (e.g. rejected by the agent).
    assert_int_equal(tstore_assign(c->store, runs[1].run_id), 1);
    assert_int_equal(
        coord_store_run_finish(c->store, runs[1].run_id, 1, false, "invalid", "no dataset", &err),
        0);
    tstore_table_t t;
    tstore_select(c->store, COORD_TABLE_RUNS, NULL, "failed", &t);
    assert_int_equal(t.nrows, 1);
    assert_string_equal(tstore_val(&t, 0, "fail_reason"), "invalid");
    assert_string_equal(tstore_val(&t, 0, "fail_detail"), "no dataset");
    tstore_table_free(&t);
}

static void test_requeue_until_max_attempts(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {tstore_spec(TSTORE_BOARD, 0)};
    tstore_put(c->store, runs, 1);
    const char *id = runs[0].run_id;
    jf_err_t err = {0};
    bool failed = true;
    tstore_expect_stale(coord_store_run_requeue(c->store, id, 0, 3, "gone", &failed, &err), &err, id);
    for (int64_t a = 1; a <= 3; a++) {
        assert_int_equal(tstore_assign(c->store, id), a);
        if (a == 2) {
            assert_int_equal(coord_store_run_start(c->store, id, a, NULL), 0); // running too
            bool untouched = true;
            tstore_expect_stale(coord_store_run_requeue(c->store, id, a - 1, 3, "old", &untouched, &err),
                           &err, id);
            assert_true(untouched);
        }
        failed = !(a == 3);
        assert_int_equal(
            coord_store_run_requeue(c->store, id, a, 3, "agent restarted", &failed, &err), 0);
        assert_int_equal(failed, a == 3);
        assert_int_equal(tstore_row(c->store, id).state, a == 3 ? COORD_RUN_FAILED : COORD_RUN_PENDING);
    }
    tstore_table_t t;
    tstore_select(c->store, COORD_TABLE_RUNS, "smoke", NULL, &t);
    assert_int_equal(t.nrows, 1);
    assert_string_equal(tstore_val(&t, 0, "state"), "failed");
    assert_string_equal(tstore_val(&t, 0, "fail_reason"), "crashed");
    assert_non_null(strstr(tstore_val(&t, 0, "fail_detail"), "attempt 3 lost: agent restarted"));
    assert_string_equal(tstore_val(&t, 0, "attempt"), "3");
    tstore_table_free(&t);
    int64_t attempt = 0;
    tstore_expect_stale(coord_store_run_assign(c->store, id, &attempt, &err), &err, id);
}

// A lost attempt of a run whose sweeps were all cancelled is not run again: it fails, cancelled.
static void test_requeue_after_cancel_fails_cancelled(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {tstore_spec(TSTORE_BOARD, 0)};
    tstore_put(c->store, runs, 1);
    const char *id = runs[0].run_id;
    assert_int_equal(tstore_assign(c->store, id), 1);
    size_t cancelled = 0;
    assert_int_equal(coord_store_sweep_cancel(c->store, "smoke", &cancelled, NULL), 0);
    assert_int_equal(cancelled, 0); // it was assigned, not pending
    bool failed = false;
    assert_int_equal(coord_store_run_requeue(c->store, id, 1, 3, "lease expired", &failed, NULL),
                     0);
    assert_true(failed);
    tstore_table_t t;
    tstore_select(c->store, COORD_TABLE_RUNS, "smoke", NULL, &t);
    assert_string_equal(tstore_val(&t, 0, "state"), "failed");
    assert_string_equal(tstore_val(&t, 0, "fail_reason"), "cancelled");
    tstore_table_free(&t);
}

// A failed run submitted again gets max_attempts fresh attempts; attempt numbers keep growing.
static void test_resubmit_gives_fresh_attempts(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {tstore_spec(TSTORE_BOARD, 0)};
    tstore_put(c->store, runs, 1);
    const char *id = runs[0].run_id;
    bool failed = false;
    for (int64_t a = 1; a <= 2; a++) {
        assert_int_equal(tstore_assign(c->store, id), a);
        assert_int_equal(coord_store_run_requeue(c->store, id, a, 2, "gone", &failed, NULL), 0);
    }
    assert_true(failed);
    tstore_expect_result(tstore_put(c->store, runs, 1), 1, 0, 0, 1);
    assert_int_equal(tstore_assign(c->store, id), 3);
    assert_int_equal(coord_store_run_requeue(c->store, id, 3, 2, "gone", &failed, NULL), 0);
    assert_false(failed);
    assert_int_equal(tstore_row(c->store, id).state, COORD_RUN_PENDING);
    assert_int_equal(tstore_assign(c->store, id), 4);
    assert_int_equal(coord_store_run_requeue(c->store, id, 4, 2, "gone", &failed, NULL), 0);
    assert_true(failed);
}

// A store made by schema version 1 is migrated to the latest on open, keeping its rows.
static void test_migrates_version_1(void **state)
{
    tstore_skip_on_postgres("it builds a version-1 store file with SQLite");
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {tstore_spec(TSTORE_BOARD, 0)};
    tstore_put(c->store, runs, 1);
    coord_store_destroy(&c->store);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(c->path, &db), SQLITE_OK);
    // Version 1 had neither attempt_base (migration 2) nor the measurement columns (3) nor the
    // power extras (4), and had the params copy of the spec (dropped by 5).
    assert_int_equal(sqlite3_exec(db,
                                  "ALTER TABLE runs DROP COLUMN attempt_base; "
                                  "ALTER TABLE runs DROP COLUMN measure; "
                                  "ALTER TABLE epochs DROP COLUMN energy_mj; "
                                  "ALTER TABLE epochs DROP COLUMN avg_power_mw; "
                                  "ALTER TABLE epochs DROP COLUMN peak_power_mw; "
                                  "ALTER TABLE epochs DROP COLUMN cache_resident_before; "
                                  "ALTER TABLE epochs DROP COLUMN cache_resident_after; "
                                  "ALTER TABLE runs DROP COLUMN dvfs_off; "
                                  "ALTER TABLE runs DROP COLUMN custom_cores; "
                                  "ALTER TABLE runs DROP COLUMN custom_cpu_hz; "
                                  "ALTER TABLE runs DROP COLUMN custom_gpu_hz; "
                                  "ALTER TABLE runs DROP COLUMN custom_emc_hz; "
                                  "ALTER TABLE runs DROP COLUMN power; "
                                  "ALTER TABLE runs ADD COLUMN params TEXT NOT NULL DEFAULT '';"
                                  "ALTER TABLE boards DROP COLUMN clock_offset_us; "
                                  "ALTER TABLE boards DROP COLUMN clock_rtt_us; "
                                  "ALTER TABLE boards DROP COLUMN clock_at_us; "
                                  "ALTER TABLE runs DROP COLUMN clock_offset_us; "
                                  "ALTER TABLE runs DROP COLUMN clock_rtt_us; "
                                  "ALTER TABLE runs DROP COLUMN clock_at_us; "
                                  "ALTER TABLE sweeps DROP COLUMN source; "
                                  "ALTER TABLE sweeps DROP COLUMN origin; "

                                  // The concurrent run kind's epoch columns (issue #15).
                                  "ALTER TABLE epochs DROP COLUMN concurrent_requests; "
                                  "ALTER TABLE epochs DROP COLUMN concurrent_infer_batches; "
                                  "ALTER TABLE epochs DROP COLUMN concurrent_infer_us; "
                                  "ALTER TABLE epochs DROP COLUMN concurrent_switch_us; "
                                  "ALTER TABLE epochs DROP COLUMN concurrent_latency_p50_us; "
                                  "ALTER TABLE epochs DROP COLUMN concurrent_latency_p99_us; "
                                  "ALTER TABLE epochs DROP COLUMN concurrent_latency_max_us; "
                                  "ALTER TABLE epochs DROP COLUMN concurrent_within_budget; "
                                  "DROP TABLE models; "
                                  "ALTER TABLE epochs DROP COLUMN bench; ALTER TABLE epochs DROP COLUMN work_flop; "
                                  "ALTER TABLE epochs DROP COLUMN work_bytes; " // roofline
                                  // The federated rounds' tables (issue 14).
                                  "DROP TABLE fl_round_board; DROP TABLE fl_round; "
                                  "DROP TABLE fl_rounds; DROP TABLE run_weights; "
                                  "DROP TABLE weight_chunks; DROP TABLE blobs; "
                                  // Migration 8 -> 9's typed telemetry, back to version 8's.
                                  "DROP VIEW telemetry_json; DROP VIEW telemetry; "
                                  "DROP TABLE telemetry_sample; DROP TABLE telemetry_layout; "
                                  "DROP TABLE telemetry_series; "
                                  "CREATE TABLE telemetry(run TEXT NOT NULL REFERENCES runs(id), "
                                  "attempt INTEGER NOT NULL, seq INTEGER NOT NULL, "
                                  "idx INTEGER NOT NULL, t_us INTEGER NOT NULL, "
                                  "sample TEXT NOT NULL, PRIMARY KEY(run, attempt, seq, idx)) "
                                  "WITHOUT ROWID; "
                                  "PRAGMA user_version = 1",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
    jf_err_t err = {0};
    c->store = coord_store_open(c->path, false, &err);
    assert_non_null(c->store);
    assert_int_equal(coord_store_schema_version(c->store), coord_store_schema_latest());
    assert_int_equal(tstore_row(c->store, runs[0].run_id).state, COORD_RUN_PENDING);
    assert_int_equal(tstore_assign(c->store, runs[0].run_id), 1);
    // The measurement columns exist after the migration.
    jf_epoch_rec_t e = {.warmup = true, .e2e_us = JF_US_PER_S, .has_energy = true, .energy_mj = 5};
    assert_int_equal(coord_store_add_epoch(c->store, runs[0].run_id, 1, &e, NULL), 0);
}

typedef struct t_active {
    size_t n;
    coord_run_row_t rows[TSTORE_ROWS_MAX];
} t_active_t;

static void t_on_row(const coord_run_row_t *row, void *arg)
{
    t_active_t *a = arg;
    assert_true(a->n < TSTORE_ROWS_MAX);
    a->rows[a->n++] = *row;
}

static void test_active_runs_and_acked(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[4] = {tstore_spec(TSTORE_BOARD, 0), tstore_spec(TSTORE_BOARD, 1), tstore_spec("nx-02", 0),
                             tstore_spec(TSTORE_BOARD, 2)};
    tstore_put(c->store, runs, 4);
    tstore_assign(c->store, runs[0].run_id);
    tstore_assign(c->store, runs[1].run_id);
    assert_int_equal(coord_store_run_start(c->store, runs[1].run_id, 1, NULL), 0);
    tstore_assign(c->store, runs[2].run_id);
    t_active_t act = {0};
    assert_int_equal(coord_store_active_runs(c->store, TSTORE_BOARD, t_on_row, &act, NULL), 0);
    assert_int_equal(act.n, 2);
    assert_string_equal(act.rows[0].run, runs[0].run_id);
    assert_int_equal(act.rows[0].state, COORD_RUN_ASSIGNED);
    assert_string_equal(act.rows[1].run, runs[1].run_id);
    assert_int_equal(act.rows[1].state, COORD_RUN_RUNNING);
    assert_int_equal(act.rows[1].attempt, 1);
    assert_string_equal(act.rows[1].board, TSTORE_BOARD);
    act.n = 0;
    assert_int_equal(coord_store_active_runs(c->store, NULL, t_on_row, &act, NULL), 0);
    assert_int_equal(act.n, 3);
    act.n = 0;
    assert_int_equal(coord_store_sweep_active_runs(c->store, "smoke", t_on_row, &act, NULL), 0);
    assert_int_equal(act.n, 3);
    act.n = 0;
    assert_int_equal(coord_store_sweep_active_runs(c->store, "nope", t_on_row, &act, NULL), 0);
    assert_int_equal(act.n, 0);
    const char *id = runs[1].run_id;
    assert_int_equal(coord_store_run_set_acked(c->store, id, 1, 12, NULL), 0);
    assert_int_equal(coord_store_run_set_acked(c->store, id, 2, 99, NULL), 0);
    assert_int_equal(tstore_row(c->store, id).acked_seq, 12); // other attempt ignored
    // A new attempt starts its stream from zero; acks of the old attempt no longer count.
    bool failed = true;
    assert_int_equal(coord_store_run_requeue(c->store, id, 1, 3, "agent gone", &failed, NULL), 0);
    assert_int_equal(tstore_assign(c->store, id), 2);
    assert_int_equal(tstore_row(c->store, id).acked_seq, 0);
    assert_int_equal(coord_store_run_set_acked(c->store, id, 1, 40, NULL), 0);
    assert_int_equal(tstore_row(c->store, id).acked_seq, 0);
    assert_int_equal(coord_store_run_set_acked(c->store, id, 2, 3, NULL), 0);
    assert_int_equal(tstore_row(c->store, id).acked_seq, 3);
}

// ---------------------------------------------------------------------------------------------
// Records

static void test_records_are_idempotent(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {tstore_spec(TSTORE_BOARD, 0)};
    tstore_put(c->store, runs, 1);
    const char *id = runs[0].run_id;
    int64_t a = tstore_assign(c->store, id);
    jf_epoch_rec_t e = tstore_epoch(1, 2 * JF_US_PER_S, 0.5);
    assert_int_equal(coord_store_add_epoch(c->store, id, a, &e, NULL), 0);
    jf_epoch_rec_t again = tstore_epoch(1, 9 * JF_US_PER_S, 0.9); // a retransmission
    assert_int_equal(coord_store_add_epoch(c->store, id, a, &again, NULL), 0);
    int64_t n = -1;
    assert_int_equal(coord_store_count_epochs(c->store, id, a, &n, NULL), 0);
    assert_int_equal(n, 1);
    assert_int_equal(coord_store_count_epochs(c->store, id, a + 1, &n, NULL), 0);
    assert_int_equal(n, 0);
    tstore_table_t t;
    tstore_select(c->store, COORD_TABLE_EPOCHS, NULL, NULL, &t);
    assert_int_equal(t.nrows, 1);
    tstore_expect_real(&t, 0, "e2e_s", 2.0); // the first copy wins
    tstore_table_free(&t);
    jf_minibatch_rec_t mb = {.epoch = 1, .index = 4, .samples = 32, .compute_us = 900};
    assert_int_equal(coord_store_add_minibatch(c->store, id, a, &mb, NULL), 0);
    assert_int_equal(coord_store_add_minibatch(c->store, id, a, &mb, NULL), 0);
    tstore_select(c->store, COORD_TABLE_MINIBATCHES, NULL, NULL, &t);
    assert_int_equal(t.nrows, 1);
    assert_int_equal(t.kinds[0][tstore_col(&t, "loss")], COORD_VALUE_NULL); // absent stays absent
    assert_string_equal(tstore_val(&t, 0, "minibatch"), "4");
    tstore_table_free(&t);
}

static void test_telemetry_records_are_idempotent(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {tstore_spec(TSTORE_BOARD, 0)};
    tstore_put(c->store, runs, 1);
    const char *id = runs[0].run_id;
    int64_t a = tstore_assign(c->store, id);
    tstore_table_t t;
    const char *sample = "{\"t_us\":1700000000000000,\"gpu_pct\":87,\"emc_mhz\":1600}";
    for (int i = 0; i < 2; i++) {
        assert_int_equal(
            coord_store_add_telemetry(c->store, id, a, 1, 0, 1700000000000000, sample, NULL), 0);
    }
    tstore_select(c->store, COORD_TABLE_TELEMETRY, NULL, NULL, &t);
    assert_int_equal(t.nrows, 2); // one row per numeric metric, t_us excluded
    assert_string_equal(tstore_val(&t, 0, "metric"), "gpu_pct");
    assert_string_equal(tstore_val(&t, 0, "value"), "87");
    assert_string_equal(tstore_val(&t, 1, "metric"), "emc_mhz");
    tstore_table_free(&t);
}

// ---------------------------------------------------------------------------------------------
// Counts, cancel, transactions

static void t_expect_counts(coord_store_t *st, const char *sweep, size_t pending, size_t assigned,
                            size_t running, size_t done, size_t failed)
{
    coord_state_counts_t n = {0};
    jf_err_t err = {0};
    if (coord_store_counts(st, sweep, &n, &err) != 0) {
        fail_msg("counts: %s", err.msg);
    }
    const size_t want[COORD_RUN_STATE_COUNT] = {pending, assigned, running, done, failed};
    for (int s = 0; s < COORD_RUN_STATE_COUNT; s++) {
        if (n.n[s] != want[s]) {
            fail_msg("%s: %zu runs %s, expected %zu", sweep ? sweep : "all", n.n[s],
                     coord_run_state_name((coord_run_state_t)s), want[s]);
        }
    }
}

static void test_counts_per_state(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[6];
    for (int i = 0; i < 6; i++) {
        runs[i] = tstore_spec(TSTORE_BOARD, i);
    }
    tstore_put(c->store, runs, 5);
    jf_sweep_t other = tstore_sweep("other", &runs[4], 2); // shares one run with smoke
    coord_submit_result_t res = {0};
    assert_int_equal(coord_store_sweep_put(c->store, &other, "o.yaml", "", &res, NULL), 0);
    tstore_expect_result(res, 2, 1, 0, 0);
    tstore_assign(c->store, runs[1].run_id);
    tstore_assign(c->store, runs[2].run_id);
    assert_int_equal(coord_store_run_start(c->store, runs[2].run_id, 1, NULL), 0);
    tstore_complete(c->store, runs[3].run_id, true);
    tstore_complete(c->store, runs[4].run_id, false);
    t_expect_counts(c->store, "smoke", 1, 1, 1, 1, 1);
    t_expect_counts(c->store, "other", 1, 0, 0, 0, 1);
    t_expect_counts(c->store, NULL, 2, 1, 1, 1, 1);
    coord_state_counts_t n = {.n = {7}};
    jf_err_t err = {0};
    assert_int_equal(coord_store_counts(c->store, "nope", &n, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "'nope'"));
    assert_int_equal(n.n[0], 7);
}

static void test_sweep_cancel(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[4] = {tstore_spec(TSTORE_BOARD, 0), tstore_spec(TSTORE_BOARD, 1), tstore_spec(TSTORE_BOARD, 2),
                             tstore_spec(TSTORE_BOARD, 3)};
    tstore_put(c->store, runs, 4);
    tstore_assign(c->store, runs[0].run_id);
    tstore_complete(c->store, runs[1].run_id, true);
    size_t cancelled = 0;
    jf_err_t err = {0};
    assert_int_equal(coord_store_sweep_cancel(c->store, "smoke", &cancelled, &err), 0);
    assert_int_equal(cancelled, 2);
    t_expect_counts(c->store, "smoke", 0, 1, 0, 1, 2);
    tstore_table_t t;
    tstore_select(c->store, COORD_TABLE_RUNS, "smoke", "failed", &t);
    assert_int_equal(t.nrows, 2);
    for (size_t r = 0; r < t.nrows; r++) {
        assert_string_equal(tstore_val(&t, r, "fail_reason"), "cancelled");
    }
    tstore_table_free(&t);
    tstore_select(c->store, COORD_TABLE_SWEEPS, "smoke", NULL, &t);
    assert_int_equal(t.nrows, 1);
    assert_int_equal(t.kinds[0][tstore_col(&t, "cancelled_us")], COORD_VALUE_INT);
    assert_string_equal(tstore_val(&t, 0, "failed"), "2");
    tstore_table_free(&t);
    cancelled = 42;
    assert_int_equal(coord_store_sweep_cancel(c->store, "nope", &cancelled, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "no sweep named 'nope'"));
    assert_int_equal(cancelled, 42);
}

static void test_transaction_rollback_and_commit(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[2] = {tstore_spec(TSTORE_BOARD, 0), tstore_spec(TSTORE_BOARD, 1)};
    assert_false(coord_store_in_transaction(c->store));
    assert_int_equal(coord_store_begin(c->store, NULL), 0);
    assert_true(coord_store_in_transaction(c->store));
    tstore_put(c->store, runs, 2);
    tstore_assign(c->store, runs[0].run_id);
    jf_epoch_rec_t e = tstore_epoch(0, JF_US_PER_S, 1.0);
    assert_int_equal(coord_store_add_epoch(c->store, runs[0].run_id, 1, &e, NULL), 0);
    assert_int_equal(coord_store_board_hello(c->store, TSTORE_BOARD, "xavier-nx", "jetson", "{}", NULL),
                     0);
    coord_store_rollback(c->store);
    assert_false(coord_store_in_transaction(c->store));
    coord_store_rollback(c->store); // no transaction: nothing happens
    t_expect_counts(c->store, NULL, 0, 0, 0, 0, 0);
    coord_state_counts_t n = {0};
    assert_int_equal(coord_store_counts(c->store, "smoke", &n, NULL), -ENOENT);
    tstore_table_t t;
    for (coord_table_t tab = 0; tab < COORD_TABLE_COUNT; tab++) {
        tstore_select(c->store, tab, NULL, NULL, &t);
        assert_int_equal(t.nrows, 0);
        tstore_table_free(&t);
    }
    assert_int_equal(coord_store_begin(c->store, NULL), 0);
    tstore_put(c->store, runs, 2);
    assert_int_equal(coord_store_commit(c->store, NULL), 0);
    assert_false(coord_store_in_transaction(c->store));
    coord_store_destroy(&c->store);
    c->store = coord_store_open(c->path, true, NULL);
    assert_non_null(c->store);
    t_expect_counts(c->store, "smoke", 2, 0, 0, 0, 0);
}

// A board's online column, read on a connection of its own (the store at path).
static int64_t t_online(const char *path, const char *board)
{
    coord_db_t *db = NULL;
    jf_err_t err = {0};
    assert_int_equal(coord_db_open(path, true, &db, &err), 0);
    coord_db_stmt_t *st = coord_db_prepare(db, "SELECT online FROM boards WHERE name = ?", &err);
    assert_non_null(st);
    assert_int_equal(coord_db_bind_text(st, 1, board), 0);
    assert_int_equal(coord_db_step(st), COORD_DB_ROW);
    int64_t online = coord_db_col_int64(st, 0);
    coord_db_finalize(st);
    coord_db_close(&db);
    return online;
}

// Coordinators sharing a PostgreSQL store claim their boards' names (docs/store.md §10): a
// second connection cannot claim a name the first holds, until the first closes; only the
// claimed boards are marked offline. On SQLite (one coordinator per file) every board is.
static void test_claim_boards(void **state)
{
    tstore_ctx_t *c = *state;
    jf_err_t err = {0};
    const char *const mine[] = {"nx-01", "nx-02"}, *const theirs[] = {"nx-02", "nx-03"};
    for (size_t i = 0; i < 3; i++) {
        const char *name = i < 2 ? mine[i] : theirs[1];
        assert_int_equal(coord_store_board_hello(c->store, name, "xavier-nx", "sim", "{}", &err),
                         0);
        assert_int_equal(coord_store_board_set_online(c->store, name, true, &err), 0);
    }
    coord_store_t *other = coord_store_open(c->path, false, &err);
    assert_non_null(other);
    assert_int_equal(coord_store_claim_boards(c->store, mine, 2, &err), 0);
    assert_int_equal(t_online(c->path, "nx-01"), 0);
    assert_int_equal(t_online(c->path, "nx-03"), tstore_on_postgres() ? 1 : 0);
    int rc = coord_store_claim_boards(other, theirs, 2, &err);
    if (tstore_on_postgres()) {
        assert_int_equal(rc, -EBUSY);
        assert_non_null(strstr(err.msg, "board 'nx-02' is claimed by another coordinator"));
        coord_store_destroy(&c->store); // its claims end with its connection
        assert_int_equal(coord_store_claim_boards(other, theirs, 2, &err), 0);
        assert_int_equal(t_online(c->path, "nx-03"), 0);
        c->store = other;
    } else {
        assert_int_equal(rc, 0);
        coord_store_destroy(&other);
    }
}

#define T_TEST(f) cmocka_unit_test_setup_teardown(f, tstore_setup, tstore_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T_TEST(test_open_creates_schema_and_reopens),
        T_TEST(test_open_refuses_newer_schema),
        T_TEST(test_open_failures),
        T_TEST(test_sweep_put_twice),
        T_TEST(test_resubmit_keeps_done_and_retries_failed),
        T_TEST(test_next_pending_and_run_spec),
        T_TEST(test_assign_increments_attempt),
        T_TEST(test_run_start_only_from_assigned),
        T_TEST(test_finish_guards_the_attempt),
        T_TEST(test_requeue_until_max_attempts),
        T_TEST(test_requeue_after_cancel_fails_cancelled),
        T_TEST(test_resubmit_gives_fresh_attempts),
        T_TEST(test_migrates_version_1),
        T_TEST(test_active_runs_and_acked),
        T_TEST(test_records_are_idempotent),
        T_TEST(test_telemetry_records_are_idempotent),
        T_TEST(test_counts_per_state),
        T_TEST(test_sweep_cancel),
        T_TEST(test_transaction_rollback_and_commit),
        T_TEST(test_claim_boards),
    };
    int rc = tstore_main_begin();
    if (rc != 0) {
        return rc;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    tstore_main_end();
    return rc;
}

