/* Unit tests for jf_sweep: the sweeps in sweeps/ expand against fleet.yaml.example (demo.yaml
 * against the demo's fleet: one host and 15 simulated boards), rules and defaults work, expansion order and run ids are stable,
 * and every tests/fixtures/yaml/bad/sweep-* file fails with its file:line:col (table-driven). */
#include "jf_sweep.h"
#include "jf_workload.h"

#include "jft_config.h"
#include "jft_fs.h"

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define T_S INT64_C(1000000)

typedef struct t_fleets {
    jf_fleet_config_t *example; // fleet.yaml.example
    jf_fleet_config_t *lab;     // tests/fixtures/yaml/good/fleet-lab.yaml
    jf_fleet_config_t *demo;    // tests/fixtures/yaml/good/fleet-demo.yaml (scripts/demo.sh's)
} t_fleets_t;

static int t_setup(void **state)
{
    t_fleets_t *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->example = jft_fleet_fixture("../../fleet.yaml.example");
    f->lab = jft_fleet_fixture("yaml/good/fleet-lab.yaml");
    f->demo = jft_fleet_fixture("yaml/good/fleet-demo.yaml");
    *state = f;
    return 0;
}

static int t_teardown(void **state)
{
    t_fleets_t *f = *state;
    jf_fleet_config_destroy(&f->example);
    jf_fleet_config_destroy(&f->lab);
    jf_fleet_config_destroy(&f->demo);
    free(f);
    return 0;
}

static jf_sweep_t *t_load(const char *rel, const jf_fleet_config_t *fleet)
{
    char path[PATH_MAX] = {0};
    jft_fixture(rel, path);
    jf_err_t err = {0};
    jf_sweep_t *sweep = jf_sweep_load(path, fleet, &err);
    if (!sweep) {
        fail_msg("%s: %s", rel, err.msg);
    }
    return sweep;
}

static jf_sweep_t *t_parse(const char *text, const jf_fleet_config_t *fleet, jf_err_t *err)
{
    return jf_sweep_parse(text, strlen(text), "t.yaml", fleet, err);
}

// Every run is valid, carries the id of its own fields, and no id repeats.
static void t_assert_runs_sound(const jf_sweep_t *sweep)
{
    for (size_t i = 0; i < sweep->n_runs; i++) {
        jf_run_spec_t copy = sweep->runs[i];
        jf_run_spec_compute_id(&copy);
        assert_string_equal(copy.run_id, sweep->runs[i].run_id);
        assert_true(jf_run_spec_is_run_id(copy.run_id));
        assert_int_equal(jf_run_spec_validate(&copy, NULL), 0);
        for (size_t j = 0; j < i; j++) {
            assert_string_not_equal(sweep->runs[j].run_id, copy.run_id);
        }
    }
}

static void test_study_sweep(void **state)
{
    t_fleets_t *f = *state;
    jf_sweep_t *sweep = t_load("../../sweeps/study-mobilenet-storage.yaml", f->example);
    assert_string_equal(sweep->name, "study-mobilenet-storage");
    assert_non_null(strstr(sweep->description, "usb-hdd vs sd vs nvme"));
    assert_int_equal(sweep->n_runs, 5 * 3 * 3);
    assert_int_equal(sweep->skips.excluded + sweep->skips.no_storage + sweep->skips.no_power_mode,
                     0);
    const jf_run_spec_t *r = &sweep->runs[0];
    assert_string_equal(r->board, "nx-01");
    assert_string_equal(r->workload, "mobilenetv3-gld23k");
    assert_string_equal(r->model, "mobilenetv3");
    assert_string_equal(r->dataset, "gld23k");
    assert_string_equal(r->power_mode, "MODE_15W_6CORE");
    assert_int_equal(r->power_mode_id, 2);
    assert_string_equal(r->storage, "usb-hdd");
    assert_int_equal(r->epochs, 3);
    assert_int_equal(r->batch_size, 16);
    assert_int_equal(r->prefetch, 2);
    assert_int_equal(r->threads, 0);
    assert_int_equal(r->seed, 1);
    assert_true(r->drop_caches);
    assert_int_equal(r->telemetry_hz, 1);
    assert_int_equal(r->timeout_us, 2 * 3600 * T_S);
    // Storage in the sweep's order, workers inside it, boards outermost.
    assert_int_equal(sweep->runs[2].workers, 2);
    assert_string_equal(sweep->runs[3].storage, "sd");
    assert_string_equal(sweep->runs[6].storage, "nvme");
    assert_string_equal(sweep->runs[9].board, "nx-02");
    assert_string_equal(sweep->runs[44].board, "nx-05");
    t_assert_runs_sound(sweep);
    jf_sweep_destroy(&sweep);
    assert_null(sweep);
}

