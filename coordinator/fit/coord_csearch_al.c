/* The active-learning policy of the concurrent search (coord_csearch.h; docs/concurrent.md
 * "Active learning"): a seeded initial design, then the candidate that a k-nearest-neighbour
 * surrogate, optimistic where it knows little, says would extend the Pareto front most. */
#include "coord_csearch_internal.h"

#include "jf_rng.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S_INITIAL  16     // points of the initial design (two corners, the rest random)
#define S_POOL     2000   // candidates drawn per step
#define S_K        4      // neighbours of the surrogate
#define S_OBJ      3      // objectives: -log throughput, log latency, log power (all minimised)
#define S_KAPPA    1.0    // optimism: the prediction less this many uncertainties
#define S_OK_SHARE 0.5    // a candidate whose neighbours ran at least this often may run
#define S_STREAM   0x616c // rng stream of the designs

// A candidate's prediction.
typedef struct s_pred {
    double y[S_OBJ]; // objectives, inverse-distance weighted over the neighbours
    double ok_share; // share of the neighbours that ran
    double dist;     // normalised distance to the nearest profiled point
} s_pred_t;

static void s_objectives(const coord_csearch_obs_t *o, double y[S_OBJ])
{
    y[0] = -log(o->train_sps);
    y[1] = log(o->latency_us);
    y[2] = log(o->power_mw);
}

// Squared distance in the space scaled to [0, 1] per dimension.
static double s_dist2(const coord_csearch_t *cs, const int *a, const int *b)
{
    double sum = 0.0;
    for (int d = 0; d < COORD_CSEARCH_DIMS; d++) {
        int span = cs->space.size[d] - 1;
        double diff = span > 0 ? (double) (a[d] - b[d]) / span : 0.0;
        sum += diff * diff;
    }
    return sum;
}

// The k nearest profiled points of p into idx (ascending distance); returns how many.
static size_t s_nearest(const coord_csearch_t *cs, const int *p, size_t idx[S_K], double d2[S_K])
{
    size_t n = 0;
    for (size_t i = 0; i < cs->n_entries; i++) {
        double v = s_dist2(cs, p, cs->entries[i].point);
        size_t at = n < S_K ? n++ : S_K;
        while (at > 0 && d2[at - 1] > v) {
            if (at < S_K) {
                idx[at] = idx[at - 1];
                d2[at] = d2[at - 1];
            }
            at--;
        }
        if (at < S_K) {
            idx[at] = i;
            d2[at] = v;
        }
    }
    return n;
}

static void s_predict(const coord_csearch_t *cs, const int *p, s_pred_t *ret)
{
    size_t idx[S_K];
    double d2[S_K];
    size_t n = s_nearest(cs, p, idx, d2);
    *ret = (s_pred_t){.dist = n > 0 ? sqrt(d2[0]) : INFINITY};
    double wsum = 0.0;
    double ok = 0.0;
    for (size_t i = 0; i < n; i++) {
        const coord_csearch_obs_t *o = &cs->entries[idx[i]].obs;
        double w = 1.0 / (d2[i] + 1e-9);
        ok += o->ok ? 1.0 : 0.0;
        if (o->ok) {
            double y[S_OBJ];
            s_objectives(o, y);
            for (int j = 0; j < S_OBJ; j++) {
                ret->y[j] += w * y[j];
            }
            wsum += w;
        }
    }
    for (int j = 0; wsum > 0.0 && j < S_OBJ; j++) {
        ret->y[j] /= wsum;
    }
    ret->ok_share = n > 0 ? ok / (double) n : 0.0;
}

// The objectives' range over the profiled points that ran (the scale of an uncertainty).
static void s_ranges(const coord_csearch_t *cs, double range[S_OBJ])
{
    double lo[S_OBJ];
    double hi[S_OBJ];
    for (int j = 0; j < S_OBJ; j++) {
        lo[j] = INFINITY;
        hi[j] = -INFINITY;
    }
    for (size_t i = 0; i < cs->n_entries; i++) {
        double y[S_OBJ];
        if (!cs->entries[i].obs.ok) {
            continue;
        }
        s_objectives(&cs->entries[i].obs, y);
        for (int j = 0; j < S_OBJ; j++) {
            lo[j] = fmin(lo[j], y[j]);
            hi[j] = fmax(hi[j], y[j]);
        }
    }
    for (int j = 0; j < S_OBJ; j++) {
        range[j] = hi[j] > lo[j] ? hi[j] - lo[j] : 0.0;
    }
}

