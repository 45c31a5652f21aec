/* jetfleet export: tidy tables (one observation per row, factors as columns) in CSV or JSON.
 * `--what rounds` exports federated rounds (docs/rounds.md "Records"), not a sweep's runs. */
#include "cli_analysis.h"
#include "cli_baseline.h"
#include "cli_cmds.h"
#include "cli_rounds.h"
#include "cli_table.h"
#include "cli_valid_cols.h"
#include "coord_store_rounds.h"
#include "jf_parse.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// with_valid: each row gets its run's verdict (cli_valid_cols.h). Not on minibatch and
// telemetry rows, many per run: join them to the runs export by `run`.
static const struct {
    const char *name;
    coord_table_t table;
    bool with_valid;
} s_what[] = {{"runs", COORD_TABLE_RUNS, true},
              {"epochs", COORD_TABLE_EPOCHS, true},
              {"minibatches", COORD_TABLE_MINIBATCHES, false},
              {"telemetry", COORD_TABLE_TELEMETRY, false},
              {"results", COORD_TABLE_RESULTS, true}};

typedef struct s_args {
    const char *sweep, *what, *format, *out;
    const char *rounds; // --rounds ID (--what rounds); NULL: every rounds run
    bool dynamic; // --dynamic (results, epochs): the idle baseline subtracted (docs/baseline.md)
} s_args_t;

static int s_parse(int argc, char **argv, s_args_t *a)
{
    static const struct option opts[] = {{"sweep", required_argument, NULL, 's'},
                                         {"what", required_argument, NULL, 'w'},
                                         {"format", required_argument, NULL, 'f'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"dynamic", no_argument, NULL, 'd'},
                                         {"rounds", required_argument, NULL, 'r'},
                                         {NULL, 0, NULL, 0}};
    char **nargv = cli_getopt_argv("export", argc, argv);
    bool ok = nargv != NULL;
    optind = 0; // restart getopt fully: it has parsed another command's words before
    *a = (s_args_t){.format = "csv"};
    int c = 0;
    while (ok && (c = getopt_long(argc + 1, nargv, "o:", opts, NULL)) != -1) {
        const char **dst = c == 's'   ? &a->sweep
                           : c == 'w' ? &a->what
                           : c == 'f' ? &a->format
                           : c == 'o' ? &a->out
                           : c == 'r' ? &a->rounds
                                      : NULL;
        a->dynamic |= c == 'd';
        if (!dst && c != 'd') {
            break;
        }
        if (dst) {
            *dst = optarg;
        }
    }
    free(nargv);
    bool fmt_ok = strcmp(a->format, "csv") == 0 || strcmp(a->format, "json") == 0;
    bool dyn_ok = !a->dynamic || (a->what && (strcmp(a->what, "results") == 0 ||
                                              strcmp(a->what, "epochs") == 0));
    // Rounds are not a sweep's: --what rounds takes --rounds ID (or nothing), never --sweep.
    bool rounds = a->what && strcmp(a->what, "rounds") == 0;
    bool scope_ok = rounds ? !a->sweep && !a->dynamic : a->sweep && !a->rounds;
    return ok && c == -1 && optind == argc + 1 && a->what && scope_ok && fmt_ok && dyn_ok ? 0 : -1;
}

// --what rounds: every board of every round of one rounds run (--rounds ID) or of all, with the
// columns of `jetfleet rounds show ID --boards`.
static int s_export_rounds(cli_ctx_t *ctx, const s_args_t *a)
{
    jf_err_t err = {0};
    int64_t id = 0;
    if (a->rounds && jf_parse_i64(a->rounds, 1, INT64_MAX, &id, &err) != 0) {
        return cli_fail(CLI_EXIT_USAGE, "--rounds '%s': %s", a->rounds, err.msg);
    }
    coord_store_t *store = cli_ctx_store(ctx, &err);
    int rc = store ? 0 : -EIO;
    rc = rc || !a->rounds ? rc : coord_store_fl_rounds_exists(store, id, &err);
    if (rc != 0) {
        return cli_fail(rc == -ENOENT ? CLI_EXIT_USAGE : CLI_EXIT_ERROR, "%s", err.msg);
    }
    FILE *out = a->out ? fopen(a->out, "w") : stdout;
    if (!out) {
        return cli_fail(CLI_EXIT_ERROR, "%s: %s", a->out, strerror(errno));
    }
    cli_format_t format = strcmp(a->format, "json") == 0 ? CLI_FORMAT_JSON : CLI_FORMAT_CSV;
    rc = cli_rounds_write_boards(store, a->rounds, format, out, NULL, &err);
    if ((out != stdout && fclose(out) != 0) || (out == stdout && fflush(out) != 0)) {
        rc = rc ? rc : jf_err_set(&err, -EIO, "%s: write failed", a->out ? a->out : "stdout");
    }
    return rc == 0 ? CLI_EXIT_OK : cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
}

