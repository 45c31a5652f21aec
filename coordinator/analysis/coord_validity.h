/* Measurement validity (issue #12; docs/analysis.md "Measurement validity"): for each done run
 * of a sweep, whether its figures can be trusted and, if not, why, from what the store holds:
 * telemetry coverage and the power mode read back (the measure record), the clock offset in
 * force, energy on every epoch, and each epoch time against the board's other epochs in the
 * same configuration, and throttling: clocks read back below the mode's while they were pinned.
 * Other load: CPU time used outside the agent's process tree beyond a bound.
 * Variability, models and Pareto fronts use valid runs only: coord_valid_runs.h wraps this. */
#ifndef COORD_VALIDITY_H
#define COORD_VALIDITY_H

#include "coord_run_kind.h"
#include "coord_store.h"
#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// Telemetry coverage: at most this share of the run's sampling deadlines missed, and of its
// samples late (taken more than half a period after the deadline, docs/protocol.md §5.4.1).
#define COORD_VALIDITY_MAX_MISSED_PCT 5.0
#define COORD_VALIDITY_MAX_LATE_PCT   5.0
// The longest gap between two samples, in sampling periods: three periods without a sample
// means energy was integrated over a gap where power was not seen.
#define COORD_VALIDITY_MAX_GAP_PERIODS 3.0
// An epoch is an outlier among the board's epochs of the same configuration when its modified z
// (coord_stats.h) is above COORD_STATS_OUTLIER_Z and it is also this far from their median:
// with a few nearly equal epochs the MAD is tiny and would flag differences nobody cares about.
#define COORD_VALIDITY_EPOCH_MIN_DEV_PCT 10.0
// Throttling: with the clocks pinned (dvfs_off, or a sim board, whose model always runs at the
// mode's caps), more than this share of the GPU's samples, or of the cores' readings, below the
// power mode's cap (measure.thermal). Our choice, as the telemetry bounds.
#define COORD_VALIDITY_MAX_BELOW_PCT 5.0
// Other load (measure.other_load.mean_pct: CPU time outside the agent's process tree, % of all
// CPUs' time) above which a run on a real board is left out by default: a quarter of the board's
// CPU capacity. Our choice. Sim boards are checked only against an explicit bound
// (coord_validity_opts_t): their times are modelled and do not depend on the host's load, which
// is what their agent measures.
#define COORD_VALIDITY_MAX_OTHER_LOAD_PCT 25.0
// GPU load before epoch 0 began (measure.gpu_before.mean_pct: the trainer starting, not
// computing) above which a run on a real board is left out as other load: another process used
// the GPU as the run began. Our choice. Not on sim boards, whose GPU load is modelled from the
// trainer's own epochs.
#define COORD_VALIDITY_MAX_GPU_BEFORE_PCT 10.0
#define COORD_VALIDITY_DETAIL_MAX         511

// Why a run is left out. A run can have several reasons.
typedef enum coord_invalid {
    COORD_INVALID_NO_MEASURE = 0, // no measure record stored
    COORD_INVALID_TELEMETRY,      // coverage: no samples, missed or late samples, long gap
    COORD_INVALID_POWER_MODE,     // mode read back differs from the one asked, or not read back
    COORD_INVALID_CLOCK_OFFSET,   // |clock offset| beyond the bound
    COORD_INVALID_ENERGY_MISSING, // an epoch without energy
    COORD_INVALID_NO_EPOCHS,      // done but no measured (non-warm-up) epoch
    COORD_INVALID_EPOCH_OUTLIER,  // an epoch time outside the board's own distribution
    COORD_INVALID_THROTTLED,      // pinned clocks read back below the mode's
    COORD_INVALID_OTHER_LOAD,     // CPU time outside the agent's process tree beyond the bound,
                                  // or GPU load before epoch 0 beyond its bound
    COORD_INVALID_COUNT,
} coord_invalid_t;

// One run's verdict (plain value record).
typedef struct coord_run_validity {
    char run[COORD_OBS_NAME_MAX + 1];           // run id
    char board[COORD_OBS_NAME_MAX + 1];         // board name
    char board_type[COORD_OBS_NAME_MAX + 1];    // its type ("" if unknown)
    char platform[COORD_OBS_NAME_MAX + 1];      // "sim", "jetson", ...
    bool valid;                                 // no reason below is set
    bool reason[COORD_INVALID_COUNT];           // the reasons it is left out
    size_t epochs;                              // measured epochs
    char detail[COORD_VALIDITY_DETAIL_MAX + 1]; // the reasons with their numbers, "; "-joined
    coord_run_kind_t kind;                      // training, roofline, idle, ... (coord_run_kind.h)
} coord_run_validity_t;

typedef struct coord_validity_opts {
    int64_t clock_offset_bound_us; // |offset| above it is invalid: the fleet's
                                   // coordinator.clock_offset_warn; <= 0 means
                                   // JF_DEFAULT_CLOCK_WARN_US
    double other_load_max_pct;     // > 0: other load above it is invalid on every board, sim
                                   // boards included; <= 0: COORD_VALIDITY_MAX_OTHER_LOAD_PCT
                                   // on real boards only
} coord_validity_opts_t;

// Checks every done run of the sweep and calls fn once per run, in sweep order. fn's non-zero
// return stops the walk and is returned. Returns 0, -ENOENT "no sweep named ..." for an unknown
// sweep, -EIO for a store failure, -ENOMEM. A measure record that is not valid JSON makes its
// run invalid (reason no-measure, detail naming the JSON error), not the call fail.
typedef int (*coord_validity_fn)(const coord_run_validity_t *verdict, void *arg);
int coord_validity_check_sweep(coord_store_t *store, const char *sweep,
                               const coord_validity_opts_t *opts, coord_validity_fn fn, void *arg,
                               jf_err_t *err);

// Short names for output ("no-measure", "telemetry", "power-mode", "clock-offset",
// "energy-missing", "no-epochs", "epoch-outlier", "throttled", "other-load"). Static strings.
const char *coord_invalid_name(coord_invalid_t reason);

// The reasons of v as a comma-separated list of their names ("telemetry,clock-offset"), "" for
// a valid run, into buf (always NUL-terminated, truncated to size). check, results and the
// exports all print a verdict's reasons through this.
void coord_validity_reasons_format(const coord_run_validity_t *v, char *buf, size_t size);

// Counts of runs by verdict, for the "N runs, M valid, K left out: ..." summaries.
typedef struct coord_validity_summary {
    size_t runs;                           // runs checked
    size_t valid;                          // runs without a reason
    size_t by_reason[COORD_INVALID_COUNT]; // runs left out with each reason
} coord_validity_summary_t;

void coord_validity_summary_add(coord_validity_summary_t *self, const coord_run_validity_t *v);

// "12 runs, 10 valid, 2 left out: telemetry 1, clock-offset 1" (no colon part when none is left
// out) into buf (always NUL-terminated, truncated to size).
void coord_validity_summary_format(const coord_validity_summary_t *self, char *buf, size_t size);

#endif
