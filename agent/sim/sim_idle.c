/* The idle power of a simulated board (docs/baseline.md "Simulated boards"). Per rail:
 *   rail = idle_mw x F_idle + cpu x (P_pin_cpu + P_tel - P_gated) + gpu x P_pin_gpu
 * with the rail's shares of the CPU and GPU as in the training model (docs/simulator.md
 * "Power"). Not the training epochs' power (sim_model_power.c). */
#include "sim_idle.h"

#include "jf_units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

// The CPU terms (mW, before the rail shares): pinned cores' clock power, the sampler's CPU time
// as busy-core power at the op's clock, and minus the leakage of the cores the mode gates.
static double s_cpu_mw(const sim_board_params_t *b, const sim_global_params_t *g,
                       const sim_idle_in_t *in, double *ret_busy_cores)
{
    double core_mw =
        b->dynamic_mw[SIM_LOAD_CPU] * pow((double) in->op.cpu_hz / b->cpu_max_hz, g->dvfs_exponent);
    double pinned = in->dvfs_off ? SIM_IDLE_PINNED_SHARE * in->op.n_cores * core_mw : 0.0;
    double busy = in->telemetry_hz * SIM_IDLE_SAMPLE_CPU_US / (double) JF_US_PER_S;
    int gated = b->cpu_cores - in->op.n_cores;
    double saved =
        SIM_IDLE_CORE_GATED_SHARE * (gated > 0 ? gated : 0) * b->dynamic_mw[SIM_LOAD_CPU];
    *ret_busy_cores = busy;
    return pinned + busy * core_mw - saved;
}

int sim_idle_rails(const sim_model_t *model, const sim_idle_in_t *in, sim_epoch_out_t *ret_out,
                   jf_err_t *err)
{
    const sim_params_t *p = sim_model_params(model);
    if (in->board_type < 0 || in->board_type >= JF_BOARD_TYPE_COUNT ||
        !p->boards[in->board_type].present) {
        return jf_err_set(err, -EINVAL, "sim idle: no parameters for board type '%s'",
                          jf_board_type_name(in->board_type));
    }
    const sim_board_params_t *b = &p->boards[in->board_type];
    if (in->op.n_cores < 1 || in->op.n_cores > b->cpu_cores || in->op.cpu_hz <= 0 ||
        in->op.cpu_hz > b->cpu_max_hz || in->op.gpu_hz < 0 || in->op.gpu_hz > b->gpu_max_hz ||
        in->telemetry_hz < 0) {
        return jf_err_set(err, -EINVAL, "sim idle: operating point or rate beyond the %s",
                          jf_board_type_name(in->board_type));
    }
    *ret_out = (sim_epoch_out_t){0};
    double busy = 0.0;
    double cpu_mw = s_cpu_mw(b, &p->model, in, &busy);
    double gpu_mw = in->dvfs_off
                        ? SIM_IDLE_PINNED_SHARE * b->dynamic_mw[SIM_LOAD_GPU] *
                              pow((double) in->op.gpu_hz / b->gpu_max_hz, p->model.dvfs_exponent)
                        : 0.0;
    ret_out->cpu_busy_cores = busy;
    ret_out->n_rails = b->n_rails;
    for (size_t i = 0; i < b->n_rails; i++) {
        const sim_rail_params_t *r = &b->rails[i];
        double mw = r->idle_mw * in->factors.idle_power + r->share[SIM_LOAD_CPU] * cpu_mw +
                    r->share[SIM_LOAD_GPU] * gpu_mw;
        (void) snprintf(ret_out->rails[i].name, sizeof ret_out->rails[i].name, "%s", r->name);
        ret_out->rails[i].power_mw = llround(mw > 0.0 ? mw : 0.0);
    }
    return 0;
}
