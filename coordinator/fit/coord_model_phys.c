/* The phys kind of coord_model: a physically motivated parametric form per target (time: a smooth
 * max of CPU and device time plus a fixed cost; power: static power plus each unit's dynamic power
 * weighted by its share of a latent time), fitted by the libtorch shim (jf_torch_phys_*, where the
 * forms are written) from several starting points, the first a phys reference's parameters when
 * there is one. One loader configuration; time and power only. docs/analysis.md "Physical models".
 */
#include "coord_model_internal.h"

#include "jf_rng.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S_HZ_PER_GHZ   1e9
#define S_STARTS_MAX   8   // starting points of one fit: the reference's, the default, perturbed
#define S_PERTURB_SD   0.5 // standard deviation of a perturbed start, per (log) parameter
#define S_PERTURB_SEED 7   // their seed (fixed: the same data give the same model)
#define S_MAX_ITER     500 // L-BFGS iterations per start
#define S_SCREEN_N     400 // above this many points the starts are screened on a subsample
#define S_SCREEN_ITER  100 // L-BFGS iterations per start there; the winner then has S_MAX_ITER

// Default start: CPU, GPU and memory time of the same order and a small fixed cost (time over its
// geometric mean), 4 usable cores, smooth-max sharpness 1 + e^log 2; for power the latent time,
// then static power, load-following and clock-following parts, the two exponents' logs (0:
// P ~ f^2 for a loaded unit) and the CPU's leakage per online core. Only where the descent starts:
// every fit moves all of them.
static const double s_time_start[JF_TORCH_PHYS_TIME_PARAMS] = {-1.2040, -1.6094, -1.6094, -2.9957,
                                                               1.3863,  0.6931,  0.6931};
static const double s_power_tail[JF_TORCH_PHYS_POWER_PARAMS - JF_TORCH_PHYS_TIME_PARAMS] = {
    -0.9163, -2.9957, -4.6052, -1.2040, -2.9957, -2.9957, -2.9957, 0.0, 0.0, -4.6052};
static const char *const s_start_names[] = {"reference", "default", "perturbed"};

static jf_torch_phys_form_t s_form(coord_target_t target)
{
    return target == COORD_TARGET_TIME ? JF_TORCH_PHYS_TIME : JF_TORCH_PHYS_POWER;
}

size_t coord_model_phys_min_points(coord_target_t target)
{
    return target == COORD_TARGET_ENERGY ? 0 : (size_t) jf_torch_phys_params(s_form(target)) + 2;
}

static void s_inputs(const coord_op_t *op, double *ret_x)
{
    ret_x[0] = (double) op->cores;
    ret_x[1] = (double) op->cpu_hz / S_HZ_PER_GHZ;
    ret_x[2] = (double) op->gpu_hz / S_HZ_PER_GHZ;
    ret_x[3] = (double) op->emc_hz / S_HZ_PER_GHZ;
}

// The starts (rows of np): ref's parameters when it is a phys model of the target, the default,
// then perturbed defaults up to S_STARTS_MAX. Returns the count; *ret_has_ref says whether the
// first is the reference's.
static size_t s_starts(const coord_model_t *self, const coord_model_t *ref, int np, double *starts,
                       bool *ret_has_ref)
{
    size_t k = 0;
    *ret_has_ref = ref && ref->kind == COORD_MODEL_PHYS && ref->target == self->target;
    if (*ret_has_ref) {
        memcpy(starts, ref->phys, (size_t) np * sizeof *starts);
        k++;
    }
    double *d = starts + k * (size_t) np;
    memcpy(d, s_time_start, sizeof s_time_start);
    if (np > JF_TORCH_PHYS_TIME_PARAMS) {
        memcpy(d + JF_TORCH_PHYS_TIME_PARAMS, s_power_tail, sizeof s_power_tail);
    }
    k++;
    jf_rng_t rng;
    jf_rng_seed(&rng, S_PERTURB_SEED, 0);
    for (; k < S_STARTS_MAX; k++) {
        for (int j = 0; j < np; j++) {
            starts[k * (size_t) np + (size_t) j] = d[j] + S_PERTURB_SD * jf_rng_normal(&rng);
        }
    }
    return k;
}

