/* Integration: hostile input to both daemons (STYLE.md §4 and §9, jf_msg.h). Raw peers send
 * malformed, oversized, unknown-type, wrong-version, wrong-direction and multi-frame messages and
 * the whole tests/fixtures/messages/bad/ corpus to the coordinator (agent and control endpoints)
 * and to a real agent (through a ROUTER posing as its coordinator). Each gets an `error` reply
 * with the expected code (run.reject for a run.assign the board cannot run); the daemons live on
 * and answer heartbeats, the coordinator's store does not change and no run starts. */
#include "hostile_cases.h"
#include "jf_msg.h"
#include "jf_msg_run.h"
#include "jf_msg_session.h"
#include "jf_units.h"
#include "jft_fleet.h"
#include "jft_fs.h"
#include "jft_zmq.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#define S_REPLY_MS            2000 // longest wait for one reply
#define S_SILENCE_MS          300  // how long we watch for a reply that must not come
#define S_KEEPALIVE_US        (INT64_C(400) * 1000) // below fleet.yaml's 500 ms heartbeat interval
#define S_RECONNECT_MS        10000                 // a dropped peer is talking again within this
#define S_RETRY_MS            500                   // one try while waiting for a dropped peer
#define S_START_MS            10000                 // a daemon is up within this
#define S_MISSES_MAX          5      // missing replies before we stop waiting on a daemon
#define S_CORPUS_MIN          40     // files in messages/bad/ (msg_test checks each one)
#define S_NEST_DEPTH          100000 // brackets in the deeply nested message
#define S_GARBAGE_BYTES       4096
#define S_SEED                UINT64_C(0x9e3779b97f4a7c15)
#define S_AGENT_HB_MS         1000                // heartbeat interval our welcome gives the agent
#define S_AGENT_HB_TIMEOUT_MS 3000                // and the silence after which it registers again
#define S_WRONG_DIR_PREFIX    "type-wrong-dir-"   // fixtures bad only for the other receiver

typedef struct s_tally {
    int sent; // hostile messages sent
    int ok;   // answered as expected
} s_tally_t;

typedef struct s_summary {
    s_tally_t coord;   // to the coordinator, both endpoints
    s_tally_t agent;   // to the agent, answered with error
    s_tally_t rejects; // run.assign the agent cannot run, answered with run.reject
    int dropped;       // over the transport limit: connection dropped, daemon lived on
    int crashes;       // daemons found dead at the end of a scenario
} s_summary_t;

typedef struct s_peer {
    zsock_t *sock;             // owned: DEALER to a daemon, or ROUTER posing as a coordinator
    const char *name;          // our identity (DEALER) or the agent's (ROUTER), for messages
    jft_proc_t *daemon;        // borrowed: the process we talk to
    s_tally_t *tally;          // borrowed: where results count
    bool registered;           // the daemon holds a session for us
    int64_t keepalive_us;      // send a valid heartbeat this often (0: never)
    int64_t keepalive_next_us; // monotonic
    struct s_peer *keep;       // borrowed: a registered peer to keep alive while we talk, or NULL
    int64_t next_id;           // id of the next message we build
    int misses;                // replies that never came
    int unexpected;            // messages that must not have come (run.accept, late replies)
    int pace_ms;               // wait this long before each hostile message (0: none)
} s_peer_t;

typedef struct s_fx {
    jft_fleet_t fleet;
    s_summary_t *summary; // borrowed: the group state
    s_peer_t board;       // DEALER as host-1 (coordinator), or ROUTER as coordinator (agent)
    s_peer_t stranger;    // DEALER with an identity fleet.yaml does not know
    s_peer_t ctl;         // DEALER on the control endpoint
    bool coord_started, agent_started;
} s_fx_t;

typedef struct s_expect {
    const char *type; // "error" or "run.reject"
    const char *code; // error: the code; run.reject: the reason
    int64_t re;       // error: "re", -1 for null
} s_expect_t;

#define S_N(a) (sizeof(a) / sizeof((a)[0]))

// ---------------------------------------------------------------------------------------------
// Peers: send, receive, check.

static void s_peer_init(s_peer_t *p, zsock_t *sock, const char *name, jft_proc_t *daemon,
                        s_tally_t *tally)
{
    assert_non_null(sock);
    *p = (s_peer_t){.sock = sock, .name = name, .daemon = daemon, .tally = tally, .next_id = 1000};
}

static void s_send_json(s_peer_t *p, json_t *msg)
{
    size_t len = 0;
    char *text = jf_msg_encode(msg, &len);
    json_decref(msg);
    assert_non_null(text);
    assert_int_equal(jft_send_raw(p->sock, NULL, text, len), 0);
    free(text);
}

// Keeps registered sessions alive: hostile messages do not count as signs of life.
static void s_keepalive(s_peer_t *p)
{
    int64_t now_us = jf_clock_mono_us();
    if (p->keepalive_us > 0 && now_us >= p->keepalive_next_us) {
        s_send_json(p, jf_msg_heartbeat_new(p->next_id++, NULL));
        p->keepalive_next_us = now_us + p->keepalive_us;
    }
    if (p->keep) {
        s_keepalive(p->keep);
    }
}

