/* Unit tests for the live tegrastats fallback: agent_tegrastats_child against jft-fake-tegrastats
 * (spawn, lines, freshness, filling a sample, death and reaping), the jetson platform on a copy
 * of the Xavier NX fixture tree with its rail files deleted (tests run as root, so deleting is
 * the only way to make them unreadable), the sampler actor running the fallback for a run, and
 * --sample-once's use of it. */
#include "agent_options.h"
#include "agent_platform.h"
#include "agent_sampler.h"
#include "agent_tegrastats_child.h"
#include "jf_units.h"
#include "jft_fs.h"

#include <czmq.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define T_S   INT64_C(1000000)
#define T_LOG "tegrastats/xavier-nx-jp5.log"
#define T_HWMON "sys/bus/i2c/devices/7-0040/hwmon/hwmon1"

// VDD_IN of the four lines of T_LOG, in order.
static const int64_t s_vdd_in_mw[] = {2763, 5542, 5821, 9315};

typedef struct t_ctx {
    char dir[PATH_MAX];        // temporary: the fake's symlink, its log and calls, the tree
    char fake[PATH_MAX + 16];  // <dir>/tegrastats -> jft-fake-tegrastats
    char tree[PATH_MAX + 16];  // <dir>/tree: the Xavier NX fixture without rail values
} t_ctx_t;

static void t_path(char *out, const char *dir, const char *rel)
{
    (void) snprintf(out, PATH_MAX + 64, "%s/%s", dir, rel);
}

// The tree's INA3221 value files go, so that no rail can be read; the labels stay.
static void t_delete_rails(const char *tree)
{
    static const char *const files[] = {"in1_input", "in2_input", "in3_input", "in4_input",
                                        "in5_input", "in6_input", "in7_input", "curr1_input",
                                        "curr2_input", "curr3_input", "curr4_input"};
    char path[PATH_MAX + 128];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        (void) snprintf(path, sizeof path, "%s/%s/%s", tree, T_HWMON, files[i]);
        (void) unlink(path); // not every channel has every file
    }
}

static int s_setup(void **state)
{
    t_ctx_t *c = calloc(1, sizeof *c);
    char bin[PATH_MAX], fix[PATH_MAX], log[PATH_MAX + 64];
    if (!c || jft_tmpdir_new(c->dir) != 0) {
        free(c);
        return -1;
    }
    t_path(c->fake, c->dir, "tegrastats");
    t_path(c->tree, c->dir, "tree");
    jft_bin("jft-fake-tegrastats", bin);
    jft_fixture(T_LOG, fix);
    t_path(log, c->dir, "tegrastats.log");
    char *text = jft_read_file(fix, NULL);
    int rc = text && jft_write_file(log, text) == 0 && symlink(bin, c->fake) == 0 ? 0 : -1;
    free(text);
    jft_fixture("sysfs/xavier-nx", fix);
    rc = rc ? rc : jft_copy_tree(fix, c->tree);
    t_delete_rails(c->tree);
    *state = c;
    return rc;
}

static int s_teardown(void **state)
{
    t_ctx_t *c = *state;
    jft_tmpdir_remove(c->dir);
    free(c);
    return 0;
}

// The pids and intervals the fake was started with, from its calls file.
static int t_calls(const t_ctx_t *c, pid_t *ret_pid, long *ret_interval_ms)
{
    char path[PATH_MAX + 64];
    t_path(path, c->dir, "tegrastats.calls");
    char *text = jft_read_file(path, NULL);
    int n = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "") {
        long pid = 0, ms = 0;
        if (sscanf(p, "pid %ld interval %ld", &pid, &ms) == 2) {
            *ret_pid = (pid_t) pid;
            *ret_interval_ms = ms;
            n++;
        }
    }
    free(text);
    return n;
}

static bool t_reaped(pid_t pid)
{
    return waitpid(pid, NULL, WNOHANG) < 0 && errno == ECHILD && kill(pid, 0) < 0;
}

static int64_t t_vdd_in(const json_t *sample)
{
    return json_integer_value(json_object_get(sample, "input_power_mw"));
}

static bool t_is_log_vdd_in(int64_t mw)
{
    for (size_t i = 0; i < sizeof s_vdd_in_mw / sizeof s_vdd_in_mw[0]; i++) {
        if (s_vdd_in_mw[i] == mw) {
            return true;
        }
    }
    return false;
}

