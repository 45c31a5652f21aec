/* Unit tests for where a board's power modes come from (issues #4, #5): the jetson platform takes
 * them from <etc root>/nvpmodel.conf (ids and names as the conf has them) and falls back to the
 * family's jf_board.h defaults, saying so, when the conf is missing or unparsable; a sim board's
 * fake tree holds its family's conf (tests/fixtures/nvpmodel/<family>.conf, byte for byte), which
 * parses, lists the reference modes (jf_board.h, ../shared/reference/jetson-platforms.md §4.4) and
 * is what the sim platform's modes come from. */
#include "agent_nvpmodel.h"
#include "agent_platform.h"
#include "agent_sim_tree.h"
#include "jf_board.h"
#include "sim_model.h"

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

#include "jft_fs.h"

static const struct {
    jf_board_type_t type;
    const char *name;
} s_families[] = {
    {JF_BOARD_AGX_XAVIER, "agx-xavier"}, {JF_BOARD_XAVIER_NX, "xavier-nx"},
    {JF_BOARD_NANO, "nano"},             {JF_BOARD_ORIN_AGX, "orin-agx"},
    {JF_BOARD_ORIN_NANO, "orin-nano"},
};

#define T_N_FAMILIES (sizeof s_families / sizeof s_families[0])

// A Xavier NX: the fixture's sys and proc trees, and an etc root of our own holding the
// fixture's nv_tegra_release and conf_text as nvpmodel.conf (NULL: no conf).
typedef struct t_board {
    char tmp[PATH_MAX];
    char etc[PATH_MAX];
    char sys[PATH_MAX];
    char proc[PATH_MAX];
} t_board_t;

// dir/name into out (PATH_MAX); the test fails if it does not fit.
static void t_join(char *out, const char *dir, const char *name)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);
    assert_true(n > 0 && n < PATH_MAX);
}

static void t_board_new(t_board_t *b, const char *conf_text)
{
    char path[PATH_MAX], release[PATH_MAX];
    assert_int_equal(jft_tmpdir_new(b->tmp), 0);
    (void) snprintf(b->etc, sizeof b->etc, "%s", b->tmp);
    jft_fixture("sysfs/xavier-nx/sys", b->sys);
    jft_fixture("sysfs/xavier-nx/proc", b->proc);
    jft_fixture("sysfs/xavier-nx/etc/nv_tegra_release", release);
    char *text = jft_read_file(release, NULL);
    assert_non_null(text);
    t_join(path, b->etc, "nv_tegra_release");
    assert_int_equal(jft_write_file(path, text), 0);
    free(text);
    if (conf_text) {
        t_join(path, b->etc, "nvpmodel.conf");
        assert_int_equal(jft_write_file(path, conf_text), 0);
    }
}

static agent_platform_t *t_jetson(const t_board_t *b)
{
    agent_platform_opts_t o = {.kind = AGENT_PLATFORM_JETSON, .sysfs_root = b->sys,
                               .proc_root = b->proc, .etc_root = b->etc};
    jf_err_t err = {0};
    agent_platform_t *p = agent_platform_new(&o, &err);
    if (!p) {
        fail_msg("agent_platform_new: %s", err.msg);
    }
    return p;
}

static char *t_fixture_conf(const char *family)
{
    char rel[PATH_MAX], path[PATH_MAX];
    (void) snprintf(rel, sizeof rel, "nvpmodel/%s.conf", family);
    jft_fixture(rel, path);
    char *text = jft_read_file(path, NULL);
    assert_non_null(text);
    return text;
}

// The board's conf has a lab's own mode beside NVIDIA's: the hello lists it, ids as in the conf.
static void test_modes_from_conf(void **state)
{
    (void) state;
    char *fixture = t_fixture_conf("xavier-nx");
    const char *tail = strstr(fixture, "# mandatory section");
    assert_non_null(tail);
    static const char lab[] = "< POWER_MODEL ID=20 NAME=LAB_12W_4CORE >\n"
                              "CPU_ONLINE CORE_0 1\nCPU_ONLINE CORE_1 1\n"
                              "CPU_ONLINE CORE_2 1\nCPU_ONLINE CORE_3 1\n"
                              "CPU_ONLINE CORE_4 0\nCPU_ONLINE CORE_5 0\n\n";
    size_t head = (size_t) (tail - fixture);
    char *conf = malloc(strlen(fixture) + sizeof lab);
    assert_non_null(conf);
    (void) snprintf(conf, strlen(fixture) + sizeof lab, "%.*s%s%s", (int) head, fixture, lab, tail);
    t_board_t b;
    t_board_new(&b, conf);
    agent_platform_t *p = t_jetson(&b);
    size_t n = 0;
    const jf_power_mode_t *modes = agent_platform_modes(p, &n);
    const jf_board_family_t *fam = jf_board_family(JF_BOARD_XAVIER_NX);
    assert_int_equal(n, fam->n_modes + 1);
    assert_memory_equal(modes, fam->modes, fam->n_modes * sizeof *modes);
    assert_int_equal(modes[n - 1].id, 20);
    assert_string_equal(modes[n - 1].name, "LAB_12W_4CORE");
    assert_non_null(strstr(agent_platform_describe(p), "power modes: 10 from"));
    assert_non_null(strstr(agent_platform_describe(p), "(default 2)"));
    agent_platform_destroy(&p);
    jft_tmpdir_remove(b.tmp);
    free(conf);
    free(fixture);
}

