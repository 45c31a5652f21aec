/* Unit tests of the rounds planner (coord_rounds_plan.h): maxn, equal-finish and deadline on
 * seeded synthetic mode tables whose optimum a brute force over every combination finds, the
 * power budgets, the errors, and the real AGX Orin measurements of
 * tests/fixtures/orin_modes/resnet_every110.inc (times in the lab's unit: ratios only). */
#include "coord_rounds_plan.h"

#include "jf_rng.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_BOARDS    3  // boards of a synthetic fleet (brute force: (modes x counts)^boards)
#define T_MODES     4  // modes per synthetic board
#define T_M         4  // local minibatches per round
#define T_M_MAX     40 // brute force tries counts T_M..T_M_MAX (covers every fleet of t_make)
#define T_SEEDS     20 // synthetic fleets per test
#define T_REL       1e-9
#define T_ORIN_ROWS 40

typedef struct t_fleet {
    coord_rounds_board_t b[T_BOARDS];
    coord_rounds_mode_t modes[T_BOARDS][T_MODES];
} t_fleet_t;

// A seeded fleet: board i is about 1 + i / 2 times slower than board 0; modes trade time for power
// (a faster mode draws more), each within [2, 20] W; idle power below every mode's.
static void t_make(uint64_t seed, t_fleet_t *f)
{
    jf_rng_t rng;
    jf_rng_seed(&rng, seed, 3);
    memset(f, 0, sizeof *f);
    for (int i = 0; i < T_BOARDS; i++) {
        coord_rounds_board_t *b = &f->b[i];
        (void) snprintf(b->name, sizeof b->name, "syn-%d", i);
        b->modes = f->modes[i];
        b->n_modes = T_MODES;
        b->idle_w = 0.5 + jf_rng_uniform(&rng);
        for (int k = 0; k < T_MODES; k++) {
            coord_rounds_mode_t *m = &f->modes[i][k];
            double speed = 0.3 + jf_rng_uniform(&rng);
            m->mode_id = k;
            (void) snprintf(m->mode, sizeof m->mode, "M%d", k);
            m->minibatch_s = (1.0 + 0.5 * i) / speed;
            m->power_w = 2.0 + 18.0 * speed * speed / 1.69 * (0.8 + 0.4 * jf_rng_uniform(&rng));
        }
    }
}

static jf_rounds_t t_cfg(jf_rounds_policy_t policy)
{
    return (jf_rounds_t){.source = "test.yaml",
                         .policy = policy,
                         .local_count = T_M,
                         .local_unit = JF_ROUNDS_MINIBATCHES,
                         .spread_pct = JF_ROUNDS_DEFAULT_SPREAD_PCT,
                         .batch_size = 16};
}

static double t_total(const coord_rounds_choice_t *c, size_t n)
{
    coord_rounds_summary_t s = {0};
    coord_rounds_summarise(c, n, &s);
    return s.energy_j;
}

// Energy of a combination (mode k[i], count m[i]) with the round ending at the latest finish.
static double t_energy(const t_fleet_t *f, const int *k, const int *m, double *ret_min,
                       double *ret_max)
{
    double hi = 0.0, lo = INFINITY, j = 0.0;
    for (int i = 0; i < T_BOARDS; i++) {
        double fin = m[i] * f->modes[i][k[i]].minibatch_s;
        hi = fmax(hi, fin);
        lo = fmin(lo, fin);
    }
    for (int i = 0; i < T_BOARDS; i++) {
        const coord_rounds_mode_t *md = &f->modes[i][k[i]];
        double fin = m[i] * md->minibatch_s;
        j += fin * md->power_w + f->b[i].idle_w * (hi - fin);
    }
    *ret_min = lo;
    *ret_max = hi;
    return j;
}

// The brute force of equal-finish: over every (mode, count in T_M..T_M_MAX) per board, with
// every finish within [T (1 - spread), T] (T: the slowest board's fastest time), the fewest
// boards with a count other than T_M, then the least energy. INFINITY when none is feasible.
static double t_brute_equal(const t_fleet_t *f, double t_s, double spread_pct)
{
    double best = INFINITY;
    int best_adj = T_BOARDS + 1;
    int per = T_MODES * (T_M_MAX - T_M + 1);
    int total = per * per * per;
    for (int c = 0; c < total; c++) {
        int k[T_BOARDS], m[T_BOARDS], adj = 0, rest = c;
        for (int i = 0; i < T_BOARDS; i++) {
            k[i] = rest % T_MODES;
            m[i] = T_M + (rest / T_MODES) % (T_M_MAX - T_M + 1);
            rest /= per;
            adj += m[i] != T_M;
        }
        double lo = 0.0, hi = 0.0;
        double j = t_energy(f, k, m, &lo, &hi);
        bool ok = hi <= t_s * (1 + T_REL) && lo >= t_s * (1.0 - spread_pct / 100.0) * (1 - T_REL);
        if (ok && (adj < best_adj || (adj == best_adj && j < best))) {
            best = j;
            best_adj = adj;
        }
    }
    return best;
}

