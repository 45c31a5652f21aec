/* The rounds planner (issue #14, docs/rounds.md "Planning"): for each board of a federated
 * round, the operating point and local minibatch count that the policy (maxn, equal-finish,
 * deadline) asks for, from the board's fitted time and power models (docs/analysis.md
 * "Models"). coord_rounds_plan is a pure computation over mode tables; coord_rounds_boards_load
 * builds those tables from the store. Not execution (w-flexec) nor profiling (the CLI). */
#ifndef COORD_ROUNDS_PLAN_H
#define COORD_ROUNDS_PLAN_H

#include "coord_features.h"
#include "coord_store.h"
#include "jf_board.h"
#include "jf_err.h"
#include "jf_fleet_config.h"
#include "jf_rounds.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COORD_ROUNDS_MODES_MAX 4096 // most candidate modes per board

// One candidate mode of one board, as its fitted models predict it (plain value record).
// Extension of the agreed interface: op and custom, because the candidates the models can
// predict are the operating points measured on the board (custom points of its profiling, or
// presets read back), and a custom point must be sent as one (docs/protocol.md §5.2.1 `custom`).
typedef struct coord_rounds_mode {
    int mode_id;                           // nvpmodel id: the mode itself, or a custom point's base
    char mode[JF_POWER_MODE_NAME_MAX + 1]; // its name
    bool custom;                           // op is a custom point set on top of mode_id
    coord_op_t op;                         // cores and clocks (workers, batch of the rounds)
    double minibatch_s;                    // predicted seconds per local minibatch, > 0
    double power_w;                        // predicted mean power while training, W, > 0
    double warmup_s; // a round's fixed cost in this mode: its run is one warm-up epoch (epoch
                     // 0), whose first minibatches take this much longer than minibatch_s says;
                     // the board's warmup_ghz_s over op's CPU clock, s (0 = none known)
} coord_rounds_mode_t;

typedef struct coord_rounds_board {
    char name[JF_IDENT_MAX + 1];     // board name
    jf_board_type_t type;            // its type (a sim board's simulated type)
    coord_rounds_mode_t *modes;      // owned (malloc); NULL when n_modes is 0
    size_t n_modes;                  // 0 = no fitted model for this board
    int maxn_mode_id;                // the board's fastest preset (the base of custom points)
    double idle_w;                   // predicted power while waiting at the barrier, W
                                     // (0 if unknown: the plan output says so)
    double budget_w;                 // power budget, W, 0 = none
    int64_t minibatches_per_epoch;   // of the rounds' dataset at its batch size; 0 = unknown
                                     // (extension: for local work given in epochs)
    int64_t time_model, power_model; // the store's model ids used, 0 when none
    double time_scale;               // closed-loop correction (coord_rounds_correct): the factor
                                     // the modes' minibatch_s carry over the models' prediction;
                                     // 1 (or 0, never corrected) = the models' own
    double warmup_ghz_s; // the warm-up term times the CPU clock, s x GHz (docs/rounds.md
                         // "Warm-up"); each mode's warmup_s is this over its CPU clock; 0 = none
    double error_s;      // how far this board's predicted finish may be off, s (0 = unknown):
                         // the measured warm-ups' spread, then each round's measured error
                         // (coord_rounds_correct); equal-finish keeps this margin in the window
    size_t warmup_runs;  // profiling runs warmup_ghz_s was measured on (0: not measured)
    int64_t max_minibatches; // the most local minibatches the board can train in a round: its
                             // shard's, learned when it trained fewer than a plan asked
                             // (coord_rounds_correct); 0 = no limit known
    bool has_last;           // last_mode and last_m hold the choice a round last measured
    size_t last_mode;        // that choice's mode (index into modes)
    int64_t last_m;          // and its minibatches
} coord_rounds_board_t;

typedef struct coord_rounds_choice {
    size_t mode; // index into the board's modes
    int mode_id; // what the board runs this round: the mode (or base)
    char mode_name[JF_POWER_MODE_NAME_MAX + 1];
    bool custom;         // (extension) op is a custom point on mode_id
    coord_op_t op;       // (extension) its operating point
    int64_t minibatches; // local minibatches this round
    double pred_s;       // predicted local training time, s
    double pred_j;       // predicted energy: training, plus idle_w over the
                         // wait until the round's predicted end, J
    double wait_s;       // (extension) predicted wait at the barrier, s
    bool meets;          // (extension) false: the board cannot meet the
                         // policy's target (deadline, equal-finish window);
                         // the choice is then its fastest allowed mode
} coord_rounds_choice_t;

