/* Integration: runs measured end to end. A host agent and three "Xavier NX" agents — the real
 * jetfleet-agent with --platform jetson on copies of the sysfs and privhelper fixture trees, so
 * that training runs on this machine while telemetry, power modes and the helper see a Jetson —
 * run one LeNet-5 sweep with drop_caches at 10 Hz. nx-1 has the helper (test build, on its own
 * tree): its mode is stored, set, read back and restored, its cache dropped, and the fixture's
 * static power gives epoch energy = power x e2e. nx-2's dataset is not on its medium's mount and
 * nx-3 has no helper while its mode is not in force: both are refused as infeasible. nx-4 is
 * nx-1 with its rail files deleted (tests run as root, so deleting them is the way to make them
 * unreadable): its rails come from a fake tegrastats (jft-fake-tegrastats printing the Xavier NX
 * JetPack 5 lines of tests/fixtures/tegrastats), one child for the run at 100 ms. The host's
 * epochs carry energy only where RAPL counters are readable (not on this VM: then none at all)
 * and its cache is dropped per file. A second sweep runs nx-1 at a custom point with DVFS off:
 * set through the helper, read back into the measure record, shown by the CLI, and every file
 * of the tree restored afterwards. */
#include "agent_storage.h"
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"
#include "jft_jetson.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define S_POWER_MW 9535.0 // VDD_IN of tests/fixtures/sysfs/xavier-nx: 5008 mV x 1904 mA
#define S_NX       4
#define S_TS_NX    3 // nx-4: rails from tegrastats
#define S_TS_LOG   "tegrastats/xavier-nx-jp5.log"
#define S_TS_HWMON "sys/bus/i2c/devices/7-0040/hwmon/hwmon1"

static const char s_sweep[] = "name: measured\n"
                              "target:\n  boards: [host-1, nx-1, nx-2, nx-3, nx-4]\n"
                              "workloads:\n  - model: lenet5\n    dataset: mnist\n    epochs: 2\n"
                              "power_modes: [DEFAULT, MODE_20W_6CORE]\n"
                              "storage: [local, nvme]\nbatch_sizes: [32]\n"
                              "drop_caches: true\ntelemetry_hz: 10\n";

// A custom point over mode 8 (4 cores, CPU 1497.6 MHz, GPU 510 MHz; EMC left to the mode),
// then DVFS off.
static const char s_pinned[] = "name: pinned\n"
                               "target:\n  boards: [nx-1]\n"
                               "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 1}\n"
                               "power_modes:\n  - custom: {cores: 4, cpu_freq: 1497.6MHz, "
                               "gpu_freq: 510MHz, base: MODE_20W_6CORE}\n"
                               "dvfs: [off]\nstorage: [nvme]\nbatch_sizes: [32]\n"
                               "telemetry_hz: 10\n";

typedef struct t_ctx {
    jft_fleet_t fleet;
    char tree[S_NX][PATH_MAX]; // nx-<i+1>'s fixture root
} t_ctx_t;

// dir/rel into out (PATH_MAX).
static void t_path(char *out, const char *dir, const char *rel)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", dir, rel);
    assert_true(n > 0 && n < PATH_MAX);
}

// A Jetson's filesystem as the agent and the helper see it (jft_jetson.h).
static void t_make_tree(const char *root)
{
    assert_int_equal(jft_jetson_tree_make(root, "xavier-nx"), 0);
}

// nx-4: no readable rail (the INA3221 value files deleted, the labels kept), and a fake
// tegrastats in the tree with the log it prints.
static void t_make_tegrastats_tree(const char *root)
{
    static const char *const files[] = {"in1_input",   "in2_input",   "in3_input",
                                        "in4_input",   "in5_input",   "in6_input",
                                        "in7_input",   "curr1_input", "curr2_input",
                                        "curr3_input", "curr4_input"};
    char path[PATH_MAX], fix[PATH_MAX], bin[PATH_MAX];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        int n = snprintf(path, sizeof path, "%s/%s/%s", root, S_TS_HWMON, files[i]);
        assert_true(n > 0 && n < PATH_MAX);
        (void) unlink(path); // not every channel has every file
    }
    jft_fixture(S_TS_LOG, fix);
    char *log = jft_read_file(fix, NULL);
    assert_non_null(log);
    t_path(path, root, "tegrastats.log");
    assert_int_equal(jft_write_file(path, log), 0);
    free(log);
    jft_bin("jft-fake-tegrastats", bin);
    t_path(path, root, "tegrastats");
    assert_int_equal(symlink(bin, path), 0);
}

