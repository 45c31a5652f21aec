/* Active profiling: the choice of the next modes to measure (coord_adaptive.h). Spread by the
 * MaxPro crowding in [0, 1]-normalised features, uncertainty from bootstrapped linear models
 * (coord_model.h), the front from coord_pareto.h. docs/analysis.md "Active profiling". */
#include "coord_adaptive.h"

#include "coord_model.h"
#include "coord_pareto.h"
#include "jf_rng.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define S_FLOOR_SHARE 1e-3 // a prediction below this share of the least measured figure is clamped

// The working state of one choice (all arrays n long, owned).
typedef struct s_state {
    const coord_op_t *cands; // borrowed
    size_t n;
    double *norm;   // n * COORD_ADAPTIVE_DIMS normalised features
    double *crowd;  // crowding by the measured and chosen modes (coord_adaptive.h)
    bool *taken;    // measured or chosen
    double *unc;    // sd of log time + sd of log power over the bootstrap models
    double *t_pred; // the full time model's prediction (µs)
    double *e_pred; // its time x the full power model's prediction (µs·mW)
    size_t n_taken;
} s_state_t;

const char *coord_adaptive_reason_name(coord_adaptive_reason_t reason)
{
    switch (reason) {
    case COORD_ADAPTIVE_SPREAD:
        return "spread";
    case COORD_ADAPTIVE_UNCERTAINTY:
        return "uncertainty";
    case COORD_ADAPTIVE_FRONT:
        return "front";
    }
    return "unknown";
}

size_t coord_adaptive_min_points(void)
{
    size_t t = coord_model_min_points(COORD_MODEL_LINEAR, COORD_TARGET_TIME);
    size_t p = coord_model_min_points(COORD_MODEL_LINEAR, COORD_TARGET_POWER);
    return t > p ? t : p;
}

static void s_state_fini(s_state_t *s)
{
    free(s->norm);
    free(s->crowd);
    free(s->taken);
    free(s->unc);
    free(s->t_pred);
    free(s->e_pred);
    memset(s, 0, sizeof *s);
}

static void s_dims(const coord_op_t *op, double *ret)
{
    ret[0] = op->cores;
    ret[1] = (double) op->cpu_hz;
    ret[2] = (double) op->gpu_hz;
    ret[3] = (double) op->emc_hz;
    ret[4] = op->workers;
    ret[5] = op->batch_size;
}

// Each dimension scaled to [0, 1] over the candidates (a constant one is 0).
static void s_normalise(s_state_t *s)
{
    double lo[COORD_ADAPTIVE_DIMS] = {0}, hi[COORD_ADAPTIVE_DIMS] = {0};
    for (size_t i = 0; i < s->n; i++) {
        double *x = &s->norm[i * COORD_ADAPTIVE_DIMS];
        s_dims(&s->cands[i], x);
        for (int d = 0; d < COORD_ADAPTIVE_DIMS; d++) {
            lo[d] = i == 0 || x[d] < lo[d] ? x[d] : lo[d];
            hi[d] = i == 0 || x[d] > hi[d] ? x[d] : hi[d];
        }
    }
    for (size_t i = 0; i < s->n; i++) {
        double *x = &s->norm[i * COORD_ADAPTIVE_DIMS];
        for (int d = 0; d < COORD_ADAPTIVE_DIMS; d++) {
            x[d] = hi[d] > lo[d] ? (x[d] - lo[d]) / (hi[d] - lo[d]) : 0.0;
        }
    }
}

static double s_crowd(const s_state_t *s, size_t a, size_t b)
{
    double prod = 1.0;
    for (int d = 0; d < COORD_ADAPTIVE_DIMS; d++) {
        double v = s->norm[a * COORD_ADAPTIVE_DIMS + d] - s->norm[b * COORD_ADAPTIVE_DIMS + d];
        prod *= v * v + COORD_ADAPTIVE_CROWD_EPS;
    }
    return 1.0 / prod;
}

static void s_take(s_state_t *s, size_t idx)
{
    s->taken[idx] = true;
    s->n_taken++;
    for (size_t i = 0; i < s->n; i++) {
        s->crowd[i] += s_crowd(s, i, idx);
    }
}

