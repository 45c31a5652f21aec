/* Integration (issue #17 §3, docs/store.md): a coordinator whose store was emptied, deleted or
 * replaced by another jetfleet store refuses to start and says what it expected, and starts on it
 * with --new-store; a store with damaged pages is called corrupt by the coordinator and the CLI,
 * `jetfleet store check` exits 1 and `jetfleet store salvage` saves exactly the runs that were not
 * on the damaged pages; `jetfleet store backup` taken while sim boards run a sweep is sound and
 * holds the runs stored when it was taken. */
#include "coord_store_ident.h"
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"
#include "jft_store.h"

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define S_SIMS        2
#define S_REPEATS     40
#define S_RUNS        (S_SIMS * S_REPEATS) // pending runs of the stored sweep
#define S_SEED        23u
#define S_BACKUP_RUNS (S_SIMS * 6)
#define S_PATH_LEN    (PATH_MAX + 64)

static const char s_pending_sweep[] = "name: kept\n"
                                      "target:\n  device_types: [xavier-nx]\n"
                                      "workloads:\n  - {model: resnet18, dataset: cifar10}\n"
                                      "power_modes: [MODE_15W_6CORE]\n"
                                      "storage: [nvme]\nworkers: [1]\nrepeats: 40\n";

static const char s_running_sweep[] = "name: busy\n"
                                      "target:\n  device_types: [xavier-nx]\n"
                                      "workloads:\n  - {model: resnet18, dataset: cifar10, "
                                      "epochs: 2}\n"
                                      "power_modes: [MODE_15W_6CORE]\n"
                                      "storage: [nvme]\nworkers: [1]\nrepeats: 6\n";

static const char *const s_agent_args[] = {
    "--sim-speed", "500", "--sim-scale", "0.05", "--sim-seed", "5", "--log-level", "notice", NULL};

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    const char *types[S_SIMS] = {"xavier-nx", "xavier-nx"};
    *state = f;
    return f && jft_fleet_setup_sims(f, 0, types, S_SIMS) == 0 ? 0 : -1;
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

static void s_file(const jft_fleet_t *f, const char *name, char *out)
{
    (void)snprintf(out, S_PATH_LEN, "%s/%s", f->data_dir, name);
}

static bool s_exists(void *path)
{
    return access(path, F_OK) == 0;
}

// Starts the coordinator (with --new-store if asked) and waits for a fresh endpoint file.
static void s_start(jft_fleet_t *f, bool new_store)
{
    char endpoint[S_PATH_LEN], bin[PATH_MAX], log[S_PATH_LEN];
    s_file(f, "endpoint", endpoint);
    (void)unlink(endpoint); // the last run's file would look ready
    if (!new_store) {
        assert_int_equal(jft_fleet_start_coordinator(f), 0);
        return;
    }
    jft_bin("jetfleet-coordinator", bin);
    (void)snprintf(log, sizeof log, "%s/coordinator-new.log", f->dir);
    char *argv[] = {bin, "--config", f->config, "--new-store", "--insecure-loopback", NULL};
    assert_int_equal(jft_proc_start(&f->coord, log, argv, NULL), 0);
    if (!jft_wait_until(s_exists, endpoint, 10000)) {
        char *text = jft_read_file(log, NULL);
        fail_msg("the coordinator did not start with --new-store: %s", text ? text : "?");
    }
}

