/* fleet.yaml loader (jf_fleet_config.h) over jf_yaml: the coordinator's settings with their
 * defaults, and the boards with their media and power modes. Stops at the first error, which
 * always names file:line:col. Does not touch the boards or the paths it reads. Format:
 * docs/fleet-yaml.md. */
#include "jf_fleet_config.h"

#include "jf_run_spec.h"
#include "jf_units.h"
#include "jf_yaml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S_HB_INTERVAL_MIN_US (100 * JF_US_PER_MS)
#define S_HB_INTERVAL_MAX_US (60 * JF_US_PER_S)
#define S_HB_TIMEOUT_MAX_US  (10 * 60 * JF_US_PER_S)
#define S_RUN_TIMEOUT_MIN_US JF_US_PER_S
#define S_MAX_ATTEMPTS_MAX   10
#define S_HANDSHAKE_MIN_US   (100 * JF_US_PER_MS)
#define S_CLOCK_WARN_MAX_US  (60 * JF_US_PER_S)
#define S_MODE_ID_MAX        255
#define S_CONTEXT_MAX        (JF_IDENT_MAX + 32) // "storage of board '<name>'"
#define S_LIST_MAX           512                 // a vocabulary joined for a message
#define S_RETENTION_MIN_US   JF_US_PER_S         // short enough for a test of the policy
#define S_RETENTION_MAX_US   (INT64_C(10) * 365 * 24 * 3600 * JF_US_PER_S)
#define S_SIZE_NUMBER_MAX    (INT64_C(1) << 20) // 1M of a unit: up to 1 EiB with T
#define S_OTHER_LOAD_MIN_PCT 0.001 // max_other_load: 0 would read as "not set"

static const char *const s_top_keys[] = {"coordinator", "boards"};
static const char *const s_coord_keys[] = {
    "agent_endpoint", "control_endpoint",   "data_dir",          "store",
    "telemetry_hz",   "heartbeat_interval", "heartbeat_timeout", "run_timeout",
    "max_attempts",   "handshake_timeout",  "clock_offset_warn", "retention",
    "min_free_space", "limits", "influx", "max_other_load"};
static const char *const s_retention_keys[] = {"telemetry_raw", "telemetry_after"};
// Binary size units for min_free_space; the unit is always explicit, as for durations.
static const struct {
    const char *suffix;
    int shift;
} s_size_units[] = {{"B", 0}, {"K", 10}, {"M", 20}, {"G", 30}, {"T", 40}};
static const char *const s_board_keys[] = {"name",   "type",        "simulates",
                                           "labels", "power_modes", "storage"};
static const char *const s_storage_keys[] = {"medium", "mount", "dataset_root"};

#define S_COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const jf_yaml_node_t *s_opt(const jf_yaml_node_t *map, const char *key)
{
    return map ? jf_yaml_node_get(map, key) : NULL;
}

// Collapses repeated slashes and removes "." segments of an absolute path. ".." stays: without
// realpath it cannot be resolved safely through symlinks.
static int s_path_normalise(const char *in, char *out, size_t size)
{
    size_t o = 0;
    const char *p = in;
    while (*p) {
        while (*p == '/') {
            p++;
        }
        const char *seg = p;
        while (*p && *p != '/') {
            p++;
        }
        size_t n = (size_t) (p - seg);
        if (n == 0 || (n == 1 && seg[0] == '.')) {
            continue;
        }
        if (o + 1 + n >= size) {
            return -ENAMETOOLONG;
        }
        out[o++] = '/';
        memcpy(out + o, seg, n);
        o += n;
    }
    if (o == 0) {
        out[o++] = '/';
    }
    out[o] = '\0';
    return 0;
}

// Joins an absolute dir and a path (which wins when absolute), then normalises.
static int s_path_join(const char *dir, const char *path, char *out, size_t size)
{
    char joined[2 * PATH_MAX + 2] = {0};
    int n = path[0] == '/' ? snprintf(joined, sizeof joined, "%s", path)
                           : snprintf(joined, sizeof joined, "%s/%s", dir, path);
    if (n < 0 || (size_t) n >= sizeof joined) {
        return -ENAMETOOLONG;
    }
    return s_path_normalise(joined, out, size);
}

