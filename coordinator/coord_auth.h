/* Coordinator side of CURVE authentication (docs/protocol.md §1.7): the coordinator's keypair,
 * the allow-list of agent keys under <data_dir>/keys/<state>/, a ZAP handler served from the
 * event loop, and the per-message check of the authenticated key: the board it speaks for.
 * Not the key files' format (common/jf_curve) nor the CLI that moves keys (cli_cmd_keys.c). */
#ifndef COORD_AUTH_H
#define COORD_AUTH_H

#include "jf_err.h"

#include <czmq.h>
#include <stdbool.h>
#include <stdint.h>

#define COORD_AUTH_ZAP_ENDPOINT "inproc://zeromq.zap.01" // RFC 27: where libzmq asks
#define COORD_AUTH_DOMAIN       "jetfleet"               // the agent socket's ZAP domain
#define COORD_AUTH_PENDING_MAX  1024 // pending files kept; more unknown keys are denied unrecorded
#define COORD_AUTH_REFRESH_US   (100 * 1000)      // how often the key directories are looked at
#define COORD_AUTH_SETTLE_US    (2 * 1000 * 1000) // directory times younger than this: rechecked
#define COORD_AUTH_FP_CHARS     16 // hex characters of a key's fingerprint (pending file names)

typedef struct coord_auth coord_auth_t;

// Writes the coordinator's keypair to <data_dir>/keys/coordinator (+ "_secret", mode 0600) and
// creates the state directories. Returns 0, -EEXIST if a key is there already, or a negative
// errno with err.
int coord_auth_keygen(const char *data_dir, jf_err_t *err);

// Loads the coordinator's keypair and the accepted keys from <data_dir>/keys and binds the ZAP
// handler (before any CURVE socket binds, so no handshake can happen without it). NULL with err
// when there is no key or the handler cannot bind. Caller owns the result; release with
// coord_auth_destroy (after the sockets it secured). One thread only: the event loop's.
coord_auth_t *coord_auth_new(const char *data_dir, jf_err_t *err);

// Makes sock a CURVE server with the coordinator's key and our ZAP domain. Call before binding.
void coord_auth_apply(const coord_auth_t *self, zsock_t *sock);

// The ZAP socket, for the loop's poller. Borrowed.
zsock_t *coord_auth_zap(const coord_auth_t *self);

// Answers every waiting ZAP request: 200 with User-Id = the client key for an accepted key,
// 400 otherwise (an unknown key is recorded under keys/pending/). Never blocks.
void coord_auth_serve(coord_auth_t *self);

// Reloads the accepted and quarantined keys if keys/accepted, keys/revoked or keys/quarantined
// changed since the last load (the
// CLI moves files there), looking at most every COORD_AUTH_REFRESH_US. Returns 0, or a negative
// errno with err (the old list stays in force).
int coord_auth_refresh(coord_auth_t *self, jf_err_t *err);

// The board whose key is accepted now and authenticated the connection frame arrived on (its
// User-Id), or NULL: no User-Id, or a key unknown, revoked or quarantined; that counts one
// refusal. Borrowed, valid until the next coord_auth_refresh or coord_auth_quarantine.
const char *coord_auth_board(coord_auth_t *self, zframe_t *frame);

// Counts (and logs, rate-limited) one refusal of a message whose key (Z85) belongs to board but
// which spoke as claimed: a hello naming another board, or a route of another board's.
void coord_auth_refuse_as(coord_auth_t *self, const char *key, const char *board,
                          const char *claimed);

// Quarantines board's key (docs/protocol.md §1.9): it leaves the allow-list at once (its next
// message is refused) and keys/accepted/<board> moves to keys/quarantined/<board> with reason as
// metadata, so the quarantine outlasts a restart until `jetfleet keys release`. Returns 0, or a
// negative errno with err when the file could not be moved (the key is refused in memory anyway).
int coord_auth_quarantine(coord_auth_t *self, const char *board, const char *reason,
                          jf_err_t *err);

// The reason board's key is in keys/quarantined/ as of the last load, or NULL. Borrowed, valid
// until the next coord_auth_refresh or coord_auth_quarantine.
const char *coord_auth_quarantine_reason(const coord_auth_t *self, const char *board);

// Incremented at every load of the key directories: when it changes, quarantines may have been
// released.
uint64_t coord_auth_generation(const coord_auth_t *self);

// Messages refused since start (coord_auth_board, coord_auth_refuse_as).
uint64_t coord_auth_refused(const coord_auth_t *self);

void coord_auth_destroy(coord_auth_t **self_p);

#endif
