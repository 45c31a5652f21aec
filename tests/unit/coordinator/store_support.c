/* Helpers shared by the coord_store unit tests (store_support.h). */
#include "store_support.h"

#include "jf_units.h"

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

// ---------------------------------------------------------------------------------------------
// Fixture: a fresh store in its own temporary directory

void tstore_rmtree_flat(const char *dir)
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

#ifdef JF_DB_TEST_PG
#include "coord_db.h"
#include "jft_pg.h"

// unit.store_postgres: one server for the whole group (main starts it), a database per test.
static jft_pg_t *s_pg;
static int s_pg_dbs; // databases made so far: the next one's number

int tstore_main_begin(void)
{
    jf_err_t err = {0};
    int rc = jft_pg_start("jft_store", &s_pg, &err);
    if (rc != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return rc == JFT_PG_SKIP ? 77 : 1; // 77: ctest's SKIP_RETURN_CODE
    }
    return 0;
}

void tstore_main_end(void)
{
    jft_pg_destroy(&s_pg);
}

bool tstore_on_postgres(void)
{
    return true;
}

// A new empty database on the group's server: c->path is its URI (the server's, with the
// database's name changed).
static int s_target(tstore_ctx_t *c)
{
    const char *uri = jft_pg_uri(s_pg); // "postgresql:///<db>?host=<dir>"
    const char *query = strchr(uri, '?');
    if (!query) {
        return -1;
    }
    char sql[64];
    (void) snprintf(sql, sizeof sql, "CREATE DATABASE jft_store_%d", ++s_pg_dbs);
    coord_db_t *db = NULL;
    jf_err_t err = {0};
    int rc = coord_db_open(uri, false, &db, &err);
    rc = rc ? rc : coord_db_exec_script(db, sql, &err);
    coord_db_close(&db);
    if (rc != 0) {
        print_error("%s: %s\n", sql, err.msg);
        return -1;
    }
    (void) snprintf(c->path, sizeof c->path, "postgresql:///jft_store_%d%s", s_pg_dbs, query);
    return 0;
}
#else
int tstore_main_begin(void)
{
    return 0;
}

void tstore_main_end(void)
{
}

bool tstore_on_postgres(void)
{
    return false;
}

static int s_target(tstore_ctx_t *c)
{
    (void) snprintf(c->path, sizeof c->path, "%s/store.db", c->dir);
    return 0;
}
#endif

void tstore_skip_on_postgres(const char *why)
{
    if (tstore_on_postgres()) {
        print_message("skipped on PostgreSQL: %s\n", why);
        skip();
    }
}

int tstore_setup(void **state)
{
    tstore_ctx_t *c = calloc(1, sizeof *c);
    if (!c) {
        return -1;
    }
    const char *tmp = getenv("TMPDIR");
    (void)snprintf(c->dir, sizeof c->dir, "%s/jf-store-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(c->dir)) {
        free(c);
        return -1;
    }
    jf_err_t err = {0};
    c->store = s_target(c) == 0 ? coord_store_open(c->path, false, &err) : NULL;
    if (!c->store) {
        print_error("open %s: %s\n", c->path, err.msg);
        tstore_rmtree_flat(c->dir);
        free(c);
        return -1;
    }
    *state = c;
    return 0;
}

