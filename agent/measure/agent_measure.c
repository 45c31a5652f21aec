/* One run's measurements in the loop: energy intervals per epoch, held epoch records, residency
 * per epoch, disk counters, and the measure record. */
#include "agent_measure.h"
#include "agent_measure_internal.h"

#include "agent_thermal.h"

#include "jf_msg_run.h"
#include "jf_run_spec.h"
#include "jf_units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int agent_measure_wall_rate_hz(const agent_measure_opts_t *opts)
{
    if (!opts->timing.own_clock) {
        return opts->rate_hz;
    }
    double hz = (double) opts->rate_hz * opts->timing.speed;
    return hz >= AGENT_SAMPLER_RATE_MAX_HZ ? AGENT_SAMPLER_RATE_MAX_HZ : hz < 1.0 ? 1 : (int) hz;
}

static bool s_opts_ok(const agent_measure_opts_t *opts, jf_err_t *err)
{
    if (opts->rate_hz < 1 || opts->rate_hz > JF_TELEMETRY_HZ_MAX || opts->epochs < 1 ||
        opts->epochs > JF_EPOCHS_MAX || (opts->timing.own_clock && !(opts->timing.speed >= 1.0))) {
        jf_err_set(err, -EINVAL, "measure: rate %d Hz, %d epochs or speed %g out of range",
                   opts->rate_hz, opts->epochs, opts->timing.speed);
        return false;
    }
    return true;
}

// The accumulators, with a history of AGENT_MEASURE_HISTORY_S wall-clock seconds of samples.
static int s_open_energy(agent_measure_t *self, const agent_measure_opts_t *opts, jf_err_t *err)
{
    size_t history = (size_t) self->wall_rate_hz * AGENT_MEASURE_HISTORY_S;
    history = history < AGENT_ENERGY_HISTORY_DEFAULT ? AGENT_ENERGY_HISTORY_DEFAULT : history;
    history = history > AGENT_ENERGY_HISTORY_MAX ? AGENT_ENERGY_HISTORY_MAX : history;
    // With the trainer's own clock the rate is no whole number of Hz in it: the late and missed
    // counts come from the sampler, on its own wall-clock deadlines.
    agent_energy_opts_t eo = {.input_rail = opts->input_rail,
                              .rate_hz = opts->timing.own_clock ? 0 : opts->rate_hz,
                              .history_max = history};
    agent_energy_counter_opts_t co = {.history_max = history};
    self->energy = agent_energy_new(&eo, err);
    self->counter = self->energy ? agent_energy_counter_new(&co, err) : NULL;
    if (!self->counter) {
        return -ENOMEM;
    }
    return agent_energy_interval_open(self->energy, opts->start_us, &self->since, err);
}

agent_measure_t *agent_measure_new(const agent_measure_opts_t *opts, jf_err_t *err)
{
    if (!s_opts_ok(opts, err)) {
        return NULL;
    }
    agent_measure_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "measure: out of memory");
        return NULL;
    }
    (void) snprintf(self->input_rail, sizeof self->input_rail, "%s",
                    opts->input_rail ? opts->input_rail : "");
    self->rate_hz = opts->rate_hz;
    self->wall_rate_hz = agent_measure_wall_rate_hz(opts);
    self->period_us = JF_US_PER_S / self->wall_rate_hz;
    self->own_clock = opts->timing.own_clock;
    self->speed = opts->timing.own_clock ? opts->timing.speed : 1.0;
    (void) snprintf(self->time_base, sizeof self->time_base, "%s",
                    opts->timing.time_base[0] ? opts->timing.time_base : "monotonic");
    (void) snprintf(self->energy_source, sizeof self->energy_source, "%s",
                    opts->timing.energy_source ? opts->timing.energy_source : "");
    self->start_us = opts->start_us;
    self->epochs = opts->epochs;
    self->last_epoch = -1;
    self->has_after = calloc((size_t) opts->epochs, sizeof *self->has_after);
    self->after = calloc((size_t) opts->epochs, sizeof *self->after);
    self->thermal = agent_thermal_new();
    self->gpu_before = agent_gpubefore_new();
    if (!self->thermal || !self->gpu_before) {
        jf_err_set(err, -ENOMEM, "measure: out of memory");
    }
    if (!self->has_after || !self->after || !self->thermal || !self->gpu_before ||
        s_open_energy(self, opts, err) != 0) {
        agent_measure_destroy(&self);
    }
    return self;
}

