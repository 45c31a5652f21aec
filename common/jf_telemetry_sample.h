/* The telemetry sample as a typed value record (docs/telemetry.md, docs/protocol.md §5.4.2): the
 * members a Jetson, host or sim sample carries, each in its unit, on a schema table
 * (common/jf_telemetry_sample.c, docs/schema.md). A sample is open: members the table does not
 * know are kept as JSON. Not for sampling (agent/measure/agent_sampler.c) or storage. */
#ifndef JF_TELEMETRY_SAMPLE_H
#define JF_TELEMETRY_SAMPLE_H

#include "jf_err.h"
#include "jf_schema.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JF_SAMPLE_CORES_MAX    256 // per-core arrays (as the message check's array limit)
#define JF_SAMPLE_RAILS_MAX    32  // power rails (boards have 3 to 9)
#define JF_SAMPLE_ZONES_MAX    32  // thermal zones in temps_mc
#define JF_SAMPLE_RAPL_MAX     16  // RAPL zones and sub-zones
#define JF_SAMPLE_GPCS_MAX     8   // GPU GPCs with their own clock
#define JF_SAMPLE_KEYS_MAX     32  // from_tegrastats entries
#define JF_SAMPLE_NAME_MAX     64  // a rail, zone or key name, without the NUL
#define JF_SAMPLE_WORD_MAX     31  // board_type, source, disk device
#define JF_SAMPLE_POWER_MAX_MW INT64_C(10000000) // |rail power|, mW (signed: a shunt reads < 0)

// One power rail (rails[]); a member the monitor does not give is absent.
typedef struct jf_sample_rail {
    char name[JF_SAMPLE_NAME_MAX + 1]; // as the board labels it ("VDD_IN")
    bool has_voltage_mv;
    int64_t voltage_mv; // bus voltage, mV
    bool has_current_ma;
    int64_t current_ma; // mA
    bool has_power_mw;
    int64_t power_mw; // mW
    bool has_avg_power_mw;
    int64_t avg_power_mw; // tegrastats' average since it started, mW
} jf_sample_rail_t;

// One named reading of a name -> value object (temps_mc, rapl_energy_uj).
typedef struct jf_sample_named {
    char name[JF_SAMPLE_NAME_MAX + 1]; // zone name ("CPU", "package-0/dram")
    int64_t value;                     // in the member's unit (mC, uJ)
} jf_sample_named_t;

// The dataset device's /proc/diskstats counters since boot (disk).
typedef struct jf_sample_disk {
    char device[JF_SAMPLE_WORD_MAX + 1]; // "nvme0n1"
    int64_t reads;                       // reads completed
    int64_t read_bytes;                  // bytes read
    int64_t read_time_us;                // time spent reading, us
    int64_t in_flight;                   // I/Os in progress
} jf_sample_disk_t;

// A sample (a plain value record). Each optional member has a has_ flag (absent, never zero);
// arrays have a count. Elements of the per-core arrays that could not be read (an offline core)
// are NAN (loads) or JF_SCHEMA_NULL_I64 (frequencies). extra holds the unknown members.
typedef struct jf_telemetry_sample {
    bool has_t_us; // always in a telemetry message; a tegrastats line without a time has none
    int64_t t_us;  // wall clock, us since the Unix epoch
    bool has_mono_us;
    int64_t mono_us;                         // monotonic time, us
    char board_type[JF_SAMPLE_WORD_MAX + 1]; // --sample-once only; "" = absent
    char source[JF_SAMPLE_WORD_MAX + 1];     // sysfs, proc, tegrastats, sim; "" = absent
    bool has_from_tegrastats;
    size_t n_from_tegrastats;
    char from_tegrastats[JF_SAMPLE_KEYS_MAX][JF_SAMPLE_NAME_MAX + 1]; // keys from tegrastats
    bool has_tegrastats_age_us;
    int64_t tegrastats_age_us; // age of that line, us
    bool has_cpu_load_pct;
    double cpu_load_pct; // all cores, percent
    bool has_cpu_core_load_pct;
    size_t n_cpu_core_load_pct;
    double cpu_core_load_pct[JF_SAMPLE_CORES_MAX]; // percent; NAN offline
    bool has_cpu_core_freq_hz;
    size_t n_cpu_core_freq_hz;
    int64_t cpu_core_freq_hz[JF_SAMPLE_CORES_MAX]; // Hz; JF_SCHEMA_NULL_I64 offline
    bool has_cpu_online;
    size_t n_cpu_online;
    bool cpu_online[JF_SAMPLE_CORES_MAX];
    bool has_gpu_load_pct;
    double gpu_load_pct; // percent
    bool has_gpu_freq_hz;
    int64_t gpu_freq_hz; // Hz
    bool has_gpu_gpc_freq_hz;
    size_t n_gpu_gpc_freq_hz;
    int64_t gpu_gpc_freq_hz[JF_SAMPLE_GPCS_MAX]; // Hz
    bool has_emc_freq_hz;
    int64_t emc_freq_hz; // Hz
    bool has_emc_load_pct;
    double emc_load_pct; // percent
    bool has_ram_total_bytes;
    int64_t ram_total_bytes; // bytes
    bool has_ram_used_bytes;
    int64_t ram_used_bytes; // bytes
    bool has_ram_available_bytes;
    int64_t ram_available_bytes; // bytes
    bool has_page_cache_bytes;
    int64_t page_cache_bytes; // bytes
    bool has_swap_total_bytes;
    int64_t swap_total_bytes; // bytes
    bool has_swap_used_bytes;
    int64_t swap_used_bytes; // bytes
    bool has_temps_mc;
    size_t n_temps_mc;
    jf_sample_named_t temps_mc[JF_SAMPLE_ZONES_MAX]; // milli-degrees Celsius
    bool has_rails;
    size_t n_rails;
    jf_sample_rail_t rails[JF_SAMPLE_RAILS_MAX]; // in the board's order
    bool has_input_power_mw;
    int64_t input_power_mw; // mW
    bool has_disk;
    jf_sample_disk_t disk;
    bool has_rapl_energy_uj;
    size_t n_rapl_energy_uj;
    jf_sample_named_t rapl_energy_uj[JF_SAMPLE_RAPL_MAX]; // uJ
    bool has_rapl_max_energy_range_uj;
    size_t n_rapl_max_energy_range_uj;
    jf_sample_named_t rapl_max_energy_range_uj[JF_SAMPLE_RAPL_MAX]; // uJ
    bool has_sim_speed;
    double sim_speed; // simulated boards: time compression
    json_t *extra;    // owned: members the table does not know, NULL if none
} jf_telemetry_sample_t;

// The sample schema, keeping unknown members in extra. Static.
const jf_schema_t *jf_telemetry_sample_schema(void);

// Decodes one sample object into *ret: known members typed and range-checked, the others copied
// into ret->extra. Returns 0, or -EPROTO (shape, type) / -EINVAL (range) with err naming the
// member, or -ENOMEM. The caller releases *ret with jf_telemetry_sample_fini, also on failure.
int jf_telemetry_sample_decode(const json_t *obj, jf_telemetry_sample_t *ret, jf_err_t *err);

// The sample's JSON form (known members, then extra's). Caller owns the result; NULL when out
// of memory or when a count is past its array.
json_t *jf_telemetry_sample_encode(const jf_telemetry_sample_t *s);

// Checks a sample's known members without keeping anything (the message checker's half).
int jf_telemetry_sample_check_typed(const json_t *obj, jf_err_t *err);

// Releases extra. Accepts a zeroed sample.
void jf_telemetry_sample_fini(jf_telemetry_sample_t *s);

#endif
