/* Models: the linear kind (least squares on coord_features through the libtorch shim), k-fold
 * cross-validation and the choice among candidate fits by it, prediction, MAPE and the store's
 * JSON. The mlp kind is coord_model_mlp.c, the phys kind coord_model_phys.c, the head (a transfer)
 * coord_model_head.c. */
#include "coord_model_internal.h"

#include "jf_rng.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const s_kind_names[] = {"linear", "mlp", "phys"};
static const char *const s_transfer_names[] = {"auto", "head", "finetune", "phys"};
// The head's ridge terms cross-validated by a transfer, per point on its standardised inputs:
// none, then shrinking towards "the reference's shape, rescaled" by growing amounts.
static const double s_head_ridges[] = {0.0, 0.01, 0.1, 1.0};

#define S_N_KINDS     3
#define S_N_TRANSFERS 4
#define S_N_RIDGES    ((int) (sizeof s_head_ridges / sizeof s_head_ridges[0]))
#define S_CANDS_MAX   (S_N_RIDGES + 3) // most candidate fits one fit cross-validates

const char *coord_model_kind_name(coord_model_kind_t kind)
{
    return (unsigned) kind < S_N_KINDS ? s_kind_names[kind] : "unknown";
}

const char *coord_model_transfer_name(coord_model_transfer_t t)
{
    return (unsigned) t < S_N_TRANSFERS ? s_transfer_names[t] : "unknown";
}

bool coord_model_transfer_parse(const char *name, coord_model_transfer_t *ret_t)
{
    for (int i = 0; i < S_N_TRANSFERS; i++) {
        if (strcmp(name, s_transfer_names[i]) == 0) {
            *ret_t = (coord_model_transfer_t) i;
            return true;
        }
    }
    return false;
}

bool coord_model_kind_parse(const char *name, coord_model_kind_t *ret_kind)
{
    for (int i = 0; i < S_N_KINDS; i++) {
        if (strcmp(name, s_kind_names[i]) == 0) {
            *ret_kind = (coord_model_kind_t) i;
            return true;
        }
    }
    return false;
}

size_t coord_model_min_points(coord_model_kind_t kind, coord_target_t target)
{
    return kind == COORD_MODEL_MLP    ? COORD_MODEL_MLP_MIN
           : kind == COORD_MODEL_PHYS ? coord_model_phys_min_points(target)
                                      : (size_t) coord_features_count(target) + 2;
}

coord_model_t *coord_model_alloc(coord_model_kind_t kind, coord_target_t target, jf_err_t *err)
{
    coord_model_t *m = calloc(1, sizeof *m);
    if (!m) {
        jf_err_set(err, -ENOMEM, "model: out of memory");
        return NULL;
    }
    m->kind = kind;
    m->target = target;
    m->cv_mape_pct = NAN;
    m->cv_under_pct = NAN;
    m->one_se_lowest_cv_pct = NAN;
    m->trained_workers = -1;
    m->trained_batch = -1;
    return m;
}

double coord_model_cv_under_pct(const coord_model_t *self)
{
    return self->cv_under_pct;
}

coord_model_transfer_t coord_model_transfer(const coord_model_t *self)
{
    return self->transfer;
}

void coord_model_set_trained_config(coord_model_t *self, int workers, int batch_size)
{
    self->trained_workers = workers >= 0 ? workers : -1;
    self->trained_batch = batch_size >= 1 ? batch_size : -1;
}

coord_model_kind_t coord_model_kind(const coord_model_t *self)
{
    return self->kind;
}

coord_target_t coord_model_target(const coord_model_t *self)
{
    return self->target;
}

bool coord_model_kept_by_one_se(const coord_model_t *self, double *ret_cv_pct,
                                coord_model_transfer_t *ret_method)
{
    if (ret_cv_pct) {
        *ret_cv_pct = self->one_se_lowest_cv_pct;
    }
    if (ret_method) {
        *ret_method = self->one_se_lowest;
    }
    return !isnan(self->one_se_lowest_cv_pct);
}

double coord_model_cv_mape_pct(const coord_model_t *self)
{
    return self->cv_mape_pct;
}