// The absolute directory that relative paths resolve against: dir itself if absolute, else dir
// (NULL means ".") under the current directory.
static int s_abs_base(const char *dir, char *out, size_t size, jf_err_t *err)
{
    char cwd[PATH_MAX] = {0};
    if ((!dir || dir[0] != '/') && !getcwd(cwd, sizeof cwd)) {
        return jf_err_set(err, -errno, "cannot get the current directory: %s", strerror(errno));
    }
    if (s_path_join(cwd, dir ? dir : ".", out, size) != 0) {
        return jf_err_set(err, -ENAMETOOLONG, "base directory '%.64s...' is too long", dir);
    }
    return 0;
}

static int s_parse_endpoint(const jf_yaml_node_t *v, const char *key, char *buf, jf_err_t *err)
{
    int rc = jf_yaml_node_to_str(v, buf, JF_ENDPOINT_MAX + 1, err);
    if (rc != 0) {
        return rc;
    }
    bool tcp = strncmp(buf, "tcp://", 6) == 0;
    if ((!tcp && strncmp(buf, "ipc://", 6) != 0) || buf[6] == '\0') {
        return jf_yaml_error(err, -EINVAL, v,
                             "'%s' must be a ZeroMQ endpoint starting with tcp:// or ipc://, "
                             "got '%.64s'",
                             key, buf);
    }
    return 0;
}

typedef struct s_path_spec {
    const char *key;  // YAML key in the coordinator section
    const char *dflt; // value when the key is absent
    const char *dir;  // absolute directory that a relative value resolves against
} s_path_spec_t;

// Resolves an optional path setting into out (PATH_MAX bytes). at positions messages about a
// default that does not fit.
static int s_coord_path(const jf_yaml_node_t *map, const jf_yaml_node_t *at,
                        const s_path_spec_t *spec, char *out, jf_err_t *err)
{
    const jf_yaml_node_t *v = s_opt(map, spec->key);
    char raw[PATH_MAX] = {0};
    int rc = v ? jf_yaml_node_to_str(v, raw, sizeof raw, err) : 0;
    if (rc != 0) {
        return rc;
    }
    if (v && raw[0] == '\0') {
        return jf_yaml_error(err, -EINVAL, v, "'%s' must not be empty", spec->key);
    }
    if (s_path_join(spec->dir, v ? raw : spec->dflt, out, PATH_MAX) != 0) {
        return jf_yaml_error(err, -ENAMETOOLONG, v ? v : at,
                             "'%s' resolves to a path longer than %d bytes", spec->key,
                             PATH_MAX - 1);
    }
    return 0;
}

// `store`: a PostgreSQL URI ("postgresql://" or "postgres://", docs/store.md §10) is kept as
// written; anything else is a SQLite path, resolved against data_dir.
static int s_coord_store(jf_coord_settings_t *c, const jf_yaml_node_t *map,
                         const jf_yaml_node_t *at, jf_err_t *err)
{
    const jf_yaml_node_t *v = s_opt(map, "store");
    char raw[PATH_MAX] = {0};
    int rc = v ? jf_yaml_node_to_str(v, raw, sizeof raw, err) : 0;
    if (rc != 0) {
        return rc;
    }
    if (strncmp(raw, "postgresql://", 13) == 0 || strncmp(raw, "postgres://", 11) == 0) {
        (void) snprintf(c->store_path, sizeof c->store_path, "%s", raw);
        return 0;
    }
    const s_path_spec_t store = {"store", JF_DEFAULT_STORE, c->data_dir};
    return s_coord_path(map, at, &store, c->store_path, err);
}

static int s_coord_control(jf_coord_settings_t *c, const jf_yaml_node_t *map,
                           const jf_yaml_node_t *at, jf_err_t *err)
{
    const jf_yaml_node_t *v = s_opt(map, "control_endpoint");
    if (v) {
        return s_parse_endpoint(v, "control_endpoint", c->control_endpoint, err);
    }
    int n = snprintf(c->control_endpoint, sizeof c->control_endpoint, "ipc://%s/control.sock",
                     c->data_dir);
    if (n < 0 || (size_t) n >= sizeof c->control_endpoint) {
        const jf_yaml_node_t *d = s_opt(map, "data_dir");
        return jf_yaml_error(err, -EINVAL, d ? d : at,
                             "the default control_endpoint 'ipc://<data_dir>/control.sock' is "
                             "longer than %d bytes; set control_endpoint",
                             JF_ENDPOINT_MAX);
    }
    return 0;
}

