/* The order in which a coordinator tick handles the agent messages it has read
 * (docs/protocol.md §1.8, §5.3.4): first each peer's messages up to its last urgent one (not a
 * stream's bulk: a run's end, a hello, an accept), in the order read, so that what dispatch and
 * liveness wait for is never behind the rest of the fleet's telemetry and never ahead of its own
 * peer's earlier messages; then the rest, in the order read. A pure function over peer keys, so
 * that the rule is tested without sockets (coord_server.c applies it). */
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

#endif
