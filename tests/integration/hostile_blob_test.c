/* Integration: hostile weight-blob messages (docs/protocol.md §5.7) to both daemons, beside
 * hostile_test.c. The coordinator: a raw peer as host-1 plays the agent of four runs that return
 * weights and sends malformed blob.get and run.weights messages, chunks of runs that are not its
 * own, and well-formed chunks that overlap, name two sizes or hash wrongly; a board with no run
 * and a peer without a session ask for blobs. The agent: a ROUTER posing as its coordinator sends
 * blob.data nobody asked for, malformed blob.data, and answers the agent's blob.get with chunks
 * that do not continue the blob or hash wrongly. Each gets its error (or the run its end), the
 * store keeps no half-blob, and the daemons answer heartbeats. */
#include "jf_blob.h"
#include "jf_msg.h"
#include "jf_msg_blob.h"
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

#define S_REPLY_MS            3000  // longest wait for one reply
#define S_SILENCE_MS          300   // how long we watch for a reply that must not come
#define S_START_MS            10000 // a daemon is up, a run assigned, within this
#define S_KEEPALIVE_US        (INT64_C(400) * 1000) // below fleet.yaml's 500 ms heartbeat interval
#define S_POLL_MS             100                   // one receive while keeping peers alive
#define S_AGENT_HB_MS         1000   // heartbeat interval our welcome gives the agent
#define S_AGENT_HB_TIMEOUT_MS 3000   // and the silence after which it registers again
#define S_BLOB_BYTES          200000 // three chunks: 98,304 + 98,304 + 3,392 bytes
#define S_CHUNK               JF_BLOB_CHUNK_MAX_BYTES
#define S_OVERLAP_AT          50000  // the overlapping chunk's offset
#define S_OTHER_SIZE          300000 // the size a mixed chunk names instead
#define S_SEED                UINT64_C(0x2545f4914f6cdd1d)
#define S_UNKNOWN_BLOB        "00000000000000000000000000000000000000000000000000000000000000aa"
#define S_UPPER_BLOB          "00000000000000000000000000000000000000000000000000000000000000AA"
#define S_OTHER_RUN           "r0123456789abcdef" // a run id the store does not know
#define S_FL_RUNS             4                   // runs of the weights sweep, one per batch size

typedef struct s_tally {
    int sent; // hostile messages sent
    int ok;   // answered as expected
} s_tally_t;

typedef struct s_peer {
    zsock_t *sock;             // owned: DEALER to the coordinator, or ROUTER posing as one
    const char *name;          // for messages
    jft_proc_t *daemon;        // borrowed: the process we talk to
    s_tally_t *tally;          // borrowed: where results count
    int64_t keepalive_next_us; // monotonic; 0: this peer sends no heartbeats of its own
    struct s_peer *keep;       // borrowed: a registered peer to keep alive too, or NULL
    json_t *stash;             // owned: a run.assign that came while we waited for a reply
    int64_t next_id;
    int unexpected; // messages that must not have come
    int pace_ms;    // wait this long before each hostile message (0: none)
} s_peer_t;

typedef struct s_run {
    char id[JF_RUN_ID_LEN + 1];
    int64_t attempt;
    int64_t seq; // the last stream position sent
} s_run_t;

typedef struct s_fx {
    jft_fleet_t fleet;
    s_tally_t coord, agent;
    s_peer_t board;    // host-1 (coordinator test) or the ROUTER posing as coordinator (agent)
    s_peer_t idle;     // host-3: registered, never given a run
    s_peer_t stranger; // an identity fleet.yaml does not know
    bool coord_started, agent_started;
    unsigned char blob[S_BLOB_BYTES]; // the weights the runs return (seeded)
    char sha[JF_BLOB_SHA256_HEX_LEN + 1];
} s_fx_t;

static const char s_fl_sweep[] =
    "name: blobs\ntarget:\n  boards: [host-1]\n"
    "workloads:\n  - model: lenet5\n    dataset: mnist\n    epochs: 1\n"
    "storage: [local]\nbatch_sizes: [8, 16, 32, 64]\n"
    "fl_round: {round: fl9.1, return_weights: true}\n";
static const char s_plain_sweep[] = "name: plain\ntarget:\n  boards: [host-1]\n"
                                    "workloads:\n  - model: lenet5\n    dataset: mnist\n"
                                    "    epochs: 1\nstorage: [local]\nbatch_sizes: [8]\n";
static const char s_other_sweep[] = "name: other\ntarget:\n  boards: [host-2]\n"
                                    "workloads:\n  - model: lenet5\n    dataset: mnist\n"
                                    "    epochs: 1\nstorage: [local]\nbatch_sizes: [32]\n";

// What hostile blob input could touch, as one comparable text.
static const char s_store_sql[] =
    "SELECT (SELECT count(*) FROM blobs) || ' blobs, ' || (SELECT count(*) FROM weight_chunks) ||"
    " ' chunks, ' || (SELECT count(*) FROM run_weights) || ' run_weights, ' ||"
    " (SELECT count(*) FROM epochs) || ' epochs, ' || (SELECT count(*) FROM events) ||"
    " ' events; runs: ' || coalesce((SELECT group_concat(id || '/' || state || '/' || attempt ||"
    " '/' || acked_seq, ' ') FROM runs), '')";

// ---------------------------------------------------------------------------------------------
// Peers.

static void s_peer_init(s_peer_t *p, zsock_t *sock, const char *name, jft_proc_t *daemon,
                        s_tally_t *tally)
{
    assert_non_null(sock);
    *p = (s_peer_t){.sock = sock, .name = name, .daemon = daemon, .tally = tally, .next_id = 1000};
}

