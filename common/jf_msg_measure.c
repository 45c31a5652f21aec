/* The measure record: builder, strict checker and cache reader (docs/protocol.md §5.4.1). */
#include "jf_msg_measure.h"

#include "jf_board.h"
#include "jf_msg_family.h"
#include "jf_msg_run.h"
#include "jf_run_spec.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static const char *const s_drops[] = {"none", "helper", "fadvise", "simulated"};

#define S_N_DROPS ((int) (sizeof s_drops / sizeof s_drops[0]))

const char *jf_measure_drop_name(jf_measure_drop_t drop)
{
    return (unsigned) drop < (unsigned) S_N_DROPS ? s_drops[drop] : "?";
}

const char *jf_measure_total_name(jf_measure_total_t total)
{
    static const char *const names[] = {
        [JF_MEASURE_TOTAL_NONE] = "none",
        [JF_MEASURE_TOTAL_INPUT_RAIL] = "input-rail",
        [JF_MEASURE_TOTAL_SUM_OF_RAILS] = "sum-of-rails",
        [JF_MEASURE_TOTAL_RAPL] = "rapl",
    };
    if ((int) total < 0 || (size_t) total >= sizeof names / sizeof names[0]) {
        return "?";
    }
    return names[total];
}

// ---------------------------------------------------------------------------------------------
// Builder

// Sets key to a string unless it is empty; nonzero when out of memory.
static int s_set_text(json_t *o, const char *key, const char *text)
{
    return o && text[0] ? json_object_set_new(o, key, json_string(text)) : 0;
}

static json_t *s_telemetry_json(const jf_measure_t *m)
{
    json_t *t = json_pack("{s:s, s:i, s:f, s:I, s:I, s:I, s:I}", "source", m->source, "rate_hz",
                          m->rate_hz, "achieved_rate_hz", m->achieved_rate_hz, "samples",
                          (json_int_t) m->samples, "late", (json_int_t) m->late, "missed",
                          (json_int_t) m->missed, "max_gap_us", (json_int_t) m->max_gap_us);
    int bad = s_set_text(t, "time_base", m->time_base);
    if (t && m->wall_rate_hz > 0) {
        bad |= json_object_set_new(t, "wall_rate_hz", json_integer(m->wall_rate_hz));
    }
    if (bad) {
        json_decref(t);
        return NULL;
    }
    return t;
}

