/* Unit tests for coord_fdguard's pure parts (thresholds, hysteresis, event classes, counting a
 * directory) and for the accept path: with every descriptor in use, a Unix-domain accept takes a
 * spare, then reports ENFILE (never EMFILE), while a TCP accept still reports EMFILE. */
#include "coord_fdguard.h"
#include "jf_log.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#define T_S   INT64_C(1000000)
#define T_FDS 512 // enough /dev/null descriptors to use up the lowered limit

static void test_levels(void **state)
{
    (void) state;
    static const struct {
        long limit, high, low;
    } rows[] = {
        {256, 224, 192}, {1024, 896, 768},       {64, 48, 32},
        {20, 4, 0},      {100000, 99744, 99488}, {0, 0, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        coord_fdguard_levels_t lv = coord_fdguard_levels(rows[i].limit);
        assert_int_equal(lv.high_fds, rows[i].high);
        assert_int_equal(lv.low_fds, rows[i].low);
    }
}

static void test_decide(void **state)
{
    (void) state;
    const coord_fdguard_levels_t lv = coord_fdguard_levels(256); // 224 / 192
    const int64_t since = 100 * T_S, hold = COORD_FDGUARD_HOLD_US;
    static const coord_fdguard_action_t K = COORD_FDGUARD_KEEP, P = COORD_FDGUARD_PAUSE,
                                        R = COORD_FDGUARD_RESUME;
    const struct {
        bool paused;
        long used;
        int64_t now_us;
        coord_fdguard_action_t expect;
    } rows[] = {
        {false, 30, since, K},
        {false, 223, since, K},
        {false, 224, since, P},
        {false, 256, since, P},
        {true, 250, since + hold, K},
        {true, 200, since + 10 * hold, K}, // between low and high
        {true, 192, since + hold - 1, K},  // held too briefly
        {true, 192, since + hold, R},
        {true, 20, since + 2 * hold, R},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        coord_fdguard_action_t a =
            coord_fdguard_decide(rows[i].paused, since, rows[i].used, &lv, rows[i].now_us);
        if (a != rows[i].expect) {
            fail_msg("row %zu: got %d, expected %d", i, (int) a, (int) rows[i].expect);
        }
    }
}

static void test_handshake_events(void **state)
{
    (void) state;
    assert_true(coord_fdguard_is_handshake_failure(ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL));
    assert_true(coord_fdguard_is_handshake_failure(ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL));
    assert_true(coord_fdguard_is_handshake_failure(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH));
    assert_false(coord_fdguard_is_handshake_failure(ZMQ_EVENT_HANDSHAKE_SUCCEEDED));
    assert_false(coord_fdguard_is_handshake_failure(ZMQ_EVENT_ACCEPTED));
    assert_false(coord_fdguard_is_handshake_failure(ZMQ_EVENT_DISCONNECTED));
}

static void t_touch(const char *dir, int i)
{
    char path[512];
    (void) snprintf(path, sizeof path, "%s/%d", dir, i);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    close(fd);
}

static void test_count_entries(void **state)
{
    (void) state;
    char dir[] = "/tmp/jf-fdguard-XXXXXX";
    assert_non_null(mkdtemp(dir));
    DIR *d = opendir(dir);
    assert_non_null(d);
    long n = -1;
    assert_int_equal(coord_fdguard_count_entries(d, &n, NULL), 0);
    assert_int_equal(n, 0);
    for (int i = 0; i < 3; i++) {
        t_touch(dir, i);
    }
    assert_int_equal(coord_fdguard_count_entries(d, &n, NULL), 0);
    assert_int_equal(n, 3);
    t_touch(dir, 3);
    assert_int_equal(coord_fdguard_count_entries(d, &n, NULL), 0); // the same DIR, rewound
    assert_int_equal(n, 4);
    for (int i = 0; i < 4; i++) {
        char path[512];
        (void) snprintf(path, sizeof path, "%s/%d", dir, i);
        assert_int_equal(unlink(path), 0);
    }
    closedir(d);
    assert_int_equal(rmdir(dir), 0);
}

static void test_raise_nofile(void **state)
{
    (void) state;
    struct rlimit before = {0};
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &before), 0);
    if (before.rlim_max < 128) {
        skip();
    }
    struct rlimit low = {.rlim_cur = 64, .rlim_max = before.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    long old_soft = 0, hard = 0;
    assert_int_equal(coord_fdguard_raise_nofile(&old_soft, &hard, NULL), 0);
    assert_int_equal(old_soft, 64);
    struct rlimit now = {0};
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &now), 0);
    assert_true(now.rlim_cur == before.rlim_max);
    assert_true((rlim_t) hard == before.rlim_max);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &before), 0);
}

