/* Unit tests for agent_tegrastats (one tegrastats line -> telemetry sample) and agent_import (a
 * tegrastats log -> one sample per line): every line of tests/fixtures/tegrastats/real-lines.jsonl
 * against its hand-checked expected values, tables of synthetic and malformed lines, and the
 * per-family fixture logs through the importer. */
#include "agent_import.h"
#include "agent_options.h"
#include "agent_tegrastats.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define T_BYTES_PER_MB INT64_C(1048576)
#define T_HZ_PER_MHZ   INT64_C(1000000)
#define T_REAL_LINES   29 // records in real-lines.jsonl

static void t_fixture_path(char *buf, size_t size, const char *name)
{
    const char *root = getenv("JF_FIXTURES");
    assert_non_null(root);
    int n = snprintf(buf, size, "%s/tegrastats/%s", root, name);
    assert_true(n > 0 && (size_t) n < size);
}

// ---------------------------------------------------------------------------------------------
// Every real line against its expected values (units converted: MB -> bytes, MHz -> Hz, degC ->
// milli-degC; -256 C is an offline sensor and must be left out).

// Each check prints what differs and returns 1 for a mismatch, 0 for a match.
static int t_mismatch(const char *id, const char *key, const char *what)
{
    print_message("%s: %s: %s\n", id, key, what);
    return 1;
}

// sample[skey] must be the integer expected[ekey] * scale, or absent when ekey is.
static int t_check_scaled(const char *id, const json_t *sample, const char *skey,
                          const json_t *expected, const char *ekey, int64_t scale)
{
    const json_t *e = json_object_get(expected, ekey);
    const json_t *s = json_object_get(sample, skey);
    if (!e) {
        return s ? t_mismatch(id, skey, "present, expected absent") : 0;
    }
    if (!json_is_integer(s) || json_integer_value(s) != json_integer_value(e) * scale) {
        return t_mismatch(id, skey, "missing or wrong");
    }
    return 0;
}

// sample[skey] must be the number expected[ekey] (loads: printed as integers, stored as reals).
static int t_check_number(const char *id, const json_t *sample, const char *skey,
                          const json_t *expected, const char *ekey)
{
    const json_t *e = json_object_get(expected, ekey);
    const json_t *s = json_object_get(sample, skey);
    if (!e) {
        return s ? t_mismatch(id, skey, "present, expected absent") : 0;
    }
    if (!json_is_number(s) || json_number_value(s) != json_number_value(e)) {
        return t_mismatch(id, skey, "missing or wrong");
    }
    return 0;
}

static int t_check_core(const char *id, const json_t *sample, size_t i, const json_t *cpu)
{
    const json_t *load = json_array_get(json_object_get(sample, "cpu_core_load_pct"), i);
    const json_t *freq = json_array_get(json_object_get(sample, "cpu_core_freq_hz"), i);
    const json_t *online = json_array_get(json_object_get(sample, "cpu_online"), i);
    if (json_is_string(cpu)) { // "off"
        bool ok = json_is_null(load) && json_is_null(freq) && json_is_false(online);
        return ok ? 0 : t_mismatch(id, "cpus", "an off core is not null/null/false");
    }
    bool ok =
        json_is_real(load) &&
        json_real_value(load) == (double) json_integer_value(json_object_get(cpu, "load_pct")) &&
        json_integer_value(freq) ==
            json_integer_value(json_object_get(cpu, "freq_mhz")) * T_HZ_PER_MHZ &&
        json_is_true(online);
    return ok ? 0 : t_mismatch(id, "cpus", "an online core differs");
}

static int t_check_cpus(const char *id, const json_t *sample, const json_t *expected)
{
    const json_t *cpus = json_object_get(expected, "cpus");
    if (!cpus) {
        return json_object_get(sample, "cpu_online") ? t_mismatch(id, "cpus", "unexpected") : 0;
    }
    const char *keys[] = {"cpu_core_load_pct", "cpu_core_freq_hz", "cpu_online"};
    for (size_t k = 0; k < 3; k++) {
        if (json_array_size(json_object_get(sample, keys[k])) != json_array_size(cpus)) {
            return t_mismatch(id, keys[k], "wrong length");
        }
    }
    int bad = 0;
    double sum = 0.0;
    size_t n_online = 0;
    size_t i = 0;
    const json_t *cpu = NULL;
    json_array_foreach(cpus, i, cpu)
    {
        bad += t_check_core(id, sample, i, cpu);
        n_online += !json_is_string(cpu);
        sum += (double) json_integer_value(json_object_get(cpu, "load_pct"));
    }
    double mean = json_number_value(json_object_get(sample, "cpu_load_pct"));
    return bad + (fabs(mean - sum / (double) n_online) > 1e-9
                      ? t_mismatch(id, "cpu_load_pct", "not the mean over online cores")
                      : 0);
}

