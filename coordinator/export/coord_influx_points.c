/* Store rows -> line protocol points (coord_influx_points.h; names in docs/metrics.md). Telemetry
 * numbers are all written as floats: a JSON number may print as 41 in one sample and 41.5 in the
 * next, and InfluxDB refuses a field whose type changes. */
#include "coord_influx_points.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#define S_NS_PER_US INT64_C(1000)
#define S_KEY_MAX   128

static void s_run_tags(coord_influx_line_t *lines, const char *measurement,
                       const coord_influx_run_tags_t *tags)
{
    char attempt[24];
    (void) snprintf(attempt, sizeof attempt, "%" PRId64, tags->attempt);
    coord_influx_line_begin(lines, measurement);
    coord_influx_line_tag(lines, "board", tags->board);
    coord_influx_line_tag(lines, "board_type", tags->board_type);
    coord_influx_line_tag(lines, "run", tags->run);
    coord_influx_line_tag(lines, "attempt", attempt);
    coord_influx_line_tag(lines, "workload", tags->workload);
    coord_influx_line_tag(lines, "simulated", tags->simulated ? "true" : "false");
}

// Top-level numbers of the sample, except its clocks, as float fields.
static void s_sample_numbers(coord_influx_line_t *lines, const json_t *sample)
{
    const char *key = NULL;
    const json_t *v = NULL;
    json_object_foreach((json_t *) sample, key, v)
    {
        if (json_is_number(v) && strcmp(key, "t_us") != 0 && strcmp(key, "mono_us") != 0) {
            coord_influx_line_field_f64(lines, key, json_number_value(v));
        }
    }
}

