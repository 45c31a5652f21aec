/* Integration: `jetfleet concurrent search` (issue #15, docs/concurrent.md "The command"). A
 * coordinator and one simulated AGX Orin (the fleet's host board is never started); the gradient
 * descent with a cap of 6 profiles runs each point as a concurrent run (LeNet-5 training beside
 * MobileNetV3 inference) through the coordinator: the answer is one of the profiled runs, its
 * stored records meet both budgets (which leave some profiled points out), no faster stored run
 * meets them, and the sweep holds exactly the reported number of runs. The same search with a power
 * budget no point meets reuses every run (none added) and says so; bad arguments exit 2. A
 * simulated Xavier NX's search covers its family's clock table until its agent registers and its
 * own (no 2133 MHz EMC step) after. Simulated.
 */
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

#define S_CLI_MS   100000
#define S_PROFILES "6"
#define S_LAT_MS   "500"
#define S_POWER_W  "11"

static const char *const s_agent_args[] = {
    "--sim-speed", "20", "--sim-scale", "0.2", "--sim-seed", "7", "--log-level", "notice", NULL};

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    const char *types[] = {"orin-agx", "xavier-nx"};
    *state = f;
    return f && jft_fleet_setup_sims(f, 1, types, 2) == 0 ? 0 : -1;
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
        fail_msg("jetfleet concurrent search: '%s' not in:\n%s", frag, out);
    }
    free(out);
}

static void s_bad_requests(jft_fleet_t *f, const char *board)
{
    const char *base[] = {
        "concurrent",          "search",       "--board",          board,         "--policy", "gd",
        "--workload",          "lenet5-mnist", "--infer-model",    "mobilenetv3", "--rate",   "20",
        "--latency-budget-ms", S_LAT_MS,       "--power-budget-w", S_POWER_W};
    const char *args[24];
    const struct {
        int at;
        const char *value, *frag;
    } rows[] = {{5, "sa", "--policy 'sa': expected gd or al"},
                {7, "lenet5-cifar9", "--workload 'lenet5-cifar9': expected one of"},
                {9, "gpt", "--infer-model 'gpt': expected one of"},
                {11, "-3", "--rate '-3': expected requests per second"},
                {13, "0", "--latency-budget-ms:"},
                {15, "x", "--power-budget-w 'x': expected watts"},
                {3, "nope", "--board 'nope': no such board in the fleet"}};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        memcpy(args, base, sizeof base);
        args[rows[r].at] = rows[r].value;
        args[16] = NULL;
        s_expect(f, 2, args, rows[r].frag);
    }
    s_expect(f, 2, (const char *[]){"concurrent", "search", "--board", board, NULL},
             "--policy is required");
    s_expect(f, 2, (const char *[]){"concurrent", "find", NULL}, "expected 'search'");
    // The fleet's host board (never started): no clock table, so no space to search.
    memcpy(args, base, sizeof base);
    args[3] = jft_fleet_board(f, "host-1");
    args[16] = NULL;
    s_expect(f, 2, args, "a board with custom power modes and a storage medium is needed");
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM sweeps"), 0);
}

static const char *s_after(const char *out, const char *key)
{
    const char *p = strstr(out, key);
    assert_non_null(p);
    return p + strlen(key);
}

static char *s_search_for(jft_fleet_t *f, const char *board, int code, const char *power_w,
                          const char *timeout_s)
{
    return jft_cli_expect(f, code, S_CLI_MS,
                          (const char *[]){"concurrent",
                                           "search",
                                           "--board",
                                           board,
                                           "--policy",
                                           "gd",
                                           "--workload",
                                           "lenet5-mnist",
                                           "--infer-model",
                                           "mobilenetv3",
                                           "--rate",
                                           "20",
                                           "--latency-budget-ms",
                                           S_LAT_MS,
                                           "--power-budget-w",
                                           power_w,
                                           "--max-profiles",
                                           S_PROFILES,
                                           "--timeout",
                                           timeout_s,
                                           NULL});
}

static char *s_search(jft_fleet_t *f, const char *board, int code, const char *power_w)
{
    return s_search_for(f, board, code, power_w, "80");
}

