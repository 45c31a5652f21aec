/* What clocks-store and dvfs off save and restore writes back, like jetson_clocks' store file
 * (jetson-platforms.md §5.1), plus the nvpmodel mode in force (§4.1's status file): cores
 * online, each online policy's limits, the GPU's limits and rail-gating, the EMC cap and lock,
 * and the cpuidle switches. A plain record and its text form;
 * reading it from the system and writing it back are privhelper.c's job. */
#ifndef PRIVHELPER_STATE_H
#define PRIVHELPER_STATE_H

#include "jf_err.h"
#include "privhelper_paths.h"
#include "privhelper_request.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PRIVHELPER_STATE_IDLE_MAX (PRIVHELPER_CPUS_MAX * PRIVHELPER_IDLE_STATES_MAX)

typedef struct privhelper_policy {
    int cpu;         // first core of the policy
    int64_t min_khz; // scaling_min_freq
    int64_t max_khz; // scaling_max_freq
} privhelper_policy_t;

typedef struct privhelper_idle {
    int cpu;     // core
    int state;   // cpuidle stateK
    int disable; // 1: the state is disabled
} privhelper_idle_t;

typedef struct privhelper_state {
    bool has_pmode;                                    // nvpmodel's status file named a mode
    int pmode;                                         // that mode: restore runs nvpmodel -m it
    uint64_t online_known;                             // bit N: cpuN (N >= 1) has an online file
    uint64_t online;                                   // bit N: it holds 1
    size_t n_policies;                                 // entries used in policies
    privhelper_policy_t policies[PRIVHELPER_CPUS_MAX]; // online policies, by first core
    bool has_gpu;                                      // a GPU devfreq node was found
    int64_t gpu_min_hz;                                // its min_freq
    int64_t gpu_max_hz;                                // its max_freq
    bool has_railgate;                                 // railgate_enable exists
    int railgate;                                      // GPU railgate_enable
    bool has_emc_cap;                                  // an nvpmodel EMC cap file exists
    int64_t emc_cap_hz;                                // 0 = no cap
    bool has_emc_lock;                                 // the SoC's EMC lock files exist (debugfs)
    int emc_locked;                                    // 1: the EMC rate is locked
    int64_t emc_rate_hz;                               // the rate when it was saved
    size_t n_idle;                                     // entries used in idle
    privhelper_idle_t idle[PRIVHELPER_STATE_IDLE_MAX]; // online cores' cpuidle switches
} privhelper_state_t;

// Writes st as text into buf (size bytes); *ret_len gets the length. 0 or -ENOSPC.
int privhelper_state_format(const privhelper_state_t *st, char *buf, size_t size, size_t *ret_len,
                            jf_err_t *err);

// Parses text (len bytes) into *ret_st. 0, or -EINVAL with err naming the line ("state:3: ...").
int privhelper_state_parse(const char *text, size_t len, privhelper_state_t *ret_st, jf_err_t *err);

#endif
