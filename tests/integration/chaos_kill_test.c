/* Integration (reliability, issue #11): kill -9 chaos during a sweep on simulated boards. The
 * coordinator is SIGKILLed at seeded random moments and restarted on the same data dir, and some
 * agents are SIGKILLed mid-run and restarted on their state dir (docs/protocol.md §4.4). At the
 * end the figures come from the store: lost_runs, duplicate_results, missing_samples and
 * PRAGMA integrity_check. Sizes come from the environment (JF_CHAOS_*), so bench/chaos-kill.sh
 * runs the full size (20 agents, 200 runs, 10 kills) with the same binary. */
#include "jf_err.h"
#include "jf_parse.h"
#include "jf_units.h"
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"
#include "jft_sweep.h"

#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define S_WAIT_MS      60000  // bound of each readiness wait (jft_wait_until scales it)
#define S_CLI_MS       120000 // bound of a CLI call
#define S_GAP_MIN_MS   400    // shortest time between two kills
#define S_GAP_SPAN_MS  1600   // plus a seeded random part below this
#define S_BUSY_TRIES   100    // looks for a training agent, S_BUSY_POLL_MS apart
#define S_BUSY_POLL_MS 50
#define S_YOUNG_MS     700 // a trainer killed with its agent is younger (a run lasts ~2 s here)
#define S_RESUBMITS    3 // sweep submissions after the chaos (for runs the kills failed)

// The chaos's size and schedule, from JF_CHAOS_* (defaults: the CI size).
typedef struct s_params {
    int64_t agents;      // JF_CHAOS_AGENTS: simulated Xavier NX boards
    int64_t repeats;     // JF_CHAOS_REPEATS: runs = agents x 2 batch sizes x repeats
    int64_t coord_kills; // JF_CHAOS_COORD_KILLS: coordinator SIGKILLs
    int64_t agent_kills; // JF_CHAOS_AGENT_KILLS: agent SIGKILLs mid-run
    int64_t seed;        // JF_CHAOS_SEED: the kill schedule's random source
    int64_t bound_s;     // JF_CHAOS_BOUND_S: the sweep must be finished by then (scaled)
} s_params_t;

typedef struct s_figures {
    long long runs_expected;     // runs the sweep expands to
    long long coord_kills;       // coordinator SIGKILLs done
    long long agent_kills;       // agent SIGKILLs done while the agent had a run running
    long long trainer_kills;     // of those, the ones that took the run's trainer along
    long long crashed_failures;  // attempts the restarted agents reported crashed
    long long resubmits;         // sweep submissions after the chaos
    long long lost_runs;         // runs expected but not done at the end
    long long duplicate_results; // run.done beyond one per run, telemetry stored twice
    long long missing_samples;   // done attempts: samples taken (measure) minus stored, epochs
    char integrity[64];          // PRAGMA integrity_check's first row
} s_figures_t;

static int64_t s_env(const char *name, int64_t dflt, int64_t max)
{
    const char *text = getenv(name);
    int64_t v = dflt;
    jf_err_t err = {0};
    if (text && jf_parse_i64(text, 0, max, &v, &err) != 0) {
        fail_msg("%s: %s", name, err.msg);
    }
    return v;
}

static void s_params_read(s_params_t *p)
{
    p->agents = s_env("JF_CHAOS_AGENTS", 8, JFT_FLEET_AGENTS_MAX);
    p->repeats = s_env("JF_CHAOS_REPEATS", 4, 100);
    p->coord_kills = s_env("JF_CHAOS_COORD_KILLS", 6, 100);
    p->agent_kills = s_env("JF_CHAOS_AGENT_KILLS", 2, 100);
    p->seed = s_env("JF_CHAOS_SEED", 11, INT32_MAX);
    p->bound_s = s_env("JF_CHAOS_BOUND_S", 90, 3600);
    if (p->agents < 1 || p->repeats < 1) {
        fail_msg("JF_CHAOS_AGENTS and JF_CHAOS_REPEATS must be at least 1");
    }
}

