/* Unit tests for the platform's run interface (agent_platform_run.h): what a host over its
 * fixture tree answers (the real trainer on the dataset's files, the monotonic clock, the worker
 * prepares), and what a sim board answers from its model (the simulated trainer's arguments, its
 * own clock and energy source, a preparation without worker, the power record of its tree, the
 * family's clock tables, its trainer's lines into the fake rails and the modelled page cache). */
#include "agent_platform_run.h"
#include "jf_board_clocks.h"

#include <errno.h>
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

#include "jft_fs.h"

#define T_SIM_SPEED 100.0

// The argument after name in t; the test fails when name is not there.
static const char *t_arg(const agent_platform_trainer_t *t, const char *name)
{
    for (size_t i = 0; i + 1 < t->n_args; i++) {
        if (strcmp(t->args[i], name) == 0) {
            return t->args[i + 1];
        }
    }
    fail_msg("the trainer's arguments have no '%s' with a value", name);
    return NULL;
}

static bool t_has(const agent_platform_trainer_t *t, const char *name)
{
    for (size_t i = 0; i < t->n_args; i++) {
        if (strcmp(t->args[i], name) == 0) {
            return true;
        }
    }
    return false;
}

static jf_run_spec_t t_spec(const char *mode, int mode_id)
{
    jf_run_spec_t s = {.power_mode_id = mode_id, .threads = 3, .epochs = 2};
    (void) snprintf(s.power_mode, sizeof s.power_mode, "%s", mode);
    (void) snprintf(s.dataset, sizeof s.dataset, "cifar10");
    (void) snprintf(s.storage, sizeof s.storage, "nvme");
    (void) snprintf(s.model, sizeof s.model, "resnet18");
    return s;
}

static agent_platform_t *t_host(void)
{
    char sys[PATH_MAX], proc[PATH_MAX], etc[PATH_MAX];
    jft_fixture("sysfs/host/sys", sys);
    jft_fixture("sysfs/host/proc", proc);
    jft_fixture("sysfs/host/etc", etc);
    agent_platform_opts_t o = {
        .kind = AGENT_PLATFORM_HOST, .sysfs_root = sys, .proc_root = proc, .etc_root = etc};
    jf_err_t err = {0};
    agent_platform_t *p = agent_platform_new(&o, &err);
    if (!p) {
        fail_msg("host platform: %s", err.msg);
    }
    return p;
}

static agent_platform_t *t_sim(void)
{
    agent_platform_opts_t o = {.kind = AGENT_PLATFORM_SIM,
                               .sim_type = JF_BOARD_XAVIER_NX,
                               .sim_params = SIM_PARAMS_PATH,
                               .sim_train_bin = "/opt/train-sim",
                               .sim_board = "sim-nx-01",
                               .sim_seed = 7,
                               .sim_speed = T_SIM_SPEED,
                               .sim_scale = 0.5};
    jf_err_t err = {0};
    agent_platform_t *p = agent_platform_new(&o, &err);
    if (!p) {
        fail_msg("sim platform: %s", err.msg);
    }
    return p;
}

// The host: jetfleet-train on the files, the monotonic clock, nothing modelled.
static void test_host_runs(void **state)
{
    (void) state;
    agent_platform_t *p = t_host();
    jf_run_spec_t s = t_spec("DEFAULT", 0);
    agent_platform_run_t run = {
        .spec = &s, .dataset_dir = "/data/cifar10", .train_bin = "/opt/jetfleet-train"};
    agent_platform_trainer_t t;
    jf_err_t err = {0};
    assert_int_equal(agent_platform_trainer(p, &run, &t, &err), 0);
    assert_string_equal(t.program, "/opt/jetfleet-train");
    assert_string_equal(t_arg(&t, "--data"), "/data/cifar10");
    assert_string_equal(t_arg(&t, "--threads"), "3");
    assert_string_equal(t_arg(&t, "--device"), "auto");
    assert_false(t_has(&t, "--sim-params"));
    agent_platform_timing_t tm;
    agent_platform_timing(p, &tm);
    assert_false(tm.own_clock);
    assert_string_equal(tm.time_base, "monotonic");
    assert_null(tm.energy_source);
    assert_true(agent_platform_has_dataset_files(p));
    agent_platform_prepared_t prep = {0};
    assert_false(agent_platform_prepare_run(p, &s, &prep));
    json_t *rec = agent_platform_power_record(p, &s);
    assert_string_equal(json_string_value(json_object_get(rec, "mode_name")), "DEFAULT");
    assert_null(json_object_get(rec, "note"));
    json_decref(rec);
    agent_power_tables_t tables;
    assert_int_equal(agent_platform_clock_tables(p, &tables, &err), -ENOTSUP);
    json_t *line = json_pack("{s:s, s:{s:i}}", "kind", "start", "sim_power_mw", "VDD_IN", 9000);
    agent_platform_line_t out = {.n_residency = 5};
    assert_int_equal(agent_platform_trainer_line(p, "cifar10", line, &out, &err), 0);
    assert_int_equal(out.n_residency, 0);
    json_decref(line);
    assert_int_equal(agent_platform_tick(p, 0, &err), 0);
    assert_int_equal(agent_platform_run_end(p, &err), 0);
    agent_platform_destroy(&p);
}

