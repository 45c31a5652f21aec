/* Run records as jansson values: each line is built, dumped compactly with "\n" and flushed at
 * once (the agent reads them as they come); a copy without "kind" is kept for the final document.
 * The epoch and minibatch lines are the wire records' encoders (common/jf_msg_run_records.c,
 * docs/schema.md) plus the trainer's own members, so durations are int64 microseconds on the
 * lines as inside and on the wire; only people's tools convert. */
#include "train_records.h"

#include "jf_msg_run.h"
#include "jf_units.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TRAIN_RECORDS_DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(TRAIN_RECORDS_REAL_DIGITS))

struct train_records {
    FILE *out;              // borrowed; the line stream
    json_t *start;          // owned; the start line
    json_t *params;         // owned; the parameters for the final document
    json_t *epochs;         // owned; completed epoch records
    json_t *minibatches;    // owned; minibatch records of the current epoch
    int epoch;              // current epoch number
    int64_t stall_sum_us;   // current epoch: sum of fetch stalls
    int64_t compute_sum_us; // current epoch: sum of compute times
    size_t samples;         // current epoch: samples seen
    double loss_sum;        // current epoch: sum of loss * samples
    json_t *mark;           // owned; a simulated run's {"platform", "sim_speed"}, else NULL
    jf_epoch_rec_t work;    // current epoch: a roofline run's bench and work (train_records_
                            // epoch_work), a concurrent run's inference (train_records_epoch_
                            // concurrent); bench "", has_work and has_concurrent false otherwise
};

static int s_emit(FILE *out, const json_t *line, jf_err_t *err)
{
    char *text = json_dumps(line, TRAIN_RECORDS_DUMP_FLAGS);
    if (!text) {
        return jf_err_set(err, -ENOMEM, "records: out of memory");
    }
    bool ok = fputs(text, out) >= 0 && fputc('\n', out) != EOF && fflush(out) == 0;
    free(text);
    if (!ok) {
        return jf_err_set(err, -EIO, "records: writing a record line failed: %s", strerror(errno));
    }
    return 0;
}

// Emits line (with the simulation's mark, if any), after keeping a copy without "kind" and the
// mark in array (if not NULL): the document says once, in its params, that the run is simulated.
// Takes line's reference.
static int s_emit_and_keep(train_records_t *self, json_t *line, json_t *array, jf_err_t *err)
{
    if (!line) {
        return jf_err_set(err, -ENOMEM, "records: out of memory");
    }
    int rc = 0;
    if (array) {
        json_t *kept = json_copy(line);
        (void)json_object_del(kept, "kind"); // always present; a NULL copy is caught below
        if (!kept || json_array_append_new(array, kept) < 0) {
            rc = jf_err_set(err, -ENOMEM, "records: out of memory");
        }
    }
    if (rc == 0 && self->mark && json_object_update(line, self->mark) < 0) {
        rc = jf_err_set(err, -ENOMEM, "records: out of memory");
    }
    rc = rc < 0 ? rc : s_emit(self->out, line, err);
    json_decref(line);
    return rc;
}

// {rail: mW, ...}, or NULL if out of memory.
static json_t *s_pack_power(const train_records_power_t *power)
{
    json_t *obj = json_object();
    for (size_t i = 0; obj && i < power->n_rails; i++) {
        if (json_object_set_new(obj, power->names[i], json_integer(power->power_mw[i])) < 0) {
            json_decref(obj);
            obj = NULL;
        }
    }
    return obj;
}

// {"gpu_pct", "cpu_busy_cores"}: the model's load over the same span, or NULL if out of memory.
static json_t *s_pack_load(const train_records_power_t *power)
{
    return json_pack("{s:f, s:f}", "gpu_pct", power->gpu_load_pct, "cpu_busy_cores",
                     power->cpu_busy_cores);
}

// The start line of a simulated run: no torch, so no device, threads, BLAS or version.
static json_t *s_pack_start_sim(const train_records_params_t *p, const train_records_sim_t *sim)
{
    return json_pack(
        "{s:s, s:s, s:s, s:I, s:I, s:i, s:i, s:I, s:i, s:I, s:s, s:f, s:s, s:s, s:I,"
        " s:i, s:s, s:s, s:f, s:f, s:o, s:o}",
        "kind", "start", "model", p->model, "dataset", p->dataset, "samples",
        (json_int_t)p->samples, "batches_per_epoch", (json_int_t)p->batches_per_epoch, "workers",
        p->workers, "prefetch", p->prefetch, "batch", (json_int_t)p->batch, "epochs", p->epochs,
        "seed", (json_int_t)p->seed, "platform", "sim", "sim_speed", sim->speed, "sim_board_type",
        sim->board_type, "sim_board", sim->board, "sim_seed", (json_int_t)sim->fleet_seed,
        "sim_power_mode_id", sim->power_mode_id, "sim_power_mode", sim->power_mode, "sim_medium",
        sim->medium, "sim_scale", sim->scale, "sim_cache_resident", sim->cache_resident,
        "sim_power_mw", s_pack_power(&sim->power), "sim_load", s_pack_load(&sim->power));
}