static void test_variability_sweep(void **state)
{
    t_fleets_t *f = *state;
    jf_sweep_t *sweep = t_load("../../sweeps/variability.yaml", f->example);
    // AGX: 5 boards x 7 modes x 3; NX: 4 x 8 x 3, and nx-05 with its own 2 modes x 3.
    assert_int_equal(sweep->n_runs, 105 + 96 + 6);
    assert_int_equal(sweep->skips.excluded, 5 * 3 + 4 * 3);
    for (size_t i = 0; i < sweep->n_runs; i++) {
        const jf_run_spec_t *r = &sweep->runs[i];
        assert_null(strstr(r->power_mode, "DESKTOP"));
        assert_int_equal(r->seed, 42 + (uint64_t) r->repeat);
        assert_int_equal(r->timeout_us, 3600 * T_S);
        assert_true(strncmp(r->board, "agx-", 4) == 0 || strncmp(r->board, "nx-", 3) == 0);
    }
    assert_string_equal(sweep->runs[0].board, "agx-01");
    assert_string_equal(sweep->runs[0].power_mode, "MAXN");
    assert_int_equal(sweep->runs[2].repeat, 2);
    assert_string_equal(sweep->runs[3].power_mode, "MODE_10W");
    const jf_run_spec_t *last = &sweep->runs[sweep->n_runs - 1];
    assert_string_equal(last->board, "nx-05");
    assert_string_equal(last->power_mode, "MODE_10W_4CORE");
    t_assert_runs_sound(sweep);
    jf_sweep_destroy(&sweep);
}

// sweeps/demo.yaml on the demo's fleet (one host, 5 simulated boards of each study type): the
// host trains LeNet-5 only, every simulated board all three workloads in its one power mode.
static void test_demo_sweep(void **state)
{
    t_fleets_t *f = *state;
    jf_sweep_t *sweep = t_load("../../sweeps/demo.yaml", f->demo);
    assert_int_equal(sweep->n_runs, 2 + 15 * 6); // host: 1 workload; sims: 3; workers 0 and 1
    static const char *const workloads[] = {"lenet5-mnist", "resnet18-cifar10",
                                            "mobilenetv3-gld23k"};
    static const char *const modes[] = {"MAXN", "MODE_15W_6CORE", "MAXN"}; // agx, nx, nano
    for (size_t i = 0; i < sweep->n_runs; i++) {
        const jf_run_spec_t *r = &sweep->runs[i];
        bool host = i < 2;
        size_t k = host ? i : i - 2; // index among the host's or the sims' runs
        if (host) {
            assert_string_equal(r->board, "host-1");
            assert_string_equal(r->workload, "lenet5-mnist");
            assert_string_equal(r->power_mode, "DEFAULT");
            assert_string_equal(r->storage, "local");
        } else {
            assert_true(strncmp(r->board, "sim-", 4) == 0);
            assert_string_equal(r->workload, workloads[(k % 6) / 2]);
            assert_string_equal(r->power_mode, modes[k / 30]);
            assert_string_equal(r->storage, "nvme");
        }
        assert_int_equal(r->workers, (int) (k % 2));
        assert_int_equal(r->batch_size, 16);
        assert_int_equal(r->threads, 1);
        assert_int_equal(r->epochs, 2);
        assert_int_equal(r->telemetry_hz, 5);       // the fleet's default
        assert_int_equal(r->timeout_us, 600 * T_S); // the fleet's run_timeout
    }
    assert_string_equal(sweep->runs[2].board, "sim-agx-01");
    assert_string_equal(sweep->runs[91].board, "sim-nano-05");
    t_assert_runs_sound(sweep);
    jf_sweep_destroy(&sweep);
    char path[PATH_MAX] = {0};
    jft_fixture("../../sweeps/demo.yaml", path);
    jf_err_t err = {0};
    sweep = jf_sweep_load(path, f->example, &err);
    assert_null(sweep);
    assert_non_null(strstr(err.msg, "demo.yaml:12:18: target device_type 'host' matches no "
                                    "board"));
}

typedef struct t_run_row {
    const char *board;
    const char *workload;
    const char *storage;
    int workers;
} t_run_row_t;

// The expected expansion of good/sweep-rules.yaml against good/fleet-lab.yaml, in order.
static const t_run_row_t t_rules_runs[] = {
    {"nx-01", "lenet5-mnist", "sd", 0},       {"nx-01", "lenet5-mnist", "nvme", 0},
    {"nx-01", "lenet5-mnist", "nvme", 1},     {"nx-01", "resnet", "sd", 0},
    {"nx-01", "resnet", "nvme", 0},           {"nx-01", "resnet", "nvme", 1},
    {"nx-02", "lenet5-mnist", "sd", 0},       {"nx-02", "resnet", "sd", 0},
    {"nano-01", "lenet5-mnist", "sd", 0},     {"nano-02", "lenet5-mnist", "sd", 0},
    {"sim-nano-01", "lenet5-mnist", "sd", 0}, {"nx-01", "lenet5-mnist", "nvme", 4},
    {"nx-01", "resnet", "nvme", 4},
};