void agent_measure_destroy(agent_measure_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    agent_measure_t *self = *self_p;
    for (size_t i = 0; i < self->n_held; i++) {
        json_decref(self->held[i].rec);
    }
    agent_energy_destroy(&self->energy);
    agent_energy_counter_destroy(&self->counter);
    agent_thermal_destroy(&self->thermal);
    agent_gpubefore_destroy(&self->gpu_before);
    json_decref(self->last);
    free(self->has_after);
    free(self->after);
    free(self);
    *self_p = NULL;
}

static void s_read_disk(const json_t *sample, agent_measure_disk_t *d)
{
    const json_t *o = json_object_get(sample, "disk");
    const char *device = json_string_value(json_object_get(o, "device"));
    if (!device || strlen(device) > JF_MEASURE_DEVICE_MAX) {
        return;
    }
    *d = (agent_measure_disk_t){.has = true,
                                .reads = json_integer_value(json_object_get(o, "reads")),
                                .read_bytes = json_integer_value(json_object_get(o, "read_bytes")),
                                .read_time_us =
                                    json_integer_value(json_object_get(o, "read_time_us"))};
    memcpy(d->device, device, strlen(device) + 1);
}

// Whether the energy accumulator got a power reading from this sample (the rules of
// agent_energy_add_json: input_power_mw, or a rail's power_mw).
static bool s_has_power(const json_t *sample)
{
    size_t i = 0;
    json_t *rail = NULL;
    if (json_is_number(json_object_get(sample, "input_power_mw"))) {
        return true;
    }
    json_array_foreach(json_object_get(sample, "rails"), i, rail) {
        if (json_is_number(json_object_get(rail, "power_mw"))) {
            return true;
        }
    }
    return false;
}

// Where a sample's power came from: tegrastats when the sampler took the rails from it (its
// fallback, docs/telemetry.md), else the board's power monitor (sysfs).
static const char *s_power_source(const json_t *sample)
{
    size_t i;
    json_t *key;
    json_array_foreach(json_object_get(sample, "from_tegrastats"), i, key) {
        if (json_is_string(key) && strcmp(json_string_value(key), "rails") == 0) {
            return JF_MEASURE_SOURCE_TEGRASTATS;
        }
    }
    return JF_MEASURE_SOURCE_POWER_MONITOR;
}

// A monotonic time in the run's time base (the header's rule); times before the start stay.
static int64_t s_time(const agent_measure_t *self, int64_t mono_us)
{
    if (!self->own_clock || mono_us <= self->start_us) {
        return mono_us;
    }
    return self->start_us + llround((double) (mono_us - self->start_us) * self->speed);
}

// The sample with its mono_us in the run's time base: the sample itself (a new reference) for a
// run on the monotonic clock, a shallow copy with the trainer's own. NULL when out of memory.
static json_t *s_in_time_base(const agent_measure_t *self, const json_t *sample)
{
    json_t *mono = json_object_get(sample, "mono_us");
    if (!self->own_clock || !json_is_integer(mono)) {
        return json_incref((json_t *) sample);
    }
    json_t *copy = json_copy((json_t *) sample);
    if (copy && json_object_set_new(copy, "mono_us",
                                    json_integer(s_time(self, json_integer_value(mono)))) != 0) {
        json_decref(copy);
        copy = NULL;
    }
    return copy;
}

