/* Unit tests for agent_measure (energy per epoch from samples, epoch records held until their
 * closing sample, the fallback interval for epochs longer than the history, residency per epoch,
 * the measure record; energy from RAPL counters, also read by the real host reader from a copy
 * of the host fixture; the time base of a trainer with its own clock) and for the sampler actor
 * against the Xavier NX fixture tree (rate, deadlines, the final sample on stop). */
#include "agent_measure.h"
#include "agent_platform.h"
#include "agent_sampler.h"
#include "jf_msg_run.h"
#include "jft_fs.h"

#include <czmq.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define T_S        INT64_C(1000000)
#define T_POWER_MW 9535.0
#define T_T0_US    (INT64_C(1000) * T_S) // a monotonic time far from 0

// A sample at mono_us with the input rail and one more rail at static power.
static json_t *t_sample(int64_t mono_us, bool power)
{
    json_t *s = json_pack("{s:I, s:I, s:s}", "t_us", (json_int_t) 1700000000000000, "mono_us",
                          (json_int_t) mono_us, "source", "sysfs");
    if (power) {
        (void) json_object_set_new(s, "input_power_mw", json_integer((json_int_t) T_POWER_MW));
        (void) json_object_set_new(s, "rails",
                                   json_pack("[{s:s, s:f}, {s:s, s:i}]", "name", "VDD_IN",
                                             "power_mw", T_POWER_MW, "name", "VDD_SOC", "power_mw",
                                             1600));
    }
    return s;
}

static json_t *t_epoch(int epoch, int64_t e2e_us)
{
    jf_epoch_rec_t e = {.epoch = epoch, .warmup = epoch == 0, .e2e_us = e2e_us, .samples = 64};
    return jf_record_epoch_to_json(&e);
}

static void t_feed(agent_measure_t *m, int64_t from_us, int64_t to_us, int64_t step_us, bool power)
{
    for (int64_t t = from_us; t <= to_us; t += step_us) {
        json_t *s = t_sample(t, power);
        jf_err_t err = {0};
        if (agent_measure_add_sample(m, s, &err) != 0) {
            fail_msg("sample at %lld: %s", (long long) t, err.msg);
        }
        json_decref(s);
    }
}

static double t_num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v)) {
        fail_msg("'%s' is missing", key);
    }
    return json_number_value(v);
}

// Static power: an epoch's energy is power x e2e, even for an epoch shorter than a period; the
// record waits for the sample after its end.
static void test_epoch_energy(void **state)
{
    (void) state;
    agent_measure_opts_t o = {
        .rate_hz = 10, .input_rail = "VDD_IN", .epochs = 3, .start_us = T_T0_US};
    jf_err_t err = {0};
    agent_measure_t *m = agent_measure_new(&o, &err);
    assert_non_null(m);
    t_feed(m, T_T0_US, T_T0_US + 2 * T_S, T_S / 10, true);
    // Epoch 0 read at 2.05 s after 1.5 s; epoch 1 only 30 ms long, between two samples.
    int64_t read0 = T_T0_US + 2 * T_S + T_S / 20;
    assert_int_equal(agent_measure_add_epoch(m, t_epoch(0, 3 * T_S / 2), read0, &err), 0);
    assert_int_equal(agent_measure_add_epoch(m, t_epoch(1, 30000), read0 + 30000, &err), 0);
    assert_null(agent_measure_pop_epoch(m, read0 + 40000, false, NULL)); // closing sample due
    assert_int_equal(agent_measure_held(m), 2);
    t_feed(m, T_T0_US + 2 * T_S + T_S / 10, T_T0_US + 2 * T_S + T_S / 10, T_S, true);
    agent_measure_energy_t how = AGENT_MEASURE_NO_POWER;
    json_t *r0 = agent_measure_pop_epoch(m, read0 + 60000, false, &how);
    assert_non_null(r0);
    assert_int_equal(how, AGENT_MEASURE_MEASURED);
    assert_true(fabs(t_num(r0, "energy_mj") - T_POWER_MW * 1.5) < 1e-6);
    assert_true(fabs(t_num(r0, "avg_power_mw") - T_POWER_MW) < 1e-9);
    assert_true(fabs(t_num(r0, "peak_power_mw") - T_POWER_MW) < 1e-9);
    json_t *r1 = agent_measure_pop_epoch(m, read0 + 60000, false, &how);
    assert_int_equal(how, AGENT_MEASURE_MEASURED);
    assert_true(fabs(t_num(r1, "energy_mj") - T_POWER_MW * 0.03) < 1e-6);
    assert_null(json_object_get(r1, "peak_power_mw")); // no sample inside 30 ms
    jf_record_t parsed;
    assert_int_equal(jf_record_parse(r1, &parsed, NULL), 0); // still a valid wire record
    json_decref(r0);
    json_decref(r1);
    // An epoch whose closing sample never comes goes out without energy at its deadline.
    int64_t read2 = T_T0_US + 3 * T_S;
    assert_int_equal(agent_measure_add_epoch(m, t_epoch(2, T_S / 2), read2, &err), 0);
    assert_null(agent_measure_pop_epoch(m, read2 + 1000, false, NULL));
    json_t *r2 =
        agent_measure_pop_epoch(m, read2 + 2 * T_S / 10 + AGENT_MEASURE_WAIT_US, false, &how);
    assert_int_equal(how, AGENT_MEASURE_NOT_CLOSED);
    assert_null(json_object_get(r2, "energy_mj"));
    json_decref(r2);
    assert_int_equal(agent_measure_held(m), 0);
    agent_measure_destroy(&m);
    assert_null(m);
}

