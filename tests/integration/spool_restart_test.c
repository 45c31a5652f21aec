/* Integration (reliability): the agent's on-disk spool across an agent crash during a
 * coordinator outage (docs/protocol.md §4.4, §5.3.3). A coordinator and one simulated Xavier NX
 * run a long run; the coordinator is killed (acks stop, the agent keeps producing into its
 * spool), then the agent is killed with SIGKILL and so is its trainer (which would otherwise
 * survive and be re-attached: tests/integration/reattach_test.c; with --spool-in-memory it
 * writes into a pipe and dies at its next write), the coordinator and
 * the agent are restarted (the agent on the same --state-dir), and the store must hold every
 * message the dead agent had spooled, once, the attempt failed once as crashed by the restarted
 * agent, and the run done after the sweep is submitted again. The same scenario with
 * --spool-in-memory is the control: it must lose the outage's data, so the check can fail.
 * Figures are printed as name=value lines. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"

#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define S_OUTAGE_MS    3000  // how long the agent produces with nobody acknowledging
#define S_FLOW_SAMPLES 5     // telemetry samples stored before the coordinator is killed
#define S_WAIT_MS      60000 // bound of each wait (jft_wait_until scales it)
#define S_CLI_MS       120000

// Attempt 1 at speed 1 (LeNet-5 epochs of ~3 s) outlives the outage on a loaded machine; the
// restarted agent runs attempt 2 at speed 20 so that it ends soon.
#define S_SIM_ARGS "--sim-scale", "0.2", "--sim-seed", "7"
static const char *const s_args_disk[] = {"--sim-speed", "1", S_SIM_ARGS, NULL};
static const char *const s_args_disk_again[] = {"--sim-speed", "20", S_SIM_ARGS, NULL};
static const char *const s_args_memory[] = {"--sim-speed", "1", S_SIM_ARGS, "--spool-in-memory",
                                            NULL};
static const char *const s_args_memory_again[] = {"--sim-speed", "20", S_SIM_ARGS,
                                                  "--spool-in-memory", NULL};

static const char s_sweep[] = "name: spoolrestart\n"
                              "target:\n  boards: [sim-1]\n"
                              "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 6}\n"
                              "power_modes: [MODE_20W_6CORE]\n"
                              "storage: [nvme]\nworkers: [1]\nbatch_sizes: [64]\n"
                              "telemetry_hz: 10\n";

typedef struct s_figures {
    long long acked_at_kill;         // the store's acked_seq of attempt 1 when the coordinator died
    long long spooled_messages;      // rows of attempt 1 past it in the dead agent's spool file
    long long spooled_samples;       // telemetry samples in them
    long long spooled_final;         // final rows among them (0: the run was cut mid-way)
    long long delivered_after;       // acked_seq of attempt 1 at the end minus acked_at_kill
    long long outage_samples_stored; // samples of attempt 1 stored with seq > acked_at_kill
    long long missing_samples;       // spooled_samples - outage_samples_stored
    long long duplicate_samples;     // stored samples of attempt 1 sharing a timestamp
    long long crashed_failures;      // run.failed events of attempt 1 with reason crashed
    long long duplicate_results;     // run.failed/run.done events of attempt 1 beyond one
    long long lost_runs;             // runs not done at the end
} s_figures_t;

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

static long long s_sql(jft_fleet_t *f, const char *sql)
{
    return jft_fleet_sql_int(f, sql);
}

static bool s_samples_flow(void *arg)
{
    return s_sql(arg, "SELECT count(*) FROM telemetry WHERE attempt = 1") >= S_FLOW_SAMPLES;
}

// Attempt 1 is over: failed (reported by the agent) or superseded (lost and requeued).
static bool s_attempt_over(void *arg)
{
    return s_sql(arg, "SELECT count(*) FROM runs WHERE attempt > 1 OR state = 'failed'") == 1;
}

// Integer from the dead agent's spool file; 0 when there is no file (the in-memory spool).
static long long s_spool_int(const char *path, const char *sql, long long acked)
{
    if (access(path, F_OK) != 0) {
        return 0;
    }
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    long long v = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_bind_int64(st, 1, acked) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        v = sqlite3_column_int64(st, 0);
    } else {
        fprintf(stderr, "spool file '%s': %s\n", path, db ? sqlite3_errmsg(db) : "no memory");
    }
    sqlite3_finalize(st);
    sqlite3_close(db); // the restarted agent must find it unlocked
    return v;
}

// The trainer the spool file names (its process group), killed if it still runs: the attempt
// must end with its trainer gone while no agent ran.
static void s_kill_trainer(const char *path)
{
    long long pid = s_spool_int(path, "SELECT coalesce(max(pid), 0) FROM trainer WHERE attempt = "
                                      "?1", 1);
    if (pid > 0) {
        (void)kill(-(pid_t)pid, SIGKILL); // its own group; it may have ended already
    }
}

static void s_read_spool(jft_fleet_t *f, s_figures_t *g)
{
    char path[PATH_MAX + 64];
    (void)snprintf(path, sizeof path, JFT_FLEET_AGENT_STATE_FMT "/spool.db", f->dir, "sim-1");
    s_kill_trainer(path);
    g->spooled_messages = s_spool_int(
        path, "SELECT count(*) FROM message WHERE attempt = 1 AND seq > ?1", g->acked_at_kill);
    g->spooled_samples = s_spool_int(path,
                                     "SELECT coalesce(sum(json_array_length(CAST(body AS TEXT), "
                                     "'$.samples')), 0) FROM message WHERE attempt = 1 AND seq > "
                                     "?1 AND json_extract(CAST(body AS TEXT), '$.type') = "
                                     "'telemetry'",
                                     g->acked_at_kill);
    g->spooled_final =
        s_spool_int(path, "SELECT count(*) FROM message WHERE attempt = 1 AND seq > ?1 AND final",
                    g->acked_at_kill);
}

// Kills the coordinator, lets the agent produce, then kills the agent and its trainer.
static void s_outage_and_crash(jft_fleet_t *f, s_figures_t *g)
{
    assert_true(jft_wait_until(s_samples_flow, f, S_WAIT_MS));
    jft_proc_signal(&f->coord, SIGKILL);
    int status = 0;
    assert_int_equal(jft_proc_wait(&f->coord, 10000, &status), 0);
    g->acked_at_kill = s_sql(f, "SELECT acked_seq FROM runs WHERE attempt = 1");
    assert_true(g->acked_at_kill > 0);
    // The fault schedule, not a wait for readiness: the outage lasts this long.
    (void)poll(NULL, 0, S_OUTAGE_MS);
    assert_true(jft_proc_alive(&f->agents[0]));
    jft_proc_signal(&f->agents[0], SIGKILL); // not the trainer: it has its own process group
    assert_int_equal(jft_proc_wait(&f->agents[0], 10000, &status), 0);
}

static void s_restart(jft_fleet_t *f, const char *const *agent_args)
{
    char endpoint[PATH_MAX + 16];
    (void)snprintf(endpoint, sizeof endpoint, "%s/endpoint", f->data_dir);
    assert_int_equal(unlink(endpoint), 0); // else the stale endpoint is taken for readiness
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    assert_int_equal(jft_fleet_start_sim_agent(f, 0, agent_args), 0);
    assert_true(jft_wait_until(s_attempt_over, f, S_WAIT_MS));
}

static void s_measure_attempt(jft_fleet_t *f, s_figures_t *g)
{
    char sql[512];
    long long acked = s_sql(f, "SELECT acked_seq FROM runs WHERE attempt = 1");
    g->delivered_after = acked >= 0 ? acked - g->acked_at_kill : 0;
    (void)snprintf(sql, sizeof sql,
                   "SELECT count(*) FROM telemetry WHERE attempt = 1 AND seq > %lld",
                   g->acked_at_kill);
    g->outage_samples_stored = s_sql(f, sql);
    g->missing_samples = g->spooled_samples - g->outage_samples_stored;
    g->duplicate_samples = s_sql(f, "SELECT count(*) - count(DISTINCT t_us) FROM telemetry "
                                    "WHERE attempt = 1");
    g->crashed_failures = s_sql(f, "SELECT count(*) FROM events WHERE kind = 'run.failed' AND "
                                   "attempt = 1 AND detail = 'crashed'");
    long long results = s_sql(f, "SELECT count(*) FROM events WHERE kind IN ('run.failed', "
                                 "'run.done') AND attempt = 1");
    g->duplicate_results = results > 1 ? results - 1 : 0;
}

static void s_print(const char *mode, const s_figures_t *g)
{
    printf("mode=%s\nacked_at_kill=%lld\nspooled_messages=%lld\nspooled_samples=%lld\n"
           "spooled_final=%lld\ndelivered_after_restart=%lld\noutage_samples_stored=%lld\n"
           "missing_samples=%lld\nduplicate_samples=%lld\ncrashed_failures=%lld\n"
           "duplicate_results=%lld\nlost_runs=%lld\n",
           mode, g->acked_at_kill, g->spooled_messages, g->spooled_samples, g->spooled_final,
           g->delivered_after, g->outage_samples_stored, g->missing_samples, g->duplicate_samples,
           g->crashed_failures, g->duplicate_results, g->lost_runs);
    fflush(stdout);
}

// The whole scenario; submits the sweep again when attempt 1 ended as failed.
static void s_scenario(jft_fleet_t *f, const char *const *const args[2], s_figures_t *g)
{
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    assert_int_equal(jft_fleet_start_sim_agent(f, 0, args[0]), 0);
    assert_true(jft_fleet_wait_online(f, 1, S_WAIT_MS));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "spoolrestart.yaml", s_sweep, sweep), 0);
    free(jft_cli_expect(f, 0, S_CLI_MS, (const char *const[]){"sweep", "submit", sweep, NULL}));
    s_outage_and_crash(f, g);
    s_read_spool(f, g);
    s_restart(f, args[1]);
    s_measure_attempt(f, g);
    if (s_sql(f, "SELECT count(*) FROM runs WHERE state = 'failed'") == 1) {
        free(jft_cli_expect(f, 0, S_CLI_MS, (const char *const[]){"sweep", "submit", sweep, NULL}));
    }
    free(jft_cli_expect(f, 0, S_CLI_MS,
                        (const char *const[]){"sweep", "submit", sweep, "--wait", NULL}));
    g->lost_runs = s_sql(f, "SELECT count(*) FROM runs WHERE state != 'done'");
}

static void test_disk_spool_survives_agent_crash(void **state)
{
    jft_fleet_t *f = *state;
    s_figures_t g = {0};
    s_scenario(f, (const char *const *const[2]){s_args_disk, s_args_disk_again}, &g);
    s_print("disk", &g);
    assert_int_equal(g.spooled_final, 0); // the run was cut mid-way, not finished in the outage
    assert_true(g.spooled_messages > 0);
    assert_true(g.spooled_samples > 0);
    // Everything spooled, then what the restarted agent read from the dead trainer's output
    // file and its run.failed.
    assert_true(g.delivered_after >= g.spooled_messages + 1);
    assert_int_equal(g.missing_samples, 0);
    assert_int_equal(g.duplicate_samples, 0);
    assert_int_equal(g.crashed_failures, 1);
    assert_int_equal(g.duplicate_results, 0);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM events WHERE kind = 'run.requeued'"), 0);
    assert_int_equal(g.lost_runs, 0);
    assert_int_equal(s_sql(f, "SELECT attempt FROM runs"), 2);
}

// The control: without the file the same crash loses the outage's data, which the store shows.
static void test_memory_spool_loses_data(void **state)
{
    jft_fleet_t *f = *state;
    s_figures_t g = {0};
    s_scenario(f, (const char *const *const[2]){s_args_memory, s_args_memory_again}, &g);
    s_print("memory", &g);
    assert_int_equal(g.spooled_messages, 0); // no file to read
    assert_int_equal(g.delivered_after, 0);
    assert_int_equal(g.outage_samples_stored, 0);
    assert_int_equal(g.crashed_failures, 0); // the attempt was lost, not reported
    assert_int_equal(s_sql(f, "SELECT count(*) FROM events WHERE kind = 'run.requeued'"), 1);
    assert_int_equal(g.lost_runs, 0); // requeued and re-run: the run survives, its data did not
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_disk_spool_survives_agent_crash, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_memory_spool_loses_data, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
