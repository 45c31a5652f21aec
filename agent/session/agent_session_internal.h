/* Private to agent_session*.c. */
#ifndef AGENT_SESSION_INTERNAL_H
#define AGENT_SESSION_INTERNAL_H

#include "agent_measure.h"
#include "agent_container.h"
#include "agent_runner.h"
#include "agent_sampler.h"
#include "agent_session.h"
#include "agent_spool.h"
#include "agent_worker.h"
#include "jf_log.h"
#include "jf_msg.h"
#include "jf_run_spec.h"

#include <czmq.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#define AGENT_TICK_MS              50
#define AGENT_RECORDS_FLUSH_US     (INT64_C(250) * 1000)
#define AGENT_RECORDS_BATCH        200
#define AGENT_TELEMETRY_FLUSH_US   (INT64_C(1) * 1000000)
#define AGENT_FINISH_WAIT_US       (INT64_C(10) * 1000000) // for the final sample and residency
#define AGENT_FIRST_SAMPLE_WAIT_MS  500 // before the trainer is spawned (s_await_first_sample)
#define AGENT_RESTORE_WAIT_US      (INT64_C(90) * 1000000) // at exit: > the helper's timeout
#define AGENT_CLOCK_SHIFT_ENV      "JF_TEST_CLOCK_SHIFT_US" // test hook, see s_test_clock_shift_us
#define AGENT_CLOCK_SHIFT_MAX_US   (INT64_C(3600) * 1000000)
#define AGENT_TRAINER_OUT_FMT      "trainer-%s-%lld.jsonl" // in --state-dir: run id, attempt
#define AGENT_TEST_CRASH_ENV       "JF_TEST_AGENT_CRASH" // test builds only, see s_test_crash_point
#define AGENT_TEST_DROP_CANCELS_ENV "JF_TEST_AGENT_DROP_CANCELS" // test builds only, see
                                                                // s_test_drop_cancel
#define AGENT_CLOCK_REFUSED        "unknown member 'echo_t_us'" // an older coordinator's detail
#define AGENT_STALE_CONTAINERS_MAX 64    // containers of earlier agents removed at start, at most
#define AGENT_CONTAINER_LIST_MS    10000 // the engine's ps answers within this at start
#define AGENT_HELLO_CLOCKS_REFUSED "unknown member 'clocks'"    // the same for the hello's clocks
#define AGENT_BLOB_RETRY_US        (INT64_C(5) * 1000000) // blob.get unanswered: ask again
#define AGENT_BLOB_TRIES           6                      // then the run is refused
#define AGENT_WEIGHTS_IN_FMT       "weights-%s-%lld.in"   // in --state-dir: run id, attempt
#define AGENT_WEIGHTS_OUT_FMT      "weights-%s-%lld.out"

// Where the run is. Preparing: the worker checks storage, sets the power mode, drops caches;
// running: the trainer and the sampler run; finishing: the trainer has ended and the final
// sample, the last residency figures and the epoch records' energy are awaited.
typedef enum agent_run_phase {
    AGENT_RUN_IDLE = 0,
    AGENT_RUN_PREPARING,
    AGENT_RUN_RUNNING,
    AGENT_RUN_FINISHING,
} agent_run_phase_t;

