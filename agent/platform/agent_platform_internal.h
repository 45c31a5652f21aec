/* Private to agent_platform*.c: the platform record every implementation fills, and the few
 * operations that differ between implementations. Sampling is shared: every platform reads
 * through an agent_sysfs reader (host and jetson over the real roots, sim over its own tree). */
#ifndef AGENT_PLATFORM_INTERNAL_H
#define AGENT_PLATFORM_INTERNAL_H

#include "agent_detect.h"
#include "agent_platform.h"
#include "agent_platform_run.h"
#include "agent_sim_cache.h"
#include "agent_sim_tree.h"
#include "agent_sysfs.h"
#include "sim_model.h"

#include <limits.h>

#define AGENT_PLATFORM_MODES_NOTE_MAX 511 // longest modes_note

// The run interface's operations where a platform differs from a real machine's (every member
// may be NULL: agent_platform_run.c then does what a Jetson or a host does).
typedef struct agent_platform_run_ops {
    int (*trainer)(const agent_platform_t *self, const agent_platform_run_t *run,
                   agent_platform_trainer_t *ret_trainer, jf_err_t *err);
    void (*timing)(const agent_platform_t *self, agent_platform_timing_t *ret_timing);
    bool (*prepare_run)(agent_platform_t *self, const jf_run_spec_t *spec,
                        agent_platform_prepared_t *ret_prepared);
    json_t *(*power_record)(const agent_platform_t *self, const jf_run_spec_t *spec);
    int (*clock_tables)(const agent_platform_t *self, agent_power_tables_t *ret_tables,
                        jf_err_t *err);
    int (*trainer_line)(agent_platform_t *self, const char *dataset, const json_t *line,
                        agent_platform_line_t *ret_line, jf_err_t *err);
    int (*tick)(agent_platform_t *self, int64_t now_us, jf_err_t *err);
    int (*run_end)(agent_platform_t *self, jf_err_t *err);
    bool dataset_files; // a run's dataset is files on this machine
} agent_platform_run_ops_t;

// The sim board's run operations (agent_platform_sim_run.c).
extern const agent_platform_run_ops_t agent_platform_sim_run_ops;

typedef struct agent_platform_ops {
    const char *name; // "host", "jetson", "sim"
    const agent_platform_run_ops_t *run; // NULL: a real machine's runs
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
    bool sim_idle_run;                          // sim: an idle baseline run is being prepared
                                                // or runs (docs/baseline.md)
    bool sim_idle_dvfs_off;                     // sim: that run's DVFS off
};

// A zeroed platform with ops and board type set. NULL with err on -ENOMEM.
agent_platform_t *agent_platform_alloc(const agent_platform_ops_t *ops, jf_board_type_t type,
                                       jf_err_t *err);

// Sim: the tree's modelled time at monotonic time now_us (the time since the platform was made
// times its speed).
int64_t agent_platform_sim_model_us(const agent_platform_t *self, int64_t now_us);

// Appends a formatted argument to trainer (program first). Returns 0, or -ENOSPC with err when
// it does not fit.
int agent_platform_trainer_add(agent_platform_trainer_t *trainer, jf_err_t *err, const char *fmt,
                               ...) __attribute__((format(printf, 3, 4)));

// Appends "; not readable, left out of samples: ..." to self->describe when the reader
// missed something.
void agent_platform_describe_missing(agent_platform_t *self);

#endif
