/* Unit tests for agent_spool: per-run streams with seq numbers, cumulative acks, the window,
 * go-back-N resend after AGENT_SPOOL_RESEND_US without ack progress (time is injected through
 * agent_spool_pump's now_mono_us), rewind after a reconnect, final messages, inventory, drop,
 * byte accounting and the limits. The send callback records what went out, and can refuse.
 * Every test runs twice: with the spool in memory and with its file in a mkdtemp directory
 * (spool_disk_test.c covers what only the file does: reopening, damage, locking). */
#include "agent_spool.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <unistd.h>

#define T_RUN      "r0123456789abcdef"
#define T_RUN2     "r00000000000000ff"
#define T_T0       (INT64_C(1000) * 1000000) // a monotonic time well after boot
#define T_SENT_MAX 256
#define T_TEXT_MAX 48

typedef struct t_sink {
    int calls;     // send callback invocations
    int fail_from; // calls with this 1-based number and later return -1 (0: never)
    size_t n;      // messages accepted
    char sent[T_SENT_MAX][T_TEXT_MAX];
} t_sink_t;

static int t_send(const char *text, size_t len, void *arg)
{
    t_sink_t *s = arg;
    s->calls++;
    if (s->fail_from > 0 && s->calls >= s->fail_from) {
        return -1;
    }
    assert_true(s->n < T_SENT_MAX);
    assert_true(len < T_TEXT_MAX);
    memcpy(s->sent[s->n], text, len);
    s->sent[s->n][len] = '\0';
    s->n++;
    return 0;
}

static char *t_text(const char *run, int64_t seq)
{
    char *t = malloc(T_TEXT_MAX);
    assert_non_null(t);
    (void)snprintf(t, T_TEXT_MAX, "%.6s#%lld", run + 11, (long long)seq);
    return t;
}

// Appends messages next_seq .. next_seq + n - 1; the last one final if asked.
static void t_append(agent_spool_t *sp, const char *run, int64_t attempt, int n, bool final)
{
    for (int i = 0; i < n; i++) {
        int64_t seq = agent_spool_next_seq(sp, run, attempt);
        char *text = t_text(run, seq);
        jf_err_t err = {0};
        if (agent_spool_append(sp, run, attempt, seq, text, strlen(text), final && i == n - 1,
                               &err) != 0) {
            free(text);
            fail_msg("append %s/%lld seq %lld: %s", run, (long long)attempt, (long long)seq,
                     err.msg);
        }
    }
}

// Pumps at now and checks the messages sent, given as seqs of run (0 ends the list).
static void t_pump_expect(agent_spool_t *sp, int64_t now, const char *run, const int64_t *seqs)
{
    t_sink_t sink = {0};
    size_t sent = agent_spool_pump(sp, now, t_send, &sink);
    size_t want = 0;
    while (seqs[want]) {
        want++;
    }
    if (sent != want || sink.n != want) {
        fail_msg("pump at +%lld us sent %zu (callback %zu), expected %zu", (long long)(now - T_T0),
                 sent, sink.n, want);
    }
    for (size_t i = 0; i < want; i++) {
        char *exp = t_text(run, seqs[i]);
        assert_string_equal(sink.sent[i], exp);
        free(exp);
    }
}

static char t_dir[64]; // the group's state directory; "" runs the group in memory

static agent_spool_t *t_new_capped(int64_t max_bytes)
{
    char path[128];
    (void)snprintf(path, sizeof path, "%s/%s", t_dir, AGENT_SPOOL_FILE_NAME);
    (void)unlink(path); // each test starts empty; the file may be absent
    (void)snprintf(path, sizeof path, "%s/%s-wal", t_dir, AGENT_SPOOL_FILE_NAME);
    (void)unlink(path);
    jf_err_t err = {0};
    agent_spool_opts_t o = {.state_dir = t_dir[0] ? t_dir : NULL, .max_bytes = max_bytes};
    agent_spool_t *sp = agent_spool_new(&o, &err);
    if (!sp) {
        fail_msg("agent_spool_new: %s", err.msg);
    }
    return sp;
}

