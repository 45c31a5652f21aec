/* jf-loadgen: many agent sessions in one process, speaking the real protocol (docs/protocol.md
 * §4-§5) to a coordinator, for the fleet-scale and soak benchmarks (bench/fleet-soak.sh). Each
 * session registers as one board of fleet.yaml, heartbeats, accepts one run and streams telemetry
 * at a fixed rate until the end, resending what is not acknowledged after a re-registration. It
 * is not an agent: it trains nothing and reads no hardware; every sample is a template taken
 * from a real agent (`jetfleet-agent --platform sim:TYPE --sample-once`) with its time stamp set.
 * SIGUSR1 marks a coordinator restart: the sessions then count their hellos until each is welcomed
 * again (bench/fleet-scale.sh). --queue-away makes the sessions queue what they send while no
 * coordinator is there, as a DEALER without ZMQ_IMMEDIATE does (the restart flood of
 * tests/integration/restart_memory_test.c). Built with -DJF_BUILD_BENCH=ON or with the tests. */
#include "jf_log.h"
#include "jf_msg.h"
#include "jf_msg_run.h"
#include "jf_msg_session.h"
#include "jf_parse.h"
#include "jf_rng.h"
#include "jf_units.h"

#include <czmq.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define LG_SESSIONS_MAX 4000
#define LG_WINDOW_DEFAULT     32                      // as AGENT_SPOOL_WINDOW: without credit
#define LG_RESEND_US          (INT64_C(5) * 1000000)  // as AGENT_SPOOL_RESEND_US: go back N
#define LG_BATCH_US       (INT64_C(1) * 1000000) // default: one second of samples per message
#define LG_DRAIN_US           (INT64_C(60) * 1000000) // at the end: wait this long for the last acks

typedef struct lg_msg {
    int64_t seq;
    char *text; // owned: encoded message
    size_t len;
    int64_t n_samples; // samples in the message
    int64_t sent_us;   // when it was first handed to the socket (monotonic; 0: not yet)
} lg_msg_t;

// A growable array of latencies, for percentiles.
typedef struct lg_lat {
    int64_t *v; // owned
    size_t n, cap;
} lg_lat_t;

typedef struct lg_session {
    zsock_t *sock;               // owned: DEALER, no routing id (the hello names the board)
    char name[JF_IDENT_MAX + 1]; // board name
    bool welcomed;               // has a session with the coordinator
    char session[JF_SESSION_ID_LEN + 1]; // the welcome's session while welcomed
    int64_t hello_at_us;         // when the outstanding hello left (0: none outstanding)
    int64_t hello_id;            // the id of the outstanding hello
    int64_t hello_next_us;       // when the next hello is due (0: at once)
    int hello_tries;             // hellos since the last welcome, for the back-off
    int64_t heartbeat_us;        // the welcome's heartbeat interval
    int64_t last_tx_us;          // last message handed to the socket (monotonic)
    int64_t next_sample_us;      // next sample (monotonic)
    int64_t welcomed_at_us;      // last welcome (monotonic)
    int64_t first_hello_us;      // first hello of this session (monotonic; 0: none yet)
    int64_t hellos_since_mark;   // hellos sent since the restart mark
    int64_t mark_hello_us;       // first hello since the restart mark (monotonic; 0: none)
    bool hello_kicked;           // the next hello is due early, on a not_registered
    bool rewelcomed;             // welcomed since the restart mark
    bool running;                // holds a run
    int64_t run_started_us;      // when its run.assign arrived (monotonic)
    int64_t run_len_us;          // how long this run streams (--run-seconds, --run-spread)
    bool ending;                 // its run.failed is queued: the stream has ended
    int64_t end_seq;             // the run.failed's seq
    int64_t ended_us;            // when it was first handed to the socket (monotonic; 0: not yet)
    jf_msg_run_ref_t ref;        // the run; ref.seq is the next seq to produce
    int64_t acked_seq;           // highest seq the coordinator acknowledged
    int64_t next_send_seq;       // the next seq to hand to the socket (rewound by welcomes)
    int64_t credit;              // messages in flight the coordinator granted (0: none)
    int64_t last_ack_us;         // when the acked seq last advanced, or sending began
    json_t *batch;               // owned: samples not yet in a message
    int64_t batch_since_us;      // when the first sample of the batch was taken
    size_t n_unacked, cap_unacked;
    lg_msg_t *unacked; // owned: sent and not yet acknowledged, in seq order
} lg_session_t;

typedef struct lg_opts {
    const char *endpoint; // coordinator agent endpoint
    const char *prefix;   // board names: <prefix><index, 4 digits from 1>
    const char *type;     // board type the boards are in fleet.yaml (jf_board type name)
    const char *sample;   // file with one sample (JSON object) to repeat
    int sessions;         // how many boards
    int hz;               // samples per second per board
    int64_t duration_us;  // how long to run
    uint64_t seed;        // for the hello jitter
    bool no_credit;       // do not say we understand credit (the behaviour of older agents)
    bool queue_away;      // no ZMQ_IMMEDIATE: queue sends while disconnected (not the agent)
    int64_t batch_us;     // samples of this long go in one telemetry message
    int64_t run_us;       // a run ends (run.failed) after streaming this long; 0: never
    int run_spread_pct;   // each run streams run_us plus a seeded uniform draw below this % of
                          // it (--run-spread), so that runs end apart as in a real sweep
} lg_opts_t;

