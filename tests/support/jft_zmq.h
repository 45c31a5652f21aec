/* Test support: raw ZeroMQ peers on 127.0.0.1 for hostile-input tests — a DEALER posing as an
 * agent or CLI, and a ROUTER posing as a coordinator. */
#ifndef JFT_ZMQ_H
#define JFT_ZMQ_H

#include <czmq.h>
#include <jansson.h>
#include <stddef.h>

// A DEALER connected to endpoint with the given identity (NULL: none). Caller destroys.
zsock_t *jft_dealer_new(const char *endpoint, const char *identity);

// The same with an identity of len raw bytes, which may hold NUL bytes (len 0: none).
zsock_t *jft_dealer_new_raw(const char *endpoint, const void *identity, size_t len);

// A CURVE client DEALER: identity (its routing id; NULL: none, as the agent), the client keypair
// cert (borrowed for the call) and the server's Z85 public key. Caller destroys.
zsock_t *jft_curve_dealer_new(const char *endpoint, const char *identity, zcert_t *cert,
                              const char *server_key);

// A ROUTER bound to ipc://<dir>/router.sock, a path in the test's own directory, for a test that
// poses as the coordinator of its agents: an agent that retries after the test closed it cannot
// reach another test's coordinator, as it could on a freed TCP port. NULL if it cannot bind
// (the path too long for a socket address among the reasons). Caller destroys.
zsock_t *jft_router_new_in(const char *dir);

// Sends len bytes as one frame (DEALER) or [identity][bytes] (ROUTER). On a ROUTER identity NULL
// means the routing id of the last message jft_recv_json (or jft_recv_type) took from a ROUTER:
// for a test posing as the coordinator of an agent, which sets no routing id (docs/protocol.md
// §1.3). 0, or -1 (the send failed, or no ROUTER received anything yet).
int jft_send_raw(zsock_t *sock, const char *identity, const void *data, size_t len);

// Sends n frames (NUL-terminated strings; "" is an empty frame) as one multi-frame message,
// after the routing frame as jft_send_raw chooses it. 0 or -1.
int jft_send_frames(zsock_t *sock, const char *identity, const char *const frames[], size_t n);

// Receives one message within timeout_ms and decodes its last frame as JSON (NULL on timeout or
// if it is not JSON). With a ROUTER, *ret_identity (if not NULL) gets the sender (caller frees).
json_t *jft_recv_json(zsock_t *sock, int timeout_ms, char **ret_identity);

// Receives messages until one of the given type arrives (others are skipped) or timeout_ms.
json_t *jft_recv_type(zsock_t *sock, const char *type, int timeout_ms, char **ret_identity);

#endif
