/* Unit tests of the model fitting (coordinator/fit, common/torch/jf_torch_fit): least squares
 * against a known plane, cross-validated MAPE against the test's own fold refits (normal
 * equations solved here by Gaussian elimination), a roofline-like surface with 3 % noise, a
 * transfer against training from scratch, the head transfer recovering a known correction of its
 * reference, the held-out underestimates, JSON round trips and the documented errors. Figures
 * are printed as name=value lines. */
#include "coord_model.h"
#include "fit_support.h"
#include "jf_rng.h"
#include "jf_torch_fit.h"

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
// clang-format on

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_PLANE_N      400
#define T_PLANE_SIGMA  0.01
#define T_NOISE        0.03 // relative noise of the generated surfaces
#define T_GHZ          1e9
#define T_LINEAR_BOUND 7.0 // measured 5.0 % (seed 22)
#define T_MLP_BOUND    4.0 // measured 2.8 %

// The true surface of the tests: a roofline max of GPU and memory time plus CPU time,
// t = scale_g * max(a/f_gpu, b/f_emc) + scale_c * c/(cores f_cpu) seconds, in µs.
typedef struct t_surface {
    double a, b, c; // seconds at 1 GHz
} t_surface_t;

static double t_truth(const t_surface_t *s, const coord_op_t *op)
{
    double g = (double) op->gpu_hz / T_GHZ;
    double e = (double) op->emc_hz / T_GHZ;
    double c = (double) op->cpu_hz / T_GHZ;
    double gpu = s->a / g > s->b / e ? s->a / g : s->b / e;
    return (gpu + s->c / (op->cores * c)) * 1e6;
}

#define T_GRID_N TFIT_GRID_N

static void t_points(const t_surface_t *s, const coord_op_t *ops, size_t n, uint64_t seed,
                     double noise, coord_point_t *pts)
{
    jf_rng_t rng;
    jf_rng_seed(&rng, seed, 0);
    for (size_t i = 0; i < n; i++) {
        pts[i] = (coord_point_t){.op = ops[i],
                                 .y = t_truth(s, &ops[i]) * (1.0 + noise * jf_rng_normal(&rng))};
    }
}

static void test_lstsq_recovers_plane(void **state)
{
    (void) state;
    static const double truth[] = {3.0, 2.0, -1.5, 0.5};
    double *x = malloc(T_PLANE_N * 4 * sizeof *x);
    double *y = malloc(T_PLANE_N * sizeof *y);
    jf_rng_t rng;
    jf_rng_seed(&rng, 5, 0);
    for (size_t i = 0; i < T_PLANE_N; i++) {
        x[i * 4] = 1.0;
        y[i] = truth[0];
        for (int j = 1; j < 4; j++) {
            x[i * 4 + j] = jf_rng_uniform(&rng);
            y[i] += truth[j] * x[i * 4 + j];
        }
        y[i] += T_PLANE_SIGMA * jf_rng_normal(&rng);
    }
    double coef[4] = {0};
    jf_err_t err = {0};
    assert_int_equal(jf_torch_lstsq(x, T_PLANE_N, 4, y, 0.0, coef, &err), 0);
    // A slope's standard error with x uniform on [0, 1] (variance 1/12) is sigma*sqrt(12/n);
    // the intercept's is about twice that. Allow 6 of the larger.
    double tol = 6.0 * 2.0 * T_PLANE_SIGMA * sqrt(12.0 / T_PLANE_N);
    for (int j = 0; j < 4; j++) {
        printf("lstsq_coef%d=%.5f truth=%.2f tol=%.4f\n", j, coef[j], truth[j], tol);
        assert_true(fabs(coef[j] - truth[j]) < tol);
    }
    assert_int_equal(jf_torch_lstsq(x, 3, 4, y, 0.0, coef, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "3 x 4"));
    free(x);
    free(y);
}

