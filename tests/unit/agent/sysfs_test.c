/* Unit tests for agent_sysfs (the sysfs/procfs reader) and agent_board_table: every fixture tree
 * in tests/fixtures/sysfs/<board>/ sampled twice and compared value by value with the sample it
 * must give (units converted, offline cores null, offline sensors and missing files left out);
 * the value and CPU-list parsers from tables of good and malformed text; malformed, unreadable
 * and missing files in temporary trees; files opened once and re-read with pread; and the
 * consistency of the per-family tables. */
#include "agent_board_table.h"
#include "agent_sysfs.h"
#include "jf_fs.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "jft_fs.h"

#define T_STAT_MAX  4096
#define T_CPUS_MAX  16
#define T_TICKS     1000 // every online core's busy and idle ticks in the first /proc/stat
#define T_INTERVAL  100  // ticks per core between the two /proc/stat readings

// ---------------------------------------------------------------------------------------------
// Helpers

// dir/rel into out (PATH_MAX); the test fails if it does not fit.
static void t_join(char *out, const char *dir, const char *rel)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", dir, rel);
    assert_true(n > 0 && n < PATH_MAX);
}

// Writes text to dir/rel, creating the parent directories.
static void t_put(const char *dir, const char *rel, const char *text)
{
    char path[PATH_MAX], parent[PATH_MAX];
    t_join(path, dir, rel);
    (void)snprintf(parent, sizeof parent, "%s", path);
    *strrchr(parent, '/') = '\0';
    assert_int_equal(jf_fs_mkdir_p(parent, 0755, NULL), 0);
    assert_int_equal(jft_write_file(path, text), 0);
}

static void t_copy(const char *from, const char *dir, const char *rel)
{
    char *text = jft_read_file(from, NULL);
    assert_non_null(text);
    t_put(dir, rel, text);
    free(text);
}

// A /proc/stat with lines for the online cores. second = false: every core has T_TICKS busy and
// idle; true: the k-th online core got 10 * (k + 1) more busy and T_INTERVAL - 10 * (k + 1) more
// idle ticks, so its load is 10 * (k + 1) % and the total is 5 * (n + 1) % for n online cores.
static void t_write_stat(const char *dir, const bool *online, size_t n_cpus, bool second)
{
    char lines[T_STAT_MAX] = {0}, text[2 * T_STAT_MAX];
    uint64_t busy_sum = 0, idle_sum = 0;
    size_t len = 0, k = 0;
    for (size_t i = 0; i < n_cpus; i++) {
        if (!online[i]) {
            continue;
        }
        uint64_t busy = T_TICKS + (second ? 10 * (k + 1) : 0);
        uint64_t idle = T_TICKS + (second ? T_INTERVAL - 10 * (k + 1) : 0);
        k++;
        len += (size_t)snprintf(lines + len, sizeof lines - len,
                                "cpu%zu %llu 0 0 %llu 0 0 0 0 0 0\n", i,
                                (unsigned long long)busy, (unsigned long long)idle);
        busy_sum += busy;
        idle_sum += idle;
    }
    int n = snprintf(text, sizeof text, "cpu  %llu 0 0 %llu 0 0 0 0 0 0\n%sintr 1 0\nctxt 2\n",
                     (unsigned long long)busy_sum, (unsigned long long)idle_sum, lines);
    assert_true(n > 0 && (size_t)n < sizeof text);
    t_put(dir, "stat", text);
}

static json_t *t_sample(agent_sysfs_t *s)
{
    json_t *sample = json_object();
    jf_err_t err = {0};
    assert_int_equal(agent_sysfs_sample(s, sample, &err), 0);
    return sample;
}

// Checks t_us and mono_us for plausibility, then removes them (they differ per run).
static void t_strip_clocks(json_t *sample)
{
    json_int_t t = json_integer_value(json_object_get(sample, "t_us"));
    json_int_t m = json_integer_value(json_object_get(sample, "mono_us"));
    assert_true(json_is_integer(json_object_get(sample, "t_us")) && t > INT64_C(1600000000000000));
    assert_true(json_is_integer(json_object_get(sample, "mono_us")) && m > 0);
    assert_int_equal(json_object_del(sample, "t_us"), 0);
    assert_int_equal(json_object_del(sample, "mono_us"), 0);
}

static void t_assert_json_equal(const json_t *got, const json_t *want, const char *what)
{
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
        char *w = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
        fail_msg("%s:\n got  %s\n want %s", what, g, w);
    }
}

// ---------------------------------------------------------------------------------------------
// Every fixture tree, value by value

typedef struct t_board {
    const char *dir;       // tests/fixtures/sysfs/<dir>
    jf_board_type_t type;
    int jetpack;           // JetPack major of the fixture (selects the layout)
    const char *expected;  // the first sample without t_us and mono_us (no load yet)
} t_board_t;

