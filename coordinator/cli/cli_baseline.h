/* The stored idle baselines in the CLI (docs/baseline.md): `jetfleet baseline show` and the
 * idle power that `jetfleet results --dynamic` subtracts from a run's energy. Reads the store
 * (coord_store_baseline.h); never a zero for a baseline that is not there. */
#ifndef CLI_BASELINE_H
#define CLI_BASELINE_H

#include "cli_ctx.h"
#include "coord_store.h"
#include "jf_err.h"

#include <stdbool.h>
#include <stdio.h>

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

// --dynamic's row filter (a plain value record; zero it, then set base, fn and arg).
typedef struct cli_baseline_dyn {
    cli_baseline_t *base;         // borrowed: the baselines
    coord_row_fn fn;              // where the widened rows go (cli_table_add_row)
    void *arg;                    // fn's argument
    size_t n_dynamic;             // rows that got a dynamic energy
    size_t n_no_base;             // rows without a baseline at their power setting
    char no_base[JF_ERR_MSG_MAX]; // the first such row's reason
} cli_baseline_dyn_t;

#define CLI_BASELINE_COLS_MAX 128 // widest row cli_baseline_dynamic_row takes

// A coord_row_fn (arg: a cli_baseline_dyn_t): passes the row to dyn->fn with two more columns,
// idle_mw (cli_baseline_idle_mw of its board and power) and dynamic_energy_mj = energy_mj -
// idle_mw x e2e_s (mW x s = mJ), both empty where the row has no energy or its board no baseline
// at its power setting (counted, with the first reason). Returns fn's result, -EINVAL for a row
// wider than CLI_BASELINE_COLS_MAX, -EIO when the store fails.
int cli_baseline_dynamic_row(int ncols, const char *const *names, const char *const *values,
                             const coord_value_kind_t *kinds, void *arg);

// Writes to out what the two columns are and how many rows have none, and why.
void cli_baseline_dynamic_footer(const cli_baseline_dyn_t *dyn, FILE *out);

// 0, or -ENOENT with err when rows had no baseline and none had one: the dynamic energy is then
// unknown, not the total.
int cli_baseline_dynamic_check(const cli_baseline_dyn_t *dyn, jf_err_t *err);

#endif
