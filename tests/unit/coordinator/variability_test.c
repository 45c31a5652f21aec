/* coord_variability: coord_obs_t arrays of two board types (five Xavier NX with a planted slow
 * board, three Nanos one of which lost energy on an epoch) and a configuration run on one board
 * only; every statistic is checked against the test's own computation from the raw epochs
 * (sums per board, two-pass sd, median by sorting, the modified z from its definition). */
#include "coord_variability.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S_OBS_MAX 128
#define S_TOL     1e-9
#define S_SLOW    1.40 // the planted outlier board is 40% slower

typedef struct s_fixture {
    coord_obs_t obs[S_OBS_MAX];
    size_t n;
} s_fixture_t;

static void s_add(s_fixture_t *f, const char *type, const char *board, int batch, int repeat,
                  int epoch, double e2e_s)
{
    assert_true(f->n < S_OBS_MAX);
    coord_obs_t *o = &f->obs[f->n++];
    memset(o, 0, sizeof *o);
    (void) snprintf(o->run, sizeof o->run, "r-%s-%d-%d", board, batch, repeat);
    (void) snprintf(o->board, sizeof o->board, "%s", board);
    (void) snprintf(o->board_type, sizeof o->board_type, "%s", type);
    (void) snprintf(o->platform, sizeof o->platform, "sim");
    (void) snprintf(o->workload, sizeof o->workload, "lenet5-mnist");
    (void) snprintf(o->storage, sizeof o->storage, "nvme");
    (void) snprintf(o->power_mode, sizeof o->power_mode, "MAXN");
    o->workers = 2;
    o->batch_size = batch;
    o->repeat = repeat;
    o->epoch = epoch;
    o->e2e_us = (int64_t) (e2e_s * 1e6);
    o->fetch_stall_us = o->e2e_us / 7 + 1000 * repeat;
    o->compute_us = o->e2e_us / 2 - 3000 * epoch;
    o->has_energy = true;
    o->energy_mj = e2e_s * 9500.0 + 17.0 * repeat;
    o->avg_power_mw = 9500.0;
}

// Deterministic run-to-run noise of a few percent, different per board, repeat and epoch.
static double s_noise(int b, int r, int e)
{
    return 1.0 + 0.01 * (double) ((b * 7 + r * 3 + e * 5) % 5) - 0.02;
}

static void s_build(s_fixture_t *f)
{
    f->n = 0;
    for (int b = 1; b <= 5; b++) {
        char name[16];
        (void) snprintf(name, sizeof name, "nx-%d", b);
        double base = (30.0 + b) * (b == 4 ? S_SLOW : 1.0);
        for (int r = 0; r < 3; r++) {
            for (int e = 1; e <= 2; e++) {
                s_add(f, "xavier-nx", name, 64, r, e, base * s_noise(b, r, e));
            }
        }
    }
    for (int b = 1; b <= 3; b++) {
        char name[16];
        (void) snprintf(name, sizeof name, "nano-%d", b);
        for (int r = 0; r < 2; r++) {
            for (int e = 1; e <= 2; e++) {
                s_add(f, "nano", name, 64, r, e, (90.0 + 2.0 * b) * s_noise(b, r, e));
            }
        }
    }
    f->obs[f->n - 1].has_energy = false;           // nano-3's last epoch: energy not readable
    s_add(f, "xavier-nx", "nx-1", 32, 0, 1, 40.0); // a configuration measured on one board
    s_add(f, "xavier-nx", "nx-1", 32, 0, 2, 41.0);
}

static double s_value(const coord_obs_t *o, coord_metric_t m)
{
    double v[] = {(double) o->e2e_us, (double) o->fetch_stall_us, (double) o->compute_us,
                  o->energy_mj};
    return v[m];
}

static int s_cmp(const void *a, const void *b)
{
    double x = *(const double *) a;
    double y = *(const double *) b;
    return (x > y) - (x < y);
}

static double s_median(double *x, size_t n)
{
    if (n < 1) {
        fail_msg("median of no values");
        return 0.0;
    }
    qsort(x, n, sizeof *x, s_cmp);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2.0;
}

static void s_mean_sd(const double *x, size_t n, double *mean, double *sd)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        sum += x[i];
    }
    *mean = sum / (double) n;
    double ss = 0.0;
    for (size_t i = 0; i < n; i++) {
        ss += (x[i] - *mean) * (x[i] - *mean);
    }
    *sd = sqrt(ss / (double) (n - 1));
}

