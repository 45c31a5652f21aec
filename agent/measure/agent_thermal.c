/* Highest temperature per zone and clocks seen per (clock, frequency) over a run. */
#include "agent_thermal.h"

#include <stdlib.h>
#include <string.h>

#define S_GPU (-1) // the clock of a step: the GPU, or a core number

typedef struct s_step {
    int clock;       // S_GPU or a core number
    int64_t freq_hz; // the frequency read back
    int64_t count;   // samples that read it
} s_step_t;

struct agent_thermal {
    int64_t samples;
    size_t n_zones;
    jf_measure_zone_t zones[JF_MEASURE_ZONES_MAX];
    size_t n_steps;
    s_step_t steps[AGENT_THERMAL_STEPS_MAX];
};

agent_thermal_t *agent_thermal_new(void)
{
    return calloc(1, sizeof(agent_thermal_t));
}

void agent_thermal_destroy(agent_thermal_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    free(*self_p);
    *self_p = NULL;
}

static void s_add_temp(agent_thermal_t *self, const char *name, int64_t mc)
{
    if (strlen(name) > JF_MEASURE_ZONE_NAME_MAX || mc < JF_MEASURE_MC_LO || mc > JF_MEASURE_MC_HI) {
        return;
    }
    for (size_t i = 0; i < self->n_zones; i++) {
        if (strcmp(self->zones[i].name, name) == 0) {
            self->zones[i].max_mc = mc > self->zones[i].max_mc ? mc : self->zones[i].max_mc;
            return;
        }
    }
    if (self->n_zones < JF_MEASURE_ZONES_MAX) {
        jf_measure_zone_t *z = &self->zones[self->n_zones++];
        memcpy(z->name, name, strlen(name) + 1);
        z->max_mc = mc;
    }
}

static void s_add_clock(agent_thermal_t *self, int clock, const json_t *freq)
{
    if (!json_is_integer(freq) || json_integer_value(freq) <= 0) {
        return; // an offline core (null) or nothing read
    }
    int64_t hz = json_integer_value(freq);
    for (size_t i = 0; i < self->n_steps; i++) {
        if (self->steps[i].clock == clock && self->steps[i].freq_hz == hz) {
            self->steps[i].count++;
            return;
        }
    }
    if (self->n_steps < AGENT_THERMAL_STEPS_MAX) {
        self->steps[self->n_steps++] = (s_step_t){.clock = clock, .freq_hz = hz, .count = 1};
    }
}

void agent_thermal_add_sample(agent_thermal_t *self, const json_t *sample)
{
    const char *name = NULL;
    json_t *v = NULL;
    self->samples++;
    json_object_foreach((json_t *) json_object_get(sample, "temps_mc"), name, v)
    {
        if (json_is_integer(v)) {
            s_add_temp(self, name, json_integer_value(v));
        }
    }
    s_add_clock(self, S_GPU, json_object_get(sample, "gpu_freq_hz"));
    size_t core = 0;
    json_array_foreach(json_object_get(sample, "cpu_core_freq_hz"), core, v)
    {
        if (core < JF_MEASURE_CPUS_MAX) {
            s_add_clock(self, (int) core, v);
        }
    }
}

// The cap of core: the max_hz of the cluster with the highest first_core at or below it; 0 when
// the power state has none.
static int64_t s_core_cap_hz(const jf_measure_power_t *power, int core)
{
    int best = -1;
    int64_t cap = 0;
    for (size_t i = 0; power->has_clusters && i < power->n_clusters; i++) {
        const jf_measure_cluster_t *c = &power->clusters[i];
        if (c->first_core <= core && c->first_core > best) {
            best = c->first_core;
            cap = c->max_hz;
        }
    }
    return cap;
}

static void s_compare(const s_step_t *st, int64_t cap_hz, jf_measure_thermal_t *t)
{
    bool gpu = st->clock == S_GPU;
    bool below = st->freq_hz < cap_hz;
    if (gpu) {
        t->has_gpu = true;
        t->gpu_cap_hz = cap_hz;
        t->gpu_samples += st->count;
        t->gpu_below += below ? st->count : 0;
        t->gpu_lowest_hz = t->gpu_lowest_hz == 0 || st->freq_hz < t->gpu_lowest_hz
                               ? st->freq_hz
                               : t->gpu_lowest_hz;
        return;
    }
    t->has_cpu = true;
    t->cpu_samples += st->count;
    t->cpu_below += below ? st->count : 0;
    double shortfall = below ? 100.0 * (double) (cap_hz - st->freq_hz) / (double) cap_hz : 0.0;
    t->cpu_max_shortfall_pct =
        shortfall > t->cpu_max_shortfall_pct ? shortfall : t->cpu_max_shortfall_pct;
}

void agent_thermal_result(const agent_thermal_t *self, const jf_measure_power_t *power,
                          jf_measure_thermal_t *ret)
{
    jf_measure_thermal_t t = {.samples = self->samples, .n_zones = self->n_zones};
    memcpy(t.zones, self->zones, self->n_zones * sizeof t.zones[0]);
    for (size_t i = 0; power && i < self->n_steps; i++) {
        const s_step_t *st = &self->steps[i];
        int64_t cap_hz = st->clock == S_GPU ? (power->has_gpu_max_hz ? power->gpu_max_hz : 0)
                                            : s_core_cap_hz(power, st->clock);
        if (cap_hz > 0) {
            s_compare(st, cap_hz, &t);
        }
    }
    *ret = t;
}
