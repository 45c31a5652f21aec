/* Sweep files (jf_sweep.h): validate against a fleet and expand into runs in a fixed order
 * (board, workload, power mode, dvfs, storage, workers, batch size, repeat), then exclude and
 * include rules. Stops at the first error, which names file:line:col. Does not store or schedule
 * runs. Workloads, settings and the run-id set are in jf_sweep_parts.c, custom points in
 * jf_sweep_power.c. Format: docs/sweeps.md. */
#include "jf_sweep.h"

#include "jf_board_clocks.h"

#include "jf_sweep_parts.h"
#include "jf_sweep_power.h"
#include "jf_units.h"
#include "jf_yaml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_AXIS_MAX         128 // values in one axis list, target list or rule key
#define S_RULES_MAX        256 // entries of exclude, and of include
#define S_COMBINATIONS_MAX ((size_t) 16 * JF_SWEEP_RUNS_MAX) // examined, before skips
#define S_DEFAULT_WORKERS  0
#define S_DEFAULT_BATCH    16
#define S_CONTEXT_MAX      48

#define S_COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *const s_top_keys[] = {
    "name",        "description",  "target",  "workloads", "power_modes", "storage",
    "workers",     "batch_sizes",  "repeats", "prefetch",  "threads",     "seed",
    "drop_caches", "telemetry_hz", "timeout", "exclude",   "include",     "dvfs",
    "idle_s",      "runtime",      "roofline",    "fl_round"};
static const char *const s_target_keys[] = {"device_types", "boards", "labels"};

// Rule keys, in the order that lets a plan filter boards (first three) and workloads (next three)
// before it walks the axes.
typedef enum s_key {
    S_KEY_BOARD = 0,
    S_KEY_DEVICE_TYPE,
    S_KEY_LABEL,
    S_KEY_WORKLOAD,
    S_KEY_MODEL,
    S_KEY_DATASET,
    S_KEY_POWER_MODE,
    S_KEY_DVFS,
    S_KEY_STORAGE,
    S_KEY_WORKERS,
    S_KEY_BATCH_SIZE,
    S_KEY_REPEAT,
    S_KEY_COUNT,
} s_key_t;

// A list of values for one axis or rule key.
typedef struct s_axis {
    size_t n;
    const jf_yaml_node_t *nodes[S_AXIS_MAX]; // borrowed; NULL for built-in defaults
    const char *texts[S_AXIS_MAX];           // borrowed from the document; NULL for numbers
    int64_t nums[S_AXIS_MAX];                // the number, a power mode's id (-1 for a name,
                                             // S_CUSTOM_NUM(k) for custom entry k), dvfs off 1
} s_axis_t;

// A custom entry's number in the power-mode axis, and back.
#define S_CUSTOM_NUM(k)   (-2 - (int64_t) (k))
#define S_CUSTOM_INDEX(n) ((size_t) (-2 - (n)))
#define S_CUSTOM_TEXT     "custom" // what rules name every custom point by

typedef struct s_rule {
    bool has[S_KEY_COUNT];
    s_axis_t values[S_KEY_COUNT];
} s_rule_t;

// A matrix to expand: the sweep's own, or one per include rule.
typedef struct s_plan {
    const s_rule_t *filter; // borrowed; include rule that filters boards and workloads, or NULL
    bool apply_excludes;
    bool all_modes; // each board's own list, else modes
    s_axis_t modes;
    s_axis_t dvfs;
    s_axis_t storage;
    s_axis_t workers;
    s_axis_t batches;
    s_axis_t repeats;
} s_plan_t;

typedef struct s_combo {
    const jf_board_spec_t *board; // borrowed from the fleet
    const jf_sweep_workload_t *workload; // borrowed from the context
    const jf_power_mode_t *mode;  // borrowed from the board; NULL if it lacks the one asked for
                                  // (or cannot run the custom point)
    const jf_sweep_custom_t *custom; // borrowed from the context; NULL: the mode alone
    bool dvfs_off;
    const char *storage;          // borrowed from the document
    int workers;
    int batch_size;
    int repeat;
} s_combo_t;