// No power in any sample (a host without readable rails): records go at once, without energy.
static void test_no_power(void **state)
{
    (void) state;
    agent_measure_opts_t o = {.rate_hz = 1, .epochs = 2, .start_us = T_T0_US};
    agent_measure_t *m = agent_measure_new(&o, NULL);
    assert_non_null(m);
    t_feed(m, T_T0_US, T_T0_US + 3 * T_S, T_S, false);
    assert_int_equal(agent_measure_add_epoch(m, t_epoch(0, T_S), T_T0_US + 3 * T_S, NULL), 0);
    agent_measure_energy_t how = AGENT_MEASURE_MEASURED;
    json_t *r = agent_measure_pop_epoch(m, T_T0_US + 3 * T_S, false, &how);
    assert_non_null(r);
    assert_int_equal(how, AGENT_MEASURE_NO_POWER);
    assert_null(json_object_get(r, "energy_mj"));
    json_decref(r);
    json_t *power = json_pack("{s:i, s:s}", "mode_id", 0, "mode_name", "DEFAULT");
    agent_measure_facts_t f = {.power_mode = power, .drop = JF_MEASURE_DROP_NONE};
    json_t *rec = agent_measure_record(m, &f);
    assert_non_null(rec);
    const json_t *energy = json_object_get(rec, "energy");
    assert_string_equal(json_string_value(json_object_get(energy, "total")), "none");
    assert_null(json_object_get(energy, "energy_mj"));
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(rec, "telemetry"), "samples")), 4);
    json_decref(rec);
    json_decref(power);
    agent_measure_destroy(&m);
}

// An epoch longer than the kept history (600 samples at 1 Hz): the interval from the previous
// epoch's read stands in, so the energy is still power x time.
static void test_long_epoch_fallback(void **state)
{
    (void) state;
    agent_measure_opts_t o = {
        .rate_hz = 1, .input_rail = "VDD_IN", .epochs = 2, .start_us = T_T0_US};
    agent_measure_t *m = agent_measure_new(&o, NULL);
    assert_non_null(m);
    int64_t end = T_T0_US + 900 * T_S;
    t_feed(m, T_T0_US, end, T_S, true);
    assert_int_equal(agent_measure_add_epoch(m, t_epoch(0, 900 * T_S), end, NULL), 0);
    t_feed(m, end + T_S, end + T_S, T_S, true);
    agent_measure_energy_t how = AGENT_MEASURE_NO_POWER;
    json_t *r = agent_measure_pop_epoch(m, end + T_S, false, &how);
    assert_int_equal(how, AGENT_MEASURE_MEASURED);
    assert_true(fabs(t_num(r, "energy_mj") - T_POWER_MW * 900) < 1e-3);
    json_decref(r);
    agent_measure_destroy(&m);
}

// The measure record: run energy per rail, residency per epoch (before epoch N > 0 is the
// measurement after epoch N - 1), storage, disk reads over the run and the sampler's counts.
static void test_record(void **state)
{
    (void) state;
    agent_measure_opts_t o = {
        .rate_hz = 10, .input_rail = "VDD_IN", .epochs = 3, .start_us = T_T0_US};
    agent_measure_t *m = agent_measure_new(&o, NULL);
    assert_non_null(m);
    for (int i = 0; i <= 20; i++) {
        json_t *s = t_sample(T_T0_US + i * T_S / 10, true);
        (void) json_object_set_new(s, "disk",
                                   json_pack("{s:s, s:i, s:i, s:i, s:i}", "device", "vda", "reads",
                                             100 + i, "read_bytes", 4096 * (100 + i),
                                             "read_time_us", 10 * i, "in_flight", 0));
        assert_int_equal(agent_measure_add_sample(m, s, NULL), 0);
        json_decref(s);
    }
    agent_residency_t before = {.files = 2, .total_bytes = 1000, .resident_bytes = 0};
    agent_residency_t full = {.files = 2, .total_bytes = 1000, .resident_bytes = 1000};
    agent_measure_set_residency(m, -1, &before);
    agent_measure_set_residency(m, 0, &full);
    agent_measure_set_residency(m, 1, &full);
    agent_measure_set_residency(m, 7, &full); // out of range: ignored
    // Epoch 2's record is in, its residency not yet: it has a before (after epoch 1) only.
    assert_int_equal(agent_measure_add_epoch(m, t_epoch(2, T_S / 10), T_T0_US + 2 * T_S, NULL), 0);
    json_decref(agent_measure_pop_epoch(m, T_T0_US + 2 * T_S, true, NULL));
    json_t *power =
        json_pack("{s:i, s:s, s:b}", "mode_id", 8, "mode_name", "MODE_20W_6CORE", "dvfs_off", 0);
    agent_storage_mount_t mount = {.mount_point = "/", .disk = "vda"};
    agent_sampler_stats_t stats = {.samples = 21, .late = 1, .missed = 0, .achieved_rate_hz = 9.5};
    agent_measure_facts_t f = {.power_mode = power,
                               .medium = "nvme",
                               .mount = &mount,
                               .storage_checked = true,
                               .drop = JF_MEASURE_DROP_HELPER,
                               .sampling = &stats};
    json_t *rec = agent_measure_record(m, &f);
    assert_non_null(rec);
    assert_int_equal(jf_measure_check(rec, NULL), 0);
    const json_t *energy = json_object_get(rec, "energy");
    assert_string_equal(json_string_value(json_object_get(energy, "total")), "input-rail");
    assert_string_equal(json_string_value(json_object_get(energy, "input_rail")), "VDD_IN");
    assert_string_equal(json_string_value(json_object_get(energy, "source")), "power-monitor");
    assert_null(json_object_get(energy, "tegrastats_interval_ms"));
    assert_true(fabs(t_num(energy, "energy_mj") - T_POWER_MW * 2) < 1e-6);
    const json_t *soc = json_array_get(json_object_get(energy, "rails"), 1);
    assert_true(fabs(t_num(soc, "energy_mj") - 1600 * 2) < 1e-6);
    const json_t *tel = json_object_get(rec, "telemetry");
    assert_true(fabs(t_num(tel, "achieved_rate_hz") - 9.5) < 1e-9); // the sampler's figure
    assert_int_equal(json_integer_value(json_object_get(tel, "late")), 1);
    const json_t *disk = json_object_get(rec, "disk");
    assert_int_equal(json_integer_value(json_object_get(disk, "reads")), 20);
    assert_int_equal(json_integer_value(json_object_get(disk, "read_bytes")), 20 * 4096);
    assert_int_equal(json_integer_value(json_object_get(rec, "dataset_bytes")), 1000);
    assert_int_equal(jf_measure_cache_count(rec), 3);
    jf_measure_cache_t c[3];
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(jf_measure_cache_at(rec, i, &c[i]), 0);
    }
    assert_true(c[0].has_before && c[0].before == 0.0 && c[0].has_after && c[0].after == 1.0);
    assert_true(c[1].has_before && c[1].before == 1.0 && c[1].has_after);
    assert_true(c[2].epoch == 2 && c[2].has_before && !c[2].has_after);
    assert_string_equal(json_string_value(json_object_get(rec, "drop_caches")), "helper");
    json_decref(rec);
    json_decref(power);
    agent_measure_destroy(&m);
    o.rate_hz = 51;
    jf_err_t err = {0};
    assert_null(agent_measure_new(&o, &err));
    assert_int_equal(err.code, -EINVAL);
}