static void test_equal_finish_brute_force(void **state)
{
    (void) state;
    size_t feasible = 0;
    for (uint64_t seed = 1; seed <= T_SEEDS; seed++) {
        t_fleet_t f;
        t_make(seed, &f);
        jf_rounds_t cfg = t_cfg(JF_ROUNDS_EQUAL_FINISH);
        cfg.spread_pct = 5.0 + (double) (seed % 4) * 10.0; // 5..35 %: windows with several modes
        coord_rounds_choice_t c[T_BOARDS];
        jf_err_t err = {0};
        assert_int_equal(coord_rounds_plan(&cfg, f.b, T_BOARDS, c, &err), 0);
        double t_s = 0.0;
        for (int i = 0; i < T_BOARDS; i++) {
            double fastest = INFINITY;
            for (int k = 0; k < T_MODES; k++) {
                fastest = fmin(fastest, T_M * f.modes[i][k].minibatch_s);
            }
            t_s = fmax(t_s, fastest);
        }
        double brute = t_brute_equal(&f, t_s, cfg.spread_pct);
        coord_rounds_summary_t s = {0};
        coord_rounds_summarise(c, T_BOARDS, &s);
        if (isinf(brute)) {
            assert_true(s.n_missed > 0); // no combination meets the window: the plan says so
            continue;
        }
        feasible++;
        assert_int_equal(s.n_missed, 0);
        for (int i = 0; i < T_BOARDS; i++) {
            assert_true(c[i].minibatches >= T_M && c[i].minibatches <= T_M_MAX);
        }
        assert_true(s.spread_pct <= cfg.spread_pct + 1e-9);
        if (fabs(s.energy_j - brute) > T_REL * brute) {
            fail_msg("seed %llu: planned %.9g J, brute force %.9g J", (unsigned long long) seed,
                     s.energy_j, brute);
        }
    }
    assert_true(feasible >= T_SEEDS / 2); // the test compared most fleets, not none
}

// Deadline: every combination of modes at T_M minibatches within the deadline, least energy.
static double t_brute_deadline(const t_fleet_t *f, double dl_s)
{
    double best = INFINITY;
    int total = T_MODES * T_MODES * T_MODES;
    for (int c = 0; c < total; c++) {
        int k[T_BOARDS] = {c % T_MODES, (c / T_MODES) % T_MODES, c / (T_MODES * T_MODES)};
        int m[T_BOARDS] = {T_M, T_M, T_M};
        double lo = 0.0, hi = 0.0;
        double j = t_energy(f, k, m, &lo, &hi);
        if (hi <= dl_s && j < best) {
            best = j;
        }
    }
    return best;
}

static void test_deadline_brute_force(void **state)
{
    (void) state;
    for (uint64_t seed = 1; seed <= T_SEEDS; seed++) {
        t_fleet_t f;
        t_make(seed, &f);
        double slowest_fast = 0.0, slowest_slow = 0.0;
        for (int i = 0; i < T_BOARDS; i++) {
            double fast = INFINITY, slow = 0.0;
            for (int k = 0; k < T_MODES; k++) {
                fast = fmin(fast, T_M * f.modes[i][k].minibatch_s);
                slow = fmax(slow, T_M * f.modes[i][k].minibatch_s);
            }
            slowest_fast = fmax(slowest_fast, fast);
            slowest_slow = fmax(slowest_slow, slow);
        }
        jf_rounds_t cfg = t_cfg(JF_ROUNDS_DEADLINE);
        // A deadline between the tightest feasible and the loosest useful one.
        double dl_s = slowest_fast + (slowest_slow - slowest_fast) * (double) (seed % 5) / 4.0;
        cfg.deadline_us = (int64_t) ceil(dl_s * 1e6);
        coord_rounds_choice_t c[T_BOARDS];
        jf_err_t err = {0};
        assert_int_equal(coord_rounds_plan(&cfg, f.b, T_BOARDS, c, &err), 0);
        double brute = t_brute_deadline(&f, (double) cfg.deadline_us / 1e6);
        double got = t_total(c, T_BOARDS);
        for (int i = 0; i < T_BOARDS; i++) {
            assert_true(c[i].meets);
            assert_true(c[i].pred_s <= (double) cfg.deadline_us / 1e6);
            assert_int_equal(c[i].minibatches, T_M);
        }
        if (fabs(got - brute) > T_REL * brute) {
            fail_msg("seed %llu: planned %.9g J, brute force %.9g J", (unsigned long long) seed,
                     got, brute);
        }
    }
}

