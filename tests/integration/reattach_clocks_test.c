/* Integration (reliability): the clock state stored before a run is restored after the run even
 * when the agent that stored it died during the run (docs/protocol.md §4.4.1). A coordinator and
 * one "Xavier NX" — the real jetfleet-agent with --platform jetson on a copy of the sysfs and
 * privhelper fixture trees and the test build of the helper, training for real on this machine —
 * run LeNet-5 in mode 8 (the fixture's tree is in mode 2). The agent is killed with SIGKILL once
 * an epoch is stored and restarted on the same --state-dir: it re-attaches to the trainer (alive
 * or ended by then), and when the run ends, the tree's sysfs must be what it was before the run
 * and (fake) nvpmodel must have been called for mode 8, then mode 2 again. Figures are printed as
 * name=value lines. */
#include "agent_storage.h"
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"
#include "jft_jetson.h"
#include "jft_trainer.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define S_BOARD   "rclk-nx-1" // unique to this test
#define S_WAIT_MS 60000       // bound of each wait (jft_wait_until scales it)
#define S_CLI_MS  120000

static const char s_sweep[] = "name: reattach-clocks\n"
                              "target:\n  boards: [" S_BOARD "]\n"
                              "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 20}\n"
                              "power_modes: [MODE_20W_6CORE]\n"
                              "storage: [nvme]\nbatch_sizes: [32]\ntelemetry_hz: 10\n";

typedef struct s_ctx {
    jft_fleet_t fleet;
    char tree[PATH_MAX]; // the board's fixture root
    char *before;        // owned: its sys/ before the run (jft_jetson_tree_text)
    long long trainer_pid;
    long long trainer_ticks;
} s_ctx_t;

static void s_write_fleet(jft_fleet_t *f)
{
    char data[PATH_MAX];
    (void) snprintf(data, sizeof data, "%s/data", f->dir);
    agent_storage_roots_t roots = {.proc_root = "/proc", .sysfs_root = "/sys"};
    agent_storage_mount_t m = {0};
    jf_err_t err = {0};
    if (agent_storage_locate(&roots, data, &m, &err) != 0) {
        fail_msg("%s", err.msg);
    }
    char yaml[4 * PATH_MAX + 512];
    int n = snprintf(yaml, sizeof yaml,
                     // ipc in the test's directory, as jft_fleet's own (jft_fleet.h).
                     "coordinator:\n  agent_endpoint: %s\n  data_dir: state\n"
                     "  heartbeat_interval: 500ms\n  heartbeat_timeout: 3s\n  run_timeout: 5m\n"
                     "boards:\n  - name: " S_BOARD "\n    type: xavier-nx\n    storage:\n"
                     "      - {medium: nvme, mount: %s, dataset_root: %s}\n",
                     f->agent_endpoint, m.mount_point, data);
    assert_true(n > 0 && (size_t) n < sizeof yaml);
    assert_int_equal(jft_write_file(f->config, yaml), 0);
}

static int s_setup(void **state)
{
    s_ctx_t *c = calloc(1, sizeof *c);
    *state = c;
    if (!c || jft_fleet_setup(&c->fleet, 1) != 0) {
        return -1;
    }
    s_write_fleet(&c->fleet);
    (void) snprintf(c->tree, sizeof c->tree, "%s/%s", c->fleet.dir, S_BOARD);
    return jft_jetson_tree_make(c->tree, "xavier-nx");
}

static int s_teardown(void **state)
{
    s_ctx_t *c = *state;
    int rc = jft_fleet_teardown(&c->fleet);
    free(c->before);
    if (c->trainer_pid > 0 && jft_trainer_start_ticks(c->trainer_pid) == c->trainer_ticks) {
        (void) kill(-(pid_t) c->trainer_pid, SIGKILL); // none stays behind
    }
    free(c);
    return rc;
}

static void s_start_agent(s_ctx_t *c)
{
    char sys[PATH_MAX + 8], proc[PATH_MAX + 8], etc[PATH_MAX + 8], var[PATH_MAX + 8];
    char cmd[4 * PATH_MAX], bin[PATH_MAX], fake[PATH_MAX];
    (void) snprintf(sys, sizeof sys, "%s/sys", c->tree);
    (void) snprintf(proc, sizeof proc, "%s/proc", c->tree);
    (void) snprintf(etc, sizeof etc, "%s/etc", c->tree);
    (void) snprintf(var, sizeof var, "%s/var", c->tree);
    jft_bin("jft-privhelper-test", bin);
    jft_bin("jft-fake-nvpmodel", fake);
    (void) snprintf(cmd, sizeof cmd, "%s --root %s --nvpmodel %s --allow-uid %u", bin, c->tree,
                    fake, (unsigned) getuid());
    const char *args[] = {"--platform", "jetson", "--sysfs-root", sys, "--proc-root",  proc,
                          "--etc-root", etc,      "--var-root",   var, "--privhelper", cmd,
                          NULL};
    assert_int_equal(jft_fleet_start_agent_named(&c->fleet, 0, S_BOARD, args), 0);
}