// Hand-computed from the fixture files: cpufreq kHz x 1000; GPU load per-mille / 10; EMC load =
// mc_all / (EMC Hz / 1000); meminfo kB x 1024, used = total - available; hwmon power = round(mV
// x mA / 1000); IIO power from in_powerN_input (deliberately not V x I in agx-xavier); zone types
// renamed as tegrastats prints them; -256 C zones, NC channels and missing files left out.
static const t_board_t s_boards[] = {
    {"xavier-nx", JF_BOARD_XAVIER_NX, 5,
     "{\"source\":\"sysfs\","
     "\"cpu_core_freq_hz\":[1190400000,1190400000,null,null,1420800000,1420800000],"
     "\"cpu_online\":[true,true,false,false,true,true],"
     "\"gpu_load_pct\":99.5,\"gpu_freq_hz\":1109250000,"
     "\"emc_freq_hz\":1600000000,\"emc_load_pct\":3.0,"
     "\"ram_total_bytes\":8187781120,\"ram_used_bytes\":2777235456,"
     "\"ram_available_bytes\":5410545664,\"page_cache_bytes\":4287705088,"
     "\"swap_total_bytes\":4093874176,\"swap_used_bytes\":12582912,"
     "\"temps_mc\":{\"AUX\":45000,\"CPU\":46500,\"thermal\":45600,\"AO\":44500,\"GPU\":45500,"
     "\"PMIC\":50000},"
     "\"rails\":[{\"name\":\"VDD_IN\",\"voltage_mv\":5008,\"current_ma\":1904,\"power_mw\":9535},"
     "{\"name\":\"VDD_CPU_GPU_CV\",\"voltage_mv\":5000,\"current_ma\":300,\"power_mw\":1500},"
     "{\"name\":\"VDD_SOC\",\"voltage_mv\":4992}],"
     "\"input_power_mw\":9535}"},
    {"agx-xavier", JF_BOARD_AGX_XAVIER, 4,
     "{\"source\":\"sysfs\","
     "\"cpu_core_freq_hz\":[2265600000,2265600000,2188800000,2188800000,2112000000,2112000000,"
     "2035200000,2035200000],"
     "\"cpu_online\":[true,true,true,true,true,true,true,true],"
     "\"gpu_load_pct\":42.1,\"gpu_freq_hz\":1377000000,"
     "\"emc_freq_hz\":2133000000,\"emc_load_pct\":5.0,"
     "\"ram_total_bytes\":32983994368,\"ram_used_bytes\":2150103040,"
     "\"ram_available_bytes\":30833891328,\"page_cache_bytes\":1264196608,"
     "\"swap_total_bytes\":16491995136,\"swap_used_bytes\":0,"
     "\"temps_mc\":{\"AO\":26500,\"GPU\":28000,\"iwlwifi\":30000,\"Tdiode\":31250,"
     "\"PMIC\":100000,\"AUX\":27000,\"CPU\":28500,\"thermal\":27450,\"Tboard\":27250},"
     "\"rails\":[{\"name\":\"GPU\",\"voltage_mv\":19072,\"current_ma\":61,\"power_mw\":1155},"
     "{\"name\":\"CPU\",\"voltage_mv\":19072,\"current_ma\":20,\"power_mw\":385},"
     "{\"name\":\"SOC\",\"voltage_mv\":19072,\"current_ma\":131,\"power_mw\":2502},"
     "{\"name\":\"CV\",\"voltage_mv\":19072,\"current_ma\":0,\"power_mw\":0},"
     "{\"name\":\"VDDRQ\",\"voltage_mv\":19072,\"current_ma\":10,\"power_mw\":192},"
     "{\"name\":\"SYS5V\",\"voltage_mv\":4968,\"current_ma\":542,\"power_mw\":2692}]}"},
    {"nano", JF_BOARD_NANO, 4,
     "{\"source\":\"sysfs\","
     "\"cpu_core_freq_hz\":[918000000,918000000,null,null],"
     "\"cpu_online\":[true,true,false,false],"
     "\"gpu_load_pct\":25.0,\"gpu_freq_hz\":614400000,"
     "\"ram_total_bytes\":4157145088,\"ram_used_bytes\":1699545088,"
     "\"ram_available_bytes\":2457600000,\"page_cache_bytes\":1536000000,"
     "\"swap_total_bytes\":2078572544,\"swap_used_bytes\":204800000,"
     "\"temps_mc\":{\"AO\":27500,\"CPU\":23500,\"GPU\":22500,\"PLL\":20500,\"PMIC\":100000,"
     "\"thermal\":23000},"
     "\"rails\":[{\"name\":\"POM_5V_IN\",\"voltage_mv\":5000,\"current_ma\":420,\"power_mw\":2100},"
     "{\"name\":\"POM_5V_GPU\",\"voltage_mv\":5000,\"current_ma\":0,\"power_mw\":0},"
     "{\"name\":\"POM_5V_CPU\",\"voltage_mv\":5000,\"current_ma\":84,\"power_mw\":420}],"
     "\"input_power_mw\":2100}"},
    {"orin-agx", JF_BOARD_ORIN_AGX, 6,
     "{\"source\":\"sysfs\","
     "\"cpu_core_freq_hz\":[1728000000,1728000000,1728000000,1728000000,1497600000,1497600000,"
     "1497600000,1497600000,null,null,null,null],"
     "\"cpu_online\":[true,true,true,true,true,true,true,true,false,false,false,false],"
     "\"gpu_load_pct\":100.0,\"gpu_freq_hz\":816000000,"
     "\"emc_freq_hz\":3199000000,\"emc_load_pct\":10.0,"
     "\"ram_total_bytes\":65893806080,\"ram_used_bytes\":19813806080,"
     "\"ram_available_bytes\":46080000000,\"page_cache_bytes\":20480000000,"
     "\"swap_total_bytes\":32946900992,\"swap_used_bytes\":90112000,"
     "\"temps_mc\":{\"cpu\":52562,\"soc0\":49093,\"soc1\":49656,\"soc2\":48437,\"tj\":52750},"
     "\"rails\":[{\"name\":\"VDD_GPU_SOC\",\"voltage_mv\":4984,\"current_ma\":484,"
     "\"power_mw\":2412},"
     "{\"name\":\"VDD_CPU_CV\",\"voltage_mv\":4984,\"current_ma\":322,\"power_mw\":1605},"
     "{\"name\":\"VIN_SYS_5V0\",\"voltage_mv\":4976,\"current_ma\":946,\"power_mw\":4707},"
     "{\"name\":\"VDDQ_VDD2_1V8AO\",\"voltage_mv\":4992,\"current_ma\":60,\"power_mw\":300}]}"},
    {"orin-nano", JF_BOARD_ORIN_NANO, 5,
     "{\"source\":\"sysfs\","
     "\"cpu_core_freq_hz\":[1510400000,1510400000,1510400000,1510400000,729600000,729600000],"
     "\"cpu_online\":[true,true,true,true,true,true],"
     "\"gpu_load_pct\":12.3,\"gpu_freq_hz\":624750000,"
     "\"emc_freq_hz\":2133000000,\"emc_load_pct\":4.0,"
     "\"ram_total_bytes\":7989874688,\"ram_used_bytes\":2580082688,"
     "\"ram_available_bytes\":5409792000,\"page_cache_bytes\":2275555328,"
     "\"swap_total_bytes\":3994935296,\"swap_used_bytes\":1303347200,"
     "\"temps_mc\":{\"CPU\":46531,\"SOC0\":46593,\"SOC1\":48843,\"SOC2\":47312,\"tj\":48875},"
     "\"rails\":[{\"name\":\"VDD_IN\",\"voltage_mv\":5080,\"current_ma\":1123,\"power_mw\":5705},"
     "{\"name\":\"VDD_CPU_GPU_CV\",\"voltage_mv\":5080,\"current_ma\":164,\"power_mw\":833},"
     "{\"name\":\"VDD_SOC\",\"voltage_mv\":5080,\"current_ma\":320,\"power_mw\":1626}],"
     "\"input_power_mw\":5705}"},
    {"host", JF_BOARD_HOST, 0,
     "{\"source\":\"proc\","
     "\"cpu_core_freq_hz\":[3400000000,3400000000,800000000,2100000000],"
     "\"cpu_online\":[true,true,true,true],"
     "\"ram_total_bytes\":16705880064,\"ram_used_bytes\":4417880064,"
     "\"ram_available_bytes\":12288000000,\"page_cache_bytes\":3072000000,"
     "\"swap_total_bytes\":2147479552,\"swap_used_bytes\":0,"
     "\"rapl_energy_uj\":{\"package-0\":123456789,\"package-0/core\":23456789,"
     "\"package-0/uncore\":3456,\"psys\":987654321},"
     "\"rapl_max_energy_range_uj\":{\"package-0\":262143328850,"
     "\"package-0/core\":262143328850,\"package-0/uncore\":262143328850,"
     "\"psys\":262143328850}}"},
};

