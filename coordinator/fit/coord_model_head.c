/* The head of coord_model (kind linear, with a reference inside), a transfer: log y = a + b log
 * y_ref(op) + c . (log cores, log CPU, GPU and EMC GHz), least squares (optionally ridge) on a few
 * profiled modes of the new workload or board. The reference keeps the shape it learned over the
 * modes; the head rescales it and tilts it by a power law in each clock and the cores (time ~ work
 * / f per unit, power ~ f^k), which is what changes when a unit's share of the work changes.
 * Or the sum form: y = b y_ref + c . coord_features(op), the reference's part plus work (or
 * power) on other units, e.g. a CPU-side loader a GPU-bound reference never had.
 * docs/analysis.md "Transfer". */
#include "coord_model_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S_HZ_PER_GHZ 1e9
#define S_P          COORD_MODEL_HEAD_INPUTS

// The reference's prediction at op, its loader configuration held at the one it was trained on
// (it has never seen another, and extrapolating along an input it never saw vary is noise).
static int s_ref_predict(coord_model_t *ref, const coord_op_t *op, double *ret_y, jf_err_t *err)
{
    coord_op_t o = *op;
    o.workers = ref->trained_workers >= 0 ? ref->trained_workers : o.workers;
    o.batch_size = ref->trained_batch >= 1 ? ref->trained_batch : o.batch_size;
    double y = 0.0;
    int rc = coord_model_predict(ref, &o, &y, err);
    if (rc == 0 && !(y > 0.0 && isfinite(y))) {
        return jf_err_set(err, -EINVAL,
                          "head: the reference predicts %g at %d cores, %.3f/%.3f/%.3f GHz; a "
                          "head needs positive predictions",
                          y, op->cores, (double) op->cpu_hz / S_HZ_PER_GHZ,
                          (double) op->gpu_hz / S_HZ_PER_GHZ, (double) op->emc_hz / S_HZ_PER_GHZ);
    }
    *ret_y = y;
    return rc;
}

// The head inputs of op: log y_ref, log cores, log CPU, GPU, EMC GHz.
static int s_row(coord_model_t *self, const coord_op_t *op, double *ret_x, jf_err_t *err)
{
    if (op->cores < 1 || op->cpu_hz <= 0 || op->gpu_hz <= 0 || op->emc_hz <= 0) {
        return jf_err_set(err, -EINVAL, "predict: needs cores >= 1 and positive clocks");
    }
    double y_ref = 0.0;
    int rc = s_ref_predict(self->ref, op, &y_ref, err);
    ret_x[0] = log(y_ref);
    ret_x[1] = log((double) op->cores);
    ret_x[2] = log((double) op->cpu_hz / S_HZ_PER_GHZ);
    ret_x[3] = log((double) op->gpu_hz / S_HZ_PER_GHZ);
    ret_x[4] = log((double) op->emc_hz / S_HZ_PER_GHZ);
    return rc;
}

// A copy of the reference through its JSON (the head owns it; the stored head embeds it).
static coord_model_t *s_copy(const coord_model_t *ref, jf_err_t *err)
{
    json_t *p = coord_model_params_json(ref);
    coord_model_t *m = p ? coord_model_load_json(ref->kind, ref->target, p, err) : NULL;
    if (!p) {
        jf_err_set(err, -ENOMEM, "head: out of memory");
    }
    if (m) {
        m->trained_workers = ref->trained_workers;
        m->trained_batch = ref->trained_batch;
    }
    json_decref(p);
    return m;
}

// Column means and standard deviations of x (n x S_P); a constant column gets sd 0.
static void s_moments(const double *x, size_t n, double *mean, double *sd)
{
    for (int j = 0; j < S_P; j++) {
        double s1 = 0.0;
        double s2 = 0.0;
        for (size_t i = 0; i < n; i++) {
            s1 += x[i * S_P + j];
            s2 += x[i * S_P + j] * x[i * S_P + j];
        }
        mean[j] = s1 / (double) n;
        double var = s2 / (double) n - mean[j] * mean[j];
        sd[j] = var > COORD_MODEL_STD_MIN ? sqrt(var) : 0.0;
    }
}

