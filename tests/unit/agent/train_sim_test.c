/* Tests of the simulated trainer with the real parameter file ($JF_SIM_PARAMS): in process
 * (train_options_parse, train_sim_new and train_sim_exec, as main runs them) MobileNetV3 on a
 * Xavier NX (15 W, 6 cores, NVMe) with 0 and 1 loader workers against sim_model_epoch for the
 * same inputs, seeds and board names, time compression, the record lines the agent reads, and
 * bad input; and jetfleet-train-sim from the build tree ($JF_BIN_DIR) for what only a process
 * shows: exit codes for out of memory (ResNet-18 on a Nano) and bad input, the JF_TRAIN_FAULT
 * hook, and that jetfleet-train --simulate writes the same lines.
 * High --sim-speed keeps them fast. */
#include "jf_msg_run.h"
#include "sim_model.h"
#include "train_options.h"
#include "train_sim.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "jft_fs.h"

#define T_OUT_MAX   (4 << 20) // bytes of a run's stdout kept
#define T_ARGS_MAX  48
#define T_SEED      "3" // --seed: the run's noise and draws
#define T_FLEET     "7" // --sim-seed: the board factors
#define T_NX_MODE   "MODE_15W_6CORE"
#define T_FAST      "100000" // --sim-speed when the wall time does not matter
#define T_US_PER_S  1e6
#define T_REAL_SLOP 2e-6 // s: a record's seconds carry 9 significant digits

// One run, in a process or in this one.
typedef struct t_child {
    char *out;     // its record lines, NUL-terminated; owned
    int status;    // in a process: from waitpid
    int rc;        // in this process: what train_sim_new or train_sim_exec returned
    jf_err_t err;  // in this process: their error
    double wall_s; // from the start to the end
} t_child_t;

typedef struct t_lines {
    json_t **line; // owned, each a new reference
    size_t n;
} t_lines_t;

static double t_now_s(void)
{
    struct timespec ts = {0};
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

// Runs program (jetfleet-train-sim or jetfleet-train) with args (NULL-terminated, without
// argv[0]) and JF_TRAIN_FAULT set to fault (or unset), capturing stdout.
static void t_run_process(const char *program, const char *const *args, const char *fault,
                          t_child_t *child)
{
    char path[PATH_MAX];
    jft_bin(program, path);
    char *argv[T_ARGS_MAX] = {path};
    for (size_t i = 0; args[i]; i++) {
        assert_true(i + 2 < T_ARGS_MAX);
        argv[i + 1] = (char *)args[i];
    }
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    double t0 = t_now_s();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        (void)dup2(fds[1], STDOUT_FILENO);
        (void)close(fds[0]);
        (void)close(fds[1]);
        (void)(fault ? setenv("JF_TRAIN_FAULT", fault, 1) : unsetenv("JF_TRAIN_FAULT"));
        execv(path, argv);
        _exit(127);
    }
    (void)close(fds[1]);
    child->out = malloc(T_OUT_MAX);
    assert_non_null(child->out);
    size_t len = 0;
    ssize_t n = 0;
    while ((n = read(fds[0], child->out + len, T_OUT_MAX - 1 - len)) > 0) {
        len += (size_t)n;
    }
    child->out[len] = '\0';
    (void)close(fds[0]);
    assert_int_equal(waitpid(pid, &child->status, 0), pid);
    child->wall_s = t_now_s() - t0;
}

// Runs what jetfleet-train's main runs for args in this process (faster than a process that
// loads libtorch), capturing the lines.
static void t_run_here(const char *const *args, t_child_t *child)
{
    char *argv[T_ARGS_MAX] = {"jetfleet-train"};
    int argc = 1;
    for (size_t i = 0; args[i]; i++) {
        assert_true(argc + 1 < T_ARGS_MAX);
        argv[argc++] = (char *)args[i];
    }
    assert_int_equal(unsetenv("JF_TRAIN_FAULT"), 0);
    train_run_opts_t opts = {0};
    bool help = false;
    if (train_options_parse(argc, argv, &opts, &help, &child->err) != 0) {
        fail_msg("options: %s", child->err.msg);
    }
    size_t size = 0;
    FILE *out = open_memstream(&child->out, &size);
    assert_non_null(out);
    double t0 = t_now_s();
    train_sim_t *sim = train_sim_new(&opts, out, &child->err);
    child->rc = sim ? train_sim_exec(sim, &child->err) : child->err.code;
    child->wall_s = t_now_s() - t0;
    train_sim_destroy(&sim);
    assert_null(sim);
    assert_int_equal(fclose(out), 0);
}

static void t_expect_ok(const t_child_t *child)
{
    if (child->rc != 0) {
        fail_msg("the run failed: %d %s", child->rc, child->err.msg);
    }
}

