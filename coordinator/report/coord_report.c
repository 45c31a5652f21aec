/* The report's data (coord_report.h): the sweep's valid observations, the figures drawn from
 * epochs (fetch stall / compute / E2E by workers and medium, the epoch time series with cache
 * residency) and from one run's telemetry (power and utilisation). The analysis figures are in
 * coord_report_figs.c. docs/report.md lists every figure and where its numbers come from. */
#include "coord_report_internal.h"

#include "coord_stats.h"
#include "jf_units.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define S_SUMMARY_MAX 512
#define S_LABEL_MAX   320

json_t *coord_report_fig_new(const char *id, const char *title, const char *kind,
                             const char *x_label, const char *y_label)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:[]}", "id", id, "title", title, "kind", kind,
                     "x_label", x_label, "y_label", y_label, "simulated", 0, "datasets");
}

json_t *coord_report_fig_dataset(json_t *fig, const char *label, const char *axis)
{
    json_t *ds = json_pack("{s:s, s:s, s:[]}", "label", label, "axis", axis, "data");
    if (!ds || json_array_append_new(json_object_get(fig, "datasets"), ds) != 0) {
        return NULL;
    }
    return json_object_get(ds, "data");
}

void coord_report_fig_no_data(json_t *fig, const char *fmt, ...)
{
    char why[S_LABEL_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    (void) json_object_set_new(fig, "no_data", json_string(why)); // out of memory: drawn empty
}

int coord_report_xy(json_t *data, double x, double y)
{
    return json_array_append_new(data, json_pack("{s:f, s:f}", "x", x, "y", y)) == 0 ? 0 : -ENOMEM;
}

int coord_report_add(json_t *figs, json_t *fig, jf_err_t *err)
{
    if (!fig || json_array_append_new(figs, fig) != 0) {
        return jf_err_set(err, -ENOMEM, "report: out of memory");
    }
    return 0;
}

bool coord_report_obs_is_sim(const coord_report_ctx_t *ctx, const coord_obs_t *obs)
{
    return ctx->origin_sim || strcmp(obs->platform, "sim") == 0;
}

static int s_origin_row(int ncols, const char *const *names, const char *const *values,
                        const coord_value_kind_t *kinds, void *arg)
{
    (void) kinds;
    for (int i = 0; i < ncols; i++) {
        if (strcmp(names[i], "origin") == 0 && values[i] && strcmp(values[i], "simulated") == 0) {
            *(bool *) arg = true;
        }
    }
    return 0;
}

static int s_keep_obs(const coord_obs_t *obs, void *arg)
{
    coord_report_ctx_t *ctx = arg;
    if (!coord_valid_runs_has(ctx->valid, obs->run)) {
        return 0;
    }
    if (ctx->n_obs == ctx->cap_obs) {
        size_t cap = ctx->cap_obs ? 2 * ctx->cap_obs : 64;
        coord_obs_t *more = realloc(ctx->obs, cap * sizeof *more);
        if (!more) {
            return -ENOMEM;
        }
        ctx->obs = more;
        ctx->cap_obs = cap;
    }
    ctx->obs[ctx->n_obs++] = *obs;
    return 0;
}

// The per-epoch mean of stall, compute and E2E (seconds) for one group of observations.
static int s_breakdown_group(const coord_report_ctx_t *ctx, size_t first, json_t *data[3],
                             bool *sim, jf_err_t *err)
{
    const coord_obs_t *g = &ctx->obs[first];
    double *v = malloc(3 * ctx->n_obs * sizeof *v);
    if (!v) {
        return jf_err_set(err, -ENOMEM, "report: out of memory");
    }
    size_t n = 0;
    for (size_t i = first; i < ctx->n_obs; i++) {
        const coord_obs_t *o = &ctx->obs[i];
        if (strcmp(o->workload, g->workload) == 0 && strcmp(o->storage, g->storage) == 0 &&
            o->workers == g->workers) {
            v[n] = (double) o->fetch_stall_us / JF_US_PER_S;
            v[ctx->n_obs + n] = (double) o->compute_us / JF_US_PER_S;
            v[2 * ctx->n_obs + n] = (double) o->e2e_us / JF_US_PER_S;
            *sim = *sim || coord_report_obs_is_sim(ctx, o);
            n++;
        }
    }
    int rc = 0;
    for (int m = 0; rc == 0 && m < 3; m++) {
        coord_stats_t s = {0};
        rc = coord_stats_compute(v + (size_t) m * ctx->n_obs, n, &s, err);
        rc = rc == 0 && json_array_append_new(data[m], json_real(s.mean)) != 0 ? -ENOMEM : rc;
    }
    free(v);
    return rc;
}

static bool s_seen_group(const coord_report_ctx_t *ctx, size_t i)
{
    const coord_obs_t *o = &ctx->obs[i];
    for (size_t j = 0; j < i; j++) {
        const coord_obs_t *p = &ctx->obs[j];
        if (strcmp(o->workload, p->workload) == 0 && strcmp(o->storage, p->storage) == 0 &&
            o->workers == p->workers) {
            return true;
        }
    }
    return false;
}

// Fetch stall, compute and E2E per epoch, by workload, storage medium and loader workers.
static int s_fig_breakdown(const coord_report_ctx_t *ctx, json_t *figs, jf_err_t *err)
{
    json_t *fig = coord_report_fig_new(
        "epoch_breakdown", "Fetch stall, compute and E2E per epoch, by storage medium and workers",
        "bar", "workload, storage medium, loader workers", "mean per epoch (s)");
    json_t *labels = json_array();
    json_t *data[3] = {fig ? coord_report_fig_dataset(fig, "fetch stall", "y") : NULL,
                       fig ? coord_report_fig_dataset(fig, "compute", "y") : NULL,
                       fig ? coord_report_fig_dataset(fig, "E2E (epoch wall time)", "y") : NULL};
    int rc = fig && labels && data[0] && data[1] && data[2] ? 0 : -ENOMEM;
    bool sim = false;
    for (size_t i = 0; rc == 0 && i < ctx->n_obs; i++) {
        if (s_seen_group(ctx, i)) {
            continue;
        }
        char label[S_LABEL_MAX];
        snprintf(label, sizeof label, "%s, %s, %d workers", ctx->obs[i].workload,
                 ctx->obs[i].storage, ctx->obs[i].workers);
        rc = json_array_append_new(labels, json_string(label)) == 0 ? 0 : -ENOMEM;
        rc = rc == 0 ? s_breakdown_group(ctx, i, data, &sim, err) : rc;
    }
    if (rc == -ENOMEM) {
        json_decref(labels);
        json_decref(fig);
        return jf_err_set(err, -ENOMEM, "report: out of memory");
    }
    (void) json_object_set_new(fig, "labels", labels); // out of memory: the page says no labels
    (void) json_object_set_new(fig, "simulated", json_boolean(sim));
    if (ctx->n_obs == 0) {
        coord_report_fig_no_data(fig, "no measured epoch in the sweep's valid runs");
    }
    return rc == 0 ? coord_report_add(figs, fig, err) : (json_decref(fig), rc);
}

// The platform of a valid run (from its observations); NULL when it has none.
static const coord_obs_t *s_run_obs(const coord_report_ctx_t *ctx, const char *run)
{
    for (size_t i = 0; i < ctx->n_obs; i++) {
        if (strcmp(ctx->obs[i].run, run) == 0) {
            return &ctx->obs[i];
        }
    }
    return NULL;
}

// Column index of name among a selected row's columns, -1 when absent.
static int s_col(int ncols, const char *const *names, const char *name)
{
    for (int i = 0; i < ncols; i++) {
        if (strcmp(names[i], name) == 0) {
            return i;
        }
    }
    return -1;
}

typedef struct s_series {
    const coord_report_ctx_t *ctx;    // borrowed
    json_t *fig;                      // borrowed: the figure being filled
    char run[COORD_OBS_NAME_MAX + 1]; // run of the datasets being filled
    json_t *e2e, *cache;              // borrowed: that run's datasets
    size_t runs;                      // valid runs met
    size_t cache_points;              // residencies drawn
    bool sim;                         // a drawn run is simulated
} s_series_t;

static int s_series_start(s_series_t *s, const char *run)
{
    const coord_obs_t *o = s_run_obs(s->ctx, run);
    snprintf(s->run, sizeof s->run, "%s", run);
    s->runs++;
    s->e2e = s->cache = NULL;
    if (s->runs > COORD_REPORT_SERIES_MAX || !o) {
        return 0;
    }
    s->sim = s->sim || coord_report_obs_is_sim(s->ctx, o);
    char label[S_LABEL_MAX];
    snprintf(label, sizeof label, "%s on %s: E2E", run, o->board);
    s->e2e = coord_report_fig_dataset(s->fig, label, "y");
    snprintf(label, sizeof label, "%s on %s: cache residency after", run, o->board);
    s->cache = coord_report_fig_dataset(s->fig, label, "y2");
    return s->e2e && s->cache ? 0 : -ENOMEM;
}

static int s_series_row(int ncols, const char *const *names, const char *const *values,
                        const coord_value_kind_t *kinds, void *arg)
{
    (void) kinds;
    s_series_t *s = arg;
    int c_run = s_col(ncols, names, "run");
    int c_epoch = s_col(ncols, names, "epoch");
    int c_e2e = s_col(ncols, names, "e2e_s"); // the table gives seconds
    int c_cache = s_col(ncols, names, "cache_resident_after");
    if (c_run < 0 || c_epoch < 0 || c_e2e < 0 || c_cache < 0 || !values[c_run] ||
        !coord_valid_runs_has(s->ctx->valid, values[c_run])) {
        return c_run < 0 || c_epoch < 0 || c_e2e < 0 || c_cache < 0 ? -EPROTO : 0;
    }
    int rc = strcmp(values[c_run], s->run) != 0 ? s_series_start(s, values[c_run]) : 0;
    if (rc != 0 || !s->e2e || !values[c_epoch] || !values[c_e2e]) {
        return rc;
    }
    double epoch = strtod(values[c_epoch], NULL);
    rc = coord_report_xy(s->e2e, epoch, strtod(values[c_e2e], NULL));
    if (rc == 0 && values[c_cache]) {
        s->cache_points++;
        rc = coord_report_xy(s->cache, epoch, 100.0 * strtod(values[c_cache], NULL));
    }
    return rc;
}

// Every epoch (warm-up, epoch 0, included) of the first valid runs, with cache residency.
static int s_fig_series(const coord_report_ctx_t *ctx, json_t *figs, jf_err_t *err)
{
    json_t *fig = coord_report_fig_new("epoch_series", "Epoch time series with cache residency",
                                       "line", "epoch (0: warm-up)", "epoch wall time E2E (s)");
    if (!fig) {
        return jf_err_set(err, -ENOMEM, "report: out of memory");
    }
    (void) json_object_set_new(fig, "y2_label", json_string("dataset in page cache after (%)"));
    s_series_t s = {.ctx = ctx, .fig = fig};
    int rc = coord_store_select(ctx->store, COORD_TABLE_EPOCHS, ctx->opts->sweep, "done",
                                s_series_row, &s, err);
    if (rc != 0) {
        json_decref(fig);
        return rc == -EPROTO ? jf_err_set(err, rc, "report: the epochs table lacks a column")
                             : (rc == -ENOMEM ? jf_err_set(err, rc, "report: out of memory") : rc);
    }
    char note[S_LABEL_MAX];
    snprintf(note, sizeof note, "%zu of %zu valid runs drawn%s",
             s.runs < COORD_REPORT_SERIES_MAX ? s.runs : (size_t) COORD_REPORT_SERIES_MAX, s.runs,
             s.cache_points ? "" : "; cache residency was not measured in any of them");
    (void) json_object_set_new(fig, "note", json_string(note));
    (void) json_object_set_new(fig, "simulated", json_boolean(s.sim));
    if (s.runs == 0) {
        coord_report_fig_no_data(fig, "no epoch of a valid run is stored");
    }
    return coord_report_add(figs, fig, err);
}

// The telemetry metrics the run figure draws, with their axis and the factor to its unit.
static const struct {
    const char *metric, *label, *axis;
    double scale;
} s_tele[] = {
    {"input_power_mw", "input power (W)", "y", 1e-3},
    {"cpu_load_pct", "CPU load (%)", "y2", 1.0},
    {"gpu_load_pct", "GPU load (%)", "y2", 1.0},
};
#define S_TELE_N (sizeof s_tele / sizeof s_tele[0])

typedef struct s_tele_acc {
    const coord_report_ctx_t *ctx;    // borrowed
    char run[COORD_OBS_NAME_MAX + 1]; // the run drawn; "" until chosen
    json_t *data[S_TELE_N];           // borrowed: the datasets
    int64_t t0_us;                    // first sample's time
    size_t points;                    // values drawn
} s_tele_acc_t;

static int s_tele_row(int ncols, const char *const *names, const char *const *values,
                      const coord_value_kind_t *kinds, void *arg)
{
    (void) kinds;
    s_tele_acc_t *a = arg;
    int c_run = s_col(ncols, names, "run");
    int c_t = s_col(ncols, names, "t_us");
    int c_metric = s_col(ncols, names, "metric");
    int c_value = s_col(ncols, names, "value");
    if (c_run < 0 || c_t < 0 || c_metric < 0 || c_value < 0) {
        return -EPROTO;
    }
    if (!values[c_run] || !values[c_t] || !values[c_metric] || !values[c_value]) {
        return 0;
    }
    if (a->run[0] == '\0' && coord_valid_runs_has(a->ctx->valid, values[c_run])) {
        snprintf(a->run, sizeof a->run, "%s", values[c_run]); // the first valid run with samples
    }
    if (strcmp(values[c_run], a->run) != 0) {
        return 0;
    }
    int64_t t_us = strtoll(values[c_t], NULL, 10);
    if (a->points == 0) {
        a->t0_us = t_us;
    }
    for (size_t i = 0; i < S_TELE_N; i++) {
        if (strcmp(values[c_metric], s_tele[i].metric) == 0) {
            a->points++;
            return coord_report_xy(a->data[i], (double) (t_us - a->t0_us) / JF_US_PER_S,
                                   s_tele[i].scale * strtod(values[c_value], NULL));
        }
    }
    return 0;
}

static void s_tele_label(json_t *fig, const coord_report_ctx_t *ctx, const char *run)
{
    const coord_run_validity_t *v = coord_valid_runs_verdict(ctx->valid, run);
    char text[3 * (COORD_OBS_NAME_MAX + 1) + COORD_VALIDITY_DETAIL_MAX + 64]; // all of it fits
    snprintf(text, sizeof text, "run %s on board %s (%s)%s%s", run, v ? v->board : "?",
             v ? v->platform : "?", v && !v->valid ? "; left out by jetfleet check: " : "",
             v && !v->valid ? v->detail : "");
    (void) json_object_set_new(fig, "note", json_string(text));
    bool sim = ctx->origin_sim || (v && strcmp(v->platform, "sim") == 0);
    (void) json_object_set_new(fig, "simulated", json_boolean(sim));
}

// Power and utilisation over one run (the chosen one, or the first valid run with telemetry).
static int s_fig_run(const coord_report_ctx_t *ctx, json_t *figs, jf_err_t *err)
{
    const char *run = ctx->opts->run;
    if (run && !coord_valid_runs_verdict(ctx->valid, run)) {
        return jf_err_set(err, -ENOENT, "report: run '%.200s' is not a done run of sweep '%.200s'",
                          run, ctx->opts->sweep);
    }
    json_t *fig = coord_report_fig_new("run_series", "Power and utilisation over one run", "line",
                                       "time since the first sample (s)", "input power (W)");
    s_tele_acc_t a = {.ctx = ctx};
    int rc = fig ? 0 : -ENOMEM;
    for (size_t i = 0; rc == 0 && i < S_TELE_N; i++) {
        a.data[i] = coord_report_fig_dataset(fig, s_tele[i].label, s_tele[i].axis);
        rc = a.data[i] ? 0 : -ENOMEM;
    }
    if (rc == 0) {
        (void) json_object_set_new(fig, "y2_label", json_string("load (%)"));
        snprintf(a.run, sizeof a.run, "%s", run ? run : "");
        rc = coord_store_select(ctx->store, COORD_TABLE_TELEMETRY, ctx->opts->sweep, "done",
                                s_tele_row, &a, err);
    }
    if (rc != 0) {
        json_decref(fig);
        return rc == -EPROTO || rc == -ENOMEM
                   ? jf_err_set(err, rc, "report: %s",
                                rc == -ENOMEM ? "out of memory" : "telemetry lacks a column")
                   : rc;
    }
    if (a.run[0] != '\0') {
        s_tele_label(fig, ctx, a.run);
    }
    if (a.points == 0) {
        if (run) {
            coord_report_fig_no_data(fig, "run '%s' has no power or load sample stored", run);
        } else {
            coord_report_fig_no_data(fig, "no valid run has telemetry stored");
        }
    }
    return coord_report_add(figs, fig, err);
}

static int s_valid_summary(const coord_report_ctx_t *ctx, json_t *data)
{
    const coord_validity_summary_t *s = coord_valid_runs_summary(ctx->valid);
    char text[S_SUMMARY_MAX];
    coord_validity_summary_format(s, text, sizeof text);
    char kinds[S_SUMMARY_MAX];
    coord_valid_runs_kinds_format(ctx->valid, kinds, sizeof kinds);
    json_t *v = json_pack("{s:I, s:I, s:s, s:I, s:s}", "runs", (json_int_t) s->runs, "valid",
                          (json_int_t) s->valid, "summary", text, "not_training",
                          (json_int_t) coord_valid_runs_left_kinds_total(ctx->valid),
                          "not_training_summary", kinds);
    return v && json_object_set_new(data, "valid_runs", v) == 0 ? 0 : -ENOMEM;
}

static int s_figures(coord_report_ctx_t *ctx, json_t *figs, jf_err_t *err)
{
    int rc = s_fig_breakdown(ctx, figs, err);
    rc = rc == 0 ? s_fig_series(ctx, figs, err) : rc;
    rc = rc == 0 ? coord_report_pareto(ctx, figs, err) : rc;
    rc = rc == 0 ? coord_report_variability(ctx, figs, err) : rc;
    rc = rc == 0 ? s_fig_run(ctx, figs, err) : rc;
    rc = rc == 0 ? coord_report_models(ctx, figs, err) : rc;
    return rc == 0 ? coord_report_roofline(ctx, figs, err) : rc;
}

json_t *coord_report_data(coord_store_t *store, const coord_report_opts_t *opts, jf_err_t *err)
{
    coord_report_ctx_t ctx = {.store = store, .opts = opts};
    json_t *data = NULL;
    if (coord_store_sweep_exists(store, opts->sweep, err) != 0) {
        return NULL;
    }
    ctx.valid = coord_valid_runs_new(store, opts->sweep, opts->valid, err);
    if (!ctx.valid) {
        return NULL;
    }
    const coord_validity_summary_t *s = coord_valid_runs_summary(ctx.valid);
    if (s->valid == 0) {
        char text[S_SUMMARY_MAX];
        coord_validity_summary_format(s, text, sizeof text);
        jf_err_set(err, -ENODATA, "sweep '%.200s' has no valid run (%s): nothing to report",
                   opts->sweep, s->runs ? text : "no done runs");
        goto out;
    }
    int rc = coord_store_select(store, COORD_TABLE_SWEEPS, opts->sweep, NULL, s_origin_row,
                                &ctx.origin_sim, err);
    rc = rc == 0 ? coord_store_obs_each(store, opts->sweep, s_keep_obs, &ctx, err) : rc;
    if (rc == -ENOMEM) {
        jf_err_set(err, rc, "report: out of memory");
    }
    data = rc == 0 ? json_pack("{s:s, s:[]}", "sweep", opts->sweep, "figures") : NULL;
    rc = rc == 0 && !data ? jf_err_set(err, -ENOMEM, "report: out of memory") : rc;
    rc = rc == 0 && s_valid_summary(&ctx, data) != 0
             ? jf_err_set(err, -ENOMEM, "report: out of memory")
             : rc;
    rc = rc == 0 ? s_figures(&ctx, json_object_get(data, "figures"), err) : rc;
    if (rc != 0) {
        json_decref(data);
        data = NULL;
    }
out:
    free(ctx.obs);
    coord_valid_runs_destroy(&ctx.valid);
    return data;
}
