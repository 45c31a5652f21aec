/* GPU load before a run's first epoch (agent_gpubefore.h). */
#include "agent_gpubefore.h"

#include <stdlib.h>

#define S_FIRST_CAP 64 // entries of the first allocation; doubled as needed

typedef struct s_entry {
    int64_t t_us;
    double load_pct;
} s_entry_t;

struct agent_gpubefore {
    s_entry_t *v; // owned until settled
    size_t n, cap;
    bool settled;
    agent_gpubefore_result_t result;
};

agent_gpubefore_t *agent_gpubefore_new(void)
{
    return calloc(1, sizeof(agent_gpubefore_t));
}

void agent_gpubefore_destroy(agent_gpubefore_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    free((*self_p)->v);
    free(*self_p);
    *self_p = NULL;
}

void agent_gpubefore_add(agent_gpubefore_t *self, int64_t t_us, double load_pct)
{
    // The comparisons are false for NaN, which is left out with the rest.
    if (self->settled || self->n == AGENT_GPUBEFORE_MAX ||
        !(load_pct >= 0.0 && load_pct <= 100.0)) {
        return;
    }
    if (self->n == self->cap) {
        size_t cap = self->cap ? 2 * self->cap : S_FIRST_CAP;
        cap = cap > AGENT_GPUBEFORE_MAX ? AGENT_GPUBEFORE_MAX : cap;
        s_entry_t *v = realloc(self->v, cap * sizeof *v);
        if (!v) {
            return;
        }
        self->v = v;
        self->cap = cap;
    }
    self->v[self->n++] = (s_entry_t){t_us, load_pct};
}

void agent_gpubefore_settle(agent_gpubefore_t *self, int64_t start_us)
{
    if (self->settled) {
        return;
    }
    self->settled = true;
    agent_gpubefore_result_t r = {0};
    double sum = 0.0;
    for (size_t i = 0; i < self->n; i++) {
        if (self->v[i].t_us < start_us) {
            r.samples++;
            sum += self->v[i].load_pct;
            r.max_pct = self->v[i].load_pct > r.max_pct ? self->v[i].load_pct : r.max_pct;
        }
    }
    r.mean_pct = r.samples > 0 ? sum / (double) r.samples : 0.0;
    self->result = r;
    free(self->v);
    self->v = NULL;
    self->n = self->cap = 0;
}

bool agent_gpubefore_result(const agent_gpubefore_t *self, agent_gpubefore_result_t *ret)
{
    if (!self->settled || self->result.samples == 0) {
        return false;
    }
    *ret = self->result;
    return true;
}