static void s_peer_fini(s_peer_t *p)
{
    json_decref(p->stash);
    zsock_destroy(&p->sock);
}

static void s_send(s_peer_t *p, json_t *msg)
{
    assert_non_null(msg);
    size_t len = 0;
    char *text = jf_msg_encode(msg, &len);
    json_decref(msg);
    assert_non_null(text);
    assert_int_equal(jft_send_raw(p->sock, NULL, text, len), 0);
    free(text);
}

static void s_heartbeat_if_due(s_peer_t *p)
{
    int64_t now_us = jf_clock_mono_us();
    if (p->keepalive_next_us > 0 && now_us >= p->keepalive_next_us) {
        s_send(p, jf_msg_heartbeat_new(p->next_id++, NULL));
        p->keepalive_next_us = now_us + S_KEEPALIVE_US;
    }
}

// Hostile messages are no sign of life: registered peers send heartbeats on time, p and the one
// it keeps (not further: two registered peers keep each other).
static void s_keepalive(s_peer_t *p)
{
    s_heartbeat_if_due(p);
    if (p->keep) {
        s_heartbeat_if_due(p->keep);
    }
}

static const char *s_type(const json_t *msg)
{
    const char *t = json_string_value(json_object_get(msg, "type"));
    return t ? t : "?";
}

static bool s_is(const json_t *msg, const char *type)
{
    return strcmp(s_type(msg), type) == 0;
}

// The next message that is not a heartbeat within timeout_ms, keeping peers alive meanwhile; a
// run.assign is kept in p->stash when stash_assign. NULL on timeout.
static json_t *s_next(s_peer_t *p, int timeout_ms, bool stash_assign)
{
    int64_t deadline_us =
        jf_clock_mono_us() + (int64_t) timeout_ms * jft_timeout_scale() * JF_US_PER_MS;
    while (jf_clock_mono_us() < deadline_us) {
        s_keepalive(p);
        json_t *msg = jft_recv_json(p->sock, S_POLL_MS, NULL);
        if (msg && stash_assign && !p->stash && s_is(msg, "run.assign")) {
            p->stash = msg;
        } else if (msg && !s_is(msg, "heartbeat")) {
            return msg;
        } else {
            json_decref(msg);
        }
    }
    return NULL;
}

// Waits for a message of type; anything else (but heartbeats and a stashed run.assign) counts
// as unexpected.
static json_t *s_wait(s_peer_t *p, const char *type, int timeout_ms)
{
    for (;;) {
        json_t *msg = s_next(p, timeout_ms, strcmp(type, "run.assign") != 0);
        if (!msg || s_is(msg, type)) {
            return msg;
        }
        char *text = json_dumps(msg, JSON_COMPACT);
        fprintf(stderr, "hostile_blob: %s: unexpected %.300s while waiting for %s\n", p->name, text,
                type);
        free(text);
        json_decref(msg);
        p->unexpected++;
    }
}

static void s_expect_silence(s_peer_t *p, const char *what)
{
    json_t *msg = s_next(p, S_SILENCE_MS, true);
    if (msg) {
        char *text = json_dumps(msg, JSON_COMPACT);
        fprintf(stderr, "hostile_blob: %s: %s: no reply expected, got %.300s\n", p->name, what,
                text);
        free(text);
        json_decref(msg);
        p->unexpected++;
    }
}

// Sends msg (taking it over) and checks that the reply is type (error: with code and "re" the
// message's id; run.reject: with reason code). The reply is returned when keep (caller frees).
static json_t *s_hostile(s_peer_t *p, const char *what, json_t *msg, const char *type,
                         const char *code, bool keep)
{
    assert_non_null(msg);
    int64_t id = json_integer_value(json_object_get(msg, "id"));
    if (p->pace_ms > 0) {
        zclock_sleep(p->pace_ms);
    }
    p->tally->sent++;
    s_send(p, msg);
    json_t *reply = s_next(p, S_REPLY_MS, true);
    const char *field = strcmp(type, "error") == 0 ? "code" : "reason";
    const char *got = json_string_value(json_object_get(reply, field));
    bool re_ok =
        strcmp(type, "error") != 0 || json_integer_value(json_object_get(reply, "re")) == id;
    if (reply && s_is(reply, type) && (!code || (got && strcmp(got, code) == 0)) && re_ok) {
        p->tally->ok++;
    } else {
        char *text = reply ? json_dumps(reply, JSON_COMPACT) : NULL;
        fprintf(stderr, "hostile_blob: %s: %s: expected %s %s, got %.300s (daemon %s)\n", p->name,
                what, type, code ? code : "", text ? text : "nothing",
                jft_proc_alive(p->daemon) ? "alive" : "DEAD");
        free(text);
    }
    if (keep) {
        return reply;
    }
    json_decref(reply);
    return NULL;
}

static void s_hostile_error(s_peer_t *p, const char *what, json_t *msg, const char *code)
{
    (void) s_hostile(p, what, msg, "error", code, false);
}

// Bytes from a fixed-seed xorshift64, so a failure repeats.
static void s_fill(unsigned char *buf, size_t len)
{
    uint64_t x = S_SEED;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (unsigned char) x;
    }
}

// msg with member key set to value (taken over), or without member key.
static json_t *s_with(json_t *msg, const char *key, json_t *value)
{
    assert_non_null(msg);
    assert_int_equal(json_object_set_new(msg, key, value), 0);
    return msg;
}

static json_t *s_without(json_t *msg, const char *key)
{
    assert_non_null(msg);
    assert_int_equal(json_object_del(msg, key), 0);
    return msg;
}

