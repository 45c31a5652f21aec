/* The valid runs of a sweep, for an analysis that must use valid runs only and say how many it
 * left out and why (variability; the models and Pareto fronts of issue #12): runs
 * coord_validity_check_sweep once and keeps every verdict and their summary (results and exports
 * print each run's verdict from it). It also keeps only the kinds of run the analysis is about
 * (coord_run_kind.h): plain training by default, so roofline, idle and concurrent runs never
 * count as training runs, and says how many of each kind it left out. */
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

// Also keep runs of kind (only COORD_RUN_TRAINING is kept after coord_valid_runs_new): for an
// analysis whose grouping keeps them apart (variability keeps container runs, grouped by
// runtime). Updates the summary.
void coord_valid_runs_keep_kind(coord_valid_runs_t *self, coord_run_kind_t kind);

// Whether run (an id) is a done run of the sweep of a kept kind that passed every check.
bool coord_valid_runs_has(const coord_valid_runs_t *self, const char *run);

// Whether run (an id) is a done run of the sweep of a kind that is not kept (left out whatever
// its verdict).
bool coord_valid_runs_is_other_kind(const coord_valid_runs_t *self, const char *run);

// How many done runs of each kind were left out for their kind (0 for the kept kinds), and
// their total. Borrowed array of COORD_RUN_KIND_COUNT: valid while self lives.
const size_t *coord_valid_runs_left_kinds(const coord_valid_runs_t *self);
size_t coord_valid_runs_left_kinds_total(const coord_valid_runs_t *self);

// "not training, left out: roofline 2, idle 1, concurrent 1" into buf (always NUL-terminated,
// truncated to size); "" when no run was left out for its kind.
void coord_valid_runs_kinds_format(const coord_valid_runs_t *self, char *buf, size_t size);

// The verdict of run (an id) when it is a done run of the sweep; NULL otherwise (not done, not
// of the sweep). Borrowed: valid while self lives. The same verdict jetfleet check prints.
const coord_run_validity_t *coord_valid_runs_verdict(const coord_valid_runs_t *self,
                                                     const char *run);

// How many runs of the kept kinds were checked, valid, and left out by reason (runs of other
// kinds are counted by coord_valid_runs_left_kinds instead). Borrowed: valid while self lives.
const coord_validity_summary_t *coord_valid_runs_summary(const coord_valid_runs_t *self);

#endif
