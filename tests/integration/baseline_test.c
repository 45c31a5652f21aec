/* Integration: idle baselines on a simulated board (docs/baseline.md). A coordinator (agents on
 * an ipc endpoint in the test's directory, so no other test's agent can reach it) and one Xavier
 * NX sim agent: `jetfleet baseline show`, `results --dynamic` and `export --dynamic` before any
 * baseline fail with a clear message; `jetfleet baseline` measures the eight idle phases (default
 * and lowest mode x DVFS on/off x telemetry on/off), each phase's idle power is the simulator's
 * idle model of that phase (VDD_IN, within 1 %), the summary's differences follow, and
 * `results --dynamic` and `export --dynamic` then subtract the baseline from a training run's
 * energy. Prints its figures as name=value. */
#include "jft_check.h"
#include "jft_fleet.h"

#include "jf_board.h"
#include "sim_idle.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S_SEED     "5"
#define S_IDLE_S   "60"
#define S_TOL      0.01 // measured idle power against the model's: trapezoids on constant rails
#define S_DEF_MODE 2    // MODE_15W_6CORE, the Xavier NX default (jf_board.c)
#define S_LOW_MODE 3    // MODE_10W_2CORE (jf_board_idle.c)
#define S_INPUT    "VDD_IN"

static const char *const s_agent_args[] = {"--sim-speed", "100",    "--sim-seed", S_SEED,
                                           "--log-level", "notice", NULL};

static const char s_train[] = "name: bl-train\n"
                              "target:\n  boards: [sim-1]\n"
                              "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 2}\n"
                              "power_modes: [MODE_15W_6CORE]\n"
                              "storage: [nvme]\nworkers: [1]\nbatch_sizes: [64]\n";

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    const char *types[] = {"xavier-nx"};
    *state = f;
    char agents[PATH_MAX];
    int rc = f ? jft_fleet_setup_sims(f, 1, types, 1) : -1; // host-1, sim-1
    (void) snprintf(agents, sizeof agents, "ipc://%s/agents.sock", f ? f->dir : "");
    return rc == 0 && jft_fleet_set_coord(f, agents, NULL) == 0 ? 0 : -1;
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

// The model's VDD_IN at one phase of the board sim-1 (agent --sim-seed S_SEED).
static double s_model_mw(int mode_id, bool dvfs_off, int telemetry_hz)
{
    jf_err_t err = {0};
    sim_model_t *m = sim_model_load(JF_SIM_PARAMS_SOURCE, &err);
    assert_non_null(m);
    sim_idle_in_t in = {
        .board_type = JF_BOARD_XAVIER_NX, .dvfs_off = dvfs_off, .telemetry_hz = telemetry_hz};
    assert_int_equal(sim_model_mode_op(m, JF_BOARD_XAVIER_NX, mode_id, &in.op, &err), 0);
    sim_model_board_factors(m, JF_BOARD_XAVIER_NX, strtoull(S_SEED, NULL, 10), "sim-1",
                            &in.factors);
    sim_epoch_out_t out = {0};
    assert_int_equal(sim_idle_rails(m, &in, &out, &err), 0);
    sim_model_destroy(&m);
    for (size_t i = 0; i < out.n_rails; i++) {
        if (strcmp(out.rails[i].name, S_INPUT) == 0) {
            return (double) out.rails[i].power_mw;
        }
    }
    fail_msg("no %s rail in the model", S_INPUT);
    return 0.0;
}

// The stored idle power of one phase (the idle epoch's mean power).
static double s_stored_mw(jft_fleet_t *f, int mode_id, int dvfs_off, int telemetry_off)
{
    char sql[512];
    (void) snprintf(sql, sizeof sql,
                    "SELECT CAST(round(e.avg_power_mw * 1000) AS INTEGER) FROM runs r JOIN epochs "
                    "e ON e.run = r.id AND e.attempt = r.attempt WHERE r.idle_s > 0 AND "
                    "r.state = 'done' AND r.power_mode_id = %d AND r.dvfs_off = %d AND "
                    "r.telemetry_off = %d",
                    mode_id, dvfs_off, telemetry_off);
    long long v = jft_fleet_sql_int(f, sql);
    assert_true(v > 0);
    return (double) v / 1000.0;
}

static void s_check_phase(jft_fleet_t *f, int mode_id, bool dvfs_off, bool tel_off, int hz)
{
    double want = s_model_mw(mode_id, dvfs_off, tel_off ? 0 : hz);
    double got = s_stored_mw(f, mode_id, dvfs_off, tel_off);
    printf("idle_mw_mode%d_dvfs_%s_telemetry_%s=%.1f model=%.1f\n", mode_id,
           dvfs_off ? "off" : "on", tel_off ? "off" : "on", got, want);
    assert_true(fabs(got - want) <= S_TOL * want);
}

