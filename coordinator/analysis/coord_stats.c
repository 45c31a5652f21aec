/* Descriptive statistics and the modified z-score outlier rule (coord_stats.h). */
#include "coord_stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int s_cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a;
    double y = *(const double *) b;
    return (x > y) - (x < y);
}

double coord_stats_median_sort(double *x, size_t n)
{
    qsort(x, n, sizeof *x, s_cmp_double);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2.0;
}

// Welford's update: numerically stable in one pass, unlike sum of squares minus square of sum,
// which loses every digit when the values are large and close (epoch times in µs are).
static void s_moments(const double *x, size_t n, coord_stats_t *s)
{
    double mean = 0.0;
    double m2 = 0.0;
    s->min = x[0];
    s->max = x[0];
    for (size_t i = 0; i < n; i++) {
        double delta = x[i] - mean;
        mean += delta / (double) (i + 1);
        m2 += delta * (x[i] - mean);
        s->min = fmin(s->min, x[i]);
        s->max = fmax(s->max, x[i]);
    }
    s->n = n;
    s->mean = mean;
    s->has_sd = n >= 2;
    s->sd = s->has_sd ? sqrt(m2 / (double) (n - 1)) : 0.0;
    s->has_cv = s->has_sd && mean != 0.0;
    s->cv_pct = s->has_cv ? 100.0 * s->sd / fabs(mean) : 0.0;
}

int coord_stats_compute(const double *x, size_t n, coord_stats_t *ret_stats, jf_err_t *err)
{
    if (n == 0) {
        return jf_err_set(err, -EINVAL, "statistics of an empty sample");
    }
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) {
            return jf_err_set(err, -EINVAL, "statistics: value %zu of %zu is not finite", i, n);
        }
    }
    double *work = malloc(n * sizeof *work);
    if (!work) {
        return jf_err_set(err, -ENOMEM, "statistics: out of memory for %zu values", n);
    }
    coord_stats_t s = {0};
    s_moments(x, n, &s);
    memcpy(work, x, n * sizeof *work);
    s.median = coord_stats_median_sort(work, n);
    for (size_t i = 0; i < n; i++) {
        work[i] = fabs(work[i] - s.median);
    }
    s.mad = coord_stats_median_sort(work, n);
    free(work);
    *ret_stats = s;
    return 0;
}

bool coord_stats_modified_z(const coord_stats_t *s, double value, double *ret_z)
{
    if (s->n < 3 || !(s->mad > 0.0)) {
        return false;
    }
    *ret_z = fabs(value - s->median) / (COORD_STATS_MAD_SCALE * s->mad);
    return true;
}

bool coord_stats_is_outlier(const coord_stats_t *s, double value, double *ret_z)
{
    double z = 0.0;
    if (!coord_stats_modified_z(s, value, &z)) {
        return false;
    }
    if (ret_z) {
        *ret_z = z;
    }
    return z > COORD_STATS_OUTLIER_Z;
}