static int s_check(const coord_adaptive_opts_t *o, const coord_op_t *cands, size_t n_cands,
                   const coord_adaptive_obs_t *obs, size_t n_obs, jf_err_t *err)
{
    if (o->batch == 0 || n_cands > COORD_ADAPTIVE_CANDS_MAX) {
        return jf_err_set(err, -EINVAL, "adaptive: %s",
                          o->batch == 0 ? "a batch of 0 modes" : "over 100000 candidate modes");
    }
    double row[COORD_FEATURES_MAX];
    for (size_t i = 0; i < n_cands; i++) {
        if (coord_features_row(COORD_TARGET_TIME, &cands[i], row) != 0 || cands[i].batch_size < 1) {
            return jf_err_set(err, -EINVAL,
                              "adaptive: candidate %zu needs cores >= 1, positive clocks, workers "
                              ">= 0 and batch >= 1",
                              i);
        }
    }
    for (size_t i = 0; i < n_obs; i++) {
        bool figures = obs[i].time_us > 0 && isfinite(obs[i].time_us) && obs[i].power_mw > 0 &&
                       isfinite(obs[i].power_mw);
        if (obs[i].idx >= n_cands || !figures) {
            return jf_err_set(err, -EINVAL, "adaptive: measured mode %zu: %s", i,
                              figures ? "index past the candidates" : "time and power must be > 0");
        }
        for (size_t j = 0; j < i; j++) {
            if (obs[j].idx == obs[i].idx) {
                return jf_err_set(err, -EINVAL, "adaptive: candidate %zu measured twice",
                                  obs[i].idx);
            }
        }
    }
    return 0;
}

static int s_state_init(s_state_t *s, const coord_op_t *cands, size_t n,
                        const coord_adaptive_obs_t *obs, size_t n_obs, jf_err_t *err)
{
    *s = (s_state_t){.cands = cands, .n = n};
    size_t m = n ? n : 1;
    s->norm = calloc(m * COORD_ADAPTIVE_DIMS, sizeof *s->norm);
    s->crowd = calloc(m, sizeof *s->crowd);
    s->taken = calloc(m, sizeof *s->taken);
    s->unc = calloc(m, sizeof *s->unc);
    s->t_pred = calloc(m, sizeof *s->t_pred);
    s->e_pred = calloc(m, sizeof *s->e_pred);
    if (!s->norm || !s->crowd || !s->taken || !s->unc || !s->t_pred || !s->e_pred) {
        s_state_fini(s);
        return jf_err_set(err, -ENOMEM, "adaptive: out of memory for %zu candidates", n);
    }
    s_normalise(s);
    for (size_t i = 0; i < n_obs; i++) {
        s_take(s, obs[i].idx);
    }
    return 0;
}

// The measured figures of one target as model points (ret_pts has room for n_obs); with rng,
// n_obs draws with replacement (a bootstrap resample).
static void s_points(const s_state_t *s, const coord_adaptive_obs_t *obs, size_t n_obs,
                     coord_target_t target, jf_rng_t *rng, coord_point_t *ret_pts)
{
    for (size_t i = 0; i < n_obs; i++) {
        const coord_adaptive_obs_t *o = rng ? &obs[jf_rng_below(rng, n_obs)] : &obs[i];
        ret_pts[i] = (coord_point_t){.op = s->cands[o->idx],
                                     .y = target == COORD_TARGET_TIME ? o->time_us : o->power_mw};
    }
}

// Predictions of m at every candidate, clamped to floor (a linear model fitted on the value can
// go below zero far from its data; the log needs a positive number).
static int s_predict_all(const s_state_t *s, coord_model_t *m, double floor, double *ret,
                         jf_err_t *err)
{
    for (size_t i = 0; i < s->n; i++) {
        double y = 0.0;
        int rc = coord_model_predict(m, &s->cands[i], &y, err);
        if (rc != 0) {
            return rc;
        }
        ret[i] = isfinite(y) && y > floor ? y : floor;
    }
    return 0;
}

// Fits one target's model on pts (the full model chooses value or log; a bootstrap one uses
// log_of's choice) and writes its clamped predictions to ret.
static int s_fit_predict(const s_state_t *s, coord_target_t target, const coord_point_t *pts,
                         size_t n_pts, const coord_model_t *log_of, double *ret, jf_err_t *err)
{
    coord_model_opts_t o = {.kind = COORD_MODEL_LINEAR, .target = target, .skip_cv = !!log_of};
    if (log_of) {
        o.log = coord_model_uses_log(log_of) ? COORD_MODEL_LOG_ON : COORD_MODEL_LOG_OFF;
    }
    double least = INFINITY;
    for (size_t i = 0; i < n_pts; i++) {
        least = pts[i].y < least ? pts[i].y : least;
    }
    coord_model_t *m = coord_model_fit(&o, pts, n_pts, err);
    int rc = m ? s_predict_all(s, m, least * S_FLOOR_SHARE, ret, err) : err ? err->code : -EIO;
    coord_model_destroy(&m);
    return rc;
}