int agent_measure_add_sample(agent_measure_t *self, const json_t *sample, jf_err_t *err)
{
    const char *source = json_string_value(json_object_get(sample, "source"));
    if (!self->source[0] && source && strlen(source) <= JF_MEASURE_WORD_MAX) {
        memcpy(self->source, source, strlen(source) + 1);
    }
    s_read_disk(sample, self->disk_first.has ? &self->disk_last : &self->disk_first);
    agent_thermal_add_sample(self->thermal, sample);
    json_t *s = s_in_time_base(self, sample);
    if (!s) {
        return jf_err_set(err, -ENOMEM, "measure: out of memory");
    }
    const json_t *gpu = json_object_get(s, "gpu_load_pct");
    const json_t *mono = json_object_get(s, "mono_us");
    if (json_is_number(gpu) && json_is_integer(mono)) {
        agent_gpubefore_add(self->gpu_before, json_integer_value(mono), json_number_value(gpu));
    }
    int rc = agent_energy_add_json(self->energy, s, err);
    if (rc == 0 && !self->seen_power && s_has_power(s)) {
        self->seen_power = true;
        (void) snprintf(self->power_source, sizeof self->power_source, "%s", s_power_source(s));
    }
    if (rc == 0) {
        agent_measure_after_sample(self, s);
    }
    // RAPL counters are a second, independent source: a sample refused above still counts here.
    jf_err_t cerr = {0};
    int crc = agent_energy_counter_add_json(self->counter, s, &cerr);
    if (crc != 0 && rc == 0) {
        rc = jf_err_set(err, crc, "%s", cerr.msg);
    }
    json_decref(s);
    return rc;
}

// The epoch's interval [read - e2e, read], or the fallback from the previous read when that
// start is older than the history; then a new fallback from this read. Returns the interval or -1.
static int s_epoch_interval(agent_measure_t *self, int64_t e2e_us, int64_t read_us)
{
    int64_t start_us = read_us > e2e_us ? read_us - e2e_us : 0;
    int id = -1;
    int rc = agent_energy_interval_open(self->energy, start_us, &id, NULL);
    if (rc == 0 && agent_energy_interval_close(self->energy, id, read_us, NULL) != 0) {
        (void)agent_energy_interval_drop(self->energy, id, NULL);
        id = -1;
    }
    if (rc == -ERANGE && self->since >= 0 &&
        agent_energy_interval_close(self->energy, self->since, read_us, NULL) == 0) {
        id = self->since;
        self->since = -1;
    }
    if (self->since >= 0) {
        (void)agent_energy_interval_drop(self->energy, self->since, NULL);
        self->since = -1;
    }
    if (agent_energy_interval_open(self->energy, read_us, &self->since, NULL) != 0) {
        self->since = -1; // no slot: the next long epoch goes without the fallback
    }
    return id;
}

int agent_measure_add_epoch(agent_measure_t *self, json_t *rec, int64_t read_us, jf_err_t *err)
{
    const json_t *epoch = json_object_get(rec, "epoch");
    const json_t *e2e = json_object_get(rec, "e2e_us");
    int rc = json_is_integer(epoch) && json_is_integer(e2e)
                 ? 0
                 : jf_err_set(err, -EINVAL, "measure: an epoch record without epoch or e2e_us");
    if (self->n_held == AGENT_MEASURE_HELD_MAX) {
        json_decref(rec); // cannot happen while the loop pops: records wait a second or two
        return jf_err_set(err, -ENOSPC, "measure: %d epoch records waiting",
                          AGENT_MEASURE_HELD_MAX);
    }
    int64_t n = json_integer_value(epoch);
    if (rc == 0 && n >= 0 && n < self->epochs && n > self->last_epoch) {
        self->last_epoch = (int) n;
    }
    // e2e_us is in the run's time base already (a trainer with its own clock reports in it).
    int64_t read_tb_us = s_time(self, read_us);
    // Epoch 0's start ends the time before the trainer computed. Not in a resumed measure: its
    // samples began after the restart, inside the run.
    if (rc == 0 && n == 0 && !self->has_carry) {
        int64_t start_tb_us = read_tb_us - json_integer_value(e2e);
        if (self->started_tb_us > 0 && self->started_tb_us < start_tb_us) {
            start_tb_us = self->started_tb_us;
        }
        agent_gpubefore_settle(self->gpu_before, start_tb_us);
    }
    agent_measure_held_t *h = &self->held[self->n_held++];
    *h = (agent_measure_held_t){
        .rec = rec,
        .interval = rc == 0 ? s_epoch_interval(self, json_integer_value(e2e), read_tb_us) : -1,
        .deadline_us = read_us + 2 * self->period_us + AGENT_MEASURE_WAIT_US};
    return rc;
}