static int s_coord_numbers(jf_coord_settings_t *c, const jf_yaml_node_t *map, jf_err_t *err)
{
    const jf_yaml_node_t *v = s_opt(map, "telemetry_hz");
    int rc = v ? jf_yaml_node_to_int(v, 1, JF_TELEMETRY_HZ_MAX, &c->telemetry_hz, err) : 0;
    v = s_opt(map, "run_timeout");
    if (rc == 0 && v) {
        rc = jf_yaml_node_to_duration_us(v, S_RUN_TIMEOUT_MIN_US, JF_RUN_TIMEOUT_MAX_US,
                                         &c->run_timeout_us, err);
    }
    v = s_opt(map, "max_attempts");
    if (rc == 0 && v) {
        rc = jf_yaml_node_to_int(v, 1, S_MAX_ATTEMPTS_MAX, &c->max_attempts, err);
    }
    v = s_opt(map, "handshake_timeout");
    if (rc == 0 && v) {
        rc = jf_yaml_node_to_duration_us(v, S_HANDSHAKE_MIN_US, S_HB_TIMEOUT_MAX_US,
                                         &c->handshake_timeout_us, err);
    }
    v = s_opt(map, "clock_offset_warn");
    if (rc == 0 && v) {
        rc = jf_yaml_node_to_duration_us(v, 1, S_CLOCK_WARN_MAX_US, &c->clock_offset_warn_us, err);
    }
    v = s_opt(map, "max_other_load");
    if (rc == 0 && v) {
        rc = jf_yaml_node_to_double(v, S_OTHER_LOAD_MIN_PCT, 100.0, &c->max_other_load_pct, err);
    }
    return rc;
}

static int s_coord_heartbeat(jf_coord_settings_t *c, const jf_yaml_node_t *map, jf_err_t *err)
{
    const jf_yaml_node_t *vi = s_opt(map, "heartbeat_interval");
    const jf_yaml_node_t *vt = s_opt(map, "heartbeat_timeout");
    int rc = vi ? jf_yaml_node_to_duration_us(vi, S_HB_INTERVAL_MIN_US, S_HB_INTERVAL_MAX_US,
                                              &c->heartbeat_interval_us, err)
                : 0;
    if (rc == 0 && vt) {
        rc = jf_yaml_node_to_duration_us(vt, S_HB_INTERVAL_MIN_US, S_HB_TIMEOUT_MAX_US,
                                         &c->heartbeat_timeout_us, err);
    }
    // The defaults satisfy the rule, so a violation always involves a key that is present.
    if (rc == 0 && c->heartbeat_timeout_us <= 2 * c->heartbeat_interval_us) {
        return jf_yaml_error(err, -EINVAL, vt ? vt : vi,
                             "heartbeat_timeout (%lld ms) must be more than 2 x "
                             "heartbeat_interval (%lld ms)",
                             (long long) (c->heartbeat_timeout_us / JF_US_PER_MS),
                             (long long) (c->heartbeat_interval_us / JF_US_PER_MS));
    }
    return rc;
}

// min_free_space: "<integer><unit>" with unit B, K, M, G or T (powers of 1024).
static int s_coord_free_space(jf_coord_settings_t *c, const jf_yaml_node_t *map, jf_err_t *err)
{
    const jf_yaml_node_t *v = s_opt(map, "min_free_space");
    int rc = v ? jf_yaml_node_expect(v, JF_YAML_SCALAR, err) : 0;
    if (!v || rc != 0) {
        return rc;
    }
    const char *text = jf_yaml_node_text(v);
    size_t digits = strspn(text, "0123456789");
    char number[24] = {0};
    for (size_t i = 0; digits > 0 && digits < sizeof number && i < S_COUNT(s_size_units); i++) {
        int64_t n = 0;
        memcpy(number, text, digits);
        if (strcmp(text + digits, s_size_units[i].suffix) == 0 &&
            jf_parse_i64(number, 0, S_SIZE_NUMBER_MAX, &n, NULL) == 0) {
            c->min_free_bytes = n << s_size_units[i].shift;
            return 0;
        }
    }
    return jf_yaml_error(err, -EINVAL, v,
                         "'min_free_space' must be a size such as '2G': a whole number up to "
                         "%lld with a unit B, K, M, G or T (powers of 1024), got '%.64s'",
                         (long long) S_SIZE_NUMBER_MAX, text);
}

