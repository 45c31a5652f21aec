/* What the analysis commands (variability, check) share: the output format option, the store
 * with the validity options from fleet.yaml, and the line saying which runs were left out. */
#ifndef CLI_ANALYSIS_H
#define CLI_ANALYSIS_H

#include "cli_cmds.h"
#include "cli_table.h"
#include "coord_valid_runs.h"

#include <stdbool.h>

// "text", "csv", "json"; false for anything else.
bool cli_analysis_format(const char *name, cli_format_t *ret_format);

// The validity options: the clock-offset bound is the fleet's coordinator.clock_offset_warn (the
// one the coordinator warns at), the fleet default with --store and no config.
coord_validity_opts_t cli_analysis_opts(const cli_ctx_t *ctx);

// The store (read-only) and the validity options: the clock-offset bound is the fleet's
// coordinator.clock_offset_warn, the one the coordinator warns at. Returns CLI_EXIT_OK, or
// CLI_EXIT_ERROR after printing why.
int cli_analysis_store(cli_ctx_t *ctx, coord_store_t **ret_store, coord_validity_opts_t *ret_opts);

// The sweep's valid training runs into *ret_valid (caller owns; coord_valid_runs_destroy):
// plain training runs, and container runs too when with_container (a command whose grouping
// keeps runtime apart). Returns CLI_EXIT_OK, or CLI_EXIT_ERROR after printing one line: no such
// sweep, no done training runs (with the kinds left out), or no valid run (with the reasons).
int cli_analysis_valid_runs(cli_ctx_t *ctx, const char *sweep, bool with_container,
                            coord_valid_runs_t **ret_valid);

// "valid runs only: 12 runs, 10 valid, 2 left out: telemetry 2 (see: jetfleet check --sweep S)",
// then, when runs were left out for their kind, "not training, left out: roofline 2, idle 1"
// (coord_valid_runs_kinds_format); on stdout for text, on stderr for CSV and JSON (their stdout
// is data only).
void cli_analysis_print_left_out(const char *sweep, const coord_valid_runs_t *valid,
                                 cli_format_t format);

#endif
