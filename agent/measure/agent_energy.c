/* Energy accumulator: trapezoidal integration of power samples per run and per interval.
 * Samples are kept in a ring of history_max entries so that interval boundaries may arrive a
 * little late; a sample dropped from the ring is folded into the run and into every interval in
 * use ("settled"), and a query adds the ring's samples to that. The model is in agent_energy.h. */
#include "agent_energy.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_SLOTS      (1 + AGENT_ENERGY_RAILS_MAX) // series: slot 0 is the input, 1.. the rails
#define S_INPUT      0
#define S_US_PER_S_F 1e6

// One series reading at one time.
typedef struct s_point {
    int64_t t_us; // sample time, us
    double p_mw;  // power, mW
} s_point_t;

// One retained sample, with its readings by series slot.
typedef struct s_entry {
    int64_t mono_us;      // sample time, us
    bool has[S_SLOTS];    // the series was read in this sample
    double p_mw[S_SLOTS]; // the reading, mW, where has[]
} s_entry_t;

// The state before the next sample: the last sample time and each series' last reading.
typedef struct s_cursor {
    bool has_sample;         // a sample came before
    int64_t sample_us;       // its time, us
    bool has[S_SLOTS];       // the series has a reading before
    s_point_t last[S_SLOTS]; // that reading
} s_cursor_t;

// What one series gathered inside a range.
typedef struct s_series_acc {
    double energy_mj;   // mJ
    int64_t covered_us; // us
    double peak_mw;     // mW
    int64_t n_readings;
} s_series_acc_t;

// What a range gathered.
typedef struct s_acc {
    s_series_acc_t series[S_SLOTS];
    double sum_peak_mw; // highest sum of the rails read in one sample, mW
    int64_t n_samples;  // samples inside
    int64_t first_us;   // first sample inside, us (valid when n_samples > 0)
    int64_t last_us;    // last sample inside, us (valid when n_samples > 0)
    int64_t n_late;     // late gaps ending inside
    int64_t n_missed;   // estimated missed samples in those
    int64_t max_gap_us; // longest gap ending inside, us
} s_acc_t;

// A closed time range [start_us, end_us].
typedef struct s_range {
    int64_t start_us;
    int64_t end_us;
} s_range_t;

typedef struct s_interval {
    bool in_use;
    bool closed;
    s_range_t range; // end_us is INT64_MAX while open
    s_acc_t settled; // folded from samples dropped out of the history
} s_interval_t;

struct agent_energy {
    char input_rail[AGENT_ENERGY_RAIL_NAME_MAX + 1]; // "" if the board has none
    int rate_hz;                                  // requested rate, 0 = unknown
    size_t n_rails;                               // rail names known; rail i is slot i + 1
    char rail_names[AGENT_ENERGY_RAILS_MAX][AGENT_ENERGY_RAIL_NAME_MAX + 1];
    bool seen_input;     // some sample carried input power
    s_entry_t *ring;     // owned; history_max entries
    size_t history_max;  // ring capacity
    size_t ring_head;    // index of the oldest retained sample
    size_t ring_n;       // retained samples
    bool has_horizon;    // a sample has been dropped from the ring
    int64_t horizon_us;  // the latest dropped sample's time, us
    s_cursor_t carry;    // state after the dropped samples
    s_acc_t run_settled; // the run's dropped samples
    s_interval_t intervals[AGENT_ENERGY_INTERVALS_MAX];
};

static const s_range_t s_all = {INT64_MIN, INT64_MAX};

// mW x us = nJ, and 1 mJ = 1e6 nJ (1 mW for 1 s is 1 mJ).
static double s_mj(double power_mw, int64_t span_us)
{
    return power_mw * (double) span_us / S_US_PER_S_F;
}

static bool s_in_range(s_range_t r, int64_t t_us)
{
    return t_us >= r.start_us && t_us <= r.end_us;
}