static void t_write_fleet(jft_fleet_t *f)
{
    char data[PATH_MAX];
    t_path(data, f->dir, "data");
    agent_storage_roots_t roots = {.proc_root = "/proc", .sysfs_root = "/sys"};
    agent_storage_mount_t m = {0};
    jf_err_t err = {0};
    if (agent_storage_locate(&roots, data, &m, &err) != 0) {
        fail_msg("%s", err.msg);
    }
    char *yaml = malloc(16384);
    assert_non_null(yaml);
    int n = snprintf(yaml, 16384,
                     // ipc in the test's directory, as jft_fleet's own (jft_fleet.h).
                     "coordinator:\n  agent_endpoint: %s\n  data_dir: state\n"
                     "  heartbeat_interval: 500ms\n  heartbeat_timeout: 3s\n  run_timeout: 5m\n"
                     "boards:\n  - name: host-1\n    type: host\n    storage:\n"
                     "      - {medium: local, mount: /, dataset_root: %s}\n",
                     f->agent_endpoint, data);
    for (int i = 1; i <= S_NX; i++) {
        // nx-2's medium is configured on a mount the dataset is not on.
        n += snprintf(yaml + n, 16384 - (size_t) n,
                      "  - name: nx-%d\n    type: xavier-nx\n    storage:\n"
                      "      - {medium: nvme, mount: %s, dataset_root: %s}\n",
                      i, i == 2 ? "/mnt/jetfleet-no-such-nvme" : m.mount_point, data);
    }
    assert_true(n > 0 && n < 16384);
    assert_int_equal(jft_write_file(f->config, yaml), 0);
    free(yaml);
}

static int s_setup(void **state)
{
    t_ctx_t *c = calloc(1, sizeof *c);
    *state = c;
    if (!c || jft_fleet_setup(&c->fleet, 1) != 0) {
        return -1;
    }
    t_write_fleet(&c->fleet);
    for (int i = 0; i < S_NX; i++) {
        char name[16];
        (void) snprintf(name, sizeof name, "nx-%d", i + 1);
        t_path(c->tree[i], c->fleet.dir, name);
        t_make_tree(c->tree[i]);
    }
    t_make_tegrastats_tree(c->tree[S_TS_NX]);
    sync(); // the generated dataset is written back, so that dropping its pages can work
    return 0;
}

static int s_teardown(void **state)
{
    t_ctx_t *c = *state;
    int rc = jft_fleet_teardown(&c->fleet);
    free(c);
    return rc;
}

static void t_start_nx(t_ctx_t *c, int i, bool helper)
{
    char name[16], sys[PATH_MAX], proc[PATH_MAX], etc[PATH_MAX], var[PATH_MAX];
    char cmd[4 * PATH_MAX];
    char bin[PATH_MAX], fake[PATH_MAX], tegrastats[PATH_MAX];
    (void) snprintf(name, sizeof name, "nx-%d", i + 1);
    t_path(tegrastats, c->tree[i], "tegrastats"); // only nx-4's tree has it
    t_path(sys, c->tree[i], "sys");
    t_path(proc, c->tree[i], "proc");
    t_path(etc, c->tree[i], "etc");
    t_path(var, c->tree[i], "var");
    jft_bin("jft-privhelper-test", bin);
    jft_bin("jft-fake-nvpmodel", fake);
    (void) snprintf(cmd, sizeof cmd, "%s --root %s --nvpmodel %s --allow-uid %u", bin, c->tree[i],
                    fake, (unsigned) getuid());
    const char *args[] = {"--platform",   "jetson",   "--sysfs-root", sys,
                          "--proc-root",  proc,       "--etc-root",   etc,
                          "--var-root",   var,        "--tegrastats", tegrastats,
                          helper ? "--privhelper" : NULL, cmd, NULL};
    assert_int_equal(jft_fleet_start_agent_named(&c->fleet, (size_t) i + 1, name, args), 0);
}

static char *t_cli(jft_fleet_t *f, int expect_rc, const char *const *args)
{
    return jft_cli_expect(f, expect_rc, 120000, args);
}