// Adds log(pred) to the running sum and sum of squares of each candidate.
static void s_accumulate(const double *pred, size_t n, double *sum, double *sq)
{
    for (size_t i = 0; i < n; i++) {
        double l = log(pred[i]);
        sum[i] += l;
        sq[i] += l * l;
    }
}

static double s_sd(double sum, double sq, int k)
{
    double mean = sum / k, var = (sq - k * mean * mean) / (k - 1);
    return var > 0 ? sqrt(var) : 0.0;
}

typedef struct s_boot {
    coord_point_t *pts;     // n_obs
    double *pred;           // n
    double *sum[2];         // n: sums of log predictions, time and power
    double *sq[2];          // n: sums of their squares
    coord_model_t *full[2]; // the full models (their log choice), time and power
} s_boot_t;

static void s_boot_fini(s_boot_t *b)
{
    free(b->pts);
    free(b->pred);
    for (int t = 0; t < 2; t++) {
        free(b->sum[t]);
        free(b->sq[t]);
        coord_model_destroy(&b->full[t]);
    }
}

// The full models of both targets: their predictions (t_pred, e_pred) and log choices.
static int s_full_models(s_state_t *s, s_boot_t *b, const coord_adaptive_obs_t *obs, size_t n_obs,
                         jf_err_t *err)
{
    static const coord_target_t targets[2] = {COORD_TARGET_TIME, COORD_TARGET_POWER};
    for (int t = 0; t < 2; t++) {
        s_points(s, obs, n_obs, targets[t], NULL, b->pts);
        coord_model_opts_t o = {.kind = COORD_MODEL_LINEAR, .target = targets[t]};
        b->full[t] = coord_model_fit(&o, b->pts, n_obs, err);
        if (!b->full[t]) {
            return err ? err->code : -EIO;
        }
        int rc = s_fit_predict(s, targets[t], b->pts, n_obs, b->full[t],
                               t == 0 ? s->t_pred : b->pred, err);
        if (rc != 0) {
            return rc;
        }
    }
    for (size_t i = 0; i < s->n; i++) {
        s->e_pred[i] = s->t_pred[i] * b->pred[i];
    }
    return 0;
}

// s->unc: the spread of the bootstrap models' log predictions, time plus power.
static int s_bootstrap(s_state_t *s, s_boot_t *b, const coord_adaptive_obs_t *obs, size_t n_obs,
                       uint64_t seed, jf_err_t *err)
{
    static const coord_target_t targets[2] = {COORD_TARGET_TIME, COORD_TARGET_POWER};
    for (int k = 0; k < COORD_ADAPTIVE_BOOT; k++) {
        for (int t = 0; t < 2; t++) {
            jf_rng_t rng;
            jf_rng_seed(&rng, seed, (uint64_t) (1 + k)); // the same resample for both targets
            s_points(s, obs, n_obs, targets[t], &rng, b->pts);
            int rc = s_fit_predict(s, targets[t], b->pts, n_obs, b->full[t], b->pred, err);
            if (rc != 0) {
                return rc;
            }
            s_accumulate(b->pred, s->n, b->sum[t], b->sq[t]);
        }
    }
    for (size_t i = 0; i < s->n; i++) {
        s->unc[i] = s_sd(b->sum[0][i], b->sq[0][i], COORD_ADAPTIVE_BOOT) +
                    s_sd(b->sum[1][i], b->sq[1][i], COORD_ADAPTIVE_BOOT);
    }
    return 0;
}

static int s_models(s_state_t *s, const coord_adaptive_obs_t *obs, size_t n_obs, uint64_t seed,
                    jf_err_t *err)
{
    s_boot_t b = {.pts = calloc(n_obs, sizeof *b.pts), .pred = calloc(s->n, sizeof *b.pred)};
    bool ok = b.pts && b.pred;
    for (int t = 0; t < 2; t++) {
        b.sum[t] = calloc(s->n, sizeof *b.sum[t]);
        b.sq[t] = calloc(s->n, sizeof *b.sq[t]);
        ok = ok && b.sum[t] && b.sq[t];
    }
    int rc = ok ? s_full_models(s, &b, obs, n_obs, err)
                : jf_err_set(err, -ENOMEM, "adaptive: out of memory for the models");
    rc = rc ? rc : s_bootstrap(s, &b, obs, n_obs, seed, err);
    s_boot_fini(&b);
    return rc;
}