static agent_spool_t *t_new(void)
{
    return t_new_capped(AGENT_SPOOL_BYTES_MAX);
}

static void test_open_and_next_seq(void **state)
{
    (void)state;
    agent_spool_t *sp = t_new();
    assert_int_equal(agent_spool_next_seq(sp, T_RUN, 1), 0);
    assert_false(agent_spool_has(sp, T_RUN, 1));
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0);
    assert_true(agent_spool_has(sp, T_RUN, 1));
    assert_int_equal(agent_spool_next_seq(sp, T_RUN, 1), 1);
    t_append(sp, T_RUN, 1, 2, false);
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0); // no-op: the stream is kept
    assert_int_equal(agent_spool_next_seq(sp, T_RUN, 1), 3);
    assert_false(agent_spool_has(sp, T_RUN, 2)); // another attempt is another stream
    assert_int_equal(agent_spool_open(sp, T_RUN, 2, NULL), 0);
    assert_int_equal(agent_spool_next_seq(sp, T_RUN, 2), 1);
    assert_int_equal(agent_spool_next_seq(sp, T_RUN2, 1), 0);
    agent_spool_destroy(&sp);
    assert_null(sp);
    agent_spool_destroy(&sp);
    agent_spool_destroy(NULL);
}

static void test_stream_limit(void **state)
{
    (void)state;
    agent_spool_t *sp = t_new();
    for (int64_t a = 1; a <= AGENT_SPOOL_STREAMS_MAX; a++) {
        assert_int_equal(agent_spool_open(sp, T_RUN, a, NULL), 0);
    }
    jf_err_t err = {0};
    assert_int_equal(agent_spool_open(sp, T_RUN2, 1, &err), -ENOSPC);
    assert_non_null(strstr(err.msg, "16 streams already open"));
    assert_false(agent_spool_has(sp, T_RUN2, 1));
    assert_int_equal(agent_spool_open(sp, T_RUN, 5, NULL), 0); // already open: still fine
    agent_spool_drop(sp, T_RUN, 3);
    assert_int_equal(agent_spool_open(sp, T_RUN2, 1, NULL), 0);
    assert_true(agent_spool_has(sp, T_RUN2, 1));
    agent_spool_destroy(&sp);
}

static void test_append_refuses_wrong_seq(void **state)
{
    (void)state;
    agent_spool_t *sp = t_new();
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0);
    static const struct {
        const char *run;
        int64_t attempt, seq;
    } rows[] = {
        {T_RUN, 1, 0}, {T_RUN, 1, 2}, {T_RUN, 1, -1}, {T_RUN, 2, 1}, {T_RUN2, 1, 1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char *text = t_text(T_RUN, 1);
        jf_err_t err = {0};
        int rc = agent_spool_append(sp, rows[i].run, rows[i].attempt, rows[i].seq, text,
                                    strlen(text), false, &err);
        char frag[32];
        (void)snprintf(frag, sizeof frag, "does not expect seq %lld", (long long)rows[i].seq);
        if (rc != -EINVAL || !strstr(err.msg, frag)) {
            fail_msg("row %zu: rc %d msg '%s'", i, rc, err.msg);
        }
        free(text); // refused: still ours
    }
    assert_int_equal(agent_spool_bytes(sp), 0);
    assert_int_equal(agent_spool_next_seq(sp, T_RUN, 1), 1);
    t_append(sp, T_RUN, 1, 1, false);
    char *text = t_text(T_RUN, 1);
    assert_int_equal(agent_spool_append(sp, T_RUN, 1, 1, text, strlen(text), false, NULL),
                     -EINVAL); // seq 1 again
    free(text);
    t_append(sp, T_RUN, 1, 1, true);
    text = t_text(T_RUN, 3);
    jf_err_t err = {0};
    assert_int_equal(agent_spool_append(sp, T_RUN, 1, 3, text, strlen(text), false, &err),
                     -EINVAL); // nothing after the final message
    free(text);
    assert_int_equal(agent_spool_next_seq(sp, T_RUN, 1), 3);
    agent_spool_destroy(&sp);
}

