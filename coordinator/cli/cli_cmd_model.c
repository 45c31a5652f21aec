/* jetfleet model fit | list | predict | eval: time, power and energy models fitted on a sweep's
 * measured modes and kept in the store's models table (docs/analysis.md "Models"). fit opens the
 * store for writing (SQLite WAL and a busy timeout let it write while the coordinator runs). */
#include "cli_cmds.h"
#include "cli_models.h"
#include "cli_table.h"

#include "jf_parse.h"
#include "jf_units.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_FIT_USAGE                                                                                \
    "usage: jetfleet model fit --sweep S --workload W (--board B | --type T) "                     \
    "--target time|power|energy [--kind linear|mlp|phys] [--transfer-from MODEL_ID "               \
    "[--transfer-kind auto|head|finetune|phys]] [--name NAME]"
#define S_PREDICT_USAGE                                                                            \
    "usage: jetfleet model predict --model ID --cores N --cpu-freq F --gpu-freq F --emc-freq F "   \
    "[--workers N --batch N]"
#define S_EVAL_USAGE  "usage: jetfleet model eval --model ID --sweep S [--board B]"
#define S_USAGE       "usage: jetfleet model fit|list|predict|eval ..."
#define S_FREQ_MAX_HZ INT64_C(100000000000) // 100 GHz: far above any board's clock
#define S_CORES_MAX   1024
#define S_BATCH_MAX   1000000

typedef struct s_fit_args {
    const char *sweep, *workload, *board, *type, *target, *kind, *transfer, *name, *xfer_kind;
} s_fit_args_t;

// The store opened for writing: it must exist already (never create one here).
static coord_store_t *s_open_rw(cli_ctx_t *ctx, jf_err_t *err)
{
    // jetfleet --store FILE names the store; else the config's.
    const jf_fleet_config_t *fleet = ctx->store_path ? NULL : cli_ctx_fleet(ctx, err);
    const char *path = ctx->store_path ? ctx->store_path : fleet ? fleet->coord.store_path : NULL;
    return path ? cli_store_open(path, false, err) : NULL;
}

// The features JSON stored with a model: its inputs, and the workers and batch size of its
// training runs when they all had the same (model predict's defaults), else null.
static json_t *s_features(const coord_model_t *m, const coord_point_t *pts, size_t n)
{
    bool same_w = true;
    bool same_b = true;
    for (size_t i = 1; i < n; i++) {
        same_w = same_w && pts[i].op.workers == pts[0].op.workers;
        same_b = same_b && pts[i].op.batch_size == pts[0].op.batch_size;
    }
    json_t *w = same_w && n ? json_integer(pts[0].op.workers) : json_null();
    json_t *b = same_b && n ? json_integer(pts[0].op.batch_size) : json_null();
    return json_pack("{s:o, s:o, s:o}", "inputs", coord_model_features_json(m), "workers", w,
                     "batch_size", b);
}