void agent_measure_trainer_started(agent_measure_t *self, int64_t read_us)
{
    if (self->started_tb_us == 0) {
        self->started_tb_us = s_time(self, read_us);
    }
}

size_t agent_measure_held(const agent_measure_t *self)
{
    return self->n_held;
}

// The epoch's energy from the RAPL counters over the interval's range; false when they give none.
static bool s_counter_energy(const agent_measure_t *self, const agent_energy_result_t *range,
                             jf_epoch_rec_t *e)
{
    agent_energy_counter_result_t c;
    if (agent_energy_counter_between(self->counter, range->start_us, range->end_us, &c, NULL) !=
            0 ||
        c.covered_us <= 0) {
        return false;
    }
    *e = (jf_epoch_rec_t){.energy_mj = c.energy_mj,
                          .avg_power_mw = c.avg_power_mw,
                          .has_peak = c.has_peak,
                          .peak_power_mw = c.peak_power_mw};
    return true;
}

// Power rails first (a board's monitor, as the platform presents it), else RAPL counters.
static agent_measure_energy_t s_attach(agent_measure_t *self, const agent_measure_held_t *h)
{
    agent_energy_result_t r;
    jf_epoch_rec_t e = {0};
    if (agent_energy_interval_result(self->energy, h->interval, &r, NULL) != 0) {
        return AGENT_MEASURE_NOT_CLOSED;
    }
    if (r.total != JF_MEASURE_TOTAL_NONE && r.covered_us > 0) {
        e = (jf_epoch_rec_t){.energy_mj = r.energy_mj,
                             .avg_power_mw = r.avg_power_mw,
                             .has_peak = r.n_samples > 0, // a short epoch may hold no sample
                             .peak_power_mw = r.peak_power_mw};
    } else if (r.total != JF_MEASURE_TOTAL_NONE) {
        return AGENT_MEASURE_NOT_CLOSED;
    } else if (!s_counter_energy(self, &r, &e)) {
        return AGENT_MEASURE_ABSENT;
    }
    return jf_record_epoch_set_energy(h->rec, &e) == 0 ? AGENT_MEASURE_MEASURED
                                                       : AGENT_MEASURE_NOT_CLOSED;
}

json_t *agent_measure_pop_epoch(agent_measure_t *self, int64_t now_us, bool force,
                                agent_measure_energy_t *ret_energy)
{
    if (self->n_held == 0) {
        return NULL;
    }
    agent_measure_held_t h = self->held[0];
    bool power = self->seen_power || agent_energy_counter_has_zones(self->counter);
    bool closed = h.interval >= 0 && agent_energy_interval_is_complete(self->energy, h.interval);
    if (power && !closed && h.interval >= 0 && !force && now_us < h.deadline_us) {
        return NULL; // its closing sample is due
    }
    agent_measure_energy_t how = !power   ? AGENT_MEASURE_NO_POWER
                                 : closed ? s_attach(self, &h)
                                          : AGENT_MEASURE_NOT_CLOSED;
    if (h.interval >= 0) {
        (void)agent_energy_interval_drop(self->energy, h.interval, NULL);
    }
    memmove(&self->held[0], &self->held[1], (self->n_held - 1) * sizeof self->held[0]);
    self->n_held--;
    if (ret_energy) {
        *ret_energy = how;
    }
    return h.rec;
}

void agent_measure_set_residency(agent_measure_t *self, int epoch, const agent_residency_t *r)
{
    double f = 0;
    if (epoch < -1 || epoch >= self->epochs || !agent_residency_fraction(r, &f)) {
        return;
    }
    self->dataset_bytes = r->total_bytes;
    if (epoch < 0) {
        self->has_before0 = true;
        self->before0 = f;
        return;
    }
    self->has_after[epoch] = true;
    self->after[epoch] = f;
    self->last_epoch = epoch > self->last_epoch ? epoch : self->last_epoch;
}