// GPU load before epoch 0: the samples before the epoch's start (its record's read time minus
// its e2e) make the record's gpu_before; later ones and later epochs do not count.
static void test_gpu_before(void **state)
{
    (void) state;
    agent_measure_opts_t o = {
        .rate_hz = 10, .input_rail = "VDD_IN", .epochs = 2, .start_us = T_T0_US};
    agent_measure_t *m = agent_measure_new(&o, NULL);
    assert_non_null(m);
    // 2 s of start at 30 % and 50 % alternately, then 3 s of epoch 0 at 99 %.
    for (int i = 0; i <= 50; i++) {
        json_t *s = t_sample(T_T0_US + i * T_S / 10, true);
        double load = i < 20 ? (i % 2 ? 50.0 : 30.0) : 99.0;
        (void) json_object_set_new(s, "gpu_load_pct", json_real(load));
        assert_int_equal(agent_measure_add_sample(m, s, NULL), 0);
        json_decref(s);
    }
    // Epoch 0 from 2 s to 5 s; epoch 1's record does not move the window.
    assert_int_equal(agent_measure_add_epoch(m, t_epoch(0, 3 * T_S), T_T0_US + 5 * T_S, NULL), 0);
    assert_int_equal(agent_measure_add_epoch(m, t_epoch(1, 4 * T_S), T_T0_US + 5 * T_S, NULL), 0);
    json_t *power =
        json_pack("{s:i, s:s, s:b}", "mode_id", 8, "mode_name", "MODE_20W_6CORE", "dvfs_off", 0);
    agent_measure_facts_t f = {.power_mode = power, .drop = JF_MEASURE_DROP_HELPER};
    json_t *rec = agent_measure_record(m, &f);
    assert_non_null(rec);
    assert_int_equal(jf_measure_check(rec, NULL), 0);
    const json_t *g = json_object_get(rec, "gpu_before");
    assert_int_equal(json_integer_value(json_object_get(g, "samples")), 20);
    assert_true(fabs(t_num(g, "mean_pct") - 40.0) < 1e-9);
    assert_true(fabs(t_num(g, "max_pct") - 50.0) < 1e-9);
    json_decref(rec);
    agent_measure_destroy(&m);
    // The trainer's start line read at 1.5 s: epoch 0 begins right after it, even though its
    // record, read late, would place the start at 2 s; the 5 samples from 1.5 s are not before.
    m = agent_measure_new(&o, NULL);
    assert_non_null(m);
    for (int i = 0; i <= 50; i++) {
        json_t *s = t_sample(T_T0_US + i * T_S / 10, true);
        (void) json_object_set_new(s, "gpu_load_pct", json_real(i < 15 ? 10.0 : 99.0));
        assert_int_equal(agent_measure_add_sample(m, s, NULL), 0);
        json_decref(s);
    }
    agent_measure_trainer_started(m, T_T0_US + 15 * T_S / 10 - 1);
    agent_measure_trainer_started(m, T_T0_US + 4 * T_S); // only the first counts
    assert_int_equal(agent_measure_add_epoch(m, t_epoch(0, 3 * T_S), T_T0_US + 5 * T_S, NULL), 0);
    rec = agent_measure_record(m, &f);
    g = json_object_get(rec, "gpu_before");
    assert_int_equal(json_integer_value(json_object_get(g, "samples")), 15);
    assert_true(fabs(t_num(g, "max_pct") - 10.0) < 1e-9);
    json_decref(rec);
    agent_measure_destroy(&m);
    // Without epoch 0's record (a run that failed while starting): no figure.
    m = agent_measure_new(&o, NULL);
    t_feed(m, T_T0_US, T_T0_US + T_S, T_S / 10, true);
    rec = agent_measure_record(m, &f);
    assert_non_null(rec);
    assert_null(json_object_get(rec, "gpu_before"));
    json_decref(rec);
    json_decref(power);
    agent_measure_destroy(&m);
}

