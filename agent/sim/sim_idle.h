/* The simulated boards' idle power (docs/baseline.md "Simulated boards"): each rail's power while
 * the board does nothing, in a power mode with DVFS on (governors as they are) or off (clocks
 * pinned), with or without the telemetry sampler at a rate. For the idle baselines of sim boards;
 * a stated model, not a measurement. Not the training epochs' power (sim_model.h). */
#ifndef SIM_IDLE_H
#define SIM_IDLE_H

#include "jf_err.h"
#include "sim_model.h"

#include <stdbool.h>

// A pinned idle clock domain draws this share of its dynamic power at that clock (clock tree and
// idle loops toggling at the pinned rate). Assumed, not measured (docs/baseline.md).
#define SIM_IDLE_PINNED_SHARE 0.10
// An offline core saves this share of its busy dynamic power at the highest clock, as the
// leakage of the power-gated core. Assumed, not measured (docs/baseline.md).
#define SIM_IDLE_CORE_GATED_SHARE 0.05
// CPU time of one telemetry sample, us: the slowest fixture tree of bench/sample_cost.c
// (bench/README.md "sample_cost.c": 16-29 us).
#define SIM_IDLE_SAMPLE_CPU_US 29.0

// What an idle phase is (plain value record).
typedef struct sim_idle_in {
    jf_board_type_t board_type;  // a Jetson type the parameter file describes
    sim_op_t op;                 // the mode's (or custom) operating point
    sim_board_factors_t factors; // the board's factors (idle power)
    bool dvfs_off;               // clocks pinned at op's clocks; false: governors idle them
    int telemetry_hz;            // the sampler's rate; 0: not sampling (start and end only)
} sim_idle_in_t;

// Fills ret_out's rails (n_rails, rails[]: names and power_mw) with the idle power of in, and
// gpu_load 0, cpu_busy_cores the sampler's share of a core; every other field zero. Returns 0, or
// -EINVAL with err for a board type without parameters or an operating point beyond the board.
int sim_idle_rails(const sim_model_t *model, const sim_idle_in_t *in, sim_epoch_out_t *ret_out,
                   jf_err_t *err);

#endif
