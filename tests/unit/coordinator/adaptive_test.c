/* Unit tests of coordinator/fit/coord_adaptive: the spread is the least crowded mode (MaxPro,
 * against brute force), deterministic per seed; with enough measured modes the picks alternate
 * uncertainty and front, and a front pick lies on the true front of the unmeasured modes when the
 * models can represent the truth; the candidates running out; bad arguments. */
#include "coord_adaptive.h"

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
// clang-format on

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define T_CORES 4
#define T_CPU   6
#define T_GPU   5
#define T_EMC   3
#define T_N     (T_CORES * T_CPU * T_GPU * T_EMC) // 360 candidate modes
#define T_BATCH 8

static void t_grid(coord_op_t *ops)
{
    size_t n = 0;
    for (int k = 1; k <= T_CORES; k++) {
        for (int c = 0; c < T_CPU; c++) {
            for (int g = 0; g < T_GPU; g++) {
                for (int e = 0; e < T_EMC; e++) {
                    ops[n++] = (coord_op_t){.cores = 2 * k,
                                            .cpu_hz = 400000000 + 300000000 * (int64_t) c,
                                            .gpu_hz = 300000000 + 250000000 * (int64_t) g,
                                            .emc_hz = 800000000 + 1000000000 * (int64_t) e,
                                            .workers = 2,
                                            .batch_size = 32};
                }
            }
        }
    }
}

// Time and power the linear models' features represent exactly (docs/analysis.md "Models").
static double t_time_us(const coord_op_t *op)
{
    double c = (double) op->cpu_hz / 1e9, g = (double) op->gpu_hz / 1e9,
           e = (double) op->emc_hz / 1e9;
    return 1e6 * (0.5 + 2.0 / g + 0.8 / e + 3.0 / (op->cores * c));
}

static double t_power_mw(const coord_op_t *op)
{
    double c = (double) op->cpu_hz / 1e9, g = (double) op->gpu_hz / 1e9,
           e = (double) op->emc_hz / 1e9;
    return 1e3 * (4.0 + 0.6 * op->cores * c + 5.0 * g + 1.5 * g * g * g + 0.7 * e);
}

// MaxPro crowding of mode i by the taken modes (coord_adaptive.h), in the grid's normalised
// coordinates: cores 2..8, cpu 0.4..1.9 GHz, gpu 0.3..1.3 GHz, emc 0.8..2.8 GHz.
static double t_crowd(const coord_op_t *ops, const bool *taken, size_t i)
{
    double sum = 0.0;
    for (size_t j = 0; j < T_N; j++) {
        const coord_op_t *a = &ops[i], *b = &ops[j];
        double d[4] = {(a->cores - b->cores) / 6.0, (double) (a->cpu_hz - b->cpu_hz) / 1.5e9,
                       (double) (a->gpu_hz - b->gpu_hz) / 1.0e9,
                       (double) (a->emc_hz - b->emc_hz) / 2.0e9};
        double prod = 1.0;
        for (int k = 0; k < 4; k++) {
            prod *= d[k] * d[k] + COORD_ADAPTIVE_CROWD_EPS;
        }
        // workers and batch are constant: their factors are eps each
        prod *= COORD_ADAPTIVE_CROWD_EPS * COORD_ADAPTIVE_CROWD_EPS;
        sum += taken[j] ? 1.0 / prod : 0.0;
    }
    return sum;
}