static json_t *s_pack_start(const train_records_params_t *p)
{
    if (p->sim) {
        json_t *start = s_pack_start_sim(p, p->sim);
        if (start && p->sim->trains &&
            json_object_set_new(start, "sim_trains", json_string("cpu")) != 0) {
            json_decref(start);
            return NULL;
        }
        return start;
    }
    return json_pack("{s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:I, s:I, s:i, s:i, s:I, s:i, s:I}",
                     "kind", "start", "model", p->model, "dataset", p->dataset, "device", p->device,
                     "threads", p->threads, "blas", p->blas, "torch_version", p->torch_version,
                     "samples", (json_int_t)p->samples, "batches_per_epoch",
                     (json_int_t)p->batches_per_epoch, "workers", p->workers, "prefetch",
                     p->prefetch, "batch", (json_int_t)p->batch, "epochs", p->epochs, "seed",
                     (json_int_t)p->seed);
}

static int s_check_params(const train_records_params_t *params, jf_err_t *err)
{
    const train_records_sim_t *sim = params->sim;
    if (params->seed > INT64_MAX || (sim && sim->fleet_seed > INT64_MAX)) {
        return jf_err_set(
            err, -EINVAL, "records: seed %llu above %lld",
            (unsigned long long)(params->seed > INT64_MAX ? params->seed : sim->fleet_seed),
            (long long)INT64_MAX);
    }
    if (sim && sim->power.n_rails > TRAIN_RECORDS_RAILS_MAX) {
        return jf_err_set(err, -EINVAL, "records: %zu power rails, at most %d", sim->power.n_rails,
                          TRAIN_RECORDS_RAILS_MAX);
    }
    return 0;
}

// The mark of every line of a simulated run but its start, which says more.
static json_t *s_pack_mark(const train_records_sim_t *sim)
{
    return json_pack("{s:s, s:f}", "platform", "sim", "sim_speed", sim->speed);
}

train_records_t *train_records_new(const train_records_params_t *params, FILE *out, jf_err_t *err)
{
    if (s_check_params(params, err) < 0) {
        return NULL;
    }
    train_records_t *self = calloc(1, sizeof *self);
    if (!self) {
        (void)jf_err_set(err, -ENOMEM, "records: out of memory");
        return NULL;
    }
    self->out = out;
    self->start = s_pack_start(params);
    self->params = self->start ? json_copy(self->start) : NULL;
    self->epochs = json_array();
    self->minibatches = json_array();
    self->mark = params->sim ? s_pack_mark(params->sim) : NULL;
    if (!self->params || !self->epochs || !self->minibatches || (params->sim && !self->mark) ||
        json_object_del(self->params, "kind") < 0 ||
        json_object_set_new(self->params, "drop_last", json_boolean(params->drop_last)) < 0 ||
        json_object_set_new(self->params, "loader_only", json_boolean(params->loader_only)) < 0) {
        (void)jf_err_set(err, -ENOMEM, "records: out of memory");
        train_records_destroy(&self);
    }
    return self;
}

void train_records_destroy(train_records_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    train_records_t *self = *self_p;
    json_decref(self->start);
    json_decref(self->params);
    json_decref(self->epochs);
    json_decref(self->minibatches);
    json_decref(self->mark);
    free(self);
    *self_p = NULL;
}

int train_records_start(train_records_t *self, jf_err_t *err)
{
    return s_emit(self->out, self->start, err);
}

void train_records_epoch_begin(train_records_t *self, int epoch)
{
    self->epoch = epoch;
    self->stall_sum_us = 0;
    self->compute_sum_us = 0;
    self->samples = 0;
    self->loss_sum = 0.0;
    self->work = (jf_epoch_rec_t){0};
    json_array_clear(self->minibatches);
}