// Summary of one round's plan (plain value record).
typedef struct coord_rounds_summary {
    double round_s;      // predicted round time: the latest finish, s
    double spread_s;     // latest minus earliest finish, s
    double spread_pct;   // 100 * spread_s / round_s
    double energy_j;     // sum of the boards' pred_j
    size_t n_missed;     // boards whose choice does not meet the target
    int64_t minibatches; // local minibatches over all boards (equal-finish may raise some)
} coord_rounds_summary_t;

// Builds the boards (n, in the order given) from the store's newest fitted time and power models
// of cfg's workload for each board (scope board, else its type): the candidate modes are the
// distinct operating points measured in the models' sweep on that board (else its type), at
// cfg's workers and batch size, with budget and idle power from cfg. A board without both models
// gets n_modes 0 (not an error). *ret is malloc'ed: release with coord_rounds_boards_free.
// 0, -EIO (store), -EINVAL (a stored model that does not load) with err, -ENOMEM.
int coord_rounds_boards_load(coord_store_t *store, const jf_rounds_t *cfg,
                             const jf_board_spec_t *const *boards, size_t n,
                             coord_rounds_board_t **ret, size_t *ret_n, jf_err_t *err);

// Frees each board's modes and the array, sets *boards to NULL. Accepts NULL.
void coord_rounds_boards_free(coord_rounds_board_t **boards, size_t n);

// One round's plan: ret_choices has n entries, in the boards' order. 0, or -EINVAL with err
// naming the board: no modes (no fitted model), no mode within its power budget, local work in
// epochs without minibatches_per_epoch, a deadline policy without a deadline.
int coord_rounds_plan(const jf_rounds_t *cfg, const coord_rounds_board_t *boards, size_t n,
                      coord_rounds_choice_t *ret_choices, jf_err_t *err);

// Closed-loop correction (docs/rounds.md "Closed-loop correction"): the board's last round ran
// the plan's choice (its mode, whose warm-up is W, planned->minibatches in planned->pred_s) and
// trained trained_m minibatches in measured_s; with t = (pred_s - W) / minibatches,
//     ratio = measured_s / (W + trained_m * t)
// multiplies every mode's minibatch_s and warmup_s, board->warmup_ghz_s and board->time_scale,
// so that the next plan predicts that mode and count at the measured time. With
// e = |measured_s - (W + trained_m * t)|, the error this prediction had, board->error_s becomes
// e at the board's first correction (replacing the warm-up's estimate) and the larger of its
// value and e after that: the largest error a measured prediction of this board has had, kept
// as equal-finish's margin (one round's error says little about the next when the board
// changes mode or count). A board that trained fewer
// minibatches than planned ran out of its shard: board->max_minibatches becomes trained_m. The
// measured choice becomes board->last_mode and last_m. Pure: no I/O.
// Returns the ratio applied, or 1.0 with nothing changed when an input is not positive and
// finite or the choice's mode is not the board's (a board that was dropped or trained nothing).
double coord_rounds_correct(coord_rounds_board_t *board, const coord_rounds_choice_t *planned,
                            int64_t trained_m, double measured_s);

// The warm-up term of one board (docs/rounds.md "Warm-up"): for profiling run j, extra_s[j] is
// the measured time of the first minibatches of its warm-up epoch 0 minus as many at its later
// epoch's mean time per minibatch, and cpu_ghz[j] its CPU clock (GHz, > 0). The products
// extra_s[j] * cpu_ghz[j] are overwritten into extra_s and sorted; *ret_ghz_s is their median
// (s x GHz) and *ret_rel_err the largest relative distance of one from it. Pure. 0, or -ENOENT
// when n is 0 or the median is not positive (no warm-up term: the caller keeps none).
int coord_rounds_warmup_estimate(double *extra_s, const double *cpu_ghz, size_t n,
                                 double *ret_ghz_s, double *ret_rel_err);

// Sets each mode's warmup_s to ghz_s over its CPU clock (0 for a mode without one) and the
// board's warmup_ghz_s; its error_s becomes rel_err times the largest warmup_s of its modes (the
// warm-up's error in the mode where it is largest). Pure.
void coord_rounds_set_warmup(coord_rounds_board_t *board, double ghz_s, double rel_err);

// The round time, spread and total energy of n choices.
void coord_rounds_summarise(const coord_rounds_choice_t *choices, size_t n,
                            coord_rounds_summary_t *ret);

#endif