// Solves the p x p system a z = b in place (Gaussian elimination with partial pivoting).
static void t_solve(double *a, double *b, int p)
{
    for (int k = 0; k < p; k++) {
        int piv = k;
        for (int i = k + 1; i < p; i++) {
            piv = fabs(a[i * p + k]) > fabs(a[piv * p + k]) ? i : piv;
        }
        for (int j = 0; j < p; j++) {
            double t = a[k * p + j];
            a[k * p + j] = a[piv * p + j];
            a[piv * p + j] = t;
        }
        double t = b[k];
        b[k] = b[piv];
        b[piv] = t;
        for (int i = k + 1; i < p; i++) {
            double f = a[i * p + k] / a[k * p + k];
            for (int j = k; j < p; j++) {
                a[i * p + j] -= f * a[k * p + j];
            }
            b[i] -= f * b[k];
        }
    }
    for (int k = p - 1; k >= 0; k--) {
        for (int j = k + 1; j < p; j++) {
            b[k] -= a[k * p + j] * b[j];
        }
        b[k] /= a[k * p + k];
    }
}

// The test's own linear fit: normal equations (X'X + ridge I) b = X'y of the time features.
static void t_normal_fit(const coord_point_t *pts, size_t n, const size_t *fold, size_t skip,
                         double *coef)
{
    int p = coord_features_count(COORD_TARGET_TIME);
    double a[COORD_FEATURES_MAX * COORD_FEATURES_MAX] = {0};
    double row[COORD_FEATURES_MAX];
    memset(coef, 0, (size_t) p * sizeof *coef);
    for (size_t i = 0; i < n; i++) {
        if (fold[i] == skip) {
            continue;
        }
        assert_int_equal(coord_features_row(COORD_TARGET_TIME, &pts[i].op, row), 0);
        for (int r = 0; r < p; r++) {
            coef[r] += row[r] * pts[i].y;
            for (int c = 0; c < p; c++) {
                a[r * p + c] += row[r] * row[c];
            }
        }
    }
    for (int r = 0; r < p; r++) {
        a[r * p + r] += COORD_MODEL_RIDGE;
    }
    t_solve(a, coef, p);
}

static void test_cv_matches_own_refits(void **state)
{
    (void) state;
    coord_op_t ops[T_GRID_N];
    size_t n = tfit_grid(ops);
    t_surface_t s = {.a = 2.0, .b = 3.0, .c = 4.0};
    coord_point_t *pts = malloc(n * sizeof *pts);
    t_points(&s, ops, n, 21, T_NOISE, pts);
    coord_model_opts_t o = {
        .kind = COORD_MODEL_LINEAR, .target = COORD_TARGET_TIME, .log = COORD_MODEL_LOG_OFF};
    double cv = 0.0;
    jf_err_t err = {0};
    assert_int_equal(coord_model_cv(&o, pts, n, &cv, &err), 0);
    size_t *fold = malloc(n * sizeof *fold);
    size_t k = coord_model_folds(n, fold);
    assert_int_equal(k, COORD_MODEL_CV_FOLDS);
    double sum = 0.0;
    double row[COORD_FEATURES_MAX];
    double coef[COORD_FEATURES_MAX];
    for (size_t f = 0; f < k; f++) {
        t_normal_fit(pts, n, fold, f, coef);
        for (size_t i = 0; i < n; i++) {
            if (fold[i] != f) {
                continue;
            }
            coord_features_row(COORD_TARGET_TIME, &pts[i].op, row);
            double yhat = 0.0;
            for (int j = 0; j < coord_features_count(COORD_TARGET_TIME); j++) {
                yhat += coef[j] * row[j];
            }
            sum += fabs(yhat - pts[i].y) / pts[i].y;
        }
    }
    double own = 100.0 * sum / (double) n;
    printf("cv_mape_pct=%.6f own_refit_mape_pct=%.6f\n", cv, own);
    assert_true(fabs(cv - own) < 1e-6 * own);
    free(fold);
    free(pts);
}

