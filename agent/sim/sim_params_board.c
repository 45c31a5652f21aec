/* The board part of the parameter loader (sim_params_internal.h): one record per Jetson type
 * with its specifications, power (dynamic figures, rails), nvpmodel modes and thermal zones
 * (sim_params_thermal.c). The modes must be exactly jf_board.h's (same ids and names), so that
 * the names stay defined in one place and this file only adds their operating points.
 * docs/simulator.md documents the keys. */
#include "sim_params_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define S_CUDA_CORES_MAX 1000000
#define S_MODE_ID_MAX    255  // nvpmodel ids are 0..255
#define S_FLOPS_MAX      1024 // per core per cycle
#define S_SPEED_MIN      0.01 // cpu_core_speed
#define S_BW_MAX         1e5  // GB/s
#define S_MW_MAX         1e6
#define S_SHARE_MAX      10.0 // a rail's share of a component's dynamic power

#define S_EFFICIENCY_SCALE_MAX 10.0 // gpu_efficiency x this must stay a share (checked in use)
#define S_OUTLIER_MIN          0.1  // outlier factors: at most 10x slower or lower
#define S_OUTLIER_MAX          10.0

static const char *const s_board_nested[] = {"power", "spread", "rails", "modes", "thermal"};
static const char *const s_name_key[] = {"name"};
static const jf_board_type_t s_jetsons[] = {JF_BOARD_AGX_XAVIER, JF_BOARD_XAVIER_NX, JF_BOARD_NANO,
                                            JF_BOARD_ORIN_AGX, JF_BOARD_ORIN_NANO};

static const sim_params_field_t s_board_fields[] = {
    SIM_PARAMS_I("gpu_cuda_cores", sim_board_params_t, gpu_cuda_cores, 1, S_CUDA_CORES_MAX),
    SIM_PARAMS_D("gpu_flops_per_core_cycle", sim_board_params_t, gpu_flops_per_core_cycle, 0.01,
                 S_FLOPS_MAX, SIM_PARAMS_ONE),
    SIM_PARAMS_D("gpu_max_mhz", sim_board_params_t, gpu_max_hz, 1, SIM_PARAMS_FREQ_MAX,
                 SIM_PARAMS_MHZ),
    SIM_PARAMS_I("cpu_cores", sim_board_params_t, cpu_cores, 1, SIM_PARAMS_CORES_MAX),
    SIM_PARAMS_D("cpu_core_speed", sim_board_params_t, cpu_core_speed, S_SPEED_MIN,
                 SIM_PARAMS_RATIO_MAX, SIM_PARAMS_ONE),
    SIM_PARAMS_D("cpu_max_mhz", sim_board_params_t, cpu_max_hz, 1, SIM_PARAMS_FREQ_MAX,
                 SIM_PARAMS_MHZ),
    SIM_PARAMS_D("emc_max_mhz", sim_board_params_t, emc_max_hz, 1, SIM_PARAMS_FREQ_MAX,
                 SIM_PARAMS_MHZ),
    SIM_PARAMS_D("dram_bandwidth_gb_per_s", sim_board_params_t, dram_bytes_per_s, 0.01, S_BW_MAX,
                 SIM_PARAMS_GB),
    SIM_PARAMS_D("ram_mib", sim_board_params_t, ram_bytes, 1, SIM_PARAMS_BYTES_MAX, SIM_PARAMS_MIB),
    SIM_PARAMS_D("os_mib", sim_board_params_t, os_bytes, 0, SIM_PARAMS_BYTES_MAX, SIM_PARAMS_MIB),
    SIM_PARAMS_D("runtime_mib", sim_board_params_t, runtime_bytes, 0, SIM_PARAMS_BYTES_MAX,
                 SIM_PARAMS_MIB),
    SIM_PARAMS_D("gpu_efficiency_scale", sim_board_params_t, gpu_efficiency_scale, 0.01,
                 S_EFFICIENCY_SCALE_MAX, SIM_PARAMS_ONE),
    SIM_PARAMS_D("dram_efficiency", sim_board_params_t, dram_efficiency, 0.01, 1, SIM_PARAMS_ONE),
    SIM_PARAMS_D("gpu_memory_stall_power", sim_board_params_t, gpu_memory_stall_power, 0, 1,
                 SIM_PARAMS_ONE),
};

static const sim_params_field_t s_power_fields[] = {
    SIM_PARAMS_D("cpu_core_mw", sim_board_params_t, dynamic_mw[SIM_LOAD_CPU], 0, S_MW_MAX,
                 SIM_PARAMS_ONE),
    SIM_PARAMS_D("gpu_mw", sim_board_params_t, dynamic_mw[SIM_LOAD_GPU], 0, S_MW_MAX,
                 SIM_PARAMS_ONE),
    SIM_PARAMS_D("dram_mw", sim_board_params_t, dynamic_mw[SIM_LOAD_DRAM], 0, S_MW_MAX,
                 SIM_PARAMS_ONE),
};

