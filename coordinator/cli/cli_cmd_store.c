/* jetfleet store check | backup -o FILE | salvage -o FILE | prune [--dry-run] [--store FILE]:
 * a lab's tools for the store file (docs/store.md, "Check, backup, salvage" and "Retention and
 * free space"). They open the store themselves, so they work whether the coordinator runs or
 * not; only prune writes to it, in short transactions beside the coordinator's. */
#include "cli_cmds.h"
#include "coord_store_admin.h"
#include "coord_store_retention.h"
#include "jf_units.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char s_usage[] = "usage: jetfleet store check [--store FILE] | "
                              "backup -o FILE [--store FILE] | salvage -o FILE [--store FILE] | "
                              "prune [--dry-run] [--store FILE]";

typedef struct s_args {
    const char *verb;  // check, backup, salvage, prune
    const char *store; // --store, else the fleet's store_path
    const char *out;   // -o
    bool dry_run;      // --dry-run (prune)
} s_args_t;

// The verb's options are complete: backup and salvage need -o, check and prune refuse it, and
// only prune takes --dry-run.
static int s_check_verb(const s_args_t *a)
{
    bool wants_out = strcmp(a->verb, "backup") == 0 || strcmp(a->verb, "salvage") == 0;
    bool prune = strcmp(a->verb, "prune") == 0;
    if (a->dry_run && !prune) {
        return -1;
    }
    if (wants_out) {
        return a->out ? 0 : -1;
    }
    return (prune || strcmp(a->verb, "check") == 0) && !a->out ? 0 : -1;
}

static int s_parse(int argc, char **argv, s_args_t *a)
{
    static const struct option opts[] = {{"store", required_argument, NULL, 's'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"dry-run", no_argument, NULL, 'n'},
                                         {NULL, 0, NULL, 0}};
    char *nargv[64] = {"jetfleet"};
    for (int i = 0; i < argc && i < 62; i++) {
        nargv[i + 1] = argv[i];
    }
    optind = 0;
    *a = (s_args_t){0};
    for (int c; (c = getopt_long(argc + 1, nargv, "o:", opts, NULL)) != -1;) {
        if (c == 'n') {
            a->dry_run = true;
            continue;
        }
        if (c != 's' && c != 'o') {
            return -1;
        }
        *(c == 's' ? &a->store : &a->out) = optarg;
    }
    if (optind != argc || argc > 62) {
        return -1; // exactly one word, the verb, is left
    }
    a->verb = nargv[optind];
    return s_check_verb(a);
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

// Opens the store for prune: it must exist and be of this program's schema (a read-only open
// says which version it found), so prune never creates or migrates a store.
static coord_store_t *s_prune_open(const char *path, jf_err_t *err)
{
    coord_store_t *ro = cli_store_open(path, true, err);
    if (!ro) {
        return NULL;
    }
    coord_store_destroy(&ro);
    return coord_store_open(path, false, err);
}

// Deletes (or averages) due rows batch by batch, each batch its own short transaction, so that
// a coordinator writing at the same time waits at most one batch (its busy timeout is 5 s).
static int s_prune_batches(coord_store_t *st, const jf_coord_settings_t *c, int64_t cutoff_us,
                           int64_t *ret_deleted, jf_err_t *err)
{
    int64_t total = 0;
    for (int64_t n = 1; n > 0;) {
        int rc = coord_store_begin(st, err);
        rc = rc ? rc
                : coord_store_age_telemetry(st, c->telemetry_after, cutoff_us,
                                            COORD_RETENTION_BATCH_ROWS, &n, err);
        rc = rc ? rc : coord_store_commit(st, err);
        if (rc != 0) {
            coord_store_rollback(st);
            *ret_deleted = total;
            return rc;
        }
        total += n;
    }
    *ret_deleted = total;
    return 0;
}

static int s_prune(const jf_coord_settings_t *c, const char *path, bool dry_run)
{
    if (c->telemetry_after == JF_RETENTION_KEEP) {
        printf("prune: no coordinator.retention in fleet.yaml: telemetry is kept; nothing to "
               "do\n");
        return CLI_EXIT_OK;
    }
    jf_err_t err = {0};
    coord_store_t *st = s_prune_open(path, &err);
    if (!st) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    int64_t cutoff_us = jf_clock_wall_us() - c->telemetry_raw_us;
    int64_t rows = 0;
    int rc = dry_run ? coord_store_agable_telemetry(st, c->telemetry_after, cutoff_us, &rows, &err)
                     : s_prune_batches(st, c, cutoff_us, &rows, &err);
    coord_store_destroy(&st);
    if (rc != 0) {
        return cli_fail(CLI_EXIT_ERROR, "prune: %s (%" PRId64 " rows done before)", err.msg, rows);
    }
    bool means = c->telemetry_after == JF_RETENTION_MEANS;
    printf("prune: %s %" PRId64 " telemetry rows of runs finished more than %" PRId64 " s ago%s\n",
           dry_run ? (means ? "would average" : "would delete") : (means ? "averaged" : "deleted"),
           rows, c->telemetry_raw_us / JF_US_PER_S, means ? " into per-second means" : "");
    return CLI_EXIT_OK;
}

int cli_cmd_store(cli_ctx_t *ctx, int argc, char **argv)
{
    s_args_t a;
    if (s_parse(argc, argv, &a) != 0) {
        return cli_fail(CLI_EXIT_USAGE, "%s", s_usage);
    }
    jf_err_t err = {0};
    bool prune = strcmp(a.verb, "prune") == 0; // needs the policy from fleet.yaml
    const jf_fleet_config_t *fleet = a.store && !prune ? NULL : cli_ctx_fleet(ctx, &err);
    if ((!a.store || prune) && !fleet) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    const char *path = a.store ? a.store : fleet->coord.store_path;
    if (prune) {
        return s_prune(&fleet->coord, path, a.dry_run);
    }
    if (strcmp(a.verb, "check") == 0) {
        return s_check(path);
    }
    return strcmp(a.verb, "backup") == 0 ? s_backup(path, a.out) : s_salvage(path, a.out);
}
