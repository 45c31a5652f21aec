/* Unit tests for coord_store: opening and the schema version, sweeps (resubmission keeps done
 * runs, retries failed ones), the run state machine and its stale-attempt guards, requeue up to
 * max_attempts, idempotent records, counts, cancel, transactions and the CLI tables. Each test
 * has its own mkdtemp directory, removed in teardown. Sweeps are built by hand (no YAML). */
#include "coord_store.h"

#include "jf_units.h"

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

#define T_ROWS_MAX 16
#define T_BOARD    "nx-01"

typedef struct t_ctx {
    char dir[PATH_MAX];
    char path[PATH_MAX + 16]; // dir/store.db
    coord_store_t *store;
} t_ctx_t;

// ---------------------------------------------------------------------------------------------
// Fixture: a fresh store in its own temporary directory

static void t_rmtree_flat(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        return;
    }
    char path[PATH_MAX + 256];
    for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            (void)snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            (void)unlink(path); // best effort: teardown must not stop half-way
        }
    }
    (void)closedir(d);
    (void)rmdir(dir);
}

static int t_setup(void **state)
{
    t_ctx_t *c = calloc(1, sizeof *c);
    if (!c) {
        return -1;
    }
    const char *tmp = getenv("TMPDIR");
    (void)snprintf(c->dir, sizeof c->dir, "%s/jf-store-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(c->dir)) {
        free(c);
        return -1;
    }
    (void)snprintf(c->path, sizeof c->path, "%s/store.db", c->dir);
    jf_err_t err = {0};
    c->store = coord_store_open(c->path, false, &err);
    if (!c->store) {
        print_error("open %s: %s\n", c->path, err.msg);
        t_rmtree_flat(c->dir);
        free(c);
        return -1;
    }
    *state = c;
    return 0;
}

