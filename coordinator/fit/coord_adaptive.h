/* Active profiling (issue #12, docs/analysis.md "Active profiling"): which power modes of a
 * sweep to measure next so that few runs give good time and power models. A pure computation
 * over candidate operating points and the figures measured so far; it neither reads the store
 * nor runs anything. Spread first (greedy MaxPro: the least crowded mode in normalised feature
 * space), then the modes where bootstrapped linear models disagree most, mixed with modes on the
 * predicted front. MaxPro: V. R. Joseph, E. Gul, S. Ba, "Maximum projection designs for computer
 * experiments", Biometrika 102(2), 2015. */
#ifndef COORD_ADAPTIVE_H
#define COORD_ADAPTIVE_H

#include "coord_features.h"
#include "jf_err.h"

#include <stddef.h>
#include <stdint.h>

#define COORD_ADAPTIVE_BOOT      8      // bootstrap models per target for the disagreement
#define COORD_ADAPTIVE_DIMS      6      // normalised features: cores, cpu, gpu, emc, workers, batch
#define COORD_ADAPTIVE_CANDS_MAX 100000 // most candidate modes (as COORD_GRID_MAX)
#define COORD_ADAPTIVE_CROWD_EPS 0.01   // added to each squared coordinate difference (below)

// Why a mode was chosen.
typedef enum coord_adaptive_reason {
    COORD_ADAPTIVE_SPREAD = 0,  // least crowded by the modes measured or chosen (space filling)
    COORD_ADAPTIVE_UNCERTAINTY, // the bootstrap models disagree most there (over its crowding)
    COORD_ADAPTIVE_FRONT,       // on the predicted time-energy Pareto front of unmeasured modes
} coord_adaptive_reason_t;

// One measured candidate (plain value record): its index and per-mode means.
typedef struct coord_adaptive_obs {
    size_t idx;      // index into the candidates
    double time_us;  // mean epoch time, > 0
    double power_mw; // mean power, > 0
} coord_adaptive_obs_t;

// One chosen candidate (plain value record).
typedef struct coord_adaptive_pick {
    size_t idx;                     // index into the candidates
    coord_adaptive_reason_t reason; // why
    double score;                   // spread: 1 / crowding, where the crowding of mode i is the
                                    // sum over measured and chosen modes j of 1 / prod over the
                                    // dimensions d of ((x_id - x_jd)^2 + COORD_ADAPTIVE_CROWD_EPS)
                                    // (MaxPro's criterion: sharing any coordinate crowds);
                                    // uncertainty: the spread of the bootstrap predictions (sd of
                                    // log time + sd of log power) / crowding; front: that spread
} coord_adaptive_pick_t;

// What to choose (plain value record; designated initialisers).
typedef struct coord_adaptive_opts {
    uint64_t seed;   // the first spread mode and the bootstrap resamples
    size_t batch;    // how many modes to choose now (>= 1)
    size_t n_spread; // measure this many (spread) before choosing by the models; 0: the fewest a
                     // linear time and power model are fitted on (coord_adaptive_min_points)
} coord_adaptive_opts_t;

// "spread", "uncertainty", "front" (static), or "unknown".
const char *coord_adaptive_reason_name(coord_adaptive_reason_t reason);

// The fewest measured modes the models (linear time and power) are fitted on.
size_t coord_adaptive_min_points(void);

// Chooses up to opts->batch unmeasured candidates among n_cands (each index at most once; none
// of obs). While fewer than n_spread modes are measured or chosen, by spread; then alternately by
// uncertainty and front. Writes them to ret_picks (room for opts->batch) in the order chosen and
// their number to *ret_n (smaller than batch only when the candidates run out). Deterministic for
// the same arguments. 0; -EINVAL with err for batch 0, too many candidates, a candidate without
// a valid operating point, an obs index out of range or repeated, or a figure not positive;
// -ENOMEM; -EIO from libtorch.
int coord_adaptive_choose(const coord_adaptive_opts_t *opts, const coord_op_t *cands,
                          size_t n_cands, const coord_adaptive_obs_t *obs, size_t n_obs,
                          coord_adaptive_pick_t *ret_picks, size_t *ret_n, jf_err_t *err);

#endif
