/* The report's analysis figures (coord_report_internal.h): the time-energy Pareto front per
 * workload and board type (coord_points and coord_pareto, as jetfleet pareto), board-to-board
 * variability per board type (coord_variability, as jetfleet variability) and the stored models'
 * cross-validated errors (the models table, as jetfleet model list). Nothing is recomputed here. */
#include "coord_report_internal.h"

#include "coord_pareto.h"
#include "coord_points.h"
#include "coord_variability.h"
#include "jf_units.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S_LABEL_MAX 320
#define S_ID_MAX    300

// True when an earlier observation has the same workload (and type, when by_type).
static bool s_seen(const coord_report_ctx_t *ctx, size_t i, bool workload, bool type)
{
    const coord_obs_t *o = &ctx->obs[i];
    for (size_t j = 0; j < i; j++) {
        const coord_obs_t *p = &ctx->obs[j];
        if ((!workload || strcmp(o->workload, p->workload) == 0) &&
            (!type || strcmp(o->board_type, p->board_type) == 0)) {
            return true;
        }
    }
    return false;
}

// Whether any observation matching workload (NULL: any) and board or type is simulated.
static bool s_any_sim(const coord_report_ctx_t *ctx, const char *workload, const char *board,
                      const char *type)
{
    for (size_t i = 0; i < ctx->n_obs; i++) {
        const coord_obs_t *o = &ctx->obs[i];
        if ((!workload || strcmp(o->workload, workload) == 0) &&
            (!board || strcmp(o->board, board) == 0) &&
            (!type || strcmp(o->board_type, type) == 0) && coord_report_obs_is_sim(ctx, o)) {
            return true;
        }
    }
    return false;
}

static int s_pareto_fill(json_t *fig, const coord_pareto_point_t *modes, size_t n, jf_err_t *err)
{
    json_t *all =
        coord_report_fig_dataset(fig, "measured modes (repeats and boards averaged)", "y");
    json_t *front = coord_report_fig_dataset(fig, "Pareto front", "y");
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    int rc = all && front && idx ? 0 : jf_err_set(err, -ENOMEM, "report: out of memory");
    int m = rc == 0 ? coord_pareto_front(modes, n, idx, err) : rc;
    rc = m < 0 ? m : 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = coord_report_xy(all, modes[i].time_us / JF_US_PER_S, modes[i].energy_mj / 1e3);
    }
    for (int i = 0; rc == 0 && i < m; i++) {
        const coord_pareto_point_t *p = &modes[idx[i]];
        rc = coord_report_xy(front, p->time_us / JF_US_PER_S, p->energy_mj / 1e3);
    }
    free(idx);
    return rc == -ENOMEM ? jf_err_set(err, rc, "report: out of memory") : rc;
}

static int s_pareto_one(const coord_report_ctx_t *ctx, const coord_obs_t *o, json_t *figs,
                        jf_err_t *err)
{
    char id[S_ID_MAX], title[S_LABEL_MAX];
    snprintf(id, sizeof id, "pareto_%s_%s", o->workload, o->board_type);
    snprintf(title, sizeof title, "Time versus energy per epoch: %s on %s", o->workload,
             o->board_type);
    json_t *fig =
        coord_report_fig_new(id, title, "scatter", "epoch time (s)", "energy per epoch (J)");
    if (!fig) {
        return jf_err_set(err, -ENOMEM, "report: out of memory");
    }
    coord_points_filter_t f = {.workload = o->workload, .type = o->board_type, .valid = ctx->valid};
    coord_run_mean_t *runs = NULL;
    size_t n = 0, nmodes = 0;
    coord_points_left_t left = {0};
    coord_pareto_point_t *modes = NULL;
    int rc = coord_points_collect(ctx->store, ctx->opts->sweep, &f, &runs, &n, &left, err);
    rc = rc == 0 ? coord_points_modes(runs, n, &modes, &nmodes, err) : rc;
    rc = rc == 0 ? s_pareto_fill(fig, modes, nmodes, err) : rc;
    if (rc == 0 && nmodes == 0) {
        coord_report_fig_no_data(fig, "%s",
                                 n ? "no valid run of it has measured energy"
                                   : "no valid run has a known operating point");
    }
    char note[S_LABEL_MAX];
    snprintf(note, sizeof note,
             "%zu valid runs, %zu distinct modes; %zu left out without a known "
             "operating point, %zu as not plain training",
             n, nmodes, left.no_op, left.other_kind);
    (void) json_object_set_new(fig, "note", json_string(note));
    (void) json_object_set_new(fig, "simulated",
                               json_boolean(s_any_sim(ctx, o->workload, NULL, o->board_type)));
    free(modes);
    free(runs);
    return rc == 0 ? coord_report_add(figs, fig, err) : (json_decref(fig), rc);
}

