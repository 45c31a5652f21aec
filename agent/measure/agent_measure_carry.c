/* One run's measure across an agent restart (docs/protocol.md §4.4.1): what the measure hands to
 * the spool with the trainer's read mark (the time base's origin, the energy so far, the latest
 * sample) and takes back in a restarted agent, and the bridge over the time no agent sampled.
 * Not for the record itself (agent_measure.c). */
#include "agent_measure_internal.h"

#include "jf_units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

// The carried and the integrated energy of one curve: sums of energy and covered time, the
// higher peak, the mean over the sum.
static void s_add_figures(double *energy_mj, int64_t *covered_us, double *peak_mw, double *avg_mw,
                          double c_energy_mj, int64_t c_covered_us, double c_peak_mw)
{
    *energy_mj += c_energy_mj;
    *covered_us += c_covered_us;
    *peak_mw = c_peak_mw > *peak_mw ? c_peak_mw : *peak_mw;
    *avg_mw = *covered_us > 0 ? *energy_mj * (double) JF_US_PER_S / (double) *covered_us : 0.0;
}

static agent_energy_rail_t *s_rail(agent_energy_result_t *r, const char *name)
{
    for (size_t i = 0; i < r->n_rails; i++) {
        if (strcmp(r->rails[i].name, name) == 0) {
            return &r->rails[i];
        }
    }
    if (r->n_rails == AGENT_ENERGY_RAILS_MAX) {
        return NULL; // cannot happen: both sides hold at most that many distinct rails
    }
    agent_energy_rail_t *y = &r->rails[r->n_rails++];
    *y = (agent_energy_rail_t){0};
    memcpy(y->name, name, sizeof y->name);
    return y;
}

void agent_measure_add_carried(const agent_measure_t *self, agent_energy_result_t *r)
{
    const agent_energy_result_t *c = &self->carried;
    // The carried latest sample was taken, and counted, by the agent that carried it: the
    // samples this measure took are the others (the session adds the earlier agents' count).
    if (self->carried_last && r->n_samples > 0) {
        r->n_samples--;
    }
    if (!self->has_carry || c->total == JF_MEASURE_TOTAL_NONE) {
        return;
    }
    // The accumulator holds the carried latest sample: it starts where the carry ends.
    r->total = r->total == JF_MEASURE_TOTAL_NONE ? c->total : r->total;
    s_add_figures(&r->energy_mj, &r->covered_us, &r->peak_power_mw, &r->avg_power_mw, c->energy_mj,
                  c->covered_us, c->peak_power_mw);
    for (size_t i = 0; i < c->n_rails; i++) {
        agent_energy_rail_t *y = s_rail(r, c->rails[i].name);
        if (y) {
            s_add_figures(&y->energy_mj, &y->covered_us, &y->peak_power_mw, &y->avg_power_mw,
                          c->rails[i].energy_mj, c->rails[i].covered_us, c->rails[i].peak_power_mw);
            y->n_readings += c->rails[i].n_readings;
        }
    }
}

void agent_measure_after_sample(agent_measure_t *self, json_t *s)
{
    json_decref(self->last);
    self->last = json_incref(s);
    if (!self->bridge_pending) {
        return;
    }
    // The accumulator holds two samples now, the earlier agent's latest and this one: all it
    // integrated is the line between them over the time no agent sampled.
    self->bridge_pending = false;
    agent_energy_result_t g;
    agent_energy_result(self->energy, &g);
    self->unobserved_us += g.duration_us;
    self->interpolated_mj += g.total != JF_MEASURE_TOTAL_NONE ? g.energy_mj : 0.0;
}

static json_t *s_rails_json(const agent_energy_result_t *r)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < r->n_rails; i++) {
        const agent_energy_rail_t *y = &r->rails[i];
        if (json_array_append_new(
                a, json_pack("{s:s, s:f, s:I, s:f, s:I}", "name", y->name, "energy_mj",
                             y->energy_mj, "covered_us", (json_int_t) y->covered_us,
                             "peak_power_mw", y->peak_power_mw, "n", (json_int_t) y->n_readings)) !=
            0) {
            json_decref(a);
            a = NULL;
        }
    }
    return a;
}

json_t *agent_measure_carry(const agent_measure_t *self)
{
    agent_energy_result_t r;
    agent_energy_result(self->energy, &r);
    agent_measure_add_carried(self, &r);
    json_t *rails = s_rails_json(&r);
    if (!rails) {
        return NULL;
    }
    return json_pack("{s:I, s:s, s:I, s:f, s:{s:i, s:f, s:I, s:f, s:o}, s:O?}", "start_us",
                     (json_int_t) self->start_us, "power_source", self->power_source,
                     "unobserved_us", (json_int_t) self->unobserved_us, "interpolated_mj",
                     self->interpolated_mj, "energy", "total", (int) r.total, "energy_mj",
                     r.energy_mj, "covered_us", (json_int_t) r.covered_us, "peak_power_mw",
                     r.peak_power_mw, "rails", rails, "last", self->last);
}

static bool s_figure_ok(double v)
{
    return isfinite(v) && v >= 0.0;
}