static const char *s_type(const json_t *msg)
{
    const char *t = json_string_value(json_object_get(msg, "type"));
    return t ? t : "?";
}

static int64_t s_deadline_us(int timeout_ms)
{
    return jf_clock_mono_us() + (int64_t) timeout_ms * jft_timeout_scale() * JF_US_PER_MS;
}

// The next message before the deadline, of any type; NULL on timeout.
static json_t *s_recv_until(s_peer_t *p, int64_t deadline_us)
{
    for (int64_t now_us = jf_clock_mono_us(); now_us < deadline_us; now_us = jf_clock_mono_us()) {
        json_t *msg =
            jft_recv_json(p->sock, (int) ((deadline_us - now_us) / JF_US_PER_MS) + 1, NULL);
        if (msg) {
            if (strcmp(s_type(msg), "run.accept") == 0) {
                p->unexpected++;
                fprintf(stderr, "hostile: %s: the agent ACCEPTED a run\n", p->name);
            }
            return msg;
        }
    }
    return NULL;
}

static json_t *s_recv_any(s_peer_t *p, int timeout_ms)
{
    return s_recv_until(p, s_deadline_us(timeout_ms));
}

// The next message that is not a heartbeat (daemons send those on their own); NULL on timeout.
static json_t *s_next_reply(s_peer_t *p, int timeout_ms)
{
    int64_t deadline_us = s_deadline_us(timeout_ms);
    for (;;) {
        json_t *msg = s_recv_until(p, deadline_us);
        if (!msg || strcmp(s_type(msg), "heartbeat") != 0) {
            return msg;
        }
        json_decref(msg);
    }
}

// Waits for a message of the given type; anything else but heartbeats is unexpected.
static json_t *s_wait_type(s_peer_t *p, const char *type, int timeout_ms)
{
    int64_t deadline_us = s_deadline_us(timeout_ms);
    while (jf_clock_mono_us() < deadline_us) {
        json_t *msg = s_recv_until(p, deadline_us);
        if (msg && strcmp(s_type(msg), type) == 0) {
            return msg;
        }
        if (msg && strcmp(s_type(msg), "heartbeat") != 0) {
            p->unexpected++;
            fprintf(stderr, "hostile: %s: unexpected %s while waiting for %s\n", p->name,
                    s_type(msg), type);
        }
        json_decref(msg);
    }
    return NULL;
}

// Watches for S_SILENCE_MS: any reply but a heartbeat is unexpected.
static void s_expect_silence(s_peer_t *p, const char *what)
{
    json_t *msg = s_next_reply(p, S_SILENCE_MS);
    if (msg) {
        p->unexpected++;
        char *text = json_dumps(msg, JSON_COMPACT);
        fprintf(stderr, "hostile: %s: %s: no reply expected, got %.300s\n", p->name, what, text);
        free(text);
        json_decref(msg);
    }
}

static bool s_reply_matches(const json_t *reply, const s_expect_t *e, char *why, size_t size)
{
    const char *field = strcmp(e->type, "error") == 0 ? "code" : "reason";
    const char *got = json_string_value(json_object_get(reply, field));
    const json_t *re = json_object_get(reply, "re");
    bool re_ok = strcmp(e->type, "error") != 0 ||
                 (e->re < 0 ? json_is_null(re) : json_integer_value(re) == e->re);
    if (strcmp(s_type(reply), e->type) == 0 && got && strcmp(got, e->code) == 0 && re_ok) {
        return true;
    }
    char *text = json_dumps(reply, JSON_COMPACT);
    (void) snprintf(why, size, "expected %s %s (re %lld), got %.300s", e->type, e->code,
                    (long long) e->re, text ? text : "?");
    free(text);
    return false;
}

// Takes the reply to the message just sent and checks it against e.
static void s_check_reply(s_peer_t *p, const char *what, const s_expect_t *e)
{
    json_t *reply = s_next_reply(p, S_REPLY_MS);
    char why[512] = {0};
    if (!reply) {
        p->misses++;
        bool alive = jft_proc_alive(p->daemon);
        fprintf(stderr, "hostile: %s: %s: no reply (daemon %s)\n", p->name, what,
                alive ? "alive" : "DEAD");
        if (!alive || p->misses >= S_MISSES_MAX) {
            fail_msg("%s: giving up after %d missing replies; daemon alive: %d", p->name, p->misses,
                     alive);
        }
    } else if (s_reply_matches(reply, e, why, sizeof why)) {
        p->tally->ok++;
    } else {
        fprintf(stderr, "hostile: %s: %s: %s\n", p->name, what, why);
    }
    json_decref(reply);
}

static void s_hostile_raw(s_peer_t *p, const char *what, const void *data, size_t len,
                          const s_expect_t *e)
{
    s_keepalive(p);
    if (p->pace_ms > 0) {
        zclock_sleep(p->pace_ms);
    }
    p->tally->sent++;
    assert_int_equal(jft_send_raw(p->sock, NULL, data, len), 0);
    s_check_reply(p, what, e);
}

static void s_hostile_error(s_peer_t *p, const char *what, const void *data, size_t len,
                            const char *code)
{
    s_hostile_raw(p, what, data, len, &(s_expect_t){"error", code, -1});
}