// Before any baseline: a clear message and exit 1, never a zero.
static void s_check_missing(jft_fleet_t *f)
{
    char *out = jft_cli_expect(f, 1, 30000,
                               (const char *const[]){"baseline", "show", "--board", "sim-1", NULL});
    assert_non_null(strstr(out, "no idle baseline stored for board 'sim-1'"));
    free(out);
    out = jft_cli_expect(
        f, 1, 30000, (const char *const[]){"results", "--sweep", "bl-train", "--dynamic", NULL});
    assert_non_null(strstr(out, "no idle baseline with telemetry on stored for board 'sim-1'"));
    free(out);
    out = jft_cli_expect(f, 1, 30000,
                         (const char *const[]){"export", "--sweep", "bl-train", "--what", "results",
                                               "--dynamic", NULL});
    assert_non_null(strstr(out, "no dynamic energy: no idle baseline"));
    free(out);
}

// A real board's path: host-1 runs jetfleet-train --idle-s for real (one mode, no DVFS off on a
// host: two runs); this VM reads no power, so the phases are shown without idle power, and no
// summary line is printed rather than a zero.
static void s_check_host(jft_fleet_t *f)
{
    char *out = jft_cli_expect(f, 0, 120000,
                               (const char *const[]){"baseline", "--board", "host-1", "--seconds",
                                                     "1", "--timeout", "100", NULL});
    printf("%s", out);
    assert_non_null(strstr(out, "(no power)"));
    assert_null(strstr(out, "idle_mw="));
    free(out);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM runs r JOIN epochs e ON e.run = "
                                          "r.id WHERE r.board = 'host-1' AND r.idle_s = 1 AND "
                                          "r.state = 'done' AND e.e2e_us >= 1000000 AND "
                                          "e.samples = 0"),
                     2);
}

static void test_baseline(void **state)
{
    jft_fleet_t *f = *state;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    assert_int_equal(jft_fleet_start_sim_agent(f, 0, s_agent_args), 0);
    assert_int_equal(jft_fleet_start_agent(f, 0, NULL), 0);
    assert_true(jft_fleet_wait_online(f, 2, 60000));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "bl-train.yaml", s_train, sweep), 0);
    free(jft_cli_expect(f, 0, 120000,
                        (const char *const[]){"sweep", "submit", sweep, "--wait", NULL}));
    s_check_missing(f);

    char *out = jft_cli_expect(f, 0, 120000,
                               (const char *const[]){"baseline", "--board", "sim-1", "--seconds",
                                                     S_IDLE_S, "--timeout", "100", NULL});
    printf("%s", out);
    assert_non_null(strstr(out, "dvfs_off_cost_mw="));
    assert_non_null(strstr(out, "telemetry_cost_mw="));
    assert_non_null(strstr(out, "lowest_saving_mw="));
    assert_non_null(strstr(out, "simulator's idle model"));
    free(out);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM runs WHERE idle_s = " S_IDLE_S
                                          " AND state = 'done' AND board = 'sim-1'"),
                     8);
    int hz = (int) jft_fleet_sql_int(f, "SELECT telemetry_hz FROM runs WHERE idle_s > 0 LIMIT 1");
    for (int m = 0; m < 2; m++) {
        for (int d = 0; d < 2; d++) {
            s_check_phase(f, m ? S_LOW_MODE : S_DEF_MODE, d, false, hz);
            s_check_phase(f, m ? S_LOW_MODE : S_DEF_MODE, d, true, hz);
        }
    }
    // Telemetry-off phases were sampled at their start and end only.
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM runs WHERE telemetry_off = 1 AND "
                                          "json_extract(measure, '$.telemetry.samples') = 2"),
                     4);

    out = jft_cli_expect(
        f, 0, 30000, (const char *const[]){"results", "--sweep", "bl-train", "--dynamic", NULL});
    assert_non_null(strstr(out, "dynamic_energy_mj"));
    assert_null(strstr(out, "rows have no dynamic energy"));
    free(out);
    // The export's epochs carry the two columns too (CSV header).
    out = jft_cli_expect(f, 0, 30000,
                         (const char *const[]){"export", "--sweep", "bl-train", "--what", "epochs",
                                               "--dynamic", NULL});
    assert_non_null(strstr(out, ",idle_mw,dynamic_energy_mj"));
    free(out);
    // The dynamic energy the CLI prints is the stored energy minus the idle power x time.
    double idle = s_stored_mw(f, S_DEF_MODE, 0, 0);
    char sql[256];
    (void) snprintf(sql, sizeof sql,
                    "SELECT CAST(round(avg(energy_mj - %.6f * e2e_us / 1e6)) AS INTEGER) FROM "
                    "epochs WHERE epoch > 0",
                    idle);
    long long dyn_mj = jft_fleet_sql_int(f, sql);
    printf("train_dynamic_energy_mj=%lld\n", dyn_mj);
    assert_true(dyn_mj > 0);
    s_check_host(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_baseline, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