// Residency per epoch: before epoch 0 as measured before the run; before epoch N > 0 is the
// measurement after epoch N - 1 (taken at the boundary, while epoch N already runs).
static size_t s_cache(const agent_measure_t *self, jf_measure_cache_t *out)
{
    size_t n = 0;
    for (int e = 0; e <= self->last_epoch; e++) {
        bool has_before = e == 0 ? self->has_before0 : self->has_after[e - 1];
        double before = e == 0 ? self->before0 : self->after[e - 1];
        if (has_before || self->has_after[e]) {
            out[n++] = (jf_measure_cache_t){.epoch = e,
                                            .has_before = has_before,
                                            .before = before,
                                            .has_after = self->has_after[e],
                                            .after = self->after[e]};
        }
    }
    return n;
}

// The run's energy from the RAPL counters, or why there is none.
static void s_energy_rapl(const agent_measure_t *self, jf_measure_t *m)
{
    agent_energy_counter_result_t c;
    jf_err_t err = {0};
    if (agent_energy_counter_run(self->counter, &c, &err) != 0 || c.covered_us <= 0) {
        (void) snprintf(m->reason, sizeof m->reason, "%.*s", (int) sizeof m->reason - 1,
                        err.msg[0] ? err.msg : "RAPL counters were read only once");
        return;
    }
    m->total = JF_MEASURE_TOTAL_RAPL;
    (void) snprintf(m->energy_source, sizeof m->energy_source, "rapl");
    (void)snprintf(m->covers, sizeof m->covers, "%s", agent_energy_counter_covers(self->counter));
    m->energy_mj = c.energy_mj;
    m->avg_power_mw = c.avg_power_mw;
    m->peak_power_mw = c.has_peak ? c.peak_power_mw : 0.0;
    m->covered_us = c.covered_us;
    for (size_t i = 0; i < c.n_zones; i++) {
        jf_measure_rail_t *y = &m->rails[m->n_rails++];
        (void) snprintf(y->name, sizeof y->name, "%s", c.names[i]);
        y->energy_mj = c.zone_energy_mj[i];
        y->avg_power_mw = c.zone_energy_mj[i] * (double) JF_US_PER_S / (double) c.covered_us;
        y->peak_power_mw = 0.0; // not kept per zone: a counter gives means over steps only
    }
}

static void s_energy(const agent_measure_t *self, jf_measure_t *m)
{
    agent_energy_result_t r;
    agent_energy_result(self->energy, &r);
    agent_measure_add_carried(self, &r);
    m->achieved_rate_hz = r.achieved_rate_hz;
    m->samples = r.n_samples;
    m->late = r.n_late;
    m->missed = r.n_missed;
    m->max_gap_us = r.max_gap_us;
    m->total = r.covered_us > 0 ? r.total : JF_MEASURE_TOTAL_NONE;
    if (m->total == JF_MEASURE_TOTAL_NONE) {
        (void) snprintf(m->reason, sizeof m->reason,
                        "no sample carried a power reading or RAPL counters");
        if (agent_energy_counter_has_zones(self->counter) ||
            agent_energy_counter_reason(self->counter)[0]) {
            s_energy_rapl(self, m);
        }
        return;
    }
    (void) snprintf(m->energy_source, sizeof m->energy_source, "%s",
                    self->energy_source[0] ? self->energy_source : self->power_source);
    m->energy_mj = r.energy_mj;
    m->avg_power_mw = r.avg_power_mw;
    m->peak_power_mw = r.peak_power_mw;
    m->covered_us = r.covered_us;
    m->unobserved_us = self->unobserved_us;
    m->interpolated_mj = self->interpolated_mj;
    if (m->total == JF_MEASURE_TOTAL_INPUT_RAIL) {
        memcpy(m->input_rail, self->input_rail, sizeof m->input_rail);
    }
    for (size_t i = 0; i < r.n_rails; i++) {
        const agent_energy_rail_t *x = &r.rails[i];
        jf_measure_rail_t *y = &m->rails[m->n_rails++];
        memcpy(y->name, x->name, sizeof y->name);
        y->energy_mj = x->energy_mj;
        y->avg_power_mw = x->avg_power_mw;
        y->peak_power_mw = x->peak_power_mw;
    }
}

