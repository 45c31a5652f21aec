/* Sweep files (jf_sweep.h): validate against a fleet and expand into runs in a fixed order
 * (board, workload, power mode, dvfs, storage, workers, batch size, repeat), then exclude and
 * include rules. Stops at the first error, which names file:line:col. Does not store or schedule
 * runs. Workloads, settings and the run-id set are in jf_sweep_parts.c, custom points in
 * jf_sweep_power.c, the expansion into runs in jf_sweep_expand.c. Format: docs/sweeps.md. */
#include "jf_sweep_internal.h"

#include "jf_board_clocks.h"
#include "jf_run_runtime.h"
#include "jf_units.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_RULES_MAX       256 // entries of exclude, and of include
#define S_DEFAULT_WORKERS 0
#define S_DEFAULT_BATCH   16
#define S_CONTEXT_MAX     48

#define S_COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *const s_top_keys[] = {
    "name",        "description",  "target",  "workloads", "power_modes", "storage",
    "workers",     "batch_sizes",  "repeats", "prefetch",  "threads",     "seed",
    "drop_caches", "telemetry_hz", "timeout", "exclude",   "include",     "dvfs",
    "idle_s",      "runtime",      "roofline",    "fl_round"};
static const char *const s_target_keys[] = {"device_types", "boards", "labels"};

// The id a power-mode reference names when it is all digits, else -1.
static int64_t s_mode_id(const char *text)
{
    int64_t id = -1;
    bool digits = text[0] != '\0' && strspn(text, "0123456789") == strlen(text);
    if (!digits || jf_parse_i64(text, 0, INT32_MAX, &id, NULL) != 0) {
        return -1;
    }
    return id;
}

static int s_check_board(const jf_sweep_ctx_t *ctx, const jf_yaml_node_t *item, jf_err_t *err)
{
    if (!jf_fleet_config_board(ctx->fleet, jf_yaml_node_text(item))) {
        return jf_yaml_error(err, -EINVAL, item, "no board '%.64s' in the fleet '%s'",
                             jf_yaml_node_text(item), ctx->fleet->source);
    }
    return 0;
}

static int s_check_device_type(const jf_yaml_node_t *item, jf_err_t *err)
{
    jf_board_type_t type = JF_BOARD_SIM;
    if (!jf_board_type_parse(jf_yaml_node_text(item), &type)) {
        return jf_yaml_error(err, -EINVAL, item, "unknown device type '%.64s', expected one of: %s",
                             jf_yaml_node_text(item), jf_board_type_names());
    }
    if (type == JF_BOARD_SIM) {
        return jf_yaml_error(err, -EINVAL, item,
                             "device type 'sim' matches nothing: simulated boards count as the "
                             "type they simulate");
    }
    return 0;
}

static int s_check_label(const jf_yaml_node_t *item, jf_err_t *err)
{
    if (!jf_parse_is_ident(jf_yaml_node_text(item))) {
        return jf_yaml_error(err, -EINVAL, item, "'%.64s' is not a valid label",
                             jf_yaml_node_text(item));
    }
    return 0;
}

static int s_check_workload(const jf_sweep_ctx_t *ctx, const jf_yaml_node_t *item, jf_err_t *err)
{
    for (size_t i = 0; i < ctx->n_workloads; i++) {
        if (strcmp(ctx->workloads[i].name, jf_yaml_node_text(item)) == 0) {
            return 0;
        }
    }
    return jf_yaml_error(err, -EINVAL, item, "'%.64s' is not one of this sweep's workloads",
                         jf_yaml_node_text(item));
}

static int s_check_mode(const jf_sweep_ctx_t *ctx, const jf_yaml_node_t *item, int64_t *ret_num,
                        jf_err_t *err)
{
    const char *text = jf_yaml_node_text(item);
    if (strcmp(text, JF_SWEEP_CUSTOM_TEXT) == 0) {
        return 0; // a rule's name for every custom point (an axis rejects it before this)
    }
    for (size_t i = 0; i < ctx->fleet->n_boards; i++) {
        if (ctx->targeted[i] && jf_board_spec_mode(&ctx->fleet->boards[i], text)) {
            *ret_num = s_mode_id(text);
            return 0;
        }
    }
    return jf_yaml_error(err, -EINVAL, item,
                         "power mode '%.64s' is not valid for any targeted board", text);
}