static json_t *s_rails_json(const jf_measure_t *m)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < m->n_rails; i++) {
        const jf_measure_rail_t *r = &m->rails[i];
        if (json_array_append_new(a, json_pack("{s:s, s:f, s:f, s:f}", "name", r->name, "energy_mj",
                                               r->energy_mj, "avg_power_mw", r->avg_power_mw,
                                               "peak_power_mw", r->peak_power_mw)) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *s_energy_json(const jf_measure_t *m)
{
    json_t *e =
        json_pack("{s:s, s:o}", "total", jf_measure_total_name(m->total), "rails", s_rails_json(m));
    if (!e || m->total == JF_MEASURE_TOTAL_NONE) {
        if (s_set_text(e, "reason", m->reason) != 0) {
            json_decref(e);
            return NULL;
        }
        return e;
    }
    if (s_set_text(e, "source", m->energy_source) != 0 || s_set_text(e, "covers", m->covers) != 0) {
        json_decref(e);
        return NULL;
    }
    json_t *fig = json_pack("{s:f, s:f, s:f, s:I}", "energy_mj", m->energy_mj, "avg_power_mw",
                            m->avg_power_mw, "peak_power_mw", m->peak_power_mw, "covered_us",
                            (json_int_t) m->covered_us);
    bool bad = !fig || json_object_update_new(e, fig) != 0;
    if (!bad && m->input_rail[0]) {
        bad = json_object_set_new(e, "input_rail", json_string(m->input_rail)) != 0;
    }
    if (!bad && m->tegrastats_interval_ms > 0 &&
        strcmp(m->energy_source, JF_MEASURE_SOURCE_TEGRASTATS) == 0) {
        bad = json_object_set_new(e, "tegrastats_interval_ms",
                                  json_integer(m->tegrastats_interval_ms)) != 0;
    }
    if (bad) {
        json_decref(e);
        return NULL;
    }
    return e;
}

static json_t *s_cache_json(const jf_measure_t *m)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < m->n_cache; i++) {
        const jf_measure_cache_t *c = &m->cache[i];
        json_t *o = json_pack("{s:i}", "epoch", c->epoch);
        int bad = !o;
        if (o && c->has_before) {
            bad |= json_object_set_new(o, "resident_before", json_real(c->before));
        }
        if (o && c->has_after) {
            bad |= json_object_set_new(o, "resident_after", json_real(c->after));
        }
        if (bad || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

// The optional parts: storage, disk, dataset size and cache.
static int s_add_optional(json_t *rec, const jf_measure_t *m)
{
    int bad = 0;
    if (m->has_storage) {
        bad |= json_object_set_new(rec, "storage",
                                   json_pack("{s:s, s:s, s:s, s:b}", "medium", m->medium, "mount",
                                             m->mount, "device", m->device, "checked",
                                             m->storage_checked));
    }
    if (m->has_disk) {
        bad |= json_object_set_new(rec, "disk",
                                   json_pack("{s:s, s:I, s:I, s:I}", "device", m->disk_device,
                                             "reads", (json_int_t) m->disk_reads, "read_bytes",
                                             (json_int_t) m->disk_read_bytes, "read_time_us",
                                             (json_int_t) m->disk_read_time_us));
    }
    if (m->dataset_bytes > 0) {
        bad |= json_object_set_new(rec, "dataset_bytes", json_integer(m->dataset_bytes));
    }
    if (m->n_cache > 0) {
        bad |= json_object_set_new(rec, "cache", s_cache_json(m));
    }
    return bad ? -ENOMEM : 0;
}

json_t *jf_measure_to_json(const jf_measure_t *m)
{
    if (!m->power_mode) {
        return NULL;
    }
    json_t *rec = json_pack("{s:s, s:o, s:o, s:O, s:s}", "kind", "measure", "telemetry",
                            s_telemetry_json(m), "energy", s_energy_json(m), "power_mode",
                            m->power_mode, "drop_caches", jf_measure_drop_name(m->drop_caches));
    if (!rec || s_add_optional(rec, m) != 0 || jf_measure_check(rec, NULL) != 0) {
        json_decref(rec);
        return NULL;
    }
    return rec;
}

// ---------------------------------------------------------------------------------------------
// Checker

// A required string member of 1..max bytes.
static int s_word(const json_t *o, const char *key, size_t max, bool may_be_empty, jf_err_t *err)
{
    char buf[JF_MEASURE_MOUNT_MAX + 1];
    int rc = jf_msg_get_str(o, key, false, buf, max + 1, err);
    if (rc == 0 && !may_be_empty && buf[0] == '\0') {
        rc = jf_err_set(err, -EINVAL, "'%s' must not be empty", key);
    }
    return rc;
}

static int s_object(const json_t *o, const char *key, jf_err_t *err)
{
    return json_is_object(o) ? 0 : jf_err_set(err, -EPROTO, "'%s' must be an object", key);
}

static int s_array(const json_t *a, const char *key, size_t max, jf_err_t *err)
{
    if (!json_is_array(a) || json_array_size(a) > max) {
        return jf_err_set(err, -EPROTO, "'%s' must be an array of at most %zu items", key, max);
    }
    return 0;
}

static int s_check_telemetry(const json_t *t, jf_err_t *err)
{
    static const char *const keys[] = {"source",     "rate_hz",   "achieved_rate_hz",
                                       "samples",    "late",      "missed",
                                       "max_gap_us", "time_base", "wall_rate_hz",
                                       NULL};
    int64_t i = 0;
    double x = 0;
    int rc = s_object(t, "telemetry", err);
    rc = rc ? rc : jf_msg_only_keys(t, keys, err);
    if (rc == 0 && json_object_get(t, "time_base")) {
        rc = s_word(t, "time_base", JF_MEASURE_TEXT_MAX, false, err);
    }
    if (rc == 0 && json_object_get(t, "wall_rate_hz")) {
        rc = jf_msg_get_int(t, "wall_rate_hz", 1, JF_TELEMETRY_HZ_MAX, &i, err);
    }
    rc = rc ? rc : s_word(t, "source", JF_MEASURE_WORD_MAX, true, err);
    rc = rc ? rc : jf_msg_get_int(t, "rate_hz", 1, JF_TELEMETRY_HZ_MAX, &i, err);
    rc = rc ? rc : jf_msg_get_num(t, "achieved_rate_hz", 0, JF_MEASURE_RATE_MAX_HZ, &x, err);
    rc = rc ? rc : jf_msg_get_int(t, "samples", 0, JF_MEASURE_COUNT_MAX, &i, err);
    rc = rc ? rc : jf_msg_get_int(t, "late", 0, JF_MEASURE_COUNT_MAX, &i, err);
    rc = rc ? rc : jf_msg_get_int(t, "missed", 0, JF_MEASURE_COUNT_MAX, &i, err);
    return rc ? rc : jf_msg_get_int(t, "max_gap_us", 0, JF_MEASURE_US_MAX, &i, err);
}

// energy_mj, avg_power_mw and peak_power_mw of a run, a rail or nothing else.
static int s_figures(const json_t *o, jf_err_t *err)
{
    double x = 0;
    int rc = jf_msg_get_num(o, "energy_mj", 0, JF_REC_ENERGY_MAX_MJ, &x, err);
    rc = rc ? rc : jf_msg_get_num(o, "avg_power_mw", 0, JF_REC_POWER_MAX_MW, &x, err);
    return rc ? rc : jf_msg_get_num(o, "peak_power_mw", 0, JF_REC_POWER_MAX_MW, &x, err);
}

static int s_check_rails(const json_t *a, jf_err_t *err)
{
    static const char *const keys[] = {"name", "energy_mj", "avg_power_mw", "peak_power_mw", NULL};
    int rc = s_array(a, "rails", JF_MEASURE_RAILS_MAX, err);
    size_t i = 0;
    json_t *r = NULL;
    json_array_foreach (a, i, r) {
        rc = rc ? rc : s_object(r, "rails[]", err);
        rc = rc ? rc : jf_msg_only_keys(r, keys, err);
        rc = rc ? rc : s_word(r, "name", JF_MEASURE_RAIL_NAME_MAX, false, err);
        rc = rc ? rc : s_figures(r, err);
        if (rc != 0) {
            jf_err_prefix(err, "rails[%zu]", i);
            return rc;
        }
    }
    return rc;
}

static int s_total_parse(const json_t *e, jf_measure_total_t *ret, jf_err_t *err)
{
    const char *name = json_string_value(json_object_get(e, "total"));
    for (int t = JF_MEASURE_TOTAL_NONE; name && t <= JF_MEASURE_TOTAL_RAPL; t++) {
        if (strcmp(name, jf_measure_total_name((jf_measure_total_t)t)) == 0) {
            *ret = (jf_measure_total_t)t;
            return 0;
        }
    }
    return jf_err_set(err, -EINVAL, "'total' must be one of input-rail, sum-of-rails, rapl, none");
}

// energy.source (optional): where the figures come from, one of JF_MEASURE_SOURCE_* (a board's
// power monitor, tegrastats' rails, a host's RAPL counters, a sim board's modelled rails);
// tegrastats_interval_ms only with source tegrastats.
static int s_check_energy_source(const json_t *e, jf_err_t *err)
{
    static const char *const sources[] = {
        JF_MEASURE_SOURCE_POWER_MONITOR, JF_MEASURE_SOURCE_TEGRASTATS, JF_MEASURE_SOURCE_RAPL,
        JF_MEASURE_SOURCE_SIMULATED};
    const char *source = json_string_value(json_object_get(e, "source"));
    int64_t ms = 0;
    int rc = 0;
    if (json_object_get(e, "source")) {
        rc = jf_err_set(err, -EINVAL,
                        "'source' must be one of power-monitor, tegrastats, rapl, simulated");
        for (size_t i = 0; source && i < sizeof sources / sizeof sources[0]; i++) {
            rc = strcmp(source, sources[i]) == 0 ? 0 : rc;
        }
    }
    if (rc == 0 && json_object_get(e, "tegrastats_interval_ms")) {
        rc = source && strcmp(source, JF_MEASURE_SOURCE_TEGRASTATS) == 0
                 ? jf_msg_get_int(e, "tegrastats_interval_ms", 1, JF_MEASURE_TS_INTERVAL_MAX_MS,
                                  &ms, err)
                 : jf_err_set(err, -EINVAL, "'tegrastats_interval_ms' needs source 'tegrastats'");
    }
    return rc;
}

static int s_check_energy(const json_t *e, jf_err_t *err)
{
    static const char *const keys[] = {"total",         "input_rail", "energy_mj", "avg_power_mw",
                                       "peak_power_mw", "covered_us", "rails",     "source",
                                       "tegrastats_interval_ms", "covers", NULL};
    static const char *const none_keys[] = {"total", "rails", "reason", NULL};
    jf_measure_total_t total = JF_MEASURE_TOTAL_NONE;
    int64_t us = 0;
    int rc = s_object(e, "energy", err);
    rc = rc ? rc : s_total_parse(e, &total, err);
    rc = rc ? rc : jf_msg_only_keys(e, total == JF_MEASURE_TOTAL_NONE ? none_keys : keys, err);
    if (rc == 0 && total != JF_MEASURE_TOTAL_NONE) {
        rc = s_figures(e, err);
        rc = rc ? rc : jf_msg_get_int(e, "covered_us", 0, JF_MEASURE_US_MAX, &us, err);
    }
    if (rc == 0 && json_object_get(e, "input_rail")) {
        rc = s_word(e, "input_rail", JF_MEASURE_RAIL_NAME_MAX, false, err);
    }
    rc = rc ? rc : s_check_energy_source(e, err);
    if (rc == 0 && json_object_get(e, "covers")) {
        rc = s_word(e, "covers", JF_MEASURE_TEXT_MAX, false, err);
    }
    if (rc == 0 && json_object_get(e, "reason")) {
        rc = s_word(e, "reason", JF_MEASURE_NOTE_MAX, false, err);
    }
    return rc ? rc : s_check_rails(json_object_get(e, "rails"), err);
}

static int s_check_int_array(const json_t *a, const char *key, int64_t hi, jf_err_t *err)
{
    int rc = s_array(a, key, JF_MEASURE_CPUS_MAX, err);
    size_t i = 0;
    json_t *v = NULL;
    json_array_foreach (a, i, v) {
        if (rc == 0 &&
            (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > hi)) {
            rc = jf_err_set(err, -EINVAL, "'%s[%zu]' must be an integer in [0, %lld]", key, i,
                            (long long) hi);
        }
    }
    return rc;
}

static int s_check_clusters(const json_t *a, jf_err_t *err)
{
    static const char *const keys[] = {"first_core", "min_hz", "max_hz", NULL};
    int rc = s_array(a, "cpu_clusters", JF_MEASURE_CLUSTERS_MAX, err);
    size_t i = 0;
    json_t *c = NULL;
    int64_t x = 0;
    json_array_foreach (a, i, c) {
        rc = rc ? rc : s_object(c, "cpu_clusters[]", err);
        rc = rc ? rc : jf_msg_only_keys(c, keys, err);
        rc = rc ? rc : jf_msg_get_int(c, "first_core", 0, JF_MEASURE_CPUS_MAX - 1, &x, err);
        rc = rc ? rc : jf_msg_get_int(c, "min_hz", 0, JF_MEASURE_HZ_MAX, &x, err);
        rc = rc ? rc : jf_msg_get_int(c, "max_hz", 0, JF_MEASURE_HZ_MAX, &x, err);
        if (rc != 0) {
            jf_err_prefix(err, "cpu_clusters[%zu]", i);
            return rc;
        }
    }
    return rc;
}

// Every member is optional: a quantity the board does not expose is left out (STYLE.md §7).
static int s_check_power_optional(const json_t *p, const char *key, jf_err_t *err)
{
    char text[JF_MEASURE_NOTE_MAX + 1];
    int64_t x = 0;
    bool b = false;
    if (strcmp(key, "mode_id") == 0) {
        return jf_msg_get_int(p, key, 0, JF_POWER_MODE_ID_MAX, &x, err);
    }
    if (strcmp(key, "mode_name") == 0) {
        int rc = jf_msg_get_str(p, key, false, text, JF_POWER_MODE_NAME_MAX + 1, err);
        return rc == 0 && !jf_board_is_mode_name(text)
                   ? jf_err_set(err, -EINVAL, "'mode_name' must be a mode name")
                   : rc;
    }
    if (strcmp(key, "online_cpus") == 0) {
        return s_check_int_array(json_object_get(p, key), key, JF_MEASURE_CPUS_MAX - 1, err);
    }
    if (strcmp(key, "cpu_clusters") == 0) {
        return s_check_clusters(json_object_get(p, key), err);
    }
    if (strcmp(key, "dvfs_off") == 0) {
        return jf_msg_get_bool(p, key, &b, err);
    }
    if (strcmp(key, "note") == 0) {
        return jf_msg_get_str(p, key, false, text, sizeof text, err);
    }
    return jf_msg_get_int(p, key, 0, JF_MEASURE_HZ_MAX, &x, err); // gpu_*_hz, emc_cap_hz
}

static int s_check_power(const json_t *p, jf_err_t *err)
{
    static const char *const keys[] = {"mode_id",    "mode_name",  "online_cpus", "cpu_clusters",
                                       "gpu_min_hz", "gpu_max_hz", "emc_cap_hz",  "dvfs_off",
                                       "note",       NULL};
    int rc = s_object(p, "power_mode", err);
    rc = rc ? rc : jf_msg_only_keys(p, keys, err);
    for (const char *const *k = keys; rc == 0 && *k; k++) {
        if (json_object_get(p, *k)) {
            rc = s_check_power_optional(p, *k, err);
        }
    }
    return rc;
}

static int s_check_storage(const json_t *s, jf_err_t *err)
{
    static const char *const keys[] = {"medium", "mount", "device", "checked", NULL};
    char medium[JF_IDENT_MAX + 1] = "";
    bool b = false;
    int rc = s_object(s, "storage", err);
    rc = rc ? rc : jf_msg_only_keys(s, keys, err);
    rc = rc ? rc : jf_msg_get_str(s, "medium", false, medium, sizeof medium, err);
    if (rc == 0 && !jf_run_spec_is_medium(medium)) {
        rc = jf_err_set(err, -EINVAL, "'medium' must be one of %s", jf_run_spec_media());
    }
    rc = rc ? rc : s_word(s, "mount", JF_MEASURE_MOUNT_MAX, false, err);
    if (rc == 0 && json_string_value(json_object_get(s, "mount"))[0] != '/') {
        rc = jf_err_set(err, -EINVAL, "'mount' must be an absolute path");
    }
    rc = rc ? rc : s_word(s, "device", JF_MEASURE_DEVICE_MAX, true, err);
    return rc ? rc : jf_msg_get_bool(s, "checked", &b, err);
}

static int s_check_disk(const json_t *d, jf_err_t *err)
{
    static const char *const keys[] = {"device", "reads", "read_bytes", "read_time_us", NULL};
    int64_t x = 0;
    int rc = s_object(d, "disk", err);
    rc = rc ? rc : jf_msg_only_keys(d, keys, err);
    rc = rc ? rc : s_word(d, "device", JF_MEASURE_DEVICE_MAX, false, err);
    rc = rc ? rc : jf_msg_get_int(d, "reads", 0, JF_MEASURE_COUNT_MAX, &x, err);
    rc = rc ? rc : jf_msg_get_int(d, "read_bytes", 0, JF_MEASURE_BYTES_MAX, &x, err);
    return rc ? rc : jf_msg_get_int(d, "read_time_us", 0, JF_MEASURE_US_MAX, &x, err);
}

static int s_check_cache_entry(const json_t *c, jf_err_t *err)
{
    static const char *const keys[] = {"epoch", "resident_before", "resident_after", NULL};
    int64_t epoch = 0;
    double f = 0;
    int rc = s_object(c, "cache[]", err);
    rc = rc ? rc : jf_msg_only_keys(c, keys, err);
    rc = rc ? rc : jf_msg_get_int(c, "epoch", 0, JF_EPOCHS_MAX - 1, &epoch, err);
    if (rc == 0 && json_object_get(c, "resident_before")) {
        rc = jf_msg_get_num(c, "resident_before", 0, 1, &f, err);
    }
    if (rc == 0 && json_object_get(c, "resident_after")) {
        rc = jf_msg_get_num(c, "resident_after", 0, 1, &f, err);
    }
    return rc;
}

static int s_check_cache(const json_t *a, jf_err_t *err)
{
    int rc = s_array(a, "cache", JF_MEASURE_CACHE_MAX, err);
    if (rc != 0) {
        jf_err_prefix(err, "measure");
    }
    size_t i = 0;
    json_t *c = NULL;
    json_array_foreach (a, i, c) {
        if (rc == 0 && (rc = s_check_cache_entry(c, err)) != 0) {
            jf_err_prefix(err, "measure.cache[%zu]", i);
        }
    }
    return rc;
}

static int s_check_drop(const json_t *rec, jf_err_t *err)
{
    const char *name = json_string_value(json_object_get(rec, "drop_caches"));
    for (int i = 0; name && i < S_N_DROPS; i++) {
        if (strcmp(name, s_drops[i]) == 0) {
            return 0;
        }
    }
    return jf_err_set(err, -EINVAL,
                      "'drop_caches' must be one of none, helper, fadvise, simulated");
}

// Runs check on member key of rec (required or not), prefixing a failure with the key.
static int s_member(const json_t *rec, const char *key, bool required,
                    int (*check)(const json_t *, jf_err_t *), jf_err_t *err)
{
    const json_t *v = json_object_get(rec, key);
    if (!v && !required) {
        return 0;
    }
    int rc = check(v, err);
    if (rc != 0) {
        jf_err_prefix(err, "measure.%s", key);
    }
    return rc;
}

int jf_measure_check(const json_t *rec, jf_err_t *err)
{
    static const char *const keys[] = {"kind",    "telemetry",   "energy", "power_mode",
                                       "storage", "drop_caches", "disk",   "dataset_bytes",
                                       "cache",   NULL};
    int64_t x = 0;
    int rc = jf_msg_only_keys(rec, keys, err);
    rc = rc ? rc : s_member(rec, "telemetry", true, s_check_telemetry, err);
    rc = rc ? rc : s_member(rec, "energy", true, s_check_energy, err);
    rc = rc ? rc : s_member(rec, "power_mode", true, s_check_power, err);
    rc = rc ? rc : s_member(rec, "storage", false, s_check_storage, err);
    rc = rc ? rc : s_check_drop(rec, err);
    rc = rc ? rc : s_member(rec, "disk", false, s_check_disk, err);
    if (rc == 0 && json_object_get(rec, "cache")) {
        rc = s_check_cache(json_object_get(rec, "cache"), err);
    }
    if (rc == 0 && json_object_get(rec, "dataset_bytes")) {
        rc = jf_msg_get_int(rec, "dataset_bytes", 0, JF_MEASURE_BYTES_MAX, &x, err);
    }
    return rc;
}

// ---------------------------------------------------------------------------------------------
// Reader

size_t jf_measure_cache_count(const json_t *rec)
{
    return json_array_size(json_object_get(rec, "cache"));
}

int jf_measure_cache_at(const json_t *rec, size_t i, jf_measure_cache_t *ret_cache)
{
    const json_t *c = json_array_get(json_object_get(rec, "cache"), i);
    if (!c) {
        return -ENOENT;
    }
    const json_t *b = json_object_get(c, "resident_before");
    const json_t *a = json_object_get(c, "resident_after");
    *ret_cache =
        (jf_measure_cache_t){.epoch = (int) json_integer_value(json_object_get(c, "epoch")),
                             .has_before = b != NULL,
                             .before = json_number_value(b),
                             .has_after = a != NULL,
                             .after = json_number_value(a)};
    return 0;
}