static void test_pump_sends_in_order_once(void **state)
{
    (void)state;
    agent_spool_t *sp = t_new();
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0);
    t_pump_expect(sp, T_T0, T_RUN, (const int64_t[]){0});
    t_append(sp, T_RUN, 1, 3, false);
    t_pump_expect(sp, T_T0, T_RUN, (const int64_t[]){1, 2, 3, 0});
    t_pump_expect(sp, T_T0 + 1, T_RUN, (const int64_t[]){0}); // in flight: not again
    t_append(sp, T_RUN, 1, 1, false);
    t_pump_expect(sp, T_T0 + 2, T_RUN, (const int64_t[]){4, 0});
    agent_spool_destroy(&sp);
}

static void test_ack_is_cumulative_and_frees(void **state)
{
    (void)state;
    agent_spool_t *sp = t_new();
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0);
    size_t lens[4] = {0};
    for (int64_t seq = 1; seq <= 4; seq++) {
        char *text = t_text(T_RUN, seq);
        lens[seq - 1] = strlen(text);
        assert_int_equal(agent_spool_append(sp, T_RUN, 1, seq, text, lens[seq - 1], false, NULL),
                         0);
    }
    size_t total = lens[0] + lens[1] + lens[2] + lens[3];
    assert_int_equal(agent_spool_bytes(sp), total);
    t_pump_expect(sp, T_T0, T_RUN, (const int64_t[]){1, 2, 3, 4, 0});
    agent_spool_ack(sp, T_RUN, 1, 2);
    assert_int_equal(agent_spool_bytes(sp), lens[2] + lens[3]);
    agent_spool_ack(sp, T_RUN, 1, 1); // old ack: nothing changes
    agent_spool_ack(sp, T_RUN, 2, 4); // other attempt: nothing changes
    agent_spool_ack(sp, T_RUN2, 1, 4);
    assert_int_equal(agent_spool_bytes(sp), lens[2] + lens[3]);
    agent_spool_ack(sp, T_RUN, 1, 99); // beyond what exists: everything held is acked
    assert_int_equal(agent_spool_bytes(sp), 0);
    assert_true(agent_spool_has(sp, T_RUN, 1)); // not final: the stream stays open
    assert_int_equal(agent_spool_next_seq(sp, T_RUN, 1), 5);
    t_pump_expect(sp, T_T0 + 100 * AGENT_SPOOL_RESEND_US, T_RUN, (const int64_t[]){0});
    t_append(sp, T_RUN, 1, 1, false);
    t_pump_expect(sp, T_T0 + 101 * AGENT_SPOOL_RESEND_US, T_RUN, (const int64_t[]){5, 0});
    agent_spool_destroy(&sp);
}

static void test_final_closes_once_acked(void **state)
{
    (void)state;
    agent_spool_t *sp = t_new();
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0);
    t_append(sp, T_RUN, 1, 3, true);
    jf_hello_run_t inv[AGENT_SPOOL_STREAMS_MAX];
    assert_int_equal(agent_spool_inventory(sp, inv, AGENT_SPOOL_STREAMS_MAX), 1);
    assert_true(inv[0].finished);
    t_pump_expect(sp, T_T0, T_RUN, (const int64_t[]){1, 2, 3, 0});
    agent_spool_ack(sp, T_RUN, 1, 2);
    assert_true(agent_spool_has(sp, T_RUN, 1)); // the final message is not acked yet
    agent_spool_ack(sp, T_RUN, 1, 3);
    assert_false(agent_spool_has(sp, T_RUN, 1));
    assert_int_equal(agent_spool_next_seq(sp, T_RUN, 1), 0);
    assert_int_equal(agent_spool_bytes(sp), 0);
    assert_int_equal(agent_spool_inventory(sp, inv, AGENT_SPOOL_STREAMS_MAX), 0);
    t_pump_expect(sp, T_T0 + 10 * AGENT_SPOOL_RESEND_US, T_RUN, (const int64_t[]){0});
    agent_spool_destroy(&sp);
}

