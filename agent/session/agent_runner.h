/* Runs one training as a child process (jetfleet-train) with an explicit argv and a cleared
 * environment, in its own process group, and turns its JSON-lines output into wire records.
 * An OOM or crash in the child becomes an outcome, never a problem for the agent. Not for
 * deciding what to run: the session validates run.assign first. */
#ifndef AGENT_RUNNER_H
#define AGENT_RUNNER_H

#include "agent_platform.h"
#include "jf_err.h"
#include "jf_msg_run.h"
#include "jf_run_spec.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define AGENT_RUNNER_LINE_MAX   (64 * 1024)
#define AGENT_RUNNER_KILL_GRACE_US (INT64_C(5) * 1000000) // SIGTERM, then SIGKILL after this

typedef struct agent_runner agent_runner_t;

// Called with a simulated trainer's rail powers {rail: mW}: the start line's sim_power_mw (the
// first epoch) and each epoch line's sim_next_power_mw (the next one). power_mw is borrowed for
// the call.
typedef void (*agent_runner_power_fn)(const json_t *power_mw, void *arg);

// Called with a simulated trainer's modelled page cache after an epoch: the epoch line's
// "sim_cache" object (train_records.h). sim_cache is borrowed for the call.
typedef void (*agent_runner_cache_fn)(int64_t epoch, const json_t *sim_cache, void *arg);

typedef struct agent_runner_opts {
    const char *train_bin;      // absolute path of jetfleet-train
    const char *dataset_dir;    // <dataset_root>/<dataset>; unused when sim is set
    const jf_run_spec_t *spec;  // borrowed for the call
    const agent_platform_sim_t *sim; // NULL: a real run; else sim->train_bin with the simulated
                                // trainer's argv (no --data, --threads, --device); borrowed
    agent_runner_power_fn power_fn; // sim: where the trainer's rail powers go (may be NULL)
    void *power_arg;            // passed to power_fn and cache_fn
    agent_runner_cache_fn cache_fn; // sim: where the trainer's page cache goes (may be NULL)
    double sim_cache_resident;  // sim: share of the dataset in the page cache at the start, 0..1
} agent_runner_opts_t;

typedef struct agent_runner_outcome {
    bool done;                  // exit 0 after a "done" line
    jf_fail_reason_t reason;    // when !done
    char detail[256];           // when !done: what happened, for people
    int64_t epochs;             // epoch records seen
} agent_runner_outcome_t;

// Called for each record the child produced, in order. rec is a new wire record (the callee
// takes it over). Returns 0, or non-zero to stop reading for now.
typedef int (*agent_runner_record_fn)(json_t *rec, void *arg);

// Starts the child. Caller owns the result; release with agent_runner_destroy. NULL with err if
// it could not be started.
agent_runner_t *agent_runner_start(const agent_runner_opts_t *opts, jf_err_t *err);

// The read end of the child's stdout, to poll; -1 once it reached end of file.
int agent_runner_fd(const agent_runner_t *self);

// Reads what the child wrote and hands complete records to fn.
void agent_runner_read(agent_runner_t *self, agent_runner_record_fn fn, void *arg);

// Escalates a stop (SIGKILL after the grace period) and enforces the run timeout.
void agent_runner_tick(agent_runner_t *self, int64_t now_mono_us);

// Asks the child to stop for reason (cancelled or timeout): SIGTERM to its process group.
void agent_runner_stop(agent_runner_t *self, jf_fail_reason_t reason);

// True once the child has exited and its output is fully read; fills *ret_outcome.
bool agent_runner_finished(agent_runner_t *self, agent_runner_outcome_t *ret_outcome);

// Kills the child if it is still running, reaps it and frees everything.
void agent_runner_destroy(agent_runner_t **self_p);

#endif