typedef struct s_ctx {
    const jf_fleet_config_t *fleet; // borrowed
    jf_sweep_t *sweep;              // borrowed; being filled
    const jf_yaml_node_t *root;     // borrowed from the document
    bool *targeted;                 // owned; one per fleet board
    size_t n_workloads;
    jf_sweep_workload_t workloads[JF_SWEEP_WORKLOADS_MAX];
    size_t n_customs;
    jf_sweep_custom_t customs[S_AXIS_MAX]; // the power_modes axis' custom entries
    jf_run_spec_t base; // the settings every run shares
    s_plan_t main;
    s_plan_t scratch; // the include plan being expanded
    size_t n_excludes;
    s_rule_t *excludes; // owned
    size_t n_includes;
    s_rule_t *includes; // owned
    size_t runs_cap;
    size_t combinations; // examined so far, against S_COMBINATIONS_MAX
    size_t n_runtimes;   // the runtime list (docs/containers.md): 1 or 2
    char runtimes[JF_SWEEP_RUNTIMES_MAX][JF_RUN_RUNTIME_MAX + 1]; // "" for bare
    jf_sweep_ids_t ids;
} s_ctx_t;

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

static int s_check_board(const s_ctx_t *ctx, const jf_yaml_node_t *item, jf_err_t *err)
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

static int s_check_workload(const s_ctx_t *ctx, const jf_yaml_node_t *item, jf_err_t *err)
{
    for (size_t i = 0; i < ctx->n_workloads; i++) {
        if (strcmp(ctx->workloads[i].name, jf_yaml_node_text(item)) == 0) {
            return 0;
        }
    }
    return jf_yaml_error(err, -EINVAL, item, "'%.64s' is not one of this sweep's workloads",
                         jf_yaml_node_text(item));
}

