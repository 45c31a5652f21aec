/* jetfleet pareto: the time-energy Pareto front of one board's modes for one workload, over the
 * measured modes or, with --predicted, over the grid of the measured clocks as two stored models
 * predict it (docs/analysis.md "Pareto fronts and recommendations"). Read-only. */
#include "cli_cmds.h"
#include "cli_models.h"
#include "cli_table.h"

#include "jf_units.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_USAGE                                                                                    \
    "usage: jetfleet pareto --sweep S --workload W --board B [--predicted "                        \
    "TIME_MODEL,POWER_MODEL] "                                                                     \
    "[--format text|csv]"
#define S_FIGS 6 // time_s, power_w, energy_j, and the measured ones of a predicted mode

typedef struct s_args {
    const char *sweep, *workload, *board, *predicted, *format;
} s_args_t;

// Adds one front row: the mode, its figures, and (predicted fronts) the measured ones or empty.
static int s_row(cli_table_t *t, const char *source, const coord_pareto_point_t *p,
                 const coord_pareto_point_t *measured, bool predicted)
{
    static const char *const cols[] = {
        "source",           "cores",  "cpu_mhz", "gpu_mhz",  "emc_mhz",         "workers",
        "batch_size",       "time_s", "power_w", "energy_j", "measured_time_s", "measured_power_w",
        "measured_energy_j"};
    char cells[CLI_MODELS_MODE_COLS + S_FIGS][CLI_MODELS_CELL_MAX] = {{0}};
    cli_models_mode_cells(&p->op, cells);
    const coord_pareto_point_t *figs[] = {p, measured};
    for (int k = 0; k < 2; k++) {
        int at = CLI_MODELS_MODE_COLS + 3 * k;
        if (figs[k]) {
            snprintf(cells[at], CLI_MODELS_CELL_MAX, "%.4f",
                     figs[k]->time_us / (double) JF_US_PER_S);
            snprintf(cells[at + 1], CLI_MODELS_CELL_MAX, "%.3f", figs[k]->power_mw / 1e3);
            snprintf(cells[at + 2], CLI_MODELS_CELL_MAX, "%.3f", figs[k]->energy_mj / 1e3);
        }
    }
    const char *vals[1 + CLI_MODELS_MODE_COLS + S_FIGS] = {source};
    for (int i = 0; i < CLI_MODELS_MODE_COLS + S_FIGS; i++) {
        vals[1 + i] = cells[i];
    }
    return cli_table_add_text(
        t, predicted ? 1 + CLI_MODELS_MODE_COLS + S_FIGS : 1 + CLI_MODELS_MODE_COLS + 3, cols,
        vals);
}

static int s_parse(int argc, char **argv, s_args_t *a)
{
    static const char *const names[] = {"sweep", "workload", "board", "predicted", "format", NULL};
    const char *v[CLI_MODELS_OPTS_MAX] = {0};
    if (cli_models_opts("pareto", argc, argv, names, v) != 0) {
        return -1;
    }
    *a = (s_args_t){v[0], v[1], v[2], v[3], v[4] ? v[4] : "text"};
    bool fmt = strcmp(a->format, "text") == 0 || strcmp(a->format, "csv") == 0;
    return a->sweep && a->workload && a->board && fmt ? 0 : -1;
}

static int s_parse_pair(const char *text, int64_t *ret_t, int64_t *ret_p, jf_err_t *err)
{
    const char *comma = strchr(text, ',');
    char first[32] = {0};
    if (!comma || (size_t) (comma - text) >= sizeof first) {
        return jf_err_set(err, -EINVAL,
                          "--predicted: expected TIME_MODEL,POWER_MODEL (two model ids), got '%s'",
                          text);
    }
    memcpy(first, text, (size_t) (comma - text));
    int rc = cli_models_parse_id("predicted", first, ret_t, err);
    return rc == 0 ? cli_models_parse_id("predicted", comma + 1, ret_p, err) : rc;
}

// The front of pts (predicted or measured) into t.
static int s_front(cli_table_t *t, const coord_pareto_point_t *pts, size_t n,
                   const coord_pareto_point_t *modes, size_t nmodes, bool predicted, jf_err_t *err)
{
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    int m = idx ? coord_pareto_front(pts, n, idx, err) : jf_err_set(err, -ENOMEM, "out of memory");
    int rc = m < 0 ? m : 0;
    for (int i = 0; rc == 0 && i < m; i++) {
        const coord_pareto_point_t *p = &pts[idx[i]];
        rc = s_row(t, predicted ? "predicted" : "measured", p,
                   predicted ? cli_models_find(modes, nmodes, &p->op) : NULL, predicted);
    }
    free(idx);
    return rc;
}

static int s_run(const cli_ctx_t *ctx, coord_store_t *st, const s_args_t *a, cli_table_t *t,
                 jf_err_t *err)
{
    coord_points_filter_t f = {.workload = a->workload, .board = a->board};
    coord_run_mean_t *runs = NULL;
    size_t n = 0;
    coord_pareto_point_t *modes = NULL;
    size_t nmodes = 0;
    coord_points_left_t left = {0};
    int rc = cli_models_runs(ctx, st, a->sweep, &f, &runs, &n, &left, err);
    rc = rc == 0 ? coord_points_modes(runs, n, &modes, &nmodes, err) : rc;
    if (rc == 0 && nmodes == 0 && !a->predicted) {
        rc = jf_err_set(err, -ENOENT, "no run of '%s' on '%s' in sweep '%s' has measured energy",
                        a->workload, a->board, a->sweep);
    }
    int64_t tid = 0;
    int64_t pid = 0;
    coord_pareto_point_t *pred = NULL;
    size_t npred = 0;
    if (rc == 0 && a->predicted) {
        rc = s_parse_pair(a->predicted, &tid, &pid, err);
        rc = rc == 0 ? cli_models_predict_grid(st, tid, pid, runs, n, &pred, &npred, err) : rc;
    }
    if (rc == 0) {
        rc = a->predicted ? s_front(t, pred, npred, modes, nmodes, true, err)
                          : s_front(t, modes, nmodes, NULL, 0, false, err);
    }
    if (rc == 0) {
        cli_models_print_left(a->sweep, n, &left);
    }
    free(pred);
    free(modes);
    free(runs);
    return rc;
}

int cli_cmd_pareto(cli_ctx_t *ctx, int argc, char **argv)
{
    s_args_t a;
    if (s_parse(argc, argv, &a) != 0) {
        return cli_fail(CLI_EXIT_USAGE, S_USAGE);
    }
    jf_err_t err = {0};
    coord_store_t *st = cli_ctx_store(ctx, &err);
    cli_table_t *t = cli_table_new(NULL);
    int rc = st && t ? s_run(ctx, st, &a, t, &err) : -EIO;
    if (rc == 0) {
        (void) cli_table_write(t, strcmp(a.format, "csv") == 0 ? CLI_FORMAT_CSV : CLI_FORMAT_TEXT,
                               stdout);
    }
    cli_table_destroy(&t);
    return rc == 0 ? CLI_EXIT_OK : cli_fail(CLI_EXIT_ERROR, "pareto: %s", err.msg);
}
