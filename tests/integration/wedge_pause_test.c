/* Integration (issue #11, reliability): the fleet recovers from coordinator pauses. Eight
 * simulated boards run a sweep with a 500 ms heartbeat and a 3 s heartbeat timeout; five times
 * during it the coordinator is stopped (SIGSTOP) for twice the heartbeat timeout, so that every
 * agent gives up its connection and reconnects, then continued. After each continue every agent
 * must be registered again within 2 heartbeat intervals (x JF_TEST_TIMEOUT_SCALE), and the
 * sweep must end with every run stored done once, with all its epochs and samples. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"
#include "jft_sweep.h"

#include "jf_units.h"

#include <czmq.h>

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S_SIMS          8
#define S_RUNS          (S_SIMS * 2) // boards x power modes
#define S_PAUSES        5
#define S_HB_MS         1000 // the demo's heartbeat interval
#define S_HB_TIMEOUT_MS 3000
#define S_BACK_MS       (2 * S_HB_MS) // every agent registered again within this, scaled
#define S_BACK_WAIT_MS  20000         // how long to wait for a late one, to report its figure
#define S_RUN_MS        2000          // the sweep runs undisturbed this long between pauses
#define S_SWEEP_MS      90000

static const char *const s_agent_args[] = {
    "--sim-speed", "8", "--sim-scale", "0.05", "--sim-seed", "5", "--log-level", "info", NULL};

static const char s_sweep[] = "name: pauses\n"
                              "target:\n  device_types: [xavier-nx]\n"
                              "workloads:\n  - {model: resnet18, dataset: cifar10, epochs: 3}\n"
                              "power_modes: [MODE_15W_6CORE, MODE_15W_4CORE]\n"
                              "storage: [nvme]\nworkers: [1]\nbatch_sizes: [16]\n"
                              "telemetry_hz: 10\n";

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    const char *types[S_SIMS];
    for (size_t i = 0; i < S_SIMS; i++) {
        types[i] = "xavier-nx";
    }
    *state = f;
    return f && jft_fleet_setup_sims(f, 0, types, S_SIMS) == 0 &&
                   jft_fleet_set_heartbeat(f, "500ms", "3s") == 0
               ? 0
               : -1;
}

static int s_teardown(void **state)
{
    jft_fleet_t *f = *state;
    jft_proc_signal(&f->coord, SIGCONT); // a failed assertion may leave it stopped
    int rc = jft_fleet_teardown(f);
    free(f);
    return rc;
}

// How many times agent i says it was welcomed (its log), the agent's own view of a session.
static int s_registrations(jft_fleet_t *f, size_t i)
{
    char *text = jft_read_file(f->agents[i].log_path, NULL);
    int n = 0;
    const char *what = "session: registered as";
    for (const char *p = text; p && (p = strstr(p, what)) != NULL; p += strlen(what)) {
        n++;
    }
    free(text);
    return n;
}

typedef struct s_back {
    jft_fleet_t *f;
    int want[S_SIMS]; // registrations each agent must reach
} s_back_t;

static bool s_all_back(void *arg)
{
    s_back_t *b = arg;
    for (size_t i = 0; i < S_SIMS; i++) {
        if (s_registrations(b->f, i) < b->want[i]) {
            return false;
        }
    }
    return jft_fleet_sql_int(b->f, "SELECT count(*) FROM boards WHERE online = 1") == S_SIMS;
}

// One pause: stopped for twice the heartbeat timeout, then the time until every agent has one
// registration more, in ms (-1 if not within S_BACK_WAIT_MS).
static int s_pause(jft_fleet_t *f)
{
    s_back_t b = {.f = f};
    for (size_t i = 0; i < S_SIMS; i++) {
        b.want[i] = s_registrations(f, i) + 1;
    }
    jft_proc_signal(&f->coord, SIGSTOP);
    zclock_sleep(2 * S_HB_TIMEOUT_MS);
    jft_proc_signal(&f->coord, SIGCONT);
    int64_t t0 = jf_clock_mono_us();
    bool back = jft_wait_until(s_all_back, &b, S_BACK_WAIT_MS);
    return back ? (int)((jf_clock_mono_us() - t0) / JF_US_PER_MS) : -1;
}

static bool s_finished(void *arg)
{
    return jft_sweep_finished(arg);
}

static void test_pauses(void **state)
{
    jft_fleet_t *f = *state;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    for (size_t i = 0; i < S_SIMS; i++) {
        assert_int_equal(jft_fleet_start_sim_agent(f, i, s_agent_args), 0);
    }
    assert_true(jft_fleet_wait_online(f, S_SIMS, 60000));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "pauses.yaml", s_sweep, sweep), 0);
    free(jft_cli_expect(f, 0, 10000, (const char *const[]){"sweep", "submit", sweep, NULL}));
    int worst_ms = 0, mid_sweep = 0;
    for (int k = 0; k < S_PAUSES && worst_ms >= 0; k++) {
        zclock_sleep(S_RUN_MS);
        mid_sweep += !jft_sweep_finished(f);
        int ms = s_pause(f);
        printf("pause=%d back_ms=%d\n", k + 1, ms);
        worst_ms = ms < 0 || worst_ms < 0 ? -1 : (ms > worst_ms ? ms : worst_ms);
    }
    bool finished = worst_ms >= 0 && jft_wait_until(s_finished, f, S_SWEEP_MS);
    jft_sweep_tally_t t = {0};
    jft_sweep_tally(f, S_RUNS, &t);
    printf("pauses_mid_sweep=%d\nback_online_max_ms=%d\nsweep_finished=%d\n", mid_sweep, worst_ms,
           finished);
    jft_sweep_tally_print(&t);
    assert_true(worst_ms >= 0);
    assert_true(worst_ms <= S_BACK_MS * jft_timeout_scale());
    assert_true(mid_sweep >= 3);
    assert_true(finished);
    assert_int_equal(t.lost, 0);
    assert_int_equal(t.duplicates, 0);
    assert_int_equal(t.missing_samples, 0);
    assert_int_equal(t.stuck, 0);
    assert_int_equal(t.done, S_RUNS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pauses, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
