/* The simulated boards' thermal model (docs/simulator.md, "Thermal"): each modelled zone of a
 * board (sim_params.h) heads for T_ss = ambient_c + r_c_per_w x P, P the board's heating power,
 * as a first-order lag with time constant tau_s in modelled time. P is constant between two
 * updates, so T(t) = T_ss + (T(t0) - T_ss) x exp(-(t - t0) / tau_s) is exact however often it
 * is evaluated. A stated assumption, not calibrated against measurements. Pure computation: no
 * clocks, no files (agent/platform/agent_sim_tree.c writes the zones). */
#ifndef SIM_THERMAL_H
#define SIM_THERMAL_H

#include "sim_params.h"

#include <stddef.h>
#include <stdint.h>

#define SIM_THERMAL_OFFLINE_MC (-256000) // a power-gated sensor's reading (jetson-platforms §2.6)

// The state of one board's zones (embedded value; sim_thermal_init fills it, nothing to free).
typedef struct sim_thermal {
    const sim_board_params_t *board; // borrowed: ambient and zones; must outlive the state
    double power_mw;                 // heating power in force, mW
    int64_t model_us;                // modelled time of the state, us
    double temp_c[SIM_ZONES_MAX];    // per zone of board->zones, degrees C (offline: unused)
} sim_thermal_t;

// Starts the state at modelled time model_us in the steady state of power_mw, as a board that
// has been at that power for long. A negative or non-finite power counts as 0.
void sim_thermal_init(sim_thermal_t *self, const sim_board_params_t *board, double power_mw,
                      int64_t model_us);

// Advances the state to model_us under the power in force. A time before the state's changes
// nothing (modelled time does not run backwards).
void sim_thermal_advance(sim_thermal_t *self, int64_t model_us);

// Advances to model_us under the old power, then puts power_mw in force from then on (negative
// or non-finite: 0).
void sim_thermal_set_power(sim_thermal_t *self, double power_mw, int64_t model_us);

// Zone i's temperature (i < board->n_zones) in millidegrees C, rounded; SIM_THERMAL_OFFLINE_MC
// for an offline zone.
int64_t sim_thermal_zone_mc(const sim_thermal_t *self, size_t i);

// Zone i's steady-state temperature at power_mw, degrees C: ambient_c + r_c_per_w x power_mw /
// 1000 (ambient_c for an offline zone).
double sim_thermal_steady_c(const sim_board_params_t *board, size_t i, double power_mw);

#endif
