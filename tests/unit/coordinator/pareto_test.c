/* Unit tests of coordinator/fit's Pareto front and recommendation against brute force on seeded
 * random points (with ties and exact copies), an impossible budget, and the candidate grid and
 * per-mode means of coord_points. */
#include "coord_pareto.h"
#include "coord_points.h"
#include "jf_rng.h"

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

#define T_N      600
#define T_ROUNDS 20

// Random points on a coarse lattice, so ties in time, in energy and exact copies happen.
static void t_random(coord_pareto_point_t *pts, size_t n, uint64_t seed)
{
    jf_rng_t rng;
    jf_rng_seed(&rng, seed, 0);
    for (size_t i = 0; i < n; i++) {
        pts[i] = (coord_pareto_point_t){.op = {.cores = (int) i + 1},
                                        .time_us = (double) (1 + jf_rng_below(&rng, 60)),
                                        .power_mw = (double) (1 + jf_rng_below(&rng, 80)),
                                        .energy_mj = (double) (1 + jf_rng_below(&rng, 60))};
    }
}

static bool t_dominates(const coord_pareto_point_t *a, const coord_pareto_point_t *b)
{
    return a->time_us <= b->time_us && a->energy_mj <= b->energy_mj &&
           (a->time_us < b->time_us || a->energy_mj < b->energy_mj);
}

static void test_front_vs_brute_force(void **state)
{
    (void) state;
    coord_pareto_point_t pts[T_N];
    size_t idx[T_N];
    for (uint64_t round = 0; round < T_ROUNDS; round++) {
        size_t n = 1 + (size_t) (round * 31 % T_N);
        t_random(pts, n, 100 + round);
        jf_err_t err = {0};
        int m = coord_pareto_front(pts, n, idx, &err);
        assert_true(m >= 1);
        bool on_front[T_N] = {false};
        for (int j = 0; j < m; j++) {
            on_front[idx[j]] = true;
            if (j > 0) { // by increasing time
                assert_true(pts[idx[j - 1]].time_us <= pts[idx[j]].time_us);
            }
        }
        for (size_t i = 0; i < n; i++) {
            bool dominated = false;
            for (size_t k = 0; k < n && !dominated; k++) {
                dominated = t_dominates(&pts[k], &pts[i]);
            }
            assert_int_equal(on_front[i], !dominated);
        }
    }
}

static size_t t_brute_best(const coord_pareto_point_t *pts, size_t n, coord_budget_t kind,
                           double budget)
{
    size_t best = n;
    for (size_t i = 0; i < n; i++) {
        double v = kind == COORD_BUDGET_POWER ? pts[i].power_mw : pts[i].time_us;
        if (v > budget) {
            continue;
        }
        double f = kind == COORD_BUDGET_POWER ? pts[i].time_us : pts[i].energy_mj;
        double g = kind == COORD_BUDGET_POWER ? pts[i].energy_mj : pts[i].time_us;
        double bf = best < n
                        ? (kind == COORD_BUDGET_POWER ? pts[best].time_us : pts[best].energy_mj)
                        : INFINITY;
        double bg = best < n
                        ? (kind == COORD_BUDGET_POWER ? pts[best].energy_mj : pts[best].time_us)
                        : INFINITY;
        if (f < bf || (f == bf && g < bg)) {
            best = i;
        }
    }
    return best;
}

static void test_recommend_vs_brute_force(void **state)
{
    (void) state;
    coord_pareto_point_t pts[T_N];
    t_random(pts, T_N, 7);
    for (int kind = 0; kind < 2; kind++) {
        for (double budget = 1.0; budget <= 80.0; budget += 3.0) {
            size_t got = T_N;
            double closest = 0.0;
            jf_err_t err = {0};
            int rc = coord_recommend(pts, T_N, (coord_budget_t) kind, budget, &got, &closest, &err);
            size_t want = t_brute_best(pts, T_N, (coord_budget_t) kind, budget);
            if (want == T_N) {
                assert_int_equal(rc, -ENOENT);
                continue;
            }
            assert_int_equal(rc, 0);
            assert_int_equal(got, want);
            double v = kind == COORD_BUDGET_POWER ? pts[got].power_mw : pts[got].time_us;
            assert_true(v <= budget); // never over budget
        }
    }
}

static void test_budget_nothing_meets(void **state)
{
    (void) state;
    coord_pareto_point_t pts[3] = {{.time_us = 2e6, .power_mw = 5200, .energy_mj = 1e4},
                                   {.time_us = 1e6, .power_mw = 9000, .energy_mj = 9e3},
                                   {.time_us = 3e6, .power_mw = 6000, .energy_mj = 1.8e4}};
    size_t idx = 99;
    double closest = 0.0;
    jf_err_t err = {0};
    assert_int_equal(coord_recommend(pts, 3, COORD_BUDGET_POWER, 3000, &idx, &closest, &err),
                     -ENOENT);
    assert_int_equal(idx, 99);
    assert_true(closest == 5200);
    assert_string_equal(err.msg,
                        "no mode meets a power budget of 3 W (the lowest predicted is 5.2 W)");
    assert_int_equal(coord_recommend(pts, 3, COORD_BUDGET_TIME, 5e5, &idx, &closest, &err),
                     -ENOENT);
    assert_non_null(strstr(err.msg, "time budget of 0.5 s (the lowest predicted is 1 s)"));
    assert_int_equal(coord_recommend(pts, 0, COORD_BUDGET_TIME, 5e5, &idx, &closest, &err),
                     -ENOENT);
}

static coord_run_mean_t t_run(int cores, int64_t cpu, int64_t gpu, int64_t emc, double t)
{
    return (coord_run_mean_t){.op = {.cores = cores,
                                     .cpu_hz = cpu,
                                     .gpu_hz = gpu,
                                     .emc_hz = emc,
                                     .workers = 2,
                                     .batch_size = 32},
                              .time_us = t,
                              .has_energy = true,
                              .power_mw = 2 * t,
                              .energy_mj = 3 * t};
}

static void test_grid_and_modes(void **state)
{
    (void) state;
    coord_run_mean_t runs[] = {t_run(2, 1, 10, 100, 1.0), t_run(4, 2, 10, 100, 2.0),
                               t_run(2, 1, 20, 100, 3.0), t_run(2, 1, 10, 100, 5.0),
                               t_run(6, 3, 30, 200, 7.0)};
    coord_op_t *ops = NULL;
    size_t n = 0;
    jf_err_t err = {0};
    assert_int_equal(coord_points_grid(runs, 5, &ops, &n, &err), 0);
    assert_int_equal(n, 3 * 3 * 3 * 2); // distinct cores, cpu, gpu, emc; one (workers, batch)
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++) {
            assert_false(coord_op_same(&ops[i], &ops[j]));
        }
    }
    free(ops);
    coord_pareto_point_t *modes = NULL;
    assert_int_equal(coord_points_modes(runs, 5, &modes, &n, &err), 0);
    assert_int_equal(n, 4); // runs 0 and 3 are repeats of one mode: their mean
    assert_true(fabs(modes[0].time_us - 3.0) < 1e-12);
    assert_true(fabs(modes[0].energy_mj - 9.0) < 1e-12);
    free(modes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_front_vs_brute_force),
        cmocka_unit_test(test_recommend_vs_brute_force),
        cmocka_unit_test(test_budget_nothing_meets),
        cmocka_unit_test(test_grid_and_modes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