// retention: {telemetry_raw: <duration>, telemetry_after: drop|means}; both keys are required.
static int s_coord_retention(jf_coord_settings_t *c, const jf_yaml_node_t *map, jf_err_t *err)
{
    const jf_yaml_node_t *r = s_opt(map, "retention");
    int rc = r ? jf_yaml_node_expect(r, JF_YAML_MAPPING, err) : 0;
    if (!r || rc != 0) {
        return rc;
    }
    rc = jf_yaml_check_keys(r, s_retention_keys, S_COUNT(s_retention_keys), "retention", err);
    const jf_yaml_node_t *raw = NULL;
    const jf_yaml_node_t *after = NULL;
    rc = rc ? rc : jf_yaml_node_require(r, "telemetry_raw", "retention", &raw, err);
    rc = rc ? rc : jf_yaml_node_require(r, "telemetry_after", "retention", &after, err);
    rc = rc ? rc
            : jf_yaml_node_to_duration_us(raw, S_RETENTION_MIN_US, S_RETENTION_MAX_US,
                                          &c->telemetry_raw_us, err);
    rc = rc ? rc : jf_yaml_node_expect(after, JF_YAML_SCALAR, err);
    if (rc != 0) {
        return rc;
    }
    const char *what = jf_yaml_node_text(after);
    if (strcmp(what, "drop") != 0 && strcmp(what, "means") != 0) {
        return jf_yaml_error(err, -EINVAL, after,
                             "'telemetry_after' must be 'drop' or 'means', got '%.64s'", what);
    }
    c->telemetry_after = strcmp(what, "means") == 0 ? JF_RETENTION_MEANS : JF_RETENTION_DROP;
    return 0;
}

static void s_coord_defaults(jf_coord_settings_t *c)
{
    (void) snprintf(c->agent_endpoint, sizeof c->agent_endpoint, "%s", JF_DEFAULT_AGENT_ENDPOINT);
    c->telemetry_hz = JF_DEFAULT_TELEMETRY_HZ;
    c->heartbeat_interval_us = JF_DEFAULT_HEARTBEAT_US;
    c->heartbeat_timeout_us = JF_DEFAULT_HB_TIMEOUT_US;
    c->run_timeout_us = JF_DEFAULT_RUN_TIMEOUT_US;
    c->max_attempts = JF_DEFAULT_MAX_ATTEMPTS;
    c->handshake_timeout_us = JF_DEFAULT_HANDSHAKE_US;
    c->clock_offset_warn_us = JF_DEFAULT_CLOCK_WARN_US;
    c->min_free_bytes = JF_DEFAULT_MIN_FREE_BYTES;
    c->telemetry_after = JF_RETENTION_KEEP;
    jf_limits_defaults(&c->limits);
}

// map is the coordinator section or NULL when absent (all defaults); at is the document root.
static int s_parse_coord(jf_coord_settings_t *c, const jf_yaml_node_t *map,
                         const jf_yaml_node_t *at, const char *base, jf_err_t *err)
{
    s_coord_defaults(c);
    int rc =
        map ? jf_yaml_check_keys(map, s_coord_keys, S_COUNT(s_coord_keys), "coordinator", err) : 0;
    const jf_yaml_node_t *v = s_opt(map, "agent_endpoint");
    if (rc == 0 && v) {
        rc = s_parse_endpoint(v, "agent_endpoint", c->agent_endpoint, err);
    }
    const s_path_spec_t data = {"data_dir", JF_DEFAULT_DATA_DIR, base};
    rc = rc ? rc : s_coord_path(map, at, &data, c->data_dir, err);
    rc = rc ? rc : s_coord_store(c, map, at, err);
    rc = rc ? rc : s_coord_control(c, map, at, err);
    rc = rc ? rc : s_coord_numbers(c, map, err);
    rc = rc ? rc : s_coord_heartbeat(c, map, err);
    rc = rc ? rc : s_coord_retention(c, map, err);
    rc = rc ? rc : s_coord_free_space(c, map, err);
    const jf_yaml_node_t *limits = s_opt(map, "limits");
    if (rc == 0 && limits) {
        rc = jf_limits_parse(limits, &c->limits, err); // docs/fleet-yaml.md, `coordinator.limits`
    }
    const jf_yaml_node_t *influx = s_opt(map, "influx");
    if (rc == 0 && influx) {
        rc = jf_influx_config_parse(influx, base, &c->influx, err); // docs/metrics.md
    }
    return rc;
}