static int s_store_model(coord_store_t *rw, const s_fit_args_t *a, const coord_model_t *m, size_t n,
                         const coord_point_t *pts, int64_t transfer, int64_t *ret_id, jf_err_t *err)
{
    coord_model_row_t row = {.training_runs = (int64_t) n,
                             .cv_mape_pct = coord_model_cv_mape_pct(m),
                             .transfer_from = transfer,
                             .created_us = jf_clock_wall_us()};
    const char *scope_value = a->board ? a->board : a->type;
    snprintf(row.sweep, sizeof row.sweep, "%s", a->sweep);
    snprintf(row.scope, sizeof row.scope, "%s", a->board ? "board" : "type");
    snprintf(row.scope_value, sizeof row.scope_value, "%s", scope_value);
    snprintf(row.workload, sizeof row.workload, "%s", a->workload);
    snprintf(row.target, sizeof row.target, "%s", coord_target_name(coord_model_target(m)));
    snprintf(row.kind, sizeof row.kind, "%s", coord_model_kind_name(coord_model_kind(m)));
    snprintf(row.name, sizeof row.name, "%s", a->name ? a->name : "");
    if (!a->name) {
        // Bounded so that it always fits: target and kind are at most 6 letters.
        snprintf(row.name, sizeof row.name, "%.60s-%.40s-%.6s-%.6s", row.workload, scope_value,
                 row.target, row.kind);
    }
    json_t *f = s_features(m, pts, n);
    json_t *p = coord_model_params_json(m);
    row.features = f ? json_dumps(f, JSON_COMPACT) : NULL;
    row.params = p ? json_dumps(p, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    int rc = row.features && row.params ? coord_store_model_put(rw, &row, ret_id, err)
                                        : jf_err_set(err, -ENOMEM, "model: out of memory");
    json_decref(f);
    json_decref(p);
    coord_model_row_fini(&row);
    return rc;
}

// A transfer's method: --transfer-kind, else fine-tuning when --kind mlp was given (what
// --kind mlp --transfer-from always meant), phys with --kind phys, else auto. --kind linear with a
// transfer, or --transfer-kind without --transfer-from, are usage errors.
static bool s_parse_transfer(const s_fit_args_t *a, coord_model_opts_t *o)
{
    if (!a->transfer) {
        return !a->xfer_kind;
    }
    if (a->kind && o->kind == COORD_MODEL_LINEAR) {
        return false;
    }
    o->transfer = !a->kind                      ? COORD_MODEL_TRANSFER_AUTO
                  : o->kind == COORD_MODEL_PHYS ? COORD_MODEL_TRANSFER_PHYS
                                                : COORD_MODEL_TRANSFER_FINETUNE;
    return !a->xfer_kind || coord_model_transfer_parse(a->xfer_kind, &o->transfer);
}

static int s_parse_fit(int argc, char **argv, s_fit_args_t *a, coord_model_opts_t *o)
{
    static const char *const names[] = {"sweep",         "workload", "board",         "type",
                                        "target",        "kind",     "transfer-from", "name",
                                        "transfer-kind", NULL};
    const char *v[CLI_MODELS_OPTS_MAX] = {0};
    if (cli_models_opts("fit", argc, argv, names, v) != 0) {
        return -1;
    }
    *a = (s_fit_args_t){v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]};
    *o = (coord_model_opts_t){0};
    bool ok = a->sweep && a->workload && a->target && (!a->board != !a->type);
    ok = ok && coord_target_parse(a->target, &o->target);
    ok = ok && (!a->kind || coord_model_kind_parse(a->kind, &o->kind));
    return ok && s_parse_transfer(a, o) ? 0 : -1;
}

// The reference model of a transfer (NULL when none asked for; *ok false on failure).
static coord_model_t *s_reference(coord_store_t *st, const char *text, int64_t *ret_id, bool *ok,
                                  jf_err_t *err)
{
    *ret_id = 0;
    if (!text) {
        return NULL;
    }
    coord_model_row_t row = {0};
    coord_model_t *m = cli_models_parse_id("transfer-from", text, ret_id, err) == 0
                           ? cli_models_load(st, *ret_id, &row, err)
                           : NULL;
    if (m) {
        coord_model_row_fini(&row);
    }
    *ok = m != NULL;
    return m;
}

static int s_fit(cli_ctx_t *ctx, int argc, char **argv)
{
    s_fit_args_t a;
    coord_model_opts_t o;
    if (s_parse_fit(argc, argv, &a, &o) != 0) {
        return cli_fail(CLI_EXIT_USAGE, S_FIT_USAGE);
    }
    jf_err_t err = {0};
    coord_store_t *rw = s_open_rw(ctx, &err);
    coord_run_mean_t *runs = NULL;
    size_t n = 0;
    coord_points_filter_t f = {.workload = a.workload, .board = a.board, .type = a.type};
    coord_points_left_t left = {0};
    int rc = rw ? cli_models_runs(ctx, rw, a.sweep, &f, &runs, &n, &left, &err) : -EIO;
    coord_point_t *pts = rc == 0 ? malloc((n ? n : 1) * sizeof *pts) : NULL;
    size_t np = pts ? coord_points_of(runs, n, o.target, pts) : 0;
    bool ok = rc == 0 && pts;
    int64_t ref_id = 0;
    coord_model_t *ref = ok ? s_reference(rw, a.transfer, &ref_id, &ok, &err) : NULL;
    o.transfer_from = ref;
    coord_model_t *m = ok ? coord_model_fit(&o, pts, np, &err) : NULL;
    int64_t id = 0;
    ok = m && s_store_model(rw, &a, m, np, pts, ref_id, &id, &err) == 0;
    if (ok) {
        printf("model=%" PRId64 " kind=%s target=%s points=%zu cv_mape_pct=%.2f "
               "cv_under_q95_pct=%.2f",
               id, coord_model_kind_name(coord_model_kind(m)), a.target, np,
               coord_model_cv_mape_pct(m), coord_model_cv_under_pct(m));
        printf(ref ? " transfer=yes transfer_kind=%s" : "%s",
               ref ? coord_model_transfer_name(coord_model_transfer(m)) : "");
        double low = NAN;
        coord_model_transfer_t low_method = COORD_MODEL_TRANSFER_AUTO;
        if (coord_model_kept_by_one_se(m, &low, &low_method)) {
            printf(" kept_within_one_se_of=%s lowest_cv_mape_pct=%.2f",
                   coord_model_transfer_name(low_method), low);
        }
        const char *start = coord_model_phys_start_name(m);
        printf(start ? " phys_start=%s\n" : "\n", start);
        cli_models_print_left(a.sweep, n, &left);
    }
    coord_model_destroy(&m);
    coord_model_destroy(&ref);
    free(pts);
    free(runs);
    coord_store_destroy(&rw);
    return ok ? CLI_EXIT_OK : cli_fail(CLI_EXIT_ERROR, "model fit: %s", err.msg);
}

