/* Unit tests for the run worker actor on a copy of tests/fixtures/privhelper/xavier-nx
 * (power_tree.h) with the real helper (jft-privhelper-test) and the fake nvpmodel: a run
 * prepared with the helper (state stored, mode 8 set and read back, cache dropped, residency),
 * residency after an epoch, the restore queued after a run and the one at exit, and the
 * refusals: no helper and the mode not in force, the dataset not on the medium's mount. */
#include "agent_platform.h"
#include "agent_worker.h"
#include "jft_fs.h"
#include "power_tree.h"

#include <czmq.h>
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

#include <cmocka.h>

#define T_CAP  "sys/kernel/nvpmodel_emc_cap/emc_iso_cap"
#define T_DROP "proc/sys/vm/drop_caches"
#define T_WAIT (INT64_C(20) * 1000000)
#define T_RUN  "r0123456789abcdef"

typedef struct t_ctx {
    jft_power_tree_t tree;
    char data[PATH_MAX]; // a small dataset directory
} t_ctx_t;

static int t_setup(void **state)
{
    t_ctx_t *c = calloc(1, sizeof *c);
    assert_non_null(c);
    jft_power_tree_new(&c->tree);
    jft_power_path(c->data, "%s/data", c->tree.top);
    assert_int_equal(mkdir(c->data, 0755), 0);
    char file[PATH_MAX];
    jft_power_path(file, "%s/train.bin", c->data);
    assert_int_equal(jft_write_file(file, "0123456789abcdef"), 0);
    *state = c;
    return 0;
}

static int t_teardown(void **state)
{
    t_ctx_t *c = *state;
    jft_power_tree_remove(&c->tree);
    free(c);
    return 0;
}

static agent_worker_t *t_worker(t_ctx_t *c, bool helper)
{
    agent_power_opts_t po = {.conf_path = c->tree.conf,
                             .sysfs_root = c->tree.sys,
                             .helper_argv = helper ? c->tree.argv : NULL};
    jf_err_t err = {0};
    agent_power_t *power = agent_power_new(&po, &err);
    assert_non_null(power);
    agent_worker_opts_t wo = {.power_p = &power,
                              .helper_argv = helper ? c->tree.argv : NULL,
                              .proc_root = "/proc",
                              .sysfs_root = "/sys"};
    agent_worker_t *w = agent_worker_new(&wo, &err);
    assert_non_null(w);
    assert_null(power); // the worker owns it
    return w;
}

static void t_reply(agent_worker_t *w, agent_worker_reply_t *r)
{
    zmq_pollitem_t item = {agent_worker_handle(w), 0, ZMQ_POLLIN, 0};
    assert_int_equal(zmq_poll(&item, 1, T_WAIT / 1000), 1);
    assert_int_equal(agent_worker_recv(w, r), 0);
}

static agent_worker_prepare_t t_job(const t_ctx_t *c, const char *medium, const char *mount,
                                    int mode, bool drop)
{
    agent_worker_prepare_t j = {.attempt = 2, .power_mode_id = mode, .drop_caches = drop};
    (void) snprintf(j.run, sizeof j.run, "%s", T_RUN);
    (void) snprintf(j.dataset_dir, sizeof j.dataset_dir, "%s", c->data);
    (void) snprintf(j.medium, sizeof j.medium, "%s", medium);
    (void) snprintf(j.mount, sizeof j.mount, "%s", mount);
    return j;
}

static void t_file(const t_ctx_t *c, const char *rel, const char *want)
{
    char *got = jft_power_read(&c->tree, rel);
    if (!got || strcmp(got, want) != 0) {
        fail_msg("%s holds '%s', want '%s'", rel, got ? got : "(nothing)", want);
    }
    free(got);
}

