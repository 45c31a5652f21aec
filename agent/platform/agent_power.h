/* Jetson power modes from the agent's side: the board's nvpmodel modes, setting one or a custom
 * mode (cores online, CPU/GPU/EMC pinned) through jetfleet-privhelper, reading back from sysfs
 * what is in force (the record kept with every run), DVFS off like jetson_clocks, and saving and
 * restoring the clock state around a run. The agent never writes sysfs: every change is one
 * request line to the helper (docs/privileges.md). Calls block while the helper runs, at most
 * helper_timeout_us: not for the event loop. jetson-platforms.md §4-§6 are the facts. */
#ifndef AGENT_POWER_H
#define AGENT_POWER_H

#include "agent_nvpmodel.h"
#include "jf_board.h"
#include "jf_err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_POWER_CLUSTERS_MAX      16                      // cpufreq policies recorded
#define AGENT_POWER_HELPER_ARGS_MAX   12                      // words of the helper's command line
#define AGENT_POWER_HELPER_TIMEOUT_US (INT64_C(60) * 1000000) // > the helper's own 5 s + 30 s
#define AGENT_POWER_NOTE_MAX          200
#define AGENT_POWER_STEPS_MAX         64 // steps kept from one frequency table

typedef struct agent_power agent_power_t;

typedef struct agent_power_opts {
    const char *conf_path;  // the board's nvpmodel conf, "/etc/nvpmodel.conf"
    const char *sysfs_root; // "/sys", or a fixture tree's sys/ directory
    const char *status_path; // nvpmodel's status file (AGENT_NVPMODEL_STATUS_PATH), read to
                             // check a restore; NULL: not read, not checked
    const char *const
        *helper_argv;          // how to run the helper, NULL-terminated; copied. On a board:
                               // {"/usr/bin/sudo", "-n", "/usr/local/libexec/jetfleet-privhelper"}
                               // NULL: no helper; the object only reads (changes fail, -ENOENT)
    int64_t helper_timeout_us; // 0: AGENT_POWER_HELPER_TIMEOUT_US
} agent_power_opts_t;

// One cpufreq policy in force (a plain value record).
typedef struct agent_power_cluster {
    int first_core; // the policy's first core
    int64_t min_hz; // scaling_min_freq
    int64_t max_hz; // scaling_max_freq
} agent_power_cluster_t;

// The power state in force, read back from sysfs: what the agent records with every run (a
// plain value record; agent_power_state_json gives its wire form).
typedef struct agent_power_state {
    int mode_id;                                // nvpmodel mode set last by this object; -1 if
                                                // none, or a custom mode since
    char mode_name[JF_POWER_MODE_NAME_MAX + 1]; // its conf name, "custom", or "" if unknown
    int n_cpus;                                 // cores present: cpu0 and those with online files
    uint64_t online_mask;                       // bit N: cpuN online
    size_t n_clusters;                          // online policies, by first core
    agent_power_cluster_t clusters[AGENT_POWER_CLUSTERS_MAX]; // by ascending first core
    bool has_gpu;                                             // the GPU devfreq node was found
    int64_t gpu_min_hz;                                       // devfreq min_freq, when has_gpu
    int64_t gpu_max_hz;                                       // devfreq max_freq, when has_gpu
    bool has_emc_cap;                // false when the cap file is missing or root-only
    int64_t emc_cap_hz;              // nvpmodel's EMC cap; 0 = no cap
    bool dvfs_off;                   // every online cluster and the GPU at min == max
    char note[AGENT_POWER_NOTE_MAX]; // the helper's words beyond "ok" ("emc=locked"),
                                     // or a tolerated nvpmodel failure; "" if none
} agent_power_state_t;

// A point of the custom power-mode space (jetson-platforms.md §6; a plain value record).
typedef struct agent_power_custom {
    int n_cores;    // cpu0..n_cores-1 online, the others offline
    int64_t cpu_hz; // every online cluster pinned (min = max) here; a step of its table
    int64_t gpu_hz; // the GPU pinned here (a step of its table); 0 leaves it alone
    int64_t emc_hz; // the EMC capped and locked here (a step of the SoC's table); 0 leaves it
} agent_power_custom_t;

// The board's custom-mode space as its sysfs shows it (a plain value record): what a custom point
// is checked against before a run is accepted.
typedef struct agent_power_tables {
    int n_cpus;                                // cores present
    size_t n_cpu_steps;                        // cpu0's scaling_available_frequencies
    int64_t cpu_steps_hz[AGENT_POWER_STEPS_MAX];
    size_t n_gpu_steps;                        // the GPU's available_frequencies; 0: no GPU node
    int64_t gpu_steps_hz[AGENT_POWER_STEPS_MAX];
    size_t n_emc_steps; // EMC rates (sysfs does not list them: the family's, or a sim board's
    int64_t emc_steps_hz[AGENT_POWER_STEPS_MAX]; // up to its cap); 0: the family's table
} agent_power_tables_t;

// Loads the conf, opens the sysfs root for reading and finds the GPU node and the EMC cap file.
// Caller owns the result; release with agent_power_destroy. NULL with err (the conf's error
// with file:line, -ENOENT for the sysfs root, -EINVAL for an empty or relative helper_argv).
// Without helper_argv every call that asks the helper fails with -ENOENT and changes nothing.
agent_power_t *agent_power_new(const agent_power_opts_t *opts, jf_err_t *err);

// Frees everything; accepts NULL and *self_p == NULL. It does not restore a stored state: call
// agent_power_restore first.
void agent_power_destroy(agent_power_t **self_p);

// The board's conf: its modes and default (borrowed; valid until destroy).
const agent_nvpmodel_t *agent_power_conf(const agent_power_t *self);