typedef struct lg_stats {
    int64_t hellos, welcomes, not_registered, assigns, samples, acked_samples, resent;
    int64_t last_welcome_us;        // monotonic time of the last welcome of any session
    int64_t mark_us;                // the restart mark (SIGUSR1; monotonic; 0: none)
    int64_t rewelcomed;             // sessions welcomed since the mark
    bool mark_reported;             // the re-registration figures were printed
    int64_t kicked_hellos;          // since the mark: hellos sent early on a not_registered
    int64_t welcome_wait_max_us;    // since the mark: longest first hello -> welcome
    lg_lat_t dispatch;              // first hello -> run.assign received, per session, us
    lg_lat_t ack;                   // telemetry message sent -> its ack received, us
    lg_lat_t redispatch;            // a run's end sent -> the next run.assign received, us
    int64_t runs_ended;             // runs ended by --run-seconds
    int64_t credit_min, credit_max; // grants seen (0: none)
    int64_t in_flight_max;          // most messages one session had in flight
    int64_t in_flight_total_max;    // most messages all sessions had in flight together
    int64_t in_flight_total;        // now
    int64_t dropped_samples;        // of attempts the coordinator dropped (lease expired)
    size_t msg_bytes_max;           // the largest stream message encoded
} lg_stats_t;

typedef struct lg {
    lg_opts_t o;
    json_t *sample; // owned: the template
    jf_board_type_t type;
    int64_t next_id;
    int64_t started_us;    // wall clock at start: every hello's started_us, as one agent process
    jf_rng_t rng;          // the hello jitter
    lg_session_t *s;       // owned: o.sessions entries
    zmq_pollitem_t *items; // owned
    lg_stats_t st;
} lg_t;

static volatile sig_atomic_t s_stop;
static volatile sig_atomic_t s_mark; // SIGUSR1: the coordinator was restarted now

static void s_on_signal(int sig)
{
    if (sig == SIGUSR1) {
        s_mark = 1;
    } else {
        s_stop = 1;
    }
}

static void s_lat_add(lg_lat_t *l, int64_t us)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 1024;
        int64_t *grown = realloc(l->v, cap * sizeof *grown);
        if (!grown) {
            return; // a figure short of one value; the report says how many it used
        }
        l->v = grown;
        l->cap = cap;
    }
    l->v[l->n++] = us;
}

static int s_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

// The q-quantile (nearest rank) in ms, or -1 if there is no value.
static double s_lat_quantile_ms(lg_lat_t *l, double q)
{
    if (l->n == 0) {
        return -1.0;
    }
    qsort(l->v, l->n, sizeof l->v[0], s_cmp_i64);
    size_t rank = (size_t) (q * (double) l->n + 0.999999);
    rank = rank < 1 ? 1 : rank > l->n ? l->n : rank;
    return (double) l->v[rank - 1] / JF_US_PER_MS;
}

static int s_send(lg_t *self, lg_session_t *s, json_t *msg)
{
    size_t len = 0;
    char *text = msg ? jf_msg_encode(msg, &len) : NULL;
    json_decref(msg);
    int rc = text ? zmq_send(zsock_resolve(s->sock), text, len, ZMQ_DONTWAIT) : -1;
    free(text);
    (void) self;
    if (rc >= 0) {
        s->last_tx_us = jf_clock_mono_us();
    }
    return rc < 0 ? -1 : 0;
}

static void s_hello(lg_t *self, lg_session_t *s, int64_t now_us)
{
    const jf_board_family_t *fam = jf_board_family(self->type);
    jf_hello_t h = {.board_type = self->type,
                    .n_modes = fam->n_modes,
                    .n_storage = 1,
                    .started_us = self->started_us};
    (void) snprintf(h.name, sizeof h.name, "%s", s->name);
    (void) snprintf(h.platform, sizeof h.platform, "sim");
    memcpy(h.modes, fam->modes, fam->n_modes * sizeof h.modes[0]);
    (void) snprintf(h.storage[0].medium, sizeof h.storage[0].medium, "local");
    (void) snprintf(h.storage[0].dataset_root, sizeof h.storage[0].dataset_root, "/nonexistent");
    if (s->running) {
        h.n_runs = 1;
        memcpy(h.runs[0].run, s->ref.run, sizeof h.runs[0].run);
        h.runs[0].attempt = s->ref.attempt;
        h.runs[0].next_seq = s->ref.seq;
    }
    // As the agent, a hello goes out only on a connection (ZMQ_IMMEDIATE); one that is not
    // writable is not built, so that a thousand sessions still connecting cost the loop nothing.
    if (!(zsock_events(s->sock) & ZMQ_POLLOUT)) {
        return;
    }
    s->hello_id = self->next_id;
    // As the agent, say that we understand credit (docs/protocol.md §5.3.6), unless told to
    // behave as an older agent.
    json_t *sw = self->o.no_credit ? NULL : json_pack("{s:s}", JF_CREDIT_SOFTWARE_KEY, "1");
    int rc = s_send(self, s, jf_msg_hello_new(self->next_id++, &h, sw));
    json_decref(sw);
    if (rc < 0) {
        // As the agent: not sent (no connection yet, ZMQ_IMMEDIATE), so not outstanding
        // either; tried again at the next turn of the loop.
        return;
    }
    // Its own time, not the loop's: with many sessions the loop's may be a poll and a pass old.
    now_us = s->last_tx_us;
    s->hello_at_us = now_us;
    // The agent's back-off (jf_hello_backoff_us, docs/protocol.md §4.1.1), plus up to a quarter
    // of it at random.
    int64_t backoff = jf_hello_backoff_us(s->hello_tries);
    s->hello_next_us = now_us + backoff + (int64_t) jf_rng_below(&self->rng, backoff / 4 + 1);
    s->hello_tries++;
    if (s->first_hello_us == 0) {
        s->first_hello_us = now_us;
    }
    s->hellos_since_mark++;
    self->st.hellos++;
    if (self->st.mark_us > 0) {
        self->st.kicked_hellos += s->hello_kicked;
        s->mark_hello_us = s->mark_hello_us ? s->mark_hello_us : now_us;
    }
    s->hello_kicked = false;
}

