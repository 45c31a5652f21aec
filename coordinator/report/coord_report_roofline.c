/* The report's roofline figure (docs/report.md, docs/roofline.md): the rooflines of the sweep's
 * first board, one line per power setting (attainable GFLOP/s against FLOP per byte), and the
 * board's measured training steps placed at their models' arithmetic intensity. Numbers from the
 * store's roofline runs (coord_store_roofline.h) and the work counted from the models' layers. */
#include "coord_report_internal.h"
#include "coord_roofline.h"
#include "jf_torch_flops.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_ROWS_MAX     64 // benchmark groups and measured rows drawn, at most
#define S_CURVE_POINTS 7  // intensities ridge / 8 .. ridge x 8, by factors of 2
#define S_CURVE_FIRST  (1.0 / 8.0)

typedef struct s_rows {
    coord_roofline_bench_t bench[S_ROWS_MAX];
    size_t n_bench;
    coord_roofline_measured_t meas[S_ROWS_MAX];
    size_t n_meas;
} s_rows_t;

static int s_keep_bench(const coord_roofline_bench_t *b, void *arg)
{
    s_rows_t *r = arg;
    if (r->n_bench < S_ROWS_MAX) {
        r->bench[r->n_bench++] = *b;
    }
    return 0;
}

static int s_keep_meas(const coord_roofline_measured_t *m, void *arg)
{
    s_rows_t *r = arg;
    if (r->n_meas < S_ROWS_MAX) {
        r->meas[r->n_meas++] = *m;
    }
    return 0;
}

// One dataset: the roofline's attainable GFLOP/s at S_CURVE_POINTS intensities around its ridge.
static int s_curve(json_t *fig, const coord_roofline_t *r)
{
    char label[2 * COORD_ROOFLINE_NAME_MAX];
    (void) snprintf(label, sizeof label, "%.127s (%.7s)", r->power, r->device);
    json_t *data = coord_report_fig_dataset(fig, label, "y");
    double ridge = r->peak_flop_per_s / r->peak_bytes_per_s, x = ridge * S_CURVE_FIRST;
    int rc = data ? 0 : -ENOMEM;
    for (int k = 0; rc == 0 && k < S_CURVE_POINTS; k++, x *= 2) {
        double y = x * r->peak_bytes_per_s < r->peak_flop_per_s ? x * r->peak_bytes_per_s
                                                                : r->peak_flop_per_s;
        rc = coord_report_xy(data, x, y / 1e9);
    }
    return rc;
}

// The measured steps of models whose setting has a roofline: (intensity, achieved GFLOP/s).
static int s_points(json_t *data, const s_rows_t *rows, const coord_roofline_t *roofs,
                    size_t n_roofs)
{
    jf_torch_cost_t costs[JF_TORCH_MODEL_MOBILENETV3 + 1];
    bool have[JF_TORCH_MODEL_MOBILENETV3 + 1] = {false}; // each model counted once
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < rows->n_meas; i++) {
        const coord_roofline_measured_t *m = &rows->meas[i];
        jf_torch_model_kind_t kind;
        jf_torch_work_t w;
        bool roof = false;
        for (size_t k = 0; k < n_roofs; k++) {
            roof = roof || strcmp(roofs[k].power, m->power) == 0;
        }
        if (!roof || m->minibatches <= 0 || m->compute_us <= 0 ||
            jf_torch_model_parse(m->model, &kind, NULL) != 0 || (int) kind < 0 ||
            kind > JF_TORCH_MODEL_MOBILENETV3) {
            continue;
        }
        if (!have[kind] && jf_torch_model_cost(kind, &costs[kind], NULL) != 0) {
            continue; // a model the shim cannot count is left out of the points
        }
        have[kind] = true;
        jf_torch_cost_minibatch(&costs[kind], m->batch_size, &w);
        double step_s = (double) m->compute_us / 1e6 / (double) m->minibatches;
        rc = coord_report_xy(data, w.flop / w.bytes, w.flop / step_s / 1e9);
    }
    return rc;
}

static int s_fill(json_t *fig, const s_rows_t *rows, bool *ret_sim)
{
    coord_roofline_t roofs[S_ROWS_MAX];
    size_t n = 0;
    for (size_t i = 0; i < rows->n_bench;) {
        const char *device = "cpu";
        size_t j = coord_roofline_group(rows->bench, rows->n_bench, i, &device);
        if (coord_roofline_from_benches(&rows->bench[i], j - i, device, &roofs[n], NULL) == 0) {
            *ret_sim = *ret_sim || roofs[n].simulated;
            n++;
        }
        i = j;
    }
    if (n == 0) {
        return 1;
    }
    json_t *points = coord_report_fig_dataset(fig, "measured training steps", "y");
    int rc = points ? s_points(points, rows, roofs, n) : -ENOMEM;
    for (size_t k = 0; rc == 0 && k < n; k++) {
        rc = s_curve(fig, &roofs[k]);
    }
    return rc;
}

int coord_report_roofline(const coord_report_ctx_t *ctx, json_t *figs, jf_err_t *err)
{
    const char *board = ctx->n_obs ? ctx->obs[0].board : "";
    char title[COORD_OBS_NAME_MAX + 64];
    (void) snprintf(title, sizeof title, "Roofline of %.127s", board);
    json_t *fig = coord_report_fig_new("roofline", title, "scatter",
                                       "arithmetic intensity (FLOP/byte)", "GFLOP/s");
    s_rows_t *rows = calloc(1, sizeof *rows);
    int rc = fig && rows ? 0 : jf_err_set(err, -ENOMEM, "report: out of memory");
    rc = rc == 0 ? coord_store_roofline_benches(ctx->store, board, NULL, s_keep_bench, rows, err)
                 : rc;
    rc = rc == 0 ? coord_store_roofline_measured(ctx->store, board, NULL, s_keep_meas, rows, err)
                 : rc;
    bool sim = false;
    int filled = rc == 0 ? s_fill(fig, rows, &sim) : rc;
    if (filled == 1) {
        coord_report_fig_no_data(fig,
                                 "board '%s' has no roofline run in the store "
                                 "(docs/roofline.md)",
                                 board);
    } else if (filled < 0) {
        rc = rc ? rc : jf_err_set(err, -ENOMEM, "report: out of memory");
    }
    (void) json_object_set_new(fig, "note",
                               json_string("lines: attainable FLOP/s of each power setting; "
                                           "points: the board's measured training steps, work "
                                           "counted from the models' layers"));
    (void) json_object_set_new(fig, "simulated", json_boolean(sim));
    free(rows);
    if (rc != 0) {
        json_decref(fig);
        return rc;
    }
    return coord_report_add(figs, fig, err);
}
