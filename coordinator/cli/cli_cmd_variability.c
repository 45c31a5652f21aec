/* jetfleet variability: board-to-board variability of a sweep's valid runs, per group of boards
 * that ran the same configuration (coord_variability.h; docs/analysis.md "Variability"). Reads
 * the store only; the coordinator need not run. */
#include "cli_analysis.h"
#include "cli_cmds.h"
#include "cli_table.h"
#include "coord_valid_runs.h"
#include "coord_variability.h"
#include "jf_units.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_USAGE                                                                                    \
    "usage: jetfleet variability --sweep NAME [--metric e2e|stall|compute|energy|all] "            \
    "[--format text|csv|json]"
#define S_NCOLS    27
#define S_CELL     128
#define S_SIM_NOTE "groups of sim boards are simulated (model: docs/simulator.md), not measured"

typedef struct s_args {
    const char *sweep;
    const char *metric;
    const char *format;
} s_args_t;

// Every column a row has (NULL-terminated, as cli_table_new wants it); the text tables keep the
// ones of their metric's unit.
static const char *const s_cols[S_NCOLS + 1] = {
    "metric",        "board_type",       "workload",   "power_mode",
    "storage",       "workers",          "batch_size", "dvfs_off",
    "boards",        "mean_s",           "sd_s",       "min_s",
    "max_s",         "mean_j",           "sd_j",       "min_j",
    "max_j",         "cv_pct",           "spread_pct", "spread_x",
    "repeat_cv_pct", "repeat_cv_boards", "outliers",   "outlier_boards",
    "median_s",      "median_j",         "runtime",    NULL};
static const char *const s_text_s[] = {
    "board_type", "workload",   "power_mode",    "storage",  "workers", "batch_size",
    "dvfs_off",   "boards",     "mean_s",        "sd_s",     "cv_pct",  "min_s",
    "max_s",      "spread_pct", "repeat_cv_pct", "outliers", "runtime", NULL};
static const char *const s_text_j[] = {
    "board_type", "workload",   "power_mode",    "storage",  "workers", "batch_size",
    "dvfs_off",   "boards",     "mean_j",        "sd_j",     "cv_pct",  "min_j",
    "max_j",      "spread_pct", "repeat_cv_pct", "outliers", "runtime", NULL};

static int s_parse(int argc, char **argv, s_args_t *a)
{
    static const struct option opts[] = {{"sweep", required_argument, NULL, 's'},
                                         {"metric", required_argument, NULL, 'm'},
                                         {"format", required_argument, NULL, 'f'},
                                         {NULL, 0, NULL, 0}};
    char **nargv = cli_getopt_argv("variability", argc, argv);
    bool ok = nargv != NULL;
    optind = 0; // restart getopt fully: it has parsed another command's words before
    *a = (s_args_t){.metric = "all", .format = "text"};
    for (int c; ok && (c = getopt_long(argc + 1, nargv, "", opts, NULL)) != -1;) {
        const char **dst = c == 's'   ? &a->sweep
                           : c == 'm' ? &a->metric
                           : c == 'f' ? &a->format
                                      : NULL;
        ok = dst != NULL;
        if (ok) {
            *dst = optarg;
        }
    }
    free(nargv);
    coord_metric_t m;
    return ok && optind == argc + 1 && a->sweep &&
                   (strcmp(a->metric, "all") == 0 || coord_metric_parse(a->metric, &m))
               ? 0
               : -1;
}

// One output row being filled: a cell per column, NULL (shown "-", empty in CSV) until set.
typedef struct s_row {
    char buf[S_NCOLS][S_CELL];
    const char *values[S_NCOLS];
    coord_value_kind_t kinds[S_NCOLS];
} s_row_t;

