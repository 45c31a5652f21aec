/* agent_power_t's body and what its two files share: agent_power.c (life cycle, helper
 * requests) and agent_power_state.c (reading sysfs back, checking it, the JSON record). */
#ifndef AGENT_POWER_INTERNAL_H
#define AGENT_POWER_INTERNAL_H

#include "agent_power.h"
#include "privhelper_paths.h"
#include "privhelper_root.h"

#include <limits.h>

#define AGENT_POWER_TABLE_MAX AGENT_POWER_STEPS_MAX // steps kept from a frequency table

struct agent_power {
    agent_nvpmodel_t *conf;                      // owned
    char conf_path[PATH_MAX];                    // for messages
    privhelper_root_t *sysfs;                    // owned; only ever read
    char gpu_dir[PRIVHELPER_PATH_MAX];           // sysfs-relative devfreq directory; "" if none
    char emc_cap[PRIVHELPER_PATH_MAX];           // sysfs-relative EMC cap file; "" if none
    char *argv[AGENT_POWER_HELPER_ARGS_MAX + 1]; // owned copies, NULL-terminated
    int64_t timeout_us;                          // per helper run
    int mode_id;                                 // as agent_power_state_t.mode_id
    char mode_name[JF_POWER_MODE_NAME_MAX + 1];  // as agent_power_state_t.mode_name
    char status_path[PATH_MAX];                  // nvpmodel's status file; "" if not read
    int stored_pmode;                            // the mode it named at store time; -1 unknown
    int stored_slot;                             // the helper's slot of our stored state; 0: none
    agent_power_state_t stored;                  // what was in force when it was stored
    bool stored_adopted;                         // stored by an earlier agent process
};

// A frequency table in Hz: cpu's cpufreq table, or the GPU's (cpu < 0). 0 or -errno.
int agent_power_read_table(const agent_power_t *self, int cpu, int64_t *hz, size_t max,
                           size_t *ret_n, jf_err_t *err);

// True if hz is in table.
bool agent_power_in_table(const int64_t *table, size_t n, int64_t hz);

// 0 if the cores and CPU/GPU limits of mode hold in st, else -EIO naming the first that does not.
int agent_power_verify_mode(const agent_power_t *self, const agent_nvpmodel_mode_t *mode,
                            const agent_power_state_t *st, jf_err_t *err);

// 0 if st is custom (cores, pinned clusters and GPU), else -EIO naming what differs.
int agent_power_verify_custom(const agent_power_custom_t *custom, const agent_power_state_t *st,
                              jf_err_t *err);

// 0 if got has want's cores, cluster limits and GPU limits, else -EIO naming what differs.
int agent_power_verify_same(const agent_power_state_t *want, const agent_power_state_t *got,
                            jf_err_t *err);

#endif