// Keeps a sent stream message until its ack.
static int s_keep(lg_session_t *s, int64_t seq, char *text, size_t len, int64_t n_samples)
{
    if (s->n_unacked == s->cap_unacked) {
        size_t cap = s->cap_unacked ? 2 * s->cap_unacked : 16;
        lg_msg_t *grown = realloc(s->unacked, cap * sizeof *grown);
        if (!grown) {
            return -ENOMEM;
        }
        s->unacked = grown;
        s->cap_unacked = cap;
    }
    s->unacked[s->n_unacked++] =
        (lg_msg_t){.seq = seq, .text = text, .len = len, .n_samples = n_samples};
    return 0;
}

static void s_flush_batch(lg_t *self, lg_session_t *s, int64_t now_us)
{
    size_t n = json_array_size(s->batch);
    json_t *msg = jf_msg_telemetry_new(self->next_id++, &s->ref, &s->batch);
    size_t len = 0;
    char *text = msg ? jf_msg_encode(msg, &len) : NULL;
    json_decref(msg);
    json_decref(s->batch); // NULL when the message took it
    s->batch = json_array();
    if (!text || s_keep(s, s->ref.seq, text, len, (int64_t) n) != 0) {
        free(text);
        jf_log_error("loadgen: '%s': out of memory, %zu samples lost", s->name, n);
        return;
    }
    self->st.msg_bytes_max = len > self->st.msg_bytes_max ? len : self->st.msg_bytes_max;
    s->ref.seq++;
    (void) now_us; // sent by s_pump, window permitting
}

static void s_produce(lg_t *self, lg_session_t *s, int64_t now_us)
{
    // A shallow copy: the members below the top level are the template's, shared (read only).
    json_t *sample = json_copy(self->sample);
    (void) json_object_set_new(sample, "t_us", json_integer(jf_clock_wall_us()));
    if (json_array_size(s->batch) == 0) {
        s->batch_since_us = now_us;
    }
    (void) json_array_append_new(s->batch, sample);
    self->st.samples++;
    if (now_us - s->batch_since_us >= self->o.batch_us - JF_US_PER_MS) {
        s_flush_batch(self, s, now_us);
    }
}

// --run-seconds: the run's last samples, then a run.failed as the stream's final message (a
// loadgen run has no epochs to be done with). The coordinator ends the attempt, which frees the
// board for the sweep's next run of it, and lets retention at its telemetry.
static void s_end_run(lg_t *self, lg_session_t *s, int64_t now_us)
{
    if (json_array_size(s->batch) > 0) {
        s_flush_batch(self, s, now_us);
    }
    json_t *msg = jf_msg_run_failed_new(self->next_id++, &s->ref, JF_FAIL_CRASHED,
                                        "jf-loadgen: the run ended after --run-seconds");
    size_t len = 0;
    char *text = msg ? jf_msg_encode(msg, &len) : NULL;
    json_decref(msg);
    if (!text || s_keep(s, s->ref.seq, text, len, 0) != 0) {
        free(text);
        jf_log_error("loadgen: '%s': out of memory ending its run", s->name);
        return;
    }
    s->end_seq = s->ref.seq++;
    s->ending = true;
    s->ended_us = 0; // set when it leaves (s_pump): it may wait for credit behind the stream
    self->st.runs_ended++;
}

static void s_set_credit(lg_t *self, lg_session_t *s, int64_t credit)
{
    s->credit = credit;
    if (self->st.credit_min == 0 || credit < self->st.credit_min) {
        self->st.credit_min = credit;
    }
    self->st.credit_max = credit > self->st.credit_max ? credit : self->st.credit_max;
}

// The session's in flight (sent and not acknowledged) changes from what old_acked left to what
// new_acked leaves; keeps the fleet's total.
static void s_set_in_flight(lg_t *self, lg_session_t *s, int64_t old_acked, int64_t new_acked)
{
    int64_t before = s->next_send_seq - 1 - old_acked, after = s->next_send_seq - 1 - new_acked;
    self->st.in_flight_total += (after > 0 ? after : 0) - (before > 0 ? before : 0);
}

