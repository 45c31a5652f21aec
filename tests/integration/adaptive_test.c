/* Integration: active profiling (issue #12). A coordinator and one simulated Xavier NX; a sweep
 * of LeNet-5 at 40 custom power points submitted with `jetfleet sweep submit --adaptive 12
 * --batch 2`: exactly 12 runs at 12 distinct points (10 spread, then a round of 2 chosen from
 * their results), time and power models stored, predictions for an unprofiled point and a
 * predicted front; the same command again adds nothing. Bad requests (N below the fit's minimum, N
 * above the points, a sweep without custom points, adaptive options without --adaptive) exit 2 with
 * one clear line. */
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

#define S_POINTS 40
#define S_N      12
#define S_CLI_MS 100000

// Speed 10 and telemetry at 1 Hz: the sampler runs at 10 Hz of wall time. At speed 20 a loaded
// machine (CI, ASan tests beside it) stalled the sampler for 285 ms, 5.7 simulated seconds, and
// `jetfleet check` left a run out for the gap (here, beside two ASan tests; in a CI run 9 of
// round 1's 10 were left out, and no model could be fitted): at 10 such a stall stays under the
// 3 periods the check allows.
static const char *const s_agent_args[] = {
    "--sim-speed", "10", "--sim-scale", "1", "--sim-seed", "7", "--log-level", "notice", NULL};

static const char *const s_cpu[] = {"729.6MHz", "1190.4MHz", "1420.8MHz", "1907.2MHz"};
static const char *const s_gpu[] = {"306MHz", "599.25MHz", "1109.25MHz"};
static const char *const s_emc[] = {"800MHz", "1600MHz"};

static const char s_head[] = "name: adapt\n"
                             "target:\n  boards: [sim-1]\n"
                             "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 2}\n"
                             "storage: [nvme]\nworkers: [1]\nbatch_sizes: [64]\n"
                             "telemetry_hz: 1\n";

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    const char *types[] = {"xavier-nx"};
    *state = f;
    return f && jft_fleet_setup_sims(f, 0, types, 1) == 0 ? 0 : -1;
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

// The sweep file: the first 40 of cores {2, 4, 6} x 4 CPU x 3 GPU x 2 EMC clocks.
static void s_write_sweep(jft_fleet_t *f, char *path)
{
    static char text[8192];
    size_t len = (size_t) snprintf(text, sizeof text, "%spower_modes:\n", s_head);
    for (size_t i = 0; i < S_POINTS; i++) {
        len +=
            (size_t) snprintf(text + len, sizeof text - len,
                              "  - custom: {cores: %zu, cpu_freq: %s, gpu_freq: %s, emc_freq: "
                              "%s}\n",
                              2 + 2 * (i / 24), s_cpu[i / 6 % 4], s_gpu[i / 2 % 3], s_emc[i % 2]);
    }
    assert_true(len < sizeof text);
    assert_int_equal(jft_fleet_write(f, "adapt.yaml", text, path), 0);
}

static void s_expect_usage(jft_fleet_t *f, const char *const *args, const char *frag)
{
    char *out = jft_cli_expect(f, 2, S_CLI_MS, args);
    if (!strstr(out, frag)) {
        fail_msg("jetfleet %s %s: '%s' not in:\n%s", args[0], args[1], frag, out);
    }
    free(out);
}

static void s_bad_requests(jft_fleet_t *f, const char *file)
{
    char named[PATH_MAX], none[PATH_MAX], text[1024];
    (void) snprintf(text, sizeof text, "%spower_modes: [MODE_15W_6CORE]\n", s_head);
    assert_int_equal(jft_fleet_write(f, "named.yaml", text, named), 0);
    assert_int_equal(jft_fleet_write(f, "none.yaml", s_head, none), 0);
    s_expect_usage(f, (const char *[]){"sweep", "submit", "--adaptive", "5", file, NULL},
                   "--adaptive 5: too few modes to fit time and power models, need at least 10");
    s_expect_usage(f, (const char *[]){"sweep", "submit", "--adaptive", "41", file, NULL},
                   "--adaptive 41: sweep 'adapt' has only 40 power modes");
    s_expect_usage(f, (const char *[]){"sweep", "submit", "--adaptive", "12", named, NULL},
                   "needs every power_modes entry to be a custom point");
    s_expect_usage(f, (const char *[]){"sweep", "submit", "--adaptive", "12", none, NULL},
                   "--adaptive needs a power_modes list of custom points");
    s_expect_usage(f, (const char *[]){"sweep", "submit", "--batch", "2", file, NULL},
                   "--batch and --seed need --adaptive");
    s_expect_usage(f, (const char *[]){"sweep", "submit", "--adaptive", "x", file, NULL},
                   "--adaptive:");
    // None of them submitted anything.
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM sweeps"), 0);
}

static size_t s_count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

// The id after "model=" on the line that has "target=<target>".
static long s_model_id(const char *out, const char *target)
{
    char want[64];
    (void) snprintf(want, sizeof want, "target=%s ", target);
    for (const char *p = strstr(out, "model="); p; p = strstr(p + 1, "model=")) {
        const char *eol = strchr(p, '\n');
        const char *t = strstr(p, want);
        if (t && (!eol || t < eol)) {
            return strtol(p + 6, NULL, 10);
        }
    }
    return -1;
}

