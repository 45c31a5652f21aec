/* jetfleet recommend from the rooflines (cli_recommend_roofline.h, docs/roofline.md). */
#include "cli_recommend_roofline.h"
#include "cli_cmds.h"
#include "cli_roofline.h"

#include "jf_parse.h"
#include "jf_run_spec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

#define S_BATCH_DEFAULT 16  // a sweep's default batch size (docs/sweeps.md)
#define S_BUDGET_MAX    1e9 // W or s: far above anything a board does

typedef struct s_pick {
    const coord_roofline_t *roof;
    coord_roofline_pred_t pred;
    size_t candidates; // settings with energy
} s_pick_t;

// The best setting of set for work under the budget (power in W, or time in s).
static int s_choose(const cli_roofline_set_t *set, const jf_torch_work_t *w, bool power,
                    double budget, s_pick_t *ret, jf_err_t *err)
{
    *ret = (s_pick_t){0};
    double lowest = INFINITY;
    for (size_t i = 0; i < set->n_roofs; i++) {
        coord_roofline_pred_t p;
        coord_roofline_predict(&set->roofs[i], w->flop, w->bytes, &p);
        if (!p.has_energy || !(p.time_s > 0)) {
            continue;
        }
        ret->candidates++;
        double watts = p.energy_j / p.time_s, bound = power ? watts : p.time_s;
        lowest = fmin(lowest, bound);
        double score = power ? p.time_s : p.energy_j;
        double best = !ret->roof ? INFINITY : power ? ret->pred.time_s : ret->pred.energy_j;
        if (bound <= budget && score < best) {
            ret->roof = &set->roofs[i];
            ret->pred = p;
        }
    }
    if (ret->candidates == 0) {
        return jf_err_set(err, -ENOENT, "no roofline of the board has energy measured");
    }
    if (!ret->roof) {
        return jf_err_set(err, -ENOENT,
                          "no setting meets a %s budget of %g %s (the lowest "
                          "predicted is %.4g)",
                          power ? "power" : "time", budget, power ? "W" : "s per minibatch",
                          lowest);
    }
    return 0;
}

static int s_run(coord_store_t *st, const cli_recommend_roofline_args_t *a, bool power,
                 double budget, int batch, jf_err_t *err)
{
    cli_roofline_set_t set;
    jf_torch_work_t w;
    s_pick_t pick;
    int rc = cli_roofline_load(st, a->board, NULL, &set, err);
    rc = rc == 0 ? cli_roofline_work(&set, a->model, batch, &w, err) : rc;
    rc = rc == 0 ? s_choose(&set, &w, power, budget, &pick, err) : rc;
    if (rc == 0) {
        printf("source=roofline (%s: predictions from the board's rooflines and the work "
               "counted from %s's layers, docs/roofline.md)\n",
               a->reason, a->model);
        printf("mode power=%s device=%s%s\ncandidates=%zu\n", pick.roof->power, pick.roof->device,
               pick.roof->simulated ? " (simulated)" : "", pick.candidates);
        printf("predicted_minibatch_time_s=%.6f predicted_power_w=%.3f "
               "predicted_minibatch_energy_j=%.4f bound=%s\n",
               pick.pred.time_s, pick.pred.energy_j / pick.pred.time_s, pick.pred.energy_j,
               pick.pred.memory_bound ? "memory" : "compute");
    }
    cli_roofline_fini(&set);
    return rc;
}

int cli_recommend_roofline(cli_ctx_t *ctx, const cli_recommend_roofline_args_t *a)
{
    jf_err_t err = {0};
    double budget = 0.0;
    int64_t batch = S_BATCH_DEFAULT;
    bool power = a->power_budget != NULL;
    if (!a->board || !a->model || !a->power_budget == !a->time_budget) {
        return cli_fail(CLI_EXIT_USAGE, "usage: jetfleet recommend --board B --model M [--batch "
                                        "N] (--power-budget WATTS | --time-budget SECONDS)");
    }
    if (jf_parse_double(power ? a->power_budget : a->time_budget, 0.0, S_BUDGET_MAX, &budget,
                        &err) != 0 ||
        !(budget > 0.0)) {
        return cli_fail(CLI_EXIT_ERROR, "recommend: --%s: expected a positive number, got '%s'",
                        power ? "power-budget" : "time-budget",
                        power ? a->power_budget : a->time_budget);
    }
    if (a->batch && jf_parse_i64(a->batch, 1, JF_BATCH_MAX, &batch, &err) != 0) {
        return cli_fail(CLI_EXIT_ERROR, "recommend: --batch: %s", err.msg);
    }
    coord_store_t *st = cli_ctx_store(ctx, &err);
    int rc = st ? s_run(st, a, power, budget, (int) batch, &err) : -EIO;
    return rc == 0 ? CLI_EXIT_OK
                   : cli_fail(CLI_EXIT_ERROR, "recommend: %s, so from the rooflines: %s", a->reason,
                              err.msg);
}