// ---------------------------------------------------------------------------------------------
// The coordinator: host-1 plays the agent of runs that return weights.

static jf_msg_run_ref_t s_ref(const s_run_t *r, int64_t seq)
{
    jf_msg_run_ref_t ref = {.attempt = r->attempt, .seq = seq};
    (void) snprintf(ref.run, sizeof ref.run, "%s", r->id);
    return ref;
}

// A run.weights of run r at seq: bytes [offset, offset + len) of fx->blob, naming sha and size.
static json_t *s_chunk_new(s_peer_t *p, const s_run_t *r, int64_t seq, const char *sha,
                           int64_t size, int64_t offset, size_t len, const unsigned char *bytes)
{
    jf_msg_run_ref_t ref = s_ref(r, seq);
    jf_msg_blob_part_t part = {
        .blob = sha, .size_bytes = size, .offset = offset, .data = bytes + offset, .len = len};
    json_t *msg = jf_msg_run_weights_new(p->next_id++, &ref, &part);
    assert_non_null(msg);
    return msg;
}

// Sends the next stream message of r (built for r->seq + 1) and waits for its ack.
static void s_stream(s_peer_t *p, s_run_t *r, json_t *msg)
{
    r->seq++;
    s_send(p, msg);
    json_t *ack = s_wait(p, "ack", S_REPLY_MS);
    assert_non_null(ack);
    assert_string_equal(json_string_value(json_object_get(ack, "run")), r->id);
    assert_int_equal(json_integer_value(json_object_get(ack, "seq")), r->seq);
    json_decref(ack);
}

static void s_stream_chunk(s_fx_t *fx, s_run_t *r, const char *sha, int64_t size, int64_t offset,
                           size_t len, const unsigned char *bytes)
{
    s_stream(&fx->board, r, s_chunk_new(&fx->board, r, r->seq + 1, sha, size, offset, len, bytes));
}

// The next run assigned to host-1: accepted, and its one epoch record stored (seq 1).
static void s_run_begin(s_peer_t *p, s_run_t *r)
{
    json_t *assign = p->stash ? p->stash : s_wait(p, "run.assign", S_START_MS);
    p->stash = NULL;
    assert_non_null(assign);
    const char *id = json_string_value(json_object_get(assign, "run"));
    assert_non_null(id);
    *r = (s_run_t){.attempt = json_integer_value(json_object_get(assign, "attempt"))};
    (void) snprintf(r->id, sizeof r->id, "%s", id);
    json_decref(assign);
    s_send(p, jf_msg_run_ref_new(JF_MSG_RUN_ACCEPT, p->next_id++, r->id, r->attempt));
    jf_epoch_rec_t e = {.warmup = true, .e2e_us = 1000, .compute_us = 900, .samples = 8};
    json_t *items = json_pack("[o]", jf_record_epoch_to_json(&e));
    jf_msg_run_ref_t ref = s_ref(r, r->seq + 1);
    s_stream(p, r, jf_msg_run_progress_new(p->next_id++, &ref, &items));
    json_decref(items); // NULL when the message took it
}

static void s_run_done(s_peer_t *p, s_run_t *r)
{
    jf_msg_run_ref_t ref = s_ref(r, r->seq + 1);
    s_stream(p, r, jf_msg_run_done_new(p->next_id++, &ref, 1));
}

// Rows of table (run_weights, weight_chunks) for run.
static long long s_rows_of_run(jft_fleet_t *f, const char *table, const char *run)
{
    char sql[256];
    (void) snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE run = '%s'", table, run);
    return jft_fleet_sql_int(f, sql);
}

// The run's state and detail ("done/", "failed/<detail>"); caller frees.
static char *s_run_end(jft_fleet_t *f, const char *run)
{
    char sql[256];
    (void) snprintf(sql, sizeof sql,
                    "SELECT state || '/' || coalesce(fail_detail, '') FROM runs WHERE id = '%s'",
                    run);
    char *text = jft_fleet_sql_text(f, sql);
    assert_non_null(text);
    return text;
}

static char *s_store_state(jft_fleet_t *f)
{
    char *state = jft_fleet_sql_text(f, s_store_sql);
    assert_non_null(state);
    return state;
}

static void s_submit(jft_fleet_t *f, const char *name, const char *yaml)
{
    char path[PATH_MAX], out[PATH_MAX + 16];
    assert_int_equal(jft_fleet_write(f, name, yaml, path), 0);
    (void) snprintf(out, sizeof out, "%s/cli.out", f->dir);
    assert_int_equal(
        jft_fleet_cli(f, out, S_START_MS, (const char *const[]){"sweep", "submit", path, NULL}), 0);
}

static json_t *s_hello_new(int64_t id, const char *name)
{
    jf_hello_t h = {.board_type = JF_BOARD_HOST,
                    .n_modes = 1,
                    .modes = {{0, "DEFAULT"}},
                    .n_storage = 1,
                    .storage = {{"local", "/tmp"}},
                    .started_us = jf_clock_wall_us()};
    (void) snprintf(h.name, sizeof h.name, "%s", name);
    (void) snprintf(h.platform, sizeof h.platform, "%s", "host");
    return jf_msg_hello_new(id, &h, NULL);
}

static void s_register(s_peer_t *p)
{
    s_send(p, s_hello_new(p->next_id++, p->name));
    json_t *welcome = s_wait(p, "welcome", S_START_MS);
    assert_non_null(welcome);
    json_decref(welcome);
    p->keepalive_next_us = jf_clock_mono_us() + S_KEEPALIVE_US;
}

