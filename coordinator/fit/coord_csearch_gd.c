/* The descent policy of the concurrent search (coord_csearch.h; docs/concurrent.md "Gradient
 * descent"): a feasible start by bisection along the diagonal of the clocks, a coordinate search
 * that ranks points feasibility first with a line search per dimension, then re-runs of the best
 * points so that the answer keeps a margin for the run-to-run noise. */
#include "coord_csearch_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S_FIRST_STEP_DIV 4 // the coordinate search's first step: a quarter of each dimension
#define S_BISECT_MAX     3 // bisections of the diagonal for a feasible start
#define S_CAPPED         1 // s_eval: the cap allows no new profile
#define S_BATCH          (COORD_CSEARCH_DIMS - 1) // the inference batch; the others are clocks

typedef struct s_gd {
    coord_csearch_t *cs;                  // borrowed
    const coord_csearch_budget_t *budget; // borrowed
    size_t cap;                           // new points allowed
    size_t used;                          // new points profiled
    double lat_budget_us;                 // the latency budget less the margin of one run
    double pow_budget_mw;                 // the power budget less the margin of one run
    int x[COORD_CSEARCH_DIMS];            // the current point
    coord_csearch_obs_t fx;               // its observation
    int h[COORD_CSEARCH_DIMS];            // the step of each dimension, in steps of the space
} s_gd_t;

// How far o lies outside the budgets less the margin of one run: the sum of the overruns as log
// ratios; 0 within both, +infinity for a point that did not run.
static double s_overrun(const s_gd_t *g, const coord_csearch_obs_t *o)
{
    if (!o->ok) {
        return INFINITY;
    }
    return fmax(0.0, log(o->latency_us / g->lat_budget_us)) +
           fmax(0.0, log(o->power_mw / g->pow_budget_mw));
}

// Feasibility first: a point within both budgets beats any other, feasible points rank by
// throughput, the others by how far out they are.
static bool s_better(const s_gd_t *g, const coord_csearch_obs_t *a, const coord_csearch_obs_t *b)
{
    double oa = s_overrun(g, a);
    double ob = s_overrun(g, b);
    if (oa == 0.0 && ob == 0.0) {
        return a->train_sps > b->train_sps;
    }
    return oa < ob;
}

// The observation of p into *ret, profiling it if new. Returns 0, S_CAPPED, or the profile's
// error.
static int s_eval(s_gd_t *g, const int p[COORD_CSEARCH_DIMS], coord_csearch_obs_t *ret,
                  jf_err_t *err)
{
    if (g->cs->slot[coord_csearch_index(g->cs, p)] < 0 && g->used >= g->cap) {
        return S_CAPPED;
    }
    const coord_csearch_obs_t *o = NULL;
    bool is_new = false;
    int rc = coord_csearch_get(g->cs, p, &o, &is_new, err);
    if (rc == 0) {
        g->used += is_new ? 1 : 0;
        *ret = *o;
    }
    return rc;
}

// Evaluates p and moves there if it beats the current point (*ret_moved). Returns as s_eval.
static int s_visit(s_gd_t *g, const int p[COORD_CSEARCH_DIMS], bool *ret_moved, jf_err_t *err)
{
    coord_csearch_obs_t o = {0};
    *ret_moved = false;
    int rc = s_eval(g, p, &o, err);
    if (rc == 0 && s_better(g, &o, &g->fx)) {
        memcpy(g->x, p, sizeof g->x);
        g->fx = o;
        *ret_moved = true;
    }
    return rc;
}

// The point t of the way along the diagonal from the lowest to the highest clocks and cores, at
// the middle batch size.
static void s_diagonal(const s_gd_t *g, double t, int p[COORD_CSEARCH_DIMS])
{
    for (int d = 0; d < COORD_CSEARCH_DIMS; d++) {
        int size = g->cs->space.size[d];
        p[d] = d == S_BATCH ? size / 2 : (int) lround(t * (size - 1));
    }
}

// A feasible start: the top of the diagonal if it is within both budgets, else bisection between
// the bottom and the top for the highest feasible point on it. When the bottom is not feasible
// either, the better of the two. Returns as s_eval.
static int s_start(s_gd_t *g, jf_err_t *err)
{
    int p[COORD_CSEARCH_DIMS];
    s_diagonal(g, 1.0, p);
    int rc = s_eval(g, p, &g->fx, err);
    memcpy(g->x, p, sizeof p);
    if (rc != 0 || s_overrun(g, &g->fx) == 0.0) {
        return rc;
    }
    bool moved = false;
    s_diagonal(g, 0.0, p);
    rc = s_visit(g, p, &moved, err);
    if (rc != 0 || s_overrun(g, &g->fx) > 0.0) {
        return rc;
    }
    double lo = 0.0;
    double hi = 1.0;
    for (int i = 0; rc == 0 && i < S_BISECT_MAX; i++) {
        double mid = 0.5 * (lo + hi);
        s_diagonal(g, mid, p);
        rc = s_visit(g, p, &moved, err);
        lo = moved ? mid : lo;
        hi = moved ? hi : mid;
    }
    return rc;
}

