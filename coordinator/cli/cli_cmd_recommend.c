/* jetfleet recommend: the mode of one board that minimises epoch time under a power budget or
 * energy under a time budget, chosen over the grid of the measured clocks as two stored models
 * predict it, with the measured figures where that mode was measured (docs/analysis.md "Pareto
 * fronts and recommendations"). Read-only. */
#include "cli_cmds.h"
#include "cli_models.h"
#include "cli_recommend_roofline.h"

#include "jf_parse.h"
#include "jf_units.h"

#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define S_USAGE                                                                                    \
    "usage: jetfleet recommend --workload W --board B --sweep S (--power-budget WATTS | "          \
    "--time-budget SECONDS) --time-model ID --power-model ID [--margin PERCENT]; without models: " \
    "--board B --model M [--batch N] and a budget (the board's rooflines)"
#define S_BUDGET_MAX 1e9   // W or s: far above anything a board does
#define S_MARGIN_MAX 100.0 // percent
// The margin of a model stored without its held-out underestimates: this many times its MAPE.
#define S_MARGIN_PER_CV 3.0

typedef struct s_args {
    const char *workload, *board, *sweep, *power, *time, *time_model, *power_model, *margin;
} s_args_t;

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

static int s_run(const cli_ctx_t *ctx, coord_store_t *st, const s_args_t *a, jf_err_t *err)
{
    coord_budget_t kind = COORD_BUDGET_POWER;
    double budget = 0.0;
    int64_t tid = 0;
    int64_t pid = 0;
    int rc = s_budget(a, &kind, &budget, err);
    rc = rc == 0 ? cli_models_parse_id("time-model", a->time_model, &tid, err) : rc;
    rc = rc == 0 ? cli_models_parse_id("power-model", a->power_model, &pid, err) : rc;
    double margin = 0.0;
    const char *margin_from = "";
    rc = rc == 0
             ? s_margin(st, a, kind == COORD_BUDGET_POWER ? pid : tid, &margin, &margin_from, err)
             : rc;
    coord_points_filter_t f = {.workload = a->workload, .board = a->board};
    coord_run_mean_t *runs = NULL;
    size_t n = 0;
    coord_points_left_t left = {0};
    rc = rc == 0 ? cli_models_runs(ctx, st, a->sweep, &f, &runs, &n, &left, err) : rc;
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
        printf("margin_pct=%.2f limit=%.4g (%s: predicted %s within the budget / (1 + "
               "margin))\n",
               margin, limit / (kind == COORD_BUDGET_POWER ? 1e3 : (double) JF_US_PER_S),
               margin_from, kind == COORD_BUDGET_POWER ? "power in W" : "time in s");
        s_print(&pred[best], cli_models_find(modes, nmodes, &pred[best].op), npred);
        cli_models_print_left(a->sweep, n, &left);
    }
    free(modes);
    free(pred);
    free(runs);
    return rc;
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
    if (!v[5] && !v[6] && v[8]) {
        // No fitted model given but a model name: the rooflines' predictions (docs/roofline.md).
        cli_recommend_roofline_args_t r = {
            .board = v[1], .model = v[8], .batch = v[9], .power_budget = v[3], .time_budget = v[4]};
        return cli_recommend_roofline(ctx, &r);
    }
    s_args_t a = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
    if (!a.workload || !a.board || !a.sweep || !a.power == !a.time || !a.time_model ||
        !a.power_model) {
        return cli_fail(CLI_EXIT_USAGE, S_USAGE);
    }
    jf_err_t err = {0};
    coord_store_t *st = cli_ctx_store(ctx, &err);
    int rc = st ? s_run(ctx, st, &a, &err) : -EIO;
    return rc == 0 ? CLI_EXIT_OK : cli_fail(CLI_EXIT_ERROR, "recommend: %s", err.msg);
}
