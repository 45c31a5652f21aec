/* Unit tests for agent_nvpmodel: the five fixture confs (tests/fixtures/nvpmodel/, built from
 * jetson-platforms.md §4.4) mode by mode, their agreement with jf_board's family table, units and
 * settings, and a table of malformed and tolerated lines with the file:line each error names. */
#include "agent_nvpmodel.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define T_NL        AGENT_NVPMODEL_NO_LIMIT
#define T_UNSET     AGENT_NVPMODEL_UNSET
#define MHZ(v)      ((int64_t) ((v) *1e6 + 0.5))
#define T_MODES_MAX 9
#define T_CLUSTERS  4

typedef struct t_mode {
    int id;
    const char *name;
    int n_online;
    int64_t cpu_max_hz; // every online cluster; the board's cpu_min_hz is the minimum
    int64_t gpu_min_hz;
    int64_t gpu_max_hz;
    int64_t emc_max_hz;
} t_mode_t;

typedef struct t_board {
    const char *file;
    jf_board_type_t type;
    int default_id;
    int n_cores;
    int clusters[T_CLUSTERS]; // first cores; -1 ends the list
    int64_t cpu_min_hz;
    size_t n_modes;
    t_mode_t modes[T_MODES_MAX];
} t_board_t;

// jetson-platforms.md §4.4, transcribed independently of the fixtures (MHz as printed there).
static const t_board_t s_boards[] = {
    {"nano.conf",
     JF_BOARD_NANO,
     0,
     4,
     {0, -1, -1, -1},
     0,
     2,
     {{0, "MAXN", 4, T_NL, 0, T_NL, T_NL}, {1, "5W", 2, MHZ(918), 0, MHZ(640), MHZ(1600)}}},
    {"agx-xavier.conf",
     JF_BOARD_AGX_XAVIER,
     2,
     8,
     {0, 2, 4, 6},
     MHZ(1200),
     8,
     {{0, "MAXN", 8, T_NL, 0, T_NL, T_NL},
      {1, "MODE_10W", 2, MHZ(1200), 0, MHZ(520), MHZ(1065.6)},
      {2, "MODE_15W", 4, MHZ(1200), 0, MHZ(670), MHZ(1331.2)},
      {3, "MODE_30W_ALL", 8, MHZ(1200), 0, MHZ(900), MHZ(1600)},
      {4, "MODE_30W_6CORE", 6, MHZ(1450), 0, MHZ(900), MHZ(1600)},
      {5, "MODE_30W_4CORE", 4, MHZ(1780), 0, MHZ(900), MHZ(1600)},
      {6, "MODE_30W_2CORE", 2, MHZ(2100), 0, MHZ(900), MHZ(1600)},
      {7, "MODE_15W_DESKTOP", 4, MHZ(2188.8), MHZ(318.75), MHZ(670), MHZ(1331.2)}}},
    {"xavier-nx.conf",
     JF_BOARD_XAVIER_NX,
     2,
     6,
     {0, 2, 4, -1},
     MHZ(1190.4),
     9,
     {{0, "MODE_15W_2CORE", 2, MHZ(1907.2), 0, MHZ(1109.25), MHZ(1600)},
      {1, "MODE_15W_4CORE", 4, MHZ(1420.8), 0, MHZ(1109.25), MHZ(1600)},
      {2, "MODE_15W_6CORE", 6, MHZ(1420.8), 0, MHZ(1109.25), MHZ(1600)},
      {3, "MODE_10W_2CORE", 2, MHZ(1497.6), 0, MHZ(803.25), MHZ(1600)},
      {4, "MODE_10W_4CORE", 4, MHZ(1190.4), 0, MHZ(803.25), MHZ(1600)},
      {5, "MODE_10W_DESKTOP", 4, MHZ(1907.2), 0, MHZ(510), MHZ(1600)},
      {6, "MODE_20W_2CORE", 2, MHZ(1907.2), 0, MHZ(1109.25), MHZ(1866)},
      {7, "MODE_20W_4CORE", 4, MHZ(1420.8), 0, MHZ(1109.25), MHZ(1866)},
      {8, "MODE_20W_6CORE", 6, MHZ(1420.8), 0, MHZ(1109.25), MHZ(1866)}}},
    {"orin-agx.conf",
     JF_BOARD_ORIN_AGX,
     2,
     12,
     {0, 4, 8, -1},
     MHZ(729.6),
     4,
     {{0, "MAXN", 12, T_NL, 0, T_NL, T_NL},
      {1, "MODE_15W", 4, MHZ(1113.6), 0, MHZ(408), MHZ(2133)},
      {2, "MODE_30W", 8, MHZ(1728), 0, MHZ(612), T_NL},
      {3, "MODE_50W", 12, MHZ(1497.6), 0, MHZ(816), T_NL}}},
    {"orin-nano.conf",
     JF_BOARD_ORIN_NANO,
     0,
     6,
     {0, 4, -1, -1},
     MHZ(729.6),
     2,
     {{0, "15W", 6, T_NL, 0, T_NL, T_NL}, {1, "7W", 4, MHZ(960), 0, MHZ(408), MHZ(2133)}}},
};

