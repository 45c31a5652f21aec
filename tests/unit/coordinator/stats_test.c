/* coord_stats: against hand-checked small vectors, and against reference values the test
 * computes by another route (two-pass mean and variance in long double, the median by counting
 * ranks, the MAD from its definition), on a seeded vector with a large offset where a naive
 * one-pass sum of squares would lose every digit. */
#include "coord_stats.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define S_N    1001
#define S_SEED UINT64_C(20261124)
#define S_TOL  1e-9

static void s_close(double got, double want, double rel)
{
    double tol = rel * fmax(1.0, fabs(want));
    if (fabs(got - want) > tol) {
        fail_msg("got %.17g, want %.17g (tolerance %.3g)", got, want, tol);
    }
}

static void test_hand_checked_even(void **state)
{
    (void) state;
    // Mean 5; squared deviations sum to 32, so the sample variance is 32 / 7; the middle two
    // values are 4 and 5; the deviations from 4.5 are 2.5 0.5 0.5 0.5 0.5 0.5 2.5 4.5.
    const double x[] = {2, 4, 4, 4, 5, 5, 7, 9};
    coord_stats_t s = {0};
    assert_int_equal(coord_stats_compute(x, 8, &s, NULL), 0);
    assert_int_equal(s.n, 8);
    s_close(s.mean, 5.0, S_TOL);
    s_close(s.sd, sqrt(32.0 / 7.0), S_TOL);
    s_close(s.cv_pct, 100.0 * sqrt(32.0 / 7.0) / 5.0, S_TOL);
    s_close(s.min, 2.0, 0);
    s_close(s.max, 9.0, 0);
    s_close(s.median, 4.5, 0);
    s_close(s.mad, 0.5, 0);
    assert_true(s.has_sd && s.has_cv);
}

static void test_hand_checked_outlier(void **state)
{
    (void) state;
    // Median 3; deviations 2 1 0 1 97, so MAD 1: 100 has z = 97 / 1.4826, 1 has 2 / 1.4826.
    const double x[] = {4, 1, 100, 3, 2};
    coord_stats_t s = {0};
    assert_int_equal(coord_stats_compute(x, 5, &s, NULL), 0);
    s_close(s.median, 3.0, 0);
    s_close(s.mad, 1.0, 0);
    double z = 0.0;
    assert_true(coord_stats_is_outlier(&s, 100.0, &z));
    s_close(z, 97.0 / 1.4826, S_TOL);
    assert_false(coord_stats_is_outlier(&s, 1.0, &z));
    s_close(z, 2.0 / 1.4826, S_TOL);
    // Just either side of the threshold: |x - 3| = 3.5 * 1.4826 * MAD.
    assert_false(coord_stats_is_outlier(&s, 3.0 + 3.5 * 1.4826 - 1e-6, NULL));
    assert_true(coord_stats_is_outlier(&s, 3.0 + 3.5 * 1.4826 + 1e-6, NULL));
    assert_true(coord_stats_is_outlier(&s, 3.0 - 3.5 * 1.4826 - 1e-6, NULL));
}

// A value of x whose rank makes it a median: at most n/2 values below it and at most n/2 above.
static double s_median_by_rank(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t below = 0;
        size_t above = 0;
        for (size_t j = 0; j < n; j++) {
            below += x[j] < x[i];
            above += x[j] > x[i];
        }
        if (below <= n / 2 && above <= n / 2) {
            return x[i];
        }
    }
    fail_msg("no median found");
    return 0.0;
}

static uint64_t s_next(uint64_t *state)
{
    *state = *state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return *state >> 11;
}

static void test_reference_two_pass(void **state)
{
    (void) state;
    static double x[S_N];
    static double dev[S_N];
    uint64_t seed = S_SEED;
    for (size_t i = 0; i < S_N; i++) { // epoch times near 1e12 µs, spread of a few thousand
        x[i] = 1e12 + (double) (s_next(&seed) % 100000) / 10.0;
    }
    long double sum = 0.0L;
    for (size_t i = 0; i < S_N; i++) {
        sum += x[i];
    }
    long double mean = sum / S_N;
    long double ss = 0.0L;
    for (size_t i = 0; i < S_N; i++) {
        ss += (x[i] - mean) * (x[i] - mean);
    }
    double sd = (double) sqrtl(ss / (S_N - 1));
    double median = s_median_by_rank(x, S_N); // odd n: one middle value
    for (size_t i = 0; i < S_N; i++) {
        dev[i] = fabs(x[i] - median);
    }
    double mad = s_median_by_rank(dev, S_N);
    coord_stats_t s = {0};
    assert_int_equal(coord_stats_compute(x, S_N, &s, NULL), 0);
    s_close(s.mean, (double) mean, 1e-15);
    s_close(s.sd, sd, 1e-6);
    s_close(s.median, median, 0);
    s_close(s.mad, mad, 0);
    assert_true(sd > 2000.0); // the spread is really there, not lost to the offset
}

static void test_single_value(void **state)
{
    (void) state;
    const double x[] = {42.0};
    coord_stats_t s = {0};
    assert_int_equal(coord_stats_compute(x, 1, &s, NULL), 0);
    s_close(s.mean, 42.0, 0);
    s_close(s.median, 42.0, 0);
    assert_false(s.has_sd);
    assert_false(s.has_cv);
    s_close(s.sd, 0.0, 0);
    s_close(s.mad, 0.0, 0);
    double z = -1.0;
    assert_false(coord_stats_modified_z(&s, 1000.0, &z));
    assert_true(z == -1.0); // untouched
    assert_false(coord_stats_is_outlier(&s, 1000.0, NULL));
}

static void test_mad_zero_and_two_values(void **state)
{
    (void) state;
    const double same[] = {5, 5, 5, 5, 9}; // more than half equal: MAD 0, nothing flagged
    coord_stats_t s = {0};
    assert_int_equal(coord_stats_compute(same, 5, &s, NULL), 0);
    s_close(s.mad, 0.0, 0);
    double z = -1.0;
    assert_false(coord_stats_modified_z(&s, 9.0, &z));
    assert_false(coord_stats_is_outlier(&s, 9.0, NULL));
    const double two[] = {1, 3}; // a median of two says nothing about either
    assert_int_equal(coord_stats_compute(two, 2, &s, NULL), 0);
    s_close(s.median, 2.0, 0);
    s_close(s.mad, 1.0, 0);
    assert_false(coord_stats_modified_z(&s, 3.0, &z));
    const double zero_mean[] = {-1, 1};
    assert_int_equal(coord_stats_compute(zero_mean, 2, &s, NULL), 0);
    assert_true(s.has_sd);
    assert_false(s.has_cv); // no CV of a zero mean
}

static void test_bad_input(void **state)
{
    (void) state;
    coord_stats_t s = {.n = 77};
    jf_err_t err = {0};
    assert_int_equal(coord_stats_compute(NULL, 0, &s, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "empty"));
    const double x[] = {1.0, NAN, 3.0};
    assert_int_equal(coord_stats_compute(x, 3, &s, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "value 1 of 3"));
    assert_int_equal(s.n, 77); // not written on failure
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_checked_even),       cmocka_unit_test(test_hand_checked_outlier),
        cmocka_unit_test(test_reference_two_pass),      cmocka_unit_test(test_single_value),
        cmocka_unit_test(test_mad_zero_and_two_values), cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