// The value at t_us on the line from a to b (a.t_us < b.t_us, t_us within).
static double s_interpolate(s_point_t a, s_point_t b, int64_t t_us)
{
    if (t_us == b.t_us) {
        return b.p_mw; // exact at whole-segment ends
    }
    return a.p_mw + (b.p_mw - a.p_mw) * (double) (t_us - a.t_us) / (double) (b.t_us - a.t_us);
}

// Adds the part of segment a..b inside r, by the trapezoid rule on the clipped segment.
static void s_fold_segment(s_series_acc_t *acc, s_point_t a, s_point_t b, s_range_t r)
{
    int64_t lo = a.t_us > r.start_us ? a.t_us : r.start_us;
    int64_t hi = b.t_us < r.end_us ? b.t_us : r.end_us;
    if (hi <= lo) {
        return;
    }
    double p_lo = lo == a.t_us ? a.p_mw : s_interpolate(a, b, lo);
    double p_hi = s_interpolate(a, b, hi);
    acc->energy_mj += s_mj((p_lo + p_hi) / 2.0, hi - lo);
    acc->covered_us += hi - lo;
}

// Counts a gap between two accepted samples (definitions in agent_energy.h).
static void s_fold_gap(s_acc_t *acc, int64_t gap_us, int rate_hz)
{
    if (gap_us > acc->max_gap_us) {
        acc->max_gap_us = gap_us;
    }
    // gap x rate is the gap in periods times 1e6; exact in a double for gaps below ~50 days.
    double periods_e6 = (double) gap_us * (double) rate_hz;
    if (rate_hz == 0 ||
        AGENT_ENERGY_LATE_DEN * periods_e6 <= AGENT_ENERGY_LATE_NUM * S_US_PER_S_F) {
        return;
    }
    acc->n_late++;
    acc->n_missed += (int64_t) floor((2.0 * periods_e6 + S_US_PER_S_F) / (2.0 * S_US_PER_S_F)) - 1;
}

// Counts a sample that lies inside the range: itself, its gap and its readings.
static void s_fold_sample_stats(s_acc_t *acc, const s_cursor_t *prev, const s_entry_t *x,
                                int rate_hz)
{
    if (acc->n_samples == 0) {
        acc->first_us = x->mono_us;
    }
    acc->n_samples++;
    acc->last_us = x->mono_us;
    if (prev->has_sample) {
        s_fold_gap(acc, x->mono_us - prev->sample_us, rate_hz);
    }
    double sum_mw = 0.0;
    for (size_t i = 0; i < S_SLOTS; i++) {
        if (!x->has[i]) {
            continue;
        }
        s_series_acc_t *s = &acc->series[i];
        s->n_readings++;
        s->peak_mw = x->p_mw[i] > s->peak_mw ? x->p_mw[i] : s->peak_mw;
        sum_mw += i == S_INPUT ? 0.0 : x->p_mw[i];
    }
    acc->sum_peak_mw = sum_mw > acc->sum_peak_mw ? sum_mw : acc->sum_peak_mw;
}

// Folds sample x, which follows the state prev, into acc for range r.
static void s_fold_entry(s_acc_t *acc, const s_cursor_t *prev, const s_entry_t *x, s_range_t r,
                         int rate_hz)
{
    for (size_t i = 0; i < S_SLOTS; i++) {
        if (x->has[i] && prev->has[i]) {
            s_point_t b = {x->mono_us, x->p_mw[i]};
            s_fold_segment(&acc->series[i], prev->last[i], b, r);
        }
    }
    if (s_in_range(r, x->mono_us)) {
        s_fold_sample_stats(acc, prev, x, rate_hz);
    }
}

static void s_cursor_advance(s_cursor_t *cur, const s_entry_t *x)
{
    cur->has_sample = true;
    cur->sample_us = x->mono_us;
    for (size_t i = 0; i < S_SLOTS; i++) {
        if (x->has[i]) {
            cur->has[i] = true;
            cur->last[i] = (s_point_t){x->mono_us, x->p_mw[i]};
        }
    }
}

static const s_entry_t *s_ring_at(const agent_energy_t *self, size_t k)
{
    return &self->ring[(self->ring_head + k) % self->history_max];
}