// Arguments that do not fit the trainer record are an error, not a cut argv.
static void test_trainer_too_long(void **state)
{
    (void) state;
    agent_platform_t *p = t_host();
    jf_run_spec_t s = t_spec("DEFAULT", 0);
    char *dir = malloc(2 * PATH_MAX);
    assert_non_null(dir);
    memset(dir, 'd', 2 * PATH_MAX - 1);
    dir[2 * PATH_MAX - 1] = '\0';
    agent_platform_run_t run = {.spec = &s, .dataset_dir = dir, .train_bin = dir};
    agent_platform_trainer_t t;
    jf_err_t err = {0};
    assert_int_equal(agent_platform_trainer(p, &run, &t, &err), -ENOSPC);
    assert_non_null(strstr(err.msg, "trainer: its arguments exceed"));
    free(dir);
    agent_platform_destroy(&p);
}

static double t_input_mw(agent_platform_t *p)
{
    json_t *s = json_object();
    jf_err_t err = {0};
    assert_int_equal(agent_platform_sample(p, s, &err), 0);
    double mw = (double) json_integer_value(json_object_get(s, "input_power_mw"));
    json_decref(s);
    return mw;
}

// The sim board's trainer: its program and model arguments, no files, a custom point on top.
static void test_sim_trainer(void **state)
{
    (void) state;
    agent_platform_t *p = t_sim();
    jf_run_spec_t s = t_spec("MODE_15W_6CORE", 2);
    agent_platform_run_t run = {
        .spec = &s, .dataset_dir = "/data/cifar10", .train_bin = "/opt/jetfleet-train"};
    agent_platform_trainer_t t;
    jf_err_t err = {0};
    assert_int_equal(agent_platform_trainer(p, &run, &t, &err), 0);
    assert_string_equal(t.program, "/opt/train-sim");
    assert_string_equal(t_arg(&t, "--sim-params"), SIM_PARAMS_PATH);
    assert_string_equal(t_arg(&t, "--sim-board-type"), "xavier-nx");
    assert_string_equal(t_arg(&t, "--sim-board"), "sim-nx-01");
    assert_string_equal(t_arg(&t, "--sim-seed"), "7");
    assert_string_equal(t_arg(&t, "--sim-mode"), "2");
    assert_string_equal(t_arg(&t, "--sim-medium"), "nvme");
    assert_string_equal(t_arg(&t, "--sim-speed"), "100");
    assert_string_equal(t_arg(&t, "--sim-scale"), "0.5");
    assert_string_equal(t_arg(&t, "--sim-cache-resident"), "0");
    assert_false(t_has(&t, "--data") || t_has(&t, "--threads") || t_has(&t, "--device"));
    assert_false(t_has(&t, "--sim-point"));
    s.custom = (jf_run_custom_t){.n_cores = 4, .cpu_hz = 1497600000, .gpu_hz = 510000000};
    assert_int_equal(agent_platform_trainer(p, &run, &t, &err), 0);
    assert_string_equal(t_arg(&t, "--sim-point"), "4,1497600000,510000000,0");
    agent_platform_timing_t tm;
    agent_platform_timing(p, &tm);
    assert_true(tm.own_clock);
    assert_true(tm.speed == T_SIM_SPEED);
    assert_string_equal(tm.time_base, "simulated, speed 100");
    assert_string_equal(tm.energy_source, JF_MEASURE_SOURCE_SIMULATED);
    assert_false(agent_platform_has_dataset_files(p));
    agent_power_tables_t tables;
    assert_int_equal(agent_platform_clock_tables(p, &tables, &err), 0);
    assert_int_equal(tables.n_cpus, 6);
    assert_true(tables.n_cpu_steps > 0 && tables.n_gpu_steps > 0);
    // The board's own space: its family's table up to its caps. The Xavier NX's family table
    // borrows the AGX Xavier's 2133 MHz EMC step, above the NX's 1866 MHz (sim_params.yaml).
    const jf_board_clocks_t *family = jf_board_clocks(JF_BOARD_XAVIER_NX);
    assert_non_null(family);
    assert_int_equal(family->emc_steps_hz[family->n_emc_steps - 1], INT64_C(2133000000));
    assert_int_equal(tables.n_emc_steps, family->n_emc_steps - 1);
    assert_int_equal(tables.emc_steps_hz[tables.n_emc_steps - 1], INT64_C(1866000000));
    assert_int_equal(tables.cpu_steps_hz[tables.n_cpu_steps - 1], INT64_C(1907200000));
    assert_int_equal(tables.gpu_steps_hz[tables.n_gpu_steps - 1], INT64_C(1109250000));
    // and the check refuses the borrowed step with the board's own table named
    agent_power_custom_t point = {
        .n_cores = 6, .cpu_hz = tables.cpu_steps_hz[0], .emc_hz = INT64_C(2133000000)};
    assert_int_equal(agent_power_tables_check(&tables, JF_BOARD_XAVIER_NX, &point, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "up to its cap"));
    point.emc_hz = INT64_C(1866000000);
    assert_int_equal(agent_power_tables_check(&tables, JF_BOARD_XAVIER_NX, &point, &err), 0);
    agent_platform_destroy(&p);
}