bool coord_model_uses_log(const coord_model_t *self)
{
    return self->log;
}

const double *coord_model_coef(const coord_model_t *self)
{
    return self->kind == COORD_MODEL_LINEAR ? self->coef : NULL;
}

void coord_model_destroy(coord_model_t **self_p)
{
    if (self_p && *self_p) {
        jf_torch_mlp_destroy(&(*self_p)->mlp);
        coord_model_destroy(&(*self_p)->ref);
        free(*self_p);
        *self_p = NULL;
    }
}

size_t coord_model_folds(size_t n, size_t *ret_fold)
{
    size_t k = n < 2 * COORD_MODEL_CV_FOLDS ? n : COORD_MODEL_CV_FOLDS;
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    for (size_t i = 0; i < n; i++) {
        if (order) {
            order[i] = i;
        }
        ret_fold[i] = i % (k ? k : 1); // out of memory: unshuffled, still k folds
    }
    if (order) {
        jf_rng_t rng;
        jf_rng_seed(&rng, COORD_MODEL_CV_SEED, 0);
        jf_rng_shuffle(&rng, order, n);
        for (size_t i = 0; i < n; i++) {
            ret_fold[order[i]] = i % k;
        }
    }
    free(order);
    return k;
}

// Least squares of the target's features (or log(value)) over n points into self->coef.
static int s_linear_fit(coord_model_t *self, const coord_point_t *pts, size_t n, jf_err_t *err)
{
    size_t p = (size_t) coord_features_count(self->target);
    double *x = malloc(n * p * sizeof *x);
    double *y = malloc(n * sizeof *y);
    int rc = x && y ? 0 : jf_err_set(err, -ENOMEM, "fit: out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = coord_features_row(self->target, &pts[i].op, x + i * p);
        y[i] = self->log ? log(pts[i].y) : pts[i].y;
    }
    if (rc == 0) {
        rc = jf_torch_lstsq(x, n, p, y, COORD_MODEL_RIDGE, self->coef, err);
        self->n_coef = (int) p;
    }
    free(x);
    free(y);
    return rc;
}

// True when a fit with opts makes a head: a transfer other than fine-tuning or phys (AUTO without
// cross-validation means the head, which every reference allows).
static bool s_is_head(const coord_model_opts_t *opts)
{
    return opts->transfer_from && opts->transfer != COORD_MODEL_TRANSFER_FINETUNE &&
           opts->transfer != COORD_MODEL_TRANSFER_PHYS;
}

// The kind a fit with opts makes: a transfer's follows its method (a head is linear, fine-tuning
// an mlp), else opts->kind.
static coord_model_kind_t s_kind_of(const coord_model_opts_t *opts)
{
    if (!opts->transfer_from) {
        return opts->kind;
    }
    return s_is_head(opts)                               ? COORD_MODEL_LINEAR
           : opts->transfer == COORD_MODEL_TRANSFER_PHYS ? COORD_MODEL_PHYS
                                                         : COORD_MODEL_MLP;
}

static int s_check_transfer(const coord_model_opts_t *opts, jf_err_t *err)
{
    const coord_model_t *ref = opts->transfer_from;
    bool finetune = opts->transfer == COORD_MODEL_TRANSFER_FINETUNE;
    if (ref->target != opts->target || (finetune && ref->kind != COORD_MODEL_MLP)) {
        return jf_err_set(err, -EINVAL,
                          "transfer needs a reference %s of target %s%s, got a %s model of "
                          "target %s",
                          finetune ? "mlp" : "model", coord_target_name(opts->target),
                          finetune ? " to fine-tune" : "", coord_model_kind_name(ref->kind),
                          coord_target_name(ref->target));
    }
    return 0;
}

// The loader configuration shared by all n points (-1 where they differ).
static void s_shared_config(const coord_point_t *pts, size_t n, int *ret_workers, int *ret_batch)
{
    *ret_workers = n ? pts[0].op.workers : -1;
    *ret_batch = n ? pts[0].op.batch_size : -1;
    for (size_t i = 1; i < n; i++) {
        *ret_workers = pts[i].op.workers == *ret_workers ? *ret_workers : -1;
        *ret_batch = pts[i].op.batch_size == *ret_batch ? *ret_batch : -1;
    }
}

