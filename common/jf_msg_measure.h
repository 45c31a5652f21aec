/* The measure record of run.progress (docs/protocol.md §5.4.1): how one run attempt was measured.
 * Telemetry source and sampling quality, the energy of the run in total and per rail and how the
 * total was formed, the power mode in force, where the dataset lives, how the page cache was
 * dropped, the dataset device's reads and the dataset's page-cache residency per epoch. The agent
 * builds it once, before the final message; every decoder checks it strictly; the coordinator
 * stores it. Not for the per-epoch energy figures, which travel on the epoch records. */
#ifndef JF_MSG_MEASURE_H
#define JF_MSG_MEASURE_H

#include "jf_board.h"
#include "jf_err.h"
#include "jf_msg_session.h"
#include "jf_schema.h"

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JF_MEASURE_WORD_MAX     15                 // telemetry source, drop method
#define JF_MEASURE_DEVICE_MAX   31                 // a disk name as /proc/diskstats prints it
#define JF_MEASURE_MOUNT_MAX    4095               // a mount point
#define JF_MEASURE_NOTE_MAX     200                // power_mode.note
#define JF_MEASURE_RATE_MAX_HZ  1000.0             // achieved rates above this are not believable
#define JF_MEASURE_COUNT_MAX    (INT64_C(1) << 40) // samples, late, missed, disk reads
#define JF_MEASURE_BYTES_MAX    (INT64_C(1) << 62)
#define JF_MEASURE_US_MAX       (INT64_C(1) << 50)
#define JF_MEASURE_CPUS_MAX     64
#define JF_MEASURE_CLUSTERS_MAX 16
#define JF_MEASURE_HZ_MAX       INT64_C(100000000000) // 100 GHz
#define JF_MEASURE_CACHE_MAX    1000                  // one entry per epoch (JF_EPOCHS_MAX)
// energy.source: where the power readings came from (a closed vocabulary).
#define JF_MEASURE_SOURCE_POWER_MONITOR "power-monitor" // the board's INA rails in sysfs
#define JF_MEASURE_SOURCE_TEGRASTATS    "tegrastats"    // the rails' fallback, tegrastats' lines
#define JF_MEASURE_SOURCE_RAPL          "rapl"          // a host's powercap RAPL counters
#define JF_MEASURE_SOURCE_SIMULATED     "simulated"     // a sim board's fake rails (modelled)
#define JF_MEASURE_TS_INTERVAL_MAX_MS   60000           // energy.tegrastats_interval_ms
#define JF_MEASURE_TEXT_MAX             63              // energy.covers, telemetry.time_base
#define JF_MEASURE_RAILS_MAX            16              // rails in energy.rails
#define JF_MEASURE_RAIL_NAME_MAX        64              // longest rail name, without the NUL
#define JF_MEASURE_ZONES_MAX            32 // thermal.max_temps_mc (JF_SAMPLE_ZONES_MAX)
#define JF_MEASURE_ZONE_NAME_MAX        64 // a zone name (JF_SAMPLE_NAME_MAX)
#define JF_MEASURE_MC_LO                INT64_C(-273150) // absolute zero, milli-degrees C
#define JF_MEASURE_MC_HI                INT64_C(1000000) // 1000 C: a broken sensor

// How the run's total energy was formed (energy.total; the agent's agent_energy decides).
typedef enum jf_measure_total {
    JF_MEASURE_TOTAL_NONE = 0,     // no sample carried any power reading
    JF_MEASURE_TOTAL_INPUT_RAIL,   // the board input rail (VDD_IN, POM_5V_IN, ...)
    JF_MEASURE_TOTAL_SUM_OF_RAILS, // no input rail: the sum of all rails (AGX Xavier, AGX Orin)
    JF_MEASURE_TOTAL_RAPL,         // a host's RAPL counters
} jf_measure_total_t;

// How the page cache was dropped before the run.
typedef enum jf_measure_drop {
    JF_MEASURE_DROP_NONE = 0,  // not asked for (params.drop_caches false)
    JF_MEASURE_DROP_HELPER,    // the whole page cache, through jetfleet-privhelper
    JF_MEASURE_DROP_FADVISE,   // the dataset's files only, posix_fadvise DONTNEED, unprivileged
    JF_MEASURE_DROP_SIMULATED, // a sim board's modelled page cache emptied (no real drop)
} jf_measure_drop_t;

// One rail's share of the run (a plain value record).
typedef struct jf_measure_rail {
    char name[JF_MEASURE_RAIL_NAME_MAX + 1]; // rail name as the board labels it
    double energy_mj;                        // over the run, mJ
    double avg_power_mw;                     // over the time the rail was read, mW
    double peak_power_mw;                    // highest reading, mW
} jf_measure_rail_t;

