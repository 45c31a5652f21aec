/* The measure record's schema tables (docs/protocol.md §5.4.1, docs/schema.md): the wire form's
 * nested objects (telemetry, energy, power_mode, storage, disk) and arrays (rails, cpu_clusters,
 * online_cpus, cache), each member once with its range and unit. jf_measure_decode, _check and
 * _to_json (jf_msg_measure.c) come from them. The telemetry, energy, storage and disk tables
 * address the flat jf_measure_t directly (their record's offset is 0). */
#include "jf_msg_measure.h"

#include "jf_msg_run.h"
#include "jf_run_spec.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

static const char *const s_kind[] = {"kind", NULL}; // the record's kind, read by jf_record_parse

static bool s_nonempty(const char *s)
{
    return s[0] != '\0';
}

static bool s_absolute(const char *s)
{
    return s[0] == '/';
}

static bool s_energy_source(const char *s)
{
    static const char *const sources[] = {JF_MEASURE_SOURCE_POWER_MONITOR,
                                          JF_MEASURE_SOURCE_TEGRASTATS, JF_MEASURE_SOURCE_RAPL,
                                          JF_MEASURE_SOURCE_SIMULATED, NULL};
    for (const char *const *p = sources; *p; p++) {
        if (strcmp(s, *p) == 0) {
            return true;
        }
    }
    return false;
}

// Enum wire names, by value (jf_measure_total_t, jf_measure_drop_t).
static const char *const s_totals[] = {"none", "input-rail", "sum-of-rails", "rapl", NULL};
static const char *const s_drops[] = {"none", "helper", "fadvise", "simulated", NULL};

#define S_TOTALS_MUST "must be one of input-rail, sum-of-rails, rapl, none"
#define S_NONEMPTY    .is_valid = s_nonempty, .must = "must not be empty"

// Tables read best one field to a row block; clang-format would put every member on a line.
// clang-format off
#define S_M(member) .offset = offsetof(jf_measure_t, member), .size = sizeof(((jf_measure_t *)0)->member)
#define S_P(member) .offset = offsetof(jf_measure_power_t, member),                               \
        .size = sizeof(((jf_measure_power_t *)0)->member)
#define S_I64(lo_, hi_) .type = JF_SCHEMA_I64, .lo = (lo_), .hi = (hi_)
#define S_NUM(hi_) .type = JF_SCHEMA_NUM, .lo_num = 0, .hi_num = (hi_)
#define S_HAS(rec, flag) .optional = true, .has_flag = true, .has_offset = offsetof(rec, flag)

static const jf_schema_field_t s_telemetry_fields[] = {
    {.name = "source", .type = JF_SCHEMA_STR, S_M(source), .doc = "samples' source; may be empty"},
    {.name = "rate_hz", .type = JF_SCHEMA_INT, S_M(rate_hz), .lo = 1, .hi = JF_TELEMETRY_HZ_MAX,
     .unit = "Hz", .doc = "requested sampling rate"},
    {.name = "achieved_rate_hz", S_NUM(JF_MEASURE_RATE_MAX_HZ), S_M(achieved_rate_hz),
     .unit = "Hz", .doc = "(samples - 1) / sampled time"},
    {.name = "samples", S_I64(0, JF_MEASURE_COUNT_MAX), S_M(samples), .doc = "samples taken"},
    {.name = "late", S_I64(0, JF_MEASURE_COUNT_MAX), S_M(late),
     .doc = "taken more than half a period late"},
    {.name = "missed", S_I64(0, JF_MEASURE_COUNT_MAX), S_M(missed), .doc = "deadlines skipped"},
    {.name = "max_gap_us", S_I64(0, JF_MEASURE_US_MAX), S_M(max_gap_us), .unit = "us",
     .doc = "longest time between two samples"},
    {.name = "time_base", .type = JF_SCHEMA_STR, S_M(time_base), .optional = true,
     .omit_zero = true, S_NONEMPTY, .doc = "the clock of every time here"},
    {.name = "wall_rate_hz", .type = JF_SCHEMA_INT, S_M(wall_rate_hz), .lo = 1,
     .hi = JF_TELEMETRY_HZ_MAX, .unit = "Hz", .optional = true, .omit_zero = true,
     .doc = "simulated clock: the sampler's wall-clock rate"},
};