// Reads the state in force from sysfs into *ret_state. 0 or -errno with err naming the file.
int agent_power_read_state(const agent_power_t *self, agent_power_state_t *ret_state,
                           jf_err_t *err);

// Reads the core count and the CPU (cpu0's policy: Jetson clusters share one list, §6) and GPU
// frequency tables into *ret_tables. 0, or -errno with err naming the file. Needs no helper.
int agent_power_read_tables(const agent_power_t *self, agent_power_tables_t *ret_tables,
                            jf_err_t *err);

// Checks a custom point against tables (a board's, as read; a clock of 0 is left alone and not
// checked) and, for the EMC, which sysfs does not list, against the tables' EMC steps, or where
// they have none against the steps of type's family (jf_board_clocks.h). Returns 0, or -EINVAL with
// err naming the value and the table.
int agent_power_tables_check(const agent_power_tables_t *tables, jf_board_type_t type,
                             const agent_power_custom_t *custom, jf_err_t *err);

// True when the object was given a helper command.
bool agent_power_has_helper(const agent_power_t *self);

// Reads back whether nvpmodel mode mode_id is in force now: its cores and CPU/GPU limits hold
// (the check agent_power_set_mode makes after setting it) and, where the cap file is readable,
// its EMC cap (modes can differ only there), so that no change is needed. On success the object
// takes mode_id as the mode in force and *ret_state (may be NULL) is the state read, mode named.
// Returns 0; -EIO naming the first core, limit or cap that differs; -ENODATA when no cpufreq
// limit is readable (nothing to verify, so no claim is made); -EINVAL for a mode not in the conf;
// -errno when sysfs cannot be read. Needs no helper.
int agent_power_mode_in_force(agent_power_t *self, int mode_id, agent_power_state_t *ret_state,
                              jf_err_t *err);

// Sets nvpmodel mode mode_id through the helper, then checks in sysfs that its cores and CPU/GPU
// limits hold. A non-zero nvpmodel exit is tolerated when they do hold (it happens after
// core-disabling modes, §4.3; *ret_state's note says so). A mode change undoes DVFS off: turn it
// off again afterwards. Returns 0; -EINVAL (not in the conf, or refused by the helper), -EIO (the
// helper failed, or the mode is not in force afterwards), -ETIMEDOUT, or -errno when the helper
// cannot be started (-ENOENT). ret_state may be NULL. The same codes hold for the calls below.
int agent_power_set_mode(agent_power_t *self, int mode_id, agent_power_state_t *ret_state,
                         jf_err_t *err);

// Sets a custom mode: cores first, then each online cluster, the GPU and the EMC pinned, then
// checks it all holds. CPU and GPU values are checked against the tables before anything is
// asked; a refusal from the helper after that (an EMC rate) leaves what was set before it.
// Returns 0, -EINVAL, -EIO or -ETIMEDOUT. ret_state may be NULL.
int agent_power_set_custom(agent_power_t *self, const agent_power_custom_t *custom,
                           agent_power_state_t *ret_state, jf_err_t *err);

// DVFS off (helper `dvfs off`: every online cluster and the GPU pinned at their current max,
// rail-gating and cpuidle off, EMC locked), then checks min == max holds. The helper keeps the
// state from before the first dvfs off until agent_power_dvfs_restore. 0 or -errno.
int agent_power_dvfs_off(agent_power_t *self, agent_power_state_t *ret_state, jf_err_t *err);

// Undoes DVFS off (helper `dvfs restore`). 0, or -EINVAL if DVFS was not off, or -errno.
int agent_power_dvfs_restore(agent_power_t *self, jf_err_t *err);

// Saves the clock state before a run (helper `clocks-store`) and remembers the slot and what was
// in force. 0, -EBUSY if this object already holds a stored state, or -errno.
int agent_power_store(agent_power_t *self, jf_err_t *err);

// True while a stored state waits for agent_power_restore.
bool agent_power_has_stored(const agent_power_t *self);

// Writes the stored state back (helper `restore <slot>`: nvpmodel -m <the mode its status file
// named at store time> first, then the clocks) and checks that the cores and limits read at store
// time hold again and, when the status file was readable at store time, that it names that mode
// again (the object then takes it as the mode in force). 0, -ENOENT if nothing is stored, -EIO,
// or -errno.
int agent_power_restore(agent_power_t *self, agent_power_state_t *ret_state, jf_err_t *err);

// The stored state (agent_power_store) as a record an agent restarted during the run can take
// over with agent_power_adopt (agent_power_saved.c): the helper's slot, the mode nvpmodel's
// status named and what was in force. Caller owns the result; NULL when nothing is stored or out
// of memory.
json_t *agent_power_stored_json(const agent_power_t *self);

// Takes over a state an earlier agent process stored (its agent_power_stored_json record,
// borrowed): agent_power_restore then writes it back and checks it as if this object had stored
// it; a restore the helper refuses (the slot is gone: the earlier process restored it at its
// exit) forgets it. 0, -EBUSY if this object holds a stored state already, -EINVAL with err
// naming what in the record is wrong.
int agent_power_adopt(agent_power_t *self, const json_t *stored, jf_err_t *err);

// sync, then drop the page cache (helper `drop-caches`, §9). 0 or -errno.
int agent_power_drop_caches(agent_power_t *self, jf_err_t *err);

// The state as a JSON object with units in the key names (mode_id, mode_name, online_cpus,
// cpu_clusters[{first_core, min_hz, max_hz}], gpu_min_hz, gpu_max_hz, emc_cap_hz, dvfs_off,
// note); quantities not read are left out. Caller owns the result (json_decref); NULL on ENOMEM.
json_t *agent_power_state_json(const agent_power_state_t *state);

#endif
