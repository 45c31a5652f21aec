/* Unit tests of coord_rounds_boards_load (coordinator/rounds/coord_rounds_boards.c) on a store
 * built with the store API: a sweep of 24 custom points on nx-01 whose epoch times and powers
 * follow known formulas, linear time and power models fitted on them and stored at board scope.
 * The board's table must hold every point of the measured grid, with the minibatches per epoch
 * of the rounds' batch size and each point's time and power as the formulas give them; a board
 * without models gets no modes; a newer model wins; runs that are not plain training (idle,
 * roofline) in the sweep change nothing; the warm-up term is measured from the runs' epoch-0
 * minibatch records. */
#include "coord_rounds_plan.h"

#include "coord_model.h"
#include "store_support.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_CORES   3
#define T_CLOCKS  2
#define T_RUNS    (T_CORES * T_CLOCKS * T_CLOCKS * T_CLOCKS)
#define T_SAMPLES 6000 // samples per epoch
#define T_BATCH   32   // tstore_spec's batch size, also the rounds'
#define T_GHZ     1e9

static const int t_cores[T_CORES] = {2, 4, 6};
static const int64_t t_cpu[T_CLOCKS] = {1190400000, 1907200000};
static const int64_t t_gpu[T_CLOCKS] = {510000000, 1109250000};
static const int64_t t_emc[T_CLOCKS] = {1065600000, 1600000000};

// Epoch time (µs) and power (mW) of a point: inside the linear models' feature spans, so the
// fits reproduce them.
static double t_time_us(const coord_op_t *op)
{
    return 1e6 * (0.5 + 2.0 * T_GHZ / (double) op->cpu_hz + 3.0 * T_GHZ / (double) op->gpu_hz +
                  1.0 * T_GHZ / (double) op->emc_hz);
}

static double t_power_mw(const coord_op_t *op)
{
    return 2000.0 + 1500.0 * (double) op->gpu_hz / T_GHZ + 300.0 * (double) op->emc_hz / T_GHZ;
}

static coord_op_t t_op(size_t i)
{
    return (coord_op_t){.cores = t_cores[i % T_CORES],
                        .cpu_hz = t_cpu[i / T_CORES % T_CLOCKS],
                        .gpu_hz = t_gpu[i / T_CORES / T_CLOCKS % T_CLOCKS],
                        .emc_hz = t_emc[i / T_CORES / T_CLOCKS / T_CLOCKS],
                        .workers = 2,
                        .batch_size = T_BATCH};
}

// The warm-up of run i in test_warmup_measured: its epoch 0's first T_LOCAL minibatches take
// this much longer than T_LOCAL of its epoch 1's: (0.30 .. 0.34) s x GHz over its CPU clock.
static double t_warmup_s(size_t i, const coord_op_t *op)
{
    return (0.3 + 0.01 * (double) (i % 5)) / ((double) op->cpu_hz / T_GHZ);
}

#define T_LOCAL 10 // the rounds' local minibatches

// Epoch 0's first T_LOCAL minibatch records: each at epoch 1's mean time per minibatch, the
// first one warmup_s longer.
static void t_store_minibatches(coord_store_t *st, const char *run, int64_t a, double e2e_us,
                                double warmup_s)
{
    double n1 = ceil((double) T_SAMPLES / T_BATCH);
    for (int k = 0; k < T_LOCAL; k++) {
        jf_minibatch_rec_t mb = {.epoch = 0,
                                 .index = k,
                                 .samples = T_BATCH,
                                 .fetch_stall_us = k == 0 ? (int64_t) (warmup_s * 1e6) : 0,
                                 .compute_us = (int64_t) (e2e_us / n1)};
        jf_err_t err = {0};
        assert_int_equal(coord_store_add_minibatch(st, run, a, &mb, &err), 0);
    }
}

static void t_store_run(coord_store_t *st, const jf_run_spec_t *spec, const coord_op_t *op,
                        int64_t samples, double warmup_s)
{
    jf_err_t err = {0};
    int64_t a = tstore_assign(st, spec->run_id);
    assert_int_equal(coord_store_run_start(st, spec->run_id, a, &err), 0);
    if (warmup_s > 0.0) {
        t_store_minibatches(st, spec->run_id, a, t_time_us(op), warmup_s);
    }
    for (int e = 0; e < 2; e++) {
        jf_epoch_rec_t rec = tstore_epoch(e, (int64_t) t_time_us(op), 1.0);
        rec.samples = samples;
        rec.has_energy = true;
        rec.avg_power_mw = t_power_mw(op);
        rec.energy_mj = rec.avg_power_mw * (double) rec.e2e_us / 1e6;
        assert_int_equal(coord_store_add_epoch(st, spec->run_id, a, &rec, &err), 0);
    }
    assert_int_equal(coord_store_run_finish(st, spec->run_id, a, true, NULL, NULL, &err), 0);
}

