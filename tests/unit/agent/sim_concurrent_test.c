/* Unit tests for the concurrent training and inference model (agent/sim/sim_concurrent.c,
 * docs/simulator.md "Concurrent training and inference"): the time budget adds up, the forward
 * cost follows the parameter file's shares (recomputed here by another route), arrivals are
 * Poisson at the rate, latencies are ordered and bounded where the queue is simple, power and
 * memory respond, bad input is refused. Prints its figures as name=value lines. */
#include "jf_board.h"
#include "sim_concurrent.h"
#include "sim_params.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define T_US_PER_S  1e6
#define T_SEED      11
#define T_RATE      30.0   // requests per s
#define T_BUDGET_US 200000 // 200 ms
#define T_SCALE     0.1    // of CIFAR-10: 5000 samples, 313 minibatches

static sim_model_t *t_model(void)
{
    jf_err_t err = {0};
    sim_model_t *model = sim_model_load(SIM_PARAMS_PATH, &err);
    if (!model) {
        fail_msg("cannot load %s: %s", SIM_PARAMS_PATH, err.msg);
    }
    return model;
}

static sim_concurrent_in_t t_in(const sim_model_t *model, jf_board_type_t type, int mode_id,
                                int infer_batch)
{
    sim_concurrent_in_t in = {.train = {.board_type = type,
                                        .model = "resnet18",
                                        .dataset = "cifar10",
                                        .medium = "nvme",
                                        .workers = 2,
                                        .prefetch = 2,
                                        .batch_size = 16,
                                        .dataset_scale = T_SCALE,
                                        .resident_fraction = 1.0,
                                        .factors = SIM_BOARD_FACTORS_NEUTRAL,
                                        .run_seed = T_SEED},
                              .infer_model = "mobilenetv3",
                              .infer_batch = infer_batch,
                              .rate_per_s = T_RATE,
                              .budget_us = T_BUDGET_US,
                              .seed = T_SEED};
    jf_err_t err = {0};
    if (sim_model_mode_op(model, type, mode_id, &in.train.op, &err) != 0) {
        fail_msg("%s", err.msg);
    }
    return in;
}

static void t_eval(const sim_model_t *model, const sim_concurrent_in_t *in,
                   sim_concurrent_out_t *out)
{
    jf_err_t err = {0};
    if (sim_concurrent_epoch(model, in, out, &err) != 0) {
        fail_msg("%s", err.msg);
    }
    assert_false(out->oom);
}

static void test_time_adds_up_and_poisson_arrivals(void **state)
{
    (void) state;
    sim_model_t *model = t_model();
    sim_concurrent_in_t in = t_in(model, JF_BOARD_ORIN_AGX, 0, 4);
    sim_concurrent_out_t out = {0};
    t_eval(model, &in, &out);
    // Every microsecond of the epoch is training, inference or a switch (rounding: 1 us each).
    assert_true(llabs(out.e2e_us - (out.train_us + out.infer_us + out.switch_us)) <= 3);
    double expected = T_RATE * (double) out.e2e_us / T_US_PER_S;
    printf("concurrent_requests=%lld concurrent_requests_expected=%.1f\n", (long long) out.requests,
           expected);
    assert_true(fabs((double) out.requests - expected) < 5.0 * sqrt(expected));
    // Full minibatches of 4 while training, then one partial one at most.
    assert_true(out.infer_batches * 4 >= out.requests);
    assert_true((out.infer_batches - 1) * 4 < out.requests);
    assert_true(out.latency_p50_us <= out.latency_p99_us);
    assert_true(out.latency_p99_us <= out.latency_max_us);
    assert_int_equal(out.samples, 5000);
    assert_true(fabs(out.train_samples_per_s - 5000.0 / (out.e2e_us / T_US_PER_S)) < 0.01);
    // A bounded profile: the first 50 minibatches, about their share of the time.
    in.max_batches = 50;
    sim_concurrent_out_t part = {0};
    t_eval(model, &in, &part);
    assert_int_equal(part.batches, 50);
    assert_int_equal(part.samples, 800);
    assert_true(part.e2e_us < out.e2e_us * 50 / 313 * 1.2);
    assert_true(part.e2e_us > out.e2e_us * 50 / 313 * 0.8);
    sim_model_destroy(&model);
}