static int s_check_storage(const jf_sweep_ctx_t *ctx, const jf_yaml_node_t *item, jf_err_t *err)
{
    const char *text = jf_yaml_node_text(item);
    int rc =
        jf_sweep_check_vocab(item, jf_run_spec_is_medium, "medium", jf_run_spec_media(), err);
    for (size_t i = 0; rc == 0 && i < ctx->fleet->n_boards; i++) {
        if (ctx->targeted[i] && jf_board_spec_storage(&ctx->fleet->boards[i], text)) {
            return 0;
        }
    }
    return rc ? rc : jf_yaml_error(err, -EINVAL, item, "no targeted board has medium '%s'", text);
}

static int s_check_dvfs(const jf_yaml_node_t *item, int64_t *ret_num, jf_err_t *err)
{
    const char *text = jf_yaml_node_text(item);
    bool on = strcmp(text, "on") == 0, off = strcmp(text, "off") == 0;
    if (!on && !off) {
        return jf_yaml_error(err, -EINVAL, item, "dvfs '%.64s', expected on or off", text);
    }
    *ret_num = off ? 1 : 0;
    return 0;
}

// Checks one scalar value of a rule key or axis. *ret_num is its number (workers, batch size,
// repeat), a power mode's id when given as digits, else -1.
static int s_check_value(const jf_sweep_ctx_t *ctx, jf_sweep_key_t key, const jf_yaml_node_t *item,
                         int64_t *ret_num, jf_err_t *err)
{
    *ret_num = -1;
    switch (key) {
    case JF_SWEEP_KEY_BOARD:
        return s_check_board(ctx, item, err);
    case JF_SWEEP_KEY_DEVICE_TYPE:
        return s_check_device_type(item, err);
    case JF_SWEEP_KEY_LABEL:
        return s_check_label(item, err);
    case JF_SWEEP_KEY_WORKLOAD:
        return s_check_workload(ctx, item, err);
    case JF_SWEEP_KEY_MODEL:
        return jf_sweep_check_vocab(item, jf_run_spec_is_model, "model", jf_run_spec_models(),
                                    err);
    case JF_SWEEP_KEY_DATASET:
        return jf_sweep_check_vocab(item, jf_run_spec_is_dataset, "dataset",
                                    jf_run_spec_datasets(), err);
    case JF_SWEEP_KEY_POWER_MODE:
        return s_check_mode(ctx, item, ret_num, err);
    case JF_SWEEP_KEY_DVFS:
        return s_check_dvfs(item, ret_num, err);
    case JF_SWEEP_KEY_STORAGE:
        return s_check_storage(ctx, item, err);
    case JF_SWEEP_KEY_WORKERS:
        return jf_yaml_node_to_i64(item, 0, JF_WORKERS_MAX, ret_num, err);
    case JF_SWEEP_KEY_BATCH_SIZE:
        return jf_yaml_node_to_i64(item, 1, JF_BATCH_MAX, ret_num, err);
    case JF_SWEEP_KEY_REPEAT:
        return jf_yaml_node_to_i64(item, 0, JF_REPEATS_MAX - 1, ret_num, err);
    case JF_SWEEP_KEY_RUNTIME:
        return jf_sweep_check_vocab(item, jf_run_runtime_is_valid, "runtime", "bare, container",
                                    err);
    default:
        return jf_yaml_error(err, -EINVAL, item, "internal error: rule key %d", (int) key);
    }
}