// Fits a linear model of target on the points and stores it for nx-01; returns its id.
static int64_t t_put_model(coord_store_t *st, coord_target_t target, double scale)
{
    coord_point_t pts[T_RUNS];
    for (size_t i = 0; i < T_RUNS; i++) {
        pts[i].op = t_op(i);
        pts[i].y =
            scale * (target == COORD_TARGET_TIME ? t_time_us(&pts[i].op) : t_power_mw(&pts[i].op));
    }
    coord_model_opts_t o = {
        .kind = COORD_MODEL_LINEAR, .target = target, .log = COORD_MODEL_LOG_OFF, .skip_cv = true};
    jf_err_t err = {0};
    coord_model_t *m = coord_model_fit(&o, pts, T_RUNS, &err);
    if (!m) {
        fail_msg("fit: %s", err.msg);
    }
    json_t *params = coord_model_params_json(m);
    coord_model_row_t row = {.training_runs = T_RUNS, .cv_mape_pct = NAN};
    (void) snprintf(row.name, sizeof row.name, "t-%s", coord_target_name(target));
    (void) snprintf(row.sweep, sizeof row.sweep, "smoke");
    (void) snprintf(row.scope, sizeof row.scope, "board");
    (void) snprintf(row.scope_value, sizeof row.scope_value, TSTORE_BOARD);
    (void) snprintf(row.workload, sizeof row.workload, "lenet5-mnist");
    (void) snprintf(row.target, sizeof row.target, "%s", coord_target_name(target));
    (void) snprintf(row.kind, sizeof row.kind, "linear");
    row.features = strdup("{\"inputs\":[],\"workers\":2,\"batch_size\":32}");
    row.params = json_dumps(params, JSON_COMPACT);
    int64_t id = 0;
    assert_int_equal(coord_store_model_put(st, &row, &id, &err), 0);
    coord_model_row_fini(&row);
    json_decref(params);
    coord_model_destroy(&m);
    return id;
}

#define T_OTHERS 2 // runs of other kinds t_build_with can add

// The sweep of T_RUNS training points on nx-01 (with minibatch records when warmup), and, when
// others, an idle baseline and a roofline run on it at a point outside the grid with ten times
// the samples: were their epochs taken for training epochs, the grid and the minibatches per
// epoch would change.
static void t_build_with(coord_store_t *st, bool warmup, bool others)
{
    static jf_run_spec_t specs[T_RUNS + T_OTHERS];
    size_t n = T_RUNS + (others ? T_OTHERS : 0);
    for (size_t i = 0; i < n; i++) {
        coord_op_t op =
            i < T_RUNS
                ? t_op(i)
                : (coord_op_t){
                      .cores = 1, .cpu_hz = 729600000, .gpu_hz = 204000000, .emc_hz = 204000000};
        specs[i] = tstore_spec(TSTORE_BOARD, i < T_RUNS ? 0 : (int) i);
        specs[i].custom = (jf_run_custom_t){
            .n_cores = op.cores, .cpu_hz = op.cpu_hz, .gpu_hz = op.gpu_hz, .emc_hz = op.emc_hz};
        specs[i].idle_s = i == T_RUNS ? 30 : 0;
        specs[i].roofline = i == T_RUNS + 1;
        jf_run_spec_compute_id(&specs[i]);
    }
    (void) tstore_put(st, specs, n);
    for (size_t i = 0; i < n; i++) {
        coord_op_t op =
            i < T_RUNS
                ? t_op(i)
                : (coord_op_t){
                      .cores = 1, .cpu_hz = 729600000, .gpu_hz = 204000000, .emc_hz = 204000000};
        t_store_run(st, &specs[i], &op, i < T_RUNS ? T_SAMPLES : 10 * T_SAMPLES,
                    warmup || i >= T_RUNS ? t_warmup_s(i, &op) * (i < T_RUNS ? 1.0 : 100.0) : 0.0);
    }
}

static void t_build(coord_store_t *st)
{
    t_build_with(st, false, false);
}