// Least squares of the centred residual r on the standardised columns (constant columns zero),
// then the coefficients of the raw inputs and the constant into self->head.
static int s_solve(coord_model_t *self, double *x, double *r, size_t n, double ridge, jf_err_t *err)
{
    double mean[S_P];
    double sd[S_P];
    double c[S_P] = {0};
    s_moments(x, n, mean, sd);
    double r_mean = 0.0;
    for (size_t i = 0; i < n; i++) {
        r_mean += r[i] / (double) n;
    }
    for (size_t i = 0; i < n; i++) {
        r[i] -= r_mean;
        for (int j = 0; j < S_P; j++) {
            x[i * S_P + j] = sd[j] > 0.0 ? (x[i * S_P + j] - mean[j]) / sd[j] : 0.0;
        }
    }
    double lambda = COORD_MODEL_RIDGE + ridge * (double) n;
    int rc = jf_torch_lstsq(x, n, S_P, r, lambda, c, err);
    self->head[0] = r_mean;
    for (int j = 0; rc == 0 && j < S_P; j++) {
        self->head[j + 1] = sd[j] > 0.0 ? c[j] / sd[j] : 0.0;
        self->head[0] -= self->head[j + 1] * mean[j];
    }
    return rc;
}

// Scales the p columns of x (n x p) to unit root mean square, the factors into scale: the
// reference's column is ~1 and the features' ~1/y, and the ridge term must mean the same for all.
static void s_unit_columns(double *x, size_t n, size_t p, double *scale)
{
    for (size_t j = 0; j < p; j++) {
        double ss = 0.0;
        for (size_t i = 0; i < n; i++) {
            ss += x[i * p + j] * x[i * p + j];
        }
        scale[j] = ss > 0.0 ? sqrt(ss / (double) n) : 1.0;
        for (size_t i = 0; i < n; i++) {
            x[i * p + j] /= scale[j];
        }
    }
}

// The sum form: rows (y_ref, features) / y against 1, so the squared error is relative.
static int s_sum_fit(coord_model_t *self, const coord_point_t *pts, size_t n, jf_err_t *err)
{
    size_t p = (size_t) coord_features_count(self->target) + 1;
    double *x = malloc(n * p * sizeof *x);
    double *one = malloc(n * sizeof *one);
    int rc = x && one ? 0 : jf_err_set(err, -ENOMEM, "head: out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        double *row = x + i * p;
        rc = s_ref_predict(self->ref, &pts[i].op, &row[0], err);
        rc = rc == 0 ? coord_features_row(self->target, &pts[i].op, row + 1) : rc;
        for (size_t j = 0; j < p; j++) {
            row[j] /= pts[i].y;
        }
        one[i] = 1.0;
    }
    double scale[COORD_FEATURES_MAX + 1];
    if (rc == 0) {
        s_unit_columns(x, n, p, scale);
    }
    rc = rc == 0 ? jf_torch_lstsq(x, n, p, one, COORD_MODEL_RIDGE, self->coef, err) : rc;
    for (size_t j = 0; rc == 0 && j < p; j++) {
        self->coef[j] /= scale[j];
    }
    self->n_coef = (int) p;
    free(x);
    free(one);
    return rc;
}

int coord_model_head_fit(coord_model_t *self, const coord_model_t *ref, const coord_point_t *pts,
                         size_t n, double ridge, jf_err_t *err)
{
    self->log = self->head_form != COORD_MODEL_HEAD_SUM;
    self->head_ridge = ridge;
    self->ref = s_copy(ref, err);
    if (self->ref && self->head_form == COORD_MODEL_HEAD_SUM) {
        return s_sum_fit(self, pts, n, err);
    }
    double *x = self->ref ? malloc(n * S_P * sizeof *x) : NULL;
    double *r = x ? malloc(n * sizeof *r) : NULL;
    int rc = !self->ref ? (err && err->code ? err->code : -EIO)
             : r        ? 0
                        : jf_err_set(err, -ENOMEM, "head: out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = s_row(self, &pts[i].op, x + i * S_P, err);
        r[i] = log(pts[i].y) - x[i * S_P]; // what the reference's log prediction misses
    }
    rc = rc == 0 ? s_solve(self, x, r, n, ridge, err) : rc;
    free(x);
    free(r);
    return rc;
}

static int s_sum_predict(coord_model_t *self, const coord_op_t *op, double *ret_y, jf_err_t *err)
{
    double row[COORD_FEATURES_MAX + 1];
    int rc = s_ref_predict(self->ref, op, &row[0], err);
    if (rc == 0 && coord_features_row(self->target, op, row + 1) != 0) {
        rc = jf_err_set(err, -EINVAL, "predict: needs cores >= 1, positive clocks, workers >= 0");
    }
    double s = 0.0;
    for (int j = 0; rc == 0 && j < self->n_coef; j++) {
        s += self->coef[j] * row[j];
    }
    *ret_y = s;
    return rc;
}