// Page-cache residency of the dataset around one epoch (a plain value record).
typedef struct jf_measure_cache {
    int epoch;       // 0-based
    bool has_before; // measured before the epoch (epoch 0), or at the previous epoch's end
    double before;   // resident bytes / dataset bytes, 0..1
    bool has_after;  // measured when the agent read the epoch's record
    double after;    // 0..1
} jf_measure_cache_t;

// One thermal zone's highest reading over the run (thermal.max_temps_mc, a name -> value map).
typedef struct jf_measure_zone {
    char name[JF_MEASURE_ZONE_NAME_MAX + 1]; // zone type as the board prints it ("GPU")
    int64_t max_mc;                          // highest reading, milli-degrees C
} jf_measure_zone_t;

// What the run's samples say about heat and throttling (measure.thermal; docs/telemetry.md
// "Thermal and clocks over a run"). The clock counts compare each sample's clocks read back with
// the caps of the power state in force (power_mode: the GPU's gpu_max_hz, each core's cluster's
// max_hz); a clock without a cap in the power state is not compared.
typedef struct jf_measure_thermal {
    int64_t samples;                               // samples seen (with or without temperatures)
    size_t n_zones;                                // entries used in zones
    jf_measure_zone_t zones[JF_MEASURE_ZONES_MAX]; // highest temperature per zone
    bool has_gpu;                                  // GPU clocks were compared with a cap
    int64_t gpu_samples;                           // samples with gpu_freq_hz compared
    int64_t gpu_below;                             // of them, below the mode's gpu_max_hz
    int64_t gpu_lowest_hz;                         // lowest gpu_freq_hz seen, Hz
    int64_t gpu_cap_hz;                            // the mode's gpu_max_hz, Hz
    bool has_cpu;                                  // CPU clocks were compared with caps
    int64_t cpu_samples;                           // core readings compared (cores x samples)
    int64_t cpu_below;                             // of them, below their cluster's max_hz
    double cpu_max_shortfall_pct;                  // largest 100 x (cap - f) / cap, 0..100
} jf_measure_thermal_t;

// One CPU cluster's frequency limits (power_mode.cpu_clusters[]).
typedef struct jf_measure_cluster {
    int first_core; // lowest core number of the cluster, 0..63
    int64_t min_hz; // scaling_min_freq, Hz
    int64_t max_hz; // scaling_max_freq, Hz
} jf_measure_cluster_t;

// The power state in force (measure.power_mode). Every member is optional: a quantity the board
// does not expose is absent (has_ false), never zero (STYLE.md §7).
typedef struct jf_measure_power {
    bool has_mode_id;
    int mode_id;                                // nvpmodel id, 0..255
    char mode_name[JF_POWER_MODE_NAME_MAX + 1]; // "" = absent
    bool has_online_cpus;
    size_t n_online_cpus;                 // entries used in online_cpus
    int online_cpus[JF_MEASURE_CPUS_MAX]; // core numbers, 0..63
    bool has_clusters;
    size_t n_clusters;                                      // entries used in clusters
    jf_measure_cluster_t clusters[JF_MEASURE_CLUSTERS_MAX]; // cpu_clusters
    bool has_gpu_min_hz;
    int64_t gpu_min_hz; // Hz
    bool has_gpu_max_hz;
    int64_t gpu_max_hz; // Hz
    bool has_emc_cap_hz;
    int64_t emc_cap_hz; // Hz
    bool has_dvfs_off;
    bool dvfs_off; // DVFS was off (clocks pinned)
    bool has_note;
    char note[JF_MEASURE_NOTE_MAX + 1]; // what could not be read, for humans
} jf_measure_power_t;

