/* The thermal part of a board's parameters (sim_params_internal.h): `thermal: {ambient_c, zones:
 * [{type, r_c_per_w, tau_s}, ...], offline_zones: [type, ...], throttle: {temp_c, gpu_pct}}`
 * (throttle optional: simulated throttling, docs/simulator.md "Thermal"). Zone types must be
 * distinct; that they are exactly the family's zones is checked by the fake tree that writes them
 * (agent/platform/agent_sim_tree.c), which knows the sysfs layout. docs/simulator.md, "Thermal". */
#include "sim_params_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define S_AMBIENT_MIN_C  (-40.0) // sanity bounds in file units, not hardware facts
#define S_AMBIENT_MAX_C  100.0
#define S_R_MAX_C_PER_W  100.0
#define S_TAU_MIN_S      0.001
#define S_TAU_MAX_S      1e6
#define S_THROTTLE_MAX_C 200.0

static const char *const s_thermal_nested[] = {"zones", "offline_zones", "throttle"};
static const char *const s_type_key[] = {"type"};

static const sim_params_field_t s_thermal_fields[] = {
    SIM_PARAMS_D("ambient_c", sim_board_params_t, ambient_c, S_AMBIENT_MIN_C, S_AMBIENT_MAX_C,
                 SIM_PARAMS_ONE),
};

static const sim_params_field_t s_zone_fields[] = {
    SIM_PARAMS_D("r_c_per_w", sim_zone_params_t, r_c_per_w, 0, S_R_MAX_C_PER_W, SIM_PARAMS_ONE),
    SIM_PARAMS_D("tau_s", sim_zone_params_t, tau_s, S_TAU_MIN_S, S_TAU_MAX_S, SIM_PARAMS_ONE),
};

static const sim_params_field_t s_throttle_fields[] = {
    SIM_PARAMS_D("temp_c", sim_board_params_t, throttle_c, S_AMBIENT_MIN_C, S_THROTTLE_MAX_C,
                 SIM_PARAMS_ONE),
    SIM_PARAMS_D("gpu_pct", sim_board_params_t, throttle_gpu_pct, 1.0, 100.0, SIM_PARAMS_ONE),
};

static const sim_params_table_t s_throttle = {s_throttle_fields, SIM_PARAMS_N(s_throttle_fields),
                                              NULL, 0};

static const sim_params_table_t s_thermal = {s_thermal_fields, SIM_PARAMS_N(s_thermal_fields),
                                             s_thermal_nested, SIM_PARAMS_N(s_thermal_nested)};
static const sim_params_table_t s_zone = {s_zone_fields, SIM_PARAMS_N(s_zone_fields), s_type_key,
                                          1};