static void test_window(void **state)
{
    (void)state;
    agent_spool_t *sp = t_new();
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0);
    t_append(sp, T_RUN, 1, AGENT_SPOOL_WINDOW + 8, false);
    t_sink_t sink = {0};
    assert_int_equal(agent_spool_pump(sp, T_T0, t_send, &sink), AGENT_SPOOL_WINDOW);
    assert_string_equal(sink.sent[AGENT_SPOOL_WINDOW - 1], "abcdef#32");
    t_pump_expect(sp, T_T0 + 1, T_RUN, (const int64_t[]){0}); // window full
    agent_spool_ack(sp, T_RUN, 1, 5);
    t_pump_expect(sp, T_T0 + 2, T_RUN, (const int64_t[]){33, 34, 35, 36, 37, 0});
    agent_spool_ack(sp, T_RUN, 1, 40);
    t_pump_expect(sp, T_T0 + 3, T_RUN, (const int64_t[]){0});
    agent_spool_destroy(&sp);
}

static void test_go_back_n_after_resend_timeout(void **state)
{
    (void)state;
    agent_spool_t *sp = t_new();
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0);
    t_append(sp, T_RUN, 1, 3, false);
    t_pump_expect(sp, T_T0, T_RUN, (const int64_t[]){1, 2, 3, 0});
    t_pump_expect(sp, T_T0 + AGENT_SPOOL_RESEND_US, T_RUN, (const int64_t[]){0});
    const int64_t t1 = T_T0 + AGENT_SPOOL_RESEND_US + 1;
    t_pump_expect(sp, t1, T_RUN, (const int64_t[]){1, 2, 3, 0}); // nothing acked: go back
    t_pump_expect(sp, t1 + AGENT_SPOOL_RESEND_US, T_RUN, (const int64_t[]){0});
    // Ack progress restarts the timer: only what is still unacked is resent, and later.
    const int64_t t2 = t1 + AGENT_SPOOL_RESEND_US / 2;
    agent_spool_ack(sp, T_RUN, 1, 1);
    t_pump_expect(sp, t2, T_RUN, (const int64_t[]){0});
    t_pump_expect(sp, t1 + AGENT_SPOOL_RESEND_US + 1, T_RUN, (const int64_t[]){0});
    t_pump_expect(sp, t2 + AGENT_SPOOL_RESEND_US, T_RUN, (const int64_t[]){0});
    t_pump_expect(sp, t2 + AGENT_SPOOL_RESEND_US + 1, T_RUN, (const int64_t[]){2, 3, 0});
    // New messages go out at once even while older ones wait for their ack.
    t_append(sp, T_RUN, 1, 1, false);
    t_pump_expect(sp, t2 + AGENT_SPOOL_RESEND_US + 2, T_RUN, (const int64_t[]){4, 0});
    agent_spool_destroy(&sp);
}

