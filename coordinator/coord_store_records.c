/* Store: per-attempt records (epochs, minibatches; telemetry is coord_store_telemetry.c's).
 * Inserts are idempotent, so a retransmitted message never duplicates a row. Epoch and
 * minibatch columns come from their schema tables (coord_store_spec.c). */
#include "coord_store_internal.h"

#include <math.h>

// A figure that was not measured binds as NULL (SQLite binds NaN as NULL).
static double s_opt(bool has, double value)
{
    return has ? value : NAN;
}

int coord_store_add_epoch(coord_store_t *self, const char *run, int64_t attempt,
                          const jf_epoch_rec_t *e, jf_err_t *err)
{
    jf_epoch_rec_t rec = *e;
    rec.has_peak = rec.has_peak && rec.has_energy; // a peak only with the energy it belongs to
    return coord_store_rec_insert(self, COORD_SPEC_SQL_EPOCH,
                                  COORD_BINDS(coord_text(run), coord_int(attempt)), &rec,
                                  COORD_NO_BINDS, err);
}

int coord_store_add_minibatch(coord_store_t *self, const char *run, int64_t attempt,
                              const jf_minibatch_rec_t *m, jf_err_t *err)
{
    return coord_store_rec_insert(self, COORD_SPEC_SQL_MINIBATCH,
                                  COORD_BINDS(coord_text(run), coord_int(attempt)), m,
                                  COORD_NO_BINDS, err);
}

int coord_store_run_set_measure(coord_store_t *self, const char *run, int64_t attempt,
                                const char *measure_json, jf_err_t *err)
{
    return coord_store_exec(
        self, "UPDATE runs SET measure = ? WHERE id = ? AND attempt = ?",
        COORD_BINDS(coord_text(measure_json), coord_text(run), coord_int(attempt)), err);
}

int coord_store_epoch_set_cache(coord_store_t *self, const char *run, int64_t attempt,
                                const jf_measure_cache_t *cache, jf_err_t *err)
{
    return coord_store_exec(self,
                            "UPDATE epochs SET cache_resident_before = ?, cache_resident_after = ? "
                            "WHERE run = ? AND attempt = ? AND epoch = ?",
                            COORD_BINDS(coord_real(s_opt(cache->has_before, cache->before)),
                                        coord_real(s_opt(cache->has_after, cache->after)),
                                        coord_text(run), coord_int(attempt),
                                        coord_int((int64_t)cache->epoch)),
                            err);
}

int coord_store_count_epochs(coord_store_t *self, const char *run, int64_t attempt,
                             int64_t *ret_count, jf_err_t *err)
{
    return coord_store_scalar(self, "SELECT count(*) FROM epochs WHERE run = ? AND attempt = ?",
                              COORD_BINDS(coord_text(run), coord_int(attempt)), ret_count, err);
}
