/* jetfleet recommend: the mode of one board that minimises epoch time under a power budget or
 * energy under a time budget, chosen over the grid of the measured clocks as two stored models
 * predict it, with the measured figures where that mode was measured (docs/analysis.md "Pareto
 * fronts and recommendations"). The models are the ones given, else the store's newest fitted
 * pair for the workload on the board or its type (coord_model_pick.h); with none, the board's
 * rooflines (cli_recommend_roofline.h). Read-only. */
#include "cli_cmds.h"
#include "cli_models.h"
#include "cli_recommend_roofline.h"
#include "coord_model_pick.h"

#include "jf_parse.h"
#include "jf_units.h"
#include "jf_workload.h"

#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_USAGE                                                                                    \
    "usage: jetfleet recommend --workload W --board B (--power-budget WATTS | --time-budget "      \
    "SECONDS) [--sweep S] [--margin PERCENT] [--time-model ID --power-model ID (then --sweep S)] " \
    "[--model M] [--batch N]; without model ids: the store's newest fitted models, else the "      \
    "board's rooflines"
#define S_BUDGET_MAX 1e9   // W or s: far above anything a board does
#define S_MARGIN_MAX 100.0 // percent
// The margin of a model stored without its held-out underestimates: this many times its MAPE.
#define S_MARGIN_PER_CV 3.0

typedef struct s_args {
    const char *workload, *board, *sweep, *power, *time, *time_model, *power_model, *margin;
    const char *model, *batch; // the rooflines' model name and batch size
} s_args_t;

// The models a recommendation uses and where their grid of candidate modes comes from.
typedef struct s_pair {
    int64_t time_id, power_id; // the time and power models
    const char *sweep;         // the sweep whose runs make the grid (borrowed: argv or sweep_buf)
    char sweep_buf[COORD_MODEL_TEXT_MAX + 1]; // the time model's sweep, when --sweep is not given
    const char *type; // the grid is the type's runs (type-scope models); NULL: the board's
    char source[400]; // the "source=model (...)" line: which models and why
} s_pair_t;

// The safety margin in percent: --margin, else the 95th percentile of the budget model's
// held-out relative underestimates (y - y_pred) / y_pred from its cross-validation: a prediction
// p meets budget / (1 + m) exactly when p (1 + m) is within the budget, so m is the
// underestimate to guard against, and only underestimates put a mode over the budget. Models
// stored without that figure fall back to S_MARGIN_PER_CV x their CV MAPE. Writes where the
// margin came from to ret_from.
static int s_margin(coord_store_t *st, const s_args_t *a, int64_t budget_model, double *ret_pct,
                    const char **ret_from, jf_err_t *err)
{
    if (a->margin) {
        *ret_from = "--margin";
        if (jf_parse_double(a->margin, 0.0, S_MARGIN_MAX, ret_pct, err) != 0) {
            return jf_err_set(err, -EINVAL, "--margin: expected a percentage 0..%g, got '%s'",
                              S_MARGIN_MAX, a->margin);
        }
        return 0;
    }
    coord_model_row_t row = {0};
    coord_model_t *m = cli_models_load(st, budget_model, &row, err);
    if (!m) {
        return err && err->code ? err->code : -EIO;
    }
    double under = coord_model_cv_under_pct(m);
    bool known = !isnan(row.cv_mape_pct);
    *ret_pct = !isnan(under) ? under : known ? S_MARGIN_PER_CV * row.cv_mape_pct : 0.0;
    *ret_from = !isnan(under) ? (a->power ? "the power model's 95th-percentile held-out "
                                            "underestimate"
                                          : "the time model's 95th-percentile held-out "
                                            "underestimate")
                : known       ? (a->power ? "3 x the power model's cross-validated MAPE (stored "
                                            "without its underestimates)"
                                          : "3 x the time model's cross-validated MAPE (stored "
                                            "without its underestimates)")
                              : "none: the model has no cross-validated MAPE";
    coord_model_row_fini(&row);
    coord_model_destroy(&m);
    return 0;
}

