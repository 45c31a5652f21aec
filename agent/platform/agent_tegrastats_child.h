/* A live tegrastats: one long-lived `tegrastats --interval <ms>` child whose stdout the owner
 * reads without blocking, parsing each line with agent_tegrastats_parse_line and keeping the
 * newest. The fallback for power rails that sysfs does not let the agent read
 * (docs/telemetry.md "tegrastats fallback"). Spawned with posix_spawn (no shell), stdin and
 * stderr on /dev/null, a fixed environment; killed and reaped by destroy. Does not log. One
 * thread (the sampler's). Not for tegrastats logs on disk (agent_import.h). */
#ifndef AGENT_TEGRASTATS_CHILD_H
#define AGENT_TEGRASTATS_CHILD_H

#include "jf_err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define AGENT_TEGRASTATS_PATH_DEFAULT "/usr/bin/tegrastats" // --tegrastats
#define AGENT_TEGRASTATS_PATH_NONE    "none"                // --tegrastats none: no fallback
#define AGENT_TEGRASTATS_INTERVAL_MIN_MS 20    // 50 Hz, the sampler's highest rate
#define AGENT_TEGRASTATS_INTERVAL_MAX_MS 60000
#define AGENT_TEGRASTATS_STOP_WAIT_US (INT64_C(200) * 1000) // SIGTERM, then SIGKILL after this

typedef struct agent_tegrastats_child agent_tegrastats_child_t;

typedef struct agent_tegrastats_child_opts {
    const char *path; // the tegrastats executable, absolute; copied
    int interval_ms;  // --interval, AGENT_TEGRASTATS_INTERVAL_MIN_MS..MAX_MS
} agent_tegrastats_child_opts_t;

// Starts `path --interval <interval_ms>`. Returns NULL with err: -EINVAL for an interval out of
// range or a relative path, -ENOENT/-EACCES when path is not an executable file, the spawn's
// errno, or -ENOMEM. Caller owns the result; release with agent_tegrastats_child_destroy.
agent_tegrastats_child_t *agent_tegrastats_child_new(const agent_tegrastats_child_opts_t *opts,
                                                     jf_err_t *err);

// Closes the pipe, sends SIGTERM, waits at most AGENT_TEGRASTATS_STOP_WAIT_US for the child to
// exit, then SIGKILLs it and reaps it: no zombie is left. Accepts NULL and *self_p == NULL.
void agent_tegrastats_child_destroy(agent_tegrastats_child_t **self_p);

// Reads whatever the child has written, without blocking, and parses every complete line; the
// newest line that parsed is kept with now_us (monotonic) as its time. Malformed or overlong
// lines are counted (agent_tegrastats_child_bad_lines) and skipped. Returns 0, or -EPIPE with
// err saying how the child ended (exit status or signal) once its output is closed: the child
// is then reaped, and later calls return -EPIPE again; the newest line stays readable.
int agent_tegrastats_child_poll(agent_tegrastats_child_t *self, int64_t now_us, jf_err_t *err);

// Waits (poll(2)) until a line parses or timeout_us passes, for a one-shot sample. Returns 0 with
// a line kept, -ETIMEDOUT with err, or -EPIPE as agent_tegrastats_child_poll.
int agent_tegrastats_child_wait_line(agent_tegrastats_child_t *self, int64_t timeout_us,
                                     jf_err_t *err);

// The newest parsed line as a sample (agent_tegrastats.h), or NULL before the first; its
// monotonic read time in *ret_read_us (may be NULL). Borrowed: valid until the next poll.
const json_t *agent_tegrastats_child_latest(const agent_tegrastats_child_t *self,
                                            int64_t *ret_read_us);

// Completes sample (docs/telemetry.md) from the newest line when it was read at most max_age_us
// before now_us: every quantity of the line that sample lacks is copied (`rails` counts as
// lacking when none of sample's rails has a power_mw; `t_us`, `mono_us` and `source` are never
// taken), `from_tegrastats` lists the keys copied and `tegrastats_age_us` says how old the line
// was. Returns 0 (also when nothing was missing), -ESTALE when there is no line or the newest is
// too old (sample unchanged), or -ENOMEM.
int agent_tegrastats_child_fill(const agent_tegrastats_child_t *self, json_t *sample,
                                int64_t now_us, int64_t max_age_us);

// Lines skipped as malformed or too long so far, and the reason of the last one (borrowed; ""
// when none).
int64_t agent_tegrastats_child_bad_lines(const agent_tegrastats_child_t *self);
const char *agent_tegrastats_child_last_error(const agent_tegrastats_child_t *self);

// The pipe's read end, for poll(2) or zmq_poll (borrowed), or -1 once the child's output ended.
int agent_tegrastats_child_fd(const agent_tegrastats_child_t *self);

// The child's process id (for tests; it stays set after the child was reaped).
pid_t agent_tegrastats_child_pid(const agent_tegrastats_child_t *self);

// The interval it was started with, in ms.
int agent_tegrastats_child_interval_ms(const agent_tegrastats_child_t *self);

#endif
