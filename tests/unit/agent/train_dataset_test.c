/* Unit tests for train_datagen and train_dataset: generated files have the real headers and
 * sizes and are deterministic; the reader recognises the kind, normalises samples read from disk,
 * and rejects truncated or garbled files with an error naming the file (table-driven). */
#include "train_datagen.h"
#include "train_dataset.h"

#include <errno.h>
#include <fcntl.h>
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

#include "jft_fs.h"

#define T_PATH_MAX    PATH_MAX // what jft_fs expects
#define T_MNIST_SCALE 0.005    // 300 images
#define T_MNIST_COUNT 300
#define T_CIFAR_SCALE 0.002 // 5 files of 20 records
#define T_CIFAR_PER   20
#define T_FILE_MAX    (1 << 20)

static void t_path(char *buf, const char *dir, const char *name)
{
    (void)snprintf(buf, T_PATH_MAX, "%s/%s", dir, name);
}

static size_t t_read_file(const char *path, unsigned char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, size, f);
    assert_int_equal(fclose(f), 0);
    return n;
}

static void t_write_at(const char *dir, const char *name, long offset, const void *data, size_t len)
{
    char path[T_PATH_MAX];
    t_path(path, dir, name);
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, data, len, offset), (ssize_t)len);
    assert_int_equal(close(fd), 0);
}

static void t_truncate(const char *dir, const char *name, long size)
{
    char path[T_PATH_MAX];
    t_path(path, dir, name);
    assert_int_equal(truncate(path, size), 0);
}

static void t_generate(char *dir, train_dataset_kind_t kind, uint64_t seed)
{
    assert_int_equal(jft_tmpdir_new(dir), 0);
    double scale = kind == TRAIN_DATASET_MNIST ? T_MNIST_SCALE : T_CIFAR_SCALE;
    train_datagen_opts_t o = {.kind = kind, .scale = scale, .seed = seed, .out_dir = dir};
    jf_err_t err = {0};
    assert_int_equal(train_datagen_write(&o, &err), 0);
}

static uint32_t t_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void test_datagen_mnist_headers_and_sizes(void **state)
{
    (void)state;
    static unsigned char buf[T_FILE_MAX];
    char dir[T_PATH_MAX], path[T_PATH_MAX];
    t_generate(dir, TRAIN_DATASET_MNIST, 1);
    t_path(path, dir, TRAIN_MNIST_IMAGES_FILE);
    assert_int_equal(t_read_file(path, buf, sizeof buf), 16 + T_MNIST_COUNT * 784);
    assert_int_equal(t_be32(buf), 2051);
    assert_int_equal(t_be32(buf + 4), T_MNIST_COUNT);
    assert_int_equal(t_be32(buf + 8), 28);
    assert_int_equal(t_be32(buf + 12), 28);
    t_path(path, dir, TRAIN_MNIST_LABELS_FILE);
    assert_int_equal(t_read_file(path, buf, sizeof buf), 8 + T_MNIST_COUNT);
    assert_int_equal(t_be32(buf), 2049);
    assert_int_equal(t_be32(buf + 4), T_MNIST_COUNT);
    int classes_seen = 0;
    for (size_t i = 0; i < T_MNIST_COUNT; i++) {
        assert_true(buf[8 + i] < 10);
        classes_seen |= 1 << buf[8 + i];
    }
    assert_int_equal(classes_seen, 0x3ff); // every class occurs
    jft_tmpdir_remove(dir);
}

static void test_datagen_cifar_sizes_and_labels(void **state)
{
    (void)state;
    static unsigned char buf[T_FILE_MAX];
    char dir[T_PATH_MAX], path[T_PATH_MAX];
    t_generate(dir, TRAIN_DATASET_CIFAR10, 1);
    for (int k = 1; k <= 5; k++) {
        char name[32];
        (void)snprintf(name, sizeof name, "data_batch_%d.bin", k);
        t_path(path, dir, name);
        assert_int_equal(t_read_file(path, buf, sizeof buf), T_CIFAR_PER * 3073);
        for (size_t r = 0; r < T_CIFAR_PER; r++) {
            assert_true(buf[r * 3073] < 10);
        }
    }
    jft_tmpdir_remove(dir);
}