static long long t_int(jft_fleet_t *f, const char *sql)
{
    long long v = jft_fleet_sql_int(f, sql);
    if (v < 0) {
        fail_msg("no integer from: %s", sql);
    }
    return v;
}

static void t_text_has(jft_fleet_t *f, const char *sql, const char *frag)
{
    char *text = jft_fleet_sql_text(f, sql);
    if (!text || !strstr(text, frag)) {
        fail_msg("'%s' gave '%s', expected it to hold '%s'", sql, text ? text : "(nothing)", frag);
    }
    free(text);
}

#define S_RUN_OF(board) "(SELECT id FROM runs WHERE board = '" board "')"
#define S_MEASURE(board, path)                                                                     \
    "SELECT json_extract(measure, '" path "') FROM runs WHERE board = '" board "'"

// nx-1: energy per epoch = static power x e2e, and the measure record says how it was measured.
static void t_check_nx1(jft_fleet_t *f)
{
    assert_int_equal(t_int(f, "SELECT count(*) FROM runs WHERE board = 'nx-1' AND state = "
                              "'done'"),
                     1);
    assert_int_equal(
        t_int(f, "SELECT count(*) FROM epochs WHERE run = " S_RUN_OF(
                     "nx-1") " AND abs(energy_mj - 9535.0 * e2e_us / 1e6) <= 0.03 * 9535.0 * "
                             "e2e_us / 1e6 AND abs(avg_power_mw - 9535.0) < 1"),
        2);
    t_text_has(f, S_MEASURE("nx-1", "$.telemetry.source"), "sysfs");
    t_text_has(f, S_MEASURE("nx-1", "$.energy.total"), "input-rail");
    t_text_has(f, S_MEASURE("nx-1", "$.energy.input_rail"), "VDD_IN");
    assert_int_equal(t_int(f, S_MEASURE("nx-1", "$.telemetry.rate_hz")), 10);
    assert_true(t_int(f, S_MEASURE("nx-1", "$.telemetry.samples")) >= 2);
    t_text_has(f, S_MEASURE("nx-1", "$.power_mode.mode_name"), "MODE_20W_6CORE");
    assert_int_equal(t_int(f, S_MEASURE("nx-1", "$.power_mode.mode_id")), 8);
    assert_int_equal(t_int(f, S_MEASURE("nx-1", "$.power_mode.emc_cap_hz")), 1866000000);
    t_text_has(f, S_MEASURE("nx-1", "$.drop_caches"), "helper");
    assert_int_equal(t_int(f, S_MEASURE("nx-1", "$.storage.checked")), 1);
    assert_int_equal(t_int(f, "SELECT count(*) FROM epochs WHERE run = " S_RUN_OF(
                                  "nx-1") " AND cache_resident_after IS NOT NULL"),
                     2);
    // The run's energy: input power over the sampled time.
    assert_int_equal(t_int(f, "SELECT abs(json_extract(measure, '$.energy.avg_power_mw') - 9535) "
                              "< 1 FROM runs WHERE board = 'nx-1'"),
                     1);
    // The fixture's GPU load is 99.5 % all the time, before epoch 0 too, when the trainer does
    // not compute: another process's, and check says so on this board (a real one to it).
    assert_true(t_int(f, S_MEASURE("nx-1", "$.gpu_before.samples")) >= 1);
    assert_int_equal(t_int(f, "SELECT json_extract(measure, '$.gpu_before.mean_pct') = 99.5 AND "
                              "json_extract(measure, '$.gpu_before.max_pct') = 99.5 FROM runs "
                              "WHERE board = 'nx-1'"),
                     1);
    char *out = t_cli(f, 0, (const char *const[]){"check", "--sweep", "measured", NULL});
    assert_non_null(strstr(out, "GPU load 99.5% on average before epoch 0 began (> 10%: another "
                                "process)"));
    free(out);
}

