/* Unit tests for agent_energy: integrals of curves with known antiderivatives (even and uneven
 * sampling, direct and JSON input), interval boundaries between samples, input rail versus sum
 * of rails, rails that appear mid-run, sampling quality counts, late boundaries against a short
 * history, and every documented failure, from tables where the cases are alike. */
#include "agent_energy.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define T_NO_INPUT  NAN               // a sample without input power
#define T_ORIGIN_US INT64_C(10000000) // curve time 0 at mono_us 10 s
#define T_PI        3.14159265358979323846
#define T_SAMPLES   1024 // most samples one curve row uses

static agent_energy_t *t_new(const char *input_rail, int rate_hz, size_t history_max)
{
    jf_err_t err = {0};
    agent_energy_opts_t o = {
        .input_rail = input_rail, .rate_hz = rate_hz, .history_max = history_max};
    agent_energy_t *e = agent_energy_new(&o, &err);
    if (!e) {
        fail_msg("agent_energy_new: %s", err.msg);
    }
    return e;
}

static int t_try_add(agent_energy_t *e, int64_t t_us, double input_mw, size_t n,
                     const agent_energy_reading_t *rails, jf_err_t *err)
{
    agent_energy_sample_t s = {.mono_us = t_us,
                               .has_input = !isnan(input_mw),
                               .input_power_mw = isnan(input_mw) ? 0.0 : input_mw,
                               .n_rails = n,
                               .rails = rails};
    return agent_energy_add(e, &s, err);
}

// Adds a sample that must be accepted.
static void t_add(agent_energy_t *e, int64_t t_us, double input_mw, size_t n,
                  const agent_energy_reading_t *rails)
{
    jf_err_t err = {0};
    if (t_try_add(e, t_us, input_mw, n, rails, &err) != 0) {
        fail_msg("add at %lld: %s", (long long) t_us, err.msg);
    }
}

static void t_near(double got, double want, double rel_tol, const char *what)
{
    double diff = fabs(got - want);
    if (diff > rel_tol * fabs(want) && diff > 1e-9) {
        fail_msg("%s: got %.10g, want %.10g (relative tolerance %g, off by %.3g%%)", what, got,
                 want, rel_tol, 100.0 * diff / fabs(want));
    }
}

static int64_t t_us(double t_s)
{
    return T_ORIGIN_US + (int64_t) llround(t_s * 1e6);
}

static double t_s(int64_t mono_us)
{
    return (double) (mono_us - T_ORIGIN_US) / 1e6;
}

// Curves in mW over seconds since T_ORIGIN_US, with their exact integrals in mJ (mW x s).
static double c_const(double t)
{
    (void) t;
    return 5000.0;
}
static double c_const_mj(double a, double b)
{
    return 5000.0 * (b - a);
}
static double c_ramp(double t)
{
    return 1000.0 + 400.0 * t;
}
static double c_ramp_mj(double a, double b)
{
    return 1000.0 * (b - a) + 200.0 * (b * b - a * a);
}
static double c_sine(double t)
{
    return 6000.0 + 2500.0 * sin(2.0 * T_PI * t / 5.0);
}
static double c_sine_mj(double a, double b)
{
    double k = 2.0 * T_PI / 5.0;
    return 6000.0 * (b - a) - 2500.0 / k * (cos(k * b) - cos(k * a));
}
static double c_decay(double t)
{
    return 2000.0 + 6000.0 * exp(-t / 4.0);
}
static double c_decay_mj(double a, double b)
{
    return 2000.0 * (b - a) + 24000.0 * (exp(-a / 4.0) - exp(-b / 4.0));
}
static double c_quad(double t)
{
    return 500.0 + 30.0 * t * t;
}
static double c_quad_mj(double a, double b)
{
    return 500.0 * (b - a) + 10.0 * (b * b * b - a * a * a);
}

typedef struct t_curve_row {
    const char *name;
    double (*power_mw)(double t_s);
    double (*energy_mj)(double a_s, double b_s);
    bool uneven; // sample gaps 20..180 ms from a seeded generator, else 100 ms
    bool json;   // feed through agent_energy_add_json with power rounded to integer mW
    double tol;  // relative tolerance against the exact integral
} t_curve_row_t;

static const t_curve_row_t s_curves[] = {
    {"constant even", c_const, c_const_mj, false, false, 1e-12},
    {"constant uneven", c_const, c_const_mj, true, false, 1e-12},
    {"ramp even", c_ramp, c_ramp_mj, false, false, 1e-12},
    {"ramp uneven", c_ramp, c_ramp_mj, true, false, 1e-12},
    {"sine even", c_sine, c_sine_mj, false, false, 1e-3},
    {"sine uneven", c_sine, c_sine_mj, true, false, 1e-3},
    {"decay uneven", c_decay, c_decay_mj, true, false, 1e-3},
    {"quadratic uneven", c_quad, c_quad_mj, true, false, 1e-3},
    {"sine uneven json", c_sine, c_sine_mj, true, true, 1e-3},
    {"decay even json", c_decay, c_decay_mj, false, true, 1e-3},
};

// Sample times over 20 s from curve time 0; the seed is fixed so every run sees the same gaps.
static size_t t_times(bool uneven, int64_t *times)
{
    uint32_t seed = 12345u;
    int64_t t = T_ORIGIN_US;
    size_t n = 0;
    while (t <= T_ORIGIN_US + 20 * INT64_C(1000000) && n < T_SAMPLES) {
        times[n++] = t;
        seed = seed * 1664525u + 1013904223u; // LCG (Numerical Recipes)
        t += uneven ? 20000 + (int64_t) (seed >> 8) % 160001 : 100000;
    }
    return n;
}