static void test_prepare_with_helper(void **state)
{
    t_ctx_t *c = *state;
    agent_worker_t *w = t_worker(c, true);
    agent_worker_reply_t *r = malloc(sizeof *r);
    agent_worker_prepare_t job = t_job(c, "local", "/", 8, true);
    assert_int_equal(agent_worker_prepare(w, &job), 0);
    t_reply(w, r);
    if (r->kind != AGENT_WORKER_PREPARED || !r->ok) {
        fail_msg("kind %d ok %d: %s", r->kind, r->ok, r->detail);
    }
    assert_string_equal(r->run, T_RUN);
    assert_int_equal(r->attempt, 2);
    assert_true(r->power_changed && r->has_power);
    json_t *power = json_loads(r->power_json, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(power, "mode_id")), 8);
    assert_int_equal(json_integer_value(json_object_get(power, "emc_cap_hz")), 1866000000);
    json_decref(power);
    assert_int_equal(r->drop, JF_MEASURE_DROP_HELPER);
    t_file(c, T_DROP, "3\n");
    t_file(c, T_CAP, "1866000000\n");
    assert_true(r->has_mount && !r->storage_checked); // local: located, not checked
    assert_true(r->has_residency);
    assert_int_equal(r->residency.files, 1);
    assert_int_equal(r->residency.total_bytes, 16);
    // Residency after epoch 0.
    assert_int_equal(agent_worker_residency(w, T_RUN, 2, 0, c->data), 0);
    t_reply(w, r);
    assert_int_equal(r->kind, AGENT_WORKER_RESIDENCY);
    assert_true(r->ok && r->epoch == 0 && r->residency.files == 1);
    // The run ends: the state from before it comes back.
    assert_int_equal(agent_worker_restore(w), 0);
    t_reply(w, r);
    assert_int_equal(r->kind, AGENT_WORKER_RESTORED);
    assert_true(r->ok && r->power_changed);
    t_file(c, T_CAP, "1600000000\n");
    // Nothing stored any more: a second restore does nothing.
    assert_int_equal(agent_worker_restore_wait(w, T_WAIT, r), 0);
    assert_true(r->ok && !r->power_changed);
    free(r);
    agent_worker_destroy(&w);
    assert_null(w);
}

// A custom point and DVFS off over mode 8: set, read back, and all undone by the restore.
static void test_prepare_custom_dvfs_off(void **state)
{
    t_ctx_t *c = *state;
    uint64_t before = jft_power_tree_hash(&c->tree, "var/lib/nvpmodel");
    agent_worker_t *w = t_worker(c, true);
    agent_worker_reply_t *r = malloc(sizeof *r);
    agent_worker_prepare_t job = t_job(c, "local", "", 8, false);
    job.custom = (jf_run_custom_t){.n_cores = 4, .cpu_hz = 1497600000, .gpu_hz = 510000000};
    job.dvfs_off = true;
    assert_int_equal(agent_worker_prepare(w, &job), 0);
    t_reply(w, r);
    if (!r->ok) {
        fail_msg("refused: %s", r->detail);
    }
    json_t *power = json_loads(r->power_json, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(power, "mode_name")), "custom");
    assert_null(json_object_get(power, "mode_id"));
    assert_true(json_is_true(json_object_get(power, "dvfs_off")));
    assert_int_equal(json_array_size(json_object_get(power, "online_cpus")), 4);
    assert_int_equal(json_integer_value(json_object_get(power, "gpu_max_hz")), 510000000);
    json_decref(power);
    t_file(c, "sys/devices/system/cpu/cpu0/cpufreq/scaling_min_freq", "1497600\n");
    t_file(c, "sys/devices/system/cpu/cpu0/cpuidle/state1/disable", "1\n"); // DVFS off
    t_file(c, "sys/devices/system/cpu/cpu4/online", "0\n");
    assert_int_equal(agent_worker_restore(w), 0);
    t_reply(w, r);
    if (!r->ok || !r->power_changed) {
        fail_msg("restore: %s", r->detail);
    }
    t_file(c, "sys/devices/system/cpu/cpu0/cpuidle/state1/disable", "0\n");
    t_file(c, "sys/devices/system/cpu/cpu4/online", "1\n");
    assert_true(jft_power_tree_hash(&c->tree, "var/lib/nvpmodel") == before);
    free(r);
    agent_worker_destroy(&w);
}