static bool t_lists(const json_t *sample, const char *key)
{
    size_t i;
    json_t *k;
    json_array_foreach(json_object_get(sample, "from_tegrastats"), i, k) {
        if (strcmp(json_string_value(k), key) == 0) {
            return true;
        }
    }
    return false;
}

// ---------------------------------------------------------------------------------------------
// agent_tegrastats_child

static void test_child_refusals(void **state)
{
    t_ctx_t *c = *state;
    static const struct {
        const char *path;
        int interval_ms;
        int code;
        const char *frag;
    } rows[] = {
        {"tegrastats", 100, -EINVAL, "'tegrastats' is not an absolute path"},
        {"/nonexistent/tegrastats", 100, -ENOENT, "'/nonexistent/tegrastats' is not executable"},
        {NULL, 19, -EINVAL, "interval 19 ms is outside 20..60000"},
        {NULL, 60001, -EINVAL, "interval 60001 ms"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        agent_tegrastats_child_opts_t o = {.path = rows[i].path ? rows[i].path : c->fake,
                                           .interval_ms = rows[i].interval_ms};
        jf_err_t err = {0};
        assert_null(agent_tegrastats_child_new(&o, &err));
        assert_int_equal(err.code, rows[i].code);
        assert_non_null(strstr(err.msg, rows[i].frag));
    }
}

static void test_child_lines_and_fill(void **state)
{
    t_ctx_t *c = *state;
    agent_tegrastats_child_opts_t o = {.path = c->fake, .interval_ms = 50};
    jf_err_t err = {0};
    agent_tegrastats_child_t *ts = agent_tegrastats_child_new(&o, &err);
    assert_non_null(ts);
    assert_null(agent_tegrastats_child_latest(ts, NULL));
    json_t *sample = json_pack("{s:s, s:I, s:f}", "source", "sysfs", "mono_us", (json_int_t) 7,
                               "cpu_load_pct", 12.5);
    assert_int_equal(agent_tegrastats_child_fill(ts, sample, jf_clock_mono_us(), T_S), -ESTALE);
    assert_int_equal(agent_tegrastats_child_wait_line(ts, 2 * T_S, &err), 0);
    int64_t read_us = 0;
    const json_t *line = agent_tegrastats_child_latest(ts, &read_us);
    assert_non_null(line);
    assert_int_equal(t_vdd_in(line), 2763); // the log's first line, printed at once
    pid_t pid = 0;
    long ms = 0;
    assert_int_equal(t_calls(c, &pid, &ms), 1);
    assert_int_equal(ms, 50);
    assert_int_equal(pid, agent_tegrastats_child_pid(ts));
    // Fresh: the line's rails and what the sample lacks come in; the sample's own stay.
    assert_int_equal(agent_tegrastats_child_fill(ts, sample, read_us + 1000, 100000), 0);
    assert_int_equal(t_vdd_in(sample), 2763);
    assert_string_equal(json_string_value(json_object_get(sample, "source")), "sysfs");
    assert_int_equal(json_integer_value(json_object_get(sample, "mono_us")), 7);
    assert_true(json_real_value(json_object_get(sample, "cpu_load_pct")) == 12.5);
    assert_true(t_lists(sample, "rails") && t_lists(sample, "input_power_mw"));
    assert_true(t_lists(sample, "gpu_load_pct") && !t_lists(sample, "cpu_load_pct"));
    assert_int_equal(json_integer_value(json_object_get(sample, "tegrastats_age_us")), 1000);
    json_t *rails = json_object_get(sample, "rails");
    assert_int_equal(json_array_size(rails), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(rails, 0), "name")),
                        "VDD_IN");
    // Stale: a line older than the limit is not used.
    json_t *later = json_object();
    assert_int_equal(agent_tegrastats_child_fill(ts, later, read_us + 100001, 100000), -ESTALE);
    assert_int_equal(json_object_size(later), 0);
    // It goes on printing the log's next lines.
    int64_t deadline = jf_clock_mono_us() + 2 * T_S;
    while (t_vdd_in(agent_tegrastats_child_latest(ts, NULL)) == 2763 &&
           jf_clock_mono_us() < deadline) {
        assert_int_equal(agent_tegrastats_child_wait_line(ts, T_S, &err), 0);
    }
    assert_int_equal(t_vdd_in(agent_tegrastats_child_latest(ts, NULL)), 5542);
    assert_int_equal(agent_tegrastats_child_bad_lines(ts), 0);
    json_decref(later);
    json_decref(sample);
    agent_tegrastats_child_destroy(&ts);
    assert_null(ts);
    assert_true(t_reaped(pid)); // stopped and reaped: no zombie
}