// True if the combination has the value (text, or num for number keys and power-mode ids).
static bool s_match_value(jf_sweep_key_t key, const jf_sweep_combo_t *c, const char *text,
                          int64_t num)
{
    switch (key) {
    case JF_SWEEP_KEY_BOARD:
        return strcmp(c->board->name, text) == 0;
    case JF_SWEEP_KEY_DEVICE_TYPE:
        return strcmp(jf_board_type_name(c->board->simulates), text) == 0;
    case JF_SWEEP_KEY_LABEL:
        return jf_board_spec_has_label(c->board, text);
    case JF_SWEEP_KEY_WORKLOAD:
        return strcmp(c->workload->name, text) == 0;
    case JF_SWEEP_KEY_MODEL:
        return strcmp(c->workload->model, text) == 0;
    case JF_SWEEP_KEY_DATASET:
        return strcmp(c->workload->dataset, text) == 0;
    case JF_SWEEP_KEY_POWER_MODE:
        if (c->custom) {
            return strcmp(text, JF_SWEEP_CUSTOM_TEXT) == 0;
        }
        return c->mode && (num >= 0 ? c->mode->id == num : strcmp(c->mode->name, text) == 0);
    case JF_SWEEP_KEY_DVFS:
        return c->dvfs_off == (num == 1);
    case JF_SWEEP_KEY_STORAGE:
        return strcmp(c->storage, text) == 0;
    case JF_SWEEP_KEY_WORKERS:
        return c->workers == num;
    case JF_SWEEP_KEY_BATCH_SIZE:
        return c->batch_size == num;
    case JF_SWEEP_KEY_REPEAT:
        return c->repeat == num;
    case JF_SWEEP_KEY_RUNTIME:
        return jf_run_runtime_is_container(c->runtime) == jf_run_runtime_is_container(text);
    default:
        return false;
    }
}

static const struct {
    const char *name; // rule key
    bool numeric;     // values compare as numbers, not text
} s_keys[JF_SWEEP_KEY_COUNT] = {
    [JF_SWEEP_KEY_BOARD] = {"board", false},
    [JF_SWEEP_KEY_DEVICE_TYPE] = {"device_type", false},
    [JF_SWEEP_KEY_LABEL] = {"label", false},
    [JF_SWEEP_KEY_WORKLOAD] = {"workload", false},
    [JF_SWEEP_KEY_MODEL] = {"model", false},
    [JF_SWEEP_KEY_DATASET] = {"dataset", false},
    [JF_SWEEP_KEY_POWER_MODE] = {"power_mode", false},
    [JF_SWEEP_KEY_DVFS] = {"dvfs", true},
    [JF_SWEEP_KEY_STORAGE] = {"storage", false},
    [JF_SWEEP_KEY_WORKERS] = {"workers", true},
    [JF_SWEEP_KEY_BATCH_SIZE] = {"batch_size", true},
    [JF_SWEEP_KEY_REPEAT] = {"repeat", true},
    [JF_SWEEP_KEY_RUNTIME] = {"runtime", false},
};

static bool s_axis_has(const jf_sweep_axis_t *axis, bool numeric, const char *text, int64_t num)
{
    for (size_t i = 0; i < axis->n; i++) {
        if (numeric ? axis->nums[i] == num : strcmp(axis->texts[i], text) == 0) {
            return true;
        }
    }
    return false;
}

// Fills axis from a scalar (one value) or a sequence of scalars, checking each value for key.
static int s_axis_fill(const jf_sweep_ctx_t *ctx, jf_sweep_key_t key, const jf_yaml_node_t *v,
                       jf_sweep_axis_t *axis, jf_err_t *err)
{
    bool seq = jf_yaml_node_kind(v) == JF_YAML_SEQUENCE;
    size_t n = seq ? jf_yaml_node_size(v) : 1;
    int rc = seq ? 0 : jf_yaml_node_expect(v, JF_YAML_SCALAR, err);
    if (rc == 0 && (n == 0 || n > JF_SWEEP_AXIS_MAX)) {
        return jf_yaml_error(err, -EINVAL, v, "expected a list of 1..%d values, got %zu",
                             JF_SWEEP_AXIS_MAX, n);
    }
    axis->n = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const jf_yaml_node_t *item = seq ? jf_yaml_node_item(v, i) : v;
        int64_t num = -1;
        rc = jf_yaml_node_expect(item, JF_YAML_SCALAR, err);
        rc = rc ? rc : s_check_value(ctx, key, item, &num, err);
        const char *text = jf_yaml_node_text(item);
        if (rc == 0 && s_axis_has(axis, s_keys[key].numeric, text, num)) {
            return jf_yaml_error(err, -EINVAL, item, "'%.64s' is listed twice", text);
        }
        axis->nodes[axis->n] = item;
        axis->texts[axis->n] = text;
        axis->nums[axis->n++] = num;
    }
    return rc;
}

static void s_axis_single(jf_sweep_axis_t *axis, int64_t num)
{
    axis->n = 1;
    axis->nodes[0] = NULL;
    axis->texts[0] = NULL;
    axis->nums[0] = num;
}