// How far y lies beyond the profiled points that ran: the least, over them, of the most y beats
// one of them by on an objective (the additive epsilon indicator). > 0: none is at least as good
// on every objective; +infinity when none ran.
static double s_margin(const coord_csearch_t *cs, const double y[S_OBJ])
{
    double margin = INFINITY;
    for (size_t i = 0; i < cs->n_entries; i++) {
        double o[S_OBJ];
        if (!cs->entries[i].obs.ok) {
            continue;
        }
        s_objectives(&cs->entries[i].obs, o);
        double beats = fmax(o[0] - y[0], fmax(o[1] - y[1], o[2] - y[2]));
        margin = fmin(margin, beats);
    }
    return margin;
}

static void s_random_point(const coord_csearch_t *cs, jf_rng_t *rng, int p[COORD_CSEARCH_DIMS])
{
    for (int d = 0; d < COORD_CSEARCH_DIMS; d++) {
        p[d] = (int) jf_rng_below(rng, (uint64_t) cs->space.size[d]);
    }
}

static void s_point_of(const coord_csearch_t *cs, size_t idx, int p[COORD_CSEARCH_DIMS])
{
    for (int d = COORD_CSEARCH_DIMS - 1; d >= 0; d--) {
        p[d] = (int) (idx % (size_t) cs->space.size[d]);
        idx /= (size_t) cs->space.size[d];
    }
}

// The best candidates of one pool.
typedef struct s_choice {
    int promising[COORD_CSEARCH_DIMS]; // the one that may extend the front most
    double promising_margin;           // by how much (s_margin); <= 0: none
    int any[COORD_CSEARCH_DIMS];       // farthest of all
    double any_dist;                   // its distance; < 0: none
} s_choice_t;

static void s_consider(const coord_csearch_t *cs, const int p[COORD_CSEARCH_DIMS],
                       const double range[S_OBJ], s_choice_t *c)
{
    s_pred_t pr = {.dist = 0.0};
    s_predict(cs, p, &pr);
    if (pr.dist > c->any_dist) {
        c->any_dist = pr.dist;
        memcpy(c->any, p, sizeof c->any);
    }
    double y[S_OBJ];
    for (int j = 0; j < S_OBJ; j++) {
        y[j] = pr.y[j] - S_KAPPA * pr.dist * range[j];
    }
    double margin = s_margin(cs, y);
    if (pr.ok_share >= S_OK_SHARE && margin > c->promising_margin) {
        c->promising_margin = margin;
        memcpy(c->promising, p, sizeof c->promising);
    }
}

// The next point to profile: of a pool of unprofiled candidates (the whole space when it is
// small), the one whose optimistic prediction lies farthest beyond the profiled points
// (s_margin); failing any, when explore, the farthest from every profiled point. False: none.
static bool s_pick(const coord_csearch_t *cs, jf_rng_t *rng, bool explore,
                   int ret[COORD_CSEARCH_DIMS])
{
    double range[S_OBJ];
    s_ranges(cs, range);
    s_choice_t c = {.promising_margin = 0.0, .any_dist = -1.0};
    bool whole = cs->n_points <= S_POOL;
    size_t pool = whole ? cs->n_points : S_POOL;
    for (size_t i = 0; i < pool; i++) {
        int p[COORD_CSEARCH_DIMS];
        if (whole) {
            s_point_of(cs, i, p);
        } else {
            s_random_point(cs, rng, p);
        }
        if (cs->slot[coord_csearch_index(cs, p)] < 0) {
            s_consider(cs, p, range, &c);
        }
    }
    if (c.promising_margin > 0.0) {
        memcpy(ret, c.promising, sizeof c.promising);
        return true;
    }
    if (explore && c.any_dist >= 0.0) {
        memcpy(ret, c.any, sizeof c.any);
        return true;
    }
    return false;
}

