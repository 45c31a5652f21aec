/* Unit tests for the libtorch shim through its C header: each model's loss falls over a few SGD
 * steps on a small fixed batch, a seed fixes the weights, bad input is refused with -EINVAL, a
 * missing CUDA with -ENODEV, an allocation failure with -ENOMEM "out of memory", inference leaves
 * the model as it was, and the build information is filled in. */
#include "jf_torch.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define T_FLOATS_MAX         (3 * 32 * 32) // a CIFAR-sized sample, for the allocation failure
#define T_STEPS_MAX          60
#define T_FALL_FACTOR        0.8  // the loss must fall below this fraction of where it started
#define T_MNV3_FALL_FACTOR   0.97 // the same for MobileNetV3's short run (test_mobilenetv3_learns)
#define T_OOM_HEADROOM_BYTES (256L * 1024 * 1024)

// A fixed minibatch whose classes differ: per class, a seeded template of bright and dark 4x4
// blocks (as jetfleet-datagen draws them), plus a little noise.
static void t_make_batch(const jf_torch_shape_t *s, size_t batch, float *x, int64_t *y)
{
    size_t plane = (size_t)(s->height * s->width), floats = plane * (size_t)s->channels;
    uint32_t rng = 12345;
    for (size_t b = 0; b < batch; b++) {
        y[b] = (int64_t)(b % (size_t)s->classes);
        for (size_t i = 0; i < floats; i++) {
            size_t row = i % plane / (size_t)s->width, col = i % plane % (size_t)s->width;
            uint32_t cell =
                (uint32_t)((size_t)y[b] * 977 + i / plane * 131 + row / 4 * 8 + col / 4);
            float pattern = (cell * 2654435761u) >> 31 ? 1.0f : -1.0f;
            rng = rng * 1103515245u + 12345u;
            x[b * floats + i] = pattern + (float)(rng >> 16) / 65536.0f * 0.2f;
        }
    }
}