static void t_expect_exit(const t_child_t *child, int code)
{
    if (!WIFEXITED(child->status) || WEXITSTATUS(child->status) != code) {
        fail_msg("expected exit %d, got status 0x%x; output:\n%.2000s", code, child->status,
                 child->out);
    }
}

// Parses every line of text (modified in place); each must be a JSON object.
static void t_parse(char *text, t_lines_t *lines)
{
    size_t cap = 0;
    *lines = (t_lines_t){0};
    for (char *line = text, *nl = NULL; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        assert_non_null(nl); // every line ends with a newline
        *nl = '\0';
        if (lines->n == cap) {
            cap = cap ? 2 * cap : 256;
            lines->line = realloc(lines->line, cap * sizeof *lines->line);
            assert_non_null(lines->line);
        }
        json_error_t jerr;
        json_t *obj = json_loads(line, JSON_REJECT_DUPLICATES, &jerr);
        if (!json_is_object(obj)) {
            fail_msg("line %zu is not a JSON object: %.300s (%s)", lines->n, line, jerr.text);
        }
        lines->line[lines->n++] = obj;
    }
}

static void t_free(t_child_t *child, t_lines_t *lines)
{
    for (size_t i = 0; lines && i < lines->n; i++) {
        json_decref(lines->line[i]);
    }
    if (lines) {
        free(lines->line);
    }
    free(child->out);
}

static const char *t_str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static json_int_t t_int(const json_t *obj, const char *key)
{
    return json_integer_value(json_object_get(obj, key));
}

static double t_num(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_number(v)) {
        fail_msg("'%s' is not a number", key);
    }
    return json_number_value(v);
}

// A duration of a record line (microseconds, as on the wire) in seconds, for the test's sums.
static double t_secs(const json_t *obj, const char *key_us)
{
    return t_num(obj, key_us) / 1e6;
}

// The inputs of one simulated run; fill with designated initialisers.
typedef struct t_sim {
    const char *board_type, *board, *mode, *medium, *model, *workers, *epochs, *speed;
    const char *max_batches; // NULL: all
    const char *json_out;    // NULL: none
    const char *params;      // NULL: $JF_SIM_PARAMS
    bool full_trainer;       // in a process: jetfleet-train --simulate, not jetfleet-train-sim
    const char *cache_resident; // --sim-cache-resident; NULL: not given (cold)
    const char *point;       // --sim-point; NULL: the mode's operating point
} t_sim_t;

// Runs s in a process (with JF_TRAIN_FAULT set to fault, or unset) or in this one. The process
// is jetfleet-train-sim, which the agents run, without --simulate (implied), unless
// s->full_trainer.
static void t_run_sim(const t_sim_t *s, bool process, const char *fault, t_child_t *child)
{
    const char *params = s->params ? s->params : getenv("JF_SIM_PARAMS");
    assert_non_null(params);
    const char *args[T_ARGS_MAX] = {
        "--simulate", "--sim-params", params,    "--sim-board-type", s->board_type, "--sim-board",
        s->board,     "--sim-seed",   T_FLEET,   "--sim-mode",       s->mode,       "--sim-medium",
        s->medium,    "--model",      s->model,  "--workers",        s->workers,    "--batch",
        "16",         "--epochs",     s->epochs, "--seed",           T_SEED,        "--sim-speed",
        s->speed};
    size_t n = 0;
    while (args[n]) {
        n++;
    }
    if (s->max_batches) {
        args[n++] = "--max-batches";
        args[n++] = s->max_batches;
    }
    if (s->json_out) {
        args[n++] = "--json-out";
        args[n++] = s->json_out;
    }
    if (s->cache_resident) {
        args[n++] = "--sim-cache-resident";
        args[n++] = s->cache_resident;
    }
    if (s->point) {
        args[n++] = "--sim-point";
        args[n++] = s->point;
    }
    if (process && s->full_trainer) {
        t_run_process("jetfleet-train", args, fault, child);
    } else if (process) {
        t_run_process("jetfleet-train-sim", args + 1, fault, child); // args[0] is --simulate
    } else {
        t_run_here(args, child);
    }
}

static t_sim_t t_nx(const char *workers)
{
    return (t_sim_t){.board_type = "xavier-nx",
                     .board = "sim-nx-01",
                     .mode = T_NX_MODE,
                     .medium = "nvme",
                     .model = "mobilenetv3",
                     .workers = workers,
                     .epochs = "2",
                     .speed = T_FAST};
}

// ---------------------------------------------------------------------------------------------
// The model's figures, line by line

static sim_model_t *t_model(void)
{
    jf_err_t err = {0};
    sim_model_t *model = sim_model_load(getenv("JF_SIM_PARAMS"), &err);
    if (!model) {
        fail_msg("cannot load the parameter file: %s", err.msg);
    }
    return model;
}

