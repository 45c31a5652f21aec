/* Store: bare against container runs (coord_store_runtime.h, docs/containers.md). Epoch figures
 * leave the warm-up epoch 0 out when a run has more than one; utilisation is the mean over the
 * run's telemetry samples (telemetry_json), absent when retention left none. */
#include "coord_store_runtime.h"

#include "coord_store_internal.h"

#include <errno.h>
#include <stdio.h>

#define S_EPOCHS(x)                                                                                \
    "FROM epochs e WHERE e.run = r.id AND e.attempt = r.attempt AND e.epoch >= min(1, r.epochs - " \
    "1)) AS " x
#define S_SAMPLES(key, x)                                                                          \
    "(SELECT avg(CAST(json_extract(t.sample, '$." key "') AS REAL)) FROM telemetry_json t "        \
    "WHERE t.run = r.id AND t.attempt = r.attempt) AS " x

static const char s_sql[] =
    "WITH m AS (SELECT r.id, r.board, r.workload, coalesce(r.power, r.power_mode) AS power,"
    " r.storage, r.workers, r.batch_size, r.prefetch, r.threads, r.epochs, r.repeat, r.seed,"
    " r.drop_caches, r.telemetry_hz, r.timeout_us, r.power_mode_id, r.dvfs_off,"
    " coalesce(r.idle_s, 0) AS idle_s, coalesce(r.telemetry_off, 0) AS tel_off,"
    " coalesce(nullif(r.runtime, ''), 'bare') AS runtime,"
    " (r.finished_us - r.started_us) / 1e6 AS run_s,"
    " (SELECT avg(e.e2e_us) / 1e6 " S_EPOCHS(
        "e2e_s") ","
                 " (SELECT avg(e.energy_mj) " S_EPOCHS(
                     "energy_mj") ","
                                  " " S_SAMPLES("cpu_load_pct", "cpu") ", " S_SAMPLES(
                                      "gpu_load_pct",
                                      "gpu") ","
                                             " " S_SAMPLES(
                                                 "ram_used_bytes",
                                                 "ram") " FROM runs r WHERE r.state = 'done' AND "
                                                        "r.id IN"
                                                        " (SELECT run FROM sweep_runs WHERE sweep "
                                                        "= ?1))"
                                                        " SELECT b.board, b.workload, b.power, "
                                                        "b.workers, b.batch_size, b.repeat,"
                                                        " b.id, b.e2e_s, b.run_s, b.energy_mj, "
                                                        "b.cpu, b.gpu, b.ram,"
                                                        " c.id, c.e2e_s, c.run_s, c.energy_mj, "
                                                        "c.cpu, c.gpu, c.ram"
                                                        " FROM m b JOIN m c ON b.runtime = 'bare' "
                                                        "AND c.runtime = 'container' AND c.board = "
                                                        "b.board"
                                                        " AND c.workload = b.workload AND c.power "
                                                        "= b.power AND c.storage = b.storage"
                                                        " AND c.workers = b.workers AND "
                                                        "c.batch_size = b.batch_size AND "
                                                        "c.prefetch = b.prefetch"
                                                        " AND c.threads = b.threads AND c.epochs = "
                                                        "b.epochs AND c.repeat = b.repeat"
                                                        " AND c.seed = b.seed AND c.drop_caches = "
                                                        "b.drop_caches AND c.telemetry_hz = "
                                                        "b.telemetry_hz"
                                                        " AND c.timeout_us = b.timeout_us AND "
                                                        "c.power_mode_id = b.power_mode_id"
                                                        " AND c.dvfs_off = b.dvfs_off AND c.idle_s "
                                                        "= b.idle_s AND c.tel_off = b.tel_off"
                                                        " ORDER BY b.board, b.workload, b.power, "
                                                        "b.workers, b.batch_size, b.repeat";

static void s_text(char *dst, size_t size, coord_db_stmt_t *st, int col)
{
    const char *t = coord_db_col_text(st, col);
    (void) snprintf(dst, size, "%s", t ? (const char *) t : "");
}

static void s_real(coord_db_stmt_t *st, int col, bool *ret_has, double *ret_v)
{
    *ret_has = !coord_db_col_is_null(st, col);
    *ret_v = *ret_has ? coord_db_col_double(st, col) : 0.0;
}

// One side from column col on: id, e2e_s, run_s, energy_mj, cpu, gpu, ram.
static void s_side(coord_db_stmt_t *st, int col, coord_runtime_side_t *s)
{
    s_text(s->run, sizeof s->run, st, col);
    s_real(st, col + 1, &s->has_e2e, &s->e2e_s);
    s_real(st, col + 2, &s->has_run, &s->run_s);
    s_real(st, col + 3, &s->has_energy, &s->energy_mj);
    s_real(st, col + 4, &s->has_cpu, &s->cpu_pct);
    s_real(st, col + 5, &s->has_gpu, &s->gpu_pct);
    s_real(st, col + 6, &s->has_ram, &s->ram_bytes);
}

int coord_store_runtime_pairs(coord_store_t *self, const char *sweep, coord_runtime_pair_fn fn,
                              void *arg, jf_err_t *err)
{
    coord_db_stmt_t *st = coord_store_stmt(self, s_sql, COORD_BINDS(coord_text(sweep)), err);
    if (!st) {
        return -EIO;
    }
    int rc = 0, step = 0;
    while (rc == 0 && (step = coord_db_step(st)) == COORD_DB_ROW) {
        coord_runtime_pair_t p = {0};
        s_text(p.board, sizeof p.board, st, 0);
        s_text(p.workload, sizeof p.workload, st, 1);
        s_text(p.power, sizeof p.power, st, 2);
        p.workers = (int) coord_db_col_int64(st, 3);
        p.batch_size = (int) coord_db_col_int64(st, 4);
        p.repeat = (int) coord_db_col_int64(st, 5);
        s_side(st, 6, &p.bare);
        s_side(st, 13, &p.container);
        rc = fn(&p, arg);
    }
    if (rc == 0 && step != COORD_DB_DONE) {
        rc = coord_store_fail(self, err, "reading bare and container runs");
    }
    coord_db_reset(st); // the statement stays cached; its error was reported above
    return rc;
}