static int s_list_row(const coord_model_row_t *r, void *arg)
{
    static const char *const cols[] = {
        "id",     "name", "sweep",         "scope",       "scope_value",   "workload",
        "target", "kind", "training_runs", "cv_mape_pct", "transfer_from", NULL};
    char id[24], runs[24], cv[32], from[24];
    snprintf(id, sizeof id, "%" PRId64, r->id);
    snprintf(runs, sizeof runs, "%" PRId64, r->training_runs);
    snprintf(cv, sizeof cv, "%.2f", r->cv_mape_pct);
    snprintf(from, sizeof from, "%" PRId64, r->transfer_from);
    const char *vals[] = {id,
                          r->name,
                          r->sweep,
                          r->scope,
                          r->scope_value,
                          r->workload,
                          r->target,
                          r->kind,
                          runs,
                          isnan(r->cv_mape_pct) ? "" : cv,
                          r->transfer_from ? from : ""};
    return cli_table_add_text(arg, 11, cols, vals);
}

static int s_list(cli_ctx_t *ctx, int argc)
{
    if (argc != 0) {
        return cli_fail(CLI_EXIT_USAGE, "usage: jetfleet model list");
    }
    jf_err_t err = {0};
    coord_store_t *st = cli_ctx_store(ctx, &err);
    cli_table_t *t = cli_table_new(NULL);
    int rc = st && t ? coord_store_models_each(st, s_list_row, t, &err) : -EIO;
    if (rc == 0) {
        (void) cli_table_write(t, CLI_FORMAT_TEXT, stdout);
        if (cli_table_rows(t) == 0) {
            printf("(no models)\n");
        }
    }
    cli_table_destroy(&t);
    return rc == 0 ? CLI_EXIT_OK : cli_fail(CLI_EXIT_ERROR, "model list: %s", err.msg);
}

// A printed value of a target in its printed unit (s, W, J) from the internal one.
static double s_printed(coord_target_t target, double y)
{
    return target == COORD_TARGET_TIME ? y / (double) JF_US_PER_S : y / 1000.0;
}

static const char *s_printed_name(coord_target_t target)
{
    return target == COORD_TARGET_TIME    ? "time_s"
           : target == COORD_TARGET_POWER ? "power_w"
                                          : "energy_j";
}

static int s_int_opt(const char *opt, const char *text, int64_t min, int64_t max, int *ret,
                     jf_err_t *err)
{
    int64_t v = 0;
    if (jf_parse_i64(text, min, max, &v, err) != 0) {
        return jf_err_prefix(err, "--%s", opt);
    }
    *ret = (int) v;
    return 0;
}

// The operating point of model predict's options v (cores, cpu, gpu, emc, workers, batch).
static int s_parse_op(const char *const *v, const coord_model_row_t *row, coord_op_t *op,
                      jf_err_t *err)
{
    cli_models_trained_config(row, &op->workers, &op->batch_size);
    int rc = s_int_opt("cores", v[1], 1, S_CORES_MAX, &op->cores, err);
    int64_t *hz[] = {&op->cpu_hz, &op->gpu_hz, &op->emc_hz};
    static const char *const hz_names[] = {"cpu-freq", "gpu-freq", "emc-freq"};
    for (int i = 0; rc == 0 && i < 3; i++) {
        rc = jf_parse_freq_hz(v[2 + i], 1, S_FREQ_MAX_HZ, hz[i], err);
        rc = rc == 0 ? 0 : jf_err_prefix(err, "--%s", hz_names[i]);
    }
    rc = rc == 0 && v[5] ? s_int_opt("workers", v[5], 0, S_CORES_MAX, &op->workers, err) : rc;
    rc = rc == 0 && v[6] ? s_int_opt("batch", v[6], 1, S_BATCH_MAX, &op->batch_size, err) : rc;
    if (rc == 0 && (op->workers < 0 || op->batch_size < 1)) {
        rc = jf_err_set(err, -EINVAL,
                        "model %" PRId64 " was trained on several workers or batch sizes: "
                        "give --workers and --batch",
                        row->id);
    }
    return rc;
}