static void test_rules(void **state)
{
    t_fleets_t *f = *state;
    jf_sweep_t *sweep = t_load("yaml/good/sweep-rules.yaml", f->lab);
    size_t n = sizeof t_rules_runs / sizeof t_rules_runs[0];
    assert_int_equal(sweep->n_runs, n);
    for (size_t i = 0; i < n; i++) {
        const jf_run_spec_t *r = &sweep->runs[i];
        if (strcmp(r->board, t_rules_runs[i].board) ||
            strcmp(r->workload, t_rules_runs[i].workload) ||
            strcmp(r->storage, t_rules_runs[i].storage) || r->workers != t_rules_runs[i].workers) {
            fail_msg("run %zu is %s/%s/%s/%d", i, r->board, r->workload, r->storage, r->workers);
        }
    }
    // Main matrix: 5 boards x 2 workloads x 2 modes x 2 media x 2 worker counts = 80, of which 11
    // run; the includes add 2 runs and re-produce 2 (kept once) and meet 4 missing modes.
    assert_int_equal(sweep->skips.excluded, 13);
    assert_int_equal(sweep->skips.no_storage, 16);
    assert_int_equal(sweep->skips.no_power_mode, 44);
    assert_string_equal(sweep->runs[8].power_mode, "MAXN"); // nano-01
    assert_int_equal(sweep->runs[10].power_mode_id, 0);     // sim-nano-01, listed as "0"
    assert_int_equal(sweep->runs[0].epochs, 1);
    assert_int_equal(sweep->runs[3].epochs, 3);
    t_assert_runs_sound(sweep);
    jf_sweep_destroy(&sweep);
}

#define T_NANO01                                                                                   \
    "name: s\ntarget: {boards: [nano-01]}\nworkloads: [{model: lenet5, dataset: mnist}]\n"

static void test_defaults_and_stable_ids(void **state)
{
    t_fleets_t *f = *state;
    const char *text = T_NANO01 "storage: sd\n";
    jf_err_t err = {0};
    jf_sweep_t *a = t_parse(text, f->lab, &err);
    assert_non_null(a);
    assert_int_equal(a->n_runs, 2); // both nano modes
    assert_string_equal(a->source, "t.yaml");
    assert_string_equal(a->description, "");
    const jf_run_spec_t *r = &a->runs[1];
    assert_string_equal(r->power_mode, "5W");
    assert_int_equal(r->epochs, 3);
    assert_int_equal(r->workers, 0);
    assert_int_equal(r->batch_size, 16);
    assert_int_equal(r->repeat, 0);
    assert_int_equal(r->prefetch, 2);
    assert_int_equal(r->threads, 0);
    assert_int_equal(r->seed, 1);
    assert_false(r->drop_caches);
    assert_int_equal(r->telemetry_hz, 1);
    assert_int_equal(r->timeout_us, 2 * 3600 * T_S);
    jf_sweep_t *b = jf_sweep_parse(text, strlen(text), NULL, f->lab, &err);
    assert_non_null(b);
    assert_string_equal(b->source, "<input>");
    assert_string_equal(a->runs[0].run_id, b->runs[0].run_id);
    assert_string_equal(a->runs[1].run_id, b->runs[1].run_id);
    jf_sweep_destroy(&b);
    b = t_parse(T_NANO01 "storage: sd\nseed: 2\n", f->lab, &err);
    assert_string_not_equal(a->runs[0].run_id, b->runs[0].run_id);
    jf_sweep_destroy(&b);
    jf_sweep_destroy(&a);
    jf_sweep_destroy(&a);
    jf_sweep_destroy(NULL);
}

static void test_settings(void **state)
{
    t_fleets_t *f = *state;
    jf_err_t err = {0};
    jf_sweep_t *s = t_parse(T_NANO01 "storage: [usb-hdd]\npower_modes: MAXN\nworkers: [2, 0]\n"
                                     "batch_sizes: 8\nrepeats: 2\nprefetch: 4\nthreads: 3\n"
                                     "seed: 100\ndrop_caches: on\ntelemetry_hz: 10\ntimeout: 90s\n"
                                     "description: hello\n",
                            f->lab, &err);
    assert_non_null(s);
    assert_string_equal(s->description, "hello");
    assert_int_equal(s->n_runs, 4);
    const int workers[] = {2, 2, 0, 0};
    for (size_t i = 0; i < 4; i++) {
        const jf_run_spec_t *r = &s->runs[i];
        assert_int_equal(r->workers, workers[i]);
        assert_int_equal(r->repeat, (int) (i % 2));
        assert_int_equal(r->seed, 100 + i % 2);
        assert_int_equal(r->batch_size * 100 + r->prefetch * 10 + r->threads, 843);
        assert_true(r->drop_caches);
        assert_int_equal(r->telemetry_hz, 10);
        assert_int_equal(r->timeout_us, 90 * T_S);
        assert_string_equal(r->storage, "usb-hdd");
    }
    jf_sweep_destroy(&s);
}