typedef struct t_tree {
    char sys[PATH_MAX];  // the fixture's sysfs root (read-only)
    char proc[PATH_MAX]; // a temporary procfs root: the fixture's meminfo, the test's stat
} t_tree_t;

static agent_sysfs_t *t_open_board(const t_board_t *b, t_tree_t *tree)
{
    char rel[PATH_MAX], meminfo[PATH_MAX];
    (void)snprintf(rel, sizeof rel, "sysfs/%s/sys", b->dir);
    jft_fixture(rel, tree->sys);
    (void)snprintf(rel, sizeof rel, "sysfs/%s/proc/meminfo", b->dir);
    jft_fixture(rel, meminfo);
    assert_int_equal(jft_tmpdir_new(tree->proc), 0);
    t_copy(meminfo, tree->proc, "meminfo");
    const agent_board_ident_t *ident = agent_board_table_ident(b->type);
    agent_sysfs_opts_t o = {.sysfs_root = tree->sys, .proc_root = tree->proc,
                            .layout = agent_board_table_layout(b->type, b->jetpack),
                            .n_cpus = ident ? ident->n_cpus : 0,
                            .source = b->type == JF_BOARD_HOST ? "proc" : "sysfs"};
    assert_non_null(o.layout);
    jf_err_t err = {0};
    // The reader needs <proc>/stat to exist at creation.
    bool none[1] = {false};
    t_write_stat(tree->proc, none, 0, false);
    agent_sysfs_t *s = agent_sysfs_new(&o, &err);
    assert_non_null(s);
    return s;
}

// The online mask the expected sample states (cpu_online).
static size_t t_online(const json_t *expected, bool *online)
{
    const json_t *arr = json_object_get(expected, "cpu_online");
    size_t n = json_array_size(arr);
    assert_true(n > 0 && n <= T_CPUS_MAX);
    for (size_t i = 0; i < n; i++) {
        online[i] = json_is_true(json_array_get(arr, i));
    }
    return n;
}

// Adds the loads t_write_stat's two readings give to expected (a copy the caller owns).
static json_t *t_with_load(const json_t *expected, const bool *online, size_t n)
{
    json_t *want = json_deep_copy(expected), *cores = json_array();
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        (void)json_array_append_new(cores, online[i] ? json_real(10.0 * (double)++k) : json_null());
    }
    (void)json_object_set_new(want, "cpu_load_pct", json_real(5.0 * (double)(k + 1)));
    (void)json_object_set_new(want, "cpu_core_load_pct", cores);
    return want;
}

