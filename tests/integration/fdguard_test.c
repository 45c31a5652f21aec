/* Integration: idle connections must not kill the coordinator (docs/protocol.md §1.6). With its
 * open-file limit at 256 (soft and hard) and a sweep running on simulated boards, 1000 plain TCP
 * connections that never speak ZeroMQ are opened to the agents' port and held for 30 s: the
 * coordinator stays up, `jetfleet status` answers every second and shows the pause, no run is
 * lost, and a new agent registers afterwards. With only the soft limit low, the log shows it
 * raised to the hard limit. With a short handshake_timeout, idle connections are closed by it. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define S_SIMS         3    // sim-3 registers only after the flood
#define S_IDLE         1000 // idle connections of the flood
#define S_HOLD_S       30   // how long they are held
#define S_LIMIT        256  // the coordinator's open-file limit
#define S_STALE        20   // idle connections of the handshake test
#define S_HANDSHAKE_MS 1000

static const char *const s_agent_args[] = {
    "--sim-speed", "100", "--sim-scale", "0.05", "--sim-seed", "7", "--log-level", "notice", NULL};

static const char s_sweep[] = "name: fdflood\n"
                              "target:\n  device_types: [xavier-nx]\n"
                              "workloads:\n  - {model: resnet18, dataset: cifar10, epochs: 2}\n"
                              "power_modes: [MODE_15W_6CORE, MODE_10W_4CORE]\n"
                              "storage: [nvme]\nworkers: [1]\nbatch_sizes: [16, 32]\n";

static int64_t s_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

// Puts `handshake_timeout: <ms>ms` into the coordinator section of the fleet's fleet.yaml.
static void s_set_handshake(jft_fleet_t *f, int ms)
{
    char *text = jft_read_file(f->config, NULL);
    assert_non_null(text);
    const char *at = strstr(text, "coordinator:\n");
    assert_non_null(at);
    size_t head = (size_t) (at - text) + strlen("coordinator:\n");
    size_t size = strlen(text) + 64;
    char *out = malloc(size);
    assert_non_null(out);
    (void) snprintf(out, size, "%.*s  handshake_timeout: %dms\n%s", (int) head, text, ms,
                   text + head);
    assert_int_equal(jft_write_file(f->config, out), 0);
    free(out);
    free(text);
}

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    const char *types[S_SIMS] = {"xavier-nx", "xavier-nx", "xavier-nx"};
    *state = f;
    // TCP: the test floods the agent port with plain TCP connections. Its boards then carry the
    // fleet's prefix (jft_fleet_board), so that no other test's agent is one of them.
    return f && jft_fleet_setup_sims(f, 0, types, S_SIMS) == 0 &&
                   jft_fleet_set_coord(f, "tcp://127.0.0.1:*", NULL) == 0
               ? 0
               : -1;
}

// Runs in one of states (an SQL list) on boards other than sim-3 (which registers after the
// flood).
static long long s_runs_not_sim3(jft_fleet_t *f, const char *states)
{
    char sql[512];
    (void) snprintf(sql, sizeof sql,
                    "SELECT count(*) FROM runs WHERE board != '%s' AND state IN (%s)",
                    jft_fleet_board(f, "sim-3"), states);
    return jft_fleet_sql_int(f, sql);
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

// The port of "tcp://127.0.0.1:<port>".
static int s_port(const jft_fleet_t *f)
{
    const char *colon = strrchr(f->endpoint, ':');
    assert_non_null(colon);
    return (int) strtol(colon + 1, NULL, 10);
}

// Opens n non-blocking connections to the port that send nothing; returns how many started.
static int s_open_idle(int port, int *fds, int n)
{
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t) port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int opened = 0;
    for (int i = 0; i < n; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fds[i] < 0) {
            break;
        }
        if (connect(fds[i], (struct sockaddr *) &sa, sizeof sa) != 0 && errno != EINPROGRESS) {
            close(fds[i]);
            fds[i] = -1;
            continue;
        }
        opened++;
    }
    return opened;
}

// True when the peer has closed the connection (EOF or reset). libzmq sends its greeting as soon
// as it accepts, so whatever was sent is read and dropped first.
static bool s_peer_closed(int fd)
{
    if (fd < 0) {
        return true;
    }
    for (;;) {
        char buf[256];
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0) {
            return true;
        }
        if (n < 0) {
            return errno != EAGAIN && errno != EWOULDBLOCK;
        }
    }
}

static void s_close_all(int *fds, int n)
{
    for (int i = 0; i < n; i++) {
        if (fds[i] >= 0) {
            close(fds[i]);
        }
        fds[i] = -1;
    }
}

// The test process needs a descriptor per idle connection.
static void s_raise_own_limit(void)
{
    struct rlimit rl = {0};
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    rl.rlim_cur = rl.rlim_max;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < S_IDLE + 100) {
        fail_msg("the test needs an open-file hard limit of %d, have %llu", S_IDLE + 100,
                 (unsigned long long) rl.rlim_max);
    }
}

// Runs `jetfleet status`; returns its output (caller frees; NULL if it failed) and its wall time
// in *ret_ms.
static char *s_status(jft_fleet_t *f, int64_t *ret_ms)
{
    char path[PATH_MAX];
    jft_path(path, f->dir, "status.out");
    int64_t t0 = s_now_ms();
    int rc = jft_fleet_cli(f, path, 10000, (const char *const[]) {"status", NULL});
    *ret_ms = s_now_ms() - t0;
    return rc == 0 ? jft_read_file(path, NULL) : NULL;
}

static char *s_log(jft_fleet_t *f)
{
    char path[PATH_MAX];
    jft_path(path, f->dir, "coordinator.log");
    char *text = jft_read_file(path, NULL);
    assert_non_null(text);
    return text;
}

// Restarts the coordinator with another open-file limit (the old endpoint file goes first, so
// that the new one is waited for).
static void s_restart(jft_fleet_t *f, long soft, long hard)
{
    if (f->coord.pid > 0) {
        assert_int_equal(jft_proc_stop(&f->coord), 0);
    }
    char path[PATH_MAX];
    jft_path(path, f->data_dir, "endpoint");
    (void) unlink(path);
    assert_int_equal(jft_fleet_start_coordinator_nofile(f, soft, hard), 0);
}

static void test_soft_limit_raised(void **state)
{
    jft_fleet_t *f = *state;
    s_restart(f, S_LIMIT, 4096);
    char *log = s_log(f);
    bool raised = strstr(log, "open-file limit: soft 256, hard 4096; soft now 4096") != NULL;
    printf("soft_limit_raised=%d\n", raised);
    free(log);
    assert_true(raised);
}

typedef struct s_flood {
    int n_open;            // idle connections started
    int64_t status_max_ms; // slowest `jetfleet status` during the hold
    int status_samples;
    bool paused_shown; // a status said agent accepts were stopped
    bool alive;        // the coordinator never exited
    int closed;        // idle connections the coordinator closed during the hold
    int port_taken;    // times another socket could bind the agents' port during the hold
    int status_failed; // `jetfleet status` runs that did not exit 0
} s_flood_t;

// True if a socket of ours can bind the agents' address: the coordinator has let it go, and any
// local process could take it and pose as the coordinator.
static bool s_port_free(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t) port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1;
    assert_true(fd >= 0);
    (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    bool free_ = bind(fd, (struct sockaddr *) &sa, sizeof sa) == 0;
    close(fd);
    return free_;
}

static void s_hold(jft_fleet_t *f, int *fds, s_flood_t *r)
{
    r->alive = true;
    int64_t end = s_now_ms() + S_HOLD_S * 1000;
    while (s_now_ms() < end) {
        int64_t t0 = s_now_ms();
        int64_t ms = 0;
        char *out = s_status(f, &ms);
        r->status_failed += out == NULL;
        r->paused_shown |= out && strstr(out, "NOT accepting new agent connections") != NULL;
        free(out);
        r->status_max_ms = ms > r->status_max_ms ? ms : r->status_max_ms;
        r->status_samples++;
        r->alive &= jft_proc_alive(&f->coord);
        if (!r->alive) {
            break; // every later status would wait its full timeout
        }
        r->port_taken += s_port_free(s_port(f));
        int64_t left = 1000 - (s_now_ms() - t0);
        if (left > 0) {
            (void) poll(NULL, 0, (int) left);
        }
    }
    for (int i = 0; i < S_IDLE; i++) {
        r->closed += fds[i] >= 0 && s_peer_closed(fds[i]);
    }
}

static long long s_sql(jft_fleet_t *f, const char *sql)
{
    return jft_fleet_sql_int(f, sql);
}

static bool s_sweep_over(void *arg)
{
    return s_sql(arg, "SELECT count(*) FROM runs WHERE state IN ('pending', 'assigned', "
                      "'running')") == 0;
}

static bool s_some_running(void *arg)
{
    return s_sql(arg, "SELECT count(*) FROM runs WHERE state = 'running'") > 0;
}

// Starts two of the three boards and a sweep on them; returns how many of their runs are not
// finished once one is running.
static long long s_start_sweep(jft_fleet_t *f)
{
    for (size_t i = 0; i < S_SIMS - 1; i++) {
        assert_int_equal(jft_fleet_start_sim_agent(f, i, s_agent_args), 0);
    }
    assert_true(jft_fleet_wait_online(f, S_SIMS - 1, 60000));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "fdflood.yaml", s_sweep, sweep), 0);
    free(jft_cli_expect(f, 0, 60000, (const char *const[]) {"sweep", "submit", sweep, NULL}));
    assert_true(jft_wait_until(s_some_running, f, 60000));
    return s_runs_not_sim3(f, "'pending', 'assigned', 'running'");
}

static void s_flood(jft_fleet_t *f, s_flood_t *r)
{
    int *fds = malloc(S_IDLE * sizeof *fds);
    assert_non_null(fds);
    r->n_open = s_open_idle(s_port(f), fds, S_IDLE);
    s_hold(f, fds, r);
    s_close_all(fds, S_IDLE);
    free(fds);
    char *log = s_log(f);
    bool log_pause = strstr(log, "fdguard:") && strstr(log, "stopped accepting agent");
    bool log_resume = strstr(log, "accepting agent connections on") != NULL;
    free(log);
    printf("idle_connections=%d\ncoordinator_alive=%d\nstatus_samples=%d\nstatus_failed=%d\n"
           "status_max_ms=%lld\nstatus_shows_pause=%d\nidle_closed_by_coordinator=%d\n"
           "log_pause=%d\nlog_resume=%d\nagent_port_free_samples=%d\n",
           r->n_open, r->alive && jft_proc_alive(&f->coord), r->status_samples, r->status_failed,
           (long long)r->status_max_ms, r->paused_shown, r->closed, log_pause, log_resume,
           r->port_taken);
    assert_int_equal(r->n_open, S_IDLE);
    assert_true(r->alive && jft_proc_alive(&f->coord));
    assert_int_equal(r->status_failed, 0);
    assert_true(r->status_max_ms < 1000 * jft_timeout_scale());
    assert_true(r->paused_shown);
    assert_int_equal(r->port_taken, 0);
    assert_true(log_pause && log_resume);
}

static void test_flood_at_limit(void **state)
{
    jft_fleet_t *f = *state;
    s_raise_own_limit();
    s_restart(f, S_LIMIT, S_LIMIT);
    int64_t t_submit = s_now_ms();
    long long active = s_start_sweep(f);
    long long done_before = s_runs_not_sim3(f, "'done'");
    s_flood_t r = {0};
    s_flood(f, &r);
    long long done_in_hold = s_runs_not_sim3(f, "'done'") - done_before;
    // Afterwards a board that was never connected registers, and the sweep ends.
    assert_int_equal(jft_fleet_start_sim_agent(f, S_SIMS - 1, s_agent_args), 0);
    bool registered = jft_fleet_wait_online(f, S_SIMS, 60000);
    bool over = jft_wait_until(s_sweep_over, f, 90000);
    long long lost = s_sql(f, "SELECT count(*) FROM events WHERE kind = 'run.requeued' OR "
                              "(kind = 'run.failed' AND detail LIKE '%lost%')");
    long long failed = s_sql(f, "SELECT count(*) FROM runs WHERE state = 'failed'");
    printf("runs_unfinished_at_flood=%lld\nruns_done_during_hold=%lld\nnew_agent_registered=%d\n"
           "sweep_over=%d\nsweep_s=%.1f\nlost_runs=%lld\nfailed_runs=%lld\n",
           active, done_in_hold, registered, over, (double) (s_now_ms() - t_submit) / 1000.0, lost,
           failed);
    assert_true(active > 0); // the flood met a sweep in progress on connected boards
    assert_true(registered);
    assert_true(over);
    assert_int_equal(lost, 0);
    assert_int_equal(failed, 0);
}

typedef struct s_stale {
    int *fds;
    int n;
} s_stale_t;

static bool s_all_closed(void *arg)
{
    s_stale_t *s = arg;
    for (int i = 0; i < s->n; i++) {
        if (s->fds[i] >= 0 && !s_peer_closed(s->fds[i])) {
            return false;
        }
    }
    return true;
}

static void test_handshake_timeout(void **state)
{
    jft_fleet_t *f = *state;
    s_set_handshake(f, S_HANDSHAKE_MS);
    s_restart(f, 4096, 4096);
    int fds[S_STALE];
    s_stale_t s = {fds, s_open_idle(s_port(f), fds, S_STALE)};
    assert_int_equal(s.n, S_STALE);
    int64_t t0 = s_now_ms();
    // libzmq closes them at the timeout; the bound allows for a loaded machine.
    bool all = jft_wait_until(s_all_closed, &s, S_HANDSHAKE_MS + 2000);
    int64_t took_ms = s_now_ms() - t0;
    int closed = 0;
    for (int i = 0; i < S_STALE; i++) {
        closed += s_peer_closed(fds[i]);
    }
    char *out = jft_cli_expect(f, 0, 10000, (const char *const[]) {"status", NULL});
    long long counted = -1;
    const char *at = strstr(out, "in use; ");
    if (at) {
        counted = strtoll(at + strlen("in use; "), NULL, 10);
    }
    printf("handshake_timeout_ms=%d\nstale_handshakes_closed=%d\nstale_close_ms=%lld\n"
           "status_handshake_failures=%lld\n",
           S_HANDSHAKE_MS, closed, (long long)took_ms, counted);
    free(out);
    s_close_all(fds, S_STALE);
    assert_true(all);
    assert_int_equal(closed, S_STALE);
    assert_true(took_ms >= S_HANDSHAKE_MS - 100); // closed by the timeout, not at once
    assert_true(counted >= S_STALE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_soft_limit_raised, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_handshake_timeout, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_flood_at_limit, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