typedef struct agent_run {
    bool active;                 // a run is being prepared, trained or finished: busy for others
    agent_run_phase_t phase;
    jf_run_spec_t spec;
    int64_t attempt;
    bool dropped;                // the coordinator said drop: report nothing more
    bool cancelled;              // run.cancel came while preparing: refuse it when ready
    int cancels_seen;            // run.cancel messages for it so far (test hook only)
    char dataset_dir[PATH_MAX];  // <dataset_root>/<dataset>
    agent_runner_t *runner;      // owned
    agent_runner_mark_t mark;    // how far the spool has the trainer's output (re-attach)
    char out_path[PATH_MAX];     // the trainer's output file; "" when it writes into a pipe
    char container[AGENT_CONTAINER_NAME_MAX]; // a container run's container; "" for a bare run
    bool reattached;             // the trainer was started by an earlier agent process
    bool stopped_by_agent;       // a clean agent stop stopped the trainer (this process, or the
                                 // earlier one, as the read mark says)
    bool trainer_recorded;       // the spool has its trainer row: the mark moves with progress
    int64_t samples_before;      // re-attached: telemetry samples the earlier agent spooled
    int64_t last_t_before_us;    // re-attached: wall clock of the last of them (0: none)
    int64_t first_t_after_us;    // re-attached: wall clock of the first sample since (0: none)
    json_t *records;             // owned: buffered records not yet in the spool
    int64_t records_since_us;    // monotonic time of the oldest buffered record
    json_t *samples;             // owned: buffered telemetry samples
    int64_t samples_since_us;    // monotonic time of the oldest buffered sample
    agent_measure_t *measure;    // owned: energy, held epoch records, residency
    agent_worker_reply_t *prepared; // owned: what the preparation found
    json_t *power_mode;          // owned: the power state in force for the measure record
    json_t *clocks;              // owned: {"stored": agent_power_stored_json's record, "dvfs_off"}
                                 // of the clock state stored before the run, kept in the read
                                 // mark for a restarted agent to restore (§4.4.1); NULL: none
    bool sampling;               // the sampler was started for this run
    bool stop_sent;              // and asked to stop
    bool sampler_stopped;        // its STOPPED answer arrived
    int64_t samples_seen;        // samples of this run received from the sampler
    agent_sampler_stats_t sampling_stats; // its counts, once stopped
    int residency_pending;       // residency jobs not answered yet
    agent_runner_outcome_t outcome; // finishing: how the trainer ended
    int64_t finish_by_us;        // finishing: send what there is after this (monotonic)
} agent_run_t;

// The initial weights of a run being fetched before it is prepared (docs/protocol.md §5.7.1).
typedef struct agent_blob_fetch {
    bool active;                 // a fetch is under way: busy for other runs
    jf_run_spec_t spec;          // the run it is for
    int64_t attempt;
    char dataset_dir[PATH_MAX];  // for the preparation that follows
    bool cancelled;              // run.cancel came: refuse the run when the fetch ends
    unsigned char *buf;          // owned: size bytes once the first chunk said the size
    int64_t size;                // the blob's size (0 until the first chunk)
    int64_t filled;              // bytes [0, filled) are in
    int64_t req_id;              // id of the blob.get outstanding
    int64_t sent_us;             // monotonic: when it left
    int tries;                   // how often this chunk was asked for
} agent_blob_fetch_t;

struct agent_session {
    char name[JF_IDENT_MAX + 1];
    char endpoint[256];
    zcert_t *cert;               // owned: this board's keypair; NULL when plaintext
    zcert_t *coordinator_cert;   // owned: the pinned coordinator public key; NULL when plaintext
    char train_bin[4096];
    agent_container_t container; // --container: runs with runtime container (docs/containers.md)
    size_t n_storage;
    jf_hello_storage_t storage[JF_HELLO_STORAGE_MAX];
    char storage_mount[JF_HELLO_STORAGE_MAX][PATH_MAX]; // configured mounts; "" if unknown
    agent_platform_t *platform;  // borrowed
    agent_sampler_t *sampler;    // owned: the telemetry thread
    agent_worker_t *worker;      // owned: the thread for blocking steps around runs
    bool has_power;              // the worker switches power modes (a Jetson)
    char power_error[JF_ERR_MSG_MAX]; // why this board cannot switch modes; "" if it can
    bool has_helper;             // a privileged helper is configured (custom points, DVFS off)
    bool has_clocks;             // clocks holds the board's custom-mode space
    agent_power_tables_t clocks; // what custom points are checked against before a run
    char clocks_error[JF_ERR_MSG_MAX]; // why clocks could not be read; "" if read
    char input_rail[AGENT_ENERGY_RAIL_NAME_MAX + 1]; // the board input rail; "" if none
    int sampler_stops;           // sampler stops not answered yet
    zsock_t *sock;               // owned: DEALER
    agent_spool_t *spool;        // owned
    int64_t next_id;
    int64_t started_us;          // wall clock, for the hello
    int64_t clock_shift_us;      // test only: added to the clocks of heartbeat answers
    bool clock_echo_off;         // this session's coordinator refused echo_t_us (older one)
    bool hello_clocks_off;       // the coordinator refused the hello's clocks member (older one)
    bool welcomed;
    char session[JF_SESSION_ID_LEN + 1];
    int64_t heartbeat_us;
    int64_t heartbeat_timeout_us;
    int64_t last_rx_us;          // monotonic
    int64_t last_tx_us;          // monotonic
    int64_t hello_next_us;       // monotonic: when to (re)send hello while not welcomed
    int hello_tries;
    int64_t hello_sent_us;       // monotonic: when the outstanding hello left (0: none)
    agent_run_t run;
    agent_blob_fetch_t fetch;    // initial weights of the next run, while fetched
    jf_log_ratelimit_t rl_bad;
    jf_log_ratelimit_t rl_sample; // sampler warnings and samples energy cannot use
    jf_log_ratelimit_t rl_platform; // agent_platform_tick failures
};