static double t_fit_cv(coord_model_kind_t kind, const coord_point_t *pts, size_t n,
                       const char *name)
{
    coord_model_opts_t o = {.kind = kind, .target = COORD_TARGET_TIME};
    jf_err_t err = {0};
    coord_model_t *m = coord_model_fit(&o, pts, n, &err);
    if (!m) {
        fail_msg("fit: %s", err.msg);
    }
    double cv = coord_model_cv_mape_pct(m);
    printf("%s_cv_mape_pct=%.3f%s\n", name, cv,
           kind == COORD_MODEL_LINEAR ? (coord_model_uses_log(m) ? " log=yes" : " log=no") : "");
    coord_model_destroy(&m);
    return cv;
}

static void test_roofline_surface(void **state)
{
    (void) state;
    coord_op_t ops[T_GRID_N];
    size_t n = tfit_grid(ops);
    t_surface_t s = {.a = 2.0, .b = 3.0, .c = 4.0};
    coord_point_t *pts = malloc(n * sizeof *pts);
    t_points(&s, ops, n, 22, T_NOISE, pts);
    // 3 % noise alone gives a MAPE of about 3 * sqrt(2/pi) = 2.4 %; the bounds leave room for
    // the roofline's kink, which neither model has in its form.
    assert_true(t_fit_cv(COORD_MODEL_LINEAR, pts, n, "roofline_linear") < T_LINEAR_BOUND);
    assert_true(t_fit_cv(COORD_MODEL_MLP, pts, n, "roofline_mlp") < T_MLP_BOUND);
    free(pts);
}

#define T_XFER_N 50

static void test_transfer_beats_scratch(void **state)
{
    (void) state;
    coord_op_t ops[T_GRID_N];
    size_t n = tfit_grid(ops);
    t_surface_t ref_s = {.a = 2.0, .b = 3.0, .c = 4.0};
    t_surface_t new_s = {.a = 2.0 * 1.5, .b = 3.0 * 0.8, .c = 4.0 * 1.3}; // another workload
    coord_point_t *ref_pts = malloc(n * sizeof *ref_pts);
    coord_point_t *new_pts = malloc(n * sizeof *new_pts);
    t_points(&ref_s, ops, n, 31, T_NOISE, ref_pts);
    // The new workload's 50 profiled modes are a seeded shuffle's first 50; the rest are held
    // out (and compared with the truth, noise-free, so the figure is the model's own error).
    size_t order[T_GRID_N];
    for (size_t i = 0; i < n; i++) {
        order[i] = i;
    }
    jf_rng_t rng;
    jf_rng_seed(&rng, 32, 0);
    jf_rng_shuffle(&rng, order, n);
    coord_op_t shuffled[T_GRID_N];
    for (size_t i = 0; i < n; i++) {
        shuffled[i] = ops[order[i]];
    }
    t_points(&new_s, shuffled, T_XFER_N, 33, T_NOISE, new_pts);
    t_points(&new_s, shuffled + T_XFER_N, n - T_XFER_N, 0, 0.0, new_pts + T_XFER_N);
    coord_model_opts_t o = {.kind = COORD_MODEL_MLP, .target = COORD_TARGET_TIME, .skip_cv = true};
    coord_model_t *ref = tfit_fit(&o, ref_pts, n);
    coord_model_t *scratch = tfit_fit(&o, new_pts, T_XFER_N);
    o.transfer_from = ref;
    o.transfer = COORD_MODEL_TRANSFER_FINETUNE;
    coord_model_t *xfer = tfit_fit(&o, new_pts, T_XFER_N);
    double e_scratch = tfit_heldout(scratch, new_pts + T_XFER_N, n - T_XFER_N);
    double e_xfer = tfit_heldout(xfer, new_pts + T_XFER_N, n - T_XFER_N);
    printf("transfer50_heldout_mape_pct=%.3f scratch50_heldout_mape_pct=%.3f\n", e_xfer, e_scratch);
    assert_true(e_xfer < e_scratch);
    // A transfer needs an mlp reference of the same target.
    coord_model_opts_t bad = {.kind = COORD_MODEL_MLP,
                              .target = COORD_TARGET_POWER,
                              .transfer_from = ref,
                              .skip_cv = true,
                              .transfer = COORD_MODEL_TRANSFER_FINETUNE};
    jf_err_t err = {0};
    assert_null(coord_model_fit(&bad, new_pts, T_XFER_N, &err));
    assert_non_null(strstr(err.msg, "transfer needs a reference mlp of target power"));
    coord_model_destroy(&ref);
    coord_model_destroy(&scratch);
    coord_model_destroy(&xfer);
    free(ref_pts);
    free(new_pts);
}