static bool s_is_zone_type(const char *text)
{
    size_t n = strlen(text);
    return n > 0 && n <= SIM_ZONE_TYPE_MAX &&
           strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

// A zone type from node (a scalar) into z->type, distinct from the b->n_zones read before.
static int s_read_type(const sim_board_params_t *b, const jf_yaml_node_t *node, const char *ctx,
                       sim_zone_params_t *z, jf_err_t *err)
{
    int rc = jf_yaml_node_to_str(node, z->type, sizeof z->type, err);
    if (rc == 0 && !s_is_zone_type(z->type)) {
        rc = jf_yaml_error(err, -EINVAL, node,
                           "zone type in %s must be 1 to %d of [A-Za-z0-9_-], got '%s'", ctx,
                           SIM_ZONE_TYPE_MAX, z->type);
    }
    for (size_t i = 0; rc == 0 && i < b->n_zones; i++) {
        if (strcmp(b->zones[i].type, z->type) == 0) {
            rc = jf_yaml_error(err, -EINVAL, node, "zone '%s' listed twice in %s", z->type, ctx);
        }
    }
    return rc;
}

// The value of a required key that must be a sequence of at most max - used entries (min
// entries at least); NULL with err if not.
static const jf_yaml_node_t *s_zone_list(const jf_yaml_node_t *map, const char *key, size_t min,
                                         size_t room, const char *ctx, jf_err_t *err)
{
    const jf_yaml_node_t *list = NULL;
    int rc = jf_yaml_node_require(map, key, ctx, &list, err);
    rc = rc != 0 ? rc : jf_yaml_node_expect(list, JF_YAML_SEQUENCE, err);
    if (rc != 0) {
        return NULL;
    }
    size_t n = jf_yaml_node_size(list);
    if (n < min || n > room) {
        (void) jf_yaml_error(err, -EINVAL, list, "'%s' in %s must list %zu to %zu zones, got %zu",
                             key, ctx, min, room, n); // the NULL says it failed
        return NULL;
    }
    return list;
}

static int s_parse_zones(sim_board_params_t *b, const jf_yaml_node_t *map, const char *ctx,
                         jf_err_t *err)
{
    const jf_yaml_node_t *list = s_zone_list(map, "zones", 1, SIM_ZONES_MAX, ctx, err);
    int rc = list ? 0 : -EINVAL;
    for (size_t i = 0; rc == 0 && i < jf_yaml_node_size(list); i++) {
        const jf_yaml_node_t *item = jf_yaml_node_item(list, i);
        sim_zone_params_t z = {0};
        const jf_yaml_node_t *type = NULL;
        char zctx[SIM_PARAMS_CTX_MAX];
        (void) snprintf(zctx, sizeof zctx, "zone %zu of %.60s", i + 1, ctx);
        rc = sim_params_record(item, &s_zone, zctx, &z, err);
        rc = rc != 0 ? rc : jf_yaml_node_require(item, "type", zctx, &type, err);
        rc = rc != 0 ? rc : s_read_type(b, type, ctx, &z, err);
        if (rc == 0) {
            b->zones[b->n_zones++] = z;
        }
    }
    return rc;
}

static int s_parse_offline(sim_board_params_t *b, const jf_yaml_node_t *map, const char *ctx,
                           jf_err_t *err)
{
    const jf_yaml_node_t *list =
        s_zone_list(map, "offline_zones", 0, SIM_ZONES_MAX - b->n_zones, ctx, err);
    int rc = list ? 0 : -EINVAL;
    for (size_t i = 0; rc == 0 && i < jf_yaml_node_size(list); i++) {
        sim_zone_params_t z = {.offline = true};
        rc = s_read_type(b, jf_yaml_node_item(list, i), ctx, &z, err);
        if (rc == 0) {
            b->zones[b->n_zones++] = z;
        }
    }
    return rc;
}

int sim_params_parse_thermal(sim_board_params_t *b, const jf_yaml_node_t *board_map,
                             const char *board_ctx, jf_err_t *err)
{
    char ctx[SIM_PARAMS_CTX_MAX];
    (void) snprintf(ctx, sizeof ctx, "thermal of %.60s", board_ctx);
    const jf_yaml_node_t *map = NULL;
    b->n_zones = 0;
    int rc = jf_yaml_node_require(board_map, "thermal", board_ctx, &map, err);
    rc = rc != 0 ? rc : jf_yaml_node_expect(map, JF_YAML_MAPPING, err);
    rc = rc != 0 ? rc : sim_params_record(map, &s_thermal, ctx, b, err);
    rc = rc != 0 ? rc : s_parse_zones(b, map, ctx, err);
    rc = rc != 0 ? rc : s_parse_offline(b, map, ctx, err);
    b->throttle_c = 0.0;
    b->throttle_gpu_pct = 100.0;
    const jf_yaml_node_t *throttle = rc == 0 ? jf_yaml_node_get(map, "throttle") : NULL;
    if (throttle) {
        char tctx[SIM_PARAMS_CTX_MAX];
        (void) snprintf(tctx, sizeof tctx, "throttle of %.60s", ctx);
        rc = jf_yaml_node_expect(throttle, JF_YAML_MAPPING, err);
        rc = rc != 0 ? rc : sim_params_record(throttle, &s_throttle, tctx, b, err);
    }
    if (rc != 0) {
        b->n_zones = 0;
    }
    return rc;
}