// A well-formed run.weights of r at its next position: the first 16 bytes of the blob.
static json_t *s_small_chunk(s_fx_t *fx, const s_run_t *r)
{
    return s_chunk_new(&fx->board, r, r->seq + 1, fx->sha, S_BLOB_BYTES, 0, 16, fx->blob);
}

// Malformed run.weights of host-1's run r: each a bad_field before anything is stored.
static void s_bad_chunks(s_fx_t *fx, const s_run_t *r)
{
    s_peer_t *p = &fx->board;
    s_hostile_error(p, "run.weights with bad base64",
                    s_with(s_small_chunk(fx, r), "data", json_string("!!")), JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "run.weights with unpadded base64",
                    s_with(s_small_chunk(fx, r), "data", json_string("YWJjZA")),
                    JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "run.weights with empty data",
                    s_with(s_small_chunk(fx, r), "data", json_string("")), JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "run.weights with data a number",
                    s_with(s_small_chunk(fx, r), "data", json_integer(7)), JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "run.weights of size 0",
                    s_with(s_small_chunk(fx, r), "size_bytes", json_integer(0)),
                    JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "run.weights of a blob over the limit",
                    s_with(s_small_chunk(fx, r), "size_bytes", json_integer(JF_BLOB_MAX_BYTES + 1)),
                    JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "run.weights whose size is a string",
                    s_with(s_small_chunk(fx, r), "size_bytes", json_string("200000")),
                    JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "run.weights at offset -1",
                    s_with(s_small_chunk(fx, r), "offset", json_integer(-1)), JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "run.weights ending past its size",
                    s_with(s_small_chunk(fx, r), "offset", json_integer(S_BLOB_BYTES - 8)),
                    JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "run.weights at an offset past its size",
                    s_with(s_small_chunk(fx, r), "offset", json_integer(INT64_C(1) << 40)),
                    JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "run.weights at a real offset",
                    s_with(s_small_chunk(fx, r), "offset", json_real(0.5)), JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "run.weights with an upper-case blob name",
                    s_with(s_small_chunk(fx, r), "blob", json_string(S_UPPER_BLOB)),
                    JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "run.weights with an unknown member",
                    s_with(s_small_chunk(fx, r), "path", json_string("/etc/passwd")),
                    JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "run.weights without seq", s_without(s_small_chunk(fx, r), "seq"),
                    JF_MSG_E_BAD_FIELD);
    // One byte over the chunk limit: the message is within the size limit, the chunk is not.
    unsigned char *big = calloc(1, S_CHUNK + 1);
    assert_non_null(big);
    char *text = jf_blob_base64(big, S_CHUNK + 1);
    assert_non_null(text);
    free(big);
    s_hostile_error(p, "run.weights with an oversized chunk",
                    s_with(s_small_chunk(fx, r), "data", json_string(text)), JF_MSG_E_BAD_FIELD);
    free(text);
}

// Well-formed run.weights that are not host-1's to send.
static void s_foreign_chunks(s_fx_t *fx, const s_run_t *r, const char *other_run)
{
    s_peer_t *p = &fx->board;
    s_run_t other = {.attempt = 1}, unknown = {.attempt = 1}, later = *r;
    (void) snprintf(other.id, sizeof other.id, "%s", other_run);
    (void) snprintf(unknown.id, sizeof unknown.id, "%s", S_OTHER_RUN);
    later.attempt = r->attempt + 1;
    s_hostile_error(p, "run.weights of host-2's run",
                    s_chunk_new(p, &other, 1, fx->sha, S_BLOB_BYTES, 0, S_CHUNK, fx->blob),
                    JF_MSG_E_WRONG_STATE);
    s_hostile_error(p, "run.weights of an unknown run",
                    s_chunk_new(p, &unknown, 1, fx->sha, S_BLOB_BYTES, 0, S_CHUNK, fx->blob),
                    JF_MSG_E_WRONG_STATE);
    // Another attempt of its own run is fenced (§5.1): acknowledged so that an agent forgets it,
    // and not stored.
    (void) s_hostile(
        p, "run.weights of an attempt not assigned",
        s_chunk_new(p, &later, r->seq + 1, fx->sha, S_BLOB_BYTES, 0, S_CHUNK, fx->blob), "ack",
        NULL, false);
    s_hostile_error(
        &fx->stranger, "run.weights without a session",
        s_chunk_new(&fx->stranger, r, r->seq + 1, fx->sha, S_BLOB_BYTES, 0, S_CHUNK, fx->blob),
        JF_MSG_E_NOT_REGISTERED);
}

static json_t *s_get_new(s_peer_t *p, const char *sha, int64_t offset)
{
    json_t *msg = jf_msg_blob_get_new(p->next_id++, sha, offset);
    assert_non_null(msg);
    return msg;
}