// nx-4: energy from the fake tegrastats' VDD_IN (2763..9315 mW over its four lines), stated as
// such in the measure record, with one tegrastats started for the run at 1000 / 10 Hz.
static void t_check_nx4(t_ctx_t *c)
{
    jft_fleet_t *f = &c->fleet;
    assert_int_equal(t_int(f, "SELECT count(*) FROM runs WHERE board = 'nx-4' AND state = "
                              "'done'"),
                     1);
    assert_int_equal(t_int(f, "SELECT count(*) FROM epochs WHERE run = " S_RUN_OF(
                                  "nx-4") " AND energy_mj > 0 AND avg_power_mw BETWEEN 2763 AND "
                                          "9315"),
                     2);
    t_text_has(f, S_MEASURE("nx-4", "$.energy.source"), "tegrastats");
    assert_int_equal(t_int(f, S_MEASURE("nx-4", "$.energy.tegrastats_interval_ms")), 100);
    t_text_has(f, S_MEASURE("nx-4", "$.energy.total"), "input-rail");
    t_text_has(f, S_MEASURE("nx-4", "$.telemetry.source"), "sysfs");
    t_text_has(f, S_MEASURE("nx-1", "$.energy.source"), "power-monitor");
    // Most samples carry tegrastats' rails and say so; none carries rails from anywhere else.
    assert_true(t_int(f, "SELECT count(*) FROM telemetry_json WHERE run = " S_RUN_OF(
                             "nx-4") " AND 'rails' IN (SELECT value FROM json_each(sample, "
                                     "'$.from_tegrastats')) AND json_extract(sample, "
                                     "'$.input_power_mw') IN (2763, 5542, 5821, 9315)") >= 2);
    assert_int_equal(t_int(f, "SELECT count(*) FROM telemetry_json WHERE run = " S_RUN_OF(
                                  "nx-4") " AND json_extract(sample, '$.rails') IS NOT NULL AND "
                                          "json_extract(sample, '$.from_tegrastats') IS NULL"),
                     0);
    char path[PATH_MAX];
    t_path(path, c->tree[S_TS_NX], "tegrastats.calls");
    char *calls = jft_read_file(path, NULL);
    assert_non_null(calls);
    assert_non_null(strstr(calls, " interval 100\n"));
    assert_null(strchr(strchr(calls, '\n') + 1, '\n')); // one child for the run
    free(calls);
    // Its stderr went nowhere near the agent's log.
    t_path(path, f->dir, "agent-nx-4.log");
    char *log = jft_read_file(path, NULL);
    assert_non_null(log);
    assert_non_null(strstr(log, "rails come from tegrastats"));
    assert_null(strstr(log, "stderr noise"));
    free(log);
}

// The EMC cap is mode 2's again and (fake) nvpmodel was called exactly as expected.
static bool s_restored_with(const char *tree, const char *expected_calls)
{
    char path[PATH_MAX];
    t_path(path, tree, "sys/kernel/nvpmodel_emc_cap/emc_iso_cap");
    char *cap = jft_read_file(path, NULL);
    t_path(path, tree, "var/lib/nvpmodel/fake-calls");
    char *calls = jft_read_file(path, NULL);
    bool ok = cap && strcmp(cap, "1600000000\n") == 0 && calls &&
              strcmp(calls, expected_calls) == 0;
    free(calls);
    free(cap);
    return ok;
}

// The helper's effects on nx-1's tree: mode 8 through (fake) nvpmodel, the cache dropped, and
// the clock state written back after the run: the run's mode 8, then the fixture's mode 2 again
// on restore (status pmode:0002).
static bool s_restored(void *arg)
{
    return s_restored_with(arg, "-m 8\n-m 2\n");
}

static void t_check_tree(t_ctx_t *c)
{
    char path[PATH_MAX];
    t_path(path, c->tree[0], "proc/sys/vm/drop_caches");
    char *drop = jft_read_file(path, NULL);
    assert_non_null(drop);
    assert_string_equal(drop, "3\n");
    free(drop);
    assert_true(jft_wait_until(s_restored, c->tree[0], 10000));
    t_path(path, c->tree[0], "var/lib/nvpmodel/status");
    char *status = jft_read_file(path, NULL);
    assert_non_null(status);
    assert_string_equal(status, "pmode:0002 fmode:quiet\n");
    free(status);
    // nx-3 changed nothing: no helper ran there.
    t_path(path, c->tree[2], "var/lib/nvpmodel/fake-calls");
    char *calls = jft_read_file(path, NULL);
    assert_non_null(calls);
    assert_string_equal(calls, "");
    free(calls);
}