#define T_N_BOARDS (sizeof s_boards / sizeof s_boards[0])

static agent_nvpmodel_t *t_load_fixture(const char *file)
{
    const char *root = getenv("JF_FIXTURES");
    assert_non_null(root);
    char path[PATH_MAX];
    (void) snprintf(path, sizeof path, "%s/nvpmodel/%s", root, file);
    jf_err_t err = {0};
    agent_nvpmodel_t *conf = agent_nvpmodel_load(path, &err);
    if (!conf) {
        fail_msg("%s: %s", path, err.msg);
    }
    return conf;
}

static void t_check_cpu(const t_board_t *b, const t_mode_t *want, const agent_nvpmodel_mode_t *m)
{
    uint64_t all = (UINT64_C(1) << b->n_cores) - 1;
    assert_int_equal(agent_nvpmodel_mode_n_online(m), want->n_online);
    assert_int_equal(m->online_mask, (UINT64_C(1) << want->n_online) - 1);
    assert_int_equal(m->listed_mask, all);
    for (size_t k = 0; k < T_CLUSTERS && b->clusters[k] >= 0; k++) {
        const agent_nvpmodel_clock_t *c =
            agent_nvpmodel_mode_clock(m, AGENT_NVPMODEL_CLOCK_CPU, b->clusters[k]);
        if (b->clusters[k] >= want->n_online) {
            assert_null(c); // NVIDIA confs set no limits on a cluster whose cores are offline
            continue;
        }
        assert_non_null(c);
        assert_int_equal(c->min_hz, b->cpu_min_hz);
        assert_int_equal(c->max_hz, want->cpu_max_hz);
    }
}

static void t_check_mode(const t_board_t *b, const t_mode_t *want, const agent_nvpmodel_mode_t *m)
{
    assert_non_null(m);
    assert_int_equal(m->id, want->id);
    assert_string_equal(m->name, want->name);
    t_check_cpu(b, want, m);
    const agent_nvpmodel_clock_t *gpu = agent_nvpmodel_mode_clock(m, AGENT_NVPMODEL_CLOCK_GPU, 0);
    assert_non_null(gpu);
    assert_int_equal(gpu->min_hz, want->gpu_min_hz);
    assert_int_equal(gpu->max_hz, want->gpu_max_hz);
    const agent_nvpmodel_clock_t *emc = agent_nvpmodel_mode_clock(m, AGENT_NVPMODEL_CLOCK_EMC, 0);
    assert_non_null(emc);
    assert_int_equal(emc->min_hz, T_UNSET);
    assert_int_equal(emc->max_hz, want->emc_max_hz);
}

static void test_fixture_modes(void **state)
{
    (void) state;
    size_t checked = 0;
    for (size_t i = 0; i < T_N_BOARDS; i++) {
        const t_board_t *b = &s_boards[i];
        agent_nvpmodel_t *conf = t_load_fixture(b->file);
        assert_int_equal(agent_nvpmodel_default_id(conf), b->default_id);
        assert_int_equal(agent_nvpmodel_n_modes(conf), b->n_modes);
        for (size_t k = 0; k < b->n_modes; k++) {
            t_check_mode(b, &b->modes[k], agent_nvpmodel_mode_at(conf, k));
            t_check_mode(b, &b->modes[k], agent_nvpmodel_mode(conf, b->modes[k].id));
            checked++;
        }
        assert_null(agent_nvpmodel_mode_at(conf, b->n_modes));
        assert_null(agent_nvpmodel_mode(conf, 200));
        agent_nvpmodel_destroy(&conf);
        assert_null(conf);
    }
    print_message("boards=%zu modes_checked=%zu\n", T_N_BOARDS, checked);
    assert_int_equal(checked, 2 + 8 + 9 + 4 + 2);
}