// A point of the sweep that no run profiled: its index, or -1.
static int s_unprofiled(jft_fleet_t *f)
{
    for (int i = 0; i < S_POINTS; i++) {
        char sql[512];
        double cpu = strtod(s_cpu[i / 6 % 4], NULL) * 1e6,
               gpu = strtod(s_gpu[i / 2 % 3], NULL) * 1e6;
        (void) snprintf(
            sql, sizeof sql,
            "SELECT count(*) FROM runs WHERE custom_cores = %d AND custom_cpu_hz = %.0f "
            "AND custom_gpu_hz = %.0f AND custom_emc_hz = %d",
            2 + 2 * (i / 24), cpu, gpu, i % 2 ? 1600000000 : 800000000);
        if (jft_fleet_sql_int(f, sql) == 0) {
            return i;
        }
    }
    return -1;
}

static void s_predict(jft_fleet_t *f, long time_id, long power_id)
{
    int i = s_unprofiled(f);
    assert_true(i >= 0);
    char id[32], cores[16], ids[64];
    (void) snprintf(id, sizeof id, "%ld", time_id);
    (void) snprintf(cores, sizeof cores, "%d", 2 + 2 * (i / 24));
    char *out =
        jft_cli_expect(f, 0, S_CLI_MS,
                       (const char *[]){"model", "predict", "--model", id, "--cores", cores,
                                        "--cpu-freq", s_cpu[i / 6 % 4], "--gpu-freq",
                                        s_gpu[i / 2 % 3], "--emc-freq", s_emc[i % 2], NULL});
    const char *t = strstr(out, "time_s=");
    assert_non_null(t);
    double time_s = strtod(t + 7, NULL);
    assert_true(time_s > 0);
    printf("adaptive_unprofiled_point=%d predicted_time_s=%.3f\n", i, time_s);
    free(out);
    (void) snprintf(ids, sizeof ids, "%ld,%ld", time_id, power_id);
    out =
        jft_cli_expect(f, 0, S_CLI_MS,
                       (const char *[]){"pareto", "--sweep", "adapt", "--workload", "lenet5-mnist",
                                        "--board", "sim-1", "--predicted", ids, NULL});
    printf("adaptive_predicted_front_rows=%zu\n", s_count(out, "predicted"));
    free(out);
}

static void test_adaptive_sweep(void **state)
{
    jft_fleet_t *f = *state;
    char file[PATH_MAX];
    s_write_sweep(f, file);
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    assert_int_equal(jft_fleet_start_sim_agent(f, 0, s_agent_args), 0);
    assert_true(jft_fleet_wait_online(f, 1, 20000));
    s_bad_requests(f, file);

    char *out = jft_cli_expect(f, 0, S_CLI_MS,
                               (const char *[]){"sweep", "submit", "--adaptive", "12", "--batch",
                                                "2", "--timeout", "90", file, NULL});
    printf("%s\n", out);
    assert_non_null(strstr(out, "round 1:"));
    assert_non_null(strstr(out, "round 2:"));
    assert_null(strstr(out, "round 3:"));
    // Round 2 chooses by the models when round 1 left at least 10 valid runs; on a loaded
    // machine `jetfleet check` can leave a run out (late telemetry), and then it spreads again.
    const char *r2 = strstr(out, "round 2: ");
    long valid = r2 ? strtol(r2 + 9, NULL, 10) : -1;
    size_t spread = s_count(out, "reason=spread");
    size_t model = s_count(out, "reason=uncertainty") + s_count(out, "reason=front");
    printf("adaptive_round2_valid=%ld adaptive_spread=%zu adaptive_model_picks=%zu\n", valid,
           spread, model);
    if (valid < 10 || !strstr(out, " 0 left out as invalid")) {
        // Runs were left out: say why (a loaded machine once left out 9 of round 1's 10).
        char check_out[PATH_MAX + 16];
        (void) snprintf(check_out, sizeof check_out, "%s/check.out", f->dir);
        int rc = jft_fleet_cli(f, check_out, S_CLI_MS,
                               (const char *[]){"check", "--sweep", "adapt", NULL});
        char *said = jft_read_file(check_out, NULL);
        printf("jetfleet check --sweep adapt (exit %d):\n%s\n", rc, said ? said : "(no output)");
        free(said);
    }
    assert_int_equal(spread + model, S_N);
    assert_int_equal(model, valid >= 10 ? 2 : 0);
    long long runs = jft_fleet_sql_int(f, "SELECT count(*) FROM sweep_runs WHERE sweep = 'adapt'");
    long long points = jft_fleet_sql_int(
        f, "SELECT count(*) FROM (SELECT DISTINCT custom_cores, custom_cpu_hz, custom_gpu_hz, "
           "custom_emc_hz FROM runs)");
    long long models = jft_fleet_sql_int(f, "SELECT count(*) FROM models WHERE sweep = 'adapt'");
    printf("adaptive_runs=%lld adaptive_points=%lld adaptive_models=%lld\n", runs, points, models);
    assert_int_equal(runs, S_N);
    assert_int_equal(points, S_N);
    long time_id = s_model_id(out, "time"), power_id = s_model_id(out, "power");
    assert_true(time_id > 0 && power_id > 0);
    assert_true(models >= 2);
    free(out);
    s_predict(f, time_id, power_id);

    // The same command again: N points are in the store already, so no round, no new run; the
    // models are fitted again.
    out = jft_cli_expect(f, 0, S_CLI_MS,
                         (const char *[]){"sweep", "submit", "--adaptive", "12", file, NULL});
    assert_null(strstr(out, "round "));
    assert_non_null(strstr(out, "profiled 12 of 40 modes"));
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM sweep_runs"), S_N);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM models"), models + 2);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_adaptive_sweep, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
