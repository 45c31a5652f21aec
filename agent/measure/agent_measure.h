/* One run's measurements, kept by the event loop: the board's energy per epoch and per run from
 * the sampler's samples (agent_energy, trapezoidal), epoch records held until the sample that
 * closes their interval has arrived, the dataset's page-cache residency around each epoch, the
 * dataset device's reads over the run, and the measure record built from all of it
 * (docs/protocol.md §5.4.1, docs/telemetry.md), carried across an agent restart (§4.4.1).
 * Bookkeeping only: no I/O, no clock, no logging; the caller passes monotonic times in. One thread.
 */
#ifndef AGENT_MEASURE_H
#define AGENT_MEASURE_H

#include "agent_platform_run.h"
#include "agent_residency.h"
#include "agent_sampler.h"
#include "agent_storage.h"
#include "agent_energy.h"
#include "agent_energy_counter.h"
#include "jf_err.h"
#include "jf_msg_measure.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define AGENT_MEASURE_HISTORY_S 600 // seconds of samples kept for epoch starts in the past
// An epoch record waits two sampling periods and this long for its closing sample.
#define AGENT_MEASURE_WAIT_US (INT64_C(1) * 1000000)
// Epoch records that wait with an interval at once (one interval slot is the fallback).
#define AGENT_MEASURE_PENDING_MAX (AGENT_ENERGY_INTERVALS_MAX - 1)

typedef struct agent_measure agent_measure_t;

typedef struct agent_measure_opts {
    int rate_hz;            // requested sampling rate, 1..50, in the run's time base
    const char *input_rail; // the board's input rail ("VDD_IN"); NULL if none; borrowed
    int epochs;             // epochs of the run, 1..JF_EPOCHS_MAX
    int64_t start_us;       // monotonic time the run starts: before epoch 0
    agent_platform_timing_t timing; // the run's time base and energy source, as the platform
                                    // says (agent_platform_timing); zeroed: the monotonic clock
} agent_measure_opts_t;

// The run's time base is the platform's to say (opts.timing). Without an own clock it is
// CLOCK_MONOTONIC. With one (a modelled board's trainer) every monotonic time t the caller
// passes (samples' mono_us, epoch read times) is taken as the trainer's time
// start_us + (t - start_us) x speed, the clock of its e2e_us, so that energy is power x the
// trainer's time. The sampler then runs at agent_measure_wall_rate_hz, which is the requested
// rate in the trainer's time where 50 Hz allows.

// The sampler's wall-clock rate for opts: rate_hz, or with an own clock rate_hz x speed capped
// at AGENT_SAMPLER_RATE_MAX_HZ (at least 1).
int agent_measure_wall_rate_hz(const agent_measure_opts_t *opts);

// What the loop learnt elsewhere, for the measure record (borrowed for the call).
typedef struct agent_measure_facts {
    const json_t *power_mode;              // the power state in force (an object)
    const char *medium;                    // the run's medium
    const agent_storage_mount_t *mount;    // where the dataset lives; NULL if unknown
    bool storage_checked;                  // mount was checked against the medium's mount
    jf_measure_drop_t drop;                // how the page cache was dropped
    const agent_sampler_stats_t *sampling; // the sampler's counts; NULL if it never ran
} agent_measure_facts_t;

// What agent_measure_pop_epoch says about the record it returns.
typedef enum agent_measure_energy {
    AGENT_MEASURE_MEASURED = 0, // energy_mj and avg_power_mw added (rails, or RAPL counters)
    AGENT_MEASURE_NO_POWER,     // no sample carried power or RAPL counters
    AGENT_MEASURE_NOT_CLOSED,   // no sample came after the epoch's end in time: left out
    AGENT_MEASURE_ABSENT,       // the RAPL counters give none over it (the measure record's
                                // energy.reason says why): left out
} agent_measure_energy_t;

// Caller owns the result; release with agent_measure_destroy. NULL with err (-EINVAL for opts out
// of range, -ENOMEM).
agent_measure_t *agent_measure_new(const agent_measure_opts_t *opts, jf_err_t *err);

// Frees everything, held records included. Accepts NULL and *self_p == NULL.
void agent_measure_destroy(agent_measure_t **self_p);

// One telemetry sample (docs/telemetry.md; the caller keeps it): its power goes into the energy
// accumulator, its RAPL counters into the counter accumulator, its `source` and `disk` are
// remembered, its temperatures and clocks go into the record's thermal figures (agent_thermal.h). Returns 0, or agent_energy_add_json's error
// (the sample then counts for nothing here; the caller decides what to say).
int agent_measure_add_sample(agent_measure_t *self, const json_t *sample, jf_err_t *err);

// An epoch record (taken over) that the loop read at read_us (monotonic). Its interval is
// [read_us - e2e_us, read_us]; when that lies before the kept history, the interval from the
// previous epoch's read (or opts.start_us) to read_us stands in. Records come back in order from
// agent_measure_pop_epoch. Returns 0; -EINVAL for a record without epoch or e2e_us (it is still
// kept and comes back without energy).
int agent_measure_add_epoch(agent_measure_t *self, json_t *rec, int64_t read_us, jf_err_t *err);

// The trainer's start line was read at read_us (monotonic; call before the platform acts on the
// line). The trainer begins epoch 0 right after writing it, so no later sample counts as before
// epoch 0: the time before ends at the earlier of this and epoch 0's read time less its e2e_us
// (which errs late by the line's read delay, times the speed on a simulated clock). Only the
// first call counts.
void agent_measure_trainer_started(agent_measure_t *self, int64_t read_us);

// The oldest held epoch record once it is ready: its closing sample has arrived, no power was
// ever seen, its wait has timed out at now_us, or force. Energy fields are added where measured;
// *ret_energy (may be NULL) says which case it was. Caller owns the result; NULL when none is
// ready.
json_t *agent_measure_pop_epoch(agent_measure_t *self, int64_t now_us, bool force,
                                agent_measure_energy_t *ret_energy);

// Number of epoch records held.
size_t agent_measure_held(const agent_measure_t *self);

// The dataset's residency after epoch (its record was read), or before epoch 0 (epoch -1).
// Epochs out of range are ignored.
void agent_measure_set_residency(agent_measure_t *self, int epoch, const agent_residency_t *r);

// The measure record of the run so far. Caller owns the result; NULL when out of memory.
json_t *agent_measure_record(const agent_measure_t *self, const agent_measure_facts_t *facts);

// Carrying a run's measure across an agent restart (docs/protocol.md §4.4.1). The carry is what
// a restarted agent needs to continue it: the time base's origin, the energy so far (total and
// per rail, from the power samples; RAPL counters are not carried) and the latest sample that
// counted for energy, in the time base. Its JSON form is the agent's own (kept in its spool with
// the trainer's read mark), not a wire message. Caller owns the result; NULL when out of memory.
json_t *agent_measure_carry(const agent_measure_t *self);

// Continues the measure of a run an earlier agent process measured, from its carry (borrowed),
// on a measure just created: the time base's origin becomes the carried one, the carried energy
// is added to what this object integrates, and the carried latest sample goes into the
// accumulator first, so that the time no agent sampled is bridged linearly up to the first new
// sample, as any gap between samples is (agent_energy.h); the record then says how long that
// time was (energy.unobserved_us) and how much energy the bridge gave (energy.interpolated_mj).
// Returns 0, or -EINVAL with err naming what in the carry is wrong (nothing is taken then).
int agent_measure_resume(agent_measure_t *self, const json_t *carry, jf_err_t *err);

#endif
