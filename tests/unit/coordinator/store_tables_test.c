/* Unit tests for coord_store's CLI tables: runs, epochs and results through the row callback,
 * the measurements (energy per epoch, NULL where not measured, never 0; the measure record and
 * its exported columns; residency on the epochs), a callback that stops, a bad table, state
 * names, and the export columns the epoch and minibatch schemas generate (headers, units, the
 * results' means). Helpers are store_support.h; the rest of the store is store_test.c. */
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
// The CLI tables

static void test_select_runs_table(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[2] = {tstore_spec(TSTORE_BOARD, 0), tstore_spec(TSTORE_BOARD, 1)};
    tstore_put(c->store, runs, 2);
    assert_int_equal(coord_store_board_hello(c->store, TSTORE_BOARD, "xavier-nx", "jetson",
                                             "{\"name\":\"nx-01\"}", NULL),
                     0);
    tstore_complete(c->store, runs[0].run_id, true);
    assert_int_equal(
        coord_store_run_set_info(c->store, runs[0].run_id, 1, "{\"device\":\"cuda\"}", NULL), 0);
    tstore_table_t t;
    tstore_select(c->store, COORD_TABLE_RUNS, NULL, NULL, &t);
    assert_int_equal(t.nrows, 2);
    static const char *const cols[] = {
        // The board's facts, then the run spec's fields in its schema table's order.
        "run",
        "board",
        "board_type",
        "platform",
        "power",
        "workload",
        "model",
        "dataset",
        "epochs",
        "power_mode_id",
        "power_mode",
        "storage",
        "workers",
        "prefetch",
        "batch_size",
        "repeat",
        "threads",
        "seed",
        "drop_caches",
        "telemetry_hz",
        "timeout_s",
        "custom_cores",
        "custom_cpu_hz",
        "custom_gpu_hz",
        "custom_emc_hz",
        "dvfs_off",
        "infer_model",
        "infer_batch",
        "infer_rate_per_s",
        "infer_budget_s",
        "idle_s",
        "telemetry_off",
        "runtime",
        "roofline",
        "minibatches",
        "init_weights",
        "return_weights",
        "fl_round",
        "shard",
        "shards",
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
    assert_string_equal(tstore_val(&t, 0, "run"), runs[0].run_id); // sweep order
    assert_string_equal(tstore_val(&t, 0, "board_type"), "xavier-nx");
    assert_string_equal(tstore_val(&t, 0, "platform"), "jetson");
    assert_string_equal(tstore_val(&t, 0, "state"), "done");
    assert_string_equal(tstore_val(&t, 0, "batch_size"), "32");
    tstore_expect_real(&t, 0, "timeout_s", 3600.0); // stored in us, exported in s
    assert_string_equal(tstore_val(&t, 0, "info"), "{\"device\":\"cuda\"}");
    assert_int_equal(t.kinds[0][tstore_col(&t, "duration_s")], COORD_VALUE_REAL);
    assert_int_equal(t.kinds[0][tstore_col(&t, "workers")], COORD_VALUE_INT);
    assert_int_equal(t.kinds[0][tstore_col(&t, "model")], COORD_VALUE_TEXT);
    assert_string_equal(tstore_val(&t, 1, "state"), "pending");
    assert_null(tstore_val(&t, 1, "started_us"));
    assert_int_equal(t.kinds[1][tstore_col(&t, "fail_reason")], COORD_VALUE_NULL);
    tstore_table_free(&t);
    tstore_select(c->store, COORD_TABLE_RUNS, "smoke", "pending", &t);
    assert_int_equal(t.nrows, 1);
    assert_string_equal(tstore_val(&t, 0, "run"), runs[1].run_id);
    tstore_table_free(&t);
    tstore_select(c->store, COORD_TABLE_RUNS, "nope", NULL, &t);
    assert_int_equal(t.nrows, 0);
    tstore_table_free(&t);
}

static void test_select_epochs_and_results(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[2] = {tstore_spec(TSTORE_BOARD, 0), tstore_spec(TSTORE_BOARD, 1)};
    tstore_put(c->store, runs, 2);
    const char *id = runs[0].run_id;
    // A first attempt that was lost: its epochs are not the run's.
    int64_t a = tstore_assign(c->store, id);
    jf_epoch_rec_t lost = tstore_epoch(1, 100 * JF_US_PER_S, 9.0);
    assert_int_equal(coord_store_add_epoch(c->store, id, a, &lost, NULL), 0);
    bool failed = true;
    assert_int_equal(coord_store_run_requeue(c->store, id, a, 3, "gone", &failed, NULL), 0);
    a = tstore_assign(c->store, id);
    assert_int_equal(coord_store_run_start(c->store, id, a, NULL), 0);
    const jf_epoch_rec_t e[3] = {tstore_epoch(0, 10 * JF_US_PER_S, 2.0),
                                 tstore_epoch(1, 2 * JF_US_PER_S, 1.0),
                                 tstore_epoch(2, 4 * JF_US_PER_S, 0.25)};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(coord_store_add_epoch(c->store, id, a, &e[i], NULL), 0);
    }
    tstore_table_t t;
    tstore_select(c->store, COORD_TABLE_RESULTS, NULL, NULL, &t);
    assert_int_equal(t.nrows, 0); // only done runs have results
    tstore_table_free(&t);
    assert_int_equal(coord_store_run_finish(c->store, id, a, true, NULL, NULL, NULL), 0);

    tstore_select(c->store, COORD_TABLE_EPOCHS, "smoke", NULL, &t);
    assert_int_equal(t.nrows, 3);
    assert_string_equal(tstore_val(&t, 0, "attempt"), "2");
    assert_string_equal(tstore_val(&t, 0, "warmup"), "1");
    tstore_expect_real(&t, 1, "e2e_s", 2.0);
    tstore_expect_real(&t, 1, "fetch_stall_s", 0.2);
    tstore_expect_real(&t, 1, "compute_s", 1.0);
    tstore_expect_real(&t, 1, "samples_per_s", 30000.0);
    tstore_table_free(&t);

    tstore_select(c->store, COORD_TABLE_RESULTS, NULL, NULL, &t);
    assert_int_equal(t.nrows, 1);
    assert_string_equal(tstore_val(&t, 0, "run"), id);
    assert_string_equal(tstore_val(&t, 0, "epochs_measured"), "2"); // warm-up left out
    tstore_expect_real(&t, 0, "e2e_s", 3.0);                        // (2 s + 4 s) / 2
    tstore_expect_real(&t, 0, "fetch_stall_s", 0.3);
    tstore_expect_real(&t, 0, "compute_s", 1.5);
    tstore_expect_real(&t, 0, "samples_per_s", (30000.0 + 15000.0) / 2);
    tstore_expect_real(&t, 0, "final_loss", 0.25);
    assert_string_equal(tstore_val(&t, 0, "workload"), "lenet5-mnist");
    tstore_table_free(&t);
}