// The head's ground truth: the new workload's time is exactly T_HEAD_K * ref(op)^T_HEAD_B *
// gpu_ghz^T_HEAD_C (with 1 % noise on the profiled modes), where ref is the fitted reference
// model itself, so the head's least squares has a known answer: const log K, log_ref B - 1 (it
// fits what the reference misses), log_gpu_ghz C, the other inputs 0.
#define T_HEAD_K     1.7
#define T_HEAD_B     0.9
#define T_HEAD_C     (-0.2)
#define T_HEAD_NOISE 0.01
#define T_HEAD_TOL   0.05 // on each coefficient: measured errors are below 0.02
#define T_HEAD_BOUND 1.5  // held-out MAPE against the noise-free truth, percent

static double t_head_truth(coord_model_t *ref, const coord_op_t *op)
{
    double y = 0.0;
    jf_err_t err = {0};
    assert_int_equal(coord_model_predict(ref, op, &y, &err), 0);
    return T_HEAD_K * pow(y, T_HEAD_B) * pow((double) op->gpu_hz / T_GHZ, T_HEAD_C);
}

// Checks the stored head coefficients against the ground truth and returns the held-out MAPE.
static double t_head_check(coord_model_t *head, coord_model_t *ref, const coord_op_t *ops, size_t n)
{
    static const double want[] = {0.0, T_HEAD_B - 1.0, 0.0, 0.0, T_HEAD_C, 0.0};
    json_t *p = coord_model_params_json(head);
    json_t *coef = json_object_get(p, "coef");
    assert_int_equal(json_array_size(coef), 6);
    for (size_t j = 0; j < 6; j++) {
        double got = json_number_value(json_array_get(coef, j));
        double w = j == 0 ? log(T_HEAD_K) : want[j];
        printf("head_coef%zu=%.4f truth=%.4f\n", j, got, w);
        assert_true(fabs(got - w) < T_HEAD_TOL);
    }
    json_decref(p);
    coord_point_t *truth = malloc(n * sizeof *truth);
    for (size_t i = 0; i < n; i++) {
        truth[i] = (coord_point_t){.op = ops[i], .y = t_head_truth(ref, &ops[i])};
    }
    double mape = tfit_heldout(head, truth, n);
    free(truth);
    return mape;
}