static jf_board_spec_t t_board(const char *name, jf_board_type_t type)
{
    jf_board_spec_t b = {.type = type, .simulates = type};
    const jf_board_family_t *fam = jf_board_family(type);
    (void) snprintf(b.name, sizeof b.name, "%s", name);
    b.n_modes = fam->n_modes;
    memcpy(b.modes, fam->modes, sizeof b.modes);
    return b;
}

static jf_rounds_t t_cfg(void)
{
    jf_rounds_t r = {.batch_size = T_BATCH,
                     .workers = 2,
                     .local_count = T_LOCAL,
                     .policy = JF_ROUNDS_EQUAL_FINISH,
                     .spread_pct = 5.0};
    (void) snprintf(r.workload, sizeof r.workload, "lenet5-mnist");
    return r;
}

static void test_modes_from_models(void **state)
{
    tstore_ctx_t *ctx = *state;
    t_build(ctx->store);
    int64_t tid = t_put_model(ctx->store, COORD_TARGET_TIME, 1.0);
    int64_t pid = t_put_model(ctx->store, COORD_TARGET_POWER, 1.0);
    jf_board_spec_t specs[2] = {t_board(TSTORE_BOARD, JF_BOARD_XAVIER_NX),
                                t_board("nano-09", JF_BOARD_NANO)};
    const jf_board_spec_t *const ptrs[2] = {&specs[0], &specs[1]};
    jf_rounds_t cfg = t_cfg();
    coord_rounds_board_t *boards = NULL;
    size_t n = 0;
    jf_err_t err = {0};
    if (coord_rounds_boards_load(ctx->store, &cfg, ptrs, 2, &boards, &n, &err) != 0) {
        fail_msg("%s", err.msg);
    }
    assert_int_equal(n, 2);
    const coord_rounds_board_t *b = &boards[0];
    assert_int_equal(b->n_modes, T_RUNS); // the grid of the measured values: all 24 points
    assert_int_equal(b->time_model, tid);
    assert_int_equal(b->power_model, pid);
    assert_int_equal(b->minibatches_per_epoch, (T_SAMPLES + T_BATCH - 1) / T_BATCH);
    assert_int_equal(b->maxn_mode_id, 8); // MODE_20W_6CORE: no MAXN, the most watts and cores
    for (size_t k = 0; k < b->n_modes; k++) {
        const coord_rounds_mode_t *m = &b->modes[k];
        assert_true(m->custom);
        assert_int_equal(m->mode_id, 8);
        assert_string_equal(m->mode, "MODE_20W_6CORE");
        double want_s = t_time_us(&m->op) / 1e6 / (double) b->minibatches_per_epoch;
        double want_w = t_power_mw(&m->op) / 1e3;
        if (fabs(m->minibatch_s - want_s) > 1e-3 * want_s ||
            fabs(m->power_w - want_w) > 1e-3 * want_w) {
            fail_msg("mode %zu: %.6g s %.6g W, expected %.6g s %.6g W", k, m->minibatch_s,
                     m->power_w, want_s, want_w);
        }
    }
    assert_int_equal(b->warmup_runs, 0); // no minibatch records: no warm-up term
    assert_true(b->warmup_ghz_s == 0.0 && b->modes[0].warmup_s == 0.0);
    assert_int_equal(boards[1].n_modes, 0); // no model for nano-09: no modes, not an error
    assert_int_equal(boards[1].time_model, 0);
    assert_int_equal(boards[1].maxn_mode_id, 0); // MAXN
    coord_rounds_boards_free(&boards, n);
    assert_null(boards);
}

// The newest model of a target is the one used.
static void test_newest_model(void **state)
{
    tstore_ctx_t *ctx = *state;
    t_build(ctx->store);
    (void) t_put_model(ctx->store, COORD_TARGET_TIME, 1.0);
    (void) t_put_model(ctx->store, COORD_TARGET_POWER, 1.0);
    int64_t tid = t_put_model(ctx->store, COORD_TARGET_TIME, 2.0); // twice as slow
    jf_board_spec_t spec = t_board(TSTORE_BOARD, JF_BOARD_XAVIER_NX);
    const jf_board_spec_t *const ptrs[1] = {&spec};
    jf_rounds_t cfg = t_cfg();
    coord_rounds_board_t *boards = NULL;
    size_t n = 0;
    jf_err_t err = {0};
    assert_int_equal(coord_rounds_boards_load(ctx->store, &cfg, ptrs, 1, &boards, &n, &err), 0);
    assert_int_equal(boards[0].time_model, tid);
    const coord_rounds_mode_t *m = &boards[0].modes[0];
    double want_s = 2.0 * t_time_us(&m->op) / 1e6 / (double) boards[0].minibatches_per_epoch;
    assert_true(fabs(m->minibatch_s - want_s) <= 1e-3 * want_s);
    coord_rounds_boards_free(&boards, n);
}