static void s_on_ack(lg_t *self, lg_session_t *s, const json_t *body, int64_t now_us)
{
    jf_msg_run_ref_t ref;
    if (jf_msg_run_ref_parse(body, &ref, NULL) != 0 || strcmp(ref.run, s->ref.run) != 0) {
        return;
    }
    size_t keep = 0;
    for (size_t i = 0; i < s->n_unacked; i++) {
        if (s->unacked[i].seq <= ref.seq) {
            // Count the samples the coordinator has now committed.
            self->st.acked_samples += s->unacked[i].n_samples;
            if (s->unacked[i].sent_us > 0) {
                s_lat_add(&self->st.ack, now_us - s->unacked[i].sent_us);
            }
            free(s->unacked[i].text);
        } else {
            s->unacked[keep++] = s->unacked[i];
        }
    }
    s->n_unacked = keep;
    int64_t credit = 0;
    if (jf_msg_credit_parse(body, &credit, NULL) == 0 && credit > 0) {
        s_set_credit(self, s, credit);
    }
    if (ref.seq > s->acked_seq) {
        s_set_in_flight(self, s, s->acked_seq, ref.seq);
        s->acked_seq = ref.seq;
        s->last_ack_us = now_us;
    }
    if (s->next_send_seq <= s->acked_seq) {
        s->next_send_seq = s->acked_seq + 1;
    }
}

static void s_drop_stream(lg_t *self, lg_session_t *s);

static void s_on_assign(lg_t *self, lg_session_t *s, const json_t *body, int64_t now_us)
{
    jf_run_spec_t spec;
    int64_t attempt = 0;
    if (jf_msg_run_assign_parse(body, &spec, &attempt, NULL) != 0) {
        return;
    }
    self->st.assigns++;
    if (s->running && s->ending && s->ended_us > 0 && strcmp(spec.run_id, s->ref.run) != 0) {
        // The coordinator assigns the next run only once it has stored the end of this one,
        // whose ack came before this message: what is still unacknowledged is counted dropped.
        s_lat_add(&self->st.redispatch, now_us - s->ended_us);
        s_drop_stream(self, s);
    }
    if (s->running && strcmp(spec.run_id, s->ref.run) != 0) {
        (void) s_send(self, s,
                      jf_msg_run_reject_new(self->next_id++, spec.run_id, attempt, JF_FAIL_BUSY,
                                            "loadgen holds another run"));
        return;
    }
    if (!s->running) {
        s_lat_add(&self->st.dispatch, now_us - s->first_hello_us);
        s->running = true;
        s->ending = false;
        s->run_started_us = now_us;
        int64_t spread_us = self->o.run_us / 100 * self->o.run_spread_pct;
        s->run_len_us =
            self->o.run_us +
            (spread_us > 0 ? (int64_t) jf_rng_below(&self->rng, (uint64_t) spread_us) : 0);
        memcpy(s->ref.run, spec.run_id, sizeof s->ref.run);
        s->ref.attempt = attempt;
        s->ref.seq = 1;
        s->acked_seq = 0;
        s->next_send_seq = 1;
        s->next_sample_us = jf_clock_mono_us();
    }
    (void) s_send(self, s,
                  jf_msg_run_ref_new(JF_MSG_RUN_ACCEPT, self->next_id++, spec.run_id, attempt));
}

// A welcome's drop (the attempt's lease expired, docs/protocol.md §4.4): the stream is forgotten,
// as the agent does, and its unacknowledged samples counted as dropped; a new attempt may follow.
static void s_drop_stream(lg_t *self, lg_session_t *s)
{
    s_set_in_flight(self, s, s->acked_seq, s->next_send_seq - 1);
    for (size_t k = 0; k < s->n_unacked; k++) {
        self->st.dropped_samples += s->unacked[k].n_samples;
        free(s->unacked[k].text);
    }
    s->n_unacked = 0;
    self->st.dropped_samples += (int64_t) json_array_size(s->batch);
    (void) json_array_clear(s->batch);
    s->running = false;
}

static void s_on_welcome(lg_t *self, lg_session_t *s, const json_t *body, int64_t now_us)
{
    jf_welcome_t w;
    if (jf_msg_welcome_parse(body, &w, NULL) != 0) {
        return;
    }
    if (s->welcomed && strcmp(w.session, s->session) == 0) {
        // As the agent (docs/protocol.md §4.1.2): the answer to a hello retry of the session
        // we hold; rewinding again would only resend what is in flight.
        return;
    }
    memcpy(s->session, w.session, sizeof s->session);
    if (w.credit > 0) {
        s_set_credit(self, s, w.credit);
    } else {
        s->credit = 0; // none granted: the agent's default window
    }
    s->welcomed = true;
    s->heartbeat_us = w.heartbeat_us;
    s->hello_at_us = 0;
    s->hello_tries = 0;
    s->welcomed_at_us = now_us;
    self->st.welcomes++;
    self->st.last_welcome_us = now_us;
    if (self->st.mark_us > 0 && !s->rewelcomed) {
        s->rewelcomed = true;
        self->st.rewelcomed++;
        int64_t wait = s->mark_hello_us > 0 ? now_us - s->mark_hello_us : 0;
        self->st.welcome_wait_max_us =
            wait > self->st.welcome_wait_max_us ? wait : self->st.welcome_wait_max_us;
    }
    for (size_t i = 0; i < w.n_resume; i++) {
        if (s->running && strcmp(w.resume[i].run, s->ref.run) == 0 &&
            w.resume[i].action == JF_RESUME_CONTINUE) {
            // Resent by s_pump from here, as far as the credit allows.
            int64_t acked =
                w.resume[i].acked_seq > s->acked_seq ? w.resume[i].acked_seq : s->acked_seq;
            s_set_in_flight(self, s, s->acked_seq, s->next_send_seq - 1);
            s->acked_seq = acked;
            s->next_send_seq = acked + 1;
            s->last_ack_us = now_us;
        } else if (s->running && strcmp(w.resume[i].run, s->ref.run) == 0) {
            s_drop_stream(self, s);
        }
    }
}

