/* Coordinator event loop: sockets, one store transaction per tick, replies after commit. */
#include "coord_server_internal.h"
#include "coord_store_blobs.h"
#include "coord_store_ident.h"

#include "jf_fs.h"
#include "jf_msg_session.h"
#include "jf_units.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int64_t coord_server_next_id(coord_server_t *self)
{
    return self->next_id++;
}

int coord_server_queue(coord_server_t *self, bool control, const zframe_t *identity,
                       json_t *msg)
{
    size_t len = 0;
    char *payload = msg ? jf_msg_encode(msg, &len) : NULL;
    json_decref(msg);
    if (!payload) {
        return -ENOMEM;
    }
    if (self->n_out == self->cap_out) {
        size_t cap = self->cap_out ? 2 * self->cap_out : 64;
        coord_outmsg_t *grown = realloc(self->out, cap * sizeof *grown);
        if (!grown) {
            free(payload);
            return -ENOMEM;
        }
        self->out = grown;
        self->cap_out = cap;
    }
    self->out[self->n_out++] = (coord_outmsg_t){
        .control = control, .identity = zframe_dup((zframe_t *) identity), .payload = payload,
        .len = len};
    return 0;
}

static void s_count_drop(coord_server_t *self, int errnum);

int coord_server_queue_board(coord_server_t *self, coord_board_t *board, json_t *msg)
{
    if (board->route_len == 0) { // no connection of it was ever welcomed: nowhere to send
        json_decref(msg);
        s_count_drop(self, EHOSTUNREACH);
        return 0;
    }
    zframe_t *id = zframe_new(board->route, board->route_len);
    int rc = id ? coord_server_queue(self, false, id, msg) : -ENOMEM;
    if (!id) {
        json_decref(msg);
    }
    zframe_destroy(&id);
    board->last_tx_mono_us = jf_clock_mono_us();
    return rc;
}

static void s_outbox_clear(coord_server_t *self)
{
    for (size_t i = 0; i < self->n_out; i++) {
        zframe_destroy(&self->out[i].identity);
        free(self->out[i].payload);
    }
    self->n_out = 0;
}

static const char *const s_drop_names[COORD_DROP_COUNT] = {
    [COORD_DROP_PEER_FULL] = "peer_full",
    [COORD_DROP_PEER_GONE] = "peer_gone",
    [COORD_DROP_OTHER] = "other",
};

const char *coord_server_drop_name(coord_server_drop_t why)
{
    return why < COORD_DROP_COUNT ? s_drop_names[why] : "?";
}

// Why a reply could not go out: the counters that `status` shows under send_drops.
static coord_server_drop_t s_drop_reason(int errnum)
{
    switch (errnum) {
    case EAGAIN:
        return COORD_DROP_PEER_FULL;
    case EHOSTUNREACH:
        return COORD_DROP_PEER_GONE;
    default:
        return COORD_DROP_OTHER;
    }
}

static void s_count_drop(coord_server_t *self, int errnum)
{
    coord_server_drop_t why = s_drop_reason(errnum);
    self->drops[why]++;
    uint64_t n = 0;
    if (jf_log_ratelimit_allow(&self->rl_send, &n)) {
        // Every reply is either resent by its sender or re-derived by us (acks by the agent's
        // spool, welcomes by its hello retry, run.assign by our own resend), so a dropped
        // reply costs a retry, while a blocking send would stop the whole loop.
        jf_log_warn("server: reply dropped: %s (%s); %llu more suppressed; totals: %llu "
                    "peer_full, %llu peer_gone, %llu other; the sender retries",
                    coord_server_drop_name(why), strerror(errnum), (unsigned long long) n,
                    (unsigned long long) self->drops[COORD_DROP_PEER_FULL],
                    (unsigned long long) self->drops[COORD_DROP_PEER_GONE],
                    (unsigned long long) self->drops[COORD_DROP_OTHER]);
    }
}

