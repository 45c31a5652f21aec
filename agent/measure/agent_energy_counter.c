/* Energy counter accumulator: the summed zones' counters unwrapped into cumulative microjoules,
 * kept in a ring of history_max samples so that interval boundaries may arrive late, plus the
 * run's first and last good sample. The model is in agent_energy_counter.h. */
#include "agent_energy_counter.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_UJ_PER_MJ  1000.0
#define S_MW_PER_W   1000.0
#define S_PSYS       "psys"
#define S_PACKAGE    "package-"
#define S_DRAM       "dram"

// One retained sample: its time and the cumulative energy of each summed zone since the first.
typedef struct s_entry {
    int64_t mono_us;
    int64_t cum_uj[AGENT_ENERGY_COUNTER_ZONES_MAX]; // per summed zone, uJ
    int64_t total_uj;                            // their sum, uJ
} s_entry_t;

struct agent_energy_counter {
    size_t history_max;
    s_entry_t *ring;   // owned; history_max entries
    size_t ring_head;  // oldest retained
    size_t ring_n;     // retained
    bool has_latest;   // some sample was added
    int64_t latest_us; // the latest sample's time (good or not), us
    bool chosen;       // a sample with counters chose the zones
    size_t n_zones;    // summed zones; 0 until chosen (or when none fits)
    char names[AGENT_ENERGY_COUNTER_ZONES_MAX][AGENT_ENERGY_COUNTER_NAME_MAX + 1];
    int64_t last_raw_uj[AGENT_ENERGY_COUNTER_ZONES_MAX]; // each zone's last counter value
    int64_t range_uj[AGENT_ENERGY_COUNTER_ZONES_MAX];    // each zone's wrap range; 0 unknown
    char covers[AGENT_ENERGY_COUNTER_COVERS_MAX + 1];
    s_entry_t first;      // the first sample with zones
    s_entry_t last;       // the last good sample
    double run_peak_mw;   // highest step mean power so far
    bool run_has_peak;    // a step was seen
    bool broken;          // a step was refused: energy known up to last.mono_us only
    char reason[AGENT_ENERGY_COUNTER_REASON_MAX + 1];
};

agent_energy_counter_t *agent_energy_counter_new(const agent_energy_counter_opts_t *opts,
                                                 jf_err_t *err)
{
    size_t n = opts->history_max;
    if (n < AGENT_ENERGY_COUNTER_HISTORY_MIN || n > AGENT_ENERGY_COUNTER_HISTORY_MAX) {
        jf_err_set(err, -EINVAL, "energy counter: history_max %zu out of range %d..%d", n,
                   AGENT_ENERGY_COUNTER_HISTORY_MIN, AGENT_ENERGY_COUNTER_HISTORY_MAX);
        return NULL;
    }
    agent_energy_counter_t *self = calloc(1, sizeof *self);
    s_entry_t *ring = self ? calloc(n, sizeof *ring) : NULL;
    if (!ring) {
        free(self);
        jf_err_set(err, -ENOMEM, "energy counter: out of memory");
        return NULL;
    }
    self->ring = ring;
    self->history_max = n;
    return self;
}

void agent_energy_counter_destroy(agent_energy_counter_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    free((*self_p)->ring);
    free(*self_p);
    *self_p = NULL;
}

static const s_entry_t *s_at(const agent_energy_counter_t *self, size_t i)
{
    return &self->ring[(self->ring_head + i) % self->history_max];
}

static void s_push(agent_energy_counter_t *self, const s_entry_t *e)
{
    if (self->ring_n == self->history_max) {
        self->ring_head = (self->ring_head + 1) % self->history_max;
        self->ring_n--;
    }
    self->ring[(self->ring_head + self->ring_n) % self->history_max] = *e;
    self->ring_n++;
}

static bool s_is_sub(const char *name, const char *label)
{
    const char *slash = strchr(name, '/');
    return slash && strcmp(slash + 1, label) == 0;
}

