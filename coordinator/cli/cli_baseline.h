/* The stored idle baselines in the CLI (docs/baseline.md): `jetfleet baseline show` and the
 * idle power that `jetfleet results --dynamic` subtracts from a run's energy. Reads the store
 * (coord_store_baseline.h); never a zero for a baseline that is not there. */
#ifndef CLI_BASELINE_H
#define CLI_BASELINE_H

#include "cli_ctx.h"
#include "coord_store.h"
#include "jf_err.h"

#include <stdbool.h>

#define CLI_BASELINE_MISSING_HINT "measure one with `jetfleet baseline --board %s`"

// Prints board's stored baseline (a table of phases and the name=value summary of
// docs/baseline.md). Returns CLI_EXIT_OK, or CLI_EXIT_ERROR with a message when none is stored
// or the store cannot be read.
int cli_baseline_show(cli_ctx_t *ctx, const char *board);

typedef struct cli_baseline cli_baseline_t;

// A cache of the boards' baselines read from store (borrowed, must outlive it). Caller owns;
// release with cli_baseline_destroy. NULL when out of memory.
cli_baseline_t *cli_baseline_new(coord_store_t *store);
void cli_baseline_destroy(cli_baseline_t **self_p);

// The idle power to subtract from a run of board at power label power (its mode or custom point,
// " +dvfs-off" included: jf_run_spec_power_label): the phase with the same label and telemetry
// on, as the run was sampled. Returns 0 with *ret_mw; -ENOENT when the board has no baseline at
// that setting (err says which and how to measure it); -EIO when the store fails.
int cli_baseline_idle_mw(cli_baseline_t *self, const char *board, const char *power, double *ret_mw,
                         jf_err_t *err);

#endif