// Sends a built message (taking it over); the error must answer its id.
static void s_hostile_json(s_peer_t *p, const char *what, json_t *msg, const char *code)
{
    assert_non_null(msg);
    int64_t id = json_integer_value(json_object_get(msg, "id"));
    char *text = jf_msg_encode(msg, NULL);
    json_decref(msg);
    assert_non_null(text);
    s_hostile_raw(p, what, text, strlen(text), &(s_expect_t){"error", code, id});
    free(text);
}

static void s_hostile_table(s_peer_t *p, const hostile_text_case_t *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        s_hostile_raw(p, cases[i].what, cases[i].text, strlen(cases[i].text),
                      &(s_expect_t){"error", cases[i].code, cases[i].re});
    }
}

// ---------------------------------------------------------------------------------------------
// Generated hostile frames.

// A valid heartbeat padded to size bytes, so that only its size is wrong. Caller frees.
static char *s_padded(size_t size)
{
    static const char head[] = "{\"v\":1,\"type\":\"heartbeat\",\"id\":77,\"t_us\":1,\"pad\":\"";
    assert_true(size > sizeof head + 2);
    char *buf = malloc(size);
    assert_non_null(buf);
    memcpy(buf, head, sizeof head - 1);
    memset(buf + sizeof head - 1, 'x', size - sizeof head - 1);
    memcpy(buf + size - 2, "\"}", 2);
    return buf;
}

// Bytes from a fixed-seed xorshift64, so a failure repeats.
static void s_garbage(unsigned char *buf, size_t len)
{
    uint64_t x = S_SEED;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (unsigned char) x;
    }
}

static void s_hostile_generated(s_peer_t *p, size_t max_bytes)
{
    size_t size = max_bytes + max_bytes / 2; // over the application limit, under the transport's
    char *big = s_padded(size);
    s_hostile_error(p, "over the application size limit", big, size, JF_MSG_E_TOO_LARGE);
    free(big);
    unsigned char garbage[S_GARBAGE_BYTES];
    s_garbage(garbage, sizeof garbage);
    s_hostile_error(p, "random bytes", garbage, sizeof garbage, JF_MSG_E_BAD_JSON);
    char *deep = malloc(S_NEST_DEPTH);
    assert_non_null(deep);
    memset(deep, '[', S_NEST_DEPTH);
    s_hostile_error(p, "arrays nested 100000 deep", deep, S_NEST_DEPTH, JF_MSG_E_BAD_JSON);
    free(deep);
    static const char hb[] = "{\"v\":1,\"type\":\"heartbeat\",\"id\":78,\"t_us\":1}";
    const char *two[] = {hb, hb}, *req[] = {"", hb};
    const s_expect_t frames = {"error", JF_MSG_E_BAD_FRAMES, -1};
    s_keepalive(p);
    p->tally->sent += 2;
    assert_int_equal(jft_send_frames(p->sock, NULL, two, 2), 0);
    s_check_reply(p, "two frames", &frames);
    assert_int_equal(jft_send_frames(p->sock, NULL, req, 2), 0);
    s_check_reply(p, "REQ-style empty delimiter frame", &frames);
}

// Sends one file of messages/bad/. The expected code and "re" come from the decoder itself
// (unit.msg checks those against its table); here we check the daemon answers with them.
static void s_hostile_fixture(s_peer_t *p, const char *dir_path, const char *file, unsigned dir,
                              size_t max_bytes)
{
    char path[PATH_MAX + 256];
    (void) snprintf(path, sizeof path, "%s/%s", dir_path, file);
    size_t len = 0;
    char *data = jft_read_file(path, &len);
    assert_non_null(data);
    jf_msg_t msg = {0};
    s_expect_t e = {.type = "error"};
    if (jf_msg_decode(data, len, dir, max_bytes, &msg, &e.code, &e.re, NULL) == 0) {
        jf_msg_fini(&msg);
        // A wrong-direction fixture is bad only for the other receiver; anything else that
        // decodes does not belong in bad/.
        if (strncmp(file, S_WRONG_DIR_PREFIX, strlen(S_WRONG_DIR_PREFIX)) != 0) {
            p->tally->sent++; // counted as not answered as expected
            fprintf(stderr, "hostile: %s: fixture bad/%s is a valid message here\n", p->name, file);
        }
    } else {
        s_hostile_raw(p, file, data, len, &e);
    }
    free(data);
}