// A board that cannot meet the deadline even at its fastest is reported, in its fastest mode.
static void test_deadline_missed(void **state)
{
    (void) state;
    t_fleet_t f;
    t_make(3, &f);
    jf_rounds_t cfg = t_cfg(JF_ROUNDS_DEADLINE);
    double fast0 = INFINITY;
    size_t k2 = 0;
    for (int k = 0; k < T_MODES; k++) {    // board 2 10 x slower: its fastest >= 20 / 1.3 s, board
        f.modes[2][k].minibatch_s *= 10.0; // 0's <= 1 / 0.3 s
    }
    for (int k = 0; k < T_MODES; k++) {
        fast0 = fmin(fast0, T_M * f.modes[0][k].minibatch_s);
        k2 = f.modes[2][k].minibatch_s < f.modes[2][k2].minibatch_s ? (size_t) k : k2;
    }
    cfg.deadline_us = (int64_t) (fast0 * 1.5e6); // board 0 meets it; board 2 does not
    coord_rounds_choice_t c[T_BOARDS];
    jf_err_t err = {0};
    assert_int_equal(coord_rounds_plan(&cfg, f.b, T_BOARDS, c, &err), 0);
    assert_true(c[0].meets);
    assert_true(c[0].pred_s <= (double) cfg.deadline_us / 1e6); // the round ends later anyway
    assert_false(c[2].meets);
    assert_int_equal(c[2].mode, k2);
    coord_rounds_summary_t s = {0};
    coord_rounds_summarise(c, T_BOARDS, &s);
    assert_true(s.n_missed >= 1);
}

static void test_maxn_and_budget(void **state)
{
    (void) state;
    t_fleet_t f;
    t_make(5, &f);
    jf_rounds_t cfg = t_cfg(JF_ROUNDS_MAXN);
    coord_rounds_choice_t c[T_BOARDS];
    jf_err_t err = {0};
    assert_int_equal(coord_rounds_plan(&cfg, f.b, T_BOARDS, c, &err), 0);
    size_t fastest = 0;
    for (size_t k = 0; k < T_MODES; k++) {
        fastest = f.modes[1][k].minibatch_s < f.modes[1][fastest].minibatch_s ? k : fastest;
    }
    assert_int_equal(c[1].mode, fastest);
    assert_int_equal(c[1].minibatches, T_M);
    // A budget just under the fastest mode's power excludes it (and every mode above).
    f.b[1].budget_w = f.modes[1][fastest].power_w - 1e-6;
    assert_int_equal(coord_rounds_plan(&cfg, f.b, T_BOARDS, c, &err), 0);
    assert_int_not_equal(c[1].mode, fastest);
    assert_true(f.modes[1][c[1].mode].power_w <= f.b[1].budget_w);
    // No mode within the budget: an error naming the board.
    f.b[1].budget_w = 0.1;
    assert_int_equal(coord_rounds_plan(&cfg, f.b, T_BOARDS, c, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "board 'syn-1': no mode within its power budget of 0.1 W"));
}

static void test_errors(void **state)
{
    (void) state;
    t_fleet_t f;
    t_make(6, &f);
    jf_rounds_t cfg = t_cfg(JF_ROUNDS_EQUAL_FINISH);
    coord_rounds_choice_t c[T_BOARDS];
    jf_err_t err = {0};
    f.b[2].n_modes = 0;
    assert_int_equal(coord_rounds_plan(&cfg, f.b, T_BOARDS, c, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "board 'syn-2' has no fitted time and power models"));
    f.b[2].n_modes = T_MODES;
    cfg.local_unit = JF_ROUNDS_EPOCHS;
    cfg.local_count = 2;
    assert_int_equal(coord_rounds_plan(&cfg, f.b, T_BOARDS, c, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "board 'syn-0': local work is given in epochs"));
    for (int i = 0; i < T_BOARDS; i++) {
        f.b[i].minibatches_per_epoch = 7;
    }
    cfg.policy = JF_ROUNDS_MAXN;
    assert_int_equal(coord_rounds_plan(&cfg, f.b, T_BOARDS, c, &err), 0);
    assert_int_equal(c[0].minibatches, 14);
    cfg.policy = JF_ROUNDS_DEADLINE;
    cfg.deadline_us = 0;
    assert_int_equal(coord_rounds_plan(&cfg, f.b, T_BOARDS, c, &err), -EINVAL);
}

