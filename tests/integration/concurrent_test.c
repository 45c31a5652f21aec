/* Integration: the concurrent training and inference run kind (docs/concurrent.md). On a
 * simulated board: a coordinator and one AGX Orin sim agent (boards named for this test) run a
 * sweep of one training workload alone and the same with inference beside it: both runs are
 * done, the concurrent run's epochs carry the inference figures (requests about the rate times
 * the epoch, ordered latencies, a share within budget) into the store, and its epochs take longer
 * than the training alone (simulated data). On a host board: the real trainer serves beside
 * LeNet-5's training and its epochs reach the store with the same figures (measured). Prints its
 * figures as name=value lines. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S_BOARD "concurrent-sim-1" // unique to this test: no other fleet's agent can take it
#define S_RATE  30.0

static const char *const s_agent_args[] = {"--platform", "sim:orin-agx", "--sim-speed", "2000",
                                           "--sim-scale", "0.05", "--sim-seed", "7",
                                           "--log-level", "notice", NULL};

static const char s_sweep[] =
    "name: concurrent\n"
    "target:\n  device_types: [orin-agx]\n"
    "workloads:\n"
    "  - {name: alone, model: resnet18, dataset: cifar10, epochs: 2}\n"
    "  - name: beside\n    model: resnet18\n    dataset: cifar10\n    epochs: 2\n"
    "    inference: {model: mobilenetv3, batch: 4, rate_per_s: 30, budget_ms: 300}\n"
    "power_modes: [MAXN]\nstorage: [nvme]\nworkers: [2]\nbatch_sizes: [16]\n";

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    const char *types[] = {"orin-agx"};
    *state = f;
    if (!f || jft_fleet_setup_sims(f, 0, types, 1) != 0) {
        return -1;
    }
    // Rename the board for this test alone.
    char *yaml = jft_read_file(f->config, NULL);
    char *at = yaml ? strstr(yaml, "name: sim-1\n") : NULL;
    if (!at) {
        free(yaml);
        return -1;
    }
    *at = '\0';
    char *text = NULL;
    int n = asprintf(&text, "%sname: " S_BOARD "\n%s", yaml, at + strlen("name: sim-1\n"));
    int rc = n < 0 ? -1 : jft_write_file(f->config, text);
    free(text);
    free(yaml);
    return rc;
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

static long long s_sql(jft_fleet_t *f, const char *sql)
{
    return jft_fleet_sql_int(f, sql);
}

static void test_concurrent_run(void **state)
{
    jft_fleet_t *f = *state;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    assert_int_equal(jft_fleet_start_agent_named(f, 0, S_BOARD, s_agent_args), 0);
    assert_true(jft_fleet_wait_online(f, 1, 60000));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "concurrent.yaml", s_sweep, sweep), 0);
    char *out = jft_cli_expect(f, 0, 120000,
                               (const char *const[]){"sweep", "submit", sweep, "--wait", NULL});
    free(out);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs WHERE state = 'done' AND board = '" S_BOARD
                              "'"),
                     2);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs WHERE concurrent_infer_model = "
                              "'mobilenetv3' AND concurrent_infer_batch = 4 AND "
                              "concurrent_budget_us = 300000 AND concurrent_rate_per_s = 30"),
                     1);
    // Every epoch of the concurrent run has its inference; the training alone has none.
    assert_int_equal(s_sql(f, "SELECT count(*) FROM epochs e JOIN runs r ON r.id = e.run WHERE "
                              "r.workload = 'beside' AND e.concurrent_requests > 0 AND "
                              "e.concurrent_latency_p50_us <= e.concurrent_latency_p99_us AND "
                              "e.concurrent_latency_p99_us <= e.concurrent_latency_max_us AND "
                              "e.concurrent_within_budget BETWEEN 0 AND 1 AND "
                              "e.concurrent_infer_batches * 4 >= e.concurrent_requests"),
                     2);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM epochs e JOIN runs r ON r.id = e.run WHERE "
                              "r.workload = 'alone' AND e.concurrent_requests IS NULL"),
                     2);
    // Requests arrive at the rate over the epoch (Poisson: within 5 standard deviations).
    long long requests = s_sql(f, "SELECT e.concurrent_requests FROM epochs e JOIN runs r ON "
                                  "r.id = e.run WHERE r.workload = 'beside' AND e.epoch = 1");
    long long e2e_us = s_sql(f, "SELECT e.e2e_us FROM epochs e JOIN runs r ON r.id = e.run "
                                "WHERE r.workload = 'beside' AND e.epoch = 1");
    long long alone_us = s_sql(f, "SELECT e.e2e_us FROM epochs e JOIN runs r ON r.id = e.run "
                                  "WHERE r.workload = 'alone' AND e.epoch = 1");
    long long p99_us = s_sql(f, "SELECT e.concurrent_latency_p99_us FROM epochs e JOIN runs r ON "
                                "r.id = e.run WHERE r.workload = 'beside' AND e.epoch = 1");
    double expected = S_RATE * (double) e2e_us / 1e6;
    printf("concurrent_requests=%lld concurrent_requests_expected=%.1f concurrent_e2e_us=%lld "
           "alone_e2e_us=%lld concurrent_latency_p99_us=%lld data=simulated\n",
           requests, expected, e2e_us, alone_us, p99_us);
    assert_true(fabs((double) requests - expected) < 5.0 * sqrt(expected) + 1.0);
    assert_true(e2e_us > alone_us);
}

static const char s_host_sweep[] =
    "name: concurrent-host\n"
    "target:\n  device_types: [host]\n"
    "workloads:\n"
    "  - name: beside\n    model: lenet5\n    dataset: mnist\n    epochs: 2\n"
    "    inference: {model: lenet5, batch: 4, rate_per_s: 200, budget_ms: 100}\n"
    "storage: [local]\nworkers: [0]\nbatch_sizes: [32]\n";

static int s_setup_host(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    *state = f;
    return f && jft_fleet_setup(f, 1) == 0 ? 0 : -1;
}

// The same run kind on a host board: jetfleet-train itself trains LeNet-5 and serves a second
// LeNet-5 beside it on this machine's CPU (measured, not simulated); its epochs reach the store
// with the inference's figures.
static void test_concurrent_run_measured(void **state)
{
    jft_fleet_t *f = *state;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    assert_int_equal(jft_fleet_start_agent(f, 0, NULL), 0);
    assert_true(jft_fleet_wait_online(f, 1, 60000));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "concurrent-host.yaml", s_host_sweep, sweep), 0);
    char *out = jft_cli_expect(f, 0, 120000,
                               (const char *const[]){"sweep", "submit", sweep, "--wait", NULL});
    free(out);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs WHERE state = 'done' AND "
                              "concurrent_infer_model = 'lenet5'"),
                     1);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM epochs WHERE concurrent_requests > 0 AND "
                              "concurrent_infer_us > 0 AND concurrent_latency_p50_us <= "
                              "concurrent_latency_p99_us AND concurrent_latency_p99_us <= "
                              "concurrent_latency_max_us AND concurrent_latency_max_us <= e2e_us "
                              "AND concurrent_within_budget BETWEEN 0 AND 1 AND "
                              "concurrent_infer_batches * 4 >= concurrent_requests"),
                     2);
    long long requests = s_sql(f, "SELECT sum(concurrent_requests) FROM epochs");
    long long e2e_us = s_sql(f, "SELECT sum(e2e_us) FROM epochs");
    long long p99_us = s_sql(f, "SELECT max(concurrent_latency_p99_us) FROM epochs");
    double expected = 200.0 * (double) e2e_us / 1e6;
    printf("host_concurrent_requests=%lld host_concurrent_requests_expected=%.1f "
           "host_concurrent_e2e_us=%lld host_concurrent_latency_p99_us=%lld data=measured\n",
           requests, expected, e2e_us, p99_us);
    // Requests arrive at the rate while the epochs train (Poisson: within 5 standard deviations;
    // the last serving turn of each epoch adds time without arrivals, a few ms here).
    assert_true(fabs((double) requests - expected) < 5.0 * sqrt(expected) + 1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_concurrent_run, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_run_measured, s_setup_host, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