static void s_print(const coord_pareto_point_t *p, const coord_pareto_point_t *measured,
                    size_t candidates)
{
    char cells[CLI_MODELS_MODE_COLS][CLI_MODELS_CELL_MAX];
    cli_models_mode_cells(&p->op, cells);
    printf("mode");
    for (int i = 0; i < CLI_MODELS_MODE_COLS; i++) {
        printf(" %s=%s", cli_models_mode_names[i], cells[i]);
    }
    printf("\ncandidates=%zu\n", candidates);
    printf("predicted_time_s=%.4f predicted_power_w=%.3f predicted_energy_j=%.3f\n",
           p->time_us / (double) JF_US_PER_S, p->power_mw / 1e3, p->energy_mj / 1e3);
    if (measured) {
        printf("measured_time_s=%.4f measured_power_w=%.3f measured_energy_j=%.3f\n",
               measured->time_us / (double) JF_US_PER_S, measured->power_mw / 1e3,
               measured->energy_mj / 1e3);
    } else {
        printf("measured=none (this mode was not measured in the sweep)\n");
    }
}

static int s_budget(const s_args_t *a, coord_budget_t *ret_kind, double *ret_budget, jf_err_t *err)
{
    double v = 0.0;
    *ret_kind = a->power ? COORD_BUDGET_POWER : COORD_BUDGET_TIME;
    if (jf_parse_double(a->power ? a->power : a->time, 0.0, S_BUDGET_MAX, &v, err) != 0 ||
        !(v > 0.0)) {
        return jf_err_set(err, -EINVAL, "--%s: expected a positive number of %s, got '%s'",
                          a->power ? "power-budget" : "time-budget", a->power ? "W" : "s",
                          a->power ? a->power : a->time);
    }
    *ret_budget = a->power ? v * 1e3 : v * (double) JF_US_PER_S; // internal mW or µs
    return 0;
}

static int s_run(const cli_ctx_t *ctx, coord_store_t *st, const s_args_t *a, const s_pair_t *pair,
                 jf_err_t *err)
{
    coord_budget_t kind = COORD_BUDGET_POWER;
    double budget = 0.0;
    int64_t tid = pair->time_id;
    int64_t pid = pair->power_id;
    int rc = s_budget(a, &kind, &budget, err);
    double margin = 0.0;
    const char *margin_from = "";
    rc = rc == 0
             ? s_margin(st, a, kind == COORD_BUDGET_POWER ? pid : tid, &margin, &margin_from, err)
             : rc;
    coord_points_filter_t f = {
        .workload = a->workload, .board = pair->type ? NULL : a->board, .type = pair->type};
    coord_run_mean_t *runs = NULL;
    size_t n = 0;
    coord_points_left_t left = {0};
    rc = rc == 0 ? cli_models_runs(ctx, st, pair->sweep, &f, &runs, &n, &left, err) : rc;
    coord_pareto_point_t *pred = NULL;
    size_t npred = 0;
    rc = rc == 0 ? cli_models_predict_grid(st, tid, pid, runs, n, &pred, &npred, err) : rc;
    coord_pareto_point_t *modes = NULL;
    size_t nmodes = 0;
    rc = rc == 0 ? coord_points_modes(runs, n, &modes, &nmodes, err) : rc;
    size_t best = 0;
    double closest = 0.0;
    double limit = budget / (1.0 + margin / 100.0);
    if (rc == 0) {
        rc = coord_recommend(pred, npred, kind, limit, &best, &closest, err);
        if (rc == -ENOENT) { // no mode within the limit: say so with the budget and the margin
            bool power = kind == COORD_BUDGET_POWER;
            double unit = power ? 1e3 : (double) JF_US_PER_S;
            const char *u = power ? "W" : "s";
            jf_err_set(err, rc,
                       "no mode meets a %s budget of %g %s (the lowest predicted is %.4g %s; with "
                       "the %.2f %% margin, predictions must be within %.4g %s)",
                       power ? "power" : "time", budget / unit, u, closest / unit, u, margin,
                       limit / unit, u);
        }
    }
    if (rc == 0) {
        printf("%s\n", pair->source);
        printf("margin_pct=%.2f limit=%.4g (%s: predicted %s within the budget / (1 + "
               "margin))\n",
               margin, limit / (kind == COORD_BUDGET_POWER ? 1e3 : (double) JF_US_PER_S),
               margin_from, kind == COORD_BUDGET_POWER ? "power in W" : "time in s");
        s_print(&pred[best], cli_models_find(modes, nmodes, &pred[best].op), npred);
        cli_models_print_left(pair->sweep, n, &left);
    }
    free(modes);
    free(pred);
    free(runs);
    return rc;
}