// The settled part plus the retained samples, over range r.
static void s_gather(const agent_energy_t *self, const s_acc_t *settled, s_range_t r, s_acc_t *ret)
{
    *ret = *settled;
    s_cursor_t cur = self->carry;
    for (size_t k = 0; k < self->ring_n; k++) {
        const s_entry_t *x = s_ring_at(self, k);
        s_fold_entry(ret, &cur, x, r, self->rate_hz);
        s_cursor_advance(&cur, x);
    }
}

// Drops the oldest retained sample, folding it into the run and every interval in use.
static void s_ring_drop_oldest(agent_energy_t *self)
{
    const s_entry_t *x = s_ring_at(self, 0);
    s_fold_entry(&self->run_settled, &self->carry, x, s_all, self->rate_hz);
    for (size_t i = 0; i < AGENT_ENERGY_INTERVALS_MAX; i++) {
        s_interval_t *iv = &self->intervals[i];
        if (iv->in_use) {
            s_fold_entry(&iv->settled, &self->carry, x, iv->range, self->rate_hz);
        }
    }
    s_cursor_advance(&self->carry, x);
    self->has_horizon = true;
    self->horizon_us = x->mono_us;
    self->ring_head = (self->ring_head + 1) % self->history_max;
    self->ring_n--;
}

static void s_ring_push(agent_energy_t *self, const s_entry_t *x)
{
    if (self->ring_n == self->history_max) {
        s_ring_drop_oldest(self);
    }
    self->ring[(self->ring_head + self->ring_n) % self->history_max] = *x;
    self->ring_n++;
}

static bool s_has_latest(const agent_energy_t *self)
{
    return self->ring_n > 0 || self->carry.has_sample;
}

static int64_t s_latest_us(const agent_energy_t *self)
{
    return self->ring_n > 0 ? s_ring_at(self, self->ring_n - 1)->mono_us : self->carry.sample_us;
}

agent_energy_t *agent_energy_new(const agent_energy_opts_t *opts, jf_err_t *err)
{
    agent_energy_opts_t o = opts ? *opts : (agent_energy_opts_t){0};
    const char *rail = o.input_rail ? o.input_rail : "";
    size_t history = o.history_max ? o.history_max : AGENT_ENERGY_HISTORY_DEFAULT;
    if (strlen(rail) > AGENT_ENERGY_RAIL_NAME_MAX) {
        (void)jf_err_set(err, -EINVAL, "energy: input rail name '%.64s...' is longer than %d bytes",
                         rail, AGENT_ENERGY_RAIL_NAME_MAX);
        return NULL;
    }
    if (o.rate_hz < 0 || o.rate_hz > AGENT_ENERGY_RATE_MAX_HZ ||
        history > AGENT_ENERGY_HISTORY_MAX) {
        (void)jf_err_set(err, -EINVAL,
                         "energy: rate_hz %d or history_max %zu out of range, expected 0..%d "
                         "and 0..%d",
                         o.rate_hz, o.history_max, AGENT_ENERGY_RATE_MAX_HZ,
                         AGENT_ENERGY_HISTORY_MAX);
        return NULL;
    }
    agent_energy_t *self = calloc(1, sizeof *self);
    if (!self) {
        (void) jf_err_set(err, -ENOMEM, "energy: out of memory");
        return NULL;
    }
    self->ring = calloc(history, sizeof *self->ring);
    if (!self->ring) {
        (void) jf_err_set(err, -ENOMEM, "energy: out of memory for %zu history samples", history);
        goto fail_destroy;
    }
    (void) snprintf(self->input_rail, sizeof self->input_rail, "%s", rail); // length checked
    self->rate_hz = o.rate_hz;
    self->history_max = history;
    return self;

fail_destroy:
    agent_energy_destroy(&self);
    return NULL;
}

void agent_energy_destroy(agent_energy_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    free((*self_p)->ring);
    free(*self_p);
    *self_p = NULL;
}

// Rail slot of name (1..), or 0 if the rail is not known yet.
static size_t s_rail_slot(const agent_energy_t *self, const char *name)
{
    for (size_t i = 0; i < self->n_rails; i++) {
        if (strcmp(self->rail_names[i], name) == 0) {
            return i + 1;
        }
    }
    return 0;
}

