/* Registry of boards: which are online (by any traffic within the heartbeat timeout), their
 * session, and the one run each is busy with. In memory; the store keeps the durable copy.
 * Boards come from fleet.yaml only: an agent whose name is not there cannot register. */
#ifndef COORD_REGISTRY_H
#define COORD_REGISTRY_H

#include "coord_clock.h"
#include "coord_limits.h"
#include "jf_fleet_config.h"
#include "jf_log.h"
#include "jf_msg_session.h"
#include "jf_run_spec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COORD_QUARANTINE_REASON_MAX 256 // bytes of a quarantine reason with its NUL
#define COORD_ROUTE_MAX             255 // bytes of a ZeroMQ routing id (ZMTP's limit)

typedef struct coord_registry coord_registry_t;

typedef enum coord_board_run {
    COORD_BOARD_IDLE = 0,
    COORD_BOARD_ASSIGNED, // run.assign sent, run.accept not yet received
    COORD_BOARD_RUNNING,
} coord_board_run_t;

// One board's live state. Plain value record owned by the registry.
typedef struct coord_board {
    const jf_board_spec_t *spec;         // borrowed; owned by the fleet config
    bool online;
    unsigned char route[COORD_ROUTE_MAX]; // routing id of the connection whose hello was
                                          // accepted last: where its messages go (protocol.md
                                          // §1.3); kept while offline, replaced by a new hello
    size_t route_len;                     // 0: no connection of it has registered yet
    char session[JF_SESSION_ID_LEN + 1]; // current session id ("" when never registered)
    int64_t agent_started_us;            // the registered agent's start (its hello, wall us)
    int64_t last_rx_mono_us;             // last message received from the agent
    int64_t last_tx_mono_us;             // last message sent to it
    int64_t offline_since_mono_us;       // when it went offline (0 while online)
    coord_board_run_t run_state;
    char run[JF_RUN_ID_LEN + 1];         // the run it is busy with, if any
    int64_t attempt;                     // that run's attempt
    int64_t assign_next_mono_us;         // when to resend run.assign while ASSIGNED
    int assign_tries;                    // run.assign messages sent for this attempt
    int64_t cancel_next_mono_us;         // > 0: its run's sweep was cancelled while the run
                                         // ran; run.cancel goes again at this time, every
                                         // heartbeat interval until the run ends (a first
                                         // one may be lost: docs/protocol.md §5.5)
    int64_t idle_after_mono_us;          // dispatch nothing before this (it said it was busy)
    int64_t ended_read_mono_us;          // when the message that ended its last run was read, until
                                         // its next run is dispatched (0: not measured)
    size_t n_modes;                      // power modes the agent reported in its hello
    jf_power_mode_t modes[JF_POWER_MODES_MAX];
    coord_clock_t clock;            // this session's clock exchanges (docs/protocol.md §4.2.1)
    bool clock_known;               // clock_est holds an estimate (kept across sessions)
    coord_clock_sample_t clock_est; // the estimate in force: the window's min-rtt sample
    bool clock_warn;                // |clock_est.offset_us| > coordinator.clock_offset_warn
    jf_log_ratelimit_t rl_clock;    // the clock offset warning
    bool credit_ok;                 // its hello said it understands credit (protocol.md §5.3.6)
    coord_limits_peer_t limits;     // its message buckets and violations (docs/protocol.md §1.9)
    bool quarantined;               // nothing it sends is processed until an operator releases it
    char quarantine_reason[COORD_QUARANTINE_REASON_MAX]; // why, for status ("" when not)
} coord_board_t;

// Creates a registry with one offline board per fleet entry, its limits' buckets full. fleet is borrowed and must outlive
// the registry. Caller owns the result; release with coord_registry_destroy. NULL on ENOMEM.
coord_registry_t *coord_registry_new(const jf_fleet_config_t *fleet);
void coord_registry_destroy(coord_registry_t **self_p);

// The board named name, or NULL if fleet.yaml does not list it. Borrowed.
coord_board_t *coord_registry_board(coord_registry_t *self, const char *name);

// The board whose route (the connection its last accepted hello came on) is the routing id of
// len bytes, or NULL. A routing id is no name: a peer chooses it or libzmq generates one.
// Borrowed.
coord_board_t *coord_registry_board_by_route(coord_registry_t *self, const void *id, size_t len);

// Makes the routing id of len bytes (1..COORD_ROUTE_MAX) board's route: its former route maps to
// nothing from now on, and a board that had this route before loses it (without authentication
// one connection may say hello as one board, then as another). 0, -EINVAL, or -ENOMEM (the route
// is unchanged).
int coord_registry_set_route(coord_registry_t *self, coord_board_t *board, const void *id,
                             size_t len);

// Quarantines the board with reason (copied, cut to fit), or releases it with reason NULL; a
// release also refills its buckets and forgets its violations (its counters stay).
void coord_board_set_quarantine(coord_board_t *board, const char *reason,
                                const jf_limits_t *limits);

size_t coord_registry_size(const coord_registry_t *self);

// The i-th board in fleet order (i < size). Borrowed.
coord_board_t *coord_registry_at(coord_registry_t *self, size_t i);

// Marks the board busy with (run, attempt) in the given state, or idle with COORD_BOARD_IDLE.
// A cancel due (cancel_next_mono_us) is kept only while the run and attempt stay the same.
void coord_board_set_run(coord_board_t *board, coord_board_run_t state, const char *run,
                         int64_t attempt);

// Adds one clock exchange of the board's session and makes the window's min-rtt sample the
// estimate in force. Returns 0, or -EINVAL with err saying why the stamps cannot be one exchange
// (the board is then unchanged).
int coord_board_clock_add(coord_board_t *board, const coord_clock_stamps_t *stamps, jf_err_t *err);

// Counts boards online.
size_t coord_registry_online(const coord_registry_t *self);

#endif