// Sends an encoded message now (non-blocking). 0 if queued to the socket.
int agent_session_send_text(agent_session_t *self, const char *text, size_t len);
// Encodes and sends msg (taking it over).
int agent_session_send(agent_session_t *self, json_t *msg);

// Run handling (agent_session_run.c): assignment, preparation, start, cancel, the end.
void agent_session_on_assign(agent_session_t *self, const jf_msg_t *msg);
void agent_session_on_cancel(agent_session_t *self, const jf_msg_t *msg);
void agent_session_on_worker(agent_session_t *self);
void agent_session_run_tick(agent_session_t *self, int64_t now_us);
void agent_session_drop_run(agent_session_t *self, const char *run, int64_t attempt);
void agent_session_run_fini(agent_session_t *self);

// Run preparation and refusal (agent_session_run.c), for the blob fetch to continue with.
void agent_session_run_prepare(agent_session_t *self, const jf_run_spec_t *s, int64_t attempt,
                               const char *dataset_dir);
void agent_session_run_reject(agent_session_t *self, const jf_run_spec_t *s, int64_t attempt,
                              jf_fail_reason_t reason, const char *why);

// Weight blobs (agent_session_blob.c; docs/protocol.md §5.7). The weight files of (run,
// attempt) in the state directory into in/out (size bytes each): 0, -ENOENT without a state
// directory (a memory-only spool), -ENAMETOOLONG.
int agent_session_weights_paths(const agent_session_t *self, const char *run, int64_t attempt,
                                char *in, char *out, size_t size);
// Starts fetching the run's init_weights; the run is prepared when they are in, or refused.
void agent_session_fetch_begin(agent_session_t *self, const jf_run_spec_t *s, int64_t attempt,
                               const char *dataset_dir);
// True if (run, attempt) is the run whose weights are being fetched.
bool agent_session_fetch_is(const agent_session_t *self, const char *run, int64_t attempt);
// run.cancel for the run being fetched: it is refused when the fetch ends.
void agent_session_fetch_cancel(agent_session_t *self);
void agent_session_on_blob_data(agent_session_t *self, const jf_msg_t *msg);
// An `error` answering the outstanding blob.get (re); true if it was that.
bool agent_session_fetch_on_error(agent_session_t *self, int64_t re, const char *code,
                                  const char *detail);
void agent_session_fetch_tick(agent_session_t *self, int64_t now_us);
void agent_session_fetch_fini(agent_session_t *self);
// The weights the trainer wrote (--out-weights) as run.weights chunk parts: *ret_data (caller
// frees) and its sha256. 0, or a negative errno with err (no file: -ENOENT).
int agent_session_weights_read(const agent_session_t *self, void **ret_data, size_t *ret_len,
                               char *ret_sha, jf_err_t *err);