static void s_choose_add(agent_energy_counter_t *self, const agent_energy_counter_zone_t *z)
{
    memcpy(self->names[self->n_zones], z->name, strlen(z->name) + 1);
    self->last_raw_uj[self->n_zones] = z->energy_uj;
    self->range_uj[self->n_zones] = z->range_uj;
    self->n_zones++;
}

// Chooses the zones to sum from the first sample with counters (the model's rule).
static void s_choose(agent_energy_counter_t *self, const agent_energy_counter_sample_t *s)
{
    bool dram = false;
    for (size_t i = 0; i < s->n_zones; i++) {
        if (strcmp(s->zones[i].name, S_PSYS) == 0) {
            s_choose_add(self, &s->zones[i]);
            (void) snprintf(self->covers, sizeof self->covers, "RAPL psys");
            return;
        }
    }
    for (size_t i = 0; i < s->n_zones; i++) {
        const char *name = s->zones[i].name;
        bool is_dram = strcmp(name, S_DRAM) == 0 || s_is_sub(name, S_DRAM);
        bool is_pkg = strncmp(name, S_PACKAGE, strlen(S_PACKAGE)) == 0 && !strchr(name, '/');
        if (is_pkg || is_dram) {
            s_choose_add(self, &s->zones[i]);
            dram = dram || is_dram;
        }
    }
    (void) snprintf(self->covers, sizeof self->covers, "%s",
                    self->n_zones == 0 ? ""
                    : dram             ? "RAPL package+dram"
                                       : "RAPL package");
}

static int s_check(const agent_energy_counter_t *self, const agent_energy_counter_sample_t *s,
                   jf_err_t *err)
{
    if (s->mono_us < 0 || (self->has_latest && s->mono_us <= self->latest_us)) {
        return jf_err_set(err, -EINVAL,
                          "energy counter: sample at mono_us %" PRId64
                          " is negative or not after the previous one",
                          s->mono_us);
    }
    if (s->n_zones > AGENT_ENERGY_COUNTER_ZONES_MAX || (s->n_zones > 0 && !s->zones)) {
        return jf_err_set(err, -EINVAL,
                          "energy counter: sample at mono_us %" PRId64 " has %zu zones, at most %d",
                          s->mono_us, s->n_zones, AGENT_ENERGY_COUNTER_ZONES_MAX);
    }
    for (size_t i = 0; i < s->n_zones; i++) {
        const agent_energy_counter_zone_t *z = &s->zones[i];
        size_t len = z->name ? strlen(z->name) : 0;
        if (len == 0 || len > AGENT_ENERGY_COUNTER_NAME_MAX || z->energy_uj < 0 ||
            z->range_uj < 0) {
            return jf_err_set(err, -EINVAL,
                              "energy counter: sample at mono_us %" PRId64 ": zone %zu ('%.64s') "
                              "needs a name of 1..%d bytes and non-negative counter and range",
                              s->mono_us, i, z->name ? z->name : "", AGENT_ENERGY_COUNTER_NAME_MAX);
        }
    }
    return 0;
}

static const agent_energy_counter_zone_t *s_find(const agent_energy_counter_sample_t *s,
                                                 const char *name)
{
    for (size_t i = 0; i < s->n_zones; i++) {
        if (strcmp(s->zones[i].name, name) == 0) {
            return &s->zones[i];
        }
    }
    return NULL;
}

static void s_break(agent_energy_counter_t *self, int64_t t_us, const char *zone, const char *why)
{
    self->broken = true;
    (void) snprintf(self->reason, sizeof self->reason,
                    "RAPL zone '%s' %s at mono_us %" PRId64 "; energy after mono_us %" PRId64
                    " is unknown",
                    zone, why, t_us, self->last.mono_us);
}

