/* The mlp kind of coord_model: standardised inputs (cores, GHz clocks, workers, batch), a
 * standardised log target (errors become relative, as MAPE weighs them), trained through the
 * libtorch shim from scratch (L-BFGS) or, for a transfer, from a reference model's parameters
 * and standardisation (PowerTrain's method: the reference's mapping is kept, then fine-tuned
 * with small Adam steps). */
#include "coord_model_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S_HZ_PER_GHZ 1e9
#define S_N_SIZES    4 // inputs, hidden, hidden, output

void coord_model_mlp_inputs(const coord_op_t *op, double *ret_in)
{
    ret_in[0] = op->cores;
    ret_in[1] = (double) op->cpu_hz / S_HZ_PER_GHZ;
    ret_in[2] = (double) op->gpu_hz / S_HZ_PER_GHZ;
    ret_in[3] = (double) op->emc_hz / S_HZ_PER_GHZ;
    ret_in[4] = op->workers;
    ret_in[5] = op->batch_size;
}

// Mean and standard deviation of each input and of log(y) over n points.
static void s_standardise(coord_model_t *self, const coord_point_t *pts, size_t n)
{
    double in[COORD_MODEL_MLP_INPUTS];
    double s1[COORD_MODEL_MLP_INPUTS + 1] = {0};
    double s2[COORD_MODEL_MLP_INPUTS + 1] = {0};
    for (size_t i = 0; i < n; i++) {
        coord_model_mlp_inputs(&pts[i].op, in);
        for (int j = 0; j <= COORD_MODEL_MLP_INPUTS; j++) {
            double v = j < COORD_MODEL_MLP_INPUTS ? in[j] : log(pts[i].y);
            s1[j] += v;
            s2[j] += v * v;
        }
    }
    for (int j = 0; j <= COORD_MODEL_MLP_INPUTS; j++) {
        double mean = s1[j] / (double) n;
        double var = s2[j] / (double) n - mean * mean;
        double sd = var > COORD_MODEL_STD_MIN ? sqrt(var) : 1.0;
        *(j < COORD_MODEL_MLP_INPUTS ? &self->in_mean[j] : &self->y_mean) = mean;
        *(j < COORD_MODEL_MLP_INPUTS ? &self->in_std[j] : &self->y_std) = sd;
    }
}

static void s_input_row(const coord_model_t *self, const coord_op_t *op, float *row)
{
    double in[COORD_MODEL_MLP_INPUTS];
    coord_model_mlp_inputs(op, in);
    for (int j = 0; j < COORD_MODEL_MLP_INPUTS; j++) {
        row[j] = (float) ((in[j] - self->in_mean[j]) / self->in_std[j]);
    }
}

static int s_train(coord_model_t *self, const coord_point_t *pts, size_t n, bool transfer,
                   jf_err_t *err)
{
    float *x = malloc(n * COORD_MODEL_MLP_INPUTS * sizeof *x);
    float *y = malloc(n * sizeof *y);
    int rc = x && y ? 0 : jf_err_set(err, -ENOMEM, "mlp: out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        s_input_row(self, &pts[i].op, x + i * COORD_MODEL_MLP_INPUTS);
        y[i] = (float) ((log(pts[i].y) - self->y_mean) / self->y_std);
    }
    // L-BFGS runs to a minimum of the training loss: with fewer points than parameters that
    // minimum fits the noise (the real Orin's 50 modes: 43 % held-out MAPE against Adam's 30 %),
    // where Adam's fixed budget of small steps stops earlier. Adam there; it is cheap on few
    // points.
    bool lbfgs = !transfer && n >= jf_torch_mlp_param_count(self->mlp);
    jf_torch_mlp_train_opts_t o = {
        .epochs = transfer ? COORD_MODEL_XFER_EPOCHS
                  : lbfgs  ? COORD_MODEL_MLP_EPOCHS
                           : COORD_MODEL_MLP_ADAM_STEPS,
        .lr = transfer ? COORD_MODEL_XFER_LR
              : lbfgs  ? COORD_MODEL_MLP_LR
                       : COORD_MODEL_MLP_ADAM_LR,
        .weight_decay = lbfgs ? 0.0 : COORD_MODEL_MLP_DECAY,
        .optim = lbfgs ? JF_TORCH_MLP_LBFGS : JF_TORCH_MLP_ADAM,
    };
    if (rc == 0) {
        rc = jf_torch_mlp_train(self->mlp, x, y, n, &o, COORD_MODEL_MLP_SEED, err);
    }
    free(x);
    free(y);
    return rc;
}

int coord_model_mlp_fit(coord_model_t *self, const coord_model_t *ref, const coord_point_t *pts,
                        size_t n, jf_err_t *err)
{
    static const int sizes[S_N_SIZES] = {COORD_MODEL_MLP_INPUTS, COORD_MODEL_MLP_HIDDEN,
                                         COORD_MODEL_MLP_HIDDEN, 1};
    self->log = true;
    if (ref) {
        memcpy(self->in_mean, ref->in_mean, sizeof self->in_mean);
        memcpy(self->in_std, ref->in_std, sizeof self->in_std);
        self->y_mean = ref->y_mean;
        self->y_std = ref->y_std;
        self->mlp = jf_torch_mlp_clone(ref->mlp, err);
    } else {
        s_standardise(self, pts, n);
        self->mlp = jf_torch_mlp_new(sizes, S_N_SIZES, COORD_MODEL_MLP_SEED, err);
    }
    return self->mlp ? s_train(self, pts, n, ref != NULL, err) : -EIO;
}