static void t_add_json(agent_energy_t *e, int64_t t, double power_mw)
{
    json_int_t p = (json_int_t) llround(power_mw);
    json_t *j = json_pack("{s:I, s:I, s:I, s:[{s:s, s:I}, {s:s, s:I, s:I}]}", "t_us",
                          (json_int_t) 1700000000000000, "mono_us", (json_int_t) t,
                          "input_power_mw", p, "rails", "name", "VDD_IN", "power_mw", p, "name",
                          "VDD_SOC", "voltage_mv", (json_int_t) 5000, "power_mw", p / 4);
    jf_err_t err = {0};
    int rc = agent_energy_add_json(e, j, &err);
    json_decref(j);
    if (rc != 0) {
        fail_msg("add_json at %lld: %s", (long long) t, err.msg);
    }
}

// Feeds one row's curve and returns the highest power fed.
static double t_feed_curve(agent_energy_t *e, const t_curve_row_t *row, const int64_t *times,
                           size_t n)
{
    double peak = 0.0;
    for (size_t i = 0; i < n; i++) {
        double p = row->power_mw(t_s(times[i]));
        if (row->json) {
            t_add_json(e, times[i], p);
            p = (double) llround(p);
        } else {
            agent_energy_reading_t r = {"VDD_IN", p};
            t_add(e, times[i], p, 1, &r);
        }
        peak = p > peak ? p : peak;
    }
    return peak;
}

static void t_check_curve_run(const t_curve_row_t *row, const agent_energy_result_t *r,
                              const int64_t *times, size_t n, double peak)
{
    double a = t_s(times[0]);
    double b = t_s(times[n - 1]);
    t_near(r->energy_mj, row->energy_mj(a, b), row->tol, row->name);
    t_near(r->rails[0].energy_mj, row->energy_mj(a, b), row->tol, row->name);
    t_near(r->avg_power_mw, r->energy_mj * 1e6 / (double) (times[n - 1] - times[0]), 1e-12,
           "average");
    assert_int_equal(r->total, JF_MEASURE_TOTAL_INPUT_RAIL);
    assert_int_equal(r->start_us, times[0]);
    assert_int_equal(r->end_us, times[n - 1]);
    assert_int_equal(r->duration_us, times[n - 1] - times[0]);
    assert_int_equal(r->covered_us, r->duration_us);
    assert_int_equal(r->n_samples, (int64_t) n);
    assert_true(r->peak_power_mw == peak);
}

// Interval [37 %, 81 %] of the run, boundaries 7 us off the sample grid.
static void t_check_curve_interval(agent_energy_t *e, const t_curve_row_t *row,
                                   const int64_t *times, size_t n)
{
    int64_t span = times[n - 1] - times[0];
    int64_t start = times[0] + span * 37 / 100 + 7;
    int64_t end = times[0] + span * 81 / 100 + 7;
    int id = -1;
    agent_energy_result_t r = {0};
    jf_err_t err = {0};
    assert_int_equal(agent_energy_interval_open(e, start, &id, &err), 0);
    assert_int_equal(agent_energy_interval_close(e, id, end, &err), 0);
    assert_int_equal(agent_energy_interval_result(e, id, &r, &err), 0);
    char what[128] = {0};
    (void) snprintf(what, sizeof what, "%s, interval", row->name);
    t_near(r.energy_mj, row->energy_mj(t_s(start), t_s(end)), row->tol, what);
    assert_int_equal(r.covered_us, end - start);
    assert_int_equal(agent_energy_interval_drop(e, id, &err), 0);
}

static void test_curves_table(void **state)
{
    (void) state;
    for (size_t i = 0; i < sizeof s_curves / sizeof s_curves[0]; i++) {
        const t_curve_row_t *row = &s_curves[i];
        int64_t times[T_SAMPLES] = {0};
        size_t n = t_times(row->uneven, times);
        agent_energy_t *e = t_new(NULL, 10, T_SAMPLES);
        double peak = t_feed_curve(e, row, times, n);
        agent_energy_result_t r = {0};
        agent_energy_result(e, &r);
        t_check_curve_run(row, &r, times, n, peak);
        t_check_curve_interval(e, row, times, n);
        agent_energy_destroy(&e);
        assert_null(e);
    }
}

typedef struct t_bounds_row {
    double start_s, end_s; // interval, curve seconds
    double energy_mj;      // exact integral of the ramp over the covered part
    double covered_s;      // part of the interval with samples on both sides
    int64_t n_samples;     // samples inside
    double peak_mw;        // highest sample inside
} t_bounds_row_t;

