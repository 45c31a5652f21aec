/* The coordinator's store: SQLite in WAL mode with synchronous=FULL, a versioned schema with
 * migrations (coord_store_schema.c), and the only code that speaks SQL. Acks to agents are sent
 * only after the transaction holding their data commits (reliability-security.md §3).
 * One connection per coord_store_t; use it from one thread. Readers (the CLI) open their own. */
#ifndef COORD_STORE_H
#define COORD_STORE_H

#include "coord_obs.h"
#include "coord_run_facts.h"
#include "jf_err.h"
#include "jf_msg_measure.h"
#include "jf_msg_run.h"
#include "jf_run_spec.h"
#include "jf_sweep.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct coord_store coord_store_t;

typedef enum coord_run_state {
    COORD_RUN_PENDING = 0,
    COORD_RUN_ASSIGNED,
    COORD_RUN_RUNNING,
    COORD_RUN_DONE,
    COORD_RUN_FAILED,
    COORD_RUN_STATE_COUNT,
} coord_run_state_t;

typedef struct coord_run_row {
    char run[JF_RUN_ID_LEN + 1];
    char board[JF_IDENT_MAX + 1];
    coord_run_state_t state;
    int64_t attempt;       // current attempt, 0 before the first assignment
    int64_t acked_seq;     // highest stream seq committed for the current attempt
    int64_t assigned_us;   // wall clock of the last assignment, 0 if never
} coord_run_row_t;

typedef struct coord_submit_result {
    size_t runs;           // runs in the sweep
    size_t added;          // new runs stored
    size_t already_done;   // runs that were already done (not run again)
    size_t retried;        // failed runs put back to pending
} coord_submit_result_t;

typedef struct coord_state_counts {
    size_t n[COORD_RUN_STATE_COUNT]; // runs per state
} coord_state_counts_t;

// What every message about a damaged store file ends with (docs/store.md, "Damage").
#define COORD_STORE_CORRUPT_HINT                                                                   \
    " (store file corrupt: see 'jetfleet store check' and 'jetfleet store salvage', "              \
    "docs/store.md)"

// COORD_STORE_CORRUPT_HINT when an SQLite result code means a damaged file (SQLITE_CORRUPT,
// SQLITE_NOTADB), else "". Static strings.
const char *coord_store_corrupt_hint(int sqlite_rc);

// Opens (and, unless read_only, creates and migrates) the store at path. Caller owns the result;
// release with coord_store_destroy. NULL on failure with err naming the path and SQLite's reason:
// -EBADMSG for a damaged file (the message says corrupt), -EPROTO for a read-only open of a file
// that is empty or of another schema version, -EIO otherwise. The coordinator opens its store
// through coord_store_open_owned (coord_store_ident.h), which also checks the store's identity.
coord_store_t *coord_store_open(const char *path, bool read_only, jf_err_t *err);
void coord_store_destroy(coord_store_t **self_p);

// The schema version of the open store (PRAGMA user_version) and the one this program writes.
int coord_store_schema_version(coord_store_t *self);
int coord_store_schema_latest(void);

// Transactions (BEGIN IMMEDIATE / COMMIT / ROLLBACK). commit returns 0 only once data is durable.
int coord_store_begin(coord_store_t *self, jf_err_t *err);
int coord_store_commit(coord_store_t *self, jf_err_t *err);
void coord_store_rollback(coord_store_t *self);
bool coord_store_in_transaction(coord_store_t *self);

// Increments and returns the coordinator epoch (one per coordinator start).
int coord_store_bump_epoch(coord_store_t *self, int64_t *ret_epoch, jf_err_t *err);

// Appends to the event log (audit of state changes). board, run and detail may be NULL.
int coord_store_event(coord_store_t *self, const char *kind, const char *board, const char *run,
                      int64_t attempt, const char *detail, jf_err_t *err);

// Boards: registration facts (the hello as JSON text) and online state.
int coord_store_board_hello(coord_store_t *self, const char *name, const char *type,
                            const char *platform, const char *facts_json, jf_err_t *err);
int coord_store_board_set_online(coord_store_t *self, const char *name, bool online,
                                 jf_err_t *err);
// The board's registration facts (its last hello, JSON text) into *ret_json: caller frees; NULL
// when the store has no row for the board or no facts in it (it never registered). 0 or -EIO.
int coord_store_board_facts(coord_store_t *self, const char *name, char **ret_json, jf_err_t *err);
// Marks every board offline (at coordinator start: nobody is connected yet).
int coord_store_boards_all_offline(coord_store_t *self, jf_err_t *err);

// How long a board claim waits for another connection that holds the name (PostgreSQL's
// lock_timeout text): long enough for the session of a coordinator that just exited to end.
#define COORD_CLAIM_WAIT "3s"

