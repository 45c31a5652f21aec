/* The simulated AGX Orin against a real one's power modes (docs/simulator.md, "AGX Orin against
 * real power modes"): evaluates the model on a table of measured modes (cores, CPU, GPU and EMC
 * clocks, training time in a lab unit, mean power) and scores it: the MAPE of time ratios (each
 * side divided by its geometric mean over the modes, since the lab's time unit is its own) and
 * the MAPE of power. Shared by the unit test (a cited 40-mode subset) and bench/sim-orin-modes.sh
 * (all 4,368 modes of ../shared/reference/orin-agx-powermodes/). */
#ifndef JFT_SIM_MODES_H
#define JFT_SIM_MODES_H

#include "jf_err.h"
#include "sim_model.h"

#include <stddef.h>
#include <stdint.h>

// One measured mode (plain value record).
typedef struct jft_sim_mode {
    int cores;      // CPU cores online
    int64_t cpu_hz; // CPU clock
    int64_t gpu_hz; // GPU clock
    int64_t emc_hz; // EMC clock
    double time;    // training time for a fixed amount of work, the lab's unit
    double power_w; // mean power during training, W
} jft_sim_mode_t;

// The scores (plain value record).
typedef struct jft_sim_modes_fit {
    size_t n;                   // modes compared
    double time_ratio_mape_pct; // MAPE of time / geometric mean of time, percent
    double power_mape_pct;      // MAPE of power, percent
    double power_bias_pct;      // mean signed error of power, percent (+: model draws more)
} jft_sim_modes_fit_t;

// Evaluates the model's orin-agx on every mode (ResNet-18 on CIFAR-10 from a cached NVMe,
// batch 16, 4 workers: docs/simulator.md gives why) and scores it into *ret_fit. Returns 0, or
// -EINVAL with err naming the mode the model refused (n == 0 too).
int jft_sim_modes_compare(const sim_model_t *model, const jft_sim_mode_t *modes, size_t n,
                          jft_sim_modes_fit_t *ret_fit, jf_err_t *err);

#endif
