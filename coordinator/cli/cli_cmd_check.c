/* jetfleet check: per done run of a sweep, whether its figures can be trusted and why not
 * (coord_validity.h; docs/analysis.md "Measurement validity"). Reads the store only. */
#include "cli_analysis.h"
#include "cli_cmds.h"
#include "cli_table.h"
#include "coord_validity.h"
#include "jf_parse.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_USAGE         "usage: jetfleet check --sweep NAME [--format text|csv|json] [--max-other-load PCT]"
#define S_REASONS_MAX   160
#define S_OTHER_MIN_PCT 0.001 // --max-other-load's smallest value: 0 would mean "the default"
#define S_SUMMARY_MAX   512

typedef struct s_args {
    const char *sweep;
    const char *format;
    const char *max_other_load; // NULL: the default rule (coord_validity.h)
} s_args_t;

static int s_parse(int argc, char **argv, s_args_t *a)
{
    static const struct option opts[] = {{"sweep", required_argument, NULL, 's'},
                                         {"format", required_argument, NULL, 'f'},
                                         {"max-other-load", required_argument, NULL, 'o'},
                                         {NULL, 0, NULL, 0}};
    char **nargv = cli_getopt_argv("check", argc, argv);
    bool ok = nargv != NULL;
    optind = 0; // restart getopt fully: it has parsed another command's words before
    *a = (s_args_t){.format = "text"};
    for (int c; ok && (c = getopt_long(argc + 1, nargv, "", opts, NULL)) != -1;) {
        const char **dst = c == 's'   ? &a->sweep
                           : c == 'f' ? &a->format
                           : c == 'o' ? &a->max_other_load
                                      : NULL;
        ok = dst != NULL;
        if (ok) {
            *dst = optarg;
        }
    }
    free(nargv);
    return ok && optind == argc + 1 && a->sweep ? 0 : -1;
}

typedef struct s_out {
    cli_table_t *table;
    coord_validity_summary_t summary;
} s_out_t;

static int s_add_verdict(const coord_run_validity_t *v, void *arg)
{
    static const char *const cols[] = {"run",   "board",   "board_type", "platform",
                                       "valid", "reasons", "detail"};
    s_out_t *out = arg;
    char reasons[S_REASONS_MAX] = "";
    coord_validity_reasons_format(v, reasons, sizeof reasons);
    const char *values[] = {v->run,
                            v->board,
                            v->board_type,
                            v->platform,
                            v->valid ? "yes" : "no",
                            v->valid ? NULL : reasons,
                            v->detail[0] ? v->detail : NULL};
    coord_validity_summary_add(&out->summary, v);
    return cli_table_add_text(out->table, 7, cols, values);
}

int cli_cmd_check(cli_ctx_t *ctx, int argc, char **argv)
{
    s_args_t a = {0};
    cli_format_t fmt = CLI_FORMAT_TEXT;
    if (s_parse(argc, argv, &a) != 0 || !cli_analysis_format(a.format, &fmt)) {
        return cli_fail(CLI_EXIT_USAGE, S_USAGE);
    }
    double max_other_pct = 0.0;
    if (a.max_other_load &&
        jf_parse_double(a.max_other_load, S_OTHER_MIN_PCT, 100.0, &max_other_pct, NULL) != 0) {
        return cli_fail(CLI_EXIT_USAGE,
                        "--max-other-load: want a percentage in (0, 100], got '%.40s'",
                        a.max_other_load);
    }
    coord_store_t *store = NULL;
    coord_validity_opts_t opts = {0};
    int rc = cli_analysis_store(ctx, &store, &opts);
    if (rc != CLI_EXIT_OK) {
        return rc;
    }
    if (a.max_other_load) {
        opts.other_load_max_pct = max_other_pct; // else fleet.yaml's max_other_load, if set
    }
    jf_err_t err = {0};
    s_out_t out = {.table = cli_table_new(NULL)};
    int crc = out.table
                  ? coord_validity_check_sweep(store, a.sweep, &opts, s_add_verdict, &out, &err)
                  : jf_err_set(&err, -ENOMEM, "out of memory");
    if (crc != 0) {
        rc = cli_fail(CLI_EXIT_ERROR, "%s",
                      out.table && cli_table_error(out.table)[0] ? cli_table_error(out.table)
                                                                 : err.msg);
    } else if (out.summary.runs == 0) {
        rc = cli_fail(CLI_EXIT_ERROR, "sweep '%s' has no done runs: nothing measured to check",
                      a.sweep);
    } else if (cli_table_write(out.table, fmt, stdout) != 0) {
        rc = cli_fail(CLI_EXIT_ERROR, "writing the table failed");
    } else {
        char text[S_SUMMARY_MAX];
        coord_validity_summary_format(&out.summary, text, sizeof text);
        fprintf(fmt == CLI_FORMAT_TEXT ? stdout : stderr, "%s\n", text);
    }
    cli_table_destroy(&out.table);
    return rc;
}