// At coordinator start on a PostgreSQL store shared by several coordinators (docs/store.md §10):
// claims the fleet's n board names for this connection, for as long as it lives (session
// advisory locks, released when the coordinator exits or its connection drops), and marks those
// boards offline (only those: the other boards belong to other coordinators). Runs are
// dispatched by board name, so two coordinators that claimed their boards never lease each
// other's runs. Returns 0, -EBUSY when another connection still holds one of the names after
// COORD_CLAIM_WAIT (err names it), or -EIO. On SQLite (one coordinator per store file) it marks
// every board offline, as coord_store_boards_all_offline.
int coord_store_claim_boards(coord_store_t *self, const char *const *names, size_t n,
                             jf_err_t *err);

// True when the store is a PostgreSQL database (coord_db.h), false for a SQLite file.
bool coord_store_is_postgres(const coord_store_t *self);

// The store for messages: the file path, or the URI with any password replaced by "***"
// (borrowed; valid until the store is destroyed).
const char *coord_store_target(const coord_store_t *self);

// Records the board's clock estimate (docs/protocol.md §4.2.1): offset and rtt in µs and when it
// was measured (coordinator wall clock). Returns 0 or -EIO with err (coord_store_clock.c).
int coord_store_board_set_clock(coord_store_t *self, const char *name, int64_t offset_us,
                                int64_t rtt_us, int64_t at_us, jf_err_t *err);
// Copies the board's stored clock estimate (NULL when it has none) into the run's row, for the
// attempt that just started (coord_store_run_start calls it). Returns 0 or -EIO with err.
int coord_store_run_set_clock(coord_store_t *self, const char *run, int64_t attempt, jf_err_t *err);

// Sweeps: stores the sweep and its runs (new runs pending; failed ones retried; done ones kept).
int coord_store_sweep_put(coord_store_t *self, const jf_sweep_t *sweep, const char *file,
                          const char *yaml, coord_submit_result_t *ret_result, jf_err_t *err);
// Cancels a sweep: its pending runs fail with reason 'cancelled'. -ENOENT if unknown.
int coord_store_sweep_cancel(coord_store_t *self, const char *name, size_t *ret_cancelled,
                             jf_err_t *err);
// Per-state counts for one sweep (-ENOENT if unknown) or for all runs (name NULL).
int coord_store_counts(coord_store_t *self, const char *name, coord_state_counts_t *ret_counts,
                       jf_err_t *err);

// Runs.
// The oldest pending run for board; -ENOENT if none.
int coord_store_next_pending(coord_store_t *self, const char *board, jf_run_spec_t *ret_spec,
                             jf_err_t *err);
// The parameters of a run; -ENOENT if unknown.
int coord_store_run_spec(coord_store_t *self, const char *run, jf_run_spec_t *ret_spec,
                         jf_err_t *err);
int coord_store_run_get(coord_store_t *self, const char *run, coord_run_row_t *ret_row,
                        jf_err_t *err);
// pending -> assigned with attempt + 1 (written to *ret_attempt).
int coord_store_run_assign(coord_store_t *self, const char *run, int64_t *ret_attempt,
                           jf_err_t *err);
// assigned -> running for the given attempt; the run keeps the board's clock estimate in force
// (coord_store_run_set_clock).
int coord_store_run_start(coord_store_t *self, const char *run, int64_t attempt, jf_err_t *err);
// Ends the attempt: done, or failed with reason/detail. Also records it in the event log.
int coord_store_run_finish(coord_store_t *self, const char *run, int64_t attempt, bool done,
                           const char *reason, const char *detail, jf_err_t *err);
// *ret is true when every sweep that holds the run was cancelled (sweep cancel): an attempt of
// it that still runs is to be stopped. 0 or -EIO with err.
int coord_store_run_is_cancelled(coord_store_t *self, const char *run, bool *ret, jf_err_t *err);
// The attempt was lost (agent gone or restarted): back to pending, or failed with reason
// 'crashed' once max_attempts are used. *ret_failed tells which.
int coord_store_run_requeue(coord_store_t *self, const char *run, int64_t attempt,
                            int max_attempts, const char *why, bool *ret_failed, jf_err_t *err);
int coord_store_run_set_acked(coord_store_t *self, const char *run, int64_t attempt, int64_t seq,
                              jf_err_t *err);
int coord_store_run_set_info(coord_store_t *self, const char *run, int64_t attempt,
                             const char *info_json, jf_err_t *err);

// Calls fn for each run of board in state assigned or running (board NULL: every board).
typedef void (*coord_run_row_fn)(const coord_run_row_t *row, void *arg);
int coord_store_active_runs(coord_store_t *self, const char *board, coord_run_row_fn fn,
                            void *arg, jf_err_t *err);
