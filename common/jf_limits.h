/* Per-board message limits of the coordinator's agent endpoint (fleet.yaml coordinator.limits,
 * docs/fleet-yaml.md; docs/protocol.md §1.9): token buckets on messages and bytes per second, a
 * size cap per message class, and when repeated violations quarantine a board. The settings and
 * their parser only; the buckets are coordinator/coord_limits. */
#ifndef JF_LIMITS_H
#define JF_LIMITS_H

#include "jf_err.h"
#include "jf_yaml.h"

#include <stdint.h>

// Defaults, each with its margin over what a simulated agent at 50 Hz telemetry and the fastest
// simulated training was measured to send (docs/protocol.md §1.9 gives the figures).
#define JF_LIMITS_MESSAGES_PER_S 200               // sustained, per board
#define JF_LIMITS_MESSAGE_BURST  2048              // bucket depth: a full resend of the spool
#define JF_LIMITS_BYTES_PER_S    (4 * 1024 * 1024) // sustained, per board
#define JF_LIMITS_BYTE_BURST     (64 * 1024 * 1024)
#define JF_LIMITS_MAX_STREAM_BYTES                                                                 \
    (1024 * 1024) // run.progress, telemetry: = JF_MSG_MAX_BYTES_COORD
#define JF_LIMITS_MAX_OTHER_BYTES      (64 * 1024) // every other type (a hello is at most ~40 KiB)
#define JF_LIMITS_QUARANTINE_AFTER     20          // violations within the window
#define JF_LIMITS_QUARANTINE_WINDOW_US (INT64_C(10) * 1000000)
#define JF_LIMITS_UNREGISTERED_PER_S   1000 // all peers not in fleet.yaml together
#define JF_LIMITS_UNREGISTERED_BURST   2000
#define JF_LIMITS_VIOLATIONS_MAX       64 // quarantine_after is 1..this (a ring of times per board)

typedef struct jf_limits {
    int64_t messages_per_s;       // token bucket refill, messages per second per board
    int64_t message_burst;        // bucket depth in messages
    int64_t bytes_per_s;          // token bucket refill, bytes per second per board
    int64_t byte_burst;           // bucket depth in bytes (>= max_stream_bytes)
    int64_t max_stream_bytes;     // largest run.progress or telemetry message, bytes
    int64_t max_other_bytes;      // largest message of any other type, bytes
    int quarantine_after;         // this many violations within quarantine_window_us: quarantine
    int64_t quarantine_window_us; // the window, us
    int64_t unregistered_per_s;   // messages per second from peers not in fleet.yaml, together
    int64_t unregistered_burst;   // their bucket depth
} jf_limits_t;

// Fills l with the defaults above.
void jf_limits_defaults(jf_limits_t *l);

// Parses the coordinator's `limits` mapping (node) over the defaults already in l. Returns 0, or
// -EINVAL with err "<file>:<line>:<col>: <what>" (unknown key, a value out of range, a burst
// smaller than the largest message it must let through). l is left partly updated on failure.
int jf_limits_parse(const jf_yaml_node_t *node, jf_limits_t *l, jf_err_t *err);

#endif
