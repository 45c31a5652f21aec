/* The agent spool's file: one SQLite database (WAL, synchronous=FULL) holding every stream the
 * agent has not seen fully acknowledged, one row per message keyed (run, attempt, seq), so that
 * an agent restart or a long coordinator outage loses nothing (docs/protocol.md §5.3.3). It
 * stores and reads rows; the window, resend and limits are agent_spool.c's business. */
#ifndef AGENT_SPOOL_DB_H
#define AGENT_SPOOL_DB_H

#include "jf_err.h"
#include "jf_msg_session.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_SPOOL_DB_SCHEMA 2 // PRAGMA user_version of the files this agent writes; 1 is
                                // upgraded in place (the trainer table is added)

typedef struct agent_spool_db agent_spool_db_t;

// Opens (creating if absent) the spool at path and checks it (PRAGMA quick_check). The file is
// locked for this process: a second agent on the same file gets -EBUSY. A file that is not a
// spool, is damaged or unreadable gives -EIO (-EBUSY, -ENOENT) with err naming the path and what
// to do; it is never replaced. Caller owns the result; release with agent_spool_db_destroy.
agent_spool_db_t *agent_spool_db_new(const char *path, jf_err_t *err);
void agent_spool_db_destroy(agent_spool_db_t **self_p);

// The path the spool was opened at (borrowed).
const char *agent_spool_db_path(const agent_spool_db_t *self);

// One stream found on disk: its identity, what comes next and whether its final message is in.
typedef struct agent_spool_db_stream {
    char run[JF_RUN_ID_LEN + 1];
    int64_t attempt;
    int64_t next_seq; // seq of the next message (1 + the last produced)
    bool final;       // the final message was appended
} agent_spool_db_stream_t;

// One message row found on disk (its body stays on disk).
typedef struct agent_spool_db_row {
    int64_t seq;
    size_t len; // bytes of the encoded message
} agent_spool_db_row_t;

// Called by agent_spool_db_load once per stream, then once per row of it in seq order.
typedef struct agent_spool_db_visitor {
    int (*on_stream)(const agent_spool_db_stream_t *stream, void *arg, jf_err_t *err);
    int (*on_row)(const agent_spool_db_row_t *row, void *arg, jf_err_t *err);
    void *arg;
} agent_spool_db_visitor_t;

// Reads every stream and its rows, checking that each stream's rows are consecutive, end at
// next_seq - 1 and that only a final stream's last row is final. 0, a visitor's code, or -EIO
// with err naming the path and the stream that does not add up.
int agent_spool_db_load(agent_spool_db_t *self, const agent_spool_db_visitor_t *v, jf_err_t *err);

// Records a new stream (next_seq 1). 0 or -EIO.
int agent_spool_db_open_stream(agent_spool_db_t *self, const char *run, int64_t attempt,
                               jf_err_t *err);

// Stores one message and advances the stream's next_seq in one durable transaction; with a
// mark (not NULL), the stream's trainer row (if it has one) gets it in the same transaction, so
// the read mark and the messages made from what was read never disagree. 0 or -EIO (nothing
// stored).
int agent_spool_db_append(agent_spool_db_t *self, const agent_spool_db_stream_t *after,
                          const char *text, size_t len, const char *mark, jf_err_t *err);

// The trainer of a run attempt, for re-attaching after an agent restart (docs/protocol.md
// §4.4): who it is, where it writes its records, the run it trains and how far the spool has
// what it wrote. Strings are owned by the struct (agent_spool_db_trainer_fini).
typedef struct agent_spool_db_trainer {
    int64_t pid;
    int64_t start_ticks; // its start time, field 22 of /proc/PID/stat (defeats pid reuse)
    char *out_path;      // the file its stdout goes to
    char *spec;          // the run spec (JSON text, jf_run_spec_to_json)
    char *power;         // the power state for the measure record (JSON text); may be NULL
    char *mark;          // the read mark (JSON text, agent_session's business)
} agent_spool_db_trainer_t;

// Adds (or replaces) the trainer row of (run, attempt); it goes with the stream when the stream
// is forgotten. 0 or -EIO.
int agent_spool_db_put_trainer(agent_spool_db_t *self, const char *run, int64_t attempt,
                               const agent_spool_db_trainer_t *t, jf_err_t *err);

// Reads the trainer row of (run, attempt) into *ret_trainer (release with
// agent_spool_db_trainer_fini). 0, -ENOENT when there is none, or -EIO.
int agent_spool_db_trainer(agent_spool_db_t *self, const char *run, int64_t attempt,
                           agent_spool_db_trainer_t *ret_trainer, jf_err_t *err);
void agent_spool_db_trainer_fini(agent_spool_db_trainer_t *t);

// Deletes the rows of the stream up to seq; with forget, the stream itself too. 0 or -EIO.
int agent_spool_db_ack(agent_spool_db_t *self, const char *run, int64_t attempt, int64_t seq,
                       bool forget, jf_err_t *err);

// Reads the body of one row into a malloc'ed buffer (caller frees). 0, -ENOENT or -EIO.
int agent_spool_db_read(agent_spool_db_t *self, const char *run, int64_t attempt, int64_t seq,
                        char **ret_text, size_t *ret_len, jf_err_t *err);

#endif