// The time base. With the trainer's own clock the sample times went into the energy code in
// that clock (max_gap_us is in it already); the sampler's achieved rate is on the wall clock.
static void s_time_base(const agent_measure_t *self, const agent_measure_facts_t *f,
                        jf_measure_t *m)
{
    (void) snprintf(m->time_base, sizeof m->time_base, "%s", self->time_base);
    if (!self->own_clock) {
        return;
    }
    m->wall_rate_hz = self->wall_rate_hz;
    if (f->sampling) {
        m->achieved_rate_hz = f->sampling->achieved_rate_hz / self->speed;
    }
}

// Returns 0, or -EINVAL when the power state is not one the record can carry (then no record).
static int s_facts(const agent_measure_t *self, const agent_measure_facts_t *f, jf_measure_t *m)
{
    if (jf_schema_decode(jf_measure_power_schema(), f->power_mode, &m->power, NULL) != 0) {
        return -EINVAL;
    }
    m->drop_caches = f->drop;
    if (f->sampling) {
        // The sampler knows its deadlines: its late and missed counts are the exact ones.
        m->samples = f->sampling->samples;
        m->late = f->sampling->late;
        m->missed = f->sampling->missed;
        m->achieved_rate_hz = f->sampling->achieved_rate_hz;
        m->tegrastats_interval_ms = f->sampling->tegrastats_interval_ms;
        m->has_other_load = f->sampling->other_intervals > 0;
        m->other_intervals = f->sampling->other_intervals;
        m->other_mean_pct = f->sampling->other_mean_pct;
        m->other_max_pct = f->sampling->other_max_pct;
    }
    agent_gpubefore_result_t g;
    if (agent_gpubefore_result(self->gpu_before, &g)) {
        m->has_gpu_before = true;
        m->gpu_before_samples = g.samples;
        m->gpu_before_mean_pct = g.mean_pct;
        m->gpu_before_max_pct = g.max_pct;
    }
    if (f->mount && f->medium) {
        m->has_storage = true;
        m->storage_checked = f->storage_checked;
        (void) snprintf(m->medium, sizeof m->medium, "%s", f->medium);
        (void) snprintf(m->mount, sizeof m->mount, "%s", f->mount->mount_point);
        (void) snprintf(m->device, sizeof m->device, "%s", f->mount->disk);
    }
    const agent_measure_disk_t *a = &self->disk_first, *b = &self->disk_last;
    if (a->has && b->has && strcmp(a->device, b->device) == 0 && b->reads >= a->reads &&
        b->read_bytes >= a->read_bytes && b->read_time_us >= a->read_time_us) {
        m->has_disk = true;
        memcpy(m->disk_device, a->device, sizeof m->disk_device);
        m->disk_reads = b->reads - a->reads;
        m->disk_read_bytes = b->read_bytes - a->read_bytes;
        m->disk_read_time_us = b->read_time_us - a->read_time_us;
    }
    return 0;
}

json_t *agent_measure_record(const agent_measure_t *self, const agent_measure_facts_t *facts)
{
    jf_measure_t *m = calloc(1, sizeof *m); // ~40 kB with the cache of every epoch
    json_t *rec = NULL;
    if (m) {
        (void) snprintf(m->source, sizeof m->source, "%s", self->source);
        m->rate_hz = self->rate_hz;
        s_energy(self, m);
        int rc = s_facts(self, facts, m);
        // Against the power state just decoded: the clocks are compared with its caps.
        m->has_thermal = true;
        agent_thermal_result(self->thermal, rc == 0 ? &m->power : NULL, &m->thermal);
        s_time_base(self, facts, m);
        m->dataset_bytes = self->dataset_bytes;
        m->n_cache = s_cache(self, m->cache);
        rec = rc == 0 ? jf_measure_to_json(m) : NULL;
    }
    free(m);
    return rec;
}
