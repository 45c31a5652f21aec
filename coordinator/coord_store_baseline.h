/* Store: the idle baselines of the boards (docs/baseline.md), read from the idle runs
 * (runs.idle_s > 0) that are done: for each power setting, DVFS state and telemetry state of a
 * board, the newest one's idle power. Read-only; the runs themselves are stored as every run is. */
#ifndef COORD_STORE_BASELINE_H
#define COORD_STORE_BASELINE_H

#include "coord_store.h"
#include "jf_err.h"
#include "jf_run_spec.h"

#include <stdbool.h>
#include <stdint.h>

#define COORD_BASELINE_SOURCE_MAX 15 // energy.source of the measure record

// One phase of a board's idle baseline (a plain value record).
typedef struct coord_baseline_row {
    char run[JF_RUN_ID_LEN + 1];                 // the idle run measured
    char board[JF_IDENT_MAX + 1];                // its board
    int power_mode_id;                           // nvpmodel id
    char power_mode[JF_POWER_MODE_NAME_MAX + 1]; // its name
    char power[JF_RUN_POWER_LABEL_MAX + 1];      // the power label (jf_run_spec_power_label)
    bool custom;                                 // the run had a custom point
    bool dvfs_off;                               // clocks pinned
    bool telemetry_off;                          // sampled only at its start and end
    int telemetry_hz;                            // the requested rate otherwise, Hz
    int idle_s;                                  // the phase's length, s (modelled on sims)
    bool has_power;                              // the board's power was readable
    double idle_power_mw;                        // mean power over the idle epoch, mW
    char source[COORD_BASELINE_SOURCE_MAX + 1];  // energy.source ("simulated", ...)
    int64_t samples;                             // telemetry samples of the run
    int64_t finished_us;                         // when it finished, wall clock us
} coord_baseline_row_t;

typedef int (*coord_baseline_fn)(const coord_baseline_row_t *row, void *arg);

// Calls fn for each phase of board's stored baseline: the newest done idle run per power
// setting (mode or custom point), DVFS and telemetry state, ordered by mode id, custom, DVFS,
// telemetry. A nonzero return from fn stops the walk and is returned. Returns 0 (also when the
// board has none: fn is then never called), or -EIO with err.
int coord_store_baseline_each(coord_store_t *self, const char *board, coord_baseline_fn fn,
                              void *arg, jf_err_t *err);

#endif