// The type of board as the store's runs give it (a sim board's simulated type) into ret_type;
// "" when the board has no run in the store.
typedef struct s_type_walk {
    const char *board;
    char *type;
    size_t size;
} s_type_walk_t;

static int s_type_fn(int ncols, const char *const *names, const char *const *values,
                     const coord_value_kind_t *kinds, void *arg)
{
    (void) kinds;
    s_type_walk_t *w = arg;
    const char *board = NULL, *type = NULL;
    for (int i = 0; i < ncols; i++) {
        board = strcmp(names[i], "board") == 0 ? values[i] : board;
        type = strcmp(names[i], "board_type") == 0 ? values[i] : type;
    }
    if (!w->type[0] && board && type && strcmp(board, w->board) == 0) {
        (void) snprintf(w->type, w->size, "%s", type);
    }
    return 0;
}

static int s_board_type(coord_store_t *st, const char *board, char *ret_type, size_t size,
                        jf_err_t *err)
{
    ret_type[0] = '\0';
    s_type_walk_t w = {.board = board, .type = ret_type, .size = size};
    return coord_store_select(st, COORD_TABLE_RUNS, NULL, NULL, s_type_fn, &w, err);
}

// The models named by --time-model and --power-model, on --sweep's grid.
static int s_given_pair(const s_args_t *a, s_pair_t *ret, jf_err_t *err)
{
    *ret = (s_pair_t){.sweep = a->sweep};
    int rc = cli_models_parse_id("time-model", a->time_model, &ret->time_id, err);
    rc = rc == 0 ? cli_models_parse_id("power-model", a->power_model, &ret->power_id, err) : rc;
    (void) snprintf(ret->source, sizeof ret->source,
                    "source=model (time model %" PRId64 " and power model %" PRId64
                    " given on the command line)",
                    ret->time_id, ret->power_id);
    return rc;
}

// The store's newest pair for the workload on the board or type (found), on --sweep's grid or
// else on the grid of the sweep the time model was fitted on (copied into sweep).
static int s_newest_pair(coord_store_t *st, const s_args_t *a, const coord_model_pick_t *pick,
                         const char *type, s_pair_t *ret, jf_err_t *err)
{
    coord_model_row_t row = {0};
    if (coord_store_model_get(st, pick->time_id, &row, err) != 0) {
        return err && err->code ? err->code : -EIO;
    }
    *ret = (s_pair_t){.time_id = pick->time_id,
                      .power_id = pick->power_id,
                      .sweep = a->sweep ? a->sweep : ret->sweep_buf,
                      .type = pick->by_type ? type : NULL};
    (void) snprintf(ret->sweep_buf, sizeof ret->sweep_buf, "%s", row.sweep);
    (void) snprintf(
        ret->source, sizeof ret->source,
        "source=model (the store's newest fitted models of workload '%s' for %s '%s'%s: "
        "time model %" PRId64 ", power model %" PRId64 ", fitted on sweep '%s'; "
        "candidates from sweep '%s')",
        a->workload, pick->by_type ? "board type" : "board", pick->by_type ? type : a->board,
        pick->by_type ? ", as the board has no pair of its own" : "", pick->time_id, pick->power_id,
        row.sweep, ret->sweep);
    coord_model_row_fini(&row);
    return 0;
}

