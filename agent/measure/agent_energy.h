/* Energy from power samples: trapezoidal integration over CLOCK_MONOTONIC sample times of the
 * board's input power and of each rail, for a whole run and for intervals (epochs), with sampling
 * quality counts. Pure computation: no I/O, no clock, no logging; one thread uses an accumulator.
 * Implements the energy rules of docs/telemetry.md and the "total" rule of
 * ../shared/reference/jetson-platforms.md §2.5 (input rail if the board has one, else the sum). */
#ifndef AGENT_ENERGY_H
#define AGENT_ENERGY_H

#include "jf_err.h"
#include "jf_msg_measure.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_ENERGY_RAILS_MAX       JF_MEASURE_RAILS_MAX // distinct rails one accumulator takes
#define AGENT_ENERGY_RAIL_NAME_MAX   JF_MEASURE_RAIL_NAME_MAX // longest rail name, without the NUL
#define AGENT_ENERGY_RATE_MAX_HZ     1000  // highest requested sampling rate accepted
#define AGENT_ENERGY_POWER_MAX_MW    1.0e7 // highest power accepted (10 kW); above is a bad read
#define AGENT_ENERGY_HISTORY_DEFAULT 256   // retained samples when opts.history_max is 0
#define AGENT_ENERGY_HISTORY_MAX     65536 // largest opts.history_max
#define AGENT_ENERGY_INTERVALS_MAX   8     // intervals one accumulator holds at a time
#define AGENT_ENERGY_LATE_NUM        3     // a gap is late when gap > NUM/DEN periods (1.5)
#define AGENT_ENERGY_LATE_DEN        2

// Model (the definitions every result field below refers to):
// - A series is the input power or one rail. It is the piecewise-linear curve through its own
//   readings, from its first to its latest reading. A sample that lacks a series' reading (a rail
//   unreadable once, a rail that appears mid-run) bridges that series linearly between its
//   neighbouring readings, exactly as a missed sample does; nothing is integrated before a
//   series' first reading or after its latest one (values are never invented outside).
// - Energy of a series over [start, end] is the integral of that curve over [start, end]:
//   whole segments by the trapezoid rule, and at a boundary that falls between two readings the
//   value is interpolated linearly, so only the part inside is counted. Energy is a double in mJ
//   (mW x us = nJ = 1e-6 mJ): boundary interpolation yields fractions, and a double's rounding
//   stays far below the sensors' 1 mW resolution over any realistic run. Round it when storing it
//   as an integer. Intervals that share a boundary split the energy exactly; a sample that lies
//   exactly on the shared boundary counts (n_samples, peak) in both.
// - The total is the input series when any accepted sample carried input power
//   (JF_MEASURE_TOTAL_INPUT_RAIL), otherwise the sum of the rails (JF_MEASURE_TOTAL_SUM_OF_RAILS).
//   Input power is the sample's input_power_mw or, when that is absent, the rail named
//   opts.input_rail; that rail also stays in the per-rail results. The sum adds every rail, so
//   set opts.input_rail on boards that have an input rail (VDD_IN on TX2, Xavier NX, Orin NX and
//   Orin Nano; POM_5V_IN on Nano), or their sum would count it twice; leave it unset on AGX
//   Xavier and AGX Orin (VIN_SYS_5V0 is not the module input). The source is decided over the
//   whole accumulator at query time and applies to every result, intervals included.
// - Peak power is the highest reading at an accepted sample inside [start, end]: the input power,
//   or for the sum the rails read in that sample added up. Interpolated boundary values never
//   count. It is 0 when no sample lies inside.
// - Sampling quality, with period = 1e6 / rate_hz us and gap = the difference in mono_us between an
//   accepted sample and the accepted sample before it (the first sample has no gap):
//     late:   gap > 1.5 x period (2 x gap x rate_hz > 3e6);
//     missed: for a late gap, round(gap / period) - 1, rounding halves up, so a late gap misses
//             at least 1 sample; on-time gaps miss none;
//     achieved_rate_hz: (n_samples - 1) x 1e6 / (last - first sample time), over the samples
//             inside the range; 0 with fewer than 2 samples.
//   A gap belongs to the range that holds its later sample. With rate_hz 0 (unknown) late and
//   missed stay 0.

typedef struct agent_energy agent_energy_t;

typedef struct agent_energy_opts {
    const char *input_rail; // borrowed during agent_energy_new; name of the board's input rail in
                            // rails[] ("VDD_IN", "POM_5V_IN"); NULL or "" if it has none
    int rate_hz;            // requested sampling rate, 0..AGENT_ENERGY_RATE_MAX_HZ; 0 = unknown
    size_t history_max;     // samples retained for late boundaries (about 170 bytes each);
                            // 0 = AGENT_ENERGY_HISTORY_DEFAULT, at most AGENT_ENERGY_HISTORY_MAX
} agent_energy_opts_t;

// One rail reading, as the caller passes it in.
typedef struct agent_energy_reading {
    const char *name; // borrowed for the call; 1..AGENT_ENERGY_RAIL_NAME_MAX bytes
    double power_mw;  // finite, 0..AGENT_ENERGY_POWER_MAX_MW
} agent_energy_reading_t;

// One sample, as the caller passes it in (a plain value record).
typedef struct agent_energy_sample {
    int64_t mono_us;                  // CLOCK_MONOTONIC time, >= 0, after the previous sample's
    bool has_input;                   // input_power_mw is set
    double input_power_mw;            // board input power, when has_input
    size_t n_rails;                   // entries in rails, 0..AGENT_ENERGY_RAILS_MAX
    const agent_energy_reading_t *rails; // borrowed for the call; names unique within the sample
} agent_energy_sample_t;

