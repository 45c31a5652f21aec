/* agent_thermal (the measure record's thermal object): the highest temperature per zone, GPU
 * and core clocks against the power state's caps (below, lowest, largest shortfall), clocks
 * without a cap not compared, and a sample of the real Jetson reader on the Xavier NX fixture
 * tree; then the whole record through agent_measure_record and jf_measure_check. */
#include "agent_measure.h"
#include "agent_platform.h"
#include "agent_thermal.h"
#include "jft_fs.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#define T_GPU_CAP_HZ INT64_C(1109250000)
#define T_BIG_CAP_HZ INT64_C(1907200000)
#define T_LIT_CAP_HZ INT64_C(1190400000)

static jf_measure_power_t t_power(void)
{
    jf_measure_power_t p = {
        .has_gpu_max_hz = true, .gpu_max_hz = T_GPU_CAP_HZ, .has_clusters = true, .n_clusters = 2};
    p.clusters[0] = (jf_measure_cluster_t){.first_core = 0, .max_hz = T_BIG_CAP_HZ};
    p.clusters[1] = (jf_measure_cluster_t){.first_core = 2, .max_hz = T_LIT_CAP_HZ};
    return p;
}

static void t_add(agent_thermal_t *t, const char *json)
{
    json_error_t jerr;
    json_t *s = json_loads(json, 0, &jerr);
    if (!s) {
        fail_msg("%s: %s", json, jerr.text);
    }
    agent_thermal_add_sample(t, s);
    json_decref(s);
}

static int64_t t_zone(const jf_measure_thermal_t *r, const char *name)
{
    for (size_t i = 0; i < r->n_zones; i++) {
        if (strcmp(r->zones[i].name, name) == 0) {
            return r->zones[i].max_mc;
        }
    }
    fail_msg("no zone '%s'", name);
    return 0;
}

static void test_counts(void **state)
{
    (void) state;
    agent_thermal_t *t = agent_thermal_new();
    assert_non_null(t);
    // Core 1 offline (null); core 2 is in the second cluster (first_core 2).
    t_add(t, "{\"temps_mc\":{\"GPU\":50000,\"CPU\":48000},\"gpu_freq_hz\":1109250000,"
             "\"cpu_core_freq_hz\":[1907200000,null,1190400000]}");
    t_add(t, "{\"temps_mc\":{\"GPU\":87500,\"CPU\":47000},\"gpu_freq_hz\":599250000,"
             "\"cpu_core_freq_hz\":[1430400000,null,1190400000]}");
    t_add(t, "{\"temps_mc\":{\"GPU\":\"hot\"},\"gpu_freq_hz\":1109250000}"); // bad type ignored
    t_add(t, "{}");
    jf_measure_power_t p = t_power();
    jf_measure_thermal_t r;
    agent_thermal_result(t, &p, &r);
    assert_int_equal(r.samples, 4);
    assert_int_equal(r.n_zones, 2);
    assert_int_equal(t_zone(&r, "GPU"), 87500);
    assert_int_equal(t_zone(&r, "CPU"), 48000);
    assert_true(r.has_gpu);
    assert_int_equal(r.gpu_samples, 3);
    assert_int_equal(r.gpu_below, 1);
    assert_int_equal(r.gpu_lowest_hz, 599250000);
    assert_int_equal(r.gpu_cap_hz, T_GPU_CAP_HZ);
    assert_true(r.has_cpu);
    assert_int_equal(r.cpu_samples, 4); // cores 0 and 2 in two samples
    assert_int_equal(r.cpu_below, 1);
    assert_float_equal(r.cpu_max_shortfall_pct,
                       100.0 * (1907200000.0 - 1430400000.0) / 1907200000.0, 1e-9);
    // Without caps nothing is compared; the temperatures stay.
    agent_thermal_result(t, NULL, &r);
    assert_false(r.has_gpu);
    assert_false(r.has_cpu);
    assert_int_equal(r.n_zones, 2);
    jf_measure_power_t none = {0};
    agent_thermal_result(t, &none, &r);
    assert_false(r.has_gpu);
    assert_false(r.has_cpu);
    agent_thermal_destroy(&t);
    assert_null(t);
    agent_thermal_destroy(&t); // NULL is fine
}

