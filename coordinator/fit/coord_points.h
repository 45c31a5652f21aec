/* The training data of the models and Pareto fronts: a sweep's measured epochs (coord_obs_t)
 * grouped by run into per-run means over the non-warm-up epochs, filtered by workload and board
 * or board type. Not for fitting (coord_model.h). */
#ifndef COORD_POINTS_H
#define COORD_POINTS_H

#include "coord_features.h"
#include "coord_model.h"
#include "coord_obs.h"
#include "coord_pareto.h"
#include "coord_store.h"
#include "coord_valid_runs.h"

#include <stddef.h>

// One done run's means over its measured epochs (plain value record).
typedef struct coord_run_mean {
    char run[COORD_OBS_NAME_MAX + 1];   // run id
    char board[COORD_OBS_NAME_MAX + 1]; // board name
    coord_op_t op;                      // its operating point and loader configuration
    double time_us;                     // mean epoch wall time
    bool has_energy;                    // power and energy below are measured
    double power_mw;                    // mean of the epochs' mean power
    double energy_mj;                   // mean energy per epoch
    int epochs;                         // measured epochs averaged
} coord_run_mean_t;

// Which runs to keep (NULL fields match anything; board and type are exclusive).
typedef struct coord_points_filter {
    const char *workload;            // the sweep's workload name
    const char *board;               // board name
    const char *type;                // board type ("xavier-nx"; a sim board's simulated type)
    const coord_valid_runs_t *valid; // keep only these runs (jetfleet check's valid ones); NULL:
                                     // every done run
} coord_points_filter_t;

// The runs that matched the filter's workload and board but were left out, and why.
typedef struct coord_points_left {
    size_t no_op;   // no operating point known (no custom point, no power mode read back)
    size_t invalid; // not among f->valid (jetfleet check found a reason to distrust it)
    size_t other_kind; // not plain training (roofline, idle, concurrent, container runs:
                       // coord_valid_runs_is_other_kind), whatever its verdict
    size_t by_kind[COORD_RUN_KIND_COUNT]; // other_kind by kind (coord_run_kind.h)
} coord_points_left_t;

// The runs of the sweep that pass the filter (valid ones only when f->valid is set) and have an
// operating point, as per-run means. *ret_runs is malloc'ed (caller frees; NULL when none) and
// *ret_left counts the matching runs left out, by reason. 0, -ENOENT "no sweep named ...", -EIO,
// -ENOMEM.
int coord_points_collect(coord_store_t *store, const char *sweep, const coord_points_filter_t *f,
                         coord_run_mean_t **ret_runs, size_t *ret_n, coord_points_left_t *ret_left,
                         jf_err_t *err);

// The runs' values of target as model points (time in µs, power mW, energy mJ), runs without
// energy left out for power and energy. Writes at most n points to ret_pts; returns the count.
size_t coord_points_of(const coord_run_mean_t *runs, size_t n, coord_target_t target,
                       coord_point_t *ret_pts);

#define COORD_GRID_MAX 100000 // most candidate modes a predicted front or recommendation scores

// The distinct modes among runs that have energy, repeats averaged (time, power and energy
// means), in first-seen order. *ret_modes is malloc'ed (caller frees). 0 or -ENOMEM with err.
int coord_points_modes(const coord_run_mean_t *runs, size_t n, coord_pareto_point_t **ret_modes,
                       size_t *ret_n, jf_err_t *err);

// The candidate modes of a predicted front: the cartesian product of the distinct cores, CPU,
// GPU and EMC clocks seen in runs, for each distinct (workers, batch) pair seen. *ret_ops is
// malloc'ed (caller frees). 0, -E2BIG when it would exceed COORD_GRID_MAX modes, -ENOMEM.
int coord_points_grid(const coord_run_mean_t *runs, size_t n, coord_op_t **ret_ops, size_t *ret_n,
                      jf_err_t *err);

// True when two operating points are the same mode (cores, clocks, workers, batch).
bool coord_op_same(const coord_op_t *a, const coord_op_t *b);

#endif