// Rails taken from the sampler's tegrastats fallback: the energy's source is tegrastats, with
// the interval it ran at, while the telemetry's source stays the samples' own.
static void test_record_tegrastats(void **state)
{
    (void) state;
    agent_measure_opts_t o = {
        .rate_hz = 10, .input_rail = "VDD_IN", .epochs = 1, .start_us = T_T0_US};
    agent_measure_t *m = agent_measure_new(&o, NULL);
    assert_non_null(m);
    for (int i = 0; i <= 10; i++) {
        json_t *s = t_sample(T_T0_US + i * T_S / 10, i > 0); // the first without power
        if (i > 0) {
            (void) json_object_set_new(s, "from_tegrastats",
                                       json_pack("[s, s]", "rails", "input_power_mw"));
        }
        assert_int_equal(agent_measure_add_sample(m, s, NULL), 0);
        json_decref(s);
    }
    json_t *power = json_pack("{s:i, s:s}", "mode_id", 8, "mode_name", "MODE_20W_6CORE");
    agent_sampler_stats_t stats = {.samples = 11, .tegrastats_interval_ms = 100};
    agent_measure_facts_t f = {.power_mode = power, .sampling = &stats};
    json_t *rec = agent_measure_record(m, &f);
    assert_non_null(rec);
    jf_err_t err = {0};
    assert_int_equal(jf_measure_check(rec, &err), 0);
    const json_t *energy = json_object_get(rec, "energy");
    assert_string_equal(json_string_value(json_object_get(energy, "source")), "tegrastats");
    assert_int_equal(json_integer_value(json_object_get(energy, "tegrastats_interval_ms")), 100);
    const json_t *tel = json_object_get(rec, "telemetry");
    assert_string_equal(json_string_value(json_object_get(tel, "source")), "sysfs");
    json_decref(rec);
    json_decref(power);
    agent_measure_destroy(&m);
}

// A host sample at mono_us with RAPL counters: package-0 at 10 W, its core at 6 W (inside it),
// its dram at 2 W, all wrapping at T_RANGE_UJ; the package starts near the wrap.
#define T_RANGE_UJ INT64_C(50000000)
static json_t *t_rapl_sample(int64_t mono_us, bool with_dram)
{
    int64_t dt = mono_us - T_T0_US; // us; 10 W = 10 uJ/us
    json_t *s = json_pack("{s:I, s:s, s:{s:I, s:I}, s:{s:I, s:I}}", "mono_us",
                          (json_int_t) mono_us, "source", "proc", "rapl_energy_uj", "package-0",
                          (json_int_t) ((T_RANGE_UJ - 3000000 + 10 * dt) % T_RANGE_UJ),
                          "package-0/core", (json_int_t) (6 * dt), "rapl_max_energy_range_uj",
                          "package-0", (json_int_t) T_RANGE_UJ, "package-0/core",
                          (json_int_t) T_RANGE_UJ);
    if (with_dram) {
        json_t *c = json_object_get(s, "rapl_energy_uj");
        (void) json_object_set_new(c, "package-0/dram", json_integer(2 * dt));
    }
    return s;
}

static void t_feed_rapl(agent_measure_t *m, int64_t from_us, int64_t to_us, bool with_dram)
{
    for (int64_t t = from_us; t <= to_us; t += T_S / 10) {
        json_t *s = t_rapl_sample(t, with_dram);
        assert_int_equal(agent_measure_add_sample(m, s, NULL), 0);
        json_decref(s);
    }
}