static int s_check_mode(const s_ctx_t *ctx, const jf_yaml_node_t *item, int64_t *ret_num,
                        jf_err_t *err)
{
    const char *text = jf_yaml_node_text(item);
    if (strcmp(text, S_CUSTOM_TEXT) == 0) {
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

static int s_check_storage(const s_ctx_t *ctx, const jf_yaml_node_t *item, jf_err_t *err)
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
static int s_check_value(const s_ctx_t *ctx, s_key_t key, const jf_yaml_node_t *item,
                         int64_t *ret_num, jf_err_t *err)
{
    *ret_num = -1;
    switch (key) {
    case S_KEY_BOARD:
        return s_check_board(ctx, item, err);
    case S_KEY_DEVICE_TYPE:
        return s_check_device_type(item, err);
    case S_KEY_LABEL:
        return s_check_label(item, err);
    case S_KEY_WORKLOAD:
        return s_check_workload(ctx, item, err);
    case S_KEY_MODEL:
        return jf_sweep_check_vocab(item, jf_run_spec_is_model, "model", jf_run_spec_models(),
                                    err);
    case S_KEY_DATASET:
        return jf_sweep_check_vocab(item, jf_run_spec_is_dataset, "dataset",
                                    jf_run_spec_datasets(), err);
    case S_KEY_POWER_MODE:
        return s_check_mode(ctx, item, ret_num, err);
    case S_KEY_DVFS:
        return s_check_dvfs(item, ret_num, err);
    case S_KEY_STORAGE:
        return s_check_storage(ctx, item, err);
    case S_KEY_WORKERS:
        return jf_yaml_node_to_i64(item, 0, JF_WORKERS_MAX, ret_num, err);
    case S_KEY_BATCH_SIZE:
        return jf_yaml_node_to_i64(item, 1, JF_BATCH_MAX, ret_num, err);
    case S_KEY_REPEAT:
        return jf_yaml_node_to_i64(item, 0, JF_REPEATS_MAX - 1, ret_num, err);
    default:
        return jf_yaml_error(err, -EINVAL, item, "internal error: rule key %d", (int) key);
    }
}

// True if the combination has the value (text, or num for number keys and power-mode ids).
static bool s_match_value(s_key_t key, const s_combo_t *c, const char *text, int64_t num)
{
    switch (key) {
    case S_KEY_BOARD:
        return strcmp(c->board->name, text) == 0;
    case S_KEY_DEVICE_TYPE:
        return strcmp(jf_board_type_name(c->board->simulates), text) == 0;
    case S_KEY_LABEL:
        return jf_board_spec_has_label(c->board, text);
    case S_KEY_WORKLOAD:
        return strcmp(c->workload->name, text) == 0;
    case S_KEY_MODEL:
        return strcmp(c->workload->model, text) == 0;
    case S_KEY_DATASET:
        return strcmp(c->workload->dataset, text) == 0;
    case S_KEY_POWER_MODE:
        if (c->custom) {
            return strcmp(text, S_CUSTOM_TEXT) == 0;
        }
        return c->mode && (num >= 0 ? c->mode->id == num : strcmp(c->mode->name, text) == 0);
    case S_KEY_DVFS:
        return c->dvfs_off == (num == 1);
    case S_KEY_STORAGE:
        return strcmp(c->storage, text) == 0;
    case S_KEY_WORKERS:
        return c->workers == num;
    case S_KEY_BATCH_SIZE:
        return c->batch_size == num;
    case S_KEY_REPEAT:
        return c->repeat == num;
    default:
        return false;
    }
}

static const struct {
    const char *name; // rule key
    bool numeric;     // values compare as numbers, not text
} s_keys[S_KEY_COUNT] = {
    [S_KEY_BOARD] = {"board", false},           [S_KEY_DEVICE_TYPE] = {"device_type", false},
    [S_KEY_LABEL] = {"label", false},           [S_KEY_WORKLOAD] = {"workload", false},
    [S_KEY_MODEL] = {"model", false},           [S_KEY_DATASET] = {"dataset", false},
    [S_KEY_POWER_MODE] = {"power_mode", false}, [S_KEY_DVFS] = {"dvfs", true},
    [S_KEY_STORAGE] = {"storage", false},
    [S_KEY_WORKERS] = {"workers", true},        [S_KEY_BATCH_SIZE] = {"batch_size", true},
    [S_KEY_REPEAT] = {"repeat", true},
};

static bool s_axis_has(const s_axis_t *axis, bool numeric, const char *text, int64_t num)
{
    for (size_t i = 0; i < axis->n; i++) {
        if (numeric ? axis->nums[i] == num : strcmp(axis->texts[i], text) == 0) {
            return true;
        }
    }
    return false;
}

// Fills axis from a scalar (one value) or a sequence of scalars, checking each value for key.
static int s_axis_fill(const s_ctx_t *ctx, s_key_t key, const jf_yaml_node_t *v, s_axis_t *axis,
                       jf_err_t *err)
{
    bool seq = jf_yaml_node_kind(v) == JF_YAML_SEQUENCE;
    size_t n = seq ? jf_yaml_node_size(v) : 1;
    int rc = seq ? 0 : jf_yaml_node_expect(v, JF_YAML_SCALAR, err);
    if (rc == 0 && (n == 0 || n > S_AXIS_MAX)) {
        return jf_yaml_error(err, -EINVAL, v, "expected a list of 1..%d values, got %zu",
                             S_AXIS_MAX, n);
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

static void s_axis_single(s_axis_t *axis, int64_t num)
{
    axis->n = 1;
    axis->nodes[0] = NULL;
    axis->texts[0] = NULL;
    axis->nums[0] = num;
}

static bool s_rule_matches(const s_rule_t *rule, const s_combo_t *c, s_key_t first, s_key_t end)
{
    for (int k = (int) first; k < (int) end; k++) {
        const s_axis_t *values = &rule->values[k];
        bool any = !rule->has[k];
        for (size_t i = 0; !any && i < values->n; i++) {
            any = s_match_value((s_key_t) k, c, values->texts[i], values->nums[i]);
        }
        if (!any) {
            return false;
        }
    }
    return true;
}

// Marks the boards that key's values select, and fails on a value that selects none.
static int s_target_boards(s_ctx_t *ctx, s_key_t key, const s_axis_t *values, jf_err_t *err)
{
    for (size_t i = 0; i < values->n; i++) {
        bool any = false;
        for (size_t b = 0; b < ctx->fleet->n_boards; b++) {
            s_combo_t c = {.board = &ctx->fleet->boards[b]};
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

static int s_parse_target(s_ctx_t *ctx, jf_err_t *err)
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
    s_key_t key = strcmp(which, "boards") == 0   ? S_KEY_BOARD
                  : strcmp(which, "labels") == 0 ? S_KEY_LABEL
                                                 : S_KEY_DEVICE_TYPE;
    s_axis_t *values = calloc(1, sizeof *values);
    if (!values) {
        return jf_err_set(err, -ENOMEM, "%s: out of memory", ctx->sweep->source);
    }
    rc = s_axis_fill(ctx, key, jf_yaml_node_value(t, 0), values, err);
    rc = rc ? rc : s_target_boards(ctx, key, values, err);
    free(values);
    return rc;
}

// An optional number axis: the values given, or the single default.
static int s_number_axis(const s_ctx_t *ctx, s_key_t key, const char *yaml_key, s_axis_t *axis,
                         jf_err_t *err)
{
    const jf_yaml_node_t *v = jf_yaml_node_get(ctx->root, yaml_key);
    if (v) {
        return s_axis_fill(ctx, key, v, axis, err);
    }
    s_axis_single(axis, key == S_KEY_WORKERS ? S_DEFAULT_WORKERS : S_DEFAULT_BATCH);
    return 0;
}

// DVFS off must be possible on some targeted board: a Jetson or a sim board, not a host.
static int s_check_dvfs_boards(const s_ctx_t *ctx, const s_axis_t *dvfs, jf_err_t *err)
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
static int s_add_custom(s_ctx_t *ctx, const jf_yaml_node_t *item, s_axis_t *axis, jf_err_t *err)
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
    axis->texts[axis->n] = S_CUSTOM_TEXT;
    axis->nums[axis->n++] = S_CUSTOM_NUM(ctx->n_customs++);
    return rc;
}

// The power_modes axis: mode names or ids, and custom entries (mappings).
static int s_fill_modes(s_ctx_t *ctx, const jf_yaml_node_t *v, s_axis_t *axis, jf_err_t *err)
{
    bool seq = jf_yaml_node_kind(v) == JF_YAML_SEQUENCE;
    size_t n = seq ? jf_yaml_node_size(v) : 1;
    if (n == 0 || n > S_AXIS_MAX) {
        return jf_yaml_error(err, -EINVAL, v, "expected a list of 1..%d values, got %zu",
                             S_AXIS_MAX, n);
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
        if (rc == 0 && strcmp(text, S_CUSTOM_TEXT) == 0) {
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

static int s_parse_axes(s_ctx_t *ctx, jf_err_t *err)
{
    s_plan_t *p = &ctx->main;
    p->apply_excludes = true;
    const jf_yaml_node_t *v = jf_yaml_node_get(ctx->root, "power_modes");
    p->all_modes =
        !v || (jf_yaml_node_kind(v) == JF_YAML_SCALAR && strcmp(jf_yaml_node_text(v), "all") == 0);
    int rc = p->all_modes ? 0 : s_fill_modes(ctx, v, &p->modes, err);
    v = jf_yaml_node_get(ctx->root, "dvfs");
    s_axis_single(&p->dvfs, 0); // on: each mode's own DVFS
    if (rc == 0 && v) {
        rc = s_axis_fill(ctx, S_KEY_DVFS, v, &p->dvfs, err);
        rc = rc ? rc : s_check_dvfs_boards(ctx, &p->dvfs, err);
    }
    rc = rc ? rc : jf_yaml_node_require(ctx->root, "storage", "the sweep", &v, err);
    rc = rc ? rc : s_axis_fill(ctx, S_KEY_STORAGE, v, &p->storage, err);
    rc = rc ? rc : s_number_axis(ctx, S_KEY_WORKERS, "workers", &p->workers, err);
    rc = rc ? rc : s_number_axis(ctx, S_KEY_BATCH_SIZE, "batch_sizes", &p->batches, err);
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

static int s_parse_rule(const s_ctx_t *ctx, const jf_yaml_node_t *node, const char *kind,
                        s_rule_t *rule, jf_err_t *err)
{
    const char *names[S_KEY_COUNT] = {0};
    for (int k = 0; k < S_KEY_COUNT; k++) {
        names[k] = s_keys[k].name;
    }
    char what[S_CONTEXT_MAX] = {0};
    (void) snprintf(what, sizeof what, "%s rule", kind);
    int rc = jf_yaml_check_keys(node, names, S_KEY_COUNT, what, err);
    if (rc == 0 && jf_yaml_node_size(node) == 0) {
        return jf_yaml_error(err, -EINVAL, node, "empty %s rule, expected at least one key", kind);
    }
    for (int k = 0; rc == 0 && k < S_KEY_COUNT; k++) {
        const jf_yaml_node_t *v = jf_yaml_node_get(node, names[k]);
        rule->has[k] = v != NULL;
        rc = v ? s_axis_fill(ctx, (s_key_t) k, v, &rule->values[k], err) : 0;
    }
    // An include rule's power modes replace the axis, and "custom" names no point to run.
    const s_axis_t *modes = &rule->values[S_KEY_POWER_MODE];
    for (size_t i = 0; rc == 0 && strcmp(kind, "include") == 0 && i < modes->n; i++) {
        if (strcmp(modes->texts[i], S_CUSTOM_TEXT) == 0) {
            return jf_yaml_error(err, -EINVAL, modes->nodes[i],
                                 "an include rule cannot add custom points: list them under "
                                 "power_modes");
        }
    }
    return rc;
}

// Parses the optional rule list under key into *ret_rules (owned by ctx even on failure).
static int s_parse_rules(s_ctx_t *ctx, const char *key, s_rule_t **ret_rules, size_t *ret_n,
                         jf_err_t *err)
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

static void s_fill_run(const s_ctx_t *ctx, const s_combo_t *c, jf_run_spec_t *s)
{
    *s = ctx->base;
    // Every source is a checked name no longer than its destination.
    (void) snprintf(s->board, sizeof s->board, "%s", c->board->name);
    (void) snprintf(s->workload, sizeof s->workload, "%s", c->workload->name);
    (void) snprintf(s->model, sizeof s->model, "%s", c->workload->model);
    (void) snprintf(s->dataset, sizeof s->dataset, "%s", c->workload->dataset);
    (void) snprintf(s->power_mode, sizeof s->power_mode, "%s", c->mode->name);
    (void) snprintf(s->storage, sizeof s->storage, "%s", c->storage);
    s->custom = c->custom ? c->custom->point : (jf_run_custom_t){0};
    s->dvfs_off = c->dvfs_off;
    s->epochs = s->roofline ? JF_RUN_ROOFLINE_EPOCHS : c->workload->epochs;
    s->concurrent = c->workload->concurrent;
    s->power_mode_id = c->mode->id;
    s->workers = c->workers;
    s->batch_size = c->batch_size;
    s->repeat = c->repeat;
    s->seed = ctx->base.seed + (uint64_t) c->repeat;
    jf_run_spec_compute_id(s);
}

static int s_grow_runs(s_ctx_t *ctx, jf_err_t *err)
{
    jf_sweep_t *sw = ctx->sweep;
    size_t cap = ctx->runs_cap ? 2 * ctx->runs_cap : 64;
    cap = cap < JF_SWEEP_RUNS_MAX ? cap : JF_SWEEP_RUNS_MAX;
    jf_run_spec_t *runs = realloc(sw->runs, cap * sizeof *runs);
    if (!runs) {
        return jf_err_set(err, -ENOMEM, "%s: out of memory for %zu runs", sw->source, cap);
    }
    sw->runs = runs;
    ctx->runs_cap = cap;
    return 0;
}

static int s_add_spec(s_ctx_t *ctx, const jf_run_spec_t *spec, jf_err_t *err)
{
    jf_sweep_t *sw = ctx->sweep;
    jf_err_t inner = {0};
    if (jf_run_spec_validate(spec, &inner) != 0) {
        return jf_yaml_error(err, inner.code, ctx->root,
                             "run on board '%s', workload '%s', repeat "
                             "%d: %s",
                             spec->board, spec->workload, spec->repeat, inner.msg);
    }
    if (jf_sweep_ids_reserve(&ctx->ids, sw->runs, sw->n_runs + 1) != 0) {
        return jf_err_set(err, -ENOMEM, "%s: out of memory", sw->source);
    }
    size_t *slot = jf_sweep_ids_slot(&ctx->ids, sw->runs, spec->run_id);
    if (*slot) {
        return 0; // an earlier combination already produced this run: keep the first
    }
    if (sw->n_runs == JF_SWEEP_RUNS_MAX) {
        return jf_yaml_error(err, -EINVAL, ctx->root, "sweep '%s' expands to more than %d runs",
                             sw->name, JF_SWEEP_RUNS_MAX);
    }
    int rc = sw->n_runs == ctx->runs_cap ? s_grow_runs(ctx, err) : 0;
    if (rc == 0) {
        sw->runs[sw->n_runs++] = *spec;
        *slot = sw->n_runs;
    }
    return rc;
}

// A combination's run in one runtime; in an idle baseline sweep (idle_s) two: with telemetry at
// its rate, and sampled only at the start and end (telemetry_off), whose difference is the cost
// of measuring.
static int s_add_run_in(s_ctx_t *ctx, const s_combo_t *c, const char *runtime, jf_err_t *err)
{
    jf_run_spec_t spec = {0};
    s_fill_run(ctx, c, &spec);
    (void) snprintf(spec.runtime, sizeof spec.runtime, "%s", runtime);
    jf_run_spec_compute_id(&spec);
    if (spec.idle_s > 0) { // an idle run is one epoch of idle_s, whatever the workload says
        spec.epochs = 1;
        jf_run_spec_compute_id(&spec);
    }
    int rc = s_add_spec(ctx, &spec, err);
    if (rc == 0 && spec.idle_s > 0) {
        spec.telemetry_off = true;
        jf_run_spec_compute_id(&spec);
        rc = s_add_spec(ctx, &spec, err);
    }
    return rc;
}

// A combination's runs: one per runtime of the sweep's `runtime` list (docs/containers.md).
static int s_add_run(s_ctx_t *ctx, const s_combo_t *c, jf_err_t *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < ctx->n_runtimes; i++) {
        rc = s_add_run_in(ctx, c, ctx->runtimes[i], err);
    }
    return rc;
}

static bool s_excluded(const s_ctx_t *ctx, const s_combo_t *c)
{
    for (size_t i = 0; i < ctx->n_excludes; i++) {
        if (s_rule_matches(&ctx->excludes[i], c, S_KEY_BOARD, S_KEY_COUNT)) {
            return true;
        }
    }
    return false;
}

static int s_consider(s_ctx_t *ctx, const s_plan_t *p, const s_combo_t *c, jf_err_t *err)
{
    if (++ctx->combinations > S_COMBINATIONS_MAX) {
        return jf_yaml_error(err, -EINVAL, ctx->root,
                             "sweep '%s' has more than %zu combinations; narrow its axes",
                             ctx->sweep->name, S_COMBINATIONS_MAX);
    }
    jf_sweep_skips_t *skips = &ctx->sweep->skips;
    // DVFS off needs a Jetson's clocks (a host has none to pin), as a custom point does.
    if (!c->mode || (c->dvfs_off && !jf_board_clocks(c->board->simulates))) {
        skips->no_power_mode++;
    } else if (!jf_board_spec_storage(c->board, c->storage)) {
        skips->no_storage++;
    } else if (p->apply_excludes && s_excluded(ctx, c)) {
        skips->excluded++;
    } else {
        return s_add_run(ctx, c, err);
    }
    return 0;
}

// The innermost axes: workers, batch size, repeat.
static int s_expand_numbers(s_ctx_t *ctx, const s_plan_t *p, s_combo_t *c, jf_err_t *err)
{
    int rc = 0;
    for (size_t w = 0; rc == 0 && w < p->workers.n; w++) {
        c->workers = (int) p->workers.nums[w];
        for (size_t b = 0; rc == 0 && b < p->batches.n; b++) {
            c->batch_size = (int) p->batches.nums[b];
            for (size_t r = 0; rc == 0 && r < p->repeats.n; r++) {
                c->repeat = (int) p->repeats.nums[r];
                rc = s_consider(ctx, p, c, err);
            }
        }
    }
    return rc;
}

// Mode m of the plan on the combination's board: c->mode (NULL if the board lacks it or cannot
// run the custom point) and c->custom.
static void s_pick_mode(const s_ctx_t *ctx, const s_plan_t *p, size_t m, s_combo_t *c)
{
    c->custom = NULL;
    if (p->all_modes) {
        c->mode = &c->board->modes[m];
    } else if (p->modes.nums[m] <= S_CUSTOM_NUM(0)) {
        c->custom = &ctx->customs[S_CUSTOM_INDEX(p->modes.nums[m])];
        bool fits = jf_sweep_custom_check(c->custom, c->board, NULL) == 0;
        c->mode = fits ? jf_sweep_custom_base(c->custom, c->board) : NULL;
    } else {
        c->mode = jf_board_spec_mode(c->board, p->modes.texts[m]);
    }
}

static int s_expand_modes(s_ctx_t *ctx, const s_plan_t *p, s_combo_t *c, jf_err_t *err)
{
    size_t n = p->all_modes ? c->board->n_modes : p->modes.n;
    int rc = 0;
    for (size_t m = 0; rc == 0 && m < n; m++) {
        s_pick_mode(ctx, p, m, c);
        for (size_t d = 0; rc == 0 && d < p->dvfs.n; d++) {
            c->dvfs_off = p->dvfs.nums[d] == 1;
            for (size_t s = 0; rc == 0 && s < p->storage.n; s++) {
                c->storage = p->storage.texts[s];
                rc = s_expand_numbers(ctx, p, c, err);
            }
        }
    }
    return rc;
}

static int s_expand_plan(s_ctx_t *ctx, const s_plan_t *p, jf_err_t *err)
{
    int rc = 0;
    for (size_t b = 0; rc == 0 && b < ctx->fleet->n_boards; b++) {
        if (!ctx->targeted[b]) {
            continue;
        }
        for (size_t w = 0; rc == 0 && w < ctx->n_workloads; w++) {
            s_combo_t c = {.board = &ctx->fleet->boards[b], .workload = &ctx->workloads[w]};
            // An include rule's axis keys replace the axes, so only its board and workload keys
            // can fail to match.
            if (!p->filter || s_rule_matches(p->filter, &c, S_KEY_BOARD, S_KEY_POWER_MODE)) {
                rc = s_expand_modes(ctx, p, &c, err);
            }
        }
    }
    return rc;
}

static void s_include_plan(const s_ctx_t *ctx, const s_rule_t *rule, s_plan_t *p)
{
    *p = ctx->main;
    p->filter = rule;
    p->apply_excludes = false;
    if (rule->has[S_KEY_POWER_MODE]) {
        p->all_modes = false;
        p->modes = rule->values[S_KEY_POWER_MODE];
    }
    p->dvfs = rule->has[S_KEY_DVFS] ? rule->values[S_KEY_DVFS] : p->dvfs;
    p->storage = rule->has[S_KEY_STORAGE] ? rule->values[S_KEY_STORAGE] : p->storage;
    p->workers = rule->has[S_KEY_WORKERS] ? rule->values[S_KEY_WORKERS] : p->workers;
    p->batches = rule->has[S_KEY_BATCH_SIZE] ? rule->values[S_KEY_BATCH_SIZE] : p->batches;
    p->repeats = rule->has[S_KEY_REPEAT] ? rule->values[S_KEY_REPEAT] : p->repeats;
}

static int s_expand(s_ctx_t *ctx, jf_err_t *err)
{
    int rc = s_expand_plan(ctx, &ctx->main, err);
    for (size_t i = 0; rc == 0 && i < ctx->n_includes; i++) {
        s_include_plan(ctx, &ctx->includes[i], &ctx->scratch);
        rc = s_expand_plan(ctx, &ctx->scratch, err);
    }
    const jf_sweep_t *sw = ctx->sweep;
    if (rc == 0 && sw->n_runs == 0) {
        return jf_yaml_error(err, -EINVAL, ctx->root,
                             "sweep '%s' expands to no runs: %zu excluded, %zu lacking storage, "
                             "%zu lacking power mode",
                             sw->name, sw->skips.excluded, sw->skips.no_storage,
                             sw->skips.no_power_mode);
    }
    return rc;
}

static int s_parse_header(s_ctx_t *ctx, jf_err_t *err)
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

static int s_parse(s_ctx_t *ctx, jf_err_t *err)
{
    int rc = s_parse_header(ctx, err);
    rc = rc ? rc : s_parse_target(ctx, err);
    rc = rc ? rc
            : jf_sweep_workloads_parse(ctx->root, ctx->workloads, JF_SWEEP_WORKLOADS_MAX,
                                       &ctx->n_workloads, err);
    rc = rc ? rc : s_parse_axes(ctx, err);
    rc = rc ? rc : jf_sweep_settings_parse(ctx->root, ctx->fleet, &ctx->base, err);
    rc = rc ? rc : jf_sweep_runtimes_parse(ctx->root, ctx->runtimes, &ctx->n_runtimes, err);
    rc = rc ? rc : s_parse_rules(ctx, "exclude", &ctx->excludes, &ctx->n_excludes, err);
    rc = rc ? rc : s_parse_rules(ctx, "include", &ctx->includes, &ctx->n_includes, err);
    rc = rc ? rc : s_expand(ctx, err);
    return rc;
}

static void s_ctx_free(s_ctx_t *ctx)
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
    s_ctx_t *ctx = calloc(1, sizeof *ctx);
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
