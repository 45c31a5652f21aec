/* Integration (issue #11, security): per-board limits and quarantine (docs/protocol.md §1.9).
 * With CURVE, two simulated boards run a sweep at 10 Hz telemetry and fast simulated training
 * while host-1 (a valid key) floods the coordinator with messages that each draw a reply and
 * host-2 (a valid key) sends oversized ones. Both are quarantined within a bounded number of
 * messages; nothing they send afterwards is processed; the simulated boards are never limited and
 * lose nothing; the quarantine outlasts a coordinator restart; `jetfleet keys release` brings a
 * board back. Without CURVE, a flood from a peer outside fleet.yaml is answered only at the
 * unregistered rate, and a board that sends messages no honest agent sends (undecodable, about
 * another board's run) is quarantined like one over its limits. Figures are printed as name=value
 * lines. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"
#include "jft_keys.h"
#include "jft_sweep.h"
#include "jft_zmq.h"

#include "jf_limits.h"
#include "jf_msg.h"
#include "jf_msg_session.h"
#include "jf_units.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define S_SIMS           2
#define S_RUNS           (S_SIMS * 2) // boards x power modes
#define S_FLOOD_MAX      100000       // messages the flooder sends at most
#define S_OVERSIZE_MAX   200          // oversized messages host-2 sends at most
#define S_OTHER_BYTES    (100 * 1024) // a heartbeat padded over max_other_bytes, under the stream cap
#define S_HUGE_BYTES     (2 * 1024 * 1024) // over every class, under the transport limit
#define S_REPLY_MS       5000
#define S_DEADLINE_MS    100000 // the sweep, scaled
#define S_QUIET_MS       1500   // how long we watch for replies that must not come
#define S_UNREG_FLOOD    20000
#define S_AFTER          2000 // messages the flooder sends after its quarantine
#define S_FLOOD_BATCH    200  // replies outstanding at most: well under the pipe's 1000
#define S_FLOOD_QUIET_MS 5    // a batch's replies are in when none came for this long
#define S_OTHER_RUN      "r0123456789abcdef" // a run the store does not know: run.accept draws an error

static const char *const s_agent_args[] = {
    "--sim-speed", "2000", "--sim-scale", "1", "--sim-seed", "5", "--log-level", "notice", NULL};

static const char s_sweep[] = "name: limits\n"
                              "target:\n  device_types: [xavier-nx]\n"
                              "workloads:\n  - {model: resnet18, dataset: cifar10, epochs: 3}\n"
                              "power_modes: [MODE_15W_6CORE, MODE_15W_4CORE]\n"
                              "storage: [nvme]\nworkers: [1]\nbatch_sizes: [16]\n"
                              "telemetry_hz: 10\n";

typedef struct s_peer {
    zsock_t *sock;
    const char *name;
    int64_t next_id;
    long sent;            // messages sent
    long processed;       // wrong_state replies before the quarantine: messages handled
    long after;           // replies of any kind after the quarantined error
    long replies;         // replies of any kind
    long limited_replies; // rate_limited and too_large errors
    bool quarantined;     // the quarantined error arrived
    int64_t quarantined_us;
} s_peer_t;

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    const char *types[S_SIMS] = {"xavier-nx", "xavier-nx"};
    *state = f;
    return f && jft_fleet_setup_sims(f, 2, types, S_SIMS) == 0 ? 0 : -1;
}

static int s_setup_plain(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    *state = f;
    return f && jft_fleet_setup(f, 1) == 0 ? 0 : -1;
}

static int s_setup_two(void **state)
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

static void s_send_text(s_peer_t *p, const char *text, size_t len)
{
    if (zmq_send(zsock_resolve(p->sock), text, len, ZMQ_DONTWAIT) == (int) len) {
        p->sent++;
    }
}

static void s_send_json(s_peer_t *p, json_t *msg)
{
    size_t len = 0;
    char *text = jf_msg_encode(msg, &len);
    json_decref(msg);
    assert_non_null(text);
    s_send_text(p, text, len);
    free(text);
}

// Counts one reply. Once quarantined, a board gets no answer to anything: every reply after the
// quarantined error counts as processed after the quarantine.
static void s_tally_one(s_peer_t *p, const json_t *j)
{
    const char *code = json_string_value(json_object_get(j, "code"));
    p->replies++;
    if (p->quarantined) {
        p->after++;
        return;
    }
    if (!code) {
        return; // welcome, heartbeat
    }
    if (strcmp(code, JF_MSG_E_QUARANTINED) == 0) {
        p->quarantined = true;
        p->quarantined_us = jf_clock_mono_us();
    } else if (strcmp(code, JF_MSG_E_WRONG_STATE) == 0) {
        p->processed++;
    } else if (strcmp(code, JF_MSG_E_RATE_LIMITED) == 0 || strcmp(code, JF_MSG_E_TOO_LARGE) == 0) {
        p->limited_replies++;
    }
}

// Reads every reply waiting now, without blocking.
static void s_drain(s_peer_t *p)
{
    while (p->sock && (zsock_events(p->sock) & ZMQ_POLLIN)) {
        json_t *j = jft_recv_json(p->sock, 0, NULL);
        if (!j) {
            return;
        }
        s_tally_one(p, j);
        json_decref(j);
    }
}

static void s_quiet(s_peer_t *p, int ms)
{
    int64_t end = jf_clock_mono_us() + (int64_t) ms * JF_US_PER_MS;
    while (jf_clock_mono_us() < end) {
        json_t *j = jft_recv_json(p->sock, 50, NULL);
        if (j) {
            s_tally_one(p, j);
            json_decref(j);
        }
    }
}

static json_t *s_hello(int64_t id, const char *name)
{
    jf_hello_t h = {.board_type = JF_BOARD_HOST,
                    .n_modes = 1,
                    .modes = {{0, "DEFAULT"}},
                    .n_storage = 1,
                    .storage = {{"local", "/tmp"}},
                    .started_us = jf_clock_wall_us()};
    (void) snprintf(h.name, sizeof h.name, "%s", name);
    (void) snprintf(h.platform, sizeof h.platform, "host");
    return jf_msg_hello_new(id, &h, NULL);
}

static void s_peer_open(jft_fleet_t *f, s_peer_t *p, const char *name)
{
    char server[48];
    jft_keys_coordinator_public(f, server);
    zcert_t *cert = jft_keys_agent_cert(f, name);
    *p = (s_peer_t){.name = name, .next_id = 1};
    p->sock = jft_curve_dealer_new(f->endpoint, name, cert, server);
    zcert_destroy(&cert);
    assert_non_null(p->sock);
    zsock_set_sndhwm(p->sock, 0); // the flood is bounded by the coordinator's reading
    // Every reply is kept until we read it: none may be dropped for a full pipe, or the
    // quarantined error could be lost among them.
    zsock_set_rcvhwm(p->sock, 0);
}

// True when the peer registered: its hello drew a welcome.
static bool s_register(s_peer_t *p)
{
    s_send_json(p, s_hello(p->next_id++, p->name));
    json_t *w = jft_recv_type(p->sock, "welcome", S_REPLY_MS * jft_timeout_scale(), NULL);
    json_decref(w);
    return w != NULL;
}

// Reads replies until none has come for quiet_ms.
static void s_drain_until_quiet(s_peer_t *p, int quiet_ms)
{
    json_t *j = NULL;
    while ((j = jft_recv_json(p->sock, quiet_ms, NULL)) != NULL) {
        s_tally_one(p, j);
        json_decref(j);
    }
}

// Flood of run.accept for an unknown run, up to max messages in all (or until the quarantined
// error): each one handled draws a wrong_state error. Sent in
// batches far above the rate limit but read between batches, so that the coordinator never
// drops a reply to us for a full pipe (§1.5): the quarantined error must reach us.
static void s_flood(s_peer_t *p, long max, bool until_quarantined)
{
    int64_t deadline = jf_clock_mono_us() + (int64_t) 30 * JF_US_PER_S * jft_timeout_scale();
    while (!(until_quarantined && p->quarantined) && p->sent < max &&
           jf_clock_mono_us() < deadline) {
        for (int k = 0; k < S_FLOOD_BATCH; k++) {
            char text[128];
            int n = snprintf(text, sizeof text,
                             "{\"v\":1,\"type\":\"run.accept\",\"id\":%lld,\"run\":\"%s\","
                             "\"attempt\":1}",
                             (long long) p->next_id++, S_OTHER_RUN);
            s_send_text(p, text, (size_t) n);
        }
        s_drain_until_quiet(p, S_FLOOD_QUIET_MS);
    }
}

// A heartbeat padded with JSON whitespace to size bytes: valid, but over its class's cap.
static char *s_padded_heartbeat(size_t size)
{
    static const char head[] = "{\"v\":1,\"type\":\"heartbeat\",\"id\":1,\"t_us\":1";
    char *text = malloc(size);
    assert_non_null(text);
    memset(text, ' ', size);
    memcpy(text, head, sizeof head - 1);
    text[size - 1] = '}';
    return text;
}

static void s_oversize(s_peer_t *p)
{
    char *other = s_padded_heartbeat(S_OTHER_BYTES);
    char *huge = s_padded_heartbeat(S_HUGE_BYTES);
    int64_t deadline = jf_clock_mono_us() + (int64_t) 30 * JF_US_PER_S * jft_timeout_scale();
    while (!p->quarantined && p->sent < S_OVERSIZE_MAX && jf_clock_mono_us() < deadline) {
        s_send_text(p, p->sent % 2 ? huge : other, p->sent % 2 ? S_HUGE_BYTES : S_OTHER_BYTES);
        zclock_sleep(5);
        s_drain(p);
    }
    free(other);
    free(huge);
}

// ctl.status through the control endpoint; caller owns the data object.
static json_t *s_status(jft_fleet_t *f)
{
    char endpoint[PATH_MAX + 32];
    (void) snprintf(endpoint, sizeof endpoint, "ipc://%s/control.sock", f->data_dir);
    zsock_t *d = jft_dealer_new(endpoint, NULL);
    assert_non_null(d);
    const char req[] = "{\"v\":1,\"type\":\"ctl.status\",\"id\":1}";
    assert_int_equal(jft_send_raw(d, NULL, req, strlen(req)), 0);
    json_t *r = jft_recv_type(d, "ctl.reply", S_REPLY_MS * jft_timeout_scale(), NULL);
    zsock_destroy(&d);
    assert_non_null(r);
    json_t *data = json_incref(json_object_get(r, "data"));
    json_decref(r);
    return data;
}

static const json_t *s_board(const json_t *status, const char *name)
{
    size_t i = 0;
    json_t *b = NULL;
    json_array_foreach(json_object_get(status, "boards"), i, b)
    {
        if (strcmp(json_string_value(json_object_get(b, "name")), name) == 0) {
            return b;
        }
    }
    fail_msg("no board '%s' in status", name);
    return NULL;
}

static long long s_limit(const json_t *status, const char *board, const char *key)
{
    return json_integer_value(
        json_object_get(json_object_get(s_board(status, board), "limits"), key));
}

static bool s_is_quarantined(jft_fleet_t *f, const char *board)
{
    json_t *st = s_status(f);
    bool q = json_is_true(json_object_get(s_board(st, board), "quarantined"));
    json_decref(st);
    return q;
}

static void s_print_peer(const s_peer_t *p, const char *what)
{
    printf("%s_sent=%ld\n%s_processed_before_quarantine=%ld\n%s_limited_replies=%ld\n"
           "%s_quarantined=%d\n%s_answered_after_quarantine=%ld\n",
           what, p->sent, what, p->processed, what, p->limited_replies, what, p->quarantined, what,
           p->after);
}

// The sim boards' figures: what an honest agent sends, against which the defaults are set.
static long long s_print_sims(const json_t *st)
{
    long long dropped = 0;
    static const char *const keys[] = {"peak_messages_per_s", "peak_bytes_per_s",
                                       "largest_stream_bytes", "largest_other_bytes", "passed"};
    for (int i = 0; i < S_SIMS; i++) {
        char name[16];
        (void) snprintf(name, sizeof name, "sim-%d", i + 1);
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            printf("%s_%s=%lld\n", name, keys[k], s_limit(st, name, keys[k]));
        }
        dropped += s_limit(st, name, "dropped");
    }
    return dropped;
}

static void s_restart_coordinator(jft_fleet_t *f)
{
    (void) jft_proc_stop(&f->coord);
    char path[PATH_MAX + 16];
    (void) snprintf(path, sizeof path, "%s/endpoint", f->data_dir);
    (void) unlink(path);
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
}

// The sims' sweep while host-1 floods and host-2 sends oversized messages.
static void s_attack_during_sweep(jft_fleet_t *f, s_peer_t *flood, s_peer_t *big)
{
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "limits.yaml", s_sweep, sweep), 0);
    free(jft_cli_expect(f, 0, 10000, (const char *const[]){"sweep", "submit", sweep, NULL}));
    s_peer_open(f, flood, "host-1");
    s_peer_open(f, big, "host-2");
    assert_true(s_register(flood));
    assert_true(s_register(big));
    int64_t t0 = jf_clock_mono_us();
    s_flood(flood, S_FLOOD_MAX, true);
    // After the quarantine: more of the same, of which nothing may be processed.
    long quarantined_at = flood->sent;
    s_flood(flood, flood->sent + S_AFTER, false);
    printf("flood_sent_after_quarantine=%ld\n", flood->sent - quarantined_at);
    s_oversize(big);
    // What the coordinator still had queued from them is not processed either.
    s_quiet(flood, S_QUIET_MS);
    s_quiet(big, S_QUIET_MS);
    s_print_peer(flood, "flood");
    s_print_peer(big, "oversize");
    // Until the flooder heard of its quarantine: the coordinator may still have been reading its
    // queue after the last message left.
    double flood_s = (double) (flood->quarantined_us - t0) / (double) JF_US_PER_S;
    printf("flood_s=%.2f\n", flood_s);
    assert_true(flood->quarantined);
    assert_true(big->quarantined);
    // Bounded: at most the burst plus the sustained rate over the flood's time (+1 s of slack).
    assert_true(flood->processed <=
                JF_LIMITS_MESSAGE_BURST + (long) (JF_LIMITS_MESSAGES_PER_S * (flood_s + 1.0)));
    assert_int_equal(flood->after + big->after, 0);
    // The coordinator's side: exactly quarantine_after violations each, the rest ignored unread.
    json_t *st = s_status(f);
    for (int i = 0; i < 2; i++) {
        const char *name = i ? "host-2" : "host-1";
        long long passed = s_limit(st, name, "passed"), dropped = s_limit(st, name, "dropped");
        printf("%s_messages_until_quarantine=%lld\n%s_violations=%lld\n%s_ignored=%lld\n", name,
               passed + dropped, name, dropped, name, s_limit(st, name, "ignored_quarantined"));
        assert_int_equal(dropped, JF_LIMITS_QUARANTINE_AFTER);
    }
    assert_int_equal(s_limit(st, "host-2", "over_size"), JF_LIMITS_QUARANTINE_AFTER);
    json_decref(st);
}

// The sims' sweep finishes with nothing lost and nothing limited; both offenders are shown
// quarantined.
static void s_check_sweep_and_status(jft_fleet_t *f, s_peer_t *flood, s_peer_t *big)
{
    int64_t deadline = jf_clock_mono_us() + (int64_t) S_DEADLINE_MS * 1000 * jft_timeout_scale();
    while (!jft_sweep_finished(f) && jf_clock_mono_us() < deadline) {
        s_drain(flood);
        s_drain(big);
        zclock_sleep(200);
    }
    jft_sweep_tally_t t = {0};
    jft_sweep_tally(f, S_RUNS, &t);
    jft_sweep_tally_print(&t);
    json_t *st = s_status(f);
    long long false_positives = s_print_sims(st);
    int quarantined = json_is_true(json_object_get(s_board(st, "host-1"), "quarantined")) +
                      json_is_true(json_object_get(s_board(st, "host-2"), "quarantined"));
    printf("quarantined=%d\nother_boards_lost_runs=%lld\nfalse_positives=%lld\n"
           "processed_after_quarantine=%ld\n",
           quarantined, t.lost + t.stuck, false_positives, flood->after + big->after);
    json_decref(st);
    assert_int_equal(quarantined, 2);
    assert_int_equal(t.done, S_RUNS);
    assert_int_equal(t.lost + t.stuck, 0);
    assert_int_equal(t.missing_samples, 0);
    assert_int_equal(false_positives, 0);
    char *out = jft_cli_expect(f, 0, 10000, (const char *const[]){"status", NULL});
    char line[128];
    (void) snprintf(line, sizeof line, "board host-1 QUARANTINED: %d violations within",
                    JF_LIMITS_QUARANTINE_AFTER);
    assert_non_null(strstr(out, line));
    free(out);
}

static void test_offenders_quarantined_others_unharmed(void **state)
{
    jft_fleet_t *f = *state;
    jft_keys_coordinator(f);
    static const char *const boards[] = {"host-1", "host-2", "sim-1", "sim-2"};
    for (size_t i = 0; i < sizeof boards / sizeof boards[0]; i++) {
        jft_keys_agent_accepted(f, boards[i]);
    }
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    for (size_t i = 0; i < S_SIMS; i++) {
        assert_int_equal(jft_fleet_start_sim_agent(f, i, s_agent_args), 0);
    }
    assert_true(jft_fleet_wait_online(f, S_SIMS, 60000 * jft_timeout_scale()));
    s_peer_t flood = {0}, big = {0};
    s_attack_during_sweep(f, &flood, &big);

    s_check_sweep_and_status(f, &flood, &big);

    // The quarantine outlasts a restart (the keys sit in keys/quarantined/).
    zsock_destroy(&flood.sock);
    zsock_destroy(&big.sock);
    s_restart_coordinator(f);
    bool kept = s_is_quarantined(f, "host-2");
    printf("quarantine_kept_over_restart=%d\n", kept);
    assert_true(kept);

    // A release brings host-1 back: its key is accepted again and its hello is answered.
    free(jft_cli_expect(f, 0, 10000, (const char *const[]){"keys", "release", "host-1", NULL}));
    int64_t released_us = jf_clock_mono_us();
    while (s_is_quarantined(f, "host-1") &&
           jf_clock_mono_us() - released_us < 5 * JF_US_PER_S * jft_timeout_scale()) {
        zclock_sleep(50);
    }
    s_peer_t back = {0};
    s_peer_open(f, &back, "host-1");
    bool registered = s_register(&back);
    zsock_destroy(&back.sock);
    printf("released_board_registered=%d\nstill_quarantined_host2=%d\n", registered,
           s_is_quarantined(f, "host-2"));
    assert_true(registered);
    assert_true(s_is_quarantined(f, "host-2"));
}

// Without CURVE: a peer outside fleet.yaml is answered at most at the unregistered rate.
static void test_unregistered_flood_bounded(void **state)
{
    jft_fleet_t *f = *state;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    s_peer_t p = {.name = "stranger", .next_id = 1};
    p.sock = jft_dealer_new(f->endpoint, "stranger");
    assert_non_null(p.sock);
    zsock_set_sndhwm(p.sock, 0);
    int64_t t0 = jf_clock_mono_us();
    s_flood(&p, S_UNREG_FLOOD, true);
    double flood_s = (double) (jf_clock_mono_us() - t0) / (double) JF_US_PER_S;
    s_quiet(&p, S_QUIET_MS);
    zsock_destroy(&p.sock);
    json_t *st = s_status(f);
    long long dropped =
        json_integer_value(json_object_get(json_object_get(st, "limits"), "unregistered_dropped"));
    json_decref(st);
    // Each message decoded is answered (not_registered): the replies count them from outside.
    printf("unregistered_sent=%ld\nunregistered_flood_s=%.2f\nunregistered_dropped=%lld\n"
           "unregistered_answered=%ld\n",
           p.sent, flood_s, dropped, p.replies);
    assert_int_equal(p.sent, S_UNREG_FLOOD);
    long bound = JF_LIMITS_UNREGISTERED_BURST +
                 (long) (JF_LIMITS_UNREGISTERED_PER_S * (flood_s + S_QUIET_MS / 1000.0 + 1.0));
    printf("unregistered_answered_bound=%ld\n", bound);
    assert_true(p.replies <= bound);
    assert_true(p.sent - dropped <= bound);
    assert_true(dropped > 0);
}

// The other run of the protocol sweep: host-2's, which host-1 may not speak about.
static const char s_other_sweep[] = "name: others\n"
                                    "target:\n  boards: [host-2]\n"
                                    "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 1}\n"
                                    "power_modes: [DEFAULT]\nstorage: [local]\n"
                                    "workers: [0]\nbatch_sizes: [16]\n";

// Sends text and waits for its error reply; returns its code ("" if none came).
static const char *s_ask(s_peer_t *p, const char *text, char *code, size_t size)
{
    s_send_text(p, text, strlen(text));
    json_t *r = jft_recv_json(p->sock, S_REPLY_MS * jft_timeout_scale(), NULL);
    const char *c = json_string_value(json_object_get(r, "code"));
    (void) snprintf(code, size, "%s", c ? c : "");
    json_decref(r);
    return code;
}

// Without CURVE: messages no honest agent sends (undecodable, or about another board's run) are
// violations like drops (docs/protocol.md §1.9); what races produce is not. A registered board
// that sends quarantine_after of them within the window is quarantined: its session closed,
// nothing it sends answered.
static void test_protocol_offender_quarantined(void **state)
{
    jft_fleet_t *f = *state;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "others.yaml", s_other_sweep, sweep), 0);
    free(jft_cli_expect(f, 0, 10000, (const char *const[]){"sweep", "submit", sweep, NULL}));
    char *other = jft_fleet_sql_text(f, "SELECT id FROM runs WHERE board = 'host-2'");
    assert_non_null(other);
    s_peer_t p = {.name = "host-1", .next_id = 1};
    p.sock = jft_dealer_new(f->endpoint, "host-1");
    assert_non_null(p.sock);
    assert_true(s_register(&p));
    char text[256], code[64];
    // Not violations: a run the store does not know, a message of a newer protocol version.
    (void) snprintf(text, sizeof text,
                    "{\"v\":1,\"type\":\"run.accept\",\"id\":1,\"run\":\"%s\",\"attempt\":1}",
                    S_OTHER_RUN);
    assert_string_equal(s_ask(&p, text, code, sizeof code), JF_MSG_E_WRONG_STATE);
    assert_string_equal(s_ask(&p, "{\"v\":2,\"type\":\"heartbeat\",\"id\":2}", code, sizeof code),
                        JF_MSG_E_BAD_VERSION);
    // Violations, all answered until the last, which quarantines.
    int n = 0;
    bool quarantined = false;
    while (!quarantined && n < JF_LIMITS_QUARANTINE_AFTER + 5) {
        if (n % 2) {
            (void) snprintf(text, sizeof text,
                            "{\"v\":1,\"type\":\"run.accept\",\"id\":%d,\"run\":\"%s\","
                            "\"attempt\":1}",
                            10 + n, other);
        } else {
            (void) snprintf(text, sizeof text, "{\"v\":1,\"type\":\"heartbeat\",\"id\":%d,",
                            10 + n);
        }
        n++;
        // The refusal's own error comes first; the quarantined error follows it.
        const char *c = s_ask(&p, text, code, sizeof code);
        assert_string_equal(c, n % 2 ? JF_MSG_E_BAD_JSON : JF_MSG_E_WRONG_STATE);
        if (n == JF_LIMITS_QUARANTINE_AFTER) {
            json_t *r = jft_recv_json(p.sock, S_REPLY_MS * jft_timeout_scale(), NULL);
            c = json_string_value(json_object_get(r, "code"));
            quarantined = c && strcmp(c, JF_MSG_E_QUARANTINED) == 0;
            json_decref(r);
        }
    }
    // From now on nothing is answered, a hello included.
    s_send_json(&p, s_hello(p.next_id++, "host-1"));
    s_send_text(&p, text, strlen(text));
    p.replies = 0;
    s_quiet(&p, S_QUIET_MS);
    // Nor on a new connection: without CURVE its hello is the first thing known to be host-1's
    // (docs/protocol.md §1.3, §4.1.3).
    s_peer_t fresh = {.name = "host-1", .next_id = 1};
    fresh.sock = jft_dealer_new(f->endpoint, NULL);
    assert_non_null(fresh.sock);
    s_send_json(&fresh, s_hello(fresh.next_id++, "host-1"));
    s_quiet(&fresh, S_QUIET_MS);
    zsock_destroy(&fresh.sock);
    json_t *st = s_status(f);
    const json_t *b = s_board(st, "host-1");
    bool closed = !json_is_true(json_object_get(b, "online"));
    printf("protocol_violations_sent=%d\nprotocol_quarantined=%d\ninvalid=%lld\n"
           "other_board_run=%lld\nrefused=%lld\nanswered_after_quarantine=%ld\n"
           "session_closed_for_repeat_offender=%s\nanswered_on_a_new_connection=%ld\n",
           n, quarantined, s_limit(st, "host-1", "invalid"),
           s_limit(st, "host-1", "other_board_run"), s_limit(st, "host-1", "refused"), p.replies,
           closed ? "yes" : "no", fresh.replies);
    assert_true(quarantined);
    assert_int_equal(n, JF_LIMITS_QUARANTINE_AFTER);
    assert_int_equal(s_limit(st, "host-1", "refused"), JF_LIMITS_QUARANTINE_AFTER);
    assert_int_equal(s_limit(st, "host-1", "invalid"), JF_LIMITS_QUARANTINE_AFTER / 2);
    assert_int_equal(s_limit(st, "host-1", "dropped"), 0);
    assert_true(json_is_true(json_object_get(b, "quarantined")));
    assert_true(closed);
    assert_int_equal(p.replies, 0);
    assert_int_equal(fresh.replies, 0);
    json_decref(st);
    zsock_destroy(&p.sock);
    free(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_offenders_quarantined_others_unharmed, s_setup,
                                        s_teardown),
        cmocka_unit_test_setup_teardown(test_unregistered_flood_bounded, s_setup_plain, s_teardown),
        cmocka_unit_test_setup_teardown(test_protocol_offender_quarantined, s_setup_two,
                                        s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
