/* Coordinator: dispatch of pending runs to idle online boards (one run per board), run.assign
 * retransmission, heartbeats, liveness and leases (docs/protocol.md §4.2, §5.1). */
#include "coord_server_internal.h"

#include "coord_store_retention.h"
#include "jf_msg_session.h"
#include "jf_units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int64_t s_backoff_us(int tries)
{
    int64_t d = COORD_ASSIGN_RETRY_US;
    for (int i = 1; i < tries && d < COORD_ASSIGN_RETRY_MAX_US; i++) {
        d *= 2;
    }
    return d < COORD_ASSIGN_RETRY_MAX_US ? d : COORD_ASSIGN_RETRY_MAX_US;
}

static int s_send_assign(coord_server_t *self, coord_board_t *board, jf_err_t *err)
{
    jf_run_spec_t spec;
    int rc = coord_store_run_spec(self->store, board->run, &spec, err);
    if (rc != 0) {
        return rc;
    }
    board->assign_tries++;
    board->assign_next_mono_us = jf_clock_mono_us() + s_backoff_us(board->assign_tries);
    if (board->assign_tries > 1) {
        jf_log_info("dispatch: resending run %s to '%s' (try %d)", board->run, board->spec->name,
                    board->assign_tries);
    }
    return coord_server_queue_board(
        self, board, jf_msg_run_assign_new(coord_server_next_id(self), &spec, board->attempt));
}

static int s_dispatch_board(coord_server_t *self, coord_board_t *board, jf_err_t *err)
{
    if (board->run_state == COORD_BOARD_ASSIGNED) {
        bool due = jf_clock_mono_us() >= board->assign_next_mono_us;
        return due ? s_send_assign(self, board, err) : 0;
    }
    if (board->run_state != COORD_BOARD_IDLE || jf_clock_mono_us() < board->idle_after_mono_us) {
        return 0;
    }
    if (self->space_low) {
        return 0; // the free-space floor: pending runs wait, started ones go on (docs/store.md)
    }
    jf_run_spec_t spec;
    int rc = coord_store_next_pending(self->store, board->spec->name, &spec, err);
    if (rc == -ENOENT) {
        return 0;
    }
    int64_t attempt = 0;
    rc = rc ? rc : coord_store_run_assign(self->store, spec.run_id, &attempt, err);
    if (rc != 0) {
        return rc;
    }
    coord_board_set_run(board, COORD_BOARD_ASSIGNED, spec.run_id, attempt);
    if (board->ended_read_mono_us > 0 && self->n_redispatched < COORD_REDISPATCH_SAMPLES) {
        self->redispatched[self->n_redispatched++] = board->ended_read_mono_us;
    }
    board->ended_read_mono_us = 0;
    char power[JF_RUN_POWER_LABEL_MAX + 1];
    jf_run_spec_power_label(&spec, power, sizeof power);
    jf_log_notice("dispatch: run %s (%s, %s, %s, workers %d, batch %d) -> '%s', attempt %lld",
                  spec.run_id, spec.workload, power, spec.storage, spec.workers, spec.batch_size,
                  board->spec->name, (long long) attempt);
    return s_send_assign(self, board, err);
}

int coord_server_dispatch(coord_server_t *self, jf_err_t *err)
{
    for (size_t i = 0; i < coord_registry_size(self->registry); i++) {
        coord_board_t *board = coord_registry_at(self->registry, i);
        if (board->online) {
            int rc = s_dispatch_board(self, board, err);
            if (rc != 0) {
                return rc;
            }
        }
    }
    return 0;
}

const char *coord_server_space_reason(const coord_server_t *self, char *buf, size_t size)
{
    if (!self->space_low) {
        return NULL;
    }
    (void) snprintf(buf, size,
                    "free space %" PRId64 " bytes on the store's filesystem is below "
                    "min_free_space %" PRId64 " bytes: new runs are not started",
                    self->free_bytes, self->fleet->coord.min_free_bytes);
    return buf;
}

