/* Session family: hello / welcome / heartbeat / error (docs/protocol.md §4). Typed parsers for
 * validated bodies and builders for new messages. */
#ifndef JF_MSG_SESSION_H
#define JF_MSG_SESSION_H

#include "jf_board.h"
#include "jf_board_clocks.h"
#include "jf_err.h"
#include "jf_msg.h"
#include "jf_parse.h"
#include "jf_run_spec.h"

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#define JF_HELLO_RUNS_MAX     16 // runs an agent may report holding (inventory)
#define JF_HELLO_STORAGE_MAX  8
#define JF_HELLO_SOFTWARE_MAX 16
#define JF_SESSION_ID_LEN     16 // hex digits
#define JF_PLATFORM_NAME_MAX  15
#define JF_HELLO_CLOCK_HZ_MAX (INT64_C(1) << 40) // a clock step above ~1.1 THz is no clock

typedef struct jf_hello_storage {
    char medium[JF_IDENT_MAX + 1];   // storage medium name
    char dataset_root[PATH_MAX];     // the agent's local dataset root (informational)
} jf_hello_storage_t;

typedef struct jf_hello_run {
    char run[JF_RUN_ID_LEN + 1];     // run id
    int64_t attempt;                 // attempt the agent holds
    int64_t next_seq;                // next seq the agent would send (1 + last produced)
    bool finished;                   // the child has ended; only unacked messages remain
} jf_hello_run_t;

typedef struct jf_hello {
    char name[JF_IDENT_MAX + 1];             // board name (with CURVE: its key's board)
    jf_board_type_t board_type;              // type as the agent detected or was told
    char platform[JF_PLATFORM_NAME_MAX + 1]; // "jetson", "host" or "sim"
    size_t n_modes;
    jf_power_mode_t modes[JF_POWER_MODES_MAX];
    size_t n_storage;
    jf_hello_storage_t storage[JF_HELLO_STORAGE_MAX];
    int64_t started_us;                      // agent start, wall clock
    size_t n_runs;
    jf_hello_run_t runs[JF_HELLO_RUNS_MAX];
    // The optional `clocks` member (docs/protocol.md §4.1.1): the board's own custom-mode space.
    // clocks.type is board_type; clocks.n_cpus its core count.
    bool has_clocks;
    jf_board_clocks_t clocks;
} jf_hello_t;

typedef enum jf_resume_action {
    JF_RESUME_CONTINUE = 0, // keep the run; resend from acked_seq + 1
    JF_RESUME_DROP,         // forget the run (superseded, cancelled or already stored)
} jf_resume_action_t;

typedef struct jf_welcome_resume {
    char run[JF_RUN_ID_LEN + 1];
    int64_t attempt;
    int64_t acked_seq;      // highest seq committed by the coordinator (0: none)
    jf_resume_action_t action;
} jf_welcome_resume_t;

typedef struct jf_welcome {
    char session[JF_SESSION_ID_LEN + 1]; // new random value per registration
    int64_t coordinator_epoch;           // incremented at every coordinator start
    int64_t heartbeat_us;                // interval each side sends heartbeats at
    int64_t heartbeat_timeout_us;        // silence after which the peer is considered gone
    int telemetry_hz;                    // default telemetry rate
    size_t n_resume;
    jf_welcome_resume_t resume[JF_HELLO_RUNS_MAX];
    int64_t credit; // messages in flight per stream (0: not granted)
} jf_welcome_t;

// The hello retry (docs/protocol.md §4.1.1): the first retry after JF_HELLO_RETRY_FIRST_US, then
// 4 s, 8 s, 16 s and 30 s from then on; the caller adds a random jitter of up to a quarter.
// tries: the hellos sent since the last welcome or lost session, before this one (0 for the
// first). One quick retry covers a hello lost with a connection; a coordinator that has not
// answered two is busy (a fleet registering at once), and hurrying it only queues more hellos.
#define JF_HELLO_RETRY_FIRST_US (INT64_C(1) * 1000000)
#define JF_HELLO_RETRY_MAX_US   (INT64_C(30) * 1000000)
int64_t jf_hello_backoff_us(int tries);

// Parses a validated hello body. Returns 0 or -EPROTO/-EINVAL with err naming the field.
int jf_msg_hello_parse(const json_t *body, jf_hello_t *ret_hello, jf_err_t *err);

// Builds a hello. software may be NULL (else borrowed: copied into the message). Caller owns.
json_t *jf_msg_hello_new(int64_t id, const jf_hello_t *hello, const json_t *software);

int jf_msg_welcome_parse(const json_t *body, jf_welcome_t *ret_welcome, jf_err_t *err);
json_t *jf_msg_welcome_new(int64_t id, int64_t re, const jf_welcome_t *welcome);

// A heartbeat's clock members (docs/protocol.md §4.2.1). Plain value record.
typedef struct jf_heartbeat {
    int64_t t_us;      // the sender's wall clock when it sent the heartbeat (t3 in an answer)
    bool has_echo;     // echo_t_us and recv_t_us present (an agent answering a heartbeat)
    int64_t echo_t_us; // t1: the t_us of the coordinator's heartbeat being answered
    int64_t recv_t_us; // t2: the agent's wall clock when that heartbeat arrived
} jf_heartbeat_t;

// Heartbeat with the sender's wall clock and, from an agent, the run it is busy with (or NULL).
json_t *jf_msg_heartbeat_new(int64_t id, const char *run);

// Heartbeat with the given clock members: t_us always, echo_t_us and recv_t_us when has_echo;
// run as in jf_msg_heartbeat_new. Caller owns the result; NULL on ENOMEM.
json_t *jf_msg_heartbeat_clock_new(int64_t id, const char *run, const jf_heartbeat_t *hb);

// Reads the clock members of a validated heartbeat body. Returns 0 or -EPROTO with err naming
// the member (echo_t_us and recv_t_us come together, each 0 .. 2^62, recv_t_us <= t_us).
int jf_msg_heartbeat_parse(const json_t *body, jf_heartbeat_t *ret_hb, jf_err_t *err);

// Reads code and detail of a validated error body into caller buffers.
int jf_msg_error_parse(const json_t *body, char *code, size_t code_size, char *detail,
                       size_t detail_size, jf_err_t *err);

const char *jf_resume_action_name(jf_resume_action_t action);

#endif