// " (did you mean 'x'?)" or "", for messages about values from a closed vocabulary.
static const char *s_hint(const char *guess, char *buf, size_t size)
{
    buf[0] = '\0';
    if (guess) {
        (void) snprintf(buf, size, " (did you mean '%s'?)", guess);
    }
    return buf;
}

static int s_parse_type(const jf_yaml_node_t *v, jf_board_type_t *ret_type, jf_err_t *err)
{
    int rc = jf_yaml_node_expect(v, JF_YAML_SCALAR, err);
    if (rc != 0 || jf_board_type_parse(jf_yaml_node_text(v), ret_type)) {
        return rc;
    }
    const char *names[JF_BOARD_TYPE_COUNT] = {0};
    for (int i = 0; i < JF_BOARD_TYPE_COUNT; i++) {
        names[i] = jf_board_type_name((jf_board_type_t) i);
    }
    char hint[S_CONTEXT_MAX] = {0};
    const char *guess = jf_yaml_suggest(jf_yaml_node_text(v), names, JF_BOARD_TYPE_COUNT);
    return jf_yaml_error(err, -EINVAL, v, "unknown board type '%.64s'%s, expected one of: %s",
                         jf_yaml_node_text(v), s_hint(guess, hint, sizeof hint),
                         jf_board_type_names());
}

static int s_board_type(jf_board_spec_t *b, const jf_yaml_node_t *node, const char *ctx,
                        jf_err_t *err)
{
    const jf_yaml_node_t *v = NULL;
    int rc = jf_yaml_node_require(node, "type", ctx, &v, err);
    rc = rc ? rc : s_parse_type(v, &b->type, err);
    const jf_yaml_node_t *sim = jf_yaml_node_get(node, "simulates");
    if (rc != 0 || (b->type != JF_BOARD_SIM && !sim)) {
        b->simulates = b->type;
        return rc;
    }
    if (b->type != JF_BOARD_SIM) {
        return jf_yaml_error(err, -EINVAL, sim,
                             "'simulates' is only allowed with type sim, %s has "
                             "type %s",
                             ctx, jf_board_type_name(b->type));
    }
    if (!sim) {
        return jf_yaml_error(err, -EINVAL, node,
                             "%s has type sim but no 'simulates', expected the Jetson type it "
                             "simulates",
                             ctx);
    }
    rc = s_parse_type(sim, &b->simulates, err);
    if (rc == 0 && (b->simulates == JF_BOARD_HOST || b->simulates == JF_BOARD_SIM)) {
        return jf_yaml_error(err, -EINVAL, sim,
                             "'simulates' must be a Jetson type (agx-xavier, xavier-nx, nano, "
                             "orin-agx, orin-nano), got '%s'",
                             jf_board_type_name(b->simulates));
    }
    return rc;
}

static int s_board_labels(jf_board_spec_t *b, const jf_yaml_node_t *v, jf_err_t *err)
{
    int rc = jf_yaml_node_expect(v, JF_YAML_SEQUENCE, err);
    size_t n = jf_yaml_node_size(v);
    if (rc == 0 && n > JF_FLEET_LABELS_MAX) {
        return jf_yaml_error(err, -EINVAL, v, "board '%s' has %zu labels, more than %d", b->name, n,
                             JF_FLEET_LABELS_MAX);
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const jf_yaml_node_t *item = jf_yaml_node_item(v, i);
        rc = jf_yaml_node_to_ident(item, b->labels[i], sizeof b->labels[i], err);
        if (rc == 0 && jf_board_spec_has_label(b, b->labels[i])) {
            rc = jf_yaml_error(err, -EINVAL, item, "label '%s' is listed twice", b->labels[i]);
        }
        b->n_labels += rc == 0 ? 1 : 0;
    }
    return rc;
}

static const jf_power_mode_t *s_find_mode(const jf_power_mode_t *modes, size_t n,
                                          const char *name_or_id)
{
    int64_t id = -1;
    bool digits = name_or_id[0] != '\0' && strspn(name_or_id, "0123456789") == strlen(name_or_id);
    if (digits && jf_parse_i64(name_or_id, 0, S_MODE_ID_MAX, &id, NULL) != 0) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (digits ? modes[i].id == id : strcmp(modes[i].name, name_or_id) == 0) {
            return &modes[i];
        }
    }
    return NULL;
}