// The confs and jf_board's family table (what the coordinator validates runs against) must list
// the same ids, names and default.
static void test_fixture_matches_board_table(void **state)
{
    (void) state;
    for (size_t i = 0; i < T_N_BOARDS; i++) {
        agent_nvpmodel_t *conf = t_load_fixture(s_boards[i].file);
        const jf_board_family_t *fam = jf_board_family(s_boards[i].type);
        assert_non_null(fam);
        assert_int_equal(agent_nvpmodel_n_modes(conf), fam->n_modes);
        assert_int_equal(agent_nvpmodel_default_id(conf), fam->default_mode_id);
        for (size_t k = 0; k < fam->n_modes; k++) {
            const agent_nvpmodel_mode_t *m = agent_nvpmodel_mode(conf, fam->modes[k].id);
            assert_non_null(m);
            assert_string_equal(m->name, fam->modes[k].name);
        }
        agent_nvpmodel_destroy(&conf);
    }
}

static const agent_nvpmodel_param_t *t_param(const agent_nvpmodel_t *conf, const char *name)
{
    for (size_t i = 0; i < agent_nvpmodel_n_params(conf); i++) {
        const agent_nvpmodel_param_t *p = agent_nvpmodel_param_at(conf, i);
        if (strcmp(p->name, name) == 0) {
            return p;
        }
    }
    fail_msg("no PARAM %s", name);
    return NULL;
}

static void test_params_and_settings(void **state)
{
    (void) state;
    agent_nvpmodel_t *conf = t_load_fixture("xavier-nx.conf");
    const agent_nvpmodel_param_t *p = t_param(conf, "CPU_DENVER_1");
    assert_int_equal(p->type, AGENT_NVPMODEL_CLOCK);
    assert_int_equal(p->kind, AGENT_NVPMODEL_CLOCK_CPU);
    assert_int_equal(p->first_core, 2);
    assert_int_equal(p->unit_hz, 1000);
    assert_int_equal(p->n_args, 6);
    assert_string_equal(p->args[1].name, "MAX_FREQ");
    assert_string_equal(p->args[1].path, "/sys/devices/system/cpu/cpu2/cpufreq/scaling_max_freq");
    p = t_param(conf, "GPU");
    assert_int_equal(p->kind, AGENT_NVPMODEL_CLOCK_GPU);
    assert_int_equal(p->unit_hz, 1);
    assert_int_equal(p->first_core, -1);
    p = t_param(conf, "VDDIN_OC_LIMIT");
    assert_int_equal(p->type, AGENT_NVPMODEL_HWMON);
    assert_string_equal(p->args[0].attr, "curr1_max");
    assert_string_equal(t_param(conf, "EMC")->args[0].path,
                        "/sys/kernel/nvpmodel_emc_cap/emc_iso_cap");
    // Settings keep file order and the values as written: the 20 W modes raise the OC warning.
    const agent_nvpmodel_mode_t *m = agent_nvpmodel_mode(conf, 6);
    const agent_nvpmodel_setting_t *last = &m->settings[m->n_settings - 2];
    const agent_nvpmodel_param_t *lp = agent_nvpmodel_param_at(conf, last->param);
    assert_string_equal(lp->name, "VDDIN_OC_LIMIT");
    assert_string_equal(lp->args[last->arg].name, "WARN");
    assert_string_equal(last->value, "4000");
    assert_string_equal(agent_nvpmodel_param_at(conf, m->settings[0].param)->name, "CPU_ONLINE");
    assert_string_equal(agent_nvpmodel_clock_kind_name(AGENT_NVPMODEL_CLOCK_EMC), "emc");
    agent_nvpmodel_destroy(&conf);
    agent_nvpmodel_destroy(&conf); // a second destroy is harmless
    agent_nvpmodel_destroy(NULL);
}

