/* The gradient-descent policy of the concurrent search (coord_csearch.h; docs/concurrent.md
 * "Gradient descent"): finite differences along each dimension of a penalised score, a step
 * along the gradient, steps halved when nothing improves. */
#include "coord_csearch_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S_PENALTY_DEFAULT 4.0  // weight of a budget overrun's log ratio in the score
#define S_SCORE_FAILED    -1e3 // score of a point that does not run: below any that does
#define S_FIRST_STEP_DIV  2    // the first step: half of each dimension
#define S_CAPPED          1    // s_eval: the cap allows no new profile
#define S_LINE_MAX        8.0  // the line search's longest step, in steps

typedef struct s_gd {
    coord_csearch_t *cs;                  // borrowed
    const coord_csearch_budget_t *budget; // borrowed
    double penalty;                       // weight of the overruns
    size_t cap;                           // new profiles allowed
    size_t used;                          // new profiles made
    int x[COORD_CSEARCH_DIMS];            // the current point
    double fx;                            // its score
    int h[COORD_CSEARCH_DIMS];            // the step of each dimension, in steps of the space
} s_gd_t;

// log(throughput) less penalty x the overruns of the budgets as log ratios: the feasible points
// rank by throughput, the others by how far out they are.
static double s_score(const s_gd_t *g, const coord_csearch_obs_t *o)
{
    if (!o->ok || !(o->train_sps > 0.0)) {
        return S_SCORE_FAILED;
    }
    double over = fmax(0.0, log(o->latency_us / g->budget->latency_us)) +
                  fmax(0.0, log(o->power_mw / g->budget->power_mw));
    return log(o->train_sps) - g->penalty * over;
}

// The score of p, profiling it if new. Returns 0, S_CAPPED, or the profile's error.
static int s_eval(s_gd_t *g, const int p[COORD_CSEARCH_DIMS], double *ret_score, jf_err_t *err)
{
    if (g->cs->slot[coord_csearch_index(g->cs, p)] < 0 && g->used >= g->cap) {
        return S_CAPPED;
    }
    const coord_csearch_obs_t *o = NULL;
    bool is_new = false;
    int rc = coord_csearch_get(g->cs, p, &o, &is_new, err);
    if (rc == 0) {
        g->used += is_new ? 1 : 0;
        *ret_score = s_score(g, o);
    }
    return rc;
}

// One probe per dimension, one step down (up at the bottom); grad[d] the score's change per step
// of the space. The best probe into best and *best_score if it beats *best_score.
static int s_gradient(s_gd_t *g, double grad[COORD_CSEARCH_DIMS], int best[COORD_CSEARCH_DIMS],
                      double *best_score, jf_err_t *err)
{
    for (int d = 0; d < COORD_CSEARCH_DIMS; d++) {
        grad[d] = 0.0;
        int top = g->cs->space.size[d] - 1;
        int step =
            g->x[d] - g->h[d] >= 0 ? -g->h[d] : (g->h[d] < top - g->x[d] ? g->h[d] : top - g->x[d]);
        if (step == 0) {
            continue;
        }
        int y[COORD_CSEARCH_DIMS];
        memcpy(y, g->x, sizeof y);
        y[d] += step;
        double s = 0.0;
        int rc = s_eval(g, y, &s, err);
        if (rc != 0) {
            return rc;
        }
        grad[d] = (s - g->fx) / step;
        if (s > *best_score) {
            *best_score = s;
            memcpy(best, y, sizeof y);
        }
    }
    return 0;
}

