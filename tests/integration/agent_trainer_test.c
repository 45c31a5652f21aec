/* Integration (reliability): the agent's handling of its trainer around stops and crashes
 * (docs/protocol.md §4.4.1). A coordinator and one simulated Xavier NX run one lenet5 run.
 * - clean_stop: the agent is stopped (SIGSTOP) while the trainer writes on, the trainer is frozen
 *   so that its output file is final, and the agent gets SIGTERM: the file then holds records
 *   the agent never read. The restarted agent must deliver every record the trainer wrote.
 * - crash_before_row: the agent kills itself (test hook JF_TEST_AGENT_CRASH, test builds only)
 *   after spawning the trainer and before its spool row is stored: no trainer may run untracked
 *   (write records nobody reads), and the restarted agent reports the attempt crashed once.
 * - deadline: the agent is killed with SIGKILL mid-run and restarted; the re-attached run must
 *   time out at the deadline counted from the trainer's start, not from the re-attach.
 * Figures are printed as name=value lines. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"
#include "jft_trainer.h"

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define S_WAIT_MS     60000 // bound of each wait (jft_wait_until scales it)
#define S_CLI_MS      120000
#define S_UNREAD_MS   2500 // the trainer writes on while the agent is stopped (a schedule)
#define S_DOWN_MS     1500 // no agent runs (a fault schedule, not a wait)
#define S_TIMEOUT_S   10   // the deadline scenario's run timeout
#define S_LATE_MAX_MS 3000 // a timeout is acted on within this after the deadline (ticks, SIGTERM)

// Epochs of ~2 s at speed 1 and scale 0.2 (tests/integration/reattach_test.c).
static const char *const s_args[] = {"--sim-speed", "1", "--sim-scale", "0.2",
                                     "--sim-seed",  "7", NULL};

static const char s_sweep[] = "name: trainer\n"
                              "target:\n  boards: [sim-1]\n"
                              "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 6}\n"
                              "power_modes: [MODE_20W_6CORE]\n"
                              "storage: [nvme]\nworkers: [1]\nbatch_sizes: [64]\n"
                              "telemetry_hz: 10\n";

// 12 epochs (~24 s) with a 10 s timeout: the run times out, never ends done.
static const char s_sweep_timeout[] =
    "name: trainer-timeout\n"
    "target:\n  boards: [sim-1]\n"
    "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 12}\n"
    "power_modes: [MODE_20W_6CORE]\n"
    "storage: [nvme]\nworkers: [1]\nbatch_sizes: [64]\n"
    "telemetry_hz: 10\ntimeout: 10s\n";

typedef struct s_ctx {
    jft_fleet_t fleet;
    char state_dir[PATH_MAX + 64]; // the agent's --state-dir
    char spool[PATH_MAX + 80];
    long long trainer_pid; // 0: not known
    long long trainer_ticks;
} s_ctx_t;

static int s_setup(void **state)
{
    s_ctx_t *c = calloc(1, sizeof *c);
    const char *types[] = {"xavier-nx"};
    *state = c;
    if (!c || jft_fleet_setup_sims(&c->fleet, 0, types, 1) != 0) {
        return -1;
    }
    (void) snprintf(c->state_dir, sizeof c->state_dir, JFT_FLEET_AGENT_STATE_FMT, c->fleet.dir,
                    jft_fleet_board(&c->fleet, "sim-1"));
    (void) snprintf(c->spool, sizeof c->spool, "%s/spool.db", c->state_dir);
    return 0;
}

static bool s_trainer_alive(const s_ctx_t *c)
{
    return c->trainer_pid > 0 && jft_trainer_start_ticks(c->trainer_pid) == c->trainer_ticks;
}

static bool s_trainer_gone(void *arg)
{
    return !s_trainer_alive(arg);
}

static int s_teardown(void **state)
{
    s_ctx_t *c = *state;
    int rc = jft_fleet_teardown(&c->fleet);
    if (s_trainer_alive(c)) {
        (void) kill(-(pid_t) c->trainer_pid, SIGKILL); // none stays behind
    }
    free(c);
    return rc;
}

static long long s_sql(s_ctx_t *c, const char *sql)
{
    return jft_fleet_sql_int(&c->fleet, sql);
}

static bool s_epoch_stored(void *arg)
{
    return s_sql(arg, "SELECT count(*) FROM epochs WHERE attempt = 1") >= 1;
}

static bool s_run_over(void *arg)
{
    return s_sql(arg, "SELECT count(*) FROM runs WHERE state IN ('done', 'failed')") == 1;
}

static bool s_run_assigned(void *arg)
{
    return s_sql(arg, "SELECT count(*) FROM runs WHERE state != 'pending'") == 1;
}

static void s_start(s_ctx_t *c, const char *sweep_text)
{
    jft_fleet_t *f = &c->fleet;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    assert_int_equal(jft_fleet_start_sim_agent(f, 0, s_args), 0);
    assert_true(jft_fleet_wait_online(f, 1, S_WAIT_MS));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "trainer.yaml", sweep_text, sweep), 0);
    free(jft_cli_expect(f, 0, S_CLI_MS, (const char *const[]){"sweep", "submit", sweep, NULL}));
}

// The trainer from the file its stdout goes to (the agent's spool is locked while it runs).
static void s_find_trainer(s_ctx_t *c, char *out_path)
{
    assert_int_equal(jft_trainer_find_output(c->state_dir, out_path), 0);
    c->trainer_pid = jft_trainer_pid_by_stdout(out_path);
    c->trainer_ticks = c->trainer_pid > 0 ? jft_trainer_start_ticks(c->trainer_pid) : 0;
}

// Record lines in the file at path above mark (NULL: all); -1 if it cannot be read.
static long long s_file_records(const char *path, const jft_trainer_mark_t *mark)
{
    size_t len = 0;
    char *text = jft_read_file(path, &len);
    long long n = text ? jft_trainer_records(text, len, mark) : -1;
    free(text);
    return n;
}

static long long s_stored_records(s_ctx_t *c)
{
    return s_sql(c, "SELECT (SELECT count(*) FROM minibatches WHERE attempt = 1) + "
                    "(SELECT count(*) FROM epochs WHERE attempt = 1)");
}

static void test_clean_stop_keeps_unread_records(void **state)
{
    s_ctx_t *c = *state;
    jft_fleet_t *f = &c->fleet;
    s_start(c, s_sweep);
    assert_true(jft_wait_until(s_epoch_stored, c, S_WAIT_MS));
    char out_path[PATH_MAX];
    jft_proc_signal(&f->agents[0], SIGSTOP);
    s_find_trainer(c, out_path);
    assert_true(c->trainer_pid > 0);
    (void) poll(NULL, 0, S_UNREAD_MS);             // the trainer writes on; nobody reads
    (void) kill(-(pid_t) c->trainer_pid, SIGSTOP); // its file is final: the agent kills it
    long long written = s_file_records(out_path, NULL);
    jft_proc_signal(&f->agents[0], SIGTERM);
    jft_proc_signal(&f->agents[0], SIGCONT);
    int status = 0;
    assert_int_equal(jft_proc_wait(&f->agents[0], S_WAIT_MS, &status), 0);
    struct stat st;
    long long kept = stat(out_path, &st) == 0;
    // Records the spool does not have (above its read mark) were never read, or read and not
    // spooled when the agent stopped.
    jft_trainer_mark_t mark = {0};
    long long unread = kept && jft_trainer_spool_mark(c->spool, 1, &mark) == 0
                           ? s_file_records(out_path, &mark)
                           : -1;
    assert_true(jft_wait_until(s_trainer_gone, c, S_WAIT_MS));
    assert_int_equal(jft_fleet_start_sim_agent(f, 0, s_args), 0);
    assert_true(jft_wait_until(s_run_over, c, S_WAIT_MS));
    long long stored = s_stored_records(c);
    long long results = s_sql(c, "SELECT count(*) FROM events WHERE kind IN ('run.failed', "
                                 "'run.done') AND attempt = 1");
    // The attempt's end says that the agent stopped, not that its trainer died unwatched.
    long long said_stopped = s_sql(c, "SELECT count(*) FROM runs WHERE fail_reason = 'crashed' "
                                      "AND fail_detail LIKE 'the agent was stopped%'");
    printf("scenario=clean_stop\nagent_exit_status=%d\noutput_kept=%lld\nrecords_written=%lld\n"
           "unread_at_stop=%lld\nrecords_stored=%lld\nlost=%lld\nresults=%lld\n"
           "detail_says_agent_stopped=%lld\n",
           WIFEXITED(status) ? WEXITSTATUS(status) : -1, kept, written, unread, stored,
           written - stored, results, said_stopped);
    fflush(stdout);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(written > 0);
    assert_int_equal(kept, 1);
    assert_true(unread > 0); // else the scenario did not test what it is for
    assert_int_equal(written - stored, 0);
    assert_int_equal(results, 1);
    assert_int_equal(said_stopped, 1);
    struct stat gone;
    assert_int_not_equal(stat(out_path, &gone), 0); // removed once the final message is spooled
}

static bool s_agent_exited(void *arg)
{
    return !jft_proc_alive(&((s_ctx_t *) arg)->fleet.agents[0]);
}

typedef struct s_holder {
    const char *path;
} s_holder_t;

static bool s_nobody_writes(void *arg)
{
    return jft_trainer_pid_by_stdout(((s_holder_t *) arg)->path) == 0;
}

static void test_crash_before_trainer_row(void **state)
{
    s_ctx_t *c = *state;
    jft_fleet_t *f = &c->fleet;
    static char *const crash_env[] = {"JF_TEST_AGENT_CRASH=trainer-spawned", NULL};
    f->agent_env = crash_env;
    s_start(c, s_sweep);
    assert_true(jft_wait_until(s_agent_exited, c, S_WAIT_MS));
    f->agent_env = NULL;
    int status = 0;
    assert_int_equal(jft_proc_wait(&f->agents[0], 1000, &status), 0);
    char out_path[PATH_MAX];
    assert_int_equal(jft_trainer_find_output(c->state_dir, out_path), 0);
    s_find_trainer(c, out_path); // an untracked trainer, if one runs
    (void) poll(NULL, 0, S_UNREAD_MS);
    long long untracked_alive = jft_trainer_pid_by_stdout(out_path) > 0;
    s_holder_t h = {out_path};
    assert_true(jft_wait_until(s_nobody_writes, &h, S_WAIT_MS));
    long long untracked_records = s_file_records(out_path, NULL);
    long long row = jft_trainer_sqlite_int(c->spool, "SELECT count(*) FROM trainer");
    assert_int_equal(jft_fleet_start_sim_agent(f, 0, s_args), 0);
    assert_true(jft_wait_until(s_run_over, c, S_WAIT_MS));
    long long crashed = s_sql(c, "SELECT count(*) FROM events WHERE kind = 'run.failed' AND "
                                 "attempt = 1 AND detail = 'crashed'");
    long long results = s_sql(c, "SELECT count(*) FROM events WHERE kind IN ('run.failed', "
                                 "'run.done') AND attempt = 1");
    printf("scenario=crash_before_row\nagent_killed_itself=%d\ntrainer_row=%lld\n"
           "untracked_trainer_alive=%lld\nuntracked_records=%lld\ncrashed_failures=%lld\n"
           "results=%lld\n",
           WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, row, untracked_alive,
           untracked_records, crashed, results);
    fflush(stdout);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_int_equal(row, 0);
    assert_int_equal(untracked_alive, 0);
    assert_int_equal(untracked_records, 0);
    assert_int_equal(crashed, 1);
    assert_int_equal(results, 1);
}

static void test_reattached_run_keeps_its_deadline(void **state)
{
    s_ctx_t *c = *state;
    jft_fleet_t *f = &c->fleet;
    s_start(c, s_sweep_timeout);
    assert_true(jft_wait_until(s_run_assigned, c, S_WAIT_MS));
    assert_true(jft_wait_until(s_epoch_stored, c, S_WAIT_MS));
    int status = 0;
    jft_proc_signal(&f->agents[0], SIGKILL);
    assert_int_equal(jft_proc_wait(&f->agents[0], 10000, &status), 0);
    c->trainer_pid = jft_trainer_sqlite_int(c->spool, "SELECT pid FROM trainer WHERE attempt = 1");
    c->trainer_ticks =
        jft_trainer_sqlite_int(c->spool, "SELECT start_ticks FROM trainer WHERE attempt = 1");
    assert_true(s_trainer_alive(c));
    (void) poll(NULL, 0, S_DOWN_MS);
    long long start_ms = jft_trainer_ticks_ms(c->trainer_ticks);
    long long restart_ms = jft_trainer_boot_ms();
    assert_int_equal(jft_fleet_start_sim_agent(f, 0, s_args), 0);
    assert_true(jft_wait_until(s_trainer_gone, c, S_WAIT_MS));
    long long end_ms = jft_trainer_boot_ms();
    assert_true(jft_wait_until(s_run_over, c, S_WAIT_MS));
    long long timed_out = s_sql(c, "SELECT count(*) FROM events WHERE kind = 'run.failed' AND "
                                   "attempt = 1 AND detail = 'timeout'");
    long long deadline_ms = start_ms + S_TIMEOUT_S * 1000;
    // If the agent came back after the deadline, the earliest it can act is on its return.
    long long due_ms = deadline_ms > restart_ms ? deadline_ms : restart_ms;
    printf("scenario=deadline\ntimeout_ms=%d\nrestart_after_start_ms=%lld\n"
           "ended_after_start_ms=%lld\nended_after_restart_ms=%lld\nlate_ms=%lld\n"
           "timed_out=%lld\n",
           S_TIMEOUT_S * 1000, restart_ms - start_ms, end_ms - start_ms, end_ms - restart_ms,
           end_ms - due_ms, timed_out);
    fflush(stdout);
    assert_int_equal(timed_out, 1);
    // Ticks are 10 ms, the wait polls: not before the deadline, and not counted from the
    // re-attach (which would end S_TIMEOUT_S after restart_ms at the earliest).
    assert_true(end_ms - deadline_ms >= -50);
    assert_true(end_ms - restart_ms < S_TIMEOUT_S * 1000);
    assert_true(end_ms - due_ms <= S_LATE_MAX_MS * jft_timeout_scale());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_clean_stop_keeps_unread_records, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_crash_before_trainer_row, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_reattached_run_keeps_its_deadline, s_setup,
                                        s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