// The model that the catalogue trains in workload ("lenet5" of "lenet5-mnist"), or NULL.
static const char *s_workload_model(const char *workload)
{
    for (size_t i = 0; i < jf_workload_count(); i++) {
        if (strcmp(jf_workload_at(i)->name, workload) == 0) {
            return jf_workload_at(i)->model;
        }
    }
    return NULL;
}

// No fitted pair for the workload (why says so): the board's rooflines, for --model or else the
// workload's model.
static int s_rooflines(cli_ctx_t *ctx, const s_args_t *a, const char *why)
{
    const char *model = a->model ? a->model : s_workload_model(a->workload);
    if (!model) {
        return cli_fail(CLI_EXIT_ERROR,
                        "recommend: %s, and workload '%s' is not in the catalogue (expected one "
                        "of: %s) to count its work for the rooflines",
                        why, a->workload, jf_workload_pairs());
    }
    cli_recommend_roofline_args_t r = {.board = a->board,
                                       .model = model,
                                       .batch = a->batch,
                                       .power_budget = a->power,
                                       .time_budget = a->time,
                                       .reason = why};
    return cli_recommend_roofline(ctx, &r);
}

// Without model ids: the store's newest fitted pair for the workload on the board or its type,
// else the rooflines, saying which and why.
static int s_newest(cli_ctx_t *ctx, coord_store_t *st, const s_args_t *a, jf_err_t *err)
{
    char type[COORD_MODEL_TEXT_MAX + 1] = "";
    coord_model_pick_t pick = {0};
    int rc = s_board_type(st, a->board, type, sizeof type, err);
    rc = rc ? rc
            : coord_model_pick_newest(st, a->workload, a->board, type[0] ? type : NULL, &pick, err);
    if (rc != 0) {
        return cli_fail(CLI_EXIT_ERROR, "recommend: %s", err->msg);
    }
    if (!coord_model_pick_is_found(&pick)) {
        char why[200];
        (void) snprintf(why, sizeof why,
                        "no fitted time and power models of '%s' for board '%s' or %s%s%s",
                        a->workload, a->board, type[0] ? "type '" : "its type (no runs stored)",
                        type, type[0] ? "'" : "");
        return s_rooflines(ctx, a, why);
    }
    s_pair_t pair = {0};
    rc = s_newest_pair(st, a, &pick, type, &pair, err);
    rc = rc ? rc : s_run(ctx, st, a, &pair, err);
    return rc == 0 ? CLI_EXIT_OK : cli_fail(CLI_EXIT_ERROR, "recommend: %s", err->msg);
}

int cli_cmd_recommend(cli_ctx_t *ctx, int argc, char **argv)
{
    static const char *const names[] = {"workload",    "board",      "sweep",       "power-budget",
                                        "time-budget", "time-model", "power-model", "margin",
                                        "model",       "batch",      NULL};
    const char *v[CLI_MODELS_OPTS_MAX] = {0};
    if (cli_models_opts("recommend", argc, argv, names, v) != 0) {
        return cli_fail(CLI_EXIT_USAGE, S_USAGE);
    }
    s_args_t a = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]};
    bool ids = a.time_model || a.power_model;
    if (!a.board || !a.power == !a.time || (ids && (!a.workload || !a.sweep)) ||
        !a.time_model != !a.power_model || (!a.workload && !a.model)) {
        return cli_fail(CLI_EXIT_USAGE, S_USAGE);
    }
    if (!a.workload) {
        // A model name but no workload: no fitted model can be looked up (docs/roofline.md).
        return s_rooflines(ctx, &a, "no --workload given to look up fitted models");
    }
    jf_err_t err = {0};
    coord_store_t *st = cli_ctx_store(ctx, &err);
    if (!st) {
        return cli_fail(CLI_EXIT_ERROR, "recommend: %s", err.msg);
    }
    if (!ids) {
        return s_newest(ctx, st, &a, &err);
    }
    s_pair_t pair = {0};
    int rc = s_given_pair(&a, &pair, &err);
    rc = rc ? rc : s_run(ctx, st, &a, &pair, &err);
    return rc == 0 ? CLI_EXIT_OK : cli_fail(CLI_EXIT_ERROR, "recommend: %s", err.msg);
}