// A phys model's limits: time or power, points of one loader configuration.
static int s_check_phys(const coord_model_opts_t *opts, const coord_point_t *pts, size_t n,
                        jf_err_t *err)
{
    int w = -1;
    int b = -1;
    s_shared_config(pts, n, &w, &b);
    if (opts->target == COORD_TARGET_ENERGY) {
        return jf_err_set(err, -EINVAL,
                          "phys models time and power, not energy (pareto and recommend take "
                          "energy as time x power)");
    }
    if (w < 0 || b < 0) {
        return jf_err_set(err, -EINVAL,
                          "phys models one loader configuration; these points have several "
                          "(workers or batch size differ): filter them or use linear or mlp");
    }
    return 0;
}

static int s_check_points(const coord_model_opts_t *opts, const coord_point_t *pts, size_t n,
                          jf_err_t *err)
{
    if (s_kind_of(opts) == COORD_MODEL_PHYS && s_check_phys(opts, pts, n, err) != 0) {
        return err && err->code ? err->code : -EINVAL;
    }
    size_t need = s_is_head(opts) ? COORD_MODEL_HEAD_MIN
                                  : coord_model_min_points(s_kind_of(opts), opts->target);
    if (n < need) {
        return jf_err_set(err, -EINVAL, "too few points to fit: %zu modes, need at least %zu", n,
                          need);
    }
    double row[COORD_FEATURES_MAX];
    for (size_t i = 0; i < n; i++) {
        if (coord_features_row(opts->target, &pts[i].op, row) != 0 || !(pts[i].y > 0) ||
            !isfinite(pts[i].y) || pts[i].op.batch_size < 1) {
            return jf_err_set(err, -EINVAL,
                              "point %zu: needs cores >= 1, positive clocks, workers >= 0, "
                              "batch >= 1 and a positive %s, got %g",
                              i, coord_target_name(opts->target), pts[i].y);
        }
    }
    return opts->transfer_from ? s_check_transfer(opts, err) : 0;
}

// The loader configuration shared by all n points (-1 where they differ).
static void s_trained_config(coord_model_t *m, const coord_point_t *pts, size_t n)
{
    int w = -1;
    int b = -1;
    s_shared_config(pts, n, &w, &b);
    coord_model_set_trained_config(m, w, b);
}

// Fits without cross-validation, the log choice fixed by opts (AUTO means off here) and a
// transfer's method too (AUTO means the head with opts->head_ridge).
static coord_model_t *s_fit_once(const coord_model_opts_t *opts, const coord_point_t *pts, size_t n,
                                 jf_err_t *err)
{
    coord_model_kind_t kind = s_kind_of(opts);
    coord_model_t *m = coord_model_alloc(kind, opts->target, err);
    if (!m) {
        return NULL;
    }
    const coord_model_t *ref = opts->transfer_from;
    bool head = s_is_head(opts);
    m->log = kind != COORD_MODEL_LINEAR || head || opts->log == COORD_MODEL_LOG_ON;
    m->transfer = !ref                       ? COORD_MODEL_TRANSFER_AUTO
                  : head                     ? COORD_MODEL_TRANSFER_HEAD
                  : kind == COORD_MODEL_PHYS ? COORD_MODEL_TRANSFER_PHYS
                                             : COORD_MODEL_TRANSFER_FINETUNE;
    s_trained_config(m, pts, n);
    m->head_form = opts->head_form;
    int rc = head                      ? coord_model_head_fit(m, ref, pts, n, opts->head_ridge, err)
             : kind == COORD_MODEL_MLP ? coord_model_mlp_fit(m, ref, pts, n, err)
             : kind == COORD_MODEL_PHYS ? coord_model_phys_fit(m, ref, pts, n, err)
                                        : s_linear_fit(m, pts, n, err);
    if (rc != 0) {
        coord_model_destroy(&m);
    }
    return m;
}

