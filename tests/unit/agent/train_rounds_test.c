/* The trainers' local-round mode (issue 14) end to end, through the programs in $JF_BIN_DIR:
 * LeNet-5 on a small generated MNIST for two local rounds chained through weight files (round 2
 * starts from round 1's --out-weights): the loss of round 2's first minibatches is lower than round
 * 1's on the same samples, the weights change, and --minibatches N gives exactly N minibatch
 * records per epoch; jetfleet-train-sim with the weights options trains for real (losses not null,
 * the start line says so) while its times stay modelled; bad weights files and a missing --data are
 * refused with exit 2. Figures are printed as name=value lines. */
#include "jf_torch.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
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

#define T_PATH_MAX    PATH_MAX // what jft_fs expects
#define T_OUT_MAX     (1 << 20)
#define T_LINES_MAX   128
#define T_MINIBATCHES "12" // local work per epoch in the real rounds
#define T_N_MB        12
#define T_SIM_MB      5
#define T_SIM_MB_TEXT "5"
#define T_SAME_TOL    1e-6 // the simulated round's real steps against jetfleet-train's
#define T_BATCH       16
#define T_FIRST       3 // minibatches whose mean loss is compared across rounds

typedef struct t_child {
    char out[T_OUT_MAX]; // stdout, NUL-terminated
    int status;          // from waitpid
} t_child_t;

static char s_dir[T_PATH_MAX]; // the test's directory (set up once for the group)

static void t_join(char *buf, const char *name)
{
    int n = snprintf(buf, T_PATH_MAX, "%s/%s", s_dir, name);
    assert_true(n > 0 && n < T_PATH_MAX);
}

// Runs argv[0] from JF_BIN_DIR, capturing stdout.
static void t_run(char *const argv[], t_child_t *child)
{
    char path[T_PATH_MAX];
    jft_bin(argv[0], path);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        (void) dup2(fds[1], STDOUT_FILENO);
        (void) close(fds[0]);
        (void) close(fds[1]);
        (void) unsetenv("JF_TRAIN_FAULT");
        execv(path, argv);
        _exit(127);
    }
    (void) close(fds[1]);
    size_t len = 0;
    ssize_t n = 0;
    while ((n = read(fds[0], child->out + len, T_OUT_MAX - 1 - len)) > 0) {
        len += (size_t) n;
    }
    child->out[len] = '\0';
    (void) close(fds[0]);
    assert_int_equal(waitpid(pid, &child->status, 0), pid);
}

static int t_exit_code(const t_child_t *child)
{
    return WIFEXITED(child->status) ? WEXITSTATUS(child->status) : -1;
}

// The record lines of a run's stdout.
typedef struct t_lines {
    json_t *line[T_LINES_MAX];
    size_t n;
} t_lines_t;

static void t_parse(char *text, t_lines_t *ret)
{
    ret->n = 0;
    for (char *line = text, *nl = NULL; *line && ret->n < T_LINES_MAX; line = nl + 1) {
        nl = strchr(line, '\n');
        assert_non_null(nl);
        *nl = '\0';
        json_error_t jerr;
        ret->line[ret->n] = json_loads(line, 0, &jerr);
        if (!ret->line[ret->n]) {
            fail_msg("line %zu is not JSON: %s (%s)", ret->n, line, jerr.text);
        }
        ret->n++;
    }
}

static void t_free(t_lines_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        json_decref(l->line[i]);
    }
}

static const char *t_kind(const json_t *line)
{
    const char *s = json_string_value(json_object_get(line, "kind"));
    return s ? s : "";
}

// Checks that every epoch has exactly want minibatch lines (indices 0..want-1) of T_BATCH
// samples with a real loss, and that its line counts want * T_BATCH samples; returns the epochs.
static int t_check_epochs(const t_lines_t *l, int want)
{
    int epochs = 0, in_epoch = 0;
    for (size_t i = 0; i < l->n; i++) {
        const json_t *line = l->line[i];
        if (strcmp(t_kind(line), "minibatch") == 0) {
            assert_int_equal(json_integer_value(json_object_get(line, "index")), in_epoch);
            assert_int_equal(json_integer_value(json_object_get(line, "samples")), T_BATCH);
            assert_true(json_is_real(json_object_get(line, "loss")));
            in_epoch++;
        } else if (strcmp(t_kind(line), "epoch") == 0) {
            assert_int_equal(in_epoch, want);
            assert_int_equal(json_integer_value(json_object_get(line, "samples")), want * T_BATCH);
            assert_true(json_is_real(json_object_get(line, "loss")));
            in_epoch = 0;
            epochs++;
        }
    }
    return epochs;
}

