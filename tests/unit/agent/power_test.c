/* Tests of agent_power on a copy of tests/fixtures/privhelper/xavier-nx (power_tree.h) with the
 * real helper (jft-privhelper-test) and the fake nvpmodel: the modes of the conf, the state
 * read back, a mode and a custom mode with the files they must leave, DVFS off and back, store
 * and restore to the original tree, nvpmodel failures, and the refusals. */
#include "agent_power.h"
#include "jft_fs.h"
#include "power_tree.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define CPU(n) "sys/devices/system/cpu/cpu" #n
#define FQ(n)  CPU(n) "/cpufreq/"
#define GPU    "sys/devices/17000000.gv11b/devfreq/17000000.gv11b/"
#define EMC    "sys/kernel/debug/bpmp/debug/clk/emc/"
#define CAP    "sys/kernel/nvpmodel_emc_cap/emc_iso_cap"
#define CALLS  "var/lib/nvpmodel/fake-calls"
#define STATUS "var/lib/nvpmodel/status"
#define NVPM   "var/lib/nvpmodel" // nvpmodel's own files: the fake writes them on every mode
#define KHZ(v) (INT64_C(v) * 1000)

typedef struct t_ctx {
    jft_power_tree_t tree;
    agent_power_t *power;
} t_ctx_t;

static int t_setup(void **state)
{
    t_ctx_t *c = calloc(1, sizeof *c);
    assert_non_null(c);
    jft_power_tree_new(&c->tree);
    char status[PATH_MAX];
    jft_power_path(status, "%s/" STATUS, c->tree.root);
    agent_power_opts_t o = {.conf_path = c->tree.conf, .sysfs_root = c->tree.sys,
                            .status_path = status, .helper_argv = c->tree.argv};
    jf_err_t err = {0};
    c->power = agent_power_new(&o, &err);
    if (!c->power) {
        fail_msg("agent_power_new: %s", err.msg);
    }
    *state = c;
    return 0;
}

static int t_teardown(void **state)
{
    t_ctx_t *c = *state;
    agent_power_destroy(&c->power);
    agent_power_destroy(&c->power);
    jft_power_tree_remove(&c->tree);
    free(c);
    return 0;
}

static void t_file(const t_ctx_t *c, const char *rel, const char *want)
{
    char *got = jft_power_read(&c->tree, rel);
    if (!got || strcmp(got, want) != 0) {
        fail_msg("%s holds '%s', want '%s'", rel, got ? got : "(nothing)", want);
    }
    free(got);
}

static void test_modes_and_state(void **state)
{
    t_ctx_t *c = *state;
    const agent_nvpmodel_t *conf = agent_power_conf(c->power);
    assert_int_equal(agent_nvpmodel_n_modes(conf), 9);
    assert_int_equal(agent_nvpmodel_default_id(conf), 2);
    assert_string_equal(agent_nvpmodel_mode(conf, 8)->name, "MODE_20W_6CORE");
    agent_power_state_t st;
    jf_err_t err = {0};
    assert_int_equal(agent_power_read_state(c->power, &st, &err), 0);
    assert_int_equal(st.mode_id, -1);
    assert_int_equal(st.n_cpus, 6);
    assert_int_equal(st.online_mask, 0x3f);
    assert_int_equal(st.n_clusters, 3);
    assert_int_equal(st.clusters[2].first_core, 4);
    assert_int_equal(st.clusters[2].min_hz, KHZ(1190400));
    assert_int_equal(st.clusters[2].max_hz, KHZ(1420800));
    assert_true(st.has_gpu);
    assert_int_equal(st.gpu_min_hz, 114750000);
    assert_int_equal(st.gpu_max_hz, 1109250000);
    assert_true(st.has_emc_cap);
    assert_int_equal(st.emc_cap_hz, 1600000000);
    assert_false(st.dvfs_off);
    // The state as it goes into a run record.
    json_t *j = agent_power_state_json(&st);
    assert_non_null(j);
    assert_int_equal(json_array_size(json_object_get(j, "online_cpus")), 6);
    assert_int_equal(json_integer_value(json_object_get(
                         json_array_get(json_object_get(j, "cpu_clusters"), 1), "max_hz")),
                     KHZ(1420800));
    assert_int_equal(json_integer_value(json_object_get(j, "emc_cap_hz")), 1600000000);
    assert_null(json_object_get(j, "mode_id")); // not set by us: left out, not invented
    json_decref(j);
}