int coord_model_predict(coord_model_t *self, const coord_op_t *op, double *ret_y, jf_err_t *err)
{
    if (self->kind == COORD_MODEL_MLP) {
        return coord_model_mlp_predict(self, op, ret_y, err);
    }
    if (self->kind == COORD_MODEL_PHYS) {
        return coord_model_phys_predict(self, op, ret_y, err);
    }
    if (self->ref) {
        return coord_model_head_predict(self, op, ret_y, err);
    }
    double row[COORD_FEATURES_MAX];
    if (coord_features_row(self->target, op, row) != 0) {
        return jf_err_set(err, -EINVAL,
                          "predict: needs cores >= 1, positive clocks and workers >= 0");
    }
    double s = 0.0;
    for (int i = 0; i < self->n_coef; i++) {
        s += self->coef[i] * row[i];
    }
    *ret_y = self->log ? exp(s) : s;
    return 0;
}

int coord_model_mape(coord_model_t *self, const coord_point_t *pts, size_t n, double *ret_mape_pct,
                     jf_err_t *err)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        double y = 0.0;
        int rc = coord_model_predict(self, &pts[i].op, &y, err);
        if (rc != 0) {
            return rc;
        }
        sum += fabs(y - pts[i].y) / pts[i].y;
    }
    *ret_mape_pct = n ? 100.0 * sum / (double) n : NAN;
    return 0;
}

// The held-out absolute percentage errors of fold f, added to *sum, and the relative
// underestimates of its points into under (when not NULL).
static int s_cv_fold(const coord_model_opts_t *opts, const coord_point_t *pts, size_t n,
                     const size_t *fold, size_t f, coord_point_t *train, double *sum, double *under,
                     jf_err_t *err)
{
    size_t nt = 0;
    for (size_t i = 0; i < n; i++) {
        if (fold[i] != f) {
            train[nt++] = pts[i];
        }
    }
    coord_model_t *m = s_fit_once(opts, train, nt, err);
    int rc = m ? 0 : (err && err->code ? err->code : -EIO);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        double y = 0.0;
        rc = fold[i] == f ? coord_model_predict(m, &pts[i].op, &y, err) : 0;
        *sum += fold[i] == f ? fabs(y - pts[i].y) / pts[i].y : 0.0;
        if (rc == 0 && under && fold[i] == f) {
            under[i] = (pts[i].y - y) / y;
        }
    }
    coord_model_destroy(&m);
    return rc;
}

int coord_model_cv(const coord_model_opts_t *opts, const coord_point_t *pts, size_t n,
                   double *ret_mape_pct, jf_err_t *err)
{
    return coord_model_cv_under(opts, pts, n, ret_mape_pct, NULL, err);
}

int coord_model_cv_under(const coord_model_opts_t *opts, const coord_point_t *pts, size_t n,
                         double *ret_mape_pct, double *ret_under, jf_err_t *err)
{
    int rc = s_check_points(opts, pts, n, err);
    size_t *fold = rc == 0 ? malloc(n * sizeof *fold) : NULL;
    coord_point_t *train = rc == 0 ? malloc(n * sizeof *train) : NULL;
    if (rc == 0 && (!fold || !train)) {
        rc = jf_err_set(err, -ENOMEM, "cross-validation: out of memory");
    }
    size_t k = rc == 0 ? coord_model_folds(n, fold) : 0;
    double sum = 0.0;
    for (size_t f = 0; rc == 0 && f < k; f++) {
        rc = s_cv_fold(opts, pts, n, fold, f, train, &sum, ret_under, err);
    }
    if (rc == 0) {
        *ret_mape_pct = 100.0 * sum / (double) n;
    }
    free(fold);
    free(train);
    return rc;
}

// True when AUTO cross-validates a phys model on the points: time or power, one loader
// configuration, and enough points left for the fit in every fold.
static bool s_phys_fits(const coord_model_opts_t *o, const coord_point_t *pts, size_t n)
{
    int w = -1;
    int b = -1;
    s_shared_config(pts, n, &w, &b);
    size_t k = n < 2 * COORD_MODEL_CV_FOLDS ? n : COORD_MODEL_CV_FOLDS;
    size_t need = coord_model_phys_min_points(o->target);
    return need > 0 && w >= 0 && b >= 0 && k > 0 && n - (n + k - 1) / k >= need;
}