// An epoch-0 line whose modelled page cache leaves 75 % of a 1000-byte dataset resident: the
// platform turns it into residency before (-1) and after epoch 0.
static void t_epoch0_cache(agent_platform_t *p)
{
    jf_err_t err = {0};
    agent_platform_line_t out;
    json_t *epoch = json_pack("{s:s, s:i, s:{s:f, s:f, s:I, s:I}}", "kind", "epoch", "epoch", 0,
                              "sim_cache", "resident_before", 0.0, "resident_after", 0.75,
                              "cache_bytes", (json_int_t) 1 << 40, "dataset_bytes",
                              (json_int_t) 1000);
    assert_int_equal(agent_platform_trainer_line(p, "cifar10", epoch, &out, &err), 0);
    json_decref(epoch);
    assert_int_equal(out.n_residency, 2);
    assert_int_equal(out.residency_epoch[0], -1);
    assert_int_equal(out.residency[0].resident_bytes, 0);
    assert_int_equal(out.residency_epoch[1], 0);
    assert_int_equal(out.residency[1].resident_bytes, 750);
    assert_int_equal(out.residency[1].total_bytes, 1000);
}

// Its trainer's lines: rail powers into the tree, the page cache into the board's state (the
// next run's --sim-cache-resident) and into residency; the power record of its tree.
static void test_sim_lines(void **state)
{
    (void) state;
    agent_platform_t *p = t_sim();
    jf_run_spec_t s = t_spec("MODE_15W_6CORE", 2);
    jf_err_t err = {0};
    agent_platform_line_t out;
    json_t *start = json_pack("{s:s, s:{s:i}}", "kind", "start", "sim_power_mw", "VDD_IN", 12345);
    assert_int_equal(agent_platform_trainer_line(p, "cifar10", start, &out, &err), 0);
    json_decref(start);
    assert_true(fabs(t_input_mw(p) - 12345) <= 5);
    t_epoch0_cache(p);
    agent_platform_run_t run = {.spec = &s, .dataset_dir = "", .train_bin = ""};
    agent_platform_trainer_t t;
    assert_int_equal(agent_platform_trainer(p, &run, &t, &err), 0);
    assert_string_equal(t_arg(&t, "--sim-cache-resident"), "0.75");
    json_t *rec = agent_platform_power_record(p, &s);
    assert_non_null(strstr(json_string_value(json_object_get(rec, "note")), "simulated"));
    assert_int_equal(json_integer_value(json_object_get(rec, "mode_id")), 2);
    assert_non_null(json_object_get(rec, "online_cpus"));
    json_decref(rec);
    agent_platform_destroy(&p);
}

// A drop empties the modelled page cache, the run's end idles the rails, and an epoch line with
// an incomplete sim_cache is an error that names the epoch.
static void test_sim_prepare_and_end(void **state)
{
    (void) state;
    agent_platform_t *p = t_sim();
    jf_run_spec_t s = t_spec("MODE_15W_6CORE", 2);
    jf_err_t err = {0};
    double idle_mw = t_input_mw(p);
    json_t *pw = json_pack("{s:i}", "VDD_IN", 12345);
    assert_int_equal(agent_platform_sim_set_power(p, pw, &err), 0);
    json_decref(pw);
    t_epoch0_cache(p);
    s.drop_caches = true;
    agent_platform_prepared_t prep = {0};
    assert_true(agent_platform_prepare_run(p, &s, &prep));
    assert_int_equal(prep.drop, JF_MEASURE_DROP_SIMULATED);
    agent_platform_run_t run = {.spec = &s, .dataset_dir = "", .train_bin = ""};
    agent_platform_trainer_t t;
    assert_int_equal(agent_platform_trainer(p, &run, &t, &err), 0);
    assert_string_equal(t_arg(&t, "--sim-cache-resident"), "0");
    assert_int_equal(agent_platform_tick(p, 0, &err), 0);
    assert_int_equal(agent_platform_run_end(p, &err), 0);
    assert_true(fabs(t_input_mw(p) - idle_mw) <= 5);
    agent_platform_line_t out;
    json_t *bad = json_pack("{s:s, s:i, s:{s:f}}", "kind", "epoch", "epoch", 3, "sim_cache",
                            "resident_after", 0.5);
    assert_int_equal(agent_platform_trainer_line(p, "cifar10", bad, &out, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "epoch 3's sim_cache lacks"));
    assert_int_equal(out.n_residency, 0);
    json_decref(bad);
    agent_platform_destroy(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_runs),
        cmocka_unit_test(test_trainer_too_long),
        cmocka_unit_test(test_sim_trainer),
        cmocka_unit_test(test_sim_lines),
        cmocka_unit_test(test_sim_prepare_and_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
