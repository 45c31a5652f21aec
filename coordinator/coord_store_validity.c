/* Store: what the measurement-validity check reads about each done run of a sweep
 * (coord_run_facts.h). The rules themselves live in analysis/coord_validity.c. */
#include "coord_store_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

// Done runs of the sweep in sweep order, with their board's type and platform.
static const char s_facts_sql[] =
    "SELECT r.id, r.board, coalesce(b.type, ''), coalesce(b.platform, ''), r.power_mode,"
    " r.power_mode_id, r.telemetry_hz, r.clock_offset_us, r.measure,"
    " r.custom_cores IS NOT NULL, coalesce(r.roofline, 0), coalesce(r.idle_s, 0),"
    " coalesce(r.concurrent_infer_model, '') != '', coalesce(r.runtime, '')"
    " FROM sweep_runs AS s JOIN runs AS r ON r.id = s.run"
    " LEFT JOIN boards AS b ON b.name = r.board"
    " WHERE s.sweep = ?1 AND r.state = 'done'"
    " ORDER BY s.ord";

static void s_copy_text(char *dst, size_t size, coord_db_stmt_t *st, int col)
{
    const char *t = coord_db_col_text(st, col);
    snprintf(dst, size, "%s", t ? (const char *) t : "");
}

static void s_row(coord_db_stmt_t *st, coord_run_facts_t *f)
{
    memset(f, 0, sizeof *f);
    char *texts[] = {f->run, f->board, f->board_type, f->platform, f->power_mode};
    for (int i = 0; i < 5; i++) {
        s_copy_text(texts[i], COORD_OBS_NAME_MAX + 1, st, i);
    }
    f->power_mode_id = (int) coord_db_col_int64(st, 5);
    f->telemetry_hz = (int) coord_db_col_int64(st, 6);
    f->has_clock_offset = !coord_db_col_is_null(st, 7);
    f->clock_offset_us = f->has_clock_offset ? coord_db_col_int64(st, 7) : 0;
    f->measure_json = coord_db_col_text(st, 8);
    f->custom = coord_db_col_int64(st, 9) != 0;
    f->roofline = coord_db_col_int64(st, 10) != 0;
    f->idle_s = (int) coord_db_col_int64(st, 11);
    f->concurrent = coord_db_col_int64(st, 12) != 0;
    s_copy_text(f->runtime, sizeof f->runtime, st, 13);
}

int coord_store_run_facts_each(coord_store_t *self, const char *sweep, coord_run_facts_fn fn,
                               void *arg, jf_err_t *err)
{
    int rc = coord_store_sweep_exists(self, sweep, err);
    coord_db_stmt_t *st =
        rc == 0 ? coord_store_stmt(self, s_facts_sql, COORD_BINDS(coord_text(sweep)), err) : NULL;
    if (rc != 0 || !st) {
        return rc != 0 ? rc : -EIO;
    }
    int step;
    coord_run_facts_t f;
    while (rc == 0 && (step = coord_db_step(st)) == COORD_DB_ROW) {
        s_row(st, &f);
        rc = fn(&f, arg);
    }
    if (rc == 0 && step != COORD_DB_DONE) {
        rc = coord_store_fail(self, err, "reading a sweep's runs for the validity check");
    }
    coord_db_reset(st); // the statement stays cached; its error was reported above
    return rc;
}
