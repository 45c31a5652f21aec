/* The time-energy Pareto front of a set of modes and the mode a budget recommends
 * (docs/analysis.md "Pareto fronts and recommendations"). Pure computation over figures the
 * caller measured or predicted; not for reading the store or printing. */
#ifndef COORD_PARETO_H
#define COORD_PARETO_H

#include "coord_features.h"
#include "jf_err.h"

#include <stddef.h>

// One mode's figures (plain value record), in the internal units.
typedef struct coord_pareto_point {
    coord_op_t op;    // the mode
    double time_us;   // epoch time
    double power_mw;  // mean power
    double energy_mj; // energy per epoch
} coord_pareto_point_t;

typedef enum coord_budget {
    COORD_BUDGET_POWER = 0, // minimise time with power_mw <= budget
    COORD_BUDGET_TIME,      // minimise energy with time_us <= budget
} coord_budget_t;

// The indices of the points no other point dominates in (time, energy) (another is no worse in
// both and better in one), by increasing time, written to ret_idx (room for n). O(n log n).
// Returns the count, or -ENOMEM with err.
int coord_pareto_front(const coord_pareto_point_t *pts, size_t n, size_t *ret_idx, jf_err_t *err);

// The point that meets the budget (mW for power, µs for time) best: least time under a power
// budget, least energy under a time budget (ties: the other figure, then the lower index).
// 0 with *ret_idx; -ENOENT when none meets it (also for n == 0), with *ret_closest the lowest
// power (or time) among the points (NaN when n == 0) and err saying so in W or s.
int coord_recommend(const coord_pareto_point_t *pts, size_t n, coord_budget_t kind, double budget,
                    size_t *ret_idx, double *ret_closest, jf_err_t *err);

#endif