// Zone i's step to counter c over dt_us; false (and broken) when it is not a believable step.
static bool s_step(agent_energy_counter_t *self, size_t i, int64_t c, int64_t t_us, int64_t *ret_uj)
{
    int64_t prev = self->last_raw_uj[i], range = self->range_uj[i];
    if (range > 0 && c > range) {
        s_break(self, t_us, self->names[i], "read above its max_energy_range_uj");
        return false;
    }
    if (c < prev && range == 0) {
        s_break(self, t_us, self->names[i], "went backwards and its wrap range is unknown");
        return false;
    }
    int64_t d = c >= prev ? c - prev : range - prev + c;
    double mw = (double) d / (double) (t_us - self->last.mono_us) * S_MW_PER_W;
    if (mw > AGENT_ENERGY_COUNTER_POWER_MAX_MW) {
        s_break(self, t_us, self->names[i],
                c < prev ? "went backwards beyond a wrap" : "jumped by more than 10 kW allows");
        return false;
    }
    *ret_uj = d;
    return true;
}

// Extends the curve by one sample of the chosen zones, or breaks it.
static void s_advance(agent_energy_counter_t *self, const agent_energy_counter_sample_t *s)
{
    s_entry_t e = self->last;
    e.mono_us = s->mono_us;
    int64_t raw[AGENT_ENERGY_COUNTER_ZONES_MAX] = {0};
    for (size_t i = 0; i < self->n_zones; i++) {
        const agent_energy_counter_zone_t *z = s_find(s, self->names[i]);
        int64_t d = 0;
        if (!z) {
            s_break(self, s->mono_us, self->names[i], "disappeared");
            return;
        }
        if (!s_step(self, i, z->energy_uj, s->mono_us, &d)) {
            return;
        }
        raw[i] = z->energy_uj;
        e.cum_uj[i] += d;
        e.total_uj += d;
    }
    memcpy(self->last_raw_uj, raw, sizeof raw);
    double mw = (double) (e.total_uj - self->last.total_uj) /
                (double) (e.mono_us - self->last.mono_us) * S_MW_PER_W;
    self->run_peak_mw = !self->run_has_peak || mw > self->run_peak_mw ? mw : self->run_peak_mw;
    self->run_has_peak = true;
    self->last = e;
    s_push(self, &e);
}

int agent_energy_counter_add(agent_energy_counter_t *self,
                             const agent_energy_counter_sample_t *sample, jf_err_t *err)
{
    int rc = s_check(self, sample, err);
    if (rc != 0) {
        return rc;
    }
    self->has_latest = true;
    self->latest_us = sample->mono_us;
    if (self->broken || (!self->chosen && sample->n_zones == 0)) {
        return 0; // before any counter the sample only advances time
    }
    if (!self->chosen) {
        self->chosen = true;
        s_choose(self, sample);
        if (self->n_zones == 0) {
            (void) snprintf(self->reason, sizeof self->reason,
                            "no RAPL package or psys zone among the counters");
            return 0;
        }
        self->first = (s_entry_t){.mono_us = sample->mono_us};
        self->last = self->first;
        s_push(self, &self->first);
        return 0;
    }
    if (self->n_zones > 0) {
        s_advance(self, sample);
    }
    return 0;
}

static int s_json_zones(const json_t *counters, const json_t *ranges,
                        agent_energy_counter_zone_t *zones, size_t *ret_n, jf_err_t *err)
{
    const char *key = NULL;
    json_t *v = NULL;
    size_t n = 0;
    if ((counters && !json_is_object(counters)) || (ranges && !json_is_object(ranges))) {
        return jf_err_set(err, -EPROTO, "energy counter: 'rapl_energy_uj' and "
                                        "'rapl_max_energy_range_uj' must be objects");
    }
    json_object_foreach ((json_t *) counters, key, v) {
        json_t *r = json_object_get(ranges, key);
        if (!json_is_integer(v) || (r && !json_is_integer(r))) {
            return jf_err_set(err, -EPROTO, "energy counter: zone '%.64s' must be an integer", key);
        }
        if (n == AGENT_ENERGY_COUNTER_ZONES_MAX) {
            return jf_err_set(err, -EINVAL, "energy counter: more than %d zones",
                              AGENT_ENERGY_COUNTER_ZONES_MAX);
        }
        zones[n++] = (agent_energy_counter_zone_t){key, json_integer_value(v),
                                                   r ? json_integer_value(r) : 0};
    }
    *ret_n = n;
    return 0;
}