// Re-attaching (agent_session_trainer.c, agent_session_run.c; docs/protocol.md §4.4).
// The trainer's output file for (run, attempt) into buf: 0, -ENOENT without a spool file (a
// memory-only spool: the trainer writes into a pipe), -ENAMETOOLONG.
int agent_session_trainer_path(const agent_session_t *self, const char *run, int64_t attempt,
                               char *buf, size_t size);
// Records the run's new trainer (held at its start gate) in the spool: 0, or -EIO / -ENOMEM with
// err (the caller then does not start it).
int agent_session_trainer_record(agent_session_t *self, const char *out_path, jf_err_t *err);
// The read mark of a trainer row and, when ret_extra is not NULL, what the mark carries beside it
// as an object (caller owns it): "measure", the run's measure carry (agent_measure_carry), and
// "clocks", the run's clock record (agent_run_t.clocks); each absent when the mark has none (an
// older agent's, or one stored before it existed). 0 or -EIO with err.
int agent_session_mark_parse(const char *text, agent_runner_mark_t *ret_mark, json_t **ret_extra,
                             jf_err_t *err);
// Moves the run's read mark over records (samples) about to be spooled in one progress
// (telemetry) message; the spool stores it with that message.
void agent_session_mark_progress(agent_session_t *self, const json_t *records);
void agent_session_mark_samples(agent_session_t *self, const json_t *samples);
// A re-attached run's measure record: telemetry.samples counts the earlier agent's samples too,
// and max_gap_us is at least the time no agent sampled (docs/protocol.md §4.4.1).
void agent_session_mark_measure(const agent_session_t *self, json_t *measure);
// Hands the lines of the trainer's output file before offset (the read mark's: what an earlier
// agent process read) to fn, so that what the platform models from them (a sim board's rail
// powers and load, the page cache) and the residency they carry are as the run left them. The
// records in them are the spool's already: fn sees lines, nothing is spooled. 0, or -errno with
// err when the file cannot be opened.
int agent_session_trainer_replay(const char *path, int64_t offset, agent_runner_line_fn fn,
                                 void *arg, jf_err_t *err);
// At a clean stop during a run: records in the trainer row that the agent stops the trainer
// itself, so that the next start reports the attempt's end as that (the row otherwise as it is).
void agent_session_trainer_stopping(agent_session_t *self);
// At start: re-attaches to the trainer of the stream that was running when the previous agent
// process stopped (alive or not: its output file is read to the end either way). Returns how
// many it re-attached (0 or 1); the others stay orphans for agent_spool_end_orphans.
int agent_session_run_reattach(agent_session_t *self);

// Power extras (agent_session_power.c): the board's custom-mode space, read once at start from
// the power handle (a Jetson) or from the platform (agent_platform_clock_tables), and the checks
// of a run's custom point and DVFS setting against it.
void agent_session_power_tables(agent_session_t *self, const agent_power_t *power);
// The hello's clocks member (docs/protocol.md §4.1.1) from the board's tables into *ret: false
// (nothing sent) when they could not be read or a table is longer than the member allows.
bool agent_session_hello_clocks(const agent_session_t *self, jf_board_clocks_t *ret);
// -1 if the run's custom point and DVFS setting can run here, else the reject reason with why.
int agent_session_check_power(const agent_session_t *self, const jf_run_spec_t *s, char *why,
                              size_t why_size);

// The run's stream (agent_session_stream.c): records, samples and the final message.
// Takes over one record from the trainer (agent_runner_record_fn).
int agent_session_on_record(json_t *rec, void *arg);
// Events of the sampler: samples into telemetry and energy, its stop, its warnings.
void agent_session_on_sampler(agent_session_t *self);
// Flushes what is due (records, samples, epoch records whose energy is final).
void agent_session_stream_tick(agent_session_t *self, int64_t now_us);
// Residency after an epoch, from the worker.
void agent_session_on_residency(agent_session_t *self, const agent_worker_reply_t *reply);
// True once the finishing run has what it waits for (or waited long enough).
bool agent_session_stream_settled(const agent_session_t *self, int64_t now_us);
// Everything left, the measure record and the final message into the spool (unless dropped).
void agent_session_stream_finish(agent_session_t *self);

#endif
