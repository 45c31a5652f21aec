/* `jetfleet rounds run` and `rounds show` (issue #14, docs/rounds.md "Execution", "Stragglers",
 * "Records"): the loop that drives the coordinator through its ordinary submit path, one run per
 * board and round, and the records. Private to cli_rounds_run.c and cli_rounds_round.c. */
#ifndef CLI_ROUNDS_EXEC_H
#define CLI_ROUNDS_EXEC_H

#include "cli_rounds.h"
#include "coord_rounds_plan.h"
#include "coord_store_rounds.h"
#include "jf_run_spec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLI_ROUNDS_POLL_MS 100 // how often the loop reads the runs' states from the store

// One board in the round under way.
typedef struct cli_rounds_slot {
    const jf_board_spec_t *spec;  // borrowed from the fleet
    char sweep[JF_IDENT_MAX + 1]; // the one-run sweep of this board and round
    jf_run_spec_t run;            // its run
    bool ended;                   // done, failed, or dropped
    coord_fl_board_t rec;         // what the store keeps of it
} cli_rounds_slot_t;

// The whole execution (plain record owned by cli_rounds_run).
typedef struct cli_rounds_exec {
    cli_ctx_t *ctx;                 // borrowed
    coord_store_t *store;           // borrowed from ctx
    const char *file;               // the rounds file (borrowed)
    jf_rounds_t *cfg;               // owned
    const jf_board_spec_t **specs;  // owned array, specs borrowed from the fleet
    size_t n;                       // boards
    coord_rounds_board_t *boards;   // owned: the planner's tables (coord_rounds_boards_free)
    coord_rounds_choice_t *choices; // owned: n, this round's plan
    bool planned;                   // choices come from the planner (else maxn defaults)
    cli_rounds_slot_t *slots;       // owned: n
    int64_t id;                     // the rounds run's id in the store
    char weights[JF_BLOB_SHA256_HEX_LEN + 1]; // the global weights; "": the seeded initialisation
} cli_rounds_exec_t;

// One round: submit, wait (stragglers by policy), average, record, print. 0 or a negative errno
// with err; a round in which no board finished is recorded and is not an error.
int cli_rounds_round(cli_rounds_exec_t *x, int64_t round, jf_err_t *err);

#endif
