/* Runs one training as a child process (jetfleet-train) with an explicit argv and a cleared
 * environment, in its own process group, and turns its JSON-lines output into wire records.
 * An OOM or crash in the child becomes an outcome, never a problem for the agent. Not for
 * deciding what to run: the session validates run.assign first. */
#ifndef AGENT_RUNNER_H
#define AGENT_RUNNER_H

#include "agent_platform_run.h"
#include "jf_err.h"
#include "jf_msg_run.h"
#include "jf_run_spec.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define AGENT_RUNNER_LINE_MAX   (64 * 1024)
#define AGENT_RUNNER_KILL_GRACE_US (INT64_C(5) * 1000000) // SIGTERM, then SIGKILL after this

typedef struct agent_runner agent_runner_t;

// Called with every line of the trainer's output that parses as JSON, before it becomes a wire
// record, for what the platform's trainer reports beyond the records (agent_platform_trainer_line).
// line is borrowed for the call.
typedef void (*agent_runner_line_fn)(const json_t *line, void *arg);

typedef struct agent_runner_opts {
    const agent_platform_trainer_t *trainer; // the program and the platform's arguments to it
                                             // (agent_platform_trainer); borrowed for the call
    const jf_run_spec_t *spec;  // borrowed for the call
    agent_runner_line_fn line_fn; // may be NULL
    void *line_arg;             // passed to line_fn
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