// A host: epochs and the run get energy from the RAPL counters (package + dram, the wrap
// unwrapped); once a zone disappears, later epochs and the run go without, with the reason.
static void test_rapl_energy(void **state)
{
    (void) state;
    agent_measure_opts_t o = {.rate_hz = 10, .epochs = 3, .start_us = T_T0_US};
    agent_measure_t *m = agent_measure_new(&o, NULL);
    assert_non_null(m);
    t_feed_rapl(m, T_T0_US, T_T0_US + 2 * T_S, true); // the package wraps at 0.3 s
    int64_t read0 = T_T0_US + 2 * T_S - T_S / 20;
    assert_int_equal(agent_measure_add_epoch(m, t_epoch(0, 3 * T_S / 2), read0, NULL), 0);
    agent_measure_energy_t how = AGENT_MEASURE_NO_POWER;
    json_t *r0 = agent_measure_pop_epoch(m, read0, false, &how);
    assert_int_equal(how, AGENT_MEASURE_MEASURED);
    assert_true(fabs(t_num(r0, "energy_mj") - 12000.0 * 1.5) < 1e-6); // 12 W x 1.5 s
    assert_true(fabs(t_num(r0, "avg_power_mw") - 12000.0) < 1e-6);
    json_decref(r0);
    json_t *power = json_pack("{s:i, s:s}", "mode_id", 0, "mode_name", "DEFAULT");
    agent_measure_facts_t f = {.power_mode = power, .drop = JF_MEASURE_DROP_NONE};
    json_t *rec = agent_measure_record(m, &f);
    assert_int_equal(jf_measure_check(rec, NULL), 0);
    const json_t *energy = json_object_get(rec, "energy");
    assert_string_equal(json_string_value(json_object_get(energy, "total")), "rapl");
    assert_string_equal(json_string_value(json_object_get(energy, "source")), "rapl");
    assert_string_equal(json_string_value(json_object_get(energy, "covers")), "RAPL package+dram");
    assert_true(fabs(t_num(energy, "energy_mj") - 24000.0) < 1e-6);
    assert_int_equal(json_array_size(json_object_get(energy, "rails")), 2);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(rec, "telemetry"), "time_base")),
        "monotonic");
    json_decref(rec);
    // The dram zone disappears at 2.1 s: epoch 1 ends after it and goes without energy.
    t_feed_rapl(m, T_T0_US + 21 * T_S / 10, T_T0_US + 3 * T_S, false);
    assert_int_equal(agent_measure_add_epoch(m, t_epoch(1, T_S / 2), T_T0_US + 25 * T_S / 10,
                                             NULL),
                     0);
    json_t *r1 = agent_measure_pop_epoch(m, T_T0_US + 3 * T_S, false, &how);
    assert_int_equal(how, AGENT_MEASURE_ABSENT);
    assert_null(json_object_get(r1, "energy_mj"));
    json_decref(r1);
    rec = agent_measure_record(m, &f);
    assert_int_equal(jf_measure_check(rec, NULL), 0);
    energy = json_object_get(rec, "energy");
    assert_string_equal(json_string_value(json_object_get(energy, "total")), "none");
    assert_non_null(strstr(json_string_value(json_object_get(energy, "reason")),
                           "'package-0/dram' disappeared at mono_us 1002100000"));
    json_decref(rec);
    json_decref(power);
    agent_measure_destroy(&m);
}

// A platform whose trainer keeps its own clock at speed 10 (as a sim board's timing says,
// platform_test.c): wall-clock sample times become the trainer's times, the sampler runs at the
// requested rate x speed (capped at 50 Hz), an epoch's e2e_us in that clock meets them, and the
// record takes the platform's time base and energy source.
static void test_own_clock_time_base(void **state)
{
    (void) state;
    agent_platform_timing_t clock10 = {.own_clock = true, .speed = 10.0,
                                       .time_base = "simulated, speed 10",
                                       .energy_source = JF_MEASURE_SOURCE_SIMULATED};
    agent_measure_opts_t o = {.rate_hz = 10, .input_rail = "VDD_IN", .epochs = 2,
                              .start_us = T_T0_US, .timing = clock10};
    assert_int_equal(agent_measure_wall_rate_hz(&o), 50);
    agent_measure_opts_t slow = {.rate_hz = 2, .timing = {.own_clock = true, .speed = 1.5}};
    assert_int_equal(agent_measure_wall_rate_hz(&slow), 3);
    slow.timing.own_clock = false;
    assert_int_equal(agent_measure_wall_rate_hz(&slow), 2);
    agent_measure_t *m = agent_measure_new(&o, NULL);
    assert_non_null(m);
    t_feed(m, T_T0_US, T_T0_US + 7 * T_S / 10, T_S / 50, true); // 0.7 s wall = 7 s modelled
    // Read 0.6 s (wall) after the start: modelled 6 s; the epoch took 5 modelled seconds.
    int64_t read0 = T_T0_US + 6 * T_S / 10;
    assert_int_equal(agent_measure_add_epoch(m, t_epoch(0, 5 * T_S), read0, NULL), 0);
    agent_measure_energy_t how = AGENT_MEASURE_NO_POWER;
    json_t *r0 = agent_measure_pop_epoch(m, read0 + T_S / 10, false, &how);
    assert_int_equal(how, AGENT_MEASURE_MEASURED);
    assert_true(fabs(t_num(r0, "energy_mj") - T_POWER_MW * 5) < 1e-6);
    json_decref(r0);
    json_t *power = json_pack("{s:i, s:s}", "mode_id", 8, "mode_name", "MODE_20W_6CORE");
    agent_sampler_stats_t stats = {.samples = 36, .achieved_rate_hz = 49.0};
    agent_measure_facts_t f = {.power_mode = power, .sampling = &stats};
    json_t *rec = agent_measure_record(m, &f);
    assert_int_equal(jf_measure_check(rec, NULL), 0);
    const json_t *tel = json_object_get(rec, "telemetry");
    assert_string_equal(json_string_value(json_object_get(tel, "time_base")),
                        "simulated, speed 10");
    assert_int_equal(json_integer_value(json_object_get(tel, "wall_rate_hz")), 50);
    assert_int_equal(json_integer_value(json_object_get(tel, "rate_hz")), 10);
    assert_true(fabs(t_num(tel, "achieved_rate_hz") - 4.9) < 1e-9);
    assert_int_equal(json_integer_value(json_object_get(tel, "max_gap_us")), 200000);
    const json_t *energy = json_object_get(rec, "energy");
    assert_string_equal(json_string_value(json_object_get(energy, "source")), "simulated");
    assert_true(fabs(t_num(energy, "energy_mj") - T_POWER_MW * 7) < 1e-6);
    json_decref(rec);
    json_decref(power);
    agent_measure_destroy(&m);
    o.timing.speed = 0.5;
    assert_null(agent_measure_new(&o, NULL));
}