// The forward cost recomputed from the parameter file: the roofline of forward_flop_share of the
// training FLOPs and the forward passes over activations and weights, at MAXN on the AGX Orin
// (GPU-bound there: the launch term is far smaller), noise off.
static void test_forward_cost_from_workload_figures(void **state)
{
    (void) state;
    sim_model_t *model = t_model();
    const sim_params_t *p = sim_model_params(model);
    const sim_board_params_t *b = &p->boards[JF_BOARD_ORIN_AGX];
    const sim_workload_params_t *w = sim_params_workload(p, "mobilenetv3", "gld23k");
    const sim_concurrent_params_t *c = &p->concurrent;
    int n = 8;
    double flops = n * w->train_flops * c->forward_flop_share;
    double bytes = c->forward_activation_traffic * n * w->activation_bytes +
                   c->forward_parameter_traffic * w->parameters * 4.0;
    double t_s = (flops / (b->gpu_cuda_cores * b->gpu_flops_per_core_cycle * b->gpu_max_hz) +
                  bytes / (b->dram_bytes_per_s * b->dram_efficiency)) /
                 (w->gpu_efficiency * b->gpu_efficiency_scale);
    sim_concurrent_in_t in = t_in(model, JF_BOARD_ORIN_AGX, 0, n);
    sim_concurrent_out_t out = {0};
    t_eval(model, &in, &out);
    printf("forward_step_us=%lld forward_step_expected_us=%.0f\n", (long long) out.infer_step_us,
           t_s * T_US_PER_S);
    assert_true(fabs(out.infer_step_us - t_s * T_US_PER_S) <= 1.0);
    sim_model_destroy(&model);
}

// Few requests, one at a time: a request waits at most the training minibatch in progress, a
// switch and its own forward pass (plus the draws' spread).
static void test_latency_bound_at_low_rate(void **state)
{
    (void) state;
    sim_model_t *model = t_model();
    sim_concurrent_in_t in = t_in(model, JF_BOARD_ORIN_AGX, 0, 1);
    in.rate_per_s = 0.5;
    sim_concurrent_out_t out = {0};
    t_eval(model, &in, &out);
    double slot_us = (double) out.train_us / (double) out.batches;
    double bound_us = 1.2 * (slot_us + out.infer_step_us) +
                      sim_model_params(model)->concurrent.switch_s * T_US_PER_S;
    printf("low_rate_latency_max_us=%lld low_rate_bound_us=%.0f\n", (long long) out.latency_max_us,
           bound_us);
    assert_true(out.requests > 0);
    assert_true(out.latency_max_us <= bound_us);
    sim_model_destroy(&model);
}

// More requests cost training throughput; a bigger budget is met by more of them; a lower mode
// draws less power; the same seed gives the same epoch.
static void test_responds_to_rate_budget_mode(void **state)
{
    (void) state;
    sim_model_t *model = t_model();
    sim_concurrent_in_t in = t_in(model, JF_BOARD_ORIN_AGX, 0, 2);
    sim_concurrent_out_t lo = {0};
    sim_concurrent_out_t hi = {0};
    t_eval(model, &in, &lo);
    in.rate_per_s = 4 * T_RATE;
    t_eval(model, &in, &hi);
    printf("train_sps_rate30=%.1f train_sps_rate120=%.1f\n", lo.train_samples_per_s,
           hi.train_samples_per_s);
    assert_true(hi.train_samples_per_s < lo.train_samples_per_s);
    in.rate_per_s = T_RATE;
    in.budget_us = 2 * T_BUDGET_US;
    sim_concurrent_out_t wide = {0};
    t_eval(model, &in, &wide);
    assert_true(wide.within_budget >= lo.within_budget);
    assert_int_equal(wide.requests, lo.requests);
    sim_concurrent_in_t low = t_in(model, JF_BOARD_ORIN_AGX, 1, 2);
    sim_concurrent_out_t lowp = {0};
    t_eval(model, &low, &lowp);
    printf("power_maxn_mw=%lld power_15w_mw=%lld\n", (long long) lo.power_mw,
           (long long) lowp.power_mw);
    assert_true(lowp.power_mw < lo.power_mw);
    assert_true(lowp.train_samples_per_s < lo.train_samples_per_s);
    sim_concurrent_out_t again = {0};
    in.budget_us = T_BUDGET_US;
    t_eval(model, &in, &again);
    assert_memory_equal(&again, &lo, sizeof lo);
    sim_model_destroy(&model);
}

