/* Private to coord_server*.c: the server struct, the post-commit outbox and the handlers. */
#ifndef COORD_SERVER_INTERNAL_H
#define COORD_SERVER_INTERNAL_H

#include "coord_auth.h"
#include "coord_fdguard.h"
#include "coord_pending.h"
#include "coord_registry.h"
#include "coord_server.h"
#include "coord_store.h"
#include "jf_blob.h"
#include "jf_log.h"
#include "jf_msg.h"
#include "jf_msg_run.h"

#include <czmq.h>
#include <stdbool.h>
#include <stdint.h>

#define COORD_TICK_MS          50   // poll timeout: the longest the loop sleeps
#define COORD_DRAIN_MAX        256  // messages taken from one socket per tick
#define COORD_DRAIN_BUDGET_US  (INT64_C(50) * 1000) // and time spent on them, at most
// Agent messages are read from the socket before any is handled (coord_server.c, s_drain_agents):
// at most this many wait read and unhandled, holding at most this many bytes (docs/protocol.md
// §1.8), and reading takes at most this long per tick.
#define COORD_PENDING_MAX       16384
#define COORD_PENDING_MAX_BYTES (INT64_C(16) << 20)
#define COORD_READ_BUDGET_US    (INT64_C(10) * 1000)
// The coordinator's part of a board's wait for its next run (docs/protocol.md §5.1): from
// reading the message that ended its run to sending the next run.assign. The last this many are
// kept and summarised in the log every COORD_REDISPATCH_LOG_US and at exit.
#define COORD_REDISPATCH_SAMPLES  4096
#define COORD_REDISPATCH_LOG_US   (INT64_C(60) * 1000000)
#define COORD_REREAD_US           (INT64_C(5) * 1000) // handling bulk, the socket is read this often
// After an urgent pass that left a board to dispatch to, bulk is handled this much longer at
// most before the tick's dispatch and commit (coord_server.c, s_handle_pending).
#define COORD_BULK_CUT_US         (INT64_C(10) * 1000)
#define COORD_ASSIGN_RETRY_US  (INT64_C(2) * 1000000) // first run.assign resend
#define COORD_ASSIGN_RETRY_MAX_US (INT64_C(30) * 1000000)
#define COORD_LEASE_MIN_US     (INT64_C(60) * 1000000) // runs of an offline board survive this
#define COORD_LEASE_HEARTBEATS 10
#define COORD_BACKLOG          2048
#define COORD_SPACE_CHECK_US   (INT64_C(5) * 1000000) // free-space floor: statvfs this often
#define COORD_RETENTION_IDLE_US (INT64_C(1) * 1000000) // next retention batch when none was due
// Credit (docs/protocol.md §5.3.6): each session may have this many stream messages in flight
// per stream. The grant is halved when a tick finds a backlog (a socket drained to
// COORD_DRAIN_MAX or COORD_DRAIN_BUDGET_US) or takes longer than COORD_CREDIT_SLOW_TICK_US (slow
// commits), and raised by one otherwise, at most once per COORD_CREDIT_STEP_US either way.
#define COORD_CREDIT_MAX          8
#define COORD_CREDIT_MIN          1
#define COORD_CREDIT_SLOW_TICK_US (INT64_C(250) * 1000)
#define COORD_CREDIT_STEP_US      (INT64_C(1) * 1000000)
// Receive high-water mark of the agent socket, per connection (docs/protocol.md §1.8): the
// stream messages a session may have in flight under the largest grant, plus one of each
// message that answers one exchange or timer (hello, heartbeat, run.accept or run.reject,
// error). What a peer sends beyond it (go-back-N duplicates while acks are late, the window
// of an agent without credit) waits in the kernel's buffers and the peer's send queue: libzmq
// stops reading that connection, it drops nothing. The coordinator's receive backlog is then
// at most this many messages per session, whatever the agents resend.
#define COORD_RCVHWM_SESSION_MSGS 4
#define COORD_AGENT_RCVHWM        (COORD_CREDIT_MAX + COORD_RCVHWM_SESSION_MSGS)

// Why a reply was dropped instead of sent (counted; `jetfleet status` shows the counts).
typedef enum coord_server_drop {
    COORD_DROP_PEER_FULL = 0, // the peer's pipe is full: it does not read (EAGAIN)
    COORD_DROP_PEER_GONE,     // no connection has that routing id any more (EHOSTUNREACH)
    COORD_DROP_OTHER,         // anything else (out of memory, a closed socket)
    COORD_DROP_COUNT
} coord_server_drop_t;

// An agent message read from the socket, authenticated and admitted by the per-board limits,
// not yet handled.
typedef struct coord_pending {
    zmsg_t *m;       // owned: the routing id, then the message's frames; NULL once handled
    bool urgent;     // not a stream's bulk (telemetry, run.progress, run.weights): handled first
    int64_t read_us; // monotonic time it was read
    uint64_t peer;   // coord_pending_peer_key of its routing id
    int64_t bytes;   // its frames' bytes
} coord_pending_t;

