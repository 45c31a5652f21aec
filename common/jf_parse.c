/* Checked number, duration and identifier parsing (STYLE.md §10: no atoi/atof). */
#include "jf_parse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int jf_parse_i64(const char *text, int64_t min, int64_t max, int64_t *ret_value, jf_err_t *err)
{
    if (!text || !*text) {
        return jf_err_set(err, -EINVAL, "expected an integer, got an empty value");
    }
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno == ERANGE || *end != '\0' || end == text) {
        return jf_err_set(err, -EINVAL, "expected an integer, got '%.64s'", text);
    }
    if (v < min || v > max) {
        return jf_err_set(err, -EINVAL, "%lld is out of range [%lld, %lld]", v, (long long) min,
                          (long long) max);
    }
    *ret_value = v;
    return 0;
}

int jf_parse_double(const char *text, double min, double max, double *ret_value, jf_err_t *err)
{
    if (!text || !*text) {
        return jf_err_set(err, -EINVAL, "expected a number, got an empty value");
    }
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno == ERANGE || *end != '\0' || end == text || !isfinite(v)) {
        return jf_err_set(err, -EINVAL, "expected a number, got '%.64s'", text);
    }
    if (v < min || v > max) {
        return jf_err_set(err, -EINVAL, "%g is out of range [%g, %g]", v, min, max);
    }
    *ret_value = v;
    return 0;
}

static const struct {
    const char *suffix;
    int64_t us;
} s_duration_units[] = {
    {"us", 1}, {"ms", 1000}, {"s", 1000000}, {"m", 60000000}, {"h", 3600000000LL},
};

int jf_parse_duration_us(const char *text, int64_t min_us, int64_t max_us, int64_t *ret_us,
                         jf_err_t *err)
{
    if (!text || !*text) {
        return jf_err_set(err, -EINVAL, "expected a duration such as '2s', got an empty value");
    }
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno == ERANGE || end == text || !isfinite(v) || v < 0) {
        return jf_err_set(err, -EINVAL, "expected a duration such as '2s' or '500ms', got '%.64s'",
                          text);
    }
    for (size_t i = 0; i < sizeof s_duration_units / sizeof s_duration_units[0]; i++) {
        if (strcmp(end, s_duration_units[i].suffix) == 0) {
            double us = v * (double) s_duration_units[i].us;
            // (double) INT64_MAX rounds up to 2^63, which does not fit: compare with 2^63
            // itself before converting, then check the range on the exact integer.
            if (us >= 0x1p63 || llround(us) < min_us || llround(us) > max_us) {
                return jf_err_set(err, -EINVAL, "duration '%.64s' is out of range [%lldus, %lldus]",
                                  text, (long long) min_us, (long long) max_us);
            }
            *ret_us = (int64_t) llround(us);
            return 0;
        }
    }
    return jf_err_set(err, -EINVAL,
                      "expected a duration with a unit (us, ms, s, m, h), got '%.64s'", text);
}

static const struct {
    const char *suffix;
    double hz;
} s_freq_units[] = {{"hz", 1.0}, {"khz", 1e3}, {"mhz", 1e6}, {"ghz", 1e9}};

// The scale of a frequency unit (case-insensitive), or 0 when unknown.
static double s_freq_scale(const char *unit)
{
    for (size_t i = 0; i < sizeof s_freq_units / sizeof s_freq_units[0]; i++) {
        if (strcasecmp(unit, s_freq_units[i].suffix) == 0) {
            return s_freq_units[i].hz;
        }
    }
    return 0.0;
}

int jf_parse_freq_hz(const char *text, int64_t min_hz, int64_t max_hz, int64_t *ret_hz,
                     jf_err_t *err)
{
    if (text && *text && strspn(text, "0123456789") == strlen(text)) {
        return jf_parse_i64(text, min_hz, max_hz, ret_hz, err);
    }
    char *end = NULL;
    errno = 0;
    double v = text && *text ? strtod(text, &end) : -1.0;
    double scale = end && end != text ? s_freq_scale(end) : 0.0;
    if (errno == ERANGE || scale == 0.0 || !isfinite(v) || v < 0) {
        return jf_err_set(err, -EINVAL,
                          "expected a frequency such as '1190400000', '1190.4MHz' or '1.9GHz', "
                          "got '%.64s'",
                          text ? text : "");
    }
    double hz = v * scale;
    if (hz >= 0x1p62 || llround(hz) < min_hz || llround(hz) > max_hz) {
        return jf_err_set(err, -EINVAL, "frequency '%.64s' is out of range [%lld, %lld] Hz", text,
                          (long long) min_hz, (long long) max_hz);
    }
    // Decimal fractions of MHz are not exact in binary: allow a rounding error far below 1 Hz.
    if (fabs(hz - (double) llround(hz)) > 1e-3) {
        return jf_err_set(err, -EINVAL, "frequency '%.64s' is not a whole number of Hz", text);
    }
    *ret_hz = (int64_t) llround(hz);
    return 0;
}

int jf_parse_bool(const char *text, bool *ret_value, jf_err_t *err)
{
    static const char *const yes[] = {"true", "yes", "on"};
    static const char *const no[] = {"false", "no", "off"};
    for (size_t i = 0; text && i < 3; i++) {
        if (strcmp(text, yes[i]) == 0) {
            *ret_value = true;
            return 0;
        }
        if (strcmp(text, no[i]) == 0) {
            *ret_value = false;
            return 0;
        }
    }
    return jf_err_set(err, -EINVAL, "expected true or false, got '%.64s'", text ? text : "");
}

bool jf_parse_is_ident(const char *text)
{
    if (!text) {
        return false;
    }
    size_t n = strlen(text);
    if (n == 0 || n > JF_IDENT_MAX || strstr(text, "..")) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char c = text[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-'))) {
            return false;
        }
    }
    return true;
}
