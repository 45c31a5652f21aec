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
        err, "tiiiiiiidddd", run, attempt, (int64_t) e->epoch, (int64_t) e->warmup,
        e->e2e_us, e->fetch_stall_us, e->compute_us, e->samples, s_loss(e->has_loss, e->loss),
        s_opt(e->has_energy, e->energy_mj), s_opt(e->has_energy, e->avg_power_mw),
        s_opt(e->has_energy && e->has_peak, e->peak_power_mw));
}

int coord_store_add_minibatch(coord_store_t *self, const char *run, int64_t attempt,
                              const jf_minibatch_rec_t *m, jf_err_t *err)
{
    return coord_store_exec(self,
                            "INSERT INTO minibatches(run, attempt, epoch, idx, samples, "
                            "fetch_stall_us, compute_us, loss) VALUES(?, ?, ?, ?, ?, ?, ?, ?) "
                            "ON CONFLICT DO NOTHING",
                            err, "tiiiiiid", run, attempt, (int64_t) m->epoch, m->index,
                            m->samples, m->fetch_stall_us, m->compute_us,
                            s_loss(m->has_loss, m->loss));
}

int coord_store_add_telemetry(coord_store_t *self, const char *run, int64_t attempt, int64_t seq,
                              int64_t index, int64_t t_us, const char *sample_json, jf_err_t *err)
{
    return coord_store_exec(self,
                            "INSERT INTO telemetry(run, attempt, seq, idx, t_us, sample) "
                            "VALUES(?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                            err, "tiiiit", run, attempt, seq, index, t_us, sample_json);
}

int coord_store_run_set_measure(coord_store_t *self, const char *run, int64_t attempt,
                                const char *measure_json, jf_err_t *err)
{
    return coord_store_exec(self, "UPDATE runs SET measure = ? WHERE id = ? AND attempt = ?", err,
                            "tti", measure_json, run, attempt);
}

int coord_store_epoch_set_cache(coord_store_t *self, const char *run, int64_t attempt,
                                const jf_measure_cache_t *cache, jf_err_t *err)
{
    return coord_store_exec(self,
                            "UPDATE epochs SET cache_resident_before = ?, cache_resident_after = ? "
                            "WHERE run = ? AND attempt = ? AND epoch = ?",
                            err, "ddtii", s_opt(cache->has_before, cache->before),
                            s_opt(cache->has_after, cache->after), run, attempt,
                            (int64_t) cache->epoch);
}

int coord_store_count_epochs(coord_store_t *self, const char *run, int64_t attempt,
                             int64_t *ret_count, jf_err_t *err)
{
    return coord_store_scalar(self, "SELECT count(*) FROM epochs WHERE run = ? AND attempt = ?",
                              ret_count, err, "ti", run, attempt);
}
