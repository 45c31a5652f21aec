/* Integration: a coordinator and 50 simulated agents (Xavier NX, AGX Xavier and Nano, agent
 * --platform sim:<type>, jetfleet-train-sim at a high speed) run a sweep of MobileNetV3 on
 * GLD-23k and ResNet-18 on CIFAR-10 with 1 worker: every run is done exactly once, or
 * failed with oom where the model says so (both workloads on the Nano at batch 16); epochs are stored, every
 * board and record says platform sim, energy is measured in modelled time and labelled
 * simulated, and `jetfleet results` marks the rows as simulated. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S_SIMS   50
#define S_EPOCHS 2
#define S_RUNS   (S_SIMS * 2) // boards x workloads (one power mode and worker count each)
#define S_NANOS  16               // every third board, from the third on

static const char *const s_types[] = {"xavier-nx", "agx-xavier", "nano"};

static const char *const s_agent_args[] = {"--sim-speed", "2000", "--sim-scale", "0.05",
                                           "--sim-seed", "5", "--log-level", "notice", NULL};

static const char s_sweep[] = "name: simfleet\n"
                              "target:\n  device_types: [xavier-nx, agx-xavier, nano]\n"
                              "workloads:\n"
                              "  - {model: mobilenetv3, dataset: gld23k, epochs: 2}\n"
                              "  - {model: resnet18, dataset: cifar10, epochs: 2}\n"
                              "power_modes: [MODE_15W_6CORE, MAXN]\n"
                              "storage: [nvme]\nworkers: [1]\nbatch_sizes: [16]\n"
                              "telemetry_hz: 10\n";

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    const char *types[S_SIMS];
    for (size_t i = 0; i < S_SIMS; i++) {
        types[i] = s_types[i % 3];
    }
    *state = f;
    return f && jft_fleet_setup_sims(f, 0, types, S_SIMS) == 0 ? 0 : -1;
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

static char *s_cli(jft_fleet_t *f, int expect_rc, const char *const *args)
{
    return jft_cli_expect(f, expect_rc, 120000, args);
}

static long long s_sql(jft_fleet_t *f, const char *sql)
{
    return jft_fleet_sql_int(f, sql);
}

// Done exactly once, or failed with oom where the model runs out of memory.
static void s_check_outcomes(jft_fleet_t *f)
{
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs"), S_RUNS);
    assert_int_equal(s_sql(f, "SELECT max(attempt) FROM runs"), 1);
    // The model: neither workload fits the Nano's 4 GB at batch 16 (ResNet-18 needs 315 MiB,
    // MobileNetV3 1106 MiB, 240 MiB left), everything fits the Xaviers.
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs r JOIN boards b ON b.name = r.board "
                              "WHERE r.state = 'failed' AND NOT (b.type = 'nano' AND "
                              "r.fail_reason = 'oom' AND r.fail_detail LIKE 'out of memory:%')"),
                     0);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs WHERE state = 'failed'"), S_NANOS * 2);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs WHERE state = 'done'"),
                     S_RUNS - S_NANOS * 2);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM events WHERE kind = 'run.done'"),
                     S_RUNS - S_NANOS * 2);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs r WHERE r.state = 'done' AND (SELECT "
                              "count(*) FROM epochs e WHERE e.run = r.id AND e.attempt = "
                              "r.attempt) != r.epochs"),
                     0);
}

// Platform sim everywhere: the boards' hellos and every trainer's start record.
static void s_check_platform(jft_fleet_t *f)
{
    assert_int_equal(s_sql(f, "SELECT count(*) FROM boards WHERE platform = 'sim'"), S_SIMS);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM boards WHERE type NOT IN ('xavier-nx', "
                              "'agx-xavier', 'nano')"),
                     0);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs WHERE state = 'done' AND "
                              "json_extract(info, '$.platform') IS NOT 'sim'"),
                     0);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs WHERE state = 'done' AND "
                              "json_extract(measure, '$.power_mode.note') NOT LIKE 'simulated:%'"),
                     0);
}

// Sim runs carry energy measured on the fake rails in modelled time, labelled simulated (the
// accuracy against the model is sim_energy_test's).
static void s_check_energy(jft_fleet_t *f)
{
    assert_true(s_sql(f, "SELECT count(*) FROM epochs") > 0);
    assert_true(s_sql(f, "SELECT count(*) FROM epochs WHERE energy_mj > 0 AND avg_power_mw > 0") >
                0);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs WHERE state = 'done' AND ("
                              "json_extract(measure, '$.energy.source') IS NOT 'simulated' OR "
                              "json_extract(measure, '$.telemetry.time_base') IS NOT "
                              "'simulated, speed 2000')"),
                     0);
}

static void test_sim_fleet_sweep(void **state)
{
    jft_fleet_t *f = *state;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    for (size_t i = 0; i < S_SIMS; i++) {
        assert_int_equal(jft_fleet_start_sim_agent(f, i, s_agent_args), 0);
    }
    assert_true(jft_fleet_wait_online(f, S_SIMS, 60000));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "simfleet.yaml", s_sweep, sweep), 0);
    char *out = s_cli(f, 1, (const char *const[]){"sweep", "submit", sweep, "--wait", NULL});
    free(out);
    s_check_outcomes(f);
    s_check_platform(f);
    s_check_energy(f);
    out = s_cli(f, 0, (const char *const[]){"results", "--sweep", "simfleet", NULL});
    assert_non_null(strstr(out, " sim "));
    assert_non_null(strstr(out, "rows marked sim are simulated (model: docs/simulator.md), not "
                                "measured"));
    free(out);
    out = s_cli(f, 0, (const char *const[]){"export", "--sweep", "simfleet", "--what", "runs",
                                            NULL});
    assert_non_null(strstr(out, ",sim,"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sim_fleet_sweep, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