// gpu_mhz is one int when one clock is printed and a list when several are.
static int t_check_gpu_freq(const char *id, const json_t *sample, const json_t *expected)
{
    const json_t *e = json_object_get(expected, "gpu_mhz");
    const json_t *gpcs = json_object_get(sample, "gpu_gpc_freq_hz");
    if (!json_is_array(e)) {
        return t_check_scaled(id, sample, "gpu_freq_hz", expected, "gpu_mhz", T_HZ_PER_MHZ) +
               (gpcs ? t_mismatch(id, "gpu_gpc_freq_hz", "present for one clock") : 0);
    }
    int64_t first = json_integer_value(json_array_get(e, 0)) * T_HZ_PER_MHZ;
    int bad = json_integer_value(json_object_get(sample, "gpu_freq_hz")) == first
                  ? 0
                  : t_mismatch(id, "gpu_freq_hz", "not the first GPC");
    if (json_array_size(gpcs) != json_array_size(e)) {
        return bad + t_mismatch(id, "gpu_gpc_freq_hz", "wrong length");
    }
    for (size_t i = 0; i < json_array_size(e); i++) {
        int64_t hz = json_integer_value(json_array_get(e, i)) * T_HZ_PER_MHZ;
        bad += json_integer_value(json_array_get(gpcs, i)) == hz
                   ? 0
                   : t_mismatch(id, "gpu_gpc_freq_hz", "wrong clock");
    }
    return bad;
}

static int t_check_temps(const char *id, const json_t *sample, const json_t *expected)
{
    const json_t *temps = json_object_get(sample, "temps_mc");
    const char *zone = NULL;
    const json_t *c = NULL;
    size_t n_online = 0;
    int bad = 0;
    json_object_foreach((json_t *) json_object_get(expected, "temps_c"), zone, c)
    {
        const json_t *mc = json_object_get(temps, zone);
        if (json_number_value(c) == -256.0) {
            bad += mc ? t_mismatch(id, zone, "offline sensor reported") : 0;
            continue;
        }
        n_online++;
        bad +=
            json_is_integer(mc) && json_integer_value(mc) == llround(json_number_value(c) * 1000.0)
                ? 0
                : t_mismatch(id, zone, "temperature missing or wrong");
    }
    return bad +
           (json_object_size(temps) != n_online ? t_mismatch(id, "temps_mc", "extra zones") : 0);
}

// Rails in printed order (the expected object keeps file order); input_power_mw from the input
// rail where the board has one.
static int t_check_rails(const char *id, const json_t *sample, const json_t *expected)
{
    const json_t *rails = json_object_get(sample, "rails");
    const json_t *erails = json_object_get(expected, "rails_mw");
    if (json_array_size(rails) != json_object_size(erails)) {
        return t_mismatch(id, "rails", "wrong count");
    }
    const char *name = NULL;
    const json_t *e = NULL;
    size_t i = 0;
    int bad = 0;
    json_t *input = NULL;
    json_object_foreach((json_t *) erails, name, e)
    {
        const json_t *r = json_array_get(rails, i++);
        bool ok = strcmp(json_string_value(json_object_get(r, "name")), name) == 0 &&
                  json_equal(json_object_get(r, "power_mw"), json_object_get(e, "cur")) &&
                  json_equal(json_object_get(r, "avg_power_mw"), json_object_get(e, "avg")) &&
                  json_object_size(r) == 3;
        bad += ok ? 0 : t_mismatch(id, name, "rail differs");
        if (!input && (strcmp(name, "VDD_IN") == 0 || strcmp(name, "POM_5V_IN") == 0)) {
            input = json_object_get(e, "cur");
        }
    }
    json_t *want = json_pack("{s:O*}", "input_power_mw", input);
    bad += t_check_scaled(id, sample, "input_power_mw", want, "input_power_mw", 1);
    json_decref(want);
    return bad;
}

static int t_check_keys(const char *id, const json_t *sample, const json_t *record)
{
    static const char *const allowed[] = {"t_us",
                                          "source",
                                          "cpu_load_pct",
                                          "cpu_core_load_pct",
                                          "cpu_core_freq_hz",
                                          "cpu_online",
                                          "gpu_load_pct",
                                          "gpu_freq_hz",
                                          "gpu_gpc_freq_hz",
                                          "emc_freq_hz",
                                          "emc_load_pct",
                                          "ram_used_bytes",
                                          "ram_total_bytes",
                                          "swap_used_bytes",
                                          "swap_total_bytes",
                                          "temps_mc",
                                          "rails",
                                          "input_power_mw"};
    const char *key = NULL;
    const json_t *v = NULL;
    int bad = 0;
    json_object_foreach((json_t *) sample, key, v)
    {
        bool known = false;
        for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
            known = known || strcmp(key, allowed[i]) == 0;
        }
        bad += known ? 0 : t_mismatch(id, key, "not a key of docs/telemetry.md");
    }
    bool stamped = json_object_get(json_object_get(record, "extra"), "timestamp") != NULL;
    bad +=
        stamped == (json_object_get(sample, "t_us") != NULL) ? 0 : t_mismatch(id, "t_us", "wrong");
    bad += strcmp(json_string_value(json_object_get(sample, "source")), "tegrastats") == 0
               ? 0
               : t_mismatch(id, "source", "not tegrastats");
    return bad;
}