static int t_stop(int ncols, const char *const *names, const char *const *values,
                  const coord_value_kind_t *kinds, void *arg)
{
    (void) ncols;
    (void) names;
    (void) values;
    (void) kinds;
    ++*(int *) arg;
    return -ECANCELED;
}

// Measurements: energy per epoch (NULL where not measured, never 0), the measure record with the
// run and exported as columns, and the residency figures it carries put on the epochs.
static void test_measurements(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {tstore_spec(TSTORE_BOARD, 0)};
    tstore_put(c->store, runs, 1);
    const char *id = runs[0].run_id;
    int64_t a = tstore_assign(c->store, id);
    jf_epoch_rec_t e[3] = {tstore_epoch(0, 10 * JF_US_PER_S, 2.0),
                           tstore_epoch(1, 2 * JF_US_PER_S, 1.0),
                           tstore_epoch(2, 2 * JF_US_PER_S, 1.0)};
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

    tstore_table_t t;
    tstore_select(c->store, COORD_TABLE_EPOCHS, NULL, NULL, &t);
    assert_int_equal(t.nrows, 3);
    assert_null(tstore_val(&t, 0, "energy_mj")); // not measured: NULL, not 0
    assert_null(tstore_val(&t, 0, "avg_power_mw"));
    tstore_expect_real(&t, 1, "energy_mj", 20000.0);
    tstore_expect_real(&t, 1, "peak_power_mw", 10000.0);
    assert_null(tstore_val(&t, 2, "peak_power_mw"));
    tstore_expect_real(&t, 1, "cache_resident_before", 0.25);
    assert_null(tstore_val(&t, 1, "cache_resident_after"));
    assert_null(tstore_val(&t, 2, "cache_resident_before"));
    tstore_table_free(&t);
    tstore_select(c->store, COORD_TABLE_RESULTS, NULL, NULL, &t);
    tstore_expect_real(&t, 0, "energy_mj", 15000.0); // epochs 1 and 2; warm-up left out
    tstore_expect_real(&t, 0, "avg_power_mw", 7500.0);
    tstore_table_free(&t);
    // Last: what follows checks the measure columns' types, and json_extract returns text on
    // PostgreSQL (docs/store.md §10).
    tstore_skip_on_postgres("the runs table's measure columns come from json_extract, text on "
                            "PostgreSQL (a number reads as TEXT, not REAL)");
    tstore_select(c->store, COORD_TABLE_RUNS, NULL, NULL, &t);
    assert_string_equal(tstore_val(&t, 0, "telemetry_source"), "sysfs");
    assert_string_equal(tstore_val(&t, 0, "energy_total"), "input-rail");
    tstore_expect_real(&t, 0, "run_energy_mj", 40000.5);
    assert_string_equal(tstore_val(&t, 0, "mode_in_force"), "DEFAULT");
    assert_string_equal(tstore_val(&t, 0, "cache_drop"), "fadvise");
    assert_string_equal(tstore_val(&t, 0, "telemetry_missed"), "0");
    assert_null(tstore_val(&t, 0, "disk_reads")); // the record has no disk: NULL
    tstore_table_free(&t);
}