// One hello per lost session, as the agent (agent/session/agent_session.c, docs/protocol.md
// §4.1.1): every message in flight draws its own not_registered, and they do not each send a
// hello. One that arrives when the first hello is older than the first back-off step retries
// it at once, as the agent does (the first retry only).
static void s_on_not_registered(lg_session_t *s, int64_t now_us)
{
    if (s->welcomed) {
        s->welcomed = false;
        s->hello_next_us = 0;
        s->hello_tries = 0;
    } else if (s->hello_tries == 1 && s->hello_at_us > 0 &&
               now_us - s->hello_at_us >= JF_HELLO_RETRY_FIRST_US) {
        s->hello_next_us = 0;
        s->hello_kicked = true;
    }
}

static void s_on_msg(lg_t *self, lg_session_t *s, const void *data, size_t len, int64_t now_us)
{
    jf_msg_t msg = {0};
    const char *code = NULL;
    int64_t id = -1;
    if (jf_msg_decode(data, len, JF_MSG_TO_AGENT, JF_MSG_MAX_BYTES_AGENT, &msg, &code, &id, NULL) !=
        0) {
        return;
    }
    switch (msg.type) {
    case JF_MSG_WELCOME:
        s_on_welcome(self, s, msg.body, now_us);
        break;
    case JF_MSG_RUN_ASSIGN:
        s_on_assign(self, s, msg.body, now_us);
        break;
    case JF_MSG_ACK:
        s_on_ack(self, s, msg.body, now_us);
        break;
    case JF_MSG_ERROR: {
        char ecode[64] = {0}, detail[256] = {0};
        if (jf_msg_error_parse(msg.body, ecode, sizeof ecode, detail, sizeof detail, NULL) == 0 &&
            strcmp(ecode, JF_MSG_E_NOT_REGISTERED) == 0) {
            self->st.not_registered++;
            s_on_not_registered(s, now_us);
        }
        break;
    }
    case JF_MSG_HEARTBEAT:
        // Answered at once, as the agent does (without the clock members: a load generator
        // has no clock offset to show).
        (void) s_send(self, s,
                      jf_msg_heartbeat_new(self->next_id++, s->running ? s->ref.run : NULL));
        break;
    default:
        break; // cancels: a load generator keeps streaming
    }
    jf_msg_fini(&msg);
}

// Sends what the window allows, in seq order: the coordinator's credit, or the agent's default
// window of 32 when none was granted (agent/session/agent_spool.h). Go back N when nothing was
// acknowledged for the agent's resend time (5 s), as the agent does.
static void s_pump(lg_t *self, lg_session_t *s, int64_t now_us)
{
    int64_t window = s->credit > 0 ? s->credit : LG_WINDOW_DEFAULT;
    if (s->next_send_seq - 1 > s->acked_seq && now_us - s->last_ack_us > LG_RESEND_US) {
        s_set_in_flight(self, s, s->acked_seq, s->next_send_seq - 1);
        s->next_send_seq = s->acked_seq + 1;
        s->last_ack_us = now_us;
    }
    for (size_t i = 0; i < s->n_unacked; i++) {
        lg_msg_t *m = &s->unacked[i];
        if (m->seq < s->next_send_seq) {
            continue;
        }
        if (m->seq != s->next_send_seq || m->seq - s->acked_seq > window) {
            break;
        }
        if (zmq_send(zsock_resolve(s->sock), m->text, m->len, ZMQ_DONTWAIT) < 0) {
            break;
        }
        now_us = jf_clock_mono_us(); // when it left, not when the loop's pass began
        if (s->next_send_seq - 1 == s->acked_seq) {
            s->last_ack_us = now_us; // nothing was in flight: the ack timer starts now
        }
        self->st.resent += m->sent_us > 0;
        if (s->ending && m->seq == s->end_seq && s->ended_us == 0) {
            s->ended_us = now_us;
        }
        m->sent_us = m->sent_us > 0 ? m->sent_us : now_us;
        s->next_send_seq++;
        s->last_tx_us = now_us;
        self->st.in_flight_total++;
        int64_t in_flight = s->next_send_seq - 1 - s->acked_seq;
        self->st.in_flight_max =
            in_flight > self->st.in_flight_max ? in_flight : self->st.in_flight_max;
    }
    if (self->st.in_flight_total > self->st.in_flight_total_max) {
        self->st.in_flight_total_max = self->st.in_flight_total;
    }
}