static bool s_epoch_stored(void *arg)
{
    return jft_fleet_sql_int(&((s_ctx_t *) arg)->fleet, "SELECT count(*) FROM epochs") >= 1;
}

static bool s_run_over(void *arg)
{
    return jft_fleet_sql_int(&((s_ctx_t *) arg)->fleet,
                             "SELECT count(*) FROM runs WHERE state IN ('done', 'failed')") == 1;
}

// The fake nvpmodel's calls so far, "" when none.
static char *s_calls(const s_ctx_t *c)
{
    char path[PATH_MAX + 64];
    (void) snprintf(path, sizeof path, "%s/var/lib/nvpmodel/fake-calls", c->tree);
    char *calls = jft_read_file(path, NULL);
    return calls ? calls : strdup("");
}

static bool s_restored(void *arg)
{
    char *calls = s_calls(arg);
    bool ok = strcmp(calls, "-m 8\n-m 2\n") == 0;
    free(calls);
    return ok;
}

// Prints the file where two tree texts first differ (a failure's diagnosis).
static void s_print_difference(const char *a, const char *b)
{
    size_t i = 0;
    while (a[i] && a[i] == b[i]) {
        i++;
    }
    size_t start = i;
    while (start > 0 && !(a[start - 1] == '\n' && strncmp(a + start, "/", 1) == 0)) {
        start--;
    }
    printf("tree_first_difference: before '%.200s' after '%.200s'\n", a + start, b + start);
}

// The helper has written the state back: nvpmodel ran for the mode from before the run, and
// the clocks after it (the helper writes them one file at a time, so the tree is compared
// until it is whole again).
static bool s_tree_back(void *arg)
{
    s_ctx_t *c = arg;
    char *now = jft_jetson_tree_text(c->tree, "sys");
    bool same = now && strcmp(now, c->before) == 0;
    free(now);
    return same;
}

static void test_clocks_restored_after_reattach(void **state)
{
    s_ctx_t *c = *state;
    jft_fleet_t *f = &c->fleet;
    c->before = jft_jetson_tree_text(c->tree, "sys");
    char *before = c->before;
    assert_non_null(before);
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    s_start_agent(c);
    assert_true(jft_fleet_wait_online(f, 1, S_WAIT_MS));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "clocks.yaml", s_sweep, sweep), 0);
    free(jft_cli_expect(f, 0, S_CLI_MS, (const char *const[]){"sweep", "submit", sweep, NULL}));
    assert_true(jft_wait_until(s_epoch_stored, c, S_WAIT_MS));
    char *during = jft_jetson_tree_text(c->tree, "sys");
    assert_non_null(during);
    long long changed_during = strcmp(before, during) != 0;
    int status = 0;
    jft_proc_signal(&f->agents[0], SIGKILL);
    assert_int_equal(jft_proc_wait(&f->agents[0], 10000, &status), 0);
    char spool[2 * PATH_MAX];
    (void) snprintf(spool, sizeof spool, JFT_FLEET_AGENT_STATE_FMT "/spool.db", f->dir, S_BOARD);
    c->trainer_pid = jft_trainer_sqlite_int(spool, "SELECT pid FROM trainer");
    c->trainer_ticks = jft_trainer_sqlite_int(spool, "SELECT start_ticks FROM trainer");
    long long alive =
        c->trainer_pid > 0 && jft_trainer_start_ticks(c->trainer_pid) == c->trainer_ticks;
    char *calls_at_kill = s_calls(c);
    s_start_agent(c);
    assert_true(jft_wait_until(s_run_over, c, S_WAIT_MS));
    bool restored =
        jft_wait_until(s_restored, c, S_WAIT_MS) && jft_wait_until(s_tree_back, c, S_WAIT_MS);
    char *after = jft_jetson_tree_text(c->tree, "sys");
    assert_non_null(after);
    char *calls = s_calls(c);
    long long done = jft_fleet_sql_int(f, "SELECT count(*) FROM runs WHERE state = 'done'");
    printf("trainer_alive_at_kill=%lld\nrun_done=%lld\ntree_changed_during_run=%lld\n"
           "nvpmodel_calls_at_kill=%lld\nnvpmodel_calls_after=%lld\ntree_restored=%d\n",
           alive, done, changed_during, (long long) (strlen(calls_at_kill) / 5),
           (long long) (strlen(calls) / 5), strcmp(before, after) == 0);
    if (strcmp(before, after) != 0) {
        s_print_difference(before, after);
    }
    fflush(stdout);
    assert_int_equal(changed_during, 1); // the run's mode was in force: the check can fail
    assert_string_equal(calls_at_kill, "-m 8\n");
    assert_true(restored);
    assert_string_equal(calls, "-m 8\n-m 2\n");
    assert_string_equal(before, after);
    assert_int_equal(done, 1);
    free(calls_at_kill);
    free(calls);
    free(during);
    free(after);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_clocks_restored_after_reattach, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