// An idle baseline sweep (docs/baseline.md): each combination gives two one-epoch idle runs,
// telemetry on and off, with their own ids; idle_s out of range is refused with its position.
static void test_idle_sweep(void **state)
{
    t_fleets_t *f = *state;
    jf_err_t err = {0};
    jf_sweep_t *s =
        t_parse(T_NANO01 "storage: [usb-hdd]\npower_modes: [MAXN, 5W]\ndvfs: [on, off]\n"
                         "idle_s: 30\n",
                f->lab, &err);
    assert_non_null(s);
    assert_int_equal(s->n_runs, 8);
    for (size_t i = 0; i < s->n_runs; i++) {
        assert_int_equal(s->runs[i].idle_s, 30);
        assert_int_equal(s->runs[i].epochs, 1);
        assert_int_equal(s->runs[i].telemetry_off, (int) (i % 2));
        assert_string_not_equal(s->runs[i].run_id, s->runs[i ^ 1].run_id);
    }
    jf_sweep_destroy(&s);
    assert_null(t_parse(T_NANO01 "storage: [usb-hdd]\nidle_s: 3601\n", f->lab, &err));
    assert_int_equal(err.code, -EINVAL);
    assert_non_null(strstr(err.msg, "t.yaml:5:9: 'idle_s': 3601 is out of range [1, 3600]"));
}

// runtime: [bare, container] (docs/containers.md): two runs per combination; the bare one keeps
// the id of a sweep without the key; a value outside the vocabulary names its position.
static void test_runtime_sweep(void **state)
{
    t_fleets_t *f = *state;
    jf_err_t err = {0};
    jf_sweep_t *plain = t_parse(T_NANO01 "storage: [usb-hdd]\npower_modes: MAXN\n", f->lab, &err);
    jf_sweep_t *s = t_parse(T_NANO01 "storage: [usb-hdd]\npower_modes: MAXN\n"
                                     "runtime: [bare, container, bare]\n",
                            f->lab, &err);
    assert_non_null(plain);
    assert_non_null(s);
    assert_int_equal(s->n_runs, 2);
    assert_string_equal(s->runs[0].runtime, "");
    assert_string_equal(s->runs[0].run_id, plain->runs[0].run_id);
    assert_string_equal(s->runs[1].runtime, "container");
    assert_string_not_equal(s->runs[1].run_id, plain->runs[0].run_id);
    jf_sweep_destroy(&s);
    jf_sweep_destroy(&plain);
    assert_null(t_parse(T_NANO01 "storage: [usb-hdd]\nruntime: [vm]\n", f->lab, &err));
    assert_non_null(strstr(err.msg, "t.yaml:5:11: unknown runtime 'vm'"));
}

// The expected expansion of good/sweep-runtime-rules.yaml against good/fleet-lab.yaml, in order:
// an exclude rule that names the runtime removes only that runtime's run, and an include rule's
// runtime replaces the sweep's list.
static const struct t_runtime_row {
    int workers;
    const char *runtime; // as in the run spec: "" for bare
} t_runtime_runs[] = {{0, ""}, {0, "container"}, {1, ""}, {2, "container"}};

static void test_runtime_rules(void **state)
{
    t_fleets_t *f = *state;
    jf_sweep_t *sweep = t_load("yaml/good/sweep-runtime-rules.yaml", f->lab);
    size_t n = sizeof t_runtime_runs / sizeof t_runtime_runs[0];
    assert_int_equal(sweep->n_runs, n);
    for (size_t i = 0; i < n; i++) {
        const jf_run_spec_t *r = &sweep->runs[i];
        if (r->workers != t_runtime_runs[i].workers ||
            strcmp(r->runtime, t_runtime_runs[i].runtime) != 0) {
            fail_msg("run %zu is workers %d runtime '%s', expected %d '%s'", i, r->workers,
                     r->runtime, t_runtime_runs[i].workers, t_runtime_runs[i].runtime);
        }
    }
    assert_int_equal(sweep->skips.excluded, 1);
    t_assert_runs_sound(sweep);
    jf_sweep_destroy(&sweep);
}

static void test_targets_and_mode_ids(void **state)
{
    t_fleets_t *f = *state;
    jf_err_t err = {0};
    const char *wl = "workloads: [{model: lenet5, dataset: mnist}]\nstorage: sd\n";
    char text[512] = {0};
    (void) snprintf(text, sizeof text, "name: s\ntarget: {labels: [rack-a]}\n%s", wl);
    jf_sweep_t *s = t_parse(text, f->lab, &err);
    assert_int_equal(s->n_runs, 2 + 2); // nx-01 and nano-01, two modes each
    assert_string_equal(s->runs[0].board, "nx-01");
    assert_string_equal(s->runs[3].board, "nano-01");
    jf_sweep_destroy(&s);
    (void) snprintf(text, sizeof text, "name: s\ntarget: {boards: [sim-nano-01, nx-02]}\n%s", wl);
    s = t_parse(text, f->lab, &err);
    assert_int_equal(s->n_runs, 2);
    assert_string_equal(s->runs[0].board, "nx-02"); // fleet order, not the list's
    jf_sweep_destroy(&s);
    // "2" and MODE_15W_6CORE are the same mode on nx-02: one run, from the first.
    (void) snprintf(text, sizeof text,
                    "name: s\ntarget: {boards: [nx-02]}\n%spower_modes: "
                    "[\"2\", MODE_15W_6CORE]\n",
                    wl);
    s = t_parse(text, f->lab, &err);
    assert_int_equal(s->n_runs, 1);
    assert_string_equal(s->runs[0].power_mode, "MODE_15W_6CORE");
    jf_sweep_destroy(&s);
    (void) snprintf(text, sizeof text,
                    "name: s\ntarget: {device_types: [nano]}\n%s"
                    "exclude: [{power_mode: \"1\"}, {board: nano-02}]\n",
                    wl);
    s = t_parse(text, f->lab, &err);
    assert_int_equal(s->n_runs, 2); // nano-01 and sim-nano-01 in MAXN
    assert_string_equal(s->runs[1].board, "sim-nano-01");
    assert_int_equal(s->skips.excluded, 1 + 2);
    jf_sweep_destroy(&s);
}