static void s_tick_session(lg_t *self, lg_session_t *s, int64_t now_us, int64_t period_us,
                           bool producing)
{
    if (!s->welcomed && now_us >= s->hello_next_us) {
        s_hello(self, s, now_us);
    }
    // As the agent: a heartbeat only after a heartbeat interval without sending anything.
    if (s->welcomed && now_us - s->last_tx_us >= s->heartbeat_us) {
        (void) s_send(self, s,
                      jf_msg_heartbeat_new(self->next_id++, s->running ? s->ref.run : NULL));
    }
    // A run's samples are taken at the rate whether or not the coordinator is there, as on
    // an agent: they wait unacknowledged until it is.
    while (producing && s->running && !s->ending && now_us >= s->next_sample_us) {
        s_produce(self, s, now_us);
        s->next_sample_us += period_us;
    }
    if (producing && s->running && !s->ending && self->o.run_us > 0 &&
        now_us - s->run_started_us >= s->run_len_us) {
        s_end_run(self, s, now_us);
    }
    if (s->welcomed && s->running) {
        s_pump(self, s, now_us);
    }
}

static int s_open_sessions(lg_t *self)
{
    self->s = calloc((size_t) self->o.sessions, sizeof *self->s);
    self->items = calloc((size_t) self->o.sessions, sizeof *self->items);
    if (!self->s || !self->items) {
        return -ENOMEM;
    }
    for (int i = 0; i < self->o.sessions; i++) {
        lg_session_t *s = &self->s[i];
        (void) snprintf(s->name, sizeof s->name, "%s%04d", self->o.prefix, i + 1);
        s->batch = json_array();
        s->sock = zsock_new(ZMQ_DEALER);
        if (!s->sock || !s->batch) {
            fprintf(stderr, "jf-loadgen: cannot create session %d (raise the open-file limit)\n",
                    i + 1);
            return -EMFILE;
        }
        // No routing id, as the agent (docs/protocol.md §1.3): the hello names the board.
        zsock_set_linger(s->sock, 0);
        zsock_set_sndhwm(s->sock, 0); // the coordinator's behaviour is measured, not ours
        zsock_set_rcvhwm(s->sock, 0);
        // As the agent (agent/session/agent_session.c, docs/protocol.md §1.5): while there is
        // no connection sends fail instead of queueing for the next coordinator, and
        // reconnects back off from 1 s. --queue-away keeps libzmq's defaults instead: what is
        // sent while no coordinator is there waits in the session's queue and reaches the next
        // coordinator all at once.
        if (!self->o.queue_away) {
            zsock_set_immediate(s->sock, 1);
            zsock_set_reconnect_ivl(s->sock, 1000);
            zsock_set_reconnect_ivl_max(s->sock, 30000);
        }
        if (zsock_connect(s->sock, "%s", self->o.endpoint) != 0) {
            fprintf(stderr, "jf-loadgen: cannot connect to '%s'\n", self->o.endpoint);
            return -EINVAL;
        }
        self->items[i] = (zmq_pollitem_t){.socket = zsock_resolve(s->sock), .events = ZMQ_POLLIN};
    }
    return 0;
}

static void s_receive(lg_t *self)
{
    if (zmq_poll(self->items, self->o.sessions, 10) <= 0) {
        return;
    }
    for (int i = 0; i < self->o.sessions; i++) {
        for (int n = 0; n < 64 && (self->items[i].revents & ZMQ_POLLIN); n++) {
            zmq_msg_t m;
            zmq_msg_init(&m);
            if (zmq_msg_recv(&m, self->items[i].socket, ZMQ_DONTWAIT) < 0) {
                zmq_msg_close(&m);
                break;
            }
            // Each message's own time: the loop's may be up to a poll and a pass over all
            // sessions old.
            s_on_msg(self, &self->s[i], zmq_msg_data(&m), zmq_msg_size(&m), jf_clock_mono_us());
            zmq_msg_close(&m);
        }
    }
}

static void s_report(lg_t *self, int64_t elapsed_us)
{
    int64_t welcomed = 0, running = 0, unacked = 0;
    for (int i = 0; i < self->o.sessions; i++) {
        welcomed += self->s[i].welcomed;
        running += self->s[i].running;
        for (size_t k = 0; k < self->s[i].n_unacked; k++) {
            unacked += self->s[i].unacked[k].n_samples;
        }
        unacked += (int64_t) json_array_size(self->s[i].batch);
    }
    double secs = (double) elapsed_us / JF_US_PER_S;
    printf("sessions=%d welcomed=%lld running=%lld seconds=%.1f samples=%lld acked_samples=%lld "
           "unacked_samples=%lld samples_per_s=%.0f hellos=%lld welcomes=%lld not_registered=%lld "
           "assigns=%lld resent_messages=%lld\n",
           self->o.sessions, (long long) welcomed, (long long) running, secs,
           (long long) self->st.samples, (long long) self->st.acked_samples, (long long) unacked,
           secs > 0 ? (double) self->st.acked_samples / secs : 0.0, (long long) self->st.hellos,
           (long long) self->st.welcomes, (long long) self->st.not_registered,
           (long long) self->st.assigns, (long long) self->st.resent);
    printf("dropped_samples=%lld msg_bytes_max=%zu\n", (long long) self->st.dropped_samples,
           self->st.msg_bytes_max);
    printf("credit_min=%lld credit_max=%lld in_flight_max=%lld in_flight_total_max=%lld\n",
           (long long) self->st.credit_min, (long long) self->st.credit_max,
           (long long) self->st.in_flight_max, (long long) self->st.in_flight_total_max);
    printf("dispatch_n=%zu dispatch_p50_ms=%.1f dispatch_p99_ms=%.1f ack_n=%zu ack_p50_ms=%.1f "
           "ack_p99_ms=%.1f\n",
           self->st.dispatch.n, s_lat_quantile_ms(&self->st.dispatch, 0.50),
           s_lat_quantile_ms(&self->st.dispatch, 0.99), self->st.ack.n,
           s_lat_quantile_ms(&self->st.ack, 0.50), s_lat_quantile_ms(&self->st.ack, 0.99));
    printf("runs_ended=%lld redispatch_n=%zu redispatch_p50_ms=%.1f redispatch_p99_ms=%.1f "
           "redispatch_max_ms=%.1f\n",
           (long long) self->st.runs_ended, self->st.redispatch.n,
           s_lat_quantile_ms(&self->st.redispatch, 0.50),
           s_lat_quantile_ms(&self->st.redispatch, 0.99),
           s_lat_quantile_ms(&self->st.redispatch, 1.0));
    fflush(stdout);
}