static int s_check_power(double power_mw, int64_t mono_us, const char *what, jf_err_t *err)
{
    if (isfinite(power_mw) && power_mw >= 0.0 && power_mw <= AGENT_ENERGY_POWER_MAX_MW) {
        return 0;
    }
    return jf_err_set(err, -EINVAL,
                      "energy: sample at mono_us %" PRId64 ": %s power %g mW, expected 0..%g mW",
                      mono_us, what, power_mw, AGENT_ENERGY_POWER_MAX_MW);
}

static int s_check_time(const agent_energy_t *self, int64_t mono_us, jf_err_t *err)
{
    if (mono_us < 0) {
        return jf_err_set(err, -EINVAL, "energy: sample at mono_us %" PRId64 " is negative",
                          mono_us);
    }
    if (!s_has_latest(self) || mono_us > s_latest_us(self)) {
        return 0;
    }
    return jf_err_set(err, -EINVAL,
                      "energy: sample at mono_us %" PRId64 " %s the previous sample at %" PRId64
                      "; samples must come in increasing mono_us order",
                      mono_us, mono_us == s_latest_us(self) ? "repeats the time of" : "is before",
                      s_latest_us(self));
}

// Checks rail i of the sample against the rails before it; counts it in *n_new if unknown.
static int s_check_reading(const agent_energy_t *self, const agent_energy_sample_t *s, size_t i,
                           size_t *n_new, jf_err_t *err)
{
    const char *name = s->rails[i].name;
    size_t len = name ? strlen(name) : 0;
    if (len == 0 || len > AGENT_ENERGY_RAIL_NAME_MAX) {
        return jf_err_set(err, -EINVAL,
                          "energy: sample at mono_us %" PRId64 ": rail %zu has an empty or too "
                          "long name '%.64s', expected 1..%d bytes",
                          s->mono_us, i, name ? name : "", AGENT_ENERGY_RAIL_NAME_MAX);
    }
    for (size_t j = 0; j < i; j++) {
        if (strcmp(s->rails[j].name, name) == 0) {
            return jf_err_set(err, -EINVAL,
                              "energy: sample at mono_us %" PRId64 ": rail '%s' appears twice",
                              s->mono_us, name);
        }
    }
    *n_new += s_rail_slot(self, name) == 0 ? 1 : 0;
    if (self->n_rails + *n_new > AGENT_ENERGY_RAILS_MAX) {
        return jf_err_set(err, -ENOSPC,
                          "energy: sample at mono_us %" PRId64 ": rail '%s' would be rail %zu, "
                          "at most %d rails are supported",
                          s->mono_us, name, self->n_rails + *n_new, AGENT_ENERGY_RAILS_MAX);
    }
    char what[AGENT_ENERGY_RAIL_NAME_MAX + 16] = {0};
    (void) snprintf(what, sizeof what, "rail '%s'", name); // fits: name length checked
    return s_check_power(s->rails[i].power_mw, s->mono_us, what, err);
}

// Checks the whole sample before anything changes.
static int s_check_sample(const agent_energy_t *self, const agent_energy_sample_t *s, jf_err_t *err)
{
    int rc = s_check_time(self, s->mono_us, err);
    if (rc == 0 && s->n_rails > AGENT_ENERGY_RAILS_MAX) {
        rc = jf_err_set(err, -ENOSPC,
                        "energy: sample at mono_us %" PRId64 " has %zu rails, at most %d are "
                        "supported",
                        s->mono_us, s->n_rails, AGENT_ENERGY_RAILS_MAX);
    }
    if (rc == 0 && s->n_rails > 0 && !s->rails) {
        rc = jf_err_set(err, -EINVAL, "energy: sample at mono_us %" PRId64 ": rails is NULL",
                        s->mono_us);
    }
    if (rc == 0 && s->has_input) {
        rc = s_check_power(s->input_power_mw, s->mono_us, "input", err);
    }
    size_t n_new = 0;
    for (size_t i = 0; rc == 0 && i < s->n_rails; i++) {
        rc = s_check_reading(self, s, i, &n_new, err);
    }
    return rc;
}

