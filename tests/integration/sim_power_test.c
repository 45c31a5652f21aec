/* Integration: custom power modes and DVFS off on simulated boards. A coordinator and two Xavier
 * NX sim agents (agent --platform sim:xavier-nx, jetfleet-train --simulate) run a sweep of one
 * nvpmodel mode and one custom point, both with DVFS off: every run is done, the custom point is
 * the model's operating point (its epochs are slower at the lowest GPU clock than the mode's on
 * the same board), the measure record says what was in force, and `jetfleet runs` shows it. */
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

#define S_SIMS 2
#define S_RUNS (S_SIMS * 2) // boards x (mode, custom point)

static const char *const s_agent_args[] = {"--sim-speed", "2000", "--sim-scale", "0.05",
                                           "--sim-seed", "5", "--log-level", "notice", NULL};

static const char s_sweep[] = "name: simpoints\n"
                              "target:\n  device_types: [xavier-nx]\n"
                              "workloads:\n  - {model: resnet18, dataset: cifar10, epochs: 1}\n"
                              "power_modes:\n  - MODE_15W_6CORE\n"
                              "  - {custom: {cores: 2, cpu_freq: 1190.4MHz, gpu_freq: 114.75MHz}}\n"
                              "dvfs: [off]\nstorage: [nvme]\nworkers: [1]\nbatch_sizes: [16]\n";

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

static char *s_cli(jft_fleet_t *f, int expect_rc, const char *const *args)
{
    return jft_cli_expect(f, expect_rc, 120000, args);
}

static long long s_sql(jft_fleet_t *f, const char *sql)
{
    return jft_fleet_sql_int(f, sql);
}

static void test_sim_points(void **state)
{
    jft_fleet_t *f = *state;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    for (size_t i = 0; i < S_SIMS; i++) {
        assert_int_equal(jft_fleet_start_sim_agent(f, i, s_agent_args), 0);
    }
    assert_true(jft_fleet_wait_online(f, S_SIMS, 60000));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "simpoints.yaml", s_sweep, sweep), 0);
    char *out = s_cli(f, 0, (const char *const[]){"sweep", "submit", sweep, "--wait", NULL});
    free(out);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs WHERE state = 'done' AND dvfs_off = 1 "
                              "AND json_extract(measure, '$.power_mode.dvfs_off') = 1 AND "
                              "json_extract(measure, '$.power_mode.note') LIKE 'simulated:%'"),
                     S_RUNS);
    // The point in force, in a Jetson record's keys; the mode's own point for the others.
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs WHERE custom_cores = 2 AND "
                              "json_extract(measure, '$.power_mode.mode_name') = 'custom' AND "
                              "json_extract(measure, '$.power_mode.mode_id') IS NULL AND "
                              "json_extract(measure, '$.power_mode.gpu_max_hz') = 114750000 AND "
                              "json_extract(measure, '$.power_mode.cpu_clusters[0].max_hz') = "
                              "1190400000 AND json_array_length(measure, "
                              "'$.power_mode.online_cpus') = 2"),
                     S_SIMS);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs WHERE custom_cores IS NULL AND "
                              "json_extract(measure, '$.power_mode.mode_name') = "
                              "'MODE_15W_6CORE' AND json_extract(measure, '$.power_mode.mode_id') "
                              "= 2"),
                     S_SIMS);
    // On each board the custom point's epoch takes longer than the mode's.
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs r JOIN epochs e ON e.run = r.id JOIN "
                              "runs m ON m.board = r.board AND m.custom_cores IS NULL JOIN epochs "
                              "em ON em.run = m.id AND em.epoch = e.epoch WHERE r.custom_cores = 2 "
                              "AND e.e2e_us > 2 * em.e2e_us"),
                     S_SIMS);
    out = s_cli(f, 0, (const char *const[]){"runs", "--sweep", "simpoints", NULL});
    assert_non_null(strstr(out, "custom 2c cpu1.19G gpu0.115G on MODE_15W_6CORE +dvfs-off"));
    assert_non_null(strstr(out, "MODE_15W_6CORE +dvfs-off"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sim_points, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
