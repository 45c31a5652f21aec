/* Coordinator: the numbered stream of one run attempt (run.progress, telemetry, run.weights,
 * run.done, run.failed). In-order receiver (go-back-N): seq acked_seq + 1 is stored, anything else is
 * answered with the current ack; acks leave only after the tick's commit (docs/protocol.md §5.3). */
#include "coord_server_internal.h"

#include "coord_store_blobs.h"
#include "jf_units.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t coord_server_credit(const coord_server_t *self, const coord_board_t *board)
{
    return board->credit_ok ? self->credit : 0;
}

void coord_server_credit_tick(coord_server_t *self, int64_t tick_us, int64_t now_us)
{
    bool backlog = self->drained_full;
    bool pressed = backlog || tick_us > COORD_CREDIT_SLOW_TICK_US;
    self->drained_full = false;
    if (now_us < self->credit_next_us) {
        return;
    }
    int64_t credit = pressed ? self->credit / 2 : self->credit + 1;
    credit = credit < COORD_CREDIT_MIN ? COORD_CREDIT_MIN : credit;
    credit = credit > COORD_CREDIT_MAX ? COORD_CREDIT_MAX : credit;
    if (credit != self->credit) {
        jf_log_info("server: credit %lld -> %lld (tick %lld ms%s)", (long long) self->credit,
                    (long long) credit, (long long) (tick_us / JF_US_PER_MS),
                    backlog ? ", backlog" : "");
        self->credit = credit;
        self->credit_next_us = now_us + COORD_CREDIT_STEP_US;
    }
}

static int s_ack(coord_server_t *self, coord_board_t *board, const jf_msg_run_ref_t *ref,
                 int64_t seq)
{
    if (seq < 1) {
        return 0; // nothing stored yet: an ack carries seq >= 1, so silence is the answer
    }
    json_t *ack = jf_msg_ack_new(coord_server_next_id(self), ref->run, ref->attempt, seq);
    if (ack && jf_msg_set_credit(ack, coord_server_credit(self, board)) != 0) {
        json_decref(ack);
        ack = NULL; // coord_server_queue_board answers NULL with -ENOMEM
    }
    return coord_server_queue_board(self, board, ack);
}

// Decides whether a stream message is the next one to store. Returns 0 to process it, 1 if it
// was answered (duplicate, gap, stale attempt) and must be skipped, or a negative errno.
static int s_admit(coord_server_t *self, coord_board_t *board, const jf_msg_t *msg,
                   jf_msg_run_ref_t *ref, jf_err_t *err)
{
    coord_run_row_t row;
    int rc = coord_server_board_run(self, board, msg, ref, &row, err);
    if (rc != 0) {
        return rc;
    }
    bool active = row.state == COORD_RUN_ASSIGNED || row.state == COORD_RUN_RUNNING;
    if (row.attempt != ref->attempt || !active) {
        // Superseded attempt or finished run: acknowledge so the agent can forget it, and stop
        // an attempt that is still producing.
        rc = s_ack(self, board, ref, ref->seq);
        if (rc == 0 && (msg->type == JF_MSG_RUN_PROGRESS || msg->type == JF_MSG_TELEMETRY)) {
            rc = coord_server_queue_board(self, board,
                                          jf_msg_run_ref_new(JF_MSG_RUN_CANCEL,
                                                             coord_server_next_id(self), ref->run,
                                                             ref->attempt));
        }
        return rc < 0 ? rc : 1;
    }
    if (ref->seq != row.acked_seq + 1) {
        rc = s_ack(self, board, ref, row.acked_seq); // duplicate or gap: say where we are
        return rc < 0 ? rc : 1;
    }
    if (row.state == COORD_RUN_ASSIGNED) {
        // The run.accept was lost but the run is clearly running.
        rc = coord_store_run_start(self->store, ref->run, ref->attempt, err);
    }
    coord_board_set_run(board, COORD_BOARD_RUNNING, ref->run, ref->attempt);
    return rc;
}

static int s_commit_seq(coord_server_t *self, coord_board_t *board, const jf_msg_run_ref_t *ref,
                        jf_err_t *err)
{
    int rc = coord_store_run_set_acked(self->store, ref->run, ref->attempt, ref->seq, err);
    return rc ? rc : s_ack(self, board, ref, ref->seq);
}

// The measure record, decoded once by jf_msg_decode: kept whole with the run (the JSON form
// from the schema), and its residency figures on the epochs.
static int s_store_measure(coord_server_t *self, const jf_msg_run_ref_t *ref, const jf_measure_t *m,
                           jf_err_t *err)
{
    json_t *form = jf_measure_to_json(m);
    char *text =
        form ? json_dumps(form, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(10)) : NULL;
    int rc = text ? coord_store_run_set_measure(self->store, ref->run, ref->attempt, text, err)
                  : jf_err_set(err, -ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < m->n_cache; i++) {
        rc = coord_store_epoch_set_cache(self->store, ref->run, ref->attempt, &m->cache[i], err);
    }
    free(text);
    json_decref(form);
    return rc;
}