// The mean loss of the first T_FIRST minibatches of epoch 0.
static double t_first_loss(const t_lines_t *l)
{
    double sum = 0.0;
    int n = 0;
    for (size_t i = 0; i < l->n && n < T_FIRST; i++) {
        if (strcmp(t_kind(l->line[i]), "minibatch") == 0) {
            sum += json_real_value(json_object_get(l->line[i], "loss"));
            n++;
        }
    }
    assert_int_equal(n, T_FIRST);
    return sum / n;
}

static double *t_flatten_file(const char *path, size_t *ret_n)
{
    size_t len = 0;
    char *bytes = jft_read_file(path, &len);
    assert_non_null(bytes);
    double *v = NULL;
    jf_err_t err = {0};
    if (jf_torch_weights_flatten(bytes, len, &v, ret_n, &err) != 0) {
        fail_msg("%s: %s", path, err.msg);
    }
    free(bytes);
    return v;
}

// The largest absolute difference between two weight files of one model.
static double t_weights_change(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    double *va = t_flatten_file(a, &na), *vb = t_flatten_file(b, &nb);
    assert_int_equal(na, nb);
    double worst = 0.0;
    for (size_t i = 0; i < na; i++) {
        worst = fmax(worst, fabs(va[i] - vb[i]));
    }
    free(va);
    free(vb);
    return worst;
}

// The largest difference between the minibatch losses of two runs, line by line; both must have
// the same number of minibatch lines.
static double t_loss_diff(const t_lines_t *a, const t_lines_t *b)
{
    double worst = 0.0;
    size_t i = 0, j = 0;
    for (;;) {
        while (i < a->n && strcmp(t_kind(a->line[i]), "minibatch") != 0) {
            i++;
        }
        while (j < b->n && strcmp(t_kind(b->line[j]), "minibatch") != 0) {
            j++;
        }
        if (i == a->n || j == b->n) {
            assert_true(i == a->n && j == b->n);
            return worst;
        }
        double la = json_real_value(json_object_get(a->line[i++], "loss"));
        double lb = json_real_value(json_object_get(b->line[j++], "loss"));
        worst = fmax(worst, fabs(la - lb));
    }
}

// One real local round: 2 epochs of minibatches minibatches, seed 1 (the same sample order
// every round), from init (NULL: the seeded initialisation) to out.
static void t_real_round(const char *minibatches, const char *init, const char *out, t_lines_t *ret)
{
    char data[T_PATH_MAX];
    t_join(data, "mnist");
    char *argv[24] = {"jetfleet-train",
                      "--model",
                      "lenet5",
                      "--data",
                      data,
                      "--workers",
                      "0",
                      "--batch",
                      "16",
                      "--epochs",
                      "2",
                      "--seed",
                      "1",
                      "--minibatches",
                      (char *) minibatches,
                      "--out-weights",
                      (char *) out};
    size_t n = 17;
    if (init) {
        argv[n++] = "--init-weights";
        argv[n++] = (char *) init;
    }
    static t_child_t child;
    t_run(argv, &child);
    if (t_exit_code(&child) != 0) {
        fail_msg("jetfleet-train exited %d: %s", t_exit_code(&child), child.out);
    }
    t_parse(child.out, ret);
}