static int s_is_fixture(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

static void s_hostile_corpus(s_peer_t *p, unsigned dir, size_t max_bytes)
{
    char root[PATH_MAX];
    jft_fixture("messages/bad", root);
    struct dirent **names = NULL;
    int n = scandir(root, &names, s_is_fixture, alphasort);
    assert_true(n >= S_CORPUS_MIN);
    for (int i = 0; i < n; i++) {
        s_hostile_fixture(p, root, names[i]->d_name, dir, max_bytes);
        free(names[i]);
    }
    free(names);
}

static void s_hostile_common(s_peer_t *p, unsigned dir, size_t max_bytes)
{
    s_hostile_table(p, hostile_any_cases, hostile_n_any_cases);
    s_hostile_generated(p, max_bytes);
    s_hostile_corpus(p, dir, max_bytes);
}

// ---------------------------------------------------------------------------------------------
// Message builders.

static json_t *s_hello_new(int64_t id, const char *name, jf_board_type_t type, const char *platform)
{
    jf_hello_t h = {.board_type = type, .n_modes = 1, .modes = {{0, "DEFAULT"}}, .n_storage = 1,
                    .storage = {{"local", "/tmp"}}, .started_us = jf_clock_wall_us()};
    (void) snprintf(h.name, sizeof h.name, "%s", name);
    (void) snprintf(h.platform, sizeof h.platform, "%s", platform);
    return jf_msg_hello_new(id, &h, NULL);
}

static json_t *s_assign_new(int64_t id, const hostile_reject_case_t *c)
{
    jf_run_spec_t s = {.epochs = 1, .power_mode_id = c->mode_id, .prefetch = 2, .batch_size = 32,
                       .seed = 1, .telemetry_hz = 1, .timeout_us = 60 * JF_US_PER_S};
    (void) snprintf(s.board, sizeof s.board, "%s", c->board);
    (void) snprintf(s.workload, sizeof s.workload, "%s-%s", c->model, c->dataset);
    (void) snprintf(s.model, sizeof s.model, "%s", c->model);
    (void) snprintf(s.dataset, sizeof s.dataset, "%s", c->dataset);
    (void) snprintf(s.power_mode, sizeof s.power_mode, "%s", c->mode);
    (void) snprintf(s.storage, sizeof s.storage, "%s", c->storage);
    s.custom = (jf_run_custom_t){.n_cores = c->custom_cores,
                                 .cpu_hz = c->custom_cores ? 1190400000 : 0};
    s.dvfs_off = c->dvfs_off;
    jf_run_spec_compute_id(&s);
    assert_int_equal(jf_run_spec_validate(&s, NULL), 0); // the decoder must let it through
    return jf_msg_run_assign_new(id, &s, 1);
}

static json_t *s_stream_items(jf_msg_type_t type)
{
    if (type == JF_MSG_TELEMETRY) {
        return json_pack("[{s:I}]", "t_us", (json_int_t) jf_clock_wall_us());
    }
    jf_epoch_rec_t e = {.warmup = true, .e2e_us = 1000, .compute_us = 900, .samples = 32};
    return json_pack("[o]", jf_record_epoch_to_json(&e));
}

// A well-formed run-family message about run, attempt 1, seq 1.
static json_t *s_run_msg_new(jf_msg_type_t type, int64_t id, const char *run)
{
    jf_msg_run_ref_t ref = {.attempt = 1, .seq = 1};
    (void) snprintf(ref.run, sizeof ref.run, "%s", run);
    json_t *items = NULL, *msg = NULL;
    switch (type) {
    case JF_MSG_RUN_ACCEPT:
        return jf_msg_run_ref_new(type, id, run, 1);
    case JF_MSG_RUN_REJECT:
        return jf_msg_run_reject_new(id, run, 1, JF_FAIL_INFEASIBLE, "no");
    case JF_MSG_RUN_DONE:
        return jf_msg_run_done_new(id, &ref, 1);
    case JF_MSG_RUN_FAILED:
        return jf_msg_run_failed_new(id, &ref, JF_FAIL_OOM, "out of memory");
    default:
        items = s_stream_items(type);
        msg = type == JF_MSG_TELEMETRY ? jf_msg_telemetry_new(id, &ref, &items)
                                       : jf_msg_run_progress_new(id, &ref, &items);
        json_decref(items); // NULL when the message took it
        return msg;
    }
}

// Stops a daemon with SIGTERM: it must exit 0 on its own, which in a JF_SANITIZE build also
// means no leak report. Clears *started, so teardown does not count it as a crash.
static void s_stop_clean(jft_proc_t *p, bool *started, const char *who)
{
    assert_true(jft_proc_alive(p));
    int status = jft_proc_stop(p);
    *started = false;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fail_msg("the %s did not exit cleanly (wait status 0x%x); log: %s", who, status,
                 p->log_path);
    }
}

// ---------------------------------------------------------------------------------------------
// The coordinator.

static const char s_sweep[] = "name: hostile\ntarget:\n  boards: [host-2]\n"
                              "workloads:\n  - model: lenet5\n    dataset: mnist\n    epochs: 1\n"
                              "storage: [local]\nbatch_sizes: [32]\n";

// Every table's size and the rows that hostile input could touch, as one comparable text.
static const char s_store_sql[] =
    "SELECT (SELECT count(*) FROM boards) || ' boards, ' || (SELECT count(*) FROM runs) ||"
    " ' runs, ' || (SELECT count(*) FROM events) || ' events, ' || (SELECT count(*) FROM sweeps)"
    " || ' sweeps, ' || (SELECT count(*) FROM sweep_runs) || ' sweep_runs, ' ||"
    " (SELECT count(*) FROM epochs) || ' epochs, ' || (SELECT count(*) FROM minibatches) ||"
    " ' minibatches, ' || (SELECT count(*) FROM telemetry) || ' telemetry; boards: ' ||"
    " coalesce((SELECT group_concat(name || '/' || online || '/' || last_change_us || '/' ||"
    " length(coalesce(facts, '')), ' ') FROM boards), '') || '; runs: ' ||"
    " coalesce((SELECT group_concat(id || '/' || state || '/' || attempt || '/' || acked_seq ||"
    " '/' || coalesce(info, ''), ' ') FROM runs), '') || '; meta: ' ||"
    " coalesce((SELECT group_concat(key || '=' || value, ' ') FROM meta), '') || '; last event: '"
    " || coalesce((SELECT max(id) FROM events), 0)";

