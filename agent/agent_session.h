/* The agent daemon's session with the coordinator: one DEALER socket whose identity is the board
 * name, hello/welcome registration with inventory, heartbeats both ways, run.assign validation,
 * one training child at a time, and every record and telemetry sample streamed through the spool
 * until acknowledged (docs/protocol.md). One thread. */
#ifndef AGENT_SESSION_H
#define AGENT_SESSION_H

#include "agent_platform.h"
#include "jf_err.h"
#include "jf_msg_session.h"

#include <signal.h>
#include <stddef.h>

typedef struct agent_session agent_session_t;

typedef struct agent_session_opts {
    const char *name;                    // board name (ZeroMQ identity); validated ident
    const char *endpoint;                // coordinator's agent endpoint, e.g. tcp://host:7700
    const char *train_bin;               // absolute path of jetfleet-train
    size_t n_storage;                    // media this board offers
    const jf_hello_storage_t *storage;   // borrowed for the call (copied)
    agent_platform_t *platform;          // borrowed; must outlive the session
} agent_session_opts_t;

// Caller owns the result; release with agent_session_destroy. NULL with err on bad options.
agent_session_t *agent_session_new(const agent_session_opts_t *opts, jf_err_t *err);

// Runs until *stop becomes non-zero. Returns 0 on a clean stop.
int agent_session_run(agent_session_t *self, volatile sig_atomic_t *stop, jf_err_t *err);

// Kills a training child still running and frees everything.
void agent_session_destroy(agent_session_t **self_p);

#endif
