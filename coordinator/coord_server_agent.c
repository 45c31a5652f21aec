/* Coordinator: messages from agents — registration, heartbeats, accept/reject — and the
 * dispatch table by type (docs/protocol.md §4, §5). Stream messages: coord_server_stream.c. */
#include "coord_server_internal.h"
#include "coord_store_blobs.h"

#include "jf_msg_blob.h"
#include "jf_msg_run.h"
#include "jf_msg_session.h"
#include "jf_units.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

typedef struct s_reconcile {
    coord_server_t *server;
    coord_board_t *board;
    const jf_hello_t *hello;
    int rc;
    jf_err_t *err;
} s_reconcile_t;

static void s_new_session(char *out, size_t size)
{
    uint8_t raw[JF_SESSION_ID_LEN / 2] = {0};
    if (getrandom(raw, sizeof raw, 0) != (ssize_t) sizeof raw) {
        // The session id only has to differ between registrations; the clock does that too.
        uint64_t t = (uint64_t) jf_clock_mono_us();
        memcpy(raw, &t, sizeof raw < sizeof t ? sizeof raw : sizeof t);
    }
    for (size_t i = 0; i < sizeof raw && 2 * i + 2 < size; i++) {
        (void) snprintf(out + 2 * i, 3, "%02x", raw[i]);
    }
}

static bool s_in_inventory(const jf_hello_t *h, const coord_run_row_t *row)
{
    for (size_t i = 0; i < h->n_runs; i++) {
        if (strcmp(h->runs[i].run, row->run) == 0 && h->runs[i].attempt == row->attempt) {
            return true;
        }
    }
    return false;
}

// A run the store has active on this board, seen at registration.
static void s_reconcile_active(const coord_run_row_t *row, void *arg)
{
    s_reconcile_t *r = arg;
    if (r->rc != 0 || s_in_inventory(r->hello, row)) {
        return;
    }
    if (row->state == COORD_RUN_ASSIGNED) {
        // run.assign may not have arrived: send it again now.
        coord_board_set_run(r->board, COORD_BOARD_ASSIGNED, row->run, row->attempt);
        return;
    }
    coord_board_set_run(r->board, COORD_BOARD_RUNNING, row->run, row->attempt);
    r->rc = coord_server_lose_run(r->server, r->board, "the agent restarted without it", r->err);
}

static int s_resume_one(coord_server_t *self, coord_board_t *board, const jf_hello_run_t *hr,
                        jf_welcome_resume_t *wr, jf_err_t *err)
{
    coord_run_row_t row = {0};
    *wr = (jf_welcome_resume_t){.attempt = hr->attempt, .action = JF_RESUME_DROP};
    (void) snprintf(wr->run, sizeof wr->run, "%s", hr->run);
    int rc = coord_store_run_get(self->store, hr->run, &row, err);
    if (rc == -ENOENT || (rc == 0 && strcmp(row.board, board->spec->name) != 0)) {
        return 0; // not ours: the agent drops it
    }
    if (rc != 0) {
        return rc;
    }
    wr->acked_seq = row.attempt == hr->attempt ? row.acked_seq : 0;
    bool active = row.state == COORD_RUN_ASSIGNED || row.state == COORD_RUN_RUNNING;
    if (!active || row.attempt != hr->attempt) {
        return 0;
    }
    wr->action = JF_RESUME_CONTINUE;
    if (row.state == COORD_RUN_ASSIGNED) {
        rc = coord_store_run_start(self->store, row.run, row.attempt, err);
    }
    coord_board_set_run(board, COORD_BOARD_RUNNING, row.run, row.attempt);
    bool cancelled = false;
    rc = rc ? rc : coord_store_run_is_cancelled(self->store, row.run, &cancelled, err);
    if (rc == 0 && cancelled) {
        // Its sweep was cancelled while the agent was away, or by a coordinator that has since
        // restarted: the run continues only until run.cancel reaches it, after the welcome.
        board->cancel_next_mono_us = jf_clock_mono_us();
    }
    return rc;
}

