/* Unit tests for the platform layer: --platform parsing; board detection (agent_detect) from the
 * fixture trees and from tables of model/compatible strings and nv_tegra_release lines; the
 * jetson and host platforms (modes, software facts, layout choice when the JetPack release is
 * unknown); --sample-once in process; and `jetfleet-agent --sample-once` run from the build tree
 * ($JF_BIN_DIR) against each fixture and this host, with its error exits. */
#include "agent_detect.h"
#include "agent_options.h"
#include "agent_platform.h"
#include "jf_fs.h"

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

#include <cmocka.h>

#include "jft_fs.h"
#include "jft_proc.h"

#define T_RUN_TIMEOUT_MS 10000

// dir/rel into out (PATH_MAX); the test fails if it does not fit.
static void t_join(char *out, const char *dir, const char *rel)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", dir, rel);
    assert_true(n > 0 && n < PATH_MAX);
}

// Writes len bytes to dir/rel, creating the parent directories.
static void t_put_bytes(const char *dir, const char *rel, const char *bytes, size_t len)
{
    char path[PATH_MAX], parent[PATH_MAX];
    t_join(path, dir, rel);
    (void)snprintf(parent, sizeof parent, "%s", path);
    *strrchr(parent, '/') = '\0';
    assert_int_equal(jf_fs_mkdir_p(parent, 0755, NULL), 0);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void t_put(const char *dir, const char *rel, const char *text)
{
    t_put_bytes(dir, rel, text, strlen(text));
}

// The three roots of a fixture tree (tests/fixtures/sysfs/<board>/{sys,proc,etc}).
typedef struct t_roots {
    char sys[PATH_MAX];
    char proc[PATH_MAX];
    char etc[PATH_MAX];
} t_roots_t;

static void t_fixture_roots(const char *board, t_roots_t *r)
{
    char rel[PATH_MAX];
    (void)snprintf(rel, sizeof rel, "sysfs/%s/sys", board);
    jft_fixture(rel, r->sys);
    (void)snprintf(rel, sizeof rel, "sysfs/%s/proc", board);
    jft_fixture(rel, r->proc);
    (void)snprintf(rel, sizeof rel, "sysfs/%s/etc", board);
    jft_fixture(rel, r->etc);
}

static agent_platform_opts_t t_opts(const t_roots_t *r, agent_platform_kind_t kind)
{
    return (agent_platform_opts_t){.kind = kind, .sim_type = JF_BOARD_SIM, .sysfs_root = r->sys,
                                   .proc_root = r->proc, .etc_root = r->etc};
}

// ---------------------------------------------------------------------------------------------
// --platform

static void test_kind_parse_table(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int rc;
        agent_platform_kind_t kind;
        jf_board_type_t sim_type;
    } rows[] = {
        {"auto", 0, AGENT_PLATFORM_AUTO, JF_BOARD_SIM},
        {"jetson", 0, AGENT_PLATFORM_JETSON, JF_BOARD_SIM},
        {"host", 0, AGENT_PLATFORM_HOST, JF_BOARD_SIM},
        {"sim:xavier-nx", 0, AGENT_PLATFORM_SIM, JF_BOARD_XAVIER_NX},
        {"sim:orin-agx", 0, AGENT_PLATFORM_SIM, JF_BOARD_ORIN_AGX},
        {"sim:nano", 0, AGENT_PLATFORM_SIM, JF_BOARD_NANO},
        {"sim:", -EINVAL, 0, 0},
        {"sim", -EINVAL, 0, 0},
        {"sim:host", -EINVAL, 0, 0},
        {"sim:sim", -EINVAL, 0, 0},
        {"sim:tx2", -EINVAL, 0, 0},
        {"Jetson", -EINVAL, 0, 0},
        {"", -EINVAL, 0, 0},
        {"auto ", -EINVAL, 0, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        agent_platform_kind_t kind = AGENT_PLATFORM_AUTO;
        jf_board_type_t sim = JF_BOARD_SIM;
        jf_err_t err = {0};
        int rc = agent_platform_kind_parse(rows[i].text, &kind, &sim, &err);
        if (rc != rows[i].rc) {
            fail_msg("'%s': rc %d, want %d", rows[i].text, rc, rows[i].rc);
        }
        if (rc == 0) {
            assert_int_equal(kind, rows[i].kind);
            assert_int_equal(sim, rows[i].sim_type);
        } else {
            assert_non_null(strstr(err.msg, "expected auto, jetson, host or sim:<type>"));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Detection

static void test_detect_fixtures(void **state)
{
    (void)state;
    static const struct {
        const char *board;
        jf_board_type_t type;
        const char *model, *soc, *l4t, *jetpack;
        int jetpack_major;
    } rows[] = {
        {"xavier-nx", JF_BOARD_XAVIER_NX, "NVIDIA Jetson Xavier NX Developer Kit",
         "nvidia,tegra194", "35.4.1", "5.1.2", 5},
        {"agx-xavier", JF_BOARD_AGX_XAVIER, "Jetson-AGX", "nvidia,tegra194", "32.7.1", "4.6.1",
         4},
        {"nano", JF_BOARD_NANO, "NVIDIA Jetson Nano Developer Kit", "nvidia,tegra210", "32.6.1",
         "4.6", 4},
        {"orin-agx", JF_BOARD_ORIN_AGX, "NVIDIA Jetson AGX Orin Developer Kit", "nvidia,tegra234",
         "36.3.0", "6.0", 6},
        {"orin-nano", JF_BOARD_ORIN_NANO, "NVIDIA Jetson Orin Nano Developer Kit",
         "nvidia,tegra234", "35.3.1", "5.1.1", 5},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        t_roots_t r;
        t_fixture_roots(rows[i].board, &r);
        agent_detect_t d;
        jf_err_t err = {0};
        if (agent_detect_board(r.proc, r.etc, &d, &err) != 0) {
            fail_msg("%s: %s", rows[i].board, err.msg);
        }
        assert_true(d.is_tegra);
        assert_int_equal(d.type, rows[i].type);
        assert_int_equal(d.ident->type, rows[i].type);
        assert_string_equal(d.model, rows[i].model);
        assert_string_equal(d.soc, rows[i].soc);
        assert_true(d.has_l4t);
        assert_string_equal(d.l4t_text, rows[i].l4t);
        assert_string_equal(d.jetpack, rows[i].jetpack);
        assert_int_equal(d.jetpack_major, rows[i].jetpack_major);
        assert_string_equal(d.note, "");
    }
    t_roots_t r;
    t_fixture_roots("host", &r);
    agent_detect_t d;
    assert_int_equal(agent_detect_board(r.proc, r.etc, &d, NULL), 0);
    assert_false(d.is_tegra);
    assert_null(d.ident);
    assert_int_equal(d.type, JF_BOARD_TYPE_COUNT);
}

// A compatible list as the device tree stores it: NUL-separated, NUL-terminated.
typedef struct t_compat {
    const char *bytes;
    size_t len;
} t_compat_t;

#define T_COMPAT(s) {s, sizeof(s)} // the literal's own terminating NUL ends the last entry

static const struct {
    const char *model;
    t_compat_t compat;
    const char *label; // the matched row's label; NULL: no row
    jf_board_type_t type;
} s_match[] = {
    {"NVIDIA Jetson Nano Developer Kit",
     T_COMPAT("nvidia,p3450-0000\0nvidia,p3448-0000\0nvidia,tegra210"), "Jetson Nano",
     JF_BOARD_NANO},
    // P-number wins over a misleading model; the model alone when there is no compatible.
    {"whatever", T_COMPAT("nvidia,p3668-0001+p3509-0000\0nvidia,tegra194"),
     "Jetson Xavier NX", JF_BOARD_XAVIER_NX},
    {"NVIDIA Jetson Xavier NX Developer Kit", {"", 0}, "Jetson Xavier NX",
     JF_BOARD_XAVIER_NX},
    {"Jetson-AGX", {"", 0}, "Jetson AGX Xavier", JF_BOARD_AGX_XAVIER},
    {"NVIDIA Jetson AGX Xavier Developer Kit", T_COMPAT("nvidia,p2972-0000\0nvidia,tegra194"),
     "Jetson AGX Xavier", JF_BOARD_AGX_XAVIER},
    {"x", T_COMPAT("nvidia,jetson-xavier\0nvidia,tegra194"), "Jetson AGX Xavier",
     JF_BOARD_AGX_XAVIER},
    {"Jetson AGX Orin", T_COMPAT("nvidia,p3737-0000+p3701-0000\0nvidia,p3701-0000\0"
                                 "nvidia,tegra234"),
     "Jetson AGX Orin", JF_BOARD_ORIN_AGX},
    {"NVIDIA Orin Jetson-Small Developer Kit", T_COMPAT("nvidia,tegra234"), "Jetson AGX Orin",
     JF_BOARD_ORIN_AGX},
    {"NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super",
     T_COMPAT("nvidia,p3768-0000+p3767-0003\0nvidia,p3767-0003\0nvidia,tegra234"),
     "Jetson Orin Nano", JF_BOARD_ORIN_NANO},
    // Orin NX shares the carrier and SoC; its P-numbers mark it, and it has no board type.
    {"NVIDIA Jetson Orin NX Engineering Reference Developer Kit",
     T_COMPAT("nvidia,p3768-0000+p3767-0000\0nvidia,p3767-0000\0nvidia,tegra234"),
     "Jetson Orin NX", JF_BOARD_TYPE_COUNT},
    {"NVIDIA Jetson TX2 Developer Kit", T_COMPAT("nvidia,p2771-0000\0nvidia,tegra186"),
     "Jetson TX2", JF_BOARD_TYPE_COUNT},
    {"NVIDIA Jetson AGX Thor Developer Kit", T_COMPAT("nvidia,tegra264"), "Jetson Thor",
     JF_BOARD_TYPE_COUNT},
    // The SoC must agree: a Nano model on a tegra194 matches nothing.
    {"NVIDIA Jetson Nano Developer Kit", T_COMPAT("nvidia,tegra194"), NULL, 0},
    {"Raspberry Pi 4 Model B Rev 1.4", T_COMPAT("raspberrypi,4-model-b\0brcm,bcm2711"), NULL,
     0},
    {"", {"", 0}, NULL, 0},
};

static void test_detect_match_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof s_match / sizeof s_match[0]; i++) {
        const agent_board_ident_t *id =
            agent_detect_match(s_match[i].model, s_match[i].compat.bytes, s_match[i].compat.len);
        if ((id != NULL) != (s_match[i].label != NULL) ||
            (id && strcmp(id->label, s_match[i].label) != 0)) {
            fail_msg("row %zu '%s': got %s", i, s_match[i].model, id ? id->label : "none");
        }
        if (id) {
            assert_int_equal(id->type, s_match[i].type);
        }
    }
}

static const struct {
    const char *text;
    int rc;
    agent_l4t_t l4t;
    const char *jetpack; // NULL: not in the map
} s_rel[] = {
    {"# R32 (release), REVISION: 5.1, GCID: 27362550, BOARD: t210ref, EABI: aarch64, DATE: "
     "Wed Feb 17 04:30:53 UTC 2021\n",
     0, {32, 5, 1}, "4.5.1"},
    {"# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref\n# KERNEL_VARIANT: oot\n",
     0, {35, 4, 1}, "5.1.2"},
    {"# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic", 0, {36, 4, 3}, "6.2"},
    {"# R32 (release), REVISION: 7.6\n", 0, {32, 7, 6}, "4.6.6"},
    {"# R36 (release), REVISION: 4.2\n", 0, {36, 4, 2}, "6.1 (rev1)"},
    {"# R39 (release), REVISION: 2.0, GCID: 1", 0, {39, 2, 0}, "7.2 GA"},
    {"# R35 (release), REVISION: 9.9, GCID: 1", 0, {35, 9, 9}, NULL},
    {"", -EINVAL, {0, 0, 0}, NULL},
    {"garbage\n", -EINVAL, {0, 0, 0}, NULL},
    {"# R35\n", -EINVAL, {0, 0, 0}, NULL},
    {"# Rabc (release), REVISION: 4.1,", -EINVAL, {0, 0, 0}, NULL},
    {"# R35 (release), REVISION: 4,", -EINVAL, {0, 0, 0}, NULL},
    {"# R35 (release), REVISION: 4.1x,", -EINVAL, {0, 0, 0}, NULL},
    {"# R35 (release), REVISION: .1,", -EINVAL, {0, 0, 0}, NULL},
    {"# R-35 (release), REVISION: 4.1,", -EINVAL, {0, 0, 0}, NULL},
    {"# R99999 (release), REVISION: 4.1,", -EINVAL, {0, 0, 0}, NULL},
    {"#R35 (release), REVISION: 4.1,", -EINVAL, {0, 0, 0}, NULL},
};

static void test_parse_release_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof s_rel / sizeof s_rel[0]; i++) {
        agent_l4t_t l = {-1, -1, -1};
        jf_err_t err = {0};
        int rc = agent_detect_parse_release(s_rel[i].text, &l, &err);
        if (rc != s_rel[i].rc) {
            fail_msg("row %zu '%s': rc %d, want %d", i, s_rel[i].text, rc, s_rel[i].rc);
        }
        if (rc != 0) {
            assert_int_equal(l.major, -1); // unchanged
            assert_non_null(strstr(err.msg, "line 1: expected '# R<major> (release)"));
            continue;
        }
        assert_int_equal(l.major, s_rel[i].l4t.major);
        assert_int_equal(l.minor, s_rel[i].l4t.minor);
        assert_int_equal(l.patch, s_rel[i].l4t.patch);
        const char *jp = agent_detect_jetpack(&l);
        if ((jp == NULL) != (s_rel[i].jetpack == NULL) || (jp && strcmp(jp, s_rel[i].jetpack))) {
            fail_msg("row %zu: JetPack '%s', want '%s'", i, jp ? jp : "none",
                     s_rel[i].jetpack ? s_rel[i].jetpack : "none");
        }
    }
    static const int majors[][2] = {{32, 4}, {34, 5}, {35, 5}, {36, 6}, {38, 7},
                                    {39, 7}, {31, 0}, {33, 0}, {37, 0}, {40, 0}};
    for (size_t i = 0; i < sizeof majors / sizeof majors[0]; i++) {
        assert_int_equal(agent_detect_jetpack_major(majors[i][0]), majors[i][1]);
    }
}

