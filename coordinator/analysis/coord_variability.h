/* Board-to-board variability of a sweep (issue #12; docs/analysis.md "Variability"): epochs are
 * grouped by board type, workload and configuration (power mode label, storage, workers, batch
 * size, DVFS off, runtime); per board the mean per epoch over its epochs and repeats, then across
 * the boards of a group mean, sd, CV, min, max, spread and boards flagged by the modified z-score
 * (coord_stats.h), beside the boards' own repeat-to-repeat CV. Reads coord_obs_t records only;
 * which runs to feed it (valid ones) is the caller's choice (coord_validity.h). */
#ifndef COORD_VARIABILITY_H
#define COORD_VARIABILITY_H

#include "coord_obs.h"
#include "coord_stats.h"
#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct coord_variability coord_variability_t;

// The per-epoch figures compared. Times in µs, energy in mJ (jf_units.h).
typedef enum coord_metric {
    COORD_METRIC_E2E = 0, // epoch wall time (e2e_us)
    COORD_METRIC_STALL,   // fetch stall (fetch_stall_us)
    COORD_METRIC_COMPUTE, // compute time (compute_us)
    COORD_METRIC_ENERGY,  // energy per epoch (energy_mj), where measured
    COORD_METRIC_COUNT,
} coord_metric_t;

// One board of a group (plain value record).
typedef struct coord_var_board {
    char board[COORD_OBS_NAME_MAX + 1];       // board name
    char platform[COORD_OBS_NAME_MAX + 1];    // "sim", "jetson", ...
    size_t epochs;                            // measured epochs pooled over its repeats
    size_t repeats;                           // distinct repeats
    bool has[COORD_METRIC_COUNT];             // the metric was measured on every epoch
    double mean[COORD_METRIC_COUNT];          // mean per epoch over all its epochs (µs or mJ)
    bool has_repeat_cv[COORD_METRIC_COUNT];   // >= 2 repeats with the metric
    double repeat_cv_pct[COORD_METRIC_COUNT]; // CV of its repeats' means, percent
    bool has_z[COORD_METRIC_COUNT];           // modified z defined (coord_stats_modified_z)
    double z[COORD_METRIC_COUNT];             // modified z of mean among the group's boards
    bool outlier[COORD_METRIC_COUNT];         // z > COORD_STATS_OUTLIER_Z
} coord_var_board_t;

// One metric across a group's boards (plain value record).
typedef struct coord_var_metric {
    bool has;                    // >= 2 boards have the metric: the fields below are set
    coord_stats_t between;       // statistics of the boards' means
    bool has_spread;             // the fastest board's mean is > 0
    double spread_ratio;         // slowest / fastest board mean
    double spread_pct;           // 100 * (spread_ratio - 1)
    size_t repeat_cv_boards;     // boards with a repeat CV
    double repeat_cv_median_pct; // median of those boards' repeat CVs (0 when none)
    size_t outliers;             // boards flagged
} coord_var_metric_t;

// One group (plain value record).
typedef struct coord_var_group {
    char board_type[COORD_OBS_NAME_MAX + 1];       // "xavier-nx"
    char workload[COORD_OBS_NAME_MAX + 1];         // workload name
    char power_mode[COORD_OBS_NAME_MAX + 1];       // power label
    char storage[COORD_OBS_NAME_MAX + 1];          // medium
    int workers;                                   // loader workers
    int batch_size;                                // samples per minibatch
    bool dvfs_off;                                 // clocks pinned
    char runtime[COORD_OBS_NAME_MAX + 1];          // "bare" or "container"
    bool any_sim;                                  // a board of the group is simulated
    size_t n_boards;                               // boards measured
    coord_var_metric_t metric[COORD_METRIC_COUNT]; // set by coord_variability_compute
} coord_var_group_t;

// An empty analysis. Caller owns; release with coord_variability_destroy. NULL when out of
// memory (err says so).
coord_variability_t *coord_variability_new(jf_err_t *err);
void coord_variability_destroy(coord_variability_t **self_p);

// Adds one measured epoch (a coord_store_obs_each callback can call it). Returns 0, -ENOMEM, or
// -EINVAL for an epoch with a negative time (err names the run and epoch).
int coord_variability_add(coord_variability_t *self, const coord_obs_t *obs, jf_err_t *err);

// Computes every group's statistics from the epochs added so far. Returns 0 or -ENOMEM.
int coord_variability_compute(coord_variability_t *self, jf_err_t *err);

// Groups in the order their first epoch was added, and their boards in the same order.
// Borrowed: valid until the next add or the destroy.
size_t coord_variability_groups(const coord_variability_t *self);
const coord_var_group_t *coord_variability_group(const coord_variability_t *self, size_t i);
const coord_var_board_t *coord_variability_board(const coord_variability_t *self, size_t group,
                                                 size_t board);

// "e2e", "stall", "compute", "energy" (static strings), and back: false for another name.
const char *coord_metric_name(coord_metric_t metric);
bool coord_metric_parse(const char *name, coord_metric_t *ret_metric);

#endif