int coord_model_head_predict(coord_model_t *self, const coord_op_t *op, double *ret_y,
                             jf_err_t *err)
{
    if (self->head_form == COORD_MODEL_HEAD_SUM) {
        return s_sum_predict(self, op, ret_y, err);
    }
    double x[S_P];
    int rc = s_row(self, op, x, err);
    if (rc != 0) {
        return rc;
    }
    double s = x[0] + self->head[0];
    for (int j = 0; j < S_P; j++) {
        s += self->head[j + 1] * x[j];
    }
    *ret_y = exp(s);
    return 0;
}

json_t *coord_model_head_params_json(const coord_model_t *self)
{
    bool sum = self->head_form == COORD_MODEL_HEAD_SUM;
    const double *v = sum ? self->coef : self->head;
    int count = sum ? self->n_coef : S_P + 1;
    json_t *coef = json_array();
    for (int i = 0; coef && i < count; i++) {
        if (json_array_append_new(coef, json_real(v[i])) != 0) {
            json_decref(coef);
            coef = NULL;
        }
    }
    json_t *ref = coord_model_params_json(self->ref);
    if (!coef || !ref) {
        json_decref(coef);
        json_decref(ref);
        return NULL;
    }
    return json_pack("{s:s, s:o, s:f, s:s, s:o, s:i, s:i}", "form", sum ? "sum" : "log", "coef",
                     coef, "ridge", self->head_ridge, "ref_kind",
                     coord_model_kind_name(self->ref->kind), "ref", ref, "ref_workers",
                     self->ref->trained_workers, "ref_batch", self->ref->trained_batch);
}

// The head's form and coefficients from its params. 0, or -EINVAL with err.
static int s_load_coef(coord_model_t *self, const char *form, const json_t *coef, jf_err_t *err)
{
    bool sum = strcmp(form, "sum") == 0;
    self->head_form = sum ? COORD_MODEL_HEAD_SUM : COORD_MODEL_HEAD_LOG;
    self->log = !sum;
    self->n_coef = sum ? coord_features_count(self->target) + 1 : 0;
    int count = sum ? self->n_coef : S_P + 1;
    if ((!sum && strcmp(form, "log") != 0) || !json_is_array(coef) ||
        json_array_size(coef) != (size_t) count) {
        return jf_err_set(err, -EINVAL,
                          "head params: 'form' must be log or sum and 'coef' an array of %d "
                          "numbers",
                          count);
    }
    for (int i = 0; i < count; i++) {
        json_t *v = json_array_get(coef, (size_t) i);
        if (!json_is_number(v)) {
            return jf_err_set(err, -EINVAL, "head params: coef[%d] is not a number", i);
        }
        *(sum ? &self->coef[i] : &self->head[i]) = json_number_value(v);
    }
    return 0;
}

int coord_model_head_load(coord_model_t *self, const json_t *params, jf_err_t *err)
{
    json_error_t jerr;
    json_t *coef = NULL;
    json_t *ref = NULL;
    const char *ref_kind = NULL;
    int workers = -1;
    int batch = -1;
    double cv_under = NAN;
    const char *form = "log";
    if (json_unpack_ex(
            (json_t *) params, &jerr, JSON_STRICT, "{s?s, s:o, s:F, s:s, s:o, s:i, s:i, s?F}",
            "form", &form, "coef", &coef, "ridge", &self->head_ridge, "ref_kind", &ref_kind, "ref",
            &ref, "ref_workers", &workers, "ref_batch", &batch, "cv_under_pct", &cv_under) != 0) {
        return jf_err_set(err, -EINVAL, "head params: %s", jerr.text);
    }
    int rc = s_load_coef(self, form, coef, err);
    if (rc != 0) {
        return rc;
    }
    self->cv_under_pct = cv_under;
    coord_model_kind_t kind = COORD_MODEL_LINEAR;
    if (!coord_model_kind_parse(ref_kind, &kind)) {
        return jf_err_set(err, -EINVAL, "head params: unknown ref_kind '%.40s'", ref_kind);
    }
    self->ref = coord_model_load_json(kind, self->target, ref, err);
    if (!self->ref) {
        return jf_err_prefix(err, "head params: ref");
    }
    coord_model_set_trained_config(self->ref, workers, batch);
    return 0;
}