// A board whose every mode finishes far ahead of the window gets more minibatches, and the plan
// still meets the window.
static void test_equal_finish_more_minibatches(void **state)
{
    (void) state;
    coord_rounds_mode_t fast[2] = {{.mode_id = 0, .minibatch_s = 1.0, .power_w = 10.0},
                                   {.mode_id = 1, .minibatch_s = 1.5, .power_w = 6.0}};
    coord_rounds_mode_t slow[1] = {{.mode_id = 0, .minibatch_s = 10.0, .power_w = 5.0}};
    coord_rounds_board_t b[2] = {{.name = "fast", .modes = fast, .n_modes = 2},
                                 {.name = "slow", .modes = slow, .n_modes = 1}};
    jf_rounds_t cfg = t_cfg(JF_ROUNDS_EQUAL_FINISH);
    cfg.local_count = 10; // slow: 100 s; fast: 10 or 15 s, window [95, 100] s
    coord_rounds_choice_t c[2];
    jf_err_t err = {0};
    assert_int_equal(coord_rounds_plan(&cfg, b, 2, c, &err), 0);
    // Mode 0: 95 minibatches (95 s, 950 J); mode 1: 64 (96 s, 576 J): mode 1 wins.
    assert_int_equal(c[0].mode, 1);
    assert_int_equal(c[0].minibatches, 64);
    assert_true(c[0].meets);
    assert_int_equal(c[1].minibatches, 10);
}

// Closed-loop correction: a board that took 1.6 times its prediction has every mode's time scaled
// by 1.6, so the next plan predicts the measured time for the same mode and count; equal-finish
// then gives the other board a slower mode to meet it. A board that trained fewer minibatches is
// corrected per minibatch; an input that is not a measurement changes nothing.
static void test_correct(void **state)
{
    (void) state;
    coord_rounds_mode_t fast[3] = {{.mode_id = 0, .minibatch_s = 1.0, .power_w = 10.0},
                                   {.mode_id = 1, .minibatch_s = 1.2, .power_w = 8.0},
                                   {.mode_id = 2, .minibatch_s = 1.7, .power_w = 6.0}};
    coord_rounds_mode_t slow[1] = {{.mode_id = 0, .minibatch_s = 1.1, .power_w = 5.0}};
    coord_rounds_board_t b[2] = {{.name = "fast", .modes = fast, .n_modes = 3, .time_scale = 1.0},
                                 {.name = "slow", .modes = slow, .n_modes = 1}};
    jf_rounds_t cfg = t_cfg(JF_ROUNDS_EQUAL_FINISH);
    cfg.local_count = 10;
    cfg.spread_pct = 10.0;
    coord_rounds_choice_t c[2];
    jf_err_t err = {0};
    assert_int_equal(coord_rounds_plan(&cfg, b, 2, c, &err), 0);
    // Window [9.9, 11] s: fast's mode 1 (12 s) is too late, so mode 0 (10 s).
    assert_int_equal(c[0].mode, 0);
    assert_int_equal(c[1].mode, 0);
    double measured_s = 1.6 * c[1].pred_s;
    double ratio = coord_rounds_correct(&b[1], &c[1], c[1].minibatches, measured_s);
    assert_true(fabs(ratio - 1.6) < T_REL);
    assert_true(fabs(b[1].time_scale - 1.6) < T_REL);
    assert_true(fabs(slow[0].minibatch_s - 1.76) < T_REL);
    assert_int_equal(coord_rounds_plan(&cfg, b, 2, c, &err), 0);
    assert_true(fabs(c[1].pred_s - measured_s) < T_REL * measured_s);
    // The round is now 17.6 s, window [15.84, 17.6]: fast's mode 2 (17 s).
    assert_int_equal(c[0].mode, 2);
    assert_true(c[0].meets);
    // Fewer minibatches trained (5 of 10) in half the predicted time: ratio 1, no change.
    ratio = coord_rounds_correct(&b[0], &c[0], 5, c[0].pred_s / 2.0);
    assert_true(fabs(ratio - 1.0) < T_REL);
    assert_true(fabs(fast[2].minibatch_s - 1.7) < T_REL);
    // 0.5 s per minibatch measured against 1.7 predicted.
    ratio = coord_rounds_correct(&b[0], &c[0], 4, 2.0);
    assert_true(fabs(ratio - 0.5 / 1.7) < T_REL);
    assert_true(fabs(fast[0].minibatch_s - 0.5 / 1.7) < T_REL);
    assert_true(fabs(b[0].time_scale - 0.5 / 1.7) < T_REL);
    // Not measurements: nothing changes.
    assert_true(coord_rounds_correct(&b[0], &c[0], 4, NAN) == 1.0);
    coord_rounds_choice_t zero = c[0];
    zero.pred_s = 0.0;
    assert_true(coord_rounds_correct(&b[0], &zero, 4, 2.0) == 1.0);
    assert_true(coord_rounds_correct(&b[0], &c[0], 0, 2.0) == 1.0);
    zero = c[0];
    zero.mode = 3; // not one of the board's modes
    assert_true(coord_rounds_correct(&b[0], &zero, 4, 2.0) == 1.0);
    assert_true(fabs(fast[0].minibatch_s - 0.5 / 1.7) < T_REL);
}