int coord_model_mlp_predict(coord_model_t *self, const coord_op_t *op, double *ret_y, jf_err_t *err)
{
    if (op->cores < 1 || op->cpu_hz <= 0 || op->gpu_hz <= 0 || op->emc_hz <= 0) {
        return jf_err_set(err, -EINVAL, "predict: needs cores >= 1 and positive clocks");
    }
    float row[COORD_MODEL_MLP_INPUTS];
    float out = 0.0f;
    s_input_row(self, op, row);
    int rc = jf_torch_mlp_predict(self->mlp, row, 1, &out, err);
    if (rc == 0) {
        *ret_y = exp((double) out * self->y_std + self->y_mean);
    }
    return rc;
}

static json_t *s_doubles(const double *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        if (json_array_append_new(a, json_real(v[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *coord_model_mlp_params_json(const coord_model_t *self)
{
    size_t count = jf_torch_mlp_param_count(self->mlp);
    float *w = malloc((count ? count : 1) * sizeof *w);
    json_t *wa = w && jf_torch_mlp_params(self->mlp, w, count, NULL) == 0 ? json_array() : NULL;
    for (size_t i = 0; wa && i < count; i++) {
        if (json_array_append_new(wa, json_real(w[i])) != 0) {
            json_decref(wa);
            wa = NULL;
        }
    }
    free(w);
    json_t *mean = s_doubles(self->in_mean, COORD_MODEL_MLP_INPUTS);
    json_t *sd = s_doubles(self->in_std, COORD_MODEL_MLP_INPUTS);
    if (!wa || !mean || !sd) {
        json_decref(wa);
        json_decref(mean);
        json_decref(sd);
        return NULL;
    }
    return json_pack("{s:i, s:o, s:o, s:f, s:f, s:o}", "hidden", COORD_MODEL_MLP_HIDDEN, "in_mean",
                     mean, "in_std", sd, "y_mean", self->y_mean, "y_std", self->y_std, "w", wa);
}

// Reads n numbers of array a into v (floats when f is set). 0, or -EINVAL with err naming key.
static int s_numbers(const json_t *a, const char *key, size_t n, double *v, float *f, jf_err_t *err)
{
    if (!json_is_array(a) || json_array_size(a) != n) {
        return jf_err_set(err, -EINVAL, "mlp params: '%s' must be an array of %zu numbers", key, n);
    }
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(a, i);
        if (!json_is_number(x)) {
            return jf_err_set(err, -EINVAL, "mlp params: %s[%zu] is not a number", key, i);
        }
        if (f) {
            f[i] = (float) json_number_value(x);
        } else {
            v[i] = json_number_value(x);
        }
    }
    return 0;
}

static int s_load_weights(coord_model_t *self, const json_t *wa, jf_err_t *err)
{
    size_t count = jf_torch_mlp_param_count(self->mlp);
    float *w = malloc((count ? count : 1) * sizeof *w);
    int rc = w ? s_numbers(wa, "w", count, NULL, w, err)
               : jf_err_set(err, -ENOMEM, "mlp: out of memory");
    rc = rc == 0 ? jf_torch_mlp_set_params(self->mlp, w, count, err) : rc;
    free(w);
    return rc;
}

int coord_model_mlp_load(coord_model_t *self, const json_t *params, jf_err_t *err)
{
    json_error_t jerr;
    json_t *mean = NULL;
    json_t *sd = NULL;
    json_t *wa = NULL;
    int hidden = 0;
    if (json_unpack_ex((json_t *) params, &jerr, JSON_STRICT, "{s:i, s:o, s:o, s:F, s:F, s:o, s?F}",
                       "hidden", &hidden, "in_mean", &mean, "in_std", &sd, "y_mean", &self->y_mean,
                       "y_std", &self->y_std, "w", &wa, "cv_under_pct", &self->cv_under_pct) != 0) {
        return jf_err_set(err, -EINVAL, "mlp params: %s", jerr.text);
    }
    int sizes[S_N_SIZES] = {COORD_MODEL_MLP_INPUTS, hidden, hidden, 1};
    self->log = true;
    int rc = s_numbers(mean, "in_mean", COORD_MODEL_MLP_INPUTS, self->in_mean, NULL, err);
    rc = rc == 0 ? s_numbers(sd, "in_std", COORD_MODEL_MLP_INPUTS, self->in_std, NULL, err) : rc;
    self->mlp = rc == 0 ? jf_torch_mlp_new(sizes, S_N_SIZES, COORD_MODEL_MLP_SEED, err) : NULL;
    rc = rc == 0 && !self->mlp ? -EINVAL : rc;
    return rc == 0 ? s_load_weights(self, wa, err) : rc;
}