// Builds the ring entry of a checked sample, registering rails seen for the first time.
static void s_entry_build(agent_energy_t *self, const agent_energy_sample_t *s, s_entry_t *ret)
{
    *ret = (s_entry_t){.mono_us = s->mono_us};
    for (size_t i = 0; i < s->n_rails; i++) {
        const agent_energy_reading_t *r = &s->rails[i];
        size_t slot = s_rail_slot(self, r->name);
        if (slot == 0) {
            (void)snprintf(self->rail_names[self->n_rails], AGENT_ENERGY_RAIL_NAME_MAX + 1, "%s",
                           r->name); // length checked
            slot = ++self->n_rails;
        }
        ret->has[slot] = true;
        ret->p_mw[slot] = r->power_mw;
        if (!s->has_input && self->input_rail[0] && strcmp(r->name, self->input_rail) == 0) {
            ret->has[S_INPUT] = true;
            ret->p_mw[S_INPUT] = r->power_mw;
        }
    }
    if (s->has_input) {
        ret->has[S_INPUT] = true;
        ret->p_mw[S_INPUT] = s->input_power_mw;
    }
}

int agent_energy_add(agent_energy_t *self, const agent_energy_sample_t *sample, jf_err_t *err)
{
    int rc = s_check_sample(self, sample, err);
    if (rc != 0) {
        return rc;
    }
    s_entry_t x = {0};
    s_entry_build(self, sample, &x);
    self->seen_input = self->seen_input || x.has[S_INPUT];
    s_ring_push(self, &x);
    return 0;
}

static int s_json_rail(const json_t *item, size_t i, agent_energy_reading_t *ret_reading,
                       bool *ret_readable, jf_err_t *err)
{
    json_t *name = json_object_get(item, "name");
    json_t *power = json_object_get(item, "power_mw");
    if (!json_is_object(item) || !json_is_string(name)) {
        return jf_err_set(err, -EPROTO, "rails[%zu] must be an object with a string 'name'", i);
    }
    if (power && !json_is_number(power)) {
        return jf_err_set(err, -EPROTO, "rails[%zu].power_mw must be a number", i);
    }
    *ret_readable = power != NULL; // a member that cannot be read is left out of the sample
    if (power) {
        *ret_reading = (agent_energy_reading_t){json_string_value(name), json_number_value(power)};
    }
    return 0;
}

// Fills rails (AGENT_ENERGY_RAILS_MAX entries) from the readable members of a rails[] array.
static int s_json_rails(const json_t *arr, agent_energy_reading_t *rails, size_t *ret_n,
                        jf_err_t *err)
{
    size_t n = 0;
    if (!arr) {
        *ret_n = 0;
        return 0;
    }
    if (!json_is_array(arr)) {
        return jf_err_set(err, -EPROTO, "'rails' must be an array");
    }
    for (size_t i = 0; i < json_array_size(arr); i++) {
        agent_energy_reading_t r = {0};
        bool readable = false;
        int rc = s_json_rail(json_array_get(arr, i), i, &r, &readable, err);
        if (rc == 0 && readable && n == AGENT_ENERGY_RAILS_MAX) {
            rc = jf_err_set(err, -ENOSPC, "more than %d readable rails", AGENT_ENERGY_RAILS_MAX);
        }
        if (rc != 0) {
            return rc;
        }
        if (readable) {
            rails[n++] = r;
        }
    }
    *ret_n = n;
    return 0;
}