static const char *const s_agent_args[] = {
    "--sim-speed", "5", "--sim-scale", "0.2", "--sim-seed", "7", "--log-level", "notice", NULL};

static int s_setup(void **state)
{
    s_params_t p = {0};
    s_params_read(&p);
    jft_fleet_t *f = calloc(1, sizeof *f);
    const char *types[JFT_FLEET_AGENTS_MAX];
    for (size_t i = 0; i < (size_t) p.agents; i++) {
        types[i] = "xavier-nx";
    }
    *state = f;
    return f && jft_fleet_setup_sims(f, 0, types, (size_t) p.agents) == 0 ? 0 : -1;
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

static long long s_sql(jft_fleet_t *f, const char *sql)
{
    long long v = jft_fleet_sql_int(f, sql);
    if (v < 0) {
        fail_msg("query failed: %s", sql);
    }
    return v;
}

static void s_submit(jft_fleet_t *f, const s_params_t *p, bool wait)
{
    char text[512], path[PATH_MAX];
    (void) snprintf(text, sizeof text,
                    "name: chaos\ntarget:\n  device_types: [xavier-nx]\n"
                    "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 3}\n"
                    "power_modes: [MODE_20W_6CORE]\nstorage: [nvme]\nworkers: [1]\n"
                    "batch_sizes: [32, 64]\nrepeats: %lld\ntelemetry_hz: 10\n",
                    (long long) p->repeats);
    assert_int_equal(jft_fleet_write(f, "chaos.yaml", text, path), 0);
    const char *const args[] = {"sweep", "submit", path, wait ? "--wait" : NULL, NULL};
    char out[PATH_MAX + 16];
    (void) snprintf(out, sizeof out, "%s/submit.out", f->dir);
    int rc = jft_fleet_cli(f, out, S_CLI_MS, args);
    // With --wait the CLI exits 1 when a run ended failed; the figures judge that, not the CLI.
    if (rc != 0 && !(wait && rc == 1)) {
        char *said = jft_read_file(out, NULL);
        fail_msg("sweep submit exited %d: %s", rc, said ? said : "(no output)");
    }
}

// Rewrites fleet.yaml so that every restart binds the port the first start got. With
// tcp://127.0.0.1:* a restarted coordinator may get another port (libzmq takes the first free
// one from 49152, and other tests on the machine take ports too) while the agents keep their
// --coordinator: they would never find it, or find another test's coordinator. A port taken
// meanwhile now fails the restart, naming it, instead.
static void s_pin_endpoint(jft_fleet_t *f)
{
    char *yaml = jft_read_file(f->config, NULL);
    assert_non_null(yaml);
    const char wildcard[] = "tcp://127.0.0.1:*";
    char *at = strstr(yaml, wildcard);
    if (!at) {
        free(yaml); // an ipc endpoint (jft_fleet's default) keeps its path: nothing to pin
        return;
    }
    *at = '\0';
    size_t size = strlen(yaml) + strlen(f->endpoint) + strlen(at + sizeof wildcard - 1) + 1;
    char *pinned = malloc(size);
    assert_non_null(pinned);
    (void) snprintf(pinned, size, "%s%s%s", yaml, f->endpoint, at + sizeof wildcard - 1);
    assert_int_equal(jft_write_file(f->config, pinned), 0);
    free(pinned);
    free(yaml);
}

static void s_kill_coordinator(jft_fleet_t *f)
{
    int status = 0;
    jft_proc_signal(&f->coord, SIGKILL);
    assert_int_equal(jft_proc_wait(&f->coord, 10000, &status), 0);
    char endpoint[PATH_MAX + 16];
    (void) snprintf(endpoint, sizeof endpoint, "%s/endpoint", f->data_dir);
    assert_int_equal(unlink(endpoint), 0); // else the stale endpoint is taken for readiness
    if (jft_fleet_start_coordinator(f) != 0) {
        fail_msg("the coordinator did not restart on %s (port taken?): see %s/coordinator.log",
                 f->endpoint, f->dir);
    }
}

// A trainer's age in ms from /proc (its start time in clock ticks since boot against the
// uptime), -1 when it cannot be read or it has ended (a zombie its agent has not reaped yet).
static int64_t s_trainer_age_ms(pid_t pid)
{
    char path[64];
    (void) snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
    char *stat = jft_read_file(path, NULL);
    char *uptime = jft_read_file("/proc/uptime", NULL);
    char *p = stat ? strrchr(stat, ')') : NULL;
    char state = 0;
    unsigned long long start_ticks = 0;
    double up_s = 0;
    // After the comm: state (field 3), then 18 fields up to starttime (field 22).
    bool ok = p &&
              sscanf(p + 1,
                     " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
                     "%*s %*s %*s %*s %llu",
                     &state, &start_ticks) == 2 &&
              uptime && sscanf(uptime, "%lf", &up_s) == 1 && state != 'Z';
    free(stat);
    free(uptime);
    long hz = sysconf(_SC_CLK_TCK);
    if (!ok || hz <= 0) {
        return -1;
    }
    return (int64_t) (up_s * 1000.0) - (int64_t) (start_ticks * 1000ULL / (unsigned long long) hz);
}

// Reads the agent's trainer children from /proc (the comm names jetfleet-train*, cut at 15
// bytes); returns how many, at most max. None: the agent is between runs. *youngest_ms: the
// least age among them (s_trainer_age_ms; -1 when one has ended or cannot be read).
static size_t s_trainers(pid_t pid, pid_t *out, size_t max, int64_t *youngest_ms)
{
    char path[96];
    (void) snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int) pid, (int) pid);
    char *text = jft_read_file(path, NULL);
    size_t n = 0;
    char *end = NULL;
    *youngest_ms = INT64_MAX;
    for (char *p = text; p && n < max; p = end) {
        long v = strtol(p, &end, 10);
        if (end == p) {
            break;
        }
        (void) snprintf(path, sizeof path, "/proc/%ld/comm", v);
        char *comm = jft_read_file(path, NULL);
        if (comm && strncmp(comm, "jetfleet-train", 14) == 0) {
            out[n++] = (pid_t) v;
            int64_t age = s_trainer_age_ms((pid_t) v);
            *youngest_ms =
                age < 0 || *youngest_ms < 0 ? -1 : (age < *youngest_ms ? age : *youngest_ms);
        }
        free(comm);
    }
    free(text);
    return n;
}