static void test_datagen_is_deterministic(void **state)
{
    (void)state;
    static unsigned char a[T_FILE_MAX], b[T_FILE_MAX], c[T_FILE_MAX];
    char d1[T_PATH_MAX], d2[T_PATH_MAX], d3[T_PATH_MAX], path[T_PATH_MAX];
    t_generate(d1, TRAIN_DATASET_MNIST, 7);
    t_generate(d2, TRAIN_DATASET_MNIST, 7);
    t_generate(d3, TRAIN_DATASET_MNIST, 8);
    t_path(path, d1, TRAIN_MNIST_IMAGES_FILE);
    size_t n = t_read_file(path, a, sizeof a);
    t_path(path, d2, TRAIN_MNIST_IMAGES_FILE);
    assert_int_equal(t_read_file(path, b, sizeof b), n);
    t_path(path, d3, TRAIN_MNIST_IMAGES_FILE);
    assert_int_equal(t_read_file(path, c, sizeof c), n);
    assert_memory_equal(a, b, n);
    assert_memory_not_equal(a + 16, c + 16, n - 16);
    jft_tmpdir_remove(d1);
    jft_tmpdir_remove(d2);
    jft_tmpdir_remove(d3);
}

static void test_datagen_samples_and_bad_options(void **state)
{
    (void)state;
    assert_int_equal(train_datagen_samples(TRAIN_DATASET_MNIST, 1.0), 60000);
    assert_int_equal(train_datagen_samples(TRAIN_DATASET_CIFAR10, 1.0), 50000);
    assert_int_equal(train_datagen_samples(TRAIN_DATASET_MNIST, 0.005), 300);
    assert_int_equal(train_datagen_samples(TRAIN_DATASET_CIFAR10, 1e-6), 5);
    const struct {
        train_datagen_opts_t opts;
        int code;
        const char *fragment;
    } rows[] = {
        {{.kind = TRAIN_DATASET_GLD23K, .scale = 1, .out_dir = "/tmp"}, -ENOTSUP, "not built yet"},
        {{.kind = TRAIN_DATASET_MNIST, .scale = 0, .out_dir = "/tmp"}, -EINVAL, "scale must be"},
        {{.kind = TRAIN_DATASET_MNIST, .scale = 16.5, .out_dir = "/tmp"}, -EINVAL, "got 16.5"},
        {{.kind = TRAIN_DATASET_MNIST, .scale = 1}, -EINVAL, "output directory"},
        {{.kind = TRAIN_DATASET_MNIST, .scale = 0.001, .out_dir = "/proc/no/such"},
         -EIO,
         "/proc/no/such: cannot create directory"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        jf_err_t err = {0};
        assert_int_equal(train_datagen_write(&rows[i].opts, &err), rows[i].code);
        assert_non_null(strstr(err.msg, rows[i].fragment));
    }
}

static void test_reader_mnist_reads_and_normalises_from_disk(void **state)
{
    (void)state;
    static unsigned char raw[T_FILE_MAX];
    char dir[T_PATH_MAX], path[T_PATH_MAX];
    t_generate(dir, TRAIN_DATASET_MNIST, 3);
    jf_err_t err = {0};
    train_dataset_t *ds = train_dataset_open(dir, &err);
    assert_non_null(ds);
    assert_int_equal(train_dataset_kind(ds), TRAIN_DATASET_MNIST);
    assert_int_equal(train_dataset_size(ds), T_MNIST_COUNT);
    assert_int_equal(train_dataset_sample_floats(ds), 784);
    t_path(path, dir, TRAIN_MNIST_IMAGES_FILE);
    (void)t_read_file(path, raw, sizeof raw);
    float x[784];
    int64_t y = -1;
    assert_int_equal(train_dataset_fetch(ds, 17, x, &y, &err), 0);
    for (size_t i = 0; i < 784; i++) {
        float want = ((float)raw[16 + 17 * 784 + i] / 255.0f - 0.1307f) / 0.3081f;
        assert_float_equal(x[i], want, 1e-5);
    }
    assert_true(y >= 0 && y < 10);
    // The reader must read per sample from the file, not from a copy taken at open.
    const unsigned char white = 255;
    t_write_at(dir, TRAIN_MNIST_IMAGES_FILE, 16 + 17 * 784, &white, 1);
    assert_int_equal(train_dataset_fetch(ds, 17, x, &y, &err), 0);
    assert_float_equal(x[0], (1.0f - 0.1307f) / 0.3081f, 1e-5);
    assert_int_equal(train_dataset_fetch(ds, T_MNIST_COUNT, x, &y, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "out of range"));
    train_dataset_destroy(&ds);
    assert_null(ds);
    jft_tmpdir_remove(dir);
}

static void test_reader_cifar_reads_and_normalises(void **state)
{
    (void)state;
    static unsigned char raw[T_FILE_MAX];
    static const float mean[3] = {0.4914f, 0.4822f, 0.4465f}, sd[3] = {0.2470f, 0.2435f, 0.2616f};
    char dir[T_PATH_MAX], path[T_PATH_MAX];
    t_generate(dir, TRAIN_DATASET_CIFAR10, 3);
    jf_err_t err = {0};
    train_dataset_t *ds = train_dataset_open(dir, &err);
    assert_non_null(ds);
    assert_int_equal(train_dataset_kind(ds), TRAIN_DATASET_CIFAR10);
    assert_int_equal(train_dataset_size(ds), 5 * T_CIFAR_PER);
    train_dataset_shape_t shape = train_dataset_shape(ds);
    assert_int_equal(shape.channels * 100 + shape.height, 332);
    t_path(path, dir, "data_batch_3.bin");
    (void)t_read_file(path, raw, sizeof raw);
    static float x[3072];
    int64_t y = -1;
    size_t r = 7; // record 7 of the third file
    assert_int_equal(train_dataset_fetch(ds, 2 * T_CIFAR_PER + r, x, &y, &err), 0);
    assert_int_equal(y, raw[r * 3073]);
    for (size_t i = 0; i < 3072; i++) {
        float want = ((float)raw[r * 3073 + 1 + i] / 255.0f - mean[i / 1024]) / sd[i / 1024];
        assert_float_equal(x[i], want, 1e-5);
    }
    train_dataset_destroy(&ds);
    jft_tmpdir_remove(dir);
}

typedef void t_mutate_fn(const char *dir);

static void t_mnist_truncate(const char *dir)
{
    t_truncate(dir, TRAIN_MNIST_IMAGES_FILE, 16 + 299 * 784 + 100);
}

static void t_mnist_short_header(const char *dir)
{
    t_truncate(dir, TRAIN_MNIST_IMAGES_FILE, 10);
}

static void t_mnist_bad_magic(const char *dir)
{
    const unsigned char magic[4] = {0, 0, 8, 1};
    t_write_at(dir, TRAIN_MNIST_IMAGES_FILE, 0, magic, 4);
}

static void t_mnist_bad_rows(const char *dir)
{
    const unsigned char rows[4] = {0, 0, 0, 27};
    t_write_at(dir, TRAIN_MNIST_IMAGES_FILE, 8, rows, 4);
}

static void t_mnist_label_count(const char *dir)
{
    const unsigned char count[4] = {0, 0, 1, 43}; // 299
    t_write_at(dir, TRAIN_MNIST_LABELS_FILE, 4, count, 4);
}

static void t_mnist_trailing(const char *dir)
{
    t_truncate(dir, TRAIN_MNIST_LABELS_FILE, 8 + T_MNIST_COUNT + 1);
}

static void t_mnist_no_labels(const char *dir)
{
    char path[T_PATH_MAX];
    t_path(path, dir, TRAIN_MNIST_LABELS_FILE);
    assert_int_equal(unlink(path), 0);
}

static void t_remove_all(const char *dir)
{
    t_mnist_no_labels(dir);
    char path[T_PATH_MAX];
    t_path(path, dir, TRAIN_MNIST_IMAGES_FILE);
    assert_int_equal(unlink(path), 0);
}

static void t_mnist_plus_cifar(const char *dir)
{
    char path[T_PATH_MAX];
    t_path(path, dir, "data_batch_1.bin");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fclose(f), 0);
}