static int s_store_record(coord_server_t *self, const jf_msg_run_ref_t *ref,
                          const jf_msg_progress_rec_t *pr, jf_err_t *err)
{
    const jf_record_t *r = &pr->rec;
    if (r->kind == JF_REC_MEASURE) {
        return s_store_measure(self, ref, pr->measure, err);
    }
    if (r->kind == JF_REC_EPOCH) {
        return coord_store_add_epoch(self->store, ref->run, ref->attempt, &r->epoch, err);
    }
    if (r->kind == JF_REC_MINIBATCH) {
        return coord_store_add_minibatch(self->store, ref->run, ref->attempt, &r->minibatch, err);
    }
    char *info = json_dumps(r->info, JSON_COMPACT | JSON_SORT_KEYS);
    int rc = info ? coord_store_run_set_info(self->store, ref->run, ref->attempt, info, err)
                  : jf_err_set(err, -ENOMEM, "out of memory");
    free(info);
    return rc;
}

// Stores item i of a stream batch (a record of run.progress, a sample of telemetry) of the
// admitted attempt ref.
typedef int (*s_store_item_fn)(coord_server_t *self, const jf_msg_run_ref_t *ref,
                               const jf_msg_t *msg, size_t i, jf_err_t *err);

static int s_store_progress_item(coord_server_t *self, const jf_msg_run_ref_t *ref,
                                 const jf_msg_t *msg, size_t i, jf_err_t *err)
{
    return s_store_record(self, ref, &msg->progress->records[i], err);
}

static int s_store_sample_item(coord_server_t *self, const jf_msg_run_ref_t *ref,
                               const jf_msg_t *msg, size_t i, jf_err_t *err)
{
    const jf_msg_sample_t *s = &msg->telemetry->samples[i];
    return coord_store_add_telemetry_obj(self->store, ref->run, ref->attempt, ref->seq,
                                         (int64_t) i, s->t_us, s->json, err);
}

// A batch of the stream: admitted in order, its n items stored from the decoder's typed
// payload (decoded: the payload is there), then acknowledged after the commit.
static int s_on_batch(coord_server_t *self, coord_board_t *board, const jf_msg_t *msg, size_t n,
                      bool decoded, s_store_item_fn store, jf_err_t *err)
{
    jf_msg_run_ref_t ref;
    int rc = s_admit(self, board, msg, &ref, err);
    if (rc != 0) {
        return rc < 0 ? rc : 0;
    }
    if (!decoded) {
        return jf_err_set(err, -EPROTO, "%s without its decoded payload",
                          jf_msg_type_name(msg->type));
    }
    for (size_t i = 0; i < n; i++) {
        if ((rc = store(self, &ref, msg, i, err)) != 0) {
            return rc;
        }
    }
    return s_commit_seq(self, board, &ref, err);
}

int coord_server_on_run_progress(coord_server_t *self, coord_board_t *board,
                                 const zframe_t *identity, const jf_msg_t *msg, jf_err_t *err)
{
    (void) identity;
    size_t n = msg->progress ? msg->progress->n_records : 0;
    return s_on_batch(self, board, msg, n, msg->progress != NULL, s_store_progress_item, err);
}

int coord_server_on_telemetry(coord_server_t *self, coord_board_t *board,
                              const zframe_t *identity, const jf_msg_t *msg, jf_err_t *err)
{
    (void) identity;
    size_t n = msg->telemetry ? msg->telemetry->n_samples : 0;
    return s_on_batch(self, board, msg, n, msg->telemetry != NULL, s_store_sample_item, err);
}

static int s_store_chunk_item(coord_server_t *self, const jf_msg_run_ref_t *ref,
                              const jf_msg_t *msg, size_t i, jf_err_t *err)
{
    (void) i;
    return coord_store_weights_add_chunk(self->store, ref->run, ref->attempt, msg->chunk, err);
}

// run.weights for a run whose params do not ask for weights (§5.7.2): refused like a message
// about another board's run, neither stored nor acknowledged, so no chunk outlives the run.
static int s_refuse_weights(coord_server_t *self, coord_board_t *board, const jf_msg_t *msg,
                            const jf_msg_run_ref_t *ref)
{
    char detail[128] = {0};
    (void) snprintf(detail, sizeof detail, "run %s does not return weights", ref->run);
    jf_log_warn("server: run.weights from '%s': %s", board->spec->name, detail);
    return coord_server_queue_board(
        self, board,
        jf_msg_error_new(coord_server_next_id(self), msg->id, JF_MSG_E_WRONG_STATE, detail));
}

