/* Private to agent_session*.c. */
#ifndef AGENT_SESSION_INTERNAL_H
#define AGENT_SESSION_INTERNAL_H

#include "agent_runner.h"
#include "agent_session.h"
#include "agent_spool.h"
#include "jf_log.h"
#include "jf_msg.h"
#include "jf_run_spec.h"

#include <czmq.h>
#include <stdbool.h>
#include <stdint.h>

#define AGENT_TICK_MS              50
#define AGENT_HELLO_RETRY_MIN_US   (INT64_C(1) * 1000000)
#define AGENT_HELLO_RETRY_MAX_US   (INT64_C(30) * 1000000)
#define AGENT_RECORDS_FLUSH_US     (INT64_C(250) * 1000)
#define AGENT_RECORDS_BATCH        200
#define AGENT_TELEMETRY_FLUSH_US   (INT64_C(1) * 1000000)

typedef struct agent_run {
    bool active;                 // a child is running (or being stopped) for this run
    jf_run_spec_t spec;
    int64_t attempt;
    bool dropped;                // the coordinator said drop: report nothing more
    agent_runner_t *runner;      // owned
    json_t *records;             // owned: buffered records not yet in the spool
    int64_t records_since_us;    // monotonic time of the oldest buffered record
    json_t *samples;             // owned: buffered telemetry samples
    int64_t samples_since_us;
    int64_t next_sample_us;      // monotonic time of the next telemetry sample
} agent_run_t;

struct agent_session {
    char name[JF_IDENT_MAX + 1];
    char endpoint[256];
    char train_bin[4096];
    size_t n_storage;
    jf_hello_storage_t storage[JF_HELLO_STORAGE_MAX];
    agent_platform_t *platform;  // borrowed
    zsock_t *sock;               // owned: DEALER
    agent_spool_t *spool;        // owned
    int64_t next_id;
    int64_t started_us;          // wall clock, for the hello
    bool welcomed;
    char session[JF_SESSION_ID_LEN + 1];
    int64_t heartbeat_us;
    int64_t heartbeat_timeout_us;
    int64_t last_rx_us;          // monotonic
    int64_t last_tx_us;          // monotonic
    int64_t hello_next_us;       // monotonic: when to (re)send hello while not welcomed
    int hello_tries;
    agent_run_t run;
    jf_log_ratelimit_t rl_bad;
};

// Sends an encoded message now (non-blocking). 0 if queued to the socket.
int agent_session_send_text(agent_session_t *self, const char *text, size_t len);
// Encodes and sends msg (taking it over).
int agent_session_send(agent_session_t *self, json_t *msg);

// Run handling (agent_session_run.c).
void agent_session_on_assign(agent_session_t *self, const jf_msg_t *msg);
void agent_session_on_cancel(agent_session_t *self, const jf_msg_t *msg);
void agent_session_run_tick(agent_session_t *self, int64_t now_us);
void agent_session_drop_run(agent_session_t *self, const char *run, int64_t attempt);
void agent_session_run_fini(agent_session_t *self);

#endif