static void s_bad_gets(s_fx_t *fx)
{
    s_peer_t *p = &fx->board;
    s_hostile_error(p, "blob.get of an unknown blob", s_get_new(p, S_UNKNOWN_BLOB, 0),
                    JF_MSG_E_UNKNOWN_BLOB);
    s_hostile_error(p, "blob.get at offset -1",
                    s_with(s_get_new(p, S_UNKNOWN_BLOB, 0), "offset", json_integer(-1)),
                    JF_MSG_E_BAD_FIELD);
    s_hostile_error(
        p, "blob.get at offset 2^62",
        s_with(s_get_new(p, S_UNKNOWN_BLOB, 0), "offset", json_integer(INT64_C(1) << 62)),
        JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "blob.get at offset \"0\"",
                    s_with(s_get_new(p, S_UNKNOWN_BLOB, 0), "offset", json_string("0")),
                    JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "blob.get without offset",
                    s_without(s_get_new(p, S_UNKNOWN_BLOB, 0), "offset"), JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "blob.get of a short name",
                    s_with(s_get_new(p, S_UNKNOWN_BLOB, 0), "blob", json_string("abc")),
                    JF_MSG_E_BAD_FIELD);
    s_hostile_error(
        p, "blob.get of a path",
        s_with(s_get_new(p, S_UNKNOWN_BLOB, 0), "blob", json_string("../../etc/passwd")),
        JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "blob.get of a name that is an array",
                    s_with(s_get_new(p, S_UNKNOWN_BLOB, 0), "blob", json_pack("[s]", fx->sha)),
                    JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "blob.get with an unknown member",
                    s_with(s_get_new(p, S_UNKNOWN_BLOB, 0), "len", json_integer(1 << 30)),
                    JF_MSG_E_BAD_FIELD);
    s_hostile_error(&fx->stranger, "blob.get without a session",
                    s_get_new(&fx->stranger, S_UNKNOWN_BLOB, 0), JF_MSG_E_NOT_REGISTERED);
}

// blob.get of the stored weights: the chunk at offset, byte for byte.
static void s_get_chunk(s_fx_t *fx, s_peer_t *p, int64_t offset, size_t len)
{
    json_t *data = s_hostile(p, "blob.get of stored weights", s_get_new(p, fx->sha, offset),
                             "blob.data", NULL, true);
    assert_non_null(data);
    void *bytes = NULL;
    size_t n = 0;
    const char *text = json_string_value(json_object_get(data, "data"));
    assert_int_equal(jf_blob_unbase64(text ? text : "", S_CHUNK, &bytes, &n, NULL), 0);
    assert_int_equal(n, len);
    assert_memory_equal(bytes, fx->blob + offset, len);
    assert_int_equal(json_integer_value(json_object_get(data, "size_bytes")), S_BLOB_BYTES);
    free(bytes);
    json_decref(data);
}

// Run 1 returns the weights in chunks out of offset order with a resent one: assembled once.
static void s_return_weights(s_fx_t *fx, s_run_t *r)
{
    s_peer_t *p = &fx->board;
    s_stream_chunk(fx, r, fx->sha, S_BLOB_BYTES, S_CHUNK, S_CHUNK, fx->blob);
    s_stream_chunk(fx, r, fx->sha, S_BLOB_BYTES, 0, S_CHUNK, fx->blob);
    // The same chunk again at its old position: acknowledged where the stream is, not stored.
    s_send(p, s_chunk_new(p, r, r->seq, fx->sha, S_BLOB_BYTES, 0, S_CHUNK, fx->blob));
    json_t *ack = s_wait(p, "ack", S_REPLY_MS);
    assert_non_null(ack);
    assert_int_equal(json_integer_value(json_object_get(ack, "seq")), r->seq);
    json_decref(ack);
    s_stream_chunk(fx, r, fx->sha, S_BLOB_BYTES, 2 * S_CHUNK, S_BLOB_BYTES - 2 * S_CHUNK, fx->blob);
    s_run_done(p, r);
    char *end = s_run_end(&fx->fleet, r->id);
    assert_string_equal(end, "done/");
    free(end);
    char sql[256];
    (void) snprintf(sql, sizeof sql,
                    "SELECT count(*) FROM blobs WHERE sha256 = '%s' AND length(data) = %d", fx->sha,
                    S_BLOB_BYTES);
    assert_int_equal(jft_fleet_sql_int(&fx->fleet, sql), 1);
}

typedef enum s_bad_kind { S_OVERLAP, S_WRONG_SHA, S_TWO_SIZES } s_bad_kind_t;

// Runs 2..4 stream well-formed chunks that do not make the blob they name: each is stored and
// acknowledged (§5.7.2), and at run.done the run fails, no blob is stored and no chunk is left.
static void s_bad_weights(s_fx_t *fx, s_bad_kind_t kind, const char *detail)
{
    s_peer_t *p = &fx->board;
    s_run_t r;
    s_run_begin(p, &r);
    unsigned char *bytes = malloc(S_BLOB_BYTES);
    assert_non_null(bytes);
    memcpy(bytes, fx->blob, S_BLOB_BYTES);
    bytes[S_BLOB_BYTES / 2] ^= (unsigned char) (kind == S_WRONG_SHA);
    int64_t second = kind == S_OVERLAP ? S_OVERLAP_AT : S_CHUNK;
    int64_t size2 = kind == S_TWO_SIZES ? S_OTHER_SIZE : S_BLOB_BYTES;
    s_stream_chunk(fx, &r, fx->sha, S_BLOB_BYTES, 0, S_CHUNK, bytes);
    s_stream_chunk(fx, &r, fx->sha, size2, second, S_CHUNK, bytes);
    s_stream_chunk(fx, &r, fx->sha, S_BLOB_BYTES, second + S_CHUNK,
                   (size_t) (S_BLOB_BYTES - second - S_CHUNK), bytes);
    free(bytes);
    s_run_done(p, &r);
    char *end = s_run_end(&fx->fleet, r.id);
    if (strncmp(end, "failed/", 7) != 0 || !strstr(end, detail)) {
        fail_msg("run %s: expected failed with '%s', got '%s'", r.id, detail, end);
    }
    free(end);
    assert_int_equal(jft_fleet_sql_int(&fx->fleet, "SELECT count(*) FROM blobs"), 1);
    assert_int_equal(s_rows_of_run(&fx->fleet, "run_weights", r.id), 0);
    long long left = s_rows_of_run(&fx->fleet, "weight_chunks", r.id);
    fprintf(stderr, "hostile_blob: run=%s chunks_left=%lld\n", r.id, left);
    assert_int_equal(left, 0);
}