void train_records_epoch_work(train_records_t *self, const char *bench, double flop, double bytes)
{
    (void) snprintf(self->work.bench, sizeof self->work.bench, "%s", bench); // names are short
    self->work.has_work = true;
    self->work.work_flop = flop;
    self->work.work_bytes = bytes;
}

void train_records_epoch_concurrent(train_records_t *self, const jf_epoch_concurrent_t *c)
{
    self->work.has_concurrent = true;
    self->work.concurrent = *c;
}

int train_records_minibatch(train_records_t *self, const train_minibatch_rec_t *rec, jf_err_t *err)
{
    self->stall_sum_us += rec->fetch_stall_us;
    self->compute_sum_us += rec->compute_us;
    self->samples += rec->samples;
    self->loss_sum += rec->loss * (double)rec->samples;
    // A diverged loss (NaN or infinite) is absent: JSON cannot carry it, the record says null.
    jf_minibatch_rec_t m = {.epoch = self->epoch,
                            .index = (int64_t) rec->index,
                            .samples = (int64_t) rec->samples,
                            .fetch_stall_us = rec->fetch_stall_us,
                            .compute_us = rec->compute_us,
                            .has_loss = isfinite(rec->loss),
                            .loss = isfinite(rec->loss) ? rec->loss : 0.0};
    return s_emit_and_keep(self, jf_record_minibatch_to_json(&m), self->minibatches, err);
}

// The current epoch's line: the wire record, plus samples_per_s for people reading the line or
// the document (the agent does not forward it). NULL if out of memory.
static json_t *s_pack_epoch(const train_records_t *self, int64_t e2e_us)
{
    double loss = self->samples > 0 ? self->loss_sum / (double) self->samples : NAN;
    jf_epoch_rec_t e = {.epoch = self->epoch,
                        .warmup = self->epoch == 0,
                        .e2e_us = e2e_us,
                        .fetch_stall_us = self->stall_sum_us,
                        .compute_us = self->compute_sum_us,
                        .samples = (int64_t) self->samples,
                        .has_loss = isfinite(loss),
                        .loss = isfinite(loss) ? loss : 0.0,
                        .has_work = self->work.has_work,
                        .work_flop = self->work.work_flop,
                        .work_bytes = self->work.work_bytes,
                        .has_concurrent = self->work.has_concurrent,
                        .concurrent = self->work.concurrent};
    (void) snprintf(e.bench, sizeof e.bench, "%s", self->work.bench); // same size
    json_t *line = jf_record_epoch_to_json(&e);
    double rate = (double) self->samples * (double) JF_US_PER_S / (double) e2e_us;
    json_t *jrate = e2e_us > 0 ? json_real(rate) : json_null();
    if (line && json_object_set_new(line, "samples_per_s", jrate) < 0) {
        json_decref(line);
        line = NULL;
    }
    return line;
}

// Emits the epoch's line (its reference taken) and keeps it, with its minibatches, for the
// document.
static int s_finish_epoch(train_records_t *self, json_t *line, jf_err_t *err)
{
    size_t before = json_array_size(self->epochs);
    int rc = s_emit_and_keep(self, line, self->epochs, err);
    json_t *kept = json_array_get(self->epochs, before); // borrowed; NULL if not appended
    if (rc == 0 && json_object_set_new(kept, "minibatches", json_copy(self->minibatches)) < 0) {
        rc = jf_err_set(err, -ENOMEM, "records: out of memory");
    }
    return rc;
}

int train_records_epoch_end(train_records_t *self, int64_t e2e_us, jf_err_t *err)
{
    return s_finish_epoch(self, s_pack_epoch(self, e2e_us), err);
}

// The model's own energy of each rail over an epoch of e2e_us modelled time: its power (constant
// over the epoch in the model) x e2e_us, in mJ (mW x us / 1e6).
static json_t *s_pack_energy(const train_records_power_t *power, int64_t e2e_us)
{
    json_t *obj = json_object();
    for (size_t i = 0; obj && i < power->n_rails; i++) {
        double mj = (double)power->power_mw[i] * (double)e2e_us / 1e6;
        if (json_object_set_new(obj, power->names[i], json_real(mj)) < 0) {
            json_decref(obj);
            obj = NULL;
        }
    }
    return obj;
}

