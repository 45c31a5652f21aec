/* A simulated board's page cache between runs (agent_sim_cache.h). */
#include "agent_sim_cache.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void agent_sim_cache_drop(agent_sim_cache_t *self)
{
    uint64_t clock = self->clock;
    *self = (agent_sim_cache_t){.clock = clock};
}

static agent_sim_cache_entry_t *s_find(const agent_sim_cache_t *self, const char *dataset)
{
    for (size_t i = 0; i < self->n; i++) {
        if (strcmp(self->entry[i].dataset, dataset) == 0) {
            return (agent_sim_cache_entry_t *) &self->entry[i];
        }
    }
    return NULL;
}

double agent_sim_cache_resident(const agent_sim_cache_t *self, const char *dataset)
{
    const agent_sim_cache_entry_t *e = s_find(self, dataset);
    if (!e || e->dataset_bytes <= 0) {
        return 0.0;
    }
    return fmin(1.0, fmax(0.0, (double) e->resident_bytes / (double) e->dataset_bytes));
}

// The entry for dataset: found, a free one, or the least recently used one reused.
static agent_sim_cache_entry_t *s_entry(agent_sim_cache_t *self, const char *dataset)
{
    agent_sim_cache_entry_t *e = s_find(self, dataset);
    if (!e && self->n < AGENT_SIM_CACHE_DATASETS_MAX) {
        e = &self->entry[self->n++];
    }
    for (size_t i = 0; !e && i < self->n; i++) {
        if (!e || self->entry[i].used < e->used) {
            e = &self->entry[i];
        }
    }
    if (strcmp(e->dataset, dataset) != 0) {
        *e = (agent_sim_cache_entry_t){0};
        (void) snprintf(e->dataset, sizeof e->dataset, "%s", dataset);
    }
    return e;
}

// The other entry used most recently that has not been given its share yet, or NULL.
static agent_sim_cache_entry_t *s_next_recent(agent_sim_cache_t *self, const agent_sim_cache_entry_t *skip,
                                              uint64_t below)
{
    agent_sim_cache_entry_t *best = NULL;
    for (size_t i = 0; i < self->n; i++) {
        agent_sim_cache_entry_t *e = &self->entry[i];
        if (e != skip && e->used < below && (!best || e->used > best->used)) {
            best = e;
        }
    }
    return best;
}

void agent_sim_cache_update(agent_sim_cache_t *self, const char *dataset, double resident_after,
                            int64_t cache_bytes, int64_t dataset_bytes)
{
    if (dataset_bytes <= 0 || !dataset) {
        return;
    }
    double r = isfinite(resident_after) ? fmin(1.0, fmax(0.0, resident_after)) : 0.0;
    agent_sim_cache_entry_t *e = s_entry(self, dataset);
    e->dataset_bytes = dataset_bytes;
    e->resident_bytes = llround(r * (double) dataset_bytes);
    e->used = ++self->clock;
    int64_t room = cache_bytes > e->resident_bytes ? cache_bytes - e->resident_bytes : 0;
    uint64_t below = e->used;
    for (agent_sim_cache_entry_t *o = NULL; (o = s_next_recent(self, e, below)) != NULL;) {
        o->resident_bytes = o->resident_bytes < room ? o->resident_bytes : room;
        room -= o->resident_bytes;
        below = o->used;
    }
}
