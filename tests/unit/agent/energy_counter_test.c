/* Unit tests for agent_energy_counter: synthetic RAPL counter series with known energy, exact to
 * the microjoule: differences, boundaries between samples, wrap-around, a counter that goes
 * backwards beyond a wrap, a zone that disappears, psys alone, the zone choice, a short history,
 * the JSON form and every documented failure. */
#include "agent_energy_counter.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define T_S       INT64_C(1000000) // one second in us
#define T_RANGE   INT64_C(262143328850)
#define T_UJ_TOL  1e-6 // 1 uJ, in mJ: "exact to the microjoule"
#define T_MAX_Z   4

static agent_energy_counter_t *t_new(size_t history)
{
    jf_err_t err = {0};
    agent_energy_counter_opts_t o = {.history_max = history};
    agent_energy_counter_t *c = agent_energy_counter_new(&o, &err);
    if (!c) {
        fail_msg("agent_energy_counter_new: %s", err.msg);
    }
    return c;
}

// One sample: n zones named names[] with counters uj[] and ranges range[].
static int t_add(agent_energy_counter_t *c, int64_t t_us, size_t n, const char *const names[],
                 const int64_t uj[], const int64_t range[], jf_err_t *err)
{
    agent_energy_counter_zone_t z[T_MAX_Z] = {{0}};
    for (size_t i = 0; i < n; i++) {
        z[i] = (agent_energy_counter_zone_t){names[i], uj[i], range ? range[i] : 0};
    }
    agent_energy_counter_sample_t s = {.mono_us = t_us, .n_zones = n, .zones = z};
    return agent_energy_counter_add(c, &s, err);
}

static void t_ok(agent_energy_counter_t *c, int64_t t_us, size_t n, const char *const names[],
                 const int64_t uj[], const int64_t range[])
{
    jf_err_t err = {0};
    if (t_add(c, t_us, n, names, uj, range, &err) != 0) {
        fail_msg("add at %lld: %s", (long long) t_us, err.msg);
    }
}

static double t_between(const agent_energy_counter_t *c, int64_t a, int64_t b)
{
    agent_energy_counter_result_t r;
    jf_err_t err = {0};
    if (agent_energy_counter_between(c, a, b, &r, &err) != 0) {
        fail_msg("between %lld %lld: %s", (long long) a, (long long) b, err.msg);
    }
    return r.energy_mj;
}

static const char *const s_pkg_names[] = {"package-0", "package-0/core", "package-0/dram",
                                          "package-1"};

// package-0 5 W, core 3 W (inside the package: not added), dram 1 W, package-1 2 W: 8 W summed.
static void t_pkg_series(agent_energy_counter_t *c, int n_s)
{
    for (int64_t k = 0; k <= n_s; k++) {
        int64_t uj[] = {1000 + 5000000 * k, 77 + 3000000 * k, 5 + 1000000 * k, 2000000 * k};
        t_ok(c, 10 * T_S + k * T_S, 4, s_pkg_names, uj, NULL);
    }
}

static void test_known_energy(void **state)
{
    (void) state;
    agent_energy_counter_t *c = t_new(64);
    t_pkg_series(c, 4);
    assert_string_equal(agent_energy_counter_covers(c), "RAPL package+dram");
    assert_true(fabs(t_between(c, 11 * T_S, 13 * T_S) - 16000.0) < T_UJ_TOL);
    // Boundaries between samples: 0.25 s to 2.5 s past 10 s, 2.25 s at 8 W = 18000 mJ.
    assert_true(fabs(t_between(c, 10 * T_S + 250000, 12 * T_S + 500000) - 18000.0) < T_UJ_TOL);
    // A boundary that splits one microjoule-step: 1 us at 8 W = 0.008 mJ.
    assert_true(fabs(t_between(c, 11 * T_S, 11 * T_S + 1) - 0.008) < T_UJ_TOL);
    agent_energy_counter_result_t r;
    assert_int_equal(agent_energy_counter_run(c, &r, NULL), 0);
    assert_true(fabs(r.energy_mj - 32000.0) < T_UJ_TOL);
    assert_int_equal(r.covered_us, 4 * T_S);
    assert_true(fabs(r.avg_power_mw - 8000.0) < 1e-9);
    assert_true(r.has_peak && fabs(r.peak_power_mw - 8000.0) < 1e-9);
    assert_int_equal(r.n_zones, 3);
    assert_string_equal(r.names[1], "package-0/dram");
    assert_true(fabs(r.zone_energy_mj[1] - 4000.0) < T_UJ_TOL);
    // A range that starts before the first sample is clipped to it.
    assert_int_equal(agent_energy_counter_between(c, 9 * T_S, 11 * T_S, &r, NULL), 0);
    assert_int_equal(r.covered_us, T_S);
    assert_true(fabs(r.energy_mj - 8000.0) < T_UJ_TOL);
    agent_energy_counter_destroy(&c);
    assert_null(c);
}

