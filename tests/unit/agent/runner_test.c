/* Unit tests for the trainer's start gate (agent_runner.h): a child started held does not run
 * its program until agent_runner_release, and never runs it when the runner goes first (the
 * agent gave up on the start, or died: docs/protocol.md §4.4.1); a missing program is a failed
 * start. The "trainer" is /bin/sh printing one line into the output file. */
#include "agent_runner.h"
#include "jft_fs.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define T_HOLD_MS  300   // how long a held child is watched for not running (a schedule)
#define T_WAIT_MS  10000 // bound of the wait for a released child
#define T_RAN_LINE "ran"

typedef struct t_ctx {
    char dir[PATH_MAX];
    char out[PATH_MAX + 32];
    jf_run_spec_t spec;
    agent_platform_trainer_t trainer;
} t_ctx_t;

static int t_setup(void **state)
{
    t_ctx_t *c = calloc(1, sizeof *c);
    *state = c;
    if (!c || jft_tmpdir_new(c->dir) != 0) {
        return -1;
    }
    (void) snprintf(c->out, sizeof c->out, "%s/trainer-out.jsonl", c->dir);
    c->spec.timeout_us = INT64_C(60) * 1000000;
    // sh -c 'echo ran' sh <the run's options>: they become $1.. and are ignored.
    c->trainer = (agent_platform_trainer_t){.program = "/bin/sh",
                                            .n_args = 3,
                                            .args = {"-c", "echo " T_RAN_LINE, "sh"}};
    return 0;
}

static int t_teardown(void **state)
{
    t_ctx_t *c = *state;
    jft_tmpdir_remove(c->dir);
    free(c);
    return 0;
}

static agent_runner_t *t_start(t_ctx_t *c, bool hold, jf_err_t *err)
{
    agent_runner_opts_t o = {.trainer = &c->trainer, .spec = &c->spec, .out_path = c->out,
                             .hold = hold};
    return agent_runner_start(&o, err);
}

static bool t_ran(const t_ctx_t *c)
{
    char *text = jft_read_file(c->out, NULL);
    bool ran = text && strstr(text, T_RAN_LINE "\n") != NULL;
    free(text);
    return ran;
}

static int t_ignore_record(json_t *rec, void *arg)
{
    (void) arg;
    json_decref(rec);
    return 0;
}

static void test_held_child_never_runs_without_release(void **state)
{
    t_ctx_t *c = *state;
    jf_err_t err = {0};
    agent_runner_t *r = t_start(c, true, &err);
    assert_non_null(r);
    (void) poll(NULL, 0, T_HOLD_MS);
    assert_false(t_ran(c));
    assert_false(agent_runner_has_ended(r)); // waiting at the gate, not gone
    agent_runner_destroy(&r);
    (void) poll(NULL, 0, T_HOLD_MS);
    assert_false(t_ran(c));
}

static void test_released_child_runs(void **state)
{
    t_ctx_t *c = *state;
    jf_err_t err = {0};
    agent_runner_t *r = t_start(c, true, &err);
    assert_non_null(r);
    assert_int_equal(agent_runner_release(r), 0);
    assert_int_equal(agent_runner_release(r), 0); // once open it stays open
    agent_runner_outcome_t o = {0};
    bool finished = false;
    for (int waited_ms = 0; !finished && waited_ms < T_WAIT_MS * jft_timeout_scale();
         waited_ms += 20) {
        agent_runner_read(r, t_ignore_record, NULL);
        finished = agent_runner_finished(r, &o);
        (void) poll(NULL, 0, finished ? 0 : 20);
    }
    assert_true(finished);
    assert_true(t_ran(c));
    agent_runner_destroy(&r);
}

static void test_unheld_child_runs_at_once(void **state)
{
    t_ctx_t *c = *state;
    jf_err_t err = {0};
    agent_runner_t *r = t_start(c, false, &err);
    assert_non_null(r);
    bool ran = false;
    for (int waited_ms = 0; !ran && waited_ms < T_WAIT_MS * jft_timeout_scale(); waited_ms += 20) {
        ran = t_ran(c);
        (void) poll(NULL, 0, ran ? 0 : 20);
    }
    assert_true(ran);
    agent_runner_destroy(&r);
}

static void test_missing_program_is_a_failed_start(void **state)
{
    t_ctx_t *c = *state;
    c->trainer.program = "/nonexistent/jetfleet-train";
    jf_err_t err = {0};
    agent_runner_t *r = t_start(c, true, &err);
    assert_null(r);
    assert_int_equal(err.code, -ENOENT);
    assert_non_null(strstr(err.msg, "cannot start '/nonexistent/jetfleet-train'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_held_child_never_runs_without_release, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_released_child_runs, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_unheld_child_runs_at_once, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_missing_program_is_a_failed_start, t_setup,
                                        t_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