// What sim_model_epoch says about the epochs of t_nx(workers) on the same board.
static void t_model_epochs(int workers, int epochs, sim_epoch_out_t *out)
{
    sim_model_t *model = t_model();
    sim_epoch_in_t in = {.board_type = JF_BOARD_XAVIER_NX,
                         .model = "mobilenetv3",
                         .dataset = "gld23k",
                         .medium = "nvme",
                         .workers = workers,
                         .prefetch = 2,
                         .batch_size = 16,
                         .dataset_scale = 1.0,
                         .noise = true};
    jf_err_t err = {0};
    assert_int_equal(sim_model_mode_op_named(model, JF_BOARD_XAVIER_NX, T_NX_MODE, &in.op, &err),
                     0);
    // The trainer mixes --seed (T_SEED), the board and the operating point into the noise seed.
    in.run_seed = train_sim_noise_seed(3, "sim-nx-01", &in.op);
    sim_model_board_factors(model, JF_BOARD_XAVIER_NX, 7, "sim-nx-01", &in.factors);
    for (int e = 0; e < epochs; e++) {
        in.epoch = e;
        assert_int_equal(sim_model_epoch(model, &in, &out[e], &err), 0);
        in.resident_fraction = out[e].resident_fraction;
    }
    sim_model_destroy(&model);
}

static void t_expect_seconds(const json_t *line, const char *key, int64_t want_us)
{
    double got = t_secs(line, key);
    if (fabs(got - (double)want_us / T_US_PER_S) > T_REAL_SLOP) {
        fail_msg("epoch %lld: %s %.9f, model %.6f", (long long)t_int(line, "epoch"), key, got,
                 (double)want_us / T_US_PER_S);
    }
}

static void t_expect_power(const json_t *power, const sim_epoch_out_t *o)
{
    assert_true(json_is_object(power));
    assert_int_equal(json_object_size(power), o->n_rails);
    for (size_t r = 0; r < o->n_rails; r++) {
        assert_int_equal(t_int(power, o->rails[r].name), o->rails[r].power_mw);
    }
}

// Checks one epoch of lines (minibatches at *at, then the epoch line) against the model; the
// minibatches must add up to the epoch's totals.
static void t_expect_epoch(const t_lines_t *l, size_t *at, int epoch, const sim_epoch_out_t *o,
                           const sim_epoch_out_t *next)
{
    double stall_s = 0.0, compute_s = 0.0;
    json_int_t samples = 0;
    for (int64_t i = 0; i < o->batches; i++) {
        const json_t *m = l->line[(*at)++];
        assert_string_equal(t_str(m, "kind"), "minibatch");
        assert_int_equal(t_int(m, "epoch"), epoch);
        assert_int_equal(t_int(m, "index"), i);
        assert_true(t_secs(m, "fetch_stall_us") >= 0.0 && t_secs(m, "compute_us") >= 0.0);
        stall_s += t_secs(m, "fetch_stall_us");
        compute_s += t_secs(m, "compute_us");
        samples += t_int(m, "samples");
    }
    const json_t *e = l->line[(*at)++];
    assert_string_equal(t_str(e, "kind"), "epoch");
    assert_int_equal(t_int(e, "samples"), o->samples);
    assert_int_equal(samples, o->samples);
    t_expect_seconds(e, "e2e_us", o->e2e_us);
    t_expect_seconds(e, "fetch_stall_us", o->fetch_stall_us);
    t_expect_seconds(e, "compute_us", o->compute_us);
    assert_float_equal(stall_s, t_secs(e, "fetch_stall_us"), 1e-4);
    assert_float_equal(compute_s, t_secs(e, "compute_us"), 1e-4);
    t_expect_power(json_object_get(e, "sim_power_mw"), o);
    const json_t *energy = json_object_get(e, "sim_model_energy_mj");
    assert_int_equal(json_object_size(energy), o->n_rails);
    for (size_t r = 0; r < o->n_rails; r++) {
        assert_float_equal(t_num(energy, o->rails[r].name),
                           (double)o->rails[r].power_mw * (double)o->e2e_us / 1e6, 1e-6);
    }
    if (next) {
        t_expect_power(json_object_get(e, "sim_next_power_mw"), next);
    } else {
        assert_null(json_object_get(e, "sim_next_power_mw"));
    }
}