// Everything a measure record says (a plain value record). Strings are NUL-terminated.
typedef struct jf_measure {
    char source[JF_MEASURE_WORD_MAX + 1];    // samples' "source" (sysfs, proc, ...); "" if none
    int rate_hz;                             // requested sampling rate, 1..50
    double achieved_rate_hz;                 // (samples - 1) / (last - first sample time); 0 if < 2
    int64_t samples;                         // samples taken
    int64_t late;                            // taken more than half a period after their deadline
    int64_t missed;                          // deadlines skipped because the sampler fell behind
    int64_t max_gap_us;                      // longest time between two samples, us
    char time_base[JF_MEASURE_TEXT_MAX + 1]; // "monotonic", or "simulated, speed N": the clock
                                             // of every time and rate here; "" = left out
    int wall_rate_hz;                        // simulated: the sampler's wall-clock rate; 0 = none
    jf_measure_total_t total;                // how energy_mj was formed; NONE: no power readable
    char energy_source[JF_MEASURE_WORD_MAX + 1];   // JF_MEASURE_SOURCE_*; "" when total NONE
    int tegrastats_interval_ms;                    // energy_source "tegrastats": the --interval it
                                                   // ran at, 1..60000 ms; 0 when unknown
    char covers[JF_MEASURE_TEXT_MAX + 1];          // what the total covers ("RAPL package+dram");
                                                   // "" = left out
    char reason[JF_MEASURE_NOTE_MAX + 1];          // total NONE: why; "" = left out
    char input_rail[JF_MEASURE_RAIL_NAME_MAX + 1]; // the input rail's name ("" if unnamed/none)
    bool has_energy;     // the four figures below are set (decoded; the builder sets it from total)
    double energy_mj;    // run energy (total != NONE), mJ
    double avg_power_mw; // energy / covered time, mW
    double peak_power_mw;                          // highest total reading, mW
    int64_t covered_us;                            // time the total was known, us
    int64_t unobserved_us;  // re-attached run: time inside covered_us no agent sampled, bridged
                            // linearly (docs/protocol.md §4.4.1), us; 0 = none
    double interpolated_mj; // the energy of that bridge, inside energy_mj, mJ; 0 = none
    size_t n_rails;                                // entries used in rails
    jf_measure_rail_t rails[JF_MEASURE_RAILS_MAX]; // per rail, in the board's order
    jf_measure_power_t power;                      // the power state in force
    bool has_storage;                              // the fields below were found
    char medium[JF_IDENT_MAX + 1];                 // the run's medium
    char mount[JF_MEASURE_MOUNT_MAX + 1];          // mount point holding the dataset
    char device[JF_MEASURE_DEVICE_MAX + 1];        // its whole disk ("" on tmpfs, overlay, nfs)
    bool storage_checked;          // the mount was checked against the medium's mount
    jf_measure_drop_t drop_caches; // how the cache was dropped
    bool has_disk;                 // the dataset device's reads over the run
    char disk_device[JF_MEASURE_DEVICE_MAX + 1];
    int64_t disk_reads;        // reads completed during the run
    int64_t disk_read_bytes;   // bytes read
    int64_t disk_read_time_us; // time spent reading, us
    int64_t dataset_bytes;     // size of the dataset's files; 0 if not measured
    size_t n_cache;            // entries used in cache
    jf_measure_cache_t cache[JF_MEASURE_CACHE_MAX]; // by ascending epoch
    bool has_thermal;             // the record has the thermal object (agents from issue #12 on)
    jf_measure_thermal_t thermal; // temperatures and clocks over the run
    bool has_other_load;          // the other-load figures below were measured
    int64_t other_intervals;      // intervals of about a second measured
    double other_mean_pct;        // CPU time outside the agent's process tree, % of all CPUs'
    double other_max_pct;         // the highest interval's, %
    bool has_gpu_before;          // the GPU-before figures below were measured
    int64_t gpu_before_samples;   // samples between the sampler's start and epoch 0's start
    double gpu_before_mean_pct;   // their mean GPU load, % (the trainer was not computing)
    double gpu_before_max_pct;    // their highest, %
} jf_measure_t;

// The measure record's schema (common/jf_measure_schema.c; docs/schema.md): the wire nests
// telemetry, energy, storage and disk, the struct keeps them flat. Static.
const jf_schema_t *jf_measure_schema(void);

// The power_mode object's schema, for the agent, which has the power state as JSON. Static.
const jf_schema_t *jf_measure_power_schema(void);

// Decodes a measure record ({"kind":"measure", ...}) into *ret (about 40 kB: allocate it), checked
// as jf_measure_check says. Returns 0, or -EPROTO/-EINVAL with err naming the member; *ret is
// then partly written.
int jf_measure_decode(const json_t *rec, jf_measure_t *ret, jf_err_t *err);

// "none", "helper", "fadvise"; "?" out of range.
const char *jf_measure_drop_name(jf_measure_drop_t drop);

// Builds the record {"kind":"measure", ...} from the schema. With total NONE the figures, source,
// input rail and covers are left out, otherwise the reason; has_energy is implied by total, and
// the tegrastats interval is written only with source tegrastats. Caller owns the result
// (json_decref); NULL when out of memory or when m holds a value the checker would refuse (a
// non-finite number, a count past its array).
json_t *jf_measure_to_json(const jf_measure_t *m);

// Checks a measure record: the closed member sets of docs/protocol.md §5.4.1, types, ranges and
// lengths. Returns 0, or -EPROTO/-EINVAL with err naming the member ("energy.rails[2]: ...").
int jf_measure_check(const json_t *rec, jf_err_t *err);

// Number of cache entries of a checked record (0 when it has none).
size_t jf_measure_cache_count(const json_t *rec);

// Entry i of a checked record's cache into *ret_cache. Returns 0, or -ENOENT past the end.
int jf_measure_cache_at(const json_t *rec, size_t i, jf_measure_cache_t *ret_cache);

// "input-rail", "sum-of-rails", "rapl" or "none", the wire names of energy.total; "?" for an
// out-of-range value.
const char *jf_measure_total_name(jf_measure_total_t total);

#endif
