/* Integration (issue #11, reliability): `jetfleet sweep submit --wait` never blocks for ever. With
 * no agent running, --wait exits 1 once no board holding the sweep's open runs has been online
 * for a heartbeat timeout; with the board online but its runs slow, --timeout SECONDS makes it
 * exit 1 after SECONDS; bad --timeout values are usage errors (exit 2) naming the option. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"

#include "jf_units.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S_HB_TIMEOUT_MS  3000                         // fleet.yaml below
#define S_STALL_MAX_MS   (2 * S_HB_TIMEOUT_MS + 4000) // offline, grace, polls and start-up
#define S_TIMEOUT_S      2
#define S_TIMEOUT_MAX_MS (S_TIMEOUT_S * 1000 + 4000)

// A slow simulated board: a run takes minutes, so only --timeout can end the wait.
static const char *const s_agent_args[] = {"--sim-speed", "1", "--log-level", "notice", NULL};

static const char s_sweep[] = "name: waits\n"
                              "target:\n  device_types: [xavier-nx]\n"
                              "workloads:\n  - {model: resnet18, dataset: cifar10, epochs: 3}\n"
                              "power_modes: [MODE_15W_6CORE]\n"
                              "storage: [nvme]\nworkers: [1]\nbatch_sizes: [16]\n";

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    const char *types[] = {"xavier-nx"};
    *state = f;
    return f && jft_fleet_setup_sims(f, 0, types, 1) == 0 &&
                   jft_fleet_set_heartbeat(f, "500ms", "3s") == 0
               ? 0
               : -1;
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

// Runs the CLI, checks its exit code and that its output holds frag; returns its time in ms.
static int s_cli_ms(jft_fleet_t *f, int expect_rc, const char *frag, const char *const *args)
{
    int64_t t0 = jf_clock_mono_us();
    char *out = jft_cli_expect(f, expect_rc, 60000, args);
    int ms = (int)((jf_clock_mono_us() - t0) / JF_US_PER_MS);
    if (!strstr(out, frag)) {
        fail_msg("expected '%s' in:\n%s", frag, out);
    }
    free(out);
    return ms;
}

static void test_usage(void **state)
{
    jft_fleet_t *f = *state;
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "waits.yaml", s_sweep, sweep), 0);
    (void)s_cli_ms(f, 2, "--timeout needs --wait",
                   (const char *const[]){"sweep", "submit", sweep, "--timeout", "5", NULL});
    (void)s_cli_ms(
        f, 2, "--timeout '0'",
        (const char *const[]){"sweep", "submit", sweep, "--wait", "--timeout", "0", NULL});
    (void)s_cli_ms(
        f, 2, "--timeout '5s'",
        (const char *const[]){"sweep", "submit", sweep, "--wait", "--timeout", "5s", NULL});
    (void)s_cli_ms(f, 0, "--timeout SECONDS", (const char *const[]){"--help", NULL});
}

static void test_wait_ends(void **state)
{
    jft_fleet_t *f = *state;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "waits.yaml", s_sweep, sweep), 0);
    // No agent at all: the sweep cannot make progress.
    int stall_ms = s_cli_ms(f, 1, "cannot make progress: none of the 1 boards its open runs",
                            (const char *const[]){"sweep", "submit", sweep, "--wait", NULL});
    printf("wait_stall_exit_ms=%d\n", stall_ms);
    fflush(stdout);
    assert_true(stall_ms <= S_STALL_MAX_MS * jft_timeout_scale());
    // The board online, its run slow: --timeout ends the wait.
    assert_int_equal(jft_fleet_start_sim_agent(f, 0, s_agent_args), 0);
    assert_true(jft_fleet_wait_online(f, 1, 30000));
    int timeout_ms =
        s_cli_ms(f, 1, "--timeout of 2 s passed with 1 runs unfinished",
                 (const char *const[]){"sweep", "submit", sweep, "--wait", "--timeout", "2", NULL});
    printf("wait_timeout_exit_ms=%d\n", timeout_ms);
    assert_true(timeout_ms >= S_TIMEOUT_S * 1000);
    assert_true(timeout_ms <= S_TIMEOUT_MAX_MS * jft_timeout_scale());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_usage, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_wait_ends, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