// A repeated hello (again) of a session that is still current re-derives the welcome's resume
// list and the board's run, but is not a second registration: no store update, no event.
static int s_register(coord_server_t *self, coord_board_t *board, const jf_hello_t *h,
                      const jf_msg_t *msg, bool again, jf_welcome_t *w, jf_err_t *err)
{
    int rc = 0;
    if (!again) {
        char *facts = json_dumps(msg->body, JSON_COMPACT | JSON_SORT_KEYS);
        rc = coord_store_board_hello(self->store, h->name, jf_board_type_name(h->board_type),
                                     h->platform, facts, err);
        free(facts);
    }
    coord_board_set_run(board, COORD_BOARD_IDLE, NULL, 0);
    for (size_t i = 0; rc == 0 && i < h->n_runs; i++) {
        rc = s_resume_one(self, board, &h->runs[i], &w->resume[i], err);
    }
    w->n_resume = h->n_runs;
    s_reconcile_t r = {.server = self, .board = board, .hello = h, .err = err};
    rc = rc ? rc : coord_store_active_runs(self->store, h->name, s_reconcile_active, &r, err);
    rc = rc ? rc : r.rc;
    if (rc == 0 && !again) {
        rc = coord_store_event(self->store, "board.online", h->name, NULL, 0, h->platform, err);
    }
    return rc;
}

static const char *s_hello_mismatch(const coord_board_t *board, const jf_hello_t *h)
{
    const jf_board_spec_t *spec = board->spec;
    if (h->board_type != spec->simulates) {
        return "its board type differs from fleet.yaml";
    }
    if ((spec->type == JF_BOARD_SIM) != (strcmp(h->platform, "sim") == 0)) {
        return "fleet.yaml and the agent disagree on whether the board is simulated";
    }
    return NULL;
}

// Sweeps expand over fleet.yaml's modes of the board (its type's NVIDIA defaults unless
// power_modes narrows them), while the agent runs only the modes of its own nvpmodel conf, as its
// hello lists them: say once per hello which ones it will refuse, so that those failures are
// expected.
static void s_note_missing_modes(const coord_board_t *board, const jf_hello_t *h)
{
    const jf_board_spec_t *spec = board->spec;
    char list[256] = "";
    size_t used = 0, missing = 0;
    for (size_t i = 0; i < spec->n_modes; i++) {
        bool found = false;
        for (size_t k = 0; k < h->n_modes && !found; k++) {
            found = h->modes[k].id == spec->modes[i].id &&
                    strcmp(h->modes[k].name, spec->modes[i].name) == 0;
        }
        if (!found && used < sizeof list) {
            int n = snprintf(list + used, sizeof list - used, "%s%d %s", missing ? ", " : "",
                             spec->modes[i].id, spec->modes[i].name);
            used += n > 0 ? (size_t) n : 0;
        }
        missing += !found;
    }
    if (missing) {
        jf_log_notice("registry: board '%s' reports no power mode %s%s that fleet.yaml allows it; "
                    "runs in %s will be refused by the agent as infeasible",
                    spec->name, list, used >= sizeof list ? "..." : "",
                    missing > 1 ? "those modes" : "that mode");
    }
}

// The error code to refuse a hello with, and why; NULL if it is acceptable.
static const char *s_hello_refusal(const coord_board_t *board, const jf_hello_t *h, char *why,
                                   size_t why_size)
{
    if (!board) {
        (void) snprintf(why, why_size, "board '%s' is not in fleet.yaml", h->name);
        return JF_MSG_E_UNKNOWN_BOARD;
    }
    if (s_hello_mismatch(board, h)) {
        (void) snprintf(why, why_size, "board '%s': %s", h->name, s_hello_mismatch(board, h));
        return JF_MSG_E_UNKNOWN_BOARD;
    }
    return NULL;
}

static void s_board_online(coord_board_t *board, const jf_hello_t *h, const char *session)
{
    (void) snprintf(board->session, sizeof board->session, "%s", session);
    board->agent_started_us = h->started_us;
    board->online = true;
    board->offline_since_mono_us = 0;
    coord_clock_init(&board->clock); // a new agent process: its clock may have been stepped
    board->n_modes = h->n_modes;
    memcpy(board->modes, h->modes, sizeof board->modes);
    s_note_missing_modes(board, h);
    jf_log_notice("registry: board '%s' online (%s, %s, session %s)", h->name,
                  jf_board_type_name(h->board_type), h->platform, session);
}