static const jf_schema_field_t s_rail_fields[] = {
    {.name = "name", .type = JF_SCHEMA_STR, .offset = offsetof(jf_measure_rail_t, name),
     .size = JF_MEASURE_RAIL_NAME_MAX + 1, S_NONEMPTY, .doc = "rail name as the board labels it"},
    {.name = "energy_mj", S_NUM(JF_REC_ENERGY_MAX_MJ),
     .offset = offsetof(jf_measure_rail_t, energy_mj), .size = sizeof(double), .unit = "mJ"},
    {.name = "avg_power_mw", S_NUM(JF_REC_POWER_MAX_MW),
     .offset = offsetof(jf_measure_rail_t, avg_power_mw), .size = sizeof(double), .unit = "mW"},
    {.name = "peak_power_mw", S_NUM(JF_REC_POWER_MAX_MW),
     .offset = offsetof(jf_measure_rail_t, peak_power_mw), .size = sizeof(double), .unit = "mW"},
};

static const jf_schema_t s_rail_schema = {
    .name = "measure rail", JF_SCHEMA_FIELDS(s_rail_fields), .words = JF_SCHEMA_WORDS_MEMBER};

#define S_FIGURE(hi_) S_NUM(hi_), S_HAS(jf_measure_t, has_energy)
static const jf_schema_field_t s_energy_fields[] = {
    {.name = "total", .type = JF_SCHEMA_ENUM, S_M(total), .names = s_totals,
     .must = S_TOTALS_MUST, .doc = "how the total was formed"},
    {.name = "rails", .type = JF_SCHEMA_ARR, S_M(rails), .sub = &s_rail_schema,
     .max_count = JF_MEASURE_RAILS_MAX, .count_offset = offsetof(jf_measure_t, n_rails),
     .elem_size = sizeof(jf_measure_rail_t), .doc = "per rail, in the board's order"},
    {.name = "input_rail", .type = JF_SCHEMA_STR, S_M(input_rail), .optional = true,
     .omit_zero = true, S_NONEMPTY, .doc = "the input rail's name"},
    {.name = "energy_mj", S_FIGURE(JF_REC_ENERGY_MAX_MJ), S_M(energy_mj), .unit = "mJ"},
    {.name = "avg_power_mw", S_FIGURE(JF_REC_POWER_MAX_MW), S_M(avg_power_mw), .unit = "mW"},
    {.name = "peak_power_mw", S_FIGURE(JF_REC_POWER_MAX_MW), S_M(peak_power_mw), .unit = "mW"},
    {.name = "covered_us", S_I64(0, JF_MEASURE_US_MAX), S_HAS(jf_measure_t, has_energy),
     S_M(covered_us), .unit = "us", .doc = "time the total was known"},
    {.name = "source", .type = JF_SCHEMA_STR, S_M(energy_source), .optional = true,
     .omit_zero = true, .is_valid = s_energy_source,
     .must = "must be one of power-monitor, tegrastats, rapl, simulated"},
    {.name = "tegrastats_interval_ms", .type = JF_SCHEMA_INT, S_M(tegrastats_interval_ms),
     .lo = 1, .hi = JF_MEASURE_TS_INTERVAL_MAX_MS, .unit = "ms", .optional = true,
     .omit_zero = true, .doc = "source tegrastats: its --interval"},
    {.name = "covers", .type = JF_SCHEMA_STR, S_M(covers), .optional = true, .omit_zero = true,
     S_NONEMPTY, .doc = "what the total covers"},
    {.name = "reason", .type = JF_SCHEMA_STR, S_M(reason), .optional = true, .omit_zero = true,
     S_NONEMPTY, .doc = "total none: why"},
    // Re-attached runs (docs/protocol.md §4.4.1): the time no agent sampled, bridged linearly
    // between the last sample before and the first after, and the energy that bridge gave.
    {.name = "unobserved_us", S_I64(0, JF_MEASURE_US_MAX), S_M(unobserved_us), .unit = "us",
     .optional = true, .omit_zero = true, .doc = "time no agent sampled (interpolated)"},
    {.name = "interpolated_mj", S_NUM(JF_REC_ENERGY_MAX_MJ), S_M(interpolated_mj), .unit = "mJ",
     .optional = true, .omit_zero = true, .doc = "energy over unobserved_us (interpolated)"},
};
// clang-format on

static bool s_in(const char *key, const char *const *keys)
{
    for (const char *const *p = keys; *p; p++) {
        if (strcmp(*p, key) == 0) {
            return true;
        }
    }
    return false;
}

