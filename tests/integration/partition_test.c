/* Integration (reliability, issue #11): one simulated agent streaming telemetry at 10 Hz is cut
 * off from its coordinator by a TCP proxy on 127.0.0.1 (tests/support/jft_proxy.h: a cut passes
 * nothing either way and closes nothing) for longer than the heartbeat timeout, then healed:
 * the coordinator marks the board offline, the agent reconnects and is resumed from the stored
 * acked_seq (docs/protocol.md §4.4, §5.3). Every sample the agent took must be stored, in
 * order, none twice. The control runs the agent with --spool-forget-on-send (tests only: a sent
 * message counts as acknowledged) and must lose samples, so the check can fail. The cut lasts
 * JF_PARTITION_CUT_S seconds (default 15; the full size is 60). */
#include "jf_err.h"
#include "jf_parse.h"
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"
#include "jft_proxy.h"

#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define S_WAIT_MS      60000  // bound of each readiness wait (jft_wait_until scales it)
#define S_CLI_MS       120000 // bound of a CLI call
#define S_FLOW_SAMPLES 10     // samples stored before the cut
#define S_RATE_HZ      10
#define S_EPOCH_S      3 // a LeNet-5 epoch at --sim-scale 0.2, speed 1 (spool_restart_test.c)

typedef struct s_figures {
    long long cut_s;             // length of the cut
    long long reconnects;        // proxy connections beyond the first
    long long taken;             // samples the agent took (its measure record); -1 if not stored
    long long stored;            // samples stored for the attempt
    long long cut_stored;        // stored samples taken during the cut
    long long missing_samples;   // taken - stored; in the control (no measure stored) the
                                 // samples of the cut not stored: cut_s x rate - cut_stored
    long long duplicate_samples; // stored samples sharing a timestamp
    long long out_of_order;      // stored samples whose timestamp is not after the previous one
    long long run_done;          // 1 when the run is done in the store
} s_figures_t;

static long long s_cut_s(void)
{
    const char *text = getenv("JF_PARTITION_CUT_S");
    int64_t v = 15;
    jf_err_t err = {0};
    if (text && jf_parse_i64(text, 10, 600, &v, &err) != 0) {
        fail_msg("JF_PARTITION_CUT_S: %s", err.msg);
    }
    return v;
}

// The heartbeat: the timeout T well inside the cut (so the board goes offline and the agent
// reconnects during it), the lease max(10 I, 60 s) beyond the cut plus T (so nothing is given
// up, docs/protocol.md §4.2).
static int s_setup(void **state)
{
    long long cut_s = s_cut_s();
    long long interval_s = (cut_s + 39) / 10;
    char interval[32], timeout[32];
    (void) snprintf(interval, sizeof interval, "%llds", interval_s);
    (void) snprintf(timeout, sizeof timeout, "%llds", 2 * interval_s + 1);
    jft_fleet_t *f = calloc(1, sizeof *f);
    const char *types[] = {"xavier-nx"};
    *state = f;
    // TCP, for the proxy. The board's name then carries the fleet's prefix (jft_fleet_board):
    // an agent of another test that reaches this coordinator on a reused port is not its board.
    if (!f || jft_fleet_setup_sims(f, 0, types, 1) != 0 ||
        jft_fleet_set_coord(f, "tcp://127.0.0.1:*", NULL) != 0) {
        return -1;
    }
    return jft_fleet_set_heartbeat(f, interval, timeout);
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

static long long s_sql(jft_fleet_t *f, const char *sql)
{
    long long v = jft_fleet_sql_int(f, sql);
    if (v < 0) {
        fail_msg("query failed: %s", sql);
    }
    return v;
}

static bool s_samples_flow(void *arg)
{
    return jft_fleet_sql_int(arg, "SELECT count(*) FROM telemetry") >= S_FLOW_SAMPLES;
}

// The agent's own log says the attempt ended (the store may never hear of it in the control).
static bool s_agent_done(void *arg)
{
    jft_fleet_t *f = arg;
    char path[PATH_MAX + 32];
    (void) snprintf(path, sizeof path, "%s/agent-%s.log", f->dir, jft_fleet_board(f, "sim-1"));
    char *text = jft_read_file(path, NULL);
    bool done = text && strstr(text, "attempt 1 done");
    free(text);
    return done;
}

static bool s_run_done(void *arg)
{
    return jft_fleet_sql_int(arg, "SELECT count(*) FROM runs WHERE state = 'done'") == 1;
}

// Prints the lines of a log of the test's directory that tell the run's story (sessions,
// registry, dispatch, runs, warnings), so that a failure explains itself in CI's output.
static void s_dump_log(jft_fleet_t *f, const char *name)
{
    char path[PATH_MAX + 64];
    (void) snprintf(path, sizeof path, "%s/%s", f->dir, name);
    char *text = jft_read_file(path, NULL);
    printf("--- %s\n", name);
    static const char *const keys[] = {
        "session", "registry", "dispatch", "run:", "lease", "quarantin", "warn", "error"};
    for (char *line = text, *nl = NULL; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl) {
            *nl = '\0';
        }
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            if (strstr(line, keys[k]) && !strstr(line, "minibatch")) {
                printf("%.300s\n", line);
                break;
            }
        }
    }
    free(text);
}

