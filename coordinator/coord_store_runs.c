/* Store: sweeps and the run state machine pending -> assigned -> running -> done | failed. */
#include "coord_store_blobs.h"
#include "coord_store_internal.h"

#include "jf_units.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int s_put_one(coord_store_t *self, const char *sweep, const jf_run_spec_t *r, int64_t ord,
                     coord_submit_result_t *res, jf_err_t *err)
{
    int64_t before = 0;
    int rc = coord_store_scalar(self, "SELECT count(*) FROM runs WHERE id = ?",
                                COORD_BINDS(coord_text(r->run_id)), &before, err);
    rc = rc ? rc : coord_store_spec_insert(self, r, ord, err);
    rc = rc ? rc
            : coord_store_exec(
                  self,
                  "INSERT INTO sweep_runs(sweep, run, ord) VALUES(?, ?, ?) "
                  "ON CONFLICT DO NOTHING",
                  COORD_BINDS(coord_text(sweep), coord_text(r->run_id), coord_int(ord)), err);
    if (rc != 0) {
        return rc;
    }
    int64_t state_done = 0, retried = 0;
    rc = coord_store_scalar(self, "SELECT state = 'done' FROM runs WHERE id = ?",
                            COORD_BINDS(coord_text(r->run_id)), &state_done, err);
    rc = rc ? rc
            : coord_store_exec(self,
                               "UPDATE runs SET state = 'pending', fail_reason = NULL, "
                               "fail_detail = NULL, finished_us = NULL, attempt_base = attempt "
                               "WHERE id = ? AND state = 'failed'",
                               COORD_BINDS(coord_text(r->run_id)), err);
    if (rc == 0) {
        retried = coord_db_changes(self->db);
        res->added += before == 0;
        res->already_done += state_done != 0;
        res->retried += (size_t) retried;
    }
    return rc;
}

int coord_store_sweep_put(coord_store_t *self, const jf_sweep_t *sweep, const char *file,
                          const char *yaml, coord_submit_result_t *ret_result, jf_err_t *err)
{
    int64_t now = jf_clock_wall_us();
    coord_submit_result_t res = {.runs = sweep->n_runs};
    int64_t ord = 0;
    int rc = coord_store_exec(
        self,
        "INSERT INTO sweeps(name, file, yaml, description, submitted_us, updated_us) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?5) ON CONFLICT(name) DO UPDATE SET file = ?2, yaml = ?3, "
        "description = ?4, updated_us = ?5, cancelled_us = NULL",
        COORD_BINDS(coord_text(sweep->name), coord_text(file), coord_text(yaml),
                    coord_text(sweep->description), coord_int(now)),
        err);
    rc = rc ? rc
            : coord_store_scalar(self, "SELECT coalesce(max(ord), 0) FROM runs", COORD_NO_BINDS,
                                 &ord, err);
    for (size_t i = 0; rc == 0 && i < sweep->n_runs; i++) {
        rc = s_put_one(self, sweep->name, &sweep->runs[i], ord + 1 + (int64_t) i, &res, err);
    }
    if (rc == 0) {
        *ret_result = res;
    }
    return rc;
}

int coord_store_sweep_cancel(coord_store_t *self, const char *name, size_t *ret_cancelled,
                             jf_err_t *err)
{
    int64_t n = 0;
    int rc = coord_store_scalar(self, "SELECT count(*) FROM sweeps WHERE name = ?",
                                COORD_BINDS(coord_text(name)), &n, err);
    if (rc == 0 && n == 0) {
        return jf_err_set(err, -ENOENT, "no sweep named '%s'", name);
    }
    rc = rc ? rc
            : coord_store_exec(self, "UPDATE sweeps SET cancelled_us = ? WHERE name = ?",
                               COORD_BINDS(coord_int(jf_clock_wall_us()), coord_text(name)), err);
    rc = rc ? rc
            : coord_store_exec(self,
                               "UPDATE runs SET state = 'failed', fail_reason = 'cancelled', "
                               "fail_detail = 'sweep cancelled before the run started', "
                               "finished_us = ? WHERE state = 'pending' AND id IN "
                               "(SELECT run FROM sweep_runs WHERE sweep = ?)",
                               COORD_BINDS(coord_int(jf_clock_wall_us()), coord_text(name)), err);
    if (rc == 0) {
        *ret_cancelled = (size_t) coord_db_changes(self->db);
    }
    return rc;
}