// Which members come together: with total none only the rails and a reason; otherwise the four
// figures and no reason; the tegrastats interval only with source tegrastats.
static int s_energy_json(const json_t *e, jf_err_t *err)
{
    static const char *const none_keys[] = {"total", "rails", "reason", NULL};
    static const char *const figures[] = {"energy_mj", "avg_power_mw", "peak_power_mw",
                                          "covered_us", NULL};
    static const char *const wanted[] = {"a finite number", "a finite number", "a finite number",
                                         "an integer"};
    const char *total = json_string_value(json_object_get(e, "total"));
    if (!total || !s_in(total, s_totals)) {
        return jf_err_set(err, -EINVAL, "'total' " S_TOTALS_MUST);
    }
    bool none = strcmp(total, "none") == 0;
    const char *k = NULL;
    json_t *v = NULL;
    json_object_foreach((json_t *) e, k, v)
    {
        if (none ? !s_in(k, none_keys) : strcmp(k, "reason") == 0) {
            return jf_err_set(err, -EPROTO, "unknown member '%.64s'", k);
        }
    }
    for (size_t i = 0; !none && figures[i]; i++) {
        if (!json_object_get(e, figures[i])) {
            return jf_err_set(err, -EPROTO, "'%s' must be %s, got nothing", figures[i], wanted[i]);
        }
    }
    const char *source = json_string_value(json_object_get(e, "source"));
    if (json_object_get(e, "tegrastats_interval_ms") &&
        (!source || strcmp(source, JF_MEASURE_SOURCE_TEGRASTATS) != 0)) {
        return jf_err_set(err, -EINVAL, "'tegrastats_interval_ms' needs source 'tegrastats'");
    }
    return 0;
}

// The same rules on a struct (jf_measure_to_json checks what it builds through the decoder;
// this is for jf_schema_validate).
static int s_energy_check(const void *rec, jf_err_t *err)
{
    const jf_measure_t *m = rec;
    if ((m->total == JF_MEASURE_TOTAL_NONE) == m->has_energy) {
        return jf_err_set(err, -EINVAL,
                          "the energy figures are set exactly when 'total' is not "
                          "none");
    }
    if (m->tegrastats_interval_ms != 0 &&
        strcmp(m->energy_source, JF_MEASURE_SOURCE_TEGRASTATS) != 0) {
        return jf_err_set(err, -EINVAL, "'tegrastats_interval_ms' needs source 'tegrastats'");
    }
    return 0;
}

static const jf_schema_t s_telemetry_schema = {.name = "measure telemetry",
                                               JF_SCHEMA_FIELDS(s_telemetry_fields),
                                               .words = JF_SCHEMA_WORDS_MEMBER};

static const jf_schema_t s_energy_schema = {.name = "measure energy",
                                            JF_SCHEMA_FIELDS(s_energy_fields),
                                            .words = JF_SCHEMA_WORDS_MEMBER,
                                            .check = s_energy_check,
                                            .check_json = s_energy_json};

static bool s_mode_name(const char *s)
{
    return jf_board_is_mode_name(s);
}

static const jf_schema_field_t s_cpu_field = {.name = "online_cpus",
                                              .type = JF_SCHEMA_INT,
                                              .size = sizeof(int),
                                              .lo = 0,
                                              .hi = JF_MEASURE_CPUS_MAX - 1};

// clang-format off
#define S_C(member) .offset = offsetof(jf_measure_cluster_t, member),                             \
        .size = sizeof(((jf_measure_cluster_t *)0)->member)
static const jf_schema_field_t s_cluster_fields[] = {
    {.name = "first_core", .type = JF_SCHEMA_INT, S_C(first_core), .lo = 0,
     .hi = JF_MEASURE_CPUS_MAX - 1, .doc = "lowest core of the cluster"},
    {.name = "min_hz", S_I64(0, JF_MEASURE_HZ_MAX), S_C(min_hz), .unit = "Hz"},
    {.name = "max_hz", S_I64(0, JF_MEASURE_HZ_MAX), S_C(max_hz), .unit = "Hz"},
};

static const jf_schema_t s_cluster_schema = {
    .name = "cpu cluster", JF_SCHEMA_FIELDS(s_cluster_fields), .words = JF_SCHEMA_WORDS_MEMBER};