static int s_predict(cli_ctx_t *ctx, int argc, char **argv)
{
    static const char *const names[] = {"model",    "cores",   "cpu-freq", "gpu-freq",
                                        "emc-freq", "workers", "batch",    NULL};
    const char *v[CLI_MODELS_OPTS_MAX] = {0};
    if (cli_models_opts("predict", argc, argv, names, v) != 0 || !v[0] || !v[1] || !v[2] || !v[3] ||
        !v[4]) {
        return cli_fail(CLI_EXIT_USAGE, S_PREDICT_USAGE);
    }
    jf_err_t err = {0};
    int64_t id = 0;
    coord_model_row_t row = {0};
    coord_store_t *st =
        cli_models_parse_id("model", v[0], &id, &err) == 0 ? cli_ctx_store(ctx, &err) : NULL;
    coord_model_t *m = st ? cli_models_load(st, id, &row, &err) : NULL;
    coord_op_t op = {0};
    double y = 0.0;
    bool ok =
        m && s_parse_op(v, &row, &op, &err) == 0 && coord_model_predict(m, &op, &y, &err) == 0;
    if (ok) {
        coord_target_t t = coord_model_target(m);
        printf("model=%" PRId64 " %s=%.6g\n", id, s_printed_name(t), s_printed(t, y));
    }
    if (m) {
        coord_model_row_fini(&row);
    }
    coord_model_destroy(&m);
    return ok ? CLI_EXIT_OK : cli_fail(CLI_EXIT_ERROR, "model predict: %s", err.msg);
}

static int s_eval_points(const cli_ctx_t *ctx, coord_store_t *st, coord_model_t *m,
                         const coord_model_row_t *row, const char *sweep, const char *board,
                         jf_err_t *err)
{
    bool by_type = !board && strcmp(row->scope, "type") == 0;
    coord_points_filter_t f = {.workload = row->workload,
                               .board = board     ? board
                                        : by_type ? NULL
                                                  : row->scope_value,
                               .type = by_type ? row->scope_value : NULL};
    coord_run_mean_t *runs = NULL;
    size_t n = 0;
    coord_points_left_t left = {0};
    int rc = cli_models_runs(ctx, st, sweep, &f, &runs, &n, &left, err);
    coord_point_t *pts = rc == 0 ? malloc(n * sizeof *pts) : NULL;
    rc = rc == 0 && !pts ? jf_err_set(err, -ENOMEM, "out of memory") : rc;
    size_t np = rc == 0 ? coord_points_of(runs, n, coord_model_target(m), pts) : 0;
    double mape = NAN;
    if (rc == 0 && np == 0) {
        rc = jf_err_set(err, -ENOENT, "sweep '%s' has no measured %s for that workload and board",
                        sweep, row->target);
    }
    rc = rc == 0 ? coord_model_mape(m, pts, np, &mape, err) : rc;
    if (rc == 0) {
        printf("model=%" PRId64 " points=%zu mape_pct=%.2f\n", row->id, np, mape);
        cli_models_print_left(sweep, n, &left);
    }
    free(pts);
    free(runs);
    return rc;
}

static int s_eval(cli_ctx_t *ctx, int argc, char **argv)
{
    static const char *const names[] = {"model", "sweep", "board", NULL};
    const char *v[CLI_MODELS_OPTS_MAX] = {0};
    if (cli_models_opts("eval", argc, argv, names, v) != 0 || !v[0] || !v[1]) {
        return cli_fail(CLI_EXIT_USAGE, S_EVAL_USAGE);
    }
    jf_err_t err = {0};
    int64_t id = 0;
    coord_model_row_t row = {0};
    coord_store_t *st =
        cli_models_parse_id("model", v[0], &id, &err) == 0 ? cli_ctx_store(ctx, &err) : NULL;
    coord_model_t *m = st ? cli_models_load(st, id, &row, &err) : NULL;
    bool ok = m && s_eval_points(ctx, st, m, &row, v[1], v[2], &err) == 0;
    if (m) {
        coord_model_row_fini(&row);
    }
    coord_model_destroy(&m);
    return ok ? CLI_EXIT_OK : cli_fail(CLI_EXIT_ERROR, "model eval: %s", err.msg);
}

int cli_cmd_model(cli_ctx_t *ctx, int argc, char **argv)
{
    const char *verb = argc > 0 ? argv[0] : "";
    if (strcmp(verb, "fit") == 0) {
        return s_fit(ctx, argc - 1, argv + 1);
    }
    if (strcmp(verb, "list") == 0) {
        return s_list(ctx, argc - 1);
    }
    if (strcmp(verb, "predict") == 0) {
        return s_predict(ctx, argc - 1, argv + 1);
    }
    if (strcmp(verb, "eval") == 0) {
        return s_eval(ctx, argc - 1, argv + 1);
    }
    return cli_fail(CLI_EXIT_USAGE, S_USAGE);
}