// The chosen point's run in the sweep and its records within both budgets.
static void s_check_answer(jft_fleet_t *f, const char *out, long long profiled)
{
    const char *c = s_after(out, "chosen: ");
    int cores = 0, batch = 0;
    double cpu = 0, gpu = 0, emc = 0;
    assert_int_equal(sscanf(c, "cores=%d cpu_mhz=%lf gpu_mhz=%lf emc_mhz=%lf infer_batch=%d",
                            &cores, &cpu, &gpu, &emc, &batch),
                     5);
    char sql[1024];
    (void) snprintf(sql, sizeof sql,
                    "SELECT count(*) FROM runs r JOIN sweep_runs s ON s.run = r.id WHERE "
                    "s.sweep LIKE 'csearch-%%' AND r.state = 'done' AND r.custom_cores = %d AND "
                    "abs(r.custom_cpu_hz - %.0f) < 1e5 AND abs(r.custom_gpu_hz - %.0f) < 1e4 AND "
                    "abs(r.custom_emc_hz - %.0f) < 1e6 AND r.concurrent_infer_batch = %d AND "
                    "(SELECT max(e.concurrent_latency_p99_us) <= %s * 1000 AND "
                    "avg(e.avg_power_mw) <= %s * 1000 FROM epochs e WHERE e.run = r.id AND "
                    "e.warmup = 0 AND e.attempt = r.attempt)",
                    cores, cpu * 1e6, gpu * 1e6, emc * 1e6, batch, S_LAT_MS, S_POWER_W);
    long long within = jft_fleet_sql_int(f, sql);
    printf("csearch_chosen_within_budget_runs=%lld\n", within);
    assert_int_equal(within, 1);
    // No other run of the sweep within both budgets trained faster than the answer.
    double sps = strtod(s_after(out, "train_samples_per_s="), NULL);
    (void) snprintf(sql, sizeof sql,
                    "SELECT count(*) FROM runs r JOIN sweep_runs s ON s.run = r.id WHERE "
                    "r.state = 'done' AND (SELECT max(e.concurrent_latency_p99_us) <= %s * 1000 "
                    "AND avg(e.avg_power_mw) <= %s * 1000 AND avg(e.samples * 1e6 / e.e2e_us) > "
                    "%.6f * 1.001 FROM epochs e WHERE e.run = r.id AND e.warmup = 0 AND "
                    "e.attempt = r.attempt)",
                    S_LAT_MS, S_POWER_W, sps);
    printf("csearch_train_samples_per_s=%.2f\n", sps);
    long long better = jft_fleet_sql_int(f, sql);
    printf("csearch_better_runs_within_budget=%lld\n", better);
    assert_int_equal(better, 0);
    long long runs = jft_fleet_sql_int(f, "SELECT count(*) FROM sweep_runs");
    printf("csearch_modes_profiled=%lld csearch_runs=%lld\n", profiled, runs);
    assert_int_equal(runs, profiled);
}

// The EMC steps of a search's space (its line's "space=AxBxCxDxE").
static int s_emc_steps(const char *out, const char *source)
{
    int d[5] = {0};
    assert_int_equal(
        sscanf(s_after(out, " space="), "%dx%dx%dx%dx%d", &d[0], &d[1], &d[2], &d[3], &d[4]), 5);
    assert_non_null(strstr(out, source));
    return d[3];
}

// The search's space is the board's own (docs/protocol.md §4.1.1 `clocks`) once its agent has
// registered, its family's before. sim-2 simulates a Xavier NX, whose family table borrows the
// AGX Xavier's 2133 MHz EMC step, above the NX's 1866 MHz cap. Each search is cut off by a 1 s
// timeout (exit 1) after its space line: only the space is checked here.
static void s_own_clocks(jft_fleet_t *f)
{
    const char *nx = jft_fleet_board(f, "sim-2");
    char *out = s_search_for(f, nx, 1, S_POWER_W, "1");
    int family = s_emc_steps(out, "clocks=family");
    free(out);
    assert_int_equal(jft_fleet_start_sim_agent(f, 1, s_agent_args), 0);
    assert_true(jft_fleet_wait_online(f, 2, 20000));
    char sql[256];
    (void) snprintf(sql, sizeof sql, "SELECT facts FROM boards WHERE name = '%s'", nx);
    char *facts = jft_fleet_sql_text(f, sql);
    assert_non_null(facts);
    const char *emc = strstr(facts, "\"emc_hz\":[");
    assert_non_null(emc);
    assert_non_null(strstr(emc, "1866000000]"));
    assert_null(strstr(facts, "2133000000"));
    free(facts);
    out = s_search_for(f, nx, 1, S_POWER_W, "1");
    int own = s_emc_steps(out, "clocks=board");
    free(out);
    printf("csearch_nx_emc_steps_family=%d csearch_nx_emc_steps_board=%d\n", family, own);
    assert_int_equal(own, family - 1);
}