static char *s_store_state(jft_fleet_t *f)
{
    char *state = jft_fleet_sql_text(f, s_store_sql);
    assert_non_null(state);
    return state;
}

static char *s_submit_pending_run(jft_fleet_t *f)
{
    char sweep[PATH_MAX], out[PATH_MAX + 16];
    assert_int_equal(jft_fleet_write(f, "hostile.yaml", s_sweep, sweep), 0);
    (void) snprintf(out, sizeof out, "%s/cli.out", f->dir);
    assert_int_equal(
        jft_fleet_cli(f, out, S_START_MS, (const char *const[]){"sweep", "submit", sweep, NULL}),
        0);
    char *run = jft_fleet_sql_text(f, "SELECT id FROM runs WHERE state = 'pending'");
    assert_non_null(run);
    return run;
}

static void s_register_board(s_fx_t *fx)
{
    s_peer_t *p = &fx->board;
    s_send_json(p, s_hello_new(p->next_id++, p->name, JF_BOARD_HOST, "host"));
    json_t *welcome = s_wait_type(p, "welcome", S_START_MS);
    assert_non_null(welcome);
    json_decref(welcome);
    p->registered = true;
    p->keepalive_us = S_KEEPALIVE_US;
    p->keepalive_next_us = jf_clock_mono_us() + S_KEEPALIVE_US;
    assert_true(jft_fleet_wait_online(&fx->fleet, 1, S_START_MS));
}

// Well-formed messages the sender may not send: about another board's run, or without a session,
// or a hello that names another board than the connection's or does not match fleet.yaml.
static void s_hostile_semantic(s_peer_t *p, const char *run)
{
    static const jf_msg_type_t types[] = {JF_MSG_RUN_ACCEPT, JF_MSG_RUN_REJECT, JF_MSG_RUN_PROGRESS,
                                          JF_MSG_TELEMETRY,  JF_MSG_RUN_DONE,   JF_MSG_RUN_FAILED};
    const char *code = p->registered ? JF_MSG_E_WRONG_STATE : JF_MSG_E_NOT_REGISTERED;
    for (size_t i = 0; i < S_N(types); i++) {
        char what[96];
        (void) snprintf(what, sizeof what, "%s for host-2's run", jf_msg_type_name(types[i]));
        s_hostile_json(p, what, s_run_msg_new(types[i], p->next_id++, run), code);
    }
    s_hostile_json(p, "run.accept for an unknown run",
                   s_run_msg_new(JF_MSG_RUN_ACCEPT, p->next_id++, HOSTILE_OTHER_RUN), code);
    if (p->registered) {
        // One connection speaks for one board (docs/protocol.md §1.3). A peer that is no board
        // yet may name any: without CURVE a hello is taken at its word.
        s_hostile_json(p, "hello naming another board",
                       s_hello_new(p->next_id++, "host-2", JF_BOARD_HOST, "host"),
                       JF_MSG_E_BAD_FIELD);
    }
    s_hostile_json(p, "hello as a Jetson",
                   s_hello_new(p->next_id++, p->name, JF_BOARD_XAVIER_NX, "jetson"),
                   JF_MSG_E_UNKNOWN_BOARD);
}

static void s_hostile_to_coordinator(s_peer_t *p, const char *run)
{
    s_hostile_common(p, JF_MSG_TO_COORD, JF_MSG_MAX_BYTES_COORD);
    s_hostile_table(p, hostile_coord_cases, hostile_n_coord_cases);
    hostile_reject_case_t c = {"", "host-1",  "lenet5", "mnist", "local",
                               0,  "DEFAULT", NULL,     0,       false};
    s_hostile_json(p, "run.assign to the coordinator", s_assign_new(p->next_id++, &c),
                   JF_MSG_E_UNKNOWN_TYPE);
    s_hostile_semantic(p, run);
}

// A connection that is not host-1's route (its routing id "host-1", a NUL and more bytes, which
// once named boards) has no session: what it sends must neither speak for host-1 nor send
// replies to host-1 (docs/protocol.md §1.3). Its hello as host-1 is not tried: without CURVE a
// hello is taken at its word and would make it host-1's route (integration.curve_auth tests
// that with keys it cannot).
static void s_coord_impostor(s_fx_t *fx, const char *run)
{
    static const char id[] = "host-1\0evil";
    s_peer_t imp;
    s_peer_init(&imp, jft_dealer_new_raw(fx->fleet.endpoint, id, sizeof id - 1), "host-1\\0evil",
                &fx->fleet.coord, &fx->summary->coord);
    imp.keep = &fx->board;
    s_hostile_json(&imp, "heartbeat", jf_msg_heartbeat_new(imp.next_id++, NULL),
                   JF_MSG_E_NOT_REGISTERED);
    s_hostile_json(&imp, "run.failed for host-2's run",
                   s_run_msg_new(JF_MSG_RUN_FAILED, imp.next_id++, run), JF_MSG_E_NOT_REGISTERED);
    zsock_destroy(&imp.sock);
    s_expect_silence(&fx->board, "after the impostor's messages");
}