bool jf_sweep_rule_matches(const jf_sweep_rule_t *rule, const jf_sweep_combo_t *c,
                           jf_sweep_key_t first, jf_sweep_key_t end)
{
    for (int k = (int) first; k < (int) end; k++) {
        const jf_sweep_axis_t *values = &rule->values[k];
        bool any = !rule->has[k];
        for (size_t i = 0; !any && i < values->n; i++) {
            any = s_match_value((jf_sweep_key_t) k, c, values->texts[i], values->nums[i]);
        }
        if (!any) {
            return false;
        }
    }
    return true;
}

// Marks the boards that key's values select, and fails on a value that selects none.
static int s_target_boards(jf_sweep_ctx_t *ctx, jf_sweep_key_t key, const jf_sweep_axis_t *values,
                           jf_err_t *err)
{
    for (size_t i = 0; i < values->n; i++) {
        bool any = false;
        for (size_t b = 0; b < ctx->fleet->n_boards; b++) {
            jf_sweep_combo_t c = {.board = &ctx->fleet->boards[b]};
            bool hit = s_match_value(key, &c, values->texts[i], values->nums[i]);
            ctx->targeted[b] = ctx->targeted[b] || hit;
            any = any || hit;
        }
        if (!any) {
            return jf_yaml_error(err, -EINVAL, values->nodes[i],
                                 "target %s '%.64s' matches no board in the fleet '%s'",
                                 s_keys[key].name, values->texts[i], ctx->fleet->source);
        }
    }
    return 0;
}

static int s_parse_target(jf_sweep_ctx_t *ctx, jf_err_t *err)
{
    const jf_yaml_node_t *t = NULL;
    int rc = jf_yaml_node_require(ctx->root, "target", "the sweep", &t, err);
    rc = rc ? rc : jf_yaml_check_keys(t, s_target_keys, S_COUNT(s_target_keys), "target", err);
    if (rc == 0 && jf_yaml_node_size(t) != 1) {
        return jf_yaml_error(err, -EINVAL, t,
                             "target must have exactly one of: device_types, boards, labels");
    }
    if (rc != 0) {
        return rc;
    }
    const char *which = jf_yaml_node_text(jf_yaml_node_key(t, 0));
    jf_sweep_key_t key = strcmp(which, "boards") == 0   ? JF_SWEEP_KEY_BOARD
                         : strcmp(which, "labels") == 0 ? JF_SWEEP_KEY_LABEL
                                                        : JF_SWEEP_KEY_DEVICE_TYPE;
    jf_sweep_axis_t *values = calloc(1, sizeof *values);
    if (!values) {
        return jf_err_set(err, -ENOMEM, "%s: out of memory", ctx->sweep->source);
    }
    rc = s_axis_fill(ctx, key, jf_yaml_node_value(t, 0), values, err);
    rc = rc ? rc : s_target_boards(ctx, key, values, err);
    free(values);
    return rc;
}

// An optional number axis: the values given, or the single default.
static int s_number_axis(const jf_sweep_ctx_t *ctx, jf_sweep_key_t key, const char *yaml_key,
                         jf_sweep_axis_t *axis, jf_err_t *err)
{
    const jf_yaml_node_t *v = jf_yaml_node_get(ctx->root, yaml_key);
    if (v) {
        return s_axis_fill(ctx, key, v, axis, err);
    }
    s_axis_single(axis, key == JF_SWEEP_KEY_WORKERS ? S_DEFAULT_WORKERS : S_DEFAULT_BATCH);
    return 0;
}

// DVFS off must be possible on some targeted board: a Jetson or a sim board, not a host.
static int s_check_dvfs_boards(const jf_sweep_ctx_t *ctx, const jf_sweep_axis_t *dvfs,
                               jf_err_t *err)
{
    for (size_t i = 0; i < dvfs->n; i++) {
        if (dvfs->nums[i] != 1) {
            continue;
        }
        for (size_t b = 0; b < ctx->fleet->n_boards; b++) {
            if (ctx->targeted[b] && jf_board_clocks(ctx->fleet->boards[b].simulates)) {
                return 0;
            }
        }
        return jf_yaml_error(err, -EINVAL, dvfs->nodes[i],
                             "dvfs off needs a Jetson (or a sim board); no targeted board is one");
    }
    return 0;
}

