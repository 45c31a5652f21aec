/* Pareto front by one sort and one sweep; recommendation by one scan (coord_pareto.h). */
#include "coord_pareto.h"

#include "jf_units.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#define S_MW_PER_W 1000.0 // printed budgets are in W, figures in mW

typedef struct s_key {
    double t;
    double e;
    size_t i;
} s_key_t;

static int s_by_time_energy(const void *a, const void *b)
{
    const s_key_t *x = a;
    const s_key_t *y = b;
    if (x->t != y->t) {
        return x->t < y->t ? -1 : 1;
    }
    if (x->e != y->e) {
        return x->e < y->e ? -1 : 1;
    }
    return x->i < y->i ? -1 : x->i > y->i;
}

int coord_pareto_front(const coord_pareto_point_t *pts, size_t n, size_t *ret_idx, jf_err_t *err)
{
    s_key_t *k = malloc((n ? n : 1) * sizeof *k);
    if (!k) {
        return jf_err_set(err, -ENOMEM, "pareto: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        k[i] = (s_key_t){.t = pts[i].time_us, .e = pts[i].energy_mj, .i = i};
    }
    qsort(k, n, sizeof *k, s_by_time_energy);
    // By increasing time, a point is on the front when its energy is below every faster
    // point's; an exact copy of the last front point is not dominated either, so it stays.
    size_t m = 0;
    for (size_t j = 0; j < n; j++) {
        const s_key_t *last = m ? &k[ret_idx[m - 1]] : NULL;
        bool keep = !last || k[j].e < last->e || (k[j].e == last->e && k[j].t == last->t);
        if (keep) {
            ret_idx[m++] = j; // a position in k for now
        }
    }
    for (size_t j = 0; j < m; j++) {
        ret_idx[j] = k[ret_idx[j]].i;
    }
    free(k);
    return (int) m;
}

// Whether a is the better choice than b under the budget kind (both meet it).
static bool s_better(const coord_pareto_point_t *a, const coord_pareto_point_t *b,
                     coord_budget_t kind)
{
    double a1 = kind == COORD_BUDGET_POWER ? a->time_us : a->energy_mj;
    double b1 = kind == COORD_BUDGET_POWER ? b->time_us : b->energy_mj;
    double a2 = kind == COORD_BUDGET_POWER ? a->energy_mj : a->time_us;
    double b2 = kind == COORD_BUDGET_POWER ? b->energy_mj : b->time_us;
    return a1 < b1 || (a1 == b1 && a2 < b2);
}

int coord_recommend(const coord_pareto_point_t *pts, size_t n, coord_budget_t kind, double budget,
                    size_t *ret_idx, double *ret_closest, jf_err_t *err)
{
    size_t best = n;
    double lowest = NAN;
    for (size_t i = 0; i < n; i++) {
        double v = kind == COORD_BUDGET_POWER ? pts[i].power_mw : pts[i].time_us;
        lowest = isnan(lowest) || v < lowest ? v : lowest;
        if (v <= budget && (best == n || s_better(&pts[i], &pts[best], kind))) {
            best = i;
        }
    }
    if (best < n) {
        *ret_idx = best;
        return 0;
    }
    *ret_closest = lowest;
    if (kind == COORD_BUDGET_POWER) {
        return jf_err_set(err, -ENOENT,
                          "no mode meets a power budget of %g W (the lowest predicted is %.3g W)",
                          budget / S_MW_PER_W, lowest / S_MW_PER_W);
    }
    return jf_err_set(err, -ENOENT,
                      "no mode meets a time budget of %g s (the lowest predicted is %.3g s)",
                      budget / (double) JF_US_PER_S, lowest / (double) JF_US_PER_S);
}