int agent_energy_add_json(agent_energy_t *self, const json_t *sample, jf_err_t *err)
{
    if (!json_is_object(sample)) {
        return jf_err_set(err, -EPROTO, "energy: a telemetry sample must be a JSON object");
    }
    json_t *mono = json_object_get(sample, "mono_us");
    json_t *input = json_object_get(sample, "input_power_mw");
    if (!mono) {
        return jf_err_set(err, -ENOENT, "energy: sample has no 'mono_us' (not a live sample)");
    }
    if (!json_is_integer(mono) || (input && !json_is_number(input))) {
        return jf_err_set(err, -EPROTO,
                          "energy: 'mono_us' must be an integer and 'input_power_mw' a number");
    }
    agent_energy_reading_t rails[AGENT_ENERGY_RAILS_MAX] = {{0}};
    agent_energy_sample_t s = {.mono_us = json_integer_value(mono),
                               .has_input = input != NULL,
                               .input_power_mw = input ? json_number_value(input) : 0.0,
                               .rails = rails};
    int rc = s_json_rails(json_object_get(sample, "rails"), rails, &s.n_rails, err);
    if (rc != 0) {
        return jf_err_prefix(err, "energy: sample at mono_us %" PRId64, s.mono_us);
    }
    return agent_energy_add(self, &s, err);
}

static jf_measure_total_t s_total(const agent_energy_t *self)
{
    if (self->seen_input) {
        return JF_MEASURE_TOTAL_INPUT_RAIL;
    }
    return self->n_rails > 0 ? JF_MEASURE_TOTAL_SUM_OF_RAILS : JF_MEASURE_TOTAL_NONE;
}

static double s_avg_mw(double energy_mj, int64_t covered_us)
{
    return covered_us > 0 ? energy_mj * S_US_PER_S_F / (double) covered_us : 0.0;
}

static void s_fill_rails(const agent_energy_t *self, const s_acc_t *acc, agent_energy_result_t *ret)
{
    ret->n_rails = self->n_rails;
    for (size_t i = 0; i < self->n_rails; i++) {
        const s_series_acc_t *s = &acc->series[i + 1];
        agent_energy_rail_t *r = &ret->rails[i];
        memcpy(r->name, self->rail_names[i], sizeof r->name);
        r->energy_mj = s->energy_mj;
        r->covered_us = s->covered_us;
        r->avg_power_mw = s_avg_mw(s->energy_mj, s->covered_us);
        r->peak_power_mw = s->peak_mw;
        r->n_readings = s->n_readings;
    }
}

// Fills the total from the input series or from the rails, per the source.
static void s_fill_total(const s_acc_t *acc, agent_energy_result_t *ret)
{
    if (ret->total == JF_MEASURE_TOTAL_INPUT_RAIL) {
        ret->energy_mj = acc->series[S_INPUT].energy_mj;
        ret->covered_us = acc->series[S_INPUT].covered_us;
        ret->peak_power_mw = acc->series[S_INPUT].peak_mw;
    } else {
        for (size_t i = 0; i < ret->n_rails; i++) {
            ret->energy_mj += ret->rails[i].energy_mj;
            ret->covered_us = ret->rails[i].covered_us > ret->covered_us ? ret->rails[i].covered_us
                                                                         : ret->covered_us;
        }
        ret->peak_power_mw = acc->sum_peak_mw;
    }
    ret->avg_power_mw = s_avg_mw(ret->energy_mj, ret->covered_us);
}

static void s_fill_result(const agent_energy_t *self, const s_acc_t *acc, s_range_t shown,
                          agent_energy_result_t *ret)
{
    *ret = (agent_energy_result_t){.total = s_total(self),
                                   .start_us = shown.start_us,
                                   .end_us = shown.end_us,
                                   .duration_us = shown.end_us - shown.start_us,
                                   .n_samples = acc->n_samples,
                                   .rate_hz = self->rate_hz,
                                   .n_late = acc->n_late,
                                   .n_missed = acc->n_missed,
                                   .max_gap_us = acc->max_gap_us};
    if (acc->n_samples > 1) {
        ret->achieved_rate_hz =
            (double) (acc->n_samples - 1) * S_US_PER_S_F / (double) (acc->last_us - acc->first_us);
    }
    s_fill_rails(self, acc, ret);
    s_fill_total(acc, ret);
}