// The resend timer runs from the send, not from an earlier, idle pump.
static void test_resend_timer_starts_at_the_send(void **state)
{
    (void)state;
    agent_spool_t *sp = t_new();
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0);
    t_pump_expect(sp, T_T0, T_RUN, (const int64_t[]){0}); // idle pumps while nothing is due
    const int64_t t1 = T_T0 + 10 * AGENT_SPOOL_RESEND_US;
    t_pump_expect(sp, t1 - 1, T_RUN, (const int64_t[]){0});
    t_append(sp, T_RUN, 1, 2, false);
    t_pump_expect(sp, t1, T_RUN, (const int64_t[]){1, 2, 0});
    t_pump_expect(sp, t1 + 1, T_RUN, (const int64_t[]){0});
    t_pump_expect(sp, t1 + AGENT_SPOOL_RESEND_US, T_RUN, (const int64_t[]){0});
    t_pump_expect(sp, t1 + AGENT_SPOOL_RESEND_US + 1, T_RUN, (const int64_t[]){1, 2, 0});
    // All acked, quiet for a long time, then one more message: the same holds.
    agent_spool_ack(sp, T_RUN, 1, 2);
    t_pump_expect(sp, t1 + 2 * AGENT_SPOOL_RESEND_US, T_RUN, (const int64_t[]){0});
    const int64_t t2 = t1 + 20 * AGENT_SPOOL_RESEND_US;
    t_append(sp, T_RUN, 1, 1, false);
    t_pump_expect(sp, t2, T_RUN, (const int64_t[]){3, 0});
    t_pump_expect(sp, t2 + 1, T_RUN, (const int64_t[]){0});
    agent_spool_destroy(&sp);
}

static void test_rewind_after_reconnect(void **state)
{
    (void)state;
    agent_spool_t *sp = t_new();
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0);
    t_append(sp, T_RUN, 1, 5, false);
    t_pump_expect(sp, T_T0, T_RUN, (const int64_t[]){1, 2, 3, 4, 5, 0});
    agent_spool_ack(sp, T_RUN, 1, 1);
    // The welcome says the coordinator committed up to 3: resend 4, 5 now, without waiting.
    agent_spool_rewind(sp, T_RUN, 1, 3);
    t_pump_expect(sp, T_T0 + 1, T_RUN, (const int64_t[]){4, 5, 0});
    // A rewind to less than what was acked cannot bring freed messages back.
    agent_spool_rewind(sp, T_RUN, 1, 2);
    t_pump_expect(sp, T_T0 + 2, T_RUN, (const int64_t[]){4, 5, 0});
    agent_spool_rewind(sp, T_RUN2, 1, 0); // unknown stream: nothing happens
    t_append(sp, T_RUN, 1, 1, true);
    t_pump_expect(sp, T_T0 + 3, T_RUN, (const int64_t[]){6, 0});
    agent_spool_rewind(sp, T_RUN, 1, 6); // everything including the final one: closed
    assert_false(agent_spool_has(sp, T_RUN, 1));
    assert_int_equal(agent_spool_bytes(sp), 0);
    agent_spool_destroy(&sp);
}

static void test_send_failure_resumes_at_the_refused_message(void **state)
{
    (void)state;
    agent_spool_t *sp = t_new();
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0);
    t_append(sp, T_RUN, 1, 4, false);
    t_sink_t sink = {.fail_from = 3};
    assert_int_equal(agent_spool_pump(sp, T_T0, t_send, &sink), 2);
    assert_int_equal(sink.calls, 3); // the third send was refused, then the pump stopped
    t_pump_expect(sp, T_T0 + 1, T_RUN, (const int64_t[]){3, 4, 0});
    agent_spool_destroy(&sp);
}

// agent_spool.h: send "returns 0 if the message was queued to the socket, else stops the pump".
// A refusal means the socket is full: no other stream may be offered anything in that pump.
static void test_send_failure_stops_the_whole_pump(void **state)
{
    (void)state;
    agent_spool_t *sp = t_new();
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0);
    assert_int_equal(agent_spool_open(sp, T_RUN2, 1, NULL), 0);
    assert_int_equal(agent_spool_open(sp, T_RUN2, 2, NULL), 0);
    t_append(sp, T_RUN, 1, 2, false);
    t_append(sp, T_RUN2, 1, 2, false);
    t_append(sp, T_RUN2, 2, 2, false);
    t_sink_t refused = {.fail_from = 1};
    size_t sent = agent_spool_pump(sp, T_T0, t_send, &refused);
    t_sink_t later = {0};
    size_t resent = agent_spool_pump(sp, T_T0 + 1, t_send, &later);
    agent_spool_destroy(&sp);
    assert_int_equal(sent, 0);
    assert_int_equal(resent, 6); // nothing was lost
    if (refused.calls != 1) {
        fail_msg("send was called %d times in a pump whose first send was refused; the pump "
                 "must stop at the first refusal",
                 refused.calls);
    }
}