int coord_store_counts(coord_store_t *self, const char *name, coord_state_counts_t *ret_counts,
                       jf_err_t *err)
{
    static const char *const all = "SELECT state, count(*) FROM runs GROUP BY state";
    static const char *const one =
        "SELECT r.state, count(*) FROM runs r JOIN sweep_runs s ON s.run = r.id "
        "WHERE s.sweep = ? GROUP BY r.state";
    int64_t exists = 1;
    if (name && coord_store_scalar(self, "SELECT count(*) FROM sweeps WHERE name = ?",
                                   COORD_BINDS(coord_text(name)), &exists, err) != 0) {
        return -EIO;
    }
    if (!exists) {
        return jf_err_set(err, -ENOENT, "no sweep named '%s'", name);
    }
    coord_db_stmt_t *st = name ? coord_store_stmt(self, one, COORD_BINDS(coord_text(name)), err)
                               : coord_store_stmt(self, all, COORD_NO_BINDS, err);
    if (!st) {
        return -EIO;
    }
    coord_state_counts_t c = {0};
    int rc = 0;
    while ((rc = coord_db_step(st)) == COORD_DB_ROW) {
        coord_run_state_t s;
        if (coord_run_state_parse(coord_db_col_text(st, 0), &s)) {
            c.n[s] = (size_t) coord_db_col_int64(st, 1);
        }
    }
    coord_db_reset(st);
    if (rc != COORD_DB_DONE) {
        return coord_store_fail(self, err, "counting runs");
    }
    *ret_counts = c;
    return 0;
}

int coord_store_next_pending(coord_store_t *self, const char *board, jf_run_spec_t *ret_spec,
                             jf_err_t *err)
{
    return coord_store_spec_read(self, COORD_SPEC_SQL_NEXT, board, ret_spec, err);
}

int coord_store_run_spec(coord_store_t *self, const char *run, jf_run_spec_t *ret_spec,
                         jf_err_t *err)
{
    return coord_store_spec_read(self, COORD_SPEC_SQL_BY_ID, run, ret_spec, err);
}

static void s_row_from_stmt(coord_db_stmt_t *st, coord_run_row_t *row)
{
    *row = (coord_run_row_t){0};
    (void) snprintf(row->run, sizeof row->run, "%s", coord_db_col_text(st, 0));
    (void) snprintf(row->board, sizeof row->board, "%s", coord_db_col_text(st, 1));
    (void) coord_run_state_parse(coord_db_col_text(st, 2), &row->state);
    row->attempt = coord_db_col_int64(st, 3);
    row->acked_seq = coord_db_col_int64(st, 4);
    row->assigned_us = coord_db_col_int64(st, 5);
}

#define S_ROW_COLS "id, board, state, attempt, acked_seq, coalesce(assigned_us, 0)"

int coord_store_run_get(coord_store_t *self, const char *run, coord_run_row_t *ret_row,
                        jf_err_t *err)
{
    coord_db_stmt_t *st = coord_store_stmt(self, "SELECT " S_ROW_COLS " FROM runs WHERE id = ?",
                                           COORD_BINDS(coord_text(run)), err);
    if (!st) {
        return -EIO;
    }
    int rc = coord_db_step(st);
    int ret = 0;
    if (rc == COORD_DB_ROW) {
        s_row_from_stmt(st, ret_row);
    } else {
        ret = rc == COORD_DB_DONE ? -ENOENT : coord_store_fail(self, err, "reading a run");
    }
    coord_db_reset(st);
    return ret;
}

static int s_each_row(coord_store_t *self, coord_db_stmt_t *st, coord_run_row_fn fn, void *arg,
                      jf_err_t *err)
{
    if (!st) {
        return -EIO;
    }
    // Rows are collected first: fn may write to the store, which would disturb this cursor.
    size_t n = 0, cap = 0;
    coord_run_row_t *rows = NULL;
    int rc = 0;
    while ((rc = coord_db_step(st)) == COORD_DB_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            coord_run_row_t *grown = realloc(rows, cap * sizeof *rows);
            if (!grown) {
                free(rows);
                coord_db_reset(st);
                return jf_err_set(err, -ENOMEM, "store: out of memory listing runs");
            }
            rows = grown;
        }
        s_row_from_stmt(st, &rows[n++]);
    }
    coord_db_reset(st);
    int ret = rc == COORD_DB_DONE ? 0 : coord_store_fail(self, err, "listing runs");
    for (size_t i = 0; ret == 0 && i < n; i++) {
        fn(&rows[i], arg);
    }
    free(rows);
    return ret;
}

