/* `jetfleet sweep submit --adaptive N FILE`: active profiling driven by the CLI (issue #12,
 * docs/sweeps.md "Adaptive sweeps"). Submits the sweep in rounds of chosen custom points
 * (coord_adaptive.h), waits for each, then fits and stores time and power models. The loop lives
 * in this process: when it exits, running the same command again continues from the runs the
 * store has. Not the submit path itself (cli_cmd_sweep.c, coord_server_ctl.c). */
#ifndef CLI_ADAPTIVE_H
#define CLI_ADAPTIVE_H

#include "cli_cmds.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLI_ADAPTIVE_BATCH 5 // modes per round after the first (spread) round, by default
#define CLI_ADAPTIVE_SEED  1 // the choice's seed, by default

// What to run (plain value record).
typedef struct cli_adaptive_opts {
    size_t n;           // modes to profile in all (>= coord_adaptive_min_points)
    size_t batch;       // modes per round after the first
    uint64_t seed;      // coord_adaptive_opts_t.seed
    int64_t timeout_us; // for the whole loop; 0: none
} cli_adaptive_opts_t;

// Runs the loop for the sweep file and prints each round's choice (mode, reason, score), then
// the models it stored (model fit's lines). Returns the exit code: CLI_EXIT_USAGE for a file or
// N that cannot be profiled adaptively (a message saying why), CLI_EXIT_ERROR when the
// coordinator, the store, a wait or a fit fails.
int cli_adaptive_submit(cli_ctx_t *ctx, const char *file, const cli_adaptive_opts_t *opts);

// Waits until the sweep's runs are finished (done or failed), printing progress (defined in
// cli_cmd_sweep.c). failed_ok: failed runs do not make it an error. Returns the exit code.
int cli_sweep_wait(cli_ctx_t *ctx, const char *name, int64_t timeout_us, bool failed_ok);

#endif