// The real host reader on a copy of the host fixture's powercap tree: the counters it reads
// (with their wrap ranges) give the energy their difference says; psys is used alone; a zone
// that becomes unreadable ends the energy with a reason.
static void t_write_uj(const char *root, const char *zone, const char *text)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/sys/class/powercap/%s/energy_uj", root, zone);
    assert_true(n > 0 && (size_t) n < sizeof path);
    assert_int_equal(jft_write_file(path, text), 0);
}

static int64_t t_host_sample(agent_platform_t *p, agent_measure_t *m)
{
    json_t *s = json_object();
    jf_err_t err = {0};
    if (agent_platform_sample(p, s, &err) != 0) {
        fail_msg("%s", err.msg);
    }
    assert_int_equal(agent_measure_add_sample(m, s, NULL), 0);
    int64_t mono = json_integer_value(json_object_get(s, "mono_us"));
    json_decref(s);
    return mono;
}

static void test_rapl_fixture(void **state)
{
    (void) state;
    char dir[PATH_MAX], src[PATH_MAX], sys[PATH_MAX + 8], proc[PATH_MAX + 8];
    assert_int_equal(jft_tmpdir_new(dir), 0);
    jft_fixture("sysfs/host", src);
    assert_int_equal(jft_copy_tree(src, dir), 0);
    (void) snprintf(sys, sizeof sys, "%s/sys", dir);
    (void) snprintf(proc, sizeof proc, "%s/proc", dir);
    agent_platform_opts_t po = {.kind = AGENT_PLATFORM_HOST, .sysfs_root = sys, .proc_root = proc};
    agent_platform_t *p = agent_platform_new(&po, NULL);
    assert_non_null(p);
    agent_measure_opts_t o = {.rate_hz = 1, .epochs = 2, .start_us = 0};
    agent_measure_t *m = agent_measure_new(&o, NULL);
    int64_t t0 = t_host_sample(p, m);
    t_write_uj(dir, "intel-rapl:1", "987659321\n");   // psys +5000 uJ
    t_write_uj(dir, "intel-rapl:0", "223456789\n");   // package: not used beside psys
    int64_t t1 = t_host_sample(p, m);
    assert_int_equal(agent_measure_add_epoch(m, t_epoch(0, t1 - t0), t1, NULL), 0);
    agent_measure_energy_t how = AGENT_MEASURE_NO_POWER;
    json_t *r0 = agent_measure_pop_epoch(m, t1, false, &how);
    assert_int_equal(how, AGENT_MEASURE_MEASURED);
    assert_true(fabs(t_num(r0, "energy_mj") - 5.0) < 1e-9);
    json_decref(r0);
    json_t *power = json_pack("{s:i, s:s}", "mode_id", 0, "mode_name", "DEFAULT");
    // The samples came microseconds apart: the sampler's own figures stand in for the rate.
    agent_sampler_stats_t stats = {.samples = 2, .achieved_rate_hz = 1.0};
    agent_measure_facts_t f = {.power_mode = power, .sampling = &stats};
    json_t *rec = agent_measure_record(m, &f);
    assert_non_null(rec);
    const json_t *energy = json_object_get(rec, "energy");
    assert_string_equal(json_string_value(json_object_get(energy, "covers")), "RAPL psys");
    assert_true(fabs(t_num(energy, "energy_mj") - 5.0) < 1e-9);
    json_decref(rec);
    t_write_uj(dir, "intel-rapl:1", "unreadable\n");
    (void) t_host_sample(p, m);
    rec = agent_measure_record(m, &f);
    assert_non_null(rec);
    energy = json_object_get(rec, "energy");
    assert_string_equal(json_string_value(json_object_get(energy, "total")), "none");
    assert_non_null(strstr(json_string_value(json_object_get(energy, "reason")),
                           "RAPL zone 'psys' disappeared"));
    json_decref(rec);
    json_decref(power);
    agent_measure_destroy(&m);
    agent_platform_destroy(&p);
    jft_tmpdir_remove(dir);
}

// ---------------------------------------------------------------------------------------------
// The sampler actor on the Xavier NX fixture tree

static void t_fixture_platform(agent_platform_t **ret)
{
    char sys[PATH_MAX], proc[PATH_MAX], etc[PATH_MAX];
    jft_fixture("sysfs/xavier-nx/sys", sys);
    jft_fixture("sysfs/xavier-nx/proc", proc);
    jft_fixture("sysfs/xavier-nx/etc", etc);
    agent_platform_opts_t o = {
        .kind = AGENT_PLATFORM_JETSON, .sysfs_root = sys, .proc_root = proc, .etc_root = etc};
    jf_err_t err = {0};
    *ret = agent_platform_new(&o, &err);
    if (!*ret) {
        fail_msg("%s", err.msg);
    }
}

// Waits up to timeout_us for the next event.
static int t_next(agent_sampler_t *s, agent_sampler_event_t *ev, int64_t timeout_us)
{
    zmq_pollitem_t item = {agent_sampler_handle(s), 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, (long) (timeout_us / 1000)) <= 0) {
        return -ETIMEDOUT;
    }
    return agent_sampler_recv(s, ev);
}