// Through jf_sweep_parse (the coordinator's load of a submitted sweep), every model-dataset
// combination the catalogue lacks is refused at its workload, and every pair it has is planned.
static void test_workload_pairs(void **state)
{
    t_fleets_t *f = *state;
    static const char *const models[] = {"lenet5", "resnet18", "vgg11", "mobilenetv3"};
    static const char *const datasets[] = {"mnist", "cifar10", "gld23k"};
    size_t planned = 0;
    for (size_t m = 0; m < 4; m++) {
        for (size_t d = 0; d < 3; d++) {
            char text[256] = {0};
            (void) snprintf(text, sizeof text,
                            "name: s\ntarget: {boards: [nano-01]}\nstorage: sd\nworkloads:\n"
                            "  - {model: %s, dataset: %s}\n",
                            models[m], datasets[d]);
            jf_err_t err = {0};
            jf_sweep_t *s = t_parse(text, f->lab, &err);
            bool pair = jf_workload_find(models[m], datasets[d]) != NULL;
            if (pair != (s != NULL)) {
                fail_msg("%s on %s: loaded %d, catalogue pair %d (%s)", models[m], datasets[d],
                         s != NULL, pair, err.msg);
            }
            if (!s && !strstr(err.msg, "t.yaml:5:5: workload #1: model '")) {
                fail_msg("%s on %s: '%s' lacks the workload's position", models[m], datasets[d],
                         err.msg);
            }
            planned += s ? 1 : 0;
            jf_sweep_destroy(&s);
        }
    }
    assert_int_equal(planned, jf_workload_count());
}

// An include rule adds combinations even where an exclude rule matches them.
static void test_include_is_never_excluded(void **state)
{
    t_fleets_t *f = *state;
    jf_err_t err = {0};
    jf_sweep_t *s =
        t_parse(T_NANO01 "storage: [sd, usb-hdd]\npower_modes: MAXN\n"
                         "exclude: [{storage: usb-hdd}]\n"
                         "include: [{board: nano-01, storage: usb-hdd, batch_size: 8}]\n",
                f->lab, &err);
    assert_non_null(s);
    assert_int_equal(s->n_runs, 2);
    assert_string_equal(s->runs[0].storage, "sd");
    assert_string_equal(s->runs[1].storage, "usb-hdd");
    assert_int_equal(s->runs[1].batch_size, 8);
    assert_int_equal(s->skips.excluded, 1);
    jf_sweep_destroy(&s);
}