// SIGUSR1 marks the coordinator's restart: from then on each session counts its hellos and
// whether it has been welcomed again.
static void s_mark_restart(lg_t *self, int64_t now_us)
{
    self->st.mark_us = now_us;
    self->st.rewelcomed = 0;
    self->st.mark_reported = false;
    self->st.kicked_hellos = 0;
    self->st.welcome_wait_max_us = 0;
    for (int i = 0; i < self->o.sessions; i++) {
        self->s[i].rewelcomed = false;
        self->s[i].hellos_since_mark = 0;
        self->s[i].mark_hello_us = 0;
    }
}

// Once every session is back (or at the end): how long it took and how many hellos it cost.
static void s_report_reregister(lg_t *self, int64_t now_us)
{
    int64_t hellos = 0, max = 0;
    for (int i = 0; i < self->o.sessions; i++) {
        hellos += self->s[i].hellos_since_mark;
        max = self->s[i].hellos_since_mark > max ? self->s[i].hellos_since_mark : max;
    }
    bool all = self->st.rewelcomed == self->o.sessions;
    printf("reregistered=%lld/%d reregister_s=%.2f hellos=%lld hellos_per_board=%.2f "
           "hellos_per_board_max=%lld kicked_hellos=%lld welcome_wait_max_s=%.2f\n",
           (long long) self->st.rewelcomed, self->o.sessions,
           all ? (double) (self->st.last_welcome_us - self->st.mark_us) / JF_US_PER_S
               : (double) (now_us - self->st.mark_us) / JF_US_PER_S,
           (long long) hellos, (double) hellos / self->o.sessions, (long long) max,
           (long long) self->st.kicked_hellos,
           (double) self->st.welcome_wait_max_us / JF_US_PER_S);
    fflush(stdout);
    self->st.mark_reported = true;
}

static bool s_all_acked(const lg_t *self)
{
    for (int i = 0; i < self->o.sessions; i++) {
        if (self->s[i].n_unacked > 0 || json_array_size(self->s[i].batch) > 0) {
            return false;
        }
    }
    return true;
}

// The end of the run: the last partial batches go out, then the acks are awaited (bounded).
static void s_drain(lg_t *self, int64_t period_us)
{
    int64_t now = jf_clock_mono_us(), until = now + LG_DRAIN_US;
    for (int i = 0; i < self->o.sessions; i++) {
        if (json_array_size(self->s[i].batch) > 0) {
            s_flush_batch(self, &self->s[i], now);
        }
    }
    while (!s_stop && now < until && !s_all_acked(self)) {
        s_receive(self);
        for (int i = 0; i < self->o.sessions; i++) {
            lg_session_t *s = &self->s[i];
            s_tick_session(self, s, now, period_us, false);
        }
        now = jf_clock_mono_us();
    }
}

static int s_run(lg_t *self)
{
    int64_t start = jf_clock_mono_us(), next_report = start + 10 * JF_US_PER_S;
    int64_t period_us = JF_US_PER_S / self->o.hz;
    while (!s_stop && jf_clock_mono_us() - start < self->o.duration_us) {
        int64_t now = jf_clock_mono_us();
        if (s_mark) {
            s_mark = 0;
            s_mark_restart(self, now);
        }
        s_receive(self);
        for (int i = 0; i < self->o.sessions; i++) {
            s_tick_session(self, &self->s[i], now, period_us, true);
        }
        if (self->st.mark_us > 0 && !self->st.mark_reported &&
            self->st.rewelcomed == self->o.sessions) {
            s_report_reregister(self, now);
        }
        if (now >= next_report) {
            s_report(self, now - start);
            next_report = now + 10 * JF_US_PER_S;
        }
    }
    int64_t produced_us = jf_clock_mono_us() - start;
    if (self->st.mark_us > 0 && !self->st.mark_reported) {
        s_report_reregister(self, jf_clock_mono_us());
    }
    s_drain(self, period_us);
    s_report(self, produced_us);
    return 0;
}

