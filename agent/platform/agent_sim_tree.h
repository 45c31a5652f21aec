/* The fake board of a sim platform (issue #5): a private temporary directory holding a sysfs,
 * proc and etc tree in the layout of the simulated Jetson family (agent_board_table.h): device
 * tree, nv_tegra_release, the family's nvpmodel.conf (the board table of agent/share/nvpmodel/,
 * embedded at build time), CPU present/online and cpufreq, GPU devfreq,
 * EMC clock, the INA3221 rails, the thermal zones, /proc/stat and /proc/meminfo. The real jetson
 * readers then run over it, and the jetson platform takes the board's modes from its conf.
 * Values come from the performance model's parameters (sim_params.h): RAM, idle rail power
 * scaled by the board's idle-power factor, the power modes' clocks, and the zones' temperatures
 * from the stated (not calibrated) first-order thermal model of sim_thermal.h, in modelled time
 * given by the caller. Rails and temperatures are rewritten in place (same inode, fixed-width
 * text), so a reader that opened them once sees every update. CPU times and the GPU load
 * follow the model's utilisation of the epoch in progress (agent_sim_load.h). What the model
 * does not give is not invented: a zone the parameters mark offline reads -256 C (left out by
 * the reader). Not a sampler, not thread-safe. */
#ifndef AGENT_SIM_TREE_H
#define AGENT_SIM_TREE_H

#include "jf_board.h"
#include "jf_err.h"
#include "sim_model.h"

#include <jansson.h>
#include <limits.h>
#include <stdint.h>

#define AGENT_SIM_TREE_RAIL_MV   5000 // bus voltage written for every rail
#define AGENT_SIM_TREE_VALUE_LEN 16   // bytes of a rewritten value file, newline included

typedef struct agent_sim_tree agent_sim_tree_t;

typedef struct agent_sim_tree_opts {
    jf_board_type_t type;        // the Jetson family simulated
    const sim_model_t *model;    // borrowed for the call
    sim_board_factors_t factors; // the board's factors (idle power)
    const char *tmp_dir;         // where to create the tree; NULL: $TMPDIR or /tmp
} agent_sim_tree_opts_t;

// Creates the directory and writes the tree, idle, in the family's highest power mode
// (the first of jf_board.h), its zones at the idle steady state (modelled time 0). Returns NULL
// with err: -EINVAL for a type the model has no parameters, layout or conf for, whose conf lists
// other modes than the model, or whose thermal parameters list other zones than the layout; or
// the errno of a file that could not be written (the directory is removed again). Caller owns
// the result; release with agent_sim_tree_destroy.
agent_sim_tree_t *agent_sim_tree_new(const agent_sim_tree_opts_t *opts, jf_err_t *err);

// Removes the directory and everything in it, frees self and sets *self_p to NULL. Accepts NULL
// and *self_p == NULL.
void agent_sim_tree_destroy(agent_sim_tree_t **self_p);

// The roots of the tree ("<dir>/sys", "<dir>/proc", "<dir>/etc"). Borrowed.
const char *agent_sim_tree_sysfs_root(const agent_sim_tree_t *self);
const char *agent_sim_tree_proc_root(const agent_sim_tree_t *self);
const char *agent_sim_tree_etc_root(const agent_sim_tree_t *self);

// Writes an operating point: CPU online list and per-core cpufreq, GPU devfreq, EMC clock.
// Returns 0 or the errno of a file that could not be written, with err.
int agent_sim_tree_set_op(agent_sim_tree_t *self, const sim_op_t *op, jf_err_t *err);

// Writes rail powers at modelled time model_us (us since the tree was made, when the thermal
// state starts at the idle steady state): power_mw is an object {rail name: mW} (the trainer's
// sim_power_mw); a rail it does not name, or NULL, gets its idle power. Voltage
// AGENT_SIM_TREE_RAIL_MV and current so that V x I is the power (to the mA), plus the power file
// where the driver has one. The zones are first advanced to model_us under the old power, then
// head for the new power's steady state (docs/simulator.md, "Thermal"); their temp files are
// rewritten. Returns 0 or the errno of a file that could not be written, with err.
int agent_sim_tree_set_power(agent_sim_tree_t *self, const json_t *power_mw, int64_t model_us,
                             jf_err_t *err);

// Advances the zones and the load counters to modelled time model_us under the power and load
// in force and rewrites the temp files that changed and /proc/stat (a time before the last update
// changes nothing). Returns 0 or the errno of a file that could not be written, with err.
int agent_sim_tree_advance(agent_sim_tree_t *self, int64_t model_us, jf_err_t *err);

// Sets the load the board's counters follow from modelled time model_us on (after advancing
// them to it): load is an object {"gpu_pct": percent, "cpu_busy_cores": cores} (the trainer's
// sim_load); NULL or a missing member is idle. Rewrites /proc/stat and the GPU load file
// (docs/simulator.md, "Load"). Returns 0 or the errno of a file that could not be written.
int agent_sim_tree_set_load(agent_sim_tree_t *self, const json_t *load, int64_t model_us,
                            jf_err_t *err);

// The heating power the zones follow now: the input rail's power where the family has one, else
// the sum of the rails; mW.
int64_t agent_sim_tree_heating_mw(const agent_sim_tree_t *self);

#endif