// A failed statvfs keeps the last decision: a floor that cannot be read neither starts nor
// stops dispatching on its own.
static void s_check_space(coord_server_t *self)
{
    int64_t now_us = jf_clock_mono_us();
    int64_t floor_bytes = self->fleet->coord.min_free_bytes;
    // Not on PostgreSQL: the store is not on this machine's disk (said at start, coord_server.c).
    if (floor_bytes <= 0 || now_us < self->next_space_check_us ||
        coord_store_is_postgres(self->store)) {
        return;
    }
    self->next_space_check_us = now_us + COORD_SPACE_CHECK_US;
    jf_err_t err = {0};
    if (coord_store_free_bytes(self->store, &self->free_bytes, &err) != 0) {
        jf_log_warn("store: %s; keeping the last free-space decision, checking again in %d s",
                    err.msg, (int) (COORD_SPACE_CHECK_US / JF_US_PER_S));
        return;
    }
    bool low = self->free_bytes < floor_bytes;
    if (low != self->space_low) {
        self->space_low = low;
        self->dispatch_needed = true;
        char why[256];
        jf_log_notice("store: %s", low ? coord_server_space_reason(self, why, sizeof why)
                                       : "free space is above min_free_space again: new runs "
                                         "are started");
    }
}

static int s_retention(coord_server_t *self, jf_err_t *err)
{
    const jf_coord_settings_t *c = &self->fleet->coord;
    int64_t now_us = jf_clock_mono_us();
    if (c->telemetry_after == JF_RETENTION_KEEP || now_us < self->next_retention_us) {
        return 0;
    }
    int64_t cutoff_us = jf_clock_wall_us() - c->telemetry_raw_us;
    int64_t done = 0;
    int rc = coord_store_age_telemetry(self->store, c->telemetry_after, cutoff_us,
                                       COORD_RETENTION_BATCH_ROWS, &done, err);
    if (rc != 0) {
        return rc;
    }
    // Work done means more may be due: take the next batch next tick, else look again later.
    self->next_retention_us = done > 0 ? now_us : now_us + COORD_RETENTION_IDLE_US;
    if (done > 0) {
        jf_log_debug("retention: %" PRId64 " telemetry rows %s", done,
                     c->telemetry_after == JF_RETENTION_MEANS ? "averaged" : "deleted");
    }
    return 0;
}

int coord_server_housekeep(coord_server_t *self, jf_err_t *err)
{
    s_check_space(self);
    return s_retention(self, err);
}

int coord_server_lose_run(coord_server_t *self, coord_board_t *board, const char *why,
                          jf_err_t *err)
{
    bool failed = false;
    char run[JF_RUN_ID_LEN + 1] = {0};
    memcpy(run, board->run, sizeof run);
    int64_t attempt = board->attempt;
    int rc = coord_store_run_requeue(self->store, run, attempt, self->fleet->coord.max_attempts,
                                     why, &failed, err);
    if (rc == -ESTALE) {
        rc = 0; // it ended meanwhile: nothing to requeue
    }
    coord_board_set_run(board, COORD_BOARD_IDLE, NULL, 0);
    self->dispatch_needed = true;
    if (rc == 0) {
        jf_log_warn("dispatch: run %s attempt %lld on '%s' lost (%s); %s", run,
                    (long long) attempt, board->spec->name, why,
                    failed ? "no attempts left, run failed" : "queued again");
    }
    if (rc == 0 && board->online) {
        rc = coord_server_queue_board(
            self, board, jf_msg_run_ref_new(JF_MSG_RUN_CANCEL, coord_server_next_id(self), run,
                                            attempt));
    }
    return rc;
}

static void s_go_offline(coord_server_t *self, coord_board_t *board, int64_t now_us)
{
    board->online = false;
    board->offline_since_mono_us = now_us;
    board->session[0] = '\0';
    jf_err_t e = {0};
    if (coord_store_board_set_online(self->store, board->spec->name, false, &e) != 0 ||
        coord_store_event(self->store, "board.offline", board->spec->name, NULL, 0, NULL, &e)) {
        jf_log_warn("registry: cannot record board '%s' offline: %s; it stays offline in memory",
                    board->spec->name, e.msg);
    }
    jf_log_notice("registry: board '%s' offline: nothing heard for %lld ms", board->spec->name,
                  (long long) ((now_us - board->last_rx_mono_us) / JF_US_PER_MS));
}