// The ramp 1000 + 400 t mW sampled at t = 0, 1, 2, 3, 4 s: linear interpolation at a boundary is
// exact on a line, so every row must match to rounding.
static void test_interval_boundaries_table(void **state)
{
    (void) state;
    static const t_bounds_row_t rows[] = {
        {0.5, 2.25, 2712.5, 1.75, 2, 1800.0}, // both ends between samples
        {0.3, 0.7, 480.0, 0.4, 0, 0.0},       // inside one segment: no sample, no peak
        {1.0, 3.0, 3600.0, 2.0, 3, 2200.0},   // ends on samples: both count
        {-2.0, 1.5, 1950.0, 1.5, 2, 1400.0},  // starts before the first sample
        {3.5, 9.0, 1250.0, 0.5, 1, 2600.0},   // ends after the last sample
        {4.5, 6.0, 0.0, 0.0, 0, 0.0},         // after everything
    };
    agent_energy_t *e = t_new(NULL, 1, 0);
    for (int k = 0; k <= 4; k++) {
        t_add(e, t_us(k), c_ramp(k), 0, NULL);
    }
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int id = -1;
        agent_energy_result_t r = {0};
        assert_int_equal(agent_energy_interval_open(e, t_us(rows[i].start_s), &id, NULL), 0);
        assert_int_equal(agent_energy_interval_close(e, id, t_us(rows[i].end_s), NULL), 0);
        assert_int_equal(agent_energy_interval_result(e, id, &r, NULL), 0);
        if (fabs(r.energy_mj - rows[i].energy_mj) > 1e-9 ||
            r.covered_us != t_us(rows[i].covered_s) - T_ORIGIN_US ||
            r.n_samples != rows[i].n_samples || r.peak_power_mw != rows[i].peak_mw ||
            r.duration_us != t_us(rows[i].end_s) - t_us(rows[i].start_s)) {
            fail_msg("[%g, %g]: energy %.9g covered %lld n %lld peak %g", rows[i].start_s,
                     rows[i].end_s, r.energy_mj, (long long) r.covered_us, (long long) r.n_samples,
                     r.peak_power_mw);
        }
        assert_int_equal(agent_energy_interval_drop(e, id, NULL), 0);
    }
    agent_energy_destroy(&e);
}

// Feeds the uneven sine and closes/opens epochs at 5 boundaries one sample late, as the agent
// does when an epoch record arrives after the sample that passed it. Returns the summed epochs.
static agent_energy_result_t t_epochs(agent_energy_t *e, const int64_t *times, size_t n,
                                      agent_energy_result_t *ret_run)
{
    int64_t bounds[6] = {0};
    for (int k = 0; k <= 5; k++) {
        bounds[k] = times[0] + (times[n - 1] - times[0]) * k / 5 + (k % 5 == 0 ? 0 : 7);
    }
    agent_energy_result_t sum = {0};
    int id = -1;
    int next = 0;
    for (size_t i = 0; i < n; i++) {
        agent_energy_reading_t r[2] = {{"GPU", c_sine(t_s(times[i]))}, {"CPU", 1200.0}};
        t_add(e, times[i], T_NO_INPUT, 2, r);
        while (next <= 5 && (times[i] > bounds[next] || i == n - 1)) {
            agent_energy_result_t ep = {0};
            if (next > 0) {
                assert_int_equal(agent_energy_interval_close(e, id, bounds[next], NULL), 0);
                assert_true(agent_energy_interval_is_complete(e, id));
                assert_int_equal(agent_energy_interval_result(e, id, &ep, NULL), 0);
                assert_int_equal(agent_energy_interval_drop(e, id, NULL), 0);
                sum.energy_mj += ep.energy_mj;
                sum.rails[0].energy_mj += ep.rails[0].energy_mj;
                sum.n_samples += ep.n_samples;
                sum.covered_us += ep.covered_us;
            }
            if (next < 5) {
                assert_int_equal(agent_energy_interval_open(e, bounds[next], &id, NULL), 0);
            }
            next++;
        }
    }
    agent_energy_result(e, ret_run);
    return sum;
}

// Epochs that tile the run add up to the run, and a history of 2 or 3 samples gives the same
// results as one that holds everything (2 is the least that keeps the first sample, the first
// epoch's start, when the second arrives).
static void test_epochs_tile_run_any_history(void **state)
{
    (void) state;
    static const size_t histories[] = {T_SAMPLES, 2, 3};
    int64_t times[T_SAMPLES] = {0};
    size_t n = t_times(true, times);
    agent_energy_result_t ref = {0};
    for (size_t h = 0; h < sizeof histories / sizeof histories[0]; h++) {
        agent_energy_t *e = t_new(NULL, 10, histories[h]);
        agent_energy_result_t run = {0};
        agent_energy_result_t sum = t_epochs(e, times, n, &run);
        t_near(sum.energy_mj, run.energy_mj, 1e-12, "epochs vs run");
        t_near(sum.rails[0].energy_mj, run.rails[0].energy_mj, 1e-12, "GPU epochs vs run");
        assert_int_equal(sum.n_samples, run.n_samples);
        assert_int_equal(sum.covered_us, run.covered_us);
        if (h == 0) {
            ref = run;
        }
        t_near(run.energy_mj, ref.energy_mj, 1e-12, "history");
        t_near(run.peak_power_mw, ref.peak_power_mw, 0.0, "history peak");
        assert_int_equal(run.n_late, ref.n_late);
        assert_int_equal(run.n_missed, ref.n_missed);
        assert_int_equal(run.max_gap_us, ref.max_gap_us);
        assert_int_equal(run.n_samples, (int64_t) n);
        agent_energy_destroy(&e);
    }
}

// A boundary at or before a sample the history dropped is refused, and one after it accepted.
static void test_boundary_too_old_for_history(void **state)
{
    (void) state;
    agent_energy_t *e = t_new(NULL, 1, 3);
    int id = -1;
    int late = -1;
    jf_err_t err = {0};
    assert_int_equal(agent_energy_interval_open(e, t_us(0.5), &late, &err), 0);
    for (int k = 0; k < 10; k++) {
        t_add(e, t_us(k), 100.0, 0, NULL); // samples 7, 8, 9 retained; 6 is the horizon
    }
    assert_int_equal(agent_energy_interval_open(e, t_us(6), &id, &err), -ERANGE);
    assert_non_null(strstr(err.msg, "latest sample dropped from the history of 3 samples"));
    assert_int_equal(agent_energy_interval_close(e, late, t_us(6), &err), -ERANGE);
    assert_non_null(strstr(err.msg, "interval end 16000000 us is not after 16000000 us"));
    assert_int_equal(agent_energy_interval_open(e, t_us(6.5), &id, &err), 0);
    assert_int_equal(agent_energy_interval_close(e, late, t_us(8.5), &err), 0);
    agent_energy_result_t r = {0};
    assert_int_equal(agent_energy_interval_result(e, late, &r, &err), 0);
    t_near(r.energy_mj, 100.0 * 8.0, 1e-12, "late close after eviction");
    assert_int_equal(r.n_samples, 8);
    agent_energy_destroy(&e);
}

