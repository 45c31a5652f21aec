/* Integration: `jetfleet rounds plan` (issue #14, docs/rounds.md "Planning"). A coordinator on an
 * ipc endpoint in the test's directory and two simulated boards named for this test (a Xavier NX
 * and a Nano, several-fold apart). Neither has a model: the plan profiles each first (adaptive
 * sweeps of custom points), fits, and plans equal-finish, whose predicted finish-time spread must
 * be smaller than maxn's and within the file's 10 % window, and its predicted energy (the idle
 * wait counted at the simulator's idle power) below maxn's. Run again it profiles nothing and
 * prints the same plan. The bad requests exit 1 or 2 with one clear line. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"

#include <setjmp.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S_CLI_MS 150000

static const char *const s_nx_args[] = {"--platform",  "sim:xavier-nx", "--sim-speed", "20",
                                        "--sim-scale", "0.25",          "--sim-seed",  "7",
                                        "--log-level", "notice",        NULL};
static const char *const s_nano_args[] = {"--platform",  "sim:nano", "--sim-speed", "20",
                                          "--sim-scale", "0.25",     "--sim-seed",  "7",
                                          "--log-level", "notice",   NULL};

static const char s_rounds[] = "name: rplan\n"
                               "boards: [{name: rplan-nx}, {name: rplan-nano}]\n"
                               "workload: {model: lenet5, dataset: mnist}\n"
                               "batch_size: 64\nworkers: 1\nstorage: nvme\nrounds: 3\n"
                               "local: {minibatches: 200}\n"
                               "policy: equal-finish\nspread: 10%\n"
                               // The simulator's idle power of each type (VDD_IN and POM_5V_IN
                               // idle rails of agent/share/sim_params.yaml, from the reference
                               // captures): the wait at the barrier costs what it costs there.
                               "idle_power: [{type: xavier-nx, watts: 2.763}, "
                               "{type: nano, watts: 0.933}]\n";

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    *state = f;
    if (!f || jft_fleet_setup(f, 0) != 0) {
        return -1;
    }
    // Boards named for this test, behind an ipc endpoint in its directory: no other test's
    // agents can reach this coordinator, nor these agents another's.
    static char yaml[4096];
    int n = snprintf(yaml, sizeof yaml,
                     "coordinator:\n  agent_endpoint: ipc://%s/agents.sock\n  data_dir: state\n"
                     "  heartbeat_interval: 500ms\n  heartbeat_timeout: %s\n  run_timeout: 5m\n"
                     "boards:\n",
                     f->dir, JFT_FLEET_SIM_HEARTBEAT_TIMEOUT);
    const char *names[] = {"rplan-nx", "rplan-nano"}, *types[] = {"xavier-nx", "nano"};
    for (int i = 0; i < 2 && n > 0 && (size_t) n < sizeof yaml; i++) {
        n += snprintf(yaml + n, sizeof yaml - (size_t) n,
                      "  - name: %s\n    type: sim\n    simulates: %s\n    storage:\n"
                      "      - medium: nvme\n        mount: /\n        dataset_root: %s/data\n",
                      names[i], types[i], f->dir);
    }
    char path[PATH_MAX];
    return n > 0 && (size_t) n < sizeof yaml && jft_fleet_write(f, "fleet.yaml", yaml, path) == 0
               ? 0
               : -1;
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

static void s_expect(jft_fleet_t *f, int code, const char *const *args, const char *frag)
{
    char *out = jft_cli_expect(f, code, S_CLI_MS, args);
    if (!strstr(out, frag)) {
        fail_msg("jetfleet %s %s: '%s' not in:\n%s", args[0], args[1], frag, out);
    }
    free(out);
}

static void s_bad_requests(jft_fleet_t *f, const char *file)
{
    char missing[PATH_MAX];
    static const char text[] = "name: x\nboards: [{name: rplan-nx}, {name: rplan-tx2}]\n"
                               "workload: {model: lenet5, dataset: mnist}\nbatch_size: 64\n"
                               "rounds: 1\nlocal: {minibatches: 10}\npolicy: maxn\n";
    assert_int_equal(jft_fleet_write(f, "missing.yaml", text, missing), 0);
    s_expect(f, 2, (const char *[]){"rounds", "plan", NULL}, "usage: jetfleet rounds plan FILE");
    s_expect(f, 2, (const char *[]){"rounds", "fly", NULL}, "usage: jetfleet rounds plan FILE");
    s_expect(f, 2, (const char *[]){"rounds", "plan", "--profile-modes", "3", file, NULL},
             "--profile-modes 3: too few to fit time and power models, need at least 10");
    s_expect(f, 2, (const char *[]){"rounds", "plan", missing, NULL},
             "missing.yaml:2:28: no board in");
    s_expect(f, 1, (const char *[]){"rounds", "plan", "--no-profile", file, NULL},
             "board 'rplan-nx' has no fitted time and power models for lenet5-mnist");
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM sweeps"), 0);
}

// The number after "key=" in out; NaN when absent.
static double s_num(const char *out, const char *key)
{
    const char *p = strstr(out, key);
    return p ? strtod(p + strlen(key), NULL) : NAN;
}

static void test_rounds_plan(void **state)
{
    jft_fleet_t *f = *state;
    char file[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "rplan.yaml", s_rounds, file), 0);
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    assert_int_equal(jft_fleet_start_agent_named(f, 0, "rplan-nx", s_nx_args), 0);
    assert_int_equal(jft_fleet_start_agent_named(f, 1, "rplan-nano", s_nano_args), 0);
    assert_true(jft_fleet_wait_online(f, 2, 20000));
    s_bad_requests(f, file);

    char *out = jft_cli_expect(f, 0, S_CLI_MS,
                               (const char *[]){"rounds", "plan", "--timeout", "100", file, NULL});
    printf("%s\n", out);
    assert_non_null(strstr(out, "profiling: board 'rplan-nx' has no fitted time and power models"));
    assert_non_null(strstr(out, "profiling: board 'rplan-nano' has no fitted"));
    assert_non_null(strstr(out, "board=rplan-nx "));
    assert_non_null(strstr(out, "board=rplan-nano "));
    assert_non_null(strstr(out, "is simulated"));
    assert_null(strstr(out, "idle power of")); // both given in the file
    double plan_spread = s_num(out, "plan_spread_pct="),
           maxn_spread = s_num(out, "maxn_spread_pct=");
    double plan_j = s_num(out, "plan_energy_j="), maxn_j = s_num(out, "maxn_energy_j=");
    long long models = jft_fleet_sql_int(f, "SELECT count(*) FROM models WHERE target IN "
                                            "('time', 'power') AND scope = 'board'");
    printf("rounds_plan_spread_pct=%.2f rounds_maxn_spread_pct=%.2f rounds_plan_energy_j=%.3f "
           "rounds_maxn_energy_j=%.3f rounds_models=%lld (simulated boards)\n",
           plan_spread, maxn_spread, plan_j, maxn_j, models);
    assert_true(plan_spread < maxn_spread);
    assert_true(plan_spread <= 10.0);
    assert_true(plan_j < maxn_j); // with the idle wait counted, equal-finish spends less
    assert_int_equal(models, 4);
    assert_non_null(strstr(out, "plan_missed=0"));
    const char *plan_at = strstr(out, "rounds=rplan");
    assert_non_null(plan_at);
    char *first = strdup(plan_at);
    free(out);

    // Again: every board has its models now, so nothing is profiled and the plan is the same.
    out = jft_cli_expect(f, 0, S_CLI_MS, (const char *[]){"rounds", "plan", file, NULL});
    assert_null(strstr(out, "profiling:"));
    assert_string_equal(out, first);
    free(first);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rounds_plan, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