typedef struct coord_outmsg {
    bool control;          // true: control socket, else agent socket
    zframe_t *identity;    // owned: routing id of the peer
    char *payload;         // owned: encoded JSON
    size_t len;
} coord_outmsg_t;

struct coord_server {
    const jf_fleet_config_t *fleet; // borrowed; owned by main
    coord_store_t *store;           // owned
    coord_registry_t *registry;     // owned
    zsock_t *agents;                // owned: ROUTER for agents
    zsock_t *control;               // owned: ROUTER for the CLI
    zpoller_t *poller;              // owned
    coord_fdguard_t *fdguard;       // owned: descriptor use, agent accepts (coord_fdguard.h)
    coord_auth_t *auth;             // owned: CURVE allow-list; NULL with --insecure-loopback
    bool insecure_loopback;         // plaintext agent endpoint, loopback/ipc only
    int lock_fd;                    // owned: flock on <data_dir>/coordinator.lock, or -1
    int64_t epoch;                  // coordinator epoch (store meta)
    int64_t next_id;                // next outgoing message id
    int64_t start_mono_us;          // when the loop started (leases of unseen boards count from it)
    int64_t next_liveness_us;       // monotonic time of the next liveness check
    int64_t next_ident_save_us;     // monotonic time of the next store identity save
    bool dispatch_needed;           // something changed that may free a board or add runs
    size_t n_out, cap_out;
    coord_outmsg_t *out;            // owned: replies sent after the tick's commit
    jf_log_ratelimit_t rl_bad;      // invalid messages
    jf_log_ratelimit_t rl_send;     // send failures
    uint64_t drops[COORD_DROP_COUNT]; // replies dropped since start, by reason
    int64_t next_space_check_us;    // monotonic time of the next free-space check (0: never read)
    int64_t free_bytes;             // free space of the store's filesystem at the last check
    bool space_low;                 // free_bytes is below coordinator.min_free_space: no new runs
    int64_t next_retention_us;      // monotonic time of the next retention batch
    int64_t credit;                   // stream messages in flight granted per stream, now
    int64_t credit_next_us;           // monotonic time of the next credit change
    bool drained_full;                // this tick left agent messages unhandled (a backlog)
    int64_t caught_up_mono_us;        // last time a drain found the agent socket empty and
                                      // handled every message it had read: every message that
                                      // arrived before it has been handled (liveness measures
                                      // silence up to here, docs/protocol.md §4.2)
    coord_pending_t *pending;         // owned: COORD_PENDING_MAX slots, n_pending used, in the
    size_t n_pending;                 // order read
    int64_t pending_bytes;            // their bodies' bytes
    struct {                          // owned, COORD_PENDING_MAX each: the first pass's input
        uint64_t *peer;               // and output over the messages not yet handled
        bool *urgent;
        size_t *index; // into pending
        size_t *order; // coord_pending_first_pass's
    } pass;
    int64_t handling_read_us; // when the agent message being handled was read (0: none)
    size_t n_redispatched;    // this tick's run.assign to boards whose run ended: the
    int64_t redispatched[COORD_REDISPATCH_SAMPLES];  // ends' read times, until the tick's send
    int64_t redispatch_us[COORD_REDISPATCH_SAMPLES]; // the last latencies, a ring
    size_t n_redispatch;            // latencies ever recorded (the ring holds the last ones)
    size_t redispatch_logged;       // n_redispatch at the last summary
    int64_t next_redispatch_log_us; // monotonic time of the next summary

    char blob_sha[JF_BLOB_SHA256_HEX_LEN + 1]; // the blob blob.get served last ("": none)
    void *blob_data;                // owned: its bytes, so that a fetch of n chunks reads the
                                    // store once, not n times (blobs never change)
    size_t blob_len;                // their length
    coord_limits_peer_t anonymous;  // one bucket for every peer not in fleet.yaml (§1.9)
    uint64_t auth_generation;       // coord_auth_generation at the last quarantine sync
    jf_log_ratelimit_t rl_limits;   // messages dropped by the limits
};

// Queues msg (taking it over) for the peer identity (copied) on the agent or control socket,
// to be sent after the current transaction commits. Returns 0 or -ENOMEM.
int coord_server_queue(coord_server_t *self, bool control, const zframe_t *identity,
                       json_t *msg);
// Queues msg to the board on the agent socket, to its route (the connection its last accepted
// hello came on, docs/protocol.md §1.3). A board without one gets nothing: counted as peer_gone.
int coord_server_queue_board(coord_server_t *self, coord_board_t *board, json_t *msg);
int64_t coord_server_next_id(coord_server_t *self);
// The name of a drop reason as `status` reports it ("peer_full", ...). Static string.
const char *coord_server_drop_name(coord_server_drop_t why);

// Who sent a message on the agent endpoint (docs/protocol.md §1.3, §1.7). Borrowed pointers,
// valid while the message is handled.
typedef struct coord_sender {
    coord_board_t *route_board; // the board whose route the routing id is, or NULL
    const char *key;            // with authentication: the connection's key (User-Id), else NULL
    const char *key_board;      // with authentication: the board of that key, else NULL
    coord_board_t *board;       // whose limits apply: route_board, else key_board's, else NULL
} coord_sender_t;

