/* Integration: a coordinator and 3 agents on 127.0.0.1 run a 6-run LeNet-5 sweep end to end
 * through the CLI; every run is done exactly once with its epoch records stored, resubmitting
 * adds nothing, and the exports are tidy tables. */
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

#define S_BOARDS 3
#define S_EPOCHS 2

static const char s_sweep[] = "name: e2e\n"
                              "target:\n  device_types: [host]\n"
                              "workloads:\n  - model: lenet5\n    dataset: mnist\n    epochs: 2\n"
                              "storage: [local]\nworkers: [0]\nbatch_sizes: [32, 64]\n";

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    *state = f;
    return f && jft_fleet_setup(f, S_BOARDS) == 0 ? 0 : -1;
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

static void s_check_store(jft_fleet_t *f)
{
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM runs"), 6);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM runs WHERE state = 'done'"), 6);
    // Exactly once: one attempt each, one run.done event each, and every epoch of that attempt.
    assert_int_equal(jft_fleet_sql_int(f, "SELECT max(attempt) FROM runs"), 1);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM events WHERE kind = 'run.done'"),
                     6);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(DISTINCT run) FROM events WHERE kind = "
                                          "'run.done'"),
                     6);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM runs r WHERE (SELECT count(*) "
                                          "FROM epochs e WHERE e.run = r.id AND e.attempt = "
                                          "r.attempt) != r.epochs"),
                     0);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM epochs"), 6 * S_EPOCHS);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM epochs WHERE warmup = 1"), 6);
    // Each board ran its own two runs, and minibatch records and telemetry arrived.
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(DISTINCT board) FROM runs"), S_BOARDS);
    assert_true(jft_fleet_sql_int(f, "SELECT count(*) FROM minibatches") > 6 * S_EPOCHS);
    assert_true(jft_fleet_sql_int(f, "SELECT count(*) FROM telemetry") >= 6);
    char *check = jft_fleet_sql_text(f, "PRAGMA quick_check");
    assert_non_null(check);
    assert_string_equal(check, "ok");
    free(check);
}

static size_t s_lines(const char *text)
{
    size_t n = 0;
    for (const char *p = text; p && *p; p++) {
        n += *p == '\n';
    }
    return n;
}

static void test_sweep_runs_every_run_once(void **state)
{
    jft_fleet_t *f = *state;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    for (size_t i = 0; i < S_BOARDS; i++) {
        assert_int_equal(jft_fleet_start_agent(f, i, NULL), 0);
    }
    assert_true(jft_fleet_wait_online(f, S_BOARDS, 20000));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "e2e.yaml", s_sweep, sweep), 0);

    free(s_cli(f, 0, (const char *const[]){"sweep", "plan", sweep, NULL}));
    char *out = s_cli(f, 0, (const char *const[]){"sweep", "submit", sweep, "--wait", NULL});
    assert_non_null(strstr(out, "6 done, 0 failed"));
    free(out);
    s_check_store(f);

    out = s_cli(f, 0, (const char *const[]){"sweep", "submit", sweep, NULL});
    assert_non_null(strstr(out, "6 runs (0 new, 6 already done"));
    free(out);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM runs"), 6);

    out = s_cli(f, 0, (const char *const[]){"export", "--sweep", "e2e", "--what", "epochs", NULL});
    assert_int_equal(s_lines(out), 1 + 6 * S_EPOCHS);
    assert_non_null(strstr(out, "run,board,board_type"));
    free(out);
    out = s_cli(f, 0, (const char *const[]){"results", "--sweep", "e2e", NULL});
    assert_non_null(strstr(out, "samples_per_s"));
    free(out);
    out = s_cli(f, 0, (const char *const[]){"status", NULL});
    assert_non_null(strstr(out, "6 done, 0 failed"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sweep_runs_every_run_once, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