static void test_real_rounds_chain(void **state)
{
    (void) state;
    char w1[T_PATH_MAX], w2[T_PATH_MAX];
    t_join(w1, "round1.weights");
    t_join(w2, "round2.weights");
    t_lines_t r1 = {0}, r2 = {0};
    t_real_round(T_MINIBATCHES, NULL, w1, &r1);
    t_real_round(T_MINIBATCHES, w1, w2, &r2);
    assert_int_equal(t_check_epochs(&r1, T_N_MB), 2);
    assert_int_equal(t_check_epochs(&r2, T_N_MB), 2);
    double loss1 = t_first_loss(&r1), loss2 = t_first_loss(&r2);
    double change = t_weights_change(w1, w2);
    printf("round1_first_loss=%.6f\nround2_first_loss=%.6f\nround2_weights_max_change=%.6g\n",
           loss1, loss2, change);
    assert_true(loss2 < loss1);
    assert_true(change > 0.0);
    t_free(&r1);
    t_free(&r2);
}

static void t_sim_argv(char **argv, size_t *n, char *params, char *data)
{
    char *fixed[] = {"jetfleet-train-sim",
                     "--sim-params",
                     params,
                     "--sim-board-type",
                     "nano",
                     "--sim-board",
                     "flw-rounds-nano",
                     "--sim-seed",
                     "1",
                     "--sim-mode",
                     "0",
                     "--sim-medium",
                     "nvme",
                     "--sim-speed",
                     "100000",
                     "--sim-scale",
                     "0.01",
                     "--model",
                     "lenet5",
                     "--workers",
                     "1",
                     "--batch",
                     "16",
                     "--epochs",
                     "2",
                     "--seed",
                     "1",
                     "--minibatches",
                     "5",
                     "--data",
                     data};
    *n = sizeof fixed / sizeof fixed[0];
    memcpy(argv, fixed, sizeof fixed);
}

static void test_sim_round_trains_for_real(void **state)
{
    (void) state;
    char w1[T_PATH_MAX], w3[T_PATH_MAX], data[T_PATH_MAX];
    t_join(w1, "round1.weights");
    t_join(w3, "sim.weights");
    t_join(data, "mnist");
    if (access(w1, R_OK) != 0) { // the real rounds' test makes it; alone, make it here
        t_lines_t r1 = {0};
        t_real_round(T_MINIBATCHES, NULL, w1, &r1);
        t_free(&r1);
    }
    char *argv[48] = {0};
    size_t n = 0;
    t_sim_argv(argv, &n, getenv("JF_SIM_PARAMS"), data);
    assert_non_null(argv[2]);
    argv[n++] = "--init-weights";
    argv[n++] = w1;
    argv[n++] = "--out-weights";
    argv[n++] = w3;
    static t_child_t child;
    t_run(argv, &child);
    if (t_exit_code(&child) != 0) {
        fail_msg("jetfleet-train-sim exited %d: %s", t_exit_code(&child), child.out);
    }
    t_lines_t l = {0};
    t_parse(child.out, &l);
    assert_string_equal(t_kind(l.line[0]), "start");
    assert_string_equal(json_string_value(json_object_get(l.line[0], "platform")), "sim");
    assert_string_equal(json_string_value(json_object_get(l.line[0], "sim_trains")), "cpu");
    assert_int_equal(t_check_epochs(&l, T_SIM_MB), 2);
    assert_string_equal(t_kind(l.line[l.n - 1]), "done");
    double change = t_weights_change(w1, w3);
    printf("sim_first_loss=%.6f\nsim_weights_max_change=%.6g\n", t_first_loss(&l), change);
    assert_true(change > 0.0);
    // The same local round on jetfleet-train takes the same steps: same losses, same weights.
    char wreal[T_PATH_MAX];
    t_join(wreal, "real5.weights");
    t_lines_t real = {0};
    t_real_round(T_SIM_MB_TEXT, w1, wreal, &real);
    double loss_diff = t_loss_diff(&l, &real), weights_diff = t_weights_change(w3, wreal);
    printf("sim_vs_real_max_loss_diff=%.3g\nsim_vs_real_weights_max_diff=%.3g\n", loss_diff,
           weights_diff);
    assert_true(loss_diff <= T_SAME_TOL);
    assert_true(weights_diff <= T_SAME_TOL);
    t_free(&real);
    t_free(&l);
}