// No conf, or one that does not parse: the family's defaults, and the description says why.
static void test_modes_fallback(void **state)
{
    (void) state;
    static const struct {
        const char *conf;
        const char *frag;
    } rows[] = {
        {NULL, "nvpmodel.conf"},
        {"< POWER_MODEL ID=0 NAME=MAXN >\n", "no '< PM_CONFIG DEFAULT=n >' section"},
        {"< POWER_MODEL ID=0 NAME=bad-name >\n< PM_CONFIG DEFAULT=0 >\n", "nvpmodel.conf:1:"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        t_board_t b;
        t_board_new(&b, rows[i].conf);
        agent_platform_t *p = t_jetson(&b);
        size_t n = 0;
        const jf_power_mode_t *modes = agent_platform_modes(p, &n);
        const jf_board_family_t *fam = jf_board_family(JF_BOARD_XAVIER_NX);
        assert_int_equal(n, fam->n_modes);
        assert_memory_equal(modes, fam->modes, n * sizeof *modes);
        const char *d = agent_platform_describe(p);
        if (!strstr(d, "power modes: the xavier-nx defaults of jf_board.h, as the board's conf "
                       "could not be loaded") ||
            !strstr(d, rows[i].frag) || !strstr(d, "runs will be refused")) {
            fail_msg("row %zu: describe '%s', want '%s'", i, d, rows[i].frag);
        }
        agent_platform_destroy(&p);
        jft_tmpdir_remove(b.tmp);
    }
}

// Every family's sim tree: its nvpmodel.conf is the fixture conf, parses, and lists the reference
// modes and default; the sim platform's modes are the conf's.
static void test_sim_confs(void **state)
{
    (void) state;
    jf_err_t err = {0};
    sim_model_t *model = sim_model_load(SIM_PARAMS_PATH, &err);
    if (!model) {
        fail_msg("%s", err.msg);
    }
    for (size_t i = 0; i < T_N_FAMILIES; i++) {
        agent_sim_tree_opts_t to = {.type = s_families[i].type, .model = model};
        sim_model_board_factors(model, s_families[i].type, 1, "sim-conf", &to.factors);
        agent_sim_tree_t *tree = agent_sim_tree_new(&to, &err);
        if (!tree) {
            fail_msg("%s: %s", s_families[i].name, err.msg);
        }
        char path[PATH_MAX];
        t_join(path, agent_sim_tree_etc_root(tree), "nvpmodel.conf");
        char *written = jft_read_file(path, NULL);
        char *fixture = t_fixture_conf(s_families[i].name);
        assert_non_null(written);
        assert_string_equal(written, fixture);
        agent_nvpmodel_t *conf = agent_nvpmodel_load(path, &err);
        if (!conf) {
            fail_msg("%s: %s", s_families[i].name, err.msg);
        }
        const jf_board_family_t *fam = jf_board_family(s_families[i].type);
        assert_int_equal(agent_nvpmodel_n_modes(conf), fam->n_modes);
        assert_int_equal(agent_nvpmodel_default_id(conf), fam->default_mode_id);
        for (size_t k = 0; k < fam->n_modes; k++) {
            const agent_nvpmodel_mode_t *m = agent_nvpmodel_mode_at(conf, k);
            assert_int_equal(m->id, fam->modes[k].id);
            assert_string_equal(m->name, fam->modes[k].name);
        }
        agent_nvpmodel_destroy(&conf);
        free(fixture);
        free(written);
        agent_sim_tree_destroy(&tree);
        // The sim platform reads its modes from that conf, through the jetson platform's path.
        agent_platform_opts_t o = {.kind = AGENT_PLATFORM_SIM, .sim_type = s_families[i].type,
                                   .sim_params = SIM_PARAMS_PATH, .sim_seed = 1, .sim_speed = 1};
        agent_platform_t *p = agent_platform_new(&o, &err);
        if (!p) {
            fail_msg("%s: %s", s_families[i].name, err.msg);
        }
        size_t n = 0;
        const jf_power_mode_t *modes = agent_platform_modes(p, &n);
        assert_int_equal(n, fam->n_modes);
        assert_memory_equal(modes, fam->modes, n * sizeof *modes);
        assert_non_null(strstr(agent_platform_describe(p), "/etc/nvpmodel.conf (default"));
        agent_platform_destroy(&p);
    }
    sim_model_destroy(&model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modes_from_conf),
        cmocka_unit_test(test_modes_fallback),
        cmocka_unit_test(test_sim_confs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
