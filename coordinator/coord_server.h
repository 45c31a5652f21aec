/* The coordinator daemon: event loop that owns the agent and control sockets, the registry and
 * the store; dispatches pending runs to idle boards and persists everything agents report.
 * One thread. docs/protocol.md describes what travels; docs/store.md what is kept. */
#ifndef COORD_SERVER_H
#define COORD_SERVER_H

#include "jf_err.h"
#include "jf_fleet_config.h"

#include <signal.h>
#include <stdbool.h>

typedef struct coord_server coord_server_t;

// How the server starts (coord_main's options).
typedef struct coord_server_opts {
    bool new_store;         // --new-store: create a store where none is (docs/store.md)
    bool insecure_loopback; // --insecure-loopback: plaintext agents, 127.0.0.1/ipc endpoints only
} coord_server_opts_t;

// Creates the data directory (mode 0700) if needed, opens the store (refusing a missing, empty,
// damaged or different one unless opts->new_store: coord_store_open_owned), binds the agent
// endpoint and the control endpoint, and writes the bound agent endpoint to <data_dir>/endpoint.
// The agent endpoint is a CURVE server with the allow-list of <data_dir>/keys (coord_auth.h);
// without a coordinator key it fails, unless opts->insecure_loopback, which is refused for an
// endpoint other than tcp://127.0.0.1 or ipc://. fleet is borrowed and must outlive the server.
// Caller owns the result; release with coord_server_destroy. NULL on failure with err.
coord_server_t *coord_server_new(const jf_fleet_config_t *fleet, const coord_server_opts_t *opts,
                                 jf_err_t *err);

// Runs the loop until *stop becomes non-zero (set from a signal handler). Returns 0 on a clean
// stop, or a negative errno if the store failed in a way the loop cannot recover from.
int coord_server_run(coord_server_t *self, volatile sig_atomic_t *stop, jf_err_t *err);

void coord_server_destroy(coord_server_t **self_p);

#endif