// A custom entry of the power-mode axis: parsed, not a repeat, and runnable on some targeted
// board (else the first targeted board's reason is the error).
static int s_add_custom(jf_sweep_ctx_t *ctx, const jf_yaml_node_t *item, jf_sweep_axis_t *axis,
                        jf_err_t *err)
{
    jf_sweep_custom_t *c = &ctx->customs[ctx->n_customs];
    int rc = jf_sweep_custom_parse(item, c, err);
    for (size_t i = 0; rc == 0 && i < ctx->n_customs; i++) {
        if (jf_sweep_custom_same(&ctx->customs[i], c)) {
            return jf_yaml_error(err, -EINVAL, item, "this custom point is listed twice");
        }
    }
    jf_err_t first = {0};
    bool fits = false;
    for (size_t b = 0; rc == 0 && !fits && b < ctx->fleet->n_boards; b++) {
        jf_err_t why = {0};
        fits = ctx->targeted[b] && jf_sweep_custom_check(c, &ctx->fleet->boards[b], &why) == 0;
        first = ctx->targeted[b] && !first.code ? why : first;
    }
    if (rc == 0 && !fits) {
        return jf_err_set(err, first.code ? first.code : -EINVAL, "%s; no targeted board can run "
                          "this custom point", first.msg);
    }
    axis->nodes[axis->n] = item;
    axis->texts[axis->n] = JF_SWEEP_CUSTOM_TEXT;
    axis->nums[axis->n++] = JF_SWEEP_CUSTOM_NUM(ctx->n_customs++);
    return rc;
}

// The power_modes axis: mode names or ids, and custom entries (mappings).
static int s_fill_modes(jf_sweep_ctx_t *ctx, const jf_yaml_node_t *v, jf_sweep_axis_t *axis,
                        jf_err_t *err)
{
    bool seq = jf_yaml_node_kind(v) == JF_YAML_SEQUENCE;
    size_t n = seq ? jf_yaml_node_size(v) : 1;
    if (n == 0 || n > JF_SWEEP_AXIS_MAX) {
        return jf_yaml_error(err, -EINVAL, v, "expected a list of 1..%d values, got %zu",
                             JF_SWEEP_AXIS_MAX, n);
    }
    axis->n = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const jf_yaml_node_t *item = seq ? jf_yaml_node_item(v, i) : v;
        if (jf_yaml_node_kind(item) == JF_YAML_MAPPING) {
            rc = s_add_custom(ctx, item, axis, err);
            continue;
        }
        int64_t num = -1;
        rc = jf_yaml_node_expect(item, JF_YAML_SCALAR, err);
        const char *text = rc ? "" : jf_yaml_node_text(item);
        if (rc == 0 && strcmp(text, JF_SWEEP_CUSTOM_TEXT) == 0) {
            return jf_yaml_error(err, -EINVAL, item,
                                 "a custom power mode needs its point: {custom: {cores: N, "
                                 "cpu_freq: F}} (docs/sweeps.md)");
        }
        rc = rc ? rc : s_check_mode(ctx, item, &num, err);
        if (rc == 0 && s_axis_has(axis, false, text, num)) {
            return jf_yaml_error(err, -EINVAL, item, "'%.64s' is listed twice", text);
        }
        axis->nodes[axis->n] = item;
        axis->texts[axis->n] = text;
        axis->nums[axis->n++] = num;
    }
    return rc;
}

static int s_parse_axes(jf_sweep_ctx_t *ctx, jf_err_t *err)
{
    jf_sweep_plan_t *p = &ctx->main;
    p->apply_excludes = true;
    const jf_yaml_node_t *v = jf_yaml_node_get(ctx->root, "power_modes");
    p->all_modes =
        !v || (jf_yaml_node_kind(v) == JF_YAML_SCALAR && strcmp(jf_yaml_node_text(v), "all") == 0);
    int rc = p->all_modes ? 0 : s_fill_modes(ctx, v, &p->modes, err);
    v = jf_yaml_node_get(ctx->root, "dvfs");
    s_axis_single(&p->dvfs, 0); // on: each mode's own DVFS
    if (rc == 0 && v) {
        rc = s_axis_fill(ctx, JF_SWEEP_KEY_DVFS, v, &p->dvfs, err);
        rc = rc ? rc : s_check_dvfs_boards(ctx, &p->dvfs, err);
    }
    rc = rc ? rc : jf_yaml_node_require(ctx->root, "storage", "the sweep", &v, err);
    rc = rc ? rc : s_axis_fill(ctx, JF_SWEEP_KEY_STORAGE, v, &p->storage, err);
    rc = rc ? rc : s_number_axis(ctx, JF_SWEEP_KEY_WORKERS, "workers", &p->workers, err);
    rc = rc ? rc : s_number_axis(ctx, JF_SWEEP_KEY_BATCH_SIZE, "batch_sizes", &p->batches, err);
    int repeats = 1;
    v = jf_yaml_node_get(ctx->root, "repeats");
    if (rc == 0 && v) {
        rc = jf_yaml_node_to_int(v, 1, JF_REPEATS_MAX, &repeats, err);
    }
    for (int i = 0; rc == 0 && i < repeats; i++) {
        p->repeats.nums[i] = i;
        p->repeats.n = (size_t) i + 1;
    }
    return rc;
}

