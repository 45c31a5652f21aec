/* Private to coord_csearch*.c: the session (space, profile function, cache of profiled points)
 * and the helpers the two policies share. */
#ifndef COORD_CSEARCH_INTERNAL_H
#define COORD_CSEARCH_INTERNAL_H

#include "coord_csearch.h"

// One profiled point.
typedef struct coord_csearch_entry {
    int point[COORD_CSEARCH_DIMS];
    coord_csearch_obs_t obs;
} coord_csearch_entry_t;

struct coord_csearch {
    coord_csearch_space_t space;
    size_t n_points;                  // product of the sizes
    coord_csearch_profile_fn profile; // borrowed
    void *arg;                        // borrowed; the profile function's
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

// True if a (ok) is at least as good as b on throughput, latency and power and better on one.
bool coord_csearch_dominates(const coord_csearch_obs_t *a, const coord_csearch_obs_t *b);

#endif
