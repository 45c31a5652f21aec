/* jetfleet runs / results: tables from the store (read-only; the coordinator need not run). */
#include "cli_analysis.h"
#include "cli_baseline.h"
#include "cli_cmds.h"
#include "cli_table.h"
#include "cli_valid_cols.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct s_filter {
    const char *sweep;
    const char *state;
    bool dynamic; // results --dynamic: the idle baseline subtracted (docs/baseline.md)
} s_filter_t;

static int s_parse_filter(int argc, char **argv, s_filter_t *f)
{
    static const struct option opts[] = {{"sweep", required_argument, NULL, 's'},
                                         {"state", required_argument, NULL, 't'},
                                         {"dynamic", no_argument, NULL, 'd'},
                                         {NULL, 0, NULL, 0}};
    char **nargv = cli_getopt_argv("runs", argc, argv);
    bool ok = nargv != NULL;
    optind = 0; // argv[0] is an option here, not a program name: restart getopt fully
    for (int c; ok && (c = getopt_long(argc + 1, nargv, "", opts, NULL)) != -1;) {
        const char **dst = c == 's' ? &f->sweep : c == 't' ? &f->state : NULL;
        f->dynamic |= c == 'd';
        ok = dst != NULL || c == 'd';
        if (dst) {
            *dst = optarg;
        }
    }
    free(nargv);
    coord_run_state_t st;
    return ok && optind == argc + 1 && (!f->state || coord_run_state_parse(f->state, &st)) ? 0 : -1;
}

#define S_SIM_FOOTER "rows marked sim are simulated (model: docs/simulator.md), not measured"

// The table being filled, and how many of its rows came from simulated boards.
typedef struct s_rows {
    cli_table_t *table;
    size_t n_sim;
    cli_baseline_dyn_t dyn; // --dynamic: dyn.base set (cli_baseline.h); zero without
} s_rows_t;

static int s_add_row(int ncols, const char *const *names, const char *const *values,
                     const coord_value_kind_t *kinds, void *arg)
{
    s_rows_t *rows = arg;
    for (int i = 0; i < ncols; i++) {
        rows->n_sim +=
            strcmp(names[i], "platform") == 0 && values[i] && strcmp(values[i], "sim") == 0;
    }
    return rows->dyn.base ? cli_baseline_dynamic_row(ncols, names, values, kinds, &rows->dyn)
                          : cli_table_add_row(ncols, names, values, kinds, rows->table);
}

// With valid (results), each row gets the run's verdict (cli_valid_cols.h) on its way.
static int s_print(cli_ctx_t *ctx, coord_table_t table, const s_filter_t *f,
                   const char *const *columns, bool valid)
{
    jf_err_t err = {0};
    coord_store_t *store = cli_ctx_store(ctx, &err);
    s_rows_t rows = {.table = cli_table_new(columns)};
    rows.dyn = (cli_baseline_dyn_t){.base = f->dynamic && store ? cli_baseline_new(store) : NULL,
                                    .fn = cli_table_add_row,
                                    .arg = rows.table};
    cli_table_t *t = rows.table;
    coord_validity_opts_t opts = cli_analysis_opts(ctx);
    coord_valid_runs_t *vr =
        store && t && valid ? coord_valid_runs_new(store, f->sweep, &opts, &err) : NULL;
    cli_valid_cols_t vc = {.valid = vr, .fn = s_add_row, .arg = &rows};
    int rc = store && t && (vr || !valid)
                 ? coord_store_select(store, table, f->sweep, f->state,
                                      vr ? cli_valid_cols_row : s_add_row,
                                      vr ? (void *) &vc : (void *) &rows, &err)
                 : -1;
    if (rc != 0 && t && cli_table_error(t)[0]) {
        jf_err_set(&err, rc, "%s", cli_table_error(t)); // the table's reason, not errno's
    } else if (rc != 0 && vc.error[0]) {
        jf_err_set(&err, rc, "%s", vc.error);
    }
    if (rc == 0) {
        (void) cli_table_write(t, CLI_FORMAT_TEXT, stdout);
        if (cli_table_rows(t) == 0) {
            printf("(no rows)\n");
        }
        if (rows.n_sim > 0) {
            printf("%s\n", S_SIM_FOOTER);
        }
    }
    if (rc == 0 && rows.dyn.base) {
        cli_baseline_dynamic_footer(&rows.dyn, stdout);
        rc = cli_baseline_dynamic_check(&rows.dyn, &err);
    }
    cli_baseline_destroy(&rows.dyn.base);
    cli_table_destroy(&t);
    coord_valid_runs_destroy(&vr);
    return rc == 0 ? CLI_EXIT_OK : cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
}

int cli_cmd_runs(cli_ctx_t *ctx, int argc, char **argv)
{
    static const char *const cols[] = {"run",   "board",   "board_type",  "platform",   "workload",
                                       "power", "storage", "workers",     "batch_size", "repeat",
                                       "state", "attempt", "fail_reason", "duration_s", NULL};
    s_filter_t f = {0};
    if (s_parse_filter(argc, argv, &f) != 0 || f.dynamic) {
        return cli_fail(CLI_EXIT_USAGE, "usage: jetfleet runs [--sweep NAME] [--state "
                                        "pending|assigned|running|done|failed]");
    }
    return s_print(ctx, COORD_TABLE_RUNS, &f, cols, false);
}

int cli_cmd_results(cli_ctx_t *ctx, int argc, char **argv)
{
    const char *cols[] = {"run",
                          "board",
                          "platform",
                          "workload",
                          "power",
                          "storage",
                          "workers",
                          "batch_size",
                          "repeat",
                          "epochs_measured",
                          "e2e_s",
                          "fetch_stall_s",
                          "compute_s",
                          "samples_per_s",
                          "energy_mj",
                          "avg_power_mw",
                          "energy_source",
                          "final_loss",
                          "valid",
                          "invalid_reasons",
                          NULL,
                          NULL,
                          NULL};
    s_filter_t f = {0};
    if (s_parse_filter(argc, argv, &f) != 0 || !f.sweep || f.state) {
        return cli_fail(CLI_EXIT_USAGE, "usage: jetfleet results --sweep NAME [--dynamic]");
    }
    size_t n_cols = sizeof cols / sizeof cols[0] - 3;
    if (f.dynamic) { // the idle baseline's two columns (docs/baseline.md)
        cols[n_cols] = "idle_mw";
        cols[n_cols + 1] = "dynamic_energy_mj";
    }
    printf(
        "mean per epoch over the measured epochs (epoch 0 is warm-up and left out); energy "
        "and power are empty where the board's power was not readable; energy_source: "
        "power-monitor (the board's rails), rapl (a host's RAPL counters), simulated (a sim "
        "board's modelled rails, in modelled time); valid: whether jetfleet check finds the run's "
        "figures trustworthy (invalid_reasons say why not; the numbers: jetfleet check --sweep "
        "%s)\n",
        f.sweep);
    return s_print(ctx, COORD_TABLE_RESULTS, &f, cols, true);
}