static void test_load_errors(void **state)
{
    (void) state;
    jf_err_t err = {0};
    assert_null(agent_nvpmodel_load("/nonexistent/nvpmodel.conf", &err));
    assert_int_equal(err.code, -ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/nvpmodel.conf: cannot open"));
    char *big = calloc(1, AGENT_NVPMODEL_FILE_MAX + 2);
    assert_non_null(big);
    memset(big, '#', AGENT_NVPMODEL_FILE_MAX + 1);
    assert_null(agent_nvpmodel_parse(big, AGENT_NVPMODEL_FILE_MAX + 1, "big.conf", &err));
    assert_int_equal(err.code, -EFBIG);
    assert_non_null(strstr(err.msg, "big.conf: larger than"));
    free(big);
}

// ---------------------------------------------------------------------------------------------
// Table of texts: lines 1-6 define CPU_ONLINE (2 cores) and GPU; 7-8 open mode 0; the row's
// own lines follow from line 9.

#define T_PARAMS                                                                                   \
    "< PARAM TYPE=FILE NAME=CPU_ONLINE >\n"                                                        \
    "CORE_0 /sys/devices/system/cpu/cpu0/online\n"                                                 \
    "CORE_1 /sys/devices/system/cpu/cpu1/online\n"                                                 \
    "< PARAM TYPE=CLOCK NAME=GPU >\n"                                                              \
    "MAX_FREQ /sys/devices/gpu/max_freq\n"                                                         \
    "MIN_FREQ /sys/devices/gpu/min_freq\n"
#define T_MODE0 "< POWER_MODEL ID=0 NAME=M0 >\nCPU_ONLINE CORE_0 1\n"
#define T_HEAD  T_PARAMS T_MODE0
#define T_TAIL  "< PM_CONFIG DEFAULT=0 >\n"
#define T(s)    s, sizeof(s) - 1 // keeps an embedded NUL byte in the length

typedef struct t_row {
    const char *text;
    size_t len;
    int code;         // 0: parses
    const char *frag; // in err.msg when code != 0
} t_row_t;

static const t_row_t s_rows[] = {
    // Tolerated: NVIDIA's "<PARAM" without a blank, tabs, CRLF, trailing blanks, comments.
    {T(T_HEAD T_TAIL), 0, NULL},
    {T("<PARAM TYPE=FILE NAME=X >\nA /a\n<POWER_MODEL ID=0 NAME=M>\nX A on\n<PM_CONFIG DEFAULT=0>"),
     0, NULL},
    {T("# c\n\n  < PARAM\tTYPE=FILE  NAME=X >  \r\nA\t/a\r\n< POWER_MODEL NAME=M ID=0 >\r\n"
       "X A 1\r\n  # indented comment\n< PM_CONFIG DEFAULT=0 >\r\n"),
     0, NULL},
    {T(T_HEAD "GPU MAX_FREQ -1\nGPU MIN_FREQ 0\n# caf\xc3\xa9\n" T_TAIL), 0, NULL},
    // Whole-file problems
    {T(""), -EINVAL, "t.conf: no POWER_MODEL section"},
    {T(T_PARAMS T_TAIL), -EINVAL, "t.conf: no POWER_MODEL section"},
    {T(T_HEAD), -EINVAL, "t.conf: no '< PM_CONFIG DEFAULT=n >' section"},
    {T(T_HEAD "< PM_CONFIG DEFAULT=3 >\n"), -EINVAL, "t.conf:9: PM_CONFIG DEFAULT=3 names no"},
    {T(T_HEAD T_TAIL T_TAIL), -EINVAL, "t.conf:10: PM_CONFIG given twice (first at line 9)"},
    // Bytes and lines
    {T(T_HEAD "GPU MAX_FREQ 1\0\n" T_TAIL), -EINVAL, "t.conf:9: NUL byte"},
    {T(T_HEAD "GPU MAX_FREQ \x01\n" T_TAIL), -EINVAL, "t.conf:9: control or non-ASCII"},
    {T(T_HEAD "GPU MAX_FREQ 1\xc3\xa9\n" T_TAIL), -EINVAL, "t.conf:9: control or non-ASCII"},
    {T("CORE_0 /sys/devices/system/cpu/cpu0/online\n"), -EINVAL, "t.conf:1: line outside a"},
    {T(T_HEAD T_TAIL "GPU MAX_FREQ 1\n"), -EINVAL, "t.conf:10: PM_CONFIG takes no lines"},
    // Headers
    {T(T_HEAD "< PM_CONFIG DEFAULT=0\n"), -EINVAL, "t.conf:9: a section header must end with"},
    {T(T_HEAD "< PM_CONFIG DEFAULT=0 > x\n"), -EINVAL, "t.conf:9: a section header must end"},
    {T(T_HEAD "< >\n" T_TAIL), -EINVAL, "t.conf:9: a section header needs a kind"},
    {T(T_HEAD "< POWER_MODE ID=1 NAME=M1 >\n" T_TAIL), -EINVAL, "t.conf:9: unknown section"},
    {T("< PM_STATUS DEFAULT=0 >\n"), -EINVAL, "t.conf:1: the legacy PM_STATUS format"},
    {T(T_HEAD "< PARAM TYPE=SYSFS NAME=X >\n" T_TAIL), -EINVAL, "t.conf:9: unknown PARAM TYPE"},
    {T(T_HEAD "< PARAM TYPE=FILE >\n" T_TAIL), -EINVAL, "t.conf:9: the header has no NAME="},
    {T(T_HEAD "< PARAM TYPE=FILE NAME=X NAME=Y >\n"), -EINVAL, "t.conf:9: key NAME is given twice"},
    {T(T_HEAD "< PARAM TYPE=FILE NAME= >\n"), -EINVAL, "t.conf:9: key NAME is given twice or has"},
    {T(T_HEAD "< PARAM TYPE=FILE NAME=X COLOR=red >\n"), -EINVAL, "t.conf:9: unknown key 'COLOR'"},
    {T(T_HEAD "< PARAM TYPE=FILE NAME=GPU >\n"), -EINVAL, "t.conf:9: PARAM NAME 'GPU' is not"},
    {T(T_HEAD "< PARAM TYPE=FILE NAME=A-B >\n"), -EINVAL, "t.conf:9: PARAM NAME 'A-B' is not"},
    {T(T_HEAD "< PARAM TYPE FILE NAME=X >\n"), -EINVAL, "t.conf:9: expected KEY=VALUE"},
    {T(T_HEAD "< POWER_MODEL ID=0 NAME=M9 >\n" T_TAIL), -EINVAL, "t.conf:9: POWER_MODEL ID=0 NAME"},
    {T(T_HEAD "< POWER_MODEL ID=1 NAME=M0 >\n" T_TAIL), -EINVAL,
     "repeats the id or name of line 7"},
    {T(T_HEAD "< POWER_MODEL ID=256 NAME=M >\n"), -EINVAL, "t.conf:9: POWER_MODEL ID must be an"},
    {T(T_HEAD "< POWER_MODEL ID=-1 NAME=M >\n"), -EINVAL, "t.conf:9: POWER_MODEL ID must be an"},
    {T(T_HEAD "< POWER_MODEL ID=0x1 NAME=M >\n"), -EINVAL, "t.conf:9: POWER_MODEL ID must be an"},
    {T(T_HEAD "< POWER_MODEL ID=+1 NAME=M >\n"), -EINVAL, "t.conf:9: POWER_MODEL ID must be an"},
    {T(T_HEAD "< POWER_MODEL ID=1 NAME=15W-MAX >\n"), -EINVAL, "t.conf:9: POWER_MODEL NAME '15W-"},
    {T(T_HEAD "< POWER_MODEL ID=1 NAME=ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456 >\n"), -EINVAL,
     "t.conf:9: POWER_MODEL NAME"},
    {T(T_HEAD "< PM_CONFIG DEFAULT=zero >\n"), -EINVAL, "t.conf:9: PM_CONFIG DEFAULT must be"},
    // PARAM lines
    {T("< PARAM TYPE=FILE NAME=X >\nA\n"), -EINVAL, "t.conf:2: a X line must be '<ARG> <path>'"},
    {T("< PARAM TYPE=FILE NAME=X >\nA /a /b\n"), -EINVAL, "t.conf:2: a X line must be"},
    {T("< PARAM TYPE=FILE NAME=X >\nA relative/path\n"), -EINVAL,
     "t.conf:2: 'relative/path' is not an absolute path"},
    {T("< PARAM TYPE=FILE NAME=X >\nA /a\nA /b\n"), -EINVAL, "t.conf:3: argument 'A' of X is"},
    {T("< PARAM TYPE=CLOCK NAME=X >\nCUR_FREQ /a\n"), -EINVAL, "t.conf:2: unknown CLOCK argument"},
    {T("< PARAM TYPE=HWMON NAME=X >\nWARN /a\n"), -EINVAL,
     "t.conf:2: a X line must be '<ARG> <dir> <attribute>'"},
    {T("< PARAM TYPE=HWMON NAME=X >\nWARN /a curr1-max\n"), -EINVAL,
     "t.conf:2: '/a' is not an absolute path of at most 191 bytes followed by an attribute"},
    {T("< PARAM TYPE=FILE NAME=CPU_ONLINE >\nCORE_0 /sys/devices/system/cpu/cpu0/offline\n"),
     -EINVAL, "t.conf:2: CPU_ONLINE paths must be"},
    {T("< PARAM TYPE=FILE NAME=CPU_ONLINE >\nCORE_0 /sys/devices/system/cpu/cpu00/online\n"),
     -EINVAL, "t.conf:2: CPU_ONLINE paths must be"},
    {T("< PARAM TYPE=FILE NAME=CPU_ONLINE >\nCORE_0 /sys/devices/system/cpu/cpu64/online\n"),
     -EINVAL, "t.conf:2: CPU_ONLINE paths must be"},
    {T("< PARAM TYPE=CLOCK NAME=C >\nMAX_FREQ /sys/devices/system/cpu/cpu0/cpufreq/a\n"
       "MIN_FREQ /sys/devices/system/cpu/cpu2/cpufreq/b\n"),
     -EINVAL, "t.conf:3: CLOCK C names both cpu0 and cpu2"},
    // POWER_MODEL lines
    {T(T_HEAD "GPU MAX_FREQ\n" T_TAIL), -EINVAL, "t.conf:9: a POWER_MODEL line must be"},
    {T(T_HEAD "GPU MAX_FREQ 1 2\n" T_TAIL), -EINVAL, "t.conf:9: a POWER_MODEL line must be"},
    {T(T_HEAD "EMC MAX_FREQ 0\n" T_TAIL), -EINVAL, "t.conf:9: unknown PARAM 'EMC'"},
    {T(T_HEAD "GPU CUR_FREQ 1\n" T_TAIL), -EINVAL, "t.conf:9: PARAM GPU has no argument 'CUR_"},
    {T(T_PARAMS "FREQ_TABLE /t\n" T_MODE0 "GPU FREQ_TABLE 1\n" T_TAIL), -EINVAL,
     "t.conf:10: a mode sets only MIN_FREQ or MAX_FREQ of GPU, not FREQ_TABLE"},
    {T(T_HEAD "GPU MAX_FREQ abc\n" T_TAIL), -EINVAL, "t.conf:9: GPU MAX_FREQ must be -1 or"},
    {T(T_HEAD "GPU MAX_FREQ -2\n" T_TAIL), -EINVAL, "t.conf:9: GPU MAX_FREQ must be -1 or"},
    {T(T_HEAD "GPU MAX_FREQ 0x10\n" T_TAIL), -EINVAL, "t.conf:9: GPU MAX_FREQ must be -1 or"},
    {T(T_HEAD "GPU MAX_FREQ 1.5\n" T_TAIL), -EINVAL, "t.conf:9: GPU MAX_FREQ must be -1 or"},
    {T(T_HEAD "GPU MAX_FREQ +5\n" T_TAIL), -EINVAL, "t.conf:9: GPU MAX_FREQ must be -1 or"},
    {T(T_HEAD "GPU MAX_FREQ 100000000001\n" T_TAIL), -EINVAL, "must be -1 or an integer in 0..1"},
    {T(T_HEAD "GPU MAX_FREQ 99999999999999999999\n" T_TAIL), -EINVAL, "t.conf:9: GPU MAX_FREQ"},
    {T(T_HEAD "GPU MAX_FREQ 1\nGPU MAX_FREQ 2\n" T_TAIL), -EINVAL,
     "t.conf:10: 'GPU MAX_FREQ' is set twice in mode 0 (first at line 9)"},
    {T(T_HEAD "CPU_ONLINE CORE_1 2\n" T_TAIL), -EINVAL, "t.conf:9: CPU_ONLINE CORE_1 must be 0"},
    {T(T_HEAD "CPU_ONLINE CORE_1 on\n" T_TAIL), -EINVAL, "t.conf:9: CPU_ONLINE CORE_1 must be 0"},
    {T(T_PARAMS "< POWER_MODEL ID=0 NAME=M0 >\nCPU_ONLINE CORE_0 0\n" T_TAIL), -EINVAL,
     "t.conf:8: cpu0 cannot be offline"},
    {T("< PARAM TYPE=FILE NAME=X >\nA /a\n< POWER_MODEL ID=0 NAME=M >\nX A o/n\n" T_TAIL), -EINVAL,
     "t.conf:4: X value 'o/n' is not"},
    {T("< PARAM TYPE=FILE NAME=X >\nA /a\n< POWER_MODEL ID=0 NAME=M >\n"
       "X A 0123456789012345678901234567890123\n" T_TAIL),
     -EINVAL, "t.conf:4: value longer than 31 bytes"},
    {T("< PARAM TYPE=HWMON NAME=X >\nW /a c\n< POWER_MODEL ID=0 NAME=M >\nX W -5\n" T_TAIL),
     -EINVAL, "t.conf:4: X W must be a non-negative integer"},
};

static void test_table(void **state)
{
    (void) state;
    size_t failed = 0;
    size_t n_rows = sizeof s_rows / sizeof s_rows[0];
    for (size_t i = 0; i < n_rows; i++) {
        const t_row_t *r = &s_rows[i];
        jf_err_t err = {0};
        agent_nvpmodel_t *conf = agent_nvpmodel_parse(r->text, r->len, "t.conf", &err);
        bool ok =
            r->code == 0 ? conf != NULL : !conf && err.code == r->code && strstr(err.msg, r->frag);
        if (!ok) {
            print_error("row %zu: got %s, code %d, msg '%s'; want code %d '%s'\n", i,
                        conf ? "a conf" : "NULL", err.code, err.msg, r->code,
                        r->frag ? r->frag : "");
            failed++;
        }
        agent_nvpmodel_destroy(&conf);
    }
    print_message("rows=%zu failed=%zu\n", n_rows, failed);
    assert_int_equal(failed, 0);
}

// Line 1 of the long-line row is 512 bytes: one over the limit.
static void test_long_line(void **state)
{
    (void) state;
    char text[AGENT_NVPMODEL_LINE_MAX + 64];
    memset(text, '#', AGENT_NVPMODEL_LINE_MAX);
    (void) snprintf(text + AGENT_NVPMODEL_LINE_MAX, 64, "#\n");
    jf_err_t err = {0};
    assert_null(agent_nvpmodel_parse(text, strlen(text), "t.conf", &err));
    assert_non_null(strstr(err.msg, "t.conf:1: line longer than 511 bytes"));
    text[AGENT_NVPMODEL_LINE_MAX] = '\n'; // 511 bytes: only a comment, then no modes
    assert_null(agent_nvpmodel_parse(text, strlen(text), "t.conf", &err));
    assert_non_null(strstr(err.msg, "t.conf: no POWER_MODEL section"));
}

static void test_values(void **state)
{
    (void) state;
    static const char text[] = T_PARAMS "< PARAM TYPE=CLOCK NAME=EMC >\nMAX_FREQ /e\n"
                                        "< PARAM TYPE=CLOCK NAME=CPU_A >\n"
                                        "MAX_FREQ /sys/devices/system/cpu/cpu1/cpufreq/m\n"
                                        "< POWER_MODEL ID=3 NAME=M3 >\nCPU_ONLINE CORE_1 0\n"
                                        "GPU MIN_FREQ 0\nEMC MAX_FREQ 0\nCPU_A MAX_FREQ 960000\n"
                                        "< POWER_MODEL ID=4 NAME=M4 >\nGPU MAX_FREQ -1\n"
                                        "EMC MAX_FREQ 2133000000\n< PM_CONFIG DEFAULT=4 >\n";
    jf_err_t err = {0};
    agent_nvpmodel_t *conf = agent_nvpmodel_parse(text, sizeof text - 1, "v.conf", &err);
    assert_non_null(conf);
    const agent_nvpmodel_mode_t *m = agent_nvpmodel_mode(conf, 3);
    assert_int_equal(m->listed_mask, 2);
    assert_int_equal(m->online_mask, 0);
    assert_int_equal(agent_nvpmodel_mode_n_online(m), 0);
    const agent_nvpmodel_clock_t *c = agent_nvpmodel_mode_clock(m, AGENT_NVPMODEL_CLOCK_GPU, 0);
    assert_int_equal(c->min_hz, 0); // GPU MIN_FREQ 0 is the lowest step, not "no limit"
    assert_int_equal(c->max_hz, T_UNSET);
    c = agent_nvpmodel_mode_clock(m, AGENT_NVPMODEL_CLOCK_EMC, 0);
    assert_int_equal(c->max_hz, T_NL); // EMC MAX_FREQ 0 removes the cap
    c = agent_nvpmodel_mode_clock(m, AGENT_NVPMODEL_CLOCK_CPU, 1);
    assert_int_equal(c->max_hz, INT64_C(960000000));
    assert_null(agent_nvpmodel_mode_clock(m, AGENT_NVPMODEL_CLOCK_CPU, 0));
    m = agent_nvpmodel_mode(conf, 4);
    assert_int_equal(agent_nvpmodel_mode_clock(m, AGENT_NVPMODEL_CLOCK_GPU, 0)->max_hz, T_NL);
    assert_int_equal(agent_nvpmodel_mode_clock(m, AGENT_NVPMODEL_CLOCK_EMC, 0)->max_hz,
                     INT64_C(2133000000));
    assert_int_equal(agent_nvpmodel_default_id(conf), 4);
    agent_nvpmodel_destroy(&conf);
}

// nvpmodel's status file (§4.1): the mode it names, or a refusal quoting it.
static void test_status(void **state)
{
    (void) state;
    static const struct {
        const char *text;
        int rc;
        int id;
        const char *frag;
    } rows[] = {
        {"pmode:0002 fmode:quiet\n", 0, 2, NULL},
        {"pmode:0000 fmode:fanNull\n", 0, 0, NULL},
        {"pmode:0255\n", 0, 255, NULL},
        {"pmode:7", 0, 7, NULL},
        {"pmode:0256 fmode:quiet\n", -EINVAL, 0, "mode id '0256' is not in 0..255"},
        {"pmode:\n", -EINVAL, 0, "expected 'pmode:NNNN ...', got 'pmode:?'"},
        {"pmode:-1\n", -EINVAL, 0, "got 'pmode:-1?'"},
        {"pmode:2x\n", -EINVAL, 0, "got 'pmode:2x?'"},
        {"pmode:00000002\n", -EINVAL, 0, "expected 'pmode:NNNN ...'"},
        {"fmode:quiet pmode:0002\n", -EINVAL, 0, "got 'fmode:quiet pmode:0002?'"},
        {"", -EINVAL, 0, "got ''"},
        {"PMODE:0002\n", -EINVAL, 0, "expected 'pmode:NNNN ...'"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        jf_err_t err = {0};
        int id = -1;
        int rc = agent_nvpmodel_parse_status(rows[i].text, strlen(rows[i].text), &id, &err);
        if (rc != rows[i].rc || (rc == 0 && id != rows[i].id) ||
            (rows[i].frag && !strstr(err.msg, rows[i].frag))) {
            fail_msg("row %zu '%s': rc %d id %d err '%s'", i, rows[i].text, rc, id, err.msg);
        }
    }
    // Not NUL-terminated: only len bytes are read.
    int id = -1;
    assert_int_equal(agent_nvpmodel_parse_status("pmode:0003 fmode:quiet", 10, &id, NULL), 0);
    assert_int_equal(id, 3);
    assert_int_equal(agent_nvpmodel_parse_status("pmode:0003\0", 11, &id, NULL), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_modes),
        cmocka_unit_test(test_fixture_matches_board_table),
        cmocka_unit_test(test_params_and_settings),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_long_line),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