#define S_PHAS(flag) S_HAS(jf_measure_power_t, flag)
static const jf_schema_field_t s_power_fields[] = {
    {.name = "mode_id", .type = JF_SCHEMA_INT, S_P(mode_id), .lo = 0, .hi = JF_POWER_MODE_ID_MAX,
     S_PHAS(has_mode_id), .doc = "nvpmodel id"},
    {.name = "mode_name", .type = JF_SCHEMA_STR, S_P(mode_name), .optional = true,
     .omit_zero = true, .is_valid = s_mode_name, .must = "must be a mode name"},
    {.name = "online_cpus", .type = JF_SCHEMA_ARR, S_P(online_cpus), .elem = &s_cpu_field,
     .max_count = JF_MEASURE_CPUS_MAX, .count_offset = offsetof(jf_measure_power_t, n_online_cpus),
     .elem_size = sizeof(int), S_PHAS(has_online_cpus), .doc = "core numbers online"},
    {.name = "cpu_clusters", .type = JF_SCHEMA_ARR, S_P(clusters), .sub = &s_cluster_schema,
     .max_count = JF_MEASURE_CLUSTERS_MAX, .count_offset = offsetof(jf_measure_power_t, n_clusters),
     .elem_size = sizeof(jf_measure_cluster_t), S_PHAS(has_clusters)},
    {.name = "gpu_min_hz", S_I64(0, JF_MEASURE_HZ_MAX), S_P(gpu_min_hz), .unit = "Hz",
     S_PHAS(has_gpu_min_hz)},
    {.name = "gpu_max_hz", S_I64(0, JF_MEASURE_HZ_MAX), S_P(gpu_max_hz), .unit = "Hz",
     S_PHAS(has_gpu_max_hz)},
    {.name = "emc_cap_hz", S_I64(0, JF_MEASURE_HZ_MAX), S_P(emc_cap_hz), .unit = "Hz",
     S_PHAS(has_emc_cap_hz)},
    {.name = "dvfs_off", .type = JF_SCHEMA_BOOL, S_P(dvfs_off), S_PHAS(has_dvfs_off)},
    {.name = "note", .type = JF_SCHEMA_STR, S_P(note), S_PHAS(has_note)},
};

static const jf_schema_field_t s_storage_fields[] = {
    {.name = "medium", .type = JF_SCHEMA_STR, S_M(medium), .doc = "the run's medium"},
    {.name = "mount", .type = JF_SCHEMA_STR, S_M(mount), .is_valid = s_absolute,
     .must = "must be an absolute path", .doc = "mount point holding the dataset"},
    {.name = "device", .type = JF_SCHEMA_STR, S_M(device), .doc = "its whole disk; may be empty"},
    {.name = "checked", .type = JF_SCHEMA_BOOL, S_M(storage_checked),
     .doc = "the mount was checked against the medium's"},
};

static const jf_schema_field_t s_disk_fields[] = {
    {.name = "device", .type = JF_SCHEMA_STR, S_M(disk_device), S_NONEMPTY},
    {.name = "reads", S_I64(0, JF_MEASURE_COUNT_MAX), S_M(disk_reads)},
    {.name = "read_bytes", S_I64(0, JF_MEASURE_BYTES_MAX), S_M(disk_read_bytes), .unit = "bytes"},
    {.name = "read_time_us", S_I64(0, JF_MEASURE_US_MAX), S_M(disk_read_time_us), .unit = "us"},
};

#define S_K(member) .offset = offsetof(jf_measure_cache_t, member),                               \
        .size = sizeof(((jf_measure_cache_t *)0)->member)
static const jf_schema_field_t s_cache_fields[] = {
    {.name = "epoch", .type = JF_SCHEMA_INT, S_K(epoch), .lo = 0, .hi = JF_EPOCHS_MAX - 1},
    {.name = "resident_before", S_NUM(1), S_K(before), S_HAS(jf_measure_cache_t, has_before),
     .unit = "fraction", .doc = "resident / dataset bytes before the epoch"},
    {.name = "resident_after", S_NUM(1), S_K(after), S_HAS(jf_measure_cache_t, has_after),
     .unit = "fraction", .doc = "resident / dataset bytes after the epoch"},
};
// clang-format on

static int s_storage_check(const void *rec, jf_err_t *err)
{
    const jf_measure_t *m = rec;
    if (!jf_run_spec_is_medium(m->medium)) {
        return jf_err_set(err, -EINVAL, "'medium' must be one of %s", jf_run_spec_media());
    }
    return 0;
}