static void test_set_mode(void **state)
{
    t_ctx_t *c = *state;
    agent_power_state_t st;
    jf_err_t err = {0};
    assert_int_equal(agent_power_set_mode(c->power, 0, &st, &err), 0);
    t_file(c, CPU(1) "/online", "1\n");
    t_file(c, CPU(2) "/online", "0\n");
    t_file(c, CPU(5) "/online", "0\n");
    t_file(c, FQ(0) "scaling_max_freq", "1907200\n");
    t_file(c, FQ(0) "scaling_min_freq", "1190400\n");
    t_file(c, CALLS, "-m 0\n");
    assert_int_equal(st.mode_id, 0);
    assert_string_equal(st.mode_name, "MODE_15W_2CORE");
    assert_int_equal(st.online_mask, 0x3);
    assert_int_equal(st.n_clusters, 1);
    assert_int_equal(st.clusters[0].max_hz, KHZ(1907200));
    assert_string_equal(st.note, "");
    // Back to the 20 W, 6-core mode: cores return, the EMC cap rises.
    assert_int_equal(agent_power_set_mode(c->power, 8, &st, &err), 0);
    assert_int_equal(st.online_mask, 0x3f);
    assert_int_equal(st.n_clusters, 3);
    t_file(c, CAP, "1866000000\n");
    t_file(c, CALLS, "-m 0\n-m 8\n");
    // A mode not in the conf never reaches the helper.
    assert_int_equal(agent_power_set_mode(c->power, 9, &st, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "power: mode 9 is not in"));
    t_file(c, CALLS, "-m 0\n-m 8\n");
}

static void test_set_custom(void **state)
{
    t_ctx_t *c = *state;
    agent_power_custom_t custom = {
        .n_cores = 4, .cpu_hz = KHZ(1497600), .gpu_hz = 510000000, .emc_hz = 1866000000};
    agent_power_state_t st;
    jf_err_t err = {0};
    assert_int_equal(agent_power_set_custom(c->power, &custom, &st, &err), 0);
    t_file(c, CPU(3) "/online", "1\n");
    t_file(c, CPU(4) "/online", "0\n");
    t_file(c, CPU(5) "/online", "0\n");
    t_file(c, FQ(0) "scaling_min_freq", "1497600\n");
    t_file(c, FQ(0) "scaling_max_freq", "1497600\n");
    t_file(c, FQ(2) "scaling_min_freq", "1497600\n");
    t_file(c, FQ(2) "scaling_max_freq", "1497600\n");
    t_file(c, FQ(4) "scaling_max_freq", "1420800\n"); // offline cluster: left as it was
    t_file(c, GPU "min_freq", "510000000\n");
    t_file(c, GPU "max_freq", "510000000\n");
    t_file(c, CAP, "1866000000\n");
    t_file(c, EMC "mrq_rate_locked", "1\n");
    t_file(c, EMC "rate", "1866000000\n");
    assert_int_equal(st.mode_id, -1);
    assert_string_equal(st.mode_name, "custom");
    assert_int_equal(st.online_mask, 0xf);
    assert_int_equal(st.n_clusters, 2);
    assert_true(st.dvfs_off);
    assert_string_equal(st.note, "emc=locked");
    json_t *j = agent_power_state_json(&st);
    assert_string_equal(json_string_value(json_object_get(j, "mode_name")), "custom");
    json_decref(j);
}

static void test_custom_refused(void **state)
{
    t_ctx_t *c = *state;
    static const struct {
        agent_power_custom_t custom;
        const char *frag;
    } rows[] = {
        {{4, KHZ(1000000), 0, 0}, "power: 1000000000 Hz is not a step of cpu0"},
        {{4, KHZ(1497600), 500000000, 0}, "power: 500000000 Hz is not a GPU step"},
        {{7, KHZ(1497600), 0, 0}, "needs 1..6 cores"},
        {{0, KHZ(1497600), 0, 0}, "needs 1..6 cores"},
        {{4, 1497600001, 0, 0}, "in whole kHz"},
    };
    uint64_t before = jft_power_tree_hash(&c->tree, NULL);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        jf_err_t err = {0};
        assert_int_equal(agent_power_set_custom(c->power, &rows[i].custom, NULL, &err), -EINVAL);
        if (!strstr(err.msg, rows[i].frag)) {
            fail_msg("row %zu: '%s', want '%s'", i, err.msg, rows[i].frag);
        }
    }
    assert_true(jft_power_tree_hash(&c->tree, NULL) == before); // checked before any request
    // An EMC rate is the helper's to check, last: what came before it stays set.
    agent_power_custom_t emc = {6, KHZ(1420800), 0, 1700000000};
    jf_err_t err = {0};
    assert_int_equal(agent_power_set_custom(c->power, &emc, NULL, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "'emc-freq 1700000000': jetfleet-privhelper: rejected: "
                                    "1700000000 Hz is not an EMC rate of nvidia,tegra194"));
    t_file(c, FQ(0) "scaling_min_freq", "1420800\n");
}