void agent_energy_result(const agent_energy_t *self, agent_energy_result_t *ret_result)
{
    s_acc_t acc = {0};
    s_gather(self, &self->run_settled, s_all, &acc);
    s_range_t shown = {0, 0};
    if (acc.n_samples > 0) {
        shown = (s_range_t){acc.first_us, acc.last_us};
    }
    s_fill_result(self, &acc, shown, ret_result);
}

// Fails unless t_us is later than every sample dropped from the history.
static int s_check_boundary(const agent_energy_t *self, const char *which, int64_t t_us,
                            jf_err_t *err)
{
    if (t_us < 0) {
        return jf_err_set(err, -EINVAL, "energy: interval %s %" PRId64 " us is negative", which,
                          t_us);
    }
    if (!self->has_horizon || t_us > self->horizon_us) {
        return 0;
    }
    return jf_err_set(err, -ERANGE,
                      "energy: interval %s %" PRId64 " us is not after %" PRId64
                      " us, the latest sample dropped from the history of %zu samples",
                      which, t_us, self->horizon_us, self->history_max);
}

int agent_energy_interval_open(agent_energy_t *self, int64_t start_us, int *ret_id, jf_err_t *err)
{
    int rc = s_check_boundary(self, "start", start_us, err);
    if (rc != 0) {
        return rc;
    }
    for (int i = 0; i < AGENT_ENERGY_INTERVALS_MAX; i++) {
        s_interval_t *iv = &self->intervals[i];
        if (!iv->in_use) {
            *iv = (s_interval_t){.in_use = true, .range = {start_us, INT64_MAX}};
            *ret_id = i;
            return 0;
        }
    }
    return jf_err_set(err, -ENOSPC, "energy: all %d intervals are in use; drop finished ones",
                      AGENT_ENERGY_INTERVALS_MAX);
}

static int s_check_id(const agent_energy_t *self, int id, jf_err_t *err)
{
    if (id < 0 || id >= AGENT_ENERGY_INTERVALS_MAX || !self->intervals[id].in_use) {
        return jf_err_set(err, -ENOENT, "energy: no interval with id %d", id);
    }
    return 0;
}

int agent_energy_interval_close(agent_energy_t *self, int id, int64_t end_us, jf_err_t *err)
{
    int rc = s_check_id(self, id, err);
    if (rc != 0) {
        return rc;
    }
    s_interval_t *iv = &self->intervals[id];
    if (iv->closed || end_us < iv->range.start_us) {
        return jf_err_set(err, -EINVAL,
                          "energy: interval %d: cannot close at %" PRId64 " us, it is %s %" PRId64
                          " us",
                          id, end_us, iv->closed ? "already closed at" : "open since",
                          iv->closed ? iv->range.end_us : iv->range.start_us);
    }
    rc = s_check_boundary(self, "end", end_us, err);
    if (rc != 0) {
        return rc;
    }
    iv->closed = true;
    iv->range.end_us = end_us;
    return 0;
}

bool agent_energy_interval_is_complete(const agent_energy_t *self, int id)
{
    if (s_check_id(self, id, NULL) != 0) {
        return false;
    }
    const s_interval_t *iv = &self->intervals[id];
    return iv->closed && s_has_latest(self) && s_latest_us(self) >= iv->range.end_us;
}

int agent_energy_interval_result(const agent_energy_t *self, int id,
                                 agent_energy_result_t *ret_result, jf_err_t *err)
{
    int rc = s_check_id(self, id, err);
    if (rc != 0) {
        return rc;
    }
    const s_interval_t *iv = &self->intervals[id];
    s_acc_t acc = {0};
    s_gather(self, &iv->settled, iv->range, &acc);
    s_range_t shown = iv->range;
    if (!iv->closed) {
        int64_t latest = s_has_latest(self) ? s_latest_us(self) : shown.start_us;
        shown.end_us = latest > shown.start_us ? latest : shown.start_us;
    }
    s_fill_result(self, &acc, shown, ret_result);
    return 0;
}

int agent_energy_interval_drop(agent_energy_t *self, int id, jf_err_t *err)
{
    int rc = s_check_id(self, id, err);
    if (rc != 0) {
        return rc;
    }
    self->intervals[id] = (s_interval_t){0};
    return 0;
}
