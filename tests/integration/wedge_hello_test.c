/* Integration (issue #11, reliability): one hello per lost session, on both sides.
 * - The agent, registered with a fake coordinator (a ROUTER in this test), gets ten
 *   not_registered errors 80 ms apart, as after a partition when every message in flight draws
 *   one: it must send one hello, and repeat it only after the hello timeout; a repeated welcome
 *   of the session it holds is ignored.
 * - The coordinator answers a repeated hello of the same agent process with the same session
 *   and no second registration event; a hello of a new agent process (another started_us) is a
 *   new registration. */
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S_BURST          10    // not_registered errors, as after a partition
#define S_ERROR_GAP_MS   80    // between two of them
#define S_HB_MS          1000  // heartbeat interval our welcome gives the agent
#define S_HB_TIMEOUT_MS  30000 // long: the agent must not reconnect during the test
#define S_HELLO_RETRY_MS 1000  // the agent's first hello retry (jf_hello_backoff_us)
#define S_START_MS       20000

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    *state = f;
    return f && jft_fleet_setup(f, 1) == 0 ? 0 : -1;
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

// Sends msg on the DEALER sock, or on the ROUTER sock to the agent's connection (its last
// message's routing id: the agent sets none, docs/protocol.md §1.3).
static void s_send(zsock_t *sock, json_t *msg)
{
    size_t len = 0;
    char *text = jf_msg_encode(msg, &len);
    json_decref(msg);
    assert_non_null(text);
    assert_int_equal(jft_send_raw(sock, NULL, text, len), 0);
    free(text);
}

static void s_welcome(zsock_t *router, const json_t *hello, const char *session)
{
    jf_welcome_t w = {.coordinator_epoch = 1,
                      .heartbeat_us = S_HB_MS * JF_US_PER_MS,
                      .heartbeat_timeout_us = S_HB_TIMEOUT_MS * JF_US_PER_MS,
                      .telemetry_hz = 1};
    (void)snprintf(w.session, sizeof w.session, "%s", session);
    int64_t re = json_integer_value(json_object_get(hello, "id"));
    s_send(router, jf_msg_welcome_new(900, re, &w));
}

// Sends S_BURST not_registered errors, one every S_ERROR_GAP_MS (as messages in flight in a
// partition draw them one by one), and counts the hellos that arrive within window_ms;
// *ret_second_ms gets when the second one came (or -1).
static int s_errors_and_hellos(zsock_t *router, int window_ms, int *ret_second_ms)
{
    int64_t t0 = jf_clock_mono_us(), end = t0 + (int64_t)window_ms * 1000;
    int n = 0, sent = 0;
    *ret_second_ms = -1;
    while (jf_clock_mono_us() < end) {
        int64_t next_error = t0 + (int64_t)sent * S_ERROR_GAP_MS * 1000;
        if (sent < S_BURST && jf_clock_mono_us() >= next_error) {
            s_send(router, jf_msg_error_new(100 + sent, -1, JF_MSG_E_NOT_REGISTERED, "test"));
            sent++;
            continue;
        }
        int64_t until = sent < S_BURST ? t0 + (int64_t)sent * S_ERROR_GAP_MS * 1000 : end;
        json_t *m = jft_recv_json(router, (int)((until - jf_clock_mono_us()) / 1000) + 1, NULL);
        const char *type = json_string_value(json_object_get(m, "type"));
        if (type && strcmp(type, "hello") == 0 && ++n == 2) {
            *ret_second_ms = (int)((jf_clock_mono_us() - t0) / 1000);
        }
        json_decref(m);
    }
    return n;
}

static int s_log_count(const char *path, const char *what)
{
    char *text = jft_read_file(path, NULL);
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, what)) != NULL; p += strlen(what)) {
        n++;
    }
    free(text);
    return n;
}

