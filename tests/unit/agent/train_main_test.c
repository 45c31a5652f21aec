/* End-to-end tests of jetfleet-datagen and jetfleet-train from the build tree ($JF_BIN_DIR): a tiny
 * generated MNIST trained for 2 epochs gives start, minibatch..., epoch x2, done on stdout; the
 * JF_TRAIN_FAULT hook crashes by SIGSEGV or reports oom with exit 3; bad input exits 2. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "jft_fs.h"

#define T_PATH_MAX  PATH_MAX // what jft_fs expects
#define T_OUT_MAX   (1 << 20)
#define T_LINES_MAX 64

typedef struct t_child {
    char out[T_OUT_MAX]; // stdout, NUL-terminated
    int status;          // from waitpid
} t_child_t;

// buf (T_PATH_MAX bytes) = dir + "/" + name; the test fails if it does not fit.
static void t_join(char *buf, const char *dir, const char *name)
{
    int n = snprintf(buf, T_PATH_MAX, "%s/%s", dir, name);
    assert_true(n > 0 && n < T_PATH_MAX);
}

// Runs argv[0] from JF_BIN_DIR with JF_TRAIN_FAULT set to fault (or unset), capturing stdout.
static void t_run(char *const argv[], const char *fault, t_child_t *child)
{
    char path[T_PATH_MAX];
    jft_bin(argv[0], path);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
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
    size_t len = 0;
    ssize_t n = 0;
    while ((n = read(fds[0], child->out + len, T_OUT_MAX - 1 - len)) > 0) {
        len += (size_t)n;
    }
    child->out[len] = '\0';
    (void)close(fds[0]);
    assert_int_equal(waitpid(pid, &child->status, 0), pid);
}

static size_t t_lines(char *text, json_t **lines)
{
    size_t n = 0;
    for (char *line = text, *nl = NULL; *line && n < T_LINES_MAX; line = nl + 1) {
        nl = strchr(line, '\n');
        assert_non_null(nl);
        *nl = '\0';
        json_error_t jerr;
        lines[n] = json_loads(line, 0, &jerr);
        if (!lines[n]) {
            fail_msg("line %zu is not JSON: %s (%s)", n, line, jerr.text);
        }
        n++;
    }
    return n;
}

static void t_free_lines(json_t **lines, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_decref(lines[i]);
    }
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

static int t_setup(void **state)
{
    static char dir[T_PATH_MAX];
    assert_int_equal(jft_tmpdir_new(dir), 0);
    char data[T_PATH_MAX];
    t_join(data, dir, "mnist");
    char *argv[] = {"jetfleet-datagen", "--kind", "mnist", "--scale", "0.005",
                    "--seed",           "1",      "--out", data,      NULL};
    static t_child_t child;
    t_run(argv, NULL, &child);
    assert_true(WIFEXITED(child.status) && WEXITSTATUS(child.status) == 0);
    *state = dir;
    return 0;
}

static int t_teardown(void **state)
{
    jft_tmpdir_remove(*state);
    return 0;
}

// Runs jetfleet-train on the generated MNIST: batch 32 (10 minibatches of 300 images), 2 epochs.
static void t_train(const char *dir, const char *fault, const char *model, t_child_t *child)
{
    char data[T_PATH_MAX], json_out[T_PATH_MAX];
    t_join(data, dir, "mnist");
    t_join(json_out, dir, "run.json");
    char *argv[] = {
        "jetfleet-train", "--model", (char *)model, "--data", data,     "--workers", "1",
        "--batch",        "32",      "--epochs",    "2",      "--seed", "3",         "--json-out",
        json_out,         NULL};
    t_run(argv, fault, child);
}

static void t_check_epoch(json_t **lines, size_t at, json_int_t epoch)
{
    for (json_int_t i = 0; i < 10; i++) {
        assert_string_equal(t_str(lines[at + (size_t)i], "kind"), "minibatch");
        assert_int_equal(t_int(lines[at + (size_t)i], "epoch"), epoch);
        assert_int_equal(t_int(lines[at + (size_t)i], "index"), i);
    }
    const json_t *e = lines[at + 10];
    assert_string_equal(t_str(e, "kind"), "epoch");
    assert_int_equal(t_int(e, "epoch"), epoch);
    assert_int_equal(t_int(e, "samples"), 300);
    assert_true(json_is_boolean(json_object_get(e, "warmup")));
    assert_int_equal(json_is_true(json_object_get(e, "warmup")), epoch == 0);
}

static void test_train_two_epochs_on_generated_mnist(void **state)
{
    static t_child_t child;
    t_train(*state, NULL, "lenet5", &child);
    assert_true(WIFEXITED(child.status));
    assert_int_equal(WEXITSTATUS(child.status), 0);
    json_t *lines[T_LINES_MAX] = {0};
    size_t n = t_lines(child.out, lines);
    assert_int_equal(n, 1 + 11 + 11 + 1);
    assert_string_equal(t_str(lines[0], "kind"), "start");
    assert_string_equal(t_str(lines[0], "dataset"), "mnist");
    assert_int_equal(t_int(lines[0], "samples"), 300);
    assert_int_equal(t_int(lines[0], "batches_per_epoch"), 10);
    assert_int_equal(t_int(lines[0], "threads"), 1);
    t_check_epoch(lines, 1, 0);
    t_check_epoch(lines, 12, 1);
    double loss0 = json_number_value(json_object_get(lines[11], "loss"));
    double loss1 = json_number_value(json_object_get(lines[22], "loss"));
    assert_true(loss1 < loss0); // the generated classes are learnable
    assert_string_equal(t_str(lines[23], "kind"), "done");
    assert_int_equal(t_int(lines[23], "epochs"), 2);
    t_free_lines(lines, n);
    char path[T_PATH_MAX];
    t_join(path, *state, "run.json");
    json_t *doc = json_load_file(path, 0, NULL);
    assert_non_null(doc);
    assert_int_equal(json_array_size(json_object_get(doc, "epochs")), 2);
    json_decref(doc);
}

static void test_fault_crash_dies_by_signal(void **state)
{
    static t_child_t child;
    t_train(*state, "crash", "lenet5", &child);
    assert_true(WIFSIGNALED(child.status));
    assert_int_equal(WTERMSIG(child.status), SIGSEGV);
    json_t *lines[T_LINES_MAX] = {0};
    size_t n = t_lines(child.out, lines);
    assert_int_equal(n, 12); // start, 10 minibatches, the first epoch; no done
    assert_string_equal(t_str(lines[11], "kind"), "epoch");
    t_free_lines(lines, n);
}

static void test_fault_oom_reports_and_exits_3(void **state)
{
    static t_child_t child;
    t_train(*state, "oom", "lenet5", &child);
    assert_true(WIFEXITED(child.status));
    assert_int_equal(WEXITSTATUS(child.status), 3);
    json_t *lines[T_LINES_MAX] = {0};
    size_t n = t_lines(child.out, lines);
    assert_int_equal(n, 13);
    assert_string_equal(t_str(lines[12], "kind"), "error");
    assert_string_equal(t_str(lines[12], "reason"), "oom");
    t_free_lines(lines, n);
}

static void t_expect_invalid(char *const argv[], const char *fragment)
{
    static t_child_t child;
    t_run(argv, NULL, &child);
    assert_true(WIFEXITED(child.status));
    assert_int_equal(WEXITSTATUS(child.status), 2);
    json_t *lines[T_LINES_MAX] = {0};
    size_t n = t_lines(child.out, lines);
    assert_int_equal(n, 1);
    assert_string_equal(t_str(lines[0], "reason"), "invalid");
    assert_non_null(strstr(t_str(lines[0], "detail"), fragment));
    t_free_lines(lines, n);
}

static void test_invalid_input_exits_2(void **state)
{
    char data[T_PATH_MAX];
    t_join(data, *state, "mnist");
    char *mismatch[] = {"jetfleet-train", "--model", "vgg11",    "--data", data, "--workers", "0",
                        "--batch",        "4",       "--epochs", "1",      NULL};
    t_expect_invalid(mismatch, "model 'vgg11' needs 3x32x32 input");
    char *usage[] = {"jetfleet-train", "--bogus", NULL};
    t_expect_invalid(usage, "unknown option '--bogus'");
    char *mnv3[] = {"jetfleet-train", "--model", "mobilenetv3", "--data", data, "--workers", "0",
                    "--batch",        "4",       "--epochs",    "1",      NULL};
    t_expect_invalid(mnv3, "model 'mobilenetv3' needs 3x224x224 input");
    // A concurrent run needs training to serve beside.
    char *conc[] = {"jetfleet-train",
                    "--loader-only",
                    "--data",
                    data,
                    "--workers",
                    "0",
                    "--batch",
                    "4",
                    "--epochs",
                    "1",
                    "--infer-model",
                    "lenet5",
                    "--infer-batch",
                    "4",
                    "--infer-rate",
                    "30",
                    "--infer-budget-ms",
                    "200",
                    NULL};
    t_expect_invalid(conc, "a loader-only run has no training to serve inference beside");
    static t_child_t child;
    char *bad_scale[] = {"jetfleet-datagen", "--kind", "mnist", "--scale", "0",
                         "--seed",           "1",      "--out", data,      NULL};
    t_run(bad_scale, NULL, &child);
    assert_true(WIFEXITED(child.status) && WEXITSTATUS(child.status) == 2);
}

static double t_num(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

// A concurrent run (docs/concurrent.md) on the real trainer: LeNet-5 trains while a second
// LeNet-5 serves requests arriving at 400 per s, 4 to a minibatch. Each epoch line carries the
// inference's figures, consistent with each other and with the epoch: the requests about the
// rate times the epoch (Poisson: within a factor 2 when 40 or more are expected), the latency
// percentiles ordered and no shorter than a forward pass, the minibatches enough for the
// requests, the inference's time inside the epoch and beside the training's compute.
static void test_concurrent_run_serves_requests(void **state)
{
    char data[T_PATH_MAX];
    t_join(data, *state, "mnist");
    char *argv[] = {"jetfleet-train",
                    "--model",
                    "lenet5",
                    "--data",
                    data,
                    "--workers",
                    "1",
                    "--batch",
                    "16",
                    "--epochs",
                    "2",
                    "--seed",
                    "5",
                    "--infer-model",
                    "lenet5",
                    "--infer-batch",
                    "4",
                    "--infer-rate",
                    "400",
                    "--infer-budget-ms",
                    "50",
                    NULL};
    static t_child_t child;
    t_run(argv, NULL, &child);
    assert_true(WIFEXITED(child.status));
    assert_int_equal(WEXITSTATUS(child.status), 0);
    json_t *lines[T_LINES_MAX] = {0};
    size_t n = t_lines(child.out, lines);
    int epochs = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(t_str(lines[i], "kind"), "epoch") != 0) {
            continue;
        }
        epochs++;
        const json_t *c = json_object_get(lines[i], "concurrent");
        assert_true(json_is_object(c));
        double e2e = t_num(lines[i], "e2e_us"), compute = t_num(lines[i], "compute_us");
        double requests = t_num(c, "requests"), batches = t_num(c, "infer_batches");
        double infer = t_num(c, "infer_us"), sw = t_num(c, "switch_us");
        double p50 = t_num(c, "latency_p50_us"), p99 = t_num(c, "latency_p99_us");
        double max = t_num(c, "latency_max_us"), within = t_num(c, "within_budget");
        double expected = 400.0 * e2e / 1e6;
        print_message("epoch %d: e2e %.0f us, compute %.0f us, %.0f requests (%.1f expected) in "
                      "%.0f minibatches, infer %.0f us, switch %.0f us, latency p50 %.0f p99 %.0f "
                      "max %.0f us, within budget %.3f\n",
                      epochs - 1, e2e, compute, requests, expected, batches, infer, sw, p50, p99,
                      max, within);
        if (expected >= 40.0) {
            assert_true(requests > expected / 2 && requests < expected * 2);
        }
        assert_true(requests >= 1);
        assert_true(batches >= requests / 4 && batches <= requests);
        assert_true(infer > 0 && sw >= 0 && infer + sw + compute <= e2e);
        assert_true(p50 <= p99 && p99 <= max && max <= e2e);
        assert_true(p50 >= infer / batches / 2); // a request waits at least for its minibatch
        assert_true(within >= 0.0 && within <= 1.0);
    }
    assert_int_equal(epochs, 2);
    t_free_lines(lines, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_train_two_epochs_on_generated_mnist),
        cmocka_unit_test(test_fault_crash_dies_by_signal),
        cmocka_unit_test(test_fault_oom_reports_and_exits_3),
        cmocka_unit_test(test_invalid_input_exits_2),
        cmocka_unit_test(test_concurrent_run_serves_requests),
    };
    return cmocka_run_group_tests(tests, t_setup, t_teardown);
}