// The untaken candidate with the largest score (ties: the lower index); SIZE_MAX when none.
static size_t s_argmax(const s_state_t *s, bool uncertainty, double *ret_score)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < s->n; i++) {
        double v = (uncertainty ? s->unc[i] : 1.0) / s->crowd[i];
        if (!s->taken[i] && (best == SIZE_MAX || v > *ret_score)) {
            best = i;
            *ret_score = v;
        }
    }
    return best;
}

// The most uncertain untaken candidate on the predicted front of the untaken ones.
static int s_front_pick(const s_state_t *s, size_t *ret_idx, double *ret_score, jf_err_t *err)
{
    coord_pareto_point_t *pts = calloc(s->n, sizeof *pts);
    size_t *map = calloc(s->n, sizeof *map), *front = calloc(s->n, sizeof *front), m = 0;
    if (!pts || !map || !front) {
        free(pts);
        free(map);
        free(front);
        return jf_err_set(err, -ENOMEM, "adaptive: out of memory for the front");
    }
    for (size_t i = 0; i < s->n; i++) {
        if (!s->taken[i]) {
            pts[m] = (coord_pareto_point_t){.time_us = s->t_pred[i], .energy_mj = s->e_pred[i]};
            map[m++] = i;
        }
    }
    int nf = coord_pareto_front(pts, m, front, err);
    *ret_idx = SIZE_MAX;
    for (int f = 0; f < nf; f++) {
        size_t i = map[front[f]];
        if (*ret_idx == SIZE_MAX || s->unc[i] > *ret_score) {
            *ret_idx = i;
            *ret_score = s->unc[i];
        }
    }
    free(pts);
    free(map);
    free(front);
    return nf < 0 ? nf : 0;
}

// One pick: spread while too few are taken or there are no models, else alternately
// uncertainty and front (k counts the model picks so far).
static int s_pick_one(s_state_t *s, const coord_adaptive_opts_t *o, bool models, size_t k,
                      coord_adaptive_pick_t *ret, jf_err_t *err)
{
    size_t n_spread = o->n_spread ? o->n_spread : coord_adaptive_min_points();
    *ret = (coord_adaptive_pick_t){.idx = SIZE_MAX, .reason = COORD_ADAPTIVE_SPREAD};
    if (s->n_taken == 0) {
        jf_rng_t rng;
        jf_rng_seed(&rng, o->seed, 0);
        ret->idx = (size_t) jf_rng_below(&rng, s->n);
        ret->score = INFINITY;
    } else if (!models || s->n_taken < n_spread) {
        ret->idx = s_argmax(s, false, &ret->score);
    } else if (k % 2 == 0) {
        ret->reason = COORD_ADAPTIVE_UNCERTAINTY;
        ret->idx = s_argmax(s, true, &ret->score);
    } else {
        ret->reason = COORD_ADAPTIVE_FRONT;
        int rc = s_front_pick(s, &ret->idx, &ret->score, err);
        if (rc != 0) {
            return rc;
        }
    }
    if (ret->idx != SIZE_MAX) {
        s_take(s, ret->idx);
    }
    return 0;
}

int coord_adaptive_choose(const coord_adaptive_opts_t *opts, const coord_op_t *cands,
                          size_t n_cands, const coord_adaptive_obs_t *obs, size_t n_obs,
                          coord_adaptive_pick_t *ret_picks, size_t *ret_n, jf_err_t *err)
{
    s_state_t s = {0};
    int rc = s_check(opts, cands, n_cands, obs, n_obs, err);
    rc = rc ? rc : s_state_init(&s, cands, n_cands, obs, n_obs, err);
    if (rc != 0) {
        return rc;
    }
    size_t n_spread = opts->n_spread ? opts->n_spread : coord_adaptive_min_points();
    bool models = n_obs >= coord_adaptive_min_points() && n_obs >= n_spread;
    rc = models ? s_models(&s, obs, n_obs, opts->seed, err) : 0;
    size_t got = 0, k = 0;
    while (rc == 0 && got < opts->batch && s.n_taken < s.n) {
        bool model_pick = models && s.n_taken >= n_spread;
        rc = s_pick_one(&s, opts, models, k, &ret_picks[got], err);
        if (rc != 0 || ret_picks[got].idx == SIZE_MAX) {
            break;
        }
        k += model_pick;
        got++;
    }
    s_state_fini(&s);
    if (rc == 0) {
        *ret_n = got;
    }
    return rc;
}