// The real AGX Orin table (40 of its 4,368 measured modes): board "orin-1x" has the measured
// times, boards "orin-2x" and "orin-4x" the same modes 2 and 4 times slower (a synthetic
// heterogeneity on real time and power surfaces). Equal-finish must meet the window, spend
// less than maxn, and give each board the least-energy window mode a scan of the table finds.
static const double t_orin[T_ORIN_ROWS][6] = {
#include "../../fixtures/orin_modes/resnet_every110.inc"
};

static void test_orin_equal_finish(void **state)
{
    (void) state;
    static coord_rounds_mode_t modes[3][T_ORIN_ROWS];
    coord_rounds_board_t b[3];
    const double slow[3] = {1.0, 2.0, 4.0};
    for (int i = 0; i < 3; i++) {
        b[i] = (coord_rounds_board_t){.modes = modes[i], .n_modes = T_ORIN_ROWS};
        (void) snprintf(b[i].name, sizeof b[i].name, "orin-%gx", slow[i]);
        for (int k = 0; k < T_ORIN_ROWS; k++) {
            modes[i][k] = (coord_rounds_mode_t){
                .mode_id = k, .minibatch_s = t_orin[k][4] / 1e6 * slow[i], .power_w = t_orin[k][5]};
        }
    }
    jf_rounds_t cfg = t_cfg(JF_ROUNDS_EQUAL_FINISH);
    cfg.local_count = 50;
    cfg.spread_pct = 10.0;
    coord_rounds_choice_t ef[3], mx[3];
    jf_err_t err = {0};
    assert_int_equal(coord_rounds_plan(&cfg, b, 3, ef, &err), 0);
    cfg.policy = JF_ROUNDS_MAXN;
    assert_int_equal(coord_rounds_plan(&cfg, b, 3, mx, &err), 0);
    coord_rounds_summary_t se = {0}, sm = {0};
    coord_rounds_summarise(ef, 3, &se);
    coord_rounds_summarise(mx, 3, &sm);
    // Without an idle power (the reference gives none) waiting is free, and on this table the
    // fastest modes are also the most efficient per unit of work (race to idle): equal-finish
    // buys its spread with energy here, which the figures show rather than hide.
    print_message("orin_maxn_spread_pct=%.2f orin_maxn_energy=%.4g orin_equal_finish_spread_pct="
                  "%.2f orin_equal_finish_energy=%.4g (lab time unit x W, idle 0 W)\n",
                  sm.spread_pct, sm.energy_j, se.spread_pct, se.energy_j);
    assert_true(se.spread_pct <= cfg.spread_pct);
    assert_true(sm.spread_pct > se.spread_pct);
    for (int i = 0; i < 3; i++) { // each board: the least-energy mode in the window, by scan
        double lo = se.round_s * 0.9, best = INFINITY;
        for (int k = 0; k < T_ORIN_ROWS; k++) {
            double fin = 50 * modes[i][k].minibatch_s;
            best = fin >= lo && fin <= se.round_s ? fmin(best, fin * modes[i][k].power_w) : best;
        }
        if (ef[i].minibatches == 50) {
            assert_true(fabs(ef[i].pred_j - best) <= T_REL * best);
        }
    }
}

