/* Integration: training that fails is reported, and the agent lives on. Real agents run a real
 * jetfleet-train child that crashes (SIGSEGV) or runs out of memory through the JF_TRAIN_FAULT
 * test hook; a long run is cancelled from the CLI and its child is killed; another long run is
 * cancelled on an agent that loses the first run.cancel (test hook JF_TEST_AGENT_DROP_CANCELS),
 * so it ends only because the coordinator sends run.cancel again (docs/protocol.md §5.5). Each
 * run ends failed with the right reason, and every agent stays online and idle afterwards. */
#include "jft_fleet.h"
#include "jft_fs.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>

#define T_BOARDS   4
#define T_WAIT_MS  60000

static const char s_faults[] = "name: faults\n"
                               "target:\n  boards: [host-1, host-2]\n"
                               "workloads:\n  - model: lenet5\n    dataset: mnist\n    epochs: 2\n"
                               "storage: [local]\nbatch_sizes: [32]\n";

static const char s_long[] = "name: long\n"
                             "target:\n  boards: [host-3]\n"
                             "workloads:\n  - model: lenet5\n    dataset: mnist\n    epochs: 500\n"
                             "storage: [local]\nbatch_sizes: [8]\n";

static const char s_lost[] = "name: lost-cancel\n"
                             "target:\n  boards: [host-4]\n"
                             "workloads:\n  - model: lenet5\n    dataset: mnist\n    epochs: 500\n"
                             "storage: [local]\nbatch_sizes: [8]\n";

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    *state = f;
    return f && jft_fleet_setup(f, T_BOARDS) == 0 ? 0 : -1;
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

typedef struct t_query {
    jft_fleet_t *f;
    const char *sql;
    long long want;
} t_query_t;

static bool t_query_is(void *arg)
{
    t_query_t *q = arg;
    return jft_fleet_sql_int(q->f, q->sql) == q->want;
}

static void t_wait_sql(jft_fleet_t *f, const char *sql, long long want)
{
    t_query_t q = {f, sql, want};
    if (!jft_wait_until(t_query_is, &q, T_WAIT_MS)) {
        fail_msg("waited for '%s' = %lld, have %lld", sql, want, jft_fleet_sql_int(f, sql));
    }
}

// Counts live jetfleet-train processes whose command line names this fleet's directory.
static int t_trainers(const jft_fleet_t *f)
{
    int n = 0;
    DIR *d = opendir("/proc");
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        char path[300];
        (void) snprintf(path, sizeof path, "/proc/%.32s/cmdline", e->d_name);
        size_t len = 0;
        char *cmd = jft_read_file(path, &len);
        if (cmd && len > 0 && strstr(cmd, "jetfleet-train")) {
            for (size_t i = 0; i + 1 < len; i++) {
                cmd[i] = cmd[i] ? cmd[i] : ' '; // argv is NUL-separated
            }
            n += strstr(cmd, f->dir) != NULL;
        }
        free(cmd);
    }
    if (d) {
        (void) closedir(d);
    }
    return n;
}

static bool t_no_trainers(void *arg)
{
    return t_trainers(arg) == 0;
}

static void t_cli(jft_fleet_t *f, const char *const *args)
{
    char out[PATH_MAX + 16];
    (void) snprintf(out, sizeof out, "%s/cli.out", f->dir);
    int rc = jft_fleet_cli(f, out, 30000, args);
    if (rc != 0) {
        char *text = jft_read_file(out, NULL);
        fail_msg("jetfleet %s %s exited %d:\n%s", args[0], args[1], rc, text ? text : "");
    }
}

static void test_crash_oom_and_cancel_are_reported(void **state)
{
    jft_fleet_t *f = *state;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    char *crash[] = {"JF_TRAIN_FAULT=crash", NULL};
    char *oom[] = {"JF_TRAIN_FAULT=oom", NULL};
    assert_int_equal(jft_fleet_start_agent(f, 0, crash), 0);
    assert_int_equal(jft_fleet_start_agent(f, 1, oom), 0);
    assert_int_equal(jft_fleet_start_agent(f, 2, NULL), 0);
    char *drop[] = {"JF_TEST_AGENT_DROP_CANCELS=1", NULL};
    assert_int_equal(jft_fleet_start_agent(f, 3, drop), 0);
    assert_true(jft_fleet_wait_online(f, T_BOARDS, 20000));

    char faults[PATH_MAX], longer[PATH_MAX], lost[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "faults.yaml", s_faults, faults), 0);
    assert_int_equal(jft_fleet_write(f, "long.yaml", s_long, longer), 0);
    assert_int_equal(jft_fleet_write(f, "lost.yaml", s_lost, lost), 0);
    t_cli(f, (const char *const[]){"sweep", "submit", faults, NULL});
    t_cli(f, (const char *const[]){"sweep", "submit", longer, NULL});
    t_cli(f, (const char *const[]){"sweep", "submit", lost, NULL});

    t_wait_sql(f, "SELECT count(*) FROM runs WHERE board = 'host-1' AND state = 'failed' "
                  "AND fail_reason = 'crashed'", 1);
    t_wait_sql(f, "SELECT count(*) FROM runs WHERE board = 'host-2' AND state = 'failed' "
                  "AND fail_reason = 'oom'", 1);
    // The faults struck after the first epoch, whose record had already been stored.
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM epochs e JOIN runs r ON "
                                          "e.run = r.id WHERE r.board IN ('host-1','host-2')"),
                     2);

    t_wait_sql(f, "SELECT count(*) FROM runs WHERE board = 'host-3' AND state = 'running'", 1);
    t_wait_sql(f, "SELECT count(*) FROM runs WHERE board = 'host-4' AND state = 'running'", 1);
    assert_int_equal(t_trainers(f), 2);
    t_cli(f, (const char *const[]){"sweep", "cancel", "long", NULL});
    t_wait_sql(f, "SELECT count(*) FROM runs WHERE board = 'host-3' AND state = 'failed' "
                  "AND fail_reason = 'cancelled'", 1);
    // host-4's agent ignores the first run.cancel, as if it were lost: its 500 epochs would run
    // on for hours unless the coordinator sends it again.
    t_cli(f, (const char *const[]){"sweep", "cancel", "lost-cancel", NULL});
    t_wait_sql(f, "SELECT count(*) FROM runs WHERE board = 'host-4' AND state = 'failed' "
                  "AND fail_reason = 'cancelled'", 1);
    assert_true(jft_wait_until(t_no_trainers, f, 10000)); // the children were killed

    // Every agent lived on: alive, online and idle.
    for (size_t i = 0; i < T_BOARDS; i++) {
        assert_true(jft_proc_alive(&f->agents[i]));
    }
    t_wait_sql(f, "SELECT count(*) FROM boards WHERE online = 1", T_BOARDS);
    t_wait_sql(f, "SELECT count(*) FROM runs WHERE state IN ('assigned', 'running')", 0);
    fprintf(stderr, "crashed=1/1 oom=1/1 cancelled=1/1 lost_cancel_resent=1/1 agents_alive=%d/%d\n",
            T_BOARDS, T_BOARDS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_crash_oom_and_cancel_are_reported, s_setup,
                                        s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
