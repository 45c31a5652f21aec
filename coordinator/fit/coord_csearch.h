/* Searches for concurrent training and inference (docs/concurrent.md): which power mode (cores,
 * CPU, GPU and EMC clock steps) and inference batch size maximise training throughput while the
 * inference latency and the board's power stay within budgets, profiling few points. Two
 * policies over one profile cache: a descent (a coordinate search ranking points feasibility
 * first, about 15 points per budget pair) and an active-learning search that profiles the
 * Pareto-optimal points once (50-150) and answers every budget pair from them; re-runs of points
 * give the noise margin answers keep. Pure computation: the caller's profile function runs or
 * simulates a point; this module neither reads the store nor runs anything. */
#ifndef COORD_CSEARCH_H
#define COORD_CSEARCH_H

#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COORD_CSEARCH_DIMS       5       // cores, CPU step, GPU step, EMC step, inference batch
#define COORD_CSEARCH_POINTS_MAX 1000000 // largest space (product of the sizes)
#define COORD_CSEARCH_GD_MAX     15      // default profile cap of the gradient descent
#define COORD_CSEARCH_AL_MIN     50      // default: profiles before the active search may stop
#define COORD_CSEARCH_AL_MAX     150     // default profile cap of the active search
#define COORD_CSEARCH_AL_RERUNS  20      // default re-runs of the active search (within its cap)
#define COORD_CSEARCH_CONFIDENCE 0.97    // share of new runs an answer should meet its budgets in

typedef struct coord_csearch coord_csearch_t;

// The search space: each dimension's number of steps, ascending (a point is an index per
// dimension, 0..size-1; the caller maps them to cores, clocks and batch sizes). Plain value record.
typedef struct coord_csearch_space {
    int size[COORD_CSEARCH_DIMS]; // >= 1 each
} coord_csearch_space_t;

// What profiling one point measured (plain value record).
typedef struct coord_csearch_obs {
    bool ok;           // the point ran; false: it does not fit or failed (never chosen)
    double train_sps;  // training samples per second, > 0 when ok
    double latency_us; // the inference latency the budget bounds (the caller's percentile)
    double power_mw;   // the board's mean power
} coord_csearch_obs_t;

// The budgets of one question (plain value record).
typedef struct coord_csearch_budget {
    double latency_us; // most latency allowed, > 0
    double power_mw;   // most power allowed, > 0
} coord_csearch_budget_t;

// A search's answer (plain value record).
typedef struct coord_csearch_result {
    bool found;                    // a profiled point met both budgets
    int point[COORD_CSEARCH_DIMS]; // the chosen point (found only)
    coord_csearch_obs_t obs;       // what its profiles measured, geometric means (found only)
    size_t profiled;               // profiles this call made, re-runs included (cache hits not)
} coord_csearch_result_t;

// Profiles one point into *ret_obs: returns 0, or a negative errno with err, which stops the
// search with that error. arg is the caller's.
typedef int (*coord_csearch_profile_fn)(void *arg, const int point[COORD_CSEARCH_DIMS],
                                        coord_csearch_obs_t *ret_obs, jf_err_t *err);

// Runs an already profiled point again, the repeat-th time (1, 2, ...), with randomness of its own
// (another seed: new arrivals, new noise), into *ret_obs: returns 0, or a negative errno with err,
// which stops the search with that error. arg is the caller's.
typedef int (*coord_csearch_rerun_fn)(void *arg, const int point[COORD_CSEARCH_DIMS], int repeat,
                                      coord_csearch_obs_t *ret_obs, jf_err_t *err);

// The run-to-run noise the session learned from its re-runs and its prior (plain value record):
// the pooled standard deviation of one run's log latency and log power about each re-run point's
// mean.
typedef struct coord_csearch_noise {
    int dof;               // degrees of freedom: re-runs over all points; 0: nothing learned
    double latency_log_sd; // of log(latency), 0 when dof is 0
    double power_log_sd;   // of log(power), 0 when dof is 0
    double t_quantile;     // Student t quantile of COORD_CSEARCH_CONFIDENCE at dof (0 if none)
} coord_csearch_noise_t;

// Options of the gradient descent (designated initialisers; 0 takes the default).
typedef struct coord_csearch_gd_opts {
    size_t max_profiles; // profile cap, re-runs included, default COORD_CSEARCH_GD_MAX
    size_t reruns;       // of those, re-runs of the best points at the end (only with a re-run
                         // function), default 0
} coord_csearch_gd_opts_t;

