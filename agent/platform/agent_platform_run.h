/* The platform's run interface: what a run needs from the board goes through these calls, so
 * that the session, the runner and the measurements never ask which platform they have. A sim
 * board answers them from its model (agent_platform_sim_run.c), a Jetson or a host from the real
 * machine (agent_platform_run.c). docs/simulator.md, "The sim platform (agent)". */
#ifndef AGENT_PLATFORM_RUN_H
#define AGENT_PLATFORM_RUN_H

#include "agent_platform.h"
#include "agent_power.h"
#include "agent_residency.h"
#include "jf_err.h"
#include "jf_msg_measure.h"
#include "jf_run_spec.h"

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_PLATFORM_TRAINER_ARGS_MAX 64             // a trainer's platform arguments (and a
                                                       // container command around them)
#define AGENT_PLATFORM_TRAINER_BUF_MAX  (3 * PATH_MAX) // their text, program included
#define AGENT_PLATFORM_DETAIL_MAX       255            // agent_platform_prepared_t.detail

// One run, as the session hands it to the platform (borrowed for the call).
typedef struct agent_platform_run {
    const jf_run_spec_t *spec; // the checked run
    const char *dataset_dir;   // <dataset_root>/<dataset>
    const char *train_bin;     // the agent's trainer (--train-bin), for platforms that run it
} agent_platform_run_t;

// The program a run starts and the platform's own arguments to it; the run's own arguments
// (model, workers, ...) are the runner's. Filled by agent_platform_trainer; program and args
// point into buf, so the record must not be copied.
typedef struct agent_platform_trainer {
    const char *program;                               // absolute path
    size_t n_args;                                     // entries in args
    const char *args[AGENT_PLATFORM_TRAINER_ARGS_MAX]; // in order
    size_t used;                                       // bytes of buf in use
    char buf[AGENT_PLATFORM_TRAINER_BUF_MAX];          // the strings
} agent_platform_trainer_t;

// How the platform's runs are timed and what their energy is (plain value record; zeroed means
// a real board: the monotonic clock, energy from the samples' source).
typedef struct agent_platform_timing {
    bool own_clock; // the trainer keeps its own clock (a modelled board's), speed x monotonic
    double speed;   // own_clock: trainer us per monotonic us, >= 1
    char time_base[JF_MEASURE_TEXT_MAX + 1]; // own_clock: the measure record's time_base
    const char *energy_source;               // static: energy.source whatever the samples' source
                               // (JF_MEASURE_SOURCE_*); NULL: where the power readings came from
} agent_platform_timing_t;

// A run the platform prepared itself (plain value record).
typedef struct agent_platform_prepared {
    jf_measure_drop_t drop;                     // how the page cache was dropped
    char detail[AGENT_PLATFORM_DETAIL_MAX + 1]; // what was done, for the log
} agent_platform_prepared_t;

// What one trainer line told the platform, for the measure record (plain value record).
typedef struct agent_platform_line {
    int n_residency;                // entries below, 0..2
    int residency_epoch[2];         // the epoch each entry follows; -1: before epoch 0
    agent_residency_t residency[2]; // the dataset's page-cache residency then
} agent_platform_line_t;

// Fills *ret_trainer for run: on a Jetson or a host run->train_bin with --data, --threads and
// --device auto; on a sim board the simulated trainer with the board, mode, medium, custom
// point and page cache it models. Returns 0, or -ENOSPC with err when the arguments do not fit.
int agent_platform_trainer(const agent_platform_t *self, const agent_platform_run_t *run,
                           agent_platform_trainer_t *ret_trainer, jf_err_t *err);

// Fills *ret_timing: how the platform's runs are timed. Cannot fail.
void agent_platform_timing(const agent_platform_t *self, agent_platform_timing_t *ret_timing);

// True when a run's dataset is files on this machine: the session checks the directory before a
// run and measures its page-cache residency per epoch. False where the platform models the
// dataset (a sim board; agent_platform_trainer_line then gives the residency).
bool agent_platform_has_dataset_files(const agent_platform_t *self);

// Prepares spec on a platform whose runs need no worker (no disk to check, no helper): drops
// its modelled page cache when spec asks and fills *ret_prepared. Returns true when it did;
// false when the run goes through the worker (storage check, power helper, cache drop).
bool agent_platform_prepare_run(agent_platform_t *self, const jf_run_spec_t *spec,
                                agent_platform_prepared_t *ret_prepared);

// The power record of the measure record on a platform without a power handle (agent_power
// reads the state back where there is one): the mode as the table names it, or on a sim board
// the operating point written into its tree, with a note. Caller owns the result; NULL when out
// of memory.
json_t *agent_platform_power_record(const agent_platform_t *self, const jf_run_spec_t *spec);

// The frequency tables custom points are checked against on a platform without a power handle
// (a sim board: its family's, jf_board_clocks). 0, or -ENOTSUP with err on the others.
int agent_platform_clock_tables(const agent_platform_t *self, agent_power_tables_t *ret_tables,
                                jf_err_t *err);

// One parsed line of the trainer's output (start, epoch, ...) of a run of dataset, for what the
// platform's trainer reports beyond the wire records (a sim board's rail powers and modelled page
// cache). Fills *ret_line (zeroed when the line says nothing to the platform). Returns 0, or a
// negative errno with err (the line's effect is then partial: the board keeps its state).
int agent_platform_trainer_line(agent_platform_t *self, const char *dataset, const json_t *line,
                                agent_platform_line_t *ret_line, jf_err_t *err);

// Advances what the platform models in time (a sim board's thermal zones) to monotonic time
// now_us; called once per loop tick. Returns 0 (also where nothing is modelled) or a write error.
int agent_platform_tick(agent_platform_t *self, int64_t now_us, jf_err_t *err);

// The run's trainer has gone: the board is idle again (a sim board's rails back to idle power).
// Returns 0 or a write error.
int agent_platform_run_end(agent_platform_t *self, jf_err_t *err);

#endif
