/* Shared by jetfleet model, pareto and recommend: options, stored models, predictions. */
#include "cli_models.h"
#include "cli_analysis.h"
#include "cli_ctx.h"

#include "jf_parse.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_US_MW_PER_MJ 1e6 // energy mJ = time µs x power mW / 1e6

int cli_models_opts(const char *verb, int argc, char **argv, const char *const *names,
                    const char **values)
{
    struct option opts[CLI_MODELS_OPTS_MAX + 1] = {0};
    int n = 0;
    for (; names[n] && n < CLI_MODELS_OPTS_MAX; n++) {
        opts[n] = (struct option){names[n], required_argument, NULL, n};
        values[n] = NULL;
    }
    char **nargv = cli_getopt_argv(verb, argc, argv);
    bool ok = nargv != NULL;
    optind = 0; // restart getopt fully: it has parsed other words before
    opterr = 0; // the command prints its own usage line
    for (int c; ok && (c = getopt_long(argc + 1, nargv, "", opts, NULL)) != -1;) {
        ok = c >= 0 && c < n;
        if (ok) {
            values[c] = optarg;
        }
    }
    free(nargv);
    return ok && optind == argc + 1 ? 0 : -1;
}

int cli_models_parse_id(const char *opt, const char *text, int64_t *ret_id, jf_err_t *err)
{
    if (jf_parse_i64(text, 1, INT64_MAX, ret_id, err) != 0) {
        return jf_err_set(err, -EINVAL, "--%s: expected a model id (a positive integer), got '%s'",
                          opt, text);
    }
    return 0;
}

coord_model_t *cli_models_load(coord_store_t *store, int64_t id, coord_model_row_t *ret_row,
                               jf_err_t *err)
{
    if (coord_store_model_get(store, id, ret_row, err) != 0) {
        return NULL;
    }
    coord_model_kind_t kind = COORD_MODEL_LINEAR;
    coord_target_t target = COORD_TARGET_TIME;
    coord_model_t *m = NULL;
    if (!coord_model_kind_parse(ret_row->kind, &kind) ||
        !coord_target_parse(ret_row->target, &target)) {
        jf_err_set(err, -EINVAL, "model %lld: unknown kind '%s' or target '%s'", (long long) id,
                   ret_row->kind, ret_row->target);
    } else {
        m = coord_model_load(kind, target, ret_row->params, err);
    }
    if (m) {
        int workers = -1;
        int batch = -1;
        cli_models_trained_config(ret_row, &workers, &batch);
        coord_model_set_trained_config(m, workers, batch);
    }
    if (!m) {
        jf_err_prefix(err, "model %lld", (long long) id);
        coord_model_row_fini(ret_row);
    }
    return m;
}

void cli_models_trained_config(const coord_model_row_t *row, int *ret_workers, int *ret_batch)
{
    json_t *f = json_loads(row->features, 0, NULL);
    json_t *w = json_object_get(f, "workers");
    json_t *b = json_object_get(f, "batch_size");
    *ret_workers = json_is_integer(w) ? (int) json_integer_value(w) : -1;
    *ret_batch = json_is_integer(b) ? (int) json_integer_value(b) : -1;
    json_decref(f);
}

int cli_models_predict(coord_model_t *time_model, coord_model_t *power_model, const coord_op_t *ops,
                       size_t n, coord_pareto_point_t *ret_pts, jf_err_t *err)
{
    for (size_t i = 0; i < n; i++) {
        coord_pareto_point_t *p = &ret_pts[i];
        *p = (coord_pareto_point_t){.op = ops[i]};
        int rc = coord_model_predict(time_model, &ops[i], &p->time_us, err);
        rc = rc == 0 ? coord_model_predict(power_model, &ops[i], &p->power_mw, err) : rc;
        if (rc != 0) {
            return rc;
        }
        p->energy_mj = p->time_us * p->power_mw / S_US_MW_PER_MJ;
    }
    return 0;
}

int cli_models_runs(const cli_ctx_t *ctx, coord_store_t *store, const char *sweep,
                    const coord_points_filter_t *filter, coord_run_mean_t **ret_runs, size_t *ret_n,
                    coord_points_left_t *ret_left, jf_err_t *err)
{
    coord_validity_opts_t opts = cli_analysis_opts(ctx);
    coord_valid_runs_t *valid = coord_valid_runs_new(store, sweep, &opts, err);
    if (!valid) {
        return err->code ? err->code : -EIO;
    }
    coord_points_filter_t f = *filter;
    f.valid = valid;
    *ret_left = (coord_points_left_t){0};
    int rc = coord_points_collect(store, sweep, &f, ret_runs, ret_n, ret_left, err);
    coord_valid_runs_destroy(&valid);
    if (rc == 0 && *ret_n == 0) {
        free(*ret_runs);
        *ret_runs = NULL;
        char why[200] = "";
        if (ret_left->invalid || ret_left->no_op || ret_left->other_kind) {
            snprintf(why, sizeof why,
                     " (left out: %zu invalid, %zu without a known operating point, %zu not "
                     "plain training; see: jetfleet check)",
                     ret_left->invalid, ret_left->no_op, ret_left->other_kind);
        }
        rc = jf_err_set(err, -ENOENT,
                        "sweep '%s' has no measured runs of workload '%s' on %s '%s'%s", sweep,
                        f.workload ? f.workload : "(any)", f.type ? "board type" : "board",
                        f.type    ? f.type
                        : f.board ? f.board
                                  : "(any)",
                        why);
    }
    return rc;
}