static int t_teardown(void **state)
{
    t_ctx_t *c = *state;
    coord_store_destroy(&c->store);
    t_rmtree_flat(c->dir);
    free(c);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Helpers: hand-built sweeps

static jf_run_spec_t t_spec(const char *board, int repeat)
{
    jf_run_spec_t s = {.workload = "lenet5-mnist",
                       .model = "lenet5",
                       .dataset = "mnist",
                       .epochs = 3,
                       .power_mode_id = 0,
                       .power_mode = "MAXN",
                       .storage = "sd",
                       .workers = 2,
                       .prefetch = 2,
                       .batch_size = 32,
                       .repeat = repeat,
                       .seed = (uint64_t)(100 + repeat),
                       .telemetry_hz = 1,
                       .timeout_us = 3600 * JF_US_PER_S};
    (void)snprintf(s.board, sizeof s.board, "%s", board);
    jf_run_spec_compute_id(&s);
    return s;
}

static jf_sweep_t t_sweep(const char *name, jf_run_spec_t *runs, size_t n)
{
    jf_sweep_t sw = {.n_runs = n, .runs = runs};
    (void)snprintf(sw.name, sizeof sw.name, "%s", name);
    (void)snprintf(sw.description, sizeof sw.description, "test sweep %s", name);
    (void)snprintf(sw.source, sizeof sw.source, "sweeps/%s.yaml", name);
    return sw;
}

static coord_submit_result_t t_put(coord_store_t *st, jf_run_spec_t *runs, size_t n)
{
    jf_sweep_t sw = t_sweep("smoke", runs, n);
    coord_submit_result_t res = {0};
    jf_err_t err = {0};
    if (coord_store_sweep_put(st, &sw, "sweeps/smoke.yaml", "name: smoke\n", &res, &err) != 0) {
        fail_msg("sweep_put: %s", err.msg);
    }
    return res;
}

static void t_expect_result(coord_submit_result_t r, size_t runs, size_t added, size_t done,
                            size_t retried)
{
    if (r.runs != runs || r.added != added || r.already_done != done || r.retried != retried) {
        fail_msg("submit result {runs %zu, added %zu, already_done %zu, retried %zu}, expected "
                 "{%zu, %zu, %zu, %zu}",
                 r.runs, r.added, r.already_done, r.retried, runs, added, done, retried);
    }
}

static coord_run_row_t t_row(coord_store_t *st, const char *run)
{
    coord_run_row_t row = {0};
    jf_err_t err = {0};
    if (coord_store_run_get(st, run, &row, &err) != 0) {
        fail_msg("run_get %s: %s", run, err.msg);
    }
    return row;
}

static int64_t t_assign(coord_store_t *st, const char *run)
{
    int64_t attempt = 0;
    jf_err_t err = {0};
    if (coord_store_run_assign(st, run, &attempt, &err) != 0) {
        fail_msg("assign %s: %s", run, err.msg);
    }
    return attempt;
}

// assign + start + finish(done) of one run, returning the attempt.
static int64_t t_complete(coord_store_t *st, const char *run, bool done)
{
    int64_t a = t_assign(st, run);
    assert_int_equal(coord_store_run_start(st, run, a, NULL), 0);
    assert_int_equal(coord_store_run_finish(st, run, a, done, done ? NULL : "oom",
                                            done ? NULL : "CUDA out of memory", NULL),
                     0);
    return a;
}

static void t_expect_stale(int rc, const jf_err_t *err, const char *run)
{
    if (rc != -ESTALE || !strstr(err->msg, run)) {
        fail_msg("expected -ESTALE naming %s, got %d '%s'", run, rc, err->msg);
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers: the CLI tables through the row callback

typedef struct t_table {
    int ncols;
    char *names[COORD_TABLE_COLS_MAX];
    size_t nrows;
    char *values[T_ROWS_MAX][COORD_TABLE_COLS_MAX];
    coord_value_kind_t kinds[T_ROWS_MAX][COORD_TABLE_COLS_MAX];
} t_table_t;

static int t_collect(int ncols, const char *const *names, const char *const *values,
                     const coord_value_kind_t *kinds, void *arg)
{
    t_table_t *t = arg;
    if (t->nrows == T_ROWS_MAX) {
        return -E2BIG;
    }
    for (int i = 0; t->nrows == 0 && i < ncols; i++) {
        t->names[i] = strdup(names[i]);
    }
    t->ncols = ncols;
    for (int i = 0; i < ncols; i++) {
        t->values[t->nrows][i] = values[i] ? strdup(values[i]) : NULL;
        t->kinds[t->nrows][i] = kinds[i];
    }
    t->nrows++;
    return 0;
}

static void t_table_free(t_table_t *t)
{
    for (int i = 0; i < t->ncols; i++) {
        free(t->names[i]);
        for (size_t r = 0; r < t->nrows; r++) {
            free(t->values[r][i]);
        }
    }
    *t = (t_table_t){0};
}

static void t_select(coord_store_t *st, coord_table_t table, const char *sweep, const char *state,
                     t_table_t *out)
{
    *out = (t_table_t){0};
    jf_err_t err = {0};
    if (coord_store_select(st, table, sweep, state, t_collect, out, &err) != 0) {
        fail_msg("select table %d: %s", table, err.msg);
    }
}

// The index of the column named name (fails if there is none).
static int t_col(const t_table_t *t, const char *name)
{
    for (int i = 0; i < t->ncols; i++) {
        if (strcmp(t->names[i], name) == 0) {
            return i;
        }
    }
    fail_msg("no column named '%s'", name);
    return -1;
}

static const char *t_val(const t_table_t *t, size_t row, const char *name)
{
    assert_true(row < t->nrows);
    return t->values[row][t_col(t, name)];
}

static void t_expect_real(const t_table_t *t, size_t row, const char *name, double want)
{
    int i = t_col(t, name);
    assert_int_equal(t->kinds[row][i], COORD_VALUE_REAL);
    double got = strtod(t->values[row][i], NULL);
    if (got < want - 1e-9 || got > want + 1e-9) {
        fail_msg("%s: %s, expected %.9g", name, t->values[row][i], want);
    }
}

// ---------------------------------------------------------------------------------------------
// Opening and the schema

static void test_open_creates_schema_and_reopens(void **state)
{
    t_ctx_t *c = *state;
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
    t_ctx_t *c = *state;
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
    t_ctx_t *c = *state;
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
    t_ctx_t *c = *state;
    jf_run_spec_t runs[3] = {t_spec(T_BOARD, 0), t_spec(T_BOARD, 1), t_spec("nx-02", 0)};
    t_expect_result(t_put(c->store, runs, 3), 3, 3, 0, 0);
    t_expect_result(t_put(c->store, runs, 3), 3, 0, 0, 0);
    coord_state_counts_t n = {0};
    assert_int_equal(coord_store_counts(c->store, "smoke", &n, NULL), 0);
    assert_int_equal(n.n[COORD_RUN_PENDING], 3);
    // A duplicate inside one sweep is stored once.
    jf_run_spec_t dup[2] = {t_spec(T_BOARD, 7), t_spec(T_BOARD, 7)};
    t_expect_result(t_put(c->store, dup, 2), 2, 1, 0, 0);
    assert_int_equal(coord_store_counts(c->store, NULL, &n, NULL), 0);
    assert_int_equal(n.n[COORD_RUN_PENDING], 4);
}

static void test_resubmit_keeps_done_and_retries_failed(void **state)
{
    t_ctx_t *c = *state;
    jf_run_spec_t runs[3] = {t_spec(T_BOARD, 0), t_spec(T_BOARD, 1), t_spec(T_BOARD, 2)};
    t_put(c->store, runs, 3);
    assert_int_equal(t_complete(c->store, runs[0].run_id, true), 1);
    assert_int_equal(t_complete(c->store, runs[1].run_id, false), 1);
    t_expect_result(t_put(c->store, runs, 3), 3, 0, 1, 1);
    assert_int_equal(t_row(c->store, runs[0].run_id).state, COORD_RUN_DONE);
    assert_int_equal(t_row(c->store, runs[1].run_id).state, COORD_RUN_PENDING);
    assert_int_equal(t_row(c->store, runs[2].run_id).state, COORD_RUN_PENDING);
    // The done run is never handed out again; the retried one is, with a new attempt.
    jf_run_spec_t next = {0};
    assert_int_equal(coord_store_next_pending(c->store, T_BOARD, &next, NULL), 0);
    assert_string_equal(next.run_id, runs[1].run_id);
    assert_int_equal(t_assign(c->store, runs[1].run_id), 2);
    assert_int_equal(coord_store_next_pending(c->store, T_BOARD, &next, NULL), 0);
    assert_string_equal(next.run_id, runs[2].run_id);
    t_assign(c->store, runs[2].run_id);
    assert_int_equal(coord_store_next_pending(c->store, T_BOARD, &next, NULL), -ENOENT);
    // A third submission still does not add the done run back as pending.
    t_expect_result(t_put(c->store, runs, 3), 3, 0, 1, 0);
    assert_int_equal(t_row(c->store, runs[0].run_id).state, COORD_RUN_DONE);
}

static void test_next_pending_and_run_spec(void **state)
{
    t_ctx_t *c = *state;
    jf_run_spec_t runs[3] = {t_spec("nx-02", 0), t_spec(T_BOARD, 5), t_spec(T_BOARD, 3)};
    runs[1].drop_caches = true;
    runs[1].seed = UINT64_C(1) << 53;
    jf_run_spec_compute_id(&runs[1]);
    t_put(c->store, runs, 3);
    jf_run_spec_t got = {0};
    assert_int_equal(coord_store_next_pending(c->store, T_BOARD, &got, NULL), 0);
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
    t_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {t_spec(T_BOARD, 0)};
    t_put(c->store, runs, 1);
    const char *id = runs[0].run_id;
    coord_run_row_t row = t_row(c->store, id);
    assert_int_equal(row.state, COORD_RUN_PENDING);
    assert_int_equal(row.attempt + row.assigned_us, 0);
    assert_string_equal(row.board, T_BOARD);
    int64_t before = jf_clock_wall_us();
    assert_int_equal(t_assign(c->store, id), 1);
    row = t_row(c->store, id);
    assert_int_equal(row.state, COORD_RUN_ASSIGNED);
    assert_int_equal(row.attempt, 1);
    assert_in_range(row.assigned_us, before, jf_clock_wall_us());
    int64_t attempt = 99;
    jf_err_t err = {0};
    t_expect_stale(coord_store_run_assign(c->store, id, &attempt, &err), &err, id);
    bool failed = true;
    assert_int_equal(coord_store_run_requeue(c->store, id, 1, 3, "agent gone", &failed, NULL), 0);
    assert_false(failed);
    assert_int_equal(t_assign(c->store, id), 2);
    err = (jf_err_t){0};
    t_expect_stale(coord_store_run_assign(c->store, "r00000000000000ff", &attempt, &err), &err,
                   "r00000000000000ff");
}

static void test_run_start_only_from_assigned(void **state)
{
    t_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {t_spec(T_BOARD, 0)};
    t_put(c->store, runs, 1);
    const char *id = runs[0].run_id;
    jf_err_t err = {0};
    t_expect_stale(coord_store_run_start(c->store, id, 0, &err), &err, id); // pending
    assert_int_equal(t_assign(c->store, id), 1);
    t_expect_stale(coord_store_run_start(c->store, id, 2, &err), &err, id); // wrong attempt
    assert_int_equal(t_row(c->store, id).state, COORD_RUN_ASSIGNED);
    assert_int_equal(coord_store_run_start(c->store, id, 1, &err), 0);
    assert_int_equal(t_row(c->store, id).state, COORD_RUN_RUNNING);
    t_expect_stale(coord_store_run_start(c->store, id, 1, &err), &err, id); // already running
    // A late run.accept of an older attempt does not start the newer one.
    bool failed = true;
    assert_int_equal(coord_store_run_requeue(c->store, id, 1, 3, "agent gone", &failed, NULL), 0);
    assert_int_equal(t_assign(c->store, id), 2);
    t_expect_stale(coord_store_run_start(c->store, id, 1, &err), &err, id);
    assert_int_equal(t_row(c->store, id).state, COORD_RUN_ASSIGNED);
    assert_int_equal(coord_store_run_start(c->store, id, 2, &err), 0);
}

static void test_finish_guards_the_attempt(void **state)
{
    t_ctx_t *c = *state;
    jf_run_spec_t runs[2] = {t_spec(T_BOARD, 0), t_spec(T_BOARD, 1)};
    t_put(c->store, runs, 2);
    const char *id = runs[0].run_id;
    jf_err_t err = {0};
    t_expect_stale(coord_store_run_finish(c->store, id, 0, true, NULL, NULL, &err), &err, id);
    assert_int_equal(t_assign(c->store, id), 1);
    assert_int_equal(coord_store_run_start(c->store, id, 1, NULL), 0);
    t_expect_stale(coord_store_run_finish(c->store, id, 2, true, NULL, NULL, &err), &err, id);
    t_expect_stale(coord_store_run_finish(c->store, id, 0, false, "oom", "x", &err), &err, id);
    assert_int_equal(t_row(c->store, id).state, COORD_RUN_RUNNING);
    assert_int_equal(coord_store_run_finish(c->store, id, 1, true, NULL, NULL, &err), 0);
    assert_int_equal(t_row(c->store, id).state, COORD_RUN_DONE);
    t_expect_stale(coord_store_run_finish(c->store, id, 1, false, "oom", "late", &err), &err, id);
    assert_int_equal(t_row(c->store, id).state, COORD_RUN_DONE);
    // An assigned run that never started may fail directly (e.g. rejected by the agent).
    assert_int_equal(t_assign(c->store, runs[1].run_id), 1);
    assert_int_equal(
        coord_store_run_finish(c->store, runs[1].run_id, 1, false, "invalid", "no dataset", &err),
        0);
    t_table_t t;
    t_select(c->store, COORD_TABLE_RUNS, NULL, "failed", &t);
    assert_int_equal(t.nrows, 1);
    assert_string_equal(t_val(&t, 0, "fail_reason"), "invalid");
    assert_string_equal(t_val(&t, 0, "fail_detail"), "no dataset");
    t_table_free(&t);
}

static void test_requeue_until_max_attempts(void **state)
{
    t_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {t_spec(T_BOARD, 0)};
    t_put(c->store, runs, 1);
    const char *id = runs[0].run_id;
    jf_err_t err = {0};
    bool failed = true;
    t_expect_stale(coord_store_run_requeue(c->store, id, 0, 3, "gone", &failed, &err), &err, id);
    for (int64_t a = 1; a <= 3; a++) {
        assert_int_equal(t_assign(c->store, id), a);
        if (a == 2) {
            assert_int_equal(coord_store_run_start(c->store, id, a, NULL), 0); // running too
            bool untouched = true;
            t_expect_stale(coord_store_run_requeue(c->store, id, a - 1, 3, "old", &untouched, &err),
                           &err, id);
            assert_true(untouched);
        }
        failed = !(a == 3);
        assert_int_equal(
            coord_store_run_requeue(c->store, id, a, 3, "agent restarted", &failed, &err), 0);
        assert_int_equal(failed, a == 3);
        assert_int_equal(t_row(c->store, id).state, a == 3 ? COORD_RUN_FAILED : COORD_RUN_PENDING);
    }
    t_table_t t;
    t_select(c->store, COORD_TABLE_RUNS, "smoke", NULL, &t);
    assert_int_equal(t.nrows, 1);
    assert_string_equal(t_val(&t, 0, "state"), "failed");
    assert_string_equal(t_val(&t, 0, "fail_reason"), "crashed");
    assert_non_null(strstr(t_val(&t, 0, "fail_detail"), "attempt 3 lost: agent restarted"));
    assert_string_equal(t_val(&t, 0, "attempt"), "3");
    t_table_free(&t);
    int64_t attempt = 0;
    t_expect_stale(coord_store_run_assign(c->store, id, &attempt, &err), &err, id);
}

// A lost attempt of a run whose sweeps were all cancelled is not run again: it fails, cancelled.
static void test_requeue_after_cancel_fails_cancelled(void **state)
{
    t_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {t_spec(T_BOARD, 0)};
    t_put(c->store, runs, 1);
    const char *id = runs[0].run_id;
    assert_int_equal(t_assign(c->store, id), 1);
    size_t cancelled = 0;
    assert_int_equal(coord_store_sweep_cancel(c->store, "smoke", &cancelled, NULL), 0);
    assert_int_equal(cancelled, 0); // it was assigned, not pending
    bool failed = false;
    assert_int_equal(coord_store_run_requeue(c->store, id, 1, 3, "lease expired", &failed, NULL),
                     0);
    assert_true(failed);
    t_table_t t;
    t_select(c->store, COORD_TABLE_RUNS, "smoke", NULL, &t);
    assert_string_equal(t_val(&t, 0, "state"), "failed");
    assert_string_equal(t_val(&t, 0, "fail_reason"), "cancelled");
    t_table_free(&t);
}

// A failed run submitted again gets max_attempts fresh attempts; attempt numbers keep growing.
static void test_resubmit_gives_fresh_attempts(void **state)
{
    t_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {t_spec(T_BOARD, 0)};
    t_put(c->store, runs, 1);
    const char *id = runs[0].run_id;
    bool failed = false;
    for (int64_t a = 1; a <= 2; a++) {
        assert_int_equal(t_assign(c->store, id), a);
        assert_int_equal(coord_store_run_requeue(c->store, id, a, 2, "gone", &failed, NULL), 0);
    }
    assert_true(failed);
    t_expect_result(t_put(c->store, runs, 1), 1, 0, 0, 1);
    assert_int_equal(t_assign(c->store, id), 3);
    assert_int_equal(coord_store_run_requeue(c->store, id, 3, 2, "gone", &failed, NULL), 0);
    assert_false(failed);
    assert_int_equal(t_row(c->store, id).state, COORD_RUN_PENDING);
    assert_int_equal(t_assign(c->store, id), 4);
    assert_int_equal(coord_store_run_requeue(c->store, id, 4, 2, "gone", &failed, NULL), 0);
    assert_true(failed);
}

// A store made by schema version 1 is migrated to the latest on open, keeping its rows.
static void test_migrates_version_1(void **state)
{
    t_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {t_spec(T_BOARD, 0)};
    t_put(c->store, runs, 1);
    coord_store_destroy(&c->store);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(c->path, &db), SQLITE_OK);
    // Version 1 had neither attempt_base (migration 2) nor the measurement columns (3) nor the
    // power extras (4).
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
                                  "PRAGMA user_version = 1",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
    jf_err_t err = {0};
    c->store = coord_store_open(c->path, false, &err);
    assert_non_null(c->store);
    assert_int_equal(coord_store_schema_version(c->store), coord_store_schema_latest());
    assert_int_equal(t_row(c->store, runs[0].run_id).state, COORD_RUN_PENDING);
    assert_int_equal(t_assign(c->store, runs[0].run_id), 1);
    // The measurement columns exist after the migration.
    jf_epoch_rec_t e = {.warmup = true, .e2e_us = JF_US_PER_S, .has_energy = true, .energy_mj = 5};
    assert_int_equal(coord_store_add_epoch(c->store, runs[0].run_id, 1, &e, NULL), 0);
}

typedef struct t_active {
    size_t n;
    coord_run_row_t rows[T_ROWS_MAX];
} t_active_t;

static void t_on_row(const coord_run_row_t *row, void *arg)
{
    t_active_t *a = arg;
    assert_true(a->n < T_ROWS_MAX);
    a->rows[a->n++] = *row;
}

static void test_active_runs_and_acked(void **state)
{
    t_ctx_t *c = *state;
    jf_run_spec_t runs[4] = {t_spec(T_BOARD, 0), t_spec(T_BOARD, 1), t_spec("nx-02", 0),
                             t_spec(T_BOARD, 2)};
    t_put(c->store, runs, 4);
    t_assign(c->store, runs[0].run_id);
    t_assign(c->store, runs[1].run_id);
    assert_int_equal(coord_store_run_start(c->store, runs[1].run_id, 1, NULL), 0);
    t_assign(c->store, runs[2].run_id);
    t_active_t act = {0};
    assert_int_equal(coord_store_active_runs(c->store, T_BOARD, t_on_row, &act, NULL), 0);
    assert_int_equal(act.n, 2);
    assert_string_equal(act.rows[0].run, runs[0].run_id);
    assert_int_equal(act.rows[0].state, COORD_RUN_ASSIGNED);
    assert_string_equal(act.rows[1].run, runs[1].run_id);
    assert_int_equal(act.rows[1].state, COORD_RUN_RUNNING);
    assert_int_equal(act.rows[1].attempt, 1);
    assert_string_equal(act.rows[1].board, T_BOARD);
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
    assert_int_equal(t_row(c->store, id).acked_seq, 12); // other attempt ignored
    // A new attempt starts its stream from zero; acks of the old attempt no longer count.
    bool failed = true;
    assert_int_equal(coord_store_run_requeue(c->store, id, 1, 3, "agent gone", &failed, NULL), 0);
    assert_int_equal(t_assign(c->store, id), 2);
    assert_int_equal(t_row(c->store, id).acked_seq, 0);
    assert_int_equal(coord_store_run_set_acked(c->store, id, 1, 40, NULL), 0);
    assert_int_equal(t_row(c->store, id).acked_seq, 0);
    assert_int_equal(coord_store_run_set_acked(c->store, id, 2, 3, NULL), 0);
    assert_int_equal(t_row(c->store, id).acked_seq, 3);
}

// ---------------------------------------------------------------------------------------------
// Records

static jf_epoch_rec_t t_epoch(int epoch, int64_t e2e_us, double loss)
{
    return (jf_epoch_rec_t){.epoch = epoch,
                            .warmup = epoch == 0,
                            .e2e_us = e2e_us,
                            .fetch_stall_us = e2e_us / 10,
                            .compute_us = e2e_us / 2,
                            .samples = 60000,
                            .has_loss = true,
                            .loss = loss};
}

static void test_records_are_idempotent(void **state)
{
    t_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {t_spec(T_BOARD, 0)};
    t_put(c->store, runs, 1);
    const char *id = runs[0].run_id;
    int64_t a = t_assign(c->store, id);
    jf_epoch_rec_t e = t_epoch(1, 2 * JF_US_PER_S, 0.5);
    assert_int_equal(coord_store_add_epoch(c->store, id, a, &e, NULL), 0);
    jf_epoch_rec_t again = t_epoch(1, 9 * JF_US_PER_S, 0.9); // a retransmission
    assert_int_equal(coord_store_add_epoch(c->store, id, a, &again, NULL), 0);
    int64_t n = -1;
    assert_int_equal(coord_store_count_epochs(c->store, id, a, &n, NULL), 0);
    assert_int_equal(n, 1);
    assert_int_equal(coord_store_count_epochs(c->store, id, a + 1, &n, NULL), 0);
    assert_int_equal(n, 0);
    t_table_t t;
    t_select(c->store, COORD_TABLE_EPOCHS, NULL, NULL, &t);
    assert_int_equal(t.nrows, 1);
    t_expect_real(&t, 0, "e2e_s", 2.0); // the first copy wins
    t_table_free(&t);
    jf_minibatch_rec_t mb = {.epoch = 1, .index = 4, .samples = 32, .compute_us = 900};
    assert_int_equal(coord_store_add_minibatch(c->store, id, a, &mb, NULL), 0);
    assert_int_equal(coord_store_add_minibatch(c->store, id, a, &mb, NULL), 0);
    t_select(c->store, COORD_TABLE_MINIBATCHES, NULL, NULL, &t);
    assert_int_equal(t.nrows, 1);
    assert_int_equal(t.kinds[0][t_col(&t, "loss")], COORD_VALUE_NULL); // absent stays absent
    assert_string_equal(t_val(&t, 0, "minibatch"), "4");
    t_table_free(&t);
    const char *sample = "{\"t_us\":1700000000000000,\"gpu_pct\":87,\"emc_mhz\":1600}";
    for (int i = 0; i < 2; i++) {
        assert_int_equal(
            coord_store_add_telemetry(c->store, id, a, 1, 0, 1700000000000000, sample, NULL), 0);
    }
    t_select(c->store, COORD_TABLE_TELEMETRY, NULL, NULL, &t);
    assert_int_equal(t.nrows, 2); // one row per numeric metric, t_us excluded
    assert_string_equal(t_val(&t, 0, "metric"), "gpu_pct");
    assert_string_equal(t_val(&t, 0, "value"), "87");
    assert_string_equal(t_val(&t, 1, "metric"), "emc_mhz");
    t_table_free(&t);
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
    t_ctx_t *c = *state;
    jf_run_spec_t runs[6];
    for (int i = 0; i < 6; i++) {
        runs[i] = t_spec(T_BOARD, i);
    }
    t_put(c->store, runs, 5);
    jf_sweep_t other = t_sweep("other", &runs[4], 2); // shares one run with smoke
    coord_submit_result_t res = {0};
    assert_int_equal(coord_store_sweep_put(c->store, &other, "o.yaml", "", &res, NULL), 0);
    t_expect_result(res, 2, 1, 0, 0);
    t_assign(c->store, runs[1].run_id);
    t_assign(c->store, runs[2].run_id);
    assert_int_equal(coord_store_run_start(c->store, runs[2].run_id, 1, NULL), 0);
    t_complete(c->store, runs[3].run_id, true);
    t_complete(c->store, runs[4].run_id, false);
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
    t_ctx_t *c = *state;
    jf_run_spec_t runs[4] = {t_spec(T_BOARD, 0), t_spec(T_BOARD, 1), t_spec(T_BOARD, 2),
                             t_spec(T_BOARD, 3)};
    t_put(c->store, runs, 4);
    t_assign(c->store, runs[0].run_id);
    t_complete(c->store, runs[1].run_id, true);
    size_t cancelled = 0;
    jf_err_t err = {0};
    assert_int_equal(coord_store_sweep_cancel(c->store, "smoke", &cancelled, &err), 0);
    assert_int_equal(cancelled, 2);
    t_expect_counts(c->store, "smoke", 0, 1, 0, 1, 2);
    t_table_t t;
    t_select(c->store, COORD_TABLE_RUNS, "smoke", "failed", &t);
    assert_int_equal(t.nrows, 2);
    for (size_t r = 0; r < t.nrows; r++) {
        assert_string_equal(t_val(&t, r, "fail_reason"), "cancelled");
    }
    t_table_free(&t);
    t_select(c->store, COORD_TABLE_SWEEPS, "smoke", NULL, &t);
    assert_int_equal(t.nrows, 1);
    assert_int_equal(t.kinds[0][t_col(&t, "cancelled_us")], COORD_VALUE_INT);
    assert_string_equal(t_val(&t, 0, "failed"), "2");
    t_table_free(&t);
    cancelled = 42;
    assert_int_equal(coord_store_sweep_cancel(c->store, "nope", &cancelled, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "no sweep named 'nope'"));
    assert_int_equal(cancelled, 42);
}

static void test_transaction_rollback_and_commit(void **state)
{
    t_ctx_t *c = *state;
    jf_run_spec_t runs[2] = {t_spec(T_BOARD, 0), t_spec(T_BOARD, 1)};
    assert_false(coord_store_in_transaction(c->store));
    assert_int_equal(coord_store_begin(c->store, NULL), 0);
    assert_true(coord_store_in_transaction(c->store));
    t_put(c->store, runs, 2);
    t_assign(c->store, runs[0].run_id);
    jf_epoch_rec_t e = t_epoch(0, JF_US_PER_S, 1.0);
    assert_int_equal(coord_store_add_epoch(c->store, runs[0].run_id, 1, &e, NULL), 0);
    assert_int_equal(coord_store_board_hello(c->store, T_BOARD, "xavier-nx", "jetson", "{}", NULL),
                     0);
    coord_store_rollback(c->store);
    assert_false(coord_store_in_transaction(c->store));
    coord_store_rollback(c->store); // no transaction: nothing happens
    t_expect_counts(c->store, NULL, 0, 0, 0, 0, 0);
    coord_state_counts_t n = {0};
    assert_int_equal(coord_store_counts(c->store, "smoke", &n, NULL), -ENOENT);
    t_table_t t;
    for (coord_table_t tab = 0; tab < COORD_TABLE_COUNT; tab++) {
        t_select(c->store, tab, NULL, NULL, &t);
        assert_int_equal(t.nrows, 0);
        t_table_free(&t);
    }
    assert_int_equal(coord_store_begin(c->store, NULL), 0);
    t_put(c->store, runs, 2);
    assert_int_equal(coord_store_commit(c->store, NULL), 0);
    assert_false(coord_store_in_transaction(c->store));
    coord_store_destroy(&c->store);
    c->store = coord_store_open(c->path, true, NULL);
    assert_non_null(c->store);
    t_expect_counts(c->store, "smoke", 2, 0, 0, 0, 0);
}

// ---------------------------------------------------------------------------------------------
// The CLI tables

static void test_select_runs_table(void **state)
{
    t_ctx_t *c = *state;
    jf_run_spec_t runs[2] = {t_spec(T_BOARD, 0), t_spec(T_BOARD, 1)};
    t_put(c->store, runs, 2);
    assert_int_equal(coord_store_board_hello(c->store, T_BOARD, "xavier-nx", "jetson",
                                             "{\"name\":\"nx-01\"}", NULL),
                     0);
    t_complete(c->store, runs[0].run_id, true);
    assert_int_equal(
        coord_store_run_set_info(c->store, runs[0].run_id, 1, "{\"device\":\"cuda\"}", NULL), 0);
    t_table_t t;
    t_select(c->store, COORD_TABLE_RUNS, NULL, NULL, &t);
    assert_int_equal(t.nrows, 2);
    static const char *const cols[] = {
        "run",
        "board",
        "board_type",
        "platform",
        "workload",
        "model",
        "dataset",
        "power_mode_id",
        "power_mode",
        "power",
        "dvfs_off",
        "custom_cores",
        "custom_cpu_hz",
        "custom_gpu_hz",
        "custom_emc_hz",
        "storage",
        "workers",
        "prefetch",
        "batch_size",
        "repeat",
        "threads",
        "epochs",
        "seed",
        "drop_caches",
        "telemetry_hz",
        "state",
        "attempt",
        "fail_reason",
        "fail_detail",
        "created_us",
        "assigned_us",
        "started_us",
        "finished_us",
        "duration_s",
        "telemetry_source",
        "telemetry_achieved_hz",
        "telemetry_samples",
        "telemetry_late",
        "telemetry_missed",
        "energy_total",
        "run_energy_mj",
        "run_avg_power_mw",
        "run_peak_power_mw",
        "mode_in_force_id",
        "mode_in_force",
        "dvfs_off_in_force",
        "dataset_mount",
        "dataset_device",
        "cache_drop",
        "disk_reads",
        "disk_read_bytes",
        "dataset_bytes",
        "info",
        "measure",
    };
    assert_int_equal(t.ncols, sizeof cols / sizeof cols[0]);
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        assert_string_equal(t.names[i], cols[i]);
    }
    assert_string_equal(t_val(&t, 0, "run"), runs[0].run_id); // sweep order
    assert_string_equal(t_val(&t, 0, "board_type"), "xavier-nx");
    assert_string_equal(t_val(&t, 0, "platform"), "jetson");
    assert_string_equal(t_val(&t, 0, "state"), "done");
    assert_string_equal(t_val(&t, 0, "batch_size"), "32");
    assert_string_equal(t_val(&t, 0, "info"), "{\"device\":\"cuda\"}");
    assert_int_equal(t.kinds[0][t_col(&t, "duration_s")], COORD_VALUE_REAL);
    assert_int_equal(t.kinds[0][t_col(&t, "workers")], COORD_VALUE_INT);
    assert_int_equal(t.kinds[0][t_col(&t, "model")], COORD_VALUE_TEXT);
    assert_string_equal(t_val(&t, 1, "state"), "pending");
    assert_null(t_val(&t, 1, "started_us"));
    assert_int_equal(t.kinds[1][t_col(&t, "fail_reason")], COORD_VALUE_NULL);
    t_table_free(&t);
    t_select(c->store, COORD_TABLE_RUNS, "smoke", "pending", &t);
    assert_int_equal(t.nrows, 1);
    assert_string_equal(t_val(&t, 0, "run"), runs[1].run_id);
    t_table_free(&t);
    t_select(c->store, COORD_TABLE_RUNS, "nope", NULL, &t);
    assert_int_equal(t.nrows, 0);
    t_table_free(&t);
}

static void test_select_epochs_and_results(void **state)
{
    t_ctx_t *c = *state;
    jf_run_spec_t runs[2] = {t_spec(T_BOARD, 0), t_spec(T_BOARD, 1)};
    t_put(c->store, runs, 2);
    const char *id = runs[0].run_id;
    // A first attempt that was lost: its epochs are not the run's.
    int64_t a = t_assign(c->store, id);
    jf_epoch_rec_t lost = t_epoch(1, 100 * JF_US_PER_S, 9.0);
    assert_int_equal(coord_store_add_epoch(c->store, id, a, &lost, NULL), 0);
    bool failed = true;
    assert_int_equal(coord_store_run_requeue(c->store, id, a, 3, "gone", &failed, NULL), 0);
    a = t_assign(c->store, id);
    assert_int_equal(coord_store_run_start(c->store, id, a, NULL), 0);
    const jf_epoch_rec_t e[3] = {t_epoch(0, 10 * JF_US_PER_S, 2.0),
                                 t_epoch(1, 2 * JF_US_PER_S, 1.0),
                                 t_epoch(2, 4 * JF_US_PER_S, 0.25)};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(coord_store_add_epoch(c->store, id, a, &e[i], NULL), 0);
    }
    t_table_t t;
    t_select(c->store, COORD_TABLE_RESULTS, NULL, NULL, &t);
    assert_int_equal(t.nrows, 0); // only done runs have results
    t_table_free(&t);
    assert_int_equal(coord_store_run_finish(c->store, id, a, true, NULL, NULL, NULL), 0);

    t_select(c->store, COORD_TABLE_EPOCHS, "smoke", NULL, &t);
    assert_int_equal(t.nrows, 3);
    assert_string_equal(t_val(&t, 0, "attempt"), "2");
    assert_string_equal(t_val(&t, 0, "warmup"), "1");
    t_expect_real(&t, 1, "e2e_s", 2.0);
    t_expect_real(&t, 1, "fetch_stall_s", 0.2);
    t_expect_real(&t, 1, "compute_s", 1.0);
    t_expect_real(&t, 1, "samples_per_s", 30000.0);
    t_table_free(&t);

    t_select(c->store, COORD_TABLE_RESULTS, NULL, NULL, &t);
    assert_int_equal(t.nrows, 1);
    assert_string_equal(t_val(&t, 0, "run"), id);
    assert_string_equal(t_val(&t, 0, "epochs_measured"), "2"); // warm-up left out
    t_expect_real(&t, 0, "e2e_s", 3.0);                        // (2 s + 4 s) / 2
    t_expect_real(&t, 0, "fetch_stall_s", 0.3);
    t_expect_real(&t, 0, "compute_s", 1.5);
    t_expect_real(&t, 0, "samples_per_s", (30000.0 + 15000.0) / 2);
    t_expect_real(&t, 0, "final_loss", 0.25);
    assert_string_equal(t_val(&t, 0, "workload"), "lenet5-mnist");
    t_table_free(&t);
}