static void test_memory_of_both_models(void **state)
{
    (void) state;
    sim_model_t *model = t_model();
    sim_concurrent_in_t in = t_in(model, JF_BOARD_NANO, 0, 64);
    in.train.model = "lenet5";
    in.train.dataset = "mnist";
    sim_concurrent_out_t out = {0};
    jf_err_t err = {0};
    assert_int_equal(sim_concurrent_epoch(model, &in, &out, &err), 0);
    printf("nano_need_mib=%lld nano_avail_mib=%lld\n", (long long) (out.need_bytes >> 20),
           (long long) (out.avail_bytes >> 20));
    assert_true(out.oom);
    assert_non_null(strstr(out.oom_reason, "inference mobilenetv3 at batch 64"));
    in.infer_batch = 1;
    assert_int_equal(sim_concurrent_epoch(model, &in, &out, &err), 0);
    assert_false(out.oom);
    sim_model_destroy(&model);
}

static void test_bad_input(void **state)
{
    (void) state;
    sim_model_t *model = t_model();
    struct {
        const char *infer_model;
        int batch;
        double rate;
        int64_t budget_us;
        const char *fragment;
    } rows[] = {
        {"alexnet", 4, T_RATE, T_BUDGET_US, "unknown inference model 'alexnet'"},
        {"mobilenetv3", 0, T_RATE, T_BUDGET_US, "infer_batch must be 1..4096, got 0"},
        {"mobilenetv3", 4, 0.0, T_BUDGET_US, "request rate must be in (0, 100000] per s"},
        {"mobilenetv3", 4, NAN, T_BUDGET_US, "request rate"},
        {"mobilenetv3", 4, T_RATE, 0, "latency budget must be > 0 us, got 0"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        sim_concurrent_in_t in = t_in(model, JF_BOARD_XAVIER_NX, 0, rows[i].batch);
        in.infer_model = rows[i].infer_model;
        in.rate_per_s = rows[i].rate;
        in.budget_us = rows[i].budget_us;
        in.train.dataset_scale = 1.0;
        sim_concurrent_out_t out = {0};
        jf_err_t err = {0};
        assert_int_equal(sim_concurrent_epoch(model, &in, &out, &err), -EINVAL);
        if (!strstr(err.msg, rows[i].fragment)) {
            fail_msg("row %zu: '%s' lacks '%s'", i, err.msg, rows[i].fragment);
        }
    }
    // Too many requests for one simulation is its own code: the point is too slow for the rate.
    sim_concurrent_in_t in = t_in(model, JF_BOARD_XAVIER_NX, 0, 4);
    in.rate_per_s = 90000.0;
    in.train.dataset_scale = 1.0;
    sim_concurrent_out_t out = {0};
    jf_err_t err = {0};
    assert_int_equal(sim_concurrent_epoch(model, &in, &out, &err), -E2BIG);
    assert_non_null(strstr(err.msg, "more than 5000000 requests"));
    sim_model_destroy(&model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_adds_up_and_poisson_arrivals),
        cmocka_unit_test(test_forward_cost_from_workload_figures),
        cmocka_unit_test(test_latency_bound_at_low_rate),
        cmocka_unit_test(test_responds_to_rate_budget_mode),
        cmocka_unit_test(test_memory_of_both_models),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