static const struct t_bad_sweep {
    const char *file; // under tests/fixtures/yaml/bad/, expanded against good/fleet-lab.yaml
    int code;
    const char *fragment; // must appear in err.msg
} t_bad_sweeps[] = {
    {"sweep-unknown-model.yaml", -EINVAL,
     "sweep-unknown-model.yaml:6:13: unknown model 'resnet50', expected one of: lenet5"},
    {"sweep-impossible-pair.yaml", -EINVAL,
     "sweep-impossible-pair.yaml:6:5: workload #2: model 'vgg11' does not train on dataset "
     "'mnist': vgg11 takes 3x32x32 input with 10 classes (cifar10)"},
    {"sweep-unknown-dataset.yaml", -EINVAL,
     "sweep-unknown-dataset.yaml:6:14: unknown dataset 'imagenet'"},
    {"sweep-unknown-power-mode.yaml", -EINVAL,
     "sweep-unknown-power-mode.yaml:6:21: power mode 'MODE_30W_ALL' is not valid for any "
     "targeted board"},
    {"sweep-exclude-unknown-key.yaml", -EINVAL,
     "sweep-exclude-unknown-key.yaml:8:21: unknown key 'devce_type' in exclude rule, expected one "
     "of: board, device_type"},
    {"sweep-zero-repeats.yaml", -EINVAL,
     "sweep-zero-repeats.yaml:7:10: 'repeats': 0 is out of range [1, 100]"},
    {"sweep-batch-zero.yaml", -EINVAL,
     "sweep-batch-zero.yaml:7:19: 'batch_sizes'[1]: 0 is out of range [1, 4096]"},
    {"sweep-workers-17.yaml", -EINVAL,
     "sweep-workers-17.yaml:7:17: 'workers'[2]: 17 is out of range [0, 16]"},
    {"sweep-empty-axis.yaml", -EINVAL,
     "sweep-empty-axis.yaml:6:10: expected a list of 1..128 values, got 0"},
    {"sweep-target-no-board.yaml", -EINVAL,
     "sweep-target-no-board.yaml:3:24: target device_type 'orin-nano' matches no board"},
    {"sweep-target-two-keys.yaml", -EINVAL,
     "sweep-target-two-keys.yaml:3:3: target must have exactly one of: device_types, boards, "
     "labels"},
    {"sweep-target-unknown-board.yaml", -EINVAL,
     "sweep-target-unknown-board.yaml:3:21: no board 'nano-09' in the fleet"},
    {"sweep-target-label-no-board.yaml", -EINVAL,
     "sweep-target-label-no-board.yaml:3:12: target label 'rack-z' matches no board"},
    {"sweep-target-sim.yaml", -EINVAL,
     "sweep-target-sim.yaml:3:18: device type 'sim' matches nothing"},
    {"sweep-no-runs.yaml", -EINVAL,
     "sweep-no-runs.yaml:2:1: sweep 'bad' expands to no runs: 7 excluded, 3 lacking storage, 0 "
     "lacking power mode"},
    {"sweep-duplicate-workload.yaml", -EINVAL,
     "sweep-duplicate-workload.yaml:6:5: duplicate workload name 'lenet5-mnist'"},
    {"sweep-unknown-top-key.yaml", -EINVAL,
     "sweep-unknown-top-key.yaml:7:1: unknown key 'repeat' in the sweep"},
    {"sweep-bad-timeout.yaml", -EINVAL,
     "sweep-bad-timeout.yaml:7:10: 'timeout': expected a duration with a unit"},
    {"sweep-missing-storage.yaml", -EINVAL,
     "sweep-missing-storage.yaml:1:1: missing required key 'storage' in the sweep"},
    {"sweep-missing-target.yaml", -EINVAL,
     "sweep-missing-target.yaml:1:1: missing required key 'target' in the sweep"},
    {"sweep-medium-no-board.yaml", -EINVAL,
     "sweep-medium-no-board.yaml:6:15: no targeted board has medium 'nvme'"},
    {"sweep-empty-rule.yaml", -EINVAL,
     "sweep-empty-rule.yaml:8:5: empty exclude rule, expected at least one key"},
    {"sweep-include-workers.yaml", -EINVAL,
     "sweep-include-workers.yaml:8:31: 'workers': 99 is out of range [0, 16]"},
    {"sweep-rule-unknown-workload.yaml", -EINVAL,
     "sweep-rule-unknown-workload.yaml:8:16: 'lenet5' is not one of this sweep's workloads"},
    {"sweep-rule-unknown-runtime.yaml", -EINVAL,
     "sweep-rule-unknown-runtime.yaml:9:15: unknown runtime 'vm', expected one of: bare, "
     "container"},
    {"sweep-bad-name.yaml", -EINVAL, "sweep-bad-name.yaml:1:7: 'name' must be a name of 1..64"},
    {"sweep-duplicate-value.yaml", -EINVAL, "sweep-duplicate-value.yaml:7:17: '0' is listed twice"},
    {"sweep-no-workloads.yaml", -EINVAL,
     "sweep-no-workloads.yaml:4:12: 'workloads' must list 1..64 workloads, got 0"},
    {"sweep-workload-mapping.yaml", -EINVAL,
     "sweep-workload-mapping.yaml:5:3: 'workloads' must be a sequence, got a mapping"},
    {"sweep-bad-seed.yaml", -EINVAL, "sweep-bad-seed.yaml:7:7: 'seed': -1 is out of range"},
    {"sweep-bad-bool.yaml", -EINVAL,
     "sweep-bad-bool.yaml:7:14: 'drop_caches': expected true or false, got 'maybe'"},
    {"sweep-long-description.yaml", -EINVAL,
     "sweep-long-description.yaml:2:14: 'description' is longer than 512 bytes"},
    // Custom power modes and DVFS (docs/sweeps.md "Custom power modes and DVFS").
    {"sweep-custom-bad-freq.yaml", -EINVAL,
     "sweep-custom-bad-freq.yaml:7:34: 'cpu_freq': expected a frequency such as '1190400000', "
     "'1190.4MHz' or '1.9GHz', got 'fast'"},
    {"sweep-custom-base-missing.yaml", -EINVAL,
     "sweep-custom-base-missing.yaml:7:51: board 'nx-01' (xavier-nx) has no power mode "
     "'MODE_20W_6CORE' to apply the custom point on; no targeted board can run this custom "
     "point"},
    {"sweep-custom-entry-key.yaml", -EINVAL,
     "sweep-custom-entry-key.yaml:7:5: unknown key 'custum' in a power_modes entry, expected one "
     "of: custom; did you mean 'custom'?"},
    {"sweep-custom-gpu-step.yaml", -EINVAL,
     "sweep-custom-gpu-step.yaml:7:55: gpu_freq 800000000 Hz is not a step of board 'nx-01' "
     "(xavier-nx): its steps run from 114750000 to 1109250000 Hz"},
    {"sweep-custom-include.yaml", -EINVAL,
     "sweep-custom-include.yaml:10:32: an include rule cannot add custom points"},
    {"sweep-custom-khz.yaml", -EINVAL,
     "sweep-custom-khz.yaml:7:34: cpu_freq must be whole kHz (cpufreq's unit), got 1420800500 "
     "Hz"},
    {"sweep-custom-missing-cpu.yaml", -EINVAL,
     "sweep-custom-missing-cpu.yaml:7:13: missing required key 'cpu_freq' in custom"},
    {"sweep-custom-not-a-step.yaml", -EINVAL,
     "sweep-custom-not-a-step.yaml:8:34: cpu_freq 1400000000 Hz is not a step of board 'nx-01' "
     "(xavier-nx): its steps run from 115200000 to 1907200000 Hz"},
    {"sweep-custom-scalar.yaml", -EINVAL,
     "sweep-custom-scalar.yaml:6:31: a custom power mode needs its point"},
    {"sweep-custom-too-many-cores.yaml", -EINVAL,
     "sweep-custom-too-many-cores.yaml:7:21: cores 8: board 'nx-01' (xavier-nx) has 6 cores; no "
     "targeted board can run this custom point"},
    {"sweep-custom-twice.yaml", -EINVAL,
     "sweep-custom-twice.yaml:8:5: this custom point is listed twice"},
    {"sweep-custom-unknown-key.yaml", -EINVAL,
     "sweep-custom-unknown-key.yaml:7:45: unknown key 'gpu' in custom, expected one of: cores, "
     "cpu_freq, gpu_freq, emc_freq, base"},
    {"sweep-dvfs-bad.yaml", -EINVAL, "sweep-dvfs-bad.yaml:7:12: dvfs 'maybe', expected on or off"},
};

