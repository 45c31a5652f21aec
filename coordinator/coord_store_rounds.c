/* Federated rounds' records in the store (docs/rounds.md "Records"). */
#include "coord_store_rounds.h"
#include "coord_store_internal.h"

#include "jf_units.h"

#include <errno.h>
#include <math.h>
#include <string.h>

int coord_store_fl_rounds_begin(coord_store_t *self, const coord_fl_rounds_t *r, int64_t *ret_id,
                                jf_err_t *err)
{
    int64_t id = 0;
    int rc = coord_store_scalar(
        self,
        "INSERT INTO fl_rounds(name, file, policy, straggler, rounds, workload, batch_size,"
        " timeout_us, started_us, state) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, 'running')"
        " RETURNING id",
        COORD_BINDS(coord_text(r->name), coord_text(r->file), coord_text(r->policy),
                    coord_text(r->straggler), coord_int(r->rounds), coord_text(r->workload),
                    coord_int(r->batch_size), coord_int(r->timeout_us),
                    coord_int(jf_clock_wall_us())),
        &id, err);
    if (rc == 0) {
        *ret_id = id;
    }
    return rc == -ENOENT ? jf_err_set(err, -EIO, "%s: starting rounds: no id returned", self->path)
                         : rc;
}

int coord_store_fl_rounds_end(coord_store_t *self, int64_t id, const char *state,
                              const char *detail, jf_err_t *err)
{
    return coord_store_exec(
        self, "UPDATE fl_rounds SET state = ?, detail = ?, finished_us = ? WHERE id = ?",
        COORD_BINDS(coord_text(state), coord_text(detail), coord_int(jf_clock_wall_us()),
                    coord_int(id)),
        err);
}

static const char *s_or_null(const char *text)
{
    return text && text[0] ? text : NULL;
}

int coord_store_fl_round_put(coord_store_t *self, const coord_fl_round_t *r, jf_err_t *err)
{
    return coord_store_exec(
        self,
        "INSERT INTO fl_round(rounds, round, init_blob, avg_blob, boards, boards_in,"
        " samples, loss, round_s, spread_s, spread_pct, energy_j, simulated, started_us,"
        " finished_us) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(rounds, round) DO UPDATE SET init_blob = excluded.init_blob,"
        " avg_blob = excluded.avg_blob, boards = excluded.boards,"
        " boards_in = excluded.boards_in, samples = excluded.samples, loss = excluded.loss,"
        " round_s = excluded.round_s, spread_s = excluded.spread_s,"
        " spread_pct = excluded.spread_pct, energy_j = excluded.energy_j,"
        " simulated = excluded.simulated, started_us = excluded.started_us,"
        " finished_us = excluded.finished_us",
        COORD_BINDS(coord_int(r->rounds), coord_int(r->round), coord_text(s_or_null(r->init_blob)),
                    coord_text(s_or_null(r->avg_blob)), coord_int(r->boards),
                    coord_int(r->boards_in), coord_int(r->samples), coord_real(r->loss),
                    coord_real(r->round_s), coord_real(r->spread_s), coord_real(r->spread_pct),
                    coord_real(r->energy_j), coord_int(r->simulated ? 1 : 0),
                    coord_int(r->started_us), coord_int(r->finished_us)),
        err);
}

int coord_store_fl_board_put(coord_store_t *self, const coord_fl_board_t *b, jf_err_t *err)
{
    return coord_store_exec(
        self,
        "INSERT INTO fl_round_board(rounds, round, board, run, status, simulated, mode,"
        " minibatches, samples, loss, start_s, finish_s, idle_s, energy_j, pred_s, pred_j, blob,"
        " detail) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(rounds, round, board) DO UPDATE SET run = excluded.run,"
        " status = excluded.status, simulated = excluded.simulated, mode = excluded.mode,"
        " minibatches = excluded.minibatches, samples = excluded.samples, loss = excluded.loss,"
        " start_s = excluded.start_s, finish_s = excluded.finish_s, idle_s = excluded.idle_s,"
        " energy_j = excluded.energy_j, pred_s = excluded.pred_s, pred_j = excluded.pred_j,"
        " blob = excluded.blob, detail = excluded.detail",
        COORD_BINDS(coord_int(b->rounds), coord_int(b->round), coord_text(b->board),
                    coord_text(s_or_null(b->run)), coord_text(b->status),
                    coord_int(b->simulated ? 1 : 0), coord_text(s_or_null(b->mode)),
                    coord_int(b->minibatches), coord_int(b->samples), coord_real(b->loss),
                    coord_real(b->start_s), coord_real(b->finish_s), coord_real(b->idle_s),
                    coord_real(b->energy_j), coord_real(b->pred_s), coord_real(b->pred_j),
                    coord_text(s_or_null(b->blob)), coord_text(s_or_null(b->detail))),
        err);
}

int coord_store_fl_run_facts(coord_store_t *self, const char *run, int64_t attempt,
                             coord_fl_run_facts_t *ret, jf_err_t *err)
{
    coord_db_stmt_t *st = coord_store_stmt(
        self,
        "SELECT count(*), sum(samples), sum(e2e_us), count(energy_mj), sum(energy_mj),"
        " (SELECT loss FROM epochs x WHERE x.run = ?1 AND x.attempt = ?2 ORDER BY x.epoch DESC"
        " LIMIT 1) FROM epochs WHERE run = ?1 AND attempt = ?2",
        COORD_BINDS(coord_text(run), coord_int(attempt)), err);
    if (!st) {
        return -EIO;
    }
    int rc = coord_db_step(st);
    int ret_rc = 0;
    if (rc != COORD_DB_ROW) {
        ret_rc = coord_store_fail(self, err, "reading a run's epochs");
    } else if (coord_db_col_int64(st, 0) == 0) {
        ret_rc = jf_err_set(err, -ENOENT, "run %s attempt %lld has no epoch records", run,
                            (long long) attempt);
    } else {
        int64_t n = coord_db_col_int64(st, 0);
        *ret = (coord_fl_run_facts_t){
            .samples = coord_db_col_int64(st, 1),
            .time_us = coord_db_col_int64(st, 2),
            .has_energy = coord_db_col_int64(st, 3) == n,
            .energy_mj = coord_db_col_double(st, 4),
            .has_loss = !coord_db_col_is_null(st, 5),
            .loss = !coord_db_col_is_null(st, 5) ? coord_db_col_double(st, 5) : NAN,
        };
    }
    coord_db_reset(st);
    return ret_rc;
}

int coord_store_fl_rounds_exists(coord_store_t *self, int64_t id, jf_err_t *err)
{
    int64_t n = 0;
    int rc = coord_store_scalar(self, "SELECT count(*) FROM fl_rounds WHERE id = ?",
                                COORD_BINDS(coord_int(id)), &n, err);
    if (rc == 0 && n == 0) {
        rc = jf_err_set(err, -ENOENT, "no rounds run %lld in the store", (long long) id);
    }
    return rc;
}
