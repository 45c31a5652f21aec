/* Wire message envelope: encode, decode and validate (jansson). Every message is one ZeroMQ frame
 * holding a JSON object {"v":1,"type":...,"id":...,<fields>}. Types form a closed table with the
 * direction each may travel; a decoder accepts only the types of its direction and validates the
 * type's fields before any handler sees them. Implements docs/protocol.md §1-§3. */
#ifndef JF_MSG_H
#define JF_MSG_H

#include "jf_err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JF_PROTOCOL_VERSION 1

// Application limits on one message; the ZeroMQ transport limit (ZMQ_MAXMSGSIZE) is 4x larger, so
// a message between the two gets an `error` reply and a larger one only drops the connection.
#define JF_MSG_MAX_BYTES_COORD   (1024 * 1024) // what the coordinator accepts
#define JF_MSG_MAX_BYTES_AGENT   (256 * 1024)  // what an agent accepts
#define JF_MSG_TRANSPORT_FACTOR  4
#define JF_MSG_TEXT_MAX          1024          // free text fields (detail)
#define JF_MSG_ARRAY_MAX         1000          // records or samples in one message

typedef enum jf_msg_type {
    // agent -> coordinator
    JF_MSG_HELLO = 0,
    JF_MSG_RUN_ACCEPT,
    JF_MSG_RUN_REJECT,
    JF_MSG_RUN_PROGRESS,
    JF_MSG_TELEMETRY,
    JF_MSG_RUN_DONE,
    JF_MSG_RUN_FAILED,
    // coordinator -> agent
    JF_MSG_WELCOME,
    JF_MSG_RUN_ASSIGN,
    JF_MSG_RUN_CANCEL,
    JF_MSG_ACK,
    // both ways between coordinator and agent
    JF_MSG_HEARTBEAT,
    JF_MSG_ERROR,
    // CLI <-> coordinator, control endpoint only
    JF_MSG_CTL_STATUS,
    JF_MSG_CTL_SUBMIT,
    JF_MSG_CTL_CANCEL,
    JF_MSG_CTL_REPLY,
    // weight blobs (docs/protocol.md §5.7), appended so that earlier values stay
    JF_MSG_BLOB_GET,    // agent -> coordinator
    JF_MSG_RUN_WEIGHTS, // agent -> coordinator, a result stream message
    JF_MSG_BLOB_DATA,   // coordinator -> agent
    JF_MSG_TYPE_COUNT,
} jf_msg_type_t;

// Who receives: a decoder accepts only the types allowed towards its role.
typedef enum jf_msg_dir {
    JF_MSG_TO_COORD = 1 << 0, // from an agent, on the agent endpoint
    JF_MSG_TO_AGENT = 1 << 1, // from the coordinator
    JF_MSG_TO_CTL = 1 << 2,   // from the CLI, on the control endpoint
    JF_MSG_TO_CLI = 1 << 3,   // replies on the control endpoint
} jf_msg_dir_t;

// The typed forms (jf_msg_run.h) that jf_msg_decode leaves in jf_msg_t, decoded once.
typedef struct jf_msg_run_assign jf_msg_run_assign_t;
typedef struct jf_msg_run_progress jf_msg_run_progress_t;
typedef struct jf_msg_telemetry jf_msg_telemetry_t;
typedef struct jf_msg_blob_chunk jf_msg_blob_chunk_t; // jf_msg_blob.h

// A decoded message. Plain value record; body and the typed payload are owned (jf_msg_fini).
// At most one payload pointer is set, by type; the receiver takes it and never walks the JSON
// again (issue #10: decode once at each process boundary).
typedef struct jf_msg {
    jf_msg_type_t type;
    int64_t id;                  // sender-local message id, >= 0
    json_t *body;                    // the whole validated object (envelope included); owned
    jf_msg_run_assign_t *assign;     // run.assign: the spec and attempt; owned; else NULL
    jf_msg_run_progress_t *progress; // run.progress: the typed records; owned; else NULL
    jf_msg_telemetry_t *telemetry;   // telemetry: the checked samples' text; owned; else NULL
    jf_msg_blob_chunk_t *chunk;      // blob.data, run.weights: the decoded chunk; owned; else NULL
} jf_msg_t;

// Error codes carried in `error` messages (docs/protocol.md §3.4).
#define JF_MSG_E_TOO_LARGE      "too_large"
#define JF_MSG_E_BAD_JSON       "bad_json"
#define JF_MSG_E_BAD_VERSION    "bad_version"
#define JF_MSG_E_UNKNOWN_TYPE   "unknown_type"
#define JF_MSG_E_BAD_FIELD      "bad_field"
#define JF_MSG_E_BAD_FRAMES     "bad_frames"
#define JF_MSG_E_NOT_REGISTERED "not_registered"
#define JF_MSG_E_UNKNOWN_BOARD  "unknown_board"
#define JF_MSG_E_WRONG_STATE    "wrong_state"
#define JF_MSG_E_STORE          "store_error"
#define JF_MSG_E_BAD_REQUEST    "bad_request"
#define JF_MSG_E_RATE_LIMITED   "rate_limited" // over a per-board limit: dropped (protocol §1.9)
#define JF_MSG_E_QUARANTINED    "quarantined"  // the board is quarantined (protocol §1.9)
#define JF_MSG_E_UNKNOWN_BLOB   "unknown_blob" // blob.get names a blob the coordinator lacks (§5.7)

// The wire name of a type ("run.assign"); "?" if out of range.
const char *jf_msg_type_name(jf_msg_type_t type);

// Decodes one frame of len bytes for a receiver of direction dir: size limit max_bytes, JSON
// syntax (duplicate keys rejected), envelope (v, type, id), the type's direction and the type's
// own schema (the typed form of a run.assign, run.progress or telemetry lands in ret_msg). On
// success fills *ret_msg (caller owns: jf_msg_fini) and returns 0. On failure returns -EPROTO (or
// -EMSGSIZE), sets *ret_code to one of the JF_MSG_E_* strings, *ret_id to the message id when it
// could be read (else -1), and err to a reason naming the field.
int jf_msg_decode(const void *data, size_t len, unsigned dir, size_t max_bytes, jf_msg_t *ret_msg,
                  const char **ret_code, int64_t *ret_id, jf_err_t *err);

// Releases the body and the typed payload of a decoded message. Accepts a zeroed record.
void jf_msg_fini(jf_msg_t *msg);

// Builds a new message object {"v":1,"type":name,"id":id}. Caller owns; fields are added to it
// by the family builders (jf_msg_run.h, jf_msg_session.h). NULL on allocation failure.
json_t *jf_msg_new(jf_msg_type_t type, int64_t id);

// Serialises a message compactly. Caller owns the result; release with free(). NULL on failure.
char *jf_msg_encode(const json_t *msg, size_t *ret_len);

// Builds an `error` message replying to message re (-1 for none).
json_t *jf_msg_error_new(int64_t id, int64_t re, const char *code, const char *detail);

#endif