// The point t steps along the gradient: the dimension with the largest change per step moves by
// t of its steps, the others by their share of that change, rounded; clamped to the space.
static bool s_along(const s_gd_t *g, const double grad[COORD_CSEARCH_DIMS], double t,
                    int z[COORD_CSEARCH_DIMS])
{
    double top = 0.0;
    for (int d = 0; d < COORD_CSEARCH_DIMS; d++) {
        top = fmax(top, fabs(grad[d] * g->h[d]));
    }
    bool moved = false;
    for (int d = 0; d < COORD_CSEARCH_DIMS; d++) {
        double share = top > 0.0 ? grad[d] * g->h[d] / top : 0.0;
        long v = g->x[d] + lround(t * g->h[d] * share);
        int hi = g->cs->space.size[d] - 1;
        z[d] = (int) (v < 0 ? 0 : v > hi ? hi : v);
        moved = moved || z[d] != g->x[d];
    }
    return moved;
}

// A line search along the gradient: one step, then doubling while the score improves; half a
// step if the first does not. The best point into best and *best_score if it beats them.
static int s_line(s_gd_t *g, const double grad[COORD_CSEARCH_DIMS], int best[COORD_CSEARCH_DIMS],
                  double *best_score, jf_err_t *err)
{
    double line_best = g->fx;
    int prev[COORD_CSEARCH_DIMS];
    memcpy(prev, g->x, sizeof prev);
    for (double t = 1.0; t <= S_LINE_MAX; t *= 2.0) {
        int z[COORD_CSEARCH_DIMS];
        double s = 0.0;
        if (!s_along(g, grad, t, z) || memcmp(z, prev, sizeof z) == 0) {
            break; // clamped: no further point on the line
        }
        int rc = s_eval(g, z, &s, err);
        if (rc != 0) {
            return rc;
        }
        memcpy(prev, z, sizeof prev);
        if (s <= line_best) {
            if (t == 1.0 && s_along(g, grad, 0.5, z)) {
                rc = s_eval(g, z, &s, err);
                line_best = rc == 0 && s > line_best ? s : line_best;
                if (rc == 0 && s > *best_score) {
                    *best_score = s;
                    memcpy(best, z, sizeof z);
                }
                return rc;
            }
            break;
        }
        line_best = s;
        if (s > *best_score) {
            *best_score = s;
            memcpy(best, z, sizeof z);
        }
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

// One iteration: gradient, move, keep the best of the probes and the move or halve the steps.
// Returns 0, S_CAPPED or an error.
static int s_iterate(s_gd_t *g, jf_err_t *err)
{
    double grad[COORD_CSEARCH_DIMS] = {0};
    int best[COORD_CSEARCH_DIMS];
    double best_score = g->fx;
    int rc = s_gradient(g, grad, best, &best_score, err);
    if (rc == 0) {
        rc = s_line(g, grad, best, &best_score, err);
    }
    if (rc < 0) {
        return rc;
    }
    if (best_score > g->fx) {
        memcpy(g->x, best, sizeof best);
        g->fx = best_score;
    } else {
        for (int d = 0; d < COORD_CSEARCH_DIMS; d++) {
            g->h[d] /= 2;
        }
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
    s_gd_t g = {.cs = self,
                .budget = budget,
                .penalty = opts && opts->penalty > 0.0 ? opts->penalty : S_PENALTY_DEFAULT,
                .cap = opts && opts->max_profiles ? opts->max_profiles : COORD_CSEARCH_GD_MAX};
    // Start at the top clocks and cores and the middle batch size.
    for (int d = 0; d < COORD_CSEARCH_DIMS; d++) {
        int size = self->space.size[d];
        g.x[d] = d == COORD_CSEARCH_DIMS - 1 ? size / 2 : size - 1;
        g.h[d] = size > 1 ? (size / S_FIRST_STEP_DIV > 1 ? size / S_FIRST_STEP_DIV : 1) : 0;
    }
    rc = s_eval(&g, g.x, &g.fx, err);
    while (rc == 0 && s_any_step(&g)) {
        rc = s_iterate(&g, err);
    }
    if (rc < 0) {
        return rc;
    }
    rc = coord_csearch_choose(self, budget, &r, err);
    r.profiled = g.used;
    *ret = r;
    return rc;
}
