/* jetfleet roofline: a board's time and energy rooflines per power setting, from its roofline
 * runs, and where each workload's minibatch sits on them (work counted from the model's layers),
 * with the predictions against the board's measured training runs (docs/roofline.md). Read-only. */
#include "cli_cmds.h"
#include "cli_models.h"
#include "cli_roofline.h"
#include "cli_table.h"

#include "jf_parse.h"
#include "jf_run_spec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define S_USAGE         "usage: jetfleet roofline --board B [--mode M] [--batch N]"
#define S_BATCH_DEFAULT 16 // a sweep's default batch size (docs/sweeps.md)
#define S_CELL          32
#define S_WORK_COLS     14

typedef struct s_args {
    const char *board, *mode;
    int batch; // 0: the measured runs' batch sizes, else S_BATCH_DEFAULT
} s_args_t;

static const char *const s_models[CLI_ROOFLINE_MODELS] = {"lenet5", "resnet18", "vgg11",
                                                          "mobilenetv3"};

static int s_parse(int argc, char **argv, s_args_t *a)
{
    static const char *const names[] = {"board", "mode", "batch", NULL};
    const char *v[CLI_MODELS_OPTS_MAX] = {0};
    if (cli_models_opts("roofline", argc, argv, names, v) != 0 || !v[0]) {
        return -1;
    }
    int64_t batch = 0;
    if (v[2] && jf_parse_i64(v[2], 1, JF_BATCH_MAX, &batch, NULL) != 0) {
        return -1;
    }
    *a = (s_args_t){v[0], v[1], (int) batch};
    return 0;
}

// v with digits decimals into cell; left empty when v is not finite.
static void s_num(char *cell, double v, int digits)
{
    if (isfinite(v)) {
        (void) snprintf(cell, S_CELL, "%.*f", digits, v);
    }
}

// A signed percentage with one decimal; empty when not finite.
static void s_pct(char *cell, double v)
{
    if (isfinite(v)) {
        (void) snprintf(cell, S_CELL, "%+.1f", v);
    }
}

static int s_roof_row(cli_table_t *t, const coord_roofline_t *r)
{
    static const char *const cols[] = {"power",        "device",     "source",
                                       "peak_gflop_s", "peak_gb_s",  "ridge_flop_per_byte",
                                       "pj_per_flop",  "pj_per_byte"};
    char c[5][S_CELL] = {{0}};
    s_num(c[0], r->peak_flop_per_s / 1e9, 2);
    s_num(c[1], r->peak_bytes_per_s / 1e9, 2);
    s_num(c[2], r->peak_flop_per_s / r->peak_bytes_per_s, 2);
    if (r->has_energy) {
        s_num(c[3], r->j_per_flop * 1e12, 2);
        s_num(c[4], r->j_per_byte * 1e12, 2);
    }
    const char *vals[] = {
        r->power, r->device, r->simulated ? "simulated" : "measured", c[0], c[1], c[2], c[3], c[4]};
    return cli_table_add_text(t, 8, cols, vals);
}

// One workload row: the prediction, and the measurement when m is not NULL.
static int s_work_row(cli_table_t *t, const coord_roofline_t *r, const char *model, int batch,
                      const jf_torch_work_t *w, const coord_roofline_measured_t *m)
{
    static const char *const cols[S_WORK_COLS] = {
        "power",         "model",   "batch",          "gflop",         "mbytes",
        "flop_per_byte", "bound",   "attain_gflop_s", "pred_ms",       "pred_mj",
        "meas_ms",       "meas_mj", "time_err_pct",   "energy_err_pct"};
    coord_roofline_pred_t p;
    coord_roofline_predict(r, w->flop, w->bytes, &p);
    char c[S_WORK_COLS][S_CELL] = {{0}};
    (void) snprintf(c[2], S_CELL, "%d", batch);
    s_num(c[3], w->flop / 1e9, 3);
    s_num(c[4], w->bytes / 1e6, 1);
    s_num(c[5], p.intensity, 2);
    s_num(c[7], p.attainable_flop_per_s / 1e9, 2);
    s_num(c[8], p.time_s * 1e3, 3);
    if (p.has_energy) {
        s_num(c[9], p.energy_j * 1e3, 2);
    }
    if (m && m->minibatches > 0) {
        double ms = (double) m->compute_us / 1e3 / (double) m->minibatches;
        s_num(c[10], ms, 3);
        s_pct(c[12], coord_roofline_error_pct(p.time_s * 1e3, ms));
        if (m->has_energy && p.has_energy) {
            double mj = m->compute_energy_mj / (double) m->minibatches;
            s_num(c[11], mj, 2);
            s_pct(c[13], coord_roofline_error_pct(p.energy_j * 1e3, mj));
        }
    }
    const char *vals[S_WORK_COLS];
    for (int i = 0; i < S_WORK_COLS; i++) {
        vals[i] = c[i];
    }
    vals[0] = r->power;
    vals[1] = model;
    vals[6] = p.memory_bound ? "memory" : "compute";
    return cli_table_add_text(t, S_WORK_COLS, cols, vals);
}

