/* Per-peer message limits on the agent endpoint (docs/protocol.md §1.9): token buckets on
 * messages and bytes per second, a size cap per message class, and the count of violations that
 * makes a board a repeat offender. Pure bookkeeping on caller-given times: no sockets, no store,
 * no logging; the server decides what a verdict does (coord_server_limits.c). */
#ifndef COORD_LIMITS_H
#define COORD_LIMITS_H

#include "jf_limits.h"
#include "jf_msg.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COORD_LIMITS_PEAK_WINDOW_US (INT64_C(1) * 1000000) // peaks are per second

// What to do with one message.
typedef enum coord_limits_verdict {
    COORD_LIMITS_PASS = 0,
    COORD_LIMITS_OVER_RATE,  // the message bucket is empty
    COORD_LIMITS_OVER_BYTES, // the byte bucket holds less than the message
    COORD_LIMITS_OVER_SIZE,  // the message is larger than its class allows
    // Refused by the protocol after passing the buckets (coord_limits_peer_refused):
    COORD_LIMITS_INVALID,         // it did not decode (bad JSON, type, field, frames; not version)
    COORD_LIMITS_OTHER_BOARD_RUN, // it names a run of another board
    COORD_LIMITS_VERDICT_COUNT
} coord_limits_verdict_t;

// Messages are capped by class: the stream's bulk (run.progress, telemetry, run.weights) and the
// rest.
typedef enum coord_limits_class {
    COORD_LIMITS_STREAM = 0,
    COORD_LIMITS_OTHER,
    COORD_LIMITS_CLASS_COUNT
} coord_limits_class_t;

typedef struct coord_limits_bucket {
    double tokens;   // what may pass now
    int64_t last_us; // when tokens were last refilled (monotonic us)
} coord_limits_bucket_t;

// One peer's buckets, violation history and figures. Plain value record, embedded in the
// board's registry entry (or the server's, for all unregistered peers together); init with
// coord_limits_peer_init, no fini.
typedef struct coord_limits_peer {
    coord_limits_bucket_t msgs;  // messages
    coord_limits_bucket_t bytes; // bytes
    uint64_t passed;             // messages let through since init
    uint64_t ignored;            // messages dropped unread while the board was quarantined
    uint64_t dropped[COORD_LIMITS_VERDICT_COUNT];   // dropped or refused, by verdict (PASS unused)
    int64_t violation_us[JF_LIMITS_VIOLATIONS_MAX]; // ring of the latest violation times
    size_t n_violations;   // violations since init (the ring holds the latest)
    bool limited;          // the latest message was dropped (one rate_limited reply each run)
    int64_t peak_start_us; // start of the current one-second window
    int64_t window_msgs, window_bytes;               // messages and bytes let through in it
    int64_t peak_msgs_per_s;                         // most messages let through in one window
    int64_t peak_bytes_per_s;                        // most bytes let through in one window
    int64_t largest_bytes[COORD_LIMITS_CLASS_COUNT]; // largest message let through, by class
} coord_limits_peer_t;

// Full buckets at now_us (monotonic), no history.
void coord_limits_peer_init(coord_limits_peer_t *p, const jf_limits_t *cfg, int64_t now_us);

// Before decoding: takes one message of size_bytes from the buckets. A message larger than any
// class allows is OVER_SIZE; an empty message bucket OVER_RATE; a byte bucket short of the
// message OVER_BYTES. A message that does not pass takes nothing from the buckets and counts
// one violation at now_us.
coord_limits_verdict_t coord_limits_peer_admit(coord_limits_peer_t *p, const jf_limits_t *cfg,
                                               size_t size_bytes, int64_t now_us);

// After decoding: OVER_SIZE (and one violation) when a message that passed coord_limits_peer_admit
// is larger than its type's class allows; else PASS, and the figures count it.
coord_limits_verdict_t coord_limits_peer_check_type(coord_limits_peer_t *p, const jf_limits_t *cfg,
                                                    jf_msg_type_t type, size_t size_bytes,
                                                    int64_t now_us);

// A message that passed the buckets and that the protocol refused (v is COORD_LIMITS_INVALID or
// COORD_LIMITS_OTHER_BOARD_RUN): counts one violation at now_us. Unlike a dropped message it does
// not start a run of drops (its refusal was answered by the protocol's own error).
void coord_limits_peer_refused(coord_limits_peer_t *p, coord_limits_verdict_t v, int64_t now_us);

#define COORD_LIMITS_ANON_PER_BOARD_S     1 // anonymous boards: the shared bucket's floor per
#define COORD_LIMITS_ANON_BURST_PER_BOARD 4 // board, per second and deep

// The shared bucket of peers that are no board yet (docs/protocol.md §1.9): cfg's
// unregistered_per_s and unregistered_burst, raised to at least COORD_LIMITS_ANON_PER_BOARD_S and
// COORD_LIMITS_ANON_BURST_PER_BOARD per board of a fleet of n_boards when boards are anonymous
// until their hello is welcomed (no CURVE). Pure.
void coord_limits_anonymous(const jf_limits_t *cfg, size_t n_boards, bool anonymous_boards,
                            int64_t *ret_per_s, int64_t *ret_burst);

// Unregistered peers: only the message bucket, no size classes (their messages are decoded with
// the protocol's own limit) and no history. True if the message may be decoded.
bool coord_limits_peer_admit_anonymous(coord_limits_peer_t *p, int64_t per_s, int64_t burst,
                                       int64_t now_us);

// True when cfg->quarantine_after violations fell within cfg->quarantine_window_us up to now_us.
bool coord_limits_peer_is_offender(const coord_limits_peer_t *p, const jf_limits_t *cfg,
                                   int64_t now_us);

// Messages dropped over a limit (OVER_RATE, OVER_BYTES, OVER_SIZE together).
uint64_t coord_limits_peer_dropped(const coord_limits_peer_t *p);

// Messages the protocol refused (INVALID and OTHER_BOARD_RUN together).
uint64_t coord_limits_peer_refused_count(const coord_limits_peer_t *p);

// The class of a message type, and the cap cfg gives that class.
coord_limits_class_t coord_limits_class_of(jf_msg_type_t type);
int64_t coord_limits_max_bytes(const jf_limits_t *cfg, coord_limits_class_t cls);

// The name of a verdict as status and logs show it ("over_rate", ...). Static string.
const char *coord_limits_verdict_name(coord_limits_verdict_t v);

// The peer's counters and figures as a new JSON object (docs/protocol.md §6.2 boards[].limits).
// Caller owns the result (json_decref); NULL on ENOMEM.
json_t *coord_limits_peer_json(const coord_limits_peer_t *p);

#endif