static const sim_params_field_t s_spread_fields[] = {
    SIM_PARAMS_D("compute_sigma", sim_board_params_t, spread.compute_sigma, 0, 1, SIM_PARAMS_ONE),
    SIM_PARAMS_D("storage_sigma", sim_board_params_t, spread.storage_sigma, 0, 1, SIM_PARAMS_ONE),
    SIM_PARAMS_D("idle_power_sigma", sim_board_params_t, spread.idle_power_sigma, 0, 1,
                 SIM_PARAMS_ONE),
    SIM_PARAMS_D("outlier_probability", sim_board_params_t, spread.outlier_probability, 0, 1,
                 SIM_PARAMS_ONE),
    SIM_PARAMS_D("outlier_compute_factor", sim_board_params_t, spread.outlier_compute_factor,
                 S_OUTLIER_MIN, S_OUTLIER_MAX, SIM_PARAMS_ONE),
    SIM_PARAMS_D("outlier_idle_power_factor", sim_board_params_t, spread.outlier_idle_power_factor,
                 S_OUTLIER_MIN, S_OUTLIER_MAX, SIM_PARAMS_ONE),
};

static const sim_params_field_t s_rail_fields[] = {
    SIM_PARAMS_D("idle_mw", sim_rail_params_t, idle_mw, 0, S_MW_MAX, SIM_PARAMS_ONE),
    SIM_PARAMS_D("cpu", sim_rail_params_t, share[SIM_LOAD_CPU], 0, S_SHARE_MAX, SIM_PARAMS_ONE),
    SIM_PARAMS_D("gpu", sim_rail_params_t, share[SIM_LOAD_GPU], 0, S_SHARE_MAX, SIM_PARAMS_ONE),
    SIM_PARAMS_D("dram", sim_rail_params_t, share[SIM_LOAD_DRAM], 0, S_SHARE_MAX, SIM_PARAMS_ONE),
};

static const sim_params_field_t s_mode_fields[] = {
    SIM_PARAMS_I("id", sim_mode_params_t, id, 0, S_MODE_ID_MAX),
    SIM_PARAMS_I("cores", sim_mode_params_t, cores, 1, SIM_PARAMS_CORES_MAX),
    SIM_PARAMS_D("cpu_mhz", sim_mode_params_t, cpu_hz, 1, SIM_PARAMS_FREQ_MAX, SIM_PARAMS_MHZ),
    SIM_PARAMS_D("gpu_mhz", sim_mode_params_t, gpu_hz, 1, SIM_PARAMS_FREQ_MAX, SIM_PARAMS_MHZ),
    SIM_PARAMS_D("emc_mhz", sim_mode_params_t, emc_hz, 1, SIM_PARAMS_FREQ_MAX, SIM_PARAMS_MHZ),
    SIM_PARAMS_I("gpu_cores", sim_mode_params_t, gpu_cores, 1, S_CUDA_CORES_MAX),
};

static const sim_params_table_t s_board = {s_board_fields, SIM_PARAMS_N(s_board_fields),
                                           s_board_nested, SIM_PARAMS_N(s_board_nested)};
static const sim_params_table_t s_power = {s_power_fields, SIM_PARAMS_N(s_power_fields), NULL, 0};
static const sim_params_table_t s_spread = {s_spread_fields, SIM_PARAMS_N(s_spread_fields), NULL,
                                            0};
static const sim_params_table_t s_rail = {s_rail_fields, SIM_PARAMS_N(s_rail_fields), s_name_key,
                                          1};
static const sim_params_table_t s_mode = {s_mode_fields, SIM_PARAMS_N(s_mode_fields), s_name_key,
                                          1};

// The value of a required key that must be a sequence of 1..max entries; NULL with err if not.
static const jf_yaml_node_t *s_require_list(const jf_yaml_node_t *map, const char *key, size_t max,
                                            const char *ctx, jf_err_t *err)
{
    const jf_yaml_node_t *list = NULL;
    int rc = jf_yaml_node_require(map, key, ctx, &list, err);
    rc = rc != 0 ? rc : jf_yaml_node_expect(list, JF_YAML_SEQUENCE, err);
    if (rc != 0) {
        return NULL;
    }
    size_t n = jf_yaml_node_size(list);
    if (n == 0 || n > max) {
        (void) jf_yaml_error(err, -EINVAL, list, "'%s' in %s must list 1 to %zu entries, got %zu",
                             key, ctx, max, n); // the NULL says it failed
        return NULL;
    }
    return list;
}

