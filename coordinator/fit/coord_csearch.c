/* The search session: its profile cache and re-runs, the noise learned from them, answering a
 * budget from the profiled points with the noise margin, and the Pareto set (coord_csearch.h;
 * docs/concurrent.md). The policies are coord_csearch_gd.c and coord_csearch_al.c. */
#include "coord_csearch_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// Student t quantiles of COORD_CSEARCH_CONFIDENCE (0.97, one-sided) by degrees of freedom: the
// bound on a new run predicted from a mean and a pooled standard deviation. Computed from the t
// distribution (tan(0.47 pi) for 1); past the table's last row, the normal quantile.
static const struct {
    int dof;
    double t;
} s_t97[] = {{1, 10.579}, {2, 3.896},  {3, 2.951},  {4, 2.601},  {5, 2.422},  {6, 2.313},
             {7, 2.241},  {8, 2.189},  {9, 2.150},  {10, 2.120}, {12, 2.076}, {15, 2.034},
             {20, 1.994}, {30, 1.955}, {60, 1.917}, {120, 1.899}};
#define S_T97_NORMAL 1.881

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

void coord_csearch_set_rerun(coord_csearch_t *self, coord_csearch_rerun_fn rerun, void *arg)
{
    self->rerun = rerun;
    self->rerun_arg = arg;
}

size_t coord_csearch_profiled(const coord_csearch_t *self)
{
    return self->n_profiles;
}

// The t quantile at dof, taking the next smaller row of the table (the larger quantile).
static double s_t_quantile(int dof)
{
    double t = 0.0;
    size_t n = sizeof s_t97 / sizeof s_t97[0];
    for (size_t i = 0; dof > 0 && i < n && s_t97[i].dof <= dof; i++) {
        t = s_t97[i].t;
    }
    return dof > s_t97[n - 1].dof ? S_T97_NORMAL : t;
}

void coord_csearch_set_noise(coord_csearch_t *self, const coord_csearch_noise_t *prior)
{
    self->prior = *prior;
    self->prior.dof = prior->dof > 0 ? prior->dof : 0;
}

void coord_csearch_noise(const coord_csearch_t *self, coord_csearch_noise_t *ret)
{
    const coord_csearch_noise_t *pr = &self->prior;
    double ss_lat = pr->dof * pr->latency_log_sd * pr->latency_log_sd;
    double ss_pow = pr->dof * pr->power_log_sd * pr->power_log_sd;
    int dof = pr->dof;
    for (size_t i = 0; i < self->n_entries; i++) {
        const coord_csearch_entry_t *e = &self->entries[i];
        if (e->runs < 2 || !e->obs.ok) {
            continue;
        }
        ss_lat += fmax(0.0, e->sumsq_log[1] - e->sum_log[1] * e->sum_log[1] / e->runs);
        ss_pow += fmax(0.0, e->sumsq_log[2] - e->sum_log[2] * e->sum_log[2] / e->runs);
        dof += e->runs - 1;
    }
    *ret = (coord_csearch_noise_t){.dof = dof,
                                   .latency_log_sd = dof ? sqrt(ss_lat / dof) : 0.0,
                                   .power_log_sd = dof ? sqrt(ss_pow / dof) : 0.0,
                                   .t_quantile = s_t_quantile(dof)};
}

// Adds one run's figures to e's sums and sets its observation to the means over its runs.
static void s_add_run(coord_csearch_entry_t *e, const coord_csearch_obs_t *o)
{
    if (!o->ok || !(o->train_sps > 0.0) || !(o->latency_us > 0.0) || !(o->power_mw > 0.0)) {
        e->obs.ok = false; // a point that failed once is never chosen
        e->runs++;
        return;
    }
    double y[3] = {log(o->train_sps), log(o->latency_us), log(o->power_mw)};
    for (int j = 0; j < 3; j++) {
        e->sum_log[j] += y[j];
        e->sumsq_log[j] += y[j] * y[j];
    }
    if (++e->runs > 1 && e->obs.ok) {
        e->obs.train_sps = exp(e->sum_log[0] / e->runs);
        e->obs.latency_us = exp(e->sum_log[1] / e->runs);
        e->obs.power_mw = exp(e->sum_log[2] / e->runs);
    }
}

int coord_csearch_rerun(coord_csearch_t *self, size_t i, jf_err_t *err)
{
    if (!self->rerun || i >= self->n_entries) {
        return jf_err_set(err, -EINVAL, "csearch: no re-run function or no entry %zu", i);
    }
    coord_csearch_entry_t *e = &self->entries[i];
    coord_csearch_obs_t o = {.ok = false};
    int rc = self->rerun(self->rerun_arg, e->point, e->runs, &o, err);
    if (rc == 0) {
        self->n_profiles++;
        s_add_run(e, &o);
    }
    return rc;
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
    coord_csearch_obs_t first = e.obs;
    s_add_run(&e, &first); // one run: e.obs keeps its figures exactly
    self->n_profiles++;
    self->slot[idx] = (int32_t) self->n_entries;
    self->entries[self->n_entries] = e;
    *ret_obs = &self->entries[self->n_entries++].obs;
    return 0;
}

double coord_csearch_margin_k(const coord_csearch_noise_t *nz, int runs)
{
    return nz->t_quantile * sqrt(1.0 + 1.0 / (runs > 0 ? runs : 1));
}

bool coord_csearch_fits(const coord_csearch_entry_t *e, const coord_csearch_noise_t *nz,
                        const coord_csearch_budget_t *b)
{
    if (!e->obs.ok) {
        return false;
    }
    double k = coord_csearch_margin_k(nz, e->runs);
    return e->obs.latency_us * exp(k * nz->latency_log_sd) <= b->latency_us &&
           e->obs.power_mw * exp(k * nz->power_log_sd) <= b->power_mw;
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
    coord_csearch_noise_t nz = {0};
    coord_csearch_noise(self, &nz);
    for (size_t i = 0; i < self->n_entries; i++) {
        const coord_csearch_entry_t *e = &self->entries[i];
        if (coord_csearch_fits(e, &nz, budget) &&
            (!r.found || e->obs.train_sps > r.obs.train_sps)) {
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

bool coord_csearch_on_front(const coord_csearch_t *self, size_t i)
{
    bool beaten = !self->entries[i].obs.ok;
    for (size_t j = 0; !beaten && j < self->n_entries; j++) {
        beaten = coord_csearch_dominates(&self->entries[j].obs, &self->entries[i].obs);
    }
    return !beaten;
}

size_t coord_csearch_pareto(const coord_csearch_t *self, int (*points)[COORD_CSEARCH_DIMS],
                            size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < self->n_entries; i++) {
        const coord_csearch_entry_t *e = &self->entries[i];
        if (coord_csearch_on_front(self, i) && n++ < max) {
            memcpy(points[n - 1], e->point, sizeof points[0]);
        }
    }
    return n;
}