// Temporary trees: a Jetson without a board type, a missing and a malformed nv_tegra_release.
static void test_detect_tmp_trees(void **state)
{
    (void)state;
    char root[PATH_MAX], proc[PATH_MAX], etc[PATH_MAX];
    assert_int_equal(jft_tmpdir_new(root), 0);
    t_join(proc, root, "proc");
    t_join(etc, root, "etc");
    static const char nx[] = "NVIDIA Jetson Orin NX Engineering Reference Developer Kit";
    static const char nx_compat[] = "nvidia,p3768-0000+p3767-0000\0nvidia,p3767-0000\0"
                                    "nvidia,tegra234";
    t_put_bytes(proc, "device-tree/model", nx, sizeof nx);
    t_put_bytes(proc, "device-tree/compatible", nx_compat, sizeof nx_compat);
    agent_detect_t d;
    jf_err_t err = {0};
    assert_int_equal(agent_detect_board(proc, etc, &d, &err), -ENOTSUP);
    assert_non_null(strstr(err.msg, "is a Jetson Orin NX, which has no jetfleet board type"));
    assert_non_null(strstr(err.msg, "--platform host"));
    // Neither auto nor jetson falls back to host on a Jetson without a board type.
    for (int k = 0; k < 2; k++) {
        agent_platform_opts_t o = {.kind = k ? AGENT_PLATFORM_AUTO : AGENT_PLATFORM_JETSON,
                                   .sysfs_root = root, .proc_root = proc, .etc_root = etc};
        jf_err_t perr = {0};
        assert_null(agent_platform_new(&o, &perr));
        assert_int_equal(perr.code, -ENOTSUP);
        assert_non_null(strstr(perr.msg, "Jetson Orin NX"));
    }
    static const char unknown[] = "NVIDIA Jetson Mystery";
    t_put_bytes(proc, "device-tree/model", unknown, sizeof unknown);
    t_put_bytes(proc, "device-tree/compatible", "nvidia,tegra299", sizeof "nvidia,tegra299");
    assert_int_equal(agent_detect_board(proc, etc, &d, &err), -ENOTSUP);
    assert_non_null(strstr(err.msg, "is an unknown Jetson"));

    static const char nano[] = "NVIDIA Jetson Nano Developer Kit";
    static const char nano_compat[] = "nvidia,p3448-0000\0nvidia,tegra210";
    t_put_bytes(proc, "device-tree/model", nano, sizeof nano);
    t_put_bytes(proc, "device-tree/compatible", nano_compat, sizeof nano_compat);
    assert_int_equal(agent_detect_board(proc, etc, &d, &err), 0); // no nv_tegra_release
    assert_int_equal(d.type, JF_BOARD_NANO);
    assert_false(d.has_l4t);
    assert_int_equal(d.jetpack_major, 0);
    assert_non_null(strstr(d.note, "nv_tegra_release: No such file or directory"));
    t_put(etc, "nv_tegra_release", "# R32 (release), REVISION: five\n");
    assert_int_equal(agent_detect_board(proc, etc, &d, &err), 0);
    assert_false(d.has_l4t);
    assert_non_null(strstr(d.note, "nv_tegra_release:line 1: expected"));
    t_put(etc, "nv_tegra_release", "# R28 (release), REVISION: 2.1, GCID: 1\n");
    assert_int_equal(agent_detect_board(proc, etc, &d, &err), 0);
    assert_true(d.has_l4t);
    assert_string_equal(d.l4t_text, "28.2.1");
    assert_string_equal(d.jetpack, "");
    assert_int_equal(d.jetpack_major, 0);
    assert_non_null(strstr(d.note, "L4T R28 is not a JetPack 4-7 release"));
    jft_tmpdir_remove(root);
}