static void test_head_transfer_recovers_correction(void **state)
{
    (void) state;
    coord_op_t grid[T_GRID_N];
    size_t n = tfit_grid(grid);
    t_surface_t ref_s = {.a = 2.0, .b = 3.0, .c = 4.0};
    coord_point_t *ref_pts = malloc(n * sizeof *ref_pts);
    t_points(&ref_s, grid, n, 61, T_NOISE, ref_pts);
    coord_model_opts_t o = {.kind = COORD_MODEL_LINEAR, .target = COORD_TARGET_TIME};
    coord_model_t *ref = tfit_fit(&o, ref_pts, n);
    // 50 profiled modes of the new workload (a seeded shuffle's first 50), the rest held out.
    size_t order[T_GRID_N];
    for (size_t i = 0; i < n; i++) {
        order[i] = i;
    }
    jf_rng_t rng;
    jf_rng_seed(&rng, 62, 0);
    jf_rng_shuffle(&rng, order, n);
    coord_op_t ops[T_GRID_N];
    for (size_t i = 0; i < n; i++) {
        ops[i] = grid[order[i]];
    }
    coord_point_t new_pts[T_XFER_N];
    for (size_t i = 0; i < T_XFER_N; i++) {
        double y = t_head_truth(ref, &ops[i]);
        new_pts[i] =
            (coord_point_t){.op = ops[i], .y = y * (1.0 + T_HEAD_NOISE * jf_rng_normal(&rng))};
    }
    coord_model_opts_t h = {.target = COORD_TARGET_TIME,
                            .transfer_from = ref,
                            .transfer = COORD_MODEL_TRANSFER_HEAD,
                            .skip_cv = true};
    coord_model_t *head = tfit_fit(&h, new_pts, T_XFER_N);
    assert_int_equal(coord_model_kind(head), COORD_MODEL_LINEAR); // a linear model on log_ref
    assert_int_equal(coord_model_transfer(head), COORD_MODEL_TRANSFER_HEAD);
    double e_head = t_head_check(head, ref, ops + T_XFER_N, n - T_XFER_N);
    // Without the head (the reference alone) the held-out error is that of the correction.
    coord_point_t *rest = malloc((n - T_XFER_N) * sizeof *rest);
    for (size_t i = T_XFER_N; i < n; i++) {
        rest[i - T_XFER_N] = (coord_point_t){.op = ops[i], .y = t_head_truth(ref, &ops[i])};
    }
    double e_ref = tfit_heldout(ref, rest, n - T_XFER_N);
    printf("head50_heldout_mape_pct=%.3f reference_alone_mape_pct=%.3f\n", e_head, e_ref);
    assert_true(e_head < T_HEAD_BOUND);
    // Stored and loaded back (the reference inside it), it predicts the same.
    json_t *p = coord_model_params_json(head);
    char *text = json_dumps(p, JSON_COMPACT | JSON_REAL_PRECISION(17));
    jf_err_t err = {0};
    coord_model_t *back = coord_model_load(COORD_MODEL_LINEAR, COORD_TARGET_TIME, text, &err);
    if (!back) {
        fail_msg("load: %s", err.msg);
    }
    double y1 = 0.0;
    double y2 = 0.0;
    assert_int_equal(coord_model_predict(head, &ops[99], &y1, &err), 0);
    assert_int_equal(coord_model_predict(back, &ops[99], &y2, &err), 0);
    assert_true(fabs(y1 - y2) <= 1e-9 * y1);
    // AUTO cross-validates the head's ridge terms (a linear reference: no fine-tuning).
    h = (coord_model_opts_t){.target = COORD_TARGET_TIME, .transfer_from = ref};
    coord_model_t *aut = tfit_fit(&h, new_pts, T_XFER_N);
    printf("head50_auto_cv_mape_pct=%.3f cv_under_pct=%.3f\n", coord_model_cv_mape_pct(aut),
           coord_model_cv_under_pct(aut));
    assert_int_equal(coord_model_transfer(aut), COORD_MODEL_TRANSFER_HEAD);
    assert_false(coord_model_kept_by_one_se(aut, NULL, NULL));
    assert_true(coord_model_cv_mape_pct(aut) < 2.0 * T_HEAD_NOISE * 100.0);
    free(text);
    json_decref(p);
    free(rest);
    free(ref_pts);
    coord_model_destroy(&aut);
    coord_model_destroy(&back);
    coord_model_destroy(&head);
    coord_model_destroy(&ref);
}

// The sum form: the new workload is the reference's time scaled by 0.8 plus CPU-side work 3 s /
// (cores x f_cpu), a loader a GPU-bound reference never had. On the noise-free truth the sum head
// fitted on 50 modes predicts the other 526 within 0.5 % (the log form cannot: a sum of two
// parts is not a product of power laws), and survives its JSON.
static double t_sum_truth(coord_model_t *ref, const coord_op_t *op)
{
    double y = 0.0;
    jf_err_t err = {0};
    assert_int_equal(coord_model_predict(ref, op, &y, &err), 0);
    return 0.8 * y + 3e6 / (op->cores * ((double) op->cpu_hz / T_GHZ));
}