static void test_child_death(void **state)
{
    t_ctx_t *c = *state;
    agent_tegrastats_child_opts_t o = {.path = c->fake, .interval_ms = 20};
    jf_err_t err = {0};
    agent_tegrastats_child_t *ts = agent_tegrastats_child_new(&o, &err);
    assert_non_null(ts);
    assert_int_equal(agent_tegrastats_child_wait_line(ts, 2 * T_S, &err), 0);
    pid_t pid = agent_tegrastats_child_pid(ts);
    assert_int_equal(kill(pid, SIGKILL), 0);
    int rc = 0;
    for (int64_t end = jf_clock_mono_us() + 2 * T_S; rc == 0 && jf_clock_mono_us() < end;) {
        rc = agent_tegrastats_child_wait_line(ts, 100000, &err);
        rc = rc == -ETIMEDOUT ? 0 : rc;
    }
    assert_int_equal(rc, -EPIPE);
    assert_non_null(strstr(err.msg, "was killed by signal 9"));
    assert_true(t_reaped(pid)); // reaped as soon as its end was seen
    assert_int_equal(agent_tegrastats_child_fd(ts), -1);
    assert_int_equal(agent_tegrastats_child_poll(ts, jf_clock_mono_us(), &err), -EPIPE);
    agent_tegrastats_child_destroy(&ts);
}

// ---------------------------------------------------------------------------------------------
// The platform and the sampler on a tree without readable rails

static agent_platform_t *t_platform(const t_ctx_t *c, const char *tree, const char *tegrastats)
{
    char sys[PATH_MAX + 64], proc[PATH_MAX + 64], etc[PATH_MAX + 64];
    t_path(sys, tree, "sys");
    t_path(proc, tree, "proc");
    t_path(etc, tree, "etc");
    (void) c;
    agent_platform_opts_t o = {.kind = AGENT_PLATFORM_JETSON, .sysfs_root = sys,
                               .proc_root = proc, .etc_root = etc, .tegrastats = tegrastats};
    jf_err_t err = {0};
    agent_platform_t *p = agent_platform_new(&o, &err);
    if (!p) {
        fail_msg("%s", err.msg);
    }
    return p;
}

static void test_platform_choice(void **state)
{
    t_ctx_t *c = *state;
    char fix[PATH_MAX];
    jft_fixture("sysfs/xavier-nx", fix);
    agent_platform_t *p = t_platform(c, fix, c->fake); // readable rails: no fallback
    assert_null(agent_platform_tegrastats(p));
    agent_platform_destroy(&p);
    p = t_platform(c, c->tree, c->fake);
    assert_string_equal(agent_platform_tegrastats(p), c->fake);
    assert_non_null(strstr(agent_platform_describe(p), "rails come from tegrastats"));
    agent_platform_destroy(&p);
    p = t_platform(c, c->tree, "none");
    assert_null(agent_platform_tegrastats(p));
    assert_non_null(strstr(agent_platform_describe(p), "no tegrastats fallback"));
    agent_platform_destroy(&p);
    p = t_platform(c, c->tree, "/nonexistent/tegrastats");
    assert_null(agent_platform_tegrastats(p));
    assert_non_null(strstr(agent_platform_describe(p), "is not executable"));
    agent_platform_destroy(&p);
}

static int t_next(agent_sampler_t *s, agent_sampler_event_t *ev, int64_t timeout_us)
{
    zmq_pollitem_t item = {agent_sampler_handle(s), 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, (long) (timeout_us / 1000)) <= 0) {
        return -ETIMEDOUT;
    }
    return agent_sampler_recv(s, ev);
}

