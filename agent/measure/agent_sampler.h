/* The telemetry sampler: a czmq actor (its own thread) that owns the platform's telemetry reader
 * and, while a run is measured, samples it at the run's rate on CLOCK_MONOTONIC deadlines, adds
 * the dataset device's /proc/diskstats counters and, on a Jetson whose rails sysfs cannot read,
 * the rails of a tegrastats child it runs for the run (agent_tegrastats_child.h), and sends every
 * sample to the event loop
 * through its pipe, and measures the other load on the machine (agent_otherload.h) beside it. It counts late and missed samples. It talks to the loop only through that
 * pipe (STYLE.md §7) and never logs: problems come back as warning events. Implements the
 * sampling rules of docs/telemetry.md. Not for energy (agent_measure.h). */
#ifndef AGENT_SAMPLER_H
#define AGENT_SAMPLER_H

#include "agent_sysfs.h"
#include "jf_err.h"

#include <jansson.h>
#include <stdint.h>

#define AGENT_SAMPLER_RATE_MAX_HZ 50 // JF_TELEMETRY_HZ_MAX
#define AGENT_SAMPLER_DEVICE_MAX  31 // a disk name as /proc/diskstats prints it
#define AGENT_SAMPLER_TEXT_MAX    255

typedef struct agent_sampler agent_sampler_t;

#define AGENT_SAMPLER_ENDS_ONLY (-1) // agent_sampler_start's rate: samples at start and stop only

typedef struct agent_sampler_opts {
    agent_sysfs_t **reader_p; // the telemetry reader; taken over (*reader_p set to NULL) on
                              // success, so that only the sampler's thread ever reads it
    const char *proc_root;    // where diskstats is: "/proc"; copied
    const char *tegrastats;   // the tegrastats executable to run while a run is measured, for
                              // the rails the reader cannot read (agent_platform_tegrastats);
                              // NULL: no fallback. Copied
} agent_sampler_opts_t;

// Counts over one measured run (a plain value record).
typedef struct agent_sampler_stats {
    int64_t samples; // samples sent
    int64_t late;    // taken more than half a period after their deadline
    int64_t missed;  // deadlines without a sample: skipped because the sampler fell more than
                     // half a period behind, or nothing could be read; with the tegrastats
                     // fallback also a sample without a fresh line (docs/telemetry.md)
    double achieved_rate_hz; // (scheduled samples - 1) / (last - first of them); the final
                             // sample at stop is not on a deadline and does not count; 0 if < 2
    int tegrastats_interval_ms; // the --interval tegrastats ran at for the rails; 0: not run
    int64_t other_intervals;    // other load (agent_otherload.h): intervals measured; 0: none
    double other_mean_pct;      // CPU time outside the agent's process tree, % of all CPUs'
    double other_max_pct;       // the highest interval's, %
} agent_sampler_stats_t;

typedef enum agent_sampler_event_kind {
    AGENT_SAMPLER_SAMPLE = 0, // one sample
    AGENT_SAMPLER_STOPPED,    // the answer to agent_sampler_stop, after the final sample
    AGENT_SAMPLER_WARNING,    // something could not be read; sampling goes on
} agent_sampler_event_kind_t;

// What the sampler sent (a plain value record).
typedef struct agent_sampler_event {
    agent_sampler_event_kind_t kind;
    json_t *sample;                        // SAMPLE: the sample (docs/telemetry.md); caller owns it
    agent_sampler_stats_t stats;           // STOPPED: the run's counts
    char text[AGENT_SAMPLER_TEXT_MAX + 1]; // WARNING: what failed and what happens instead
} agent_sampler_event_t;

// Starts the actor, idle (not sampling). Caller owns the result; release with
// agent_sampler_destroy. NULL with err (-ENOMEM, or -EINVAL without a reader).
agent_sampler_t *agent_sampler_new(const agent_sampler_opts_t *opts, jf_err_t *err);

// Stops the actor and frees everything, the reader included. Accepts NULL and *self_p == NULL.
void agent_sampler_destroy(agent_sampler_t **self_p);

// The pipe's ZeroMQ socket handle, for zmq_poll in the loop (borrowed).
void *agent_sampler_handle(agent_sampler_t *self);

// Starts sampling at rate_hz (1..AGENT_SAMPLER_RATE_MAX_HZ), the first sample at once, with the
// `disk` object of device ("" or NULL: none). Counts start from zero. rate_hz
// AGENT_SAMPLER_ENDS_ONLY samples only at once and at agent_sampler_stop (an idle baseline with
// telemetry off, docs/baseline.md; tegrastats, where it is the rails' fallback, then runs at
// 1 Hz). Returns 0, -EINVAL for a rate out of range, or -EIO if the command could not be sent.
int agent_sampler_start(agent_sampler_t *self, int rate_hz, const char *device);

// Asks for one final sample and the end of sampling; a STOPPED event answers (also when it was
// not sampling). Returns 0 or -EIO.
int agent_sampler_stop(agent_sampler_t *self);

// Reads one event without blocking. Returns 0 with *ret_event filled, -EAGAIN when none is
// waiting, or -EPROTO for a message that is not one (dropped).
int agent_sampler_recv(agent_sampler_t *self, agent_sampler_event_t *ret_event);

#endif
