/* Unit tests for the roofline maths (coord_roofline.h, docs/roofline.md "Model"): peaks and
 * energy per FLOP and per byte from benchmark sums, the device choice, a compute-bound and a
 * memory-bound prediction checked against the equations worked by hand, energy absent when a
 * benchmark has none, a missing benchmark refused, and the error percentage. */
#include "coord_roofline.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

// 100 GFLOP in 2 s (50 GFLOP/s, 20 J: 0.2 nJ/FLOP); 40 GB in 4 s (10 GB/s, 16 J: 0.4 nJ/byte);
// and CPU benchmarks that a CUDA roofline must not use.
static const coord_roofline_bench_t s_benches[] = {
    {.power = "M",
     .bench = "copy-cpu",
     .platform = "host",
     .epochs = 1,
     .flop = 0,
     .bytes = 1e9,
     .time_us = 1000000,
     .has_energy = true,
     .energy_mj = 1000},
    {.power = "M",
     .bench = "copy-cuda",
     .platform = "jetson",
     .epochs = 1,
     .flop = 0,
     .bytes = 40e9,
     .time_us = 4000000,
     .has_energy = true,
     .energy_mj = 16000},
    {.power = "M",
     .bench = "matmul-cpu",
     .platform = "host",
     .epochs = 1,
     .flop = 1e9,
     .bytes = 1e6,
     .time_us = 1000000,
     .has_energy = true,
     .energy_mj = 1000},
    {.power = "M",
     .bench = "matmul-cuda",
     .platform = "jetson",
     .epochs = 1,
     .flop = 100e9,
     .bytes = 1e6,
     .time_us = 2000000,
     .has_energy = true,
     .energy_mj = 20000},
};
#define S_N (sizeof s_benches / sizeof s_benches[0])

static bool s_near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

static void test_peaks_and_energy(void **state)
{
    (void) state;
    coord_roofline_t r;
    jf_err_t err = {0};
    assert_int_equal(coord_roofline_from_benches(s_benches, S_N, "cuda", &r, &err), 0);
    assert_true(s_near(r.peak_flop_per_s, 50e9));
    assert_true(s_near(r.peak_bytes_per_s, 10e9));
    assert_true(r.has_energy && !r.simulated);
    assert_true(s_near(r.j_per_flop, 0.2e-9));
    assert_true(s_near(r.j_per_byte, 0.4e-9));
    assert_string_equal(r.device, "cuda");
    assert_int_equal(coord_roofline_from_benches(s_benches, S_N, "cpu", &r, &err), 0);
    assert_true(s_near(r.peak_flop_per_s, 1e9) && s_near(r.peak_bytes_per_s, 1e9));
}

static void test_predictions_by_hand(void **state)
{
    (void) state;
    coord_roofline_t r;
    jf_err_t err = {0};
    assert_int_equal(coord_roofline_from_benches(s_benches, S_N, "cuda", &r, &err), 0);
    coord_roofline_pred_t p;
    // Ridge at 5 FLOP/byte. 10 GFLOP over 1 GB (10 FLOP/byte): compute-bound, 0.2 s, 2 J.
    coord_roofline_predict(&r, 10e9, 1e9, &p);
    assert_false(p.memory_bound);
    assert_true(s_near(p.intensity, 10.0) && s_near(p.attainable_flop_per_s, 50e9));
    assert_true(s_near(p.time_s, 0.2) && p.has_energy && s_near(p.energy_j, 2.0));
    // 1 GFLOP over 1 GB (1 FLOP/byte): memory-bound at 10 GFLOP/s, 0.1 s, 0.4 J.
    coord_roofline_predict(&r, 1e9, 1e9, &p);
    assert_true(p.memory_bound);
    assert_true(s_near(p.attainable_flop_per_s, 10e9) && s_near(p.time_s, 0.1));
    assert_true(s_near(p.energy_j, 0.4));
}

static void test_energy_absent(void **state)
{
    (void) state;
    coord_roofline_bench_t b[S_N];
    memcpy(b, s_benches, sizeof b);
    b[1].has_energy = false; // copy-cuda without energy
    coord_roofline_t r;
    jf_err_t err = {0};
    assert_int_equal(coord_roofline_from_benches(b, S_N, "cuda", &r, &err), 0);
    assert_false(r.has_energy);
    coord_roofline_pred_t p;
    coord_roofline_predict(&r, 1e9, 1e9, &p);
    assert_false(p.has_energy);
}

static void test_missing_benchmark_refused(void **state)
{
    (void) state;
    coord_roofline_t r;
    jf_err_t err = {0};
    // Without copy-cuda (rows 0, 2, 3 only: pass the last three and the first separately).
    coord_roofline_bench_t b[] = {s_benches[0], s_benches[2], s_benches[3]};
    assert_int_equal(coord_roofline_from_benches(b, 3, "cuda", &r, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "copy-cuda"));
    coord_roofline_bench_t z[] = {s_benches[1], s_benches[3]};
    z[1].flop = 0; // a matmul that did no work
    assert_int_equal(coord_roofline_from_benches(z, 2, "cuda", &r, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "matmul-cuda"));
}

static void test_error_pct(void **state)
{
    (void) state;
    assert_true(s_near(coord_roofline_error_pct(1.1, 1.0), 10.0));
    assert_true(s_near(coord_roofline_error_pct(0.5, 2.0), -75.0));
    assert_true(isnan(coord_roofline_error_pct(1.0, 0.0)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peaks_and_energy), cmocka_unit_test(test_predictions_by_hand),
        cmocka_unit_test(test_energy_absent),    cmocka_unit_test(test_missing_benchmark_refused),
        cmocka_unit_test(test_error_pct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