static void test_wrap(void **state)
{
    (void) state;
    agent_energy_counter_t *c = t_new(16);
    const char *const n[] = {"package-0"};
    const int64_t range[] = {1000000};
    t_ok(c, 0, 1, n, (int64_t[]){700000}, range);
    t_ok(c, T_S, 1, n, (int64_t[]){900000}, range);
    t_ok(c, 2 * T_S, 1, n, (int64_t[]){150000}, range); // wrapped: 100000 + 150000 = 250000 uJ
    assert_string_equal(agent_energy_counter_covers(c), "RAPL package");
    assert_true(fabs(t_between(c, 0, 2 * T_S) - 450.0) < T_UJ_TOL);
    assert_true(fabs(t_between(c, T_S, T_S + 500000) - 125.0) < T_UJ_TOL);
    assert_string_equal(agent_energy_counter_reason(c), "");
    agent_energy_counter_destroy(&c);
}

// Counters that cannot be believed: energy stops at the last good sample, with a reason.
static void test_broken(void **state)
{
    (void) state;
    static const struct {
        int64_t range, second_uj;
        const char *zone_name; // NULL: the zone disappears
        const char *why;
    } rows[] = {
        {T_RANGE, 900, "package-0", "went backwards beyond a wrap"},
        {0, 900, "package-0", "went backwards and its wrap range is unknown"},
        {5000, 6000, "package-0", "read above its max_energy_range_uj"},
        {0, INT64_C(1) << 50, "package-0", "jumped by more than"},
        {0, 2000, "package-1", "disappeared"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        agent_energy_counter_t *c = t_new(16);
        const char *const n0[] = {"package-0"};
        const char *const n1[] = {rows[i].zone_name};
        t_ok(c, 0, 1, n0, (int64_t[]){0}, &rows[i].range);
        t_ok(c, T_S, 1, n0, (int64_t[]){1000}, &rows[i].range);
        t_ok(c, 2 * T_S, 1, n1, &rows[i].second_uj, &rows[i].range);
        t_ok(c, 3 * T_S, 1, n0, (int64_t[]){3000}, &rows[i].range); // ignored once broken
        agent_energy_counter_result_t r;
        jf_err_t err = {0};
        assert_int_equal(agent_energy_counter_between(c, 0, T_S, &r, NULL), 0);
        assert_true(fabs(r.energy_mj - 1.0) < T_UJ_TOL);
        assert_int_equal(agent_energy_counter_between(c, 0, 2 * T_S, &r, &err), -EIO);
        assert_non_null(strstr(err.msg, rows[i].why));
        assert_non_null(strstr(err.msg, "mono_us 2000000"));
        assert_int_equal(agent_energy_counter_run(c, &r, NULL), -EIO);
        assert_non_null(strstr(agent_energy_counter_reason(c), rows[i].why));
        agent_energy_counter_destroy(&c);
    }
}

// A sample with no counters at all, once zones are chosen, is a disappearance too.
static void test_all_zones_gone(void **state)
{
    (void) state;
    agent_energy_counter_t *c = t_new(16);
    const char *const n[] = {"package-0"};
    t_ok(c, 0, 1, n, (int64_t[]){0}, NULL);
    t_ok(c, T_S, 0, NULL, NULL, NULL);
    agent_energy_counter_result_t r;
    assert_int_equal(agent_energy_counter_run(c, &r, NULL), -EIO);
    assert_non_null(strstr(agent_energy_counter_reason(c), "disappeared"));
    agent_energy_counter_destroy(&c);
}

static void test_psys_alone(void **state)
{
    (void) state;
    agent_energy_counter_t *c = t_new(16);
    const char *const n[] = {"package-0", "psys", "package-0/dram"};
    t_ok(c, 0, 3, n, (int64_t[]){0, 100, 0}, NULL);
    t_ok(c, T_S, 3, n, (int64_t[]){5000000, 12000100, 1000000}, NULL);
    assert_string_equal(agent_energy_counter_covers(c), "RAPL psys");
    assert_true(fabs(t_between(c, 0, T_S) - 12000.0) < T_UJ_TOL);
    agent_energy_counter_destroy(&c);
}

static void test_no_zone(void **state)
{
    (void) state;
    agent_energy_counter_t *c = t_new(16);
    agent_energy_counter_result_t r;
    jf_err_t err = {0};
    t_ok(c, 0, 0, NULL, NULL, NULL); // no counters yet: only time advances
    assert_false(agent_energy_counter_has_zones(c));
    assert_int_equal(agent_energy_counter_run(c, &r, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "no RAPL counters"));
    const char *const n[] = {"package-0/core"};
    t_ok(c, T_S, 1, n, (int64_t[]){0}, NULL);
    assert_int_equal(agent_energy_counter_between(c, 0, T_S, &r, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "no RAPL package or psys zone"));
    assert_string_equal(agent_energy_counter_covers(c), "");
    agent_energy_counter_destroy(&c);
}

static void test_history(void **state)
{
    (void) state;
    agent_energy_counter_t *c = t_new(3);
    t_pkg_series(c, 5); // 6 samples, 3 kept: 13 s .. 15 s
    agent_energy_counter_result_t r;
    jf_err_t err = {0};
    assert_int_equal(agent_energy_counter_between(c, 12 * T_S, 14 * T_S, &r, &err), -ERANGE);
    assert_non_null(strstr(err.msg, "before the retained history"));
    assert_true(fabs(t_between(c, 13 * T_S, 15 * T_S) - 16000.0) < T_UJ_TOL);
    assert_int_equal(agent_energy_counter_run(c, &r, NULL), 0); // the run needs no history
    assert_true(fabs(r.energy_mj - 40000.0) < T_UJ_TOL);
    assert_int_equal(agent_energy_counter_between(c, 16 * T_S, 17 * T_S, &r, &err), -ERANGE);
    agent_energy_counter_destroy(&c);
}

static void test_json(void **state)
{
    (void) state;
    agent_energy_counter_t *c = t_new(16);
    json_t *a = json_loads("{\"mono_us\": 0, \"rapl_energy_uj\": {\"package-0\": 999000, "
                           "\"package-0/core\": 5}, \"rapl_max_energy_range_uj\": "
                           "{\"package-0\": 1000000, \"package-0/core\": 1000000}}",
                           0, NULL);
    json_t *b = json_loads("{\"mono_us\": 1000000, \"rapl_energy_uj\": {\"package-0\": 4000, "
                           "\"package-0/core\": 3000}, \"rapl_max_energy_range_uj\": "
                           "{\"package-0\": 1000000, \"package-0/core\": 1000000}}",
                           0, NULL);
    assert_int_equal(agent_energy_counter_add_json(c, a, NULL), 0);
    assert_int_equal(agent_energy_counter_add_json(c, b, NULL), 0);
    assert_true(fabs(t_between(c, 0, T_S) - 5.0) < T_UJ_TOL);
    json_decref(a);
    json_decref(b);
    agent_energy_counter_destroy(&c);
}

static void test_failures(void **state)
{
    (void) state;
    jf_err_t err = {0};
    agent_energy_counter_opts_t o = {.history_max = 1};
    assert_null(agent_energy_counter_new(&o, &err));
    assert_int_equal(err.code, -EINVAL);
    assert_non_null(strstr(err.msg, "history_max 1"));
    agent_energy_counter_t *c = t_new(16);
    const char *const n[] = {"package-0"};
    t_ok(c, T_S, 1, n, (int64_t[]){0}, NULL);
    assert_int_equal(t_add(c, T_S, 1, n, (int64_t[]){1}, NULL, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "not after the previous one"));
    assert_int_equal(t_add(c, 2 * T_S, 1, n, (int64_t[]){-1}, NULL, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "zone 0 ('package-0')"));
    static const struct {
        const char *json;
        int code;
        const char *fragment;
    } rows[] = {
        {"{\"rapl_energy_uj\": {}}", -ENOENT, "no 'mono_us'"},
        {"{\"mono_us\": 1.5}", -EPROTO, "'mono_us' must be an integer"},
        {"{\"mono_us\": 9000000, \"rapl_energy_uj\": []}", -EPROTO, "must be objects"},
        {"{\"mono_us\": 9000000, \"rapl_energy_uj\": {\"package-0\": \"1\"}}", -EPROTO,
         "zone 'package-0' must be an integer"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        json_t *j = json_loads(rows[i].json, 0, NULL);
        assert_int_equal(agent_energy_counter_add_json(c, j, &err), rows[i].code);
        assert_non_null(strstr(err.msg, rows[i].fragment));
        json_decref(j);
    }
    agent_energy_counter_destroy(&c);
    agent_energy_counter_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_energy), cmocka_unit_test(test_wrap),
        cmocka_unit_test(test_broken),       cmocka_unit_test(test_all_zones_gone),
        cmocka_unit_test(test_psys_alone),   cmocka_unit_test(test_no_zone),
        cmocka_unit_test(test_history),      cmocka_unit_test(test_json),
        cmocka_unit_test(test_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