// A run that returns no weights: its run.weights is refused and not stored.
static void s_weights_not_asked(s_fx_t *fx)
{
    s_peer_t *p = &fx->board;
    s_submit(&fx->fleet, "plain.yaml", s_plain_sweep);
    s_run_t r;
    s_run_begin(p, &r);
    char *before = s_store_state(&fx->fleet);
    s_hostile_error(p, "run.weights of a run that returns none",
                    s_chunk_new(p, &r, r.seq + 1, fx->sha, S_BLOB_BYTES, 0, S_CHUNK, fx->blob),
                    JF_MSG_E_WRONG_STATE);
    char *after = s_store_state(&fx->fleet);
    assert_string_equal(before, after);
    free(before);
    free(after);
    s_run_done(p, &r);
    char *end = s_run_end(&fx->fleet, r.id);
    assert_string_equal(end, "done/");
    free(end);
    assert_int_equal(jft_fleet_sql_int(&fx->fleet, "SELECT count(*) FROM weight_chunks"), 0);
}

// After all that the coordinator still serves: a heartbeat without a session is answered, and
// host-1 is online with heartbeats coming from the coordinator.
static void s_coord_still_serves(s_fx_t *fx)
{
    s_hostile_error(&fx->stranger, "heartbeat without a session",
                    jf_msg_heartbeat_new(fx->stranger.next_id++, NULL), JF_MSG_E_NOT_REGISTERED);
    fx->board.keepalive_next_us = 1; // due now
    s_keepalive(&fx->board);
    json_t *hb = NULL;
    for (int i = 0; i < 3 && !hb; i++) {
        hb = jft_recv_type(fx->board.sock, "heartbeat", S_REPLY_MS * jft_timeout_scale(), NULL);
        s_keepalive(&fx->board);
    }
    assert_non_null(hb);
    json_decref(hb);
    assert_int_equal(jft_fleet_sql_int(&fx->fleet, "SELECT online FROM boards WHERE name = "
                                                   "'host-1'"),
                     1);
}

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

static void test_coordinator_refuses_hostile_blobs(void **state)
{
    s_fx_t *fx = *state;
    jft_fleet_t *f = &fx->fleet;
    // Most hostile messages here are violations of the sender's limits (protocol §1.9): paced
    // (below) so that no 64 fall within 100 ms, each is answered as itself and none quarantines
    // its board (a quarantine would show as an event in the store check).
    assert_int_equal(jft_fleet_set_coord(f, NULL,
                                         "  limits:\n    quarantine_after: 64\n"
                                         "    quarantine_window: 100ms\n"),
                     0);
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    fx->coord_started = true;
    s_submit(f, "other.yaml", s_other_sweep);
    char *other_run = jft_fleet_sql_text(f, "SELECT id FROM runs WHERE state = 'pending'");
    assert_non_null(other_run);
    s_submit(f, "blobs.yaml", s_fl_sweep);
    s_peer_init(&fx->board, jft_dealer_new(f->endpoint, "host-1"), "host-1", &f->coord, &fx->coord);
    s_peer_init(&fx->idle, jft_dealer_new(f->endpoint, "host-3"), "host-3", &f->coord, &fx->coord);
    s_peer_init(&fx->stranger, jft_dealer_new(f->endpoint, "stranger"), "stranger", &f->coord,
                &fx->coord);
    fx->board.pace_ms = 3; // 64 violations take over 189 ms
    fx->idle.pace_ms = 3;
    fx->board.keep = &fx->idle;
    fx->idle.keep = &fx->board;
    fx->stranger.keep = &fx->board;
    s_register(&fx->idle);
    s_register(&fx->board);

    s_run_t r;
    s_run_begin(&fx->board, &r);
    char *before = s_store_state(f);
    s_bad_chunks(fx, &r);
    s_foreign_chunks(fx, &r, other_run);
    s_bad_gets(fx);
    char *after = s_store_state(f);
    if (strcmp(before, after) != 0) {
        fprintf(stderr, "hostile_blob: store changed:\n before: %s\n after:  %s\n", before, after);
    }
    assert_string_equal(before, after);
    free(before);
    free(after);
    free(other_run);

    s_return_weights(fx, &r);
    // Stored weights are served to any board with a session (§5.7.1), a run of its own or not.
    s_get_chunk(fx, &fx->idle, 0, S_CHUNK);
    s_get_chunk(fx, &fx->board, 2 * S_CHUNK, S_BLOB_BYTES - 2 * S_CHUNK);
    s_hostile_error(&fx->board, "blob.get at the blob's end",
                    s_get_new(&fx->board, fx->sha, S_BLOB_BYTES), JF_MSG_E_BAD_FIELD);
    s_hostile_error(&fx->idle, "blob.get at the last offset there is",
                    s_get_new(&fx->idle, fx->sha, JF_BLOB_MAX_BYTES - 1), JF_MSG_E_BAD_FIELD);
    s_bad_weights(fx, S_OVERLAP, "expected offset");
    s_bad_weights(fx, S_WRONG_SHA, "sha256");
    s_bad_weights(fx, S_TWO_SIZES, "another blob or size");
    s_weights_not_asked(fx);

    s_coord_still_serves(fx);
    int unexpected = fx->board.unexpected + fx->idle.unexpected + fx->stranger.unexpected;
    fprintf(stderr, "hostile_blob: coordinator_blob_hostile=%d/%d unexpected=%d\n", fx->coord.ok,
            fx->coord.sent, unexpected);
    assert_int_equal(unexpected, 0);
    assert_int_equal(fx->coord.ok, fx->coord.sent);
    s_stop_clean(&f->coord, &fx->coord_started, "coordinator");
}

