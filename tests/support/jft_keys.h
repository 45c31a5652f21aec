/* Test support: CURVE keys for a fleet (docs/protocol.md §1.7) — the coordinator's keypair, an
 * agent's keypair in its state directory, accepted by copying its public part into
 * <data_dir>/keys/accepted/ (what `jetfleet keys accept` ends with). Failures fail the test. */
#ifndef JFT_KEYS_H
#define JFT_KEYS_H

#include "jft_fleet.h"

#include <czmq.h>

// `jetfleet-coordinator --keygen` for the fleet, and f->curve = true.
void jft_keys_coordinator(jft_fleet_t *f);

// The coordinator's public key as Z85 text into out (at least 41 bytes).
void jft_keys_coordinator_public(const jft_fleet_t *f, char *out);

// `jetfleet-agent --keygen` into the state directory of board name, accepted for that board.
void jft_keys_agent_accepted(jft_fleet_t *f, const char *name);

// The keypair of board name made by jft_keys_agent_accepted. Caller destroys.
zcert_t *jft_keys_agent_cert(const jft_fleet_t *f, const char *name);

#endif