// Equal-finish keeps each board's prediction error as a margin inside the window: a board that
// is off by error_s must still finish within the spread when the slowest is off by its own. The
// least-energy mode at the window's lower edge (9.05 s of [9, 10]) is then too early; the margin
// never takes more than half the window.
static void test_equal_finish_margin(void **state)
{
    (void) state;
    coord_rounds_mode_t fast[3] = {{.mode_id = 0, .minibatch_s = 0.905, .power_w = 5.0},
                                   {.mode_id = 1, .minibatch_s = 0.960, .power_w = 5.5},
                                   {.mode_id = 2, .minibatch_s = 0.995, .power_w = 6.0}};
    coord_rounds_mode_t slow[1] = {{.mode_id = 0, .minibatch_s = 1.0, .power_w = 5.0}};
    coord_rounds_board_t b[2] = {{.name = "fast", .modes = fast, .n_modes = 3},
                                 {.name = "slow", .modes = slow, .n_modes = 1}};
    jf_rounds_t cfg = t_cfg(JF_ROUNDS_EQUAL_FINISH);
    cfg.local_count = 10; // slow: 10 s; window [9, 10] s
    cfg.spread_pct = 10.0;
    coord_rounds_choice_t c[2];
    jf_err_t err = {0};
    assert_int_equal(coord_rounds_plan(&cfg, b, 2, c, &err), 0);
    assert_int_equal(c[0].mode, 0); // no error known: the least energy, at the lower edge
    b[0].error_s = 0.2;
    b[1].error_s = 0.1;
    assert_int_equal(coord_rounds_plan(&cfg, b, 2, c, &err), 0);
    // Lower edge 0.9 * (10 + 0.2) + 0.2 = 9.38 s: 9.6 s is the cheapest at or after it.
    assert_int_equal(c[0].mode, 1);
    assert_true(c[0].pred_s >= 9.38 - 1e-9);
    assert_true(c[0].meets);
    // An error larger than the window: the edge stops at the window's middle, 9.5 s.
    b[0].error_s = 2.0;
    assert_int_equal(coord_rounds_plan(&cfg, b, 2, c, &err), 0);
    assert_int_equal(c[0].mode, 1);
    assert_true(c[0].meets);
    fast[1].minibatch_s = 0.94; // 9.4 s: below the middle now, so the next mode
    assert_int_equal(coord_rounds_plan(&cfg, b, 2, c, &err), 0);
    assert_int_equal(c[0].mode, 2);
}

// A round's run is one warm-up epoch: every finish is the mode's warmup_s + m * minibatch_s, the
// round time, the minibatches raised to reach the window and the correction all include it.
static void test_warmup(void **state)
{
    (void) state;
    coord_rounds_mode_t fast[1] = {
        {.mode_id = 0, .minibatch_s = 0.5, .power_w = 5.0, .op = {.cpu_hz = 2000000000}}};
    coord_rounds_mode_t slow[1] = {
        {.mode_id = 0, .minibatch_s = 1.0, .power_w = 5.0, .op = {.cpu_hz = 500000000}}};
    coord_rounds_board_t b[2] = {{.name = "fast", .modes = fast, .n_modes = 1},
                                 {.name = "slow", .modes = slow, .n_modes = 1}};
    coord_rounds_set_warmup(&b[0], 1.0, 0.0); // 1 s x GHz at 2 GHz: 0.5 s
    coord_rounds_set_warmup(&b[1], 1.0, 0.1); // at 0.5 GHz: 2 s, off by up to 10 %
    assert_true(fabs(fast[0].warmup_s - 0.5) < T_REL);
    assert_true(fabs(slow[0].warmup_s - 2.0) < T_REL);
    assert_true(fabs(b[1].error_s - 0.2) < T_REL);
    b[1].error_s = 0.0; // the window of the test below without a margin
    jf_rounds_t cfg = t_cfg(JF_ROUNDS_EQUAL_FINISH);
    cfg.local_count = 10;
    cfg.spread_pct = 10.0;
    coord_rounds_choice_t c[2];
    jf_err_t err = {0};
    assert_int_equal(coord_rounds_plan(&cfg, b, 2, c, &err), 0);
    assert_true(fabs(c[1].pred_s - 12.0) < T_REL); // 2 + 10 * 1
    // Window [10.8, 12] s: fast needs ceil((10.8 - 0.5) / 0.5) = 21 minibatches, 11 s.
    assert_int_equal(c[0].minibatches, 21);
    assert_true(fabs(c[0].pred_s - 11.0) < T_REL);
    // Measured 13 s for the 10 minibatches: the whole prediction, warm-up included, scales.
    double ratio = coord_rounds_correct(&b[1], &c[1], 10, 13.0);
    assert_true(fabs(ratio - 13.0 / 12.0) < T_REL);
    assert_true(fabs(slow[0].warmup_s - 2.0 * 13.0 / 12.0) < T_REL);
    assert_true(fabs(b[1].warmup_ghz_s - 13.0 / 12.0) < T_REL);
    assert_true(fabs(b[1].error_s - 1.0) < T_REL);
    assert_int_equal(coord_rounds_plan(&cfg, b, 2, c, &err), 0);
    assert_true(fabs(c[1].pred_s - 13.0) < T_REL);
    // 5 of 10 minibatches trained: predicted 0.5 + 5 * 0.5 = 3 s for them, measured 3.3 s.
    coord_rounds_choice_t ten = {.mode = 0, .minibatches = 10, .pred_s = 5.5};
    ratio = coord_rounds_correct(&b[0], &ten, 5, 3.3);
    assert_true(fabs(ratio - 1.1) < T_REL);
    assert_true(fabs(b[0].error_s - 0.3) < T_REL);
    // Maxn and deadline see the warm-up too.
    cfg.policy = JF_ROUNDS_DEADLINE;
    cfg.deadline_us = 14 * 1000000LL;
    assert_int_equal(coord_rounds_plan(&cfg, b, 2, c, &err), 0);
    assert_true(c[1].meets);
    cfg.deadline_us = 12 * 1000000LL; // 13 s needed
    assert_int_equal(coord_rounds_plan(&cfg, b, 2, c, &err), 0);
    assert_false(c[1].meets);
}

