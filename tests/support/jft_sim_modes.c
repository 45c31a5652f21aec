/* The simulated AGX Orin against a real one's power modes (jft_sim_modes.h). */
#include "jft_sim_modes.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#define S_WORKERS  4
#define S_PREFETCH 2
#define S_BATCH    16
#define S_MW_PER_W 1000.0

// The model's epoch time (s) and total rail power (W) at one mode.
static int s_eval(const sim_model_t *model, const jft_sim_mode_t *m, double *ret_s, double *ret_w,
                  jf_err_t *err)
{
    sim_epoch_in_t in = {
        .board_type = JF_BOARD_ORIN_AGX,
        .op = {.n_cores = m->cores, .cpu_hz = m->cpu_hz, .gpu_hz = m->gpu_hz, .emc_hz = m->emc_hz},
        .model = "resnet18",
        .dataset = "cifar10",
        .medium = "nvme",
        .workers = S_WORKERS,
        .prefetch = S_PREFETCH,
        .batch_size = S_BATCH,
        .dataset_scale = 1.0,
        .epoch = 1,
        .resident_fraction = 1.0,
        .factors = SIM_BOARD_FACTORS_NEUTRAL};
    sim_epoch_out_t out = {0};
    int rc = sim_model_epoch(model, &in, &out, err);
    if (rc != 0 || out.oom) {
        return jf_err_set(err, -EINVAL, "mode %d cores %lld/%lld/%lld Hz: %s", m->cores,
                          (long long) m->cpu_hz, (long long) m->gpu_hz, (long long) m->emc_hz,
                          rc != 0 ? err->msg : out.oom_reason);
    }
    double mw = 0.0;
    for (size_t i = 0; i < out.n_rails; i++) {
        mw += (double) out.rails[i].power_mw;
    }
    *ret_s = (double) out.e2e_us / 1e6;
    *ret_w = mw / S_MW_PER_W;
    return 0;
}

int jft_sim_modes_compare(const sim_model_t *model, const jft_sim_mode_t *modes, size_t n,
                          jft_sim_modes_fit_t *ret_fit, jf_err_t *err)
{
    double *sim_s = calloc(n ? n : 1, sizeof *sim_s);
    if (!sim_s || n == 0) {
        free(sim_s);
        return jf_err_set(err, -EINVAL, "no modes to compare");
    }
    jft_sim_modes_fit_t fit = {.n = n};
    double log_sim = 0.0, log_real = 0.0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        double w = 0.0;
        rc = s_eval(model, &modes[i], &sim_s[i], &w, err);
        log_sim += log(sim_s[i]) / (double) n;
        log_real += log(modes[i].time) / (double) n;
        fit.power_mape_pct += 100.0 * fabs(w - modes[i].power_w) / modes[i].power_w / (double) n;
        fit.power_bias_pct += 100.0 * (w - modes[i].power_w) / modes[i].power_w / (double) n;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        double r_sim = sim_s[i] / exp(log_sim), r_real = modes[i].time / exp(log_real);
        fit.time_ratio_mape_pct += 100.0 * fabs(r_sim - r_real) / r_real / (double) n;
    }
    free(sim_s);
    if (rc == 0) {
        *ret_fit = fit;
    }
    return rc;
}