// The initial design's point i: the top corner, the bottom corner, then random points.
static void s_initial(const coord_csearch_t *cs, jf_rng_t *rng, size_t i, int p[COORD_CSEARCH_DIMS])
{
    for (int d = 0; d < COORD_CSEARCH_DIMS; d++) {
        p[d] = i == 0 ? cs->space.size[d] - 1 : 0;
    }
    if (i > 1) {
        s_random_point(cs, rng, p);
    }
}

static int s_by_throughput(const void *a, const void *b)
{
    const coord_csearch_entry_t *x = *(const coord_csearch_entry_t *const *) a;
    const coord_csearch_entry_t *y = *(const coord_csearch_entry_t *const *) b;
    return (x->obs.train_sps > y->obs.train_sps) - (x->obs.train_sps < y->obs.train_sps);
}

// n re-runs of Pareto-optimal points spread evenly over the front by throughput (round after
// round when the front has fewer than n points): the points that answer budgets get firmer means
// and the session learns the noise coord_csearch_choose keeps a margin for.
static int s_rerun_front(coord_csearch_t *self, size_t n, jf_err_t *err)
{
    const coord_csearch_entry_t **front = malloc(self->n_entries * sizeof *front);
    if (!front) {
        return jf_err_set(err, -ENOMEM, "csearch: out of memory for %zu points", self->n_entries);
    }
    size_t m = 0;
    for (size_t i = 0; i < self->n_entries; i++) {
        if (coord_csearch_on_front(self, i)) {
            front[m++] = &self->entries[i];
        }
    }
    qsort(front, m, sizeof *front, s_by_throughput);
    int rc = 0;
    for (size_t k = 0; rc == 0 && m > 0 && k < n; k++) {
        // The k-th of n evenly spaced ranks, wrapping into further rounds.
        size_t per_round = n < m ? n : m;
        size_t rank = (k % per_round) * m / per_round;
        rc = coord_csearch_rerun(self, (size_t) (front[rank] - self->entries), err);
    }
    free(front);
    return rc;
}

int coord_csearch_al(coord_csearch_t *self, const coord_csearch_al_opts_t *opts,
                     size_t *ret_profiled, jf_err_t *err)
{
    size_t min = opts && opts->min_profiles ? opts->min_profiles : COORD_CSEARCH_AL_MIN;
    size_t max = opts && opts->max_profiles ? opts->max_profiles : COORD_CSEARCH_AL_MAX;
    size_t reruns = opts && opts->reruns ? opts->reruns : COORD_CSEARCH_AL_RERUNS;
    reruns = self->rerun && reruns != (size_t) -1 ? (reruns < max ? reruns : max - 1) : 0;
    size_t first_max = max - reruns;
    min = min < first_max ? min : first_max;
    jf_rng_t rng = {0};
    jf_rng_seed(&rng, opts ? opts->seed : 0, S_STREAM);
    size_t before = self->n_profiles;
    size_t start = self->n_entries;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < S_INITIAL && self->n_entries - start < first_max; i++) {
        int p[COORD_CSEARCH_DIMS];
        const coord_csearch_obs_t *o = NULL;
        bool is_new = false;
        s_initial(self, &rng, i, p);
        rc = coord_csearch_get(self, p, &o, &is_new, err);
    }
    while (rc == 0 && self->n_entries - start < first_max) {
        int p[COORD_CSEARCH_DIMS];
        const coord_csearch_obs_t *o = NULL;
        bool is_new = false;
        if (!s_pick(self, &rng, self->n_entries - start < min, p)) {
            break;
        }
        rc = coord_csearch_get(self, p, &o, &is_new, err);
    }
    rc = rc != 0 ? rc : s_rerun_front(self, reruns, err);
    *ret_profiled = self->n_profiles - before;
    return rc;
}