// The export columns a record schema generates: every field with a header is a column of its
// table (results: only the summary_mean ones, no other), in the unit its header names.
typedef struct t_want_cols {
    const tstore_table_t *t;
    bool mean; // the results table
} t_want_cols_t;

static bool t_has_col(const tstore_table_t *t, const char *name)
{
    for (int i = 0; i < t->ncols; i++) {
        if (strcmp(t->names[i], name) == 0) {
            return true;
        }
    }
    return false;
}

static int t_expect_header(const jf_schema_leaf_t *leaf, void *arg)
{
    const t_want_cols_t *w = arg;
    const jf_schema_field_t *f = leaf->field;
    if (f->header && (!w->mean || f->summary_mean) != t_has_col(w->t, f->header)) {
        fail_msg("header '%s' of field '%s': want %s", f->header, leaf->name,
                 !w->mean || f->summary_mean ? "a column" : "no column");
    }
    return 0;
}

// One exported figure: the record fields below go in, this comes out under header.
typedef struct t_export_row {
    coord_table_t table;
    size_t row;
    const char *header;
    double want; // in the header's unit
} t_export_row_t;

static void test_export_columns_from_schema(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {tstore_spec(TSTORE_BOARD, 0)};
    tstore_put(c->store, runs, 1);
    const char *id = runs[0].run_id;
    int64_t a = tstore_assign(c->store, id);
    jf_epoch_rec_t e[3] = {tstore_epoch(0, 9 * JF_US_PER_S, 2.0), tstore_epoch(1, 1500000, 1.0),
                           tstore_epoch(2, 2500000, 0.5)};
    for (int i = 1; i < 3; i++) {
        e[i].has_energy = e[i].has_peak = true;
        e[i].energy_mj = 1000.0 * i;
        e[i].avg_power_mw = e[i].peak_power_mw = 300.0 * i;
    }
    jf_minibatch_rec_t mb = {.epoch = 1,
                             .index = 7,
                             .samples = 32,
                             .fetch_stall_us = 1500,
                             .compute_us = 250000,
                             .has_loss = true,
                             .loss = 0.75};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(coord_store_add_epoch(c->store, id, a, &e[i], NULL), 0);
    }
    assert_int_equal(coord_store_add_minibatch(c->store, id, a, &mb, NULL), 0);
    assert_int_equal(coord_store_run_finish(c->store, id, a, true, NULL, NULL, NULL), 0);
    static const t_export_row_t rows[] = {
        {COORD_TABLE_EPOCHS, 1, "e2e_s", 1.5}, // us -> s
        {COORD_TABLE_EPOCHS, 1, "fetch_stall_s", 0.15},
        {COORD_TABLE_EPOCHS, 2, "compute_s", 1.25},
        {COORD_TABLE_EPOCHS, 2, "energy_mj", 2000.0}, // mJ stays mJ
        {COORD_TABLE_EPOCHS, 2, "peak_power_mw", 600.0},
        {COORD_TABLE_EPOCHS, 1, "loss", 1.0},
        {COORD_TABLE_MINIBATCHES, 0, "fetch_stall_s", 0.0015},
        {COORD_TABLE_MINIBATCHES, 0, "compute_s", 0.25},
        {COORD_TABLE_MINIBATCHES, 0, "loss", 0.75},
        {COORD_TABLE_RESULTS, 0, "e2e_s", 2.0}, // mean of epochs 1 and 2
        {COORD_TABLE_RESULTS, 0, "fetch_stall_s", 0.2},
        {COORD_TABLE_RESULTS, 0, "compute_s", 1.0},
        {COORD_TABLE_RESULTS, 0, "energy_mj", 1500.0},
        {COORD_TABLE_RESULTS, 0, "avg_power_mw", 450.0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        tstore_table_t t;
        tstore_select(c->store, rows[i].table, NULL, NULL, &t);
        tstore_expect_real(&t, rows[i].row, rows[i].header, rows[i].want);
        tstore_table_free(&t);
    }
    static const struct {
        coord_table_t table;
        const jf_schema_t *(*schema)(void);
    } walks[] = {{COORD_TABLE_EPOCHS, jf_epoch_rec_schema},
                 {COORD_TABLE_MINIBATCHES, jf_minibatch_rec_schema},
                 {COORD_TABLE_RESULTS, jf_epoch_rec_schema}};
    for (size_t i = 0; i < sizeof walks / sizeof walks[0]; i++) {
        tstore_table_t t;
        tstore_select(c->store, walks[i].table, NULL, NULL, &t);
        t_want_cols_t w = {.t = &t, .mean = walks[i].table == COORD_TABLE_RESULTS};
        assert_int_equal(jf_schema_each_leaf(walks[i].schema(), t_expect_header, &w), 0);
        assert_string_equal(tstore_val(&t, 0, "run"), id);
        tstore_table_free(&t);
    }
}

