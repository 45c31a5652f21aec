/* Unit tests for custom power modes and DVFS in sweeps (jf_sweep, jf_sweep_power, docs/sweeps.md
 * "Custom power modes and DVFS"): expansion order, the run fields, skips per board type, rules,
 * frequency units, ids that stay those of sweeps without the new keys, and the families' tables
 * (jf_board_clocks). The bad files are rows of sweep_test.c's table. */
#include "jf_board_clocks.h"
#include "jf_sweep.h"

#include "jft_config.h"
#include "jft_fs.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct t_fleets {
    jf_fleet_config_t *lab;     // tests/fixtures/yaml/good/fleet-lab.yaml
    jf_fleet_config_t *hosts;   // tests/fixtures/yaml/good/fleet-hosts.yaml
    jf_fleet_config_t *example; // fleet.yaml.example
} t_fleets_t;

static int t_setup(void **state)
{
    t_fleets_t *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->lab = jft_fleet_fixture("yaml/good/fleet-lab.yaml");
    f->hosts = jft_fleet_fixture("yaml/good/fleet-hosts.yaml");
    f->example = jft_fleet_fixture("../../fleet.yaml.example");
    *state = f;
    return 0;
}

static int t_teardown(void **state)
{
    t_fleets_t *f = *state;
    jf_fleet_config_destroy(&f->lab);
    jf_fleet_config_destroy(&f->hosts);
    jf_fleet_config_destroy(&f->example);
    free(f);
    return 0;
}

static jf_sweep_t *t_parse(const char *text, const jf_fleet_config_t *fleet)
{
    jf_err_t err = {0};
    jf_sweep_t *sweep = jf_sweep_parse(text, strlen(text), "t.yaml", fleet, &err);
    if (!sweep) {
        fail_msg("%s", err.msg);
    }
    return sweep;
}

#define T_HEAD                                                                                     \
    "name: p\ntarget: {boards: [nx-01, nano-01]}\nworkloads: [{model: lenet5, dataset: mnist}]\n" \
    "storage: sd\n"
#define T_POINT "{custom: {cores: 4, cpu_freq: 1420.8MHz, gpu_freq: 803.25MHz, emc_freq: 1.6GHz}}"

// Order: board, then mode, then dvfs. nano-01 has neither MODE_15W_6CORE nor a 1420.8 MHz CPU
// step, so its four combinations are skipped as lacking a power mode.
static void test_custom_and_dvfs_expand(void **state)
{
    t_fleets_t *f = *state;
    jf_sweep_t *s = t_parse(T_HEAD "power_modes: [MODE_15W_6CORE, " T_POINT "]\n"
                                   "dvfs: [on, off]\n",
                            f->lab);
    assert_int_equal(s->n_runs, 4);
    assert_int_equal(s->skips.no_power_mode, 4);
    const jf_run_spec_t *r = s->runs;
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(r[i].board, "nx-01");
        // The point applies on the type's default mode (xavier-nx: 2, MODE_15W_6CORE).
        assert_int_equal(r[i].power_mode_id, 2);
        assert_string_equal(r[i].power_mode, "MODE_15W_6CORE");
        assert_int_equal(r[i].dvfs_off, i % 2 == 1);
        assert_int_equal(r[i].custom.n_cores, i < 2 ? 0 : 4);
    }
    assert_int_equal(r[2].custom.cpu_hz, 1420800000);
    assert_int_equal(r[2].custom.gpu_hz, 803250000);
    assert_int_equal(r[2].custom.emc_hz, 1600000000);
    char label[JF_RUN_POWER_LABEL_MAX + 1];
    jf_run_spec_power_label(&r[3], label, sizeof label);
    assert_string_equal(label, "custom 4c cpu1.42G gpu0.803G emc1.6G on MODE_15W_6CORE +dvfs-off");
    // dvfs on is the default: those runs keep the ids of a sweep without the key.
    jf_sweep_t *plain = t_parse(T_HEAD "power_modes: [MODE_15W_6CORE]\n", f->lab);
    assert_int_equal(plain->n_runs, 1);
    assert_string_equal(plain->runs[0].run_id, r[0].run_id);
    jf_sweep_destroy(&plain);
    jf_sweep_destroy(&s);
}

