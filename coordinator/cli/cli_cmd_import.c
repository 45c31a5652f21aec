/* jetfleet import: runs measured elsewhere, from a CSV file, into the store as an imported sweep
 * (docs/import.md). Opens the store read-write itself; the coordinator need not run. */
#include "cli_cmds.h"
#include "coord_import.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#define S_USAGE "jetfleet import --sweep-name NAME FILE.csv [--board-type T] [--store FILE]"

typedef struct s_args {
    const char *sweep, *file, *board_type, *store;
} s_args_t;

static int s_parse(int argc, char **argv, s_args_t *a)
{
    static const struct option opts[] = {{"sweep-name", required_argument, NULL, 'n'},
                                         {"board-type", required_argument, NULL, 't'},
                                         {"store", required_argument, NULL, 's'},
                                         {NULL, 0, NULL, 0}};
    char **nargv = cli_getopt_argv("import", argc, argv);
    bool ok = nargv != NULL;
    optind = 0; // restart getopt fully: it has parsed another command's words before
    *a = (s_args_t){0};
    int c = 0;
    while (ok && (c = getopt_long(argc + 1, nargv, "", opts, NULL)) != -1) {
        const char **dst = c == 'n'   ? &a->sweep
                           : c == 't' ? &a->board_type
                           : c == 's' ? &a->store
                                      : NULL;
        if (!dst) {
            break;
        }
        *dst = optarg;
    }
    if (ok && c == -1 && optind == argc) {
        a->file = nargv[optind]; // argv's own string: nargv borrows them
    }
    free(nargv);
    return ok && c == -1 && optind == argc && a->sweep && a->file ? 0 : -1;
}

static void s_report(const char *msg, void *arg)
{
    (void) arg;
    fprintf(stderr, "jetfleet: %s: skipped\n", msg);
}

int cli_cmd_import(cli_ctx_t *ctx, int argc, char **argv)
{
    s_args_t a;
    if (s_parse(argc, argv, &a) != 0) {
        return cli_fail(CLI_EXIT_USAGE, "usage: " S_USAGE);
    }
    jf_err_t err = {0};
    const jf_fleet_config_t *fleet = a.store || ctx->store_path ? NULL : cli_ctx_fleet(ctx, &err);
    const char *path = a.store           ? a.store
                       : ctx->store_path ? ctx->store_path
                       : fleet           ? fleet->coord.store_path
                                         : NULL;
    coord_store_t *store = path ? coord_store_open(path, false, &err) : NULL;
    if (!store) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    coord_import_opts_t opts = {.path = a.file, .sweep = a.sweep, .board_type = a.board_type};
    coord_import_result_t res = {0};
    int rc = coord_import_csv(store, &opts, s_report, NULL, &res, &err);
    coord_store_destroy(&store);
    if (rc != 0) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    printf("sweep '%s': imported %zu runs (%zu epochs) from %zu rows; skipped %zu rows in %zu "
           "runs\n",
           a.sweep, res.runs, res.epochs, res.rows, res.skipped_rows, res.skipped_runs);
    return CLI_EXIT_OK;
}