static void t_check_refusals_and_host(jft_fleet_t *f)
{
    t_text_has(f, "SELECT fail_reason FROM runs WHERE board = 'nx-2'", "infeasible");
    t_text_has(f, "SELECT fail_detail FROM runs WHERE board = 'nx-2'", "storage: dataset '");
    t_text_has(f, "SELECT fail_detail FROM runs WHERE board = 'nx-2'",
               "/mnt/jetfleet-no-such-nvme");
    t_text_has(f, "SELECT fail_reason FROM runs WHERE board = 'nx-3'", "infeasible");
    t_text_has(f, "SELECT fail_detail FROM runs WHERE board = 'nx-3'",
               "no privileged helper configured");
    t_text_has(f, "SELECT fail_detail FROM runs WHERE board = 'nx-3'", "the EMC cap is");
    // The host: no power rails; energy only from RAPL counters where this machine lets us read
    // them, else none at all — NULL, never 0.
    assert_int_equal(t_int(f, "SELECT count(*) FROM runs WHERE board = 'host-1' AND state = "
                              "'done'"),
                     1);
    bool rapl = t_int(f, "SELECT count(*) FROM telemetry_json WHERE run = " S_RUN_OF(
                             "host-1") " AND json_extract(sample, '$.rapl_energy_uj') IS NOT "
                                       "NULL") > 0;
    if (rapl) {
        t_text_has(f, S_MEASURE("host-1", "$.energy.source"), "rapl");
        t_text_has(f, S_MEASURE("host-1", "$.energy.covers"), "RAPL ");
    } else {
        assert_int_equal(t_int(f, "SELECT count(*) FROM epochs WHERE run = " S_RUN_OF(
                                      "host-1") " AND energy_mj IS NULL AND avg_power_mw IS NULL "
                                                "AND peak_power_mw IS NULL"),
                         2);
        t_text_has(f, S_MEASURE("host-1", "$.energy.total"), "none");
        t_text_has(f, S_MEASURE("host-1", "$.energy.reason"), "no sample carried");
    }
    assert_int_equal(t_int(f,
                           "SELECT count(*) FROM telemetry_json WHERE run = " S_RUN_OF(
                               "host-1") " AND (json_extract(sample, '$.rails') IS NOT NULL OR "
                                         "json_extract(sample, '$.input_power_mw') IS NOT NULL)"),
                     0);
    t_text_has(f, S_MEASURE("host-1", "$.telemetry.source"), "proc");
    t_text_has(f, S_MEASURE("host-1", "$.power_mode.mode_name"), "DEFAULT");
    t_text_has(f, S_MEASURE("host-1", "$.drop_caches"), "fadvise");
    assert_int_equal(t_int(f, "SELECT count(*) FROM epochs WHERE run = " S_RUN_OF(
                                  "host-1") " AND epoch = 0 AND cache_resident_before IS NOT NULL"),
                     1);
}

static size_t t_lines(const char *text)
{
    size_t n = 0;
    for (const char *p = text; *p; p++) {
        n += *p == '\n';
    }
    return n;
}

static void t_check_exports(jft_fleet_t *f)
{
    char *out =
        t_cli(f, 0,
              (const char *const[]){"export", "--sweep", "measured", "--what", "epochs", NULL});
    // The epoch schema's columns (a concurrent run's inference members after the energy ones,
    // then a roofline run's benchmark members, empty here), then the store's page-cache columns.
    assert_non_null(strstr(out, ",energy_mj,avg_power_mw,peak_power_mw,infer_requests,"));
    assert_non_null(strstr(out, ",within_budget,bench,work_flop,work_bytes,"
                                "cache_resident_before,cache_resident_after"));
    assert_int_equal(t_lines(out), 1 + 3 * 2); // three done runs of two epochs
    free(out);
    out = t_cli(f, 0,
                (const char *const[]){"export", "--sweep", "measured", "--what", "runs", NULL});
    assert_non_null(strstr(out, "telemetry_source"));
    assert_non_null(strstr(out, "input-rail"));
    assert_non_null(strstr(out, "MODE_20W_6CORE"));
    free(out);
    out = t_cli(f, 0, (const char *const[]){"results", "--sweep", "measured", NULL});
    assert_non_null(strstr(out, "energy_mj"));
    free(out);
}

#define S_PINNED(path)                                                                             \
    "SELECT json_extract(measure, '" path "') FROM runs WHERE id IN (SELECT run FROM sweep_runs " \
    "WHERE sweep = 'pinned')"