static void test_fixture_boards(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof s_boards / sizeof s_boards[0]; i++) {
        const t_board_t *b = &s_boards[i];
        json_error_t jerr;
        json_t *want = json_loads(b->expected, 0, &jerr);
        if (!want) {
            fail_msg("%s: bad expected JSON: %s", b->dir, jerr.text);
        }
        bool online[T_CPUS_MAX] = {false};
        size_t n = t_online(want, online);
        t_tree_t tree;
        agent_sysfs_t *s = t_open_board(b, &tree);
        assert_int_equal(agent_sysfs_n_cpus(s), n);
        t_write_stat(tree.proc, online, n, false);
        json_t *first = t_sample(s);
        t_strip_clocks(first);
        t_assert_json_equal(first, want, b->dir); // no load in the first sample
        t_write_stat(tree.proc, online, n, true);
        json_t *second = t_sample(s), *want2 = t_with_load(want, online, n);
        t_strip_clocks(second);
        t_assert_json_equal(second, want2, b->dir);
        json_decref(first);
        json_decref(second);
        json_decref(want);
        json_decref(want2);
        agent_sysfs_destroy(&s);
        assert_null(s);
        jft_tmpdir_remove(tree.proc);
    }
}

// What the fixtures lack is listed once, at creation, for the caller's log.
static void test_fixture_missing_listed(void **state)
{
    (void)state;
    static const struct {
        size_t board;        // index in s_boards
        const char *missing; // a fragment agent_sysfs_missing must contain; "" = nothing missing
    } rows[] = {
        {0, "rail VDD_SOC current_ma ("},
        {1, ""},
        {2, "emc_freq_hz ("},
        {2, "override.emc/clk_rate: No such file or directory"},
        {2, "emc_load_pct ("},
        {3, ""},
        {4, ""},
        {5, ""},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        t_tree_t tree;
        agent_sysfs_t *s = t_open_board(&s_boards[rows[i].board], &tree);
        const char *m = agent_sysfs_missing(s);
        if (rows[i].missing[0] ? !strstr(m, rows[i].missing) : m[0] != '\0') {
            fail_msg("%s: missing list '%s' lacks '%s'", s_boards[rows[i].board].dir, m,
                     rows[i].missing);
        }
        agent_sysfs_destroy(&s);
        jft_tmpdir_remove(tree.proc);
    }
}

// ---------------------------------------------------------------------------------------------
// Value files and CPU lists

static void test_parse_value_table(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int64_t min, max;
        int rc;
        int64_t value;
        const char *msg; // fragment of err.msg when rc != 0
    } rows[] = {
        {"1190400\n", 0, INT64_MAX, 0, 1190400, NULL},
        {"-256000\n", -300000, 300000, 0, -256000, NULL},
        {"0", 0, 10, 0, 0, NULL},
        {"42\n\n", 0, 100, 0, 42, NULL},
        {"42 \t\n", 0, 100, 0, 42, NULL},
        {"9223372036854775807\n", 0, INT64_MAX, 0, INT64_MAX, NULL},
        {"abc\n", 0, 100, -EINVAL, 0, "got 'abc'"},
        {"", 0, 100, -EINVAL, 0, "expected a decimal integer"},
        {"\n", 0, 100, -EINVAL, 0, "expected a decimal integer"},
        {" 5\n", 0, 100, -EINVAL, 0, "expected a decimal integer"},
        {"+5\n", 0, 100, -EINVAL, 0, "expected a decimal integer"},
        {"5 6\n", 0, 100, -EINVAL, 0, "got '5 6'"},
        {"12abc\n", 0, 100, -EINVAL, 0, "got '12abc'"},
        {"0x10\n", 0, 100, -EINVAL, 0, "got '0x10'"},
        {"1.5\n", 0, 100, -EINVAL, 0, "got '1.5'"},
        {"99999999999999999999\n", 0, INT64_MAX, -EINVAL, 0, "got '99999999999999999999'"},
        {"1001\n", 0, 1000, -EINVAL, 0, "out of range"},
        {"-1\n", 0, 1000, -EINVAL, 0, "out of range"},
        {"-\n", -10, 10, -EINVAL, 0, "got '-'"},
        {"1234567890123456789012345678901234567890123456789012345678901234567890", 0, 1,
         -EINVAL, 0, "expected a decimal integer"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int64_t v = -7;
        jf_err_t err = {0};
        int rc = agent_sysfs_parse_value(rows[i].text, rows[i].min, rows[i].max, &v, &err);
        if (rc != rows[i].rc) {
            fail_msg("row %zu '%s': rc %d, want %d (%s)", i, rows[i].text, rc, rows[i].rc,
                     err.msg);
        }
        if (rc == 0) {
            assert_int_equal(v, rows[i].value);
        } else {
            assert_int_equal(v, -7); // unchanged on failure
            if (!strstr(err.msg, rows[i].msg)) {
                fail_msg("row %zu: '%s' lacks '%s'", i, err.msg, rows[i].msg);
            }
        }
    }
}

