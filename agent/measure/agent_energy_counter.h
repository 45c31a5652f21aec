/* Energy from cumulative energy counters: the powercap RAPL zones of a host (energy_uj, wrapping at
 * max_energy_range_uj). Energy over an interval is the difference of the counters, interpolated
 * linearly at boundaries that fall between samples, over the zones that do not overlap. Pure
 * computation: no I/O, no clock, no logging; one thread uses an accumulator. Implements the
 * "Host energy (RAPL)" rules of docs/telemetry.md. Not for power readings (agent_energy.h). */
#ifndef AGENT_ENERGY_COUNTER_H
#define AGENT_ENERGY_COUNTER_H

#include "jf_err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_ENERGY_COUNTER_ZONES_MAX    16    // zones one sample may carry
#define AGENT_ENERGY_COUNTER_NAME_MAX     63    // longest zone key ("package-0/dram")
#define AGENT_ENERGY_COUNTER_COVERS_MAX   63    // longest "covers" text
#define AGENT_ENERGY_COUNTER_REASON_MAX   255   // longest reason text
#define AGENT_ENERGY_COUNTER_HISTORY_MAX  65536 // largest opts.history_max
#define AGENT_ENERGY_COUNTER_HISTORY_MIN  2     // smallest opts.history_max
#define AGENT_ENERGY_COUNTER_POWER_MAX_MW 1.0e7 // a step implying more (10 kW) is not a wrap

// Model:
// - Zones are named as the host reader keys them: a top zone by its name ("package-0", "psys",
//   "dram"), a sub-zone as "parent/name" ("package-0/core"). The summed set is chosen from the
//   first sample that carries counters and kept for the run: "psys" alone when present (it is
//   the whole platform and contains the others); else every "package-N" top zone plus every zone
//   named "dram" (top or sub-zone: DRAM is metered apart from the package even where the kernel
//   lists it under it). core, uncore and other sub-zones lie inside their package: never added.
//   agent_energy_counter_covers() says which: "RAPL psys", "RAPL package", "RAPL package+dram".
// - A zone's counter advances by c - prev; when c < prev and the zone's wrap range R is known
//   (max_energy_range_uj), by R - prev + c (one wrap). The step is refused, and the accumulator
//   is broken from that sample on, when: c < prev and R is unknown, c > R, the step implies more
//   than AGENT_ENERGY_COUNTER_POWER_MAX_MW (a counter that went backwards beyond a wrap, or a
//   reset), or a summed zone is missing from a sample (it disappeared). Energy is then known only
//   up to the last good sample; agent_energy_counter_reason() says why.
// - The cumulative energy E(t) is linear between samples. Energy over [start, end] is
//   E(end') - E(start') with both clipped to [first sample, last good sample]; covered_us is
//   end' - start'. Peak power is the highest mean power of one sample-to-sample step lying wholly
//   inside [start, end]; has_peak is false when no step does.

typedef struct agent_energy_counter agent_energy_counter_t;

typedef struct agent_energy_counter_opts {
    size_t history_max; // samples retained for late boundaries, 2..AGENT_ENERGY_COUNTER_HISTORY_MAX
} agent_energy_counter_opts_t;

// One zone's reading, as the caller passes it in.
typedef struct agent_energy_counter_zone {
    const char *name;  // borrowed for the call; 1..AGENT_ENERGY_COUNTER_NAME_MAX bytes
    int64_t energy_uj; // the counter, >= 0
    int64_t range_uj;  // max_energy_range_uj, > 0; 0 = unknown
} agent_energy_counter_zone_t;

// One sample (a plain value record).
typedef struct agent_energy_counter_sample {
    int64_t mono_us;                      // after the previous sample's
    size_t n_zones;                       // 0..AGENT_ENERGY_COUNTER_ZONES_MAX
    const agent_energy_counter_zone_t *zones; // borrowed for the call
} agent_energy_counter_sample_t;

// Energy over a range (a plain value record).
typedef struct agent_energy_counter_result {
    int64_t start_us, end_us; // the covered part, us
    int64_t covered_us;       // end_us - start_us
    double energy_mj;         // summed zones, mJ (uJ / 1000)
    double avg_power_mw;      // energy_mj / covered_us, mW; 0 if covered_us is 0
    bool has_peak;            // a whole step lies inside the range
    double peak_power_mw;     // highest step mean power inside, mW
    size_t n_zones;           // summed zones
    char names[AGENT_ENERGY_COUNTER_ZONES_MAX][AGENT_ENERGY_COUNTER_NAME_MAX + 1];
    double zone_energy_mj[AGENT_ENERGY_COUNTER_ZONES_MAX]; // per summed zone, mJ
} agent_energy_counter_result_t;

// Caller owns the result; release with agent_energy_counter_destroy. NULL with err: -EINVAL for a
// history_max out of range, -ENOMEM.
agent_energy_counter_t *agent_energy_counter_new(const agent_energy_counter_opts_t *opts,
                                                 jf_err_t *err);

// Frees the accumulator and sets *self_p to NULL. Accepts NULL and *self_p == NULL.
void agent_energy_counter_destroy(agent_energy_counter_t **self_p);

// Adds one sample. A sample without zones only advances time. Returns 0, or -EINVAL for a sample
// at or before the previous one or a bad zone (empty or long name, negative counter or range),
// leaving the accumulator unchanged. A step that breaks the counters (see the model) is not an
// error of the call: it returns 0 and the reason is kept.
int agent_energy_counter_add(agent_energy_counter_t *self,
                             const agent_energy_counter_sample_t *sample, jf_err_t *err);

// Adds a telemetry sample (docs/telemetry.md): mono_us, rapl_energy_uj {zone: counter} and
// rapl_max_energy_range_uj {zone: range}. Returns what agent_energy_counter_add returns, -ENOENT
// for a sample without mono_us, -EPROTO for a member of the wrong type (err names it).
int agent_energy_counter_add_json(agent_energy_counter_t *self, const json_t *sample,
                                  jf_err_t *err);

// True once a sample chose a set of zones to sum (energy may still be broken later).
bool agent_energy_counter_has_zones(const agent_energy_counter_t *self);

// "RAPL psys", "RAPL package", "RAPL package+dram"; "" before zones are chosen. Borrowed.
const char *agent_energy_counter_covers(const agent_energy_counter_t *self);

// Why energy is absent from some time on ("" when it is not). Borrowed.
const char *agent_energy_counter_reason(const agent_energy_counter_t *self);

// Energy over [start_us, end_us] into *ret_result. Returns 0; -ENOENT when no zones were chosen
// (err says why: no counters, or no package/psys zone); -ERANGE when start_us lies before the
// retained history, or the range does not overlap the good samples; -EIO when the range reaches
// past a break (err holds the reason).
int agent_energy_counter_between(const agent_energy_counter_t *self, int64_t start_us,
                                 int64_t end_us, agent_energy_counter_result_t *ret_result,
                                 jf_err_t *err);

// The whole run: from the first sample with zones to the last good one. Errors as above.
int agent_energy_counter_run(const agent_energy_counter_t *self,
                             agent_energy_counter_result_t *ret_result, jf_err_t *err);

#endif
