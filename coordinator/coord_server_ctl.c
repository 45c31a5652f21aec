/* Coordinator: the control endpoint's requests from the CLI — status, submit, cancel
 * (docs/protocol.md §6). Each request gets one ctl.reply or error, after the tick commits. */
#include "coord_server_internal.h"

#include "jf_msg_ctl.h"
#include "jf_units.h"

#include <errno.h>
#include <string.h>

static int s_reply(coord_server_t *self, const zframe_t *identity, const jf_msg_t *msg,
                   json_t *data)
{
    if (!data) {
        return -ENOMEM;
    }
    json_t *reply = jf_msg_ctl_reply_new(coord_server_next_id(self), msg->id, &data);
    json_decref(data); // NULL when the reply took it
    return reply ? coord_server_queue(self, true, identity, reply) : -ENOMEM;
}

static int s_reply_error(coord_server_t *self, const zframe_t *identity, const jf_msg_t *msg,
                         const char *detail)
{
    return coord_server_queue(self, true, identity,
                              jf_msg_error_new(coord_server_next_id(self), msg->id,
                                               JF_MSG_E_BAD_REQUEST, detail));
}

static const char *const s_run_states[] = {"idle", "assigned", "running"};

// The board's clock estimate (docs/protocol.md §4.2.1), null members when none was measured.
static json_t *s_board_clock_json(const coord_board_t *b)
{
    const coord_clock_sample_t *e = &b->clock_est;
    if (!b->clock_known) {
        return json_pack("{s:n, s:n, s:n, s:b}", "clock_offset_us", "clock_rtt_us", "clock_at_us",
                         "clock_warn", false);
    }
    return json_pack("{s:I, s:I, s:I, s:b}", "clock_offset_us", (json_int_t) e->offset_us,
                     "clock_rtt_us", (json_int_t) e->rtt_us, "clock_at_us", (json_int_t) e->at_us,
                     "clock_warn", b->clock_warn);
}

