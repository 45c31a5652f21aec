/* Unit tests for the nested and open schemas (jf_schema_nested.c): the measure record
 * (jf_measure_schema.c) and the telemetry sample (jf_telemetry_sample.c). decode(encode(x)) == x
 * with every field at its lower and at its upper bound (arrays full), real samples of the sim,
 * host and tegrastats readers unchanged through decode and encode, and refusals by code and
 * message: out of range, wrong type, too many items, unknown member (refused in a measure
 * record, kept in a sample). Prints roundtrips_<schema>=N and refusals_<schema>=N. */
#include "jf_msg_measure.h"
#include "jf_msg_run.h"
#include "jf_telemetry_sample.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

// ---------------------------------------------------------------------------------------------
// A record filled at its bounds, by walking the tables.

static size_t s_n_filled; // leaves set by the last fill, for the printed figure

// A string the field accepts: the longest run of 'a' without a vocabulary, else a candidate.
static void t_fill_str(const jf_schema_field_t *f, char *m, bool hi)
{
    static const char *const candidates[] = {"tegrastats", "nvme", "MODE_15W", "/mnt/data", NULL};
    if (!f->is_valid) {
        size_t n = hi ? f->size - 1 : 1;
        memset(m, 'a', n);
        m[n] = '\0';
        return;
    }
    for (const char *const *c = candidates; *c; c++) {
        if (f->is_valid(*c)) {
            (void) snprintf(m, f->size, "%s", *c);
            return;
        }
    }
    fail_msg("no candidate string for '%s'", f->name);
}

static void t_fill(const jf_schema_t *schema, void *base, bool hi);

static void t_fill_scalar(const jf_schema_field_t *f, void *m, bool hi)
{
    int64_t scale = f->scale > 0 ? f->scale : 1;
    int64_t v = (hi ? f->hi : f->lo) * scale;
    s_n_filled++;
    switch (f->type) {
    case JF_SCHEMA_STR:
        t_fill_str(f, m, hi);
        break;
    case JF_SCHEMA_INT:
        *(int *) m = (int) v;
        break;
    case JF_SCHEMA_I64:
        *(int64_t *) m = v;
        break;
    case JF_SCHEMA_BOOL:
        *(bool *) m = hi;
        break;
    case JF_SCHEMA_NUM:
        *(double *) m = hi ? f->hi_num : f->lo_num;
        break;
    case JF_SCHEMA_ENUM: {
        int last = 0;
        while (f->names[last + 1]) {
            last++;
        }
        *(int *) m = hi ? last : 0;
        break;
    }
    default:
        fail_msg("'%s': type %d is not a scalar", f->name, (int) f->type);
    }
}

// Full arrays at the upper bound, one element at the lower; map names are made unique.
static void t_fill_arr(const jf_schema_field_t *f, void *base, bool hi)
{
    size_t n = hi ? f->max_count : 1;
    char *arr = (char *) base + f->offset;
    for (size_t i = 0; i < n; i++) {
        void *e = arr + i * f->elem_size;
        if (f->sub) {
            t_fill(f->sub, e, hi);
        } else {
            t_fill_scalar(f->elem, e, hi);
        }
        if (f->map) {
            (void) snprintf((char *) e + f->sub->fields[0].offset, f->sub->fields[0].size, "z%zu",
                            i);
        }
    }
    *(size_t *) ((char *) base + f->count_offset) = n;
}

