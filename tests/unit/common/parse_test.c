/* Unit tests for jf_parse: checked integers, numbers, durations, booleans and identifiers, each
 * from a table of {input, range, expected code or value, expected message fragment}. */
#include "jf_parse.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

// Fails with the row's text when a failure row's code or message is wrong, and checks that the
// output parameter was not written.
static void t_expect_err(const char *input, int rc, const jf_err_t *err, const char *frag,
                         bool written)
{
    if (rc != -EINVAL || err->code != -EINVAL || !strstr(err->msg, frag) || written) {
        fail_msg("'%s': rc %d code %d msg '%s' written %d; expected -EINVAL with '%s'",
                 input ? input : "(null)", rc, err->code, err->msg, written, frag);
    }
}

typedef struct t_i64 {
    const char *text;
    int64_t min, max;
    int64_t value;    // expected when frag is NULL
    const char *frag; // expected message fragment on failure
} t_i64_t;

static const t_i64_t s_i64[] = {
    {"0", 0, 10, 0, NULL},
    {"10", 0, 10, 10, NULL},
    {"-5", -10, 10, -5, NULL},
    {"007", 0, 10, 7, NULL},
    {"9223372036854775807", INT64_MIN, INT64_MAX, INT64_MAX, NULL},
    {"-9223372036854775808", INT64_MIN, INT64_MAX, INT64_MIN, NULL},
    {"9223372036854775808", INT64_MIN, INT64_MAX, 0, "got '9223372036854775808'"},
    {"-9223372036854775809", INT64_MIN, INT64_MAX, 0, "got '-9223372036854775809'"},
    {"11", 0, 10, 0, "11 is out of range [0, 10]"},
    {"-1", 0, 10, 0, "-1 is out of range [0, 10]"},
    {"", 0, 10, 0, "expected an integer, got an empty value"},
    {NULL, 0, 10, 0, "expected an integer, got an empty value"},
    {"12abc", 0, 100, 0, "expected an integer, got '12abc'"},
    {"abc", 0, 100, 0, "got 'abc'"},
    {"1.5", 0, 100, 0, "got '1.5'"},
    {"1e3", 0, 10000, 0, "got '1e3'"},
    {"0x10", 0, 100, 0, "got '0x10'"},
    {"5 ", 0, 100, 0, "got '5 '"},
    {"-", 0, 100, 0, "got '-'"},
};

static void test_i64_table(void **state)
{
    (void) state;
    for (size_t i = 0; i < sizeof s_i64 / sizeof s_i64[0]; i++) {
        const t_i64_t *r = &s_i64[i];
        int64_t v = 4242;
        jf_err_t err = {0};
        int rc = jf_parse_i64(r->text, r->min, r->max, &v, &err);
        if (!r->frag) {
            if (rc != 0 || v != r->value) {
                fail_msg("'%s': rc %d value %lld msg '%s'", r->text, rc, (long long) v, err.msg);
            }
            continue;
        }
        t_expect_err(r->text, rc, &err, r->frag, v != 4242);
    }
}