// The rows of one model on roofline r: each measured batch size, or the asked/default one.
static int s_model_rows(cli_table_t *t, cli_roofline_set_t *set, const coord_roofline_t *r,
                        const char *model, int batch, jf_err_t *err)
{
    int rows = 0, rc = 0;
    jf_torch_work_t w;
    for (size_t i = 0; rc == 0 && i < set->n_measured; i++) {
        const coord_roofline_measured_t *m = &set->measured[i];
        if (strcmp(m->power, r->power) != 0 || strcmp(m->model, model) != 0 ||
            (batch && m->batch_size != batch)) {
            continue;
        }
        rc = cli_roofline_work(set, model, m->batch_size, &w, err);
        rc = rc == 0 ? s_work_row(t, r, model, m->batch_size, &w, m) : rc;
        rows++;
    }
    if (rc == 0 && rows == 0) {
        int b = batch ? batch : S_BATCH_DEFAULT;
        rc = cli_roofline_work(set, model, b, &w, err);
        rc = rc == 0 ? s_work_row(t, r, model, b, &w, NULL) : rc;
    }
    return rc;
}

static int s_run(coord_store_t *st, const s_args_t *a, cli_table_t *roofs, cli_table_t *work,
                 bool *ret_sim, jf_err_t *err)
{
    cli_roofline_set_t set;
    int rc = cli_roofline_load(st, a->board, a->mode, &set, err);
    for (size_t i = 0; rc == 0 && i < set.n_roofs; i++) {
        const coord_roofline_t *r = &set.roofs[i];
        *ret_sim = *ret_sim || r->simulated;
        rc = s_roof_row(roofs, r);
        for (int k = 0; rc == 0 && k < CLI_ROOFLINE_MODELS; k++) {
            rc = s_model_rows(work, &set, r, s_models[k], a->batch, err);
        }
    }
    cli_roofline_fini(&set);
    return rc;
}

int cli_cmd_roofline(cli_ctx_t *ctx, int argc, char **argv)
{
    s_args_t a;
    if (s_parse(argc, argv, &a) != 0) {
        return cli_fail(CLI_EXIT_USAGE, S_USAGE);
    }
    jf_err_t err = {0};
    coord_store_t *st = cli_ctx_store(ctx, &err);
    cli_table_t *roofs = cli_table_new(NULL), *work = cli_table_new(NULL);
    bool sim = false;
    int rc = st && roofs && work ? s_run(st, &a, roofs, work, &sim, &err) : -EIO;
    if (rc == 0) {
        (void) printf("rooflines of '%s' (peaks from its roofline runs; energy is the board's "
                      "total, idle included):\n",
                      a.board);
        (void) cli_table_write(roofs, CLI_FORMAT_TEXT, stdout);
        (void) printf("\nworkloads (work per minibatch counted from the model's layers; "
                      "measured: the board's done training runs, steps only):\n");
        (void) cli_table_write(work, CLI_FORMAT_TEXT, stdout);
        if (sim) {
            (void) printf("rows marked simulated come from the simulator's model "
                          "(docs/simulator.md), not from measurements\n");
        }
    }
    cli_table_destroy(&roofs);
    cli_table_destroy(&work);
    return rc == 0 ? CLI_EXIT_OK : cli_fail(CLI_EXIT_ERROR, "roofline: %s", err.msg);
}
