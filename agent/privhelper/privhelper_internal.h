/* privhelper_t's body and the functions its three files share: privhelper.c (life cycle,
 * execution), privhelper_verbs.c (one planner per verb), privhelper_snapshot.c (reading the
 * state that clocks-store saves, and planning its restore). Not for use outside them. */
#ifndef PRIVHELPER_INTERNAL_H
#define PRIVHELPER_INTERNAL_H

#include "privhelper.h"
#include "privhelper_paths.h"
#include "privhelper_root.h"
#include "privhelper_state.h"
#include "privhelper_store.h"

#include <limits.h>
#include <stdbool.h>

#define PRIVHELPER_TABLE_MAX 64 // entries kept from a frequency table or related_cpus

struct privhelper {
    char nvpmodel[PATH_MAX];           // absolute path of nvpmodel
    int64_t nvpmodel_timeout_us;       // nvpmodel is killed after this
    privhelper_root_t *root;           // owned
    privhelper_store_t *store;         // owned; NULL when the state directory is unusable
    jf_err_t store_err;                // why store is NULL
    const privhelper_soc_t *soc;       // static row; NULL for an unknown SoC
    char gpu_dir[PRIVHELPER_PATH_MAX]; // root-relative GPU devfreq directory; "" when none
    char emc_cap[PRIVHELPER_PATH_MAX]; // root-relative EMC cap file; "" when none
};

// Plans req (privhelper_verbs.c). Same contract as privhelper_plan.
int privhelper_verbs_plan(privhelper_t *self, const privhelper_request_t *req,
                          privhelper_plan_t *plan, jf_err_t *err);

// Reads the current state below the root into *ret_st (privhelper_snapshot.c). 0 or -errno.
int privhelper_snapshot_capture(const privhelper_t *self, privhelper_state_t *ret_st,
                                jf_err_t *err);

// Checks a saved state's values against the board's tables as a fresh request is checked: each
// policy's cpu is the first core of its policy and its min and max are in its
// scaling_available_frequencies, the GPU's in its available_frequencies, the EMC cap (0: none)
// and rate among the SoC's EMC steps. 0, or -EINVAL (-errno if a table cannot be read) with err
// naming the value.
int privhelper_snapshot_check(const privhelper_t *self, const privhelper_state_t *st,
                              jf_err_t *err);

// Plans writing st back: cores brought online first, then offline, then the limits. Every file
// must exist. 0, -EINVAL or -ENOSPC.
int privhelper_snapshot_plan(const privhelper_t *self, const privhelper_state_t *st,
                             privhelper_plan_t *plan, jf_err_t *err);

// Plans locking the EMC at rate_hz in the SoC's order, if the lock files exist (debugfs
// mounted). *ret_locked tells whether it did. 0 or -ENOSPC.
int privhelper_snapshot_emc_lock(const privhelper_t *self, privhelper_plan_t *plan, int64_t rate_hz,
                                 bool *ret_locked, jf_err_t *err);

// True if cpu is online: its online file holds 1, or it is cpu0 and has none.
bool privhelper_snapshot_is_online(const privhelper_t *self, int cpu);

// 0 if cpu is online and the first core of its cpufreq policy (related_cpus), else -EINVAL.
int privhelper_snapshot_check_policy(const privhelper_t *self, int cpu, jf_err_t *err);

// 0 if value is in the blank-separated table file rel; -EINVAL naming unit and file otherwise.
int privhelper_snapshot_check_step(const privhelper_t *self, const char *rel, int64_t value,
                                   const char *unit, jf_err_t *err);

#endif