static int t_stop(int ncols, const char *const *names, const char *const *values,
                  const coord_value_kind_t *kinds, void *arg)
{
    (void)ncols;
    (void)names;
    (void)values;
    (void)kinds;
    ++*(int *)arg;
    return -ECANCELED;
}

// Measurements: energy per epoch (NULL where not measured, never 0), the measure record with the
// run and exported as columns, and the residency figures it carries put on the epochs.
static void test_measurements(void **state)
{
    t_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {t_spec(T_BOARD, 0)};
    t_put(c->store, runs, 1);
    const char *id = runs[0].run_id;
    int64_t a = t_assign(c->store, id);
    jf_epoch_rec_t e[3] = {t_epoch(0, 10 * JF_US_PER_S, 2.0), t_epoch(1, 2 * JF_US_PER_S, 1.0),
                           t_epoch(2, 2 * JF_US_PER_S, 1.0)};
    e[1].has_energy = e[2].has_energy = e[1].has_peak = true; // epoch 2: no sample inside
    e[1].energy_mj = 20000;
    e[1].avg_power_mw = e[1].peak_power_mw = 10000;
    e[2].energy_mj = 10000;
    e[2].avg_power_mw = e[2].peak_power_mw = 5000;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(coord_store_add_epoch(c->store, id, a, &e[i], NULL), 0);
    }
    assert_int_equal(coord_store_run_set_measure(
                         c->store, id, a,
                         "{\"drop_caches\":\"fadvise\",\"energy\":{\"total\":\"input-rail\","
                         "\"energy_mj\":40000.5},\"power_mode\":{\"mode_name\":\"DEFAULT\"},"
                         "\"telemetry\":{\"source\":\"sysfs\",\"missed\":0}}",
                         NULL),
                     0);
    jf_measure_cache_t cache = {.epoch = 1, .has_before = true, .before = 0.25, .has_after = false};
    assert_int_equal(coord_store_epoch_set_cache(c->store, id, a, &cache, NULL), 0);
    cache.epoch = 7; // an epoch that is not stored: nothing happens
    assert_int_equal(coord_store_epoch_set_cache(c->store, id, a, &cache, NULL), 0);
    assert_int_equal(coord_store_run_finish(c->store, id, a, true, NULL, NULL, NULL), 0);

    t_table_t t;
    t_select(c->store, COORD_TABLE_EPOCHS, NULL, NULL, &t);
    assert_int_equal(t.nrows, 3);
    assert_null(t_val(&t, 0, "energy_mj")); // not measured: NULL, not 0
    assert_null(t_val(&t, 0, "avg_power_mw"));
    t_expect_real(&t, 1, "energy_mj", 20000.0);
    t_expect_real(&t, 1, "peak_power_mw", 10000.0);
    assert_null(t_val(&t, 2, "peak_power_mw"));
    t_expect_real(&t, 1, "cache_resident_before", 0.25);
    assert_null(t_val(&t, 1, "cache_resident_after"));
    assert_null(t_val(&t, 2, "cache_resident_before"));
    t_table_free(&t);
    t_select(c->store, COORD_TABLE_RUNS, NULL, NULL, &t);
    assert_string_equal(t_val(&t, 0, "telemetry_source"), "sysfs");
    assert_string_equal(t_val(&t, 0, "energy_total"), "input-rail");
    t_expect_real(&t, 0, "run_energy_mj", 40000.5);
    assert_string_equal(t_val(&t, 0, "mode_in_force"), "DEFAULT");
    assert_string_equal(t_val(&t, 0, "cache_drop"), "fadvise");
    assert_string_equal(t_val(&t, 0, "telemetry_missed"), "0");
    assert_null(t_val(&t, 0, "disk_reads")); // the record has no disk: NULL
    t_table_free(&t);
    t_select(c->store, COORD_TABLE_RESULTS, NULL, NULL, &t);
    t_expect_real(&t, 0, "energy_mj", 15000.0); // epochs 1 and 2; warm-up left out
    t_expect_real(&t, 0, "avg_power_mw", 7500.0);
    t_table_free(&t);
}