// Runs t_nx(workers) for 2 epochs and checks every line against the model; returns the stall of
// epoch 1, in s.
static double t_nx_against_model(int workers)
{
    char text[16];
    (void)snprintf(text, sizeof text, "%d", workers);
    t_child_t child = {0};
    t_sim_t sim = t_nx(text);
    t_run_sim(&sim, false, NULL, &child);
    t_expect_ok(&child);
    t_lines_t l = {0};
    t_parse(child.out, &l);
    sim_epoch_out_t out[2];
    t_model_epochs(workers, 2, out);
    assert_int_equal(l.n, 1 + (size_t)(out[0].batches + out[1].batches) + 2 + 1);
    assert_string_equal(t_str(l.line[0], "kind"), "start");
    assert_int_equal(t_int(l.line[0], "batches_per_epoch"), out[0].batches);
    t_expect_power(json_object_get(l.line[0], "sim_power_mw"), &out[0]);
    size_t at = 1;
    t_expect_epoch(&l, &at, 0, &out[0], &out[1]);
    t_expect_epoch(&l, &at, 1, &out[1], NULL);
    assert_string_equal(t_str(l.line[at], "kind"), "done");
    double stall_s = t_secs(l.line[at - 1], "fetch_stall_us");
    t_free(&child, &l);
    return stall_s;
}

static void test_nx_mobilenet_workers_hide_the_fetch(void **state)
{
    (void)state;
    double stall0 = t_nx_against_model(0);
    double stall1 = t_nx_against_model(1);
    print_message("NX MobileNetV3 NVMe stall: %.1f s with 0 workers, %.1f s with 1\n", stall0,
                  stall1);
    assert_true(stall0 > 400.0 && stall1 < 30.0); // the study: 455 s and 18.6 s
}

// ---------------------------------------------------------------------------------------------
// Out of memory

static void test_nano_resnet18_is_out_of_memory(void **state)
{
    (void)state;
    char dir[PATH_MAX], doc_path[PATH_MAX];
    assert_int_equal(jft_tmpdir_new(dir), 0);
    assert_true(snprintf(doc_path, sizeof doc_path, "%s/run.json", dir) < (int)sizeof doc_path);
    t_sim_t sim = {.board_type = "nano",
                   .board = "sim-nano-01",
                   .mode = "0",
                   .medium = "sd",
                   .model = "resnet18",
                   .workers = "1",
                   .epochs = "3",
                   .speed = T_FAST,
                   .json_out = doc_path};
    t_child_t child = {0};
    t_run_sim(&sim, true, NULL, &child);
    t_expect_exit(&child, 3);
    t_lines_t l = {0};
    t_parse(child.out, &l);
    assert_int_equal(l.n, 2); // start, then the error, as a real run that runs out of memory
    assert_string_equal(t_str(l.line[0], "kind"), "start");
    assert_string_equal(t_str(l.line[0], "sim_power_mode"), "MAXN");
    assert_string_equal(t_str(l.line[1], "kind"), "error");
    assert_string_equal(t_str(l.line[1], "reason"), "oom");
    assert_non_null(strstr(t_str(l.line[1], "detail"), "out of memory: resnet18-cifar10"));
    assert_non_null(strstr(t_str(l.line[1], "detail"), "simulated nano 'sim-nano-01'"));
    json_t *doc = json_load_file(doc_path, 0, NULL);
    assert_non_null(doc);
    assert_string_equal(t_str(json_object_get(doc, "error"), "reason"), "oom");
    assert_string_equal(t_str(json_object_get(doc, "params"), "platform"), "sim");
    json_decref(doc);
    jft_tmpdir_remove(dir);
    t_free(&child, &l);
}

// ---------------------------------------------------------------------------------------------
// The page cache between runs: what the agent carries from one run's last epoch to the next

// One epoch as its line says.
typedef struct t_epoch {
    double e2e_s, before, after, hit;
    json_int_t cache_bytes, dataset_bytes;
} t_epoch_t;

// Runs s in this process (2 epochs) and reads its epoch lines into ep[0..1].
static void t_epochs(const t_sim_t *s, t_epoch_t ep[2])
{
    t_child_t child = {0};
    t_run_sim(s, false, NULL, &child);
    t_expect_ok(&child);
    t_lines_t l = {0};
    t_parse(child.out, &l);
    int e = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (strcmp(t_str(l.line[i], "kind"), "epoch") == 0 && e < 2) {
            const json_t *c = json_object_get(l.line[i], "sim_cache");
            assert_true(json_is_object(c));
            ep[e++] = (t_epoch_t){.e2e_s = t_secs(l.line[i], "e2e_us"),
                                  .before = t_num(c, "resident_before"),
                                  .after = t_num(c, "resident_after"),
                                  .hit = t_num(c, "hit_fraction"),
                                  .cache_bytes = t_int(c, "cache_bytes"),
                                  .dataset_bytes = t_int(c, "dataset_bytes")};
        }
    }
    assert_int_equal(e, 2);
    assert_float_equal(t_num(l.line[0], "sim_cache_resident"), ep[0].before, 0.0);
    t_free(&child, &l);
}