// Silence is measured up to the coordinator's caught_up_mono_us, not to now: while its own
// receive backlog holds messages it has not read, a board is not silent because the coordinator
// is late, and a lease does not run out while the board's hello may be waiting in that backlog.
static int s_liveness_board(coord_server_t *self, coord_board_t *board, int64_t now_us,
                            jf_err_t *err)
{
    const jf_coord_settings_t *c = &self->fleet->coord;
    int64_t heard_by_us = self->caught_up_mono_us;
    if (board->online && heard_by_us - board->last_rx_mono_us > c->heartbeat_timeout_us) {
        s_go_offline(self, board, now_us);
    }
    if (board->online && now_us - board->last_tx_mono_us >= c->heartbeat_interval_us) {
        return coord_server_queue_board(self, board,
                                        jf_msg_heartbeat_new(coord_server_next_id(self), NULL));
    }
    if (!board->online && board->run_state != COORD_BOARD_IDLE) {
        int64_t lease = COORD_LEASE_HEARTBEATS * c->heartbeat_interval_us;
        lease = lease > COORD_LEASE_MIN_US ? lease : COORD_LEASE_MIN_US;
        int64_t since = board->offline_since_mono_us ? board->offline_since_mono_us
                                                     : self->start_mono_us;
        if (heard_by_us - since > lease) {
            return coord_server_lose_run(self, board, "lease expired while the board was offline",
                                         err);
        }
    }
    return 0;
}

// run.cancel again for a run whose sweep was cancelled while it ran: run.cancel is not
// acknowledged, and a lost one would let the run train on to its end (docs/protocol.md §5.5).
// The agent ignores a repeat for a run it is already stopping.
static int s_cancel_again(coord_server_t *self, coord_board_t *board, int64_t now_us)
{
    if (!board->online || board->cancel_next_mono_us <= 0 || now_us < board->cancel_next_mono_us ||
        board->run_state != COORD_BOARD_RUNNING) {
        return 0;
    }
    board->cancel_next_mono_us = now_us + self->fleet->coord.heartbeat_interval_us;
    jf_log_info("dispatch: run.cancel of run %s attempt %lld sent to '%s' again", board->run,
                (long long) board->attempt, board->spec->name);
    return coord_server_queue_board(self, board,
                                    jf_msg_run_ref_new(JF_MSG_RUN_CANCEL,
                                                       coord_server_next_id(self), board->run,
                                                       board->attempt));
}

int coord_server_liveness(coord_server_t *self, jf_err_t *err)
{
    int64_t now_us = jf_clock_mono_us();
    for (size_t i = 0; i < coord_registry_size(self->registry); i++) {
        int rc = s_cancel_again(self, coord_registry_at(self->registry, i), now_us);
        if (rc != 0) {
            return jf_err_set(err, rc, "dispatch: cannot queue run.cancel");
        }
        rc = s_liveness_board(self, coord_registry_at(self->registry, i), now_us, err);
        if (rc != 0) {
            return rc;
        }
    }
    self->dispatch_needed = true; // resend due run.assign messages
    return 0;
}

int coord_server_cancel_run(coord_server_t *self, const char *run, jf_err_t *err)
{
    coord_run_row_t row;
    int rc = coord_store_run_get(self->store, run, &row, err);
    if (rc != 0) {
        return rc;
    }
    coord_board_t *board = coord_registry_board(self->registry, row.board);
    bool offline = !board || !board->online;
    if (row.state == COORD_RUN_ASSIGNED || (row.state == COORD_RUN_RUNNING && offline)) {
        // Not accepted yet, or its board is away and could not be told: the run ends here (a
        // lease expiry would otherwise run it again). A late accept or stream message of the
        // attempt is answered with run.cancel.
        rc = coord_store_run_finish(self->store, run, row.attempt, false, "cancelled",
                                    row.state == COORD_RUN_ASSIGNED
                                        ? "cancelled before the agent accepted it"
                                        : "cancelled while its board was offline",
                                    err);
        if (board && strcmp(board->run, run) == 0) {
            coord_board_set_run(board, COORD_BOARD_IDLE, NULL, 0);
        }
    }
    if (rc == 0 && board && board->online) {
        rc = coord_server_queue_board(
            self, board,
            jf_msg_run_ref_new(JF_MSG_RUN_CANCEL, coord_server_next_id(self), run, row.attempt));
    }
    if (rc == 0 && board && row.state == COORD_RUN_RUNNING && board->online &&
        board->run_state == COORD_BOARD_RUNNING && strcmp(board->run, run) == 0 &&
        board->attempt == row.attempt) {
        // Until the agent's run.failed ends it: sent again every heartbeat interval.
        board->cancel_next_mono_us =
            jf_clock_mono_us() + self->fleet->coord.heartbeat_interval_us;
    }
    self->dispatch_needed = true;
    return rc;
}