static void test_spread_is_least_crowded(void **state)
{
    (void) state;
    coord_op_t ops[T_N];
    t_grid(ops);
    coord_adaptive_pick_t picks[T_BATCH];
    size_t n = 0;
    jf_err_t err = {0};
    coord_adaptive_opts_t o = {.seed = 3, .batch = T_BATCH};
    assert_int_equal(coord_adaptive_choose(&o, ops, T_N, NULL, 0, picks, &n, &err), 0);
    assert_int_equal(n, T_BATCH);
    bool taken[T_N] = {false};
    for (size_t p = 0; p < n; p++) {
        assert_int_equal(picks[p].reason, COORD_ADAPTIVE_SPREAD);
        assert_false(taken[picks[p].idx]);
        if (p > 0) { // no untaken mode is less crowded by the taken ones than the pick
            double mine = t_crowd(ops, taken, picks[p].idx);
            assert_true(fabs(1.0 / mine - picks[p].score) <= 1e-9 * picks[p].score);
            for (size_t i = 0; i < T_N; i++) {
                assert_true(taken[i] || t_crowd(ops, taken, i) >= mine * (1 - 1e-12));
            }
        }
        taken[picks[p].idx] = true;
    }
}

static void test_deterministic_per_seed(void **state)
{
    (void) state;
    coord_op_t ops[T_N];
    t_grid(ops);
    coord_adaptive_pick_t a[T_BATCH], b[T_BATCH];
    size_t na = 0, nb = 0;
    bool differs = false;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        coord_adaptive_opts_t o = {.seed = seed, .batch = T_BATCH};
        assert_int_equal(coord_adaptive_choose(&o, ops, T_N, NULL, 0, a, &na, NULL), 0);
        assert_int_equal(coord_adaptive_choose(&o, ops, T_N, NULL, 0, b, &nb, NULL), 0);
        assert_int_equal(na, nb);
        assert_memory_equal(a, b, na * sizeof a[0]);
        o.seed = seed + 100;
        assert_int_equal(coord_adaptive_choose(&o, ops, T_N, NULL, 0, b, &nb, NULL), 0);
        differs |= a[0].idx != b[0].idx;
    }
    assert_true(differs); // the seed chooses the first mode
}

// Measures the first n_obs spread picks with the exact figures; returns their count.
static size_t t_measure_spread(const coord_op_t *ops, size_t n_obs, coord_adaptive_obs_t *obs)
{
    coord_adaptive_pick_t picks[T_N];
    size_t n = 0;
    coord_adaptive_opts_t o = {.seed = 5, .batch = n_obs};
    assert_int_equal(coord_adaptive_choose(&o, ops, T_N, NULL, 0, picks, &n, NULL), 0);
    for (size_t i = 0; i < n; i++) {
        obs[i] = (coord_adaptive_obs_t){.idx = picks[i].idx,
                                        .time_us = t_time_us(&ops[picks[i].idx]),
                                        .power_mw = t_power_mw(&ops[picks[i].idx])};
    }
    return n;
}

static bool t_on_true_front(const coord_op_t *ops, const bool *taken, size_t idx)
{
    double t = t_time_us(&ops[idx]), en = t * t_power_mw(&ops[idx]);
    for (size_t i = 0; i < T_N; i++) {
        double ti = t_time_us(&ops[i]), ei = ti * t_power_mw(&ops[i]);
        bool dominates = ti <= t * (1 - 1e-6) && ei <= en * (1 + 1e-6);
        dominates |= ei <= en * (1 - 1e-6) && ti <= t * (1 + 1e-6);
        if (!taken[i] && i != idx && dominates) {
            return false;
        }
    }
    return true;
}

static void test_models_alternate_uncertainty_and_front(void **state)
{
    (void) state;
    coord_op_t ops[T_N];
    t_grid(ops);
    coord_adaptive_obs_t obs[24];
    size_t n_obs = t_measure_spread(ops, 24, obs);
    bool taken[T_N] = {false};
    for (size_t i = 0; i < n_obs; i++) {
        taken[obs[i].idx] = true;
    }
    coord_adaptive_pick_t picks[T_BATCH], again[T_BATCH];
    size_t n = 0, n2 = 0;
    jf_err_t err = {0};
    coord_adaptive_opts_t o = {.seed = 9, .batch = T_BATCH};
    assert_int_equal(coord_adaptive_choose(&o, ops, T_N, obs, n_obs, picks, &n, &err), 0);
    assert_int_equal(n, T_BATCH);
    for (size_t p = 0; p < n; p++) {
        assert_int_equal(picks[p].reason,
                         p % 2 == 0 ? COORD_ADAPTIVE_UNCERTAINTY : COORD_ADAPTIVE_FRONT);
        assert_false(taken[picks[p].idx]);
        assert_true(picks[p].score >= 0.0 && isfinite(picks[p].score));
        if (picks[p].reason == COORD_ADAPTIVE_FRONT) {
            assert_true(t_on_true_front(ops, taken, picks[p].idx));
        }
        taken[picks[p].idx] = true;
    }
    assert_int_equal(coord_adaptive_choose(&o, ops, T_N, obs, n_obs, again, &n2, &err), 0);
    assert_memory_equal(picks, again, n * sizeof picks[0]);
}

