/* Unit: the simulated boards' idle power (agent/sim/sim_idle.c, docs/baseline.md). Each rail
 * against the equation computed here from the parameter file; DVFS off, telemetry and gated
 * cores move the input rail the way the equation says; bad input is -EINVAL naming the board. */
#include "sim_idle.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#define T_NX_DEFAULT 2 // MODE_15W_6CORE
#define T_NX_LOWEST  3 // MODE_10W_2CORE

typedef struct t_ctx {
    sim_model_t *model;
} t_ctx_t;

static int t_setup(void **state)
{
    static t_ctx_t ctx;
    jf_err_t err = {0};
    ctx.model = sim_model_load(SIM_PARAMS_PATH, &err);
    *state = &ctx;
    return ctx.model ? 0 : -1;
}

static int t_teardown(void **state)
{
    t_ctx_t *ctx = *state;
    sim_model_destroy(&ctx->model);
    return 0;
}

static sim_idle_in_t t_in(const t_ctx_t *ctx, int mode, bool dvfs_off, int hz)
{
    sim_idle_in_t in = {.board_type = JF_BOARD_XAVIER_NX,
                        .dvfs_off = dvfs_off,
                        .telemetry_hz = hz,
                        .factors = {.compute = 1, .storage = 1, .idle_power = 1}};
    jf_err_t err = {0};
    assert_int_equal(sim_model_mode_op(ctx->model, JF_BOARD_XAVIER_NX, mode, &in.op, &err), 0);
    return in;
}

// The equation of docs/baseline.md, here from the parameters, for rail i.
static double t_expected_mw(const t_ctx_t *ctx, const sim_idle_in_t *in, size_t i)
{
    const sim_params_t *p = sim_model_params(ctx->model);
    const sim_board_params_t *b = &p->boards[in->board_type];
    double g = p->model.dvfs_exponent;
    double core = b->dynamic_mw[SIM_LOAD_CPU] * pow((double) in->op.cpu_hz / b->cpu_max_hz, g);
    double cpu = (in->dvfs_off ? 0.10 * in->op.n_cores * core : 0.0) +
                 in->telemetry_hz * 29e-6 * core -
                 0.05 * (b->cpu_cores - in->op.n_cores) * b->dynamic_mw[SIM_LOAD_CPU];
    double gpu = in->dvfs_off ? 0.10 * b->dynamic_mw[SIM_LOAD_GPU] *
                                    pow((double) in->op.gpu_hz / b->gpu_max_hz, g)
                              : 0.0;
    const sim_rail_params_t *r = &b->rails[i];
    return r->idle_mw + r->share[SIM_LOAD_CPU] * cpu + r->share[SIM_LOAD_GPU] * gpu;
}

static void test_equation(void **state)
{
    t_ctx_t *ctx = *state;
    const int modes[] = {T_NX_DEFAULT, T_NX_LOWEST};
    for (int m = 0; m < 2; m++) {
        for (int d = 0; d < 2; d++) {
            sim_idle_in_t in = t_in(ctx, modes[m], d, 10);
            sim_epoch_out_t out;
            jf_err_t err = {0};
            assert_int_equal(sim_idle_rails(ctx->model, &in, &out, &err), 0);
            assert_true(out.n_rails > 0);
            for (size_t i = 0; i < out.n_rails; i++) {
                double want = t_expected_mw(ctx, &in, i);
                assert_true(fabs((double) out.rails[i].power_mw - want) <= 0.5);
            }
            assert_true(fabs(out.cpu_busy_cores - 10 * 29e-6) < 1e-12);
        }
    }
}

static int64_t t_input_mw(const t_ctx_t *ctx, int mode, bool dvfs_off, int hz)
{
    sim_idle_in_t in = t_in(ctx, mode, dvfs_off, hz);
    sim_epoch_out_t out;
    assert_int_equal(sim_idle_rails(ctx->model, &in, &out, NULL), 0);
    assert_string_equal(out.rails[0].name, "VDD_IN");
    return out.rails[0].power_mw;
}

static void test_directions(void **state)
{
    t_ctx_t *ctx = *state;
    // Pinned clocks cost power; gated cores save it; sampling costs (a little) CPU time.
    assert_true(t_input_mw(ctx, T_NX_DEFAULT, true, 0) > t_input_mw(ctx, T_NX_DEFAULT, false, 0));
    assert_true(t_input_mw(ctx, T_NX_LOWEST, false, 0) < t_input_mw(ctx, T_NX_DEFAULT, false, 0));
    assert_true(t_input_mw(ctx, T_NX_DEFAULT, false, 50) >=
                t_input_mw(ctx, T_NX_DEFAULT, false, 0));
}

static void test_bad_input(void **state)
{
    t_ctx_t *ctx = *state;
    sim_idle_in_t in = t_in(ctx, T_NX_DEFAULT, false, 0);
    sim_epoch_out_t out;
    jf_err_t err = {0};
    in.board_type = JF_BOARD_HOST;
    assert_int_equal(sim_idle_rails(ctx->model, &in, &out, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "'host'"));
    in = t_in(ctx, T_NX_DEFAULT, false, 0);
    in.op.n_cores = 99;
    assert_int_equal(sim_idle_rails(ctx->model, &in, &out, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "xavier-nx"));
    in = t_in(ctx, T_NX_DEFAULT, false, -1);
    assert_int_equal(sim_idle_rails(ctx->model, &in, &out, &err), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equation),
        cmocka_unit_test(test_directions),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, t_setup, t_teardown);
}
