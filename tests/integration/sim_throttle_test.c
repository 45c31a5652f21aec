/* Integration (issue #12): simulated throttling end to end. Two simulated Xavier NX boards run
 * one run each; sim-1's parameter file (a copy of agent/share/sim_params.yaml) has
 * thermal.throttle {temp_c: 42, gpu_pct: 50}: once a zone reaches 42 C (idle is about 38 C, a
 * training epoch heats towards 64 C) its agent writes the GPU clock at half the mode's. The
 * agent's measure record counts the samples below the mode's clock, and `jetfleet check` flags
 * sim-1's run as throttled with the numbers and not sim-2's. Both records carry the other load
 * (the host's, for a sim board), judged only with an explicit bound. Prints the figures.
 * Simulated. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S_SIMS     2
#define S_CLI_MS   60000
#define S_TEXT_MAX (1 << 16)
#define S_THROTTLE "      throttle: {temp_c: 42, gpu_pct: 50}\n"
#define S_NX_BOARD "\n  xavier-nx:\n"
#define S_OFFLINE  "      offline_zones:"

static const char *const s_types[S_SIMS] = {"xavier-nx", "xavier-nx"};

static const char s_sweep[] = "name: hot\n"
                              "target:\n  device_types: [xavier-nx]\n"
                              "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 3}\n"
                              "power_modes: [MODE_15W_6CORE]\n"
                              "storage: [nvme]\nworkers: [2]\nbatch_sizes: [64]\n"
                              "telemetry_hz: 1\n";

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    *state = f;
    return f && jft_fleet_setup_sims(f, 0, s_types, S_SIMS) == 0 ? 0 : -1;
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

// The shipped parameter file with the throttle line added to the Xavier NX's thermal section,
// written into the test's directory; its path into out.
static void s_write_params(jft_fleet_t *f, char *out)
{
    static char text[S_TEXT_MAX];
    static char edited[S_TEXT_MAX + sizeof S_THROTTLE];
    FILE *in = fopen(JF_SIM_PARAMS_SOURCE, "r");
    assert_non_null(in);
    size_t n = fread(text, 1, sizeof text - 1, in);
    fclose(in);
    assert_true(n > 0 && n < sizeof text - 1);
    text[n] = '\0';
    const char *board = strstr(text, S_NX_BOARD);
    const char *at = board ? strstr(board, S_OFFLINE) : NULL;
    assert_non_null(at);
    size_t head = (size_t) (at - text);
    memcpy(edited, text, head);
    (void) snprintf(edited + head, sizeof edited - head, "%s%s", S_THROTTLE, at);
    assert_int_equal(jft_fleet_write(f, "sim_params_hot.yaml", edited, out), 0);
}

static long long s_sql(jft_fleet_t *f, const char *board, const char *expr)
{
    char sql[512];
    (void) snprintf(sql, sizeof sql,
                    "SELECT coalesce(%s, -1) FROM runs WHERE board = '%s' AND state = 'done'", expr,
                    board);
    return jft_fleet_sql_int(f, sql);
}

// Runs the CLI with args expecting exit code rc, and checks that its output holds text (or, with
// present false, does not).
static void s_cli_says(jft_fleet_t *f, int rc, const char *const *args, const char *text,
                       bool present)
{
    char *out = jft_cli_expect(f, rc, S_CLI_MS, args);
    if (present) {
        assert_non_null(strstr(out, text));
    } else {
        assert_null(strstr(out, text));
    }
    free(out);
}

// Other load end to end: each run's record has it; sim boards are not judged on it by default
// (their times are modelled), an explicit bound judges them on the host's load. The host's
// other load is not under the test's control (other processes run beside it), so the bounds are
// the two extremes: 0.001% (the coordinator alone works during a run) and 100%.
static void s_other_load(jft_fleet_t *f)
{
    for (size_t b = 0; b < S_SIMS; b++) {
        const char *board = b == 0 ? "sim-1" : "sim-2";
        assert_true(s_sql(f, board, "json_extract(measure, '$.other_load.intervals')") > 0);
        // GPU load before epoch 0: a sim board's is modelled, and nothing else loads its GPU.
        long long before = s_sql(f, board, "json_extract(measure, '$.gpu_before.samples')");
        long long idle = s_sql(f, board, "json_extract(measure, '$.gpu_before.max_pct') = 0");
        printf("%s_gpu_before_samples=%lld\n%s_gpu_before_all_zero=%lld\n", board, before, board,
               idle);
        assert_true(before >= 1);
        assert_int_equal(idle, 1);
        printf("%s_other_load_mean_pct_x10=%lld\n", board,
               s_sql(f, board,
                     "CAST(10 * json_extract(measure, '$.other_load.mean_pct') AS "
                     "INTEGER)"));
    }
    char *out = jft_cli_expect(f, 0, S_CLI_MS,
                               (const char *const[]){"check", "--sweep", "hot", "--format", "csv",
                                                     "--max-other-load", "0.001", NULL});
    assert_non_null(strstr(out, "other-load 2"));
    assert_non_null(strstr(out, "(a sim board: the host's load)"));
    free(out);
    s_cli_says(f, 0,
               (const char *const[]){"check", "--sweep", "hot", "--max-other-load", "100", NULL},
               "other-load", false);
    s_cli_says(f, 2,
               (const char *const[]){"check", "--sweep", "hot", "--max-other-load", "lots", NULL},
               "--max-other-load: want a percentage in (0, 100], got 'lots'", true);
    // The same bound from fleet.yaml's coordinator.max_other_load: check and the analysis
    // commands use it; check's flag overrides it.
    assert_int_equal(jft_fleet_set_coord(f, NULL, "  max_other_load: 0.001\n"), 0);
    s_cli_says(f, 0, (const char *const[]){"check", "--sweep", "hot", "--format", "csv", NULL},
               "other-load 2", true);
    // Both runs over it: the analysis has nothing left, and says why.
    s_cli_says(f, 1, (const char *const[]){"variability", "--sweep", "hot", NULL},
               "left out: throttled 1, other-load 2", true);
    s_cli_says(f, 0,
               (const char *const[]){"check", "--sweep", "hot", "--max-other-load", "100", NULL},
               "other-load", false);
    assert_int_equal(jft_fleet_set_coord(f, NULL, NULL), 0);
}

static void test_throttled_run_flagged(void **state)
{
    jft_fleet_t *f = *state;
    char params[PATH_MAX];
    s_write_params(f, params);
    const char *const hot_args[] = {
        "--sim-speed",  "20",   "--sim-scale", "2",      "--sim-seed", "7",
        "--sim-params", params, "--log-level", "notice", NULL};
    const char *const cool_args[] = {"--sim-speed", "20",          "--sim-scale", "2", "--sim-seed",
                                     "7",           "--log-level", "notice",      NULL};
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    assert_int_equal(jft_fleet_start_sim_agent(f, 0, hot_args), 0);
    assert_int_equal(jft_fleet_start_sim_agent(f, 1, cool_args), 0);
    assert_true(jft_fleet_wait_online(f, S_SIMS, 60000));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "hot.yaml", s_sweep, sweep), 0);
    free(jft_cli_expect(f, 0, 120000,
                        (const char *const[]){"sweep", "submit", sweep, "--wait", NULL}));
    static const char *const boards[S_SIMS] = {"sim-1", "sim-2"};
    for (size_t b = 0; b < S_SIMS; b++) {
        printf("%s_gpu_samples=%lld\n%s_gpu_below=%lld\n%s_gpu_lowest_hz=%lld\n"
               "%s_gpu_cap_hz=%lld\n%s_max_gpu_mc=%lld\n",
               boards[b], s_sql(f, boards[b], "json_extract(measure, '$.thermal.gpu_samples')"),
               boards[b], s_sql(f, boards[b], "json_extract(measure, '$.thermal.gpu_below')"),
               boards[b], s_sql(f, boards[b], "json_extract(measure, '$.thermal.gpu_lowest_hz')"),
               boards[b], s_sql(f, boards[b], "json_extract(measure, '$.thermal.gpu_cap_hz')"),
               boards[b],
               s_sql(f, boards[b], "json_extract(measure, '$.thermal.max_temps_mc.GPU')"));
    }
    long long cap = s_sql(f, "sim-1", "json_extract(measure, '$.thermal.gpu_cap_hz')");
    assert_true(s_sql(f, "sim-1", "json_extract(measure, '$.thermal.gpu_below')") > 0);
    assert_int_equal(s_sql(f, "sim-1", "json_extract(measure, '$.thermal.gpu_lowest_hz')"),
                     (cap + 1) / 2);
    assert_int_equal(s_sql(f, "sim-2", "json_extract(measure, '$.thermal.gpu_below')"), 0);
    char *out = jft_cli_expect(
        f, 0, S_CLI_MS, (const char *const[]){"check", "--sweep", "hot", "--format", "csv", NULL});
    const char *hot = strstr(out, ",sim-1,");
    const char *cool = strstr(out, ",sim-2,");
    assert_non_null(hot);
    assert_non_null(cool);
    const char *hot_end = strchr(hot, '\n');
    const char *cool_end = strchr(cool, '\n');
    const char *flag = strstr(hot, "throttled");
    assert_true(flag && (!hot_end || flag < hot_end));
    assert_non_null(strstr(hot, "GPU below the mode's"));
    const char *no_flag = strstr(cool, "throttled");
    assert_true(!no_flag || (cool_end && no_flag > cool_end));
    printf("check_output_begin\n%s\ncheck_output_end\n", out);
    free(out);
    s_other_load(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_throttled_run_flagged, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
