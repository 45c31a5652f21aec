/* Helpers shared by the coord_store unit tests (store_test.c: schema, sweeps, the run state
 * machine, records, counts; store_tables_test.c: the CLI tables and measurements): a fresh store
 * per test (cmocka setup/teardown) in its own mkdtemp directory, or, built with JF_DB_TEST_PG, in
 * a fresh database on a PostgreSQL server tstore_main_begin starts (unit.store_postgres, jft_pg.h),
 * hand-built sweeps (no YAML),
 * run transitions that fail the test on error, and the CLI tables collected through the row
 * callback. */
#ifndef STORE_SUPPORT_H
#define STORE_SUPPORT_H

#include "coord_store.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TSTORE_ROWS_MAX 16
#define TSTORE_BOARD    "nx-01"

// One test's store (cmocka state).
typedef struct tstore_ctx {
    char dir[PATH_MAX];       // the test's own directory (on PostgreSQL too, for other files)
    char path[PATH_MAX + 64]; // what coord_store_open opens: dir/store.db, or a PostgreSQL URI
    coord_store_t *store;
} tstore_ctx_t;

// A table as coord_store_select gave it (strings owned; tstore_table_free).
typedef struct tstore_table {
    int ncols;
    char *names[COORD_TABLE_COLS_MAX];
    size_t nrows;
    char *values[TSTORE_ROWS_MAX][COORD_TABLE_COLS_MAX];
    coord_value_kind_t kinds[TSTORE_ROWS_MAX][COORD_TABLE_COLS_MAX];
} tstore_table_t;

void tstore_rmtree_flat(const char *dir);

// For main: starts the PostgreSQL server of a JF_DB_TEST_PG build (nothing on SQLite). Returns 0,
// or the exit code main should return: 77 (ctest's skip) when the server's binaries are missing
// and JF_ALLOW_SKIP_PG=1, 1 when the server did not start (the reason on stderr).
int tstore_main_begin(void);
void tstore_main_end(void); // stops that server and removes its directory

// True when the tests run on PostgreSQL (a JF_DB_TEST_PG build).
bool tstore_on_postgres(void);

// Skips the running test on PostgreSQL, printing why (a test about the SQLite file itself, or
// what PostgreSQL does not provide yet); does nothing on SQLite.
void tstore_skip_on_postgres(const char *why);
int tstore_setup(void **state);    // a fresh store in a new mkdtemp directory
int tstore_teardown(void **state); // closes it and removes the directory

// A lenet5-mnist run spec for board, repeat repeat, its id computed.
jf_run_spec_t tstore_spec(const char *board, int repeat);
jf_sweep_t tstore_sweep(const char *name, jf_run_spec_t *runs, size_t n);
// Puts sweep "smoke" of runs; fails the test on error.
coord_submit_result_t tstore_put(coord_store_t *st, jf_run_spec_t *runs, size_t n);
void tstore_expect_result(coord_submit_result_t r, size_t runs, size_t added, size_t done,
                          size_t retried);
coord_run_row_t tstore_row(coord_store_t *st, const char *run);
int64_t tstore_assign(coord_store_t *st, const char *run);
// assign + start + finish (done, or failed oom) of one run, returning the attempt.
int64_t tstore_complete(coord_store_t *st, const char *run, bool done);
void tstore_expect_stale(int rc, const jf_err_t *err, const char *run);

int tstore_collect(int ncols, const char *const *names, const char *const *values,
                   const coord_value_kind_t *kinds, void *arg);
void tstore_table_free(tstore_table_t *t);
void tstore_select(coord_store_t *st, coord_table_t table, const char *sweep, const char *state,
                   tstore_table_t *out);
int tstore_col(const tstore_table_t *t, const char *name); // fails the test when absent
const char *tstore_val(const tstore_table_t *t, size_t row, const char *name);
void tstore_expect_real(const tstore_table_t *t, size_t row, const char *name, double want);

// A training epoch record: warm-up when epoch is 0, stall e2e/10, compute e2e/2, 60000 samples.
jf_epoch_rec_t tstore_epoch(int epoch, int64_t e2e_us, double loss);

#endif