static void test_head_sum_form(void **state)
{
    (void) state;
    coord_op_t ops[T_GRID_N];
    size_t n = tfit_grid(ops);
    t_surface_t ref_s = {.a = 2.0, .b = 3.0, .c = 1.0};
    coord_point_t *pts = malloc(n * sizeof *pts);
    t_points(&ref_s, ops, n, 81, T_NOISE, pts);
    coord_model_opts_t o = {.kind = COORD_MODEL_MLP, .target = COORD_TARGET_TIME, .skip_cv = true};
    coord_model_t *ref = tfit_fit(&o, pts, n);
    for (size_t i = 0; i < n; i++) { // every 11th mode profiled, the rest held out
        pts[i] =
            (coord_point_t){.op = ops[(i * 11) % n], .y = t_sum_truth(ref, &ops[(i * 11) % n])};
    }
    coord_model_opts_t h = {.target = COORD_TARGET_TIME,
                            .transfer_from = ref,
                            .transfer = COORD_MODEL_TRANSFER_HEAD,
                            .head_form = COORD_MODEL_HEAD_SUM,
                            .skip_cv = true};
    coord_model_t *sum = tfit_fit(&h, pts, T_XFER_N);
    h.head_form = COORD_MODEL_HEAD_LOG;
    coord_model_t *lg = tfit_fit(&h, pts, T_XFER_N);
    double e_sum = tfit_heldout(sum, pts + T_XFER_N, n - T_XFER_N);
    double e_log = tfit_heldout(lg, pts + T_XFER_N, n - T_XFER_N);
    printf("head_sum50_heldout_mape_pct=%.3f head_log50_heldout_mape_pct=%.3f\n", e_sum, e_log);
    assert_true(e_sum < 0.5);
    json_t *p = coord_model_params_json(sum);
    char *text = json_dumps(p, JSON_COMPACT | JSON_REAL_PRECISION(17));
    jf_err_t err = {0};
    coord_model_t *back = coord_model_load(COORD_MODEL_LINEAR, COORD_TARGET_TIME, text, &err);
    if (!back) {
        fail_msg("load: %s", err.msg);
    }
    assert_true(fabs(tfit_heldout(back, pts + T_XFER_N, n - T_XFER_N) - e_sum) < 1e-6);
    free(text);
    json_decref(p);
    coord_model_destroy(&back);
    coord_model_destroy(&lg);
    coord_model_destroy(&sum);
    coord_model_destroy(&ref);
    free(pts);
}

static int t_cmp(const void *a, const void *b)
{
    double x = *(const double *) a;
    double y = *(const double *) b;
    return (x > y) - (x < y);
}

// The held-out underestimates agree with the MAPE (|y - p| / y = |u| / (1 + u) for u = (y - p) /
// p), and the fit keeps their 95th percentile (nearest rank) as cv_under_pct.
static void test_cv_underestimates(void **state)
{
    (void) state;
    coord_op_t ops[T_GRID_N];
    size_t n = tfit_grid(ops);
    t_surface_t s = {.a = 2.0, .b = 3.0, .c = 4.0};
    coord_point_t *pts = malloc(n * sizeof *pts);
    t_points(&s, ops, n, 71, T_NOISE, pts);
    coord_model_opts_t o = {
        .kind = COORD_MODEL_LINEAR, .target = COORD_TARGET_TIME, .log = COORD_MODEL_LOG_OFF};
    double *u = malloc(n * sizeof *u);
    double mape = 0.0;
    jf_err_t err = {0};
    assert_int_equal(coord_model_cv_under(&o, pts, n, &mape, u, &err), 0);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        sum += fabs(u[i]) / (1.0 + u[i]);
    }
    assert_true(fabs(100.0 * sum / (double) n - mape) < 1e-9 * mape);
    qsort(u, n, sizeof *u, t_cmp);
    double q95 = 100.0 * u[(size_t) ceil(0.95 * (double) n) - 1];
    coord_model_t *m = tfit_fit(&o, pts, n);
    printf("cv_under_q95_pct=%.4f fit_cv_under_pct=%.4f\n", q95, coord_model_cv_under_pct(m));
    assert_true(q95 > 0.0);
    assert_true(fabs(coord_model_cv_under_pct(m) - q95) < 1e-9 * q95);
    coord_model_destroy(&m);
    free(u);
    free(pts);
}