static void t_cifar_truncate(const char *dir)
{
    t_truncate(dir, "data_batch_3.bin", T_CIFAR_PER * 3073 - 1);
}

static void t_cifar_missing(const char *dir)
{
    char path[T_PATH_MAX];
    t_path(path, dir, "data_batch_5.bin");
    assert_int_equal(unlink(path), 0);
}

static void test_reader_rejects_bad_files(void **state)
{
    (void)state;
    const struct {
        train_dataset_kind_t kind;
        t_mutate_fn *mutate;
        int code;
        const char *fragment;
    } rows[] = {
        {TRAIN_DATASET_MNIST, t_mnist_truncate, -EPROTO, "train-images-idx3-ubyte: truncated"},
        {TRAIN_DATASET_MNIST, t_mnist_short_header, -EPROTO, "idx3-ubyte: truncated: 10 bytes"},
        {TRAIN_DATASET_MNIST, t_mnist_bad_magic, -EPROTO,
         "idx3-ubyte: bad magic 2049, expected "
         "2051"},
        {TRAIN_DATASET_MNIST, t_mnist_bad_rows, -EPROTO, "idx3-ubyte: images are 27x28"},
        {TRAIN_DATASET_MNIST, t_mnist_label_count, -EPROTO, "idx1-ubyte: 299 labels for 300"},
        {TRAIN_DATASET_MNIST, t_mnist_trailing, -EPROTO, "idx1-ubyte: 309 bytes, expected 308"},
        {TRAIN_DATASET_MNIST, t_mnist_no_labels, -ENOENT, "idx1-ubyte: cannot open"},
        {TRAIN_DATASET_MNIST, t_remove_all, -ENOENT, "no dataset found"},
        {TRAIN_DATASET_MNIST, t_mnist_plus_cifar, -EINVAL, "both MNIST and CIFAR-10"},
        {TRAIN_DATASET_CIFAR10, t_cifar_truncate, -EPROTO, "data_batch_3.bin: 61459 bytes"},
        {TRAIN_DATASET_CIFAR10, t_cifar_missing, -ENOENT, "data_batch_5.bin: cannot open"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char dir[T_PATH_MAX];
        t_generate(dir, rows[i].kind, 5);
        rows[i].mutate(dir);
        jf_err_t err = {0};
        train_dataset_t *ds = train_dataset_open(dir, &err);
        assert_null(ds);
        print_message("row %zu: %s\n", i, err.msg);
        assert_int_equal(err.code, rows[i].code);
        assert_non_null(strstr(err.msg, rows[i].fragment));
        jft_tmpdir_remove(dir);
    }
}

static void t_expect_bad_label(train_dataset_kind_t kind, const char *file, long offset,
                               size_t index, const char *fragment)
{
    char dir[T_PATH_MAX];
    t_generate(dir, kind, 5);
    const unsigned char label = 200;
    t_write_at(dir, file, offset, &label, 1);
    jf_err_t err = {0};
    train_dataset_t *ds = train_dataset_open(dir, &err);
    assert_non_null(ds);
    static float x[3072];
    int64_t y = 0;
    assert_int_equal(train_dataset_fetch(ds, index, x, &y, &err), -EPROTO);
    assert_non_null(strstr(err.msg, fragment));
    train_dataset_destroy(&ds);
    jft_tmpdir_remove(dir);
}

static void test_reader_rejects_garbled_labels(void **state)
{
    (void)state;
    t_expect_bad_label(TRAIN_DATASET_MNIST, TRAIN_MNIST_LABELS_FILE, 8 + 5, 5,
                       "train-labels-idx1-ubyte: sample 5 has label 200");
    t_expect_bad_label(TRAIN_DATASET_CIFAR10, "data_batch_2.bin", 3 * 3073, T_CIFAR_PER + 3,
                       "data_batch_2.bin: sample 3 has label 200");
}

static void test_kind_names(void **state)
{
    (void)state;
    train_dataset_kind_t kind = TRAIN_DATASET_MNIST;
    assert_int_equal(train_dataset_kind_parse("cifar10", &kind, NULL), 0);
    assert_int_equal(kind, TRAIN_DATASET_CIFAR10);
    assert_string_equal(train_dataset_kind_name(TRAIN_DATASET_GLD23K), "gld23k");
    jf_err_t err = {0};
    assert_int_equal(train_dataset_kind_parse("imagenet", &kind, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "'imagenet'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_datagen_mnist_headers_and_sizes),
        cmocka_unit_test(test_datagen_cifar_sizes_and_labels),
        cmocka_unit_test(test_datagen_is_deterministic),
        cmocka_unit_test(test_datagen_samples_and_bad_options),
        cmocka_unit_test(test_reader_mnist_reads_and_normalises_from_disk),
        cmocka_unit_test(test_reader_cifar_reads_and_normalises),
        cmocka_unit_test(test_reader_rejects_bad_files),
        cmocka_unit_test(test_reader_rejects_garbled_labels),
        cmocka_unit_test(test_kind_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
