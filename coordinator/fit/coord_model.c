/* Models: the linear kind (least squares on coord_features through the libtorch shim), k-fold
 * cross-validation, prediction, MAPE and the store's JSON. The mlp kind is coord_model_mlp.c. */
#include "coord_model_internal.h"

#include "jf_rng.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const s_kind_names[] = {"linear", "mlp"};

const char *coord_model_kind_name(coord_model_kind_t kind)
{
    return (unsigned) kind < 2 ? s_kind_names[kind] : "unknown";
}

bool coord_model_kind_parse(const char *name, coord_model_kind_t *ret_kind)
{
    for (int i = 0; i < 2; i++) {
        if (strcmp(name, s_kind_names[i]) == 0) {
            *ret_kind = (coord_model_kind_t) i;
            return true;
        }
    }
    return false;
}

size_t coord_model_min_points(coord_model_kind_t kind, coord_target_t target)
{
    return kind == COORD_MODEL_MLP ? COORD_MODEL_MLP_MIN
                                   : (size_t) coord_features_count(target) + 2;
}

coord_model_kind_t coord_model_kind(const coord_model_t *self)
{
    return self->kind;
}

coord_target_t coord_model_target(const coord_model_t *self)
{
    return self->target;
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

static int s_check_points(const coord_model_opts_t *opts, const coord_point_t *pts, size_t n,
                          jf_err_t *err)
{
    size_t need = coord_model_min_points(opts->kind, opts->target);
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
    const coord_model_t *ref = opts->transfer_from;
    if (ref && (ref->kind != COORD_MODEL_MLP || opts->kind != COORD_MODEL_MLP ||
                ref->target != opts->target)) {
        return jf_err_set(err, -EINVAL,
                          "transfer needs a reference mlp of target %s and kind mlp, got a %s "
                          "model of target %s",
                          coord_target_name(opts->target), coord_model_kind_name(ref->kind),
                          coord_target_name(ref->target));
    }
    return 0;
}

// Fits without cross-validation, the log choice fixed by opts (AUTO means off here).
static coord_model_t *s_fit_once(const coord_model_opts_t *opts, const coord_point_t *pts, size_t n,
                                 jf_err_t *err)
{
    coord_model_t *m = calloc(1, sizeof *m);
    if (!m) {
        jf_err_set(err, -ENOMEM, "fit: out of memory");
        return NULL;
    }
    m->kind = opts->kind;
    m->target = opts->target;
    m->cv_mape_pct = NAN;
    m->log = opts->kind == COORD_MODEL_MLP || opts->log == COORD_MODEL_LOG_ON;
    int rc = opts->kind == COORD_MODEL_MLP
                 ? coord_model_mlp_fit(m, opts->transfer_from, pts, n, err)
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

// The held-out absolute percentage errors of fold f, added to *sum.
static int s_cv_fold(const coord_model_opts_t *opts, const coord_point_t *pts, size_t n,
                     const size_t *fold, size_t f, coord_point_t *train, double *sum, jf_err_t *err)
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
    }
    coord_model_destroy(&m);
    return rc;
}

int coord_model_cv(const coord_model_opts_t *opts, const coord_point_t *pts, size_t n,
                   double *ret_mape_pct, jf_err_t *err)
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
        rc = s_cv_fold(opts, pts, n, fold, f, train, &sum, err);
    }
    if (rc == 0) {
        *ret_mape_pct = 100.0 * sum / (double) n;
    }
    free(fold);
    free(train);
    return rc;
}

// The linear kind with log AUTO: cross-validate both forms and keep the better one.
static int s_choose_log(coord_model_opts_t *o, const coord_point_t *pts, size_t n, double *cv,
                        jf_err_t *err)
{
    double off = 0.0;
    double on = 0.0;
    o->log = COORD_MODEL_LOG_OFF;
    int rc = coord_model_cv(o, pts, n, &off, err);
    o->log = COORD_MODEL_LOG_ON;
    rc = rc == 0 ? coord_model_cv(o, pts, n, &on, err) : rc;
    o->log = on < off ? COORD_MODEL_LOG_ON : COORD_MODEL_LOG_OFF;
    *cv = on < off ? on : off;
    return rc;
}

coord_model_t *coord_model_fit(const coord_model_opts_t *opts, const coord_point_t *pts, size_t n,
                               jf_err_t *err)
{
    coord_model_opts_t o = *opts;
    double cv = NAN;
    int rc = s_check_points(&o, pts, n, err);
    if (rc == 0 && !o.skip_cv && o.kind == COORD_MODEL_LINEAR && o.log == COORD_MODEL_LOG_AUTO) {
        rc = s_choose_log(&o, pts, n, &cv, err);
    } else if (rc == 0 && !o.skip_cv) {
        rc = coord_model_cv(&o, pts, n, &cv, err);
    }
    coord_model_t *m = rc == 0 ? s_fit_once(&o, pts, n, err) : NULL;
    if (m) {
        m->cv_mape_pct = cv;
    }
    return m;
}

json_t *coord_model_features_json(const coord_model_t *self)
{
    static const char *const mlp_in[] = {"cores",   "cpu_ghz", "gpu_ghz",
                                         "emc_ghz", "workers", "batch_size"};
    json_t *a = json_array();
    int count =
        self->kind == COORD_MODEL_MLP ? COORD_MODEL_MLP_INPUTS : coord_features_count(self->target);
    for (int i = 0; a && i < count; i++) {
        const char *name =
            self->kind == COORD_MODEL_MLP ? mlp_in[i] : coord_features_name(self->target, i);
        if (json_array_append_new(a, json_string(name)) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *coord_model_params_json(const coord_model_t *self)
{
    if (self->kind == COORD_MODEL_MLP) {
        return coord_model_mlp_params_json(self);
    }
    json_t *coef = json_array();
    for (int i = 0; coef && i < self->n_coef; i++) {
        if (json_array_append_new(coef, json_real(self->coef[i])) != 0) {
            json_decref(coef);
            return NULL;
        }
    }
    return coef ? json_pack("{s:b, s:o}", "log", self->log, "coef", coef) : NULL;
}

static int s_linear_load(coord_model_t *self, const json_t *params, jf_err_t *err)
{
    json_error_t jerr;
    json_t *coef = NULL;
    int log_flag = 0;
    if (json_unpack_ex((json_t *) params, &jerr, JSON_STRICT, "{s:b, s:o}", "log", &log_flag,
                       "coef", &coef) != 0) {
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

coord_model_t *coord_model_load(coord_model_kind_t kind, coord_target_t target,
                                const char *params_json, jf_err_t *err)
{
    json_error_t jerr;
    json_t *params = json_loads(params_json, 0, &jerr);
    coord_model_t *m = calloc(1, sizeof *m);
    int rc = params ? 0
                    : jf_err_set(err, -EINVAL, "model params: %d:%d: %s", jerr.line, jerr.column,
                                 jerr.text);
    if (rc == 0 && !m) {
        rc = jf_err_set(err, -ENOMEM, "model: out of memory");
    }
    if (rc == 0) {
        m->kind = kind;
        m->target = target;
        m->cv_mape_pct = NAN;
        rc = kind == COORD_MODEL_MLP ? coord_model_mlp_load(m, params, err)
                                     : s_linear_load(m, params, err);
    }
    json_decref(params);
    if (rc != 0) {
        coord_model_destroy(&m);
    }
    return m;
}