// A model saved as params JSON and loaded back predicts the same.
static void t_roundtrip(coord_model_kind_t kind, const coord_point_t *pts, size_t n)
{
    coord_model_opts_t o = {.kind = kind, .target = COORD_TARGET_TIME, .skip_cv = true};
    coord_model_t *m = tfit_fit(&o, pts, n);
    json_t *p = coord_model_params_json(m);
    assert_non_null(p);
    char *text = json_dumps(p, JSON_COMPACT | JSON_REAL_PRECISION(17));
    jf_err_t err = {0};
    coord_model_t *back = coord_model_load(kind, COORD_TARGET_TIME, text, &err);
    if (!back) {
        fail_msg("load: %s", err.msg);
    }
    for (size_t i = 0; i < n; i += 37) {
        double y1 = 0.0;
        double y2 = 0.0;
        assert_int_equal(coord_model_predict(m, &pts[i].op, &y1, &err), 0);
        assert_int_equal(coord_model_predict(back, &pts[i].op, &y2, &err), 0);
        assert_true(fabs(y1 - y2) <= 1e-9 * fabs(y1));
    }
    free(text);
    json_decref(p);
    coord_model_destroy(&m);
    coord_model_destroy(&back);
}

static void test_json_roundtrip_and_bad_params(void **state)
{
    (void) state;
    coord_op_t ops[T_GRID_N];
    size_t n = tfit_grid(ops);
    t_surface_t s = {.a = 2.0, .b = 3.0, .c = 4.0};
    coord_point_t *pts = malloc(n * sizeof *pts);
    t_points(&s, ops, n, 41, T_NOISE, pts);
    t_roundtrip(COORD_MODEL_LINEAR, pts, n);
    t_roundtrip(COORD_MODEL_MLP, pts, 100);
    jf_err_t err = {0};
    assert_null(coord_model_load(COORD_MODEL_LINEAR, COORD_TARGET_TIME,
                                 "{\"log\":false,\"coef\":[1,2]}", &err));
    assert_non_null(strstr(err.msg, "'coef' must be an array of 8 numbers"));
    assert_null(coord_model_load(COORD_MODEL_MLP, COORD_TARGET_TIME, "{\"hidden\":4}", &err));
    assert_non_null(strstr(err.msg, "mlp params"));
    assert_null(coord_model_load(COORD_MODEL_LINEAR, COORD_TARGET_TIME, "{", &err));
    assert_non_null(strstr(err.msg, "model params: 1:"));
    free(pts);
}

static void test_too_few_points(void **state)
{
    (void) state;
    coord_op_t ops[T_GRID_N];
    tfit_grid(ops);
    t_surface_t s = {.a = 2.0, .b = 3.0, .c = 4.0};
    coord_point_t pts[9];
    t_points(&s, ops, 9, 51, T_NOISE, pts);
    coord_model_opts_t o = {.kind = COORD_MODEL_LINEAR, .target = COORD_TARGET_TIME};
    jf_err_t err = {0};
    assert_null(coord_model_fit(&o, pts, 9, &err));
    assert_int_equal(err.code, -EINVAL);
    assert_string_equal(err.msg, "too few points to fit: 9 modes, need at least 10");
    pts[3].y = -1.0;
    o.kind = COORD_MODEL_MLP;
    assert_null(coord_model_fit(&o, pts, 9, &err));
    assert_non_null(strstr(err.msg, "point 3: needs"));
    // Leave-one-out below 2k points: one fold per point.
    size_t fold[9];
    assert_int_equal(coord_model_folds(9, fold), 9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lstsq_recovers_plane),
        cmocka_unit_test(test_cv_matches_own_refits),
        cmocka_unit_test(test_roofline_surface),
        cmocka_unit_test(test_transfer_beats_scratch),
        cmocka_unit_test(test_head_transfer_recovers_correction),
        cmocka_unit_test(test_head_sum_form),
        cmocka_unit_test(test_cv_underestimates),
        cmocka_unit_test(test_json_roundtrip_and_bad_params),
        cmocka_unit_test(test_too_few_points),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