// Calls fn for each assigned or running run of a sweep (for cancelling them).
int coord_store_sweep_active_runs(coord_store_t *self, const char *sweep, coord_run_row_fn fn,
                                  void *arg, jf_err_t *err);

// Records of one attempt (idempotent: a repeated record is ignored).
int coord_store_add_epoch(coord_store_t *self, const char *run, int64_t attempt,
                          const jf_epoch_rec_t *rec, jf_err_t *err);
int coord_store_add_minibatch(coord_store_t *self, const char *run, int64_t attempt,
                              const jf_minibatch_rec_t *rec, jf_err_t *err);
int coord_store_add_telemetry(coord_store_t *self, const char *run, int64_t attempt, int64_t seq,
                              int64_t index, int64_t t_us, const char *sample_json, jf_err_t *err);
// The same for a sample already parsed (borrowed; a JSON object): the coordinator's path, which
// saves parsing the text again. -EPROTO if sample is not an object.
int coord_store_add_telemetry_obj(coord_store_t *self, const char *run, int64_t attempt,
                                  int64_t seq, int64_t index, int64_t t_us, const json_t *sample,
                                  jf_err_t *err);
int coord_store_count_epochs(coord_store_t *self, const char *run, int64_t attempt,
                             int64_t *ret_count, jf_err_t *err);
// Keeps the attempt's measure record (JSON text; docs/protocol.md §5.4.1) with the run. A repeat
// overwrites it with the same text. Nothing happens for an attempt that is not the run's current.
int coord_store_run_set_measure(coord_store_t *self, const char *run, int64_t attempt,
                                const char *measure_json, jf_err_t *err);
// Sets one epoch's page-cache residency (NULL where not measured); an epoch not stored is left
// alone.
int coord_store_epoch_set_cache(coord_store_t *self, const char *run, int64_t attempt,
                                const jf_measure_cache_t *cache, jf_err_t *err);

// Tables for the CLI (runs, epochs, minibatches, telemetry, sweeps, results): calls fn once per
// row with the column names, the values as text (NULL for SQL NULL) and each value's kind
// (COORD_VALUE_*). sweep and state filter where the table has them (NULL: no filter). fn returns
// 0 to go on, or a negative errno to stop (returned as is).
typedef enum coord_table {
    COORD_TABLE_RUNS = 0,
    COORD_TABLE_EPOCHS,
    COORD_TABLE_MINIBATCHES,
    COORD_TABLE_TELEMETRY,
    COORD_TABLE_SWEEPS,
    COORD_TABLE_RESULTS, // one row per done run: mean epoch figures without the warm-up
    COORD_TABLE_FL_ROUNDS, // federated rounds: one row per round; sweep = the rounds run's id
    COORD_TABLE_FL_BOARDS, // federated rounds: one row per board and round; sweep = the id
    COORD_TABLE_COUNT,
} coord_table_t;

typedef enum coord_value_kind {
    COORD_VALUE_NULL = 0,
    COORD_VALUE_INT,
    COORD_VALUE_REAL,
    COORD_VALUE_TEXT,
} coord_value_kind_t;

#define COORD_TABLE_COLS_MAX 128

typedef int (*coord_row_fn)(int ncols, const char *const *names, const char *const *values,
                            const coord_value_kind_t *kinds, void *arg);
int coord_store_select(coord_store_t *self, coord_table_t table, const char *sweep,
                       const char *state, coord_row_fn fn, void *arg, jf_err_t *err);

// 0 if a sweep of that name is stored, -ENOENT ("no sweep named ...") if not.
int coord_store_sweep_exists(coord_store_t *self, const char *sweep, jf_err_t *err);

// Calls fn for each measured epoch of the sweep's done runs (their last attempt, warm-up left
// out), in run order then epoch (coord_obs.h). fn's non-zero return stops the walk and is
// returned. -ENOENT if there is no such sweep.
typedef int (*coord_obs_fn)(const coord_obs_t *obs, void *arg);
int coord_store_obs_each(coord_store_t *self, const char *sweep, coord_obs_fn fn, void *arg,
                         jf_err_t *err);

