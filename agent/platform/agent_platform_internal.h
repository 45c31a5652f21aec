/* Private to agent_platform*.c: the platform record every implementation fills, and the few
 * operations that differ between implementations. Sampling is shared: every platform reads
 * through an agent_sysfs reader (host and jetson over the real roots, sim over its own tree). */
#ifndef AGENT_PLATFORM_INTERNAL_H
#define AGENT_PLATFORM_INTERNAL_H

#include "agent_detect.h"
#include "agent_platform.h"
#include "agent_sim_cache.h"
#include "agent_sim_tree.h"
#include "agent_sysfs.h"
#include "sim_model.h"

#include <limits.h>

#define AGENT_PLATFORM_MODES_NOTE_MAX 511 // longest modes_note

typedef struct agent_platform_ops {
    const char *name; // "host", "jetson", "sim"
    // Switches to a power mode already checked to be in self->modes.
    int (*set_mode)(agent_platform_t *self, int mode_id, jf_err_t *err);
    // Switches to a checked mode, then a custom point (NULL: none) and DVFS off if asked. May
    // be NULL: the platform cannot (agent_platform_set_point answers -ENOTSUP).
    int (*set_point)(agent_platform_t *self, int mode_id, const jf_run_custom_t *custom,
                     bool dvfs_off, jf_err_t *err);
    // Adds implementation-specific software facts to sw (may be NULL).
    void (*add_software)(const agent_platform_t *self, json_t *sw);
    // Creates the power-mode handle of agent_platform_power_new (may be NULL: the platform sets
    // its modes through set_mode alone).
    int (*power_new)(const agent_platform_t *self, const char *const *helper_argv,
                     agent_power_t **ret_power, jf_err_t *err);
} agent_platform_ops_t;

struct agent_platform {
    const agent_platform_ops_t *ops;            // static
    jf_board_type_t board_type;
    size_t n_modes;
    jf_power_mode_t modes[JF_POWER_MODES_MAX];
    agent_sysfs_t *sysfs;                       // owned: the telemetry reader (NULL once taken)
    const char *input_rail;                     // static: the board input rail, NULL if none
    char sysfs_root[PATH_MAX];                  // jetson: the roots it was made with, for the
    char etc_root[PATH_MAX];                    // power handle ("" on other platforms)
    char var_root[PATH_MAX];
    char tegrastats[PATH_MAX];                  // jetson without readable rails: the
                                                // fallback's executable; "" otherwise
    agent_detect_t detect;                      // jetson: what detection found
    char modes_note[AGENT_PLATFORM_MODES_NOTE_MAX + 1]; // jetson: where the modes came from
    char describe[AGENT_PLATFORM_DESCRIBE_MAX + 1];
    bool is_sim;                                // sim: the fields below are set
    agent_platform_sim_t sim;
    sim_model_t *sim_model;                     // owned (sim)
    agent_sim_tree_t *sim_tree;                 // owned (sim): removed with the platform
    agent_sim_cache_t sim_cache;                // sim: the board's page cache between runs
    sim_op_t sim_op;                            // sim: the operating point in the tree
    int64_t sim_start_us;                       // sim: monotonic time of the tree's modelled
                                                // time 0 (its clock runs at sim.speed)
};

// A zeroed platform with ops and board type set. NULL with err on -ENOMEM.
agent_platform_t *agent_platform_alloc(const agent_platform_ops_t *ops, jf_board_type_t type,
                                       jf_err_t *err);

// Appends "; not readable, left out of samples: ..." to self->describe when the reader
// missed something.
void agent_platform_describe_missing(agent_platform_t *self);

#endif