static void test_select_callback_stops_and_bad_table(void **state)
{
    t_ctx_t *c = *state;
    jf_run_spec_t runs[3] = {t_spec(T_BOARD, 0), t_spec(T_BOARD, 1), t_spec(T_BOARD, 2)};
    t_put(c->store, runs, 3);
    int calls = 0;
    jf_err_t err = {0};
    assert_int_equal(
        coord_store_select(c->store, COORD_TABLE_RUNS, NULL, NULL, t_stop, &calls, &err),
        -ECANCELED);
    assert_int_equal(calls, 1);
    // The statement was reset: the next select sees every row.
    t_table_t t;
    t_select(c->store, COORD_TABLE_RUNS, NULL, NULL, &t);
    assert_int_equal(t.nrows, 3);
    t_table_free(&t);
    assert_int_equal(
        coord_store_select(c->store, COORD_TABLE_COUNT, NULL, NULL, t_stop, &calls, &err), -EINVAL);
    assert_int_equal(calls, 1);
}

static void test_state_names(void **state)
{
    (void)state;
    for (int s = 0; s < COORD_RUN_STATE_COUNT; s++) {
        coord_run_state_t back = COORD_RUN_STATE_COUNT;
        assert_true(coord_run_state_parse(coord_run_state_name((coord_run_state_t)s), &back));
        assert_int_equal(back, s);
    }
    assert_string_equal(coord_run_state_name(COORD_RUN_DONE), "done");
    assert_string_equal(coord_run_state_name(COORD_RUN_STATE_COUNT), "?");
    coord_run_state_t untouched = COORD_RUN_DONE;
    assert_false(coord_run_state_parse("Done", &untouched));
    assert_false(coord_run_state_parse(NULL, &untouched));
    assert_int_equal(untouched, COORD_RUN_DONE);
}

#define T_TEST(f) cmocka_unit_test_setup_teardown(f, t_setup, t_teardown)

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
        T_TEST(test_counts_per_state),
        T_TEST(test_sweep_cancel),
        T_TEST(test_transaction_rollback_and_commit),
        T_TEST(test_select_runs_table),
        T_TEST(test_select_epochs_and_results),
        T_TEST(test_measurements),
        T_TEST(test_select_callback_stops_and_bad_table),
        cmocka_unit_test(test_state_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
