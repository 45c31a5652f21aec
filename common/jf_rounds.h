/* Rounds file loader (libyaml through jf_yaml): one federated-learning run over several boards
 * (issue #14): which boards, the workload, how many rounds, the local work per round, the
 * planning policy and its targets, straggler handling and power budgets. Strict: unknown or
 * duplicate keys and bad values are errors naming file:line:column. Resolves the board selection
 * against fleet.yaml. Not the planner (coordinator/rounds/) nor execution. docs/rounds.md
 * "Rounds file". */
#ifndef JF_ROUNDS_H
#define JF_ROUNDS_H

#include "jf_board.h"
#include "jf_err.h"
#include "jf_fleet_config.h"
#include "jf_parse.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JF_ROUNDS_FILE_MAX_BYTES     (256 * 1024)
#define JF_ROUNDS_SELECT_MAX         64     // entries under `boards`
#define JF_ROUNDS_POWER_MAX          64     // entries under `power_budget` and under `idle_power`
#define JF_ROUNDS_MAX                100000 // most rounds
#define JF_ROUNDS_LOCAL_MAX          INT64_C(1000000000) // most local minibatches or epochs per round
#define JF_ROUNDS_WATTS_MAX          1000.0 // a budget or idle power above this is a typo
#define JF_ROUNDS_BATCH_MAX          65536  // largest batch size
#define JF_ROUNDS_WORKERS_MAX        64     // most loader workers
#define JF_ROUNDS_DURATION_MAX_US    (INT64_C(7) * 24 * 3600 * 1000000) // one week
#define JF_ROUNDS_DEFAULT_WORKERS    1 // loader workers when the file leaves them out
#define JF_ROUNDS_DEFAULT_TIMEOUT_US (INT64_C(600) * 1000000) // round timeout by default: 10 min
#define JF_ROUNDS_DEFAULT_SPREAD_PCT 5.0 // equal-finish: finish-time window, % of the round
#define JF_ROUNDS_SPREAD_PCT_MAX     50.0

typedef enum jf_rounds_policy {
    JF_ROUNDS_MAXN = 0,     // every board in its fastest mode, all the local work
    JF_ROUNDS_EQUAL_FINISH, // all finish together at the slowest board's pace, least energy
    JF_ROUNDS_DEADLINE,     // every board within deadline_us, least energy
} jf_rounds_policy_t;

typedef enum jf_rounds_straggler {
    JF_ROUNDS_DROP = 0, // a board that misses the round timeout is left out of that round
    JF_ROUNDS_WAIT,     // the round waits for it (the timeout then only logs)
} jf_rounds_straggler_t;

typedef enum jf_rounds_local_unit {
    JF_ROUNDS_MINIBATCHES = 0,
    JF_ROUNDS_EPOCHS,
} jf_rounds_local_unit_t;

// How one entry selects boards: by name, by type (a sim board's simulated type), by label.
typedef enum jf_rounds_by {
    JF_ROUNDS_BY_NAME = 0,
    JF_ROUNDS_BY_TYPE,
    JF_ROUNDS_BY_LABEL,
} jf_rounds_by_t;

// One selector (plain value record), with its position for messages.
typedef struct jf_rounds_select {
    jf_rounds_by_t by;
    char value[JF_IDENT_MAX + 1]; // board name, type name or label
    jf_board_type_t type;         // by == JF_ROUNDS_BY_TYPE: the parsed type
    int line, column;             // 1-based position of the entry in the rounds file
} jf_rounds_select_t;

// A power figure for the boards one selector (name or type) picks.
typedef struct jf_rounds_power {
    jf_rounds_select_t sel; // by name or type only
    double watts;           // > 0
} jf_rounds_power_t;

typedef struct jf_rounds {
    char source[PATH_MAX];       // file name used in error messages
    char name[JF_IDENT_MAX + 1]; // the rounds' name
    char description[256];       // free text, may be empty
    size_t n_select;
    jf_rounds_select_t select[JF_ROUNDS_SELECT_MAX]; // union of these, in fleet.yaml order
    char workload[JF_IDENT_MAX * 2 + 2];             // "<model>-<dataset>" (jf_workload.h)
    char model[JF_IDENT_MAX + 1];                    // model name
    char dataset[JF_IDENT_MAX + 1];                  // dataset name
    int batch_size;                    // samples per minibatch, 1..JF_ROUNDS_BATCH_MAX
    int workers;                       // loader workers
    char storage[JF_IDENT_MAX + 1];    // storage medium, "" = each board's first one
    int64_t rounds;                    // R, 1..JF_ROUNDS_MAX
    jf_rounds_local_unit_t local_unit; // local work per round in minibatches or epochs
    int64_t local_count;               // how many of them, >= 1
    jf_rounds_policy_t policy;
    int64_t deadline_us; // per-round deadline; > 0 iff policy is deadline
    double spread_pct;   // equal-finish window (JF_ROUNDS_DEFAULT_SPREAD_PCT)
    int64_t timeout_us;  // round timeout
    jf_rounds_straggler_t straggler;
    size_t n_budget;
    jf_rounds_power_t budget[JF_ROUNDS_POWER_MAX]; // power_budget: most W per board while
                                                   // training; a name entry beats a type one
    size_t n_idle;
    jf_rounds_power_t idle[JF_ROUNDS_POWER_MAX]; // idle_power: W a board draws while waiting
                                                 // at the barrier (measured by the user)
    uint64_t seed;                               // model initialisation and data order
} jf_rounds_t;

// Loads and validates a rounds file. Caller owns the result; release with jf_rounds_destroy.
// NULL on failure with err "<file>:<line>:<col>: <what>, expected <...>" (-EINVAL), or the
// read error.
jf_rounds_t *jf_rounds_load(const char *path, jf_err_t *err);

// Same from memory; source_name is used in messages.
jf_rounds_t *jf_rounds_parse(const char *text, size_t len, const char *source_name, jf_err_t *err);

// Frees the rounds and sets *self_p to NULL. Accepts NULL and *self_p == NULL.
void jf_rounds_destroy(jf_rounds_t **self_p);

// The boards the selection picks, in fleet.yaml order, each once: *ret_boards is malloc'ed
// (caller frees the array; the boards are borrowed from fleet). 0, or -EINVAL with err
// "<file>:<line>:<col>: no board in <fleet> has <name|type|label> '<v>'" for a selector that
// picks nothing, or for a budget or idle entry naming a board not selected; -ENOMEM.
int jf_rounds_resolve(const jf_rounds_t *self, const jf_fleet_config_t *fleet,
                      const jf_board_spec_t ***ret_boards, size_t *ret_n, jf_err_t *err);

// The power budget in W for a board (its name entry, else its type's), 0 when none.
double jf_rounds_budget_w(const jf_rounds_t *self, const jf_board_spec_t *board);

// The idle power in W the file gives for a board (name entry, else type), 0 when none.
double jf_rounds_idle_w(const jf_rounds_t *self, const jf_board_spec_t *board);

// "maxn", "equal-finish", "deadline" (static), or "unknown"; and the parse (false otherwise).
const char *jf_rounds_policy_name(jf_rounds_policy_t policy);
bool jf_rounds_policy_parse(const char *name, jf_rounds_policy_t *ret_policy);

// "drop", "wait" (static), or "unknown".
const char *jf_rounds_straggler_name(jf_rounds_straggler_t s);

#endif
