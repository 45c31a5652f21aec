/* `jetfleet rounds ...` (issue #14, docs/rounds.md): the verb's dispatch table is in
 * cli_cmd_rounds.c; `rounds plan` (cli_rounds_plan.c) and the profiling of boards without fitted
 * models (cli_rounds_profile.c). Execution (`rounds run`, `rounds show`) is in cli_rounds_run.c
 * and cli_rounds_round.c. */
#ifndef CLI_ROUNDS_H
#define CLI_ROUNDS_H

#include "cli_cmds.h"
#include "cli_table.h"
#include "jf_fleet_config.h"
#include "jf_rounds.h"

#include <stddef.h>
#include <stdint.h>

// Custom points profiled per board without a model: the fit's 10, and 2 for runs that
// `jetfleet check` may leave out. While the fit fails, CLI_ROUNDS_PROFILE_BATCH more, in at most
// CLI_ROUNDS_PROFILE_TRIES adaptive loops per board.
#define CLI_ROUNDS_PROFILE_MODES 12
#define CLI_ROUNDS_PROFILE_TRIES 3
#define CLI_ROUNDS_PROFILE_BATCH 5 // points per adaptive round after the first
#define CLI_ROUNDS_PROFILE_SEED  1 // the adaptive choice's seed

// How to profile (plain value record).
typedef struct cli_rounds_profile_opts {
    size_t n;           // points per board (>= coord_adaptive_min_points)
    int64_t timeout_us; // per board; 0: none
} cli_rounds_profile_opts_t;

// `jetfleet rounds plan FILE [--no-profile] [--profile-modes N] [--timeout SECONDS]`: the exit
// code.
int cli_rounds_plan(cli_ctx_t *ctx, int argc, char **argv);

// Profiles one board that has no fitted model for cfg's workload: writes an adaptive sweep of
// custom points of its type (cores, CPU, GPU and EMC steps of common/jf_board_clocks.c) at cfg's
// batch size, workers and storage into a temporary directory and runs it through
// cli_adaptive_submit (which submits, waits and fits time and power models at board scope),
// saying so on stdout. When the fit fails (too few valid runs: `jetfleet check` left some out),
// it profiles CLI_ROUNDS_PROFILE_BATCH more points, at most CLI_ROUNDS_PROFILE_TRIES loops in
// all. The coordinator must run. Returns the exit code; CLI_EXIT_USAGE for a board that has no
// custom-mode space (a host) or no storage.
int cli_rounds_profile(cli_ctx_t *ctx, const jf_rounds_t *cfg, const jf_board_spec_t *board,
                       const cli_rounds_profile_opts_t *opts);

// `jetfleet rounds run FILE [--no-profile] [--profile-modes N]` (cli_rounds_run.c): the rounds,
// executed; the exit code.
int cli_rounds_run(cli_ctx_t *ctx, int argc, char **argv);

// `jetfleet rounds show ID [--boards] [--format text|csv|json]`: the records; the exit code.
int cli_rounds_show(cli_ctx_t *ctx, int argc, char **argv);

// The per-board rows of rounds run key (its id as text; NULL: every rounds run), the columns of
// `rounds show --boards` (COORD_TABLE_FL_BOARDS), written as format to out; `jetfleet export
// --what rounds` writes the same. For each board whose run trained fewer minibatches than the
// plan asked, a note line goes to notes (NULL: none). 0, or a negative errno with err (-EIO:
// store or write, -ENOMEM).
int cli_rounds_write_boards(coord_store_t *store, const char *key, cli_format_t format, FILE *out,
                            FILE *notes, jf_err_t *err);

#endif
