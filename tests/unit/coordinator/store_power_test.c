/* Unit tests for the store's power extras (migration 3 -> 4): a run's custom point and DVFS
 * setting survive the store (params and columns), its readable label is stored, runs without
 * them have NULL custom columns, and a version-3 store opens with its runs labelled by their
 * mode. Each test has a fresh store (store_support.h: a file, or a PostgreSQL database in
 * unit.store_power_postgres). */
#include "coord_store.h"

#include "jf_units.h"
#include "store_support.h"

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

#define T_ROWS_MAX 4

static jf_run_spec_t t_spec(int repeat, bool extras)
{
    jf_run_spec_t s = {.board = "nx-01", .workload = "lenet5-mnist", .model = "lenet5",
                       .dataset = "mnist", .epochs = 3, .power_mode_id = 2,
                       .power_mode = "MODE_15W_6CORE", .storage = "sd", .workers = 2,
                       .prefetch = 2, .batch_size = 32, .repeat = repeat, .seed = 7,
                       .telemetry_hz = 1, .timeout_us = 3600 * JF_US_PER_S};
    if (extras) {
        s.custom = (jf_run_custom_t){.n_cores = 4, .cpu_hz = 1420800000, .gpu_hz = 803250000};
        s.dvfs_off = true;
    }
    jf_run_spec_compute_id(&s);
    return s;
}

static void t_put(coord_store_t *st, jf_run_spec_t *runs, size_t n)
{
    jf_sweep_t sw = {.n_runs = n, .runs = runs, .name = "p", .source = "p.yaml"};
    coord_submit_result_t res = {0};
    jf_err_t err = {0};
    if (coord_store_sweep_put(st, &sw, "p.yaml", "name: p\n", &res, &err) != 0) {
        fail_msg("sweep_put: %s", err.msg);
    }
}

// The runs table's values of a few columns, by run order.
typedef struct t_rows {
    size_t n;
    char power[T_ROWS_MAX][JF_RUN_POWER_LABEL_MAX + 1];
    char custom_cpu_hz[T_ROWS_MAX][32]; // "NULL" for SQL NULL
    char custom_emc_hz[T_ROWS_MAX][32];
    char dvfs_off[T_ROWS_MAX][8];
} t_rows_t;

static void t_copy(char *dst, size_t size, const char *value)
{
    (void) snprintf(dst, size, "%s", value ? value : "NULL");
}

static int t_collect(int ncols, const char *const *names, const char *const *values,
                     const coord_value_kind_t *kinds, void *arg)
{
    (void) kinds;
    t_rows_t *r = arg;
    if (r->n == T_ROWS_MAX) {
        return -E2BIG;
    }
    for (int i = 0; i < ncols; i++) {
        if (strcmp(names[i], "power") == 0) {
            t_copy(r->power[r->n], sizeof r->power[0], values[i]);
        } else if (strcmp(names[i], "custom_cpu_hz") == 0) {
            t_copy(r->custom_cpu_hz[r->n], sizeof r->custom_cpu_hz[0], values[i]);
        } else if (strcmp(names[i], "custom_emc_hz") == 0) {
            t_copy(r->custom_emc_hz[r->n], sizeof r->custom_emc_hz[0], values[i]);
        } else if (strcmp(names[i], "dvfs_off") == 0) {
            t_copy(r->dvfs_off[r->n], sizeof r->dvfs_off[0], values[i]);
        }
    }
    r->n++;
    return 0;
}

static void t_rows(coord_store_t *st, t_rows_t *out)
{
    *out = (t_rows_t){0};
    jf_err_t err = {0};
    if (coord_store_select(st, COORD_TABLE_RUNS, NULL, NULL, t_collect, out, &err) != 0) {
        fail_msg("select: %s", err.msg);
    }
}

static void test_roundtrip(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[2] = {t_spec(0, false), t_spec(1, true)};
    t_put(c->store, runs, 2);
    for (size_t i = 0; i < 2; i++) {
        jf_run_spec_t back = {0};
        jf_err_t err = {0};
        assert_int_equal(coord_store_run_spec(c->store, runs[i].run_id, &back, &err), 0);
        assert_string_equal(back.run_id, runs[i].run_id);
        assert_memory_equal(&back.custom, &runs[i].custom, sizeof back.custom);
        assert_int_equal(back.dvfs_off, runs[i].dvfs_off);
    }
    t_rows_t r;
    t_rows(c->store, &r);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.power[0], "MODE_15W_6CORE");
    assert_string_equal(r.custom_cpu_hz[0], "NULL");
    assert_string_equal(r.dvfs_off[0], "0");
    assert_string_equal(r.power[1], "custom 4c cpu1.42G gpu0.803G on MODE_15W_6CORE +dvfs-off");
    assert_string_equal(r.custom_cpu_hz[1], "1420800000");
    assert_string_equal(r.custom_emc_hz[1], "NULL"); // left to the mode: not 0
    assert_string_equal(r.dvfs_off[1], "1");
}

// A store at schema version 3 (before the extras) opens, and its runs read as before.
static void test_migrates_version_3(void **state)
{
    tstore_skip_on_postgres("it builds a version-3 store file with SQLite");
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {t_spec(0, false)};
    t_put(c->store, runs, 1);
    coord_store_destroy(&c->store);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(c->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
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
                                  "PRAGMA user_version = 3",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
    jf_err_t err = {0};
    c->store = coord_store_open(c->path, false, &err);
    assert_non_null(c->store);
    assert_int_equal(coord_store_schema_version(c->store), coord_store_schema_latest());
    t_rows_t r;
    t_rows(c->store, &r);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.power[0], "MODE_15W_6CORE");
    assert_string_equal(r.dvfs_off[0], "0");
    assert_string_equal(r.custom_cpu_hz[0], "NULL");
    jf_run_spec_t back = {0};
    assert_int_equal(coord_store_run_spec(c->store, runs[0].run_id, &back, &err), 0);
    assert_string_equal(back.run_id, runs[0].run_id);
    // New runs with extras go in next to the old one.
    jf_run_spec_t more[1] = {t_spec(1, true)};
    t_put(c->store, more, 1);
    t_rows(c->store, &r);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.dvfs_off[1], "1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_roundtrip, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_migrates_version_3, tstore_setup, tstore_teardown),
    };
    int rc = tstore_main_begin();
    if (rc != 0) {
        return rc;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    tstore_main_end();
    return rc;
}