static void test_agent_one_hello_per_lost_session(void **state)
{
    jft_fleet_t *f = *state;
    zsock_t *router = jft_router_new_in(f->dir);
    assert_non_null(router);
    assert_int_equal(jft_fleet_start_agent_at(f, 0, zsock_endpoint(router), NULL), 0);
    json_t *hello = jft_recv_type(router, "hello", S_START_MS * jft_timeout_scale(), NULL);
    assert_non_null(hello);
    s_welcome(router, hello, "0123456789abcdef");
    json_decref(hello);
    json_t *hb = jft_recv_type(router, "heartbeat", 3 * S_HB_MS * jft_timeout_scale(), NULL);
    assert_non_null(hb); // welcomed: it heartbeats
    json_decref(hb);
    // The window holds the first hello and the first retry, not the second (4 s later).
    int second_ms = -1;
    int hellos = s_errors_and_hellos(router, S_HELLO_RETRY_MS * 5 / 2, &second_ms);
    printf("not_registered_burst=%d\nhellos_in_window=%d\nhello_retry_ms=%d\n", S_BURST, hellos,
           second_ms);
    fflush(stdout);
    assert_int_equal(hellos, 2);
    assert_true(second_ms >= S_HELLO_RETRY_MS * 3 / 4);
    hello = jft_recv_type(router, "hello", 10000 * jft_timeout_scale(), NULL);
    assert_non_null(hello);
    s_welcome(router, hello, "fedcba9876543210");
    s_welcome(router, hello, "fedcba9876543210"); // a retry's late welcome: ignored
    json_decref(hello);
    hb = jft_recv_type(router, "heartbeat", 3 * S_HB_MS * jft_timeout_scale(), NULL);
    json_decref(hb);
    int again = s_log_count(f->agents[0].log_path, "welcome for session fedcba9876543210 again");
    printf("repeated_welcomes_ignored=%d\n", again);
    assert_int_equal(again, 1);
    zsock_destroy(&router);
}

static json_t *s_hello(int64_t id, int64_t started_us)
{
    jf_hello_t h = {.name = "host-1",
                    .board_type = JF_BOARD_HOST,
                    .platform = "host",
                    .n_modes = 1,
                    .modes = {{0, "DEFAULT"}},
                    .n_storage = 1,
                    .storage = {{"local", "/tmp"}},
                    .started_us = started_us};
    return jf_msg_hello_new(id, &h, NULL);
}

// Sends a hello and returns the session of the welcome (caller frees).
static char *s_register(zsock_t *d, int64_t id, int64_t started_us)
{
    s_send(d, s_hello(id, started_us));
    json_t *w = jft_recv_type(d, "welcome", 5000 * jft_timeout_scale(), NULL);
    assert_non_null(w);
    assert_int_equal(json_integer_value(json_object_get(w, "re")), id);
    char *session = strdup(json_string_value(json_object_get(w, "session")));
    json_decref(w);
    return session;
}

static void test_coordinator_repeat_hello_idempotent(void **state)
{
    jft_fleet_t *f = *state;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    zsock_t *d = jft_dealer_new(f->endpoint, "host-1");
    assert_non_null(d);
    int64_t started = jf_clock_wall_us();
    char *s1 = s_register(d, 1, started);
    char *s2 = s_register(d, 2, started);
    const char *sql = "SELECT count(*) FROM events WHERE kind = 'board.online' AND board = "
                      "'host-1'";
    long long events_after_repeat = jft_fleet_sql_int(f, sql);
    char *s3 = s_register(d, 3, started + 1);
    long long events_after_restart = jft_fleet_sql_int(f, sql);
    printf("repeat_hello_same_session=%d\nonline_events_after_repeat=%lld\n"
           "restart_new_session=%d\nonline_events_after_restart=%lld\n",
           strcmp(s1, s2) == 0, events_after_repeat, strcmp(s1, s3) != 0, events_after_restart);
    assert_string_equal(s1, s2);
    assert_int_equal(events_after_repeat, 1);
    assert_string_not_equal(s1, s3);
    assert_int_equal(events_after_restart, 2);
    free(s1);
    free(s2);
    free(s3);
    zsock_destroy(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_agent_one_hello_per_lost_session, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_coordinator_repeat_hello_idempotent, s_setup,
                                        s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