// The real Jetson reader on the Xavier NX fixture: what it reads is what the figures hold.
static void test_fixture_sample(void **state)
{
    (void) state;
    char sys[PATH_MAX], proc[PATH_MAX], etc[PATH_MAX];
    jft_fixture("sysfs/xavier-nx/sys", sys);
    jft_fixture("sysfs/xavier-nx/proc", proc);
    jft_fixture("sysfs/xavier-nx/etc", etc);
    agent_platform_opts_t o = {
        .kind = AGENT_PLATFORM_JETSON, .sysfs_root = sys, .proc_root = proc, .etc_root = etc};
    jf_err_t err = {0};
    agent_platform_t *p = agent_platform_new(&o, &err);
    assert_non_null(p);
    agent_sysfs_t *reader = agent_platform_take_reader(p);
    json_t *sample = json_object();
    assert_int_equal(agent_sysfs_sample(reader, sample, &err), 0);
    const json_t *temps = json_object_get(sample, "temps_mc");
    const json_t *gpu = json_object_get(sample, "gpu_freq_hz");
    assert_true(json_object_size(temps) > 0);
    assert_true(json_is_integer(gpu));
    agent_thermal_t *t = agent_thermal_new();
    agent_thermal_add_sample(t, sample);
    // A cap equal to the clock read: not below; one Hz above it: below.
    jf_measure_power_t pw = {.has_gpu_max_hz = true, .gpu_max_hz = json_integer_value(gpu)};
    jf_measure_thermal_t r;
    agent_thermal_result(t, &pw, &r);
    assert_int_equal(r.n_zones, json_object_size(temps));
    const char *name;
    json_t *v;
    json_object_foreach((json_t *) temps, name, v)
    {
        assert_int_equal(t_zone(&r, name), json_integer_value(v));
    }
    assert_int_equal(r.gpu_samples, 1);
    assert_int_equal(r.gpu_below, 0);
    pw.gpu_max_hz++;
    agent_thermal_result(t, &pw, &r);
    assert_int_equal(r.gpu_below, 1);
    agent_thermal_destroy(&t);
    json_decref(sample);
    agent_sysfs_destroy(&reader);
    agent_platform_destroy(&p);
}

// The record carries the object, checked by the schema, against the power state passed in.
static void test_record(void **state)
{
    (void) state;
    agent_measure_opts_t o = {.rate_hz = 1, .epochs = 1, .start_us = 1000000};
    agent_measure_t *m = agent_measure_new(&o, NULL);
    assert_non_null(m);
    json_t *s = json_pack("{s:I, s:{s:i}, s:I}", "mono_us", (json_int_t) 1000000, "temps_mc", "GPU",
                          61000, "gpu_freq_hz", (json_int_t) 599250000);
    assert_int_equal(agent_measure_add_sample(m, s, NULL), 0);
    json_decref(s);
    json_t *power = json_pack("{s:i, s:s, s:I, s:b}", "mode_id", 0, "mode_name", "MODE_15W_6CORE",
                              "gpu_max_hz", (json_int_t) T_GPU_CAP_HZ, "dvfs_off", 1);
    agent_measure_facts_t f = {.power_mode = power, .drop = JF_MEASURE_DROP_NONE};
    json_t *rec = agent_measure_record(m, &f);
    assert_non_null(rec);
    jf_err_t err = {0};
    assert_int_equal(jf_measure_check(rec, &err), 0);
    const json_t *th = json_object_get(rec, "thermal");
    assert_int_equal(json_integer_value(json_object_get(th, "samples")), 1);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(th, "max_temps_mc"), "GPU")), 61000);
    assert_int_equal(json_integer_value(json_object_get(th, "gpu_below")), 1);
    assert_int_equal(json_integer_value(json_object_get(th, "gpu_cap_hz")), T_GPU_CAP_HZ);
    assert_null(json_object_get(th, "cpu_samples")); // no clusters in the power state
    json_decref(rec);
    json_decref(power);
    agent_measure_destroy(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_fixture_sample),
        cmocka_unit_test(test_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