int coord_model_phys_fit(coord_model_t *self, const coord_model_t *ref, const coord_point_t *pts,
                         size_t n, jf_err_t *err)
{
    int np = jf_torch_phys_params(s_form(self->target));
    double *x = malloc(n * JF_TORCH_PHYS_INPUTS * sizeof *x);
    double *y = malloc(n * sizeof *y);
    double starts[S_STARTS_MAX * JF_TORCH_PHYS_POWER_PARAMS];
    int rc = x && y && np > 0 ? 0 : jf_err_set(err, -ENOMEM, "phys fit: out of memory");
    double log_sum = 0.0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        s_inputs(&pts[i].op, x + i * JF_TORCH_PHYS_INPUTS);
        y[i] = pts[i].y;
        log_sum += log(pts[i].y);
    }
    bool has_ref = false;
    size_t ns = rc == 0 ? s_starts(self, ref, np, starts, &has_ref) : 0;
    self->phys_scale = n ? exp(log_sum / (double) n) : 1.0;
    self->n_phys = np;
    double loss = NAN;
    size_t won = 0;
    // Many points: every start descends S_SCREEN_ITER iterations on every stride-th point (at
    // most S_SCREEN_N of them), then only the winner descends on all (docs/analysis.md "Physical
    // models"); the same fit as before on up to S_SCREEN_N points.
    size_t stride = n > S_SCREEN_N ? (n + S_SCREEN_N - 1) / S_SCREEN_N : 1;
    size_t m = (n + stride - 1) / stride;
    double *xs = stride > 1 ? malloc(m * JF_TORCH_PHYS_INPUTS * sizeof *xs) : x;
    double *ys = stride > 1 ? malloc(m * sizeof *ys) : y;
    rc = rc == 0 && (!xs || !ys) ? jf_err_set(err, -ENOMEM, "phys fit: out of memory") : rc;
    for (size_t i = 0; rc == 0 && stride > 1 && i < m; i++) {
        memcpy(xs + i * JF_TORCH_PHYS_INPUTS, x + i * stride * JF_TORCH_PHYS_INPUTS,
               JF_TORCH_PHYS_INPUTS * sizeof *x);
        ys[i] = y[i * stride];
    }
    rc = rc == 0 ? jf_torch_phys_fit(s_form(self->target), xs, ys, m, self->phys_scale, starts, ns,
                                     stride > 1 ? S_SCREEN_ITER : S_MAX_ITER, self->phys, &loss,
                                     &won, err)
                 : rc;
    size_t won_all = 0;
    rc = rc == 0 && stride > 1
             ? jf_torch_phys_fit(s_form(self->target), x, y, n, self->phys_scale, self->phys, 1,
                                 S_MAX_ITER, self->phys, &loss, &won_all, err)
             : rc;
    // The winner on the subsample may not even have a finite loss on all points (a mode it did
    // not see where its form is undefined): then every start descends on all, as below the cut.
    if (rc == -EIO && stride > 1) {
        jf_err_clear(err);
        rc = jf_torch_phys_fit(s_form(self->target), x, y, n, self->phys_scale, starts, ns,
                               S_MAX_ITER, self->phys, &loss, &won, err);
    }
    if (stride > 1) {
        free(xs);
        free(ys);
    }
    self->phys_start = has_ref && won == 0 ? 0 : won == (has_ref ? 1u : 0u) ? 1 : 2;
    free(x);
    free(y);
    return rc;
}

int coord_model_phys_predict(coord_model_t *self, const coord_op_t *op, double *ret_y,
                             jf_err_t *err)
{
    if (op->cores < 1 || op->cpu_hz <= 0 || op->gpu_hz <= 0 || op->emc_hz <= 0) {
        return jf_err_set(err, -EINVAL, "predict: needs cores >= 1 and positive clocks");
    }
    double x[JF_TORCH_PHYS_INPUTS];
    s_inputs(op, x);
    return jf_torch_phys_predict(s_form(self->target), self->phys, self->phys_scale, x, 1, ret_y,
                                 err);
}

const char *coord_model_phys_start_name(const coord_model_t *self)
{
    return self->kind == COORD_MODEL_PHYS ? s_start_names[self->phys_start] : NULL;
}

json_t *coord_model_phys_params_json(const coord_model_t *self)
{
    json_t *p = json_array();
    for (int i = 0; p && i < self->n_phys; i++) {
        if (json_array_append_new(p, json_real(self->phys[i])) != 0) {
            json_decref(p);
            p = NULL;
        }
    }
    return p ? json_pack("{s:s, s:f, s:o, s:s}", "form", coord_target_name(self->target), "scale",
                         self->phys_scale, "p", p, "start", s_start_names[self->phys_start])
             : NULL;
}

int coord_model_phys_load(coord_model_t *self, const json_t *params, jf_err_t *err)
{
    json_error_t jerr;
    const char *form = NULL;
    const char *start = "default";
    json_t *p = NULL;
    if (json_unpack_ex((json_t *) params, &jerr, JSON_STRICT, "{s:s, s:F, s:o, s?s, s?F}", "form",
                       &form, "scale", &self->phys_scale, "p", &p, "start", &start, "cv_under_pct",
                       &self->cv_under_pct) != 0) {
        return jf_err_set(err, -EINVAL, "phys params: %s", jerr.text);
    }
    int np = self->target == COORD_TARGET_ENERGY ? 0 : jf_torch_phys_params(s_form(self->target));
    if (np == 0 || strcmp(form, coord_target_name(self->target)) != 0 || !json_is_array(p) ||
        json_array_size(p) != (size_t) np || !(self->phys_scale > 0.0)) {
        return jf_err_set(err, -EINVAL,
                          "phys params: 'form' must be the target (time or power), 'scale' "
                          "positive and 'p' an array of %d numbers",
                          np);
    }
    for (int i = 0; i < np; i++) {
        json_t *v = json_array_get(p, (size_t) i);
        if (!json_is_number(v)) {
            return jf_err_set(err, -EINVAL, "phys params: p[%d] is not a number", i);
        }
        self->phys[i] = json_number_value(v);
    }
    self->n_phys = np;
    for (int i = 0; i < (int) (sizeof s_start_names / sizeof s_start_names[0]); i++) {
        if (strcmp(start, s_start_names[i]) == 0) {
            self->phys_start = i;
            return 0;
        }
    }
    return jf_err_set(err, -EINVAL,
                      "phys params: 'start' must be reference, default or perturbed, got '%.20s'",
                      start);
}