static int t_check_record(const json_t *record)
{
    const char *id = json_string_value(json_object_get(record, "id"));
    const json_t *e = json_object_get(record, "expected");
    json_t *s = json_object();
    jf_err_t err = {0};
    if (agent_tegrastats_parse_line(json_string_value(json_object_get(record, "line")), s, &err)) {
        json_decref(s);
        return t_mismatch(id, "parse", err.msg);
    }
    int bad = t_check_keys(id, s, record);
    bad += t_check_scaled(id, s, "ram_used_bytes", e, "ram_used_mb", T_BYTES_PER_MB);
    bad += t_check_scaled(id, s, "ram_total_bytes", e, "ram_total_mb", T_BYTES_PER_MB);
    bad += t_check_scaled(id, s, "swap_used_bytes", e, "swap_used_mb", T_BYTES_PER_MB);
    bad += t_check_scaled(id, s, "swap_total_bytes", e, "swap_total_mb", T_BYTES_PER_MB);
    bad += t_check_number(id, s, "emc_load_pct", e, "emc_pct");
    bad += t_check_scaled(id, s, "emc_freq_hz", e, "emc_mhz", T_HZ_PER_MHZ);
    bad += t_check_number(id, s, "gpu_load_pct", e, "gpu_pct");
    bad += t_check_gpu_freq(id, s, e) + t_check_cpus(id, s, e);
    bad += t_check_temps(id, s, e) + t_check_rails(id, s, e);
    json_decref(s);
    return bad;
}