static void test_inventory(void **state)
{
    (void)state;
    agent_spool_t *sp = t_new();
    jf_hello_run_t inv[AGENT_SPOOL_STREAMS_MAX];
    assert_int_equal(agent_spool_inventory(sp, inv, AGENT_SPOOL_STREAMS_MAX), 0);
    assert_int_equal(agent_spool_open(sp, T_RUN, 2, NULL), 0);
    assert_int_equal(agent_spool_open(sp, T_RUN2, 1, NULL), 0);
    t_append(sp, T_RUN, 2, 4, false);
    t_append(sp, T_RUN2, 1, 2, true);
    agent_spool_ack(sp, T_RUN, 2, 4); // acked streams are still reported with their position
    size_t n = agent_spool_inventory(sp, inv, AGENT_SPOOL_STREAMS_MAX);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) {
        bool first = strcmp(inv[i].run, T_RUN) == 0;
        assert_string_equal(inv[i].run, first ? T_RUN : T_RUN2);
        assert_int_equal(inv[i].attempt, first ? 2 : 1);
        assert_int_equal(inv[i].next_seq, first ? 5 : 3);
        assert_int_equal(inv[i].finished, !first);
    }
    assert_int_equal(agent_spool_inventory(sp, inv, 1), 1);
    assert_int_equal(agent_spool_inventory(sp, inv, 0), 0);
    agent_spool_destroy(&sp);
}

static void test_drop_and_bytes(void **state)
{
    (void)state;
    agent_spool_t *sp = t_new();
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0);
    assert_int_equal(agent_spool_open(sp, T_RUN2, 1, NULL), 0);
    t_append(sp, T_RUN, 1, 3, false);
    t_append(sp, T_RUN2, 1, 2, false);
    size_t one = strlen("abcdef#1");
    assert_int_equal(agent_spool_bytes(sp), 5 * one);
    agent_spool_drop(sp, T_RUN, 1);
    assert_false(agent_spool_has(sp, T_RUN, 1));
    assert_int_equal(agent_spool_bytes(sp), 2 * one);
    agent_spool_drop(sp, T_RUN, 1); // twice: nothing happens
    agent_spool_drop(sp, T_RUN2, 7);
    assert_int_equal(agent_spool_bytes(sp), 2 * one);
    t_pump_expect(sp, T_T0, T_RUN2, (const int64_t[]){1, 2, 0});
    agent_spool_destroy(&sp); // frees what is still held (the sanitizer build checks)
}

// The cap refuses new streams, never a message of an open (running) stream.
static void test_byte_cap(void **state)
{
    (void)state;
    agent_spool_t *sp = t_new_capped(20);
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0);
    t_append(sp, T_RUN, 1, 2, false); // 2 x 8 bytes: under the cap
    assert_false(agent_spool_is_full(sp));
    t_append(sp, T_RUN, 1, 3, false); // 40 bytes: past it, still kept
    assert_int_equal(agent_spool_bytes(sp), 5 * strlen("abcdef#1"));
    assert_true(agent_spool_is_full(sp));
    jf_err_t err = {0};
    assert_int_equal(agent_spool_open(sp, T_RUN2, 1, &err), -ENOSPC);
    assert_non_null(strstr(err.msg, "spool full: 40 bytes held, cap 20"));
    assert_false(agent_spool_has(sp, T_RUN2, 1));
    t_append(sp, T_RUN, 1, 1, true); // the running stream's final message always fits
    assert_int_equal(agent_spool_next_seq(sp, T_RUN, 1), 7);
    agent_spool_ack(sp, T_RUN, 1, 4);
    assert_int_equal(agent_spool_bytes(sp), 2 * strlen("abcdef#1"));
    assert_false(agent_spool_is_full(sp));
    assert_int_equal(agent_spool_open(sp, T_RUN2, 1, NULL), 0);
    agent_spool_destroy(&sp);
}