// A long junk value is quoted, but cut, in the message.
static void test_i64_long_input_is_cut(void **state)
{
    (void) state;
    char text[300];
    memset(text, 'z', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    jf_err_t err = {0};
    int64_t v = 0;
    assert_int_equal(jf_parse_i64(text, 0, 1, &v, &err), -EINVAL);
    assert_true(strlen(err.msg) < 100);
    assert_non_null(strstr(err.msg, "got 'zzzz"));
    assert_int_equal(jf_parse_i64(text, 0, 1, &v, NULL), -EINVAL); // err may be NULL
}

typedef struct t_double {
    const char *text;
    double min, max;
    double value;
    const char *frag;
} t_double_t;

static const t_double_t s_double[] = {
    {"1.5", 0, 2, 1.5, NULL},
    {"-0.25", -1, 1, -0.25, NULL},
    {"1e3", 0, 1e4, 1000.0, NULL},
    {"2", 0, 2, 2.0, NULL},
    {"2.5", 0, 2, 0, "2.5 is out of range [0, 2]"},
    {"-0.5", 0, 2, 0, "-0.5 is out of range [0, 2]"},
    {"nan", -1e300, 1e300, 0, "expected a number, got 'nan'"},
    {"inf", -1e300, 1e300, 0, "expected a number, got 'inf'"},
    {"-infinity", -1e300, 1e300, 0, "got '-infinity'"},
    {"1e400", -1e300, 1e300, 0, "got '1e400'"},
    {"1.0x", 0, 2, 0, "got '1.0x'"},
    {"1,5", 0, 2, 0, "got '1,5'"},
    {"", 0, 2, 0, "expected a number, got an empty value"},
    {NULL, 0, 2, 0, "expected a number, got an empty value"},
};

static void test_double_table(void **state)
{
    (void) state;
    for (size_t i = 0; i < sizeof s_double / sizeof s_double[0]; i++) {
        const t_double_t *r = &s_double[i];
        double v = 42.0;
        jf_err_t err = {0};
        int rc = jf_parse_double(r->text, r->min, r->max, &v, &err);
        if (!r->frag) {
            if (rc != 0 || v != r->value) {
                fail_msg("'%s': rc %d value %g msg '%s'", r->text, rc, v, err.msg);
            }
            continue;
        }
        t_expect_err(r->text, rc, &err, r->frag, v != 42.0);
    }
}

#define T_H_US (INT64_C(3600) * 1000000)

static const t_i64_t s_duration[] = {
    {"2s", 0, INT64_MAX, 2000000, NULL},
    {"500ms", 0, INT64_MAX, 500000, NULL},
    {"10us", 0, INT64_MAX, 10, NULL},
    {"0.5ms", 0, INT64_MAX, 500, NULL},
    {"1.5m", 0, INT64_MAX, 90000000, NULL},
    {"2h", 0, INT64_MAX, 2 * T_H_US, NULL},
    {"0s", 0, INT64_MAX, 0, NULL},
    {"1h", 0, T_H_US, T_H_US, NULL},
    {"168h", 1000000, 168 * T_H_US, 168 * T_H_US, NULL},
    {"2h", 0, T_H_US, 0, "duration '2h' is out of range [0us, 3600000000us]"},
    {"999ms", 1000000, T_H_US, 0, "duration '999ms' is out of range"},
    {"1e30h", 0, INT64_MAX, 0, "is out of range"},
    {"5", 0, INT64_MAX, 0, "expected a duration with a unit (us, ms, s, m, h), got '5'"},
    {"5 s", 0, INT64_MAX, 0, "with a unit (us, ms, s, m, h), got '5 s'"},
    {"5sec", 0, INT64_MAX, 0, "got '5sec'"},
    {"5S", 0, INT64_MAX, 0, "got '5S'"},
    {"5d", 0, INT64_MAX, 0, "got '5d'"},
    {"-1s", 0, INT64_MAX, 0, "expected a duration such as '2s' or '500ms', got '-1s'"},
    {"s", 0, INT64_MAX, 0, "got 's'"},
    {"nans", 0, INT64_MAX, 0, "got 'nans'"},
    {"infh", 0, INT64_MAX, 0, "got 'infh'"},
    {"", 0, INT64_MAX, 0, "expected a duration such as '2s', got an empty value"},
    {NULL, 0, INT64_MAX, 0, "got an empty value"},
};

static void test_duration_table(void **state)
{
    (void) state;
    for (size_t i = 0; i < sizeof s_duration / sizeof s_duration[0]; i++) {
        const t_i64_t *r = &s_duration[i];
        int64_t v = 4242;
        jf_err_t err = {0};
        int rc = jf_parse_duration_us(r->text, r->min, r->max, &v, &err);
        if (!r->frag) {
            if (rc != 0 || v != r->value) {
                fail_msg("'%s': rc %d value %lld msg '%s'", r->text, rc, (long long) v, err.msg);
            }
            continue;
        }
        t_expect_err(r->text, rc, &err, r->frag, v != 4242);
    }
}

#define T_GHZ INT64_C(1000000000)

static const t_i64_t s_freq[] = {
    {"1190400000", 0, 10 * T_GHZ, 1190400000, NULL},
    {"1190.4MHz", 0, 10 * T_GHZ, 1190400000, NULL},
    {"1190400kHz", 0, 10 * T_GHZ, 1190400000, NULL},
    {"1.1904GHz", 0, 10 * T_GHZ, 1190400000, NULL},
    {"1.9ghz", 0, 10 * T_GHZ, 1900000000, NULL},
    {"114.75MHz", 0, 10 * T_GHZ, 114750000, NULL},
    {"665.6MHz", 0, 10 * T_GHZ, 665600000, NULL},
    {"50Hz", 0, 10 * T_GHZ, 50, NULL},
    {"0.5Hz", 0, 10 * T_GHZ, 0, "frequency '0.5Hz' is not a whole number of Hz"},
    {"11GHz", 0, 10 * T_GHZ, 0, "frequency '11GHz' is out of range [0, 10000000000] Hz"},
    {"1e30GHz", 0, 10 * T_GHZ, 0, "is out of range"},
    {"1.9", 0, 10 * T_GHZ, 0, "expected a frequency such as '1190400000', '1190.4MHz' or "
                              "'1.9GHz', got '1.9'"},
    {"1.9 GHz", 0, 10 * T_GHZ, 0, "got '1.9 GHz'"},
    {"1.9THz", 0, 10 * T_GHZ, 0, "got '1.9THz'"},
    {"-1MHz", 0, 10 * T_GHZ, 0, "got '-1MHz'"},
    {"MHz", 0, 10 * T_GHZ, 0, "got 'MHz'"},
    {"nanMHz", 0, 10 * T_GHZ, 0, "got 'nanMHz'"},
    {"", 0, 10 * T_GHZ, 0, "expected a frequency"},
    {NULL, 0, 10 * T_GHZ, 0, "expected a frequency"},
    {"20000000000", 0, 10 * T_GHZ, 0, "out of range [0, 10000000000]"},
};

static void test_freq_table(void **state)
{
    (void) state;
    for (size_t i = 0; i < sizeof s_freq / sizeof s_freq[0]; i++) {
        const t_i64_t *r = &s_freq[i];
        int64_t v = 4242;
        jf_err_t err = {0};
        int rc = jf_parse_freq_hz(r->text, r->min, r->max, &v, &err);
        if (!r->frag) {
            if (rc != 0 || v != r->value) {
                fail_msg("'%s': rc %d value %lld msg '%s'", r->text, rc, (long long) v, err.msg);
            }
            continue;
        }
        t_expect_err(r->text, rc, &err, r->frag, v != 4242);
    }
}

// Whatever the input, an accepted duration lies in [min_us, max_us]: near INT64_MAX the double
// arithmetic must not wrap into a negative duration.
static void test_duration_result_in_range(void **state)
{
    (void) state;
    static const char *const texts[] = {
        "9223372036854775807us", "9223372036854775.807ms", "9223372036854.775807s",
        "2562047.788015215h",    "153722867.2809m",        "9223372036854775806us",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        int64_t v = 0;
        jf_err_t err = {0};
        int rc = jf_parse_duration_us(texts[i], 0, INT64_MAX, &v, &err);
        if (rc == 0 && v < 0) {
            fail_msg("'%s' was accepted as %lld us, outside [0, INT64_MAX]", texts[i],
                     (long long) v);
        }
        assert_true(rc == 0 || rc == -EINVAL);
    }
}

static void test_bool_table(void **state)
{
    (void) state;
    static const struct {
        const char *text;
        int rc;
        bool value;
    } rows[] = {
        {"true", 0, true},  {"yes", 0, true},     {"on", 0, true},       {"false", 0, false},
        {"no", 0, false},   {"off", 0, false},    {"TRUE", -EINVAL, 0},  {"1", -EINVAL, 0},
        {"0", -EINVAL, 0},  {"y", -EINVAL, 0},    {"true ", -EINVAL, 0}, {"", -EINVAL, 0},
        {NULL, -EINVAL, 0}, {"offf", -EINVAL, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        // Start from the opposite value so a success must write it.
        bool v = !rows[i].value;
        jf_err_t err = {0};
        int rc = jf_parse_bool(rows[i].text, &v, &err);
        if (rows[i].rc == 0) {
            if (rc != 0 || v != rows[i].value) {
                fail_msg("'%s': rc %d value %d", rows[i].text, rc, v);
            }
            continue;
        }
        char frag[64];
        (void) snprintf(frag, sizeof frag, "expected true or false, got '%s'",
                        rows[i].text ? rows[i].text : "");
        t_expect_err(rows[i].text, rc, &err, frag, v != !rows[i].value);
    }
}

static void test_is_ident_table(void **state)
{
    (void) state;
    static const struct {
        const char *text;
        bool ok;
    } rows[] = {
        {"nx-01", true},
        {"a", true},
        {"0", true},
        {"9lives", true},
        {"a.b_c-d", true},
        {"sweep.v2", true},
        {"r0123456789abcdef", true},
        {"x-", true},
        {"1234567890123456789012345678901234567890123456789012345678901234", true},   // 64
        {"12345678901234567890123456789012345678901234567890123456789012345", false}, // 65
        {"", false},
        {NULL, false},
        {"-a", false},
        {".a", false},
        {"_a", false},
        {"A", false},
        {"nx-O1", false},
        {"nx 01", false},
        {"a/b", false},
        {"a..b", false},
        {"../x", false},
        {"a\\b", false},
        {"a\n", false},
        {"caf\xc3\xa9", false},
        {"a:b", false},
        {"a*", false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (jf_parse_is_ident(rows[i].text) != rows[i].ok) {
            fail_msg("jf_parse_is_ident('%s') should be %s", rows[i].text ? rows[i].text : "(null)",
                     rows[i].ok ? "true" : "false");
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_i64_table),
        cmocka_unit_test(test_i64_long_input_is_cut),
        cmocka_unit_test(test_double_table),
        cmocka_unit_test(test_duration_table),
        cmocka_unit_test(test_freq_table),
        cmocka_unit_test(test_duration_result_in_range),
        cmocka_unit_test(test_bool_table),
        cmocka_unit_test(test_is_ident_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
