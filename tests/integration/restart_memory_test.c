/* Integration (issues #11, #17, reliability): the coordinator's memory after a restart is bounded
 * by its receive high-water mark. 200 jf-loadgen sessions (bench/loadgen.c) stream 1 s telemetry
 * messages of a simulated AGX Xavier; the coordinator is killed with SIGKILL and stays down for
 * two go-back-N periods while the sessions queue what they send (--queue-away: a DEALER without
 * ZMQ_IMMEDIATE, and no credit, so a window of 32), then it starts again and all of that arrives
 * at once. The restarted coordinator's peak resident size must stay within the first one's peak
 * plus sessions x (the high-water mark it logs + 1) x the largest message the sessions sent,
 * plus what it reads before handling (at most the bytes it logs). Without the mark (libzmq's
 * default of 1000) the flood is read into memory whole. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"

#include "jf_units.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define S_SESSIONS   200
// Beyond the receive backlog's bound: the restarted coordinator was measured 29 kB over it (CI,
// 2026-12-01) and 21 MB over it without the mark (bench/README.md), so 2 MiB keeps the power.
#define S_ALLOWANCE_KB 2048
#define S_PREFIX_FMT "%s-rm-" // board names: the fleet's tag, then loadgen's 4-digit index
#define S_LOADGEN_S  75       // the sessions' whole run (they are stopped before its end)
#define S_STREAM_MS  8000     // streaming before the kill
#define S_AWAY_MS    11000    // down this long: two go-back-N periods of the sessions (5 s)
#define S_SETTLE_MS  10000    // after every board is back: the queued messages are read
#define S_WAIT_MS    30000    // for registrations and runs (x JF_TEST_TIMEOUT_SCALE)
#define S_HWM_LOG    "receive high-water mark "
#define S_PENDING_LOG  "read and not yet handled at most "

typedef struct s_ctx {
    jft_fleet_t f;
    jft_proc_t loadgen;
    char prefix[JFT_FLEET_NAME_MAX];
} s_ctx_t;

static int s_write_fleet(s_ctx_t *c)
{
    size_t cap = 1024 + S_SESSIONS * 192;
    char *yaml = malloc(cap);
    if (!yaml) {
        return -1;
    }
    int n = snprintf(yaml, cap,
                     "coordinator:\n  agent_endpoint: %s\n  data_dir: state\n  telemetry_hz: 10\n"
                     "  run_timeout: 168h\nboards:\n",
                     c->f.agent_endpoint);
    for (int i = 1; i <= S_SESSIONS && n > 0 && (size_t) n < cap; i++) {
        n += snprintf(yaml + n, cap - (size_t) n,
                      "  - {name: %s%04d, type: sim, simulates: agx-xavier,\n"
                      "     storage: [{medium: local, mount: /, dataset_root: /nonexistent}]}\n",
                      c->prefix, i);
    }
    int rc = n > 0 && (size_t) n < cap ? jft_write_file(c->f.config, yaml) : -1;
    free(yaml);
    return rc;
}

static int s_setup(void **state)
{
    s_ctx_t *c = calloc(1, sizeof *c);
    *state = c;
    if (!c || jft_fleet_setup(&c->f, 0) != 0) {
        return -1;
    }
    // The fleet's endpoint: ipc in the test's directory when its path fits (it keeps its path
    // across the restart), else tcp://127.0.0.1:*, pinned to its port after the first start.
    (void) snprintf(c->prefix, sizeof c->prefix, S_PREFIX_FMT, c->f.tag);
    return s_write_fleet(c);
}

static int s_teardown(void **state)
{
    s_ctx_t *c = *state;
    if (!c) {
        return 0;
    }
    jft_proc_signal(&c->f.coord, SIGCONT);
    (void) jft_proc_stop(&c->loadgen);
    int rc = jft_fleet_teardown(&c->f);
    free(c);
    return rc;
}

// A /proc/<pid>/status figure in kB (VmRSS, VmHWM), or -1.
static long long s_status_kb(pid_t pid, const char *key)
{
    char path[64], line[256];
    (void) snprintf(path, sizeof path, "/proc/%d/status", (int) pid);
    FILE *f = fopen(path, "r");
    long long kb = -1;
    size_t klen = strlen(key);
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            kb = strtoll(line + klen + 1, NULL, 10);
        }
    }
    if (f) {
        fclose(f);
    }
    return kb;
}

// The last "name=<integer>" in a file, or -1.
static long long s_figure(const char *path, const char *name)
{
    char *text = jft_read_file(path, NULL);
    char key[64];
    (void) snprintf(key, sizeof key, "%s=", name);
    long long v = -1;
    for (const char *p = text; p && (p = strstr(p, key)) != NULL; p += strlen(key)) {
        v = strtoll(p + strlen(key), NULL, 10);
    }
    free(text);
    return v;
}

typedef struct s_count {
    jft_fleet_t *f;
    const char *sql;
    long long n;
} s_count_t;

static bool s_count_reached(void *arg)
{
    s_count_t *q = arg;
    return jft_fleet_sql_int(q->f, q->sql) >= q->n;
}

static void s_start_loadgen(s_ctx_t *c)
{
    char agent[PATH_MAX], loadgen[PATH_MAX], sample[PATH_MAX + 16], out[PATH_MAX + 16];
    jft_bin("jetfleet-agent", agent);
    jft_bin("jf-loadgen", loadgen);
    (void) snprintf(sample, sizeof sample, "%s/sample.json", c->f.dir);
    char *sargv[] = {agent,   "--platform", "sim:agx-xavier", "--sample-once", "--log-level",
                     "error", NULL};
    assert_int_equal(jft_run(sargv, sample, 20000 * jft_timeout_scale(), NULL), 0);
    char sessions[16], seconds[16];
    (void) snprintf(sessions, sizeof sessions, "%d", S_SESSIONS);
    (void) snprintf(seconds, sizeof seconds, "%d", S_LOADGEN_S);
    (void) snprintf(out, sizeof out, "%s/loadgen.out", c->f.dir);
    char *argv[] = {loadgen, "--endpoint", c->f.endpoint, "--sessions",  sessions,       "--sample",
                    sample,  "--prefix",   c->prefix,     "--type",      "agx-xavier",   "--hz",
                    "10",    "--seconds",  seconds,       "--no-credit", "--queue-away", NULL};
    assert_int_equal(jft_proc_start(&c->loadgen, out, argv, NULL), 0);
}

static void s_wait_count(jft_fleet_t *f, const char *sql, long long n)
{
    s_count_t q = {f, sql, n};
    if (!jft_wait_until(s_count_reached, &q, S_WAIT_MS * jft_timeout_scale())) {
        fail_msg("'%s' stayed at %lld, expected %lld", sql, jft_fleet_sql_int(f, sql), n);
    }
}

// The high-water mark the coordinator says it set on its agent socket.
// The figure after what in the coordinator's log (-1 without it).
static long long s_logged(jft_fleet_t *f, const char *what)
{
    char *text = jft_read_file(f->coord.log_path, NULL);
    const char *p = text ? strstr(text, what) : NULL;
    long long v = p ? strtoll(p + strlen(what), NULL, 10) : -1;
    free(text);
    return v;
}

static void s_restart_coordinator(s_ctx_t *c)
{
    int status = 0;
    jft_proc_signal(&c->f.coord, SIGKILL);
    assert_int_equal(jft_proc_wait(&c->f.coord, 10000, &status), 0);
    char path[PATH_MAX + 16];
    (void) snprintf(path, sizeof path, "%s/endpoint", c->f.data_dir);
    (void) unlink(path); // so that the start below waits for the new coordinator's
    usleep(S_AWAY_MS * 1000);
    assert_int_equal(jft_fleet_start_coordinator(&c->f), 0);
}

// A restarted coordinator must bind the port the sessions know.
static void s_pin_endpoint(s_ctx_t *c)
{
    size_t len = strlen(c->f.endpoint);
    if (strncmp(c->f.agent_endpoint, "ipc://", 6) == 0) {
        return;
    }
    assert_true(len < sizeof c->f.agent_endpoint);
    memcpy(c->f.agent_endpoint, c->f.endpoint, len + 1);
    assert_int_equal(s_write_fleet(c), 0);
}

static void test_restart_memory_bounded(void **state)
{
    s_ctx_t *c = *state;
    assert_int_equal(jft_fleet_start_coordinator(&c->f), 0);
    s_pin_endpoint(c);
    s_start_loadgen(c);
    jft_fleet_t *f = &c->f;
    assert_true(jft_fleet_wait_online(f, S_SESSIONS, S_WAIT_MS * jft_timeout_scale()));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "sweep.yaml",
                                     "name: restart-memory\n"
                                     "target: {device_types: [agx-xavier]}\n"
                                     "workloads: [{model: lenet5, dataset: mnist, epochs: 1}]\n"
                                     "power_modes: [MAXN]\nstorage: [local]\nworkers: [0]\n"
                                     "batch_sizes: [16]\nrepeats: 1\n",
                                     sweep),
                     0);
    const char *submit[] = {"sweep", "submit", sweep, NULL};
    char cli_out[PATH_MAX + 16];
    (void) snprintf(cli_out, sizeof cli_out, "%s/submit.out", f->dir);
    assert_int_equal(jft_fleet_cli(f, cli_out, 20000, submit), 0);
    s_wait_count(f, "SELECT count(*) FROM runs WHERE state = 'running'", S_SESSIONS);
    usleep(S_STREAM_MS * 1000);
    long long before_kb = s_status_kb(f->coord.pid, "VmHWM");
    long long hwm = s_logged(f, S_HWM_LOG);
    long long pending_max = s_logged(f, S_PENDING_LOG);
    assert_true(hwm > 0 && pending_max > 0);
    s_restart_coordinator(c);
    assert_true(jft_fleet_wait_online(f, S_SESSIONS, S_WAIT_MS * jft_timeout_scale()));
    usleep(S_SETTLE_MS * 1000);
    long long after_kb = s_status_kb(f->coord.pid, "VmHWM");
    char out[PATH_MAX + 16];
    (void) snprintf(out, sizeof out, "%s/loadgen.out", f->dir);
    jft_proc_signal(&c->loadgen, SIGTERM); // it prints its figures on the way out
    int status = 0;
    (void) jft_proc_wait(&c->loadgen, 90000 * jft_timeout_scale(), &status);
    long long msg_bytes = s_figure(out, "msg_bytes_max");
    // Per connection, libzmq holds at most the mark's messages in its pipe and one more that
    // did not fit (its engine keeps it and stops reading the connection); the coordinator's own
    // list of messages read and not yet handled at most its logged bytes and one message more.
    // S_ALLOWANCE_KB is what the restarted coordinator holds that the first did not at its peak:
    // every session's registration answered at once and the allocator's arenas.
    long long bound_kb = before_kb + S_SESSIONS * (hwm + 1) * msg_bytes / 1024 +
                         (pending_max + msg_bytes) / 1024 + S_ALLOWANCE_KB;
    printf("sessions=%d rcvhwm=%lld msg_bytes_max=%lld rss_before_restart_mb=%.1f "
           "rss_after_restart_mb=%.1f rss_bound_mb=%.1f not_registered=%lld\n",
           S_SESSIONS, hwm, msg_bytes, (double) before_kb / 1024, (double) after_kb / 1024,
           (double) bound_kb / 1024, s_figure(out, "not_registered"));
    assert_true(hwm > 0 && msg_bytes > 0 && before_kb > 0 && after_kb > 0);
    if (after_kb > bound_kb) {
        fail_msg("the restarted coordinator peaked at %lld kB, over the bound of %lld kB", after_kb,
                 bound_kb);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_restart_memory_bounded, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