// A listening socket (Unix-domain at path, or TCP on 127.0.0.1 when path is NULL) and a client
// connected to it, so that accept has a connection waiting.
static void t_listen_pair(const char *path, int *ret_listen, int *ret_client)
{
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct sockaddr *sa = path ? (struct sockaddr *) &un : (struct sockaddr *) &in;
    socklen_t len = path ? sizeof un : sizeof in;
    if (path) {
        (void) snprintf(un.sun_path, sizeof un.sun_path, "%s", path);
    }
    int l = socket(path ? AF_UNIX : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(l >= 0);
    assert_int_equal(bind(l, sa, len), 0);
    assert_int_equal(listen(l, 8), 0);
    assert_int_equal(getsockname(l, sa, &len), 0);
    int c = socket(path ? AF_UNIX : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(c >= 0);
    assert_int_equal(connect(c, sa, len), 0);
    *ret_listen = l;
    *ret_client = c;
}

// Opens /dev/null until the limit is reached; returns how many were opened into fds.
static int t_exhaust(int *fds)
{
    int n = 0;
    while (n < T_FDS && (fds[n] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0) {
        n++;
    }
    assert_int_equal(errno, EMFILE);
    return n;
}

static int t_connect_unix(const char *path)
{
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    (void) snprintf(un.sun_path, sizeof un.sun_path, "%s", path);
    int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(c >= 0);
    assert_int_equal(connect(c, (struct sockaddr *) &un, sizeof un), 0);
    return c;
}

// With every descriptor below the limit in use (fds gets them): the accept checks. Returns how
// many descriptors were opened into fds; *ret_a is the accepted Unix-domain connection.
static int t_accepts_at_limit(int ul, int tl, int *fds, int *ret_a)
{
    int n = t_exhaust(fds);
    // TCP: libzmq survives EMFILE there, so it is passed through and no spare is spent.
    assert_int_equal(accept4(tl, NULL, NULL, SOCK_CLOEXEC), -1);
    assert_int_equal(errno, EMFILE);
    assert_int_equal(coord_fdguard_spares_held(), COORD_FDGUARD_SPARES);
    // Unix-domain: a spare is released for the connection.
    uint64_t used = coord_fdguard_spares_used(), deferred = coord_fdguard_accepts_deferred();
    *ret_a = accept4(ul, NULL, NULL, SOCK_CLOEXEC);
    assert_true(*ret_a >= 0);
    assert_int_equal(coord_fdguard_spares_used(), used + 1);
    assert_int_equal(coord_fdguard_spares_held(), COORD_FDGUARD_SPARES - 1);
    // With no spare left: ENFILE, which libzmq's ipc listener tolerates, never EMFILE.
    coord_fdguard_spares_release();
    n += t_exhaust(fds + n);
    assert_int_equal(accept(ul, NULL, NULL), -1);
    assert_int_equal(errno, ENFILE);
    assert_int_equal(coord_fdguard_accepts_deferred(), deferred + 1);
    return n;
}

static void test_accept_at_limit(void **state)
{
    (void) state;
    char dir[] = "/tmp/jf-fdguard-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    (void) snprintf(path, sizeof path, "%s/s", dir);
    int ul, uc, tl, tc;
    t_listen_pair(path, &ul, &uc);
    int uc2 = t_connect_unix(path); // two connections wait on the Unix-domain listener
    t_listen_pair(NULL, &tl, &tc);
    struct rlimit before = {0};
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &before), 0);
    struct rlimit low = {.rlim_cur = 128, .rlim_max = before.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    coord_fdguard_spares_release();
    assert_int_equal(coord_fdguard_spares_fill(), COORD_FDGUARD_SPARES);
    int *fds = calloc(T_FDS, sizeof *fds);
    assert_non_null(fds);
    int a = -1;
    int n = t_accepts_at_limit(ul, tl, fds, &a);
    for (int i = 0; i < n; i++) {
        close(fds[i]);
    }
    free(fds);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &before), 0);
    int b = accept(ul, NULL, NULL); // the deferred connection is still queued
    assert_true(b >= 0);
    int all[] = {a, b, ul, uc, uc2, tl, tc};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        close(all[i]);
    }
    unlink(path);
    rmdir(dir);
}