int agent_energy_counter_add_json(agent_energy_counter_t *self, const json_t *sample, jf_err_t *err)
{
    json_t *mono = json_object_get(sample, "mono_us");
    if (!mono) {
        return jf_err_set(err, -ENOENT, "energy counter: sample has no 'mono_us'");
    }
    if (!json_is_integer(mono)) {
        return jf_err_set(err, -EPROTO, "energy counter: 'mono_us' must be an integer");
    }
    agent_energy_counter_zone_t zones[AGENT_ENERGY_COUNTER_ZONES_MAX] = {{0}};
    agent_energy_counter_sample_t s = {.mono_us = json_integer_value(mono), .zones = zones};
    int rc = s_json_zones(json_object_get(sample, "rapl_energy_uj"),
                          json_object_get(sample, "rapl_max_energy_range_uj"), zones, &s.n_zones,
                          err);
    return rc != 0 ? rc : agent_energy_counter_add(self, &s, err);
}

bool agent_energy_counter_has_zones(const agent_energy_counter_t *self)
{
    return self->n_zones > 0;
}

const char *agent_energy_counter_covers(const agent_energy_counter_t *self)
{
    return self->n_zones > 0 ? self->covers : "";
}

const char *agent_energy_counter_reason(const agent_energy_counter_t *self)
{
    return self->reason;
}

// Cumulative energy of zone z (or the total when z is n_zones) at t_us, which lies within the
// ring's span; linear between the two retained samples around it.
static double s_cum_at(const agent_energy_counter_t *self, size_t z, int64_t t_us)
{
    size_t i = 0;
    while (i + 1 < self->ring_n && s_at(self, i + 1)->mono_us < t_us) {
        i++;
    }
    const s_entry_t *a = s_at(self, i);
    const s_entry_t *b = i + 1 < self->ring_n ? s_at(self, i + 1) : a;
    double va = (double) (z < self->n_zones ? a->cum_uj[z] : a->total_uj);
    double vb = (double) (z < self->n_zones ? b->cum_uj[z] : b->total_uj);
    if (b->mono_us == a->mono_us || t_us <= a->mono_us) {
        return va;
    }
    return va + (vb - va) * (double) (t_us - a->mono_us) / (double) (b->mono_us - a->mono_us);
}

// The highest step mean power of steps wholly inside [start, end], over the ring.
static void s_peak(const agent_energy_counter_t *self, int64_t start_us, int64_t end_us,
                   agent_energy_counter_result_t *r)
{
    for (size_t i = 0; i + 1 < self->ring_n; i++) {
        const s_entry_t *a = s_at(self, i), *b = s_at(self, i + 1);
        if (a->mono_us < start_us || b->mono_us > end_us) {
            continue;
        }
        double mw = (double) (b->total_uj - a->total_uj) / (double) (b->mono_us - a->mono_us) *
                    S_MW_PER_W;
        r->peak_power_mw = !r->has_peak || mw > r->peak_power_mw ? mw : r->peak_power_mw;
        r->has_peak = true;
    }
}

// Fails when there is no energy up to end_us: no zones, or a break before it.
static int s_check_zones(const agent_energy_counter_t *self, int64_t end_us, jf_err_t *err)
{
    if (self->n_zones == 0) {
        return jf_err_set(err, -ENOENT, "energy counter: %s",
                          self->reason[0] ? self->reason : "no RAPL counters were read");
    }
    if (self->broken && end_us > self->last.mono_us) {
        return jf_err_set(err, -EIO, "energy counter: %s", self->reason);
    }
    return 0;
}