// True once p's heartbeat is answered with not_registered again (p has no session).
static bool s_answers_again(s_fx_t *fx, s_peer_t *p)
{
    int64_t deadline_us = s_deadline_us(S_RECONNECT_MS);
    while (jf_clock_mono_us() < deadline_us) {
        s_keepalive(&fx->board);
        s_send_json(p, jf_msg_heartbeat_new(p->next_id++, NULL));
        json_t *reply = s_next_reply(p, S_RETRY_MS);
        const char *code = json_string_value(json_object_get(reply, "code"));
        bool ok = code && strcmp(code, JF_MSG_E_NOT_REGISTERED) == 0;
        json_decref(reply);
        if (ok) {
            return true;
        }
    }
    return false;
}

// Over the transport limit: ZeroMQ drops the connection and there is no reply; the dealer
// reconnects and a new dealer is served too.
static void s_coord_drop_oversize(s_fx_t *fx)
{
    s_peer_t *p = &fx->stranger;
    size_t size = (size_t) JF_MSG_MAX_BYTES_COORD * JF_MSG_TRANSPORT_FACTOR + 1;
    char *big = s_padded(size);
    assert_int_equal(jft_send_raw(p->sock, NULL, big, size), 0);
    free(big);
    s_expect_silence(p, "over the transport size limit");
    assert_true(s_answers_again(fx, p));
    s_peer_t fresh;
    s_peer_init(&fresh, jft_dealer_new(fx->fleet.endpoint, "stranger-2"), "stranger-2",
                &fx->fleet.coord, p->tally);
    bool ok = s_answers_again(fx, &fresh);
    zsock_destroy(&fresh.sock);
    assert_true(ok);
    fx->summary->dropped++;
}

// After all that: host-1 registers again, its heartbeats raise no error, the coordinator's
// heartbeats reach it, and the CLI's status request is answered.
static void s_coord_still_serves(s_fx_t *fx)
{
    s_peer_t *p = &fx->board;
    s_send_json(p, s_hello_new(p->next_id++, p->name, JF_BOARD_HOST, "host"));
    json_t *msg = s_wait_type(p, "welcome", S_REPLY_MS);
    assert_non_null(msg);
    json_decref(msg);
    s_send_json(p, jf_msg_heartbeat_new(p->next_id++, NULL));
    s_expect_silence(p, "heartbeat after registering");
    msg = s_recv_any(p, S_REPLY_MS);
    assert_string_equal(s_type(msg), "heartbeat");
    json_decref(msg);
    s_send_json(&fx->ctl, json_pack("{s:i, s:s, s:i}", "v", 1, "type", "ctl.status", "id", 9));
    msg = s_wait_type(&fx->ctl, "ctl.reply", S_REPLY_MS);
    assert_non_null(msg);
    // host-1's hostile messages counted as violations of its limits (protocol §1.9): at least
    // the corpus, every file of which fails to decode.
    long long refused = -1;
    size_t i = 0;
    json_t *b = NULL;
    json_array_foreach(json_object_get(json_object_get(msg, "data"), "boards"), i, b)
    {
        if (strcmp(json_string_value(json_object_get(b, "name")), "host-1") == 0) {
            refused = json_integer_value(json_object_get(json_object_get(b, "limits"), "refused"));
        }
    }
    printf("host1_refusals_counted=%lld\n", refused);
    assert_true(refused >= S_CORPUS_MIN);
    json_decref(msg);
    assert_int_equal(jft_fleet_sql_int(&fx->fleet, "SELECT online FROM boards WHERE name = "
                                                   "'host-1'"),
                     1);
}

static void test_coordinator_answers_hostile_messages(void **state)
{
    s_fx_t *fx = *state;
    jft_fleet_t *f = &fx->fleet;
    // Every hostile message of host-1 is a violation of its limits (protocol §1.9). They are
    // paced (below) so that no 64 of them fall within 100 ms: each is answered as itself, and
    // none is the one that quarantines (integration.limits checks that).
    assert_int_equal(jft_fleet_set_coord(f, NULL,
                                         "  limits:\n    quarantine_after: 64\n"
                                         "    quarantine_window: 100ms\n"),
                     0);
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    fx->coord_started = true;
    char *run = s_submit_pending_run(f);
    char ctl_endpoint[PATH_MAX + 32];
    (void) snprintf(ctl_endpoint, sizeof ctl_endpoint, "ipc://%s/control.sock", f->data_dir);
    s_tally_t *t = &fx->summary->coord;
    s_peer_init(&fx->board, jft_dealer_new(f->endpoint, "host-1"), "host-1", &f->coord, t);
    fx->board.pace_ms = 3; // 64 violations take over 189 ms
    s_peer_init(&fx->stranger, jft_dealer_new(f->endpoint, "stranger"), "stranger", &f->coord, t);
    s_peer_init(&fx->ctl, jft_dealer_new(ctl_endpoint, NULL), "cli", &f->coord, t);
    fx->stranger.keep = &fx->board;
    fx->ctl.keep = &fx->board;
    s_register_board(fx);

    char *before = s_store_state(f);
    s_hostile_to_coordinator(&fx->board, run);
    s_hostile_to_coordinator(&fx->stranger, run);
    s_hostile_common(&fx->ctl, JF_MSG_TO_CTL, JF_MSG_MAX_BYTES_COORD);
    s_hostile_table(&fx->ctl, hostile_ctl_cases, hostile_n_ctl_cases);
    s_coord_impostor(fx, run);
    s_coord_drop_oversize(fx);
    char *after = s_store_state(f);
    if (strcmp(before, after) != 0) {
        fprintf(stderr, "hostile: store changed:\n before: %s\n after:  %s\n", before, after);
    }
    assert_string_equal(before, after);
    free(before);
    free(after);
    free(run);

    s_coord_still_serves(fx);
    assert_int_equal(fx->board.unexpected + fx->stranger.unexpected + fx->ctl.unexpected, 0);
    assert_int_equal(t->ok, t->sent);
    s_stop_clean(&f->coord, &fx->coord_started, "coordinator");
}