// Never blocks (docs/protocol.md §1.5): ROUTER_MANDATORY makes a send to a peer whose pipe is
// full fail with EAGAIN instead of waiting for that peer to read, and to a peer that is gone
// with EHOSTUNREACH. Either way the reply is dropped and counted.
static int s_send_one(zsock_t *sock, const coord_outmsg_t *o)
{
    void *h = zsock_resolve(sock);
    if (zmq_send(h, zframe_data(o->identity), zframe_size(o->identity),
                 ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
        return -errno;
    }
    // The routing frame was taken, so the pipe had room: the body goes to the same pipe.
    return zmq_send(h, o->payload, o->len, ZMQ_DONTWAIT) < 0 ? -errno : 0;
}

static void s_outbox_flush(coord_server_t *self)
{
    for (size_t i = 0; i < self->n_out; i++) {
        coord_outmsg_t *o = &self->out[i];
        int rc = o->identity ? s_send_one(o->control ? self->control : self->agents, o) : -ENOMEM;
        if (rc < 0) {
            s_count_drop(self, -rc);
        }
    }
    s_outbox_clear(self);
}

static void s_reply_error(coord_server_t *self, bool control, const zframe_t *identity,
                          int64_t re, const char *code, const char *detail)
{
    json_t *msg = jf_msg_error_new(coord_server_next_id(self), re, code, detail);
    (void) coord_server_queue(self, control, identity, msg); // on ENOMEM the peer gets no reply
}

static void s_log_bad(coord_server_t *self, const zframe_t *identity, const char *reason)
{
    uint64_t n = 0;
    if (jf_log_ratelimit_allow(&self->rl_bad, &n)) {
        char who[JF_IDENT_MAX + 1] = {0};
        size_t len = zframe_size((zframe_t *) identity);
        const unsigned char *id = zframe_data((zframe_t *) identity);
        for (size_t i = 0; i < len && i < JF_IDENT_MAX; i++) {
            // Every byte of the routing id shows: "host-1\0x" must not log as 'host-1'.
            who[i] = id[i] >= 0x20 && id[i] < 0x7f ? (char) id[i] : '?';
        }
        char q[256] = {0};
        jf_log_warn("server: invalid message from '%s': %s; answered with error (%llu more "
                    "suppressed)",
                    jf_log_quote(who, q, sizeof q), reason, (unsigned long long) n);
    }
}

// A board's message that did not decode is a violation of its limits (docs/protocol.md §1.9),
// after its error reply: an honest agent never sends one. Except bad_version: an agent newer than
// this coordinator sends those until one of the two is changed, and must not be quarantined.
static void s_count_invalid(coord_server_t *self, coord_board_t *board, const char *code)
{
    if (code && strcmp(code, JF_MSG_E_BAD_VERSION) == 0) {
        return;
    }
    if (board) {
        coord_server_limits_refused(self, board, COORD_LIMITS_INVALID);
    }
}

// Who sent a message on the agent socket (docs/protocol.md §1.3, §1.7): the board whose route
// the routing id is and, with authentication, the board of the connection's key, which must be
// the same board when both are known. False when the message is refused (counted): no accepted
// key, or a key speaking on another board's route.
static bool s_sender(coord_server_t *self, const zframe_t *identity, zframe_t *frame,
                     coord_sender_t *out)
{
    *out = (coord_sender_t){0};
    if (self->auth) {
        out->key_board = frame ? coord_auth_board(self->auth, frame) : NULL;
        if (!out->key_board) {
            return false;
        }
        out->key = zframe_meta(frame, "User-Id");
    }
    out->route_board =
        identity ? coord_registry_board_by_route(self->registry, zframe_data((zframe_t *) identity),
                                                 zframe_size((zframe_t *) identity))
                 : NULL;
    if (out->key_board && out->route_board &&
        strcmp(out->route_board->spec->name, out->key_board) != 0) {
        // With ROUTER_HANDOVER off no connection can take a route it did not register: the check
        // is what makes that a rule here, not just libzmq's behaviour.
        coord_auth_refuse_as(self->auth, out->key, out->key_board, out->route_board->spec->name);
        return false;
    }
    out->board = out->route_board ? out->route_board
                 : out->key_board ? coord_registry_board(self->registry, out->key_board)
                                  : NULL;
    return true;
}

// Handles one message of sock whose routing id was popped (identity, owned by the caller), sent
// by sender (agent socket; NULL on the control socket): one frame, decoded, the per-board limits
// on its contents, then the handler. Returns 0, or a negative errno if a handler hit a store
// failure.
static int s_handle(coord_server_t *self, bool control, zframe_t *identity,
                    const coord_sender_t *sender, zmsg_t *m, jf_err_t *err)
{
    coord_board_t *board = control || !sender ? NULL : sender->board;
    if (!identity || zmsg_size(m) != 1) {
        if (identity) {
            s_log_bad(self, identity, "expected exactly one frame");
            s_reply_error(self, control, identity, -1, JF_MSG_E_BAD_FRAMES,
                          "a message is exactly one frame holding a JSON object");
            s_count_invalid(self, board, JF_MSG_E_BAD_FRAMES);
        }
        return 0;
    }
    zframe_t *body = zmsg_first(m);
    jf_msg_t msg = {0};
    const char *code = NULL;
    int64_t id = -1;
    jf_err_t derr = {0};
    unsigned dir = control ? JF_MSG_TO_CTL : JF_MSG_TO_COORD;
    if (jf_msg_decode(zframe_data(body), zframe_size(body), dir, JF_MSG_MAX_BYTES_COORD, &msg,
                      &code, &id, &derr) != 0) {
        s_log_bad(self, identity, derr.msg);
        s_reply_error(self, control, identity, id, code, derr.msg);
        s_count_invalid(self, board, code);
        return 0;
    }
    bool handle = control || coord_server_limits_check(self, board, &msg, zframe_size(body));
    int hrc = !handle   ? 0
              : control ? coord_server_on_ctl_msg(self, identity, &msg, err)
                        : coord_server_on_agent_msg(self, identity, sender, &msg, err);
    jf_msg_fini(&msg);
    return hrc < 0 ? hrc : 0;
}

// Reads one message of sock. Not zsock_events(sock) first: ZMQ_EVENTS on a ROUTER with
// ROUTER_MANDATORY checks every peer's send pipe for room (router_t::xhas_out), so asking before
// each message cost O(peers) per message (15.5 % of the loop's time in std::_Rb_tree_increment at
// 2,000 sessions). The socket's receive timeout is 0 (s_bind_router): nothing waiting is a NULL
// at once. On the agent socket authentication comes before anything else, a reply included
// (docs/protocol.md §1.7), then the per-board limits, before any decoding work (§1.9); a message
// either drops is consumed and *ret_m stays NULL. Returns 0 when nothing waited, else 1, with
// *ret_m the message (routing id first; caller owns) or NULL.
static int s_read_one(coord_server_t *self, zsock_t *sock, bool control, zmsg_t **ret_m)
{
    *ret_m = NULL;
    zmsg_t *m = zmsg_recv(sock);
    if (!m) {
        return 0;
    }
    zframe_t *identity = zmsg_pop(m);
    coord_sender_t sender = {0};
    bool keep = control || (s_sender(self, identity, zmsg_first(m), &sender) &&
                            coord_server_limits_admit(self, sender.board, m));
    if (keep && identity && zmsg_prepend(m, &identity) == 0) {
        *ret_m = m;
        return 1;
    }
    if (keep) { // no routing id (or no memory): answered as a bad message would be, if it can
        (void) s_handle(self, control, identity, control ? NULL : &sender, m, NULL);
    }
    zframe_destroy(&identity);
    zmsg_destroy(&m);
    return 1;
}

// Handles one read message (its routing id first; taken over), read at read_us (0: unknown).
// 0 or a negative errno.
static int s_handle_msg(coord_server_t *self, bool control, zmsg_t **m_p, int64_t read_us,
                        jf_err_t *err)
{
    self->handling_read_us = read_us;
    zmsg_t *m = *m_p;
    zframe_t *identity = zmsg_pop(m);
    int rc = 0;
    // Who sent it, again: a key revoked after the message was read is not handled
    // (docs/protocol.md §1.7), and a hello handled since may have moved a route.
    coord_sender_t sender = {0};
    if (control || s_sender(self, identity, zmsg_first(m), &sender)) {
        rc = s_handle(self, control, identity, control ? NULL : &sender, m, err);
    }
    zframe_destroy(&identity);
    zmsg_destroy(m_p);
    self->handling_read_us = 0;
    return rc;
}

// Takes what waits on the control socket, at most COORD_DRAIN_MAX messages and
// COORD_DRAIN_BUDGET_US of handling, each handled as it is read.
static int s_drain_control(coord_server_t *self, jf_err_t *err)
{
    int64_t start_us = jf_clock_mono_us();
    for (int i = 0; i < COORD_DRAIN_MAX; i++) {
        if (i > 0 && jf_clock_mono_us() - start_us >= COORD_DRAIN_BUDGET_US) {
            break;
        }
        zmsg_t *m = NULL;
        if (s_read_one(self, self->control, true, &m) == 0) {
            return 0;
        }
        int rc = m ? s_handle_msg(self, true, &m, 0, err) : 0;
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

// Whether a message is a stream's bulk (telemetry, run.progress, run.weights), by its "type"
// where the reference encoder writes it, near the start ({"v":1,"type":...}). Anything else, and
// bulk written otherwise, counts as urgent: only the order of handling depends on it.
static bool s_is_bulk(zmsg_t *m)
{
    static const char *const bulk[] = {"\"type\":\"telemetry\"", "\"type\":\"run.progress\"",
                                       "\"type\":\"run.weights\""};
    zframe_t *body = zmsg_first(m) ? zmsg_next(m) : NULL;
    size_t n = body ? zframe_size(body) : 0;
    n = n < 64 ? n : 64;
    for (size_t i = 0; i < sizeof bulk / sizeof bulk[0]; i++) {
        if (n > 0 && memmem(zframe_data(body), n, bulk[i], strlen(bulk[i]))) {
            return true;
        }
    }
    return false;
}

// Reads the agent socket into the pending list: until it is empty, the list full or
// COORD_READ_BUDGET_US spent. Returns true when the socket was found empty.
static bool s_read_agents(coord_server_t *self)
{
    int64_t start_us = jf_clock_mono_us();
    while (self->n_pending < COORD_PENDING_MAX && self->pending_bytes < COORD_PENDING_MAX_BYTES) {
        if ((self->n_pending & 63) == 63 && jf_clock_mono_us() - start_us >= COORD_READ_BUDGET_US) {
            return false;
        }
        zmsg_t *m = NULL;
        if (s_read_one(self, self->agents, false, &m) == 0) {
            return true;
        }
        if (m) {
            int64_t bytes = (int64_t) zmsg_content_size(m);
            zframe_t *id = zmsg_first(m);
            self->pending[self->n_pending++] =
                (coord_pending_t){.m = m,
                                  .urgent = !s_is_bulk(m),
                                  .read_us = jf_clock_mono_us(),
                                  .peer = coord_pending_peer_key(zframe_data(id), zframe_size(id)),
                                  .bytes = bytes};
            self->pending_bytes += bytes;
        }
    }
    return false;
}

// Handles, in the order read, every pending message of each peer that has an urgent one, up to
// its last urgent one: a run's end, a hello, an accept, what dispatch and liveness wait for, so
// never behind the rest of the fleet's telemetry and never ahead of its own peer's earlier
// messages. It stops when the drain has spent COORD_DRAIN_BUDGET_US since start_us. 0 or a
// negative errno.
static int s_urgent_pass(coord_server_t *self, int64_t start_us, jf_err_t *err)
{
    size_t n = 0;
    for (size_t i = 0; i < self->n_pending; i++) {
        if (self->pending[i].m) {
            self->pass.peer[n] = self->pending[i].peer;
            self->pass.urgent[n] = self->pending[i].urgent;
            self->pass.index[n++] = i;
        }
    }
    size_t k = coord_pending_first_pass(self->pass.peer, self->pass.urgent, n, self->pass.order);
    bool all = k == SIZE_MAX; // out of memory: every message, in the order read
    int rc = 0;
    for (size_t j = 0; rc == 0 && j < (all ? n : k); j++) {
        if (jf_clock_mono_us() - start_us >= COORD_DRAIN_BUDGET_US) {
            break; // the rest first in the next tick (a fleet registering at once, say)
        }
        coord_pending_t *p = &self->pending[self->pass.index[all ? j : self->pass.order[j]]];
        rc = s_handle_msg(self, false, &p->m, p->read_us, err);
    }
    return rc;
}

// Handles the pending messages: the urgent pass, then the others in the order read until
// COORD_DRAIN_BUDGET_US of the drain is spent, or COORD_BULK_CUT_US after the urgent pass when
// it left a board to dispatch to (a run's end, a hello): its run.assign leaves with this tick's
// commit instead of behind a full drain of the fleet's telemetry, which still gets that much
// of every tick. Every COORD_REREAD_US meanwhile it reads the socket again, and when that
// brings an urgent message it runs the urgent pass once more and stops, so that the tick's
// dispatch and commit follow at once. What is left waits for the next tick, in order. 0 or a
// negative errno.
static int s_handle_pending(coord_server_t *self, int64_t start_us, jf_err_t *err)
{
    int rc = s_urgent_pass(self, start_us, err);
    int64_t read_us = jf_clock_mono_us();
    int64_t until_us = coord_pending_bulk_until(start_us, COORD_DRAIN_BUDGET_US, read_us,
                                                self->dispatch_needed, COORD_BULK_CUT_US);
    for (size_t i = 0; rc == 0 && i < self->n_pending; i++) {
        if (!self->pending[i].m) {
            continue;
        }
        int64_t now_us = jf_clock_mono_us();
        if (now_us >= until_us) {
            break;
        }
        rc = s_handle_msg(self, false, &self->pending[i].m, self->pending[i].read_us, err);
        if (rc == 0 && now_us - read_us >= COORD_REREAD_US) {
            read_us = now_us;
            size_t before = self->n_pending;
            (void) s_read_agents(self);
            bool urgent = false;
            for (size_t k = before; k < self->n_pending && !urgent; k++) {
                urgent = self->pending[k].urgent;
            }
            if (urgent) {
                rc = s_urgent_pass(self, start_us, err);
                break;
            }
        }
    }
    size_t kept = 0; // what is left, in order, to the front
    self->pending_bytes = 0;
    for (size_t i = 0; i < self->n_pending; i++) {
        if (self->pending[i].m) {
            self->pending_bytes += self->pending[i].bytes;
            self->pending[kept++] = self->pending[i];
        }
    }
    self->n_pending = kept;
    return rc;
}

// The agents' messages of this tick: read first (s_read_agents), then handled
// (s_handle_pending), so that a run's end or a hello is handled in the tick it arrives however
// much telemetry the fleet has queued; the tick's dispatch and commit come after the drain.
static int s_drain_agents(coord_server_t *self, jf_err_t *err)
{
    int64_t start_us = jf_clock_mono_us();
    bool empty = s_read_agents(self);
    int rc = s_handle_pending(self, start_us, err);
    if (rc == 0 && empty && self->n_pending == 0) {
        self->caught_up_mono_us = start_us; // everything that arrived before it is handled
    }
    // Left unhandled, or more waiting: a backlog, which lowers the credit.
    self->drained_full = self->drained_full || !empty || self->n_pending > 0;
    return rc;
}

// Handshakes are answered and key moves picked up before the agents' messages of this tick, so a
// revocation stops the next message already.
static void s_auth_tick(coord_server_t *self)
{
    if (!self->auth) {
        return;
    }
    coord_auth_serve(self->auth);
    jf_err_t aerr = {0};
    if (coord_auth_refresh(self->auth, &aerr) != 0) {
        jf_log_warn("%s", aerr.msg);
    }
    coord_server_limits_sync(self);
}

static int s_tick_body(coord_server_t *self, jf_err_t *err)
{
    s_auth_tick(self);
    int rc = s_drain_agents(self, err);
    rc = rc ? rc : s_drain_control(self, err);
    if (rc == 0 && jf_clock_mono_us() >= self->next_liveness_us) {
        self->next_liveness_us = jf_clock_mono_us() + 200 * JF_US_PER_MS;
        rc = coord_server_liveness(self, err);
    }
    rc = rc ? rc : coord_server_housekeep(self, err);
    if (rc == 0 && self->dispatch_needed) {
        self->dispatch_needed = false;
        rc = coord_server_dispatch(self, err);
    }
    return rc;
}

// This tick's run.assign messages to boards whose run had ended have left: their latencies.
static void s_redispatch_record(coord_server_t *self, int64_t sent_us)
{
    for (size_t i = 0; i < self->n_redispatched; i++) {
        self->redispatch_us[self->n_redispatch++ % COORD_REDISPATCH_SAMPLES] =
            sent_us - self->redispatched[i];
    }
    self->n_redispatched = 0;
}

static int s_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

// Logs the latencies recorded since the last summary (at most the ring's), by nearest rank.
static void s_redispatch_log(coord_server_t *self, const char *when)
{
    size_t n = self->n_redispatch - self->redispatch_logged;
    n = n < COORD_REDISPATCH_SAMPLES ? n : COORD_REDISPATCH_SAMPLES;
    self->redispatch_logged = self->n_redispatch;
    static int64_t v[COORD_REDISPATCH_SAMPLES];
    for (size_t i = 0; i < n; i++) {
        v[i] = self->redispatch_us[(self->n_redispatch - 1 - i) % COORD_REDISPATCH_SAMPLES];
    }
    if (n == 0) {
        return;
    }
    qsort(v, n, sizeof v[0], s_cmp_i64);
    size_t p50 = (n + 1) / 2 - 1, p99 = (99 * n + 99) / 100 - 1;
    jf_log_notice("server: redispatch n=%zu p50_ms=%.1f p99_ms=%.1f max_ms=%.1f (%s; a run's end "
                  "read to the board's next run.assign sent)",
                  n, (double) v[p50] / 1e3, (double) v[p99] / 1e3, (double) v[n - 1] / 1e3, when);
}

static int s_tick(coord_server_t *self, jf_err_t *err)
{
    // Messages read and not yet handled are work now: no wait for the socket.
    (void) zpoller_wait(self->poller, self->n_pending > 0 ? 0 : COORD_TICK_MS);
    int64_t tick_start_us = jf_clock_mono_us();
    coord_fdguard_tick(self->fdguard, tick_start_us);
    int rc = coord_store_begin(self->store, err);
    rc = rc ? rc : s_tick_body(self, err);
    rc = rc ? rc : coord_store_commit(self->store, err);
    if (rc != 0) {
        // Nothing of this tick is acknowledged: agents resend what they did not see acked.
        coord_store_rollback(self->store);
        s_outbox_clear(self);
        self->n_redispatched = 0; // their run.assign messages did not leave
        self->dispatch_needed = true;
        jf_log_error("server: store transaction failed, nothing acknowledged this tick: %s",
                     err ? err->msg : "?");
        return rc;
    }
    int64_t now_us = jf_clock_mono_us();
    coord_server_credit_tick(self, now_us - tick_start_us, now_us);
    s_outbox_flush(self);
    s_redispatch_record(self, jf_clock_mono_us());
    return 0;
}

// The identity file's counts follow the store, so that a lost store is reported with what it
// held. Between ticks: the counts read committed data.
static void s_save_ident(coord_server_t *self, bool now)
{
    if (!now && jf_clock_mono_us() < self->next_ident_save_us) {
        return;
    }
    self->next_ident_save_us = jf_clock_mono_us() + COORD_IDENT_SAVE_US;
    jf_err_t err = {0};
    if (coord_store_ident_save(self->store, self->fleet->coord.data_dir, &err) != 0) {
        jf_log_warn("server: %s; trying again in %d s", err.msg,
                    (int)(COORD_IDENT_SAVE_US / JF_US_PER_S));
    }
}

int coord_server_run(coord_server_t *self, volatile sig_atomic_t *stop, jf_err_t *err)
{
    int failures = 0;
    self->start_mono_us = jf_clock_mono_us();
    self->caught_up_mono_us = self->start_mono_us;
    self->next_ident_save_us = self->start_mono_us + COORD_IDENT_SAVE_US;
    self->next_redispatch_log_us = self->start_mono_us + COORD_REDISPATCH_LOG_US;
    self->dispatch_needed = true;
    jf_log_notice("server: running; %zu boards in the fleet", coord_registry_size(self->registry));
    while (!*stop) {
        jf_err_t terr = {0};
        if (s_tick(self, &terr) != 0) {
            failures++;
            if (failures >= 100) {
                return jf_err_set(err, terr.code, "store keeps failing: %s", terr.msg);
            }
            continue;
        }
        failures = 0;
        s_save_ident(self, false);
        if (jf_clock_mono_us() >= self->next_redispatch_log_us) {
            self->next_redispatch_log_us = jf_clock_mono_us() + COORD_REDISPATCH_LOG_US;
            s_redispatch_log(self, "the last minute");
        }
    }
    s_save_ident(self, true);
    s_redispatch_log(self, "since the last summary, at exit");
    jf_log_notice("server: stopping");
    return 0;
}

static int s_make_data_dir(const char *dir, jf_err_t *err)
{
    int rc = jf_fs_mkdir_p(dir, 0700, err);
    if (rc < 0) {
        jf_err_prefix(err, "cannot create the data directory");
    }
    return rc;
}

// One coordinator per data directory: two writers on one store would both hand out runs.
static int s_lock_data_dir(const char *dir, int *ret_fd, jf_err_t *err)
{
    char path[PATH_MAX + 32] = {0};
    (void) snprintf(path, sizeof path, "%s/coordinator.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        return jf_err_set(err, -errno, "%s: %s", path, strerror(errno));
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return jf_err_set(err, -EBUSY, "%s: another coordinator is using this data directory",
                          dir);
    }
    *ret_fd = fd;
    return 0;
}

static int s_write_endpoint(const char *dir, const char *endpoint, jf_err_t *err)
{
    char tmp[PATH_MAX + 32] = {0}, path[PATH_MAX + 32] = {0};
    (void) snprintf(tmp, sizeof tmp, "%s/endpoint.tmp", dir);
    (void) snprintf(path, sizeof path, "%s/endpoint", dir);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        return jf_err_set(err, -errno, "%s: %s", tmp, strerror(errno));
    }
    int bad = fprintf(f, "%s\n", endpoint) < 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        return jf_err_set(err, -EIO, "%s: cannot write the endpoint file", path);
    }
    return 0;
}

// Heartbeats of libzmq's own (ZMTP) on the control socket, ms (docs/protocol.md §1.5).
static void s_set_zmtp_heartbeats(zsock_t *s)
{
    zsock_set_heartbeat_ivl(s, 2000);
    zsock_set_heartbeat_timeout(s, 6000);
    zsock_set_heartbeat_ttl(s, 6000);
}

// agent: the agent endpoint (COORD_AGENT_RCVHWM per connection, no ROUTER_HANDOVER); else the
// control endpoint (libzmq's default mark, 1000, and ZMTP heartbeats).
static zsock_t *s_bind_router(const char *endpoint, int64_t handshake_us, bool agent,
                              const coord_auth_t *auth, jf_err_t *err)
{
    int rcvhwm = agent ? COORD_AGENT_RCVHWM : 0;
    zsock_t *s = zsock_new(ZMQ_ROUTER);
    if (!s) {
        jf_err_set(err, -ENOMEM, "cannot create a socket");
        return NULL;
    }
    if (auth) {
        coord_auth_apply(auth, s);
    }
    zsock_set_router_mandatory(s, 1);
    // Agent endpoint: no connection takes over another's routing id, whoever it is; a board's
    // new connection takes over its route by a welcomed hello instead (docs/protocol.md §1.3).
    // Control endpoint: a CLI sets no routing id, and a takeover changes nothing.
    zsock_set_router_handover(s, agent ? 0 : 1);
    zsock_set_sndtimeo(s, 0); // no send may wait for a peer that does not read
    zsock_set_rcvtimeo(s, 0); // a receive with nothing waiting returns at once (s_receive_one)
    zsock_set_maxmsgsize(s, (int64_t) JF_MSG_MAX_BYTES_COORD * JF_MSG_TRANSPORT_FACTOR);
    zsock_set_backlog(s, COORD_BACKLOG);
    zsock_set_linger(s, 0);
    zsock_set_handshake_ivl(s, (int) (handshake_us / JF_US_PER_MS));
    if (rcvhwm > 0) {
        // Before the bind: a listener hands its options to the connections it accepts. No ZMTP
        // heartbeats with a mark that back-pressure reaches: in libzmq 4.3.4 a connection
        // whose input stopped at the mark and whose peer then closed makes the next heartbeat
        // timer assert (!_io_error, stream_engine_base.cpp:331) and abort the process (seen at
        // 2,000 sessions; libzmq issues #3937, #4767), and while its input is stopped the
        // engine cannot see the peer's PONGs, so the heartbeat timeout would close a healthy
        // but pushed-back connection. Liveness is the application heartbeat's (§4.2).
        zsock_set_rcvhwm(s, rcvhwm);
    } else {
        s_set_zmtp_heartbeats(s);
    }
    if (zsock_bind(s, "%s", endpoint) < 0) {
        jf_err_set(err, -EADDRINUSE, "cannot bind '%s': %s", endpoint, zmq_strerror(zmq_errno()));
        zsock_destroy(&s);
    }
    return s;
}

// Runs the store still has active belong to boards that are offline until they say hello;
// their leases run from now.
static void s_load_active(const coord_run_row_t *row, void *arg)
{
    coord_server_t *self = arg;
    coord_board_t *board = coord_registry_board(self->registry, row->board);
    if (board) {
        coord_board_set_run(board,
                            row->state == COORD_RUN_ASSIGNED ? COORD_BOARD_ASSIGNED
                                                             : COORD_BOARD_RUNNING,
                            row->run, row->attempt);
    }
}

// On PostgreSQL the store's file checks have no object (docs/store.md §10): said once here.
static void s_note_postgres(const coord_server_t *self)
{
    if (!coord_store_is_postgres(self->store)) {
        return;
    }
    jf_log_notice("store: PostgreSQL store: no quick_check at start (it reads a SQLite file; check "
                  "the server with amcheck/pg_amcheck), and back it up with pg_dump");
    if (self->fleet->coord.min_free_bytes > 0) {
        jf_log_warn("store: min_free_space is not applied to a PostgreSQL store (its disk is the "
                    "server's, not this machine's); new runs are started whatever the free space");
    }
}

// The fleet's board names, for the claims of a shared PostgreSQL store (coord_store.h).
static int s_claim_boards(coord_server_t *self, jf_err_t *err)
{
    size_t n = self->fleet->n_boards;
    const char **names = calloc(n ? n : 1, sizeof *names);
    if (!names) {
        return jf_err_set(err, -ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        names[i] = self->fleet->boards[i].name;
    }
    int rc = coord_store_claim_boards(self->store, names, n, err);
    free(names);
    return rc;
}

static int s_open_store(coord_server_t *self, bool new_store, jf_err_t *err)
{
    char note[COORD_IDENT_NOTE_LEN] = {0};
    const jf_coord_settings_t *c = &self->fleet->coord;
    self->store = coord_store_open_owned(c->store_path, c->data_dir, new_store, note, err);
    if (!self->store) {
        return -EIO;
    }
    if (note[0]) {
        jf_log_notice("%s", note);
    }
    s_note_postgres(self);
    int rc = coord_store_begin(self->store, err);
    rc = rc ? rc : coord_store_bump_epoch(self->store, &self->epoch, err);
    rc = rc ? rc : s_claim_boards(self, err);
    int64_t orphans = 0;
    rc = rc ? rc : coord_store_weights_drop_orphans(self->store, &orphans, err);
    if (rc == 0 && orphans > 0) {
        jf_log_notice("store: dropped %lld weight chunk%s of attempts no longer in progress",
                      (long long) orphans, orphans == 1 ? "" : "s");
    }
    rc = rc ? rc : coord_store_event(self->store, "coordinator.start", NULL, NULL, self->epoch,
                                     NULL, err);
    rc = rc ? rc : coord_store_commit(self->store, err);
    if (rc != 0) {
        coord_store_rollback(self->store);
    }
    return rc ? rc : coord_store_active_runs(self->store, NULL, s_load_active, self, err);
}

static bool s_is_loopback(const char *endpoint)
{
    return strncmp(endpoint, "tcp://127.0.0.1:", 16) == 0 || strncmp(endpoint, "ipc://", 6) == 0;
}

// Either the agent endpoint authenticates, or it is plaintext on this machine only.
static int s_setup_auth(coord_server_t *self, jf_err_t *err)
{
    const jf_coord_settings_t *c = &self->fleet->coord;
    if (!self->insecure_loopback) {
        self->auth = coord_auth_new(c->data_dir, err);
        return self->auth ? 0 : jf_err_prefix(err, "refusing to start without authentication "
                                                   "(--insecure-loopback is for 127.0.0.1 only)");
    }
    const char *bad = !s_is_loopback(c->agent_endpoint)     ? c->agent_endpoint
                      : !s_is_loopback(c->control_endpoint) ? c->control_endpoint
                                                            : NULL;
    if (bad) {
        return jf_err_set(err, -EINVAL, "--insecure-loopback refused: endpoint '%s' is not "
                                        "tcp://127.0.0.1:PORT or ipc://", bad);
    }
    jf_log_warn("server: --insecure-loopback: agents connect without authentication or "
                "encryption on %s", c->agent_endpoint);
    return 0;
}

static int s_bind_all(coord_server_t *self, jf_err_t *err)
{
    const jf_coord_settings_t *c = &self->fleet->coord;
    int arc = s_setup_auth(self, err);
    if (arc != 0) {
        return arc;
    }
    self->agents = s_bind_router(c->agent_endpoint, c->handshake_timeout_us, true, self->auth, err);
    self->control =
        self->agents ? s_bind_router(c->control_endpoint, c->handshake_timeout_us, false, NULL, err)
                     : NULL;
    if (!self->control) {
        return -EADDRINUSE;
    }
    if (strncmp(c->control_endpoint, "ipc://", 6) == 0 &&
        chmod(c->control_endpoint + 6, 0600) != 0) {
        return jf_err_set(err, -errno, "%s: cannot restrict the control socket: %s",
                          c->control_endpoint + 6, strerror(errno));
    }
    self->poller = zpoller_new(self->agents, self->control, NULL);
    if (self->poller && self->auth) {
        (void) zpoller_add(self->poller, coord_auth_zap(self->auth)); // cannot fail once created
    }
    if (!self->poller) {
        return jf_err_set(err, -ENOMEM, "cannot create a poller");
    }
    self->fdguard = coord_fdguard_new(self->agents, COORD_FDGUARD_PROC_ROOT,
                                      self->fleet->n_boards, err);
    if (!self->fdguard) {
        return jf_err_prefix(err, "cannot guard descriptors");
    }
    return s_write_endpoint(c->data_dir, zsock_endpoint(self->agents), err);
}

coord_server_t *coord_server_new(const jf_fleet_config_t *fleet, const coord_server_opts_t *opts,
                                 jf_err_t *err)
{
    coord_server_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "out of memory");
        return NULL;
    }
    self->fleet = fleet;
    self->next_id = 1;
    self->credit = COORD_CREDIT_MAX;
    self->lock_fd = -1;
    self->insecure_loopback = opts->insecure_loopback;
    coord_server_limits_init_anonymous(self);
    self->registry = coord_registry_new(fleet);
    self->pending = calloc(COORD_PENDING_MAX, sizeof *self->pending);
    self->pass.peer = calloc(COORD_PENDING_MAX, sizeof *self->pass.peer);
    self->pass.urgent = calloc(COORD_PENDING_MAX, sizeof *self->pass.urgent);
    self->pass.index = calloc(COORD_PENDING_MAX, sizeof *self->pass.index);
    self->pass.order = calloc(COORD_PENDING_MAX, sizeof *self->pass.order);
    if (!self->registry || !self->pending || !self->pass.peer || !self->pass.urgent ||
        !self->pass.index || !self->pass.order ||
        s_make_data_dir(fleet->coord.data_dir, err) != 0 ||
        s_lock_data_dir(fleet->coord.data_dir, &self->lock_fd, err) != 0 ||
        s_open_store(self, opts->new_store, err) != 0 || s_bind_all(self, err) != 0) {
        goto fail_destroy;
    }
    jf_log_notice("server: epoch %lld, agents on %s, control on %s, store %s",
                  (long long) self->epoch, zsock_endpoint(self->agents),
                  fleet->coord.control_endpoint, coord_store_target(self->store));
    jf_log_notice("server: receive high-water mark %d messages per agent connection (credit %d "
                  "+ %d); read and not yet handled at most %lld bytes",
                  COORD_AGENT_RCVHWM, COORD_CREDIT_MAX, COORD_RCVHWM_SESSION_MSGS,
                  (long long) COORD_PENDING_MAX_BYTES);
    return self;
fail_destroy:
    coord_server_destroy(&self);
    return NULL;
}

void coord_server_destroy(coord_server_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    coord_server_t *self = *self_p;
    s_outbox_clear(self);
    free(self->out);
    for (size_t i = 0; self->pending && i < self->n_pending; i++) {
        zmsg_destroy(&self->pending[i].m);
    }
    free(self->pending);
    free(self->pass.peer);
    free(self->pass.urgent);
    free(self->pass.index);
    free(self->pass.order);
    free(self->blob_data);
    zpoller_destroy(&self->poller);
    coord_fdguard_destroy(&self->fdguard); // before the agents socket it monitors
    zsock_destroy(&self->control);
    zsock_destroy(&self->agents);
    coord_auth_destroy(&self->auth); // after the socket whose handshakes it answers
    coord_store_destroy(&self->store);
    coord_registry_destroy(&self->registry);
    if (self->lock_fd >= 0) {
        close(self->lock_fd); // releases the data-directory lock
    }
    free(self);
    *self_p = NULL;
}