static void test_candidates_run_out(void **state)
{
    (void) state;
    coord_op_t ops[T_N];
    t_grid(ops);
    coord_adaptive_obs_t obs[3];
    for (size_t i = 0; i < 3; i++) {
        obs[i] = (coord_adaptive_obs_t){.idx = i, .time_us = 1e6, .power_mw = 5e3};
    }
    coord_adaptive_pick_t picks[T_BATCH];
    size_t n = 0;
    coord_adaptive_opts_t o = {.seed = 1, .batch = T_BATCH};
    assert_int_equal(coord_adaptive_choose(&o, ops, 5, obs, 3, picks, &n, NULL), 0);
    assert_int_equal(n, 2);
    assert_true((picks[0].idx == 3 && picks[1].idx == 4) ||
                (picks[0].idx == 4 && picks[1].idx == 3));
}

static void test_bad_arguments(void **state)
{
    (void) state;
    coord_op_t ops[T_N];
    t_grid(ops);
    coord_op_t bad[2] = {ops[0], ops[1]};
    bad[1].cores = 0;
    const struct {
        size_t batch;
        const coord_op_t *cands;
        size_t n_cands;
        coord_adaptive_obs_t obs[2];
        size_t n_obs;
        const char *msg;
    } rows[] = {
        {0, ops, T_N, {{0}}, 0, "a batch of 0 modes"},
        {1, bad, 2, {{0}}, 0, "candidate 1 needs cores >= 1"},
        {1, ops, T_N, {{.idx = T_N, .time_us = 1, .power_mw = 1}}, 1, "index past the candidates"},
        {1, ops, T_N, {{.idx = 1, .time_us = 1, .power_mw = 0}}, 1, "time and power must be > 0"},
        {1,
         ops,
         T_N,
         {{.idx = 1, .time_us = 1, .power_mw = 1}, {.idx = 1, .time_us = 1, .power_mw = 1}},
         2,
         "candidate 1 measured twice"},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        coord_adaptive_pick_t picks[1];
        size_t n = 77;
        jf_err_t err = {0};
        coord_adaptive_opts_t o = {.seed = 1, .batch = rows[r].batch};
        assert_int_equal(coord_adaptive_choose(&o, rows[r].cands, rows[r].n_cands, rows[r].obs,
                                               rows[r].n_obs, picks, &n, &err),
                         -EINVAL);
        assert_non_null(strstr(err.msg, rows[r].msg));
        assert_int_equal(n, 77); // unchanged on failure
    }
}

static void test_reason_names(void **state)
{
    (void) state;
    assert_string_equal(coord_adaptive_reason_name(COORD_ADAPTIVE_SPREAD), "spread");
    assert_string_equal(coord_adaptive_reason_name(COORD_ADAPTIVE_UNCERTAINTY), "uncertainty");
    assert_string_equal(coord_adaptive_reason_name(COORD_ADAPTIVE_FRONT), "front");
    assert_true(coord_adaptive_min_points() >= 9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spread_is_least_crowded),
        cmocka_unit_test(test_deterministic_per_seed),
        cmocka_unit_test(test_models_alternate_uncertainty_and_front),
        cmocka_unit_test(test_candidates_run_out),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_reason_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
