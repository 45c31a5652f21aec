/* Store: idle baselines (coord_store_baseline.h, docs/baseline.md). The idle power of a phase is
 * its idle epoch's mean power (the epoch covers exactly the idle time), or the run's when the
 * epoch has none. */
#include "coord_store_baseline.h"

#include "coord_store_internal.h"

#include <errno.h>
#include <stdio.h>

// The newest done idle run per (board, power label, dvfs_off, telemetry_off).
static const char s_sql[] =
    "SELECT r.id, r.board, r.power_mode_id, r.power_mode, coalesce(r.power, r.power_mode),"
    " r.custom_cores IS NOT NULL, r.dvfs_off, r.telemetry_off, r.telemetry_hz, r.idle_s,"
    " coalesce(e.avg_power_mw, CAST(json_extract(r.measure, '$.energy.avg_power_mw') AS REAL)),"
    " coalesce(json_extract(r.measure, '$.energy.source'), ''),"
    " coalesce(CAST(json_extract(r.measure, '$.telemetry.samples') AS INTEGER), 0), r.finished_us"
    " FROM runs r LEFT JOIN epochs e ON e.run = r.id AND e.attempt = r.attempt AND e.epoch = 0"
    " WHERE r.board = ?1 AND r.idle_s > 0 AND r.state = 'done' AND r.id = (SELECT r2.id FROM runs"
    " r2 WHERE r2.board = r.board AND r2.idle_s > 0 AND r2.state = 'done' AND"
    " coalesce(r2.power, r2.power_mode) = coalesce(r.power, r.power_mode) AND"
    " r2.dvfs_off = r.dvfs_off AND r2.telemetry_off = r.telemetry_off"
    " ORDER BY r2.finished_us DESC, r2.id LIMIT 1)"
    " ORDER BY r.power_mode_id, r.custom_cores IS NOT NULL, r.power, r.dvfs_off, r.telemetry_off";

static void s_text(char *dst, size_t size, coord_db_stmt_t *st, int col)
{
    const char *t = coord_db_col_text(st, col);
    (void) snprintf(dst, size, "%s", t ? (const char *) t : "");
}

static void s_row(coord_db_stmt_t *st, coord_baseline_row_t *r)
{
    *r = (coord_baseline_row_t){0};
    s_text(r->run, sizeof r->run, st, 0);
    s_text(r->board, sizeof r->board, st, 1);
    r->power_mode_id = (int) coord_db_col_int64(st, 2);
    s_text(r->power_mode, sizeof r->power_mode, st, 3);
    s_text(r->power, sizeof r->power, st, 4);
    r->custom = coord_db_col_int64(st, 5) != 0;
    r->dvfs_off = coord_db_col_int64(st, 6) != 0;
    r->telemetry_off = coord_db_col_int64(st, 7) != 0;
    r->telemetry_hz = (int) coord_db_col_int64(st, 8);
    r->idle_s = (int) coord_db_col_int64(st, 9);
    r->has_power = !coord_db_col_is_null(st, 10);
    r->idle_power_mw = r->has_power ? coord_db_col_double(st, 10) : 0.0;
    s_text(r->source, sizeof r->source, st, 11);
    r->samples = coord_db_col_int64(st, 12);
    r->finished_us = coord_db_col_int64(st, 13);
}

int coord_store_baseline_each(coord_store_t *self, const char *board, coord_baseline_fn fn,
                              void *arg, jf_err_t *err)
{
    coord_db_stmt_t *st = coord_store_stmt(self, s_sql, COORD_BINDS(coord_text(board)), err);
    if (!st) {
        return -EIO;
    }
    int rc = 0, step = 0;
    while (rc == 0 && (step = coord_db_step(st)) == COORD_DB_ROW) {
        coord_baseline_row_t row;
        s_row(st, &row);
        rc = fn(&row, arg);
    }
    if (rc == 0 && step != COORD_DB_DONE) {
        rc = coord_store_fail(self, err, "reading the idle baseline");
    }
    coord_db_reset(st); // the statement stays cached; its error was reported above
    return rc;
}