#define T_N_BAD (sizeof t_bad_sweeps / sizeof t_bad_sweeps[0])

static void test_bad_fixtures(void **state)
{
    t_fleets_t *f = *state;
    for (size_t i = 0; i < T_N_BAD; i++) {
        char rel[PATH_MAX] = {0};
        char path[PATH_MAX] = {0};
        (void) snprintf(rel, sizeof rel, "yaml/bad/%s", t_bad_sweeps[i].file);
        jft_fixture(rel, path);
        jf_err_t err = {0};
        jf_sweep_t *sweep = jf_sweep_load(path, f->lab, &err);
        if (sweep || err.code != t_bad_sweeps[i].code ||
            !strstr(err.msg, t_bad_sweeps[i].fragment)) {
            fail_msg("%s: code %d, message '%s', expected %d and '%s'", t_bad_sweeps[i].file,
                     err.code, err.msg, t_bad_sweeps[i].code, t_bad_sweeps[i].fragment);
        }
    }
}

static void test_every_bad_fixture_has_a_row(void **state)
{
    (void) state;
    char dir[PATH_MAX] = {0};
    jft_fixture("yaml/bad", dir);
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t seen = 0;
    for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        if (strncmp(e->d_name, "sweep-", 6) != 0) {
            continue;
        }
        bool found = false;
        for (size_t i = 0; i < T_N_BAD && !found; i++) {
            found = strcmp(t_bad_sweeps[i].file, e->d_name) == 0;
        }
        if (!found) {
            fail_msg("bad fixture '%s' has no row in t_bad_sweeps", e->d_name);
        }
        seen++;
    }
    closedir(d);
    assert_int_equal(seen, T_N_BAD);
}

static void t_append(char *buf, size_t size, const char *text)
{
    size_t used = strlen(buf);
    int w = snprintf(buf + used, size - used, "%s", text);
    assert_true(w >= 0 && (size_t) w < size - used);
}

// Appends "[first, first+1, ..., first+n-1]" to buf.
static void t_append_range(char *buf, size_t size, int first, int n)
{
    size_t used = strlen(buf);
    for (int i = 0; i < n; i++) {
        int w = snprintf(buf + used, size - used, "%s%d", i ? ", " : "[", first + i);
        assert_true(w > 0 && (size_t) w < size - used);
        used += (size_t) w;
    }
    assert_true(used + 2 < size);
    memcpy(buf + used, "]\n", 3);
}

// 17 workers x 128 batch sizes x 100 repeats = 217600 runs on one board: over JF_SWEEP_RUNS_MAX.
static void test_too_many_runs(void **state)
{
    t_fleets_t *f = *state;
    static char text[4096];
    (void) snprintf(text, sizeof text,
                    T_NANO01 "storage: sd\npower_modes: MAXN\nrepeats: 100\n"
                             "workers: ");
    t_append_range(text, sizeof text, 0, 17);
    t_append(text, sizeof text, "batch_sizes: ");
    t_append_range(text, sizeof text, 1, 128);
    jf_err_t err = {0};
    jf_sweep_t *s = t_parse(text, f->lab, &err);
    assert_null(s);
    assert_string_equal(err.msg, "t.yaml:1:1: sweep 's' expands to more than 200000 runs");
}

