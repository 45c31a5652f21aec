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

int coord_server_queue_board(coord_server_t *self, coord_board_t *board, json_t *msg)
{
    zframe_t *id = zframe_new(board->spec->name, strlen(board->spec->name));
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
static void s_count_invalid(coord_server_t *self, bool control, const zframe_t *identity,
                            const char *code)
{
    if (control || (code && strcmp(code, JF_MSG_E_BAD_VERSION) == 0)) {
        return;
    }
    coord_board_t *board = coord_registry_board_by_id(
        self->registry, zframe_data((zframe_t *) identity), zframe_size((zframe_t *) identity));
    if (board) {
        coord_server_limits_refused(self, board, COORD_LIMITS_INVALID);
    }
}

// Takes one message from sock if one is waiting. Returns 1 if one was handled, 0 if none was
// waiting, or a negative errno if a handler hit a store failure.
static int s_receive_one(coord_server_t *self, zsock_t *sock, bool control, jf_err_t *err)
{
    // Not zsock_events(sock) first: ZMQ_EVENTS on a ROUTER with ROUTER_MANDATORY checks every
    // peer's send pipe for room (router_t::xhas_out), so asking before each message cost O(peers)
    // per message (15.5 % of the loop's time in std::_Rb_tree_increment at 2,000 sessions). The
    // socket's receive timeout is 0 (s_bind_router): nothing waiting is a NULL at once.
    zmsg_t *m = zmsg_recv(sock);
    if (!m) {
        return 0;
    }
    zframe_t *identity = zmsg_pop(m);
    int rc = 1;
    // Authentication comes before anything else, a reply included (docs/protocol.md §1.7).
    if (!control && self->auth &&
        (!identity || !zmsg_first(m) || !coord_auth_check(self->auth, identity, zmsg_first(m)))) {
        goto out_destroy;
    }
    // Then the per-board limits, before any decoding work (docs/protocol.md §1.9).
    if (!control && !coord_server_limits_admit(self, identity, m)) {
        goto out_destroy;
    }
    if (!identity || zmsg_size(m) != 1) {
        if (identity) {
            s_log_bad(self, identity, "expected exactly one frame");
            s_reply_error(self, control, identity, -1, JF_MSG_E_BAD_FRAMES,
                          "a message is exactly one frame holding a JSON object");
            s_count_invalid(self, control, identity, JF_MSG_E_BAD_FRAMES);
        }
        goto out_destroy;
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
        s_count_invalid(self, control, identity, code);
        goto out_destroy;
    }
    bool handle = control || coord_server_limits_check(self, identity, &msg, zframe_size(body));
    int hrc = !handle  ? 0
              : control ? coord_server_on_ctl_msg(self, identity, &msg, err)
                        : coord_server_on_agent_msg(self, identity, &msg, err);
    rc = hrc < 0 ? hrc : 1;
    jf_msg_fini(&msg);
out_destroy:
    zframe_destroy(&identity);
    zmsg_destroy(&m);
    return rc;
}

// Takes what waits on sock, at most COORD_DRAIN_MAX messages and COORD_DRAIN_BUDGET_US of
// handling: the tick's dispatch and commit come after the drain, so its length is what a board
// whose run has ended waits for its next run.
static int s_drain(coord_server_t *self, zsock_t *sock, bool control, jf_err_t *err)
{
    int64_t start_us = jf_clock_mono_us();
    for (int i = 0; i < COORD_DRAIN_MAX; i++) {
        int64_t now_us = jf_clock_mono_us();
        if (i > 0 && now_us - start_us >= COORD_DRAIN_BUDGET_US) {
            break;
        }
        int rc = s_receive_one(self, sock, control, err);
        if (rc == 0 && !control) {
            self->caught_up_mono_us = now_us; // nothing waited: we are not behind the agents
        }
        if (rc <= 0) {
            return rc;
        }
    }
    // More waits: a backlog, which lowers the credit.
    self->drained_full = self->drained_full || (zsock_events(sock) & ZMQ_POLLIN) != 0;
    return 0;
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
    int rc = s_drain(self, self->agents, false, err);
    rc = rc ? rc : s_drain(self, self->control, true, err);
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

static int s_tick(coord_server_t *self, jf_err_t *err)
{
    (void) zpoller_wait(self->poller, COORD_TICK_MS);
    int64_t tick_start_us = jf_clock_mono_us();
    coord_fdguard_tick(self->fdguard, tick_start_us);
    int rc = coord_store_begin(self->store, err);
    rc = rc ? rc : s_tick_body(self, err);
    rc = rc ? rc : coord_store_commit(self->store, err);
    if (rc != 0) {
        // Nothing of this tick is acknowledged: agents resend what they did not see acked.
        coord_store_rollback(self->store);
        s_outbox_clear(self);
        self->dispatch_needed = true;
        jf_log_error("server: store transaction failed, nothing acknowledged this tick: %s",
                     err ? err->msg : "?");
        return rc;
    }
    int64_t now_us = jf_clock_mono_us();
    coord_server_credit_tick(self, now_us - tick_start_us, now_us);
    s_outbox_flush(self);
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
    }
    s_save_ident(self, true);
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

// rcvhwm: the receive high-water mark per connection, or 0 for libzmq's default (1000) and
// ZMTP heartbeats.
static zsock_t *s_bind_router(const char *endpoint, int64_t handshake_us, int rcvhwm,
                              const coord_auth_t *auth, jf_err_t *err)
{
    zsock_t *s = zsock_new(ZMQ_ROUTER);
    if (!s) {
        jf_err_set(err, -ENOMEM, "cannot create a socket");
        return NULL;
    }
    if (auth) {
        coord_auth_apply(auth, s);
    }
    zsock_set_router_mandatory(s, 1);
    // A board's new connection takes over its routing id from a stale one (docs/protocol.md §1.3).
    zsock_set_router_handover(s, 1);
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
    self->agents = s_bind_router(c->agent_endpoint, c->handshake_timeout_us, COORD_AGENT_RCVHWM,
                                 self->auth, err);
    self->control = self->agents ? s_bind_router(c->control_endpoint, c->handshake_timeout_us, 0,
                                                 NULL, err)
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
    coord_limits_peer_init(&self->anonymous, &fleet->coord.limits, jf_clock_mono_us());
    self->registry = coord_registry_new(fleet);
    if (!self->registry || s_make_data_dir(fleet->coord.data_dir, err) != 0 ||
        s_lock_data_dir(fleet->coord.data_dir, &self->lock_fd, err) != 0 ||
        s_open_store(self, opts->new_store, err) != 0 || s_bind_all(self, err) != 0) {
        goto fail_destroy;
    }
    jf_log_notice("server: epoch %lld, agents on %s, control on %s, store %s",
                  (long long) self->epoch, zsock_endpoint(self->agents),
                  fleet->coord.control_endpoint, coord_store_target(self->store));
    jf_log_notice("server: receive high-water mark %d messages per agent connection (credit %d "
                  "+ %d)",
                  COORD_AGENT_RCVHWM, COORD_CREDIT_MAX, COORD_RCVHWM_SESSION_MSGS);
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