// The board's pooled mean, whether it has the metric on every epoch, and its repeats' CV.
typedef struct s_board_ref {
    bool has;
    double mean;
    bool has_cv;
    double cv_pct;
} s_board_ref_t;

static s_board_ref_t s_board_ref(const s_fixture_t *f, const char *board, int batch,
                                 coord_metric_t m)
{
    s_board_ref_t ref = {.has = true};
    double sum = 0.0;
    double rep_means[8];
    size_t n = 0;
    size_t n_reps = 0;
    for (int r = 0; r < 8; r++) {
        double rs = 0.0;
        size_t rn = 0;
        for (size_t i = 0; i < f->n; i++) {
            const coord_obs_t *o = &f->obs[i];
            if (strcmp(o->board, board) != 0 || o->batch_size != batch || o->repeat != r) {
                continue;
            }
            ref.has = ref.has && (m != COORD_METRIC_ENERGY || o->has_energy);
            rs += s_value(o, m);
            rn++;
        }
        if (rn > 0) {
            rep_means[n_reps++] = rs / (double) rn;
            sum += rs;
            n += rn;
        }
    }
    ref.mean = sum / (double) n;
    if (ref.has && n_reps >= 2) {
        double mean = 0.0;
        double sd = 0.0;
        s_mean_sd(rep_means, n_reps, &mean, &sd);
        ref.has_cv = true;
        ref.cv_pct = 100.0 * sd / mean;
    }
    return ref;
}

static void s_close(double got, double want)
{
    if (fabs(got - want) > S_TOL * fmax(1.0, fabs(want))) {
        fail_msg("got %.17g, want %.17g", got, want);
    }
}

// Checks group g, whose boards are names[0..n-1] at batch size batch, for metric m; returns
// how many boards it flags.
static size_t s_check_group(const coord_variability_t *var, size_t g, const s_fixture_t *f,
                            const char *const *names, size_t n, int batch, coord_metric_t m)
{
    const coord_var_group_t *grp = coord_variability_group(var, g);
    assert_non_null(grp);
    assert_int_equal(grp->n_boards, n);
    double means[16];
    double cvs[16];
    size_t n_means = 0;
    size_t n_cvs = 0;
    for (size_t b = 0; b < n; b++) {
        const coord_var_board_t *vb = coord_variability_board(var, g, b);
        s_board_ref_t ref = s_board_ref(f, names[b], batch, m);
        assert_string_equal(vb->board, names[b]);
        assert_int_equal(vb->has[m], ref.has);
        if (ref.has) {
            s_close(vb->mean[m], ref.mean);
            means[n_means++] = ref.mean;
        }
        assert_int_equal(vb->has_repeat_cv[m], ref.has_cv);
        if (ref.has_cv) {
            s_close(vb->repeat_cv_pct[m], ref.cv_pct);
            cvs[n_cvs++] = ref.cv_pct;
        }
    }
    const coord_var_metric_t *vm = &grp->metric[m];
    assert_int_equal(vm->has, n_means >= 2);
    if (!vm->has) {
        return 0;
    }
    double mean = 0.0;
    double sd = 0.0;
    double sorted[16];
    memcpy(sorted, means, n_means * sizeof *means);
    s_mean_sd(means, n_means, &mean, &sd);
    double median = s_median(sorted, n_means);
    assert_int_equal(vm->between.n, n_means);
    s_close(vm->between.mean, mean);
    s_close(vm->between.sd, sd);
    s_close(vm->between.cv_pct, 100.0 * sd / mean);
    s_close(vm->between.min, sorted[0]);
    s_close(vm->between.max, sorted[n_means - 1]);
    s_close(vm->between.median, median);
    s_close(vm->spread_ratio, sorted[n_means - 1] / sorted[0]);
    s_close(vm->spread_pct, 100.0 * (sorted[n_means - 1] / sorted[0] - 1.0));
    assert_int_equal(vm->repeat_cv_boards, n_cvs);
    s_close(vm->repeat_cv_median_pct, n_cvs ? s_median(cvs, n_cvs) : 0.0);
    double dev[16];
    for (size_t i = 0; i < n_means; i++) {
        dev[i] = fabs(means[i] - median);
    }
    double mad = s_median(dev, n_means);
    size_t flagged = 0;
    for (size_t b = 0, i = 0; b < n; b++) {
        const coord_var_board_t *vb = coord_variability_board(var, g, b);
        if (!vb->has[m]) {
            assert_false(vb->outlier[m]);
            continue;
        }
        double z = fabs(means[i++] - median) / (1.4826 * mad);
        assert_true(vb->has_z[m] == (n_means >= 3 && mad > 0.0));
        if (vb->has_z[m]) {
            s_close(vb->z[m], z);
        }
        assert_int_equal(vb->outlier[m], vb->has_z[m] && z > 3.5);
        flagged += vb->outlier[m];
    }
    assert_int_equal(vm->outliers, flagged);
    return flagged;
}

