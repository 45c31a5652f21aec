/* Unit tests for agent_gpubefore: the samples before epoch 0's start are summed, later ones and
 * out-of-range loads are not, nothing is reported before settling or without a sample before the
 * start, only the first settle counts, and the kept samples are bounded. */
#include "agent_gpubefore.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

static void test_window(void **state)
{
    (void) state;
    agent_gpubefore_t *g = agent_gpubefore_new();
    assert_non_null(g);
    agent_gpubefore_result_t r;
    agent_gpubefore_add(g, 100, 10.0);
    agent_gpubefore_add(g, 200, 20.0);
    agent_gpubefore_add(g, 300, 120.0); // out of range: left out
    agent_gpubefore_add(g, 300, NAN);   // likewise
    agent_gpubefore_add(g, 400, 60.0);
    agent_gpubefore_add(g, 500, 99.0);           // at the start: the trainer computes
    assert_false(agent_gpubefore_result(g, &r)); // not settled
    agent_gpubefore_settle(g, 500);
    assert_true(agent_gpubefore_result(g, &r));
    assert_int_equal(r.samples, 3);
    assert_true(fabs(r.mean_pct - 30.0) < 1e-12);
    assert_true(r.max_pct == 60.0);
    agent_gpubefore_add(g, 50, 100.0); // after settling: ignored
    agent_gpubefore_settle(g, 1000);   // only the first settle counts
    assert_true(agent_gpubefore_result(g, &r));
    assert_int_equal(r.samples, 3);
    agent_gpubefore_destroy(&g);
    assert_null(g);
    agent_gpubefore_destroy(&g);
    agent_gpubefore_destroy(NULL);
}

static void test_nothing_before(void **state)
{
    (void) state;
    agent_gpubefore_t *g = agent_gpubefore_new();
    agent_gpubefore_add(g, 500, 40.0);
    agent_gpubefore_settle(g, 500);
    agent_gpubefore_result_t r;
    assert_false(agent_gpubefore_result(g, &r));
    agent_gpubefore_destroy(&g);
}

static void test_bounded(void **state)
{
    (void) state;
    agent_gpubefore_t *g = agent_gpubefore_new();
    for (int64_t i = 0; i < AGENT_GPUBEFORE_MAX + 1000; i++) {
        agent_gpubefore_add(g, i, i < AGENT_GPUBEFORE_MAX ? 5.0 : 100.0);
    }
    agent_gpubefore_settle(g, INT64_MAX);
    agent_gpubefore_result_t r;
    assert_true(agent_gpubefore_result(g, &r));
    assert_int_equal(r.samples, AGENT_GPUBEFORE_MAX); // the first ones kept
    assert_true(r.max_pct == 5.0);
    agent_gpubefore_destroy(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_nothing_before),
        cmocka_unit_test(test_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
