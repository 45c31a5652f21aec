/* Integration: a run's trainer in a container (docs/containers.md). A coordinator (agents on an
 * ipc endpoint in the test's directory) and one host agent with --container (podman, the
 * skeleton root filesystem of scripts/container-rootfs.sh, the host's /usr and /etc read-only):
 * a sweep of LeNet-5 with runtime [bare, container] trains for real on this machine, both runs
 * are done with the same records (epochs, minibatches), the container run really ran in a
 * container (the agent's log names the engine), and `jetfleet containers` compares the two. A
 * second host agent without --container refuses a container run as infeasible, saying why. A
 * container run whose engine process is killed (SIGKILL) does not leave its container behind,
 * and a container of the board's runs that an earlier agent left is removed when the agent
 * starts (another board's is not).
 * Skipped (exit 77) with the reason where no container engine works. Prints name=value lines. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"
#include "jft_proc.h"
#include "jft_trainer.h"

#include "jf_parse.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define S_SKIP     77 // SKIP_RETURN_CODE in integration.cmake
#define S_ENGINE   "/usr/bin/podman"
#define S_PROBE_MS 60000
#define S_CMD_MAX  2048

#define S_REPEATS_MAX 20 // JF_CONTAINER_REPEATS (bench/container-overhead.sh), default 1

// The sweep, repeats times each combination (%d).
static const char s_sweep_fmt[] = "name: ctr\n"
                                  "target:\n  boards: [host-1]\n"
                                  "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 2}\n"
                                  "storage: [local]\nworkers: [0]\nbatch_sizes: [64]\n"
                                  "runtime: [bare, container]\nrepeats: %d\n";

static const char s_sweep_none[] = "name: ctr-none\n"
                                   "target:\n  boards: [host-2]\n"
                                   "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 1}\n"
                                   "storage: [local]\nruntime: container\n";

// A long container run, whose engine the test kills.
static const char s_sweep_kill[] = "name: ctr-kill\n"
                                   "target:\n  boards: [host-1]\n"
                                   "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 1000}\n"
                                   "storage: [local]\nworkers: [0]\nbatch_sizes: [16]\n"
                                   "runtime: container\n";

#define S_GONE_MS 10000 // the killed engine's container is gone within this (its run: ~1 min)

typedef struct s_ctx {
    jft_fleet_t fleet;
    char cmd[S_CMD_MAX]; // the agent's --container
} s_ctx_t;

// The container command for this host (scripts/container-rootfs.sh) plus the build tree, where
// the trainer is, read-only. 0, or -1 when the script fails.
static int s_container_cmd(s_ctx_t *c)
{
    char rootfs[PATH_MAX], out[PATH_MAX];
    (void) snprintf(rootfs, sizeof rootfs, "%s/rootfs", c->fleet.dir);
    (void) snprintf(out, sizeof out, "%s/rootfs.out", c->fleet.dir);
    char *argv[] = {"/bin/bash", JF_CONTAINER_ROOTFS_SCRIPT, rootfs, S_ENGINE, NULL};
    if (jft_run(argv, out, 30000, NULL) != 0) {
        return -1;
    }
    FILE *f = fopen(out, "r");
    char line[S_CMD_MAX] = "";
    bool ok = f && fgets(line, sizeof line, f);
    if (f) {
        (void) fclose(f);
    }
    line[strcspn(line, "\n")] = '\0';
    // The build tree (trainer and agent) must be visible at the same path inside.
    char build[PATH_MAX];
    (void) snprintf(build, sizeof build, "%s", JF_BUILD_DIR);
    char *rootfs_opt = strstr(line, " --rootfs ");
    if (!ok || !rootfs_opt) {
        return -1;
    }
    *rootfs_opt = '\0';
    int n =
        snprintf(c->cmd, sizeof c->cmd, "%s -v %s:%s:ro --rootfs %s", line, build, build, rootfs);
    return n > 0 && (size_t) n < sizeof c->cmd ? 0 : -1;
}

// The container command's words into argv (split in words, a copy of c->cmd), after ENGINE run
// the extra words (NULL-terminated, may be NULL), then tail words; NULL-terminated. argv holds 72.
static void s_command(const s_ctx_t *c, char *words, size_t size, const char *const *extra,
                      const char *const *tail, char **argv)
{
    (void) snprintf(words, size, "%s", c->cmd);
    size_t n = 0;
    for (char *w = words + strspn(words, " "); *w && n < 60; w += strspn(w, " ")) {
        argv[n++] = w;
        w += strcspn(w, " ");
        if (*w) {
            *w++ = '\0';
        }
        bool after_run = n == 2; // after ENGINE run
        for (size_t k = 0; after_run && extra && extra[k] && k < 4; k++) {
            argv[n++] = (char *) extra[k];
        }
    }
    for (size_t k = 0; tail && tail[k] && k < 4; k++) {
        argv[n++] = (char *) tail[k];
    }
    argv[n] = NULL;
}

// Runs the container command with /bin/true: whether an engine works here.
static bool s_engine_works(s_ctx_t *c, char *why, size_t size)
{
    if (access(S_ENGINE, X_OK) != 0) {
        (void) snprintf(why, size, "%s is not installed", S_ENGINE);
        return false;
    }
    char words[S_CMD_MAX], out[PATH_MAX];
    char *argv[72];
    s_command(c, words, sizeof words, NULL, (const char *const[]){"/bin/true", NULL}, argv);
    (void) snprintf(out, sizeof out, "%s/probe.out", c->fleet.dir);
    int rc = jft_run(argv, out, S_PROBE_MS, NULL);
    if (rc != 0) {
        (void) snprintf(why, size, "'%.60s /bin/true' exited %d (see %.120s)", c->cmd, rc, out);
    }
    return rc == 0;
}

static int s_setup(void **state)
{
    s_ctx_t *c = calloc(1, sizeof *c);
    *state = c;
    char agents[PATH_MAX];
    if (!c || jft_fleet_setup(&c->fleet, 2) != 0) {
        return -1;
    }
    (void) snprintf(agents, sizeof agents, "ipc://%s/agents.sock", c->fleet.dir);
    return jft_fleet_set_coord(&c->fleet, agents, NULL) == 0 && s_container_cmd(c) == 0 ? 0 : -1;
}

static int s_teardown(void **state)
{
    s_ctx_t *c = *state;
    int rc = jft_fleet_teardown(&c->fleet);
    free(c);
    return rc;
}

// A container run on an agent without --container is refused as infeasible, saying why.
static void s_check_no_engine(jft_fleet_t *f)
{
    assert_int_equal(jft_fleet_start_agent(f, 1, NULL), 0);
    assert_true(jft_fleet_wait_online(f, 1, 60000));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "ctr-none.yaml", s_sweep_none, sweep), 0);
    free(jft_cli_expect(f, 1, 60000,
                        (const char *const[]){"sweep", "submit", sweep, "--wait", NULL}));
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM runs WHERE board = 'host-2' AND "
                                          "state = 'failed' AND fail_reason = 'infeasible' AND "
                                          "fail_detail LIKE '%no container engine configured "
                                          "(--container)%'"),
                     1);
}

// The engine of host-1's running container run: its pid (the process whose stdout is the
// trainer's output file, once it runs the engine) and its container's name (after --name on its
// command line).
typedef struct s_engine {
    const char *state_dir;
    long long pid;
    char name[128];
} s_engine_t;

static bool s_engine_found(void *arg)
{
    s_engine_t *e = arg;
    char out[PATH_MAX], path[PATH_MAX];
    if (jft_trainer_find_output(e->state_dir, out) != 0 ||
        (e->pid = jft_trainer_pid_by_stdout(out)) <= 0) {
        return false;
    }
    (void) snprintf(path, sizeof path, "/proc/%lld/cmdline", e->pid);
    size_t len = 0;
    char *cmd = jft_read_file(path, &len);
    // Until its exec the child is a copy of the agent (held at its start gate): its command
    // line is the agent's own.
    bool engine = cmd && len > 0 && strcmp(cmd, S_ENGINE) == 0;
    for (size_t i = 0; engine && i < len; i += strlen(cmd + i) + 1) {
        if (strcmp(cmd + i, "--name") == 0 && i + 7 < len) {
            (void) snprintf(e->name, sizeof e->name, "%s", cmd + i + 7);
        }
    }
    free(cmd);
    return e->name[0] != '\0';
}

// Whether the engine lists a container of that name (all: stopped ones too).
static bool s_container_listed(jft_fleet_t *f, const char *name, bool all)
{
    char filter[160], out[PATH_MAX];
    (void) snprintf(filter, sizeof filter, "name=%s", name);
    (void) snprintf(out, sizeof out, "%s/podman-ps.out", f->dir);
    char *argv[] = {S_ENGINE, "ps", "-q", "--filter", filter, all ? "-a" : NULL, NULL};
    assert_int_equal(jft_run(argv, out, S_PROBE_MS, NULL), 0);
    char *text = jft_read_file(out, NULL);
    bool listed = text && text[strspn(text, " \n")] != '\0';
    free(text);
    return listed;
}

static double s_now_ms(void)
{
    struct timespec ts;
    (void) clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

typedef struct s_gone {
    jft_fleet_t *f;
    const char *name;
} s_gone_t;

static bool s_container_gone(void *arg)
{
    s_gone_t *g = arg;
    return !s_container_listed(g->f, g->name, true);
}

// A container run whose engine process dies by SIGKILL (as after the agent's grace, or the OOM
// killer) leaves a running container behind unless the agent removes it: the run's container is
// gone within S_GONE_MS of the kill. The retry that follows is cancelled.
static void s_check_engine_killed(jft_fleet_t *f)
{
    char sweep[PATH_MAX], state[PATH_MAX + 64];
    assert_int_equal(jft_fleet_write(f, "ctr-kill.yaml", s_sweep_kill, sweep), 0);
    free(jft_cli_expect(f, 0, 60000, (const char *const[]){"sweep", "submit", sweep, NULL}));
    (void) snprintf(state, sizeof state, JFT_FLEET_AGENT_STATE_FMT, f->dir, "host-1");
    s_engine_t e = {.state_dir = state};
    assert_true(jft_wait_until(s_engine_found, &e, 60000));
    s_gone_t g = {.f = f, .name = e.name};
    for (int i = 0; i < 600 && !s_container_listed(f, e.name, false); i++) {
        (void) usleep(100000); // the engine creates its container after it starts
    }
    assert_true(s_container_listed(f, e.name, false));
    double t0 = s_now_ms();
    assert_int_equal(kill((pid_t) e.pid, SIGKILL), 0);
    // Time as well as the answer: while the container runs on, `podman ps` itself may block
    // until it ends (seen: 62 s without the removal), and the run's own end removes it (--rm).
    bool gone = jft_wait_until(s_container_gone, &g, S_GONE_MS) && s_now_ms() - t0 <= S_GONE_MS;
    printf("engine_killed_container=%s container_gone=%s container_gone_s=%.1f\n", e.name,
           gone ? "yes" : "no", (s_now_ms() - t0) / 1000.0);
    free(jft_cli_expect(f, 0, 30000, (const char *const[]){"sweep", "cancel", "ctr-kill", NULL}));
    if (!gone) { // not left on the machine by a failing test
        char out[PATH_MAX];
        (void) snprintf(out, sizeof out, "%s/podman-rm.out", f->dir);
        char *argv[] = {S_ENGINE, "rm", "-f", e.name, NULL};
        (void) jft_run(argv, out, S_PROBE_MS, NULL);
    }
    assert_true(gone);
}

// Starts a detached container named name with the agent's container command, running sleep.
static void s_start_sleeper(s_ctx_t *c, const char *name)
{
    char words[S_CMD_MAX], out[PATH_MAX];
    char *argv[72];
    s_command(c, words, sizeof words, (const char *const[]){"-d", "--name", name, NULL},
              (const char *const[]){"/bin/sleep", "600", NULL}, argv);
    (void) snprintf(out, sizeof out, "%s/sleeper.out", c->fleet.dir);
    assert_int_equal(jft_run(argv, out, S_PROBE_MS, NULL), 0);
}

static void s_remove_container(jft_fleet_t *f, const char *name)
{
    char out[PATH_MAX];
    (void) snprintf(out, sizeof out, "%s/podman-rm.out", f->dir);
    char *argv[] = {S_ENGINE, "rm", "-f", "-t", "0", (char *) name, NULL};
    (void) jft_run(argv, out, S_PROBE_MS, NULL);
}

// A container of host-1's runs left by an earlier agent (here started by the test, as a run's
// would be named) is removed when host-1's agent starts; another board's, whose name starts the
// same way (host-1-b), is left alone.
static void s_start_removes_stale(s_ctx_t *c, const char *const *agent_args)
{
    jft_fleet_t *f = &c->fleet;
    const char *stale = "jf-host-1-00000000000000aa-1", *other = "jf-host-1-b-00000000000000aa-1";
    s_start_sleeper(c, stale);
    s_start_sleeper(c, other);
    assert_true(s_container_listed(f, stale, false) && s_container_listed(f, other, false));
    double t0 = s_now_ms();
    assert_int_equal(jft_fleet_start_agent_named(f, 0, "host-1", agent_args), 0);
    s_gone_t g = {.f = f, .name = stale};
    bool gone = jft_wait_until(s_container_gone, &g, S_GONE_MS);
    bool kept = s_container_listed(f, other, true);
    printf("stale_container_gone=%s stale_container_gone_s=%.1f other_board_container_kept=%s\n",
           gone ? "yes" : "no", (s_now_ms() - t0) / 1000.0, kept ? "yes" : "no");
    s_remove_container(f, other);
    if (!gone) {
        s_remove_container(f, stale);
    }
    assert_true(gone);
    assert_true(kept);
}

static void test_containers(void **state)
{
    s_ctx_t *c = *state;
    jft_fleet_t *f = &c->fleet;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    s_check_no_engine(f);
    char why[S_CMD_MAX + 256];
    if (!s_engine_works(c, why, sizeof why)) {
        printf("SKIP: no working container engine: %s\n", why);
        (void) jft_fleet_teardown(f);
        exit(S_SKIP);
    }
    printf("container_engine=%s\n", S_ENGINE);
    const char *args[] = {"--container", c->cmd, NULL};
    s_start_removes_stale(c, args);
    assert_true(jft_fleet_wait_online(f, 2, 60000));
    const char *env = getenv("JF_CONTAINER_REPEATS");
    int64_t r64 = 1;
    assert_int_equal(env ? jf_parse_i64(env, 1, S_REPEATS_MAX, &r64, NULL) : 0, 0);
    int repeats = (int) r64;
    char sweep[PATH_MAX], yaml[sizeof s_sweep_fmt + 16];
    (void) snprintf(yaml, sizeof yaml, s_sweep_fmt, repeats);
    assert_int_equal(jft_fleet_write(f, "ctr.yaml", yaml, sweep), 0);
    free(jft_cli_expect(f, 0, 200000 * repeats,
                        (const char *const[]){"sweep", "submit", sweep, "--wait", NULL}));
    // All done, with the same records: two epochs and the same minibatches each.
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM runs WHERE state = 'done' AND "
                                          "board = 'host-1'"),
                     2 * repeats);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM runs WHERE runtime = 'container' "
                                          "AND board = 'host-1'"),
                     repeats);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(DISTINCT n) FROM (SELECT count(*) AS n "
                                          "FROM minibatches GROUP BY run)"),
                     1);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM epochs e JOIN runs r ON r.id = "
                                          "e.run WHERE r.board = 'host-1'"),
                     4 * repeats);
    // The container run went through the engine: the agent logged its command.
    char log[PATH_MAX];
    (void) snprintf(log, sizeof log, "%s/agent-host-1.log", f->dir);
    char *text = jft_read_file(log, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, S_ENGINE " run"));
    free(text);
    char *out =
        jft_cli_expect(f, 0, 30000, (const char *const[]){"containers", "--sweep", "ctr", NULL});
    printf("%s", out);
    char pairs[32];
    (void) snprintf(pairs, sizeof pairs, "pairs=%d\n", repeats);
    assert_non_null(strstr(out, pairs));
    assert_non_null(strstr(out, "time_overhead_pct="));
    assert_non_null(strstr(out, "run_time_overhead_pct="));
    assert_non_null(strstr(out, "cpu_load_delta_pct="));
    assert_non_null(strstr(out, "ram_used_delta_mib="));
    free(out);
    s_check_engine_killed(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_containers, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