// SIGKILLs the agent of a board that is training (a trainer child alive: its run is mid-way, the
// final message not produced), the first such board from a seeded random start; with
// with_trainer its trainer too (in its own process group), otherwise the trainer is left alive
// and the restarted agent re-attaches to it (docs/protocol.md §4.4.1). Restarts the agent on its
// state dir.
// A trainer killed along is one younger than S_YOUNG_MS, not one near its end: a trainer that has
// written its final record and not yet exited (or not yet been reaped) would leave a done run,
// and the check that such kills fail their runs could not tell that from a re-attach bug.
// False when no agent was training (with_trainer: no trainer young enough).
static bool s_kill_busy_agent(jft_fleet_t *f, bool with_trainer, unsigned *rng)
{
    size_t start = (size_t) rand_r(rng) % f->n_sims;
    for (size_t k = 0; k < f->n_sims; k++) {
        size_t i = (start + k) % f->n_sims;
        jft_proc_t *a = &f->agents[i];
        pid_t kids[4];
        int64_t youngest_ms = -1;
        size_t n_kids = s_trainers(a->pid, kids, 4, &youngest_ms);
        if (n_kids == 0 || (with_trainer && (youngest_ms < 0 || youngest_ms >= S_YOUNG_MS))) {
            continue;
        }
        assert_int_equal(kill(a->pid, SIGKILL), 0); // the agent alone: not its trainer's group
        for (size_t c = 0; with_trainer && c < n_kids; c++) {
            (void) kill(-kids[c], SIGKILL); // gone already (it crashed): its run fails all the same
        }
        int status = 0;
        assert_int_equal(jft_proc_wait(a, 10000, &status), 0);
        assert_int_equal(jft_fleet_start_sim_agent(f, i, s_agent_args), 0);
        return true;
    }
    return false;
}

