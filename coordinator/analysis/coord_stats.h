/* Descriptive statistics of a small sample for the analysis (variability, validity): mean and
 * sample standard deviation (Welford's one-pass update), coefficient of variation, min, max,
 * median, median absolute deviation, and the robust outlier rule built on them. Not a general
 * statistics library: samples are the handful of boards or repeats of one configuration.
 * docs/analysis.md ("Variability") states the rule and its source. */
#ifndef COORD_STATS_H
#define COORD_STATS_H

#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>

// The modified z-score of Iglewicz & Hoaglin ("How to Detect and Handle Outliers", ASQC Basic
// References in Quality Control vol. 16, 1993): z = |x - median| / (COORD_STATS_MAD_SCALE * MAD),
// where 1.4826 (= 1 / 0.6745) makes the MAD estimate the standard deviation of normal data.
// They recommend labelling |z| > 3.5 as a potential outlier.
#define COORD_STATS_MAD_SCALE 1.4826
#define COORD_STATS_OUTLIER_Z 3.5

// A sample's statistics (plain value record). sd and cv are 0 for n = 1 (has_sd false).
typedef struct coord_stats {
    size_t n;      // values
    double mean;   // arithmetic mean, in the values' unit
    bool has_sd;   // n >= 2: sd and cv are defined
    double sd;     // sample standard deviation (n - 1 in the denominator)
    bool has_cv;   // has_sd and mean != 0
    double cv_pct; // 100 * sd / |mean|
    double min;    // smallest value
    double max;    // largest value
    double median; // middle value (mean of the two middle ones for even n)
    double mad;    // median of |x - median|
} coord_stats_t;

// Computes the statistics of x[0..n-1] (x is not changed). Returns 0, -EINVAL for n = 0 or a
// value that is not finite (err names its index), -ENOMEM.
int coord_stats_compute(const double *x, size_t n, coord_stats_t *ret_stats, jf_err_t *err);

// The median of x[0..n-1], reordering x (sorted on return). n >= 1.
double coord_stats_median_sort(double *x, size_t n);

// The modified z-score of value against s into *ret_z. false (and *ret_z untouched) when it is
// undefined: fewer than 3 values (a median of two says nothing about either) or MAD = 0 (more
// than half the values equal: no spread to measure against, so nothing is flagged).
bool coord_stats_modified_z(const coord_stats_t *s, double value, double *ret_z);

// True when value's modified z-score is defined and above COORD_STATS_OUTLIER_Z; its score goes
// to *ret_z (may be NULL) when defined.
bool coord_stats_is_outlier(const coord_stats_t *s, double value, double *ret_z);

#endif