// The fits a coord_model_fit with o cross-validates: a linear model's two forms (log AUTO); a
// transfer's head at each ridge term (AUTO, HEAD), fine-tuning (AUTO from an mlp) and a phys
// model (AUTO, where it fits); else o.
static size_t s_candidates(const coord_model_opts_t *o, const coord_point_t *pts, size_t n_pts,
                           coord_model_opts_t *ret)
{
    size_t n = 0;
    const coord_model_t *ref = o->transfer_from;
    if (!ref && o->kind == COORD_MODEL_LINEAR && o->log == COORD_MODEL_LOG_AUTO) {
        ret[n] = *o;
        ret[n++].log = COORD_MODEL_LOG_OFF; // first: on a tie the value is kept
        ret[n] = *o;
        ret[n++].log = COORD_MODEL_LOG_ON;
    } else if (ref && (o->transfer == COORD_MODEL_TRANSFER_AUTO ||
                       o->transfer == COORD_MODEL_TRANSFER_HEAD)) {
        for (int i = 0; i < S_N_RIDGES; i++) {
            ret[n] = *o;
            ret[n].transfer = COORD_MODEL_TRANSFER_HEAD;
            ret[n].head_form = COORD_MODEL_HEAD_LOG;
            ret[n++].head_ridge = s_head_ridges[i];
        }
        if (n_pts >= (size_t) coord_features_count(o->target) + 1 + COORD_MODEL_CV_FOLDS) {
            ret[n] = *o; // enough points for the sum form in every fold
            ret[n].transfer = COORD_MODEL_TRANSFER_HEAD;
            ret[n].head_ridge = 0.0;
            ret[n++].head_form = COORD_MODEL_HEAD_SUM;
        }
        if (o->transfer == COORD_MODEL_TRANSFER_AUTO && ref->kind == COORD_MODEL_MLP) {
            ret[n] = *o;
            ret[n++].transfer = COORD_MODEL_TRANSFER_FINETUNE;
        }
        if (o->transfer == COORD_MODEL_TRANSFER_AUTO && s_phys_fits(o, pts, n_pts)) {
            ret[n] = *o;
            ret[n++].transfer = COORD_MODEL_TRANSFER_PHYS;
        }
    } else {
        ret[n++] = *o;
    }
    return n;
}

bool coord_model_within_one_se(const double *ape_pref, const double *ape_best, size_t n)
{
    double mean = 0.0;
    for (size_t i = 0; i < n; i++) {
        mean += ape_pref[i] - ape_best[i];
    }
    mean /= n ? (double) n : 1.0;
    double ss = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = ape_pref[i] - ape_best[i] - mean;
        ss += d * d;
    }
    return n < 2 || mean <= sqrt(ss / (double) (n - 1) / (double) n);
}

// The absolute percentage errors of held-out points from their relative underestimates u =
// (y - prediction) / prediction: |prediction - y| / y = |u| / (1 + u), in percent.
static void s_apes(const double *under, size_t n, double *ret_ape)
{
    for (size_t i = 0; i < n; i++) {
        ret_ape[i] = 100.0 * fabs(under[i]) / (1.0 + under[i]);
    }
}

// The one-standard-error rule on the held-out underestimates of the phys candidate and of the
// best (n each; scratch: 2 n doubles).
static bool s_keep_phys(const double *phys, const double *best, size_t n, double *scratch)
{
    s_apes(phys, n, scratch);
    s_apes(best, n, scratch + n);
    return coord_model_within_one_se(scratch, scratch + n, n);
}