// clang-format off
#define S_TH(member) .offset = offsetof(jf_measure_thermal_t, member),                            \
        .size = sizeof(((jf_measure_thermal_t *)0)->member)
static const jf_schema_field_t s_zone_fields[] = {
    {.name = "name", .type = JF_SCHEMA_STR, .offset = offsetof(jf_measure_zone_t, name),
     .size = JF_MEASURE_ZONE_NAME_MAX + 1},
    {.name = "value", S_I64(JF_MEASURE_MC_LO, JF_MEASURE_MC_HI),
     .offset = offsetof(jf_measure_zone_t, max_mc), .size = sizeof(int64_t), .unit = "mC"},
};
static const jf_schema_t s_zone_schema = {
    .name = "thermal zone", JF_SCHEMA_FIELDS(s_zone_fields), .words = JF_SCHEMA_WORDS_MEMBER};

#define S_GPU S_HAS(jf_measure_thermal_t, has_gpu)
#define S_CPU S_HAS(jf_measure_thermal_t, has_cpu)
static const jf_schema_field_t s_thermal_fields[] = {
    {.name = "samples", S_I64(0, JF_MEASURE_COUNT_MAX), S_TH(samples), .doc = "samples seen"},
    {.name = "max_temps_mc", .type = JF_SCHEMA_ARR, S_TH(zones), .sub = &s_zone_schema,
     .map = true, .max_count = JF_MEASURE_ZONES_MAX,
     .count_offset = offsetof(jf_measure_thermal_t, n_zones), .elem_size = sizeof(jf_measure_zone_t),
     .unit = "mC", .doc = "highest temperature per zone over the run"},
    {.name = "gpu_samples", S_I64(0, JF_MEASURE_COUNT_MAX), S_TH(gpu_samples), S_GPU,
     .doc = "samples whose GPU clock was compared with the mode's gpu_max_hz"},
    {.name = "gpu_below", S_I64(0, JF_MEASURE_COUNT_MAX), S_TH(gpu_below), S_GPU,
     .doc = "of them, below it"},
    {.name = "gpu_lowest_hz", S_I64(0, JF_MEASURE_HZ_MAX), S_TH(gpu_lowest_hz), S_GPU,
     .unit = "Hz", .doc = "lowest GPU clock seen"},
    {.name = "gpu_cap_hz", S_I64(0, JF_MEASURE_HZ_MAX), S_TH(gpu_cap_hz), S_GPU, .unit = "Hz",
     .doc = "the mode's gpu_max_hz compared with"},
    {.name = "cpu_samples", S_I64(0, JF_MEASURE_COUNT_MAX), S_TH(cpu_samples), S_CPU,
     .doc = "core clock readings compared with their cluster's max_hz"},
    {.name = "cpu_below", S_I64(0, JF_MEASURE_COUNT_MAX), S_TH(cpu_below), S_CPU,
     .doc = "of them, below it"},
    {.name = "cpu_max_shortfall_pct", S_NUM(100), S_TH(cpu_max_shortfall_pct), S_CPU,
     .unit = "%", .doc = "largest 100 x (cap - clock) / cap"},
};
// clang-format on
static const jf_schema_t s_thermal_schema = {
    .name = "measure thermal", JF_SCHEMA_FIELDS(s_thermal_fields), .words = JF_SCHEMA_WORDS_MEMBER};

// clang-format off
static const jf_schema_field_t s_other_fields[] = {
    {.name = "intervals", S_I64(1, JF_MEASURE_COUNT_MAX), S_M(other_intervals),
     .doc = "intervals of about a second measured"},
    {.name = "mean_pct", S_NUM(100), S_M(other_mean_pct), .unit = "%",
     .doc = "CPU time outside the agent's process tree, % of all CPUs' time"},
    {.name = "max_pct", S_NUM(100), S_M(other_max_pct), .unit = "%",
     .doc = "the highest interval's share"},
};
static const jf_schema_field_t s_gpu_before_fields[] = {
    {.name = "samples", S_I64(1, JF_MEASURE_COUNT_MAX), S_M(gpu_before_samples),
     .doc = "samples between the sampler's start and epoch 0's start"},
    {.name = "mean_pct", S_NUM(100), S_M(gpu_before_mean_pct), .unit = "%",
     .doc = "their mean GPU load: the trainer was starting, not computing"},
    {.name = "max_pct", S_NUM(100), S_M(gpu_before_max_pct), .unit = "%",
     .doc = "the highest of them"},
};
// clang-format on
static const jf_schema_t s_other_schema = {.name = "measure other load",
                                           JF_SCHEMA_FIELDS(s_other_fields),
                                           .words = JF_SCHEMA_WORDS_MEMBER};