// ---------------------------------------------------------------------------------------------
// Platforms

static void test_jetson_platforms(void **state)
{
    (void)state;
    static const struct {
        const char *board;
        jf_board_type_t type;
        const char *l4t, *jetpack;
    } rows[] = {
        {"xavier-nx", JF_BOARD_XAVIER_NX, "35.4.1", "5.1.2"},
        {"agx-xavier", JF_BOARD_AGX_XAVIER, "32.7.1", "4.6.1"},
        {"nano", JF_BOARD_NANO, "32.6.1", "4.6"},
        {"orin-agx", JF_BOARD_ORIN_AGX, "36.3.0", "6.0"},
        {"orin-nano", JF_BOARD_ORIN_NANO, "35.3.1", "5.1.1"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        t_roots_t r;
        t_fixture_roots(rows[i].board, &r);
        for (int k = 0; k < 2; k++) { // --platform jetson, and auto finding the Jetson
            agent_platform_opts_t o = t_opts(&r, k ? AGENT_PLATFORM_AUTO : AGENT_PLATFORM_JETSON);
            jf_err_t err = {0};
            agent_platform_t *p = agent_platform_new(&o, &err);
            if (!p) {
                fail_msg("%s: %s", rows[i].board, err.msg);
            }
            assert_string_equal(agent_platform_name(p), "jetson");
            assert_int_equal(agent_platform_board_type(p), rows[i].type);
            size_t n = 0;
            const jf_power_mode_t *modes = agent_platform_modes(p, &n);
            const jf_board_family_t *fam = jf_board_family(rows[i].type);
            assert_int_equal(n, fam->n_modes);
            assert_memory_equal(modes, fam->modes, n * sizeof *modes);
            assert_int_equal(agent_platform_set_mode(p, modes[0].id, &err), -ENOTSUP);
            assert_non_null(strstr(err.msg, "through its power handle"));
            // The fixture trees hold no nvpmodel.conf: no power handle, and the error says why.
            agent_power_t *power = (agent_power_t *) &err; // must be reset to NULL
            assert_true(agent_platform_power_new(p, NULL, &power, &err) < 0);
            assert_null(power);
            assert_non_null(strstr(err.msg, "nvpmodel.conf"));
            // AGX Xavier and AGX Orin have no board input rail (agent_board_table.c).
            const char *rail = agent_platform_input_rail(p);
            bool agx = rows[i].type == JF_BOARD_AGX_XAVIER || rows[i].type == JF_BOARD_ORIN_AGX;
            assert_true(agx ? rail == NULL : rail != NULL);
            assert_int_equal(agent_platform_set_mode(p, 255, &err), -EINVAL);
            assert_non_null(strstr(err.msg, "has no power mode 255"));
            json_t *sw = agent_platform_software(p);
            assert_string_equal(json_string_value(json_object_get(sw, "l4t")), rows[i].l4t);
            assert_string_equal(json_string_value(json_object_get(sw, "jetpack")),
                                rows[i].jetpack);
            assert_non_null(json_object_get(sw, "model"));
            assert_string_equal(json_string_value(json_object_get(sw, "agent")), "0.1.0");
            json_decref(sw);
            assert_non_null(strstr(agent_platform_describe(p), "for its JetPack"));
            agent_platform_destroy(&p);
            assert_null(p);
        }
    }
}

static void test_host_platform(void **state)
{
    (void)state;
    t_roots_t r;
    t_fixture_roots("host", &r);
    for (int k = 0; k < 2; k++) { // --platform host, and auto finding no device tree
        agent_platform_opts_t o = t_opts(&r, k ? AGENT_PLATFORM_AUTO : AGENT_PLATFORM_HOST);
        jf_err_t err = {0};
        agent_platform_t *p = agent_platform_new(&o, &err);
        assert_non_null(p);
        assert_string_equal(agent_platform_name(p), "host");
        assert_int_equal(agent_platform_board_type(p), JF_BOARD_HOST);
        size_t n = 0;
        const jf_power_mode_t *modes = agent_platform_modes(p, &n);
        assert_int_equal(n, 1);
        assert_string_equal(modes[0].name, "DEFAULT");
        assert_int_equal(agent_platform_set_mode(p, 0, &err), 0);
        assert_int_equal(agent_platform_set_mode(p, 1, &err), -EINVAL);
        agent_power_t *power = (agent_power_t *) &err;
        assert_int_equal(agent_platform_power_new(p, NULL, &power, &err), 0);
        assert_null(power); // DEFAULT only: nothing to switch
        assert_null(agent_platform_input_rail(p));
        // The reader can be handed over once; sampling through the platform then fails.
        agent_sysfs_t *reader = agent_platform_take_reader(p);
        assert_non_null(reader);
        assert_null(agent_platform_take_reader(p));
        json_t *sample = json_object();
        assert_int_equal(agent_sysfs_sample(reader, sample, &err), 0);
        assert_int_equal(agent_platform_sample(p, sample, &err), -ENODEV);
        json_decref(sample);
        agent_sysfs_destroy(&reader);
        json_t *sw = agent_platform_software(p);
        assert_null(json_object_get(sw, "l4t"));
        assert_non_null(json_object_get(sw, "kernel"));
        json_decref(sw);
        assert_string_equal(agent_platform_describe(p), "host: 4 cores");
        agent_platform_destroy(&p);
    }
    agent_platform_destroy(NULL);
}

static void test_platform_errors(void **state)
{
    (void)state;
    t_roots_t r;
    t_fixture_roots("host", &r);
    agent_platform_opts_t o = t_opts(&r, AGENT_PLATFORM_JETSON);
    jf_err_t err = {0};
    assert_null(agent_platform_new(&o, &err));
    assert_int_equal(err.code, -ENOENT);
    assert_non_null(strstr(err.msg, "/device-tree does not name a Jetson"));
    o.kind = AGENT_PLATFORM_SIM;
    o.sim_type = JF_BOARD_XAVIER_NX;
    o.sim_params = "/nonexistent/sim_params.yaml";
    assert_null(agent_platform_new(&o, &err));
    assert_true(err.code < 0);
    assert_non_null(strstr(err.msg, "--platform sim:xavier-nx"));
    assert_non_null(strstr(err.msg, "/nonexistent/sim_params.yaml"));
    o.kind = AGENT_PLATFORM_HOST;
    o.proc_root = "/nonexistent";
    assert_null(agent_platform_new(&o, &err));
    assert_int_equal(err.code, -ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/stat"));
}

// Without nv_tegra_release the layout comes from probing the GPU devfreq node: the JetPack 5
// Xavier NX tree gets the JetPack 5 layout, so its GPU is read.
static void test_jetson_unknown_release(void **state)
{
    (void)state;
    t_roots_t r;
    t_fixture_roots("xavier-nx", &r);
    agent_platform_opts_t o = t_opts(&r, AGENT_PLATFORM_JETSON);
    o.etc_root = "/nonexistent";
    jf_err_t err = {0};
    agent_platform_t *p = agent_platform_new(&o, &err);
    assert_non_null(p);
    const char *d = agent_platform_describe(p);
    assert_non_null(strstr(d, "L4T unknown (JetPack unknown): /nonexistent/nv_tegra_release"));
    assert_non_null(strstr(d, "sysfs layout of JetPack 5 found by probing"));
    json_t *sample = json_object();
    assert_int_equal(agent_platform_sample(p, sample, &err), 0);
    assert_int_equal(json_integer_value(json_object_get(sample, "gpu_freq_hz")), 1109250000);
    json_t *sw = agent_platform_software(p);
    assert_null(json_object_get(sw, "l4t"));
    assert_null(json_object_get(sw, "jetpack"));
    json_decref(sw);
    json_decref(sample);
    agent_platform_destroy(&p);
}

// One line of JSON, board_type first; the fixture's /proc/stat does not move, so there is no
// load to report.
static void test_sample_once_in_process(void **state)
{
    (void)state;
    t_roots_t r;
    t_fixture_roots("orin-nano", &r);
    agent_platform_opts_t o = t_opts(&r, AGENT_PLATFORM_AUTO);
    jf_err_t err = {0};
    agent_platform_t *p = agent_platform_new(&o, &err);
    assert_non_null(p);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    assert_int_equal(agent_platform_sample_once(p, 1000, out, &err), 0);
    assert_int_equal(fclose(out), 0);
    assert_true(len > 0 && buf[len - 1] == '\n' && strchr(buf, '\n') == buf + len - 1);
    assert_true(strncmp(buf, "{\"board_type\":\"orin-nano\",\"t_us\":", 33) == 0);
    json_t *s = json_loads(buf, 0, NULL);
    assert_non_null(s);
    assert_null(json_object_get(s, "cpu_load_pct"));
    assert_int_equal(json_integer_value(json_object_get(s, "input_power_mw")), 5705);
    json_decref(s);
    free(buf);
    FILE *ro = fopen("/dev/null", "r"); // a stream that cannot be written
    assert_non_null(ro);
    assert_int_equal(agent_platform_sample_once(p, 0, ro, &err), -EIO);
    assert_non_null(strstr(err.msg, "writing the sample failed"));
    assert_int_equal(fclose(ro), 0);
    agent_platform_destroy(&p);
}

// ---------------------------------------------------------------------------------------------
// jetfleet-agent --sample-once, end to end

typedef struct t_run {
    int status;     // exit code
    char *output;   // stdout and stderr; caller frees
    json_t *sample; // the JSON line, or NULL
} t_run_t;

static void t_run_agent(char *const args[], t_run_t *run)
{
    char bin[PATH_MAX], dir[PATH_MAX], out[PATH_MAX];
    char *argv[16] = {bin};
    jft_bin("jetfleet-agent", bin);
    for (size_t i = 0; args[i]; i++) {
        assert_true(i + 2 < sizeof argv / sizeof argv[0]);
        argv[i + 1] = args[i];
    }
    assert_int_equal(jft_tmpdir_new(dir), 0);
    t_join(out, dir, "out");
    run->status = jft_run(argv, out, T_RUN_TIMEOUT_MS, NULL);
    run->output = jft_read_file(out, NULL);
    assert_non_null(run->output);
    const char *line = strstr(run->output, "{\"board_type\"");
    run->sample = line ? json_loadb(line, strcspn(line, "\n"), 0, NULL) : NULL;
    jft_tmpdir_remove(dir);
}

static void test_sample_once_binary_fixtures(void **state)
{
    (void)state;
    static const struct {
        const char *board, *type, *source;
        const char *key;    // one quantity to check
        json_int_t value;
    } rows[] = {
        {"xavier-nx", "xavier-nx", "sysfs", "input_power_mw", 9535},
        {"agx-xavier", "agx-xavier", "sysfs", "emc_freq_hz", 2133000000},
        {"nano", "nano", "sysfs", "gpu_freq_hz", 614400000},
        {"orin-agx", "orin-agx", "sysfs", "emc_freq_hz", 3199000000},
        {"orin-nano", "orin-nano", "sysfs", "input_power_mw", 5705},
        {"host", "host", "proc", "ram_total_bytes", 16705880064},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        t_roots_t r;
        t_fixture_roots(rows[i].board, &r);
        char *args[] = {"--platform", "auto", "--sysfs-root", r.sys, "--proc-root", r.proc,
                        "--etc-root", r.etc, "--sample-once", NULL};
        t_run_t run;
        t_run_agent(args, &run);
        if (run.status != 0 || !run.sample) {
            fail_msg("%s: exit %d: %s", rows[i].board, run.status, run.output);
        }
        assert_string_equal(json_object_iter_key(json_object_iter(run.sample)), "board_type");
        assert_string_equal(json_string_value(json_object_get(run.sample, "board_type")),
                            rows[i].type);
        assert_string_equal(json_string_value(json_object_get(run.sample, "source")),
                            rows[i].source);
        assert_true(json_integer_value(json_object_get(run.sample, "t_us")) > 0);
        assert_true(json_integer_value(json_object_get(run.sample, "mono_us")) > 0);
        assert_int_equal(json_integer_value(json_object_get(run.sample, rows[i].key)),
                         rows[i].value);
        assert_null(json_object_get(run.sample, "cpu_load_pct")); // a fixture's stat is still
        assert_non_null(strstr(run.output, "notice: platform: "));
        json_decref(run.sample);
        free(run.output);
    }
}

// On this machine the two /proc/stat readings 100 ms apart give a real load.
static void test_sample_once_binary_host(void **state)
{
    (void)state;
    char *args[] = {"--platform", "host", "--sample-once", NULL};
    t_run_t run;
    t_run_agent(args, &run);
    if (run.status != 0 || !run.sample) {
        fail_msg("exit %d: %s", run.status, run.output);
    }
    json_t *load = json_object_get(run.sample, "cpu_load_pct");
    assert_true(json_is_real(load) && json_real_value(load) >= 0 && json_real_value(load) <= 100);
    assert_true(json_array_size(json_object_get(run.sample, "cpu_core_load_pct")) > 0);
    assert_true(json_integer_value(json_object_get(run.sample, "ram_total_bytes")) > 0);
    json_decref(run.sample);
    free(run.output);
}

// A sim board: the fake tree read by the jetson readers, rails from the model's idle power,
// modes and rail powers written into the tree, and the tree gone with the platform.
static void test_platform_sim(void **state)
{
    (void)state;
    agent_platform_opts_t o = {.kind = AGENT_PLATFORM_SIM, .sim_type = JF_BOARD_XAVIER_NX,
                               .sim_params = SIM_PARAMS_PATH, .sim_board = "sim-nx-01",
                               .sim_seed = 7, .sim_speed = 100};
    jf_err_t err = {0};
    agent_platform_t *p = agent_platform_new(&o, &err);
    if (!p) {
        fail_msg("%s", err.msg);
    }
    assert_string_equal(agent_platform_name(p), "sim");
    assert_int_equal(agent_platform_board_type(p), JF_BOARD_XAVIER_NX);
    assert_string_equal(agent_platform_input_rail(p), "VDD_IN");
    const agent_platform_sim_t *sim = agent_platform_sim(p);
    assert_non_null(sim);
    assert_string_equal(sim->board, "sim-nx-01");
    assert_true(sim->seed == 7 && sim->speed == 100);
    json_t *s = json_object();
    assert_int_equal(agent_platform_sample(p, s, &err), 0);
    json_int_t idle = json_integer_value(json_object_get(s, "input_power_mw"));
    assert_true(idle > 1000 && idle < 10000);
    assert_int_equal(json_array_size(json_object_get(s, "rails")), 3);
    json_decref(s);
    json_t *pw = json_pack("{s:i}", "VDD_IN", 12345);
    assert_int_equal(agent_platform_sim_set_power(p, pw, &err), 0);
    json_decref(pw);
    assert_int_equal(agent_platform_set_mode(p, 2, &err), 0); // MODE_15W_6CORE
    s = json_object();
    assert_int_equal(agent_platform_sample(p, s, &err), 0);
    json_int_t mw = json_integer_value(json_object_get(s, "input_power_mw"));
    assert_true(mw >= 12340 && mw <= 12350); // V x I to the mA
    assert_int_equal(json_array_size(json_object_get(s, "cpu_online")), 6);
    assert_true(json_is_true(json_array_get(json_object_get(s, "cpu_online"), 5)));
    json_decref(s);
    assert_int_equal(agent_platform_set_mode(p, 99, &err), -EINVAL);
    // The tree is where the description says; it is removed with the platform.
    const char *at = strstr(agent_platform_describe(p), "fake tree ");
    assert_non_null(at);
    char tree[PATH_MAX] = {0};
    (void) snprintf(tree, sizeof tree, "%.*s", (int) strcspn(at + 10, " "), at + 10);
    struct stat sb;
    assert_int_equal(stat(tree, &sb), 0);
    agent_platform_destroy(&p);
    assert_int_not_equal(stat(tree, &sb), 0);
}

static void test_sample_once_binary_sim(void **state)
{
    (void)state;
    char *args[] = {"--platform", "sim:xavier-nx", "--sample-once", NULL};
    t_run_t run;
    t_run_agent(args, &run);
    if (run.status != 0 || !run.sample) {
        fail_msg("exit %d: %s", run.status, run.output);
    }
    assert_string_equal(json_string_value(json_object_get(run.sample, "board_type")),
                        "xavier-nx");
    json_t *rails = json_object_get(run.sample, "rails");
    assert_int_equal(json_array_size(rails), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(rails, 0), "name")),
                        "VDD_IN");
    assert_true(json_integer_value(json_object_get(run.sample, "input_power_mw")) > 0);
    assert_non_null(strstr(run.output, "platform: sim: simulated xavier-nx"));
    json_decref(run.sample);
    free(run.output);
}