// ---------------------------------------------------------------------------------------------
// The agent.

static void s_welcome_agent(s_peer_t *p, const json_t *hello)
{
    jf_welcome_t w = {.session = "0123456789abcdef", .coordinator_epoch = 1,
                      .heartbeat_us = S_AGENT_HB_MS * JF_US_PER_MS,
                      .heartbeat_timeout_us = S_AGENT_HB_TIMEOUT_MS * JF_US_PER_MS,
                      .telemetry_hz = 1};
    int64_t re = json_integer_value(json_object_get(hello, "id"));
    s_send_json(p, jf_msg_welcome_new(p->next_id++, re, &w));
    p->keepalive_next_us = jf_clock_mono_us() + p->keepalive_us;
}

// Registers the agent: its hello, our welcome, then its first heartbeat (sent only when welcomed).
static void s_agent_register(s_peer_t *p, int timeout_ms)
{
    json_t *hello = s_wait_type(p, "hello", timeout_ms);
    assert_non_null(hello);
    assert_string_equal(json_string_value(json_object_get(hello, "name")), "host-1");
    s_welcome_agent(p, hello);
    json_decref(hello);
    json_t *hb = s_wait_type(p, "heartbeat", 2 * S_AGENT_HB_MS);
    assert_non_null(hb);
    json_decref(hb);
}

static void s_hostile_assigns(s_peer_t *p, s_tally_t *rejects)
{
    s_tally_t *errors = p->tally;
    p->tally = rejects;
    for (size_t i = 0; i < hostile_n_reject_cases; i++) {
        json_t *assign = s_assign_new(p->next_id++, &hostile_reject_cases[i]);
        char *text = jf_msg_encode(assign, NULL);
        json_decref(assign);
        assert_non_null(text);
        s_hostile_raw(p, hostile_reject_cases[i].what, text, strlen(text),
                      &(s_expect_t){"run.reject", hostile_reject_cases[i].reason, -1});
        free(text);
    }
    p->tally = errors;
}

// Over the agent's transport limit: its socket drops the connection, the agent notices the
// silence after heartbeat_timeout and registers again on a new socket.
static void s_agent_drop_oversize(s_fx_t *fx)
{
    s_peer_t *p = &fx->board;
    size_t size = (size_t) JF_MSG_MAX_BYTES_AGENT * JF_MSG_TRANSPORT_FACTOR + 1;
    char *big = s_padded(size);
    assert_int_equal(jft_send_raw(p->sock, NULL, big, size), 0);
    free(big);
    s_agent_register(p, S_AGENT_HB_TIMEOUT_MS + S_RECONNECT_MS);
    fx->summary->dropped++;
}

static int64_t s_sent_us(const json_t *heartbeat)
{
    return json_integer_value(json_object_get(heartbeat, "t_us"));
}

// The agent still heartbeats on its own (one sent after we start looking comes), and answers
// ours at once: sooner than its next own heartbeat is due. t_us is the agent's wall clock.
static void s_agent_answers_heartbeat(s_peer_t *p)
{
    int64_t since_us = jf_clock_wall_us();
    json_t *hb = NULL;
    do {
        json_decref(hb);
        hb = s_wait_type(p, "heartbeat", 2 * S_AGENT_HB_MS);
    } while (hb && s_sent_us(hb) < since_us);
    assert_non_null(hb);
    int64_t own_us = s_sent_us(hb);
    json_decref(hb);
    s_send_json(p, jf_msg_heartbeat_new(p->next_id++, NULL));
    hb = s_wait_type(p, "heartbeat", S_AGENT_HB_MS / 2);
    assert_non_null(hb);
    assert_true(s_sent_us(hb) - own_us < S_AGENT_HB_MS * JF_US_PER_MS);
    json_decref(hb);
}

