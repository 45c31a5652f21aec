/* The agent daemon's session with the coordinator: one DEALER socket whose identity is the board
 * name, hello/welcome registration with inventory, heartbeats both ways, run.assign validation,
 * one training child at a time, and every record and telemetry sample streamed through the spool
 * until acknowledged (docs/protocol.md). The event loop is one thread; the telemetry sampler and
 * the worker for blocking steps around a run (power modes, cache drops, residency) are actors
 * that talk to it through their pipes. */
#ifndef AGENT_SESSION_H
#define AGENT_SESSION_H

#include "agent_platform.h"
#include "agent_spool.h"
#include "jf_err.h"
#include "jf_msg_session.h"

#include <limits.h>
#include <signal.h>
#include <stddef.h>

typedef struct agent_session agent_session_t;

typedef struct agent_session_opts {
    const char *name;                    // board name (ZeroMQ identity); validated ident
    const char *endpoint;                // coordinator's agent endpoint, e.g. tcp://host:7700
    const char *train_bin;               // absolute path of jetfleet-train
    size_t n_storage;                    // media this board offers
    const jf_hello_storage_t *storage;   // borrowed for the call (copied)
    const char (*storage_mount)[PATH_MAX]; // n_storage configured mount points ("": not
                                         // configured); NULL: none; borrowed for the call
    const char *helper_command;          // jetfleet-privhelper's command line, words split at
                                         // spaces (agent_options_split_command); NULL or "":
                                         // none configured; copied
    const char *proc_root;               // /proc, for mountinfo and diskstats; copied
    const char *sysfs_root;              // /sys, for block device names; copied
    agent_platform_t *platform;          // borrowed; must outlive the session. Its telemetry
                                         // reader is handed to the sampler thread
    agent_spool_opts_t spool;            // where the spool lives and its cap (agent_spool.h)
    const char *key_path;                // this board's keypair (jf_curve_keygen); NULL or ""
                                         // with insecure_loopback
    const char *coordinator_key_path;    // the pinned coordinator public key; likewise
    bool insecure_loopback;              // plaintext (a loopback endpoint, agent_options.c)
    const char *container_command;       // --container (agent_container.h); NULL or "": no
                                         // container engine; copied
} agent_session_opts_t;

// Caller owns the result; release with agent_session_destroy. NULL with err on bad options.
agent_session_t *agent_session_new(const agent_session_opts_t *opts, jf_err_t *err);

// Runs until *stop becomes non-zero. Returns 0 on a clean stop.
int agent_session_run(agent_session_t *self, volatile sig_atomic_t *stop, jf_err_t *err);

// Kills a training child still running, restores a power state the board was put in for a run
// (waiting for the helper), and frees everything.
void agent_session_destroy(agent_session_t **self_p);

#endif