static void s_stop(jft_fleet_t *f)
{
    int status = jft_proc_stop(&f->coord);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// The coordinator must exit 1 at once, saying each fragment.
static void s_expect_refusal(jft_fleet_t *f, const char *const *frags)
{
    char bin[PATH_MAX], out[S_PATH_LEN];
    jft_bin("jetfleet-coordinator", bin);
    (void)snprintf(out, sizeof out, "%s/refused.log", f->dir);
    char *argv[] = {bin, "--config", f->config, "--insecure-loopback", NULL};
    int rc = jft_run(argv, out, 30000, NULL);
    char *text = jft_read_file(out, NULL);
    assert_non_null(text);
    print_message("coordinator (exit %d): %s", rc, text);
    assert_int_equal(rc, 1);
    for (size_t i = 0; frags[i]; i++) {
        if (!strstr(text, frags[i])) {
            fail_msg("'%s' missing from the coordinator's output", frags[i]);
        }
    }
    free(text);
}

static void s_store_sweep(jft_fleet_t *f, char *ret_id)
{
    char sweep[PATH_MAX], ident[S_PATH_LEN];
    s_start(f, false);
    assert_int_equal(jft_fleet_write(f, "kept.yaml", s_pending_sweep, sweep), 0);
    free(jft_cli_expect(f, 0, 60000, (const char *const[]){"sweep", "submit", sweep, NULL}));
    s_stop(f);
    s_file(f, COORD_IDENT_FILE, ident);
    char *text = jft_read_file(ident, NULL);
    assert_non_null(text);
    const char *id = strstr(text, "\"store_id\": \"");
    assert_non_null(id);
    (void)snprintf(ret_id, 17, "%s", id + strlen("\"store_id\": \""));
    free(text);
}

static void s_new_store_starts(jft_fleet_t *f, long long want_runs)
{
    s_start(f, true);
    s_stop(f);
    s_start(f, false); // the store taken with --new-store is now the known one
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM runs"), want_runs);
    s_stop(f);
}

static void test_lost_store_refused(void **state)
{
    jft_fleet_t *f = *state;
    char id[32], store[S_PATH_LEN], saved[S_PATH_LEN];
    s_store_sweep(f, id);
    s_file(f, "jetfleet.db", store);
    s_file(f, "saved.db", saved);
    free(jft_cli_expect(f, 0, 30000, (const char *const[]){"store", "backup", "-o", saved, NULL}));
    const char *counts = "(80 runs, 0 done, 1 sweeps";
    assert_int_equal(truncate(store, 0), 0);
    s_expect_refusal(
        f, (const char *const[]){"store empty (0 bytes)", id, counts, "--new-store", NULL});
    assert_int_equal(unlink(store), 0);
    s_expect_refusal(f, (const char *const[]){"store missing", id, counts, "--new-store", NULL});
    // Another jetfleet store, made by the same code in another data directory.
    char other_dir[S_PATH_LEN], note[COORD_IDENT_NOTE_LEN];
    (void)snprintf(other_dir, sizeof other_dir, "%s/other", f->dir);
    assert_int_equal(mkdir(other_dir, 0700), 0);
    jf_err_t err = {0};
    coord_store_t *other = coord_store_open_owned(store, other_dir, false, note, &err);
    assert_non_null(other);
    coord_store_destroy(&other);
    s_expect_refusal(
        f, (const char *const[]){"store is another (store id", id, counts, "--new-store", NULL});
    s_new_store_starts(f, 0);
    // The backup taken before is the old store: put back, it is refused as another store now
    // (the identity moved on with --new-store), and taken back with --new-store.
    assert_int_equal(rename(saved, store), 0);
    s_expect_refusal(f, (const char *const[]){"store is another (store id", NULL});
    s_new_store_starts(f, S_RUNS);
}

static void test_damaged_store_salvaged(void **state)
{
    jft_fleet_t *f = *state;
    char id[32], store[S_PATH_LEN], good[S_PATH_LEN], saved[S_PATH_LEN];
    s_store_sweep(f, id);
    s_file(f, "jetfleet.db", store);
    s_file(f, "undamaged.db", good);
    s_file(f, "salvaged.db", saved);
    free(jft_cli_expect(f, 0, 30000, (const char *const[]){"store", "backup", "-o", good, NULL}));
    int64_t lost = jft_store_damage_runs(store, 1, S_SEED);
    s_expect_refusal(f, (const char *const[]){"corrupt", "jetfleet store salvage", NULL});
    char *out = jft_cli_expect(f, 1, 30000, (const char *const[]){"runs", NULL});
    assert_non_null(strstr(out, "corrupt"));
    assert_null(strstr(out, "not a jetfleet store"));
    free(out);
    out = jft_cli_expect(f, 1, 30000, (const char *const[]){"store", "check", NULL});
    assert_non_null(strstr(out, "integrity_check: "));
    assert_non_null(strstr(out, "is corrupt"));
    free(out);
    out = jft_cli_expect(f, 0, 60000, (const char *const[]){"store", "salvage", "-o", saved, NULL});
    print_message("%s", out);
    free(out);
    int64_t got = jft_store_sql_int(saved, NULL, "SELECT count(*) FROM runs");
    print_message("runs_total=%d\nruns_recovered=%" PRId64 "\n", S_RUNS, got);
    assert_true(got > 0 && got <= S_RUNS);
    assert_int_equal(got, S_RUNS - lost);
    assert_int_equal(jft_store_sql_int(saved, good,
                                       "SELECT count(*) FROM runs r JOIN orig.runs o "
                                       "ON o.id = r.id AND o.model = r.model AND o.seed = r.seed "
                                       "AND o.batch_size = r.batch_size AND o.workers = r.workers"),
                     got);
    // Put in place, the salvaged store keeps the identity and the coordinator starts on it.
    assert_int_equal(rename(saved, store), 0);
    s_start(f, false);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM runs"), got);
    s_stop(f);
}

static bool s_some_done(void *arg)
{
    return jft_fleet_sql_int(arg, "SELECT count(*) FROM runs WHERE state = 'done'") > 0;
}

static void test_backup_during_sweep(void **state)
{
    jft_fleet_t *f = *state;
    char sweep[PATH_MAX], copy[S_PATH_LEN];
    s_start(f, false);
    for (size_t i = 0; i < S_SIMS; i++) {
        assert_int_equal(jft_fleet_start_sim_agent(f, i, s_agent_args), 0);
    }
    assert_true(jft_fleet_wait_online(f, S_SIMS, 60000));
    assert_int_equal(jft_fleet_write(f, "busy.yaml", s_running_sweep, sweep), 0);
    free(jft_cli_expect(f, 0, 60000, (const char *const[]){"sweep", "submit", sweep, NULL}));
    assert_true(jft_wait_until(s_some_done, f, 90000));
    const char *done_sql = "SELECT count(*) FROM runs WHERE state = 'done'";
    long long before = jft_fleet_sql_int(f, done_sql);
    s_file(f, "backup.db", copy);
    free(jft_cli_expect(f, 0, 60000, (const char *const[]){"store", "backup", "-o", copy, NULL}));
    long long after = jft_fleet_sql_int(f, done_sql);
    int64_t in_copy = jft_store_sql_int(copy, NULL, done_sql);
    print_message("runs=%d\ndone_before_backup=%lld\ndone_in_backup=%" PRId64
                  "\ndone_after_backup=%lld\n",
                  S_BACKUP_RUNS, before, in_copy, after);
    assert_true(before < S_BACKUP_RUNS); // taken during the sweep
    assert_true(in_copy >= before && in_copy <= after);
    assert_int_equal(jft_store_sql_int(copy, NULL, "SELECT count(*) FROM runs"), S_BACKUP_RUNS);
    assert_int_equal(jft_store_sql_int(copy, NULL,
                                       "SELECT count(*) FROM pragma_integrity_check "
                                       "WHERE integrity_check != 'ok'"),
                     0);
    // One commit's view: every done run in the copy has all its epochs.
    assert_int_equal(jft_store_sql_int(copy, NULL,
                                       "SELECT count(*) FROM runs r WHERE state = "
                                       "'done' AND (SELECT count(*) FROM epochs e "
                                       "WHERE e.run = r.id AND e.attempt = r.attempt)"
                                       " != r.epochs"),
                     0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lost_store_refused, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_damaged_store_salvaged, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_backup_during_sweep, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
