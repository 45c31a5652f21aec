/* The order in which a coordinator tick handles the agent messages it has read
 * (docs/protocol.md §1.8, §5.3.4): first each peer's messages up to its last urgent one (not a
 * stream's bulk: a run's end, a hello, an accept), in the order read, so that what dispatch and
 * liveness wait for is never behind the rest of the fleet's telemetry and never ahead of its own
 * peer's earlier messages; then the rest, in the order read, for as long as
 * coord_pending_bulk_until says. Pure functions, so that the rules are tested without sockets
 * (coord_server.c applies them). */
#ifndef COORD_PENDING_H
#define COORD_PENDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// A peer's key: 64-bit FNV-1a of its routing id. Two peers that share one only share the first
// pass (each keeps its own order), so a collision changes no outcome, only an order.
uint64_t coord_pending_peer_key(const void *routing_id, size_t len);

// The first pass over n messages read in that order, message i from peer[i] and urgent when
// urgent[i]: the indexes of every message whose peer has an urgent message at or after it, in
// ascending order, into ret_order (room for n). Returns how many; 0 when none is urgent, and
// SIZE_MAX when out of memory (the caller then handles every message in the order read).
size_t coord_pending_first_pass(const uint64_t *peer, const bool *urgent, size_t n,
                                size_t *ret_order);

// Until when (monotonic us) a tick handles the rest after its first pass ended at pass_end_us:
// the drain's budget from drain_start_us, cut to cut_us after the pass when the pass left a
// board to dispatch to (its run.assign then leaves with this tick's commit, and the rest still
// gets cut_us of every tick).
int64_t coord_pending_bulk_until(int64_t drain_start_us, int64_t budget_us, int64_t pass_end_us,
                                 bool dispatch_waits, int64_t cut_us);

#endif