// The same point in every unit gives the same run; a base by id; a clock left alone is 0.
static void test_units_and_base(void **state)
{
    t_fleets_t *f = *state;
    static const char *const forms[] = {"1420800000", "1420800kHz", "1420.8MHz", "1.4208GHz"};
    char id[JF_RUN_ID_LEN + 1] = "";
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char text[512];
        (void) snprintf(text, sizeof text,
                        T_HEAD "power_modes: [{custom: {cores: 2, cpu_freq: %s, base: \"4\"}}]\n",
                        forms[i]);
        jf_sweep_t *s = t_parse(text, f->lab);
        assert_int_equal(s->n_runs, 1);
        assert_string_equal(s->runs[0].power_mode, "MODE_10W_4CORE");
        assert_int_equal(s->runs[0].custom.gpu_hz, 0);
        assert_int_equal(s->runs[0].custom.emc_hz, 0);
        assert_false(s->runs[0].dvfs_off);
        if (i > 0) {
            assert_string_equal(s->runs[0].run_id, id);
        }
        memcpy(id, s->runs[0].run_id, sizeof id);
        jf_sweep_destroy(&s);
    }
}

// Rules: exclude by power_mode custom and dvfs; an include adds a dvfs-off run of a mode.
static void test_rules(void **state)
{
    t_fleets_t *f = *state;
    jf_sweep_t *s = t_parse(T_HEAD "power_modes: [MODE_15W_6CORE, " T_POINT "]\n"
                                   "dvfs: [on, off]\n"
                                   "exclude:\n  - {power_mode: custom, dvfs: off}\n"
                                   "include:\n  - {board: nx-01, power_mode: MODE_10W_4CORE, "
                                   "dvfs: off}\n",
                            f->lab);
    assert_int_equal(s->n_runs, 4);
    assert_int_equal(s->skips.excluded, 1);
    assert_int_equal(s->runs[2].custom.n_cores, 4);
    assert_false(s->runs[2].dvfs_off);
    assert_string_equal(s->runs[3].power_mode, "MODE_10W_4CORE");
    assert_true(s->runs[3].dvfs_off);
    assert_int_equal(s->runs[3].custom.n_cores, 0);
    jf_sweep_destroy(&s);
}

// A sim board takes the custom-mode space of the type it simulates; a point one targeted type
// cannot run is skipped there and runs on the other.
static void test_sim_and_mixed_types(void **state)
{
    t_fleets_t *f = *state;
    jf_sweep_t *s = t_parse("name: p\ntarget: {device_types: [nano]}\n"
                            "workloads: [{model: lenet5, dataset: mnist}]\nstorage: sd\n"
                            "power_modes: [{custom: {cores: 2, cpu_freq: 1479MHz, "
                            "gpu_freq: 921.6MHz}}]\n",
                            f->lab);
    assert_int_equal(s->n_runs, 3); // nano-01, nano-02, sim-nano-01
    assert_string_equal(s->runs[2].board, "sim-nano-01");
    assert_int_equal(s->runs[2].custom.cpu_hz, 1479000000);
    assert_string_equal(s->runs[2].power_mode, "MAXN");
    jf_sweep_destroy(&s);
}

static void test_host_has_no_custom_modes(void **state)
{
    t_fleets_t *f = *state;
    const char *text = "name: p\ntarget: {boards: [host-01]}\n"
                       "workloads: [{model: lenet5, dataset: mnist}]\nstorage: local\n"
                       "power_modes:\n  - {custom: {cores: 2, cpu_freq: 1479MHz}}\n";
    jf_err_t err = {0};
    assert_null(jf_sweep_parse(text, strlen(text), "t.yaml", f->hosts, &err));
    assert_int_equal(err.code, -EINVAL);
    assert_non_null(strstr(err.msg, "t.yaml:6:5: board 'host-01' (host) has no custom power "
                                    "modes: they need a Jetson"));
    text = "name: p\ntarget: {boards: [host-01]}\n"
           "workloads: [{model: lenet5, dataset: mnist}]\nstorage: local\ndvfs: off\n";
    assert_null(jf_sweep_parse(text, strlen(text), "t.yaml", f->hosts, &err));
    assert_non_null(strstr(err.msg, "t.yaml:5:7: dvfs off needs a Jetson (or a sim board); no "
                                    "targeted board is one"));
}

// In a mixed target, hosts are skipped for DVFS off, as boards lacking the mode.
static void test_dvfs_off_skips_hosts(void **state)
{
    (void) state;
    char path[PATH_MAX] = {0};
    jft_fixture("yaml/good/fleet-demo.yaml", path);
    jf_err_t err = {0};
    jf_fleet_config_t *demo = jf_fleet_config_load(path, &err);
    assert_non_null(demo);
    const jf_board_spec_t *host = NULL;
    for (size_t i = 0; i < demo->n_boards && !host; i++) {
        host = demo->boards[i].type == JF_BOARD_HOST ? &demo->boards[i] : NULL;
    }
    assert_non_null(host);
    char text[512];
    (void) snprintf(text, sizeof text,
                    "name: p\ntarget: {boards: [%s, %s]}\nworkloads: [{model: lenet5, dataset: "
                    "mnist}]\nstorage: [%s, %s]\npower_modes: [\"0\"]\ndvfs: [off]\n",
                    host->name, demo->boards[1].name, host->storage[0].medium,
                    demo->boards[1].storage[0].medium);
    jf_sweep_t *s = jf_sweep_parse(text, strlen(text), "t.yaml", demo, &err);
    if (!s) {
        fail_msg("%s", err.msg);
    }
    for (size_t i = 0; i < s->n_runs; i++) {
        assert_string_not_equal(s->runs[i].board, host->name);
        assert_true(s->runs[i].dvfs_off);
    }
    assert_int_equal(s->n_runs, 1);
    assert_int_equal(s->skips.no_power_mode, 2); // the host, on either medium
    jf_sweep_destroy(&s);
    jf_fleet_config_destroy(&demo);
}