static void test_select_callback_stops_and_bad_table(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[3] = {tstore_spec(TSTORE_BOARD, 0), tstore_spec(TSTORE_BOARD, 1),
                             tstore_spec(TSTORE_BOARD, 2)};
    tstore_put(c->store, runs, 3);
    int calls = 0;
    jf_err_t err = {0};
    assert_int_equal(
        coord_store_select(c->store, COORD_TABLE_RUNS, NULL, NULL, t_stop, &calls, &err),
        -ECANCELED);
    assert_int_equal(calls, 1);
    // The statement was reset: the next select sees every row.
    tstore_table_t t;
    tstore_select(c->store, COORD_TABLE_RUNS, NULL, NULL, &t);
    assert_int_equal(t.nrows, 3);
    tstore_table_free(&t);
    assert_int_equal(
        coord_store_select(c->store, COORD_TABLE_COUNT, NULL, NULL, t_stop, &calls, &err), -EINVAL);
    assert_int_equal(calls, 1);
}

static void test_state_names(void **state)
{
    (void) state;
    for (int s = 0; s < COORD_RUN_STATE_COUNT; s++) {
        coord_run_state_t back = COORD_RUN_STATE_COUNT;
        assert_true(coord_run_state_parse(coord_run_state_name((coord_run_state_t) s), &back));
        assert_int_equal(back, s);
    }
    assert_string_equal(coord_run_state_name(COORD_RUN_DONE), "done");
    assert_string_equal(coord_run_state_name(COORD_RUN_STATE_COUNT), "?");
    coord_run_state_t untouched = COORD_RUN_DONE;
    assert_false(coord_run_state_parse("Done", &untouched));
    assert_false(coord_run_state_parse(NULL, &untouched));
    assert_int_equal(untouched, COORD_RUN_DONE);
}

#define T_TEST(f) cmocka_unit_test_setup_teardown(f, tstore_setup, tstore_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T_TEST(test_select_runs_table),
        T_TEST(test_select_epochs_and_results),
        T_TEST(test_measurements),
        T_TEST(test_export_columns_from_schema),
        T_TEST(test_select_callback_stops_and_bad_table),
        cmocka_unit_test(test_state_names),
    };
    int rc = tstore_main_begin();
    if (rc != 0) {
        return rc;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    tstore_main_end();
    return rc;
}