static void test_real_lines(void **state)
{
    (void) state;
    char path[PATH_MAX];
    t_fixture_path(path, sizeof path, "real-lines.jsonl");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *text = NULL;
    size_t cap = 0;
    size_t n = 0;
    int bad = 0;
    while (getline(&text, &cap, f) > 0) {
        json_error_t jerr;
        json_t *record = json_loads(text, 0, &jerr);
        if (!record) {
            fail_msg("real-lines.jsonl:%zu: %s", n + 1, jerr.text);
        }
        bad += t_check_record(record);
        json_decref(record);
        n++;
    }
    free(text);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(n, T_REAL_LINES);
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// Synthetic lines that parse: {line, keys that must equal (JSON), keys that must be absent}

typedef struct t_ok_row {
    const char *line;
    const char *want;      // JSON object: every key must be present and equal (json_equal)
    const char *absent[6]; // keys that must be absent
} t_ok_row_t;

#define T_RAM "RAM 1/2MB "

static const t_ok_row_t s_ok[] = {
    // Timestamps (UTC reading), and none on JetPack 4 lines.
    {"07-09-2024 13:31:31 " T_RAM,
     "{\"t_us\": 1720531891000000, \"source\": \"tegrastats\"}",
     {NULL}},
    {"01-01-1970 00:00:00 " T_RAM, "{\"t_us\": 0}", {NULL}},
    {"02-29-2024 23:59:59 " T_RAM, "{\"t_us\": 1709251199000000}", {NULL}},
    {"12-31-2099 23:59:59 " T_RAM, "{\"t_us\": 4102444799000000}", {NULL}},
    {T_RAM,
     "{\"ram_used_bytes\": 1048576, \"ram_total_bytes\": 2097152}",
     {"t_us", "swap_used_bytes"}},
    // Memory: no blank before the parenthesis, IRAM skipped, swap.
    {"RAM 331/3964MB(lfb 758x4MB) SWAP 0/1982MB(cached 0MB) IRAM 0/252kB(lfb 252kB)",
     "{\"ram_used_bytes\": 347078656, \"swap_total_bytes\": 2078277632}",
     {NULL}},
    // CPU: off cores, one core's clock missing drops the clock array, L4T R24 shared clock.
    {T_RAM "CPU [10%@102,off,30%@204]",
     "{\"cpu_core_load_pct\": [10.0, null, 30.0], \"cpu_core_freq_hz\": [102000000, null, "
     "204000000], \"cpu_online\": [true, false, true], \"cpu_load_pct\": 20.0}",
     {NULL}},
    {T_RAM "CPU [off,off]",
     "{\"cpu_core_load_pct\": [null, null], \"cpu_core_freq_hz\": [null, null], "
     "\"cpu_online\": [false, false]}",
     {"cpu_load_pct"}},
    {T_RAM "CPU [10%,20%@300]",
     "{\"cpu_core_load_pct\": [10.0, 20.0], \"cpu_load_pct\": 15.0}",
     {"cpu_core_freq_hz"}},
    {T_RAM "cpu [2%,off,8%]@1734",
     "{\"cpu_core_freq_hz\": [1734000000, null, 1734000000], \"cpu_online\": [true, false, "
     "true]}",
     {NULL}},
    // EMC: root, non-root, DriveOS clock-only, old key.
    {T_RAM "EMC_FREQ 3%@204", "{\"emc_load_pct\": 3.0, \"emc_freq_hz\": 204000000}", {NULL}},
    {T_RAM "EMC_FREQ 0%", "{\"emc_load_pct\": 0.0}", {"emc_freq_hz"}},
    {T_RAM "EMC_FREQ @2133", "{\"emc_freq_hz\": 2133000000}", {"emc_load_pct"}},
    {T_RAM "EMC 0%@1600", "{\"emc_load_pct\": 0.0, \"emc_freq_hz\": 1600000000}", {NULL}},
    // GPU: one clock, bracket with one, two and three clocks, clock only, JetPack 5.0's GR3D2.
    {T_RAM "GR3D_FREQ 99%@921",
     "{\"gpu_load_pct\": 99.0, \"gpu_freq_hz\": 921000000}",
     {"gpu_gpc_freq_hz"}},
    {T_RAM "GR3D_FREQ 63%@[621]", "{\"gpu_freq_hz\": 621000000}", {"gpu_gpc_freq_hz"}},
    {T_RAM "GR3D_FREQ 39%@[305,0]",
     "{\"gpu_freq_hz\": 305000000, \"gpu_gpc_freq_hz\": [305000000, 0]}",
     {NULL}},
    {T_RAM "GR3D_FREQ @[0,0,0]",
     "{\"gpu_freq_hz\": 0, \"gpu_gpc_freq_hz\": [0, 0, 0]}",
     {"gpu_load_pct"}},
    {T_RAM "GR3D_FREQ @0", "{\"gpu_freq_hz\": 0}", {"gpu_load_pct"}},
    {T_RAM "GR3D_FREQ 5%@306 GR3D2_FREQ 7%@408",
     "{\"gpu_load_pct\": 5.0, \"gpu_gpc_freq_hz\": [306000000, 408000000]}",
     {NULL}},
    {T_RAM "GR3D_FREQ 0%", "{\"gpu_load_pct\": 0.0}", {"gpu_freq_hz", "gpu_gpc_freq_hz"}},
    // The same name as CPU list, temperature and rail (AGX Xavier).
    {T_RAM "CPU [5%@1190] CPU@31.5C CPU 618/618 GPU@30.5C GPU 463/463",
     "{\"cpu_core_load_pct\": [5.0], \"temps_mc\": {\"CPU\": 31500, \"GPU\": 30500}, "
     "\"rails\": [{\"name\": \"CPU\", \"power_mw\": 618, \"avg_power_mw\": 618}, {\"name\": "
     "\"GPU\", \"power_mw\": 463, \"avg_power_mw\": 463}]}",
     {"input_power_mw"}},
    // Temperatures: offline left out, negative kept, JetPack 7 pairs, a repeat that agrees.
    {T_RAM "CV0@-256C GPU@-51C tj@41.656C cpu@52.968C/52.968C tj@41.656C",
     "{\"temps_mc\": {\"GPU\": -51000, \"tj\": 41656, \"cpu\": 52968}}",
     {NULL}},
    {T_RAM "CV0@-256C", "{\"source\": \"tegrastats\"}", {"temps_mc"}},
    // Rails: JetPack 7 triples, identical repeat once, different repeat kept, input rails.
    {T_RAM "VDD_GPU_SOC 5139mW/5100mW/5200mW VIN_SYS_5V0 1mW/2mW",
     "{\"rails\": [{\"name\": \"VDD_GPU_SOC\", \"power_mw\": 5139, \"avg_power_mw\": 5100}, "
     "{\"name\": \"VIN_SYS_5V0\", \"power_mw\": 1, \"avg_power_mw\": 2}]}",
     {"input_power_mw"}},
    {T_RAM "NC 0mW/0mW X 1mW/1mW NC 0mW/0mW NC 3mW/3mW",
     "{\"rails\": [{\"name\": \"NC\", \"power_mw\": 0, \"avg_power_mw\": 0}, {\"name\": \"X\", "
     "\"power_mw\": 1, \"avg_power_mw\": 1}, {\"name\": \"NC\", \"power_mw\": 3, "
     "\"avg_power_mw\": 3}]}",
     {NULL}},
    {T_RAM "POM_5V_IN 933/900", "{\"input_power_mw\": 933}", {NULL}},
    {T_RAM "VDD_IN 5704mW/5704mW", "{\"input_power_mw\": 5704}", {NULL}},
    // Unknown tokens anywhere, blanks of any kind, a trailing newline.
    {"RAM 1/2MB NVDEC 716 APE 25 MTS fg 0% bg 1% EDP limit 1734 AVP 1%@115 VIC 36%@115 NVENC0_FREQ "
     "@0 PVA0_FREQ off VIC_FREQ 729 NVENC off\r\n",
     "{\"ram_used_bytes\": 1048576}",
     {"temps_mc", "rails", "gpu_load_pct", "emc_load_pct", "cpu_online"}},
    {"  RAM\t1/2MB   GR3D_FREQ\t5%  \n", "{\"gpu_load_pct\": 5.0}", {NULL}},
};

static bool t_ok_row_passes(size_t i, const t_ok_row_t *r)
{
    json_t *sample = json_object();
    json_t *want = json_loads(r->want, 0, NULL);
    assert_non_null(want);
    jf_err_t err = {0};
    int rc = agent_tegrastats_parse_line(r->line, sample, &err);
    bool ok = rc == 0;
    const char *key = NULL;
    const json_t *v = NULL;
    json_object_foreach(want, key, v)
    {
        ok = ok && json_equal(json_object_get(sample, key), v);
    }
    for (size_t k = 0; k < 6 && r->absent[k]; k++) {
        ok = ok && !json_object_get(sample, r->absent[k]);
    }
    if (!ok) {
        char *got = json_dumps(sample, JSON_COMPACT);
        print_message("ok row %zu: rc %d (%s), got %s\n", i, rc, err.msg, got);
        free(got);
    }
    json_decref(want);
    json_decref(sample);
    return ok;
}

static void test_parse_ok_table(void **state)
{
    (void) state;
    size_t failed = 0;
    for (size_t i = 0; i < sizeof s_ok / sizeof s_ok[0]; i++) {
        failed += !t_ok_row_passes(i, &s_ok[i]);
    }
    assert_int_equal(failed, 0);
}

// ---------------------------------------------------------------------------------------------
// Malformed lines: {line, code, message fragment}

typedef struct t_bad_row {
    const char *line;
    int code;
    const char *frag;
} t_bad_row_t;

static const t_bad_row_t s_bad[] = {
    // RAM and SWAP
    {"RAM abc/4000MB", -EINVAL, "field 'RAM': expected USED/TOTALMB, got 'abc/4000MB'"},
    {"RAM 5/4000", -EINVAL, "field 'RAM'"},
    {"RAM 5/4000GB", -EINVAL, "field 'RAM'"},
    {"RAM 5/4000MBx", -EINVAL, "field 'RAM'"},
    {"RAM -5/4000MB", -EINVAL, "field 'RAM'"},
    {"RAM 99999999999999999999/1MB", -EINVAL, "field 'RAM'"},
    {"RAM", -EINVAL, "field 'RAM': missing value"},
    {"RAM 1/2MB RAM 1/2MB", -EINVAL, "field 'RAM': appears twice"},
    {T_RAM "SWAP 1/xMB", -EINVAL, "field 'SWAP'"},
    {T_RAM "SWAP", -EINVAL, "field 'SWAP': missing value"},
    // Not a tegrastats line at all, or only part of one.
    {"", -EINVAL, "field 'RAM': missing"},
    {"hello world", -EINVAL, "field 'RAM': missing"},
    {"SWAP 1/2MB CPU [1%@2]", -EINVAL, "field 'RAM': missing"},
    // CPU
    {T_RAM "CPU [12%@x]", -EINVAL, "field 'CPU': entry 0"},
    {T_RAM "CPU [12%@100,5%@x]", -EINVAL, "field 'CPU': entry 1"},
    {T_RAM "CPU []", -EINVAL, "field 'CPU'"},
    {T_RAM "CPU [101%@100]", -EINVAL, "field 'CPU'"},
    {T_RAM "CPU [5@100]", -EINVAL, "field 'CPU'"},
    {T_RAM "CPU [5%@100", -EINVAL, "field 'CPU'"},
    {T_RAM "CPU [5%@100,]", -EINVAL, "field 'CPU'"},
    {T_RAM "CPU [of]", -EINVAL, "field 'CPU'"},
    {T_RAM "CPU [5%@100]x", -EINVAL, "field 'CPU'"},
    {T_RAM "CPU [5%@100] CPU [5%@100]", -EINVAL, "field 'CPU': appears twice"},
    {T_RAM "cpu [5%]@x", -EINVAL, "field 'cpu'"},
    {T_RAM "cpu [5%]@100x", -EINVAL, "field 'cpu'"},
    // EMC and GPU
    {T_RAM "EMC_FREQ x%", -EINVAL, "field 'EMC_FREQ': expected LOAD%"},
    {T_RAM "EMC_FREQ 5%@", -EINVAL, "field 'EMC_FREQ'"},
    {T_RAM "EMC_FREQ 5%@[1,2]", -EINVAL, "field 'EMC_FREQ'"},
    {T_RAM "EMC_FREQ 101%", -EINVAL, "field 'EMC_FREQ'"},
    {T_RAM "EMC_FREQ GR3D_FREQ 5%", -EINVAL, "field 'EMC_FREQ'"},
    {T_RAM "EMC 5", -EINVAL, "field 'EMC'"},
    {T_RAM "EMC_FREQ", -EINVAL, "field 'EMC_FREQ': missing value"},
    {T_RAM "GR3D_FREQ 5%@[1,", -EINVAL, "field 'GR3D_FREQ'"},
    {T_RAM "GR3D_FREQ 5%@[]", -EINVAL, "field 'GR3D_FREQ'"},
    {T_RAM "GR3D_FREQ 5%@[1,2]x", -EINVAL, "field 'GR3D_FREQ'"},
    {T_RAM "GR3D_FREQ 5%@[1 2]", -EINVAL, "field 'GR3D_FREQ'"},
    {T_RAM "GR3D_FREQ @", -EINVAL, "field 'GR3D_FREQ'"},
    {T_RAM "GR3D_FREQ @[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]", -EINVAL, "field 'GR3D_FREQ'"},
    {T_RAM "GR3D 5%@x", -EINVAL, "field 'GR3D'"},
    {T_RAM "GR3D2_FREQ 5%@x", -EINVAL, "field 'GR3D2_FREQ'"},
    // Temperatures
    {T_RAM "CPU@abcC", -EINVAL, "field 'CPU@abcC': expected a temperature"},
    {T_RAM "CPU@40", -EINVAL, "field 'CPU@40'"},
    {T_RAM "CPU@C", -EINVAL, "field 'CPU@C'"},
    {T_RAM "CPU@40C/x", -EINVAL, "field 'CPU@40C/x'"},
    {T_RAM "CPU@40C/41C/42C", -EINVAL, "field 'CPU@40C/41C/42C'"},
    {T_RAM "CPU@4-0C", -EINVAL, "field 'CPU@4-0C'"},
    {T_RAM "CPU@5000C", -EINVAL, "field 'CPU@5000C'"},
    {T_RAM "C-PU@40C", -EINVAL, "field 'C-PU@40C'"},
    {T_RAM "CPU@40C CPU@41C", -EINVAL, "field 'CPU': temperature printed twice"},
    // Rails
    {T_RAM "VDD_IN 12x/400", -EINVAL, "field 'VDD_IN': expected a power rail"},
    {T_RAM "VDD_IN 1/", -EINVAL, "field 'VDD_IN'"},
    {T_RAM "VDD_IN 1/2/3/4", -EINVAL, "field 'VDD_IN'"},
    {T_RAM "VDD_IN 1mW/2mV", -EINVAL, "field 'VDD_IN'"},
    {T_RAM "VDD_IN 1//2", -EINVAL, "field 'VDD_IN'"},
    // Timestamps
    {"13-01-2024 10:00:00 " T_RAM, -EINVAL, "field 'timestamp': expected MM-DD-YYYY HH:MM:SS"},
    {"02-30-2024 10:00:00 " T_RAM, -EINVAL, "field 'timestamp'"},
    {"02-29-2023 10:00:00 " T_RAM, -EINVAL, "field 'timestamp'"},
    {"07-09-2024 24:00:00 " T_RAM, -EINVAL, "field 'timestamp'"},
    {"07-09-2024 " T_RAM, -EINVAL, "field 'timestamp'"},
    {"07/09/2024 13:31:31 " T_RAM, -EINVAL, "field 'timestamp'"},
    {"1 RAM 1/2MB", -EINVAL, "field 'timestamp'"},
};

static void test_parse_bad_table(void **state)
{
    (void) state;
    size_t failed = 0;
    for (size_t i = 0; i < sizeof s_bad / sizeof s_bad[0]; i++) {
        const t_bad_row_t *r = &s_bad[i];
        json_t *sample = json_pack("{s:i}", "keep", 1);
        jf_err_t err = {0};
        int rc = agent_tegrastats_parse_line(r->line, sample, &err);
        // On failure the caller's sample is left as it was.
        bool ok = rc == r->code && err.code == r->code && strstr(err.msg, r->frag) &&
                  json_object_size(sample) == 1;
        if (!ok) {
            print_message("bad row %zu '%s': rc %d, msg '%s'\n", i, r->line, rc, err.msg);
            failed++;
        }
        json_decref(sample);
    }
    assert_int_equal(failed, 0);
}

// The length limit: AGENT_TEGRASTATS_LINE_MAX bytes parse, one more does not; too many cores.
static void test_parse_limits(void **state)
{
    (void) state;
    char *line = malloc(AGENT_TEGRASTATS_LINE_MAX + 2);
    assert_non_null(line);
    memset(line, 'x', AGENT_TEGRASTATS_LINE_MAX + 1);
    memcpy(line, "RAM 1/2MB ", 10);
    line[AGENT_TEGRASTATS_LINE_MAX] = '\0';
    json_t *sample = json_object();
    jf_err_t err = {0};
    assert_int_equal(agent_tegrastats_parse_line(line, sample, &err), 0);
    line[AGENT_TEGRASTATS_LINE_MAX] = 'x';
    line[AGENT_TEGRASTATS_LINE_MAX + 1] = '\0';
    assert_int_equal(agent_tegrastats_parse_line(line, sample, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "line is longer than 4096 bytes"));
    // 64 cores parse, 65 do not.
    char *p = line + snprintf(line, AGENT_TEGRASTATS_LINE_MAX, "RAM 1/2MB CPU [1%%@2");
    for (int i = 1; i < AGENT_TEGRASTATS_CPUS_MAX; i++) {
        p += snprintf(p, 8, ",off");
    }
    (void) snprintf(p, 8, "]");
    assert_int_equal(agent_tegrastats_parse_line(line, sample, &err), 0);
    (void) snprintf(p, 8, ",off]");
    assert_int_equal(agent_tegrastats_parse_line(line, sample, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "field 'CPU': more than 64 cores"));
    json_decref(sample);
    free(line);
}

// ---------------------------------------------------------------------------------------------
// Importer

typedef struct t_import {
    char *out_text; // open_memstream buffers
    size_t out_size;
    char *diag_text;
    size_t diag_size;
    agent_import_result_t res;
    jf_err_t err;
    int rc;
} t_import_t;

// Runs the importer on a fixture (in == NULL) or on an in-memory stream named path.
static void t_run_import(const char *path, FILE *in, t_import_t *t)
{
    memset(t, 0, sizeof *t);
    FILE *out = open_memstream(&t->out_text, &t->out_size);
    FILE *diag = open_memstream(&t->diag_text, &t->diag_size);
    assert_non_null(out);
    assert_non_null(diag);
    agent_import_opts_t opts = {.path = path, .in = in, .out = out, .diag = diag};
    t->rc = agent_import_tegrastats(&opts, &t->res, &t->err);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(fclose(diag), 0);
}

static void t_free_import(t_import_t *t)
{
    free(t->out_text);
    free(t->diag_text);
}

// Every output line is one JSON object with source "tegrastats"; returns how many there are.
static size_t t_count_samples(const char *text)
{
    size_t n = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        assert_non_null(nl);
        json_t *s = json_loadb(p, (size_t) (nl - p), 0, NULL);
        assert_non_null(s);
        assert_string_equal(json_string_value(json_object_get(s, "source")), "tegrastats");
        assert_null(json_object_get(s, "board_type"));
        json_decref(s);
        n++;
        p = nl + 1;
    }
    return n;
}