static void test_sampler_actor(void **state)
{
    (void) state;
    agent_platform_t *p = NULL;
    t_fixture_platform(&p);
    agent_sysfs_t *reader = agent_platform_take_reader(p);
    char proc[PATH_MAX];
    jft_fixture("sysfs/xavier-nx/proc", proc);
    agent_sampler_opts_t o = {.reader_p = &reader, .proc_root = proc};
    jf_err_t err = {0};
    agent_sampler_t *s = agent_sampler_new(&o, &err);
    assert_non_null(s);
    assert_null(reader); // the actor owns it now
    assert_int_equal(agent_sampler_start(s, 0, NULL), -EINVAL);
    // The fixture has no diskstats: a warning, and samples without the disk object.
    assert_int_equal(agent_sampler_start(s, 20, "nvme0n1"), 0);
    agent_sampler_event_t ev;
    int64_t first = -1, last = -1;
    int samples = 0, warnings = 0;
    while (samples < 6 && t_next(s, &ev, 2 * T_S) == 0) {
        if (ev.kind == AGENT_SAMPLER_WARNING) {
            assert_non_null(strstr(ev.text, "diskstats"));
            warnings++;
            continue;
        }
        assert_int_equal(ev.kind, AGENT_SAMPLER_SAMPLE);
        int64_t mono = json_integer_value(json_object_get(ev.sample, "mono_us"));
        assert_true(mono > last);
        first = first < 0 ? mono : first;
        last = mono;
        assert_non_null(json_object_get(ev.sample, "input_power_mw"));
        assert_null(json_object_get(ev.sample, "disk"));
        json_decref(ev.sample);
        samples++;
    }
    assert_int_equal(samples, 6);
    assert_int_equal(warnings, 1);
    // Deadlines 50 ms apart: 5 periods, give or take a scheduler's delay.
    assert_true(last - first >= 5 * 50000 - 2000 && last - first < 5 * 50000 + 40000);
    assert_int_equal(agent_sampler_stop(s), 0);
    int final = 0;
    while (t_next(s, &ev, 2 * T_S) == 0 && ev.kind != AGENT_SAMPLER_STOPPED) {
        final += ev.kind == AGENT_SAMPLER_SAMPLE;
        json_decref(ev.sample);
    }
    assert_int_equal(ev.kind, AGENT_SAMPLER_STOPPED);
    assert_true(final >= 1); // the final sample at stop
    assert_int_equal(ev.stats.samples, samples + final);
    assert_true(ev.stats.missed <= 1);
    assert_true(ev.stats.achieved_rate_hz > 15 && ev.stats.achieved_rate_hz < 21);
    // Idle: nothing more comes.
    assert_int_equal(t_next(s, &ev, 200000), -ETIMEDOUT);
    agent_sampler_destroy(&s);
    assert_null(s);
    agent_platform_destroy(&p);
}

// The energy record of a measure at static power (the facts a record needs, nothing else).
static json_t *t_energy(const agent_measure_t *m)
{
    json_t *power = json_pack("{s:i, s:s}", "mode_id", 0, "mode_name", "DEFAULT");
    agent_measure_facts_t f = {.power_mode = power, .drop = JF_MEASURE_DROP_NONE};
    json_t *rec = agent_measure_record(m, &f);
    json_decref(power);
    assert_non_null(rec);
    json_t *e = json_incref(json_object_get(rec, "energy"));
    json_decref(rec);
    return e;
}

// A measure carried through its JSON text, as the spool keeps it, into a new measure.
static agent_measure_t *t_resumed(const agent_measure_t *from, int64_t now_us)
{
    json_t *carry = agent_measure_carry(from);
    assert_non_null(carry);
    char *text = json_dumps(carry, JSON_COMPACT);
    json_decref(carry);
    json_t *back = json_loads(text, 0, NULL);
    free(text);
    agent_measure_opts_t o = {
        .rate_hz = 10, .input_rail = "VDD_IN", .epochs = 3, .start_us = now_us};
    agent_measure_t *m = agent_measure_new(&o, NULL);
    jf_err_t err = {0};
    assert_int_equal(agent_measure_resume(m, back, &err), 0);
    json_decref(back);
    return m;
}

// A run its first agent measured for 3 s (10 Hz, static power), resumed at 5 s by a second.
static agent_measure_t *t_first_agent_then_resumed(void)
{
    agent_measure_opts_t o = {
        .rate_hz = 10, .input_rail = "VDD_IN", .epochs = 3, .start_us = T_T0_US};
    agent_measure_t *a = agent_measure_new(&o, NULL);
    t_feed(a, T_T0_US, T_T0_US + 3 * T_S, T_S / 10, true);
    agent_measure_t *b = t_resumed(a, T_T0_US + 5 * T_S);
    agent_measure_destroy(&a);
    return b;
}

