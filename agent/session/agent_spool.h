/* The agent's outgoing streams: one per run attempt, numbered seq = 1, 2, 3..., kept until the
 * coordinator acknowledges them, resent go-back-N when acks stall or after a reconnect
 * (docs/protocol.md §5.3). Held in memory for now: TODO(#2 follow-up): spill to an on-disk
 * SQLite spool so a long coordinator outage cannot grow memory. */
#ifndef AGENT_SPOOL_H
#define AGENT_SPOOL_H

#include "jf_err.h"
#include "jf_msg_session.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_SPOOL_STREAMS_MAX  JF_HELLO_RUNS_MAX
#define AGENT_SPOOL_WINDOW       32                      // unacked messages in flight per stream
#define AGENT_SPOOL_RESEND_US    (INT64_C(5) * 1000000)  // go back when no ack advanced this long
#define AGENT_SPOOL_BYTES_MAX    (INT64_C(256) * 1024 * 1024)

typedef struct agent_spool agent_spool_t;

// Caller owns the result; release with agent_spool_destroy. NULL on ENOMEM.
agent_spool_t *agent_spool_new(void);
void agent_spool_destroy(agent_spool_t **self_p);

// Opens the stream of (run, attempt); opening an open stream is a no-op. -ENOSPC when
// AGENT_SPOOL_STREAMS_MAX streams are open.
int agent_spool_open(agent_spool_t *self, const char *run, int64_t attempt, jf_err_t *err);

// The seq the next message of the stream must carry (1 for a new stream); 0 if not open.
int64_t agent_spool_next_seq(const agent_spool_t *self, const char *run, int64_t attempt);

// Appends the encoded message carrying seq == next_seq, taking over text (malloc'ed) on
// success. final marks the stream's last message (run.done or run.failed). -ENOSPC when the
// byte cap is reached (the caller keeps text).
int agent_spool_append(agent_spool_t *self, const char *run, int64_t attempt, int64_t seq,
                       char *text, size_t len, bool final, jf_err_t *err);

// Everything up to seq is stored by the coordinator: frees it. A stream whose final message is
// acknowledged is closed.
void agent_spool_ack(agent_spool_t *self, const char *run, int64_t attempt, int64_t seq);

// After a welcome: the coordinator has everything up to acked_seq; resend from there.
void agent_spool_rewind(agent_spool_t *self, const char *run, int64_t attempt, int64_t acked_seq);

// Forgets a stream entirely (the coordinator said drop).
void agent_spool_drop(agent_spool_t *self, const char *run, int64_t attempt);

// Sends what is due, in seq order per stream, through send (which returns 0 if the message was
// queued to the socket, else stops the pump). Returns how many were sent.
typedef int (*agent_spool_send_fn)(const char *text, size_t len, void *arg);
size_t agent_spool_pump(agent_spool_t *self, int64_t now_mono_us, agent_spool_send_fn send,
                        void *arg);

// Fills inventory entries (run, attempt, next_seq, finished) for a hello; returns the count.
size_t agent_spool_inventory(const agent_spool_t *self, jf_hello_run_t *out, size_t max);

// True if the stream of (run, attempt) is open.
bool agent_spool_has(const agent_spool_t *self, const char *run, int64_t attempt);

// Bytes currently held, for logs and limits.
size_t agent_spool_bytes(const agent_spool_t *self);

#endif