// The fault schedule: kills at seeded random moments, agents' between the coordinator's.
static void s_chaos(jft_fleet_t *f, const s_params_t *p, s_figures_t *g)
{
    unsigned rng = (unsigned) p->seed;
    int64_t agent_left = p->agent_kills;
    for (int64_t k = 0; k < p->coord_kills; k++) {
        // Not a wait for readiness: the time between faults is the schedule itself.
        (void) poll(NULL, 0, S_GAP_MIN_MS + (int) (rand_r(&rng) % S_GAP_SPAN_MS));
        s_kill_coordinator(f);
        g->coord_kills++;
        if (agent_left > 0 && (rand_r(&rng) % 2 == 0 || k + agent_left >= p->coord_kills)) {
            (void) poll(NULL, 0, S_GAP_MIN_MS + (int) (rand_r(&rng) % S_GAP_SPAN_MS));
            // Right after a coordinator restart every board may be between runs: look again
            // until one trains, within a bound.
            bool killed = false;
            bool with_trainer = g->agent_kills % 2 == 1;
            for (int tries = 0; !killed && tries < S_BUSY_TRIES; tries++) {
                killed = s_kill_busy_agent(f, with_trainer, &rng);
                (void) poll(NULL, 0, killed ? 0 : S_BUSY_POLL_MS);
            }
            g->agent_kills += killed;
            g->trainer_kills += killed && with_trainer;
            agent_left--;
        }
    }
}

static bool s_finished(void *arg)
{
    return jft_sweep_finished(arg);
}

static void s_measure(jft_fleet_t *f, s_figures_t *g)
{
    g->lost_runs = g->runs_expected - s_sql(f, "SELECT count(*) FROM runs WHERE state = 'done'");
    g->duplicate_results =
        s_sql(f, "SELECT (SELECT count(*) FROM events WHERE kind = 'run.done') - (SELECT "
                 "count(DISTINCT run) FROM events WHERE kind = 'run.done') + (SELECT count(*) - "
                 "count(DISTINCT run || '/' || attempt || '/' || t_us) FROM telemetry)");
    // Every done attempt: the samples its agent took (the measure record's count) all stored,
    // and every epoch of the run.
    g->missing_samples = s_sql(
        f, "SELECT coalesce(sum(abs(json_extract(r.measure, '$.telemetry.samples') - (SELECT "
           "count(*) FROM telemetry m WHERE m.run = r.id AND m.attempt = r.attempt)) + r.epochs - "
           "(SELECT count(*) FROM epochs e WHERE e.run = r.id AND e.attempt = r.attempt)), 0) "
           "FROM runs r WHERE r.state = 'done'");
    if (g->missing_samples != 0) {
        // Which attempts, and what differs: taken against stored samples, epochs against stored.
        char *which = jft_fleet_sql_text(
            f, "SELECT group_concat(x, ' ') FROM (SELECT r.id || '/' || r.attempt || ':taken=' || "
               "json_extract(r.measure, '$.telemetry.samples') || ',stored=' || (SELECT count(*) "
               "FROM telemetry m WHERE m.run = r.id AND m.attempt = r.attempt) || ',epochs=' || "
               "r.epochs || ',stored_epochs=' || (SELECT count(*) FROM epochs e WHERE e.run = "
               "r.id AND e.attempt = r.attempt) AS x FROM runs r WHERE r.state = 'done' AND "
               "(json_extract(r.measure, '$.telemetry.samples') != (SELECT count(*) FROM telemetry "
               "m WHERE m.run = r.id AND m.attempt = r.attempt) OR r.epochs != (SELECT count(*) "
               "FROM epochs e WHERE e.run = r.id AND e.attempt = r.attempt)))");
        printf("missing_in=%s\n", which ? which : "(query failed)");
        free(which);
    }
    g->crashed_failures = s_sql(f, "SELECT count(*) FROM events WHERE kind = 'run.failed' AND "
                                   "detail = 'crashed'");
    char *ic = jft_fleet_sql_text(f, "PRAGMA integrity_check");
    (void) snprintf(g->integrity, sizeof g->integrity, "%s", ic ? ic : "(query failed)");
    free(ic);
}