static int s_unknown_mode(const jf_board_spec_t *b, const jf_yaml_node_t *item, jf_err_t *err)
{
    const jf_board_family_t *fam = jf_board_family(b->simulates);
    const char *names[JF_POWER_MODES_MAX] = {0};
    char list[S_LIST_MAX] = {0};
    size_t used = 0;
    for (size_t i = 0; i < fam->n_modes; i++) {
        names[i] = fam->modes[i].name;
        int w =
            snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", fam->modes[i].name);
        used += w > 0 && (size_t) w < sizeof list - used ? (size_t) w : 0;
    }
    char hint[S_CONTEXT_MAX] = {0};
    const char *guess = jf_yaml_suggest(jf_yaml_node_text(item), names, fam->n_modes);
    return jf_yaml_error(
        err, -EINVAL, item,
        "power mode '%.64s' is not valid for %s%s, expected one of (or its id): %s",
        jf_yaml_node_text(item), jf_board_type_name(b->simulates), s_hint(guess, hint, sizeof hint),
        list);
}

// v is the board's power_modes list, or NULL for every mode of the family.
static int s_board_modes(jf_board_spec_t *b, const jf_yaml_node_t *v, jf_err_t *err)
{
    const jf_board_family_t *fam = jf_board_family(b->simulates);
    if (!v) {
        b->n_modes = fam->n_modes;
        memcpy(b->modes, fam->modes, fam->n_modes * sizeof fam->modes[0]);
        return 0;
    }
    int rc = jf_yaml_node_expect(v, JF_YAML_SEQUENCE, err);
    if (rc == 0 && jf_yaml_node_size(v) == 0) {
        return jf_yaml_error(err, -EINVAL, v,
                             "'power_modes' must list at least one mode; leave it out to allow "
                             "every mode of %s",
                             jf_board_type_name(b->simulates));
    }
    for (size_t i = 0; rc == 0 && i < jf_yaml_node_size(v); i++) {
        const jf_yaml_node_t *item = jf_yaml_node_item(v, i);
        rc = jf_yaml_node_expect(item, JF_YAML_SCALAR, err);
        const jf_power_mode_t *m =
            rc ? NULL : s_find_mode(fam->modes, fam->n_modes, jf_yaml_node_text(item));
        if (rc == 0 && !m) {
            return s_unknown_mode(b, item, err);
        }
        if (rc == 0 && s_find_mode(b->modes, b->n_modes, m->name)) {
            return jf_yaml_error(err, -EINVAL, item, "power mode '%s' is listed twice", m->name);
        }
        if (rc == 0) {
            b->modes[b->n_modes++] = *m; // at most fam->n_modes distinct entries fit
        }
    }
    return rc;
}

static int s_abs_path(const jf_yaml_node_t *v, const char *key, char *out, jf_err_t *err)
{
    int rc = jf_yaml_node_to_str(v, out, PATH_MAX, err);
    if (rc == 0 && out[0] != '/') {
        return jf_yaml_error(err, -EINVAL, v, "'%s' must be an absolute path, got '%.64s'", key,
                             out);
    }
    return rc;
}

static int s_parse_medium(const jf_board_spec_t *b, const jf_yaml_node_t *v, char *out,
                          jf_err_t *err)
{
    int rc = jf_yaml_node_expect(v, JF_YAML_SCALAR, err);
    if (rc == 0 && !jf_run_spec_is_medium(jf_yaml_node_text(v))) {
        return jf_yaml_error(err, -EINVAL, v, "unknown medium '%.64s', expected one of: %s",
                             jf_yaml_node_text(v), jf_run_spec_media());
    }
    rc = rc ? rc : jf_yaml_node_to_str(v, out, JF_IDENT_MAX + 1, err);
    if (rc == 0 && jf_board_spec_storage(b, out)) {
        return jf_yaml_error(err, -EINVAL, v, "medium '%s' is listed twice for board '%s'", out,
                             b->name);
    }
    return rc;
}