static void s_set(s_row_t *row, const char *col, coord_value_kind_t kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void s_set(s_row_t *row, const char *col, coord_value_kind_t kind, const char *fmt, ...)
{
    for (int c = 0; c < S_NCOLS; c++) {
        if (strcmp(s_cols[c], col) == 0) {
            va_list ap;
            va_start(ap, fmt);
            (void) vsnprintf(row->buf[c], S_CELL, fmt, ap);
            va_end(ap);
            row->values[c] = row->buf[c];
            row->kinds[c] = kind;
        }
    }
}

// Times are kept in µs and energy in mJ; the tables show seconds and joules.
static double s_shown(coord_metric_t m, double v)
{
    return m == COORD_METRIC_ENERGY ? v / 1000.0 : v / (double) JF_US_PER_S;
}

static void s_set_stats(s_row_t *row, coord_metric_t m, const coord_var_metric_t *vm)
{
    const char *u = m == COORD_METRIC_ENERGY ? "j" : "s";
    const struct {
        const char *name;
        double v;
    } figs[] = {{"mean", vm->between.mean},
                {"sd", vm->between.sd},
                {"min", vm->between.min},
                {"max", vm->between.max},
                {"median", vm->between.median}};
    for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
        char col[16];
        (void) snprintf(col, sizeof col, "%s_%s", figs[i].name, u);
        s_set(row, col, COORD_VALUE_REAL, "%.9g", s_shown(m, figs[i].v));
    }
    if (vm->between.has_cv) {
        s_set(row, "cv_pct", COORD_VALUE_REAL, "%.9g", vm->between.cv_pct);
    }
    if (vm->has_spread) {
        s_set(row, "spread_pct", COORD_VALUE_REAL, "%.9g", vm->spread_pct);
        s_set(row, "spread_x", COORD_VALUE_REAL, "%.9g", vm->spread_ratio);
    }
    if (vm->repeat_cv_boards > 0) {
        s_set(row, "repeat_cv_pct", COORD_VALUE_REAL, "%.9g", vm->repeat_cv_median_pct);
    }
    s_set(row, "repeat_cv_boards", COORD_VALUE_INT, "%zu", vm->repeat_cv_boards);
    s_set(row, "outliers", COORD_VALUE_INT, "%zu", vm->outliers);
}

// The flagged boards' names, space-separated, into the outlier_boards cell.
static void s_set_outlier_names(s_row_t *row, const coord_variability_t *var, size_t g,
                                coord_metric_t m)
{
    char names[S_CELL] = "";
    size_t used = 0;
    for (size_t b = 0; b < coord_variability_group(var, g)->n_boards; b++) {
        const coord_var_board_t *vb = coord_variability_board(var, g, b);
        if (vb->outlier[m] && used < sizeof names) {
            int n = snprintf(names + used, sizeof names - used, "%s%s", used ? " " : "", vb->board);
            used += n > 0 ? (size_t) n : 0;
        }
    }
    if (names[0]) {
        s_set(row, "outlier_boards", COORD_VALUE_TEXT, "%s", names);
    }
}

static int s_add_group(cli_table_t *t, const coord_variability_t *var, size_t g, coord_metric_t m)
{
    const coord_var_group_t *grp = coord_variability_group(var, g);
    s_row_t row = {0};
    s_set(&row, "metric", COORD_VALUE_TEXT, "%s", coord_metric_name(m));
    s_set(&row, "board_type", COORD_VALUE_TEXT, "%s", grp->board_type);
    s_set(&row, "workload", COORD_VALUE_TEXT, "%s", grp->workload);
    s_set(&row, "power_mode", COORD_VALUE_TEXT, "%s", grp->power_mode);
    s_set(&row, "storage", COORD_VALUE_TEXT, "%s", grp->storage);
    s_set(&row, "workers", COORD_VALUE_INT, "%d", grp->workers);
    s_set(&row, "batch_size", COORD_VALUE_INT, "%d", grp->batch_size);
    s_set(&row, "dvfs_off", COORD_VALUE_TEXT, "%s", grp->dvfs_off ? "yes" : "no");
    s_set(&row, "runtime", COORD_VALUE_TEXT, "%s", grp->runtime);
    size_t with = 0; // boards that have the metric (energy may be unreadable on some)
    for (size_t b = 0; b < grp->n_boards; b++) {
        with += coord_variability_board(var, g, b)->has[m];
    }
    s_set(&row, "boards", COORD_VALUE_INT, "%zu", with);
    if (grp->metric[m].has) {
        s_set_stats(&row, m, &grp->metric[m]);
        s_set_outlier_names(&row, var, g, m);
    }
    return cli_table_add_row(S_NCOLS, s_cols, row.values, row.kinds, t);
}

static void s_print_outliers(const coord_variability_t *var, coord_metric_t m, FILE *out)
{
    for (size_t g = 0; g < coord_variability_groups(var); g++) {
        const coord_var_group_t *grp = coord_variability_group(var, g);
        for (size_t b = 0; b < grp->n_boards; b++) {
            const coord_var_board_t *vb = coord_variability_board(var, g, b);
            if (!vb->outlier[m]) {
                continue;
            }
            fprintf(out,
                    "outlier: %s %s %.3f %s, modified z %.1f (median %.3f), group %s %s %s %s "
                    "workers %d batch %d%s %s\n",
                    vb->board, coord_metric_name(m), s_shown(m, vb->mean[m]),
                    m == COORD_METRIC_ENERGY ? "J" : "s", vb->z[m],
                    s_shown(m, grp->metric[m].between.median), grp->board_type, grp->workload,
                    grp->power_mode, grp->storage, grp->workers, grp->batch_size,
                    grp->dvfs_off ? " dvfs off" : "", grp->runtime);
        }
    }
}