static void s_print(const s_params_t *p, const s_figures_t *g)
{
    printf("agents=%lld\nruns=%lld\nseed=%lld\ncoordinator_kills=%lld\nagent_kills_mid_run=%lld\n"
           "trainer_kills=%lld\ncrashed_failures=%lld\nresubmits=%lld\nlost_runs=%lld\nduplicate_"
           "results=%lld\n"
           "missing_samples=%lld\nintegrity_check=%s\n",
           (long long) p->agents, g->runs_expected, (long long) p->seed, g->coord_kills,
           g->agent_kills, g->trainer_kills, g->crashed_failures, g->resubmits, g->lost_runs,
           g->duplicate_results, g->missing_samples, g->integrity);
    fflush(stdout);
}

static void test_chaos_kill(void **state)
{
    jft_fleet_t *f = *state;
    s_params_t p = {0};
    s_figures_t g = {0};
    s_params_read(&p);
    g.runs_expected = p.agents * 2 * p.repeats;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    for (size_t i = 0; i < (size_t) p.agents; i++) {
        assert_int_equal(jft_fleet_start_sim_agent(f, i, s_agent_args), 0);
    }
    assert_true(jft_fleet_wait_online(f, (size_t) p.agents, S_WAIT_MS));
    s_pin_endpoint(f);
    int64_t t0_us = jf_clock_mono_us();
    s_submit(f, &p, false);
    s_chaos(f, &p, &g);
    assert_true(jft_wait_until(s_finished, f, (int) (p.bound_s * 1000)));
    // An attempt whose agent died with it is failed (crashed) by the restarted agent, which is
    // final (docs/protocol.md §5.1): submitting the sweep again re-runs it, as an operator would.
    while (g.resubmits < S_RESUBMITS && s_sql(f, "SELECT count(*) FROM runs WHERE state != "
                                                 "'done'") > 0) {
        s_submit(f, &p, true);
        g.resubmits++;
    }
    printf("sweep_wall_ms=%lld\n", (long long) ((jf_clock_mono_us() - t0_us) / JF_US_PER_MS));
    s_measure(f, &g);
    s_print(&p, &g);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs"), g.runs_expected);
    assert_int_equal(g.coord_kills, p.coord_kills);
    assert_int_equal(g.lost_runs, 0);
    assert_int_equal(g.duplicate_results, 0);
    assert_int_equal(g.missing_samples, 0);
    assert_string_equal(g.integrity, "ok");
    // Every second agent kill takes its (young) trainer along: the restarted agent fails that run
    // as crashed. The others re-attach, but an agent killed while its new trainer waits at its
    // gate (not yet recorded in the spool) leaves an orphan stream, also reported crashed.
    assert_true(g.crashed_failures >= g.trainer_kills);
    assert_true(g.crashed_failures <= g.agent_kills);
    assert_int_equal(s_sql(f, "SELECT count(*) FROM runs WHERE state = 'done' AND measure IS "
                              "NULL"),
                     0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_chaos_kill, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