// A name that must be 1..32 of [A-Za-z0-9_] (rails and modes, as the boards spell them).
static int s_read_name(const jf_yaml_node_t *map, const char *ctx, char *out, jf_err_t *err)
{
    const jf_yaml_node_t *v = NULL;
    int rc = jf_yaml_node_require(map, "name", ctx, &v, err);
    rc = rc != 0 ? rc : jf_yaml_node_to_str(v, out, SIM_RAIL_NAME_MAX + 1, err);
    if (rc == 0 && !jf_board_is_mode_name(out)) {
        rc =
            jf_yaml_error(err, -EINVAL, v, "'name' in %s must be 1 to %d of [A-Za-z0-9_], got '%s'",
                          ctx, SIM_RAIL_NAME_MAX, out);
    }
    return rc;
}

static int s_parse_rails(sim_board_params_t *b, const jf_yaml_node_t *map, const char *board_ctx,
                         jf_err_t *err)
{
    const jf_yaml_node_t *list = s_require_list(map, "rails", SIM_RAILS_MAX, board_ctx, err);
    int rc = list ? 0 : -EINVAL;
    for (size_t i = 0; rc == 0 && i < jf_yaml_node_size(list); i++) {
        const jf_yaml_node_t *item = jf_yaml_node_item(list, i);
        sim_rail_params_t *rail = &b->rails[i];
        char ctx[SIM_PARAMS_CTX_MAX];
        (void) snprintf(ctx, sizeof ctx, "rail %zu of %.48s", i + 1, board_ctx);
        rc = sim_params_record(item, &s_rail, ctx, rail, err);
        rc = rc != 0 ? rc : s_read_name(item, ctx, rail->name, err);
        for (size_t j = 0; rc == 0 && j < i; j++) {
            if (strcmp(b->rails[j].name, rail->name) == 0) {
                rc = jf_yaml_error(err, -EINVAL, item, "rail '%s' listed twice in %s", rail->name,
                                   board_ctx);
            }
        }
    }
    b->n_rails = rc == 0 ? jf_yaml_node_size(list) : 0;
    return rc;
}

// Index of mode id in the family table, or -1.
static int s_family_index(const jf_board_family_t *family, int id)
{
    for (size_t i = 0; i < family->n_modes; i++) {
        if (family->modes[i].id == id) {
            return (int) i;
        }
    }
    return -1;
}

// A mode's operating point must lie within the board's limits.
static int s_check_mode_limits(const sim_board_params_t *b, const sim_mode_params_t *m,
                               const jf_yaml_node_t *item, const char *ctx, jf_err_t *err)
{
    if (m->cores > b->cpu_cores || m->gpu_cores > b->gpu_cuda_cores) {
        return jf_yaml_error(err, -EINVAL, item,
                             "mode %d of %s has %d cores and %d GPU cores, expected at most the "
                             "board's %d and %d",
                             m->id, ctx, m->cores, m->gpu_cores, b->cpu_cores, b->gpu_cuda_cores);
    }
    if (m->cpu_hz > b->cpu_max_hz || m->gpu_hz > b->gpu_max_hz || m->emc_hz > b->emc_max_hz) {
        return jf_yaml_error(err, -EINVAL, item,
                             "mode %d of %s has a clock above the board's cpu_max_mhz, "
                             "gpu_max_mhz or emc_max_mhz",
                             m->id, ctx);
    }
    return 0;
}

// The state of one board's mode list while its items are read.
typedef struct s_modes {
    sim_board_params_t *board;       // borrowed; receives the modes
    const jf_board_family_t *family; // borrowed (static): jf_board.h's modes of the type
    bool seen[JF_POWER_MODES_MAX];   // family index -> listed already
    const char *board_ctx;           // borrowed: "board '<type>'"
} s_modes_t;

// One mode item (entry index of the list): its fields, then its id and name against
// jf_board.h; stored at the family's index so that the modes keep jf_board.h's order.
static int s_parse_mode(s_modes_t *ms, const jf_yaml_node_t *item, size_t index, jf_err_t *err)
{
    sim_mode_params_t m = {0};
    char ctx[SIM_PARAMS_CTX_MAX];
    (void) snprintf(ctx, sizeof ctx, "mode entry %zu of %.48s", index + 1, ms->board_ctx);
    int rc = sim_params_record(item, &s_mode, ctx, &m, err);
    rc = rc != 0 ? rc : s_read_name(item, ctx, m.name, err);
    if (rc != 0) {
        return rc;
    }
    int at = s_family_index(ms->family, m.id);
    if (at < 0 || strcmp(ms->family->modes[at].name, m.name) != 0) {
        return jf_yaml_error(err, -EINVAL, item,
                             "mode %d '%s' is not a mode of %s in jf_board.h (same id and name)",
                             m.id, m.name, ms->board_ctx);
    }
    if (ms->seen[at]) {
        return jf_yaml_error(err, -EINVAL, item, "mode %d listed twice in %s", m.id, ms->board_ctx);
    }
    rc = s_check_mode_limits(ms->board, &m, item, ms->board_ctx, err);
    if (rc == 0) {
        ms->seen[at] = true;
        ms->board->modes[at] = m;
    }
    return rc;
}