// --privhelper's command line: words at spaces, the first an absolute path, at most 12.
static void test_split_command(void **state)
{
    (void)state;
    char buf[256];
    const char *argv[AGENT_OPTIONS_HELPER_WORDS_MAX + 1];
    jf_err_t err = {0};
    int n = agent_options_split_command("  /usr/bin/sudo -n   /usr/local/libexec/x ", buf,
                                        sizeof buf, argv, AGENT_OPTIONS_HELPER_WORDS_MAX, &err);
    assert_int_equal(n, 3);
    assert_string_equal(argv[0], "/usr/bin/sudo");
    assert_string_equal(argv[1], "-n");
    assert_string_equal(argv[2], "/usr/local/libexec/x");
    assert_null(argv[3]);
    assert_int_equal(agent_options_split_command("", buf, sizeof buf, argv, 4, &err), -EINVAL);
    assert_int_equal(agent_options_split_command("helper", buf, sizeof buf, argv, 4, &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "absolute path"));
    assert_int_equal(agent_options_split_command("/a b c d e", buf, sizeof buf, argv, 4, &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "more than 4 words"));
    assert_int_equal(agent_options_split_command("/a b", buf, 3, argv, 4, &err), -EINVAL);
}

static void test_sample_once_binary_errors(void **state)
{
    (void)state;
    t_roots_t host, nano;
    t_fixture_roots("host", &host);
    t_fixture_roots("nano", &nano);
    static char nonexistent[] = "/nonexistent";
    struct {
        char *args[12];
        int status;
        const char *msg;
    } rows[] = {
        {{"--platform", "jetson", "--sysfs-root", host.sys, "--proc-root", host.proc,
          "--etc-root", host.etc, "--sample-once", NULL},
         1, "does not name a Jetson"},
        {{"--platform", "sim:nano", "--sim-params", nonexistent, "--sample-once", NULL}, 1,
         "--platform sim:nano"},
        {{"--platform", "sim:nano", "--sim-speed", "0.5", "--sample-once", NULL}, 2,
         "--sim-speed"},
        {{"--platform", "host", "--sim-seed", "3", "--sample-once", NULL}, 2,
         "need --platform sim:TYPE"},
        {{"--platform", "host", "--proc-root", nonexistent, "--sample-once", NULL}, 1,
         "/nonexistent/stat: No such file or directory"},
        {{"--platform", "jetson", "--sysfs-root", nano.sys, "--proc-root", nonexistent,
          "--sample-once", NULL},
         1, "does not name a Jetson"},
        {{"--platform", "tx2", "--sample-once", NULL}, 2, "--platform 'tx2': expected auto"},
        {{"--sample-once", "--name", "nx-01", NULL}, 2, "--sample-once takes no daemon options"},
        {{"--sample-once", "--parse-tegrastats", nonexistent, NULL}, 2, "exclude each other"},
        {{"--sample-once", "extra", NULL}, 2, "unexpected argument 'extra'"},
        {{"--sample-once", "--privhelper", "/usr/bin/true", NULL}, 2,
         "--sample-once takes no daemon options"},
        {{"--privhelper", "sudo -n jetfleet-privhelper", "--sample-once", NULL}, 2,
         "expected a command whose first word is an absolute path"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        t_run_t run;
        t_run_agent(rows[i].args, &run);
        if (run.status != rows[i].status || !strstr(run.output, rows[i].msg)) {
            fail_msg("row %zu: exit %d (want %d): %s", i, run.status, rows[i].status,
                     run.output);
        }
        assert_null(run.sample);
        free(run.output);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_parse_table),
        cmocka_unit_test(test_detect_fixtures),
        cmocka_unit_test(test_detect_match_table),
        cmocka_unit_test(test_parse_release_table),
        cmocka_unit_test(test_detect_tmp_trees),
        cmocka_unit_test(test_jetson_platforms),
        cmocka_unit_test(test_host_platform),
        cmocka_unit_test(test_platform_errors),
        cmocka_unit_test(test_jetson_unknown_release),
        cmocka_unit_test(test_sample_once_in_process),
        cmocka_unit_test(test_sample_once_binary_fixtures),
        cmocka_unit_test(test_sample_once_binary_host),
        cmocka_unit_test(test_sample_once_binary_errors),
        cmocka_unit_test(test_platform_sim),
        cmocka_unit_test(test_sample_once_binary_sim),
        cmocka_unit_test(test_split_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
