/* Private to coord_csearch*.c: the session (space, profile function, cache of profiled points)
 * and the helpers the two policies share. */
#ifndef COORD_CSEARCH_INTERNAL_H
#define COORD_CSEARCH_INTERNAL_H

#include "coord_csearch.h"

// One profiled point.
typedef struct coord_csearch_entry {
    int point[COORD_CSEARCH_DIMS];
    coord_csearch_obs_t obs; // over its runs: ok if every run was, else geometric means
    int runs;                // the first profile plus its re-runs
    double sum_log[3];       // over the runs: log train_sps, log latency_us, log power_mw
    double sumsq_log[3];     // their squares
} coord_csearch_entry_t;

struct coord_csearch {
    coord_csearch_space_t space;
    size_t n_points;                  // product of the sizes
    coord_csearch_profile_fn profile; // borrowed
    void *arg;                        // borrowed; the profile function's
    coord_csearch_rerun_fn rerun;     // borrowed; NULL: no re-runs
    void *rerun_arg;                  // borrowed; the re-run function's
    size_t n_profiles;                // profiles made: first profiles plus re-runs
    coord_csearch_noise_t prior;      // noise learned before (coord_csearch_set_noise)
    int32_t *slot;                    // per point: its entry, or -1 (n_points entries; owned)
    coord_csearch_entry_t *entries;   // profiled points in profile order (owned)
    size_t n_entries;                 // entries used
    size_t cap;                       // entries allocated
};

// The point's linear index in the space.
size_t coord_csearch_index(const coord_csearch_t *self, const int point[COORD_CSEARCH_DIMS]);

// The point's observation, profiling it first if it is not in the cache (*ret_new true then).
// *ret_obs is borrowed until the next profile. Returns 0, -ENOMEM or the profile's error.
int coord_csearch_get(coord_csearch_t *self, const int point[COORD_CSEARCH_DIMS],
                      const coord_csearch_obs_t **ret_obs, bool *ret_new, jf_err_t *err);

// Runs entry i's point again and updates its mean (coord_csearch_set_rerun's function; -EINVAL
// without one). Returns 0 or the re-run's error.
int coord_csearch_rerun(coord_csearch_t *self, size_t i, jf_err_t *err);

// The margin factor on a point profiled runs times: the t quantile x sqrt(1 + 1/runs) (a new run
// less the mean of runs has the variance sd^2 (1 + 1/runs)).
double coord_csearch_margin_k(const coord_csearch_noise_t *nz, int runs);

// True if entry e, with the margin for noise nz (coord_csearch_noise), fits the budget
// (coord_csearch_choose).
bool coord_csearch_fits(const coord_csearch_entry_t *e, const coord_csearch_noise_t *nz,
                        const coord_csearch_budget_t *b);

// True if entry i ran and no profiled point dominates it (coord_csearch_dominates).
bool coord_csearch_on_front(const coord_csearch_t *self, size_t i);

// True if a (ok) is at least as good as b on throughput, latency and power and better on one.
bool coord_csearch_dominates(const coord_csearch_obs_t *a, const coord_csearch_obs_t *b);

#endif