static int s_parse_modes(sim_board_params_t *b, jf_board_type_t type, const jf_yaml_node_t *map,
                         const char *board_ctx, jf_err_t *err)
{
    s_modes_t ms = {.board = b, .family = jf_board_family(type), .board_ctx = board_ctx};
    const jf_yaml_node_t *list = s_require_list(map, "modes", JF_POWER_MODES_MAX, board_ctx, err);
    int rc = list ? 0 : -EINVAL;
    for (size_t i = 0; rc == 0 && i < jf_yaml_node_size(list); i++) {
        rc = s_parse_mode(&ms, jf_yaml_node_item(list, i), i, err);
    }
    for (size_t i = 0; rc == 0 && i < ms.family->n_modes; i++) {
        if (!ms.seen[i]) {
            rc = jf_yaml_error(err, -EINVAL, list, "mode %d '%s' of %s (jf_board.h) is missing",
                               ms.family->modes[i].id, ms.family->modes[i].name, board_ctx);
        }
    }
    b->n_modes = rc == 0 ? ms.family->n_modes : 0;
    return rc;
}

// The record under key of the board's map (its context "<key> of <board ctx>") into b.
static int s_parse_nested(const jf_yaml_node_t *map, const char *key,
                          const sim_params_table_t *table, const char *board_ctx,
                          sim_board_params_t *b, jf_err_t *err)
{
    char ctx[SIM_PARAMS_CTX_MAX];
    (void) snprintf(ctx, sizeof ctx, "%s of %.64s", key, board_ctx);
    const jf_yaml_node_t *node = NULL;
    int rc = jf_yaml_node_require(map, key, board_ctx, &node, err);
    return rc != 0 ? rc : sim_params_record(node, table, ctx, b, err);
}

static int s_parse_board(sim_params_t *p, jf_board_type_t type, const jf_yaml_node_t *map,
                         jf_err_t *err)
{
    sim_board_params_t *b = &p->boards[type];
    char ctx[SIM_PARAMS_CTX_MAX];
    (void) snprintf(ctx, sizeof ctx, "board '%s'", jf_board_type_name(type));
    int rc = sim_params_record(map, &s_board, ctx, b, err);
    rc = rc != 0 ? rc : s_parse_nested(map, "power", &s_power, ctx, b, err);
    rc = rc != 0 ? rc : s_parse_nested(map, "spread", &s_spread, ctx, b, err);
    rc = rc != 0 ? rc : s_parse_rails(b, map, ctx, err);
    rc = rc != 0 ? rc : s_parse_modes(b, type, map, ctx, err);
    rc = rc != 0 ? rc : sim_params_parse_thermal(b, map, ctx, err);
    b->present = rc == 0;
    return rc;
}

// The board type a key names; only the Jetson types have parameters.
static int s_board_key(const jf_yaml_node_t *key, jf_board_type_t *ret_type, jf_err_t *err)
{
    const char *name = jf_yaml_node_text(key);
    jf_board_type_t type = JF_BOARD_TYPE_COUNT;
    bool ok = jf_board_type_parse(name, &type);
    for (size_t i = 0; ok && i < SIM_PARAMS_N(s_jetsons); i++) {
        if (s_jetsons[i] == type) {
            *ret_type = type;
            return 0;
        }
    }
    return jf_yaml_error(err, -EINVAL, key,
                         "unknown board type '%.64s' in boards, expected one of: agx-xavier, "
                         "xavier-nx, nano, orin-agx, orin-nano",
                         name);
}

int sim_params_parse_boards(sim_params_t *p, const jf_yaml_node_t *root, jf_err_t *err)
{
    const jf_yaml_node_t *boards = NULL;
    int rc = jf_yaml_node_require(root, "boards", SIM_PARAMS_FILE_CTX, &boards, err);
    rc = rc != 0 ? rc : jf_yaml_node_expect(boards, JF_YAML_MAPPING, err);
    for (size_t i = 0; rc == 0 && i < jf_yaml_node_size(boards); i++) {
        jf_board_type_t type = JF_BOARD_TYPE_COUNT;
        rc = s_board_key(jf_yaml_node_key(boards, i), &type, err);
        rc = rc != 0 ? rc : s_parse_board(p, type, jf_yaml_node_value(boards, i), err);
    }
    for (size_t i = 0; rc == 0 && i < SIM_PARAMS_N(s_jetsons); i++) {
        if (!p->boards[s_jetsons[i]].present) {
            rc = jf_yaml_error(err, -EINVAL, boards, "board '%s' is missing from boards",
                               jf_board_type_name(s_jetsons[i]));
        }
    }
    return rc;
}