// --shard K/N: a run trains on its part of the data, 200 of the 600 generated samples for 1/3.
static void test_shard_trains_its_part(void **state)
{
    (void) state;
    char data[T_PATH_MAX];
    t_join(data, "mnist");
    char *argv[] = {
        "jetfleet-train", "--model", "lenet5",   "--data", data,      "--workers", "0",
        "--batch",        "16",      "--epochs", "1",      "--shard", "1/3",       NULL};
    static t_child_t child;
    t_run(argv, &child);
    assert_int_equal(t_exit_code(&child), 0);
    t_lines_t l = {0};
    t_parse(child.out, &l);
    json_int_t start = json_integer_value(json_object_get(l.line[0], "samples"));
    json_int_t trained = 0, minibatches = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (strcmp(t_kind(l.line[i]), "epoch") == 0) {
            trained = json_integer_value(json_object_get(l.line[i], "samples"));
        }
        minibatches += strcmp(t_kind(l.line[i]), "minibatch") == 0;
    }
    printf("shard_1_of_3_samples=%lld\nshard_1_of_3_minibatches=%lld\n", (long long) trained,
           (long long) minibatches);
    assert_int_equal(start, 200);
    assert_int_equal(trained, 200);
    assert_int_equal(minibatches, 13); // 12 of 16 and one of 8
    t_free(&l);
}

// Runs argv and expects exit 2 with an error line whose detail holds fragment.
static void t_expect_invalid(char **argv, const char *fragment)
{
    static t_child_t child;
    t_run(argv, &child);
    assert_int_equal(t_exit_code(&child), 2);
    if (!strstr(child.out, fragment)) {
        fail_msg("expected '%s' in: %s", fragment, child.out);
    }
}

static void t_write(const char *path, const void *bytes, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void test_bad_weights_refused(void **state)
{
    (void) state;
    char data[T_PATH_MAX], other[T_PATH_MAX], junk[T_PATH_MAX], out[T_PATH_MAX];
    t_join(data, "mnist");
    t_join(other, "resnet18.weights");
    t_join(junk, "junk.weights");
    t_join(out, "never.weights");
    jf_torch_session_opts_t so = {.model = JF_TORCH_MODEL_RESNET18, .seed = 1};
    jf_torch_session_t *s = jf_torch_session_new(&so, NULL);
    assert_non_null(s);
    void *bytes = NULL;
    size_t len = 0;
    assert_int_equal(jf_torch_session_weights_save(s, &bytes, &len, NULL), 0);
    t_write(other, bytes, len);
    t_write(junk, bytes, len / 2); // truncated
    free(bytes);
    jf_torch_session_destroy(&s);
    char *argv[] = {"jetfleet-train",
                    "--model",
                    "lenet5",
                    "--data",
                    data,
                    "--workers",
                    "0",
                    "--batch",
                    "16",
                    "--epochs",
                    "1",
                    "--minibatches",
                    "2",
                    "--init-weights",
                    other,
                    "--out-weights",
                    out,
                    NULL};
    t_expect_invalid(argv, "--init-weights");
    t_expect_invalid(argv, "expected 'conv1.weight'");
    argv[14] = junk;
    t_expect_invalid(argv, "truncated");
    assert_int_not_equal(access(out, F_OK), 0); // nothing written after a refused start
    char *sim[48] = {0};
    size_t n = 0;
    t_sim_argv(sim, &n, getenv("JF_SIM_PARAMS"), data);
    sim[n - 2] = "--out-weights"; // in place of --data
    sim[n - 1] = out;
    t_expect_invalid(sim, "missing required option --data");
}

static int t_setup(void **state)
{
    (void) state;
    assert_int_equal(jft_tmpdir_new(s_dir), 0);
    char data[T_PATH_MAX];
    t_join(data, "mnist");
    char *argv[] = {"jetfleet-datagen", "--kind", "mnist", "--scale", "0.01",
                    "--seed",           "1",      "--out", data,      NULL};
    static t_child_t child;
    t_run(argv, &child);
    assert_int_equal(t_exit_code(&child), 0);
    return 0;
}

static int t_teardown(void **state)
{
    (void) state;
    jft_tmpdir_remove(s_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_rounds_chain),
        cmocka_unit_test(test_sim_round_trains_for_real),
        cmocka_unit_test(test_bad_weights_refused),
        cmocka_unit_test(test_shard_trains_its_part),
    };
    return cmocka_run_group_tests(tests, t_setup, t_teardown);
}