// The guard on a real bound ROUTER: it finds the listening socket, reports before and after a
// tick, and fails with the path when <proc_root>/self/fd is missing.
static void test_new_tick_status(void **state)
{
    (void) state;
    zsock_t *router = zsock_new(ZMQ_ROUTER);
    assert_non_null(router);
    assert_true(zsock_bind(router, "tcp://127.0.0.1:*") > 0);
    jf_err_t err = {0};
    assert_null(coord_fdguard_new(router, "/nonexistent-proc", 4, &err));
    assert_int_equal(err.code, -ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent-proc/self/fd"));
    coord_fdguard_t *g = coord_fdguard_new(router, COORD_FDGUARD_PROC_ROOT, 4, &err);
    assert_non_null(g);
    json_t *st = coord_fdguard_status_json(g, 0);
    assert_int_equal(json_integer_value(json_object_get(st, "fd_used")), -1);
    assert_true(json_is_true(json_object_get(st, "accepting_agents")));
    json_decref(st);
    coord_fdguard_tick(g, 1);
    st = coord_fdguard_status_json(g, 1);
    assert_true(json_integer_value(json_object_get(st, "fd_used")) > 0);
    assert_true(json_is_null(json_object_get(st, "paused_s")));
    assert_int_equal(json_integer_value(json_object_get(st, "spares_held")),
                     COORD_FDGUARD_SPARES);
    json_decref(st);
    coord_fdguard_destroy(&g);
    assert_null(g);
    assert_int_equal(coord_fdguard_spares_held(), 0);
    zsock_destroy(&router);
}

// A limit too small for the fleet is reported at start (the coordinator still runs).
static void test_room_warning(void **state)
{
    (void) state;
    zsock_t *router = zsock_new(ZMQ_ROUTER);
    assert_non_null(router);
    assert_true(zsock_bind(router, "tcp://127.0.0.1:*") > 0);
    jf_log_open("fdguard_test", JF_LOG_SINK_CAPTURE, JF_LOG_INFO);
    coord_fdguard_t *g = coord_fdguard_new(router, COORD_FDGUARD_PROC_ROOT, 4, NULL);
    assert_non_null(g);
    assert_null(strstr(jf_log_capture(), "raise the hard limit"));
    coord_fdguard_destroy(&g);
    g = coord_fdguard_new(router, COORD_FDGUARD_PROC_ROOT, 1000000, NULL);
    assert_non_null(g);
    assert_non_null(strstr(jf_log_capture(), "before 1000000 boards connect; raise the hard"));
    coord_fdguard_destroy(&g);
    jf_log_close();
    zsock_destroy(&router);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_levels),           cmocka_unit_test(test_decide),
        cmocka_unit_test(test_handshake_events), cmocka_unit_test(test_count_entries),
        cmocka_unit_test(test_raise_nofile),     cmocka_unit_test(test_accept_at_limit),
        cmocka_unit_test(test_new_tick_status),  cmocka_unit_test(test_room_warning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
