/* Searches for concurrent training and inference (docs/concurrent.md): which power mode (cores,
 * CPU, GPU and EMC clock steps) and inference batch size maximise training throughput while the
 * inference latency and the board's power stay within budgets, profiling few points. Two
 * policies over one profile cache: a multi-dimensional gradient descent on a penalised score
 * (about 15 points per budget pair) and an active-learning search that profiles the Pareto-optimal
 * points once (50-150) and answers every budget pair from them. Pure computation: the caller's
 * profile function runs or simulates a point; this module neither reads the store nor runs
 * anything. */
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
    coord_csearch_obs_t obs;       // what its profile measured (found only)
    size_t profiled;               // points this call profiled (cache hits not counted)
} coord_csearch_result_t;

// Profiles one point into *ret_obs: returns 0, or a negative errno with err, which stops the
// search with that error. arg is the caller's.
typedef int (*coord_csearch_profile_fn)(void *arg, const int point[COORD_CSEARCH_DIMS],
                                        coord_csearch_obs_t *ret_obs, jf_err_t *err);

// Options of the gradient descent (designated initialisers; 0 takes the default).
typedef struct coord_csearch_gd_opts {
    size_t max_profiles; // profile cap, default COORD_CSEARCH_GD_MAX
    double penalty;      // weight of the budget overruns (log ratio) in the score, default 4
} coord_csearch_gd_opts_t;

// Options of the active search.
typedef struct coord_csearch_al_opts {
    size_t min_profiles; // default COORD_CSEARCH_AL_MIN
    size_t max_profiles; // default COORD_CSEARCH_AL_MAX
    uint64_t seed;       // of the initial design and the candidate pools
} coord_csearch_al_opts_t;

// A search session over space with profile (called with arg; both borrowed) and an empty profile
// cache. Caller owns the result; release with coord_csearch_destroy. NULL with -EINVAL (a size
// below 1, a space over COORD_CSEARCH_POINTS_MAX, no profile function) or -ENOMEM in err.
coord_csearch_t *coord_csearch_new(const coord_csearch_space_t *space,
                                   coord_csearch_profile_fn profile, void *arg, jf_err_t *err);

// Frees the session and sets *self_p to NULL. Accepts NULL and *self_p == NULL.
void coord_csearch_destroy(coord_csearch_t **self_p);

// Points profiled so far in this session.
size_t coord_csearch_profiled(const coord_csearch_t *self);

// Gradient descent for one budget pair (docs/concurrent.md "Gradient descent"): from the top
// clocks and the middle batch, finite differences along each dimension give the gradient of
// log(train_sps) - penalty x (overrun of each budget, as a log ratio), a step follows it, and
// steps halve when a move does not improve; stops at max_profiles new profiles or when every step
// is 0. Answers the best profiled point within both budgets (ret->found false if none). Returns 0,
// -EINVAL (a budget not > 0) or the profile function's error.
int coord_csearch_gd(coord_csearch_t *self, const coord_csearch_budget_t *budget,
                     const coord_csearch_gd_opts_t *opts, coord_csearch_result_t *ret,
                     jf_err_t *err);

// Active learning of the Pareto-optimal points (docs/concurrent.md "Active learning"): a seeded
// initial design, then repeatedly the candidate a nearest-neighbour surrogate says could be
// Pareto-optimal (throughput up, latency and power down) and is least known, until min_profiles
// are profiled and no such candidate is left, or max_profiles. *ret_profiled: the points this
// call profiled. Returns 0 or the profile function's error. Budgets are answered afterwards by
// coord_csearch_choose, without profiling.
int coord_csearch_al(coord_csearch_t *self, const coord_csearch_al_opts_t *opts,
                     size_t *ret_profiled, jf_err_t *err);

// The profiled point with the highest training throughput within both budgets into *ret
// (ret->found false if none; ret->profiled 0). Returns 0 or -EINVAL (a budget not > 0).
int coord_csearch_choose(const coord_csearch_t *self, const coord_csearch_budget_t *budget,
                         coord_csearch_result_t *ret, jf_err_t *err);

// The profiled points no other profiled point beats on all three of throughput, latency and
// power (ok points only), at most max into points (each COORD_CSEARCH_DIMS ints, in profile
// order). Returns how many there are (possibly more than max).
size_t coord_csearch_pareto(const coord_csearch_t *self, int (*points)[COORD_CSEARCH_DIMS],
                            size_t max);

#endif