typedef struct t_log_row {
    const char *file;
    size_t n_lines, n_samples, n_failed;
    const char *diag[3]; // fragments expected in diag, in order
} t_log_row_t;

static const t_log_row_t s_logs[] = {
    {"tx1-r24.log", 1, 1, 0, {NULL}},
    {"nano-jp4.log", 4, 4, 0, {NULL}},
    {"tx2-r28.log", 1, 1, 0, {NULL}},
    {"tx2-jp4.log", 6, 6, 0, {NULL}},
    {"agx-xavier-jp4.log", 1, 1, 0, {NULL}},
    {"xavier-nx-jp4.log", 1, 1, 0, {NULL}},
    {"xavier-nx-jp5.log", 4, 4, 0, {NULL}},
    {"orin-nano-jp6.log", 2, 2, 0, {NULL}},
    {"agx-orin-jp5.log", 1, 1, 0, {NULL}},
    {"agx-orin-jp6.log", 6, 6, 0, {NULL}},
    {"thor-jp7.log", 2, 2, 0, {NULL}},
    {"bad-lines.log",
     8,
     3,
     3,
     {"bad-lines.log:3: field 'RAM': expected USED/TOTALMB, got 'abc/3964MB'\n",
      "bad-lines.log:6: field 'CPU': entry 0", "bad-lines.log:7: field 'RAM': missing"}},
};

