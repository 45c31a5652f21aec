/* Unit tests of the concurrent run's request bookkeeping (agent/train/train_conc.c): Poisson
 * arrivals at the rate, repeatable per seed and epoch; latencies from arrival to the end of the
 * serving minibatch; percentiles, the share within budget; the cap on one epoch's requests; bad
 * options refused. Times are given, none is read. */
#include "train_conc.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define T_T0 1000000 // an epoch's start, us

static train_conc_t *t_new(double rate, int batch, int64_t budget_us, int64_t max_requests)
{
    train_conc_opts_t o = {.batch = batch,
                           .rate_per_s = rate,
                           .budget_us = budget_us,
                           .seed = 7,
                           .max_requests = max_requests};
    jf_err_t err = {0};
    train_conc_t *c = train_conc_new(&o, &err);
    assert_non_null(c);
    return c;
}

// 10 s at 1,000 per s: 10,000 expected, Poisson's sd 100; within 4 %, else the arrivals are off.
static void test_arrivals_follow_the_rate(void **state)
{
    (void) state;
    train_conc_t *c = t_new(1000.0, 4, 1000, 0);
    train_conc_epoch_begin(c, 0, T_T0);
    for (int64_t t = T_T0; t <= T_T0 + 10000000; t += 100000) {
        assert_int_equal(train_conc_arrive(c, t, NULL), 0);
    }
    size_t n = train_conc_waiting(c);
    print_message("requests in 10 s at 1000 per s: %zu\n", n);
    assert_true(n > 9600 && n < 10400);
    train_conc_destroy(&c);
    assert_null(c);
    train_conc_destroy(&c);
    train_conc_destroy(NULL);
}

// The same seed and epoch give the same arrivals; another epoch other ones.
static void test_arrivals_repeat_per_epoch(void **state)
{
    (void) state;
    size_t counts[3] = {0};
    int epochs[3] = {0, 0, 1};
    for (int i = 0; i < 3; i++) {
        train_conc_t *c = t_new(500.0, 1, 1000, 0);
        train_conc_epoch_begin(c, epochs[i], T_T0);
        assert_int_equal(train_conc_arrive(c, T_T0 + 1000000, NULL), 0);
        counts[i] = train_conc_waiting(c);
        train_conc_destroy(&c);
    }
    assert_true(counts[0] == counts[1]);
    assert_true(counts[0] != counts[2]); // seed 7: 500 expected each, and they differ
}

// Every request waiting at 1 s served by minibatches of 3 ending 2 ms apart from 1.001 s: each
// latency is its minibatch's end less its arrival, in (0, 1 s + the serving]; p50 <= p99 <= max;
// the share within a budget matches a count over the same latencies.
static void test_latencies_and_budget(void **state)
{
    (void) state;
    train_conc_t *c = t_new(200.0, 3, 400000, 0);
    train_conc_epoch_begin(c, 2, T_T0);
    assert_int_equal(train_conc_arrive(c, T_T0 + 1000000, NULL), 0);
    size_t n = train_conc_waiting(c);
    assert_true(n > 100);
    int64_t end = T_T0 + 1001000;
    size_t batches = 0;
    while (train_conc_waiting(c) > 0) {
        train_conc_served(c, 3, end, 1500);
        end += 2000;
        batches++;
    }
    train_conc_switched(c, 250);
    train_conc_switched(c, -5); // a negative gap (clock granularity) counts nothing
    jf_epoch_concurrent_t r;
    train_conc_epoch_end(c, &r);
    print_message("%lld requests, %lld minibatches, p50 %lld p99 %lld max %lld us, within %.3f\n",
                  (long long) r.requests, (long long) r.infer_batches, (long long) r.latency_p50_us,
                  (long long) r.latency_p99_us, (long long) r.latency_max_us, r.within_budget);
    assert_int_equal(r.requests, (int64_t) n);
    assert_int_equal(r.infer_batches, (int64_t) batches);
    assert_int_equal(batches, (n + 2) / 3);
    assert_int_equal(r.infer_us, 1500 * (int64_t) batches);
    assert_int_equal(r.switch_us, 250);
    assert_true(r.latency_p50_us > 0 && r.latency_p50_us <= r.latency_p99_us &&
                r.latency_p99_us <= r.latency_max_us);
    assert_true(r.latency_max_us <= end - T_T0);
    // Arrivals are spread over the second: about 40 % of them come after 0.6 s and are served
    // within 0.4 s plus the queue ahead; the share is neither 0 nor 1.
    assert_true(r.within_budget > 0.1 && r.within_budget < 0.9);
    train_conc_destroy(&c);
}

static void test_empty_epoch(void **state)
{
    (void) state;
    train_conc_t *c = t_new(0.001, 8, 1000, 0);
    train_conc_epoch_begin(c, 0, T_T0);
    assert_int_equal(train_conc_arrive(c, T_T0 + 1000, NULL), 0);
    assert_int_equal(train_conc_waiting(c), 0);
    jf_epoch_concurrent_t r;
    train_conc_epoch_end(c, &r);
    assert_int_equal(r.requests, 0);
    assert_int_equal(r.infer_batches, 0);
    assert_true(r.within_budget == 1.0);
    train_conc_destroy(&c);
}

static void test_too_many_requests(void **state)
{
    (void) state;
    train_conc_t *c = t_new(10000.0, 4, 1000, 50);
    train_conc_epoch_begin(c, 0, T_T0);
    jf_err_t err = {0};
    assert_int_equal(train_conc_arrive(c, T_T0 + 1000000, &err), -E2BIG);
    assert_non_null(strstr(err.msg, "more than 50 requests arrived in one epoch"));
    train_conc_destroy(&c);
}

static void test_bad_options(void **state)
{
    (void) state;
    const train_conc_opts_t bad[] = {
        {.batch = 0, .rate_per_s = 1, .budget_us = 1},
        {.batch = 1, .rate_per_s = 0, .budget_us = 1},
        {.batch = 1, .rate_per_s = NAN, .budget_us = 1},
        {.batch = 1, .rate_per_s = 1, .budget_us = 0},
        {.batch = 1, .rate_per_s = 1, .budget_us = 1, .max_requests = -1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        jf_err_t err = {0};
        assert_null(train_conc_new(&bad[i], &err));
        assert_int_equal(err.code, -EINVAL);
        assert_non_null(strstr(err.msg, "out of range"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrivals_follow_the_rate),
        cmocka_unit_test(test_arrivals_repeat_per_epoch),
        cmocka_unit_test(test_latencies_and_budget),
        cmocka_unit_test(test_empty_epoch),
        cmocka_unit_test(test_too_many_requests),
        cmocka_unit_test(test_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