// Cross-validates the candidates of o and keeps the one of lowest MAPE in o (the first on a tie),
// its MAPE in *ret_cv and its held-out underestimates in under (n values). One exception, the
// one-standard-error rule (docs/analysis.md "Which transfer auto keeps"): a phys candidate is
// kept when its MAPE exceeds the lowest by no more than one standard error of the paired
// differences of their held-out errors; then the lowest's MAPE and method are in *ret_one_se
// (else it is NaN).
static int s_choose(coord_model_opts_t *o, const coord_point_t *pts, size_t n, double *ret_cv,
                    double *under, double *ret_one_se, coord_model_transfer_t *ret_one_se_method,
                    jf_err_t *err)
{
    coord_model_opts_t cands[S_CANDS_MAX];
    size_t nc = s_candidates(o, pts, n, cands);
    double *tmp = malloc(n * sizeof *tmp);
    double *phys = malloc(3 * n * sizeof *phys); // then 2 n of scratch
    int rc = tmp && phys ? 0 : jf_err_set(err, -ENOMEM, "cross-validation: out of memory");
    double best = INFINITY;
    double phys_mape = NAN;
    size_t phys_i = nc;
    for (size_t i = 0; rc == 0 && i < nc; i++) {
        double mape = NAN;
        rc = coord_model_cv_under(&cands[i], pts, n, &mape, tmp, err);
        if (rc == 0 && cands[i].transfer == COORD_MODEL_TRANSFER_PHYS && nc > 1) {
            phys_i = i;
            phys_mape = mape;
            memcpy(phys, tmp, n * sizeof *phys);
        }
        if (rc == 0 && mape < best) {
            best = mape;
            *o = cands[i];
            memcpy(under, tmp, n * sizeof *under);
        }
    }
    if (rc == 0 && phys_i < nc && o->transfer != COORD_MODEL_TRANSFER_PHYS &&
        s_keep_phys(phys, under, n, phys + n)) {
        *ret_one_se = best;
        *ret_one_se_method = o->transfer;
        best = phys_mape;
        *o = cands[phys_i];
        memcpy(under, phys, n * sizeof *under);
    }
    free(tmp);
    free(phys);
    *ret_cv = best;
    return rc;
}

static int s_cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a;
    double y = *(const double *) b;
    return (x > y) - (x < y);
}

// The COORD_MODEL_UNDER_Q quantile (nearest rank) of n underestimates, in percent, at least 0.
static double s_under_quantile(double *under, size_t n)
{
    qsort(under, n, sizeof *under, s_cmp_double);
    size_t rank = (size_t) ceil(COORD_MODEL_UNDER_Q * (double) n);
    double v = under[rank > 0 ? rank - 1 : 0];
    return 100.0 * (v > 0.0 ? v : 0.0);
}

coord_model_t *coord_model_fit(const coord_model_opts_t *opts, const coord_point_t *pts, size_t n,
                               jf_err_t *err)
{
    coord_model_opts_t o = *opts;
    double cv = NAN;
    double under_pct = NAN;
    double one_se = NAN;
    coord_model_transfer_t one_se_method = COORD_MODEL_TRANSFER_AUTO;
    int rc = s_check_points(&o, pts, n, err);
    double *under = rc == 0 && !o.skip_cv ? malloc(n * sizeof *under) : NULL;
    if (rc == 0 && !o.skip_cv) {
        rc = under ? s_choose(&o, pts, n, &cv, under, &one_se, &one_se_method, err)
                   : jf_err_set(err, -ENOMEM, "fit: out of memory");
        under_pct = rc == 0 ? s_under_quantile(under, n) : NAN;
    }
    free(under);
    coord_model_t *m = rc == 0 ? s_fit_once(&o, pts, n, err) : NULL;
    if (m) {
        m->cv_mape_pct = cv;
        m->cv_under_pct = under_pct;
        m->one_se_lowest_cv_pct = one_se;
        m->one_se_lowest = one_se_method;
    }
    return m;
}

