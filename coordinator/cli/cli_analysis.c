/* Shared parts of the analysis commands (cli_analysis.h). */
#include "cli_analysis.h"

#include <stdio.h>
#include <string.h>

#define S_SUMMARY_MAX 512

bool cli_analysis_format(const char *name, cli_format_t *ret_format)
{
    static const char *const names[] = {"text", "csv", "json"};
    static const cli_format_t formats[] = {CLI_FORMAT_TEXT, CLI_FORMAT_CSV, CLI_FORMAT_JSON};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(name, names[i]) == 0) {
            *ret_format = formats[i];
            return true;
        }
    }
    return false;
}

coord_validity_opts_t cli_analysis_opts(const cli_ctx_t *ctx)
{
    // With --store and no config, the bounds are the defaults (the clock's is what the
    // coordinator uses when fleet.yaml does not set clock_offset_warn).
    return (coord_validity_opts_t){
        .clock_offset_bound_us =
            ctx->fleet ? ctx->fleet->coord.clock_offset_warn_us : JF_DEFAULT_CLOCK_WARN_US,
        .other_load_max_pct = ctx->fleet ? ctx->fleet->coord.max_other_load_pct : 0.0};
}

int cli_analysis_store(cli_ctx_t *ctx, coord_store_t **ret_store, coord_validity_opts_t *ret_opts)
{
    jf_err_t err = {0};
    coord_store_t *store = cli_ctx_store(ctx, &err);
    if (!store) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    *ret_store = store;
    *ret_opts = cli_analysis_opts(ctx);
    return CLI_EXIT_OK;
}

int cli_analysis_valid_runs(cli_ctx_t *ctx, const char *sweep, bool with_container,
                            coord_valid_runs_t **ret_valid)
{
    coord_store_t *store = NULL;
    coord_validity_opts_t opts = {0};
    int rc = cli_analysis_store(ctx, &store, &opts);
    if (rc != CLI_EXIT_OK) {
        return rc;
    }
    jf_err_t err = {0};
    coord_valid_runs_t *valid = coord_valid_runs_new(store, sweep, &opts, &err);
    if (!valid) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    if (with_container) {
        coord_valid_runs_keep_kind(valid, COORD_RUN_CONTAINER);
    }
    const coord_validity_summary_t *s = coord_valid_runs_summary(valid);
    char text[S_SUMMARY_MAX];
    coord_validity_summary_format(s, text, sizeof text);
    char kinds[S_SUMMARY_MAX];
    coord_valid_runs_kinds_format(valid, kinds, sizeof kinds);
    if (s->runs == 0) {
        rc = cli_fail(
            CLI_EXIT_ERROR, "sweep '%s' has no done %sruns: nothing measured to analyse%s%s%s",
            sweep, kinds[0] ? "training " : "", kinds[0] ? " (" : "", kinds, kinds[0] ? ")" : "");
    } else if (s->valid == 0) {
        rc = cli_fail(CLI_EXIT_ERROR,
                      "sweep '%s' has no valid run (%s; see: jetfleet check --sweep %s)", sweep,
                      text, sweep);
    }
    if (rc != CLI_EXIT_OK) {
        coord_valid_runs_destroy(&valid);
    }
    *ret_valid = valid;
    return rc;
}

void cli_analysis_print_left_out(const char *sweep, const coord_valid_runs_t *valid,
                                 cli_format_t format)
{
    char text[S_SUMMARY_MAX];
    coord_validity_summary_format(coord_valid_runs_summary(valid), text, sizeof text);
    FILE *out = format == CLI_FORMAT_TEXT ? stdout : stderr;
    fprintf(out, "valid runs only: %s (see: jetfleet check --sweep %s)\n", text, sweep);
    coord_valid_runs_kinds_format(valid, text, sizeof text);
    if (text[0]) {
        fprintf(out,
                "%s (their epochs are not training epochs: see docs/analysis.md \"Run "
                "kinds\")\n",
                text);
    }
}