static void test_import_fixture_logs(void **state)
{
    (void) state;
    for (size_t i = 0; i < sizeof s_logs / sizeof s_logs[0]; i++) {
        const t_log_row_t *r = &s_logs[i];
        char path[PATH_MAX];
        t_fixture_path(path, sizeof path, r->file);
        t_import_t t;
        t_run_import(path, NULL, &t);
        print_message("%s: %zu lines, %zu samples, %zu failed\n", r->file, t.res.n_lines,
                      t.res.n_samples, t.res.n_failed);
        assert_int_equal(t.rc, 0);
        assert_int_equal(t.res.n_lines, r->n_lines);
        assert_int_equal(t.res.n_samples, r->n_samples);
        assert_int_equal(t.res.n_failed, r->n_failed);
        assert_int_equal(t_count_samples(t.out_text), r->n_samples);
        const char *at = t.diag_text;
        for (size_t k = 0; k < 3 && r->diag[k]; k++) {
            at = strstr(at, r->diag[k]);
            assert_non_null(at);
        }
        assert_true(r->n_failed > 0 || t.diag_size == 0);
        t_free_import(&t);
    }
}

// In-memory logs for what fixtures cannot hold well: overlong lines, NUL bytes, no final newline.
typedef struct t_stream_row {
    const char *text;
    size_t size; // bytes of text (NULs included)
    size_t n_lines, n_samples, n_failed;
    const char *diag; // fragment, or NULL for none
} t_stream_row_t;