// ---------------------------------------------------------------------------------------------
// The agent: a ROUTER posing as its coordinator.

static void s_agent_register(s_peer_t *p, int timeout_ms)
{
    json_t *hello = s_wait(p, "hello", timeout_ms);
    assert_non_null(hello);
    jf_welcome_t w = {.session = "0123456789abcdef",
                      .coordinator_epoch = 1,
                      .heartbeat_us = S_AGENT_HB_MS * JF_US_PER_MS,
                      .heartbeat_timeout_us = S_AGENT_HB_TIMEOUT_MS * JF_US_PER_MS,
                      .telemetry_hz = 1};
    int64_t re = json_integer_value(json_object_get(hello, "id"));
    json_decref(hello);
    s_send(p, jf_msg_welcome_new(p->next_id++, re, &w));
    p->keepalive_next_us = jf_clock_mono_us() + S_KEEPALIVE_US;
}

// A run.assign host-1 can run, starting from the blob sha and returning weights; seed makes
// its run id.
static json_t *s_assign_new(s_peer_t *p, int seed, const char *sha)
{
    jf_run_spec_t s = {.epochs = 1,
                       .prefetch = 2,
                       .batch_size = 32,
                       .seed = seed,
                       .telemetry_hz = 1,
                       .timeout_us = 60 * JF_US_PER_S,
                       .return_weights = true,
                       .minibatches = 2};
    (void) snprintf(s.board, sizeof s.board, "host-1");
    (void) snprintf(s.workload, sizeof s.workload, "lenet5-mnist");
    (void) snprintf(s.model, sizeof s.model, "lenet5");
    (void) snprintf(s.dataset, sizeof s.dataset, "mnist");
    (void) snprintf(s.power_mode, sizeof s.power_mode, "DEFAULT");
    (void) snprintf(s.storage, sizeof s.storage, "local");
    (void) snprintf(s.fl_round, sizeof s.fl_round, "fl9.%d", seed);
    (void) snprintf(s.init_weights, sizeof s.init_weights, "%s", sha);
    jf_run_spec_compute_id(&s);
    assert_int_equal(jf_run_spec_validate(&s, NULL), 0);
    json_t *msg = jf_msg_run_assign_new(p->next_id++, &s, 1);
    assert_non_null(msg);
    return msg;
}

// blob.data answering re: bytes [offset, offset + len) of bytes, naming sha and size.
static json_t *s_data_new(s_peer_t *p, int64_t re, const char *sha, int64_t size, int64_t offset,
                          size_t len, const unsigned char *bytes)
{
    jf_msg_blob_part_t part = {
        .blob = sha, .size_bytes = size, .offset = offset, .data = bytes + offset, .len = len};
    json_t *msg = jf_msg_blob_data_new(p->next_id++, re, &part);
    assert_non_null(msg);
    return msg;
}

// A well-formed blob.data of the blob's first 16 bytes, answering a request never made.
static json_t *s_small_data(s_fx_t *fx)
{
    return s_data_new(&fx->board, 7, fx->sha, S_BLOB_BYTES, 0, 16, fx->blob);
}

// Malformed blob.data, and a well-formed one nobody asked for (ignored: a late answer to a
// request the agent already sent again is no fault).
static void s_agent_bad_data(s_fx_t *fx)
{
    s_peer_t *p = &fx->board;
    s_send(p, s_small_data(fx));
    s_expect_silence(p, "blob.data that answers nothing");
    s_hostile_error(p, "blob.data with a bad sha",
                    s_with(s_small_data(fx), "blob", json_string("zz")), JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "blob.data of size 0",
                    s_with(s_small_data(fx), "size_bytes", json_integer(0)), JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "blob.data ending past its size",
                    s_with(s_small_data(fx), "offset", json_integer(S_BLOB_BYTES - 1)),
                    JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "blob.data at offset -5",
                    s_with(s_small_data(fx), "offset", json_integer(-5)), JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "blob.data with bad base64",
                    s_with(s_small_data(fx), "data", json_string("@@@@")), JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "blob.data without re", s_without(s_small_data(fx), "re"),
                    JF_MSG_E_BAD_FIELD);
    s_hostile_error(p, "blob.data with an unknown member",
                    s_with(s_small_data(fx), "path", json_string("/tmp/x")), JF_MSG_E_BAD_FIELD);
}

typedef enum s_fetch_kind { S_WRONG_OFFSET, S_WRONG_SIZE, S_BAD_HASH, S_NO_BLOB } s_fetch_kind_t;

// The agent's blob.get: its id, after checking what it asks for.
static int64_t s_agent_get(s_fx_t *fx, int64_t offset)
{
    json_t *get = s_wait(&fx->board, "blob.get", S_REPLY_MS);
    assert_non_null(get);
    assert_string_equal(json_string_value(json_object_get(get, "blob")), fx->sha);
    assert_int_equal(json_integer_value(json_object_get(get, "offset")), offset);
    int64_t id = json_integer_value(json_object_get(get, "id"));
    json_decref(get);
    return id;
}

