/* The power side of the model (docs/simulator.md, "Power"): each rail's idle power plus its
 * shares of the dynamic power of the CPU cores, the GPU and DRAM traffic, averaged over the
 * epoch. Dynamic power scales with utilisation and with (f / f_max)^dvfs_exponent. */
#include "sim_model_internal.h"

#include <math.h>
#include <stdio.h>

// The dynamic power of each component averaged over e2e_s, mW.
static void s_dynamic_mw(const sim_ctx_t *ctx, const sim_totals_t *t, double e2e_s,
                         double ret_mw[SIM_LOAD_COUNT])
{
    const sim_board_params_t *b = ctx->board;
    const sim_op_t *op = &ctx->in->op;
    double gamma = ctx->g->dvfs_exponent;
    // The busy cores of sim_epoch_out_t.cpu_busy_cores (the same expression): the training
    // process keeps its cores busy (dispatch, then spinning on the GPU, CUDA's default on
    // Jetson); workers add their decoding time.
    double cores = fmin(op->n_cores, ctx->g->main_process_cores + t->loader_cpu_s / e2e_s);
    ret_mw[SIM_LOAD_CPU] =
        cores * b->dynamic_mw[SIM_LOAD_CPU] * pow((double) op->cpu_hz / b->cpu_max_hz, gamma);
    double gpu_cores = op->gpu_cores > 0 ? op->gpu_cores : b->gpu_cuda_cores;
    double gpu_share = gpu_cores / b->gpu_cuda_cores;
    // While its kernels wait on memory the GPU draws gpu_memory_stall_power of its dynamic
    // power (1 on families without evidence: busy is busy).
    ret_mw[SIM_LOAD_GPU] = t->gpu_powered_s / e2e_s * gpu_share * b->dynamic_mw[SIM_LOAD_GPU] *
                           pow((double) op->gpu_hz / b->gpu_max_hz, gamma);
    // DRAM energy is per byte moved: power follows the traffic rate, not the EMC clock.
    ret_mw[SIM_LOAD_DRAM] =
        t->dram_bytes / e2e_s / b->dram_bytes_per_s * b->dynamic_mw[SIM_LOAD_DRAM];
}

void sim_power_rails(const sim_ctx_t *ctx, const sim_totals_t *totals, double e2e_s,
                     sim_epoch_out_t *out)
{
    const sim_board_params_t *b = ctx->board;
    double dyn_mw[SIM_LOAD_COUNT] = {0.0};
    if (e2e_s > 0.0) {
        s_dynamic_mw(ctx, totals, e2e_s, dyn_mw);
    }
    out->n_rails = b->n_rails;
    for (size_t i = 0; i < b->n_rails; i++) {
        const sim_rail_params_t *rail = &b->rails[i];
        double mw = rail->idle_mw * ctx->in->factors.idle_power;
        for (int c = 0; c < SIM_LOAD_COUNT; c++) {
            mw += rail->share[c] * dyn_mw[c];
        }
        (void) snprintf(out->rails[i].name, sizeof out->rails[i].name, "%s", rail->name);
        out->rails[i].power_mw = llround(mw);
    }
}