static int s_parse_rule(const jf_sweep_ctx_t *ctx, const jf_yaml_node_t *node, const char *kind,
                        jf_sweep_rule_t *rule, jf_err_t *err)
{
    const char *names[JF_SWEEP_KEY_COUNT] = {0};
    for (int k = 0; k < JF_SWEEP_KEY_COUNT; k++) {
        names[k] = s_keys[k].name;
    }
    char what[S_CONTEXT_MAX] = {0};
    (void) snprintf(what, sizeof what, "%s rule", kind);
    int rc = jf_yaml_check_keys(node, names, JF_SWEEP_KEY_COUNT, what, err);
    if (rc == 0 && jf_yaml_node_size(node) == 0) {
        return jf_yaml_error(err, -EINVAL, node, "empty %s rule, expected at least one key", kind);
    }
    for (int k = 0; rc == 0 && k < JF_SWEEP_KEY_COUNT; k++) {
        const jf_yaml_node_t *v = jf_yaml_node_get(node, names[k]);
        rule->has[k] = v != NULL;
        rc = v ? s_axis_fill(ctx, (jf_sweep_key_t) k, v, &rule->values[k], err) : 0;
    }
    // An include rule's power modes replace the axis, and "custom" names no point to run.
    const jf_sweep_axis_t *modes = &rule->values[JF_SWEEP_KEY_POWER_MODE];
    for (size_t i = 0; rc == 0 && strcmp(kind, "include") == 0 && i < modes->n; i++) {
        if (strcmp(modes->texts[i], JF_SWEEP_CUSTOM_TEXT) == 0) {
            return jf_yaml_error(err, -EINVAL, modes->nodes[i],
                                 "an include rule cannot add custom points: list them under "
                                 "power_modes");
        }
    }
    return rc;
}

// Parses the optional rule list under key into *ret_rules (owned by ctx even on failure).
static int s_parse_rules(jf_sweep_ctx_t *ctx, const char *key, jf_sweep_rule_t **ret_rules,
                         size_t *ret_n, jf_err_t *err)
{
    const jf_yaml_node_t *v = jf_yaml_node_get(ctx->root, key);
    if (!v) {
        return 0;
    }
    int rc = jf_yaml_node_expect(v, JF_YAML_SEQUENCE, err);
    size_t n = rc ? 0 : jf_yaml_node_size(v);
    if (rc == 0 && n > S_RULES_MAX) {
        return jf_yaml_error(err, -EINVAL, v, "'%s' has %zu rules, more than %d", key, n,
                             S_RULES_MAX);
    }
    *ret_rules = rc ? NULL : calloc(n ? n : 1, sizeof **ret_rules);
    if (rc == 0 && !*ret_rules) {
        return jf_err_set(err, -ENOMEM, "%s: out of memory", ctx->sweep->source);
    }
    *ret_n = n;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = s_parse_rule(ctx, jf_yaml_node_item(v, i), key, &(*ret_rules)[i], err);
    }
    return rc;
}

static int s_parse_header(jf_sweep_ctx_t *ctx, jf_err_t *err)
{
    jf_sweep_t *sw = ctx->sweep;
    const jf_yaml_node_t *v = NULL;
    int rc = jf_yaml_check_keys(ctx->root, s_top_keys, S_COUNT(s_top_keys), "the sweep", err);
    rc = rc ? rc : jf_yaml_node_require(ctx->root, "name", "the sweep", &v, err);
    rc = rc ? rc : jf_yaml_node_to_ident(v, sw->name, sizeof sw->name, err);
    v = rc ? NULL : jf_yaml_node_get(ctx->root, "description");
    if (v) {
        rc = jf_yaml_node_to_str(v, sw->description, sizeof sw->description, err);
    }
    return rc;
}