// Samples until n have come; warnings are counted and must name want_warning. rails: 1 every
// sample has the log's rails from a line at most two intervals of interval_ms old, 0 none has
// rails, -1 either.
static int t_samples(agent_sampler_t *s, int n, int rails, int64_t interval_ms,
                     const char *want_warning, int *warnings)
{
    agent_sampler_event_t ev;
    int got = 0;
    while (got < n && t_next(s, &ev, 3 * T_S) == 0) {
        if (ev.kind == AGENT_SAMPLER_WARNING) {
            if (!want_warning || !strstr(ev.text, want_warning)) {
                fail_msg("unexpected sampler warning: %s", ev.text);
            }
            (*warnings)++;
            continue;
        }
        assert_int_equal(ev.kind, AGENT_SAMPLER_SAMPLE);
        assert_string_equal(json_string_value(json_object_get(ev.sample, "source")), "sysfs");
        if (rails == 0) {
            assert_null(json_object_get(ev.sample, "rails"));
            assert_null(json_object_get(ev.sample, "from_tegrastats"));
        } else if (rails == 1) {
            assert_true(t_is_log_vdd_in(t_vdd_in(ev.sample)));
            assert_true(t_lists(ev.sample, "rails"));
            int64_t age = json_integer_value(json_object_get(ev.sample, "tegrastats_age_us"));
            assert_true(age >= 0 && age <= 2 * interval_ms * 1000);
        }
        json_decref(ev.sample);
        got++;
    }
    return got;
}

// The next sample: true when it has no rails.
static bool t_next_without_rails(agent_sampler_t *s)
{
    agent_sampler_event_t ev;
    assert_int_equal(t_next(s, &ev, 3 * T_S), 0);
    assert_int_equal(ev.kind, AGENT_SAMPLER_SAMPLE);
    bool without = json_object_get(ev.sample, "rails") == NULL;
    json_decref(ev.sample);
    return without;
}

static void test_sampler_fallback(void **state)
{
    t_ctx_t *c = *state;
    agent_platform_t *p = t_platform(c, c->tree, c->fake);
    agent_sysfs_t *reader = agent_platform_take_reader(p);
    char proc[PATH_MAX + 64];
    t_path(proc, c->tree, "proc");
    agent_sampler_opts_t o = {.reader_p = &reader, .proc_root = proc,
                              .tegrastats = agent_platform_tegrastats(p)};
    jf_err_t err = {0};
    agent_sampler_t *s = agent_sampler_new(&o, &err);
    assert_non_null(s);
    assert_int_equal(agent_sampler_start(s, 10, NULL), 0);
    int warnings = 0;
    assert_int_equal(t_samples(s, 8, 1, 100, NULL, &warnings), 8);
    pid_t pid = 0;
    long ms = 0;
    assert_int_equal(t_calls(c, &pid, &ms), 1); // one child for the run, not one per sample
    assert_int_equal(ms, 100);                  // 1000 / 10 Hz
    // A tegrastats that stops printing (stopped, not dead): after two intervals its last line is
    // stale, and the samples go without rails until it prints again.
    assert_int_equal(kill(pid, SIGSTOP), 0);
    int without = 0;
    for (int i = 0; i < 6; i++) {
        without += t_next_without_rails(s);
    }
    assert_true(without >= 3);
    assert_int_equal(kill(pid, SIGCONT), 0);
    assert_int_equal(t_samples(s, 1, -1, 100, NULL, &warnings), 1); // a line may be on its way
    assert_int_equal(t_samples(s, 3, 1, 100, NULL, &warnings), 3);
    // tegrastats dies mid-run: said once, and sampling goes on without its rails (the samples
    // until its end is seen may still carry its last line, within two intervals).
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(t_samples(s, 6, -1, 100, "killed by signal 9", &warnings), 6);
    assert_int_equal(warnings, 1);
    assert_true(t_reaped(pid));
    agent_sampler_event_t ev;
    assert_int_equal(t_samples(s, 4, 0, 100, NULL, &warnings), 4);
    assert_int_equal(agent_sampler_stop(s), 0);
    while (t_next(s, &ev, 3 * T_S) == 0 && ev.kind != AGENT_SAMPLER_STOPPED) {
        assert_int_equal(ev.kind, AGENT_SAMPLER_SAMPLE);
        assert_null(json_object_get(ev.sample, "rails"));
        json_decref(ev.sample);
    }
    assert_int_equal(ev.kind, AGENT_SAMPLER_STOPPED);
    assert_int_equal(ev.stats.tegrastats_interval_ms, 100);
    assert_true(ev.stats.missed >= 3); // the stale ones
    assert_int_equal(t_calls(c, &pid, &ms), 1); // not restarted
    agent_sampler_destroy(&s);
    agent_platform_destroy(&p);
}

