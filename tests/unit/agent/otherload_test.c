/* agent_otherload (the measure record's other_load): /proc/PID/stat lines parsed from a table
 * (a command name with spaces and parentheses, malformed lines), and the CPU time outside a
 * process tree over intervals from a /proc tree written in a temporary directory: the agent
 * (root), its trainer and a worker of the trainer in the tree, a hog and init outside it. */
#include "agent_otherload.h"
#include "jft_fs.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define T_S INT64_C(1000000)

static void test_parse_table(void **state)
{
    (void) state;
    static const struct {
        const char *line;
        int rc;
        pid_t ppid;
        uint64_t ticks;
        const char *fragment;
    } rows[] = {
        {"100 (jetfleet-agent) S 1 100 100 0 -1 4194560 10 0 0 0 7 3 20 10 20 0 1 0 5 6 7\n", 0, 1,
         40, NULL},
        {"101 (a (b) c) R 100 101 100 0 -1 0 0 0 0 0 1 2 3 4 20 0\n", 0, 100, 10, NULL},
        {"102 jetfleet S 1 2 3\n", -EINVAL, 0, 0, "no ')'"},
        {"103 (x) S 1 2 3 4 5\n", -EINVAL, 0, 0, "fields up to cstime"},
        {"104 (x) S 1 2 3 4 5 6 7 8 9 10 x 1 2 3\n", -EINVAL, 0, 0, "fields up to cstime"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        pid_t ppid = -1;
        uint64_t ticks = 0;
        jf_err_t err = {0};
        int rc = agent_otherload_parse_pid_stat(rows[i].line, &ppid, &ticks, &err);
        assert_int_equal(rc, rows[i].rc);
        if (rc == 0) {
            assert_int_equal(ppid, rows[i].ppid);
            assert_int_equal(ticks, rows[i].ticks);
        } else if (!strstr(err.msg, rows[i].fragment)) {
            fail_msg("row %zu: '%s' lacks '%s'", i, err.msg, rows[i].fragment);
        }
    }
}

static void t_write(const char *dir, const char *rel, const char *text)
{
    char path[PATH_MAX];
    (void) snprintf(path, sizeof path, "%s/%s", dir, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    (void) mkdir(path, 0700);
    *slash = '/';
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

// The machine at one moment: busy and idle ticks of /proc/stat (one CPU line each), the tree's
// processes' utime (root 100, trainer 101, its worker 102) and the others' (init 1, hog 200).
static void t_proc(const char *dir, int busy, int idle, int root, int trainer, int worker, int hog)
{
    char text[256];
    (void) snprintf(text, sizeof text, "cpu  %d 0 0 %d 0 0 0 0 0 0\ncpu0 %d 0 0 %d 0 0 0 0 0 0\n",
                    busy, idle, busy, idle);
    t_write(dir, "stat", text);
    static const struct {
        int pid, ppid;
    } procs[] = {{1, 0}, {100, 1}, {101, 100}, {102, 101}, {200, 1}};
    const int ticks[] = {5, root, trainer, worker, hog};
    for (size_t i = 0; i < 5; i++) {
        char rel[32];
        (void) snprintf(rel, sizeof rel, "%d/stat", procs[i].pid);
        (void) snprintf(text, sizeof text, "%d (p %d) S %d 1 1 0 -1 0 0 0 0 0 %d 0 0 0 20 0\n",
                        procs[i].pid, procs[i].pid, procs[i].ppid, ticks[i]);
        t_write(dir, rel, text);
    }
}

static void test_tree(void **state)
{
    (void) state;
    char dir[PATH_MAX];
    assert_int_equal(jft_tmpdir_new(dir), 0);
    agent_otherload_t *o = agent_otherload_new(dir, 100);
    assert_non_null(o);
    jf_err_t err = {0};
    t_proc(dir, 1000, 1000, 10, 100, 50, 0);
    assert_int_equal(agent_otherload_read(o, 0, &err), 0);
    // +100 busy, +100 idle; the tree +60 (agent 10, trainer 30, worker 20): other 40 of 200.
    t_proc(dir, 1100, 1100, 20, 130, 70, 40);
    assert_int_equal(agent_otherload_read(o, T_S / 2, &err), 0); // too soon: nothing
    agent_otherload_result_t r;
    agent_otherload_result(o, &r);
    assert_int_equal(r.intervals, 0);
    assert_int_equal(agent_otherload_read(o, T_S, &err), 0);
    agent_otherload_result(o, &r);
    assert_int_equal(r.intervals, 1);
    assert_float_equal(r.mean_pct, 20.0, 1e-9);
    assert_float_equal(r.max_pct, 20.0, 1e-9);
    // +150 busy, +50 idle; the tree +30: other 120 of 200 (60%); over both 160 of 400.
    t_proc(dir, 1250, 1150, 20, 150, 80, 160);
    assert_int_equal(agent_otherload_read(o, 2 * T_S, &err), 0);
    agent_otherload_result(o, &r);
    assert_int_equal(r.intervals, 2);
    assert_float_equal(r.mean_pct, 40.0, 1e-9);
    assert_float_equal(r.max_pct, 60.0, 1e-9);
    // /proc/stat gone: an error naming it, and no interval from it.
    char path[PATH_MAX + 8];
    (void) snprintf(path, sizeof path, "%s/stat", dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(agent_otherload_read(o, 3 * T_S, &err), -EIO);
    assert_non_null(strstr(err.msg, "cannot read"));
    agent_otherload_result(o, &r);
    assert_int_equal(r.intervals, 2);
    agent_otherload_destroy(&o);
    assert_null(o);
    jft_tmpdir_remove(dir);
}

// The machine's own /proc: readable, and the figures are percentages.
static void test_real_proc(void **state)
{
    (void) state;
    agent_otherload_t *o = agent_otherload_new("/proc", getpid());
    assert_non_null(o);
    jf_err_t err = {0};
    assert_int_equal(agent_otherload_read(o, 0, &err), 0);
    usleep(200000);
    assert_int_equal(agent_otherload_read(o, T_S, &err), 0);
    agent_otherload_result_t r;
    agent_otherload_result(o, &r);
    assert_true(r.mean_pct >= 0.0 && r.mean_pct <= 100.0);
    assert_true(r.max_pct >= r.mean_pct);
    printf("host_other_load_pct=%.1f intervals=%lld\n", r.mean_pct, (long long) r.intervals);
    agent_otherload_destroy(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_table),
        cmocka_unit_test(test_tree),
        cmocka_unit_test(test_real_proc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