void cli_models_print_left(const char *sweep, size_t used, const coord_points_left_t *left)
{
    fflush(stdout); // after what the command printed, also when both go to one file
    fprintf(stderr,
            "valid runs only: %zu runs used, %zu left out as invalid, %zu without a known "
            "operating point (see: jetfleet check --sweep %s)\n",
            used, left->invalid, left->no_op, sweep);
    if (left->other_kind > 0) {
        fputs("not training, left out:", stderr);
        const char *sep = " ";
        for (int k = 0; k < COORD_RUN_KIND_COUNT; k++) {
            if (left->by_kind[k] > 0) {
                fprintf(stderr, "%s%s %zu", sep, coord_run_kind_name((coord_run_kind_t) k),
                        left->by_kind[k]);
                sep = ", ";
            }
        }
        fputs(" (models and fronts use plain bare training runs only: see docs/analysis.md "
              "\"Run kinds\")\n",
              stderr);
    }
}

int cli_models_check_pair(const coord_model_row_t *t, const coord_model_row_t *p, jf_err_t *err)
{
    if (strcmp(t->target, "time") != 0 || strcmp(p->target, "power") != 0) {
        return jf_err_set(err, -EINVAL,
                          "need a time model and a power model, got model %lld (%s) and model "
                          "%lld (%s)",
                          (long long) t->id, t->target, (long long) p->id, p->target);
    }
    return 0;
}

const char *const cli_models_mode_names[CLI_MODELS_MODE_COLS] = {
    "cores", "cpu_mhz", "gpu_mhz", "emc_mhz", "workers", "batch_size"};

void cli_models_mode_cells(const coord_op_t *op, char cells[][CLI_MODELS_CELL_MAX])
{
    snprintf(cells[0], CLI_MODELS_CELL_MAX, "%d", op->cores);
    snprintf(cells[1], CLI_MODELS_CELL_MAX, "%.1f", (double) op->cpu_hz / 1e6);
    snprintf(cells[2], CLI_MODELS_CELL_MAX, "%.1f", (double) op->gpu_hz / 1e6);
    snprintf(cells[3], CLI_MODELS_CELL_MAX, "%.1f", (double) op->emc_hz / 1e6);
    snprintf(cells[4], CLI_MODELS_CELL_MAX, "%d", op->workers);
    snprintf(cells[5], CLI_MODELS_CELL_MAX, "%d", op->batch_size);
}

const coord_pareto_point_t *cli_models_find(const coord_pareto_point_t *modes, size_t n,
                                            const coord_op_t *op)
{
    for (size_t i = 0; i < n; i++) {
        if (coord_op_same(&modes[i].op, op)) {
            return &modes[i];
        }
    }
    return NULL;
}

int cli_models_predict_grid(coord_store_t *store, int64_t time_id, int64_t power_id,
                            const coord_run_mean_t *runs, size_t n, coord_pareto_point_t **ret_pts,
                            size_t *ret_n, jf_err_t *err)
{
    coord_model_row_t tr = {0};
    coord_model_row_t pr = {0};
    coord_model_t *tm = cli_models_load(store, time_id, &tr, err);
    coord_model_t *pm = tm ? cli_models_load(store, power_id, &pr, err) : NULL;
    int rc = pm ? cli_models_check_pair(&tr, &pr, err) : -ENOENT;
    coord_op_t *ops = NULL;
    size_t nops = 0;
    rc = rc == 0 ? coord_points_grid(runs, n, &ops, &nops, err) : rc;
    coord_pareto_point_t *pts = rc == 0 ? malloc((nops ? nops : 1) * sizeof *pts) : NULL;
    rc = rc == 0 && !pts ? jf_err_set(err, -ENOMEM, "out of memory") : rc;
    rc = rc == 0 ? cli_models_predict(tm, pm, ops, nops, pts, err) : rc;
    if (rc == 0) {
        *ret_pts = pts;
        *ret_n = nops;
    } else {
        free(pts);
    }
    free(ops);
    coord_model_row_fini(&tr);
    coord_model_row_fini(&pr);
    coord_model_destroy(&tm);
    coord_model_destroy(&pm);
    return rc;
}