// A run measured by three agent processes in turn (0-3 s, 5-8 s, 9-10 s; nothing sampled in
// between): its energy covers the whole 10 s, the 3 s no agent sampled bridged and labelled.
static void test_carry_resume(void **state)
{
    (void) state;
    agent_measure_t *b = t_first_agent_then_resumed();
    t_feed(b, T_T0_US + 5 * T_S, T_T0_US + 8 * T_S, T_S / 10, true);
    agent_measure_t *c = t_resumed(b, T_T0_US + 9 * T_S);
    agent_measure_destroy(&b);
    t_feed(c, T_T0_US + 9 * T_S, T_T0_US + 10 * T_S, T_S / 10, true);
    json_t *e = t_energy(c);
    printf("energy_mj=%.3f covered_us=%lld unobserved_us=%lld interpolated_mj=%.3f\n",
           t_num(e, "energy_mj"), (long long) t_num(e, "covered_us"),
           (long long) t_num(e, "unobserved_us"), t_num(e, "interpolated_mj"));
    assert_true(fabs(t_num(e, "energy_mj") - T_POWER_MW * 10) < 1e-3);
    assert_int_equal((int64_t) t_num(e, "covered_us"), 10 * T_S);
    assert_int_equal((int64_t) t_num(e, "unobserved_us"), 3 * T_S);
    assert_true(fabs(t_num(e, "interpolated_mj") - T_POWER_MW * 3) < 1e-3);
    assert_true(fabs(t_num(e, "avg_power_mw") - T_POWER_MW) < 1e-6);
    json_t *soc = json_array_get(json_object_get(e, "rails"), 1);
    assert_string_equal(json_string_value(json_object_get(soc, "name")), "VDD_SOC");
    assert_true(fabs(t_num(soc, "energy_mj") - 1600.0 * 10) < 1e-3);
    json_decref(e);
    agent_measure_destroy(&c);
}

// A run resumed after its trainer ended (nothing left to sample): the resumed measure took no
// sample, so its record counts none; the carried latest sample, which the accumulator holds to
// bridge the gap, is the earlier agent's and counted there (the session adds those). It was
// counted twice once: a chaos run stored one sample fewer than its measure said.
static void test_carry_resume_ended(void **state)
{
    (void) state;
    agent_measure_t *b = t_first_agent_then_resumed();
    json_t *power = json_pack("{s:i, s:s}", "mode_id", 0, "mode_name", "DEFAULT");
    agent_measure_facts_t f = {.power_mode = power, .drop = JF_MEASURE_DROP_NONE};
    json_t *rec = agent_measure_record(b, &f);
    json_decref(power);
    assert_non_null(rec);
    json_t *tel = json_object_get(rec, "telemetry");
    assert_true(json_is_object(tel));
    assert_int_equal(json_integer_value(json_object_get(tel, "samples")), 0);
    // The energy carried is all there is: 3 s at the static power.
    json_t *e = json_object_get(rec, "energy");
    assert_true(fabs(t_num(e, "energy_mj") - T_POWER_MW * 3) < 1e-3);
    json_decref(rec);
    agent_measure_destroy(&b);
}

// A carry that is not one is refused with what is wrong, and the measure counts on its own.
static void test_carry_bad(void **state)
{
    (void) state;
    agent_measure_opts_t o = {
        .rate_hz = 10, .input_rail = "VDD_IN", .epochs = 3, .start_us = T_T0_US};
    static const char *const bad[][2] = {
        {"{}", "measure carry: "},
        {"{\"start_us\":-1,\"power_source\":\"\",\"unobserved_us\":0,\"interpolated_mj\":0,"
         "\"energy\":{\"total\":0,\"energy_mj\":0,\"covered_us\":0,\"peak_power_mw\":0,"
         "\"rails\":[]}}",
         "out of range"},
        {"{\"start_us\":1,\"power_source\":\"\",\"unobserved_us\":0,\"interpolated_mj\":0,"
         "\"energy\":{\"total\":9,\"energy_mj\":0,\"covered_us\":0,\"peak_power_mw\":0,"
         "\"rails\":[]}}",
         "energy out of range"},
        {"{\"start_us\":1,\"power_source\":\"\",\"unobserved_us\":0,\"interpolated_mj\":0,"
         "\"energy\":{\"total\":1,\"energy_mj\":5,\"covered_us\":1,\"peak_power_mw\":0,"
         "\"rails\":[{\"name\":\"\",\"energy_mj\":1,\"covered_us\":1,\"peak_power_mw\":0,"
         "\"n\":1}]}}",
         "energy.rails[0] out of range"},
        {"{\"start_us\":1,\"power_source\":\"\",\"unobserved_us\":0,\"interpolated_mj\":0,"
         "\"energy\":{\"total\":1,\"energy_mj\":5,\"covered_us\":1,\"peak_power_mw\":0,"
         "\"rails\":[]},\"last\":{\"mono_us\":-5}}",
         "measure carry: last"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        agent_measure_t *m = agent_measure_new(&o, NULL);
        json_t *carry = json_loads(bad[i][0], 0, NULL);
        assert_non_null(carry);
        jf_err_t err = {0};
        assert_int_equal(agent_measure_resume(m, carry, &err), -EINVAL);
        if (!strstr(err.msg, bad[i][1])) {
            fail_msg("row %zu: '%s' lacks '%s'", i, err.msg, bad[i][1]);
        }
        json_decref(carry);
        t_feed(m, T_T0_US, T_T0_US + T_S, T_S / 10, true);
        json_t *e = t_energy(m);
        assert_true(fabs(t_num(e, "energy_mj") - T_POWER_MW) < 1e-3);
        assert_null(json_object_get(e, "unobserved_us"));
        json_decref(e);
        agent_measure_destroy(&m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_epoch_energy),        cmocka_unit_test(test_no_power),
        cmocka_unit_test(test_long_epoch_fallback), cmocka_unit_test(test_record),
        cmocka_unit_test(test_record_tegrastats),   cmocka_unit_test(test_sampler_actor),
        cmocka_unit_test(test_rapl_energy),         cmocka_unit_test(test_own_clock_time_base),
        cmocka_unit_test(test_rapl_fixture),        cmocka_unit_test(test_carry_resume),
        cmocka_unit_test(test_carry_resume_ended),  cmocka_unit_test(test_carry_bad),
        cmocka_unit_test(test_gpu_before),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