static int s_parse(jf_sweep_ctx_t *ctx, jf_err_t *err)
{
    int rc = s_parse_header(ctx, err);
    rc = rc ? rc : s_parse_target(ctx, err);
    rc = rc ? rc
            : jf_sweep_workloads_parse(ctx->root, ctx->workloads, JF_SWEEP_WORKLOADS_MAX,
                                       &ctx->n_workloads, err);
    rc = rc ? rc : s_parse_axes(ctx, err);
    rc = rc ? rc : jf_sweep_settings_parse(ctx->root, ctx->fleet, &ctx->base, err);
    rc = rc ? rc : jf_sweep_runtimes_parse(ctx->root, ctx->runtimes, &ctx->n_runtimes, err);
    for (size_t i = 0; rc == 0 && i < ctx->n_runtimes; i++) {
        ctx->main.runtimes.texts[i] = ctx->runtimes[i];
        ctx->main.runtimes.nums[i] = -1;
        ctx->main.runtimes.n = i + 1;
    }
    rc = rc ? rc : s_parse_rules(ctx, "exclude", &ctx->excludes, &ctx->n_excludes, err);
    rc = rc ? rc : s_parse_rules(ctx, "include", &ctx->includes, &ctx->n_includes, err);
    rc = rc ? rc : jf_sweep_expand(ctx, err);
    return rc;
}

static void s_ctx_free(jf_sweep_ctx_t *ctx)
{
    if (ctx) {
        free(ctx->targeted);
        free(ctx->excludes);
        free(ctx->includes);
        jf_sweep_ids_fini(&ctx->ids);
        free(ctx);
    }
}

static jf_sweep_t *s_from_doc(const jf_yaml_t *doc, const char *source,
                              const jf_fleet_config_t *fleet, jf_err_t *err)
{
    jf_sweep_t *self = calloc(1, sizeof *self);
    jf_sweep_ctx_t *ctx = calloc(1, sizeof *ctx);
    bool *targeted = calloc(fleet->n_boards ? fleet->n_boards : 1, sizeof *targeted);
    if (!self || !ctx || !targeted) {
        free(targeted);
        jf_err_set(err, -ENOMEM, "%s: out of memory", source);
        goto fail_destroy;
    }
    (void) snprintf(self->source, sizeof self->source, "%s", source); // truncation only in text
    ctx->fleet = fleet;
    ctx->sweep = self;
    ctx->root = jf_yaml_root(doc);
    ctx->targeted = targeted;
    if (s_parse(ctx, err) != 0) {
        goto fail_destroy;
    }
    s_ctx_free(ctx);
    return self;
fail_destroy:
    s_ctx_free(ctx);
    jf_sweep_destroy(&self);
    return NULL;
}

jf_sweep_t *jf_sweep_load(const char *path, const jf_fleet_config_t *fleet, jf_err_t *err)
{
    if (!fleet) {
        jf_err_set(err, -EINVAL, "%s: no fleet to expand the sweep against", path);
        return NULL;
    }
    jf_yaml_t *doc = jf_yaml_load(path, JF_SWEEP_FILE_MAX_BYTES, err);
    if (!doc) {
        return NULL;
    }
    jf_sweep_t *self = s_from_doc(doc, path, fleet, err);
    jf_yaml_destroy(&doc);
    return self;
}

jf_sweep_t *jf_sweep_parse(const char *text, size_t len, const char *source_name,
                           const jf_fleet_config_t *fleet, jf_err_t *err)
{
    const char *source = source_name ? source_name : "<input>";
    if (!fleet) {
        jf_err_set(err, -EINVAL, "%s: no fleet to expand the sweep against", source);
        return NULL;
    }
    jf_yaml_t *doc = jf_yaml_parse(text, len, source, JF_SWEEP_FILE_MAX_BYTES, err);
    if (!doc) {
        return NULL;
    }
    jf_sweep_t *self = s_from_doc(doc, source, fleet, err);
    jf_yaml_destroy(&doc);
    return self;
}

void jf_sweep_destroy(jf_sweep_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    free((*self_p)->runs);
    free(*self_p);
    *self_p = NULL;
}