// One point per core: load and frequency where the sample has them (null: offline, left out).
static int s_cores(coord_influx_line_t *lines, const coord_influx_run_tags_t *tags, int64_t t_ns,
                   const json_t *sample, jf_err_t *err)
{
    const json_t *load = json_object_get(sample, "cpu_core_load_pct");
    const json_t *freq = json_object_get(sample, "cpu_core_freq_hz");
    size_t n = json_array_size(load) > json_array_size(freq) ? json_array_size(load)
                                                             : json_array_size(freq);
    for (size_t i = 0; i < n; i++) {
        const json_t *l = json_array_get(load, i);
        const json_t *f = json_array_get(freq, i);
        if (!json_is_number(l) && !json_is_number(f)) {
            continue;
        }
        char core[24];
        (void) snprintf(core, sizeof core, "%zu", i);
        s_run_tags(lines, "jetfleet_cpu_core", tags);
        coord_influx_line_tag(lines, "core", core);
        if (json_is_number(l)) {
            coord_influx_line_field_f64(lines, "load_pct", json_number_value(l));
        }
        if (json_is_number(f)) {
            coord_influx_line_field_f64(lines, "freq_hz", json_number_value(f));
        }
        int rc = coord_influx_line_end(lines, t_ns, err);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int s_temps(coord_influx_line_t *lines, const coord_influx_run_tags_t *tags, int64_t t_ns,
                   const json_t *sample, jf_err_t *err)
{
    const char *zone = NULL;
    const json_t *v = NULL;
    json_object_foreach((json_t *) json_object_get(sample, "temps_mc"), zone, v)
    {
        if (!json_is_number(v)) {
            continue;
        }
        s_run_tags(lines, "jetfleet_temp", tags);
        coord_influx_line_tag(lines, "zone", zone);
        coord_influx_line_field_f64(lines, "temp_mc", json_number_value(v));
        int rc = coord_influx_line_end(lines, t_ns, err);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int s_rails(coord_influx_line_t *lines, const coord_influx_run_tags_t *tags, int64_t t_ns,
                   const json_t *sample, jf_err_t *err)
{
    size_t i = 0;
    const json_t *rail = NULL;
    json_array_foreach(json_object_get(sample, "rails"), i, rail)
    {
        const char *name = json_string_value(json_object_get(rail, "name"));
        if (!name) {
            continue;
        }
        s_run_tags(lines, "jetfleet_rail", tags);
        coord_influx_line_tag(lines, "rail", name);
        s_sample_numbers(lines, rail);
        int rc = coord_influx_line_end(lines, t_ns, err);
        if (rc != 0 && rc != -EINVAL) { // -EINVAL: a rail without any number, nothing to write
            return rc;
        }
    }
    return 0;
}

static int s_telemetry(coord_influx_line_t *lines, const coord_influx_run_tags_t *tags,
                       int64_t t_ns, const json_t *sample, jf_err_t *err)
{
    s_run_tags(lines, "jetfleet_telemetry", tags);
    coord_influx_line_tag(lines, "source", json_string_value(json_object_get(sample, "source")));
    s_sample_numbers(lines, sample);
    int rc = coord_influx_line_end(lines, t_ns, err);
    rc = rc ? rc : s_cores(lines, tags, t_ns, sample, err);
    rc = rc ? rc : s_temps(lines, tags, t_ns, sample, err);
    return rc ? rc : s_rails(lines, tags, t_ns, sample, err);
}

int coord_influx_points_telemetry(coord_influx_line_t *lines, const coord_influx_run_tags_t *tags,
                                  int64_t t_us, const char *sample_json, jf_err_t *err)
{
    json_error_t jerr;
    json_t *sample = json_loads(sample_json, 0, &jerr);
    if (!json_is_object(sample)) {
        json_decref(sample);
        return jf_err_set(err, -EPROTO,
                          "influx: stored sample of run '%s' attempt %" PRId64 " at %" PRId64
                          " is not a JSON object",
                          tags->run, tags->attempt, t_us);
    }
    size_t len = coord_influx_line_len(lines);
    size_t points = coord_influx_line_points(lines);
    int rc = s_telemetry(lines, tags, t_us * S_NS_PER_US, sample, err);
    json_decref(sample);
    if (rc != 0) {
        coord_influx_line_truncate(lines, len, points);
    }
    return rc;
}

static void s_opt_i64(coord_influx_line_t *lines, const char *key, const coord_export_row_t *row,
                      int col)
{
    if (row->kind[col] == COORD_VALUE_INT) {
        coord_influx_line_field_i64(lines, key, row->i[col]);
    }
}

static void s_opt_f64(coord_influx_line_t *lines, const char *key, const coord_export_row_t *row,
                      int col)
{
    if (row->kind[col] == COORD_VALUE_INT || row->kind[col] == COORD_VALUE_REAL) {
        coord_influx_line_field_f64(lines, key, row->d[col]);
    }
}

int coord_influx_points_minibatch(coord_influx_line_t *lines, const coord_influx_run_tags_t *tags,
                                  int64_t base_us, const coord_export_row_t *row, jf_err_t *err)
{
    // Columns: epoch, idx, samples, fetch_stall_us, compute_us, loss, cum_us.
    s_run_tags(lines, "jetfleet_minibatch", tags);
    s_opt_i64(lines, "epoch", row, 0);
    s_opt_i64(lines, "idx", row, 1);
    s_opt_i64(lines, "samples", row, 2);
    s_opt_i64(lines, "fetch_stall_us", row, 3);
    s_opt_i64(lines, "compute_us", row, 4);
    s_opt_f64(lines, "loss", row, 5);
    return coord_influx_line_end(lines, (base_us + row->i[6]) * S_NS_PER_US, err);
}

int coord_influx_points_epoch(coord_influx_line_t *lines, const coord_influx_run_tags_t *tags,
                              int64_t base_us, const coord_export_row_t *row, jf_err_t *err)
{
    // Columns: epoch, warmup, e2e_us, fetch_stall_us, compute_us, samples, loss, energy_mj,
    // avg_power_mw, peak_power_mw, cum_us.
    static const char *const ints[] = {"epoch",          "warmup",     "e2e_us",
                                       "fetch_stall_us", "compute_us", "samples"};
    static const char *const reals[] = {"loss", "energy_mj", "avg_power_mw", "peak_power_mw"};
    s_run_tags(lines, "jetfleet_epoch", tags);
    for (int c = 0; c < 6; c++) {
        s_opt_i64(lines, ints[c], row, c);
    }
    for (int c = 0; c < 4; c++) {
        s_opt_f64(lines, reals[c], row, 6 + c);
    }
    return coord_influx_line_end(lines, (base_us + row->i[10]) * S_NS_PER_US, err);
}

int coord_influx_points_result(coord_influx_line_t *lines, const coord_influx_run_tags_t *tags,
                               const coord_influx_result_t *result, const coord_export_row_t *row,
                               jf_err_t *err)
{
    // Columns: epochs, e2e_us, energy_mj.
    s_run_tags(lines, "jetfleet_run", tags);
    coord_influx_line_tag(lines, "state", result->state);
    s_opt_i64(lines, "epochs", row, 0);
    s_opt_i64(lines, "e2e_us", row, 1);
    s_opt_f64(lines, "energy_mj", row, 2);
    if (result->fail_reason) {
        coord_influx_line_field_str(lines, "fail_reason", result->fail_reason);
    }
    return coord_influx_line_end(lines, result->finished_us * S_NS_PER_US, err);
}

int coord_influx_points_fleet(coord_influx_line_t *lines, int64_t t_us,
                              const coord_export_row_t *row, jf_err_t *err)
{
    static const char *const keys[] = {"boards_online", "boards",    "runs_pending",
                                       "runs_active",   "runs_done", "runs_failed"};
    coord_influx_line_begin(lines, "jetfleet_fleet");
    for (int c = 0; c < 6; c++) {
        s_opt_i64(lines, keys[c], row, c);
    }
    return coord_influx_line_end(lines, t_us * S_NS_PER_US, err);
}

int coord_influx_points_sweep(coord_influx_line_t *lines, int64_t t_us,
                              const coord_export_row_t *row, jf_err_t *err)
{
    // Columns: name, runs, pending, active, done, failed (the counts as REAL from total()).
    static const char *const keys[] = {"runs", "runs_pending", "runs_active", "runs_done",
                                       "runs_failed"};
    coord_influx_line_begin(lines, "jetfleet_sweep");
    coord_influx_line_tag(lines, "sweep", row->s[0]);
    for (int c = 0; c < 5; c++) {
        coord_influx_line_field_i64(lines, keys[c], (int64_t) row->d[1 + c]);
    }
    return coord_influx_line_end(lines, t_us * S_NS_PER_US, err);
}
