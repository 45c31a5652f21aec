/* The valid runs of a sweep, for an analysis that must use valid runs only and say how many it
 * left out and why (variability; the models and Pareto fronts of issue #12): runs
 * coord_validity_check_sweep once and keeps every verdict and their summary (results and exports
 * print each run's verdict from it). */
#ifndef COORD_VALID_RUNS_H
#define COORD_VALID_RUNS_H

#include "coord_validity.h"

typedef struct coord_valid_runs coord_valid_runs_t;

// Checks the sweep (coord_validity_check_sweep; opts may be NULL for the defaults). Caller
// owns; release with coord_valid_runs_destroy. NULL with err on failure: -ENOENT "no sweep
// named ..." for an unknown sweep, -EIO, -ENOMEM.
coord_valid_runs_t *coord_valid_runs_new(coord_store_t *store, const char *sweep,
                                         const coord_validity_opts_t *opts, jf_err_t *err);
void coord_valid_runs_destroy(coord_valid_runs_t **self_p);

// Whether run (an id) is a done run of the sweep that passed every check.
bool coord_valid_runs_has(const coord_valid_runs_t *self, const char *run);

// The verdict of run (an id) when it is a done run of the sweep; NULL otherwise (not done, not
// of the sweep). Borrowed: valid while self lives. The same verdict jetfleet check prints.
const coord_run_validity_t *coord_valid_runs_verdict(const coord_valid_runs_t *self,
                                                     const char *run);

// How many runs were checked, valid, and left out by reason. Borrowed: valid while self lives.
const coord_validity_summary_t *coord_valid_runs_summary(const coord_valid_runs_t *self);

#endif