#define T_GOOD   "RAM 1/2MB"
#define T_ROW(s) s, sizeof(s) - 1

static const t_stream_row_t s_streams[] = {
    {T_ROW(""), 0, 0, 0, NULL},
    {T_ROW("\n\n  \n"), 3, 0, 0, NULL},
    {T_ROW(T_GOOD), 1, 1, 0, NULL}, // no final newline
    {T_ROW(T_GOOD "\r\n" T_GOOD "\r\n"), 2, 2, 0, NULL},
    {T_ROW(T_GOOD "\n" T_GOOD "\0x\n" T_GOOD "\n"), 3, 2, 1, "mem.log:2: line holds a NUL byte"},
    {T_ROW("RAM 1/x\n" T_GOOD "\n"), 2, 1, 1, "mem.log:1: field 'RAM'"},
};

static void test_import_streams(void **state)
{
    (void) state;
    for (size_t i = 0; i < sizeof s_streams / sizeof s_streams[0]; i++) {
        const t_stream_row_t *r = &s_streams[i];
        FILE *in = r->size ? fmemopen((void *) r->text, r->size, "r") : fopen("/dev/null", "r");
        assert_non_null(in);
        t_import_t t;
        t_run_import("mem.log", in, &t);
        assert_int_equal(fclose(in), 0);
        print_message("stream row %zu: diag '%s'\n", i, t.diag_text);
        assert_int_equal(t.rc, 0);
        assert_int_equal(t.res.n_lines, r->n_lines);
        assert_int_equal(t.res.n_samples, r->n_samples);
        assert_int_equal(t.res.n_failed, r->n_failed);
        assert_int_equal(t_count_samples(t.out_text), r->n_samples);
        assert_true(r->diag ? strstr(t.diag_text, r->diag) != NULL : t.diag_size == 0);
        t_free_import(&t);
    }
}