static void t_fill(const jf_schema_t *schema, void *base, bool hi)
{
    for (size_t i = 0; i < schema->n_fields; i++) {
        const jf_schema_field_t *f = &schema->fields[i];
        if (f->has_flag) {
            *(bool *) ((char *) base + f->has_offset) = true;
        }
        if (f->type == JF_SCHEMA_OBJ) {
            t_fill(f->sub, (char *) base + f->offset, hi);
        } else if (f->type == JF_SCHEMA_ARR) {
            t_fill_arr(f, base, hi);
        } else {
            t_fill_scalar(f, (char *) base + f->offset, hi);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The measure record

static jf_measure_t s_m1, s_m2; // ~40 kB each

// The rules across members that a table walk cannot know: at the lower bound total is none
// (no figures, a reason); at the upper it is rapl (figures, no reason) with source tegrastats.
static void t_measure_at(jf_measure_t *m, bool hi)
{
    memset(m, 0, sizeof *m);
    s_n_filled = 0;
    t_fill(jf_measure_schema(), m, hi);
    if (!hi) {
        m->has_energy = false;
        m->input_rail[0] = m->energy_source[0] = m->covers[0] = '\0';
        m->tegrastats_interval_ms = 0;
    } else {
        m->reason[0] = '\0';
    }
    (void) snprintf(m->medium, sizeof m->medium, "nvme"); // a vocabulary checked by s_check
}

static void test_measure_bounds_roundtrip(void **state)
{
    (void) state;
    size_t leaves = 0;
    for (int hi = 0; hi <= 1; hi++) {
        t_measure_at(&s_m1, hi);
        leaves += s_n_filled;
        json_t *j1 = jf_measure_to_json(&s_m1);
        jf_err_t err = {0};
        if (!j1) {
            // Say which member the builder's check refused.
            json_t *raw = jf_schema_encode(jf_measure_schema(), &s_m1);
            (void) json_object_set_new(raw, "kind", json_string("measure"));
            (void) jf_measure_check(raw, &err);
            fail_msg("bound %d: the builder refused it: %s", hi, err.msg);
        }
        if (jf_measure_decode(j1, &s_m2, &err) != 0) {
            fail_msg("bound %d: %s", hi, err.msg);
        }
        json_t *j2 = jf_measure_to_json(&s_m2);
        assert_true(json_equal(j1, j2));
        // Values, not only forms: the deepest and the last elements came back.
        assert_int_equal(s_m2.n_cache, s_m1.n_cache);
        assert_int_equal(s_m2.n_rails, s_m1.n_rails);
        assert_true(s_m2.rails[s_m2.n_rails - 1].peak_power_mw ==
                    s_m1.rails[s_m1.n_rails - 1].peak_power_mw);
        assert_int_equal(s_m2.power.n_clusters, s_m1.power.n_clusters);
        assert_int_equal(s_m2.power.clusters[s_m2.power.n_clusters - 1].max_hz,
                         s_m1.power.clusters[s_m1.power.n_clusters - 1].max_hz);
        assert_int_equal(s_m2.cache[s_m2.n_cache - 1].epoch, hi ? JF_EPOCHS_MAX - 1 : 0);
        assert_int_equal(s_m2.total, hi ? JF_MEASURE_TOTAL_RAPL : JF_MEASURE_TOTAL_NONE);
        assert_int_equal(s_m2.disk_read_bytes, s_m1.disk_read_bytes);
        assert_string_equal(s_m2.mount, s_m1.mount);
        if (jf_schema_validate(jf_measure_schema(), &s_m2, &err) != 0) {
            fail_msg("bound %d: validate: %s", hi, err.msg);
        }
        json_decref(j1);
        json_decref(j2);
    }
    printf("roundtrips_measure=%zu\n", leaves);
}

// The good fixtures' measure records decode and come back equal in value.
static void test_measure_fixtures(void **state)
{
    (void) state;
    static const char *const files[] = {
        "run-progress-measure.json", "run-progress-measure-none-reason.json",
        "run-progress-measure-rapl.json", "run-progress-measure-sim.json",
        "run-progress-measure-tegrastats.json"};
    char path[4096];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        (void) snprintf(path, sizeof path, "%s/messages/good/%s", getenv("JF_FIXTURES"), files[i]);
        json_t *msg = json_load_file(path, 0, NULL);
        assert_non_null(msg);
        const json_t *rec = NULL;
        size_t k = 0;
        json_array_foreach(json_object_get(msg, "records"), k, rec)
        {
            if (strcmp(json_string_value(json_object_get(rec, "kind")), "measure") != 0) {
                continue;
            }
            jf_err_t err = {0};
            if (jf_measure_decode(rec, &s_m1, &err) != 0) {
                fail_msg("%s: %s", files[i], err.msg);
            }
            json_t *back = jf_measure_to_json(&s_m1);
            assert_non_null(back);
            assert_int_equal(jf_measure_decode(back, &s_m2, NULL), 0);
            json_t *again = jf_measure_to_json(&s_m2);
            assert_true(json_equal(back, again));
            assert_int_equal(json_object_size(back), json_object_size(rec));
            json_decref(back);
            json_decref(again);
        }
        json_decref(msg);
    }
}

typedef struct t_refusal {
    const char *member; // "a" or "a.b" of the good record
    const char *json;   // its new value
    int code;
    const char *frag;
} t_refusal_t;

static json_t *t_replaced(const json_t *good, const char *member, const char *value)
{
    json_t *rec = json_deep_copy(good);
    char key[64];
    (void) snprintf(key, sizeof key, "%s", member);
    char *dot = strchr(key, '.');
    json_t *parent = rec;
    if (dot) {
        *dot = '\0';
        parent = json_object_get(rec, key);
    }
    (void) json_object_set_new(parent, dot ? dot + 1 : key,
                               json_loads(value, JSON_DECODE_ANY, NULL));
    return rec;
}

static void test_measure_refusals(void **state)
{
    (void) state;
    static const t_refusal_t rows[] = {
        {"telemetry.rate_hz", "0", -EINVAL,
         "measure.telemetry: 'rate_hz' must be in [1, 50], got 0"},
        {"telemetry.max_gap_us", "1.5", -EPROTO, "'max_gap_us' must be an integer, got real"},
        {"energy.total", "3", -EPROTO, "measure.energy: 'total' must be one of"},
        {"energy.rails", "[1]", -EPROTO, "measure.energy: rails[0]: must be an object"},
        {"energy.rails",
         "[{\"name\":\"a\",\"energy_mj\":1,\"avg_power_mw\":1,\"peak_power_mw\":1,"
         "\"volts\":1}]",
         -EPROTO, "measure.energy: rails[0]: unknown member 'volts'"},
        {"power_mode.online_cpus", "[0, \"1\"]", -EINVAL, "'online_cpus[1]' must be an integer"},
        {"power_mode.cpu_clusters", "[{\"first_core\":64,\"min_hz\":1,\"max_hz\":2}]", -EINVAL,
         "measure.power_mode: cpu_clusters[0]: 'first_core' must be in [0, 63], got 64"},
        {"cache", "[{\"epoch\":1000}]", -EINVAL, "measure.cache[0]: 'epoch' must be in [0, 999]"},
        {"cache", "[{\"epoch\":1,\"hit\":1}]", -EPROTO, "measure.cache[0]: unknown member 'hit'"},
        {"disk.reads", "-1", -EINVAL,
         "measure.disk: 'reads' must be in [0, 1099511627776], got -1"},
        {"drop_caches", "\"all\"", -EINVAL, "'drop_caches' must be one of none, helper"},
        {"extra_member", "1", -EPROTO, "unknown member 'extra_member'"},
    };
    char path[4096];
    (void) snprintf(path, sizeof path, "%s/messages/good/run-progress-measure.json",
                    getenv("JF_FIXTURES"));
    json_t *msg = json_load_file(path, 0, NULL);
    const json_t *good = json_array_get(json_object_get(msg, "records"), 1);
    assert_int_equal(jf_measure_check(good, NULL), 0);
    // Too many rails: 17.
    json_t *rails = json_array();
    for (int i = 0; i <= JF_MEASURE_RAILS_MAX; i++) {
        (void) json_array_append_new(rails,
                                     json_pack("{s:s, s:f, s:f, s:f}", "name", "R", "energy_mj",
                                               1.0, "avg_power_mw", 1.0, "peak_power_mw", 1.0));
    }
    char *text = json_dumps(rails, JSON_COMPACT);
    json_decref(rails);
    size_t n = sizeof rows / sizeof rows[0];
    for (size_t i = 0; i <= n; i++) {
        t_refusal_t r = i < n ? rows[i]
                              : (t_refusal_t){"energy.rails", text, -EPROTO,
                                              "measure.energy: 'rails' must be an array of at most "
                                              "16 items"};
        json_t *rec = t_replaced(good, r.member, r.json);
        jf_err_t err = {0};
        int rc = jf_measure_check(rec, &err);
        if (rc != r.code || !strstr(err.msg, r.frag)) {
            fail_msg("%s = %s: rc %d msg '%s'", r.member, r.json, rc, err.msg);
        }
        json_decref(rec);
    }
    free(text);
    json_decref(msg);
    printf("refusals_measure=%zu\n", n + 1);
}

// ---------------------------------------------------------------------------------------------
// The telemetry sample

static jf_telemetry_sample_t s_s1, s_s2;

static json_t *t_load(const char *name)
{
    char path[4096];
    (void) snprintf(path, sizeof path, "%s/samples/%s", getenv("JF_FIXTURES"), name);
    json_error_t jerr;
    json_t *j = json_load_file(path, 0, &jerr);
    if (!j) {
        fail_msg("%s: %s", path, jerr.text);
    }
    return j;
}

// decode then encode gives the sample back member for member, unknown members included.
static void t_sample_same(const json_t *sample, const char *what)
{
    jf_err_t err = {0};
    if (jf_telemetry_sample_decode(sample, &s_s1, &err) != 0) {
        fail_msg("%s: %s", what, err.msg);
    }
    // The message check also wants the time, which a tegrastats line may lack.
    assert_int_equal(jf_telemetry_sample_check(sample, NULL), s_s1.has_t_us ? 0 : -EPROTO);
    json_t *back = jf_telemetry_sample_encode(&s_s1);
    if (!json_equal(back, sample)) {
        char *a = json_dumps(sample, JSON_SORT_KEYS), *b = json_dumps(back, JSON_SORT_KEYS);
        fail_msg("%s: in %s\nout %s", what, a, b);
    }
    json_decref(back);
    jf_telemetry_sample_fini(&s_s1);
}

static void test_sample_real(void **state)
{
    (void) state;
    json_t *sim = t_load("sim-agx-xavier.json");
    t_sample_same(sim, "sim");
    assert_int_equal(jf_telemetry_sample_decode(sim, &s_s1, NULL), 0);
    assert_int_equal(s_s1.n_rails, 6);
    assert_string_equal(s_s1.rails[2].name, "SOC");
    assert_true(s_s1.rails[2].has_power_mw && s_s1.rails[2].power_mw == 1275);
    assert_true(s_s1.has_temps_mc && s_s1.n_temps_mc == 8);
    assert_string_equal(s_s1.temps_mc[0].name, "CPU");
    assert_int_equal(s_s1.temps_mc[0].value, 38090);
    assert_int_equal(s_s1.n_cpu_core_freq_hz, 8);
    assert_int_equal(s_s1.gpu_freq_hz, 1377000000);
    assert_false(s_s1.has_gpu_load_pct); // not readable on the sim tree: absent, not 0
    assert_null(s_s1.extra);             // every member of a Jetson reader's sample is in the table
    jf_telemetry_sample_fini(&s_s1);
    json_decref(sim);
    json_t *host = t_load("host.json");
    t_sample_same(host, "host");
    json_decref(host);
}

// Every real tegrastats line of the reference, as --parse-tegrastats prints it.
static void test_sample_tegrastats(void **state)
{
    (void) state;
    char path[4096];
    (void) snprintf(path, sizeof path, "%s/samples/tegrastats.jsonl", getenv("JF_FIXTURES"));
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[8192];
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        json_t *s = json_loads(line, 0, NULL);
        assert_non_null(s);
        (void) snprintf(path, sizeof path, "tegrastats line %zu", ++n);
        t_sample_same(s, path);
        json_decref(s);
    }
    (void) fclose(f);
    printf("tegrastats_samples=%zu\n", n);
}

static void test_sample_bounds_and_extra(void **state)
{
    (void) state;
    size_t leaves = 0;
    for (int hi = 0; hi <= 1; hi++) {
        memset(&s_s1, 0, sizeof s_s1);
        s_n_filled = 0;
        t_fill(jf_telemetry_sample_schema(), &s_s1, hi);
        leaves += s_n_filled;
        s_s1.cpu_core_load_pct[0] = NAN;               // an offline core
        s_s1.cpu_core_freq_hz[0] = JF_SCHEMA_NULL_I64; // its clock
        json_t *j1 = jf_telemetry_sample_encode(&s_s1);
        assert_non_null(j1);
        assert_true(json_is_null(json_array_get(json_object_get(j1, "cpu_core_freq_hz"), 0)));
        jf_err_t err = {0};
        if (jf_telemetry_sample_decode(j1, &s_s2, &err) != 0) {
            fail_msg("bound %d: %s", hi, err.msg);
        }
        json_t *j2 = jf_telemetry_sample_encode(&s_s2);
        assert_true(json_equal(j1, j2));
        assert_int_equal(s_s2.n_rails, s_s1.n_rails);
        assert_int_equal(s_s2.rails[s_s2.n_rails - 1].power_mw,
                         hi ? JF_SAMPLE_POWER_MAX_MW : -JF_SAMPLE_POWER_MAX_MW);
        assert_true(isnan(s_s2.cpu_core_load_pct[0]));
        assert_int_equal(s_s2.cpu_core_freq_hz[0], JF_SCHEMA_NULL_I64);
        assert_int_equal(s_s2.temps_mc[s_s2.n_temps_mc - 1].value, hi ? 1000000 : -273150);
        if (jf_schema_validate(jf_telemetry_sample_schema(), &s_s2, &err) != 0) {
            fail_msg("bound %d: validate: %s", hi, err.msg);
        }
        json_decref(j1);
        json_decref(j2);
        jf_telemetry_sample_fini(&s_s2);
    }
    printf("roundtrips_telemetry_sample=%zu\n", leaves);
    // Unknown members are kept, at any depth the message check allows, and written back.
    json_t *s = json_pack("{s:I, s:s, s:{s:i}, s:[i, i]}", "t_us", (json_int_t) 1, "note", "x",
                          "fan", "rpm", 1200, "sim_power_mw", 3, 4);
    t_sample_same(s, "unknown members");
    assert_int_equal(jf_telemetry_sample_decode(s, &s_s1, NULL), 0);
    assert_int_equal(json_object_size(s_s1.extra), 3);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(s_s1.extra, "fan"), "rpm")),
                     1200);
    jf_telemetry_sample_fini(&s_s1);
    assert_null(s_s1.extra);
    json_decref(s);
}