static int t_setup_memory(void **state)
{
    (void)state;
    t_dir[0] = '\0';
    return 0;
}

static int t_setup_disk(void **state)
{
    (void)state;
    (void)snprintf(t_dir, sizeof t_dir, "/tmp/jf-spool-test-XXXXXX");
    return mkdtemp(t_dir) ? 0 : -1;
}

static int t_teardown_disk(void **state)
{
    (void)state;
    char path[128];
    (void)snprintf(path, sizeof path, "%s/%s", t_dir, AGENT_SPOOL_FILE_NAME);
    (void)unlink(path);
    (void)snprintf(path, sizeof path, "%s/%s-wal", t_dir, AGENT_SPOOL_FILE_NAME);
    (void)unlink(path);
    return rmdir(t_dir);
}

// The test-only fire-and-forget mode (--spool-forget-on-send): what is sent counts as
// acknowledged, so the resend timer and a rewind find nothing to send again, and a sent final
// message closes the stream.
static void test_forget_on_send(void **state)
{
    (void)state;
    jf_err_t err = {0};
    agent_spool_opts_t o = {.max_bytes = AGENT_SPOOL_BYTES_MAX, .forget_on_send = true};
    agent_spool_t *sp = agent_spool_new(&o, &err);
    assert_non_null(sp);
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0);
    t_append(sp, T_RUN, 1, 3, false);
    t_pump_expect(sp, T_T0, T_RUN, (const int64_t[]){1, 2, 3, 0});
    assert_int_equal(agent_spool_bytes(sp), 0);
    t_pump_expect(sp, T_T0 + AGENT_SPOOL_RESEND_US + 1, T_RUN, (const int64_t[]){0});
    agent_spool_rewind(sp, T_RUN, 1, 1);
    t_pump_expect(sp, T_T0 + AGENT_SPOOL_RESEND_US + 2, T_RUN, (const int64_t[]){0});
    t_append(sp, T_RUN, 1, 1, true);
    t_pump_expect(sp, T_T0 + AGENT_SPOOL_RESEND_US + 3, T_RUN, (const int64_t[]){4, 0});
    assert_false(agent_spool_has(sp, T_RUN, 1));
    agent_spool_destroy(&sp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_and_next_seq),
        cmocka_unit_test(test_stream_limit),
        cmocka_unit_test(test_append_refuses_wrong_seq),
        cmocka_unit_test(test_pump_sends_in_order_once),
        cmocka_unit_test(test_ack_is_cumulative_and_frees),
        cmocka_unit_test(test_final_closes_once_acked),
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_go_back_n_after_resend_timeout),
        cmocka_unit_test(test_resend_timer_starts_at_the_send),
        cmocka_unit_test(test_rewind_after_reconnect),
        cmocka_unit_test(test_send_failure_resumes_at_the_refused_message),
        cmocka_unit_test(test_send_failure_stops_the_whole_pump),
        cmocka_unit_test(test_inventory),
        cmocka_unit_test(test_drop_and_bytes),
        cmocka_unit_test(test_byte_cap),
    };
    const struct CMUnitTest memory_only[] = {
        cmocka_unit_test(test_forget_on_send),
    };
    int failed = cmocka_run_group_tests_name("memory", tests, t_setup_memory, NULL);
    failed += cmocka_run_group_tests_name("memory only", memory_only, NULL, NULL);
    return failed + cmocka_run_group_tests_name("disk", tests, t_setup_disk, t_teardown_disk);
}