int coord_report_pareto(const coord_report_ctx_t *ctx, json_t *figs, jf_err_t *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < ctx->n_obs; i++) {
        rc = s_seen(ctx, i, true, true) ? 0 : s_pareto_one(ctx, &ctx->obs[i], figs, err);
    }
    if (rc == 0 && ctx->n_obs == 0) {
        json_t *fig = coord_report_fig_new("pareto", "Time versus energy per epoch", "scatter",
                                           "epoch time (s)", "energy per epoch (J)");
        if (fig) {
            coord_report_fig_no_data(fig, "no measured epoch in the sweep's valid runs");
        }
        rc = coord_report_add(figs, fig, err);
    }
    return rc;
}

// The index of board among labels (appending it when new), or -1 when out of memory.
static int s_board_index(json_t *labels, const char *board)
{
    size_t i;
    json_t *v;
    json_array_foreach(labels, i, v)
    {
        if (strcmp(json_string_value(v), board) == 0) {
            return (int) i;
        }
    }
    return json_array_append_new(labels, json_string(board)) == 0 ? (int) i : -1;
}

// One group's board means of epoch wall time (s) as a dataset over the type's boards.
static int s_var_group(const coord_variability_t *var, size_t gi, json_t *fig, json_t *labels)
{
    const coord_var_group_t *g = coord_variability_group(var, gi);
    const coord_var_metric_t *m = &g->metric[COORD_METRIC_E2E];
    char label[S_LABEL_MAX * 2];
    int at =
        snprintf(label, sizeof label, "%s %s %s %d workers batch %d%s", g->workload, g->power_mode,
                 g->storage, g->workers, g->batch_size, g->dvfs_off ? " dvfs off" : "");
    if (m->has && m->between.has_cv && at > 0 && (size_t) at < sizeof label) {
        snprintf(label + at, sizeof label - (size_t) at, ": CV %.2f%%, spread %.2f%%",
                 m->between.cv_pct, m->has_spread ? m->spread_pct : 0.0);
    }
    json_t *data = coord_report_fig_dataset(fig, label, "y");
    for (size_t b = 0; data && b < g->n_boards; b++) {
        const coord_var_board_t *vb = coord_variability_board(var, gi, b);
        int x = s_board_index(labels, vb->board);
        if (x < 0 || !vb->has[COORD_METRIC_E2E]) {
            continue;
        }
        // Boards the group did not run stay empty (null) in its series.
        while (json_array_size(data) <= (size_t) x) {
            if (json_array_append_new(data, json_null()) != 0) {
                return -ENOMEM;
            }
        }
        double mean_s = vb->mean[COORD_METRIC_E2E] / JF_US_PER_S;
        if (json_array_set_new(data, (size_t) x, json_real(mean_s)) != 0) {
            return -ENOMEM;
        }
    }
    return data ? 0 : -ENOMEM;
}

static int s_var_type(const coord_report_ctx_t *ctx, const coord_variability_t *var,
                      const char *type, json_t *figs, jf_err_t *err)
{
    char id[S_ID_MAX], title[S_LABEL_MAX];
    snprintf(id, sizeof id, "variability_%s", type);
    snprintf(title, sizeof title, "Board-to-board variability: %s", type);
    json_t *fig =
        coord_report_fig_new(id, title, "bar", "board", "board's mean epoch wall time (s)");
    json_t *labels = json_array();
    int rc = fig && labels ? 0 : -ENOMEM;
    size_t most = 0;
    for (size_t gi = 0; rc == 0 && gi < coord_variability_groups(var); gi++) {
        const coord_var_group_t *g = coord_variability_group(var, gi);
        if (strcmp(g->board_type, type) == 0) {
            most = g->n_boards > most ? g->n_boards : most;
            rc = s_var_group(var, gi, fig, labels);
        }
    }
    if (rc != 0) {
        json_decref(labels);
        json_decref(fig);
        return jf_err_set(err, -ENOMEM, "report: out of memory");
    }
    (void) json_object_set_new(fig, "labels", labels);
    (void) json_object_set_new(fig, "note",
                               json_string("one bar per board and configuration; "
                                           "CV and spread across the boards as "
                                           "jetfleet variability prints them"));
    (void) json_object_set_new(fig, "simulated", json_boolean(s_any_sim(ctx, NULL, NULL, type)));
    if (most < 2) {
        coord_report_fig_no_data(fig, "only one board of type %s measured: nothing to compare",
                                 type);
    }
    return coord_report_add(figs, fig, err);
}