// Agent handlers (coord_server_agent.c): identity is the routing id, sender who it is. A board's
// handlers run only for messages on its route while it has a session. Return 0, or a negative
// errno if the store failed (the tick is rolled back).
int coord_server_on_agent_msg(coord_server_t *self, const zframe_t *identity,
                              const coord_sender_t *sender, const jf_msg_t *msg, jf_err_t *err);
// Stream handlers (coord_server_stream.c): board is the registered sender.
int coord_server_on_run_progress(coord_server_t *self, coord_board_t *board,
                                 const zframe_t *identity, const jf_msg_t *msg, jf_err_t *err);
int coord_server_on_telemetry(coord_server_t *self, coord_board_t *board,
                              const zframe_t *identity, const jf_msg_t *msg, jf_err_t *err);
int coord_server_on_run_done(coord_server_t *self, coord_board_t *board, const zframe_t *identity,
                             const jf_msg_t *msg, jf_err_t *err);
int coord_server_on_run_failed(coord_server_t *self, coord_board_t *board,
                               const zframe_t *identity, const jf_msg_t *msg, jf_err_t *err);
// Weight blobs (docs/protocol.md §5.7): a chunk of a run's returned weights, in its stream
// (coord_server_stream.c); a chunk of a stored blob asked for (coord_server_agent.c).
int coord_server_on_run_weights(coord_server_t *self, coord_board_t *board,
                                const zframe_t *identity, const jf_msg_t *msg, jf_err_t *err);
// The credit to grant board in a welcome or ack: 0 (no member) for an agent that did not say it
// understands credit, else the grant in force (coord_server_stream.c).
int64_t coord_server_credit(const coord_server_t *self, const coord_board_t *board);
// Adjusts the grant after a tick of tick_us (receive, handle, commit); see COORD_CREDIT_*.
void coord_server_credit_tick(coord_server_t *self, int64_t tick_us, int64_t now_us);
// Reads the run a run-family message names and checks it belongs to board. Returns 0, 1 if an
// error reply was queued instead, or a negative errno on a store failure.
int coord_server_board_run(coord_server_t *self, coord_board_t *board, const jf_msg_t *msg,
                           jf_msg_run_ref_t *ret_ref, coord_run_row_t *ret_row, jf_err_t *err);

// Control handlers (coord_server_ctl.c).
int coord_server_on_ctl_msg(coord_server_t *self, const zframe_t *identity, const jf_msg_t *msg,
                            jf_err_t *err);

// Dispatch and liveness (coord_server_dispatch.c), run once per tick inside the transaction.
int coord_server_dispatch(coord_server_t *self, jf_err_t *err);
int coord_server_liveness(coord_server_t *self, jf_err_t *err);
// Free-space floor and retention (coord_server_dispatch.c), once per tick inside the
// transaction: reads the store filesystem's free space every COORD_SPACE_CHECK_US (space_low
// gates new assignments) and deletes one batch of finished runs' expired telemetry. Returns 0
// or the store's error (the tick is rolled back).
int coord_server_housekeep(coord_server_t *self, jf_err_t *err);
// Why new runs are not dispatched (written into buf), or NULL when they are.
const char *coord_server_space_reason(const coord_server_t *self, char *buf, size_t size);
// Finds or queues what to do with one active run when its board is known to be gone.
int coord_server_lose_run(coord_server_t *self, coord_board_t *board, const char *why,
                          jf_err_t *err);
// Sends run.cancel for an active run (assigned runs are failed at once).
int coord_server_cancel_run(coord_server_t *self, const char *run, jf_err_t *err);

// Per-board limits and quarantine (coord_server_limits.c, docs/protocol.md §1.9), agent endpoint
// only; board is the sender's (coord_sender_t), NULL for a peer that is no board yet. Before
// decoding: false when the message m is dropped unread (its board is quarantined, or it broke a
// limit, which may quarantine the board). After decoding: false when the message is larger than its
// type allows. Both run inside the tick's transaction. init_anonymous fills the shared bucket of
// peers that are no board yet (coord_limits_anonymous; insecure_loopback and fleet set first).
void coord_server_limits_init_anonymous(coord_server_t *self);
bool coord_server_limits_admit(coord_server_t *self, coord_board_t *board, zmsg_t *m);
bool coord_server_limits_check(coord_server_t *self, coord_board_t *board, const jf_msg_t *msg,
                               size_t size_bytes);
// After the protocol refused a message of board's that passed both (v: COORD_LIMITS_INVALID or
// COORD_LIMITS_OTHER_BOARD_RUN): counts the violation, which may quarantine the board.
void coord_server_limits_refused(coord_server_t *self, coord_board_t *board,
                                 coord_limits_verdict_t v);
// Follows keys/quarantined/ (CURVE only): boards found there are quarantined, boards released
// from there (`jetfleet keys release`) come back. Cheap when the keys did not change.
void coord_server_limits_sync(coord_server_t *self);
// The limits in force and the unregistered peers' bucket, for ctl.status. New reference.
json_t *coord_server_limits_json(const coord_server_t *self);

#endif