// Trains steps steps on one fixed minibatch; fills losses.
static void t_train(jf_torch_model_kind_t model, size_t batch, int steps, double *losses)
{
    jf_torch_shape_t shape = {0};
    assert_int_equal(jf_torch_model_shape(model, &shape, NULL), 0);
    size_t floats = (size_t)(shape.channels * shape.height * shape.width);
    float *x = calloc(batch * floats, sizeof *x);
    int64_t *y = calloc(batch, sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    t_make_batch(&shape, batch, x, y);
    jf_torch_session_opts_t opts = {.model = model, .device = JF_TORCH_DEVICE_CPU, .seed = 1};
    jf_err_t err = {0};
    jf_torch_session_t *s = jf_torch_session_new(&opts, &err);
    assert_non_null(s);
    for (int i = 0; i < steps; i++) {
        assert_int_equal(jf_torch_session_step(s, x, y, batch, &losses[i], &err), 0);
    }
    jf_torch_session_destroy(&s);
    assert_null(s);
    free(x);
    free(y);
}

// Trains steps steps and checks that the mean loss of the last two is below factor times that
// of the first two.
static void t_assert_loss_falls_by(jf_torch_model_kind_t model, size_t batch, int steps,
                                   double factor)
{
    double losses[T_STEPS_MAX] = {0};
    t_train(model, batch, steps, losses);
    double first = (losses[0] + losses[1]) / 2, last = (losses[steps - 2] + losses[steps - 1]) / 2;
    print_message("%s: loss %.4f -> %.4f\n", jf_torch_model_name(model), first, last);
    assert_true(last < first * factor);
}

static void t_assert_loss_falls(jf_torch_model_kind_t model, size_t batch, int steps)
{
    t_assert_loss_falls_by(model, batch, steps, T_FALL_FACTOR);
}

static void test_lenet5_learns(void **state)
{
    (void)state;
    t_assert_loss_falls(JF_TORCH_MODEL_LENET5, 16, 60);
}

static void test_resnet18_learns(void **state)
{
    (void)state;
    t_assert_loss_falls(JF_TORCH_MODEL_RESNET18, 4, 4);
}

static void test_vgg11_learns(void **state)
{
    (void)state;
    t_assert_loss_falls(JF_TORCH_MODEL_VGG11, 4, 4);
}

// MobileNetV3 at 224x224 takes about 0.5 s per image and step on one core, and its loss starts at
// ln(203) (torchvision's N(0, 0.01) classifier) and falls slowly at first: a short run on two
// images can only be asked for a smaller fall.
static void test_mobilenetv3_learns(void **state)
{
    (void)state;
    t_assert_loss_falls_by(JF_TORCH_MODEL_MOBILENETV3, 2, 6, T_MNV3_FALL_FACTOR);
}

static void test_seed_fixes_the_weights(void **state)
{
    (void)state;
    double a[2] = {0}, b[2] = {0};
    t_train(JF_TORCH_MODEL_LENET5, 8, 2, a);
    t_train(JF_TORCH_MODEL_LENET5, 8, 2, b);
    assert_float_equal(a[0], b[0], 1e-9);
    assert_float_equal(a[1], b[1], 1e-9);
}

static void test_session_options_refused(void **state)
{
    (void)state;
    jf_err_t err = {0};
    jf_torch_session_opts_t opts = {.model = (jf_torch_model_kind_t)99};
    assert_null(jf_torch_session_new(&opts, &err));
    assert_int_equal(err.code, -EINVAL);
    assert_non_null(strstr(err.msg, "unknown model kind 99"));
    opts = (jf_torch_session_opts_t){.model = JF_TORCH_MODEL_LENET5, .threads = -1};
    assert_null(jf_torch_session_new(&opts, &err));
    assert_int_equal(err.code, -EINVAL);
    assert_non_null(strstr(err.msg, "threads must be"));
    assert_null(jf_torch_session_new(NULL, &err));
    assert_int_equal(err.code, -EINVAL);
    jf_torch_info_t info = {0};
    assert_int_equal(jf_torch_info_read(&info, NULL), 0);
    if (info.cuda_available) {
        skip(); // the -ENODEV path needs a host without CUDA
    }
    opts =
        (jf_torch_session_opts_t){.model = JF_TORCH_MODEL_LENET5, .device = JF_TORCH_DEVICE_CUDA};
    assert_null(jf_torch_session_new(&opts, &err));
    assert_int_equal(err.code, -ENODEV);
    assert_non_null(strstr(err.msg, "no usable CUDA"));
}

static void test_step_input_refused(void **state)
{
    (void)state;
    jf_torch_session_opts_t opts = {
        .model = JF_TORCH_MODEL_LENET5, .device = JF_TORCH_DEVICE_AUTO, .threads = 2};
    jf_err_t err = {0};
    jf_torch_session_t *s = jf_torch_session_new(&opts, &err);
    assert_non_null(s);
    static float x[4 * 784];
    int64_t y[4] = {0, 1, 10, 2};
    double loss = -1.0;
    assert_int_equal(jf_torch_session_step(s, x, y, 0, &loss, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "batch must be in 1..4096, got 0"));
    assert_int_equal(jf_torch_session_step(s, x, y, 4, &loss, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "label 2 is 10, expected 0..9"));
    assert_int_equal(jf_torch_session_step(s, NULL, y, 2, &loss, &err), -EINVAL);
    assert_true(loss == -1.0); // not written on failure
    jf_torch_info_t info = {0};
    assert_int_equal(jf_torch_info_read(&info, &err), 0);
    assert_int_equal(info.threads, 2);
    if (!info.cuda_available) {
        assert_string_equal(jf_torch_session_device_name(s), "cpu"); // auto without CUDA
    }
    assert_int_equal(jf_torch_session_model(s), JF_TORCH_MODEL_LENET5);
    jf_torch_session_destroy(&s);
    jf_torch_session_destroy(&s);
    jf_torch_session_destroy(NULL);
}

// Inference (a concurrent run's second model): the forward pass alone, in evaluation mode, so
// that serving changes nothing of the model, not even BatchNorm's running statistics (ResNet-18
// has them: a forward pass in training mode would move them); bad input is refused.
static void test_infer_leaves_the_model(void **state)
{
    (void) state;
    jf_torch_session_opts_t opts = {.model = JF_TORCH_MODEL_RESNET18, .seed = 2};
    jf_err_t err = {0};
    jf_torch_session_t *s = jf_torch_session_new(&opts, &err);
    assert_non_null(s);
    jf_torch_shape_t shape = {0};
    assert_int_equal(jf_torch_model_shape(JF_TORCH_MODEL_RESNET18, &shape, NULL), 0);
    size_t floats = (size_t) (shape.channels * shape.height * shape.width);
    float *x = calloc(2 * floats, sizeof *x);
    int64_t y[2] = {0};
    assert_non_null(x);
    t_make_batch(&shape, 2, x, y);
    void *before = NULL, *after = NULL;
    size_t before_len = 0, after_len = 0;
    assert_int_equal(jf_torch_session_weights_save(s, &before, &before_len, &err), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(jf_torch_session_infer(s, x, 2, &err), 0);
    }
    assert_int_equal(jf_torch_session_infer(s, x, 1, &err), 0);
    assert_int_equal(jf_torch_session_weights_save(s, &after, &after_len, &err), 0);
    assert_int_equal(before_len, after_len);
    assert_memory_equal(before, after, before_len);
    assert_int_equal(jf_torch_session_infer(s, x, 0, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "infer: batch must be in 1..4096, got 0"));
    assert_int_equal(jf_torch_session_infer(s, NULL, 2, &err), -EINVAL);
    assert_int_equal(jf_torch_session_infer(NULL, x, 2, &err), -EINVAL);
    free(before);
    free(after);
    free(x);
    jf_torch_session_destroy(&s);
}

static void test_names_and_shapes(void **state)
{
    (void)state;
    const char *names[] = {"lenet5", "resnet18", "vgg11", "mobilenetv3"};
    for (int i = 0; i < 4; i++) {
        jf_torch_model_kind_t kind = JF_TORCH_MODEL_LENET5;
        assert_int_equal(jf_torch_model_parse(names[i], &kind, NULL), 0);
        assert_int_equal(kind, i);
        assert_string_equal(jf_torch_model_name(kind), names[i]);
    }
    jf_err_t err = {0};
    jf_torch_model_kind_t kind = JF_TORCH_MODEL_LENET5;
    assert_int_equal(jf_torch_model_parse("alexnet", &kind, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "unknown model 'alexnet'"));
    jf_torch_device_kind_t dev = JF_TORCH_DEVICE_CPU;
    assert_int_equal(jf_torch_device_parse("auto", &dev, NULL), 0);
    assert_int_equal(dev, JF_TORCH_DEVICE_AUTO);
    assert_int_equal(jf_torch_device_parse("tpu", &dev, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "unknown device 'tpu'"));
    jf_torch_shape_t s = {0};
    assert_int_equal(jf_torch_model_shape(JF_TORCH_MODEL_LENET5, &s, NULL), 0);
    assert_int_equal(s.channels * 10000 + s.height * 100 + s.width, 12828);
    assert_int_equal(jf_torch_model_shape(JF_TORCH_MODEL_VGG11, &s, NULL), 0);
    assert_int_equal(s.channels * 10000 + s.height * 100 + s.width, 33232);
    assert_int_equal(s.classes, 10);
    assert_int_equal(jf_torch_model_shape(JF_TORCH_MODEL_MOBILENETV3, &s, &err), 0);
    assert_int_equal(s.channels * 1000000 + s.height * 1000 + s.width, 3224224);
    assert_int_equal(s.classes, 203);
}

static void test_info_describes_the_build(void **state)
{
    (void)state;
    jf_torch_info_t info = {0};
    jf_err_t err = {0};
    assert_int_equal(jf_torch_info_read(&info, &err), 0);
    print_message("torch %s, blas %s, lapack %s\n", info.torch_version, info.blas, info.lapack);
    assert_true(strncmp(info.torch_version, "1.", 2) == 0 ||
                strncmp(info.torch_version, "2.", 2) == 0);
    assert_true(strlen(info.blas) > 0 && strncmp(info.blas, "unknown", 7) != 0);
    assert_true(info.threads >= 1);
    assert_true(info.cuda_devices >= 0);
}

// In a child: limit the address space to some headroom above what is mapped, then ask for far
// more. The headroom lets oneDNN build its kernels (it crashes, unchecked, when its JIT buffer
// cannot be mapped); the first activation of VGG-11 at batch 4096 (1 GiB) cannot fit.
static int t_oom_child(void)
{
    size_t batch = JF_TORCH_BATCH_MAX;
    float *x = calloc(batch * T_FLOATS_MAX, sizeof *x);
    int64_t *y = calloc(batch, sizeof *y);
    jf_torch_session_opts_t opts = {.model = JF_TORCH_MODEL_VGG11};
    jf_err_t err = {0};
    jf_torch_session_t *s = jf_torch_session_new(&opts, &err);
    long pages = 0;
    FILE *statm = fopen("/proc/self/statm", "r");
    if (!x || !y || !s || !statm || fscanf(statm, "%ld", &pages) != 1) {
        return 2;
    }
    (void)fclose(statm);
    rlim_t limit = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + T_OOM_HEADROOM_BYTES;
    struct rlimit rl = {.rlim_cur = limit, .rlim_max = limit};
    if (setrlimit(RLIMIT_AS, &rl) != 0) {
        return 3;
    }
    double loss = 0.0;
    int rc = jf_torch_session_step(s, x, y, batch, &loss, &err);
    (void)fprintf(stderr, "oom child: rc %d, %s\n", rc, err.msg);
    return rc == -ENOMEM && strstr(err.msg, "out of memory") ? 0 : 1;
}

static void test_allocation_failure_is_enomem(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    skip(); // AddressSanitizer reserves terabytes of shadow memory; RLIMIT_AS cannot work
#endif
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        _exit(t_oom_child());
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lenet5_learns),
        cmocka_unit_test(test_resnet18_learns),
        cmocka_unit_test(test_vgg11_learns),
        cmocka_unit_test(test_mobilenetv3_learns),
        cmocka_unit_test(test_seed_fixes_the_weights),
        cmocka_unit_test(test_session_options_refused),
        cmocka_unit_test(test_step_input_refused),
        cmocka_unit_test(test_infer_leaves_the_model),
        cmocka_unit_test(test_names_and_shapes),
        cmocka_unit_test(test_info_describes_the_build),
        cmocka_unit_test(test_allocation_failure_is_enomem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
