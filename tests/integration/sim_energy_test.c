/* Integration: the energy an agent measures for a simulated run against the model's own. A
 * coordinator and one simulated Xavier NX (agent --platform sim:xavier-nx, --sim-speed 2) run
 * LeNet-5 for 4 epochs at 10 Hz; the agent samples its fake power monitor at 20 Hz wall-clock
 * (10 Hz in modelled time) and integrates in modelled time. The same trainer run, repeated
 * alone at full speed, reports the model's energy per rail and epoch (sim_model_energy_mj); the
 * stored epoch energies must agree with it within the bound below, the stored telemetry must
 * carry the model's GPU load and a CPU load, and the records, the measure record and `jetfleet
 * results` must say that the energy is simulated. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S_EPOCHS   4
#define S_SPEED    2.0
#define S_SPEED_S  "2"
#define S_SCALE_S  "0.2"
#define S_SEED_S   "5"
#define S_MODE_ID  "8" // MODE_20W_6CORE
#define S_RAIL     "VDD_IN"
// The longest wall-clock delay between the trainer writing an epoch line and the agent reading
// it that the bound allows for, us: the agent's loop polls every few ms, but may be busy keeping
// the previous epoch's record in its spool (a write and an fsync: tens of ms, measured up to
// ~100 ms here) on a 2-core machine shared with other tests. It is S_SPEED times as long in
// modelled time.
#define S_LATENCY_WALL_US 250000.0

static const char *const s_agent_args[] = {"--sim-speed", S_SPEED_S, "--sim-scale", S_SCALE_S,
                                           "--sim-seed", S_SEED_S, NULL};

static const char s_sweep[] = "name: simenergy\n"
                              "target:\n  boards: [sim-1]\n"
                              "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 4}\n"
                              "power_modes: [MODE_20W_6CORE]\n"
                              "storage: [nvme]\nworkers: [1]\nbatch_sizes: [64]\n"
                              "telemetry_hz: 10\n";

// The model's figures of one epoch, from the repeated trainer run.
typedef struct s_model_epoch {
    int64_t e2e_us;
    double power_mw;  // S_RAIL's modelled power over the epoch
    double energy_mj; // S_RAIL's sim_model_energy_mj
    double gpu_pct;   // the model's GPU load over the epoch (sim_load / sim_next_load), percent
} s_model_epoch_t;

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

static char *s_cli(jft_fleet_t *f, const char *const *args)
{
    return jft_cli_expect(f, 0, 60000, args);
}

static long long s_int(jft_fleet_t *f, const char *sql)
{
    long long v = jft_fleet_sql_int(f, sql);
    if (v < 0) {
        fail_msg("no integer from: %s", sql);
    }
    return v;
}

static double s_real(jft_fleet_t *f, const char *sql)
{
    char *text = jft_fleet_sql_text(f, sql); // the query casts its number to text
    if (!text) {
        fail_msg("no value from: %s", sql);
    }
    double v = strtod(text, NULL);
    free(text);
    return v;
}

static void s_text_is(jft_fleet_t *f, const char *sql, const char *want)
{
    char *text = jft_fleet_sql_text(f, sql);
    if (!text || strcmp(text, want) != 0) {
        fail_msg("%s: got '%s', want '%s'", sql, text ? text : "(null)", want);
    }
    free(text);
}

// The GPU load of the epoch a trainer line announces: the start line's sim_load is epoch 0's,
// epoch n's line's sim_next_load epoch n + 1's.
static void s_model_load(const json_t *line, const char *kind, int n, s_model_epoch_t *ret)
{
    bool start = kind && strcmp(kind, "start") == 0;
    const json_t *load = json_object_get(line, start ? "sim_load" : "sim_next_load");
    int k = start ? 0 : n + 1;
    if (load && k < S_EPOCHS) {
        ret[k].gpu_pct = json_number_value(json_object_get(load, "gpu_pct"));
    }
}

// Repeats the run's trainer alone at full speed (the argv the agent builds, docs/simulator.md)
// and reads the model's figures of each epoch.
static void s_model_run(jft_fleet_t *f, s_model_epoch_t *ret)
{
    char bin[PATH_MAX], out[PATH_MAX + 16], seed[32], prefetch[32];
    jft_bin("jetfleet-train", bin);
    (void) snprintf(out, sizeof out, "%s/model.out", f->dir);
    (void) snprintf(seed, sizeof seed, "%lld", s_int(f, "SELECT seed FROM runs"));
    (void) snprintf(prefetch, sizeof prefetch, "%lld", s_int(f, "SELECT prefetch FROM runs"));
    char *argv[] = {bin, "--simulate", "--sim-params", JF_SIM_PARAMS_SOURCE, "--sim-board-type",
                    "xavier-nx", "--sim-board", "sim-1", "--sim-seed", S_SEED_S, "--sim-mode",
                    S_MODE_ID, "--sim-medium", "nvme", "--sim-speed", "100000", "--sim-scale",
                    S_SCALE_S, "--model", "lenet5", "--workers", "1", "--prefetch", prefetch,
                    "--batch", "64", "--epochs", "4", "--seed", seed, NULL};
    assert_int_equal(jft_run(argv, out, 60000, NULL), 0);
    char *text = jft_read_file(out, NULL);
    assert_non_null(text);
    int n = 0;
    for (char *line = text, *nl = NULL; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl) {
            *nl = '\0';
        }
        json_t *j = json_loads(line, 0, NULL); // stderr's log lines are not JSON: skipped
        const char *kind = json_string_value(json_object_get(j, "kind"));
        s_model_load(j, kind, n, ret);
        if (kind && strcmp(kind, "epoch") == 0 && n < S_EPOCHS) {
            ret[n].e2e_us = json_integer_value(json_object_get(j, "e2e_us"));
            ret[n].power_mw =
                json_number_value(json_object_get(json_object_get(j, "sim_power_mw"), S_RAIL));
            ret[n].energy_mj = json_number_value(
                json_object_get(json_object_get(j, "sim_model_energy_mj"), S_RAIL));
            n++;
        }
        json_decref(j);
    }
    free(text);
    assert_int_equal(n, S_EPOCHS);
}

// The bound, per epoch k. The fake monitor steps to epoch k's power P_k when the agent reads
// epoch k-1's line (from idle, the run's first sample, for epoch 0), and to P_k+1 when it
// reads epoch k's line, which is also where it ends epoch k's interval; it starts the interval
// e2e_us before that. So the interval's start is off the step by the difference of two read
// latencies (each at most S_LATENCY_WALL_US wall-clock, S_SPEED times that in modelled time),
// and at both ends the trapezoids spread a step over at most one sample gap (max_gap_us,
// modelled). After the last epoch the rails stay at P_last until the final sample.
//   |measured - model| <= |P_k - P_k-1| x (max_gap + 2 x latency x speed)
//                         + |P_k+1 - P_k| x max_gap + 1 mJ (rounding)
static double s_bound_mj(const s_model_epoch_t *m, int k, double max_gap_us, double idle_mw)
{
    double start_mw = fabs(m[k].power_mw - (k > 0 ? m[k - 1].power_mw : idle_mw));
    double end_mw = k + 1 < S_EPOCHS ? fabs(m[k + 1].power_mw - m[k].power_mw) : 0.0;
    double start_us = max_gap_us + 2.0 * S_LATENCY_WALL_US * S_SPEED;
    return (start_mw * start_us + end_mw * max_gap_us) / 1e6 + 1.0;
}

static void s_check_energy(jft_fleet_t *f, const s_model_epoch_t *m)
{
    double max_gap_us = s_real(f, "SELECT CAST(json_extract(measure, '$.telemetry.max_gap_us') "
                                  "AS TEXT) FROM runs");
    assert_true(max_gap_us > 0 && max_gap_us < 1e6); // ~0.1 s modelled at 20 Hz wall, speed 2
    double idle_mw = s_real(f, "SELECT CAST(json_extract(sample, '$.input_power_mw') AS TEXT) "
                               "FROM telemetry_json ORDER BY seq, idx LIMIT 1");
    assert_true(idle_mw > 0 && idle_mw < m[0].power_mw);
    for (int k = 0; k < S_EPOCHS; k++) {
        char sql[256];
        (void) snprintf(sql, sizeof sql, "SELECT e2e_us FROM epochs WHERE epoch = %d", k);
        assert_int_equal(s_int(f, sql), m[k].e2e_us); // the same run, in modelled time
        (void) snprintf(sql, sizeof sql,
                        "SELECT CAST(energy_mj AS TEXT) FROM epochs WHERE epoch = %d", k);
        double energy = s_real(f, sql);
        (void) snprintf(sql, sizeof sql,
                        "SELECT CAST(avg_power_mw AS TEXT) FROM epochs WHERE epoch = %d", k);
        // The measured power over the whole epoch: energy is integrated over the time samples
        // cover, and epoch 0's interval can begin a read latency before the run's first
        // sample; avg_power_mw is that energy over the covered time.
        double got = s_real(f, sql) * (double) m[k].e2e_us / 1e6;
        double bound = s_bound_mj(m, k, max_gap_us, idle_mw);
        printf("epoch %d: measured %.1f mJ (%.1f mJ over the covered time), model %.1f mJ, "
               "bound %.1f mJ\n",
               k, got, energy, m[k].energy_mj, bound);
        assert_true(fabs(m[k].energy_mj - m[k].power_mw * (double) m[k].e2e_us / 1e6) < 1e-3);
        assert_true(fabs(got - m[k].energy_mj) <= bound);
        // What is not covered is at most the two read latencies at the epoch's power.
        assert_true(energy <= got + 1.0 &&
                    got - energy <= m[k].power_mw * 2.0 * S_LATENCY_WALL_US * S_SPEED / 1e6);
    }
}

// The stored samples carry the model's load (docs/simulator.md, "Load"): the GPU load file holds
// an epoch's load (per mille) while it runs, and the CPU counters advance with the training
// process and the worker.
static void s_check_load(jft_fleet_t *f, const s_model_epoch_t *m)
{
    double top = 0.0;
    for (int k = 0; k < S_EPOCHS; k++) {
        top = fmax(top, m[k].gpu_pct);
    }
    double got = s_real(f, "SELECT CAST(max(json_extract(sample, '$.gpu_load_pct')) AS TEXT) "
                           "FROM telemetry_json");
    printf("gpu_load_pct: stored max %.1f, model's epochs max %.2f\n", got, top);
    assert_true(top > 0.0 && fabs(got - top) <= 0.05 + 1e-9);
    assert_true(s_int(f, "SELECT count(*) FROM telemetry_json WHERE "
                         "json_extract(sample, '$.cpu_load_pct') > 0") > 0);
}

static void s_check_labels(jft_fleet_t *f)
{
    s_text_is(f, "SELECT json_extract(info, '$.platform') FROM runs", "sim");
    s_text_is(f, "SELECT json_extract(measure, '$.energy.source') FROM runs", "simulated");
    s_text_is(f, "SELECT json_extract(measure, '$.energy.total') FROM runs", "input-rail");
    s_text_is(f, "SELECT json_extract(measure, '$.telemetry.time_base') FROM runs",
              "simulated, speed 2");
    assert_int_equal(s_int(f, "SELECT json_extract(measure, '$.telemetry.wall_rate_hz') FROM "
                              "runs"),
                     20);
    char *out = s_cli(f, (const char *const[]){"results", "--sweep", "simenergy", NULL});
    assert_non_null(strstr(out, "energy_source"));
    assert_non_null(strstr(out, " simulated"));
    assert_non_null(strstr(out, "rows marked sim are simulated"));
    free(out);
}

static void test_sim_energy(void **state)
{
    jft_fleet_t *f = *state;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    assert_int_equal(jft_fleet_start_sim_agent(f, 0, s_agent_args), 0);
    assert_true(jft_fleet_wait_online(f, 1, 30000));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "simenergy.yaml", s_sweep, sweep), 0);
    free(s_cli(f, (const char *const[]){"sweep", "submit", sweep, "--wait", NULL}));
    assert_int_equal(s_int(f, "SELECT count(*) FROM runs WHERE state = 'done'"), 1);
    assert_int_equal(s_int(f, "SELECT count(*) FROM epochs WHERE energy_mj IS NOT NULL"),
                     S_EPOCHS);
    s_model_epoch_t m[S_EPOCHS] = {{0}};
    s_model_run(f, m);
    s_check_energy(f, m);
    s_check_load(f, m);
    s_check_labels(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sim_energy, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