// One carried rail into *y: 0, or -EINVAL with err.
static int s_rail_parse(json_t *o, size_t i, agent_energy_rail_t *y, jf_err_t *err)
{
    json_error_t jerr;
    const char *name = NULL;
    json_int_t covered = 0, n = 0;
    if (json_unpack_ex(o, &jerr, JSON_STRICT, "{s:s, s:F, s:I, s:F, s:I}", "name", &name,
                       "energy_mj", &y->energy_mj, "covered_us", &covered, "peak_power_mw",
                       &y->peak_power_mw, "n", &n) != 0) {
        return jf_err_set(err, -EINVAL, "measure carry: energy.rails[%zu]: %s", i, jerr.text);
    }
    if (strlen(name) == 0 || strlen(name) > AGENT_ENERGY_RAIL_NAME_MAX || covered < 0 || n < 0 ||
        !s_figure_ok(y->energy_mj) || !s_figure_ok(y->peak_power_mw)) {
        return jf_err_set(err, -EINVAL, "measure carry: energy.rails[%zu] out of range", i);
    }
    memcpy(y->name, name, strlen(name) + 1);
    y->covered_us = covered;
    y->n_readings = n;
    return 0;
}

// The carried energy into *c: 0, or -EINVAL with err.
static int s_energy_parse(json_t *o, agent_energy_result_t *c, jf_err_t *err)
{
    json_error_t jerr;
    json_t *rails = NULL;
    int total = 0;
    json_int_t covered = 0;
    if (json_unpack_ex(o, &jerr, JSON_STRICT, "{s:i, s:F, s:I, s:F, s:o}", "total", &total,
                       "energy_mj", &c->energy_mj, "covered_us", &covered, "peak_power_mw",
                       &c->peak_power_mw, "rails", &rails) != 0) {
        return jf_err_set(err, -EINVAL, "measure carry: energy: %s", jerr.text);
    }
    if (total < JF_MEASURE_TOTAL_NONE || total > JF_MEASURE_TOTAL_SUM_OF_RAILS || covered < 0 ||
        !s_figure_ok(c->energy_mj) || !s_figure_ok(c->peak_power_mw) || !json_is_array(rails) ||
        json_array_size(rails) > AGENT_ENERGY_RAILS_MAX) {
        return jf_err_set(err, -EINVAL, "measure carry: energy out of range");
    }
    c->total = (jf_measure_total_t) total;
    c->covered_us = covered;
    c->n_rails = json_array_size(rails);
    for (size_t i = 0; i < c->n_rails; i++) {
        if (s_rail_parse(json_array_get(rails, i), i, &c->rails[i], err) != 0) {
            return -EINVAL;
        }
    }
    return 0;
}

// The time base's origin moves to the carried one, and the fallback epoch interval with it.
static void s_restart_at(agent_measure_t *self, int64_t start_us)
{
    self->start_us = start_us;
    if (self->since >= 0) {
        (void) agent_energy_interval_drop(self->energy, self->since, NULL);
    }
    if (agent_energy_interval_open(self->energy, start_us, &self->since, NULL) != 0) {
        self->since = -1; // cannot happen on an accumulator with nothing dropped yet
    }
}

int agent_measure_resume(agent_measure_t *self, const json_t *carry, jf_err_t *err)
{
    json_error_t jerr;
    json_int_t start = 0, unobserved = 0;
    const char *power_source = NULL;
    double interpolated = 0;
    json_t *energy = NULL, *last = NULL;
    agent_energy_result_t c = {0};
    if (json_unpack_ex((json_t *) carry, &jerr, JSON_STRICT, "{s:I, s:s, s:I, s:F, s:o, s?o}",
                       "start_us", &start, "power_source", &power_source, "unobserved_us",
                       &unobserved, "interpolated_mj", &interpolated, "energy", &energy, "last",
                       &last) != 0) {
        return jf_err_set(err, -EINVAL, "measure carry: %s", jerr.text);
    }
    if (start < 0 || unobserved < 0 || !s_figure_ok(interpolated) ||
        strlen(power_source) > JF_MEASURE_WORD_MAX ||
        (last && !json_is_object(last) && !json_is_null(last))) {
        return jf_err_set(err, -EINVAL,
                          "measure carry: start_us, unobserved_us, "
                          "interpolated_mj, power_source or last out of range");
    }
    int rc = s_energy_parse(energy, &c, err);
    if (rc == 0 && json_is_object(last)) {
        rc = agent_energy_add_json(self->energy, last, err); // fresh: the first sample it takes
        if (rc != 0) {
            (void) jf_err_prefix(err, "measure carry: last");
        }
    }
    if (rc != 0) {
        return -EINVAL;
    }
    s_restart_at(self, start);
    self->has_carry = true;
    self->carried = c;
    self->bridge_pending = json_is_object(last);
    self->carried_last = json_is_object(last);
    json_decref(self->last);
    self->last = json_is_object(last) ? json_incref(last) : NULL;
    self->unobserved_us = unobserved;
    self->interpolated_mj = interpolated;
    if (power_source[0]) {
        self->seen_power = true;
        memcpy(self->power_source, power_source, strlen(power_source) + 1);
    }
    return 0;
}