// A run whose initial weights come wrong: the agent refuses it (run.reject infeasible) and
// starts no trainer.
static void s_agent_bad_fetch(s_fx_t *fx, s_fetch_kind_t kind)
{
    static const char *const what[] = {"blob.data at an offset not asked for",
                                       "blob.data naming another size",
                                       "blob.data whose bytes hash wrongly", "unknown_blob"};
    s_peer_t *p = &fx->board;
    s_send(p, s_assign_new(p, 100 + (int) kind, fx->sha));
    int64_t id = s_agent_get(fx, 0);
    json_t *last = NULL;
    if (kind == S_WRONG_OFFSET) {
        s_send(p, s_data_new(p, id + 1000, fx->sha, S_BLOB_BYTES, 0, S_CHUNK, fx->blob));
        s_expect_silence(p, "blob.data answering another request");
        last = s_data_new(p, id, fx->sha, S_BLOB_BYTES, 5, S_CHUNK, fx->blob);
    } else if (kind == S_NO_BLOB) {
        last = jf_msg_error_new(p->next_id++, id, JF_MSG_E_UNKNOWN_BLOB, "no blob");
    } else {
        unsigned char *bytes = malloc(S_BLOB_BYTES);
        assert_non_null(bytes);
        memcpy(bytes, fx->blob, S_BLOB_BYTES);
        bytes[S_BLOB_BYTES - 1] ^= 1;
        s_send(p, s_data_new(p, id, fx->sha, S_BLOB_BYTES, 0, S_CHUNK, bytes));
        id = s_agent_get(fx, S_CHUNK);
        if (kind == S_WRONG_SIZE) {
            last = s_data_new(p, id, fx->sha, S_OTHER_SIZE, S_CHUNK, S_CHUNK, bytes);
        } else {
            s_send(p, s_data_new(p, id, fx->sha, S_BLOB_BYTES, S_CHUNK, S_CHUNK, bytes));
            id = s_agent_get(fx, 2 * S_CHUNK);
            last = s_data_new(p, id, fx->sha, S_BLOB_BYTES, 2 * S_CHUNK, S_BLOB_BYTES - 2 * S_CHUNK,
                              bytes);
        }
        free(bytes);
    }
    (void) s_hostile(p, what[kind], last, "run.reject", "infeasible", false);
}

// Files named weights-* in the agent's state directory (initial weights written for a trainer).
static int s_weight_files(const jft_fleet_t *f)
{
    char dir[PATH_MAX + 64];
    (void) snprintf(dir, sizeof dir, JFT_FLEET_AGENT_STATE_FMT, f->dir, "host-1");
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        n += strncmp(e->d_name, "weights-", 8) == 0;
    }
    (void) closedir(d);
    return n;
}

static void test_agent_refuses_hostile_blobs(void **state)
{
    s_fx_t *fx = *state;
    jft_fleet_t *f = &fx->fleet;
    s_peer_t *p = &fx->board;
    s_peer_init(p, jft_router_new_in(f->dir), "agent host-1", &f->agents[0], &fx->agent);
    assert_int_equal(jft_fleet_start_agent_at(f, 0, zsock_endpoint(p->sock), NULL), 0);
    fx->agent_started = true;
    s_agent_register(p, S_START_MS);

    s_agent_bad_data(fx);
    for (int k = S_WRONG_OFFSET; k <= S_NO_BLOB; k++) {
        s_agent_bad_fetch(fx, (s_fetch_kind_t) k);
    }
    s_agent_bad_data(fx); // idle again: the same refusals

    // Still serving: our heartbeat is answered by one of its own, and nothing was written.
    s_send(p, jf_msg_heartbeat_new(p->next_id++, NULL));
    json_t *hb = jft_recv_type(p->sock, "heartbeat", S_REPLY_MS * jft_timeout_scale(), NULL);
    assert_non_null(hb);
    json_decref(hb);
    assert_true(jft_proc_alive(&f->agents[0]));
    assert_int_equal(s_weight_files(f), 0);
    fprintf(stderr, "hostile_blob: agent_blob_hostile=%d/%d unexpected=%d\n", fx->agent.ok,
            fx->agent.sent, p->unexpected);
    assert_int_equal(p->unexpected, 0);
    assert_int_equal(fx->agent.ok, fx->agent.sent);
    s_stop_clean(&f->agents[0], &fx->agent_started, "agent");
}

// ---------------------------------------------------------------------------------------------
// Fixtures: one fleet directory per test.

static int s_setup(void **state)
{
    s_fx_t *fx = calloc(1, sizeof *fx);
    if (!fx) {
        return -1;
    }
    s_fill(fx->blob, sizeof fx->blob);
    // host-1 plays along, host-2 only owns a pending run, host-3 is online without runs.
    if (jf_blob_sha256(fx->blob, sizeof fx->blob, fx->sha, NULL) != 0 ||
        jft_fleet_setup(&fx->fleet, 3) != 0) {
        jft_fleet_teardown(&fx->fleet); // cmocka skips the teardown of a failed setup
        free(fx);
        return -1;
    }
    *state = fx;
    return 0;
}

static int s_teardown(void **state)
{
    s_fx_t *fx = *state;
    if ((fx->coord_started && !jft_proc_alive(&fx->fleet.coord)) ||
        (fx->agent_started && !jft_proc_alive(&fx->fleet.agents[0]))) {
        fprintf(stderr, "hostile_blob: a daemon is dead; logs in %s\n", fx->fleet.dir);
    }
    s_peer_fini(&fx->board);
    s_peer_fini(&fx->idle);
    s_peer_fini(&fx->stranger);
    int rc = jft_fleet_teardown(&fx->fleet);
    free(fx);
    return rc;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_coordinator_refuses_hostile_blobs, s_setup,
                                        s_teardown),
        cmocka_unit_test_setup_teardown(test_agent_refuses_hostile_blobs, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
