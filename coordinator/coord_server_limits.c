/* Coordinator: per-board message limits and quarantine on the agent endpoint (docs/protocol.md
 * §1.9). The buckets are coord_limits; this file decides what a verdict does: drop, answer once,
 * quarantine a repeat offender (session closed, key moved to keys/quarantined/, event stored) and
 * follow releases. Not the CLI side (cli_cmd_keys.c release, cli_cmd_status.c). */
#include "coord_server_internal.h"

#include "jf_units.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void s_log_drop(coord_server_t *self, const coord_board_t *board, coord_limits_verdict_t v,
                       size_t size_bytes)
{
    uint64_t n = 0;
    if (jf_log_ratelimit_allow(&self->rl_limits, &n)) {
        jf_log_warn("limits: message of %zu bytes from '%s' dropped: %s (%" PRIu64 " dropped from "
                    "it so far; %" PRIu64 " more lines suppressed); it is not acknowledged, so "
                    "an honest agent resends it",
                    size_bytes, board->spec->name, coord_limits_verdict_name(v),
                    coord_limits_peer_dropped(&board->limits), n);
    }
}

static void s_reply(coord_server_t *self, coord_board_t *board, const char *code,
                    const char *detail)
{
    // On ENOMEM the peer gets no reply: it was being refused anyway.
    (void) coord_server_queue_board(self, board,
                                    jf_msg_error_new(coord_server_next_id(self), -1, code, detail));
}

// Like a board that went silent (coord_server_dispatch.c), with its own event: the session ends,
// its run keeps its lease, and its hello is not heard again until a release.
static void s_close_session(coord_server_t *self, coord_board_t *board, const char *reason)
{
    if (board->online) {
        board->online = false;
        board->offline_since_mono_us = jf_clock_mono_us();
        board->session[0] = '\0';
    }
    jf_err_t e = {0};
    if (coord_store_board_set_online(self->store, board->spec->name, false, &e) != 0 ||
        coord_store_event(self->store, "board.quarantined", board->spec->name, NULL, 0, reason,
                          &e) != 0) {
        jf_log_warn("limits: cannot record board '%s' quarantined in the store: %s; it stays "
                    "quarantined in memory",
                    board->spec->name, e.msg);
    }
}

static void s_quarantine(coord_server_t *self, coord_board_t *board, coord_limits_verdict_t last)
{
    const jf_limits_t *l = &self->fleet->coord.limits;
    const coord_limits_peer_t *p = &board->limits;
    char reason[COORD_QUARANTINE_REASON_MAX] = {0};
    (void) snprintf(reason, sizeof reason,
                    "%d violations within %" PRId64 " ms (last %s; so far: %" PRIu64
                    " over_rate, %" PRIu64 " over_bytes, %" PRIu64 " over_size, %" PRIu64
                    " invalid, %" PRIu64 " other_board_run)",
                    l->quarantine_after, l->quarantine_window_us / JF_US_PER_MS,
                    coord_limits_verdict_name(last), p->dropped[COORD_LIMITS_OVER_RATE],
                    p->dropped[COORD_LIMITS_OVER_BYTES], p->dropped[COORD_LIMITS_OVER_SIZE],
                    p->dropped[COORD_LIMITS_INVALID], p->dropped[COORD_LIMITS_OTHER_BOARD_RUN]);
    s_reply(self, board, JF_MSG_E_QUARANTINED, reason); // before the session ends, once
    coord_board_set_quarantine(board, reason, l);
    s_close_session(self, board, reason);
    jf_err_t e = {0};
    if (self->auth && coord_auth_quarantine(self->auth, board->spec->name, reason, &e) != 0) {
        jf_log_error("%s; the quarantine holds until the coordinator restarts", e.msg);
    }
    jf_log_warn("limits: board '%s' quarantined: %s; nothing it sends is processed until "
                "'jetfleet keys release %s'",
                board->spec->name, reason, board->spec->name);
}

// A message that broke a limit: dropped; the first of a run of drops is answered, and a repeat
// offender is quarantined.
static bool s_violation(coord_server_t *self, coord_board_t *board, coord_limits_verdict_t v,
                        bool was_limited, size_t size_bytes)
{
    s_log_drop(self, board, v, size_bytes);
    if (coord_limits_peer_is_offender(&board->limits, &self->fleet->coord.limits,
                                      jf_clock_mono_us())) {
        s_quarantine(self, board, v);
        return false;
    }
    if (!was_limited) {
        char detail[160] = {0};
        (void) snprintf(detail, sizeof detail,
                        "message of %zu bytes dropped: %s; not acknowledged, send it again later",
                        size_bytes, coord_limits_verdict_name(v));
        s_reply(self, board,
                v == COORD_LIMITS_OVER_SIZE ? JF_MSG_E_TOO_LARGE : JF_MSG_E_RATE_LIMITED, detail);
    }
    return false;
}

