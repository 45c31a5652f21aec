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

// Creates the data directory (mode 0700) if needed, opens the store (refusing a missing, empty,
// damaged or different one unless new_store: coord_store_open_owned), binds the agent endpoint
// and the control endpoint, and writes the bound agent endpoint to <data_dir>/endpoint.
// fleet is borrowed and must outlive the server. Caller owns the result; release with
// coord_server_destroy. NULL on failure with err.
coord_server_t *coord_server_new(const jf_fleet_config_t *fleet, bool new_store, jf_err_t *err);

// Runs the loop until *stop becomes non-zero (set from a signal handler). Returns 0 on a clean
// stop, or a negative errno if the store failed in a way the loop cannot recover from.
int coord_server_run(coord_server_t *self, volatile sig_atomic_t *stop, jf_err_t *err);

void coord_server_destroy(coord_server_t **self_p);

#endif