// A second run starts a new child; stopping the run stops and reaps it.
static void test_sampler_run_lifetime(void **state)
{
    t_ctx_t *c = *state;
    agent_platform_t *p = t_platform(c, c->tree, c->fake);
    agent_sysfs_t *reader = agent_platform_take_reader(p);
    agent_sampler_opts_t o = {.reader_p = &reader, .proc_root = "/proc",
                              .tegrastats = agent_platform_tegrastats(p)};
    jf_err_t err = {0};
    agent_sampler_t *s = agent_sampler_new(&o, &err);
    assert_non_null(s);
    int warnings = 0;
    pid_t pids[2] = {0};
    long ms = 0;
    for (int run = 0; run < 2; run++) {
        assert_int_equal(agent_sampler_start(s, run ? 10 : 5, NULL), 0);
        assert_int_equal(t_samples(s, 3, 1, run ? 100 : 200, NULL, &warnings), 3);
        assert_int_equal(t_calls(c, &pids[run], &ms), run + 1);
        assert_int_equal(ms, run ? 100 : 200);
        assert_int_equal(agent_sampler_stop(s), 0);
        agent_sampler_event_t ev;
        while (t_next(s, &ev, 3 * T_S) == 0 && ev.kind != AGENT_SAMPLER_STOPPED) {
            json_decref(ev.sample);
        }
        assert_int_equal(ev.kind, AGENT_SAMPLER_STOPPED);
        assert_true(ev.stats.missed <= 1);
        assert_true(t_reaped(pids[run])); // stopped with the run
    }
    assert_int_not_equal(pids[0], pids[1]);
    agent_sampler_destroy(&s);
    agent_platform_destroy(&p);
}

static void test_sample_once(void **state)
{
    t_ctx_t *c = *state;
    agent_platform_t *p = t_platform(c, c->tree, c->fake);
    FILE *out = tmpfile();
    assert_non_null(out);
    jf_err_t err = {0};
    assert_int_equal(agent_platform_sample_once(p, 100000, out, &err), 0);
    assert_int_equal(err.code, 0);
    rewind(out);
    json_t *sample = json_loadf(out, 0, NULL);
    assert_non_null(sample);
    assert_int_equal(t_vdd_in(sample), 2763);
    assert_true(t_lists(sample, "rails"));
    json_decref(sample);
    fclose(out);
    agent_platform_destroy(&p);
}

// --tegrastats: the default, "none", an absolute path; anything else is refused.
static void test_option(void **state)
{
    (void) state;
    static const struct {
        const char *value; // NULL: not given
        int code;
        const char *want; // the parsed path, or a fragment of the error
    } rows[] = {
        {NULL, 0, "/usr/bin/tegrastats"},
        {"none", 0, "none"},
        {"/opt/bin/tegrastats", 0, "/opt/bin/tegrastats"},
        {"bin/tegrastats", -EINVAL, "--tegrastats 'bin/tegrastats': expected an absolute path"},
        {"", -EINVAL, "expected an absolute path or 'none'"},
    };
    agent_options_t *o = malloc(sizeof *o);
    assert_non_null(o);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char *argv[] = {"jetfleet-agent", "--sample-once", "--tegrastats", (char *) rows[i].value,
                        NULL};
        jf_err_t err = {0};
        optind = 0; // glibc: start a fresh scan
        opterr = 0;
        int rc = agent_options_parse(rows[i].value ? 4 : 2, argv, o, &err);
        assert_int_equal(rc, rows[i].code);
        assert_non_null(strstr(rc ? err.msg : o->tegrastats, rows[i].want));
    }
    free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_child_refusals, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_child_lines_and_fill, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_child_death, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_platform_choice, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_sampler_fallback, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_sampler_run_lifetime, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_sample_once, s_setup, s_teardown),
        cmocka_unit_test(test_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