// The tables a run's custom point is checked against before it is accepted: the fixture's own
// (jetson-platforms.md §6 for Xavier NX), and the family's EMC steps.
static void test_tables_check(void **state)
{
    t_ctx_t *c = *state;
    agent_power_tables_t t;
    jf_err_t err = {0};
    assert_int_equal(agent_power_read_tables(c->power, &t, &err), 0);
    assert_int_equal(t.n_cpus, 6);
    assert_int_equal(t.n_cpu_steps, 25);
    assert_int_equal(t.cpu_steps_hz[24], KHZ(1907200));
    assert_int_equal(t.n_gpu_steps, 15);
    assert_int_equal(t.gpu_steps_hz[0], 114750000);
    agent_power_custom_t ok = {4, KHZ(1497600), 510000000, 1866000000};
    assert_int_equal(agent_power_tables_check(&t, JF_BOARD_XAVIER_NX, &ok, &err), 0);
    agent_power_custom_t cpu_only = {1, KHZ(115200), 0, 0};
    assert_int_equal(agent_power_tables_check(&t, JF_BOARD_XAVIER_NX, &cpu_only, &err), 0);
    static const struct {
        agent_power_custom_t custom;
        const char *frag;
    } rows[] = {
        {{7, KHZ(1497600), 0, 0}, "custom point asks for 7 cores; this board has 6"},
        {{0, KHZ(1497600), 0, 0}, "asks for 0 cores"},
        {{4, 0, 0, 0}, "custom point has no CPU clock"},
        {{4, KHZ(1500000), 0, 0},
         "custom cpu_hz 1500000000 Hz is not a step of this board's CPU table "
         "(scaling_available_frequencies) (115200000 .. 1907200000 Hz)"},
        {{4, KHZ(1497600), 500000000, 0}, "custom gpu_hz 500000000 Hz is not a step of this "
                                          "board's GPU table"},
        {{4, KHZ(1497600), 0, 1700000000}, "custom emc_hz 1700000000 Hz is not a step of this "
                                           "board's EMC steps"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        jf_err_t e = {0};
        int rc = agent_power_tables_check(&t, JF_BOARD_XAVIER_NX, &rows[i].custom, &e);
        if (rc != -EINVAL || !strstr(e.msg, rows[i].frag)) {
            fail_msg("row %zu: rc %d '%s', want '%s'", i, rc, e.msg, rows[i].frag);
        }
    }
    // A family without an EMC table (a host) has no EMC step to lock.
    agent_power_custom_t emc = {4, KHZ(1497600), 0, 1600000000};
    assert_int_equal(agent_power_tables_check(&t, JF_BOARD_HOST, &emc, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "this board has no EMC steps"));
}

// Store, change everything, restore: every file is as before (nvpmodel's own logs aside).
static void test_store_restore(void **state)
{
    t_ctx_t *c = *state;
    uint64_t before = jft_power_tree_hash(&c->tree, NVPM);
    agent_power_state_t st, pinned, back;
    jf_err_t err = {0};
    assert_int_equal(agent_power_store(c->power, &err), 0);
    assert_true(agent_power_has_stored(c->power));
    assert_int_equal(agent_power_store(c->power, &err), -EBUSY);
    assert_int_equal(agent_power_set_mode(c->power, 0, &st, &err), 0);
    assert_int_equal(agent_power_dvfs_off(c->power, &pinned, &err), 0);
    assert_true(pinned.dvfs_off);
    assert_string_equal(pinned.note, "emc=locked");
    t_file(c, FQ(0) "scaling_min_freq", "1907200\n");
    t_file(c, GPU "min_freq", "1109250000\n");
    t_file(c, CPU(0) "/cpuidle/state1/disable", "1\n");
    t_file(c, "sys/devices/gpu.0/railgate_enable", "0\n");
    assert_int_equal(agent_power_dvfs_restore(c->power, &err), 0);
    t_file(c, FQ(0) "scaling_min_freq", "1190400\n");
    t_file(c, CPU(0) "/cpuidle/state1/disable", "0\n");
    agent_power_custom_t custom = {.n_cores = 2, .cpu_hz = KHZ(115200), .gpu_hz = 204000000};
    assert_int_equal(agent_power_set_custom(c->power, &custom, NULL, &err), 0);
    assert_int_equal(agent_power_restore(c->power, &back, &err), 0);
    assert_false(agent_power_has_stored(c->power));
    assert_int_equal(back.online_mask, 0x3f);
    assert_int_equal(back.n_clusters, 3);
    assert_int_equal(back.clusters[0].min_hz, KHZ(1190400));
    // set_mode ran -m 0; dvfs restore re-set the mode of its own store (0); restore re-set the
    // mode in force at clocks-store (the fixture's 2) before the clocks.
    t_file(c, CALLS, "-m 0\n-m 0\n-m 2\n");
    t_file(c, STATUS, "pmode:0002 fmode:quiet\n");
    assert_int_equal(back.mode_id, 2);
    assert_string_equal(back.mode_name, "MODE_15W_6CORE");
    assert_true(jft_power_tree_hash(&c->tree, NVPM) == before);
    assert_int_equal(agent_power_restore(c->power, &back, &err), -ENOENT);
    assert_int_equal(agent_power_dvfs_restore(c->power, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "DVFS is not off"));
}

// No status file at store time (nvpmodel never set a mode): restore writes the clocks back and
// leaves nvpmodel alone. A status file naming no mode: the helper refuses to store.
static void test_store_without_status(void **state)
{
    t_ctx_t *c = *state;
    char path[PATH_MAX];
    jft_power_path(path, "%s/" STATUS, c->tree.root);
    assert_int_equal(unlink(path), 0);
    agent_power_state_t back;
    jf_err_t err = {0};
    assert_int_equal(agent_power_store(c->power, &err), 0);
    agent_power_custom_t custom = {.n_cores = 2, .cpu_hz = KHZ(115200), .gpu_hz = 0};
    assert_int_equal(agent_power_set_custom(c->power, &custom, NULL, &err), 0);
    assert_int_equal(agent_power_restore(c->power, &back, &err), 0);
    assert_int_equal(back.online_mask, 0x3f);
    assert_int_equal(back.mode_id, -1);
    t_file(c, CALLS, "");
    jft_power_write(&c->tree, STATUS, "pmode:x\n");
    assert_int_equal(agent_power_store(c->power, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "cannot tell the nvpmodel mode in force from "
                                    "/var/lib/nvpmodel/status"));
    assert_false(agent_power_has_stored(c->power));
}

// nvpmodel exits 255 after a mode that applied (§4.3): accepted, with a note. Exit 3 after a
// mode that did not apply: refused.
static void test_nvpmodel_status(void **state)
{
    t_ctx_t *c = *state;
    agent_power_state_t st;
    jf_err_t err = {0};
    jft_power_write(&c->tree, "etc/fake-nvpmodel-exit", "255\n");
    assert_int_equal(agent_power_set_mode(c->power, 0, &st, &err), 0);
    assert_int_equal(st.mode_id, 0);
    assert_non_null(strstr(st.note, "mode in force although"));
    assert_non_null(strstr(st.note, "exited with status 255"));
    jft_power_write(&c->tree, "etc/fake-nvpmodel-exit", "3\n");
    jft_power_write(&c->tree, "etc/fake-nvpmodel-skip", "");
    assert_int_equal(agent_power_set_mode(c->power, 8, &st, &err), -EIO);
    assert_non_null(strstr(err.msg, "'nvpmodel 8': jetfleet-privhelper: failed: step 1 of 1: "
                                    "nvpmodel -m 8 exited with status 3"));
    // Exit 0 but the mode did not apply: the sysfs check catches it.
    jft_power_write(&c->tree, "etc/fake-nvpmodel-exit", "0\n");
    assert_int_equal(agent_power_set_mode(c->power, 8, &st, &err), -EIO);
    assert_non_null(strstr(err.msg, "power: mode 8 (MODE_20W_6CORE): cpu2 is offline, the conf"));
}

static void test_drop_caches(void **state)
{
    t_ctx_t *c = *state;
    jf_err_t err = {0};
    assert_int_equal(agent_power_drop_caches(c->power, &err), 0);
    t_file(c, "proc/sys/vm/drop_caches", "3\n");
}

// Reading back whether a mode is in force needs no helper; a read-only object changes nothing.
static void test_mode_in_force(void **state)
{
    t_ctx_t *c = *state;
    agent_power_opts_t o = {.conf_path = c->tree.conf, .sysfs_root = c->tree.sys};
    jf_err_t err = {0};
    agent_power_t *ro = agent_power_new(&o, &err);
    assert_non_null(ro);
    assert_false(agent_power_has_helper(ro));
    assert_true(agent_power_has_helper(c->power));
    agent_power_state_t st;
    // The fixture is in its default mode 2: every core online, clusters at 1190.4-1420.8 MHz,
    // EMC capped at 1600 MHz.
    assert_int_equal(agent_power_mode_in_force(ro, 2, &st, &err), 0);
    assert_int_equal(st.mode_id, 2);
    assert_string_equal(st.mode_name, "MODE_15W_6CORE");
    assert_int_equal(agent_power_mode_in_force(ro, 8, &st, &err), -EIO);
    // Mode 8 has mode 2's cores and CPU/GPU limits; only its EMC cap tells them apart.
    assert_non_null(strstr(err.msg,
                           "mode 8 (MODE_20W_6CORE): the EMC cap is 1600000000 Hz, the conf sets "
                           "1866000000 Hz"));
    assert_int_equal(agent_power_mode_in_force(ro, 0, NULL, &err), -EIO);
    assert_non_null(strstr(err.msg, "cpu2 is online, the conf sets it offline"));
    assert_int_equal(agent_power_mode_in_force(ro, 42, NULL, &err), -EINVAL);
    uint64_t before = jft_power_tree_hash(&c->tree, NULL);
    assert_int_equal(agent_power_set_mode(ro, 8, NULL, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "no privileged helper configured"));
    assert_int_equal(agent_power_store(ro, &err), -ENOENT);
    assert_int_equal(agent_power_drop_caches(ro, &err), -ENOENT);
    assert_int_equal(jft_power_tree_hash(&c->tree, NULL), before);
    // Once the helper has set mode 8, it reads as in force.
    assert_int_equal(agent_power_set_mode(c->power, 8, NULL, &err), 0);
    assert_int_equal(agent_power_mode_in_force(ro, 8, &st, &err), 0);
    assert_int_equal(agent_power_mode_in_force(ro, 2, NULL, &err), -EIO);
    // Nothing readable to verify against: no claim.
    char empty[PATH_MAX];
    jft_power_path(empty, "%s/empty-sys", c->tree.top);
    assert_int_equal(mkdir(empty, 0755), 0);
    o.sysfs_root = empty;
    agent_power_t *blind = agent_power_new(&o, &err);
    assert_non_null(blind);
    assert_int_equal(agent_power_mode_in_force(blind, 2, NULL, &err), -ENODATA);
    agent_power_destroy(&blind);
    agent_power_destroy(&ro);
}

static void test_new_errors(void **state)
{
    t_ctx_t *c = *state;
    jf_err_t err = {0};
    const char *relative[] = {"jetfleet-privhelper", NULL};
    agent_power_opts_t o = {
        .conf_path = c->tree.conf, .sysfs_root = c->tree.sys, .helper_argv = relative};
    assert_null(agent_power_new(&o, &err));
    assert_int_equal(err.code, -EINVAL);
    assert_non_null(strstr(err.msg, "needs an absolute path"));
    o.helper_argv = c->tree.argv;
    o.conf_path = "/nonexistent/nvpmodel.conf";
    assert_null(agent_power_new(&o, &err));
    assert_non_null(strstr(err.msg, "/nonexistent/nvpmodel.conf: cannot open"));
    o.conf_path = c->tree.conf;
    o.sysfs_root = "/nonexistent/sys";
    assert_null(agent_power_new(&o, &err));
    assert_int_equal(err.code, -ENOENT);
    // A helper that is not there: the request fails and says so; nothing is written.
    const char *missing[] = {"/nonexistent/jetfleet-privhelper", NULL};
    o.sysfs_root = c->tree.sys;
    o.helper_argv = missing;
    agent_power_t *p = agent_power_new(&o, &err);
    assert_non_null(p);
    assert_int_equal(agent_power_set_mode(p, 0, NULL, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "cannot start '/nonexistent/jetfleet-privhelper'"));
    assert_int_equal(agent_power_drop_caches(p, &err), -ENOENT);
    t_file(c, "proc/sys/vm/drop_caches", "0\n");
    agent_power_destroy(&p);
    assert_null(p);
}

// Another agent_power on the same tree and helper, as a restarted agent process has.
static agent_power_t *t_second(const t_ctx_t *c)
{
    char status[PATH_MAX];
    jft_power_path(status, "%s/" STATUS, c->tree.root);
    agent_power_opts_t o = {.conf_path = c->tree.conf,
                            .sysfs_root = c->tree.sys,
                            .status_path = status,
                            .helper_argv = c->tree.argv};
    agent_power_t *p = agent_power_new(&o, NULL);
    assert_non_null(p);
    return p;
}

// A state stored by one object (an agent process that then dies) is restored by another that
// takes its record over; a record whose slot is gone is forgotten at the restore; records that
// are not one are refused with what is wrong.
static void test_adopt(void **state)
{
    t_ctx_t *c = *state;
    jf_err_t err = {0};
    assert_null(agent_power_stored_json(c->power)); // nothing stored
    assert_int_equal(agent_power_store(c->power, &err), 0);
    json_t *rec = agent_power_stored_json(c->power);
    assert_non_null(rec);
    assert_int_equal(agent_power_set_mode(c->power, 0, NULL, &err), 0);
    agent_power_t *later = t_second(c);
    assert_int_equal(agent_power_adopt(later, rec, &err), 0);
    assert_true(agent_power_has_stored(later));
    assert_int_equal(agent_power_adopt(later, rec, &err), -EBUSY);
    agent_power_state_t back;
    assert_int_equal(agent_power_restore(later, &back, &err), 0);
    t_file(c, CALLS, "-m 0\n-m 2\n");
    assert_int_equal(back.mode_id, 2);
    assert_int_equal(back.online_mask, 0x3f);
    agent_power_destroy(&later);
    // The slot is gone (restored above): a third process's restore of it forgets it.
    agent_power_t *third = t_second(c);
    assert_int_equal(agent_power_adopt(third, rec, &err), 0);
    assert_int_equal(agent_power_restore(third, NULL, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "not there any more"));
    assert_false(agent_power_has_stored(third));
    agent_power_destroy(&third);
    static const char *const bad[][2] = {
        {"{}", "power: stored record: "},
        {"{\"slot\":0,\"pmode\":2,\"mode_id\":2,\"mode_name\":\"M\",\"n_cpus\":6,"
         "\"online_mask\":63,\"clusters\":[],\"has_gpu\":false,\"gpu_min_hz\":0,"
         "\"gpu_max_hz\":0}",
         "slot 0 (1..16)"},
        {"{\"slot\":1,\"pmode\":2,\"mode_id\":2,\"mode_name\":\"M\",\"n_cpus\":6,"
         "\"online_mask\":63,\"clusters\":[[0,5,1]],\"has_gpu\":false,\"gpu_min_hz\":0,"
         "\"gpu_max_hz\":0}",
         "clusters[0] is not"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *o = json_loads(bad[i][0], 0, NULL);
        agent_power_t *p = t_second(c);
        err = (jf_err_t){0};
        assert_int_equal(agent_power_adopt(p, o, &err), -EINVAL);
        if (!strstr(err.msg, bad[i][1])) {
            fail_msg("row %zu: '%s' lacks '%s'", i, err.msg, bad[i][1]);
        }
        assert_false(agent_power_has_stored(p));
        agent_power_destroy(&p);
        json_decref(o);
    }
    json_decref(rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_modes_and_state, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_set_mode, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_set_custom, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_custom_refused, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_tables_check, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_store_restore, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_store_without_status, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_nvpmodel_status, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_drop_caches, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_mode_in_force, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_new_errors, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_adopt, t_setup, t_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