// Combinations are capped even when exclusions would leave few runs.
static void test_too_many_combinations(void **state)
{
    t_fleets_t *f = *state;
    static char text[8192];
    (void) snprintf(text, sizeof text, "name: s\ntarget: {boards: [nano-01]}\nworkloads:\n");
    for (int i = 0; i < 9; i++) {
        size_t used = strlen(text);
        (void) snprintf(text + used, sizeof text - used,
                        "  - {name: w%d, model: lenet5, dataset: mnist}\n", i);
    }
    t_append(text, sizeof text,
             "storage: sd\nrepeats: 100\nexclude: [{board: nano-01}]\nworkers: ");
    t_append_range(text, sizeof text, 0, 17);
    t_append(text, sizeof text, "batch_sizes: ");
    t_append_range(text, sizeof text, 1, 128);
    jf_err_t err = {0};
    jf_sweep_t *s = t_parse(text, f->lab, &err);
    assert_null(s);
    assert_string_equal(err.msg, "t.yaml:1:1: sweep 's' has more than 3200000 combinations; "
                                 "narrow its axes");
}

static void test_files_and_limits(void **state)
{
    t_fleets_t *f = *state;
    jf_err_t err = {0};
    assert_null(jf_sweep_load("/nonexistent/s.yaml", f->lab, &err));
    assert_int_equal(err.code, -ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/s.yaml: cannot read"));
    assert_null(jf_sweep_load("/nonexistent/s.yaml", NULL, &err));
    assert_int_equal(err.code, -EINVAL);
    assert_null(jf_sweep_parse("a: 1", 4, "t.yaml", NULL, &err));
    assert_int_equal(err.code, -EINVAL);
    char dir[PATH_MAX] = {0};
    assert_int_equal(jft_tmpdir_new(dir), 0);
    char path[PATH_MAX + 16] = {0};
    (void) snprintf(path, sizeof path, "%s/big.yaml", dir);
    size_t size = JF_SWEEP_FILE_MAX_BYTES + 1;
    char *text = malloc(size + 1);
    assert_non_null(text);
    memset(text, '#', size);
    text[size] = '\0';
    assert_int_equal(jft_write_file(path, text), 0);
    free(text);
    assert_null(jf_sweep_load(path, f->lab, &err));
    assert_int_equal(err.code, -EFBIG);
    assert_non_null(strstr(err.msg, "big.yaml:1:1: input is larger than the limit of 1048576"));
    jft_tmpdir_remove(dir);
}

// roofline: true makes every run a roofline run of JF_RUN_ROOFLINE_EPOCHS epochs, whatever the
// workload says, with an id of its own; a non-boolean is refused.
static void test_roofline_key(void **state)
{
    t_fleets_t *f = *state;
    jf_err_t err = {0};
    jf_sweep_t *plain = t_parse(T_NANO01 "storage: [usb-hdd]\npower_modes: MAXN\n", f->lab, &err);
    jf_sweep_t *s =
        t_parse(T_NANO01 "storage: [usb-hdd]\npower_modes: MAXN\nroofline: true\n", f->lab, &err);
    assert_non_null(plain);
    assert_non_null(s);
    assert_int_equal(s->n_runs, 1);
    assert_true(s->runs[0].roofline);
    assert_false(plain->runs[0].roofline);
    assert_int_equal(s->runs[0].epochs, JF_RUN_ROOFLINE_EPOCHS);
    assert_string_not_equal(s->runs[0].run_id, plain->runs[0].run_id);
    jf_sweep_destroy(&s);
    jf_sweep_destroy(&plain);
    s = t_parse(T_NANO01 "storage: [usb-hdd]\nroofline: maybe\n", f->lab, &err);
    assert_null(s);
    assert_int_equal(err.code, -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_study_sweep),
        cmocka_unit_test(test_variability_sweep),
        cmocka_unit_test(test_demo_sweep),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_defaults_and_stable_ids),
        cmocka_unit_test(test_settings),
        cmocka_unit_test(test_idle_sweep),
        cmocka_unit_test(test_runtime_sweep),
        cmocka_unit_test(test_runtime_rules),
        cmocka_unit_test(test_roofline_key),
        cmocka_unit_test(test_targets_and_mode_ids),
        cmocka_unit_test(test_include_is_never_excluded),
        cmocka_unit_test(test_workload_pairs),
        cmocka_unit_test(test_bad_fixtures),
        cmocka_unit_test(test_every_bad_fixture_has_a_row),
        cmocka_unit_test(test_too_many_runs),
        cmocka_unit_test(test_too_many_combinations),
        cmocka_unit_test(test_files_and_limits),
    };
    return cmocka_run_group_tests(tests, t_setup, t_teardown);
}