// Adds the board's quarantine and limit counters (docs/protocol.md §1.9) to o, which it takes.
static json_t *s_board_limits_json(json_t *o, const coord_board_t *b)
{
    json_t *reason = b->quarantined ? json_string(b->quarantine_reason) : json_null();
    json_t *limits = coord_limits_peer_json(&b->limits);
    if (!o || json_object_set_new(o, "quarantined", json_boolean(b->quarantined)) != 0 ||
        json_object_set_new(o, "quarantine_reason", reason ? reason : json_string("?")) != 0 ||
        json_object_set_new(o, "limits", limits) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *s_board_json(const coord_board_t *b, int64_t now_us)
{
    json_t *seen = b->last_rx_mono_us
                       ? json_real((double) (now_us - b->last_rx_mono_us) / (double) JF_US_PER_S)
                       : json_null();
    json_t *o = json_pack("{s:s, s:s, s:s, s:b, s:s, s:o, s:o}", "name", b->spec->name, "type",
                          jf_board_type_name(b->spec->type), "simulates",
                          jf_board_type_name(b->spec->simulates), "online", b->online, "run_state",
                          s_run_states[b->run_state], "run",
                          b->run[0] ? json_string(b->run) : json_null(), "last_seen_s_ago", seen);
    json_t *clock = s_board_clock_json(b);
    if (!o || !clock || json_object_update(o, clock) != 0) {
        json_decref(o);
        o = NULL;
    }
    json_decref(clock);
    return s_board_limits_json(o, b);
}

static json_t *s_counts_json(const coord_state_counts_t *c)
{
    json_t *o = json_object();
    for (int i = 0; o && i < COORD_RUN_STATE_COUNT; i++) {
        (void) json_object_set_new(o, coord_run_state_name((coord_run_state_t) i),
                                   json_integer((json_int_t) c->n[i]));
    }
    return o;
}

static json_t *s_drops_json(const coord_server_t *self)
{
    json_t *o = json_object();
    for (int i = 0; o && i < COORD_DROP_COUNT; i++) {
        (void) json_object_set_new(o, coord_server_drop_name((coord_server_drop_t) i),
                                   json_integer((json_int_t) self->drops[i]));
    }
    return o;
}

// The free-space floor (docs/store.md): why new runs are not started, if they are not.
static json_t *s_space_json(const coord_server_t *self)
{
    char buf[256];
    const char *reason = coord_server_space_reason(self, buf, sizeof buf);
    bool read = self->fleet->coord.min_free_bytes > 0 && self->next_space_check_us > 0;
    return json_pack("{s:o, s:I, s:b, s:o}", "free_bytes",
                     read ? json_integer((json_int_t) self->free_bytes) : json_null(),
                     "min_free_bytes", (json_int_t) self->fleet->coord.min_free_bytes,
                     "accepting_runs", !reason, "reason",
                     reason ? json_string(reason) : json_null());
}

static int s_on_status(coord_server_t *self, const zframe_t *identity, const jf_msg_t *msg,
                       jf_err_t *err)
{
    coord_state_counts_t counts;
    int rc = coord_store_counts(self->store, NULL, &counts, err);
    if (rc != 0) {
        return rc;
    }
    json_t *boards = json_array();
    int64_t now_us = jf_clock_mono_us();
    for (size_t i = 0; boards && i < coord_registry_size(self->registry); i++) {
        (void) json_array_append_new(boards,
                                     s_board_json(coord_registry_at(self->registry, i), now_us));
    }
    json_t *data = json_pack("{s:I, s:o, s:o, s:o, s:o}", "coordinator_epoch",
                             (json_int_t) self->epoch, "boards", boards, "runs",
                             s_counts_json(&counts), "send_drops", s_drops_json(self),
                             "connections", coord_fdguard_status_json(self->fdguard, now_us));
    if (data) {
        (void) json_object_set_new(data, "store_space", s_space_json(self));
        (void) json_object_set_new(data, "limits", coord_server_limits_json(self));
    }
    return s_reply(self, identity, msg, data);
}

static json_t *s_submit_json(const jf_sweep_t *sweep, const coord_submit_result_t *r)
{
    return json_pack("{s:s, s:I, s:I, s:I, s:I, s:{s:I, s:I, s:I}}", "sweep", sweep->name, "runs",
                     (json_int_t) r->runs, "added", (json_int_t) r->added, "already_done",
                     (json_int_t) r->already_done, "retried", (json_int_t) r->retried, "skipped",
                     "excluded", (json_int_t) sweep->skips.excluded, "no_storage",
                     (json_int_t) sweep->skips.no_storage, "no_power_mode",
                     (json_int_t) sweep->skips.no_power_mode);
}

static int s_on_submit(coord_server_t *self, const zframe_t *identity, const jf_msg_t *msg,
                       jf_err_t *err)
{
    json_t *jyaml = json_object_get(msg->body, "yaml");
    const char *file = json_string_value(json_object_get(msg->body, "file"));
    jf_err_t perr = {0};
    jf_sweep_t *sweep = jf_sweep_parse(json_string_value(jyaml), json_string_length(jyaml), file,
                                       self->fleet, &perr);
    if (!sweep) {
        return s_reply_error(self, identity, msg, perr.msg);
    }
    coord_submit_result_t res = {0};
    int rc = coord_store_sweep_put(self->store, sweep, file, json_string_value(jyaml), &res, err);
    rc = rc ? rc : coord_store_event(self->store, "sweep.submit", NULL, NULL, 0, sweep->name, err);
    if (rc == 0) {
        jf_log_notice("sweep: '%s' submitted: %zu runs, %zu new, %zu already done, %zu retried",
                      sweep->name, res.runs, res.added, res.already_done, res.retried);
        self->dispatch_needed = true;
        rc = s_reply(self, identity, msg, s_submit_json(sweep, &res));
    }
    jf_sweep_destroy(&sweep);
    return rc;
}

typedef struct s_cancel_ctx {
    coord_server_t *server;
    size_t stopping;
    int rc;
    jf_err_t *err;
} s_cancel_ctx_t;

static void s_cancel_one(const coord_run_row_t *row, void *arg)
{
    s_cancel_ctx_t *c = arg;
    if (c->rc == 0) {
        c->rc = coord_server_cancel_run(c->server, row->run, c->err);
        c->stopping++;
    }
}

static int s_on_cancel(coord_server_t *self, const zframe_t *identity, const jf_msg_t *msg,
                       jf_err_t *err)
{
    const char *name = json_string_value(json_object_get(msg->body, "sweep"));
    size_t cancelled = 0;
    jf_err_t cerr = {0};
    int rc = coord_store_sweep_cancel(self->store, name, &cancelled, &cerr);
    if (rc == -ENOENT) {
        return s_reply_error(self, identity, msg, cerr.msg);
    }
    if (rc != 0) {
        *err = cerr;
        return rc;
    }
    s_cancel_ctx_t ctx = {.server = self, .err = err};
    rc = coord_store_sweep_active_runs(self->store, name, s_cancel_one, &ctx, err);
    rc = rc ? rc : ctx.rc;
    rc = rc ? rc : coord_store_event(self->store, "sweep.cancel", NULL, NULL, 0, name, err);
    if (rc == 0) {
        jf_log_notice("sweep: '%s' cancelled: %zu pending runs dropped, %zu running stopped", name,
                      cancelled, ctx.stopping);
        rc = s_reply(self, identity, msg,
                     json_pack("{s:s, s:I, s:I}", "sweep", name, "cancelled_pending",
                               (json_int_t) cancelled, "stopping", (json_int_t) ctx.stopping));
    }
    return rc;
}

int coord_server_on_ctl_msg(coord_server_t *self, const zframe_t *identity, const jf_msg_t *msg,
                            jf_err_t *err)
{
    switch (msg->type) {
    case JF_MSG_CTL_STATUS:
        return s_on_status(self, identity, msg, err);
    case JF_MSG_CTL_SUBMIT:
        return s_on_submit(self, identity, msg, err);
    case JF_MSG_CTL_CANCEL:
        return s_on_cancel(self, identity, msg, err);
    default:
        return s_reply_error(self, identity, msg, "not a control request");
    }
}