static void test_concurrent_search(void **state)
{
    jft_fleet_t *f = *state;
    const char *board = jft_fleet_board(f, "sim-1");
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    assert_int_equal(jft_fleet_start_sim_agent(f, 0, s_agent_args), 0);
    assert_true(jft_fleet_wait_online(f, 1, 20000));
    s_bad_requests(f, board);

    char *out = s_search(f, board, 0, S_POWER_W);
    printf("%s\n", out);
    long long profiled = strtoll(s_after(out, "modes_profiled="), NULL, 10);
    long long submitted = strtoll(s_after(out, "runs_submitted="), NULL, 10);
    assert_true(profiled >= 1 && profiled <= 6);
    assert_int_equal(submitted, profiled);
    s_check_answer(f, strstr(out, "chosen: "), profiled);
    free(out);

    // No point within 1 mW: the same start (the diagonal's top and bottom) from the store, so
    // fewer new runs than points profiled.
    long long before = jft_fleet_sql_int(f, "SELECT count(*) FROM runs");
    out = s_search(f, board, 1, "0.001");
    assert_non_null(strstr(out, "no profiled point meets both budgets"));
    long long profiled2 = strtoll(s_after(out, "modes_profiled="), NULL, 10);
    long long added = jft_fleet_sql_int(f, "SELECT count(*) FROM runs") - before;
    printf("csearch_second_profiled=%lld csearch_second_new_runs=%lld\n", profiled2, added);
    assert_true(profiled2 >= 2 && added <= profiled2 - 2);
    free(out);

    // The active search with 6 profiles, 2 of them re-runs (two corners, two seeded random
    // points, then two re-runs of Pareto-optimal ones): whatever it answers, its sweep holds
    // exactly the runs it reported, the re-runs under a seed of their own.
    char path[PATH_MAX + 16];
    (void) snprintf(path, sizeof path, "%s/al.out", f->dir);
    int rc = jft_fleet_cli(f, path, S_CLI_MS,
                           (const char *[]){"concurrent",
                                            "search",
                                            "--board",
                                            board,
                                            "--policy",
                                            "al",
                                            "--workload",
                                            "lenet5-mnist",
                                            "--infer-model",
                                            "mobilenetv3",
                                            "--rate",
                                            "20",
                                            "--latency-budget-ms",
                                            S_LAT_MS,
                                            "--power-budget-w",
                                            S_POWER_W,
                                            "--max-profiles",
                                            "6",
                                            "--reruns",
                                            "2",
                                            "--timeout",
                                            "80",
                                            NULL});
    out = jft_read_file(path, NULL);
    assert_non_null(out);
    printf("%s\ncsearch_al_exit=%d\n", out, rc);
    assert_true(rc == 0 || (rc == 1 && strstr(out, "no profiled point meets both budgets")));
    long long al = strtoll(s_after(out, "modes_profiled="), NULL, 10);
    long long al_runs = jft_fleet_sql_int(f, "SELECT count(*) FROM sweep_runs WHERE sweep IN "
                                             "(SELECT name FROM sweeps ORDER BY submitted_us DESC "
                                             "LIMIT 1)");
    long long seeds = jft_fleet_sql_int(f, "SELECT count(DISTINCT r.seed) FROM runs r JOIN "
                                           "sweep_runs s ON s.run = r.id WHERE s.sweep IN (SELECT "
                                           "name FROM sweeps ORDER BY submitted_us DESC LIMIT 1)");
    long long dof = strtoll(s_after(out, "noise_dof="), NULL, 10);
    printf("csearch_al_modes_profiled=%lld csearch_al_runs=%lld csearch_al_seeds=%lld "
           "csearch_al_noise_dof=%lld\n",
           al, al_runs, seeds, dof);
    assert_int_equal(al, 6);
    assert_int_equal(al_runs, al);
    // Two re-runs: runs of their own (another seed), and the noise learned from them.
    assert_true(seeds >= 2);
    assert_int_equal(dof, 2);
    assert_non_null(strstr(out, "rerun 5:"));
    free(out);
    s_own_clocks(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_concurrent_search, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