// The agent exits during a run: destroying the worker restores the board.
static void test_restore_at_exit(void **state)
{
    t_ctx_t *c = *state;
    agent_worker_t *w = t_worker(c, true);
    agent_worker_reply_t *r = malloc(sizeof *r);
    agent_worker_prepare_t job = t_job(c, "local", "", 8, false);
    assert_int_equal(agent_worker_prepare(w, &job), 0);
    t_reply(w, r);
    assert_true(r->ok && r->drop == JF_MEASURE_DROP_NONE);
    t_file(c, T_DROP, "0\n");
    t_file(c, T_CAP, "1866000000\n");
    agent_worker_destroy(&w);
    t_file(c, T_CAP, "1600000000\n");
    free(r);
}

static void test_refusals(void **state)
{
    t_ctx_t *c = *state;
    agent_worker_t *w = t_worker(c, false);
    agent_worker_reply_t *r = malloc(sizeof *r);
    uint64_t before = jft_power_tree_hash(&c->tree, NULL);
    // No helper, and mode 8 is not in force: refused, nothing changed.
    agent_worker_prepare_t job = t_job(c, "local", "", 8, false);
    assert_int_equal(agent_worker_prepare(w, &job), 0);
    t_reply(w, r);
    assert_false(r->ok);
    assert_int_equal(r->reason, JF_FAIL_INFEASIBLE);
    assert_non_null(strstr(r->detail, "no privileged helper configured"));
    assert_non_null(strstr(r->detail, "the EMC cap is 1600000000 Hz"));
    // Mode 2 is in force: accepted as it is; the cache is evicted per file, without privileges.
    job = t_job(c, "local", "", 2, true);
    assert_int_equal(agent_worker_prepare(w, &job), 0);
    t_reply(w, r);
    assert_true(r->ok && !r->power_changed);
    assert_int_equal(r->drop, JF_MEASURE_DROP_FADVISE);
    assert_non_null(strstr(r->power_json, "already in force"));
    // The dataset is not on the medium's configured mount.
    job = t_job(c, "nvme", "/nonexistent-nvme", 2, false);
    assert_int_equal(agent_worker_prepare(w, &job), 0);
    t_reply(w, r);
    assert_false(r->ok);
    assert_int_equal(r->reason, JF_FAIL_INFEASIBLE);
    assert_non_null(strstr(r->detail, "storage: dataset '"));
    assert_non_null(strstr(r->detail, "/nonexistent-nvme"));
    // Without the helper a custom point or DVFS off cannot be set, even in the mode in force.
    job = t_job(c, "local", "", 2, false);
    job.dvfs_off = true;
    assert_int_equal(agent_worker_prepare(w, &job), 0);
    t_reply(w, r);
    assert_false(r->ok);
    assert_int_equal(r->reason, JF_FAIL_INFEASIBLE);
    assert_non_null(strstr(r->detail, "a custom power mode or DVFS off cannot be set"));
    assert_int_equal(jft_power_tree_hash(&c->tree, NULL), before);
    free(r);
    agent_worker_destroy(&w);
    assert_int_equal(jft_power_tree_hash(&c->tree, NULL), before);
}

// A host has no power handle: nothing to set, nothing to restore.
static void test_no_power_handle(void **state)
{
    t_ctx_t *c = *state;
    agent_power_t *none = NULL;
    agent_worker_opts_t wo = {.power_p = &none, .proc_root = "/proc", .sysfs_root = "/sys"};
    jf_err_t err = {0};
    agent_worker_t *w = agent_worker_new(&wo, &err);
    assert_non_null(w);
    agent_worker_reply_t *r = malloc(sizeof *r);
    agent_worker_prepare_t job = t_job(c, "local", "", 0, false);
    assert_int_equal(agent_worker_prepare(w, &job), 0);
    t_reply(w, r);
    assert_true(r->ok && !r->has_power && !r->power_changed);
    free(r);
    agent_worker_destroy(&w);
    const char *relative[] = {"jetfleet-privhelper", NULL};
    wo.helper_argv = relative;
    assert_null(agent_worker_new(&wo, &err));
    assert_int_equal(err.code, -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_prepare_with_helper, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_prepare_custom_dvfs_off, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_restore_at_exit, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_refusals, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_no_power_handle, t_setup, t_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