// Runs of other kinds in the models' sweep (an idle baseline, a roofline run) change neither the
// grid, nor the minibatches per epoch, nor the warm-up term.
static void test_other_kinds_left_out(void **state)
{
    tstore_ctx_t *ctx = *state;
    t_build_with(ctx->store, true, true);
    (void) t_put_model(ctx->store, COORD_TARGET_TIME, 1.0);
    (void) t_put_model(ctx->store, COORD_TARGET_POWER, 1.0);
    jf_board_spec_t spec = t_board(TSTORE_BOARD, JF_BOARD_XAVIER_NX);
    const jf_board_spec_t *const ptrs[1] = {&spec};
    jf_rounds_t cfg = t_cfg();
    coord_rounds_board_t *boards = NULL;
    size_t n = 0;
    jf_err_t err = {0};
    if (coord_rounds_boards_load(ctx->store, &cfg, ptrs, 1, &boards, &n, &err) != 0) {
        fail_msg("%s", err.msg);
    }
    assert_int_equal(boards[0].n_modes, T_RUNS);
    assert_int_equal(boards[0].minibatches_per_epoch, (T_SAMPLES + T_BATCH - 1) / T_BATCH);
    assert_int_equal(boards[0].warmup_runs, T_RUNS);
    assert_true(fabs(boards[0].warmup_ghz_s - 0.32) < 1e-3);
    assert_true(fabs(boards[0].error_s - 0.02 / 1.1904) < 1e-3); // not the others' 30 s
    coord_rounds_boards_free(&boards, n);
}

// The warm-up term: per run, its epoch 0's first T_LOCAL minibatches against T_LOCAL at its
// epoch 1's mean, times its CPU clock; the median over the runs (0.30 x 5, 0.31 x 5, 0.32 x 5,
// 0.33 x 5, 0.34 x 4: 0.32 s x GHz) and the largest relative distance from it (0.02 / 0.32); each
// mode's warm-up is 0.32 s x GHz over its CPU clock, the board's error that distance at the
// slowest clock (1.1904 GHz).
static void test_warmup_measured(void **state)
{
    tstore_ctx_t *ctx = *state;
    t_build_with(ctx->store, true, false);
    (void) t_put_model(ctx->store, COORD_TARGET_TIME, 1.0);
    (void) t_put_model(ctx->store, COORD_TARGET_POWER, 1.0);
    jf_board_spec_t spec = t_board(TSTORE_BOARD, JF_BOARD_XAVIER_NX);
    const jf_board_spec_t *const ptrs[1] = {&spec};
    jf_rounds_t cfg = t_cfg();
    coord_rounds_board_t *boards = NULL;
    size_t n = 0;
    jf_err_t err = {0};
    if (coord_rounds_boards_load(ctx->store, &cfg, ptrs, 1, &boards, &n, &err) != 0) {
        fail_msg("%s", err.msg);
    }
    print_message("rounds_boards_warmup_ghz_s=%.6f rounds_boards_warmup_error_s=%.6f runs=%zu\n",
                  boards[0].warmup_ghz_s, boards[0].error_s, boards[0].warmup_runs);
    assert_int_equal(boards[0].warmup_runs, T_RUNS);
    assert_true(fabs(boards[0].warmup_ghz_s - 0.32) < 1e-3);
    assert_true(fabs(boards[0].error_s - 0.02 / 1.1904) < 1e-3);
    for (size_t k = 0; k < boards[0].n_modes; k++) {
        const coord_rounds_mode_t *m = &boards[0].modes[k];
        assert_true(fabs(m->warmup_s - 0.32 / ((double) m->op.cpu_hz / T_GHZ)) < 1e-3);
    }
    coord_rounds_boards_free(&boards, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_modes_from_models, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_newest_model, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_other_kinds_left_out, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_warmup_measured, tstore_setup, tstore_teardown),
    };
    int rc = tstore_main_begin();
    if (rc != 0) {
        return rc;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    tstore_main_end();
    return rc;
}