// Adds a simulated epoch's fields to its line; false if out of memory.
static bool s_add_epoch_sim(json_t *line, const train_records_epoch_sim_t *sim, int64_t e2e_us)
{
    bool ok = json_object_set_new(line, "sim_power_mw", s_pack_power(sim->power)) == 0;
    ok = ok && json_object_set_new(line, "sim_model_energy_mj",
                                   s_pack_energy(sim->power, e2e_us)) == 0;
    if (ok && sim->next_power) {
        ok = json_object_set_new(line, "sim_next_power_mw", s_pack_power(sim->next_power)) == 0;
        ok = ok && json_object_set_new(line, "sim_next_load", s_pack_load(sim->next_power)) == 0;
    }
    const train_records_cache_t *c = sim->cache;
    if (ok && c) {
        json_t *cache = json_pack("{s:f, s:f, s:f, s:I, s:I}", "resident_before",
                                  c->resident_before, "resident_after", c->resident_after,
                                  "hit_fraction", c->hit_fraction, "cache_bytes",
                                  (json_int_t)c->cache_bytes, "dataset_bytes",
                                  (json_int_t)c->dataset_bytes);
        ok = json_object_set_new(line, "sim_cache", cache) == 0;
    }
    if (ok && sim->concurrent) {
        // The epoch record's own encoder writes the member, so the agent decodes what it wrote.
        jf_epoch_rec_t rec = {.has_concurrent = true, .concurrent = *sim->concurrent};
        json_t *whole = jf_record_epoch_to_json(&rec);
        json_t *member = json_object_get(whole, "concurrent");
        ok = member && json_object_set(line, "concurrent", member) == 0;
        json_decref(whole);
    }
    return ok && json_object_set_new(line, "sim_wall_us", json_integer(sim->wall_us)) == 0;
}

int train_records_epoch_end_sim(train_records_t *self, int64_t e2e_us,
                                const train_records_epoch_sim_t *sim, jf_err_t *err)
{
    if (sim->power->n_rails > TRAIN_RECORDS_RAILS_MAX ||
        (sim->next_power && sim->next_power->n_rails > TRAIN_RECORDS_RAILS_MAX)) {
        return jf_err_set(err, -EINVAL, "records: more than %d power rails",
                          TRAIN_RECORDS_RAILS_MAX);
    }
    json_t *line = s_pack_epoch(self, e2e_us);
    if (line && !s_add_epoch_sim(line, sim, e2e_us)) {
        json_decref(line);
        line = NULL; // s_finish_epoch reports it
    }
    return s_finish_epoch(self, line, err);
}

int train_records_done(train_records_t *self, jf_err_t *err)
{
    json_t *line = json_pack("{s:s, s:I}", "kind", "done", "epochs",
                             (json_int_t)json_array_size(self->epochs));
    return s_emit_and_keep(self, line, NULL, err);
}

int train_records_write_file(const train_records_t *self, const char *path, const char *reason,
                             const char *failure, jf_err_t *err)
{
    json_t *doc = json_pack("{s:O, s:O}", "params", self->params, "epochs", self->epochs);
    if (doc && failure) {
        json_t *e =
            json_pack("{s:s, s:s}", "reason", reason ? reason : "crashed", "detail", failure);
        if (!e || json_object_set_new(doc, "error", e) < 0) {
            json_decref(doc);
            doc = NULL;
        }
    }
    if (!doc) {
        return jf_err_set(err, -ENOMEM, "records: out of memory");
    }
    int rc = json_dump_file(doc, path, JSON_INDENT(2) | JSON_REAL_PRECISION(9));
    json_decref(doc);
    if (rc < 0) {
        return jf_err_set(err, -EIO, "%s: cannot write the run document: %s", path,
                          strerror(errno));
    }
    return 0;
}

int train_records_finish_file(const train_records_t *self, const char *path, int rc,
                              const char *reason, jf_err_t *err)
{
    jf_err_t write_err = {0};
    const char *failure = rc < 0 ? (err && err->msg[0] ? err->msg : "failed") : NULL;
    int wrc = train_records_write_file(self, path, reason, failure, &write_err);
    if (rc < 0) {
        return rc;
    }
    if (wrc < 0 && err) {
        *err = write_err;
    }
    return wrc;
}

int train_records_emit_error(FILE *out, const char *reason, const char *detail)
{
    json_t *line = json_pack("{s:s, s:s, s:s}", "kind", "error", "reason", reason, "detail",
                             detail ? detail : "");
    if (!line) {
        // jansson refuses text that is not UTF-8 (a file name, say); the line must still go out.
        line = json_pack("{s:s, s:s, s:s}", "kind", "error", "reason", reason, "detail",
                         "(detail not valid UTF-8; see the log)");
    }
    if (!line) {
        return -ENOMEM;
    }
    int rc = s_emit(out, line, NULL);
    json_decref(line);
    return rc;
}