int coord_store_active_runs(coord_store_t *self, const char *board, coord_run_row_fn fn,
                            void *arg, jf_err_t *err)
{
    // Two statements, not "(?1 IS NULL OR board = ?1)": SQLite cannot use the index
    // runs_board_state for that, and every hello asks for one board's runs (a scan of the whole
    // table per hello made a 2,000-board fleet's re-registration quadratic).
    coord_db_stmt_t *st =
        board ? coord_store_stmt(self,
                                 "SELECT " S_ROW_COLS " FROM runs WHERE board = ? AND state IN "
                                 "('assigned', 'running') ORDER BY ord",
                                 COORD_BINDS(coord_text(board)), err)
              : coord_store_stmt(self,
                                 "SELECT " S_ROW_COLS " FROM runs WHERE state IN "
                                 "('assigned', 'running') ORDER BY ord",
                                 COORD_NO_BINDS, err);
    return s_each_row(self, st, fn, arg, err);
}

int coord_store_sweep_active_runs(coord_store_t *self, const char *sweep, coord_run_row_fn fn,
                                  void *arg, jf_err_t *err)
{
    coord_db_stmt_t *st = coord_store_stmt(self,
                                           "SELECT " S_ROW_COLS " FROM runs WHERE state IN "
                                           "('assigned', 'running') AND id IN (SELECT run FROM "
                                           "sweep_runs WHERE sweep = ?) ORDER BY ord",
                                           COORD_BINDS(coord_text(sweep)), err);
    return s_each_row(self, st, fn, arg, err);
}

// Runs an UPDATE that must change exactly one row; -ESTALE if the run was not in the expected
// state (a late or duplicate message).
static int s_update_one(coord_store_t *self, int rc, const char *run, const char *what,
                        jf_err_t *err)
{
    if (rc == 0 && coord_db_changes(self->db) != 1) {
        return jf_err_set(err, -ESTALE, "run %s: cannot %s in its current state", run, what);
    }
    return rc;
}

int coord_store_run_assign(coord_store_t *self, const char *run, int64_t *ret_attempt,
                           jf_err_t *err)
{
    int rc = coord_store_exec(self,
                              "UPDATE runs SET state = 'assigned', attempt = attempt + 1, "
                              "acked_seq = 0, assigned_us = ?, started_us = NULL, info = NULL "
                              "WHERE id = ? AND state = 'pending'",
                              COORD_BINDS(coord_int(jf_clock_wall_us()), coord_text(run)), err);
    rc = s_update_one(self, rc, run, "assign", err);
    rc = rc ? rc
            : coord_store_scalar(self, "SELECT attempt FROM runs WHERE id = ?",
                                 COORD_BINDS(coord_text(run)), ret_attempt, err);
    return rc;
}

int coord_store_run_start(coord_store_t *self, const char *run, int64_t attempt, jf_err_t *err)
{
    int rc = coord_store_exec(
        self,
        "UPDATE runs SET state = 'running', started_us = ? WHERE id = ? "
        "AND attempt = ? AND state = 'assigned'",
        COORD_BINDS(coord_int(jf_clock_wall_us()), coord_text(run), coord_int(attempt)), err);
    rc = s_update_one(self, rc, run, "start", err);
    return rc ? rc : coord_store_run_set_clock(self, run, attempt, err);
}

int coord_store_run_finish(coord_store_t *self, const char *run, int64_t attempt, bool done,
                           const char *reason, const char *detail, jf_err_t *err)
{
    int rc = coord_store_exec(
        self,
        "UPDATE runs SET state = ?, fail_reason = ?, fail_detail = ?, "
        "finished_us = ? WHERE id = ? AND attempt = ? AND state IN "
        "('assigned', 'running')",
        COORD_BINDS(coord_text(done ? "done" : "failed"), coord_text(done ? NULL : reason),
                    coord_text(done ? NULL : detail), coord_int(jf_clock_wall_us()),
                    coord_text(run), coord_int(attempt)),
        err);
    rc = s_update_one(self, rc, run, "finish", err);
    // Weight chunks that no assembly took (weights that did not check out, a run.failed or
    // run.reject after some) go with the attempt: the store keeps no half-blob.
    rc = rc ? rc : coord_store_weights_drop(self, run, attempt, err);
    return rc ? rc
              : coord_store_event(self, done ? "run.done" : "run.failed", NULL, run, attempt,
                                  done ? NULL : reason, err);
}

