/* The `jetfleet` commands: one cli_cmd_<verb>.c each. Every function gets the words after the
 * verb and returns the exit code (CLI_EXIT_OK, _ERROR, _USAGE). */
#ifndef CLI_CMDS_H
#define CLI_CMDS_H

#include "cli_ctx.h"

int cli_cmd_status(cli_ctx_t *ctx, int argc, char **argv);
int cli_cmd_sweep(cli_ctx_t *ctx, int argc, char **argv);
int cli_cmd_runs(cli_ctx_t *ctx, int argc, char **argv);
int cli_cmd_results(cli_ctx_t *ctx, int argc, char **argv);
int cli_cmd_export(cli_ctx_t *ctx, int argc, char **argv);
int cli_cmd_store(cli_ctx_t *ctx, int argc, char **argv);
int cli_cmd_keys(cli_ctx_t *ctx, int argc, char **argv);
int cli_cmd_import(cli_ctx_t *ctx, int argc, char **argv);

int cli_cmd_variability(cli_ctx_t *ctx, int argc, char **argv);
int cli_cmd_check(cli_ctx_t *ctx, int argc, char **argv);

int cli_cmd_model(cli_ctx_t *ctx, int argc, char **argv);
int cli_cmd_pareto(cli_ctx_t *ctx, int argc, char **argv);
int cli_cmd_recommend(cli_ctx_t *ctx, int argc, char **argv);
int cli_cmd_report(cli_ctx_t *ctx, int argc, char **argv);

int cli_cmd_fleet(cli_ctx_t *ctx, int argc, char **argv);
int cli_cmd_baseline(cli_ctx_t *ctx, int argc, char **argv);
int cli_cmd_containers(cli_ctx_t *ctx, int argc, char **argv);
int cli_cmd_rounds(cli_ctx_t *ctx, int argc, char **argv);
int cli_cmd_roofline(cli_ctx_t *ctx, int argc, char **argv);
int cli_cmd_concurrent(cli_ctx_t *ctx, int argc, char **argv);

// Prints "jetfleet: <what>" to stderr and returns code.
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