// A hello names the board it registers. With authentication only the board of the connection's
// key may be named: another name is an impersonation, dropped without a reply and counted with
// the key refusals (docs/protocol.md §1.7). Without, the name is taken as said. A hello welcomed
// makes its connection the board's route (§1.3).
static int s_on_hello(coord_server_t *self, const coord_sender_t *sender, const zframe_t *identity,
                      const jf_msg_t *msg, jf_err_t *err)
{
    jf_hello_t h;
    jf_err_t perr = {0};
    if (jf_msg_hello_parse(msg->body, &h, &perr) != 0) {
        // Validated by the decoder already; answer anyway rather than trust that.
        return coord_server_queue(self, false, identity,
                                  jf_msg_error_new(coord_server_next_id(self), msg->id,
                                                   JF_MSG_E_BAD_FIELD, perr.msg));
    }
    if (sender->key_board && strcmp(sender->key_board, h.name) != 0) {
        coord_auth_refuse_as(self->auth, sender->key, sender->key_board, h.name);
        return 0;
    }
    coord_board_t *board = coord_registry_board(self->registry, h.name);
    if (board && board->quarantined) {
        // Without authentication a new connection's hello is the first message known to be the
        // board's: dropped unread like the rest of what it sends (§1.9).
        board->limits.ignored++;
        return 0;
    }
    char why[256] = {0};
    const char *code = s_hello_refusal(board, &h, why, sizeof why);
    if (!code && sender->route_board && sender->route_board != board) {
        // One connection speaks for one board: without CURVE nothing else stops a board's
        // connection from taking another board's name (with CURVE its key would not match).
        (void) snprintf(why, sizeof why,
                        "'name': this connection is board '%s''s; it cannot say "
                        "hello as '%s'",
                        sender->route_board->spec->name, h.name);
        code = JF_MSG_E_BAD_FIELD;
    }
    if (code) {
        jf_log_warn("registry: refused hello: %s", why);
        return coord_server_queue(self, false, identity,
                                  jf_msg_error_new(coord_server_next_id(self), msg->id, code, why));
    }
    if (board->route_len > 0 &&
        !(board->route_len == zframe_size((zframe_t *) identity) &&
          memcmp(board->route, zframe_data((zframe_t *) identity), board->route_len) == 0)) {
        jf_log_info("registry: board '%s' said hello on a new connection; its messages go there "
                    "from now on",
                    h.name);
    }
    if (coord_registry_set_route(self->registry, board, zframe_data((zframe_t *) identity),
                                 zframe_size((zframe_t *) identity)) != 0) {
        jf_log_warn("registry: hello of board '%s' not answered: cannot record its connection "
                    "(out of memory, or a routing id of no byte); its agent says hello again",
                    h.name);
        return 0;
    }
    board->last_rx_mono_us = jf_clock_mono_us(); // a refused hello proves nothing of the board
    jf_welcome_t w = {
        .coordinator_epoch = self->epoch,
        .heartbeat_us = self->fleet->coord.heartbeat_interval_us,
        .heartbeat_timeout_us = self->fleet->coord.heartbeat_timeout_us,
        .telemetry_hz = self->fleet->coord.telemetry_hz,
    };
    // The same agent process saying hello again while its session is current (a retry whose
    // welcome was lost, or a new connection after a pause): answer with the same session.
    bool again = board->online && board->agent_started_us == h.started_us;
    int rc = s_register(self, board, &h, msg, again, &w, err);
    if (rc != 0) {
        return rc;
    }
    if (again) {
        memcpy(w.session, board->session, sizeof w.session);
        jf_log_info("registry: board '%s' said hello again; same session %s", h.name, w.session);
    } else {
        s_new_session(w.session, sizeof w.session);
        s_board_online(board, &h, w.session);
    }
    // An agent that does not list the key gets no credit members (its decoder may be strict).
    board->credit_ok =
        json_object_get(json_object_get(msg->body, "software"), JF_CREDIT_SOFTWARE_KEY) != NULL;
    w.credit = coord_server_credit(self, board);
    self->dispatch_needed = true;
    return coord_server_queue_board(self, board,
                                    jf_msg_welcome_new(coord_server_next_id(self), msg->id, &w));
}