int coord_report_variability(const coord_report_ctx_t *ctx, json_t *figs, jf_err_t *err)
{
    coord_variability_t *var = coord_variability_new(err);
    int rc = var ? 0 : -ENOMEM;
    for (size_t i = 0; rc == 0 && i < ctx->n_obs; i++) {
        rc = coord_variability_add(var, &ctx->obs[i], err);
    }
    rc = rc == 0 ? coord_variability_compute(var, err) : rc;
    for (size_t i = 0; rc == 0 && i < ctx->n_obs; i++) {
        rc = s_seen(ctx, i, false, true) ? 0
                                         : s_var_type(ctx, var, ctx->obs[i].board_type, figs, err);
    }
    coord_variability_destroy(&var);
    return rc;
}

typedef struct s_models {
    const coord_report_ctx_t *ctx; // borrowed
    json_t *rows;                  // borrowed: the table's rows
    bool sim;                      // a listed model was fitted on simulated boards' data
} s_models_t;

static json_t *s_num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static int s_model_row(const coord_model_row_t *row, void *arg)
{
    s_models_t *m = arg;
    if (strcmp(row->sweep, m->ctx->opts->sweep) != 0) {
        return 0;
    }
    bool by_board = strcmp(row->scope, "board") == 0;
    bool sim = s_any_sim(m->ctx, row->workload, by_board ? row->scope_value : NULL,
                         by_board ? NULL : row->scope_value);
    m->sim = m->sim || sim;
    json_t *params = row->params ? json_loads(row->params, 0, NULL) : NULL;
    json_t *under = json_object_get(params, "cv_under_pct");
    json_t *r = json_pack("[I, s, s, s, s, s, s, I, o, o, s]", (json_int_t) row->id, row->name,
                          row->scope, row->scope_value, row->workload, row->target, row->kind,
                          (json_int_t) row->training_runs, s_num_or_null(row->cv_mape_pct),
                          json_is_number(under) ? json_real(json_number_value(under)) : json_null(),
                          sim ? "simulated" : "measured");
    json_decref(params);
    return r && json_array_append_new(m->rows, r) == 0 ? 0 : -ENOMEM;
}

int coord_report_models(const coord_report_ctx_t *ctx, json_t *figs, jf_err_t *err)
{
    json_t *fig = coord_report_fig_new("models", "Model errors (cross-validated)", "table", "", "");
    // json_object_set_new fails (taking nothing) when the value is NULL: one check covers both.
    if (!fig ||
        json_object_set_new(fig, "columns",
                            json_pack("[s, s, s, s, s, s, s, s, s, s, s]", "id", "name", "scope",
                                      "board or type", "workload", "target", "kind",
                                      "training runs", "CV MAPE (%)", "CV underestimate q95 (%)",
                                      "data")) != 0 ||
        json_object_set_new(fig, "rows", json_array()) != 0) {
        json_decref(fig);
        return jf_err_set(err, -ENOMEM, "report: out of memory");
    }
    json_t *rows = json_object_get(fig, "rows");
    s_models_t m = {.ctx = ctx, .rows = rows};
    int rc = coord_store_models_each(ctx->store, s_model_row, &m, err);
    if (rc != 0) {
        json_decref(fig);
        return rc == -ENOMEM ? jf_err_set(err, rc, "report: out of memory") : rc;
    }
    (void) json_object_set_new(fig, "simulated", json_boolean(m.sim));
    if (json_array_size(rows) == 0) {
        coord_report_fig_no_data(fig, "no model fitted on sweep '%s' (see: jetfleet model fit)",
                                 ctx->opts->sweep);
    }
    return coord_report_add(figs, fig, err);
}
