/* Benchmark: the simulated AGX Orin on every real power mode of
 * ../shared/reference/orin-agx-powermodes/resnet-training.csv (jft_sim_modes.h), printing the
 * MAPE of time ratios and of power as name=value lines. Built and run by bench/sim-orin-modes.sh,
 * which generates the table (JFB_MODES_TABLE, a file of jft_sim_mode_t initializers) from the
 * CSV; the CSV lives outside the repository, so this is a bench, not a test. */
#include "jft_sim_modes.h"

#include <stdio.h>

static const jft_sim_mode_t s_modes[] = {
#include JFB_MODES_TABLE
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        (void) fprintf(stderr, "usage: %s SIM_PARAMS.yaml\n", argv[0]);
        return 2;
    }
    jf_err_t err = {0};
    sim_model_t *model = sim_model_load(argv[1], &err);
    jft_sim_modes_fit_t fit = {0};
    int rc = model ? jft_sim_modes_compare(model, s_modes, sizeof s_modes / sizeof s_modes[0], &fit,
                                           &err)
                   : -1;
    sim_model_destroy(&model);
    if (rc != 0) {
        (void) fprintf(stderr, "sim-orin-modes: %s\n", err.msg);
        return 1;
    }
    printf("orin_modes=%zu\norin_time_ratio_mape_pct=%.2f\norin_power_mape_pct=%.2f\n"
           "orin_power_bias_pct=%.2f\n",
           fit.n, fit.time_ratio_mape_pct, fit.power_mape_pct, fit.power_bias_pct);
    return 0;
}
