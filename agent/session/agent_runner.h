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
#define AGENT_RUNNER_EXTRA_MAX  8 // arguments a caller may add after the run's own

#define AGENT_RUNNER_ATTACHED_DIED                                                                 \
    "the trainer ended while no agent watched it (agent restarted), without a done or error "    \
    "record"
// The same when the previous agent process was stopped cleanly and stopped the trainer itself
// (the spool says so: docs/protocol.md §4.4.1).
#define AGENT_RUNNER_STOPPED_WITH_AGENT                                                            \
    "the agent was stopped (SIGTERM or SIGINT) during the run and stopped its trainer; the "       \
    "next agent start delivered what the trainer wrote"

typedef struct agent_runner agent_runner_t;

// How far the spool has a trainer's output: the offset to read on from (the end of the last line
// that gave a record), and the last record of each kind in the spool, so that a line read again
// never gives a record twice. Epochs and minibatches come in increasing (epoch, index) order.
typedef struct agent_runner_mark {
    int64_t offset;   // bytes
    bool start;       // the start record is in
    int64_t epoch;    // the last epoch record's epoch; -1: none
    int64_t epochs;   // epoch records in
    int64_t mb_epoch; // the last minibatch record's (epoch, index); -1: none
    int64_t mb_index;
    int64_t samples;   // telemetry samples spooled (the session's count, for the measure record)
    int64_t last_t_us; // wall clock of the last of them; 0: none
} agent_runner_mark_t;

#define AGENT_RUNNER_MARK_NONE                                                                     \
    ((agent_runner_mark_t) {.epoch = -1, .mb_epoch = -1, .mb_index = -1})

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
    const char *out_path;       // borrowed; the trainer's stdout goes to this new file (it then
                                // survives the agent); NULL: a pipe (it dies with the agent)
    bool hold;                  // the child waits at its start gate until agent_runner_release
                                // (the caller records it first); false: released at once
    const char *const *extra_args; // borrowed for the call: appended after the run's own
                                   // (a federated round's --minibatches and weight files)
    size_t n_extra;                // entries in extra_args, at most AGENT_RUNNER_EXTRA_MAX
} agent_runner_opts_t;

// A trainer started by an earlier agent process (docs/protocol.md §4.4).
typedef struct agent_runner_attach {
    int64_t pid;                // its process (and process group)
    int64_t start_ticks;        // its start time as recorded: another process on the pid is not it
    const char *out_path;       // borrowed: the file its stdout goes to
    agent_runner_mark_t mark;   // what the spool has of it
    int64_t timeout_us;         // the run timeout, counted from the trainer's start (start_ticks):
                                // the deadline is the one the first agent set
    agent_runner_line_fn line_fn; // may be NULL
    void *line_arg;
} agent_runner_attach_t;

typedef struct agent_runner_outcome {
    bool done;                  // exit 0 after a "done" line
    jf_fail_reason_t reason;    // when !done
    char detail[256];           // when !done: what happened, for people
    int64_t epochs;             // epoch records seen
} agent_runner_outcome_t;

// Called for each record the child produced, in order. rec is a new wire record (the callee
// takes it over). Returns 0, or non-zero to stop reading for now.
typedef int (*agent_runner_record_fn)(json_t *rec, void *arg);

// Starts the child (fork): it sets up its output and process group, then waits at a start gate
// and runs the trainer (exec) only on agent_runner_release; if the gate closes first (the agent
// died, or destroyed the runner) it exits (code 125) without running it. With opts->hold false
// the gate opens at once. Caller owns the result; release with agent_runner_destroy. NULL with
// err if it could not be started.
agent_runner_t *agent_runner_start(const agent_runner_opts_t *opts, jf_err_t *err);

// Opens the start gate of a held child (a no-op once open): 0, or -EIO when the child has gone.
int agent_runner_release(agent_runner_t *self);

// The run's deadline on the monotonic clock: the start plus the run timeout (for a re-attached
// trainer, its start as /proc records it).
int64_t agent_runner_deadline_us(const agent_runner_t *self);

// Re-attaches to a trainer an earlier agent started: reads its output file from the mark on,
// skipping records the mark says are spooled, and sees it end through /proc (it is not this
// process's child: it has no wait status, its done or error line says how it ended, and
// without one it is crashed, AGENT_RUNNER_ATTACHED_DIED). Works whether it still runs or not.
// Caller owns the result; release with agent_runner_destroy (which kills it if it runs). NULL
// with err when its file cannot be read.
agent_runner_t *agent_runner_attach(const agent_runner_attach_t *a, jf_err_t *err);

// The start time in clock ticks since boot (field 22 of /proc/PID/stat) of a live process; 0,
// or -ENOENT when there is no such process or it is a zombie.
int agent_runner_proc_start_ticks(int64_t pid, int64_t *ret_ticks);

// The trainer's pid and start time (0 if /proc did not say), for the spool's trainer row.
void agent_runner_identity(const agent_runner_t *self, int64_t *ret_pid, int64_t *ret_start_ticks);

// The end of the last line that gave a record handed to the record callback: the read mark's
// offset once those records are spooled.
int64_t agent_runner_offset(const agent_runner_t *self);

// True once the trainer has ended (reaped; for a re-attached one: gone from /proc).
bool agent_runner_has_ended(agent_runner_t *self);

// True for a re-attached trainer; the count of records its re-read lines gave that were skipped.
bool agent_runner_is_attached(const agent_runner_t *self);
int64_t agent_runner_skipped(const agent_runner_t *self);

// What to poll for the trainer's output: the read end of its stdout pipe, or with an output file
// an inotify descriptor that is readable when the file grows (-1 if inotify is unavailable: then
// the caller's tick is the only wake-up); -1 once the output reached its end.
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