// Three ways to the total: input_power_mw, the rail named input_rail, or the sum of rails.
static void test_total_input_from_field(void **state)
{
    (void) state;
    agent_energy_t *e = t_new(NULL, 1, 0);
    for (int k = 0; k <= 10; k++) {
        agent_energy_reading_t r[3] = {
            {"VDD_IN", 9000.0}, {"VDD_CPU_GPU_CV", 4000.0}, {"VDD_SOC", 2000.0}};
        t_add(e, t_us(k), 9000.0, 3, r);
    }
    agent_energy_result_t res = {0};
    agent_energy_result(e, &res);
    assert_int_equal(res.total, JF_MEASURE_TOTAL_INPUT_RAIL);
    assert_string_equal(jf_measure_total_name(res.total), "input-rail");
    t_near(res.energy_mj, 90000.0, 1e-12, "input");
    t_near(res.avg_power_mw, 9000.0, 1e-12, "input average");
    assert_int_equal(res.n_rails, 3);
    assert_string_equal(res.rails[1].name, "VDD_CPU_GPU_CV");
    t_near(res.rails[1].energy_mj, 40000.0, 1e-12, "rail");
    t_near(res.rails[2].avg_power_mw, 2000.0, 1e-12, "rail average");
    agent_energy_destroy(&e);
}

static void test_total_input_from_named_rail(void **state)
{
    (void) state;
    agent_energy_t *e = t_new("POM_5V_IN", 1, 0);
    for (int k = 0; k <= 10; k++) {
        agent_energy_reading_t r[3] = {
            {"POM_5V_GPU", 1000.0}, {"POM_5V_IN", 4000.0 + 100.0 * k}, {"POM_5V_CPU", 800.0}};
        t_add(e, t_us(k), T_NO_INPUT, 3, r);
    }
    agent_energy_result_t res = {0};
    agent_energy_result(e, &res);
    assert_int_equal(res.total, JF_MEASURE_TOTAL_INPUT_RAIL);
    t_near(res.energy_mj, 45000.0, 1e-12, "named input rail");
    assert_true(res.peak_power_mw == 5000.0);
    agent_energy_destroy(&e);
}

// AGX Xavier: no input rail, so the total is the sum of its six rails.
static void test_total_sum_of_rails(void **state)
{
    (void) state;
    static const char *const names[] = {"GPU", "CPU", "SOC", "CV", "VDDRQ", "SYS5V"};
    agent_energy_t *e = t_new("VDD_IN", 1, 0);
    double want_mj = 0.0;
    for (int k = 0; k <= 10; k++) {
        agent_energy_reading_t r[6] = {{0}};
        for (int j = 0; j < 6; j++) {
            r[j] = (agent_energy_reading_t){names[j], 100.0 * (j + 1) + (k == 4 ? 1000.0 : 0.0)};
        }
        t_add(e, t_us(k), T_NO_INPUT, 6, r);
    }
    for (int j = 0; j < 6; j++) {
        want_mj += 100.0 * (j + 1) * 10.0 + 1000.0; // the spike at t = 4 adds 1000 mJ per rail
    }
    agent_energy_result_t res = {0};
    agent_energy_result(e, &res);
    assert_int_equal(res.total, JF_MEASURE_TOTAL_SUM_OF_RAILS);
    assert_string_equal(jf_measure_total_name(res.total), "sum-of-rails");
    t_near(res.energy_mj, want_mj, 1e-12, "sum of rails");
    assert_true(res.peak_power_mw == 2100.0 + 6000.0);
    assert_int_equal(res.covered_us, 10000000);
    agent_energy_destroy(&e);
}

static void test_total_none_when_empty(void **state)
{
    (void) state;
    agent_energy_t *e = agent_energy_new(NULL, NULL);
    assert_non_null(e);
    agent_energy_result_t res = {0};
    agent_energy_result(e, &res);
    assert_int_equal(res.total, JF_MEASURE_TOTAL_NONE);
    assert_int_equal(res.n_samples, 0);
    assert_true(res.energy_mj == 0.0 && res.achieved_rate_hz == 0.0);
    t_add(e, 5, T_NO_INPUT, 0, NULL); // a sample without any power reading
    agent_energy_result(e, &res);
    assert_int_equal(res.total, JF_MEASURE_TOTAL_NONE);
    assert_int_equal(res.n_samples, 1);
    assert_string_equal(jf_measure_total_name(JF_MEASURE_TOTAL_NONE), "none");
    assert_string_equal(jf_measure_total_name((jf_measure_total_t)9), "?");
    agent_energy_destroy(&e);
    agent_energy_destroy(&e);
    agent_energy_destroy(NULL);
}

// A rail that appears at t = 4 s counts from there; one unreadable read at t = 6 s is bridged.
static void test_rail_appears_mid_run(void **state)
{
    (void) state;
    agent_energy_t *e = t_new(NULL, 1, 0);
    for (int k = 0; k <= 10; k++) {
        agent_energy_reading_t r[2] = {{"SOC", 5000.0}, {"GPU", 2000.0}};
        t_add(e, t_us(k), T_NO_INPUT, k >= 4 && k != 6 ? 2 : 1, r);
    }
    agent_energy_result_t res = {0};
    agent_energy_result(e, &res);
    assert_int_equal(res.total, JF_MEASURE_TOTAL_SUM_OF_RAILS);
    assert_string_equal(res.rails[1].name, "GPU");
    t_near(res.rails[1].energy_mj, 12000.0, 1e-12, "GPU from its first reading");
    assert_int_equal(res.rails[1].covered_us, 6000000);
    assert_int_equal(res.rails[1].n_readings, 6);
    t_near(res.energy_mj, 62000.0, 1e-12, "sum");
    assert_int_equal(res.covered_us, 10000000);
    assert_true(res.peak_power_mw == 7000.0);
    agent_energy_destroy(&e);
}