static void test_parse_cpu_list_table(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        size_t n;
        int rc;
        const char *set; // '1'/'0' per core when rc == 0
    } rows[] = {
        {"0-3,6\n", 8, 0, "11110010"},
        {"0-1,4-5\n", 6, 0, "110011"},
        {"0\n", 4, 0, "1000"},
        {"", 4, 0, "0000"},
        {"\n", 4, 0, "0000"},
        {"2-3,9\n", 4, 0, "0011"}, // beyond n: ignored
        {"0-255\n", 2, 0, "11"},
        {"3-1\n", 4, -EINVAL, NULL},
        {"a\n", 4, -EINVAL, NULL},
        {"0-\n", 4, -EINVAL, NULL},
        {"-1\n", 4, -EINVAL, NULL},
        {"0,,1\n", 4, -EINVAL, NULL},
        {"0;1\n", 4, -EINVAL, NULL},
        {"0-256\n", 4, -EINVAL, NULL},
        {"0-3\nx", 4, -EINVAL, NULL},
        {"99999999999999999999999\n", 4, -EINVAL, NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        bool set[8];
        memset(set, 1, sizeof set);
        jf_err_t err = {0};
        int rc = agent_sysfs_parse_cpu_list(rows[i].text, set, rows[i].n, &err);
        if (rc != rows[i].rc) {
            fail_msg("row %zu '%s': rc %d, want %d", i, rows[i].text, rc, rows[i].rc);
        }
        for (size_t k = 0; rc == 0 && k < rows[i].n; k++) {
            if (set[k] != (rows[i].set[k] == '1')) {
                fail_msg("row %zu '%s': core %zu", i, rows[i].text, k);
            }
        }
        if (rc != 0) {
            assert_true(set[0]); // unchanged on failure
            assert_non_null(strstr(err.msg, "CPU list"));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Temporary trees: malformed, unreadable and missing files

// A layout whose files are at short paths under a temporary sysfs root.
static const agent_board_layout_t s_tmp_layout = {
    .type = JF_BOARD_XAVIER_NX, .jetpack_min = 5, .jetpack_max = 5,
    .gpu_devfreq_dir = "gpu", .gpu_load = {"gpu/load"},
    .emc_rate = {"emc/rate"}, .emc_activity = {"emc/mc_all"},
    .ina_driver = AGENT_INA_HWMON, .n_ina = 1,
    .ina = {{"7-0040", {"VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC"}}}, .input_rail = "VDD_IN",
    .thermal_dir = "thermal", .zones = {{"CPU-therm", "CPU"}},
};

typedef struct t_tmp {
    char root[PATH_MAX]; // holds sys/ and proc/
    char sys[PATH_MAX];
    char proc[PATH_MAX];
} t_tmp_t;

static void t_tmp_new(t_tmp_t *t)
{
    assert_int_equal(jft_tmpdir_new(t->root), 0);
    t_join(t->sys, t->root, "sys");
    t_join(t->proc, t->root, "proc");
    assert_int_equal(jf_fs_mkdir_p(t->sys, 0755, NULL), 0);
    bool one[1] = {true};
    t_write_stat(t->proc, one, 1, false);
}

static agent_sysfs_t *t_tmp_open(const t_tmp_t *t)
{
    agent_sysfs_opts_t o = {.sysfs_root = t->sys, .proc_root = t->proc, .layout = &s_tmp_layout,
                            .n_cpus = 1, .source = "sysfs"};
    jf_err_t err = {0};
    agent_sysfs_t *s = agent_sysfs_new(&o, &err);
    assert_non_null(s);
    return s;
}

// One malformed value in every kind of file: the quantity is left out, the rest stays.
static void test_malformed_files_absent(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool present;     // gpu_load_pct present?
        double load_pct;  // when present
    } rows[] = {
        {"500\n", true, 50.0},  {"0\n", true, 0.0},     {"1000", true, 100.0},
        {"abc\n", false, 0},    {"", false, 0},         {"\n", false, 0},
        {"1001\n", false, 0},   {"-1\n", false, 0},     {"50%\n", false, 0},
        {"99999999999999999999999999\n", false, 0},
        {"1111111111111111111111111111111111111111111111111111111111111111111111\n", false, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        t_tmp_t t;
        t_tmp_new(&t);
        t_put(t.sys, "gpu/load", rows[i].text);
        t_put(t.sys, "gpu/cur_freq", rows[i].text);
        t_put(t.sys, "emc/rate", rows[i].text);
        t_put(t.sys, "thermal/thermal_zone0/type", "CPU-therm\n");
        t_put(t.sys, "thermal/thermal_zone0/temp", rows[i].text);
        t_put(t.sys, "thermal/thermal_zone1/type", "GPU-therm\n");
        t_put(t.sys, "thermal/thermal_zone1/temp", "41000\n");
        t_put(t.sys, "bus/i2c/devices/7-0040/hwmon/hwmon2/in1_label", "VDD_IN\n");
        t_put(t.sys, "bus/i2c/devices/7-0040/hwmon/hwmon2/in1_input", rows[i].text);
        t_put(t.sys, "bus/i2c/devices/7-0040/hwmon/hwmon2/curr1_input", "1000\n");
        agent_sysfs_t *s = t_tmp_open(&t);
        json_t *sample = t_sample(s);
        json_t *load = json_object_get(sample, "gpu_load_pct");
        assert_int_equal(load != NULL, rows[i].present);
        if (load) {
            assert_true(json_real_value(load) == rows[i].load_pct);
        }
        // The other files hold the same text, in their own units and ranges. The layout does
        // not rename GPU-therm, so it keeps the kernel's name.
        json_t *temps = json_object_get(sample, "temps_mc");
        assert_int_equal(json_integer_value(json_object_get(temps, "GPU-therm")), 41000);
        json_t *rail = json_array_get(json_object_get(sample, "rails"), 0);
        assert_string_equal(json_string_value(json_object_get(rail, "name")), "VDD_IN");
        assert_int_equal(json_integer_value(json_object_get(rail, "current_ma")), 1000);
        // Without the voltage there is no power, so no input power either.
        bool has_v = json_object_get(rail, "voltage_mv") != NULL;
        assert_int_equal(json_object_get(rail, "power_mw") != NULL, has_v);
        assert_int_equal(json_object_get(sample, "input_power_mw") != NULL, has_v);
        json_decref(sample);
        agent_sysfs_destroy(&s);
        jft_tmpdir_remove(t.root);
    }
}

// A file that opens but cannot be read (a powered-off sensor fails its read; here a directory
// stands in for it) is left out; so is an offline zone at -256 C; and a zone below that.
static void test_unreadable_and_offline_zones(void **state)
{
    (void)state;
    t_tmp_t t;
    t_tmp_new(&t);
    char dir[PATH_MAX];
    t_put(t.sys, "thermal/thermal_zone0/type", "CPU-therm\n");
    t_join(dir, t.sys, "thermal/thermal_zone0/temp");
    assert_int_equal(jf_fs_mkdir_p(dir, 0755, NULL), 0);
    t_put(t.sys, "thermal/thermal_zone1/type", "GPU-therm\n");
    t_put(t.sys, "thermal/thermal_zone1/temp", "-256000\n");
    t_put(t.sys, "thermal/thermal_zone2/type", "AO-therm\n");
    t_put(t.sys, "thermal/thermal_zone2/temp", "-273000\n");
    t_put(t.sys, "thermal/thermal_zone10/type", "Tj-therm\n"); // numeric order: after zone2
    t_put(t.sys, "thermal/thermal_zone10/temp", "-255999\n");
    t_put(t.sys, "thermal/thermal_zone3/type", "CPU-therm\n"); // the same name again: ignored
    t_put(t.sys, "thermal/thermal_zone3/temp", "1\n");
    agent_sysfs_t *s = t_tmp_open(&t);
    assert_non_null(strstr(agent_sysfs_missing(s), "duplicate zone name"));
    json_t *sample = t_sample(s);
    json_t *want = json_pack("{s:I}", "Tj-therm", (json_int_t)-255999);
    t_assert_json_equal(json_object_get(sample, "temps_mc"), want, "temps_mc");
    json_decref(want);
    json_decref(sample);
    agent_sysfs_destroy(&s);
    jft_tmpdir_remove(t.root);
}

// A tree with only /proc/stat: every quantity missing is listed, the first sample has nothing
// (-EIO), the second has the load.
static void test_missing_everything(void **state)
{
    (void)state;
    t_tmp_t t;
    t_tmp_new(&t);
    agent_sysfs_t *s = t_tmp_open(&t);
    static const char *const listed[] = {"cpu_core_freq_hz (", "memory (", "cpu_online (",
                                         "gpu_freq_hz (", "gpu_load_pct (", "emc_freq_hz (",
                                         "emc_load_pct (", "rails (", "temps_mc ("};
    for (size_t i = 0; i < sizeof listed / sizeof listed[0]; i++) {
        if (!strstr(agent_sysfs_missing(s), listed[i])) {
            fail_msg("'%s' lacks '%s'", agent_sysfs_missing(s), listed[i]);
        }
    }
    json_t *sample = json_object();
    jf_err_t err = {0};
    assert_int_equal(agent_sysfs_sample(s, sample, &err), -EIO);
    assert_non_null(strstr(err.msg, "nothing readable"));
    bool one[1] = {true};
    t_write_stat(t.proc, one, 1, true);
    json_decref(sample);
    sample = t_sample(s);
    t_strip_clocks(sample);
    json_t *want = json_pack("{s:s, s:f, s:[f]}", "source", "sysfs", "cpu_load_pct", 10.0,
                             "cpu_core_load_pct", 10.0);
    t_assert_json_equal(sample, want, "only the load");
    json_decref(want);
    json_decref(sample);
    agent_sysfs_destroy(&s);
    // The host layout looks for RAPL zones and nothing of a Jetson.
    agent_sysfs_opts_t o = {.sysfs_root = t.sys, .proc_root = t.proc,
                            .layout = agent_board_table_host(), .source = "proc"};
    s = agent_sysfs_new(&o, NULL);
    assert_non_null(s);
    assert_non_null(strstr(agent_sysfs_missing(s), "rapl_energy_uj (no intel-rapl:N zone)"));
    assert_null(strstr(agent_sysfs_missing(s), "gpu"));
    assert_null(strstr(agent_sysfs_missing(s), "temps_mc"));
    assert_int_equal(agent_sysfs_n_cpus(s), 1); // from /proc/stat: no present list, no table
    agent_sysfs_destroy(&s);
    jft_tmpdir_remove(t.root);
}

static void test_missing_proc_stat(void **state)
{
    (void)state;
    char sys[PATH_MAX];
    jft_fixture("sysfs/nano/sys", sys);
    agent_sysfs_opts_t o = {.sysfs_root = sys, .proc_root = "/nonexistent/proc",
                            .layout = &s_tmp_layout, .n_cpus = 4, .source = "sysfs"};
    jf_err_t err = {0};
    assert_null(agent_sysfs_new(&o, &err));
    assert_int_equal(err.code, -ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/proc/stat"));
    assert_non_null(strstr(err.msg, "--proc-root"));
    char longroot[AGENT_SYSFS_ROOT_MAX + 2];
    memset(longroot, 'a', sizeof longroot - 1);
    longroot[sizeof longroot - 1] = '\0';
    o.proc_root = longroot;
    assert_null(agent_sysfs_new(&o, &err));
    assert_int_equal(err.code, -ENAMETOOLONG);
    agent_sysfs_destroy(NULL);
}

static size_t t_open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    size_t n = 0;
    assert_non_null(d);
    while (readdir(d)) {
        n++;
    }
    assert_int_equal(closedir(d), 0);
    return n;
}

// Files are opened once: a file replaced by a new one (a new inode) is not seen, the same file
// rewritten in place is; sampling opens no file (the fd count stays put).
static void test_open_once_pread(void **state)
{
    (void)state;
    t_tmp_t t;
    t_tmp_new(&t);
    t_put(t.sys, "gpu/load", "100\n");
    agent_sysfs_t *s = t_tmp_open(&t);
    json_t *sample = t_sample(s);
    assert_true(json_real_value(json_object_get(sample, "gpu_load_pct")) == 10.0);
    json_decref(sample);
    t_put(t.sys, "gpu/load", "200\n"); // truncate and rewrite: the same inode
    sample = t_sample(s);
    assert_true(json_real_value(json_object_get(sample, "gpu_load_pct")) == 20.0);
    json_decref(sample);
    char path[PATH_MAX];
    t_join(path, t.sys, "gpu/load");
    assert_int_equal(unlink(path), 0);
    t_put(t.sys, "gpu/load", "300\n"); // a new inode the reader never opened
    size_t fds = t_open_fds();
    for (int i = 0; i < 100; i++) {
        sample = t_sample(s);
        assert_true(json_real_value(json_object_get(sample, "gpu_load_pct")) == 20.0);
        json_decref(sample);
    }
    assert_int_equal(t_open_fds(), fds);
    agent_sysfs_destroy(&s);
    jft_tmpdir_remove(t.root);
}

// A core that comes online after creation gets its cpufreq file opened then (the only open
// after creation), and its load is null until it has two readings.
static void test_core_comes_online(void **state)
{
    (void)state;
    t_tmp_t t;
    t_tmp_new(&t);
    t_put(t.sys, "devices/system/cpu/present", "0-1\n");
    t_put(t.sys, "devices/system/cpu/online", "0\n");
    t_put(t.sys, "devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "1200000\n");
    agent_sysfs_t *s = t_tmp_open(&t);
    assert_int_equal(agent_sysfs_n_cpus(s), 2);
    json_t *sample = t_sample(s);
    json_t *want = json_pack("[I, n]", (json_int_t)1200000000);
    t_assert_json_equal(json_object_get(sample, "cpu_core_freq_hz"), want, "one core");
    json_decref(want);
    json_decref(sample);
    t_put(t.sys, "devices/system/cpu/cpu1/cpufreq/scaling_cur_freq", "2400000\n");
    t_put(t.sys, "devices/system/cpu/online", "0-1\n");
    bool both[2] = {true, true};
    t_write_stat(t.proc, both, 2, true);
    sample = t_sample(s);
    want = json_pack("[I, I]", (json_int_t)1200000000, (json_int_t)2400000000);
    t_assert_json_equal(json_object_get(sample, "cpu_core_freq_hz"), want, "two cores");
    json_decref(want);
    want = json_pack("[f, n]", 10.0); // cpu1 had no ticks in the previous reading
    t_assert_json_equal(json_object_get(sample, "cpu_core_load_pct"), want, "loads");
    json_decref(want);
    json_decref(sample);
    agent_sysfs_destroy(&s);
    jft_tmpdir_remove(t.root);
}

// A rail whose label file is missing takes the table's name; an "NC" label is skipped; a
// monitor without its driver directory is listed as missing.
static void test_rail_labels(void **state)
{
    (void)state;
    t_tmp_t t;
    t_tmp_new(&t);
    t_put(t.sys, "bus/i2c/devices/7-0040/hwmon/hwmon5/in1_input", "5000\n");
    t_put(t.sys, "bus/i2c/devices/7-0040/hwmon/hwmon5/curr1_input", "-3\n");
    t_put(t.sys, "bus/i2c/devices/7-0040/hwmon/hwmon5/in2_label", "NC\n");
    t_put(t.sys, "bus/i2c/devices/7-0040/hwmon/hwmon5/in2_input", "5000\n");
    t_put(t.sys, "bus/i2c/devices/7-0040/hwmon/hwmon5/in3_label", "VDD_SOC\n");
    t_put(t.sys, "bus/i2c/devices/7-0040/hwmon/hwmon5/curr3_input", "1\n");
    agent_sysfs_t *s = t_tmp_open(&t);
    json_t *sample = t_sample(s);
    // A slightly negative current near zero is what the INA3221 reads: kept, power rounded.
    json_t *want = json_pack("[{s:s, s:i, s:i, s:i}, {s:s, s:i}]", "name", "VDD_IN",
                             "voltage_mv", 5000, "current_ma", -3, "power_mw", -15, "name",
                             "VDD_SOC", "current_ma", 1);
    t_assert_json_equal(json_object_get(sample, "rails"), want, "rails");
    assert_int_equal(json_integer_value(json_object_get(sample, "input_power_mw")), -15);
    json_decref(want);
    json_decref(sample);
    agent_sysfs_destroy(&s);
    jft_tmpdir_remove(t.root);

    t_tmp_new(&t);
    t_put(t.sys, "bus/i2c/devices/7-0040/name", "ina3221\n"); // no hwmon dir under it
    s = t_tmp_open(&t);
    assert_non_null(strstr(agent_sysfs_missing(s), "7-0040/hwmon: no hwmonN entry"));
    sample = json_object();
    (void)agent_sysfs_sample(s, sample, NULL);
    assert_null(json_object_get(sample, "rails"));
    json_decref(sample);
    agent_sysfs_destroy(&s);
    jft_tmpdir_remove(t.root);
}

// ---------------------------------------------------------------------------------------------
// The per-family tables

static bool t_layout_has_rail(const agent_board_layout_t *l, const char *name)
{
    for (size_t i = 0; i < l->n_ina; i++) {
        for (size_t c = 0; c < AGENT_BOARD_INA_CHANNELS; c++) {
            if (l->ina[i].rails[c] && strcmp(l->ina[i].rails[c], name) == 0) {
                return true;
            }
        }
    }
    return false;
}

static const struct {
    jf_board_type_t type;
    int jp_min, jp_max;       // JetPack generations the family runs (§1.1)
    size_t n_cpus, n_clusters;
    const char *input_rail;   // NULL: none (§2.5)
    agent_ina_driver_t jp4, jp5; // driver per generation (NONE: not run there)
} s_families[] = {
    {JF_BOARD_NANO, 4, 4, 4, 1, "POM_5V_IN", AGENT_INA_IIO, AGENT_INA_NONE},
    {JF_BOARD_AGX_XAVIER, 4, 5, 8, 4, NULL, AGENT_INA_IIO, AGENT_INA_HWMON},
    {JF_BOARD_XAVIER_NX, 4, 5, 6, 3, "VDD_IN", AGENT_INA_IIO, AGENT_INA_HWMON},
    {JF_BOARD_ORIN_AGX, 5, 6, 12, 3, NULL, AGENT_INA_NONE, AGENT_INA_HWMON},
    {JF_BOARD_ORIN_NANO, 5, 6, 6, 2, "VDD_IN", AGENT_INA_NONE, AGENT_INA_HWMON},
};

static void test_board_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof s_families / sizeof s_families[0]; i++) {
        const agent_board_ident_t *id = agent_board_table_ident(s_families[i].type);
        assert_non_null(id);
        assert_int_equal(id->n_cpus, s_families[i].n_cpus);
        assert_int_equal(id->n_clusters, s_families[i].n_clusters);
        assert_int_equal(id->cluster_first_cpu[0], 0);
        for (size_t c = 1; c < id->n_clusters; c++) {
            assert_true(id->cluster_first_cpu[c] > id->cluster_first_cpu[c - 1]);
            assert_true(id->cluster_first_cpu[c] < id->n_cpus);
        }
        for (int jp = 3; jp <= 7; jp++) {
            const agent_board_layout_t *l = agent_board_table_layout(s_families[i].type, jp);
            bool runs = jp >= s_families[i].jp_min && jp <= s_families[i].jp_max;
            assert_int_equal(l != NULL, runs);
            if (!l) {
                continue;
            }
            assert_int_equal(l->ina_driver, jp == 4 ? s_families[i].jp4 : s_families[i].jp5);
            assert_non_null(agent_board_table_ina_files(l->ina_driver));
            assert_non_null(l->gpu_devfreq_dir);
            assert_non_null(l->gpu_load[0]);
            assert_non_null(l->emc_rate[0]);
            assert_non_null(l->thermal_dir);
            assert_null(l->rapl_dir);
            assert_int_equal(l->input_rail != NULL, s_families[i].input_rail != NULL);
            if (l->input_rail) {
                assert_string_equal(l->input_rail, s_families[i].input_rail);
                assert_true(t_layout_has_rail(l, l->input_rail));
            }
        }
        const agent_board_layout_t *all[8];
        size_t n = agent_board_table_layouts(s_families[i].type, all, 8);
        assert_int_equal(n, (size_t)(s_families[i].jp_max - s_families[i].jp_min + 1));
        assert_int_equal(all[0]->jetpack_max, s_families[i].jp_max); // newest first
    }
    assert_null(agent_board_table_ident(JF_BOARD_HOST));
    assert_null(agent_board_table_ident(JF_BOARD_TYPE_COUNT));
    assert_ptr_equal(agent_board_table_layout(JF_BOARD_HOST, 0), agent_board_table_host());
    assert_non_null(agent_board_table_host()->rapl_dir);
    assert_null(agent_board_table_host()->thermal_dir);
    assert_null(agent_board_table_ina_files(AGENT_INA_NONE));
}

static void test_zone_names(void **state)
{
    (void)state;
    const agent_board_layout_t *jp5 = agent_board_table_layout(JF_BOARD_ORIN_AGX, 5);
    const agent_board_layout_t *jp6 = agent_board_table_layout(JF_BOARD_ORIN_AGX, 6);
    assert_string_equal(agent_board_table_zone_name(jp5, "Tj-therm"), "tj");
    assert_string_equal(agent_board_table_zone_name(jp5, "Tboard_tegra"), "Tboard");
    assert_string_equal(agent_board_table_zone_name(jp6, "tj-thermal"), "tj");
    assert_string_equal(agent_board_table_zone_name(jp6, "cv0-thermal"), "cv0");
    assert_string_equal(agent_board_table_zone_name(jp6, "new-zone"), "new-zone");
    const agent_board_layout_t *nano = agent_board_table_layout(JF_BOARD_NANO, 4);
    assert_string_equal(agent_board_table_zone_name(nano, "thermal-fan-est"), "thermal");
    assert_string_equal(agent_board_table_zone_name(nano, "PMIC-Die"), "PMIC");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_boards),
        cmocka_unit_test(test_fixture_missing_listed),
        cmocka_unit_test(test_parse_value_table),
        cmocka_unit_test(test_parse_cpu_list_table),
        cmocka_unit_test(test_malformed_files_absent),
        cmocka_unit_test(test_unreadable_and_offline_zones),
        cmocka_unit_test(test_missing_everything),
        cmocka_unit_test(test_missing_proc_stat),
        cmocka_unit_test(test_open_once_pread),
        cmocka_unit_test(test_core_comes_online),
        cmocka_unit_test(test_rail_labels),
        cmocka_unit_test(test_board_table),
        cmocka_unit_test(test_zone_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
