/* jetfleet store check | backup -o FILE | salvage -o FILE [--store FILE]: a lab's tools for the
 * store file (docs/store.md, "Check, backup, salvage"). They read the store themselves, so they
 * work whether the coordinator runs or not; the store is never written. */
#include "cli_cmds.h"
#include "coord_store_admin.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char s_usage[] = "usage: jetfleet store check [--store FILE] | "
                              "backup -o FILE [--store FILE] | salvage -o FILE [--store FILE]";

typedef struct s_args {
    const char *verb;  // check, backup, salvage
    const char *store; // --store, else the fleet's store_path
    const char *out;   // -o
} s_args_t;

static int s_parse(int argc, char **argv, s_args_t *a)
{
    static const struct option opts[] = {{"store", required_argument, NULL, 's'},
                                         {"output", required_argument, NULL, 'o'},
                                         {NULL, 0, NULL, 0}};
    char *nargv[64] = {"jetfleet"};
    for (int i = 0; i < argc && i < 62; i++) {
        nargv[i + 1] = argv[i];
    }
    optind = 0;
    *a = (s_args_t){0};
    for (int c; (c = getopt_long(argc + 1, nargv, "o:", opts, NULL)) != -1;) {
        if (c != 's' && c != 'o') {
            return -1;
        }
        *(c == 's' ? &a->store : &a->out) = optarg;
    }
    if (optind != argc || argc > 62) {
        return -1; // exactly one word, the verb, is left
    }
    a->verb = nargv[optind];
    bool wants_out = strcmp(a->verb, "backup") == 0 || strcmp(a->verb, "salvage") == 0;
    return wants_out ? (a->out ? 0 : -1) : strcmp(a->verb, "check") == 0 && !a->out ? 0 : -1;
}

static void s_print_facts(const char *path, const coord_store_check_report_t *r)
{
    printf("store: %s\n", path);
    if (r->schema_version >= 0) {
        printf("schema_version: %d (this jetfleet writes %d)\n", r->schema_version,
               coord_store_schema_latest());
    } else {
        printf("schema_version: unreadable (this jetfleet writes %d)\n",
               coord_store_schema_latest());
    }
    if (r->has_store_id) {
        printf("store_id: %016" PRIx64 "\n", (uint64_t)r->store_id);
    } else {
        printf("store_id: unreadable or none\n");
    }
    if (r->runs >= 0) {
        printf("runs: %" PRId64 "\n", r->runs);
    } else {
        printf("runs: unreadable\n");
    }
}

static int s_check(const char *path)
{
    coord_store_check_report_t r = {0};
    jf_err_t err = {0};
    if (coord_store_check(path, false, &r, &err) != 0) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    s_print_facts(path, &r);
    if (r.problems == 0) {
        printf("integrity_check: ok\n");
    } else {
        printf("integrity_check: %zu problem(s)\n", r.problems);
        for (size_t i = 0; i < r.n_kept; i++) {
            printf("  %s\n", r.problem[i]);
        }
        if (r.problems > r.n_kept) {
            printf("  ... and %zu more\n", r.problems - r.n_kept);
        }
        return cli_fail(CLI_EXIT_ERROR,
                        "%s is corrupt: save what is readable with 'jetfleet store salvage -o "
                        "NEW.db', then, with the coordinator stopped, put NEW.db in its place "
                        "(docs/store.md)",
                        path);
    }
    if (r.schema_version < 1 || r.schema_version > coord_store_schema_latest()) {
        return cli_fail(CLI_EXIT_ERROR,
                        "%s: not a jetfleet store this program can read "
                        "(schema version %d)",
                        path, r.schema_version);
    }
    return CLI_EXIT_OK;
}

static int s_backup(const char *path, const char *out)
{
    jf_err_t err = {0};
    int64_t runs = -1;
    if (coord_store_backup(path, out, &runs, &err) != 0) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    printf("backup: %s -> %s (%" PRId64 " runs; integrity_check ok)\n", path, out, runs);
    return CLI_EXIT_OK;
}

static void s_print_table(const coord_salvage_table_t *t)
{
    bool per_run = strcmp(t->name, "sweep_runs") == 0 || strcmp(t->name, "epochs") == 0 ||
                   strcmp(t->name, "minibatches") == 0 || strcmp(t->name, "telemetry") == 0;
    printf("  %-12s %10" PRId64 " rows saved", t->name, t->rows);
    if (t->unreadable > 0) {
        printf(", %" PRId64 " %s", t->unreadable,
               per_run ? "runs whose rows were unreadable" : "rowids unreadable");
    }
    printf("%s\n", t->gave_up ? " (gave up: too many unreadable reads)" : "");
}

static int s_salvage(const char *path, const char *out)
{
    jf_err_t err = {0};
    coord_salvage_report_t r = {0};
    if (coord_store_salvage(path, out, &r, &err) != 0) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    printf("salvage: %s -> %s\n", path, out);
    for (size_t i = 0; i < r.n_tables; i++) {
        s_print_table(&r.table[i]);
    }
    if (r.not_copied[0]) {
        printf("not copied (unknown to salvage): %s\n", r.not_copied);
    }
    printf("To use it: stop the coordinator, keep the damaged file, move %s to %s "
           "(docs/store.md).\n",
           out, path);
    return CLI_EXIT_OK;
}

int cli_cmd_store(cli_ctx_t *ctx, int argc, char **argv)
{
    s_args_t a;
    if (s_parse(argc, argv, &a) != 0) {
        return cli_fail(CLI_EXIT_USAGE, "%s", s_usage);
    }
    jf_err_t err = {0};
    const jf_fleet_config_t *fleet = a.store ? NULL : cli_ctx_fleet(ctx, &err);
    if (!a.store && !fleet) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    const char *path = a.store ? a.store : fleet->coord.store_path;
    if (strcmp(a.verb, "check") == 0) {
        return s_check(path);
    }
    return strcmp(a.verb, "backup") == 0 ? s_backup(path, a.out) : s_salvage(path, a.out);
}
