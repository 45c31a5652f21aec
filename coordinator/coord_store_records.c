/* Store: per-attempt records (epochs, minibatches, telemetry). Inserts are idempotent, so a
 * retransmitted message never duplicates a row. */
#include "coord_store_internal.h"

#include <math.h>

static double s_loss(bool has, double loss)
{
    return has ? loss : NAN; // NaN binds as NULL in SQLite: an absent loss stays absent
}

// A figure that was not measured binds as NULL.
static double s_opt(bool has, double value)
{
    return has ? value : NAN;
}

int coord_store_add_epoch(coord_store_t *self, const char *run, int64_t attempt,
                          const jf_epoch_rec_t *e, jf_err_t *err)
{
    return coord_store_exec(
        self,
        "INSERT INTO epochs(run, attempt, epoch, warmup, e2e_us, fetch_stall_us, compute_us, "
        "samples, loss, energy_mj, avg_power_mw, peak_power_mw) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, ?) ON CONFLICT DO NOTHING",
        COORD_BINDS(coord_text(run), coord_int(attempt), coord_int((int64_t)e->epoch),
                    coord_int((int64_t)e->warmup), coord_int(e->e2e_us),
                    coord_int(e->fetch_stall_us), coord_int(e->compute_us), coord_int(e->samples),
                    coord_real(s_loss(e->has_loss, e->loss)),
                    coord_real(s_opt(e->has_energy, e->energy_mj)),
                    coord_real(s_opt(e->has_energy, e->avg_power_mw)),
                    coord_real(s_opt(e->has_energy && e->has_peak, e->peak_power_mw))),
        err);
}

int coord_store_add_minibatch(coord_store_t *self, const char *run, int64_t attempt,
                              const jf_minibatch_rec_t *m, jf_err_t *err)
{
    return coord_store_exec(
        self,
        "INSERT INTO minibatches(run, attempt, epoch, idx, samples, "
        "fetch_stall_us, compute_us, loss) VALUES(?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        COORD_BINDS(coord_text(run), coord_int(attempt), coord_int((int64_t)m->epoch),
                    coord_int(m->index), coord_int(m->samples), coord_int(m->fetch_stall_us),
                    coord_int(m->compute_us), coord_real(s_loss(m->has_loss, m->loss))),
        err);
}

int coord_store_add_telemetry(coord_store_t *self, const char *run, int64_t attempt, int64_t seq,
                              int64_t index, int64_t t_us, const char *sample_json, jf_err_t *err)
{
    return coord_store_exec(self,
                            "INSERT INTO telemetry(run, attempt, seq, idx, t_us, sample) "
                            "VALUES(?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                            COORD_BINDS(coord_text(run), coord_int(attempt), coord_int(seq),
                                        coord_int(index), coord_int(t_us), coord_text(sample_json)),
                            err);
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