static coord_variability_t *s_run(const s_fixture_t *f)
{
    jf_err_t err = {0};
    coord_variability_t *var = coord_variability_new(&err);
    assert_non_null(var);
    for (size_t i = 0; i < f->n; i++) {
        assert_int_equal(coord_variability_add(var, &f->obs[i], &err), 0);
    }
    assert_int_equal(coord_variability_compute(var, &err), 0);
    return var;
}

static void test_every_statistic(void **state)
{
    (void) state;
    static s_fixture_t f;
    s_build(&f);
    coord_variability_t *var = s_run(&f);
    static const char *const nx[] = {"nx-1", "nx-2", "nx-3", "nx-4", "nx-5"};
    static const char *const nano[] = {"nano-1", "nano-2", "nano-3"};
    static const char *const one[] = {"nx-1"};
    assert_int_equal(coord_variability_groups(var), 3);
    for (int m = 0; m < COORD_METRIC_COUNT; m++) {
        s_check_group(var, 0, &f, nx, 5, 64, (coord_metric_t) m);
        s_check_group(var, 1, &f, nano, 3, 64, (coord_metric_t) m);
        s_check_group(var, 2, &f, one, 1, 32, (coord_metric_t) m);
    }
    // The planted slow board is the one flagged, on epoch time; the group keys are kept.
    const coord_var_board_t *slow = coord_variability_board(var, 0, 3);
    assert_true(slow->outlier[COORD_METRIC_E2E]);
    assert_int_equal(coord_variability_group(var, 0)->metric[COORD_METRIC_E2E].outliers, 1);
    assert_string_equal(coord_variability_group(var, 1)->board_type, "nano");
    assert_int_equal(coord_variability_group(var, 2)->batch_size, 32);
    assert_true(coord_variability_group(var, 2)->any_sim);
    // nano-3 lost energy on one epoch: energy across two Nanos only, no z from two values.
    assert_false(coord_variability_board(var, 1, 2)->has[COORD_METRIC_ENERGY]);
    assert_int_equal(coord_variability_group(var, 1)->metric[COORD_METRIC_ENERGY].between.n, 2);
    // One board: listed, with nothing to compare.
    assert_false(coord_variability_group(var, 2)->metric[COORD_METRIC_E2E].has);
    assert_int_equal(coord_variability_board(var, 2, 0)->epochs, 2);
    assert_null(coord_variability_board(var, 2, 1));
    assert_null(coord_variability_group(var, 3));
    coord_variability_destroy(&var);
    assert_null(var);
    coord_variability_destroy(&var);
}

static void test_metric_names_and_bad_epoch(void **state)
{
    (void) state;
    coord_metric_t m = COORD_METRIC_COUNT;
    const char *names[] = {"e2e", "stall", "compute", "energy"};
    for (int i = 0; i < COORD_METRIC_COUNT; i++) {
        assert_true(coord_metric_parse(names[i], &m));
        assert_int_equal(m, i);
        assert_string_equal(coord_metric_name(m), names[i]);
    }
    assert_false(coord_metric_parse("power", &m));
    static s_fixture_t f;
    s_build(&f);
    f.obs[0].e2e_us = -5;
    jf_err_t err = {0};
    coord_variability_t *var = coord_variability_new(&err);
    assert_int_equal(coord_variability_add(var, &f.obs[0], &err), -EINVAL);
    assert_non_null(strstr(err.msg, "r-nx-1-64-0"));
    assert_non_null(strstr(err.msg, "epoch 1"));
    assert_int_equal(coord_variability_groups(var), 0);
    coord_variability_destroy(&var);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_statistic),
        cmocka_unit_test(test_metric_names_and_bad_epoch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