int cli_cmd_export(cli_ctx_t *ctx, int argc, char **argv)
{
    s_args_t a;
    int t = -1;
    bool with_valid = false;
    bool parsed = s_parse(argc, argv, &a) == 0;
    for (size_t i = 0; parsed && i < sizeof s_what / sizeof s_what[0]; i++) {
        if (strcmp(a.what, s_what[i].name) == 0) {
            t = (int) s_what[i].table;
            with_valid = s_what[i].with_valid;
        }
    }
    if (parsed && strcmp(a.what, "rounds") == 0) {
        return s_export_rounds(ctx, &a);
    }
    if (t < 0) {
        return cli_fail(CLI_EXIT_USAGE,
                        "usage: jetfleet export --sweep NAME --what "
                        "runs|epochs|minibatches|telemetry|results [--format csv|json] [-o FILE] "
                        "[--dynamic (results, epochs)]\n"
                        "       jetfleet export --what rounds [--rounds ID] [--format csv|json] "
                        "[-o FILE]");
    }
    jf_err_t err = {0};
    coord_store_t *store = cli_ctx_store(ctx, &err);
    coord_state_counts_t counts;
    if (!store || coord_store_counts(store, a.sweep, &counts, &err) != 0) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    coord_validity_opts_t opts = cli_analysis_opts(ctx);
    coord_valid_runs_t *vr = with_valid ? coord_valid_runs_new(store, a.sweep, &opts, &err) : NULL;
    if (with_valid && !vr) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    FILE *out = a.out ? fopen(a.out, "w") : stdout;
    if (!out) {
        coord_valid_runs_destroy(&vr);
        return cli_fail(CLI_EXIT_ERROR, "%s: %s", a.out, strerror(errno));
    }
    cli_table_t *table = cli_table_new(NULL);
    cli_baseline_dyn_t dyn = {.base = a.dynamic ? cli_baseline_new(store) : NULL,
                              .fn = cli_table_add_row,
                              .arg = table};
    cli_valid_cols_t vc = {.valid = vr,
                           .fn = dyn.base ? cli_baseline_dynamic_row : cli_table_add_row,
                           .arg = dyn.base ? (void *) &dyn : (void *) table};
    int rc = table ? coord_store_select(store, (coord_table_t) t, a.sweep, NULL,
                                        vr ? cli_valid_cols_row : cli_table_add_row,
                                        vr ? (void *) &vc : (void *) table, &err)
                   : jf_err_set(&err, -ENOMEM, "export: out of memory");
    if (rc != 0 && table && cli_table_error(table)[0]) {
        jf_err_set(&err, rc, "%s", cli_table_error(table)); // the table's reason, not errno's
    } else if (rc != 0 && vc.error[0]) {
        jf_err_set(&err, rc, "%s", vc.error);
    }
    if (rc == 0 && dyn.base) { // the footer on stderr: stdout may be the CSV or JSON
        cli_baseline_dynamic_footer(&dyn, stderr);
        rc = cli_baseline_dynamic_check(&dyn, &err);
    }
    cli_baseline_destroy(&dyn.base);
    rc = rc ? rc
            : cli_table_write(
                  table, strcmp(a.format, "json") == 0 ? CLI_FORMAT_JSON : CLI_FORMAT_CSV, out);
    if ((out != stdout && fclose(out) != 0) || (out == stdout && fflush(out) != 0)) {
        rc = rc ? rc : jf_err_set(&err, -EIO, "%s: write failed", a.out ? a.out : "stdout");
    }
    cli_table_destroy(&table);
    coord_valid_runs_destroy(&vr);
    return rc == 0 ? CLI_EXIT_OK
                   : cli_fail(CLI_EXIT_ERROR, "%s", err.msg[0] ? err.msg : "export failed");
}