// A dataset that fits in RAM (MNIST on an AGX Xavier, read from a USB disk without workers): the
// next run without a drop starts where the last left it, so its epoch 0 runs as a warm epoch;
// with a drop (the agent passes 0) it starts cold again.
static void test_fitting_dataset_stays_warm_between_runs(void **state)
{
    (void)state;
    t_sim_t sim = {.board_type = "agx-xavier", .board = "sim-agx-01", .mode = "0",
                   .medium = "usb-hdd", .model = "lenet5", .workers = "0", .epochs = "2",
                   .speed = T_FAST};
    t_epoch_t first[2], warm[2], cold[2];
    t_epochs(&sim, first);
    assert_float_equal(first[0].before, 0.0, 0.0);
    assert_float_equal(first[1].after, 1.0, 0.0); // all of it stays
    assert_true(first[1].cache_bytes > first[1].dataset_bytes);
    char resident[32];
    (void)snprintf(resident, sizeof resident, "%.17g", first[1].after);
    sim.cache_resident = resident;
    t_epochs(&sim, warm);
    sim.cache_resident = "0";
    t_epochs(&sim, cold);
    print_message("AGX Xavier LeNet-5 USB HDD epoch 0: %.2f s cold, %.2f s after a run without a "
                  "drop (warm epoch of the first run: %.2f s), %.2f s after a drop\n",
                  first[0].e2e_s, warm[0].e2e_s, first[1].e2e_s, cold[0].e2e_s);
    assert_float_equal(warm[0].hit, 1.0, 0.0);
    assert_true(warm[0].e2e_s < 0.8 * first[0].e2e_s);
    assert_true(fabs(warm[0].e2e_s / first[1].e2e_s - 1.0) < 0.05); // as a warm epoch, +- noise
    assert_float_equal(cold[0].hit, 0.0, 0.0);
    assert_true(fabs(cold[0].e2e_s / first[0].e2e_s - 1.0) < 0.01); // same seed: the same run
}

// A dataset larger than the cache (GLD-23k on the Xavier NX, the study's): the next run starts
// with what the last left, a third of the set, and gains no more than a later epoch does.
static void test_large_dataset_gains_nothing_between_runs(void **state)
{
    (void)state;
    t_sim_t sim = t_nx("0");
    sim.medium = "usb-hdd";
    t_epoch_t first[2], next[2];
    t_epochs(&sim, first);
    assert_true(first[1].after < 0.5 && first[1].cache_bytes < first[1].dataset_bytes);
    char resident[32];
    (void)snprintf(resident, sizeof resident, "%.17g", first[1].after);
    sim.cache_resident = resident;
    t_epochs(&sim, next);
    print_message("NX MobileNetV3 USB HDD epoch 0: %.1f s cold, %.1f s after a run without a drop "
                  "(%.1f %% of reads hit)\n",
                  first[0].e2e_s, next[0].e2e_s, 100.0 * next[0].hit);
    assert_true(next[0].hit < 0.1);
    assert_true(next[0].e2e_s > 0.9 * first[0].e2e_s);
}

// ---------------------------------------------------------------------------------------------
// Seeds and boards

// A short run of 3 epochs of 5 minibatches on board, its lines parsed.
static void t_short(const char *board, t_child_t *child, t_lines_t *l)
{
    t_sim_t sim = t_nx("1");
    sim.board = board;
    sim.epochs = "3";
    sim.max_batches = "5";
    t_run_sim(&sim, false, NULL, child);
    t_expect_ok(child);
    t_parse(child->out, l);
    assert_int_equal(l->n, 1 + 3 * (5 + 1) + 1);
}

static void test_same_seed_same_output(void **state)
{
    (void)state;
    t_child_t a = {0}, b = {0};
    t_lines_t la = {0}, lb = {0};
    t_short("sim-nx-01", &a, &la);
    t_short("sim-nx-01", &b, &lb);
    for (size_t i = 0; i < la.n; i++) {
        // The wall time an epoch took is the one thing that is measured, not modelled.
        (void) json_object_del(la.line[i], "sim_wall_us");
        (void) json_object_del(lb.line[i], "sim_wall_us");
        if (!json_equal(la.line[i], lb.line[i])) {
            fail_msg("line %zu differs between two runs with the same seeds", i);
        }
    }
    t_free(&a, &la);
    t_free(&b, &lb);
}

// The noise seed mixes the training seed, the board and the operating point, deterministically.
static void test_noise_seed_mixes_board_and_point(void **state)
{
    (void)state;
    sim_op_t a = {.n_cores = 4, .cpu_hz = 1420800000, .gpu_hz = 599250000, .emc_hz = 1600000000};
    sim_op_t b = a;
    b.gpu_hz = 1109250000;
    uint64_t s = train_sim_noise_seed(3, "sim-nx-01", &a);
    assert_true(s == train_sim_noise_seed(3, "sim-nx-01", &a));
    assert_true(s != train_sim_noise_seed(3, "sim-nx-01", &b));
    assert_true(s != train_sim_noise_seed(3, "sim-nx-02", &a));
    assert_true(s != train_sim_noise_seed(4, "sim-nx-01", &a));
    assert_true(s != 3);
}