static void s_destroy(lg_t *self)
{
    for (int i = 0; self->s && i < self->o.sessions; i++) {
        zsock_destroy(&self->s[i].sock);
        json_decref(self->s[i].batch);
        for (size_t k = 0; k < self->s[i].n_unacked; k++) {
            free(self->s[i].unacked[k].text);
        }
        free(self->s[i].unacked);
    }
    free(self->s);
    free(self->items);
    free(self->st.dispatch.v);
    free(self->st.ack.v);
    free(self->st.redispatch.v);
    json_decref(self->sample);
}

static int s_usage(void)
{
    fprintf(stderr, "usage: jf-loadgen --endpoint ENDPOINT --sessions N --sample FILE\n"
                    "         [--prefix NAME] [--type TYPE] [--hz N] [--seconds S] [--seed N]\n"
                    "         [--batch-ms MS] [--no-credit] [--queue-away] [--run-seconds S]\n"
                    "         [--run-spread PCT]\n");
    return 2;
}

static int s_parse(int argc, char **argv, lg_opts_t *o)
{
    static const struct option longs[] = {
        {"endpoint", required_argument, NULL, 'e'},   {"sessions", required_argument, NULL, 'n'},
        {"sample", required_argument, NULL, 's'},     {"prefix", required_argument, NULL, 'p'},
        {"type", required_argument, NULL, 't'},       {"hz", required_argument, NULL, 'z'},
        {"seconds", required_argument, NULL, 'd'},    {"seed", required_argument, NULL, 'r'},
        {"no-credit", no_argument, NULL, 'c'},        {"batch-ms", required_argument, NULL, 'b'},
        {"queue-away", no_argument, NULL, 'q'},       {"run-seconds", required_argument, NULL, 'u'},
        {"run-spread", required_argument, NULL, 'j'}, {NULL, 0, NULL, 0}};
    *o = (lg_opts_t){.prefix = "lg-",
                     .type = "agx-xavier",
                     .sessions = 0,
                     .hz = 10,
                     .duration_us = 60 * JF_US_PER_S,
                     .seed = 1,
                     .batch_us = LG_BATCH_US};
    int c = 0;
    int64_t v = 0;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        if (c == 'e' || c == 's' || c == 'p' || c == 't') {
            *(c == 'e'   ? &o->endpoint
              : c == 's' ? &o->sample
              : c == 'p' ? &o->prefix
                         : &o->type) = optarg;
        } else if (c == 'n' && jf_parse_i64(optarg, 1, LG_SESSIONS_MAX, &v, NULL) == 0) {
            o->sessions = (int) v;
        } else if (c == 'z' && jf_parse_i64(optarg, 1, 50, &v, NULL) == 0) {
            o->hz = (int) v;
        } else if (c == 'd' && jf_parse_i64(optarg, 1, 7 * 24 * 3600, &v, NULL) == 0) {
            o->duration_us = v * JF_US_PER_S;
        } else if (c == 'r' && jf_parse_i64(optarg, 0, INT64_MAX, &v, NULL) == 0) {
            o->seed = (uint64_t) v;
        } else if (c == 'c' || c == 'q') {
            *(c == 'c' ? &o->no_credit : &o->queue_away) = true;
        } else if (c == 'b' && jf_parse_i64(optarg, 10, 10000, &v, NULL) == 0) {
            o->batch_us = v * JF_US_PER_MS;
        } else if (c == 'u' && jf_parse_i64(optarg, 1, 7 * 24 * 3600, &v, NULL) == 0) {
            o->run_us = v * JF_US_PER_S;
        } else if (c == 'j' && jf_parse_i64(optarg, 0, 1000, &v, NULL) == 0) {
            o->run_spread_pct = (int) v;
        } else {
            return -EINVAL;
        }
    }
    return o->endpoint && o->sample && o->sessions > 0 && optind == argc ? 0 : -EINVAL;
}

// Enough descriptors for every session (a socket, its mailbox and its connection).
static void s_raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void) setrlimit(RLIMIT_NOFILE, &rl); // if it fails, sessions fail to open and say so
    }
}

int main(int argc, char **argv)
{
    lg_t self = {.next_id = 1, .started_us = jf_clock_wall_us()};
    if (s_parse(argc, argv, &self.o) != 0) {
        return s_usage();
    }
    json_error_t jerr = {0};
    self.sample = json_load_file(self.o.sample, 0, &jerr);
    if (!json_is_object(self.sample) || !jf_board_type_parse(self.o.type, &self.type)) {
        fprintf(stderr, "jf-loadgen: %s: not one JSON sample object (%s), or unknown type '%s'\n",
                self.o.sample, jerr.text, self.o.type);
        json_decref(self.sample);
        return 1;
    }
    jf_rng_seed(&self.rng, self.o.seed, 0);
    s_raise_nofile();
    zsys_set_max_sockets(0); // as many as the open-file limit allows
    zsys_handler_set(NULL);
    signal(SIGINT, s_on_signal);
    signal(SIGTERM, s_on_signal);
    signal(SIGUSR1, s_on_signal);
    int rc = s_open_sessions(&self);
    rc = rc ? rc : s_run(&self);
    s_destroy(&self);
    return rc ? 1 : 0;
}
