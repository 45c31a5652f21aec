/* Integration (issue #11, reliability): the coordinator's clock offset estimate per board
 * (docs/protocol.md §4.2.1). Two agents on this host get a known clock offset through the
 * test-only JF_TEST_CLOCK_SHIFT_US (it shifts the clocks of their heartbeat answers): host-1 by
 * +40 ms, above the default clock_offset_warn of 5 ms, host-2 by -1 ms, below it. Both share the
 * host's clock, so the true offset is the shift, and NTP's bound holds exactly: the estimate errs
 * by at most half its round trip. Checks ctl.status, `jetfleet status`, the store and the log
 * (host-2 could only be warned about if the fastest of its first 3 exchanges took over 8 ms).
 * Then, against a ROUTER posing as an older coordinator, the agent's fallbacks when the clock
 * members of its heartbeats, or the clocks member of its hello, are refused. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"
#include "jft_zmq.h"

#include "jf_msg.h"
#include "jf_msg_session.h"
#include "jf_units.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S_SHIFT_OVER_US  40000 // host-1: 8 x the default bound
#define S_SHIFT_UNDER_US -1000 // host-2: a fifth of it
#define S_BOUND_US       5000  // the default coordinator.clock_offset_warn
// host-2's estimate is trusted below the bound once its rtt is under this: |err| <= rtt / 2.
#define S_UNDER_RTT_MAX_US (2 * (S_BOUND_US + S_SHIFT_UNDER_US) - 1)
#define S_WAIT_MS          30000

typedef struct s_board_clock {
    bool known;
    long long offset_us;
    long long rtt_us;
    bool warn;
} s_board_clock_t;

typedef struct s_ctx {
    jft_fleet_t *fleet;
    zsock_t *ctl;
    s_board_clock_t b[2]; // host-1, host-2 from the last status
} s_ctx_t;

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    *state = f;
    return f && jft_fleet_setup(f, 2) == 0 ? 0 : -1;
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

static void s_read_board(const json_t *jb, s_board_clock_t *ret)
{
    json_t *off = json_object_get(jb, "clock_offset_us");
    json_t *rtt = json_object_get(jb, "clock_rtt_us");
    ret->known = json_is_integer(off) && json_is_integer(rtt);
    ret->offset_us = json_integer_value(off);
    ret->rtt_us = json_integer_value(rtt);
    ret->warn = json_is_true(json_object_get(jb, "clock_warn"));
}

// Asks the coordinator for ctl.status and reads both boards' clock members. False on no reply.
static bool s_status(s_ctx_t *c)
{
    const char *req = "{\"v\":1,\"type\":\"ctl.status\",\"id\":1}";
    if (jft_send_raw(c->ctl, NULL, req, strlen(req)) != 0) {
        return false;
    }
    json_t *reply = jft_recv_type(c->ctl, "ctl.reply", 5000 * jft_timeout_scale(), NULL);
    json_t *boards = json_object_get(json_object_get(reply, "data"), "boards");
    bool ok = json_array_size(boards) == 2;
    for (size_t i = 0; ok && i < 2; i++) {
        s_read_board(json_array_get(boards, i), &c->b[i]);
    }
    json_decref(reply);
    return ok;
}

// Both boards measured, host-1 flagged, and host-2's round trip short enough that its estimate
// must be within the bound.
static bool s_settled(void *arg)
{
    s_ctx_t *c = arg;
    return s_status(c) && c->b[0].known && c->b[1].known && c->b[0].warn &&
           c->b[1].rtt_us <= S_UNDER_RTT_MAX_US;
}

static void s_expect_near(const char *name, const s_board_clock_t *b, long long true_us)
{
    long long err_us = b->offset_us - true_us;
    printf("board=%s offset_true_us=%lld offset_est_us=%lld rtt_us=%lld error_us=%lld "
           "clock_warn=%d\n",
           name, true_us, b->offset_us, b->rtt_us, err_us, (int) b->warn);
    assert_true(b->rtt_us >= 0);
    assert_true(llabs(err_us) <= b->rtt_us / 2 + 1); // +1: the estimate's halving rounds
}

static char *s_line_of(char *text, const char *board)
{
    char *p = strstr(text, board);
    assert_non_null(p);
    char *end = strchr(p, '\n');
    if (end) {
        *end = '\0';
    }
    return p;
}

static void s_expect_cli(jft_fleet_t *f)
{
    const char *args[] = {"status", NULL};
    char *out = jft_cli_expect(f, 0, 10000 * jft_timeout_scale(), args);
    printf("%s", out);
    assert_non_null(strstr(out, "clock_offset_us"));
    char *copy = strdup(out);
    assert_non_null(copy);
    assert_non_null(strstr(s_line_of(out, "host-1"), " WARN"));
    assert_null(strstr(s_line_of(copy, "host-2"), "WARN"));
    free(copy);
    free(out);
}

static void s_expect_store_and_log(jft_fleet_t *f)
{
    long long off1 = jft_fleet_sql_int(f, "SELECT clock_offset_us FROM boards WHERE "
                                          "name = 'host-1'");
    long long rtt1 = jft_fleet_sql_int(f, "SELECT clock_rtt_us FROM boards WHERE "
                                          "name = 'host-1'");
    printf("store host-1 offset_est_us=%lld rtt_us=%lld\n", off1, rtt1);
    assert_true(rtt1 >= 0);
    assert_true(llabs(off1 - S_SHIFT_OVER_US) <= rtt1 / 2 + 1);
    char *log = jft_read_file(f->coord.log_path, NULL);
    assert_non_null(log);
    assert_non_null(strstr(log, "board 'host-1' clock offset"));
    assert_null(strstr(log, "board 'host-2' clock offset"));
    free(log);
}

static const char s_sweep[] = "name: clock\n"
                              "target:\n  device_types: [host]\n"
                              "workloads:\n  - model: lenet5\n    dataset: mnist\n    epochs: 1\n"
                              "storage: [local]\nworkers: [0]\nbatch_sizes: [64]\n";

// One run per board: each keeps the estimate in force when it started, within its rtt / 2.
static void s_expect_runs_keep_estimate(jft_fleet_t *f)
{
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "clock.yaml", s_sweep, sweep), 0);
    const char *args[] = {"sweep", "submit", sweep, "--wait", NULL};
    free(jft_cli_expect(f, 0, 60000 * jft_timeout_scale(), args));
    static const char *const names[] = {"host-1", "host-2"};
    static const long long truth[] = {S_SHIFT_OVER_US, S_SHIFT_UNDER_US};
    for (int i = 0; i < 2; i++) {
        char sql[160];
        (void) snprintf(sql, sizeof sql,
                        "SELECT clock_offset_us FROM runs WHERE board = '%s' AND state = 'done'",
                        names[i]);
        long long off = jft_fleet_sql_int(f, sql);
        (void) snprintf(sql, sizeof sql,
                        "SELECT clock_rtt_us FROM runs WHERE board = '%s' AND state = 'done'",
                        names[i]);
        long long rtt = jft_fleet_sql_int(f, sql);
        printf("run board=%s offset_true_us=%lld offset_est_us=%lld rtt_us=%lld\n", names[i],
               truth[i], off, rtt);
        assert_true(rtt >= 0);
        assert_true(llabs(off - truth[i]) <= rtt / 2 + 1);
    }
}

static void test_offset_estimated_shown_and_warned(void **state)
{
    jft_fleet_t *f = *state;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    char over[64], under[64];
    (void) snprintf(over, sizeof over, "JF_TEST_CLOCK_SHIFT_US=%d", S_SHIFT_OVER_US);
    (void) snprintf(under, sizeof under, "JF_TEST_CLOCK_SHIFT_US=%d", S_SHIFT_UNDER_US);
    char *const env1[] = {over, NULL};
    char *const env2[] = {under, NULL};
    assert_int_equal(jft_fleet_start_agent(f, 0, env1), 0);
    assert_int_equal(jft_fleet_start_agent(f, 1, env2), 0);
    assert_true(jft_fleet_wait_online(f, 2, S_WAIT_MS * jft_timeout_scale()));

    char endpoint[PATH_MAX + 16];
    int n =
        snprintf(endpoint, sizeof endpoint, "ipc://%.*s/control.sock", PATH_MAX - 32, f->data_dir);
    assert_true(n > 0 && (size_t) n < sizeof endpoint);
    s_ctx_t c = {.fleet = f, .ctl = jft_dealer_new(endpoint, NULL)};
    assert_non_null(c.ctl);
    int64_t t0 = jf_clock_mono_us();
    bool settled = jft_wait_until(s_settled, &c, S_WAIT_MS * jft_timeout_scale());
    printf("settle_ms=%lld\n", (long long) ((jf_clock_mono_us() - t0) / 1000));
    zsock_destroy(&c.ctl);
    for (int i = 0; !settled && i < 2; i++) {
        printf("not settled: host-%d known=%d offset_us=%lld rtt_us=%lld warn=%d\n", i + 1,
               (int) c.b[i].known, c.b[i].offset_us, c.b[i].rtt_us, (int) c.b[i].warn);
    }
    assert_true(settled);
    s_expect_near("host-1", &c.b[0], S_SHIFT_OVER_US);
    s_expect_near("host-2", &c.b[1], S_SHIFT_UNDER_US);
    assert_true(c.b[0].warn);
    assert_false(c.b[1].warn);
    s_expect_cli(f);
    s_expect_store_and_log(f);
    s_expect_runs_keep_estimate(f);
}

static void s_send(zsock_t *router, json_t *msg)
{
    size_t len = 0;
    char *text = jf_msg_encode(msg, &len);
    json_decref(msg);
    assert_non_null(text);
    assert_int_equal(jft_send_raw(router, NULL, text, len), 0); // the agent's connection
    free(text);
}

// Sends a heartbeat stamped t1_us and returns the agent's answer that echoes it, or NULL when
// none came within window_ms (its own periodic heartbeats echo nothing and are skipped).
static json_t *s_ping(zsock_t *router, int64_t id, int64_t t1_us, int window_ms)
{
    jf_heartbeat_t hb = {.t_us = t1_us};
    s_send(router, jf_msg_heartbeat_clock_new(id, NULL, &hb));
    int64_t end = jf_clock_mono_us() + (int64_t) window_ms * 1000;
    while (jf_clock_mono_us() < end) {
        json_t *m = jft_recv_type(router, "heartbeat", 200, NULL);
        json_t *echo = json_object_get(m, "echo_t_us");
        if (m && echo) {
            return m; // any echo at all after the refusal is a failure too
        }
        json_decref(m);
    }
    return NULL;
}

// An older coordinator refuses the clock members (strict decoder, docs/protocol.md §2.4): the
// agent must answer without them for the rest of the session, so it stays alive to that
// coordinator. A ROUTER in this test plays the coordinator.
static void test_agent_drops_clock_members_for_older_coordinator(void **state)
{
    jft_fleet_t *f = *state;
    zsock_t *router = jft_router_new_in(f->dir);
    assert_non_null(router);
    assert_int_equal(jft_fleet_start_agent_at(f, 0, zsock_endpoint(router), NULL), 0);
    json_t *hello = jft_recv_type(router, "hello", S_WAIT_MS * jft_timeout_scale(), NULL);
    assert_non_null(hello);
    jf_welcome_t w = {.coordinator_epoch = 1,
                      .heartbeat_us = 1000 * JF_US_PER_MS,
                      .heartbeat_timeout_us = 30000 * JF_US_PER_MS,
                      .telemetry_hz = 1};
    (void) snprintf(w.session, sizeof w.session, "%s", "0123456789abcdef");
    s_send(router, jf_msg_welcome_new(900, json_integer_value(json_object_get(hello, "id")), &w));
    json_decref(hello);

    json_t *a = s_ping(router, 901, INT64_C(1700000000000000), 5000 * jft_timeout_scale());
    assert_non_null(a); // a new coordinator would get t2 with it
    assert_int_equal(json_integer_value(json_object_get(a, "echo_t_us")), 1700000000000000);
    assert_non_null(json_object_get(a, "recv_t_us"));
    s_send(router, jf_msg_error_new(902, json_integer_value(json_object_get(a, "id")),
                                    JF_MSG_E_BAD_FIELD, "heartbeat: unknown member 'echo_t_us'"));
    json_decref(a);
    // The error and the next heartbeats travel in order on one connection; the agent answers each
    // at once, so 2 s without an echo (answers still arriving) shows the members are gone.
    for (int i = 0; i < 4; i++) {
        json_t *b = s_ping(router, 903 + i, INT64_C(1700000001000000) + i, 500);
        printf("after refusal: ping=%d echoed=%d\n", i, b != NULL);
        assert_null(b);
    }
    json_t *alive = jft_recv_type(router, "heartbeat", 3000 * jft_timeout_scale(), NULL);
    assert_non_null(alive); // still answering, just without the clock members
    json_decref(alive);
    zsock_destroy(&router);
}

// The same for the hello's clocks member (docs/protocol.md §4.1.1): a simulated Xavier NX sends
// its own tables (no 2133 MHz EMC step); refused as an older coordinator would, the agent sends
// one hello without them at once and no more.
static void test_agent_drops_hello_clocks_for_older_coordinator(void **state)
{
    jft_fleet_t *f = *state;
    zsock_t *router = jft_router_new_in(f->dir);
    assert_non_null(router);
    const char *args[] = {"--platform", "sim:xavier-nx", "--sim-speed", "20", NULL};
    assert_int_equal(jft_fleet_start_agent_named_at(f, 0, "host-1", zsock_endpoint(router), args),
                     0);
    json_t *hello = jft_recv_type(router, "hello", S_WAIT_MS * jft_timeout_scale(), NULL);
    assert_non_null(hello);
    json_t *emc = json_object_get(json_object_get(hello, "clocks"), "emc_hz");
    size_t n = json_array_size(emc);
    printf("hello_clocks_emc_steps=%zu top=%lld\n", n,
           (long long) json_integer_value(json_array_get(emc, n ? n - 1 : 0)));
    assert_true(n > 0);
    assert_int_equal(json_integer_value(json_array_get(emc, n - 1)), INT64_C(1866000000));
    s_send(router, jf_msg_error_new(900, json_integer_value(json_object_get(hello, "id")),
                                    JF_MSG_E_BAD_FIELD, "hello: unknown member 'clocks'"));
    json_decref(hello);
    int64_t t0 = jf_clock_mono_us();
    json_t *again = jft_recv_type(router, "hello", 5000 * jft_timeout_scale(), NULL);
    int64_t after_ms = (jf_clock_mono_us() - t0) / 1000;
    printf("hello_without_clocks_after_ms=%lld\n", (long long) after_ms);
    assert_non_null(again);
    assert_null(json_object_get(again, "clocks"));
    assert_true(after_ms < 900); // at once, not at the first retry step (1 s)
    json_decref(again);
    // One hello for the refusal, not a retry storm: nothing more before the first retry step.
    json_t *more = jft_recv_type(router, "hello", 700, NULL);
    assert_null(more);
    zsock_destroy(&router);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_offset_estimated_shown_and_warned, s_setup,
                                        s_teardown),
        cmocka_unit_test_setup_teardown(test_agent_drops_clock_members_for_older_coordinator,
                                        s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_agent_drops_hello_clocks_for_older_coordinator,
                                        s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