static void test_sample_refusals(void **state)
{
    (void) state;
    static const t_refusal_t rows[] = {
        {"t_us", "0", -EINVAL, "'t_us' must be in [1, 4611686018427387904], got 0"},
        {"t_us", "\"now\"", -EPROTO, "'t_us' must be an integer"},
        {"gpu_freq_hz", "-1", -EINVAL, "'gpu_freq_hz' must be in [0, 100000000000], got -1"},
        {"cpu_load_pct", "100.5", -EINVAL, "'cpu_load_pct' must be in [0, 100], got 100.5"},
        {"cpu_core_load_pct", "[101]", -EINVAL, "'cpu_core_load_pct[0]' must be in [0, 100]"},
        {"cpu_core_freq_hz", "[1, -5]", -EINVAL, "'cpu_core_freq_hz[1]' must be an integer in"},
        {"cpu_online", "[\"yes\"]", -EPROTO, "'cpu_online[0]' must be a boolean, got string"},
        {"temps_mc", "{\"CPU\": 2000000}", -EINVAL, "'temps_mc.CPU' must be in [-273150, 1000000]"},
        {"temps_mc", "[1]", -EPROTO, "'temps_mc' must be an object of at most 32 members"},
        {"rails", "[{\"name\":\"VDD_IN\",\"power_mw\":\"x\"}]", -EPROTO,
         "rails[0]: 'power_mw' must be an integer, got string"},
        {"rails", "[{\"power_mw\":1}]", -EPROTO, "rails[0]: 'name' must be a string, got nothing"},
        {"rails", "[{\"name\":\"A\",\"watts\":1}]", -EPROTO, "rails[0]: unknown member 'watts'"},
        {"disk", "{\"device\":\"sda\",\"reads\":1,\"read_bytes\":1,\"read_time_us\":1}", -EPROTO,
         "'disk.in_flight' must be an integer, got nothing"},
        {"rapl_energy_uj", "{\"package-0\": -1}", -EINVAL, "'rapl_energy_uj.package-0' must be in"},
        {"source", "7", -EPROTO, "'source' must be a string, got integer"},
    };
    json_t *good = t_load("sim-agx-xavier.json");
    size_t n = sizeof rows / sizeof rows[0];
    for (size_t i = 0; i < n; i++) {
        json_t *s = t_replaced(good, rows[i].member, rows[i].json);
        jf_err_t err = {0};
        int rc = jf_telemetry_sample_check(s, &err);
        if (rc != rows[i].code || !strstr(err.msg, rows[i].frag)) {
            fail_msg("%s = %s: rc %d msg '%s'", rows[i].member, rows[i].json, rc, err.msg);
        }
        json_decref(s);
    }
    json_decref(good);
    printf("refusals_telemetry_sample=%zu\n", n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measure_bounds_roundtrip),
        cmocka_unit_test(test_measure_fixtures),
        cmocka_unit_test(test_measure_refusals),
        cmocka_unit_test(test_sample_real),
        cmocka_unit_test(test_sample_tegrastats),
        cmocka_unit_test(test_sample_bounds_and_extra),
        cmocka_unit_test(test_sample_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