static void test_board_names_differ_slightly(void **state)
{
    (void)state;
    t_child_t a = {0}, b = {0};
    t_lines_t la = {0}, lb = {0};
    t_short("sim-nx-01", &a, &la);
    t_short("sim-nx-02", &b, &lb);
    for (size_t e = 0; e < 3; e++) {
        const json_t *ea = la.line[6 + 6 * e], *eb = lb.line[6 + 6 * e];
        assert_string_equal(t_str(ea, "kind"), "epoch");
        double ratio = t_secs(ea, "e2e_us") / t_secs(eb, "e2e_us");
        print_message("epoch %zu: sim-nx-01 / sim-nx-02 = %.4f\n", e, ratio);
        assert_true(ratio != 1.0 && fabs(ratio - 1.0) < 0.1);
    }
    t_free(&a, &la);
    t_free(&b, &lb);
}

// A custom point (--sim-point) replaces the mode's operating point: at the lowest GPU clock and
// two cores the same epoch computes longer, and the GPU rail draws less.
static void test_custom_point_is_the_operating_point(void **state)
{
    (void)state;
    t_child_t a = {0}, b = {0};
    t_lines_t la = {0}, lb = {0};
    t_sim_t sim = t_nx("1");
    sim.epochs = "1";
    sim.max_batches = "5";
    t_run_sim(&sim, false, NULL, &a);
    t_expect_ok(&a);
    t_parse(a.out, &la);
    sim.point = "2,1190400000,114750000,0";
    t_run_sim(&sim, false, NULL, &b);
    t_expect_ok(&b);
    t_parse(b.out, &lb);
    const json_t *ea = la.line[6], *eb = lb.line[6];
    assert_string_equal(t_str(ea, "kind"), "epoch");
    assert_string_equal(t_str(eb, "kind"), "epoch");
    print_message("compute %.3f s at the mode, %.3f s at the point\n", t_secs(ea, "compute_us"),
                  t_secs(eb, "compute_us"));
    assert_true(t_secs(eb, "compute_us") > 2.0 * t_secs(ea, "compute_us"));
    double gpu_a = t_num(json_object_get(ea, "sim_power_mw"), "VDD_CPU_GPU_CV");
    double gpu_b = t_num(json_object_get(eb, "sim_power_mw"), "VDD_CPU_GPU_CV");
    assert_true(gpu_b < gpu_a);
    t_free(&a, &la);
    t_free(&b, &lb);
    // A point the board cannot have (7 cores on a 6-core Xavier NX) is the model's error.
    sim.point = "7,1190400000,0,0";
    t_child_t c = {0};
    t_run_sim(&sim, false, NULL, &c);
    assert_int_equal(c.rc, -EINVAL);
    assert_non_null(strstr(c.err.msg, "n_cores must be 1..6, got 7"));
    free(c.out);
}

// ---------------------------------------------------------------------------------------------
// Time compression

// LeNet-5 has short steps: 1000 minibatches of ~4 ms modelled, ~0.4 ms each at speed 10. Sleeping
// from one minibatch to the next instead of to absolute deadlines would add up a timer's slack
// per minibatch and run late by more than the tolerance.
static void test_time_compression(void **state)
{
    (void)state;
    t_sim_t sim = t_nx("1");
    sim.model = "lenet5";
    sim.epochs = "2";
    sim.max_batches = "1000";
    sim.speed = "10";
    t_child_t child = {0};
    t_run_sim(&sim, false, NULL, &child);
    t_expect_ok(&child);
    t_lines_t l = {0};
    t_parse(child.out, &l);
    double modelled_s = 0.0, wall_s = 0.0;
    for (size_t i = 0; i < l.n; i++) {
        if (strcmp(t_str(l.line[i], "kind"), "epoch") == 0) {
            modelled_s += t_secs(l.line[i], "e2e_us");
            wall_s += t_secs(l.line[i], "sim_wall_us");
        }
    }
    double want_s = modelled_s / 10.0;
    print_message("modelled %.3f s, at speed 10 %.3f s; epochs took %.3f s, the run %.3f s\n",
                  modelled_s, want_s, wall_s, child.wall_s);
    assert_true(wall_s >= want_s - 0.002);
    // Late only by the last wake-up and the last line's write (more on a slow or loaded machine).
    assert_true(wall_s <= want_s * 1.05 + 0.02 * jft_timeout_scale());
    assert_true(child.wall_s >= want_s);
    t_free(&child, &l);
}

// ---------------------------------------------------------------------------------------------
// The lines the agent reads