static int s_storage_entry(jf_board_spec_t *b, const jf_yaml_node_t *node, jf_err_t *err)
{
    jf_storage_spec_t *s = &b->storage[b->n_storage];
    char ctx[S_CONTEXT_MAX] = {0};
    (void) snprintf(ctx, sizeof ctx, "storage of board '%s'", b->name);
    const jf_yaml_node_t *medium = NULL;
    const jf_yaml_node_t *mount = NULL;
    const jf_yaml_node_t *root = NULL;
    int rc = jf_yaml_check_keys(node, s_storage_keys, S_COUNT(s_storage_keys), ctx, err);
    rc = rc ? rc : jf_yaml_node_require(node, "medium", ctx, &medium, err);
    rc = rc ? rc : s_parse_medium(b, medium, s->medium, err);
    rc = rc ? rc : jf_yaml_node_require(node, "mount", ctx, &mount, err);
    rc = rc ? rc : s_abs_path(mount, "mount", s->mount, err);
    rc = rc ? rc : jf_yaml_node_require(node, "dataset_root", ctx, &root, err);
    rc = rc ? rc : s_abs_path(root, "dataset_root", s->dataset_root, err);
    b->n_storage += rc == 0 ? 1 : 0;
    return rc;
}

static int s_board_storage(jf_board_spec_t *b, const jf_yaml_node_t *v, jf_err_t *err)
{
    int rc = jf_yaml_node_expect(v, JF_YAML_SEQUENCE, err);
    size_t n = jf_yaml_node_size(v);
    if (rc == 0 && (n == 0 || n > JF_FLEET_STORAGE_MAX)) {
        return jf_yaml_error(err, -EINVAL, v, "board '%s' must list 1..%d storage media, got %zu",
                             b->name, JF_FLEET_STORAGE_MAX, n);
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = s_storage_entry(b, jf_yaml_node_item(v, i), err);
    }
    return rc;
}

static int s_board_name(const jf_fleet_config_t *self, const jf_yaml_node_t *node,
                        jf_board_spec_t *b, jf_err_t *err)
{
    char ctx[S_CONTEXT_MAX] = {0};
    (void) snprintf(ctx, sizeof ctx, "board #%zu", self->n_boards + 1);
    const jf_yaml_node_t *v = NULL;
    int rc = jf_yaml_node_require(node, "name", ctx, &v, err);
    rc = rc ? rc : jf_yaml_node_to_ident(v, b->name, sizeof b->name, err);
    const jf_board_spec_t *first = rc ? NULL : jf_fleet_config_board(self, b->name);
    if (first) {
        return jf_yaml_error(err, -EINVAL, v, "duplicate board name '%s' (first at line %d)",
                             b->name, first->line);
    }
    return rc;
}

static int s_parse_board(jf_fleet_config_t *self, const jf_yaml_node_t *node, jf_err_t *err)
{
    jf_board_spec_t *b = &self->boards[self->n_boards];
    b->line = jf_yaml_node_line(node);
    int rc = jf_yaml_node_expect(node, JF_YAML_MAPPING, err);
    rc = rc ? rc : s_board_name(self, node, b, err);
    if (rc != 0) {
        return rc;
    }
    char ctx[S_CONTEXT_MAX] = {0};
    (void) snprintf(ctx, sizeof ctx, "board '%s'", b->name);
    rc = jf_yaml_check_keys(node, s_board_keys, S_COUNT(s_board_keys), ctx, err);
    rc = rc ? rc : s_board_type(b, node, ctx, err);
    const jf_yaml_node_t *v = jf_yaml_node_get(node, "labels");
    if (rc == 0 && v) {
        rc = s_board_labels(b, v, err);
    }
    rc = rc ? rc : s_board_modes(b, jf_yaml_node_get(node, "power_modes"), err);
    rc = rc ? rc : jf_yaml_node_require(node, "storage", ctx, &v, err);
    rc = rc ? rc : s_board_storage(b, v, err);
    return rc;
}

static int s_parse_boards(jf_fleet_config_t *self, const jf_yaml_node_t *root, jf_err_t *err)
{
    const jf_yaml_node_t *boards = NULL;
    int rc = jf_yaml_node_require(root, "boards", "the fleet file", &boards, err);
    rc = rc ? rc : jf_yaml_node_expect(boards, JF_YAML_SEQUENCE, err);
    if (rc != 0) {
        return rc;
    }
    size_t n = jf_yaml_node_size(boards);
    if (n == 0 || n > JF_FLEET_BOARDS_MAX) {
        return jf_yaml_error(err, -EINVAL, boards, "'boards' must list 1..%d boards, got %zu",
                             JF_FLEET_BOARDS_MAX, n);
    }
    self->boards = calloc(n, sizeof *self->boards);
    if (!self->boards) {
        return jf_err_set(err, -ENOMEM, "%s: out of memory for %zu boards", self->source, n);
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = s_parse_board(self, jf_yaml_node_item(boards, i), err);
        self->n_boards += rc == 0 ? 1 : 0;
    }
    return rc;
}

