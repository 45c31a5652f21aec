/* Private to agent_measure*.c: the measure's state, shared by the record (agent_measure.c) and
 * its carry across an agent restart (agent_measure_carry.c). */
#ifndef AGENT_MEASURE_INTERNAL_H
#define AGENT_MEASURE_INTERNAL_H

#include "agent_gpubefore.h"
#include "agent_measure.h"
#include "agent_thermal.h"

#define AGENT_MEASURE_HELD_MAX                                                                     \
    64 // records held at once; only AGENT_MEASURE_PENDING_MAX get an interval

typedef struct agent_measure_held {
    json_t *rec;         // owned: the epoch record
    int interval;        // its agent_energy interval, or -1
    int64_t deadline_us; // monotonic: give up waiting for its closing sample after this
} agent_measure_held_t;

// The dataset device's counters in one sample.
typedef struct agent_measure_disk {
    bool has;
    char device[JF_MEASURE_DEVICE_MAX + 1];
    int64_t reads, read_bytes, read_time_us;
} agent_measure_disk_t;

struct agent_measure {
    agent_energy_t *energy;                          // owned
    agent_energy_counter_t *counter;                 // owned: RAPL counters
    agent_thermal_t *thermal;                        // owned: temperatures and clocks seen
    agent_gpubefore_t *gpu_before;                   // owned: GPU load before epoch 0 began
    int64_t started_tb_us; // the trainer's start line read, run's time base; 0: not yet
    char input_rail[AGENT_ENERGY_RAIL_NAME_MAX + 1]; // "" if none
    int rate_hz;                                     // requested, in the run's time base
    int wall_rate_hz;                                // the sampler's rate
    int64_t period_us;                               // the sampler's period, wall-clock us
    bool own_clock; // the run keeps the trainer's clock (opts.timing), not the monotonic one
    double speed;   // trainer us per monotonic us (1 without an own clock)
    char time_base[JF_MEASURE_TEXT_MAX + 1];     // the record's time_base
    char energy_source[JF_MEASURE_WORD_MAX + 1]; // the platform's energy.source; "": the samples'

    int64_t start_us; // monotonic: the time base's origin
    int epochs;
    int since; // fallback interval from the last epoch read
    size_t n_held;
    agent_measure_held_t held[AGENT_MEASURE_HELD_MAX]; // oldest first
    char source[JF_MEASURE_WORD_MAX + 1];              // the first sample's source
    char power_source[JF_MEASURE_WORD_MAX + 1];        // where the first power reading came from
    agent_measure_disk_t disk_first, disk_last;
    bool *has_after; // owned; per epoch
    double *after;   // owned; per epoch, fraction resident
    bool has_before0;
    double before0;
    int last_epoch; // highest epoch with a record or residency
    int64_t dataset_bytes;
    bool seen_power; // a sample carried a power reading

    // Carried from earlier agent processes (agent_measure_carry.c; docs/protocol.md §4.4.1).
    json_t *last;   // owned: the latest sample that counted for energy, in the time base
    bool has_carry; // resumed: carried counts with what energy integrates
    agent_energy_result_t carried; // their energy: total and rails (the other fields unused)
    bool bridge_pending;    // the carried latest sample is in energy; the next one ends the gap
    bool carried_last;      // that sample is in energy's count (it was taken by an earlier agent)
    int64_t unobserved_us;  // time no agent sampled, bridged linearly, in the time base
    double interpolated_mj; // the energy of those bridges, mJ
};

// After a sample counted for energy (s, in the time base; borrowed): keep it as the latest, and
// close the bridge over the time no agent sampled if it is the first since a resume.
void agent_measure_after_sample(agent_measure_t *self, json_t *s);

// The run's energy result r (from the accumulator) with the carried energy added, and the
// carried latest sample out of its sample count.
void agent_measure_add_carried(const agent_measure_t *self, agent_energy_result_t *r);

#endif