static int s_check_range(const agent_energy_counter_t *self, int64_t start_us, int64_t end_us,
                         jf_err_t *err)
{
    int rc = s_check_zones(self, end_us, err);
    if (rc != 0) {
        return rc;
    }
    const s_entry_t *oldest = s_at(self, 0);
    if (start_us < oldest->mono_us && oldest->mono_us != self->first.mono_us) {
        return jf_err_set(err, -ERANGE,
                          "energy counter: %" PRId64 " us is before the retained history (%"
                          PRId64 " us)",
                          start_us, oldest->mono_us);
    }
    if (end_us < start_us || end_us < self->first.mono_us || start_us > self->last.mono_us) {
        return jf_err_set(err, -ERANGE,
                          "energy counter: [%" PRId64 ", %" PRId64 "] us is not covered by the "
                          "counters' samples [%" PRId64 ", %" PRId64 "] us",
                          start_us, end_us, self->first.mono_us, self->last.mono_us);
    }
    return 0;
}

int agent_energy_counter_between(const agent_energy_counter_t *self, int64_t start_us,
                                 int64_t end_us, agent_energy_counter_result_t *ret_result,
                                 jf_err_t *err)
{
    int rc = s_check_range(self, start_us, end_us, err);
    if (rc != 0) {
        return rc;
    }
    int64_t a = start_us > s_at(self, 0)->mono_us ? start_us : s_at(self, 0)->mono_us;
    int64_t b = end_us < self->last.mono_us ? end_us : self->last.mono_us;
    agent_energy_counter_result_t r = {
        .start_us = a, .end_us = b, .covered_us = b - a, .n_zones = self->n_zones};
    r.energy_mj = (s_cum_at(self, self->n_zones, b) - s_cum_at(self, self->n_zones, a)) /
                  S_UJ_PER_MJ;
    for (size_t z = 0; z < self->n_zones; z++) {
        memcpy(r.names[z], self->names[z], sizeof r.names[z]);
        r.zone_energy_mj[z] = (s_cum_at(self, z, b) - s_cum_at(self, z, a)) / S_UJ_PER_MJ;
    }
    r.avg_power_mw = r.covered_us > 0 ? r.energy_mj * 1e6 / (double) r.covered_us : 0.0;
    s_peak(self, a, b, &r);
    *ret_result = r;
    return 0;
}

int agent_energy_counter_run(const agent_energy_counter_t *self,
                             agent_energy_counter_result_t *ret_result, jf_err_t *err)
{
    int64_t end_us = self->has_latest ? self->latest_us : 0;
    int rc = s_check_zones(self, end_us, err);
    if (rc != 0) {
        return rc;
    }
    const s_entry_t *a = &self->first, *b = &self->last;
    agent_energy_counter_result_t r = {.start_us = a->mono_us,
                                       .end_us = b->mono_us,
                                       .covered_us = b->mono_us - a->mono_us,
                                       .energy_mj =
                                           (double)(b->total_uj - a->total_uj) / S_UJ_PER_MJ,
                                       .has_peak = self->run_has_peak,
                                       .peak_power_mw = self->run_peak_mw,
                                       .n_zones = self->n_zones};
    for (size_t z = 0; z < self->n_zones; z++) {
        memcpy(r.names[z], self->names[z], sizeof r.names[z]);
        r.zone_energy_mj[z] = (double) (b->cum_uj[z] - a->cum_uj[z]) / S_UJ_PER_MJ;
    }
    r.avg_power_mw = r.covered_us > 0 ? r.energy_mj * 1e6 / (double) r.covered_us : 0.0;
    *ret_result = r;
    return 0;
}
