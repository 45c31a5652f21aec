/* The telemetry sample's schema table (docs/telemetry.md lists the members, docs/schema.md the
 * table): known members typed and range-checked, unknown ones kept. The message checker
 * (jf_telemetry_sample_check, jf_msg_run.c) bounds the shape of every member first. */
#include "jf_telemetry_sample.h"

#include <errno.h>
#include <stdlib.h>

#define S_US_MAX    (INT64_C(1) << 62) // timestamps and counters, us
#define S_BYTES_MAX (INT64_C(1) << 62)
#define S_HZ_MAX    INT64_C(100000000000) // 100 GHz
#define S_MC_LO     INT64_C(-273150)      // absolute zero, milli-degrees Celsius
#define S_MC_HI     INT64_C(1000000)      // 1000 degrees: a broken sensor, not a board
#define S_MV_MAX    INT64_C(1000000)      // 1 kV
#define S_MA_MAX    INT64_C(1000000)      // 1 kA
#define S_UJ_MAX    (INT64_C(1) << 62)    // RAPL counters wrap far below this
#define S_COUNT_MAX (INT64_C(1) << 50)    // diskstats counters

// Tables read best one field to a row block; clang-format would put every member on a line.
// clang-format off
#define S_T jf_telemetry_sample_t
#define S_AT(rec, member) .offset = offsetof(rec, member), .size = sizeof(((rec *) 0)->member)
#define S_OPT(rec, member) .optional = true, .has_flag = true,                                    \
        .has_offset = offsetof(rec, has_##member)
#define S_I64(rec, member, lo_, hi_, unit_) .name = #member, .type = JF_SCHEMA_I64,               \
        S_AT(rec, member), .lo = (lo_), .hi = (hi_), .unit = (unit_), S_OPT(rec, member)
#define S_PCT(member) .name = #member, .type = JF_SCHEMA_NUM, S_AT(S_T, member), .lo_num = 0,     \
        .hi_num = 100, .unit = "percent", S_OPT(S_T, member)
#define S_ARR(member, max_, elem_size_) .name = #member, .type = JF_SCHEMA_ARR,                   \
        .offset = offsetof(S_T, member), .max_count = (max_), .elem_size = (elem_size_),          \
        .count_offset = offsetof(S_T, n_##member), S_OPT(S_T, member)

static const jf_schema_field_t s_key_elem = {.type = JF_SCHEMA_STR, .size = JF_SAMPLE_NAME_MAX + 1};
static const jf_schema_field_t s_load_elem = {.type = JF_SCHEMA_NUM, .size = sizeof(double),
                                              .lo_num = 0, .hi_num = 100, .nullable = true};
static const jf_schema_field_t s_freq_elem = {.type = JF_SCHEMA_I64, .size = sizeof(int64_t),
                                              .lo = 0, .hi = S_HZ_MAX, .nullable = true};
static const jf_schema_field_t s_gpc_elem = {.type = JF_SCHEMA_I64, .size = sizeof(int64_t),
                                             .lo = 0, .hi = S_HZ_MAX};
static const jf_schema_field_t s_online_elem = {.type = JF_SCHEMA_BOOL, .size = sizeof(bool)};

#define S_R jf_sample_rail_t
static const jf_schema_field_t s_rail_fields[] = {
    {.name = "name", .type = JF_SCHEMA_STR, S_AT(S_R, name)},
    {S_I64(S_R, voltage_mv, 0, S_MV_MAX, "mV")},
    {S_I64(S_R, current_ma, -S_MA_MAX, S_MA_MAX, "mA")},
    {S_I64(S_R, power_mw, -JF_SAMPLE_POWER_MAX_MW, JF_SAMPLE_POWER_MAX_MW, "mW")},
    {S_I64(S_R, avg_power_mw, -JF_SAMPLE_POWER_MAX_MW, JF_SAMPLE_POWER_MAX_MW, "mW")},
};

#define S_N jf_sample_named_t
static const jf_schema_field_t s_temp_fields[] = {
    {.name = "name", .type = JF_SCHEMA_STR, S_AT(S_N, name)},
    {.name = "value", .type = JF_SCHEMA_I64, S_AT(S_N, value), .lo = S_MC_LO, .hi = S_MC_HI,
     .unit = "mC"},
};
static const jf_schema_field_t s_rapl_fields[] = {
    {.name = "name", .type = JF_SCHEMA_STR, S_AT(S_N, name)},
    {.name = "value", .type = JF_SCHEMA_I64, S_AT(S_N, value), .lo = 0, .hi = S_UJ_MAX,
     .unit = "uJ"},
};

#define S_D jf_sample_disk_t
static const jf_schema_field_t s_disk_fields[] = {
    {.name = "device", .type = JF_SCHEMA_STR, S_AT(S_D, device)},
    {.name = "reads", .type = JF_SCHEMA_I64, S_AT(S_D, reads), .lo = 0, .hi = S_COUNT_MAX},
    {.name = "read_bytes", .type = JF_SCHEMA_I64, S_AT(S_D, read_bytes), .lo = 0,
     .hi = S_BYTES_MAX, .unit = "bytes"},
    {.name = "read_time_us", .type = JF_SCHEMA_I64, S_AT(S_D, read_time_us), .lo = 0,
     .hi = S_COUNT_MAX, .unit = "us"},
    {.name = "in_flight", .type = JF_SCHEMA_I64, S_AT(S_D, in_flight), .lo = 0,
     .hi = S_COUNT_MAX},
};
// clang-format on

#define S_SUB(name_, fields_)                                                                      \
    {                                                                                              \
        .name = (name_), JF_SCHEMA_FIELDS(fields_), .words = JF_SCHEMA_WORDS_MEMBER                \
    }
static const jf_schema_t s_rail_schema = S_SUB("rail", s_rail_fields);
static const jf_schema_t s_temp_schema = S_SUB("thermal zone", s_temp_fields);
static const jf_schema_t s_rapl_schema = S_SUB("RAPL zone", s_rapl_fields);
static const jf_schema_t s_disk_schema = S_SUB("disk", s_disk_fields);

// clang-format off
static const jf_schema_field_t s_fields[] = {
    {S_I64(S_T, t_us, 1, S_US_MAX, "us"), .doc = "wall clock (the message check requires it)"},
    {S_I64(S_T, mono_us, 0, S_US_MAX, "us"), .doc = "monotonic clock"},
    {.name = "board_type", .type = JF_SCHEMA_STR, S_AT(S_T, board_type), .optional = true,
     .omit_zero = true},
    {.name = "source", .type = JF_SCHEMA_STR, S_AT(S_T, source), .optional = true,
     .omit_zero = true},
    {S_ARR(from_tegrastats, JF_SAMPLE_KEYS_MAX, JF_SAMPLE_NAME_MAX + 1), .elem = &s_key_elem},
    {S_I64(S_T, tegrastats_age_us, 0, S_US_MAX, "us")},
    {S_PCT(cpu_load_pct)},
    {S_ARR(cpu_core_load_pct, JF_SAMPLE_CORES_MAX, sizeof(double)), .elem = &s_load_elem},
    {S_ARR(cpu_core_freq_hz, JF_SAMPLE_CORES_MAX, sizeof(int64_t)), .elem = &s_freq_elem},
    {S_ARR(cpu_online, JF_SAMPLE_CORES_MAX, sizeof(bool)), .elem = &s_online_elem},
    {S_PCT(gpu_load_pct)},
    {S_I64(S_T, gpu_freq_hz, 0, S_HZ_MAX, "Hz")},
    {S_ARR(gpu_gpc_freq_hz, JF_SAMPLE_GPCS_MAX, sizeof(int64_t)), .elem = &s_gpc_elem},
    {S_I64(S_T, emc_freq_hz, 0, S_HZ_MAX, "Hz")},
    {S_PCT(emc_load_pct)},
    {S_I64(S_T, ram_total_bytes, 0, S_BYTES_MAX, "bytes")},
    {S_I64(S_T, ram_used_bytes, 0, S_BYTES_MAX, "bytes")},
    {S_I64(S_T, ram_available_bytes, 0, S_BYTES_MAX, "bytes")},
    {S_I64(S_T, page_cache_bytes, 0, S_BYTES_MAX, "bytes")},
    {S_I64(S_T, swap_total_bytes, 0, S_BYTES_MAX, "bytes")},
    {S_I64(S_T, swap_used_bytes, 0, S_BYTES_MAX, "bytes")},
    {S_ARR(temps_mc, JF_SAMPLE_ZONES_MAX, sizeof(jf_sample_named_t)), .sub = &s_temp_schema,
     .map = true, .unit = "mC"},
    {S_ARR(rails, JF_SAMPLE_RAILS_MAX, sizeof(jf_sample_rail_t)), .sub = &s_rail_schema},
    {S_I64(S_T, input_power_mw, -JF_SAMPLE_POWER_MAX_MW, JF_SAMPLE_POWER_MAX_MW, "mW")},
    {.name = "disk", .type = JF_SCHEMA_OBJ, S_AT(S_T, disk), .sub = &s_disk_schema,
     S_OPT(S_T, disk)},
    {S_ARR(rapl_energy_uj, JF_SAMPLE_RAPL_MAX, sizeof(jf_sample_named_t)),
     .sub = &s_rapl_schema, .map = true, .unit = "uJ"},
    {S_ARR(rapl_max_energy_range_uj, JF_SAMPLE_RAPL_MAX, sizeof(jf_sample_named_t)),
     .sub = &s_rapl_schema, .map = true, .unit = "uJ"},
    {.name = "sim_speed", .type = JF_SCHEMA_NUM, S_AT(S_T, sim_speed), .lo_num = 0,
     .hi_num = 1e6, S_OPT(S_T, sim_speed)},
};
// clang-format on

// Open: the samples' member set grows with the readers (docs/telemetry.md); what this table does
// not know is kept, not refused. The checker's copy keeps nothing (it only looks).
static const jf_schema_t s_schema = {.name = "telemetry sample",
                                     JF_SCHEMA_FIELDS(s_fields),
                                     .words = JF_SCHEMA_WORDS_MEMBER,
                                     .open = true,
                                     .keep_extra = true,
                                     .extra_offset = offsetof(S_T, extra)};
static const jf_schema_t s_check_schema = {.name = "telemetry sample",
                                           JF_SCHEMA_FIELDS(s_fields),
                                           .words = JF_SCHEMA_WORDS_MEMBER,
                                           .open = true};

const jf_schema_t *jf_telemetry_sample_schema(void)
{
    return &s_schema;
}

int jf_telemetry_sample_decode(const json_t *obj, jf_telemetry_sample_t *ret, jf_err_t *err)
{
    *ret = (jf_telemetry_sample_t){0};
    return jf_schema_decode(&s_schema, obj, ret, err);
}

json_t *jf_telemetry_sample_encode(const jf_telemetry_sample_t *s)
{
    return jf_schema_encode(&s_schema, s);
}

int jf_telemetry_sample_check_typed(const json_t *obj, jf_err_t *err)
{
    // About 11 kB (the per-core arrays): not on the stack.
    jf_telemetry_sample_t *s = calloc(1, sizeof *s);
    int rc = s ? jf_schema_decode(&s_check_schema, obj, s, err)
               : jf_err_set(err, -ENOMEM, "out of memory");
    free(s);
    return rc;
}

void jf_telemetry_sample_fini(jf_telemetry_sample_t *s)
{
    jf_schema_fini(&s_schema, s);
}
