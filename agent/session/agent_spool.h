/* The agent's outgoing streams: one per run attempt, numbered seq = 1, 2, 3..., kept until the
 * coordinator acknowledges them, resent go-back-N when acks stall or after a reconnect
 * (docs/protocol.md §5.3). Every message is on disk (agent_spool_db.h) before it is sent, so an
 * agent restart finds its streams again; memory holds only an index of (seq, length) per
 * message. An in-memory mode without a file exists for tests that show what the file saves. */
#ifndef AGENT_SPOOL_H
#define AGENT_SPOOL_H

#include "agent_spool_db.h"
#include "jf_err.h"
#include "jf_msg_session.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_SPOOL_STREAMS_MAX    JF_HELLO_RUNS_MAX
#define AGENT_SPOOL_WINDOW         32                     // unacked messages in flight per stream
#define AGENT_SPOOL_RESEND_US      (INT64_C(5) * 1000000) // go back when no ack advanced this long
#define AGENT_SPOOL_BYTES_MAX      (INT64_C(256) * 1024 * 1024) // default of --spool-max-bytes
#define AGENT_SPOOL_FILE_NAME      "spool.db"                   // in the agent's --state-dir
#define AGENT_SPOOL_RESTART_DETAIL "agent restarted during the run; its trainer did not survive"

typedef struct agent_spool agent_spool_t;

typedef struct agent_spool_opts {
    const char *state_dir; // borrowed: holds AGENT_SPOOL_FILE_NAME; created (mode 0700)
                           // if missing, its parent must exist. NULL: memory only
    int64_t max_bytes;     // cap on held message bytes for opening new streams; > 0
    bool forget_on_send;   // tests only (--spool-forget-on-send): a message counts as
                           // acknowledged once handed to the socket, as fire-and-forget would
} agent_spool_opts_t;

// Opens the spool. With a state_dir, its file is created if absent, else reopened: its streams
// come back with their unacknowledged messages, seqs and final flags (agent_spool_inventory).
// NULL with err naming the path when the directory or file cannot be used (damaged, not a
// spool, locked by another agent: agent_spool_db_new); a damaged file is never replaced by an
// empty one; -EINVAL when max_bytes is not > 0. Caller owns the result; release with
// agent_spool_destroy.
agent_spool_t *agent_spool_new(const agent_spool_opts_t *opts, jf_err_t *err);
void agent_spool_destroy(agent_spool_t **self_p);

// Opens the stream of (run, attempt); opening an open stream is a no-op. -ENOSPC when
// AGENT_SPOOL_STREAMS_MAX streams are open, or when the bytes held reach max_bytes (the agent
// refuses new runs then); -EIO when the file cannot record it.
int agent_spool_open(agent_spool_t *self, const char *run, int64_t attempt, jf_err_t *err);

// True when the bytes held reach max_bytes: a new stream would be refused.
bool agent_spool_is_full(const agent_spool_t *self);

// The seq the next message of the stream must carry (1 for a new stream); 0 if not open.
int64_t agent_spool_next_seq(const agent_spool_t *self, const char *run, int64_t attempt);

// Appends the encoded message carrying seq == next_seq, taking over text (malloc'ed) on
// success; with a file it is durably stored (and freed) before this returns. final marks the
// stream's last message (run.done or run.failed). The byte cap never refuses a message of an
// open stream: a running attempt's data is kept even past max_bytes. -EINVAL for a wrong seq or
// a closed stream, -EIO when the file cannot store it (the caller keeps text either way).
int agent_spool_append(agent_spool_t *self, const char *run, int64_t attempt, int64_t seq,
                       char *text, size_t len, bool final, jf_err_t *err);

// Everything up to seq is stored by the coordinator: frees it (and deletes its rows). A stream
// whose final message is acknowledged is closed. A file that cannot delete rows keeps them
// (they are resent after a restart, which the coordinator de-duplicates): the in-memory index
// moves on regardless.
void agent_spool_ack(agent_spool_t *self, const char *run, int64_t attempt, int64_t seq);

// After a welcome: the coordinator has everything up to acked_seq; resend from there.
void agent_spool_rewind(agent_spool_t *self, const char *run, int64_t attempt, int64_t acked_seq);

// Forgets a stream entirely (the coordinator said drop).
void agent_spool_drop(agent_spool_t *self, const char *run, int64_t attempt);

// The --state-dir the spool file is in (borrowed); NULL with a memory-only spool, where no
// trainer can be re-attached after a restart.
const char *agent_spool_state_dir(const agent_spool_t *self);

// Records the trainer of an open stream (a file spool only), for re-attaching to it after an
// agent restart (docs/protocol.md §4.4). 0, -EINVAL (no file, no such stream) or -EIO.
int agent_spool_set_trainer(agent_spool_t *self, const char *run, int64_t attempt,
                            const agent_spool_db_trainer_t *t, jf_err_t *err);

// The trainer row of (run, attempt): 0, -ENOENT (none, or a memory-only spool) or -EIO.
// Release *ret_trainer with agent_spool_db_trainer_fini.
int agent_spool_trainer(agent_spool_t *self, const char *run, int64_t attempt,
                        agent_spool_db_trainer_t *ret_trainer, jf_err_t *err);

// The trainer read mark (copied) that the stream's next append stores in the same transaction
// as its message. 0, or -ENOMEM; a no-op for a memory-only spool or a closed stream.
int agent_spool_set_mark(agent_spool_t *self, const char *run, int64_t attempt, const char *mark);

// The stream's trainer was re-attached: agent_spool_end_orphans leaves it open.
void agent_spool_keep(agent_spool_t *self, const char *run, int64_t attempt);

// Ends every stream that has no final message and was not kept (agent_spool_keep), which after
// agent_spool_new means its trainer died with the previous agent process: appends run.failed
// (reason crashed, detail AGENT_SPOOL_RESTART_DETAIL) after what is spooled, with envelope ids
// from *next_id (advanced). Returns how many streams it ended, or -EIO / -ENOMEM with err
// (those before are ended).
int agent_spool_end_orphans(agent_spool_t *self, int64_t *next_id, jf_err_t *err);

// Sends what is due, in seq order per stream, through send (which returns 0 if the message was
// queued to the socket, else stops the pump). Returns how many were sent. A message the file
// cannot give back stops its stream's pump for this call.
typedef int (*agent_spool_send_fn)(const char *text, size_t len, void *arg);
size_t agent_spool_pump(agent_spool_t *self, int64_t now_mono_us, agent_spool_send_fn send,
                        void *arg);

// Fills inventory entries (run, attempt, next_seq, finished) for a hello; returns the count.
// Sets how many messages of each stream may be in flight: the coordinator's credit (welcome, ack;
// docs/protocol.md §5.3.6), or AGENT_SPOOL_WINDOW for 0 (none granted) and for anything above it.
// Messages already in flight beyond a lowered window stay in flight; no new one leaves until the
// acknowledged seq has caught up.
void agent_spool_set_window(agent_spool_t *self, int64_t credit);
int64_t agent_spool_window(const agent_spool_t *self);

size_t agent_spool_inventory(const agent_spool_t *self, jf_hello_run_t *out, size_t max);

// True if the stream of (run, attempt) is open.
bool agent_spool_has(const agent_spool_t *self, const char *run, int64_t attempt);

// True if the stream of (run, attempt) is open and its final message not yet appended.
bool agent_spool_is_open(const agent_spool_t *self, const char *run, int64_t attempt);

// Bytes currently held, for logs and limits.
size_t agent_spool_bytes(const agent_spool_t *self);

#endif