// Children of pid, from /proc/<n>/stat (the field after the command is the state, then ppid).
static int s_children(pid_t pid)
{
    DIR *proc = opendir("/proc");
    assert_non_null(proc);
    int n = 0;
    for (struct dirent *e = readdir(proc); e; e = readdir(proc)) {
        char path[300];
        (void) snprintf(path, sizeof path, "/proc/%.20s/stat", e->d_name);
        char *stat = e->d_name[0] >= '1' && e->d_name[0] <= '9' ? jft_read_file(path, NULL) : NULL;
        const char *paren = stat ? strrchr(stat, ')') : NULL;
        int ppid = 0;
        char st = 0;
        n += paren && sscanf(paren + 1, " %c %d", &st, &ppid) == 2 && ppid == pid;
        free(stat);
    }
    (void) closedir(proc);
    return n;
}

static void test_agent_answers_hostile_messages(void **state)
{
    s_fx_t *fx = *state;
    jft_fleet_t *f = &fx->fleet;
    s_peer_t *p = &fx->board;
    s_peer_init(p, jft_router_new_in(f->dir), "agent host-1", &f->agents[0], &fx->summary->agent);
    p->keepalive_us = S_KEEPALIVE_US;
    // A fresh agent: what the coordinator test left in host-1's on-disk spool would be resent
    // to this peer after its welcome (as it should be), and this test counts any stream message.
    char spool_dir[PATH_MAX + 64];
    (void) snprintf(spool_dir, sizeof spool_dir, JFT_FLEET_AGENT_STATE_FMT, f->dir, "host-1");
    jft_tmpdir_remove(spool_dir);
    assert_int_equal(jft_fleet_start_agent_at(f, 0, zsock_endpoint(p->sock), NULL), 0);
    fx->agent_started = true;
    s_agent_register(p, S_START_MS);

    s_hostile_common(p, JF_MSG_TO_AGENT, JF_MSG_MAX_BYTES_AGENT);
    s_hostile_table(p, hostile_agent_cases, hostile_n_agent_cases);
    s_hostile_json(p, "hello to the agent",
                   s_hello_new(p->next_id++, "host-1", JF_BOARD_HOST, "host"),
                   JF_MSG_E_UNKNOWN_TYPE);
    s_hostile_assigns(p, &fx->summary->rejects);
    s_agent_drop_oversize(fx);
    s_hostile_table(p, hostile_any_cases,
                    hostile_n_any_cases); // still answered on the new connection

    s_agent_answers_heartbeat(p);
    assert_true(jft_proc_alive(&f->agents[0]));
    assert_int_equal(s_children(f->agents[0].pid), 0); // no jetfleet-train was started
    assert_int_equal(p->unexpected, 0);                // nor any run.accept sent
    assert_int_equal(fx->summary->agent.ok, fx->summary->agent.sent);
    assert_int_equal(fx->summary->rejects.ok, fx->summary->rejects.sent);
    s_stop_clean(&f->agents[0], &fx->agent_started, "agent");
}

// ---------------------------------------------------------------------------------------------
// Fixtures: one fleet directory per test; the summary lives across both.

static int s_group_setup(void **state)
{
    *state = calloc(1, sizeof(s_summary_t));
    return *state ? 0 : -1;
}

static int s_group_teardown(void **state)
{
    s_summary_t *s = *state;
    fprintf(stderr,
            "hostile: coordinator_hostile=%d/%d errors agent_hostile=%d/%d errors "
            "agent_rejects=%d/%d dropped_oversize=%d crashes=%d\n",
            s->coord.ok, s->coord.sent, s->agent.ok, s->agent.sent, s->rejects.ok, s->rejects.sent,
            s->dropped, s->crashes);
    free(s);
    return 0;
}

static int s_setup(void **state, size_t n_boards)
{
    s_fx_t *fx = calloc(1, sizeof *fx);
    if (!fx) {
        return -1;
    }
    fx->summary = *state;
    if (jft_fleet_setup(&fx->fleet, n_boards) != 0) {
        jft_fleet_teardown(&fx->fleet); // cmocka skips the teardown of a failed setup
        free(fx);
        return -1;
    }
    *state = fx;
    return 0;
}

static int s_setup_coordinator(void **state)
{
    return s_setup(state, 2); // host-1 plays along, host-2 only owns a pending run
}

static int s_setup_agent(void **state)
{
    return s_setup(state, 1);
}

static void s_count_crash(s_fx_t *fx, bool started, jft_proc_t *p, const char *who)
{
    if (started && !jft_proc_alive(p)) {
        fx->summary->crashes++;
        fprintf(stderr, "hostile: the %s is dead (wait status 0x%x); log: %s\n", who, p->status,
                p->log_path);
    }
}

static int s_teardown(void **state)
{
    s_fx_t *fx = *state;
    s_count_crash(fx, fx->coord_started, &fx->fleet.coord, "coordinator");
    s_count_crash(fx, fx->agent_started, &fx->fleet.agents[0], "agent");
    zsock_destroy(&fx->board.sock);
    zsock_destroy(&fx->stranger.sock);
    zsock_destroy(&fx->ctl.sock);
    jft_fleet_teardown(&fx->fleet);
    *state = fx->summary;
    free(fx);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_coordinator_answers_hostile_messages,
                                        s_setup_coordinator, s_teardown),
        cmocka_unit_test_setup_teardown(test_agent_answers_hostile_messages, s_setup_agent,
                                        s_teardown),
    };
    return cmocka_run_group_tests(tests, s_group_setup, s_group_teardown);
}
