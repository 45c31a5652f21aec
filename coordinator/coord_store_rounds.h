/* The store's records of federated rounds (docs/rounds.md "Records", docs/store.md "Federated
 * rounds"): one row per `jetfleet rounds run`, one per round, one per board and round; and the
 * figures a round takes from a board's run (samples trained, loss, local time and energy from its
 * epoch records). Same connection and thread rules as coord_store.h. */
#ifndef COORD_STORE_ROUNDS_H
#define COORD_STORE_ROUNDS_H

#include "coord_store.h"
#include "jf_blob.h"
#include "jf_err.h"
#include "jf_parse.h"

#include <stdbool.h>
#include <stdint.h>

#define COORD_FL_STATUS_MAX 16 // "in", "dropped", "failed", "offline", "running", "done"

// One `jetfleet rounds run` (plain value record).
typedef struct coord_fl_rounds {
    char name[JF_IDENT_MAX + 1];         // the rounds file's name
    char file[256];                      // the file as given
    char policy[16];                     // maxn, equal-finish, deadline
    char straggler[8];                   // drop, wait
    int64_t rounds;                      // R
    char workload[JF_IDENT_MAX * 2 + 2]; // "<model>-<dataset>"
    int batch_size;
    int64_t timeout_us; // the round timeout
} coord_fl_rounds_t;

// One round's record (plain value record). Figures are NAN when no board finished.
typedef struct coord_fl_round {
    int64_t rounds;                             // the rounds run's id
    int64_t round;                              // 1-based
    char init_blob[JF_BLOB_SHA256_HEX_LEN + 1]; // weights it started from; "": seeded init
    char avg_blob[JF_BLOB_SHA256_HEX_LEN + 1];  // FedAvg of the boards' weights; "": none
    int64_t boards;                             // boards asked to train
    int64_t boards_in;                          // boards whose weights were averaged
    int64_t samples;                            // samples trained by those boards
    double loss;                                // their mean training loss, sample-weighted
    double round_s, spread_s, spread_pct;       // latest finish, latest - earliest, % of round_s
    double energy_j;                            // boards' training energy + idle at the barrier
    bool simulated;                             // any board is simulated: modelled figures
    int64_t started_us, finished_us;            // wall clock of the round
} coord_fl_round_t;

// One board in one round (plain value record). Times are local to the round: the board starts
// at 0 and finishes after its run's epochs (their e2e time: modelled on a simulated board).
typedef struct coord_fl_board {
    int64_t rounds, round;
    char board[JF_IDENT_MAX + 1];
    char run[JF_RUN_ID_LEN + 1];      // its run; "" if none was made
    char status[COORD_FL_STATUS_MAX]; // in, dropped, failed
    bool simulated;
    char mode[JF_RUN_POWER_LABEL_MAX + 1]; // power setting (jf_run_spec_power_label)
    int64_t minibatches;                   // local minibatches per epoch asked for (0: all)
    int64_t samples;                       // samples trained
    double loss;                           // mean training loss of its last epoch (NAN: none)
    double start_s, finish_s, idle_s;      // NAN when it did not finish
    double energy_j;                       // training energy (NAN: not measured)
    double pred_s, pred_j;                 // the plan's prediction (NAN: none)
    char blob[JF_BLOB_SHA256_HEX_LEN + 1]; // the weights it returned; ""
    char detail[256];                      // why dropped or failed; ""
} coord_fl_board_t;

// What a done run's epoch records say (plain value record).
typedef struct coord_fl_run_facts {
    int64_t samples;  // sum over its epochs
    int64_t time_us;  // sum of the epochs' e2e time
    bool has_energy;  // every epoch has its energy
    double energy_mj; // sum of the epochs' energy
    bool has_loss;
    double loss; // the last epoch's mean training loss
} coord_fl_run_facts_t;

// Starts a rounds run's record: *ret_id is its id. 0, -EIO with err.
int coord_store_fl_rounds_begin(coord_store_t *self, const coord_fl_rounds_t *r, int64_t *ret_id,
                                jf_err_t *err);
// Ends it: state "done" or "failed", detail (NULL: none).
int coord_store_fl_rounds_end(coord_store_t *self, int64_t id, const char *state,
                              const char *detail, jf_err_t *err);
// Writes (or replaces) one round's record, then one board's.
int coord_store_fl_round_put(coord_store_t *self, const coord_fl_round_t *r, jf_err_t *err);
int coord_store_fl_board_put(coord_store_t *self, const coord_fl_board_t *b, jf_err_t *err);
// The facts of (run, attempt)'s epochs. -ENOENT if it has none.
int coord_store_fl_run_facts(coord_store_t *self, const char *run, int64_t attempt,
                             coord_fl_run_facts_t *ret, jf_err_t *err);
// -ENOENT (with err "no rounds run <id>") unless a rounds run of that id is stored.
int coord_store_fl_rounds_exists(coord_store_t *self, int64_t id, jf_err_t *err);

#endif