static int64_t s_wall_us(void)
{
    struct timespec ts = {0};
    (void) clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void s_submit(jft_fleet_t *f, long long cut_s)
{
    char text[512], path[PATH_MAX];
    // Long enough that the run outlives the cut and the reconnection on a loaded machine.
    (void) snprintf(text, sizeof text,
                    "name: partition\ntarget:\n  boards: [%s]\n"
                    "workloads:\n  - {model: lenet5, dataset: mnist, epochs: %lld}\n"
                    "power_modes: [MODE_20W_6CORE]\nstorage: [nvme]\nworkers: [1]\n"
                    "batch_sizes: [64]\ntelemetry_hz: %d\n",
                    jft_fleet_board(f, "sim-1"), cut_s / S_EPOCH_S + 5, S_RATE_HZ);
    assert_int_equal(jft_fleet_write(f, "partition.yaml", text, path), 0);
    free(jft_cli_expect(f, 0, S_CLI_MS, (const char *const[]){"sweep", "submit", path, NULL}));
}

static void s_measure(jft_fleet_t *f, int64_t cut_from_us, int64_t cut_to_us, s_figures_t *g)
{
    char sql[256];
    g->run_done = s_sql(f, "SELECT count(*) FROM runs WHERE state = 'done'");
    g->stored = s_sql(f, "SELECT count(*) FROM telemetry WHERE attempt = 1");
    g->taken = jft_fleet_sql_int(f, "SELECT json_extract(measure, '$.telemetry.samples') FROM "
                                    "runs WHERE attempt = 1");
    (void) snprintf(sql, sizeof sql,
                    "SELECT count(*) FROM telemetry WHERE attempt = 1 AND t_us BETWEEN %lld AND "
                    "%lld",
                    (long long) cut_from_us, (long long) cut_to_us);
    g->cut_stored = s_sql(f, sql);
    g->missing_samples =
        g->taken >= 0 ? g->taken - g->stored : g->cut_s * S_RATE_HZ - g->cut_stored;
    g->duplicate_samples = s_sql(f, "SELECT count(*) - count(DISTINCT t_us) FROM telemetry");
    g->out_of_order = s_sql(f, "SELECT count(*) FROM (SELECT t_us, lag(t_us) OVER (ORDER BY "
                               "seq, idx) AS prev FROM telemetry WHERE attempt = 1) WHERE t_us "
                               "<= prev");
}

static void s_print(const char *mode, const s_figures_t *g)
{
    printf("mode=%s\ncut_s=%lld\nreconnects=%lld\nsamples_taken=%lld\nsamples_stored=%lld\n"
           "cut_samples_stored=%lld\nmissing_samples=%lld\nduplicate_samples=%lld\n"
           "out_of_order_samples=%lld\nrun_done=%lld\n",
           mode, g->cut_s, g->reconnects, g->taken, g->stored, g->cut_stored, g->missing_samples,
           g->duplicate_samples, g->out_of_order, g->run_done);
    fflush(stdout);
}

static void s_scenario(jft_fleet_t *f, bool forget, s_figures_t *g)
{
    g->cut_s = s_cut_s();
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    jft_proxy_t *proxy = jft_proxy_new(f->endpoint);
    assert_non_null(proxy);
    // A later --coordinator wins over the one jft_fleet passes: the agent talks to the proxy.
    const char *args[] = {"--sim-speed",
                          "1",
                          "--sim-scale",
                          "0.2",
                          "--sim-seed",
                          "7",
                          "--coordinator",
                          jft_proxy_endpoint(proxy),
                          forget ? "--spool-forget-on-send" : NULL,
                          NULL};
    assert_int_equal(jft_fleet_start_sim_agent(f, 0, args), 0);
    assert_true(jft_fleet_wait_online(f, 1, S_WAIT_MS));
    s_submit(f, g->cut_s);
    assert_true(jft_wait_until(s_samples_flow, f, S_WAIT_MS));
    int64_t cut_from_us = s_wall_us();
    jft_proxy_set_cut(proxy, true);
    // The fault schedule, not a wait for readiness: the partition lasts this long.
    (void) poll(NULL, 0, (int) (g->cut_s * 1000));
    jft_proxy_set_cut(proxy, false);
    int64_t cut_to_us = s_wall_us();
    assert_true(jft_wait_until(s_agent_done, f, S_WAIT_MS + (int) g->cut_s * 1000));
    if (!forget && !jft_wait_until(s_run_done, f, S_WAIT_MS)) {
        char agent_log[PATH_MAX];
        (void) snprintf(agent_log, sizeof agent_log, "agent-%s.log", jft_fleet_board(f, "sim-1"));
        s_dump_log(f, "coordinator.log");
        s_dump_log(f, agent_log);
        fail_msg("the agent finished attempt 1, but the store has no done run within %d ms",
                 S_WAIT_MS);
    }
    g->reconnects = jft_proxy_connections(proxy) - 1;
    s_measure(f, cut_from_us, cut_to_us, g);
    jft_proxy_destroy(&proxy);
}

static void test_partition_loses_nothing(void **state)
{
    jft_fleet_t *f = *state;
    s_figures_t g = {0};
    s_scenario(f, false, &g);
    s_print("acks", &g);
    assert_true(g.reconnects >= 1); // the cut outlasted the heartbeat timeout
    assert_int_equal(g.run_done, 1);
    assert_true(g.taken > 0);
    assert_int_equal(g.missing_samples, 0);
    assert_int_equal(g.duplicate_samples, 0);
    assert_int_equal(g.out_of_order, 0);
    // The sampler kept its rate through the cut, and those samples arrived afterwards.
    assert_true(g.cut_stored >= g.cut_s * S_RATE_HZ / 2);
}

// The control: without acknowledgements the samples sent into the cut are gone.
static void test_partition_without_acks_loses_samples(void **state)
{
    jft_fleet_t *f = *state;
    s_figures_t g = {0};
    s_scenario(f, true, &g);
    s_print("no-acks", &g);
    assert_true(g.missing_samples > 0);
    assert_true(g.cut_stored < g.cut_s * S_RATE_HZ / 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_partition_loses_nothing, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_partition_without_acks_loses_samples, s_setup,
                                        s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