// Per-rail part of a result.
typedef struct agent_energy_rail {
    char name[AGENT_ENERGY_RAIL_NAME_MAX + 1]; // rail name
    double energy_mj;                       // integral of this rail over the range, mJ
    double avg_power_mw;                    // energy_mj / covered time, mW; 0 if not covered
    double peak_power_mw;                   // highest reading inside the range, mW
    int64_t covered_us;                     // time inside the range where the rail is known, us
    int64_t n_readings;                     // readings inside the range
} agent_energy_rail_t;

// The result over a range: the whole run or an interval. A plain value record.
typedef struct agent_energy_result {
    jf_measure_total_t total; // which curve energy_mj, avg and peak describe
    int64_t start_us;        // range start: interval start, or the run's first sample, us
    int64_t end_us;          // range end: interval end (the latest sample while it is open),
                             // or the run's latest sample, us; never before start_us
    int64_t duration_us;     // end_us - start_us
    int64_t covered_us;      // time inside the range where the total is known, us; for the
                             // sum of rails, the longest coverage of any rail
    double energy_mj;        // total energy, mJ
    double avg_power_mw;     // energy_mj / covered_us, mW; 0 if covered_us is 0
    double peak_power_mw;    // highest total reading at a sample inside the range, mW
    int64_t n_samples;       // accepted samples with mono_us inside the range
    int rate_hz;             // requested rate (opts.rate_hz), Hz; 0 = unknown
    double achieved_rate_hz; // see the model above, Hz
    int64_t n_late;          // late samples inside the range
    int64_t n_missed;        // estimated missed samples inside the range
    int64_t max_gap_us;      // longest gap inside the range, us; 0 if none
    size_t n_rails;          // entries used in rails
    agent_energy_rail_t rails[AGENT_ENERGY_RAILS_MAX]; // in order of first appearance in the run
} agent_energy_result_t;

// Creates an empty accumulator. opts may be NULL (no input rail, rate unknown, default history).
// Caller owns the result; release with agent_energy_destroy. NULL on failure: -EINVAL for an input
// rail name too long or a rate_hz or history_max out of range, -ENOMEM; the reason is in err.
agent_energy_t *agent_energy_new(const agent_energy_opts_t *opts, jf_err_t *err);

// Frees the accumulator and sets *self_p to NULL. Accepts NULL and *self_p == NULL.
void agent_energy_destroy(agent_energy_t **self_p);

// Adds one sample; samples come in strictly increasing mono_us order. Returns 0, or on failure
// leaves the accumulator unchanged and returns: -EINVAL for a sample at or before the previous
// one (out of order or a duplicate timestamp), a negative mono_us, a power that is negative,
// not finite or above AGENT_ENERGY_POWER_MAX_MW, an empty, too long or repeated rail name;
// -ENOSPC when the sample has more than AGENT_ENERGY_RAILS_MAX rails or would bring the run past
// AGENT_ENERGY_RAILS_MAX distinct rails. err names the sample's mono_us and the offending rail.
int agent_energy_add(agent_energy_t *self, const agent_energy_sample_t *sample, jf_err_t *err);

// Adds one telemetry sample in the docs/telemetry.md shape: mono_us, input_power_mw, and
// rails[] {name, power_mw}; other members are ignored, and a rail without power_mw (unreadable)
// is skipped for this sample. The JSON stays the caller's. Returns what agent_energy_add returns,
// plus -ENOENT when the sample has no mono_us (not a live sample) and -EPROTO when a member
// has the wrong type (err names it, e.g. "rails[1].power_mw must be a number").
int agent_energy_add_json(agent_energy_t *self, const json_t *sample, jf_err_t *err);

// Fills *ret_result over the whole run so far: from the first to the latest sample. Cannot fail;
// an empty accumulator gives a zeroed result with total JF_MEASURE_TOTAL_NONE.
void agent_energy_result(const agent_energy_t *self, agent_energy_result_t *ret_result);

// Intervals (epochs): open one at the epoch start, close it at the epoch end, read its result once
// agent_energy_interval_is_complete says so, then drop it. Boundaries may arrive late: a boundary
// may lie before the latest sample as long as it lies after the latest sample dropped from the
// history (the accumulator keeps the last history_max samples).

// Opens an interval at start_us and writes its id (0..AGENT_ENERGY_INTERVALS_MAX - 1; reused after
// a drop) to *ret_id. Returns 0, -EINVAL for a negative start_us, -ERANGE when start_us is too
// old for the history, -ENOSPC when AGENT_ENERGY_INTERVALS_MAX intervals are in use.
int agent_energy_interval_open(agent_energy_t *self, int64_t start_us, int *ret_id, jf_err_t *err);

// Closes interval id at end_us. Returns 0,
// -ENOENT for an id not in use, -EINVAL when it is already closed or end_us < its start,
// -ERANGE when end_us is too old for the history.
int agent_energy_interval_close(agent_energy_t *self, int id, int64_t end_us, jf_err_t *err);

// True when interval id is closed and a sample at or after its end has been added, so its result
// is final. False for an id not in use.
bool agent_energy_interval_is_complete(const agent_energy_t *self, int id);

// Fills *ret_result for interval id: the part of every curve inside [start, end], up to the latest
// sample while the interval is open or incomplete. Returns 0 or -ENOENT for an id not in use.
int agent_energy_interval_result(const agent_energy_t *self, int id,
                                 agent_energy_result_t *ret_result, jf_err_t *err);

// Frees interval id's slot. Returns 0 or -ENOENT for an id not in use.
int agent_energy_interval_drop(agent_energy_t *self, int id, jf_err_t *err);

#endif