static bool s_file_is(const char *root, const char *rel, const char *want)
{
    char path[PATH_MAX];
    t_path(path, root, rel);
    char *text = jft_read_file(path, NULL);
    bool ok = text && strcmp(text, want) == 0;
    free(text);
    return ok;
}

// After the pinned run as well: its base mode 8; at the end `dvfs restore` re-sets the mode
// saved with DVFS off (8), then `restore <slot>` the mode from before the run (2).
static bool s_unpinned(void *arg)
{
    return s_restored_with(arg, "-m 8\n-m 2\n-m 8\n-m 8\n-m 2\n") &&
           s_file_is(arg, "sys/devices/system/cpu/cpu4/online", "1\n") &&
           s_file_is(arg, "sys/devices/system/cpu/cpu0/cpuidle/state1/disable", "0\n");
}

// nx-1 at a custom point with DVFS off: what the store, the measure record, the CLI and the tree
// show. The sweep's file names the point; the record reads it back from the (fixture) sysfs.
static void t_check_pinned(t_ctx_t *c)
{
    jft_fleet_t *f = &c->fleet;
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "pinned.yaml", s_pinned, sweep), 0);
    char *out = t_cli(f, 0, (const char *const[]){"sweep", "submit", sweep, "--wait", NULL});
    assert_non_null(strstr(out, "1 done"));
    free(out);
    t_text_has(f, "SELECT power FROM runs WHERE dvfs_off = 1",
               "custom 4c cpu1.5G gpu0.51G on MODE_20W_6CORE +dvfs-off");
    assert_int_equal(t_int(f, "SELECT custom_cpu_hz FROM runs WHERE dvfs_off = 1"), 1497600000);
    assert_int_equal(t_int(f, "SELECT custom_emc_hz IS NULL FROM runs WHERE dvfs_off = 1"), 1);
    t_text_has(f, S_PINNED("$.power_mode.mode_name"), "custom");
    assert_int_equal(t_int(f, S_PINNED("$.power_mode.dvfs_off")), 1);
    assert_int_equal(t_int(f, "SELECT json_array_length(measure, '$.power_mode.online_cpus') "
                              "FROM runs WHERE dvfs_off = 1"),
                     4);
    assert_int_equal(t_int(f, S_PINNED("$.power_mode.cpu_clusters[0].min_hz")), 1497600000);
    assert_int_equal(t_int(f, S_PINNED("$.power_mode.cpu_clusters[0].max_hz")), 1497600000);
    assert_int_equal(t_int(f, S_PINNED("$.power_mode.gpu_min_hz")), 510000000);
    assert_int_equal(t_int(f, S_PINNED("$.power_mode.gpu_max_hz")), 510000000);
    // DVFS off locked the EMC at mode 8's cap.
    assert_int_equal(t_int(f, S_PINNED("$.power_mode.emc_cap_hz")), 1866000000);
    out = t_cli(f, 0, (const char *const[]){"results", "--sweep", "pinned", NULL});
    assert_non_null(strstr(out, "custom 4c cpu1.5G gpu0.51G on MODE_20W_6CORE +dvfs-off"));
    free(out);
    // The mode went through nvpmodel once more, and everything came back afterwards.
    assert_true(jft_wait_until(s_unpinned, c->tree[0], 10000));
}

static void test_measured_runs(void **state)
{
    t_ctx_t *c = *state;
    jft_fleet_t *f = &c->fleet;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    assert_int_equal(jft_fleet_start_agent(f, 0, NULL), 0);
    t_start_nx(c, 0, true);
    t_start_nx(c, 1, true);
    t_start_nx(c, 2, false);
    t_start_nx(c, 3, true);
    assert_true(jft_fleet_wait_online(f, 1 + S_NX, 20000));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "measured.yaml", s_sweep, sweep), 0);
    // Some runs fail (as they should), so the CLI exits 1.
    char *out = t_cli(f, 1, (const char *const[]){"sweep", "submit", sweep, "--wait", NULL});
    assert_non_null(strstr(out, "3 done, 2 failed"));
    free(out);
    t_check_nx1(f);
    t_check_nx4(c);
    t_check_tree(c);
    t_check_refusals_and_host(f);
    t_check_exports(f);
    t_check_pinned(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_measured_runs, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