// Options of the active search.
typedef struct coord_csearch_al_opts {
    size_t min_profiles; // default COORD_CSEARCH_AL_MIN
    size_t max_profiles; // re-runs included, default COORD_CSEARCH_AL_MAX
    size_t reruns;       // of those, re-runs of Pareto-optimal points (only with a re-run
                         // function), default COORD_CSEARCH_AL_RERUNS; (size_t) -1: none
    uint64_t seed;       // of the initial design and the candidate pools
} coord_csearch_al_opts_t;

// A search session over space with profile (called with arg; both borrowed) and an empty profile
// cache. Caller owns the result; release with coord_csearch_destroy. NULL with -EINVAL (a size
// below 1, a space over COORD_CSEARCH_POINTS_MAX, no profile function) or -ENOMEM in err.
coord_csearch_t *coord_csearch_new(const coord_csearch_space_t *space,
                                   coord_csearch_profile_fn profile, void *arg, jf_err_t *err);

// Frees the session and sets *self_p to NULL. Accepts NULL and *self_p == NULL.
void coord_csearch_destroy(coord_csearch_t **self_p);

// Lets the searches run profiled points again through rerun (called with arg; both borrowed),
// to learn the run-to-run noise that coord_csearch_choose keeps a margin for. Without it the
// searches never re-run and the margin is 0.
void coord_csearch_set_rerun(coord_csearch_t *self, coord_csearch_rerun_fn rerun, void *arg);

// Gives the session what an earlier one learned of the noise (coord_csearch_noise of a session
// on the same board, workload and inference settings): the session's noise pools it with its own
// re-runs (sums of squares and degrees of freedom add). prior is copied.
void coord_csearch_set_noise(coord_csearch_t *self, const coord_csearch_noise_t *prior);

// Profiles made so far in this session: points profiled plus re-runs.
size_t coord_csearch_profiled(const coord_csearch_t *self);

// The noise learned so far, pooled with the prior, into *ret (all 0 before any re-run or prior).
void coord_csearch_noise(const coord_csearch_t *self, coord_csearch_noise_t *ret);

// Gradient descent for one budget pair (docs/concurrent.md "Gradient descent"): a feasible start
// found by bisection along the diagonal from the lowest to the highest clocks (middle batch),
// then a coordinate search ranking points feasibility first (a point within both budgets, less
// the margin for the session's noise, beats any other; feasible ones rank by throughput, the
// others by their overrun), with a line search along each dimension whose step halves when it
// finds nothing; stops at max_profiles less reruns, or when every step is 0; then re-runs the
// best points (opts->reruns, a re-run function set) and answers as coord_csearch_choose. Returns 0,
// -EINVAL (a budget not > 0) or the profile or re-run function's error.
int coord_csearch_gd(coord_csearch_t *self, const coord_csearch_budget_t *budget,
                     const coord_csearch_gd_opts_t *opts, coord_csearch_result_t *ret,
                     jf_err_t *err);

// Active learning of the Pareto-optimal points (docs/concurrent.md "Active learning"): a seeded
// initial design, then repeatedly the candidate a nearest-neighbour surrogate says could be
// Pareto-optimal (throughput up, latency and power down) and is least known, until min_profiles
// are profiled and no such candidate is left, or max_profiles less reruns; then (a re-run function
// set) re-runs of Pareto-optimal points spread over the front. *ret_profiled: the profiles this
// call made, re-runs included. Returns 0 or the profile or re-run function's error. Budgets are
// answered afterwards by coord_csearch_choose, without profiling.
int coord_csearch_al(coord_csearch_t *self, const coord_csearch_al_opts_t *opts,
                     size_t *ret_profiled, jf_err_t *err);

// The profiled point with the highest training throughput within both budgets into *ret
// (ret->found false if none; ret->profiled 0): a point that ran every time, whose mean log latency
// and log power over its runs, plus a margin, are within the budgets. The margin is the learned
// noise (coord_csearch_noise) x its t quantile x sqrt(1 + 1/runs of the point), the one-sided
// COORD_CSEARCH_CONFIDENCE bound on a new run; 0 before any re-run. ret->obs holds the point's
// geometric means over its runs. Returns 0 or -EINVAL (a budget not > 0).
int coord_csearch_choose(const coord_csearch_t *self, const coord_csearch_budget_t *budget,
                         coord_csearch_result_t *ret, jf_err_t *err);

// The profiled points no other profiled point beats on all three of throughput, latency and
// power (ok points only), at most max into points (each COORD_CSEARCH_DIMS ints, in profile
// order). Returns how many there are (possibly more than max).
size_t coord_csearch_pareto(const coord_csearch_t *self, int (*points)[COORD_CSEARCH_DIMS],
                            size_t max);

#endif