static void t_expect_marked(const json_t *line)
{
    assert_string_equal(t_str(line, "platform"), "sim");
    assert_float_equal(t_num(line, "sim_speed"), 100000.0, 0.0);
}

// The start line becomes the run's start record: its scalars are the record's info, which the
// wire decoder checks (at most 32 members, short keys and strings).
static void t_expect_start(const json_t *start)
{
    assert_string_equal(t_str(start, "model"), "mobilenetv3");
    assert_string_equal(t_str(start, "dataset"), "gld23k");
    assert_string_equal(t_str(start, "sim_board_type"), "xavier-nx");
    assert_string_equal(t_str(start, "sim_board"), "sim-nx-01");
    assert_string_equal(t_str(start, "sim_power_mode"), T_NX_MODE);
    assert_int_equal(t_int(start, "sim_power_mode_id"), 2);
    assert_string_equal(t_str(start, "sim_medium"), "nvme");
    assert_int_equal(t_int(start, "sim_seed"), 7);
    assert_float_equal(t_num(start, "sim_scale"), 1.0, 0.0);
    assert_int_equal(t_int(start, "batches_per_epoch"), 5);
    assert_null(json_object_get(start, "device")); // no torch ran
    json_t *info = json_object();
    const char *k = NULL;
    json_t *v = NULL;
    json_object_foreach((json_t *)start, k, v)
    {
        if (strcmp(k, "kind") != 0 && (json_is_number(v) || json_is_string(v))) {
            assert_int_equal(json_object_set(info, k, v), 0);
        }
    }
    json_t *rec = json_pack("{s:s, s:o}", "kind", "start", "info", info);
    jf_record_t parsed;
    jf_err_t err = {0};
    if (jf_record_parse(rec, &parsed, &err) != 0) {
        fail_msg("the start record's info is refused: %s", err.msg);
    }
    json_decref(rec);
}

static void t_expect_timed(const json_t *line, bool epoch)
{
    assert_true(json_is_integer(json_object_get(line, "epoch")));
    assert_true(json_is_integer(json_object_get(line, "samples")));
    assert_true(json_is_null(json_object_get(line, "loss")));
    assert_true(t_secs(line, "fetch_stall_us") >= 0.0 && t_secs(line, "compute_us") >= 0.0);
    if (!epoch) {
        assert_true(json_is_integer(json_object_get(line, "index")));
        return;
    }
    assert_true(json_is_boolean(json_object_get(line, "warmup")));
    assert_float_equal(t_secs(line, "e2e_us"),
                       t_secs(line, "fetch_stall_us") + t_secs(line, "compute_us"), T_REAL_SLOP);
    assert_int_equal(t_int(line, "samples"), 5 * 16);
    assert_true(t_secs(line, "sim_wall_us") >= 0.0);
}

static void test_record_lines_are_what_the_agent_reads(void **state)
{
    (void)state;
    t_child_t child = {0};
    t_lines_t l = {0};
    t_short("sim-nx-01", &child, &l);
    t_expect_start(l.line[0]);
    for (size_t i = 0; i < l.n; i++) {
        const char *kind = t_str(l.line[i], "kind");
        t_expect_marked(l.line[i]);
        if (strcmp(kind, "minibatch") == 0 || strcmp(kind, "epoch") == 0) {
            t_expect_timed(l.line[i], kind[0] == 'e');
        } else if (strcmp(kind, "done") == 0) {
            assert_int_equal(i, l.n - 1);
            assert_int_equal(t_int(l.line[i], "epochs"), 3);
        } else if (i != 0) {
            fail_msg("line %zu: unexpected kind '%s'", i, kind);
        }
    }
    t_free(&child, &l);
}

// ---------------------------------------------------------------------------------------------
// Bad input and the test hook

