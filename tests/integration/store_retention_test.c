/* Integration (issue #17 §4): the store stays bounded and a full disk refuses new runs.
 * Retention: a simulated board runs a sweep of sequential runs with coordinator.retention of
 * 1 s (the loader's lower bound, far below a real lab's days, so that CI sees several runs age
 * out): the telemetry row count over time stays below the rows the runs stored, and ends at 0
 * once every run is done, while runs and epochs stay. Floor: a run is running when the
 * coordinator is restarted with min_free_space above the real free space: `jetfleet status`
 * says why new runs are refused, the pending runs stay pending, the running one ends done with
 * its data, and nothing stored before is lost. Means: with telemetry_after: means the finished
 * runs' samples become per-second means that account for every sample. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"

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

#define S_WAIT_MS  60000 // bound of each wait (jft_wait_until scales it)
#define S_CLI_MS   30000
#define S_RUNS_MAX 16
#define S_POLL_MS  200
#define S_IDLE_MS  3000 // how long the floor test watches for a dispatch that must not come

#define S_SIM_ARGS "--sim-scale", "0.2", "--sim-seed", "7"
static const char *const s_args_fast[] = {"--sim-speed", "3", S_SIM_ARGS, NULL};
static const char *const s_args_slow[] = {"--sim-speed", "1", S_SIM_ARGS, NULL};

// Epochs of each run's current attempt (earlier attempts keep theirs).
#define S_CURRENT_EPOCHS                                                                           \
    "SELECT count(*) FROM epochs e JOIN runs r ON r.id = e.run AND r.attempt = e.attempt"

#define S_RET_RUNS 5
static const char s_sweep_ret[] = "name: retention\n"
                                  "target:\n  boards: [sim-1]\n"
                                  "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 2}\n"
                                  "power_modes: [MODE_20W_6CORE]\n"
                                  "storage: [nvme]\nworkers: [1]\nbatch_sizes: [64]\n"
                                  "telemetry_hz: 10\nrepeats: 5\n";

#define S_FLOOR_RUNS 3
static const char s_sweep_floor[] = "name: floor\n"
                                    "target:\n  boards: [sim-1]\n"
                                    "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 4}\n"
                                    "power_modes: [MODE_20W_6CORE]\n"
                                    "storage: [nvme]\nworkers: [1]\nbatch_sizes: [64]\n"
                                    "telemetry_hz: 10\nrepeats: 3\n";

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    const char *types[1] = {"xavier-nx"};
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

// The most telemetry rows each run was seen to hold (the rows it stored, if seen before its
// rows were pruned).
typedef struct s_seen {
    size_t n;
    char run[S_RUNS_MAX][32];
    long long max_rows[S_RUNS_MAX];
} s_seen_t;

static void s_seen_add(s_seen_t *s, const char *run, long long rows)
{
    size_t i = 0;
    while (i < s->n && strcmp(s->run[i], run) != 0) {
        i++;
    }
    if (i == s->n && s->n < S_RUNS_MAX) {
        (void) snprintf(s->run[s->n++], sizeof s->run[0], "%s", run);
    }
    if (i < s->n && rows > s->max_rows[i]) {
        s->max_rows[i] = rows;
    }
}

static void s_seen_poll(jft_fleet_t *f, s_seen_t *s)
{
    char path[PATH_MAX + 16];
    (void) snprintf(path, sizeof path, "%s/jetfleet.db", f->data_dir);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_busy_timeout(db, 5000) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT run, count(*) FROM telemetry GROUP BY run", -1, &st, NULL) ==
            SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            s_seen_add(s, (const char *) sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1));
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static bool s_no_telemetry(void *arg)
{
    return s_sql(arg, "SELECT count(*) FROM telemetry") == 0;
}

// Samples the telemetry row count until every run has ended (bounded); returns the most seen.
static long long s_watch_rows(jft_fleet_t *f, s_seen_t *seen)
{
    long long rows_max = 0;
    int polls = S_WAIT_MS * 2 * jft_timeout_scale() / S_POLL_MS;
    for (int i = 0; i < polls; i++) {
        long long rows = s_sql(f, "SELECT count(*) FROM telemetry");
        rows_max = rows > rows_max ? rows : rows_max;
        s_seen_poll(f, seen);
        if (s_sql(f, "SELECT count(*) FROM runs WHERE state IN ('done', 'failed')") == S_RET_RUNS) {
            break;
        }
        usleep(S_POLL_MS * 1000); // a sampling period, not a wait for readiness
    }
    return rows_max;
}

static void test_retention_bounds_rows(void **state)
{
    jft_fleet_t *f = *state;
    assert_int_equal(jft_fleet_set_coord(f, NULL,
                                         "  retention:\n    telemetry_raw: 1s\n"
                                         "    telemetry_after: drop\n"),
                     0);
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    assert_int_equal(jft_fleet_start_sim_agent(f, 0, s_args_fast), 0);
    assert_true(jft_fleet_wait_online(f, 1, S_WAIT_MS));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "retention.yaml", s_sweep_ret, sweep), 0);
    free(jft_cli_expect(f, 0, S_CLI_MS, (const char *const[]){"sweep", "submit", sweep, NULL}));
    s_seen_t seen = {0};
    long long rows_max = s_watch_rows(f, &seen);
    long long seen_total = 0;
    for (size_t i = 0; i < seen.n; i++) {
        seen_total += seen.max_rows[i];
    }
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs WHERE state = 'done'"), S_RET_RUNS);
    assert_true(jft_wait_until(s_no_telemetry, f, S_WAIT_MS));
    printf("telemetry_rows_max=%lld\ntelemetry_rows_seen_total=%lld\nruns_seen=%zu\n"
           "telemetry_rows_end=%lld\n",
           rows_max, seen_total, seen.n, s_sql(f, "SELECT count(*) FROM telemetry"));
    // Never all of it at once: finished runs aged out while later ones ran.
    assert_true(seen.n == S_RET_RUNS);
    assert_true(rows_max > 0 && rows_max < seen_total);
    // Only telemetry goes: every run keeps its epochs.
    // (A loaded machine may cost a run an attempt: count the current attempts' epochs.)
    assert_int_equal(s_sql(f, S_CURRENT_EPOCHS), S_RET_RUNS * 2);
    char *out =
        jft_cli_expect(f, 0, S_CLI_MS, (const char *const[]){"store", "prune", "--dry-run", NULL});
    assert_non_null(strstr(out, "prune: would delete 0 telemetry rows"));
    free(out);
}

static bool s_all_averaged(void *arg)
{
    return s_sql(arg, "SELECT count(*) FROM telemetry WHERE mean_of IS NULL") == 0 &&
           s_sql(arg, "SELECT count(*) FROM telemetry") > 0;
}

// retention.telemetry_after: means. The finished runs' samples are replaced, while the
// coordinator runs, by one row per wall-clock second that stands for all of them: every sample
// seen while its run ran is counted in some mean, and there are fewer rows than samples.
static void test_retention_means(void **state)
{
    jft_fleet_t *f = *state;
    assert_int_equal(jft_fleet_set_coord(f, NULL,
                                         "  retention:\n    telemetry_raw: 1s\n"
                                         "    telemetry_after: means\n"),
                     0);
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    assert_int_equal(jft_fleet_start_sim_agent(f, 0, s_args_fast), 0);
    assert_true(jft_fleet_wait_online(f, 1, S_WAIT_MS));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "retention.yaml", s_sweep_ret, sweep), 0);
    free(jft_cli_expect(f, 0, S_CLI_MS, (const char *const[]){"sweep", "submit", sweep, NULL}));
    s_seen_t seen = {0};
    (void) s_watch_rows(f, &seen);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs WHERE state = 'done'"), S_RET_RUNS);
    assert_true(jft_wait_until(s_all_averaged, f, S_WAIT_MS));
    long long rows = s_sql(f, "SELECT count(*) FROM telemetry");
    long long stands_for = s_sql(f, "SELECT sum(mean_of) FROM telemetry");
    long long seen_total = 0;
    for (size_t i = 0; i < seen.n; i++) {
        char sql[160];
        (void) snprintf(sql, sizeof sql,
                        "SELECT coalesce(sum(mean_of), 0) FROM telemetry WHERE run = '%s'",
                        seen.run[i]);
        assert_true(s_sql(f, sql) >= seen.max_rows[i]); // no sample lost in the averaging
        seen_total += seen.max_rows[i];
    }
    printf("mean_rows=%lld\nsamples_averaged=%lld\nsamples_seen_raw=%lld\n", rows, stands_for,
           seen_total);
    assert_true(rows > 0 && rows * 2 < stands_for); // 10 Hz: up to 10 samples a second
    char *out =
        jft_cli_expect(f, 0, S_CLI_MS, (const char *const[]){"store", "prune", "--dry-run", NULL});
    assert_non_null(strstr(out, "prune: would average 0 telemetry rows"));
    free(out);
    out = jft_cli_expect(
        f, 0, S_CLI_MS,
        (const char *const[]){"export", "--sweep", "retention", "--what", "telemetry", NULL});
    assert_non_null(strstr(out, "gpu_freq_hz"));
    free(out);
}

static bool s_running_with_rows(void *arg)
{
    return s_sql(arg, "SELECT count(*) FROM runs r WHERE state = 'running' AND "
                      "(SELECT count(*) FROM telemetry t WHERE t.run = r.id) >= 5") == 1;
}

static bool s_status_refuses(void *arg)
{
    jft_fleet_t *f = arg;
    char *out = jft_cli_expect(f, 0, S_CLI_MS, (const char *const[]){"status", NULL});
    bool refused = out && strstr(out, "new runs: REFUSED: free space ") &&
                   strstr(out, "is below min_free_space 1152921504606846976 bytes");
    free(out);
    return refused;
}

static bool s_one_done_board_idle(void *arg)
{
    return s_sql(arg, "SELECT count(*) FROM runs WHERE state = 'done'") == 1 &&
           s_sql(arg, "SELECT count(*) FROM runs WHERE state IN ('assigned', 'running')") == 0;
}

static bool s_any_dispatched(void *arg)
{
    return s_sql(arg, "SELECT count(*) FROM runs WHERE state <> 'pending' AND state <> 'done'") > 0;
}

static void s_restart_with_floor(jft_fleet_t *f, const char *endpoint)
{
    jft_proc_signal(&f->coord, SIGTERM);
    int status = 0;
    assert_int_equal(jft_proc_wait(&f->coord, 10000, &status), 0);
    // 1048576T (1 EiB) is above any real free space.
    assert_int_equal(jft_fleet_set_coord(f, endpoint, "  min_free_space: 1048576T\n"), 0);
    char path[PATH_MAX + 16];
    (void) snprintf(path, sizeof path, "%s/endpoint", f->data_dir);
    assert_int_equal(unlink(path), 0); // else the stale endpoint is taken for readiness
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
}

// `jetfleet store prune` with a retention the running coordinator does not have (fleet.yaml
// changed under it): the done run finished more than S_IDLE_MS ago, so its rows go, written
// beside the coordinator's own transactions; nothing else has telemetry.
static void s_prune_beside_coordinator(jft_fleet_t *f, const char *endpoint)
{
    assert_int_equal(jft_fleet_set_coord(f, endpoint,
                                         "  min_free_space: 1048576T\n  retention:\n"
                                         "    telemetry_raw: 1s\n    telemetry_after: drop\n"),
                     0);
    long long rows = s_sql(f, "SELECT count(*) FROM telemetry");
    char want[96];
    (void) snprintf(want, sizeof want, "prune: would delete %lld telemetry rows", rows);
    char *out =
        jft_cli_expect(f, 0, S_CLI_MS, (const char *const[]){"store", "prune", "--dry-run", NULL});
    assert_non_null(strstr(out, want));
    free(out);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM telemetry"), rows); // dry run: untouched
    out = jft_cli_expect(f, 0, S_CLI_MS, (const char *const[]){"store", "prune", NULL});
    (void) snprintf(want, sizeof want, "prune: deleted %lld telemetry rows", rows);
    assert_non_null(strstr(out, want));
    free(out);
    printf("pruned_by_cli=%lld\n", rows);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM telemetry"), 0);
    assert_int_equal(s_sql(f, S_CURRENT_EPOCHS " AND r.state = 'done'"), 4);
    assert_true(jft_proc_alive(&f->coord));
}

static void test_floor_refuses_new_runs(void **state)
{
    jft_fleet_t *f = *state;
    char endpoint[JFT_FLEET_DIR_MAX + 32];
    int n = snprintf(endpoint, sizeof endpoint, "ipc://%s/agents.sock", f->dir);
    assert_true(n > 0 && (size_t) n < sizeof f->agent_endpoint); // an ipc path must be short
    assert_int_equal(jft_fleet_set_coord(f, endpoint, NULL), 0);
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    assert_int_equal(jft_fleet_start_sim_agent(f, 0, s_args_slow), 0);
    assert_true(jft_fleet_wait_online(f, 1, S_WAIT_MS));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "floor.yaml", s_sweep_floor, sweep), 0);
    free(jft_cli_expect(f, 0, S_CLI_MS, (const char *const[]){"sweep", "submit", sweep, NULL}));
    assert_true(jft_wait_until(s_running_with_rows, f, S_WAIT_MS));
    s_restart_with_floor(f, endpoint);
    long long rows_before = s_sql(f, "SELECT count(*) FROM telemetry");
    assert_true(jft_wait_until(s_status_refuses, f, S_WAIT_MS));
    assert_true(jft_wait_until(s_one_done_board_idle, f, S_WAIT_MS));
    // The board is idle and two runs are pending: none may be dispatched.
    assert_false(jft_wait_until(s_any_dispatched, f, S_IDLE_MS));
    long long pending = s_sql(f, "SELECT count(*) FROM runs WHERE state = 'pending'");
    long long lost = S_FLOOR_RUNS - s_sql(f, "SELECT count(*) FROM runs");
    long long rows_after = s_sql(f, "SELECT count(*) FROM telemetry");
    printf("pending_after_floor=%lld\nlost_runs=%lld\ntelemetry_rows_at_restart=%lld\n"
           "telemetry_rows_end=%lld\n",
           pending, lost, rows_before, rows_after);
    assert_int_equal(pending, S_FLOOR_RUNS - 1);
    assert_int_equal(lost, 0);
    assert_true(rows_after > rows_before); // the running run's data went on being stored
    assert_int_equal(s_sql(f, S_CURRENT_EPOCHS " AND r.state = 'done'"), 4);
    char log[PATH_MAX + 32];
    (void) snprintf(log, sizeof log, "%s/coordinator.log", f->dir);
    char *text = jft_read_file(log, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "new runs are not started"));
    free(text);
    s_prune_beside_coordinator(f, endpoint);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_retention_bounds_rows, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_retention_means, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_floor_refuses_new_runs, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