// The warm-up term from the profiling runs' measurements: the median of warm-up times CPU clock
// (s x GHz), and the largest relative distance of one from it as its error.
static void test_warmup_estimate(void **state)
{
    (void) state;
    // 0.3 s at 1 GHz, 0.1 s at 2 GHz, 0.9 s at 1 GHz, 0.2 s at 1 GHz: 0.3, 0.2, 0.9, 0.2 s x GHz.
    double extra[4] = {0.3, 0.1, 0.9, 0.2};
    const double ghz[4] = {1.0, 2.0, 1.0, 1.0};
    double w = 0.0, e = 0.0;
    assert_int_equal(coord_rounds_warmup_estimate(extra, ghz, 4, &w, &e), 0);
    assert_true(fabs(w - 0.25) < T_REL);
    assert_true(fabs(e - 0.65 / 0.25) < T_REL);
    double odd[3] = {0.4, -0.1, 0.25};
    const double ghz3[3] = {1.0, 1.0, 2.0};
    assert_int_equal(coord_rounds_warmup_estimate(odd, ghz3, 3, &w, &e), 0);
    assert_true(fabs(w - 0.4) < T_REL);
    assert_true(fabs(e - 0.5 / 0.4) < T_REL);
    w = 7.0;
    assert_int_equal(coord_rounds_warmup_estimate(odd, ghz3, 0, &w, &e), -ENOENT);
    assert_true(w == 7.0); // nothing measured: nothing written
    double neg[1] = {-0.2};
    assert_int_equal(coord_rounds_warmup_estimate(neg, ghz3, 1, &w, &e), -ENOENT);
    assert_true(w == 7.0); // no positive warm-up: no term
}

// A board that trained fewer minibatches than planned ran out of its shard: no later plan gives
// it more than it trained, so equal-finish does not raise its count past its shard to reach the
// window, and the configured count is capped too.
static void test_shard_cap(void **state)
{
    (void) state;
    coord_rounds_mode_t fast[1] = {{.mode_id = 0, .minibatch_s = 1.0, .power_w = 10.0}};
    coord_rounds_mode_t slow[1] = {{.mode_id = 0, .minibatch_s = 2.0, .power_w = 5.0}};
    coord_rounds_board_t b[2] = {{.name = "fast", .modes = fast, .n_modes = 1},
                                 {.name = "slow", .modes = slow, .n_modes = 1}};
    jf_rounds_t cfg = t_cfg(JF_ROUNDS_EQUAL_FINISH);
    cfg.local_count = 10; // slow: 20 s; window [18, 20] s: fast needs 18 minibatches
    cfg.spread_pct = 10.0;
    coord_rounds_choice_t c[2];
    jf_err_t err = {0};
    assert_int_equal(coord_rounds_plan(&cfg, b, 2, c, &err), 0);
    assert_int_equal(c[0].minibatches, 18);
    assert_true(c[0].meets);
    // Its shard held 12: it trained 12 in 12 s, as predicted per minibatch.
    double ratio = coord_rounds_correct(&b[0], &c[0], 12, 12.0);
    assert_true(fabs(ratio - 1.0) < T_REL);
    assert_int_equal(b[0].max_minibatches, 12);
    assert_int_equal(coord_rounds_plan(&cfg, b, 2, c, &err), 0);
    assert_int_equal(c[0].minibatches, 12); // not 18: the window cannot be met
    assert_false(c[0].meets);
    assert_true(fabs(c[0].pred_s - 12.0) < T_REL);
    // The configured count itself is capped: 10 asked of a board whose shard holds 6.
    b[1].max_minibatches = 6;
    assert_int_equal(coord_rounds_plan(&cfg, b, 2, c, &err), 0);
    assert_int_equal(c[1].minibatches, 6);
    assert_true(fabs(c[1].pred_s - 12.0) < T_REL);
    // A board that trained what it was asked gets no cap.
    coord_rounds_board_t free_b = b[1];
    free_b.max_minibatches = 0;
    coord_rounds_choice_t asked = {.mode = 0, .minibatches = 10, .pred_s = 20.0};
    (void) coord_rounds_correct(&free_b, &asked, 10, 20.0);
    assert_int_equal(free_b.max_minibatches, 0);
}