void coord_server_limits_refused(coord_server_t *self, coord_board_t *board,
                                 coord_limits_verdict_t v)
{
    if (board->quarantined) {
        return;
    }
    coord_limits_peer_refused(&board->limits, v, jf_clock_mono_us());
    if (coord_limits_peer_is_offender(&board->limits, &self->fleet->coord.limits,
                                      jf_clock_mono_us())) {
        s_quarantine(self, board, v);
    }
}

static void s_anonymous_bucket(const coord_server_t *self, int64_t *per_s, int64_t *burst)
{
    coord_limits_anonymous(&self->fleet->coord.limits, self->fleet->n_boards,
                           self->insecure_loopback, per_s, burst);
}

void coord_server_limits_init_anonymous(coord_server_t *self)
{
    int64_t per_s = 0, burst = 0;
    s_anonymous_bucket(self, &per_s, &burst);
    coord_limits_peer_init(&self->anonymous, &self->fleet->coord.limits, jf_clock_mono_us());
    self->anonymous.msgs.tokens = (double) burst; // full, as a board's bucket starts
}

bool coord_server_limits_admit(coord_server_t *self, coord_board_t *board, zmsg_t *m)
{
    const jf_limits_t *l = &self->fleet->coord.limits;
    int64_t now_us = jf_clock_mono_us();
    if (!board) {
        // No board yet (without authentication, a connection before its hello is welcomed; or
        // a key or a name fleet.yaml does not list): all such peers share one bucket, so a flood of
        // them costs a bounded number of decodes a second; the rest is dropped unread and
        // unanswered.
        int64_t per_s = 0, burst = 0;
        s_anonymous_bucket(self, &per_s, &burst);
        return coord_limits_peer_admit_anonymous(&self->anonymous, per_s, burst, now_us);
    }
    if (board->quarantined) {
        board->limits.ignored++;
        return false;
    }
    bool was_limited = board->limits.limited;
    size_t size = zmsg_content_size(m);
    coord_limits_verdict_t v = coord_limits_peer_admit(&board->limits, l, size, now_us);
    return v == COORD_LIMITS_PASS ? true : s_violation(self, board, v, was_limited, size);
}

bool coord_server_limits_check(coord_server_t *self, coord_board_t *board, const jf_msg_t *msg,
                               size_t size_bytes)
{
    if (!board) {
        return true; // unregistered peers are answered by the protocol's own checks
    }
    bool was_limited = board->limits.limited;
    coord_limits_verdict_t v = coord_limits_peer_check_type(
        &board->limits, &self->fleet->coord.limits, msg->type, size_bytes, jf_clock_mono_us());
    return v == COORD_LIMITS_PASS ? true : s_violation(self, board, v, was_limited, size_bytes);
}

static void s_sync_board(coord_server_t *self, coord_board_t *board)
{
    const char *reason = coord_auth_quarantine_reason(self->auth, board->spec->name);
    if (reason && !board->quarantined) {
        coord_board_set_quarantine(board, reason, &self->fleet->coord.limits);
        if (board->online) {
            s_close_session(self, board, reason); // an operator moved its key there by hand
        }
        jf_log_warn("limits: board '%s' is quarantined (its key is in keys/quarantined/): %s",
                    board->spec->name, reason);
    } else if (!reason && board->quarantined) {
        coord_board_set_quarantine(board, NULL, &self->fleet->coord.limits);
        jf_err_t e = {0};
        if (coord_store_event(self->store, "board.released", board->spec->name, NULL, 0, NULL,
                              &e) != 0) {
            jf_log_warn("limits: cannot record the release of '%s': %s", board->spec->name, e.msg);
        }
        jf_log_notice("limits: board '%s' released from quarantine; it may register again",
                      board->spec->name);
    }
}

void coord_server_limits_sync(coord_server_t *self)
{
    if (!self->auth || coord_auth_generation(self->auth) == self->auth_generation) {
        return;
    }
    self->auth_generation = coord_auth_generation(self->auth);
    for (size_t i = 0; i < coord_registry_size(self->registry); i++) {
        s_sync_board(self, coord_registry_at(self->registry, i));
    }
}

json_t *coord_server_limits_json(const coord_server_t *self)
{
    const jf_limits_t *l = &self->fleet->coord.limits;
    return json_pack(
        "{s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:I, s:I, s:I}", "messages_per_s",
        (json_int_t) l->messages_per_s, "message_burst", (json_int_t) l->message_burst,
        "bytes_per_s", (json_int_t) l->bytes_per_s, "byte_burst", (json_int_t) l->byte_burst,
        "max_stream_bytes", (json_int_t) l->max_stream_bytes, "max_other_bytes",
        (json_int_t) l->max_other_bytes, "quarantine_after", l->quarantine_after,
        "quarantine_window_ms", (json_int_t) (l->quarantine_window_us / JF_US_PER_MS),
        "unregistered_passed", (json_int_t) self->anonymous.passed, "unregistered_dropped",
        (json_int_t) self->anonymous.dropped[COORD_LIMITS_OVER_RATE]);
}