// Imported sweeps (docs/import.md; coord_store_import.c). One run measured elsewhere: its board,
// configuration and custom operating point (a plain value record; coord_import.c fills it).
typedef struct coord_import_run {
    char id[JF_RUN_ID_LEN + 1];         // deterministic run id (coord_import_run_id)
    char board[JF_IDENT_MAX + 1];       // board name, stored in boards with platform 'imported'
    char board_type[JF_IDENT_MAX + 1];  // jf_board_type_name of its type
    char workload[JF_IDENT_MAX + 1];    // workload name
    char storage[JF_IDENT_MAX + 1];     // medium name, "unknown" when the file gives none
    char power_mode[JF_POWER_MODE_NAME_MAX + 1]; // nvpmodel mode name, "imported" if none given
    int cores;                          // CPU cores online
    int64_t cpu_hz;                     // CPU clock
    int64_t gpu_hz;                     // GPU clock
    int64_t emc_hz;                     // EMC clock
    int workers;                        // loader workers
    int batch_size;                     // samples per minibatch
    int repeat;                         // repeat index, 0 when the file gives none
    int64_t ord;                        // order in the sweep (line of the run's first row)
} coord_import_run_t;

// One epoch of an imported run; epoch 0 is stored as the warm-up.
typedef struct coord_import_epoch {
    int epoch;              // 0.. (0: warm-up)
    int64_t e2e_us;         // epoch wall time
    int64_t fetch_stall_us; // 0 when the file gives none
    int64_t compute_us;     // 0 when the file gives none
    double energy_mj;       // energy of the epoch
    double avg_power_mw;    // mean power during the epoch
} coord_import_epoch_t;

// Stores (or updates) sweep name as imported from file, with the file's source label (NULL:
// none). -EEXIST if a fleet sweep has that name. Call inside a transaction (coord_store_begin).
int coord_store_import_sweep(coord_store_t *self, const char *name, const char *file,
                             const char *origin, jf_err_t *err);
// Stores run with its n epochs as a done run (attempt 1) of sweep, replacing the epochs a
// previous import of the same run stored, and its board with platform 'imported'. -EEXIST if the
// board is a fleet board (or an imported board of another type). Inside a transaction.
int coord_store_import_run(coord_store_t *self, const char *sweep, const coord_import_run_t *run,
                           const coord_import_epoch_t *epochs, size_t n, jf_err_t *err);

// Calls fn for each done run of the sweep, in sweep order, with what the validity check reads
// (coord_run_facts.h; coord_store_validity.c). fn's non-zero return stops the walk and is
// returned. -ENOENT if there is no such sweep.
typedef int (*coord_run_facts_fn)(const coord_run_facts_t *facts, void *arg);
int coord_store_run_facts_each(coord_store_t *self, const char *sweep, coord_run_facts_fn fn,
                               void *arg, jf_err_t *err);

// Fitted models (coord_store_models.c; docs/analysis.md "Models"): one row of the models table.
#define COORD_MODEL_TEXT_MAX 127 // longest name, sweep, scope value, workload stored
typedef struct coord_model_row {
    int64_t id;                                  // assigned by coord_store_model_put
    char name[COORD_MODEL_TEXT_MAX + 1];         // the user's name, or one made from the rest
    char sweep[COORD_MODEL_TEXT_MAX + 1];        // the sweep it was fitted on
    char scope[8];                               // "board" or "type"
    char scope_value[COORD_MODEL_TEXT_MAX + 1];  // the board name or board type
    char workload[COORD_MODEL_TEXT_MAX + 1];     // workload name
    char target[16];                             // "time", "power", "energy"
    char kind[16];                               // "linear", "mlp"
    char *features;        // owned (malloc): JSON array of input names
    char *params;          // owned (malloc): JSON object of the parameters
    int64_t training_runs; // runs it was trained on
    double cv_mape_pct;    // cross-validated MAPE, percent; NaN stores NULL
    int64_t transfer_from; // the reference model's id, 0 for none
    int64_t created_us;    // wall clock when stored
} coord_model_row_t;

// Stores row (its id ignored) and writes the new id. 0, or -EIO with err (a read-only store,
// a constraint: scope, target or kind out of their sets).
int coord_store_model_put(coord_store_t *self, const coord_model_row_t *row, int64_t *ret_id,
                          jf_err_t *err);
// Reads model id into *ret_row (release its strings with coord_model_row_fini). -ENOENT "no model
// with id N", -EIO.
int coord_store_model_get(coord_store_t *self, int64_t id, coord_model_row_t *ret_row,
                          jf_err_t *err);
// Calls fn for each model by id (the row is borrowed for the call). fn's non-zero return stops
// the walk and is returned.
typedef int (*coord_model_row_fn)(const coord_model_row_t *row, void *arg);
int coord_store_models_each(coord_store_t *self, coord_model_row_fn fn, void *arg,
                            jf_err_t *err);
// Frees a row's JSON strings (the row itself is the caller's).
void coord_model_row_fini(coord_model_row_t *row);

const char *coord_run_state_name(coord_run_state_t state);
bool coord_run_state_parse(const char *name, coord_run_state_t *ret_state);

#endif