int coord_store_run_is_cancelled(coord_store_t *self, const char *run, bool *ret, jf_err_t *err)
{
    int64_t live_sweeps = 0;
    int rc = coord_store_scalar(self,
                                "SELECT count(*) FROM sweep_runs r JOIN sweeps s ON s.name = "
                                "r.sweep WHERE r.run = ? AND s.cancelled_us IS NULL",
                                COORD_BINDS(coord_text(run)), &live_sweeps, err);
    if (rc == 0) {
        *ret = live_sweeps == 0;
    }
    return rc;
}

// What becomes of a lost attempt: pending again, failed for lack of attempts (counted since the
// run was last submitted), or failed as cancelled when every sweep holding it was cancelled.
static int s_requeue_fate(coord_store_t *self, const char *run, int64_t attempt, int max_attempts,
                          const char **ret_reason, jf_err_t *err)
{
    int64_t base = 0;
    bool cancelled = false;
    int rc = coord_store_scalar(self, "SELECT attempt_base FROM runs WHERE id = ?",
                                COORD_BINDS(coord_text(run)), &base, err);
    rc = rc ? rc : coord_store_run_is_cancelled(self, run, &cancelled, err);
    if (rc == 0) {
        *ret_reason = cancelled                        ? "cancelled"
                      : attempt - base >= max_attempts ? "crashed"
                                                       : NULL;
    }
    return rc;
}

int coord_store_run_requeue(coord_store_t *self, const char *run, int64_t attempt,
                            int max_attempts, const char *why, bool *ret_failed, jf_err_t *err)
{
    const char *reason = NULL;
    char detail[256] = {0};
    (void) snprintf(detail, sizeof detail, "attempt %lld lost: %s", (long long) attempt, why);
    int rc = s_requeue_fate(self, run, attempt, max_attempts, &reason, err);
    rc = rc       ? rc
         : reason ? coord_store_exec(self,
                                     "UPDATE runs SET state = 'failed', fail_reason = ?, "
                                     "fail_detail = ?, finished_us = ? WHERE id = ? AND "
                                     "attempt = ? AND state IN ('assigned', 'running')",
                                     COORD_BINDS(coord_text(reason), coord_text(detail),
                                                 coord_int(jf_clock_wall_us()), coord_text(run),
                                                 coord_int(attempt)),
                                     err)
                  : coord_store_exec(self,
                                     "UPDATE runs SET state = 'pending' WHERE id = ? AND "
                                     "attempt = ? AND state IN ('assigned', 'running')",
                                     COORD_BINDS(coord_text(run), coord_int(attempt)), err);
    rc = rc ? rc : s_update_one(self, rc, run, "requeue", err);
    // The lost attempt's weight chunks go with it: the next attempt sends its own.
    rc = rc ? rc : coord_store_weights_drop(self, run, attempt, err);
    rc = rc ? rc : coord_store_event(self, reason ? "run.failed" : "run.requeued", NULL, run,
                                     attempt, detail, err);
    if (rc == 0) {
        *ret_failed = reason != NULL;
    }
    return rc;
}

int coord_store_run_set_acked(coord_store_t *self, const char *run, int64_t attempt, int64_t seq,
                              jf_err_t *err)
{
    return coord_store_exec(self, "UPDATE runs SET acked_seq = ? WHERE id = ? AND attempt = ?",
                            COORD_BINDS(coord_int(seq), coord_text(run), coord_int(attempt)), err);
}

int coord_store_run_set_info(coord_store_t *self, const char *run, int64_t attempt,
                             const char *info_json, jf_err_t *err)
{
    return coord_store_exec(self, "UPDATE runs SET info = ? WHERE id = ? AND attempt = ?",
                            COORD_BINDS(coord_text(info_json), coord_text(run), coord_int(attempt)),
                            err);
}
