/* Unit tests for coord_store_retention: which telemetry rows retention deletes (finished runs
 * past the cutoff, the cutoff itself included) and which stay (running, assigned and pending
 * runs, a failed run submitted again, runs finished after the cutoff), batches bounded by
 * max_rows, the dry-run count, and the store filesystem's free space. */
#include "coord_store_retention.h"

#include "store_support.h"

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include <cmocka.h>

#define T_ROWS_PER_RUN 3
#define T_T0_US        INT64_C(1700000000000000)

static void t_add_samples(coord_store_t *st, const char *run, int64_t attempt)
{
    for (int64_t seq = 1; seq <= T_ROWS_PER_RUN; seq++) {
        jf_err_t err = {0};
        if (coord_store_add_telemetry(st, run, attempt, seq, 0, T_T0_US + seq, "{\"power_mw\":1}",
                                      &err) != 0) {
            fail_msg("telemetry of %s: %s", run, err.msg);
        }
    }
}

static int64_t t_rows(coord_store_t *st)
{
    int64_t n = -1;
    assert_int_equal(coord_store_count_telemetry(st, &n, NULL), 0);
    return n;
}

static int64_t t_prunable(coord_store_t *st, int64_t cutoff_us)
{
    int64_t n = -1;
    assert_int_equal(coord_store_prunable_telemetry(st, cutoff_us, &n, NULL), 0);
    return n;
}

static int64_t t_prune(coord_store_t *st, int64_t cutoff_us, int64_t max_rows)
{
    int64_t n = -1;
    jf_err_t err = {0};
    if (coord_store_prune_telemetry(st, cutoff_us, max_rows, &n, &err) != 0) {
        fail_msg("prune: %s", err.msg);
    }
    return n;
}

// The run's finished_us as the runs table shows it.
static int64_t t_finished_us(coord_store_t *st, const char *run)
{
    tstore_table_t t = {0};
    tstore_select(st, COORD_TABLE_RUNS, NULL, NULL, &t);
    int64_t v = -1;
    for (size_t i = 0; i < t.nrows; i++) {
        if (strcmp(tstore_val(&t, i, "run"), run) == 0) {
            v = strtoll(tstore_val(&t, i, "finished_us"), NULL, 10);
        }
    }
    tstore_table_free(&t);
    assert_true(v > 0);
    return v;
}

// Five runs: done, failed, running, assigned, pending; three samples each where it has an
// attempt. Returns the specs in that order.
static void t_five_runs(coord_store_t *st, jf_run_spec_t runs[5])
{
    for (int i = 0; i < 5; i++) {
        runs[i] = tstore_spec(TSTORE_BOARD, i + 1);
    }
    tstore_put(st, runs, 5);
    t_add_samples(st, runs[0].run_id, tstore_complete(st, runs[0].run_id, true));
    t_add_samples(st, runs[1].run_id, tstore_complete(st, runs[1].run_id, false));
    int64_t a = tstore_assign(st, runs[2].run_id);
    assert_int_equal(coord_store_run_start(st, runs[2].run_id, a, NULL), 0);
    t_add_samples(st, runs[2].run_id, a);
    t_add_samples(st, runs[3].run_id, tstore_assign(st, runs[3].run_id));
}

