/* Store: a sweep's measured epochs as coord_obs_t records for the analysis (coord_obs.h). */
#include "coord_store_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

// Done runs of the sweep, their last attempt's non-warm-up epochs. The operating point is the
// run's custom point where it has one, else what the agent read back after setting the mode
// (the measure record's power_mode: cores online, the highest cluster maximum, the GPU maximum,
// the EMC cap). Rows come in run order, then epoch.
static const char s_obs_sql[] =
    "SELECT r.id, r.board, coalesce(b.type, ''), coalesce(b.platform, ''), r.workload,"
    " r.storage, coalesce(r.power, r.power_mode), r.workers, r.batch_size, r.repeat, r.dvfs_off,"
    " e.attempt, e.epoch,"
    " coalesce(r.custom_cores, json_array_length(r.measure, '$.power_mode.online_cpus')),"
    " coalesce(r.custom_cpu_hz, (SELECT max(CAST(json_extract(c.value, '$.max_hz') AS INTEGER))"
    "   FROM json_each(r.measure, '$.power_mode.cpu_clusters') AS c)),"
    " coalesce(r.custom_gpu_hz,"
    "  CAST(json_extract(r.measure, '$.power_mode.gpu_max_hz') AS INTEGER)),"
    " coalesce(r.custom_emc_hz,"
    "  CAST(json_extract(r.measure, '$.power_mode.emc_cap_hz') AS INTEGER)),"
    " e.e2e_us, e.fetch_stall_us, e.compute_us, e.energy_mj, e.avg_power_mw, e.samples,"
    " coalesce(nullif(r.runtime, ''), 'bare')"
    " FROM sweep_runs AS s JOIN runs AS r ON r.id = s.run"
    " LEFT JOIN boards AS b ON b.name = r.board"
    " JOIN epochs AS e ON e.run = r.id AND e.attempt = r.attempt"
    " WHERE s.sweep = ?1 AND r.state = 'done' AND e.warmup = 0"
    " ORDER BY s.ord, e.epoch";

static void s_copy_text(char *dst, size_t size, coord_db_stmt_t *st, int col)
{
    const char *t = coord_db_col_text(st, col);
    snprintf(dst, size, "%s", t ? (const char *) t : "");
}

static void s_row(coord_db_stmt_t *st, const char *sweep, coord_obs_t *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->sweep, sizeof o->sweep, "%s", sweep);
    char *texts[] = {o->run,      o->board,   o->board_type, o->platform,
                     o->workload, o->storage, o->power_mode};
    for (int i = 0; i < 7; i++) {
        s_copy_text(texts[i], COORD_OBS_NAME_MAX + 1, st, i);
    }
    o->workers = (int) coord_db_col_int64(st, 7);
    o->batch_size = (int) coord_db_col_int64(st, 8);
    o->repeat = (int) coord_db_col_int64(st, 9);
    o->dvfs_off = coord_db_col_int64(st, 10) != 0;
    o->attempt = coord_db_col_int64(st, 11);
    o->epoch = (int) coord_db_col_int64(st, 12);
    o->has_op = true;
    for (int c = 13; c <= 16; c++) {
        o->has_op = o->has_op && !coord_db_col_is_null(st, c);
    }
    if (o->has_op) {
        o->cores = (int) coord_db_col_int64(st, 13);
        o->cpu_hz = coord_db_col_int64(st, 14);
        o->gpu_hz = coord_db_col_int64(st, 15);
        o->emc_hz = coord_db_col_int64(st, 16);
    }
    o->e2e_us = coord_db_col_int64(st, 17);
    o->fetch_stall_us = coord_db_col_int64(st, 18);
    o->compute_us = coord_db_col_int64(st, 19);
    o->has_energy = !coord_db_col_is_null(st, 20) && !coord_db_col_is_null(st, 21);
    if (o->has_energy) {
        o->energy_mj = coord_db_col_double(st, 20);
        o->avg_power_mw = coord_db_col_double(st, 21);
    }
    o->samples = coord_db_col_int64(st, 22);
    s_copy_text(o->runtime, sizeof o->runtime, st, 23);
}

int coord_store_sweep_exists(coord_store_t *self, const char *sweep, jf_err_t *err)
{
    int64_t n = 0;
    int rc = coord_store_scalar(self, "SELECT count(*) FROM sweeps WHERE name = ?",
                                COORD_BINDS(coord_text(sweep)), &n, err);
    if (rc == 0 && n == 0) {
        return jf_err_set(err, -ENOENT, "no sweep named '%s'", sweep);
    }
    return rc;
}

int coord_store_obs_each(coord_store_t *self, const char *sweep, coord_obs_fn fn, void *arg,
                         jf_err_t *err)
{
    int rc = coord_store_sweep_exists(self, sweep, err);
    coord_db_stmt_t *st =
        rc == 0 ? coord_store_stmt(self, s_obs_sql, COORD_BINDS(coord_text(sweep)), err) : NULL;
    if (rc != 0 || !st) {
        return rc != 0 ? rc : -EIO;
    }
    int step;
    coord_obs_t o;
    while (rc == 0 && (step = coord_db_step(st)) == COORD_DB_ROW) {
        s_row(st, sweep, &o);
        rc = fn(&o, arg);
    }
    if (rc == 0 && step != COORD_DB_DONE) {
        rc = coord_store_fail(self, err, "reading a sweep's epochs");
    }
    coord_db_reset(st); // the statement stays cached; its error was reported above
    return rc;
}