int coord_server_on_run_weights(coord_server_t *self, coord_board_t *board,
                                const zframe_t *identity, const jf_msg_t *msg, jf_err_t *err)
{
    (void) identity;
    jf_msg_run_ref_t ref;
    coord_run_row_t row;
    jf_run_spec_t spec;
    int rc = coord_server_board_run(self, board, msg, &ref, &row, err);
    if (rc != 0) {
        return rc < 0 ? rc : 0;
    }
    if ((rc = coord_store_run_spec(self->store, ref.run, &spec, err)) != 0) {
        return rc;
    }
    if (!spec.return_weights) {
        return s_refuse_weights(self, board, msg, &ref);
    }
    return s_on_batch(self, board, msg, 1, msg->chunk != NULL, s_store_chunk_item, err);
}

static int s_end_attempt(coord_server_t *self, coord_board_t *board, const jf_msg_run_ref_t *ref,
                         bool done, const char *reason, const char *detail, jf_err_t *err)
{
    // coord_store_run_finish drops the chunks no assembly took: the store keeps no half-blob.
    int rc = coord_store_run_finish(self->store, ref->run, ref->attempt, done, reason, detail, err);
    rc = rc ? rc : s_commit_seq(self, board, ref, err);
    if (strcmp(board->run, ref->run) == 0) {
        coord_board_set_run(board, COORD_BOARD_IDLE, NULL, 0);
        board->ended_read_mono_us = self->handling_read_us;
    }
    self->dispatch_needed = true;
    if (rc == 0) {
        jf_log_notice("dispatch: run %s on '%s' %s%s%s", ref->run, board->spec->name,
                      done ? "done" : "failed: ", done ? "" : reason, done ? "" : "");
    }
    return rc;
}

// A run that returns weights is done only with them assembled and checked (§5.7.2); otherwise
// it failed as crashed, saying what is wrong with them.
static int s_end_with_weights(coord_server_t *self, coord_board_t *board,
                              const jf_msg_run_ref_t *ref, jf_err_t *err)
{
    char sha[JF_BLOB_SHA256_HEX_LEN + 1] = {0};
    jf_err_t why = {0};
    int rc = coord_store_weights_assemble(self->store, ref->run, ref->attempt, sha, &why);
    if (rc == -EBADMSG) {
        char detail[JF_ERR_MSG_MAX + 32] = {0};
        (void) snprintf(detail, sizeof detail, "returned weights: %s", why.msg);
        return s_end_attempt(self, board, ref, false, "crashed", detail, err);
    }
    if (rc != 0) {
        *err = why;
        return rc;
    }
    jf_log_info("dispatch: run %s returned weights %.16s...", ref->run, sha);
    return s_end_attempt(self, board, ref, true, NULL, NULL, err);
}

int coord_server_on_run_done(coord_server_t *self, coord_board_t *board, const zframe_t *identity,
                             const jf_msg_t *msg, jf_err_t *err)
{
    (void) identity;
    jf_msg_run_ref_t ref;
    int rc = s_admit(self, board, msg, &ref, err);
    if (rc != 0) {
        return rc < 0 ? rc : 0;
    }
    // A run is done only with every epoch it ran stored: cross-check the count it claims.
    int64_t claimed = json_integer_value(json_object_get(msg->body, "epochs"));
    int64_t stored = 0;
    jf_run_spec_t spec;
    rc = coord_store_count_epochs(self->store, ref.run, ref.attempt, &stored, err);
    rc = rc ? rc : coord_store_run_spec(self->store, ref.run, &spec, err);
    if (rc != 0) {
        return rc;
    }
    // A roofline run has one epoch per benchmark the board can run: the CPU's alone on a board
    // without CUDA (docs/roofline.md), so at least JF_RUN_ROOFLINE_EPOCHS_MIN of them.
    bool all = spec.roofline ? stored >= JF_RUN_ROOFLINE_EPOCHS_MIN && stored <= spec.epochs
                             : stored == spec.epochs;
    if (claimed != stored || !all) {
        char detail[160] = {0};
        (void) snprintf(detail, sizeof detail,
                        "run.done claims %lld epochs, %lld stored, %d expected", (long long) claimed,
                        (long long) stored, spec.epochs);
        return s_end_attempt(self, board, &ref, false, "crashed", detail, err);
    }
    if (spec.return_weights) {
        return s_end_with_weights(self, board, &ref, err);
    }
    return s_end_attempt(self, board, &ref, true, NULL, NULL, err);
}

int coord_server_on_run_failed(coord_server_t *self, coord_board_t *board,
                               const zframe_t *identity, const jf_msg_t *msg, jf_err_t *err)
{
    (void) identity;
    jf_msg_run_ref_t ref;
    int rc = s_admit(self, board, msg, &ref, err);
    if (rc != 0) {
        return rc < 0 ? rc : 0;
    }
    jf_fail_reason_t reason = JF_FAIL_CRASHED;
    char detail[JF_MSG_TEXT_MAX + 1] = {0};
    (void) jf_msg_run_failure_parse(msg->body, &reason, detail, sizeof detail, NULL);
    return s_end_attempt(self, board, &ref, false, jf_fail_reason_name(reason), detail, err);
}