// sweeps/dvfs-custom.yaml: 5 Xavier NX x (mode + 2 points) x DVFS on/off, but nx-05 lacks
// MODE_20W_6CORE, the second point's base.
static void test_example_sweep(void **state)
{
    t_fleets_t *f = *state;
    char path[PATH_MAX] = {0};
    jft_fixture("../../sweeps/dvfs-custom.yaml", path);
    jf_err_t err = {0};
    jf_sweep_t *s = jf_sweep_load(path, f->example, &err);
    if (!s) {
        fail_msg("%s", err.msg);
    }
    assert_int_equal(s->n_runs, 5 * 3 * 2 - 2);
    assert_int_equal(s->skips.no_power_mode, 2);
    size_t custom = 0, off = 0;
    for (size_t i = 0; i < s->n_runs; i++) {
        jf_run_spec_t copy = s->runs[i];
        assert_int_equal(jf_run_spec_validate(&copy, NULL), 0);
        jf_run_spec_compute_id(&copy);
        assert_string_equal(copy.run_id, s->runs[i].run_id);
        custom += s->runs[i].custom.n_cores != 0;
        off += s->runs[i].dvfs_off;
    }
    assert_int_equal(custom, 5 * 2 * 2 - 2);
    assert_int_equal(off, s->n_runs / 2);
    jf_sweep_destroy(&s);
}

// The tables hold the reference's step counts (jetson-platforms.md §6), ascending.
static void test_clock_tables(void **state)
{
    (void) state;
    static const struct {
        jf_board_type_t type;
        int cpus;
        size_t cpu, gpu, emc;
    } rows[] = {
        {JF_BOARD_NANO, 4, 15, 12, 7},       {JF_BOARD_AGX_XAVIER, 8, 29, 14, 9},
        {JF_BOARD_XAVIER_NX, 6, 25, 15, 9},  {JF_BOARD_ORIN_AGX, 12, 29, 11, 4},
        {JF_BOARD_ORIN_NANO, 6, 20, 5, 3},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const jf_board_clocks_t *t = jf_board_clocks(rows[i].type);
        assert_non_null(t);
        assert_int_equal(t->n_cpus, rows[i].cpus);
        assert_int_equal(t->n_cpu_steps, rows[i].cpu);
        assert_int_equal(t->n_gpu_steps, rows[i].gpu);
        assert_int_equal(t->n_emc_steps, rows[i].emc);
        const int64_t *lists[] = {t->cpu_steps_hz, t->gpu_steps_hz, t->emc_steps_hz};
        const size_t ns[] = {t->n_cpu_steps, t->n_gpu_steps, t->n_emc_steps};
        for (size_t l = 0; l < 3; l++) {
            for (size_t k = 1; k < ns[l]; k++) {
                assert_true(lists[l][k - 1] < lists[l][k]);
            }
        }
    }
    assert_null(jf_board_clocks(JF_BOARD_HOST));
    assert_null(jf_board_clocks(JF_BOARD_SIM));
    const jf_board_clocks_t *nx = jf_board_clocks(JF_BOARD_XAVIER_NX);
    assert_true(jf_board_clocks_has_step(nx->gpu_steps_hz, nx->n_gpu_steps, 599250000));
    assert_true(jf_board_clocks_has_step(nx->cpu_steps_hz, nx->n_cpu_steps, 1907200000));
    assert_false(jf_board_clocks_has_step(nx->cpu_steps_hz, nx->n_cpu_steps, 1900000000));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_custom_and_dvfs_expand),
        cmocka_unit_test(test_units_and_base),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_sim_and_mixed_types),
        cmocka_unit_test(test_host_has_no_custom_modes),
        cmocka_unit_test(test_dvfs_off_skips_hosts),
        cmocka_unit_test(test_example_sweep),
        cmocka_unit_test(test_clock_tables),
    };
    return cmocka_run_group_tests(tests, t_setup, t_teardown);
}