// x moved by delta steps in dimension d, clamped to the space, into p; false if it does not move.
static bool s_moved(const s_gd_t *g, int d, int delta, int p[COORD_CSEARCH_DIMS])
{
    memcpy(p, g->x, sizeof g->x);
    long v = (long) g->x[d] + delta;
    int hi = g->cs->space.size[d] - 1;
    p[d] = (int) (v < 0 ? 0 : v > hi ? hi : v);
    return p[d] != g->x[d];
}

// A line search along dimension d in direction dir (+1, -1): a step of h[d], then doubling while
// the moves improve. *ret_moved: at least one did.
static int s_line(s_gd_t *g, int d, int dir, bool *ret_moved, jf_err_t *err)
{
    int p[COORD_CSEARCH_DIMS];
    bool moved = true;
    int rc = 0;
    *ret_moved = false;
    for (int step = g->h[d]; rc == 0 && moved && s_moved(g, d, dir * step, p); step *= 2) {
        rc = s_visit(g, p, &moved, err);
        *ret_moved = *ret_moved || (rc == 0 && moved);
    }
    return rc;
}

// One pass over the dimensions: in each, a line search in the direction that can help first (a
// clock up, to more throughput, from a feasible point; down, to less power, from one that is not;
// the batch down first, to less latency), then in the other; a dimension whose line search fails
// both ways halves its step. Returns as s_eval.
static int s_pass(s_gd_t *g, jf_err_t *err)
{
    for (int d = 0; d < COORD_CSEARCH_DIMS; d++) {
        if (g->h[d] == 0) {
            continue;
        }
        int dir = d != S_BATCH && s_overrun(g, &g->fx) == 0.0 ? 1 : -1;
        bool moved = false;
        int rc = s_line(g, d, dir, &moved, err);
        if (rc == 0 && !moved) {
            rc = s_line(g, d, -dir, &moved, err);
        }
        if (rc != 0) {
            return rc;
        }
        g->h[d] = moved ? g->h[d] : g->h[d] / 2;
    }
    return 0;
}

static bool s_any_step(const s_gd_t *g)
{
    for (int d = 0; d < COORD_CSEARCH_DIMS; d++) {
        if (g->h[d] > 0) {
            return true;
        }
    }
    return false;
}

// The entry of the profiled point with the most throughput within the budgets on its own
// figures (no margin) that has not been re-run; SIZE_MAX if none.
static size_t s_rerun_candidate(const coord_csearch_t *cs, const coord_csearch_budget_t *b)
{
    size_t best = SIZE_MAX;
    coord_csearch_noise_t none = {0};
    for (size_t i = 0; i < cs->n_entries; i++) {
        const coord_csearch_entry_t *e = &cs->entries[i];
        if (e->runs == 1 && coord_csearch_fits(e, &none, b) &&
            (best == SIZE_MAX || e->obs.train_sps > cs->entries[best].obs.train_sps)) {
            best = i;
        }
    }
    return best;
}

// Re-runs up to n of the best points within the budgets, once each: their means get firmer and
// the session learns the noise that coord_csearch_choose keeps a margin for.
static int s_reruns(coord_csearch_t *cs, const coord_csearch_budget_t *b, size_t n, jf_err_t *err)
{
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < n; k++) {
        size_t i = s_rerun_candidate(cs, b);
        if (i == SIZE_MAX) {
            break;
        }
        rc = coord_csearch_rerun(cs, i, err);
    }
    return rc;
}

int coord_csearch_gd(coord_csearch_t *self, const coord_csearch_budget_t *budget,
                     const coord_csearch_gd_opts_t *opts, coord_csearch_result_t *ret,
                     jf_err_t *err)
{
    coord_csearch_result_t r = {0};
    int rc = coord_csearch_choose(self, budget, &r, err); // checks the budget
    if (rc != 0) {
        return rc;
    }
    size_t max = opts && opts->max_profiles ? opts->max_profiles : COORD_CSEARCH_GD_MAX;
    size_t reruns = opts && self->rerun ? opts->reruns : 0;
    reruns = reruns < max ? reruns : max - 1;
    size_t before = self->n_profiles;
    coord_csearch_noise_t nz = {0};
    coord_csearch_noise(self, &nz);
    double k = coord_csearch_margin_k(&nz, 1);
    s_gd_t g = {.cs = self,
                .budget = budget,
                .cap = max - reruns,
                .lat_budget_us = budget->latency_us * exp(-k * nz.latency_log_sd),
                .pow_budget_mw = budget->power_mw * exp(-k * nz.power_log_sd)};
    for (int d = 0; d < COORD_CSEARCH_DIMS; d++) {
        int size = self->space.size[d];
        g.h[d] = size > 1 ? (size / S_FIRST_STEP_DIV > 1 ? size / S_FIRST_STEP_DIV : 1) : 0;
    }
    rc = s_start(&g, err);
    // Each pass moves to a better point or halves a step: it ends.
    while (rc == 0 && s_any_step(&g)) {
        rc = s_pass(&g, err);
    }
    rc = rc < 0 ? rc : s_reruns(self, budget, reruns, err);
    rc = rc != 0 ? rc : coord_csearch_choose(self, budget, &r, err);
    r.profiled = self->n_profiles - before;
    *ret = r;
    return rc;
}