static void test_which_rows_go(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[5];
    t_five_runs(c->store, runs);
    assert_int_equal(t_rows(c->store), 4 * T_ROWS_PER_RUN);
    int64_t done_us = t_finished_us(c->store, runs[0].run_id);
    int64_t failed_us = t_finished_us(c->store, runs[1].run_id);
    int64_t first_us = done_us < failed_us ? done_us : failed_us;
    int64_t last_us = done_us < failed_us ? failed_us : done_us;
    // Before either finished: nothing is due. The cutoff is inclusive.
    assert_int_equal(t_prunable(c->store, first_us - 1), 0);
    assert_int_equal(t_prune(c->store, first_us - 1, 1000), 0);
    int64_t at_first = first_us == last_us ? 2 * T_ROWS_PER_RUN : T_ROWS_PER_RUN;
    assert_int_equal(t_prunable(c->store, first_us), at_first);
    // Far in the future: the done and the failed run's rows go; running and assigned stay.
    int64_t later_us = last_us + INT64_C(3600) * 1000000;
    assert_int_equal(t_prunable(c->store, later_us), 2 * T_ROWS_PER_RUN);
    assert_int_equal(t_prune(c->store, later_us, 1000), 2 * T_ROWS_PER_RUN);
    assert_int_equal(t_rows(c->store), 2 * T_ROWS_PER_RUN);
    assert_int_equal(t_prune(c->store, later_us, 1000), 0);
    // The runs themselves and their states are untouched.
    assert_int_equal(tstore_row(c->store, runs[0].run_id).state, COORD_RUN_DONE);
    assert_int_equal(tstore_row(c->store, runs[2].run_id).state, COORD_RUN_RUNNING);
}

// A failed run submitted again is pending: its earlier attempt's samples stay until it ends.
static void test_resubmitted_run_keeps_rows(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t run = tstore_spec(TSTORE_BOARD, 1);
    tstore_put(c->store, &run, 1);
    t_add_samples(c->store, run.run_id, tstore_complete(c->store, run.run_id, false));
    int64_t later_us = t_finished_us(c->store, run.run_id) + 1;
    assert_int_equal(t_prunable(c->store, later_us), T_ROWS_PER_RUN);
    tstore_expect_result(tstore_put(c->store, &run, 1), 1, 0, 0, 1);
    assert_int_equal(tstore_row(c->store, run.run_id).state, COORD_RUN_PENDING);
    assert_int_equal(t_prunable(c->store, INT64_MAX), 0);
    assert_int_equal(t_prune(c->store, INT64_MAX, 1000), 0);
    assert_int_equal(t_rows(c->store), T_ROWS_PER_RUN);
}

static void test_batches_are_bounded(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[5];
    t_five_runs(c->store, runs);
    // 6 rows are due: batches of 4 take 4, then 2, then none.
    assert_int_equal(t_prune(c->store, INT64_MAX, 4), 4);
    assert_int_equal(t_prunable(c->store, INT64_MAX), 2);
    assert_int_equal(t_prune(c->store, INT64_MAX, 4), 2);
    assert_int_equal(t_prune(c->store, INT64_MAX, 4), 0);
    assert_int_equal(t_rows(c->store), 2 * T_ROWS_PER_RUN);
    jf_err_t err = {0};
    int64_t n = 99;
    assert_int_equal(coord_store_prune_telemetry(c->store, INT64_MAX, 0, &n, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "max_rows must be at least 1, got 0"));
    assert_int_equal(n, 99); // not written on failure
}

static void test_free_bytes(void **state)
{
    tstore_skip_on_postgres("the free space of the store file's filesystem (statvfs)");
    tstore_ctx_t *c = *state;
    int64_t free_bytes = -1;
    assert_int_equal(coord_store_free_bytes(c->store, &free_bytes, NULL), 0);
    struct statvfs vfs = {0};
    assert_int_equal(statvfs(c->dir, &vfs), 0);
    int64_t want = (int64_t) vfs.f_bavail * (int64_t) vfs.f_frsize;
    // Other writers on the machine move it a little between the two readings.
    int64_t diff = free_bytes > want ? free_bytes - want : want - free_bytes;
    assert_true(free_bytes > 0);
    assert_true(diff < INT64_C(256) * 1024 * 1024);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_which_rows_go, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_resubmitted_run_keeps_rows, tstore_setup,
                                        tstore_teardown),
        cmocka_unit_test_setup_teardown(test_batches_are_bounded, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_free_bytes, tstore_setup, tstore_teardown),
    };
    int rc = tstore_main_begin();
    if (rc != 0) {
        return rc;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    tstore_main_end();
    return rc;
}