json_t *coord_model_features_json(const coord_model_t *self)
{
    static const char *const mlp_in[] = {"cores",   "cpu_ghz", "gpu_ghz",
                                         "emc_ghz", "workers", "batch_size"};
    static const char *const head_in[] = {"const",       "log_ref",     "log_cores",
                                          "log_cpu_ghz", "log_gpu_ghz", "log_emc_ghz"};
    if (self->kind == COORD_MODEL_PHYS) {
        return json_pack("[s, s, s, s]", "cores", "cpu_ghz", "gpu_ghz", "emc_ghz");
    }
    json_t *a = json_array();
    bool sum = self->ref && self->head_form == COORD_MODEL_HEAD_SUM;
    int count = self->kind == COORD_MODEL_MLP ? COORD_MODEL_MLP_INPUTS
                : sum                         ? coord_features_count(self->target) + 1
                : self->ref                   ? COORD_MODEL_HEAD_INPUTS + 1
                                              : coord_features_count(self->target);
    for (int i = 0; a && i < count; i++) {
        const char *name = self->kind == COORD_MODEL_MLP ? mlp_in[i]
                           : sum       ? (i == 0 ? "ref" : coord_features_name(self->target, i - 1))
                           : self->ref ? head_in[i]
                                       : coord_features_name(self->target, i);
        if (json_array_append_new(a, json_string(name)) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *s_linear_params_json(const coord_model_t *self)
{
    json_t *coef = json_array();
    for (int i = 0; coef && i < self->n_coef; i++) {
        if (json_array_append_new(coef, json_real(self->coef[i])) != 0) {
            json_decref(coef);
            return NULL;
        }
    }
    return coef ? json_pack("{s:b, s:o}", "log", self->log, "coef", coef) : NULL;
}

json_t *coord_model_params_json(const coord_model_t *self)
{
    json_t *p = self->kind == COORD_MODEL_MLP    ? coord_model_mlp_params_json(self)
                : self->kind == COORD_MODEL_PHYS ? coord_model_phys_params_json(self)
                : self->ref                      ? coord_model_head_params_json(self)
                                                 : s_linear_params_json(self);
    // Optional (models stored before it have none): what recommend's margin is taken from.
    if (p && !isnan(self->cv_under_pct) &&
        json_object_set_new(p, "cv_under_pct", json_real(self->cv_under_pct)) != 0) {
        json_decref(p);
        return NULL;
    }
    return p;
}

static int s_linear_load(coord_model_t *self, const json_t *params, jf_err_t *err)
{
    json_error_t jerr;
    json_t *coef = NULL;
    int log_flag = 0;
    if (json_unpack_ex((json_t *) params, &jerr, JSON_STRICT, "{s:b, s:o, s?F}", "log", &log_flag,
                       "coef", &coef, "cv_under_pct", &self->cv_under_pct) != 0) {
        return jf_err_set(err, -EINVAL, "linear params: %s", jerr.text);
    }
    self->log = log_flag != 0;
    self->n_coef = coord_features_count(self->target);
    if (!json_is_array(coef) || json_array_size(coef) != (size_t) self->n_coef) {
        return jf_err_set(err, -EINVAL, "linear params: 'coef' must be an array of %d numbers",
                          self->n_coef);
    }
    for (int i = 0; i < self->n_coef; i++) {
        json_t *v = json_array_get(coef, (size_t) i);
        if (!json_is_number(v)) {
            return jf_err_set(err, -EINVAL, "linear params: coef[%d] is not a number", i);
        }
        self->coef[i] = json_number_value(v);
    }
    return 0;
}

coord_model_t *coord_model_load_json(coord_model_kind_t kind, coord_target_t target,
                                     const json_t *params, jf_err_t *err)
{
    coord_model_t *m = coord_model_alloc(kind, target, err);
    int rc = m ? 0 : -ENOMEM;
    if (rc == 0) {
        // A head is stored as kind linear with its reference inside ("ref").
        rc = kind == COORD_MODEL_MLP          ? coord_model_mlp_load(m, params, err)
             : kind == COORD_MODEL_PHYS       ? coord_model_phys_load(m, params, err)
             : json_object_get(params, "ref") ? coord_model_head_load(m, params, err)
                                              : s_linear_load(m, params, err);
    }
    if (rc != 0) {
        coord_model_destroy(&m);
    }
    return m;
}

coord_model_t *coord_model_load(coord_model_kind_t kind, coord_target_t target,
                                const char *params_json, jf_err_t *err)
{
    json_error_t jerr;
    json_t *params = json_loads(params_json, 0, &jerr);
    if (!params) {
        jf_err_set(err, -EINVAL, "model params: %d:%d: %s", jerr.line, jerr.column, jerr.text);
        return NULL;
    }
    coord_model_t *m = coord_model_load_json(kind, target, params, err);
    json_decref(params);
    return m;
}