// Equal-finish keeps a board's last measured mode and count while its corrected prediction
// stays in the window, even when another mode there would cost less; the margin is the largest
// measured error, which a later smaller error does not lower.
static void test_keep_last(void **state)
{
    (void) state;
    coord_rounds_mode_t fast[2] = {{.mode_id = 0, .minibatch_s = 0.95, .power_w = 6.0},
                                   {.mode_id = 1, .minibatch_s = 0.98, .power_w = 5.0}};
    coord_rounds_mode_t slow[1] = {{.mode_id = 0, .minibatch_s = 1.0, .power_w = 5.0}};
    coord_rounds_board_t b[2] = {{.name = "fast", .modes = fast, .n_modes = 2},
                                 {.name = "slow", .modes = slow, .n_modes = 1}};
    jf_rounds_t cfg = t_cfg(JF_ROUNDS_EQUAL_FINISH);
    cfg.local_count = 10; // slow: 10 s; window [9, 10] s
    cfg.spread_pct = 10.0;
    coord_rounds_choice_t c[2];
    jf_err_t err = {0};
    coord_rounds_set_warmup(&b[0], 0.0, 0.0);
    b[0].error_s = 0.4; // a warm-up estimate: the first measurement replaces it
    assert_int_equal(coord_rounds_plan(&cfg, b, 2, c, &err), 0);
    assert_int_equal(c[0].mode, 1); // 9.8 s at 49 J against 9.5 s at 57 J
    // Measured 9.7 s: mode 1 is now 9.7 s, mode 0 9.403 s; the error 0.1 s replaces 0.4.
    (void) coord_rounds_correct(&b[0], &c[0], 10, 9.7);
    assert_true(fabs(b[0].error_s - 0.1) < T_REL);
    assert_true(b[0].has_last);
    assert_int_equal(b[0].last_mode, 1);
    assert_int_equal(b[0].last_m, 10);
    // Make mode 0 the cheaper one in the window (lower edge 0.9 * 10.1 + 0.1 = 9.19 s): the
    // planner still keeps mode 1, which fits.
    fast[0].power_w = 1.0;
    assert_int_equal(coord_rounds_plan(&cfg, b, 2, c, &err), 0);
    assert_int_equal(c[0].mode, 1);
    assert_int_equal(c[0].minibatches, 10);
    assert_true(c[0].meets);
    // A smaller error later does not lower the margin.
    (void) coord_rounds_correct(&b[0], &c[0], 10, 9.72);
    assert_true(fabs(b[0].error_s - 0.1) < T_REL);
    // When the kept choice leaves the window (the slow board is now 15 s), the window is
    // searched again.
    slow[0].minibatch_s = 1.5;
    b[0].error_s = 0.0;
    b[1].error_s = 0.0;
    assert_int_equal(coord_rounds_plan(&cfg, b, 2, c, &err), 0);
    assert_true(c[0].pred_s >= 13.5 - 1e-9 && c[0].pred_s <= 15.0 + 1e-9);
    assert_true(c[0].minibatches > 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_finish_brute_force),
        cmocka_unit_test(test_deadline_brute_force),
        cmocka_unit_test(test_deadline_missed),
        cmocka_unit_test(test_maxn_and_budget),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_equal_finish_more_minibatches),
        cmocka_unit_test(test_orin_equal_finish),
        cmocka_unit_test(test_correct),
        cmocka_unit_test(test_equal_finish_margin),
        cmocka_unit_test(test_warmup),
        cmocka_unit_test(test_warmup_estimate),
        cmocka_unit_test(test_shard_cap),
        cmocka_unit_test(test_keep_last),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