static int s_parse_root(jf_fleet_config_t *self, const jf_yaml_node_t *root, const char *base,
                        jf_err_t *err)
{
    int rc = jf_yaml_check_keys(root, s_top_keys, S_COUNT(s_top_keys), "the fleet file", err);
    const jf_yaml_node_t *coord = rc ? NULL : jf_yaml_node_get(root, "coordinator");
    if (coord) {
        rc = jf_yaml_node_expect(coord, JF_YAML_MAPPING, err);
    }
    rc = rc ? rc : s_parse_coord(&self->coord, coord, root, base, err);
    rc = rc ? rc : s_parse_boards(self, root, err);
    return rc;
}

static jf_fleet_config_t *s_from_doc(const jf_yaml_t *doc, const char *source, const char *base_dir,
                                     jf_err_t *err)
{
    jf_fleet_config_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "%s: out of memory", source);
        return NULL;
    }
    (void) snprintf(self->source, sizeof self->source, "%s", source); // truncation only in text
    char base[PATH_MAX] = {0};
    int rc = s_abs_base(base_dir, base, sizeof base, err);
    rc = rc ? rc : s_parse_root(self, jf_yaml_root(doc), base, err);
    if (rc != 0) {
        goto fail_destroy;
    }
    return self;
fail_destroy:
    jf_fleet_config_destroy(&self);
    return NULL;
}

// The directory part of path: "." when it has none, "/" for a file in the root.
static void s_dirname(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        (void) snprintf(out, size, ".");
    } else if (slash == path) {
        (void) snprintf(out, size, "/");
    } else {
        (void) snprintf(out, size, "%.*s", (int) (slash - path), path);
    }
}

jf_fleet_config_t *jf_fleet_config_load(const char *path, jf_err_t *err)
{
    jf_yaml_t *doc = jf_yaml_load(path, JF_FLEET_FILE_MAX_BYTES, err);
    if (!doc) {
        return NULL;
    }
    char dir[PATH_MAX] = {0};
    s_dirname(path, dir, sizeof dir);
    jf_fleet_config_t *self = s_from_doc(doc, path, dir, err);
    jf_yaml_destroy(&doc);
    return self;
}

jf_fleet_config_t *jf_fleet_config_parse(const char *text, size_t len, const char *source_name,
                                         const char *base_dir, jf_err_t *err)
{
    const char *source = source_name ? source_name : "<input>";
    jf_yaml_t *doc = jf_yaml_parse(text, len, source, JF_FLEET_FILE_MAX_BYTES, err);
    if (!doc) {
        return NULL;
    }
    jf_fleet_config_t *self = s_from_doc(doc, source, base_dir, err);
    jf_yaml_destroy(&doc);
    return self;
}

void jf_fleet_config_destroy(jf_fleet_config_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    free((*self_p)->boards);
    free(*self_p);
    *self_p = NULL;
}

const jf_board_spec_t *jf_fleet_config_board(const jf_fleet_config_t *self, const char *name)
{
    for (size_t i = 0; i < self->n_boards; i++) {
        if (strcmp(self->boards[i].name, name) == 0) {
            return &self->boards[i];
        }
    }
    return NULL;
}

const jf_storage_spec_t *jf_board_spec_storage(const jf_board_spec_t *board, const char *medium)
{
    for (size_t i = 0; i < board->n_storage; i++) {
        if (strcmp(board->storage[i].medium, medium) == 0) {
            return &board->storage[i];
        }
    }
    return NULL;
}

const jf_power_mode_t *jf_board_spec_mode(const jf_board_spec_t *board, const char *name_or_id)
{
    return s_find_mode(board->modes, board->n_modes, name_or_id);
}

bool jf_board_spec_has_label(const jf_board_spec_t *board, const char *label)
{
    for (size_t i = 0; i < board->n_labels; i++) {
        if (strcmp(board->labels[i], label) == 0) {
            return true;
        }
    }
    return false;
}