static const jf_schema_t s_gpu_before_schema = {.name = "measure gpu before",
                                                JF_SCHEMA_FIELDS(s_gpu_before_fields),
                                                .words = JF_SCHEMA_WORDS_MEMBER};

static const jf_schema_t s_power_schema = {
    .name = "power mode", JF_SCHEMA_FIELDS(s_power_fields), .words = JF_SCHEMA_WORDS_MEMBER};
static const jf_schema_t s_storage_schema = {.name = "measure storage",
                                             JF_SCHEMA_FIELDS(s_storage_fields),
                                             .words = JF_SCHEMA_WORDS_MEMBER,
                                             .check = s_storage_check};
static const jf_schema_t s_disk_schema = {
    .name = "measure disk", JF_SCHEMA_FIELDS(s_disk_fields), .words = JF_SCHEMA_WORDS_MEMBER};
static const jf_schema_t s_cache_schema = {
    .name = "measure cache", JF_SCHEMA_FIELDS(s_cache_fields), .words = JF_SCHEMA_WORDS_MEMBER};

// clang-format off
// The nested records of the flat struct sit at offset 0: their tables address jf_measure_t.
#define S_FLAT(sub_) .type = JF_SCHEMA_OBJ, .offset = 0, .size = sizeof(jf_measure_t), .sub = (sub_)
static const jf_schema_field_t s_measure_fields[] = {
    {.name = "telemetry", S_FLAT(&s_telemetry_schema), .doc = "sampling and its quality"},
    {.name = "energy", S_FLAT(&s_energy_schema), .doc = "run energy, per rail, how formed"},
    {.name = "power_mode", .type = JF_SCHEMA_OBJ, S_M(power), .sub = &s_power_schema,
     .doc = "the power state in force"},
    {.name = "storage", S_FLAT(&s_storage_schema), S_HAS(jf_measure_t, has_storage),
     .doc = "where the dataset lives"},
    {.name = "drop_caches", .type = JF_SCHEMA_ENUM, S_M(drop_caches), .names = s_drops,
     .must = "must be one of none, helper, fadvise, simulated"},
    {.name = "disk", S_FLAT(&s_disk_schema), S_HAS(jf_measure_t, has_disk),
     .doc = "the dataset device's reads over the run"},
    {.name = "dataset_bytes", S_I64(0, JF_MEASURE_BYTES_MAX), S_M(dataset_bytes),
     .unit = "bytes", .optional = true, .omit_zero = true},
    {.name = "cache", .type = JF_SCHEMA_ARR, S_M(cache), .sub = &s_cache_schema,
     .max_count = JF_MEASURE_CACHE_MAX, .count_offset = offsetof(jf_measure_t, n_cache),
     .elem_size = sizeof(jf_measure_cache_t), .optional = true, .omit_zero = true,
     .doc = "page-cache residency per epoch"},
    {.name = "thermal", .type = JF_SCHEMA_OBJ, S_M(thermal), .sub = &s_thermal_schema,
     S_HAS(jf_measure_t, has_thermal), .doc = "temperatures and clocks against the mode's"},
    {.name = "other_load", S_FLAT(&s_other_schema), S_HAS(jf_measure_t, has_other_load),
     .doc = "CPU time used outside the agent's process tree"},
    {.name = "gpu_before", S_FLAT(&s_gpu_before_schema), S_HAS(jf_measure_t, has_gpu_before),
     .doc = "GPU load before epoch 0 began: another process's"},
};
// clang-format on

static const jf_schema_t s_measure_schema = {.name = "measure",
                                             JF_SCHEMA_FIELDS(s_measure_fields),
                                             .words = JF_SCHEMA_WORDS_MEMBER,
                                             .also_allowed = s_kind,
                                             .path = "measure"};

const jf_schema_t *jf_measure_schema(void)
{
    return &s_measure_schema;
}

const jf_schema_t *jf_measure_power_schema(void)
{
    return &s_power_schema;
}