static int s_write(const coord_variability_t *var, const bool *want, cli_format_t fmt)
{
    int rc = 0;
    cli_table_t *all = fmt == CLI_FORMAT_TEXT ? NULL : cli_table_new(s_cols);
    for (int m = 0; rc == 0 && m < COORD_METRIC_COUNT; m++) {
        if (!want[m]) {
            continue;
        }
        cli_table_t *t = all ? all : cli_table_new(m == COORD_METRIC_ENERGY ? s_text_j : s_text_s);
        rc = t ? 0 : -ENOMEM;
        for (size_t g = 0; rc == 0 && g < coord_variability_groups(var); g++) {
            rc = s_add_group(t, var, g, (coord_metric_t) m);
        }
        if (rc == 0 && !all) {
            printf("%s%s per epoch, across boards:\n", m ? "\n" : "",
                   coord_metric_name((coord_metric_t) m));
            rc = cli_table_write(t, CLI_FORMAT_TEXT, stdout);
            s_print_outliers(var, (coord_metric_t) m, stdout);
        }
        if (!all) {
            cli_table_destroy(&t);
        }
    }
    rc = rc == 0 && all ? cli_table_write(all, fmt, stdout) : rc;
    cli_table_destroy(&all);
    return rc;
}

typedef struct s_feed {
    coord_variability_t *var;
    const coord_valid_runs_t *valid;
    jf_err_t *err;
} s_feed_t;

static int s_feed_valid(const coord_obs_t *obs, void *arg)
{
    s_feed_t *f = arg;
    return coord_valid_runs_has(f->valid, obs->run) ? coord_variability_add(f->var, obs, f->err)
                                                    : 0;
}

// The sweep's valid runs' epochs, grouped and computed. NULL with err.
static coord_variability_t *s_analyse(coord_store_t *store, const char *sweep,
                                      const coord_valid_runs_t *valid, jf_err_t *err)
{
    coord_variability_t *var = coord_variability_new(err);
    s_feed_t feed = {.var = var, .valid = valid, .err = err};
    int rc = var ? coord_store_obs_each(store, sweep, s_feed_valid, &feed, err) : -ENOMEM;
    rc = rc == 0 ? coord_variability_compute(var, err) : rc;
    if (rc != 0) {
        coord_variability_destroy(&var);
    }
    return var;
}

static bool s_any_sim(const coord_variability_t *var)
{
    for (size_t g = 0; g < coord_variability_groups(var); g++) {
        if (coord_variability_group(var, g)->any_sim) {
            return true;
        }
    }
    return false;
}

int cli_cmd_variability(cli_ctx_t *ctx, int argc, char **argv)
{
    s_args_t a = {0};
    cli_format_t fmt = CLI_FORMAT_TEXT;
    if (s_parse(argc, argv, &a) != 0 || !cli_analysis_format(a.format, &fmt)) {
        return cli_fail(CLI_EXIT_USAGE, S_USAGE);
    }
    jf_err_t err = {0};
    coord_valid_runs_t *valid = NULL;
    int rc = cli_analysis_valid_runs(ctx, a.sweep, true, &valid);
    coord_variability_t *var =
        rc == CLI_EXIT_OK ? s_analyse(ctx->store, a.sweep, valid, &err) : NULL;
    if (rc == CLI_EXIT_OK && !var) {
        rc = cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    bool want[COORD_METRIC_COUNT] = {0};
    coord_metric_t one = COORD_METRIC_E2E;
    bool all = strcmp(a.metric, "all") == 0 || !coord_metric_parse(a.metric, &one);
    for (int m = 0; m < COORD_METRIC_COUNT; m++) {
        want[m] = all || m == (int) one;
    }
    if (rc == CLI_EXIT_OK && s_write(var, want, fmt) != 0) {
        rc = cli_fail(CLI_EXIT_ERROR, "writing the tables failed");
    }
    if (rc == CLI_EXIT_OK) {
        cli_analysis_print_left_out(a.sweep, valid, fmt);
        if (s_any_sim(var)) {
            fprintf(fmt == CLI_FORMAT_TEXT ? stdout : stderr, "%s\n", S_SIM_NOTE);
        }
    }
    coord_variability_destroy(&var);
    coord_valid_runs_destroy(&valid);
    return rc;
}