// Warns when the estimate in force is beyond coordinator.clock_offset_warn: the first time, then
// rate-limited with a count, and a notice when the board is back within the bound.
static void s_clock_warn(const coord_server_t *self, coord_board_t *board)
{
    int64_t bound_us = self->fleet->coord.clock_offset_warn_us;
    const coord_clock_sample_t *e = &board->clock_est;
    // One delayed exchange can look like an offset; judge once the min-rtt filter has a choice.
    bool over = board->clock.n >= COORD_CLOCK_WARN_MIN_SAMPLES &&
                (e->offset_us > bound_us || e->offset_us < -bound_us);
    uint64_t n = 0;
    if (over && jf_log_ratelimit_allow(&board->rl_clock, &n)) {
        jf_log_warn("registry: board '%s' clock offset %lld us (rtt %lld us) exceeds "
                    "clock_offset_warn %lld us; its timestamps are not comparable with the "
                    "fleet's; fix its time sync (%llu more estimates over the bound)",
                    board->spec->name, (long long) e->offset_us, (long long) e->rtt_us,
                    (long long) bound_us, (unsigned long long) n);
    } else if (!over && board->clock_warn) {
        jf_log_notice("registry: board '%s' clock offset %lld us is within clock_offset_warn "
                      "again",
                      board->spec->name, (long long) e->offset_us);
    }
    board->clock_warn = over;
}

// An answer to our heartbeat carries t1 and t2 (docs/protocol.md §4.2.1); any other heartbeat
// only proves the agent's loop is alive (last_rx was updated by the caller).
static int s_on_heartbeat(coord_server_t *self, coord_board_t *board, const zframe_t *identity,
                          const jf_msg_t *msg, jf_err_t *err)
{
    (void) identity;
    int64_t t4_us = jf_clock_wall_us();
    jf_heartbeat_t hb = {0};
    if (jf_msg_heartbeat_parse(msg->body, &hb, NULL) != 0 || !hb.has_echo) {
        return 0; // validated by the decoder; an older agent sends no clock members
    }
    coord_clock_stamps_t st = {hb.echo_t_us, hb.recv_t_us, hb.t_us, t4_us};
    coord_clock_sample_t before = board->clock_est;
    bool had = board->clock_known;
    jf_err_t cerr = {0};
    if (coord_board_clock_add(board, &st, &cerr) != 0) {
        jf_log_debug("registry: board '%s': clock sample dropped: %s", board->spec->name, cerr.msg);
        return 0;
    }
    s_clock_warn(self, board);
    if (had && memcmp(&before, &board->clock_est, sizeof before) == 0) {
        return 0; // the estimate in force did not change: nothing to store
    }
    const coord_clock_sample_t *e = &board->clock_est;
    return coord_store_board_set_clock(self->store, board->spec->name, e->offset_us, e->rtt_us,
                                       e->at_us, err);
}

static int s_on_error(coord_server_t *self, coord_board_t *board, const zframe_t *identity,
                      const jf_msg_t *msg, jf_err_t *err)
{
    (void) self;
    (void) identity;
    (void) err;
    char code[JF_IDENT_MAX + 1] = {0}, detail[JF_MSG_TEXT_MAX + 1] = {0};
    (void) jf_msg_error_parse(msg->body, code, sizeof code, detail, sizeof detail, NULL);
    char q[256] = {0};
    jf_log_warn("server: agent '%s' reports an error in our message: %s: %s", board->spec->name,
                code, jf_log_quote(detail, q, sizeof q));
    return 0;
}

// Reads the run a run-family message names and checks it belongs to this board. Returns 0,
// 1 if an error reply was queued instead, or a negative errno on a store failure.
int coord_server_board_run(coord_server_t *self, coord_board_t *board, const jf_msg_t *msg,
                           jf_msg_run_ref_t *ret_ref, coord_run_row_t *ret_row, jf_err_t *err)
{
    jf_err_t perr = {0};
    bool other = false;
    int rc = jf_msg_run_ref_parse(msg->body, ret_ref, &perr);
    if (rc == 0) {
        rc = coord_store_run_get(self->store, ret_ref->run, ret_row, err);
        if (rc == -ENOENT || (rc == 0 && strcmp(ret_row->board, board->spec->name) != 0)) {
            // Another board's run is a violation (§1.9); an unknown one is not: an honest
            // agent's spool can outlive the store it was sent to.
            other = rc == 0;
            (void) snprintf(perr.msg, sizeof perr.msg, "run %s is not assigned to board '%s'",
                            ret_ref->run, board->spec->name);
            rc = -ENOENT;
        } else if (rc != 0) {
            return rc;
        }
    }
    if (rc != 0) {
        jf_log_warn("server: %s from '%s': %s", jf_msg_type_name(msg->type), board->spec->name,
                    perr.msg);
        json_t *e = jf_msg_error_new(coord_server_next_id(self), msg->id, JF_MSG_E_WRONG_STATE,
                                     perr.msg);
        rc = coord_server_queue_board(self, board, e);
        if (other) {
            coord_server_limits_refused(self, board, COORD_LIMITS_OTHER_BOARD_RUN);
        }
        return rc < 0 ? rc : 1;
    }
    return 0;
}