int tstore_teardown(void **state)
{
    tstore_ctx_t *c = *state;
    coord_store_destroy(&c->store);
    tstore_rmtree_flat(c->dir);
    free(c);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Helpers: hand-built sweeps

jf_run_spec_t tstore_spec(const char *board, int repeat)
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

jf_sweep_t tstore_sweep(const char *name, jf_run_spec_t *runs, size_t n)
{
    jf_sweep_t sw = {.n_runs = n, .runs = runs};
    (void)snprintf(sw.name, sizeof sw.name, "%s", name);
    (void)snprintf(sw.description, sizeof sw.description, "test sweep %s", name);
    (void)snprintf(sw.source, sizeof sw.source, "sweeps/%s.yaml", name);
    return sw;
}

coord_submit_result_t tstore_put(coord_store_t *st, jf_run_spec_t *runs, size_t n)
{
    jf_sweep_t sw = tstore_sweep("smoke", runs, n);
    coord_submit_result_t res = {0};
    jf_err_t err = {0};
    if (coord_store_sweep_put(st, &sw, "sweeps/smoke.yaml", "name: smoke\n", &res, &err) != 0) {
        fail_msg("sweep_put: %s", err.msg);
    }
    return res;
}

void tstore_expect_result(coord_submit_result_t r, size_t runs, size_t added, size_t done,
                            size_t retried)
{
    if (r.runs != runs || r.added != added || r.already_done != done || r.retried != retried) {
        fail_msg("submit result {runs %zu, added %zu, already_done %zu, retried %zu}, expected "
                 "{%zu, %zu, %zu, %zu}",
                 r.runs, r.added, r.already_done, r.retried, runs, added, done, retried);
    }
}

coord_run_row_t tstore_row(coord_store_t *st, const char *run)
{
    coord_run_row_t row = {0};
    jf_err_t err = {0};
    if (coord_store_run_get(st, run, &row, &err) != 0) {
        fail_msg("run_get %s: %s", run, err.msg);
    }
    return row;
}

int64_t tstore_assign(coord_store_t *st, const char *run)
{
    int64_t attempt = 0;
    jf_err_t err = {0};
    if (coord_store_run_assign(st, run, &attempt, &err) != 0) {
        fail_msg("assign %s: %s", run, err.msg);
    }
    return attempt;
}

// assign + start + finish(done) of one run, returning the attempt.
int64_t tstore_complete(coord_store_t *st, const char *run, bool done)
{
    int64_t a = tstore_assign(st, run);
    assert_int_equal(coord_store_run_start(st, run, a, NULL), 0);
    assert_int_equal(coord_store_run_finish(st, run, a, done, done ? NULL : "oom",
                                            done ? NULL : "CUDA out of memory", NULL),
                     0);
    return a;
}

void tstore_expect_stale(int rc, const jf_err_t *err, const char *run)
{
    if (rc != -ESTALE || !strstr(err->msg, run)) {
        fail_msg("expected -ESTALE naming %s, got %d '%s'", run, rc, err->msg);
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers: the CLI tables through the row callback

int tstore_collect(int ncols, const char *const *names, const char *const *values,
                     const coord_value_kind_t *kinds, void *arg)
{
    tstore_table_t *t = arg;
    if (t->nrows == TSTORE_ROWS_MAX) {
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

void tstore_table_free(tstore_table_t *t)
{
    for (int i = 0; i < t->ncols; i++) {
        free(t->names[i]);
        for (size_t r = 0; r < t->nrows; r++) {
            free(t->values[r][i]);
        }
    }
    *t = (tstore_table_t){0};
}

void tstore_select(coord_store_t *st, coord_table_t table, const char *sweep, const char *state,
                     tstore_table_t *out)
{
    *out = (tstore_table_t){0};
    jf_err_t err = {0};
    if (coord_store_select(st, table, sweep, state, tstore_collect, out, &err) != 0) {
        fail_msg("select table %d: %s", table, err.msg);
    }
}

// The index of the column named name (fails if there is none).
int tstore_col(const tstore_table_t *t, const char *name)
{
    for (int i = 0; i < t->ncols; i++) {
        if (strcmp(t->names[i], name) == 0) {
            return i;
        }
    }
    fail_msg("no column named '%s'", name);
    return -1;
}

const char *tstore_val(const tstore_table_t *t, size_t row, const char *name)
{
    assert_true(row < t->nrows);
    return t->values[row][tstore_col(t, name)];
}

void tstore_expect_real(const tstore_table_t *t, size_t row, const char *name, double want)
{
    int i = tstore_col(t, name);
    assert_int_equal(t->kinds[row][i], COORD_VALUE_REAL);
    double got = strtod(t->values[row][i], NULL);
    if (got < want - 1e-9 || got > want + 1e-9) {
        fail_msg("%s: %s, expected %.9g", name, t->values[row][i], want);
    }
}

jf_epoch_rec_t tstore_epoch(int epoch, int64_t e2e_us, double loss)
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
