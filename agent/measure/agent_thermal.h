/* What a run's telemetry samples say about heat and throttling, for the measure record's
 * `thermal` object (docs/telemetry.md "Thermal and clocks over a run"): the highest temperature
 * per zone, and the clocks read back (gpu_freq_hz, cpu_core_freq_hz) against the caps of the
 * power state in force. The caps are known when the record is built, so the clocks are kept as
 * counts per (clock, frequency): frequencies are a board's few discrete steps. Bookkeeping only:
 * no I/O, no logging. One thread. */
#ifndef AGENT_THERMAL_H
#define AGENT_THERMAL_H

#include "jf_msg_measure.h"

#include <jansson.h>

#define AGENT_THERMAL_STEPS_MAX 512 // distinct (clock, frequency) pairs kept; more are not compared

typedef struct agent_thermal agent_thermal_t;

// Caller owns the result; release with agent_thermal_destroy. NULL when out of memory.
agent_thermal_t *agent_thermal_new(void);

// Accepts NULL and *self_p == NULL.
void agent_thermal_destroy(agent_thermal_t **self_p);

// One telemetry sample (borrowed for the call): temps_mc, gpu_freq_hz, cpu_core_freq_hz where
// present. Members of the wrong type are ignored (the sampler builds the samples).
void agent_thermal_add_sample(agent_thermal_t *self, const json_t *sample);

// The run's figures against power (the power state in force; NULL: no clock is compared) into
// *ret. A clock without a cap in power (no gpu_max_hz, a core in no cluster) is not compared.
void agent_thermal_result(const agent_thermal_t *self, const jf_measure_power_t *power,
                          jf_measure_thermal_t *ret);

#endif