// Bad input the options cannot see (train_options_test has those): -EINVAL, reason invalid,
// and a message that names the option, before any line is written.
static void test_bad_input_is_invalid(void **state)
{
    (void)state;
    const struct {
        t_sim_t sim;
        const char *fragment;
    } rows[] = {
        {{.board_type = "xavier-nx", .mode = "99"}, "--sim-mode: xavier-nx has no power mode '99'"},
        {{.board_type = "xavier-nx", .mode = "MODE_9W"},
         "--sim-mode: xavier-nx has no power mode 'MODE_9W'"},
        {{.board_type = "host"}, "--sim-board-type: no model for board type 'host'"},
        {{.board_type = "jetson-tx2"}, "--sim-board-type: no model for board type 'jetson-tx2'"},
        {{.board_type = "xavier-nx", .medium = "floppy"}, "unknown medium 'floppy'"},
        {{.board_type = "nano", .board = "Nano 1"}, "--sim-board: 'Nano 1' is not a board name"},
        {{.board_type = "nano", .params = "/no/such/sim_params.yaml"},
         "--sim-params: /no/such/sim_params.yaml: cannot read"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        t_sim_t sim = t_nx("1");
        sim.board_type = rows[i].sim.board_type;
        sim.mode = rows[i].sim.mode ? rows[i].sim.mode : "0";
        sim.medium = rows[i].sim.medium ? rows[i].sim.medium : "nvme";
        sim.board = rows[i].sim.board ? rows[i].sim.board : "sim-01";
        sim.model = rows[i].sim.model ? rows[i].sim.model : "lenet5";
        sim.params = rows[i].sim.params;
        t_child_t child = {0};
        t_run_sim(&sim, false, NULL, &child);
        print_message("row %zu: %s\n", i, child.err.msg);
        assert_int_equal(child.rc, -EINVAL);
        assert_string_equal(train_run_failure_reason(child.rc), "invalid");
        assert_non_null(strstr(child.err.msg, rows[i].fragment));
        assert_string_equal(child.out, "");
        t_free(&child, NULL);
    }
}

// The process: one error line and exit 2, as for a real run's bad input.
static void test_bad_input_exits_2(void **state)
{
    (void)state;
    t_sim_t sim = t_nx("1");
    sim.mode = "99";
    t_child_t child = {0};
    t_run_sim(&sim, true, NULL, &child);
    t_expect_exit(&child, 2);
    t_lines_t l = {0};
    t_parse(child.out, &l);
    assert_int_equal(l.n, 1);
    assert_string_equal(t_str(l.line[0], "kind"), "error");
    assert_string_equal(t_str(l.line[0], "reason"), "invalid");
    assert_non_null(strstr(t_str(l.line[0], "detail"), "--sim-mode: xavier-nx has no power mode"));
    t_free(&child, &l);
}

static void test_fault_hook_crashes_after_the_first_epoch(void **state)
{
    (void)state;
    t_sim_t sim = t_nx("1");
    sim.max_batches = "3";
    t_child_t child = {0};
    t_run_sim(&sim, true, "crash", &child);
    assert_true(WIFSIGNALED(child.status));
    assert_int_equal(WTERMSIG(child.status), SIGSEGV);
    t_lines_t l = {0};
    t_parse(child.out, &l);
    assert_int_equal(l.n, 1 + 3 + 1); // start, 3 minibatches, the first epoch; no done
    assert_string_equal(t_str(l.line[4], "kind"), "epoch");
    t_free(&child, &l);
}

// jetfleet-train --simulate is the same code as jetfleet-train-sim: the same lines but for the
// wall times.
static void test_both_programs_simulate_alike(void **state)
{
    (void)state;
    t_sim_t sim = t_nx("1");
    sim.max_batches = "3";
    t_child_t a = {0}, b = {0};
    t_run_sim(&sim, true, NULL, &a);
    sim.full_trainer = true;
    t_run_sim(&sim, true, NULL, &b);
    t_expect_exit(&a, 0);
    t_expect_exit(&b, 0);
    t_lines_t la = {0}, lb = {0};
    t_parse(a.out, &la);
    t_parse(b.out, &lb);
    assert_int_equal(la.n, 1 + 2 * (3 + 1) + 1); // start, 2 x (3 minibatches, epoch), done
    assert_int_equal(la.n, lb.n);
    for (size_t i = 0; i < la.n; i++) {
        json_object_del(la.line[i], "sim_wall_us");
        json_object_del(lb.line[i], "sim_wall_us");
        if (!json_equal(la.line[i], lb.line[i])) {
            char *x = json_dumps(la.line[i], JSON_SORT_KEYS);
            char *y = json_dumps(lb.line[i], JSON_SORT_KEYS);
            fail_msg("line %zu differs:\n%s\n%s", i, x, y);
        }
    }
    t_free(&a, &la);
    t_free(&b, &lb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nx_mobilenet_workers_hide_the_fetch),
        cmocka_unit_test(test_nano_resnet18_is_out_of_memory),
        cmocka_unit_test(test_fitting_dataset_stays_warm_between_runs),
        cmocka_unit_test(test_large_dataset_gains_nothing_between_runs),
        cmocka_unit_test(test_same_seed_same_output),
        cmocka_unit_test(test_custom_point_is_the_operating_point),
        cmocka_unit_test(test_noise_seed_mixes_board_and_point),
        cmocka_unit_test(test_board_names_differ_slightly),
        cmocka_unit_test(test_time_compression),
        cmocka_unit_test(test_record_lines_are_what_the_agent_reads),
        cmocka_unit_test(test_bad_input_is_invalid),
        cmocka_unit_test(test_bad_input_exits_2),
        cmocka_unit_test(test_fault_hook_crashes_after_the_first_epoch),
        cmocka_unit_test(test_both_programs_simulate_alike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