// A rail whose last reading is at t = 5 s counts up to there only; the sum's coverage is the
// longest rail's, not the sum of the rails'.
static void test_rail_stops_mid_run(void **state)
{
    (void) state;
    agent_energy_t *e = t_new(NULL, 1, 0);
    for (int k = 0; k <= 10; k++) {
        agent_energy_reading_t r[2] = {{"CV", 3000.0}, {"GPU", 1000.0}};
        t_add(e, t_us(k), T_NO_INPUT, k <= 5 ? 2 : 1, k <= 5 ? r : r + 1);
    }
    agent_energy_result_t res = {0};
    agent_energy_result(e, &res);
    assert_string_equal(res.rails[0].name, "CV");
    t_near(res.rails[0].energy_mj, 15000.0, 1e-12, "CV up to its last reading");
    assert_int_equal(res.rails[0].covered_us, 5000000);
    t_near(res.energy_mj, 25000.0, 1e-12, "sum");
    assert_int_equal(res.covered_us, 10000000);
    t_near(res.avg_power_mw, 2500.0, 1e-12, "sum average");
    agent_energy_destroy(&e);
}

typedef struct t_quality_row {
    const char *name;
    int rate_hz;
    int64_t gaps_us[8]; // gaps between consecutive samples, 0-terminated
    int64_t n_late, n_missed;
} t_quality_row_t;

static const t_quality_row_t s_quality[] = {
    {"steady 10 Hz", 10, {100000, 100000, 100000, 100000}, 0, 0},
    {"exactly 1.5 periods is on time", 10, {100000, 150000, 100000}, 0, 0},
    {"just over 1.5 periods", 10, {100000, 150001, 100000}, 1, 1},
    {"2.5 periods round up", 10, {250000}, 1, 2},
    {"2.49 periods", 10, {249000}, 1, 1},
    {"10 periods", 10, {1000000}, 1, 9},
    {"mixed 10 Hz", 10, {250000, 249000, 1000000, 90000}, 3, 12},
    {"1 Hz", 1, {1000000, 3000000, 1000000}, 1, 2},
    {"50 Hz", 50, {20000, 31000, 29000}, 1, 1},
    {"unknown rate", 0, {100000, 1000000}, 0, 0},
};

static void test_sampling_quality_table(void **state)
{
    (void) state;
    for (size_t i = 0; i < sizeof s_quality / sizeof s_quality[0]; i++) {
        const t_quality_row_t *row = &s_quality[i];
        agent_energy_t *e = t_new(NULL, row->rate_hz, 0);
        int64_t t = 1000, max_gap = 0, n = 1;
        t_add(e, t, 100.0, 0, NULL);
        for (size_t k = 0; k < 8 && row->gaps_us[k]; k++, n++) {
            t += row->gaps_us[k];
            max_gap = row->gaps_us[k] > max_gap ? row->gaps_us[k] : max_gap;
            t_add(e, t, 100.0, 0, NULL);
        }
        agent_energy_result_t r = {0};
        agent_energy_result(e, &r);
        double want_hz = (double) (n - 1) * 1e6 / (double) (t - 1000);
        if (r.n_late != row->n_late || r.n_missed != row->n_missed || r.max_gap_us != max_gap ||
            r.rate_hz != row->rate_hz || fabs(r.achieved_rate_hz - want_hz) > 1e-9) {
            fail_msg("%s: late %lld missed %lld max gap %lld rate %g; want %lld %lld %lld %g",
                     row->name, (long long) r.n_late, (long long) r.n_missed,
                     (long long) r.max_gap_us, r.achieved_rate_hz, (long long) row->n_late,
                     (long long) row->n_missed, (long long) max_gap, want_hz);
        }
        agent_energy_destroy(&e);
    }
}

// A gap belongs to the interval that holds its later sample.
static void test_sampling_quality_in_intervals(void **state)
{
    (void) state;
    static const int64_t times_ms[] = {0, 100, 400, 500};
    agent_energy_t *e = t_new(NULL, 10, 0);
    for (size_t i = 0; i < 4; i++) {
        t_add(e, t_us((double) times_ms[i] / 1000.0), 100.0, 0, NULL);
    }
    int a = -1, b = -1;
    agent_energy_result_t ra = {0}, rb = {0};
    assert_int_equal(agent_energy_interval_open(e, t_us(0.0), &a, NULL), 0);
    assert_int_equal(agent_energy_interval_close(e, a, t_us(0.3), NULL), 0);
    assert_int_equal(agent_energy_interval_open(e, t_us(0.3), &b, NULL), 0);
    assert_int_equal(agent_energy_interval_close(e, b, t_us(0.6), NULL), 0);
    assert_int_equal(agent_energy_interval_result(e, a, &ra, NULL), 0);
    assert_int_equal(agent_energy_interval_result(e, b, &rb, NULL), 0);
    assert_int_equal(ra.n_samples, 2);
    assert_int_equal(ra.n_late, 0);
    t_near(ra.achieved_rate_hz, 10.0, 1e-12, "rate in a");
    assert_int_equal(rb.n_samples, 2);
    assert_int_equal(rb.n_late, 1);
    assert_int_equal(rb.n_missed, 2);
    assert_int_equal(rb.max_gap_us, 300000);
    assert_int_equal(rb.covered_us, 200000); // no sample after 0.5 s yet
    assert_false(agent_energy_interval_is_complete(e, b));
    assert_true(agent_energy_interval_is_complete(e, a));
    agent_energy_destroy(&e);
}