// A line of 4096 bytes is read, one of 4097 (or far longer) is reported and the next line still
// parses; a CRLF line of 4096 bytes plus the CR is not too long.
static void test_import_long_lines(void **state)
{
    (void) state;
    static const size_t lens[] = {AGENT_TEGRASTATS_LINE_MAX, AGENT_TEGRASTATS_LINE_MAX + 1,
                                  3 * AGENT_TEGRASTATS_LINE_MAX};
    for (size_t i = 0; i < 3; i++) {
        size_t size = lens[i] + 2 + sizeof T_GOOD;
        char *text = malloc(size);
        assert_non_null(text);
        memset(text, 'x', lens[i]);
        memcpy(text, "RAM 1/2MB ", 10);
        memcpy(text + lens[i], "\r\n" T_GOOD "\n", 2 + sizeof T_GOOD);
        FILE *in = fmemopen(text, size, "r");
        assert_non_null(in);
        t_import_t t;
        t_run_import("long.log", in, &t);
        assert_int_equal(fclose(in), 0);
        bool too_long = lens[i] > AGENT_TEGRASTATS_LINE_MAX;
        assert_int_equal(t.rc, 0);
        assert_int_equal(t.res.n_lines, 2);
        assert_int_equal(t.res.n_samples, too_long ? 1 : 2);
        assert_int_equal(t.res.n_failed, too_long ? 1 : 0);
        assert_true(!too_long || strstr(t.diag_text, "long.log:1: line is longer than 4096"));
        t_free_import(&t);
        free(text);
    }
}

static void test_import_missing_file(void **state)
{
    (void) state;
    t_import_t t;
    t_run_import("/nonexistent/tegrastats.log", NULL, &t);
    assert_int_equal(t.rc, -ENOENT);
    assert_int_equal(t.err.code, -ENOENT);
    assert_non_null(strstr(t.err.msg, "/nonexistent/tegrastats.log: cannot open"));
    t_free_import(&t);
}

// ---------------------------------------------------------------------------------------------
// The command-line option

typedef struct t_opt_row {
    const char *args[6];
    int code;
    const char *frag; // NULL when it parses
} t_opt_row_t;

static const t_opt_row_t s_opts[] = {
    {{"--parse-tegrastats", "x.log"}, 0, NULL},
    {{"--parse-tegrastats", "x.log", "--log-level", "debug"}, 0, NULL},
    {{"--parse-tegrastats", "x.log", "--coordinator", "tcp://127.0.0.1:1"},
     -EINVAL,
     "--parse-tegrastats takes no daemon options"},
    {{"--parse-tegrastats", "x.log", "--name", "nx-01"}, -EINVAL, "takes no daemon options"},
    {{"--parse-tegrastats", "x.log", "y.log"}, -EINVAL, "unexpected argument 'y.log'"},
    {{"--parse-tegrastats"}, -EINVAL, "unknown option"},
    {{"--coordinator", "tcp://127.0.0.1:1"}, -EINVAL, "--coordinator and a valid --name"},
};

static void test_options_parse_tegrastats(void **state)
{
    (void) state;
    agent_options_t *o = malloc(sizeof *o);
    assert_non_null(o);
    for (size_t i = 0; i < sizeof s_opts / sizeof s_opts[0]; i++) {
        char *argv[8] = {"jetfleet-agent"};
        int argc = 1;
        for (size_t k = 0; k < 6 && s_opts[i].args[k]; k++) {
            argv[argc++] = (char *) s_opts[i].args[k];
        }
        jf_err_t err = {0};
        optind = 0; // glibc: start a fresh scan
        opterr = 0;
        int rc = agent_options_parse(argc, argv, o, &err);
        print_message("option row %zu: rc %d '%s'\n", i, rc, err.msg);
        assert_int_equal(rc, s_opts[i].code);
        assert_true(rc != 0 || strcmp(o->parse_tegrastats, "x.log") == 0);
        assert_true(!s_opts[i].frag || strstr(err.msg, s_opts[i].frag));
    }
    free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_lines),
        cmocka_unit_test(test_parse_ok_table),
        cmocka_unit_test(test_parse_bad_table),
        cmocka_unit_test(test_parse_limits),
        cmocka_unit_test(test_import_fixture_logs),
        cmocka_unit_test(test_import_streams),
        cmocka_unit_test(test_import_long_lines),
        cmocka_unit_test(test_import_missing_file),
        cmocka_unit_test(test_options_parse_tegrastats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