static bool s_is_active(const coord_run_row_t *row)
{
    return row->state == COORD_RUN_ASSIGNED || row->state == COORD_RUN_RUNNING;
}

static int s_on_run_accept(coord_server_t *self, coord_board_t *board, const zframe_t *identity,
                           const jf_msg_t *msg, jf_err_t *err)
{
    (void) identity;
    jf_msg_run_ref_t ref;
    coord_run_row_t row;
    int rc = coord_server_board_run(self, board, msg, &ref, &row, err);
    if (rc != 0) {
        return rc < 0 ? rc : 0;
    }
    if (!s_is_active(&row) || row.attempt != ref.attempt) {
        // Cancelled, finished or superseded meanwhile: tell the agent to stop this attempt.
        return coord_server_queue_board(
            self, board,
            jf_msg_run_ref_new(JF_MSG_RUN_CANCEL, coord_server_next_id(self), ref.run, ref.attempt));
    }
    if (row.state == COORD_RUN_ASSIGNED) {
        rc = coord_store_run_start(self->store, ref.run, ref.attempt, err);
        jf_log_notice("dispatch: board '%s' accepted run %s (attempt %lld)", board->spec->name,
                      ref.run, (long long) ref.attempt);
    }
    coord_board_set_run(board, COORD_BOARD_RUNNING, ref.run, ref.attempt);
    return rc;
}

static int s_on_run_reject(coord_server_t *self, coord_board_t *board, const zframe_t *identity,
                           const jf_msg_t *msg, jf_err_t *err)
{
    (void) identity;
    jf_msg_run_ref_t ref;
    coord_run_row_t row;
    jf_fail_reason_t reason = JF_FAIL_INVALID;
    char detail[JF_MSG_TEXT_MAX + 1] = {0};
    int rc = coord_server_board_run(self, board, msg, &ref, &row, err);
    if (rc != 0 || !s_is_active(&row) || row.attempt != ref.attempt) {
        return rc < 0 ? rc : 0; // a stale reject changes nothing
    }
    (void) jf_msg_run_failure_parse(msg->body, &reason, detail, sizeof detail, NULL);
    jf_log_notice("dispatch: board '%s' rejected run %s: %s: %s", board->spec->name, ref.run,
                  jf_fail_reason_name(reason), detail);
    if (reason == JF_FAIL_BUSY) {
        // Not the run's fault: requeue it without spending one of its attempts, and give the
        // agent a heartbeat interval to finish stopping its old child before the next offer.
        bool failed = false;
        rc = coord_store_run_requeue(self->store, ref.run, ref.attempt, INT_MAX,
                                     "the agent was busy", &failed, err);
        coord_board_set_run(board, COORD_BOARD_IDLE, NULL, 0);
        board->idle_after_mono_us = jf_clock_mono_us() + self->fleet->coord.heartbeat_interval_us;
    } else {
        rc = coord_store_run_finish(self->store, ref.run, ref.attempt, false,
                                    jf_fail_reason_name(reason), detail, err);
        coord_board_set_run(board, COORD_BOARD_IDLE, NULL, 0);
    }
    self->dispatch_needed = true;
    return rc;
}

// The blob named sha in self->blob_data: read from the store only when another blob was served
// last. A fetch asks for every chunk in turn, and reading a chunk from the store reads the whole
// blob (SQLite's substr() of a BLOB loads all of it): n chunks would read it n times.
static int s_blob_load(coord_server_t *self, const char *sha, jf_err_t *err)
{
    if (self->blob_data && strcmp(self->blob_sha, sha) == 0) {
        return 0;
    }
    void *data = NULL;
    size_t len = 0;
    jf_err_t why = {0};
    int rc = coord_store_blob_get(self->store, sha, &data, &len, &why);
    if (rc != 0 && rc != -ENOENT && err) {
        *err = why; // -ENOENT is answered (unknown_blob), not a failure of the tick
    }
    if (rc != 0) {
        return rc;
    }
    free(self->blob_data);
    self->blob_data = data;
    self->blob_len = len;
    memcpy(self->blob_sha, sha, sizeof self->blob_sha);
    return 0;
}