typedef struct t_bad_row {
    const char *name;
    int64_t t_us;
    double input_mw; // T_NO_INPUT for none
    size_t n_rails;
    agent_energy_reading_t rails[3];
    size_t n_generated; // if > 0: that many rails "R00".. instead of rails[]
    int rc;
    const char *frag;
} t_bad_row_t;

static const char s_long_name[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLM"; // 65 bytes

static const t_bad_row_t s_bad[] = {
    {"out of order",
     500,
     1.0,
     0,
     {{0}},
     0,
     -EINVAL,
     "sample at mono_us 500 is before the previous sample at 1000"},
    {"duplicate time",
     1000,
     1.0,
     0,
     {{0}},
     0,
     -EINVAL,
     "sample at mono_us 1000 repeats the time of the previous sample at 1000"},
    {"negative time", -5, 1.0, 0, {{0}}, 0, -EINVAL, "sample at mono_us -5 is negative"},
    {"negative input",
     2000,
     -1.0,
     0,
     {{0}},
     0,
     -EINVAL,
     "sample at mono_us 2000: input power -1 mW, expected 0..1e+07 mW"},
    {"infinite input", 2000, INFINITY, 0, {{0}}, 0, -EINVAL, "input power inf mW"},
    {"negative rail",
     2000,
     T_NO_INPUT,
     2,
     {{"A", 5.0}, {"B", -3.0}},
     0,
     -EINVAL,
     "rail 'B' power -3 mW"},
    {"NaN rail", 2000, T_NO_INPUT, 1, {{"A", NAN}}, 0, -EINVAL, "rail 'A' power nan mW"},
    {"rail above the limit",
     2000,
     T_NO_INPUT,
     1,
     {{"A", 2e7}},
     0,
     -EINVAL,
     "rail 'A' power 2e+07 mW"},
    {"empty rail name",
     2000,
     T_NO_INPUT,
     1,
     {{"", 1.0}},
     0,
     -EINVAL,
     "rail 0 has an empty or too long name"},
    {"no rail name",
     2000,
     T_NO_INPUT,
     2,
     {{"A", 1.0}, {NULL, 1.0}},
     0,
     -EINVAL,
     "rail 1 has an empty or too long name"},
    {"long rail name",
     2000,
     T_NO_INPUT,
     1,
     {{s_long_name, 1.0}},
     0,
     -EINVAL,
     "expected 1..64 bytes"},
    {"rail twice",
     2000,
     T_NO_INPUT,
     3,
     {{"B", 1.0}, {"C", 1.0}, {"B", 2.0}},
     0,
     -EINVAL,
     "sample at mono_us 2000: rail 'B' appears twice"},
    {"17 rails in a sample",
     2000,
     T_NO_INPUT,
     0,
     {{0}},
     17,
     -ENOSPC,
     "sample at mono_us 2000 has 17 rails, at most 16"},
    {"17th distinct rail",
     2000,
     T_NO_INPUT,
     0,
     {{0}},
     16,
     -ENOSPC,
     "rail 'R15' would be rail 17, at most 16 rails"},
};

// Each bad sample follows one good sample at 1000 us with rail A; it must leave no trace.
static void test_add_errors_table(void **state)
{
    (void) state;
    for (size_t i = 0; i < sizeof s_bad / sizeof s_bad[0]; i++) {
        const t_bad_row_t *row = &s_bad[i];
        agent_energy_t *e = t_new(NULL, 1, 0);
        agent_energy_reading_t a = {"A", 10.0};
        t_add(e, 1000, T_NO_INPUT, 1, &a);
        char names[17][24] = {{0}};
        agent_energy_reading_t gen[17] = {{0}};
        for (size_t k = 0; k < row->n_generated; k++) {
            (void) snprintf(names[k], sizeof names[k], "R%02zu", k);
            gen[k] = (agent_energy_reading_t){names[k], 1.0};
        }
        jf_err_t err = {0};
        int rc = row->n_generated
                     ? t_try_add(e, row->t_us, row->input_mw, row->n_generated, gen, &err)
                     : t_try_add(e, row->t_us, row->input_mw, row->n_rails, row->rails, &err);
        if (rc != row->rc || err.code != row->rc || !strstr(err.msg, row->frag)) {
            fail_msg("%s: rc %d msg '%s'; want %d with '%s'", row->name, rc, err.msg, row->rc,
                     row->frag);
        }
        agent_energy_result_t r = {0};
        agent_energy_result(e, &r);
        if (r.n_samples != 1 || r.n_rails != 1 || r.total != JF_MEASURE_TOTAL_SUM_OF_RAILS) {
            fail_msg("%s: refused sample changed the accumulator", row->name);
        }
        t_add(e, 2000, T_NO_INPUT, 1, &a); // still accepts the next good sample
        agent_energy_destroy(&e);
    }
}

typedef struct t_json_row {
    const char *json;
    int rc;
    const char *frag;
} t_json_row_t;

static const t_json_row_t s_json[] = {
    {"{\"t_us\": 1795414823735453, \"mono_us\": 123456789, \"source\": \"sysfs\","
     " \"cpu_load_pct\": 41.5, \"temps_mc\": {\"CPU\": 45500},"
     " \"rails\": [{\"name\": \"VDD_IN\", \"voltage_mv\": 5008, \"current_ma\": 1904,"
     " \"power_mw\": 9535}], \"input_power_mw\": 9535}",
     0, ""},
    {"{\"mono_us\": 5, \"rails\": [{\"name\": \"VDD_IN\", \"voltage_mv\": 5008}]}", 0, ""},
    {"{\"mono_us\": 5, \"rails\": [{\"name\": \"GPU\", \"power_mw\": 5120.5}]}", 0, ""},
    {"{\"mono_us\": 5}", 0, ""},
    {"[1]", -EPROTO, "a telemetry sample must be a JSON object"},
    {"{\"t_us\": 1}", -ENOENT, "sample has no 'mono_us' (not a live sample)"},
    {"{\"mono_us\": \"5\"}", -EPROTO, "'mono_us' must be an integer"},
    {"{\"mono_us\": 5.5}", -EPROTO, "'mono_us' must be an integer"},
    {"{\"mono_us\": 5, \"input_power_mw\": \"9\"}", -EPROTO, "'input_power_mw' a number"},
    {"{\"mono_us\": 5, \"rails\": {}}", -EPROTO, "sample at mono_us 5: 'rails' must be an array"},
    {"{\"mono_us\": 5, \"rails\": [1]}", -EPROTO,
     "rails[0] must be an object with a string 'name'"},
    {"{\"mono_us\": 5, \"rails\": [{\"name\": \"A\", \"power_mw\": 1}, {\"power_mw\": 5}]}",
     -EPROTO, "rails[1] must be an object with a string 'name'"},
    {"{\"mono_us\": 5, \"rails\": [{\"name\": \"A\", \"power_mw\": \"5\"}]}", -EPROTO,
     "sample at mono_us 5: rails[0].power_mw must be a number"},
    {"{\"mono_us\": 5, \"rails\": [{\"name\": \"A\", \"power_mw\": -5}]}", -EINVAL,
     "rail 'A' power -5 mW"},
    {"{\"mono_us\": 5, \"input_power_mw\": -2}", -EINVAL, "input power -2 mW"},
    {"{\"mono_us\": -5}", -EINVAL, "sample at mono_us -5 is negative"},
};

static void test_json_table(void **state)
{
    (void) state;
    for (size_t i = 0; i < sizeof s_json / sizeof s_json[0]; i++) {
        json_error_t jerr;
        json_t *j = json_loads(s_json[i].json, 0, &jerr);
        assert_non_null(j);
        agent_energy_t *e = t_new("VDD_IN", 1, 0);
        jf_err_t err = {0};
        int rc = agent_energy_add_json(e, j, &err);
        if (rc != s_json[i].rc || !strstr(err.msg, s_json[i].frag)) {
            fail_msg("%s: rc %d msg '%s'; want %d with '%s'", s_json[i].json, rc, err.msg,
                     s_json[i].rc, s_json[i].frag);
        }
        json_decref(j);
        agent_energy_destroy(&e);
    }
}

// More readable rails than the cap in one JSON sample.
static void test_json_too_many_rails(void **state)
{
    (void) state;
    json_t *rails = json_array();
    for (int k = 0; k < 17; k++) {
        (void) json_array_append_new(
            rails, json_pack("{s:s#, s:i}", "name", "ABCDEFGHIJKLMNOPQ" + k, 1, "power_mw", 10));
    }
    json_t *j = json_pack("{s:I, s:o}", "mono_us", (json_int_t) 7, "rails", rails);
    agent_energy_t *e = t_new(NULL, 1, 0);
    jf_err_t err = {0};
    assert_int_equal(agent_energy_add_json(e, j, &err), -ENOSPC);
    assert_non_null(strstr(err.msg, "sample at mono_us 7: more than 16 readable rails"));
    json_decref(j);
    agent_energy_destroy(&e);
}

// JSON samples: input_power_mw wins, unreadable rails are skipped, real numbers are accepted.
static void test_json_values(void **state)
{
    (void) state;
    static const char *const samples[] = {
        "{\"mono_us\": 1000000, \"input_power_mw\": 9000, \"rails\": [{\"name\": \"VDD_IN\","
        " \"power_mw\": 1}, {\"name\": \"VDD_SOC\", \"power_mw\": 2000.5}]}",
        "{\"mono_us\": 2000000, \"input_power_mw\": 11000, \"rails\": [{\"name\": \"VDD_IN\","
        " \"power_mw\": 1}, {\"name\": \"VDD_SOC\", \"current_ma\": 400}]}",
        "{\"mono_us\": 3000000, \"input_power_mw\": 9000, \"rails\": [{\"name\": \"VDD_IN\","
        " \"power_mw\": 1}, {\"name\": \"VDD_SOC\", \"power_mw\": 1999.5}]}",
    };
    agent_energy_t *e = t_new("VDD_IN", 1, 0);
    for (size_t i = 0; i < 3; i++) {
        json_t *j = json_loads(samples[i], 0, NULL);
        assert_non_null(j);
        assert_int_equal(agent_energy_add_json(e, j, NULL), 0);
        json_decref(j);
    }
    agent_energy_result_t r = {0};
    agent_energy_result(e, &r);
    assert_int_equal(r.total, JF_MEASURE_TOTAL_INPUT_RAIL);
    t_near(r.energy_mj, 20000.0, 1e-12, "input_power_mw wins over the VDD_IN rail");
    assert_true(r.peak_power_mw == 11000.0);
    assert_int_equal(r.rails[1].n_readings, 2);
    t_near(r.rails[1].energy_mj, 4000.0, 1e-12, "VDD_SOC bridged over its unreadable read");
    agent_energy_destroy(&e);
}

static void test_new_errors(void **state)
{
    (void) state;
    static const struct {
        agent_energy_opts_t opts;
        const char *frag;
    } rows[] = {
        {{.rate_hz = -1}, "rate_hz -1 or history_max 0 out of range"},
        {{.rate_hz = AGENT_ENERGY_RATE_MAX_HZ + 1}, "rate_hz 1001"},
        {{.history_max = AGENT_ENERGY_HISTORY_MAX + 1}, "history_max 65537 out of range"},
        {{.input_rail = s_long_name}, "is longer than 64 bytes"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        jf_err_t err = {0};
        agent_energy_t *e = agent_energy_new(&rows[i].opts, &err);
        if (e || err.code != -EINVAL || !strstr(err.msg, rows[i].frag)) {
            fail_msg("row %zu: %p code %d msg '%s'; want NULL, -EINVAL, '%s'", i, (void *) e,
                     err.code, err.msg, rows[i].frag);
        }
    }
}

static void test_interval_api_errors(void **state)
{
    (void) state;
    agent_energy_t *e = t_new(NULL, 1, 0);
    jf_err_t err = {0};
    agent_energy_result_t r = {0};
    int ids[AGENT_ENERGY_INTERVALS_MAX + 1] = {0};
    for (int i = 0; i < AGENT_ENERGY_INTERVALS_MAX; i++) {
        assert_int_equal(agent_energy_interval_open(e, 100 * i, &ids[i], &err), 0);
        assert_int_equal(ids[i], i);
    }
    assert_int_equal(agent_energy_interval_open(e, 0, &ids[8], &err), -ENOSPC);
    assert_non_null(strstr(err.msg, "all 8 intervals are in use"));
    assert_int_equal(agent_energy_interval_drop(e, 3, &err), 0);
    assert_int_equal(agent_energy_interval_open(e, 5000, &ids[8], &err), 0);
    assert_int_equal(ids[8], 3);
    assert_int_equal(agent_energy_interval_open(e, -1, &ids[8], &err), -EINVAL);
    assert_non_null(strstr(err.msg, "interval start -1 us is negative"));
    assert_int_equal(agent_energy_interval_close(e, 42, 10, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "no interval with id 42"));
    assert_int_equal(agent_energy_interval_close(e, -1, 10, &err), -ENOENT);
    assert_int_equal(agent_energy_interval_close(e, 3, 4999, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "interval 3: cannot close at 4999 us, it is open since 5000"));
    assert_int_equal(agent_energy_interval_close(e, 3, 9000, &err), 0);
    assert_int_equal(agent_energy_interval_close(e, 3, 9500, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "already closed at 9000"));
    assert_int_equal(agent_energy_interval_result(e, 99, &r, &err), -ENOENT);
    assert_int_equal(agent_energy_interval_drop(e, 99, &err), -ENOENT);
    assert_int_equal(agent_energy_interval_drop(e, 3, NULL), 0);
    assert_int_equal(agent_energy_interval_drop(e, 3, &err), -ENOENT);
    assert_false(agent_energy_interval_is_complete(e, 3));
    assert_false(agent_energy_interval_is_complete(e, -7));
    agent_energy_destroy(&e);
}

// An open interval reports up to the latest sample; a closed one becomes complete once a sample
// at or after its end arrives.
static void test_interval_open_and_complete(void **state)
{
    (void) state;
    agent_energy_t *e = t_new(NULL, 1, 0);
    int id = -1;
    agent_energy_result_t r = {0};
    assert_int_equal(agent_energy_interval_open(e, t_us(1.5), &id, NULL), 0);
    assert_int_equal(agent_energy_interval_result(e, id, &r, NULL), 0);
    assert_int_equal(r.duration_us, 0);
    for (int k = 0; k <= 3; k++) {
        t_add(e, t_us(k), 1000.0, 0, NULL);
    }
    assert_int_equal(agent_energy_interval_result(e, id, &r, NULL), 0);
    assert_int_equal(r.end_us, t_us(3));
    t_near(r.energy_mj, 1500.0, 1e-12, "open interval so far");
    assert_false(agent_energy_interval_is_complete(e, id));
    assert_int_equal(agent_energy_interval_close(e, id, t_us(4), NULL), 0);
    assert_false(agent_energy_interval_is_complete(e, id));
    t_add(e, t_us(4), 1000.0, 0, NULL);
    assert_true(agent_energy_interval_is_complete(e, id));
    assert_int_equal(agent_energy_interval_result(e, id, &r, NULL), 0);
    t_near(r.energy_mj, 2500.0, 1e-12, "closed interval");
    assert_int_equal(r.covered_us, r.duration_us);
    agent_energy_destroy(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_curves_table),
        cmocka_unit_test(test_interval_boundaries_table),
        cmocka_unit_test(test_epochs_tile_run_any_history),
        cmocka_unit_test(test_boundary_too_old_for_history),
        cmocka_unit_test(test_total_input_from_field),
        cmocka_unit_test(test_total_input_from_named_rail),
        cmocka_unit_test(test_total_sum_of_rails),
        cmocka_unit_test(test_total_none_when_empty),
        cmocka_unit_test(test_rail_appears_mid_run),
        cmocka_unit_test(test_rail_stops_mid_run),
        cmocka_unit_test(test_sampling_quality_table),
        cmocka_unit_test(test_sampling_quality_in_intervals),
        cmocka_unit_test(test_add_errors_table),
        cmocka_unit_test(test_json_table),
        cmocka_unit_test(test_json_too_many_rails),
        cmocka_unit_test(test_json_values),
        cmocka_unit_test(test_new_errors),
        cmocka_unit_test(test_interval_api_errors),
        cmocka_unit_test(test_interval_open_and_complete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
