/* The search session and its profile cache, answering a budget from the profiled points, the
 * Pareto set, and the gradient-descent policy (coord_csearch.h; docs/concurrent.md). The active
 * learning policy is coord_csearch_al.c. */
#include "coord_csearch_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

coord_csearch_t *coord_csearch_new(const coord_csearch_space_t *space,
                                   coord_csearch_profile_fn profile, void *arg, jf_err_t *err)
{
    size_t n = 1;
    for (int d = 0; d < COORD_CSEARCH_DIMS; d++) {
        if (space->size[d] < 1) {
            (void) jf_err_set(err, -EINVAL, "csearch: dimension %d has %d steps, expected >= 1", d,
                              space->size[d]);
            return NULL;
        }
        n *= (size_t) space->size[d];
        if (n > COORD_CSEARCH_POINTS_MAX) {
            (void) jf_err_set(err, -EINVAL, "csearch: more than %d points in the space",
                              COORD_CSEARCH_POINTS_MAX);
            return NULL;
        }
    }
    if (!profile) {
        (void) jf_err_set(err, -EINVAL, "csearch: no profile function");
        return NULL;
    }
    coord_csearch_t *self = calloc(1, sizeof *self);
    int32_t *slot = malloc(n * sizeof *slot);
    if (!self || !slot) {
        free(self);
        free(slot);
        (void) jf_err_set(err, -ENOMEM, "csearch: out of memory for %zu points", n);
        return NULL;
    }
    memset(slot, 0xff, n * sizeof *slot); // every byte 0xff: -1, not profiled
    *self = (coord_csearch_t){
        .space = *space, .n_points = n, .profile = profile, .arg = arg, .slot = slot};
    return self;
}

void coord_csearch_destroy(coord_csearch_t **self_p)
{
    if (self_p && *self_p) {
        free((*self_p)->slot);
        free((*self_p)->entries);
        free(*self_p);
        *self_p = NULL;
    }
}

size_t coord_csearch_profiled(const coord_csearch_t *self)
{
    return self->n_entries;
}

size_t coord_csearch_index(const coord_csearch_t *self, const int point[COORD_CSEARCH_DIMS])
{
    size_t idx = 0;
    for (int d = 0; d < COORD_CSEARCH_DIMS; d++) {
        idx = idx * (size_t) self->space.size[d] + (size_t) point[d];
    }
    return idx;
}

static int s_grow(coord_csearch_t *self, jf_err_t *err)
{
    if (self->n_entries < self->cap) {
        return 0;
    }
    size_t cap = self->cap ? 2 * self->cap : 64;
    coord_csearch_entry_t *e = realloc(self->entries, cap * sizeof *e);
    if (!e) {
        return jf_err_set(err, -ENOMEM, "csearch: out of memory for %zu profiles", cap);
    }
    self->entries = e;
    self->cap = cap;
    return 0;
}

int coord_csearch_get(coord_csearch_t *self, const int point[COORD_CSEARCH_DIMS],
                      const coord_csearch_obs_t **ret_obs, bool *ret_new, jf_err_t *err)
{
    size_t idx = coord_csearch_index(self, point);
    *ret_new = self->slot[idx] < 0;
    if (!*ret_new) {
        *ret_obs = &self->entries[self->slot[idx]].obs;
        return 0;
    }
    int rc = s_grow(self, err);
    coord_csearch_entry_t e = {.obs = {.ok = false}};
    memcpy(e.point, point, sizeof e.point);
    rc = rc != 0 ? rc : self->profile(self->arg, point, &e.obs, err);
    if (rc != 0) {
        return rc;
    }
    self->slot[idx] = (int32_t) self->n_entries;
    self->entries[self->n_entries] = e;
    *ret_obs = &self->entries[self->n_entries++].obs;
    return 0;
}

static bool s_within(const coord_csearch_obs_t *o, const coord_csearch_budget_t *b)
{
    return o->ok && o->latency_us <= b->latency_us && o->power_mw <= b->power_mw;
}

static int s_check_budget(const coord_csearch_budget_t *b, jf_err_t *err)
{
    if (!(b->latency_us > 0.0) || !(b->power_mw > 0.0)) {
        return jf_err_set(err, -EINVAL, "csearch: budgets must be > 0, got %g us and %g mW",
                          b->latency_us, b->power_mw);
    }
    return 0;
}

int coord_csearch_choose(const coord_csearch_t *self, const coord_csearch_budget_t *budget,
                         coord_csearch_result_t *ret, jf_err_t *err)
{
    int rc = s_check_budget(budget, err);
    if (rc != 0) {
        return rc;
    }
    coord_csearch_result_t r = {0};
    for (size_t i = 0; i < self->n_entries; i++) {
        const coord_csearch_entry_t *e = &self->entries[i];
        if (s_within(&e->obs, budget) && (!r.found || e->obs.train_sps > r.obs.train_sps)) {
            r.found = true;
            r.obs = e->obs;
            memcpy(r.point, e->point, sizeof r.point);
        }
    }
    *ret = r;
    return 0;
}

bool coord_csearch_dominates(const coord_csearch_obs_t *a, const coord_csearch_obs_t *b)
{
    bool no_worse = a->train_sps >= b->train_sps && a->latency_us <= b->latency_us &&
                    a->power_mw <= b->power_mw;
    bool better =
        a->train_sps > b->train_sps || a->latency_us < b->latency_us || a->power_mw < b->power_mw;
    return a->ok && no_worse && better;
}

size_t coord_csearch_pareto(const coord_csearch_t *self, int (*points)[COORD_CSEARCH_DIMS],
                            size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < self->n_entries; i++) {
        const coord_csearch_entry_t *e = &self->entries[i];
        bool beaten = !e->obs.ok;
        for (size_t j = 0; !beaten && j < self->n_entries; j++) {
            beaten = coord_csearch_dominates(&self->entries[j].obs, &e->obs);
        }
        if (!beaten && n++ < max) {
            memcpy(points[n - 1], e->point, sizeof points[0]);
        }
    }
    return n;
}