// blob.get (docs/protocol.md §5.7.1): one chunk of a stored blob, or an error saying why not.
static int s_on_blob_get(coord_server_t *self, coord_board_t *board, const zframe_t *identity,
                         const jf_msg_t *msg, jf_err_t *err)
{
    (void) identity;
    char sha[JF_BLOB_SHA256_HEX_LEN + 1] = {0};
    int64_t offset = 0;
    char detail[160] = {0};
    int rc = jf_msg_blob_get_parse(msg->body, sha, &offset, err);
    rc = rc ? rc : s_blob_load(self, sha, err);
    json_t *reply = NULL;
    if (rc == 0 && (size_t) offset < self->blob_len) {
        size_t left = self->blob_len - (size_t) offset;
        jf_msg_blob_part_t part = {.blob = sha,
                                   .size_bytes = (int64_t) self->blob_len,
                                   .offset = offset,
                                   .data = (const unsigned char *) self->blob_data + offset,
                                   .len = left < JF_BLOB_CHUNK_MAX_BYTES ? left
                                                                         : JF_BLOB_CHUNK_MAX_BYTES};
        reply = jf_msg_blob_data_new(coord_server_next_id(self), msg->id, &part);
    } else if (rc == -ENOENT) {
        (void) snprintf(detail, sizeof detail, "no blob %s", sha);
        reply = jf_msg_error_new(coord_server_next_id(self), msg->id, JF_MSG_E_UNKNOWN_BLOB,
                                 detail);
        rc = 0;
    } else if (rc == 0) {
        (void) snprintf(detail, sizeof detail,
                        "blob.get: 'offset' %lld is past the end of blob %.16s... (%zu bytes)",
                        (long long) offset, sha, self->blob_len);
        reply = jf_msg_error_new(coord_server_next_id(self), msg->id, JF_MSG_E_BAD_FIELD, detail);
    }
    return rc ? rc : coord_server_queue_board(self, board, reply);
}

typedef int (*s_handler_fn)(coord_server_t *self, coord_board_t *board, const zframe_t *identity,
                            const jf_msg_t *msg, jf_err_t *err);

static const s_handler_fn s_handlers[JF_MSG_TYPE_COUNT] = {
    [JF_MSG_HEARTBEAT] = s_on_heartbeat,
    [JF_MSG_ERROR] = s_on_error,
    [JF_MSG_RUN_ACCEPT] = s_on_run_accept,
    [JF_MSG_RUN_REJECT] = s_on_run_reject,
    [JF_MSG_RUN_PROGRESS] = coord_server_on_run_progress,
    [JF_MSG_TELEMETRY] = coord_server_on_telemetry,
    [JF_MSG_RUN_DONE] = coord_server_on_run_done,
    [JF_MSG_RUN_FAILED] = coord_server_on_run_failed,
    [JF_MSG_BLOB_GET] = s_on_blob_get,
    [JF_MSG_RUN_WEIGHTS] = coord_server_on_run_weights,
};

int coord_server_on_agent_msg(coord_server_t *self, const zframe_t *identity,
                              const coord_sender_t *sender, const jf_msg_t *msg, jf_err_t *err)
{
    if (msg->type == JF_MSG_HELLO) {
        return s_on_hello(self, sender, identity, msg, err);
    }
    // Only the connection a board's hello was welcomed on speaks for it (docs/protocol.md §1.3).
    coord_board_t *board = sender->route_board;
    if (!board || !board->online || !s_handlers[msg->type]) {
        // Majordomo's rule: a peer without a session is asked to register again.
        json_t *e = jf_msg_error_new(coord_server_next_id(self), msg->id, JF_MSG_E_NOT_REGISTERED,
                                     "no session: send hello first");
        return coord_server_queue(self, false, identity, e);
    }
    board->last_rx_mono_us = jf_clock_mono_us();
    return s_handlers[msg->type](self, board, identity, msg, err);
}
