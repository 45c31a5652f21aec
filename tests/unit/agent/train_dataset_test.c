/* Unit tests for train_datagen and train_dataset: generated files have the real headers and
 * sizes and are deterministic; the reader recognises the kind, normalises samples read from disk,
 * and rejects truncated or garbled files with an error naming the file (table-driven). GLD-23k:
 * generated sets deterministic and readable, fetches reproducible per (seed, epoch, index)
 * through the loader with and without workers, bad sets and corrupt images reported with their
 * path, and the trainer's model/dataset pairing. train_gld_test covers the parts below. */
#include "train_datagen.h"
#include "train_dataset.h"
#include "train_gld.h"
#include "train_gld_csv.h"
#include "train_jpeg.h"
#include "train_loader.h"
#include "train_run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
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
    int n = snprintf(buf, T_PATH_MAX, "%s/%s", dir, name);
    assert_true(n > 0 && n < T_PATH_MAX);
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
    assert_int_equal(train_datagen_samples(TRAIN_DATASET_GLD23K, 1.0), 23080);
    assert_int_equal(train_datagen_samples(TRAIN_DATASET_GLD23K, 0.001), 23);
    assert_int_equal(train_datagen_gld_users(1.0), 233);
    assert_int_equal(train_datagen_gld_users(0.001), 1);
    assert_int_equal(train_datagen_gld_users(1e-6), 1);
    const struct {
        train_datagen_opts_t opts;
        int code;
        const char *fragment;
    } rows[] = {
        {{.kind = TRAIN_DATASET_GLD23K, .scale = 0}, -EINVAL, "scale must be"},
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
    train_dataset_req_t req = {.index = 17};
    assert_int_equal(train_dataset_fetch(ds, &req, x, &y, &err), 0);
    for (size_t i = 0; i < 784; i++) {
        float want = ((float)raw[16 + 17 * 784 + i] / 255.0f - 0.1307f) / 0.3081f;
        assert_float_equal(x[i], want, 1e-5);
    }
    assert_true(y >= 0 && y < 10);
    // The reader must read per sample from the file, not from a copy taken at open.
    const unsigned char white = 255;
    t_write_at(dir, TRAIN_MNIST_IMAGES_FILE, 16 + 17 * 784, &white, 1);
    assert_int_equal(train_dataset_fetch(ds, &req, x, &y, &err), 0);
    assert_float_equal(x[0], (1.0f - 0.1307f) / 0.3081f, 1e-5);
    req.index = T_MNIST_COUNT;
    assert_int_equal(train_dataset_fetch(ds, &req, x, &y, &err), -EINVAL);
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
    train_dataset_req_t req = {.index = 2 * T_CIFAR_PER + r};
    assert_int_equal(train_dataset_fetch(ds, &req, x, &y, &err), 0);
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
        {TRAIN_DATASET_MNIST, t_mnist_plus_cifar, -EINVAL,
         "more than one dataset (mnist and cifar10)"},
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
    train_dataset_req_t req = {.index = index};
    assert_int_equal(train_dataset_fetch(ds, &req, x, &y, &err), -EPROTO);
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
    train_dataset_shape_t gld = train_dataset_kind_shape(TRAIN_DATASET_GLD23K);
    assert_int_equal(gld.channels * 1000000 + gld.height * 1000 + gld.width, 3224224);
    assert_int_equal(gld.classes, 203);
    assert_int_equal(train_dataset_kind_shape(TRAIN_DATASET_MNIST).classes, 10);
    assert_int_equal(train_dataset_kind_shape((train_dataset_kind_t)7).channels, 0);
    jf_err_t err = {0};
    assert_int_equal(train_dataset_kind_parse("imagenet", &kind, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "'imagenet'"));
}

// ---- GLD-23k ----

#define T_GLD_SCALE  0.001 // 23 images
#define T_GLD_COUNT  23
#define T_GLD_TINY   0.0001 // 2 images, for tests that break files
#define T_GLD_FLOATS (3 * 224 * 224)
#define T_NORM_MIN   ((0.0f - 0.485f) / 0.229f) // smallest normalised value (red 0)
#define T_NORM_MAX   ((1.0f - 0.406f) / 0.225f) // largest (blue 255)

static void t_generate_gld(char *dir, double scale, uint64_t seed)
{
    assert_int_equal(jft_tmpdir_new(dir), 0);
    train_datagen_opts_t o = {
        .kind = TRAIN_DATASET_GLD23K, .scale = scale, .seed = seed, .out_dir = dir};
    jf_err_t err = {0};
    assert_int_equal(train_datagen_write(&o, &err), 0);
}

static void t_load_csv(const char *dir, train_gld_csv_t *csv)
{
    char path[T_PATH_MAX];
    t_path(path, dir, "train.csv");
    jf_err_t err = {0};
    assert_int_equal(train_gld_csv_load(path, csv, &err), 0);
}

static void t_image_path(char *buf, const char *dir, const char *image_id)
{
    int n = snprintf(buf, T_PATH_MAX, "%s/images/%s.jpg", dir, image_id);
    assert_true(n > 0 && n < T_PATH_MAX);
}

// Checks that sets d1 and d2 (same seed) hold the same 800x600 JPEGs, one user; returns their
// mean size in bytes.
static size_t t_compare_gld_images(const char *d1, const train_gld_csv_t *c1, const char *d2,
                                   const train_gld_csv_t *c2)
{
    static unsigned char a[T_FILE_MAX], b[T_FILE_MAX];
    char p1[T_PATH_MAX], p2[T_PATH_MAX];
    train_jpeg_t *jpeg = train_jpeg_new(NULL);
    assert_non_null(jpeg);
    size_t total = 0;
    for (size_t i = 0; i < c1->count; i++) {
        assert_string_equal(c1->rows[i].user_id, "0"); // scale 0.001: one user
        t_image_path(p1, d1, c1->rows[i].image_id);
        t_image_path(p2, d2, c2->rows[i].image_id);
        size_t n = t_read_file(p1, a, sizeof a);
        assert_int_equal(t_read_file(p2, b, sizeof b), n);
        assert_memory_equal(a, b, n);
        total += n;
        train_jpeg_info_t info = {0};
        assert_int_equal(train_jpeg_load(jpeg, p1, &info, NULL), 0);
        assert_int_equal(info.width * 1000 + info.height, 800600);
    }
    train_jpeg_destroy(&jpeg);
    return total / c1->count;
}

static void test_datagen_gld_is_deterministic_and_readable(void **state)
{
    (void)state;
    static unsigned char a[T_FILE_MAX], b[T_FILE_MAX];
    char d1[T_PATH_MAX], d2[T_PATH_MAX], d3[T_PATH_MAX], path[T_PATH_MAX];
    t_generate_gld(d1, T_GLD_SCALE, 7);
    t_generate_gld(d2, T_GLD_SCALE, 7);
    t_generate_gld(d3, T_GLD_SCALE, 8);
    train_gld_csv_t c1 = {0}, c2 = {0}, c3 = {0};
    t_load_csv(d1, &c1);
    t_load_csv(d2, &c2);
    t_load_csv(d3, &c3);
    assert_int_equal(c1.count, T_GLD_COUNT);
    assert_memory_equal(c1.rows, c2.rows, c1.count * sizeof *c1.rows);
    assert_memory_not_equal(c1.rows, c3.rows, c1.count * sizeof *c1.rows);
    size_t mean = t_compare_gld_images(d1, &c1, d2, &c2);
    print_message("gld: mean JPEG size %zu bytes\n", mean);
    assert_in_range(mean, 80000, 130000);
    t_image_path(path, d1, c1.rows[0].image_id);
    size_t n = t_read_file(path, a, sizeof a);
    t_image_path(path, d3, c3.rows[0].image_id);
    size_t m = t_read_file(path, b, sizeof b);
    assert_memory_not_equal(a, b, n < m ? n : m);
    jf_err_t err = {0};
    train_dataset_t *ds = train_dataset_open(d1, &err);
    assert_non_null(ds);
    assert_int_equal(train_dataset_kind(ds), TRAIN_DATASET_GLD23K);
    assert_int_equal(train_dataset_size(ds), T_GLD_COUNT);
    assert_int_equal(train_dataset_sample_floats(ds), T_GLD_FLOATS);
    assert_int_equal(train_dataset_shape(ds).classes, 203);
    train_dataset_destroy(&ds);
    train_gld_csv_fini(&c1);
    train_gld_csv_fini(&c2);
    train_gld_csv_fini(&c3);
    jft_tmpdir_remove(d1);
    jft_tmpdir_remove(d2);
    jft_tmpdir_remove(d3);
}

static void t_check_sample(const float *x)
{
    double sum = 0.0, sq = 0.0;
    for (size_t i = 0; i < T_GLD_FLOATS; i++) {
        assert_true(isfinite(x[i]) && x[i] >= T_NORM_MIN - 1e-5f && x[i] <= T_NORM_MAX + 1e-5f);
        sum += x[i];
        sq += (double)x[i] * x[i];
    }
    double mean = sum / T_GLD_FLOATS;
    assert_true(sq / T_GLD_FLOATS - mean * mean > 0.01); // not flat
}

static void test_gld_fetch_is_reproducible_per_seed(void **state)
{
    (void)state;
    static float a[T_GLD_FLOATS], b[T_GLD_FLOATS];
    char dir[T_PATH_MAX];
    t_generate_gld(dir, T_GLD_SCALE, 4);
    train_gld_csv_t csv = {0};
    t_load_csv(dir, &csv);
    jf_err_t err = {0};
    train_dataset_t *ds = train_dataset_open(dir, &err);
    assert_non_null(ds);
    int64_t y = -1;
    train_dataset_req_t req = {.index = 3, .aug_seed = 11};
    assert_int_equal(train_dataset_fetch(ds, &req, a, &y, &err), 0);
    assert_int_equal(y, csv.rows[3].label);
    t_check_sample(a);
    assert_int_equal(train_dataset_fetch(ds, &req, b, &y, &err), 0);
    assert_memory_equal(a, b, sizeof a);
    int differ = 0;
    for (uint64_t seed = 12; seed < 16; seed++) {
        req.aug_seed = seed;
        assert_int_equal(train_dataset_fetch(ds, &req, b, &y, &err), 0);
        t_check_sample(b);
        differ += memcmp(a, b, sizeof a) != 0 ? 1 : 0;
    }
    assert_int_equal(differ, 4);
    req.index = T_GLD_COUNT;
    assert_int_equal(train_dataset_fetch(ds, &req, a, &y, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "out of range"));
    train_dataset_destroy(&ds);
    train_gld_csv_fini(&csv);
    jft_tmpdir_remove(dir);
}

// What train_run's fetch does: the loader gives each (epoch, index) its augmentation seed.
typedef struct t_loader_ctx {
    const train_dataset_t *ds;
    const train_loader_t *loader;
} t_loader_ctx_t;

static int t_loader_fetch(void *ctx, size_t index, float *ret_x, int64_t *ret_y, jf_err_t *err)
{
    const t_loader_ctx_t *c = ctx;
    train_dataset_req_t req = {index, train_loader_sample_seed(c->loader, index)};
    return train_dataset_fetch(c->ds, &req, ret_x, ret_y, err);
}

enum { T_LOAD_BATCH = 4, T_LOAD_BATCHES = 2, T_LOAD_SAMPLES = T_LOAD_BATCH * T_LOAD_BATCHES };

// Runs epoch epoch with workers and copies the first T_LOAD_SAMPLES samples' x and indices.
static void t_load_epoch(const train_dataset_t *ds, int workers, uint64_t epoch, float *x,
                         size_t *indices)
{
    t_loader_ctx_t ctx = {.ds = ds};
    train_loader_opts_t o = {.samples = train_dataset_size(ds),
                             .sample_floats = T_GLD_FLOATS,
                             .batch = T_LOAD_BATCH,
                             .workers = workers,
                             .seed = 9,
                             .max_batches = T_LOAD_BATCHES,
                             .fetch = t_loader_fetch,
                             .fetch_ctx = &ctx};
    jf_err_t err = {0};
    train_loader_t *loader = train_loader_new(&o, &err);
    assert_non_null(loader);
    ctx.loader = loader;
    assert_int_equal(train_loader_epoch_start(loader, epoch, &err), 0);
    for (size_t b = 0; b < T_LOAD_BATCHES; b++) {
        const train_batch_t *batch = NULL;
        assert_int_equal(train_loader_next(loader, &batch, &err), 0);
        assert_non_null(batch);
        memcpy(x + b * T_LOAD_BATCH * T_GLD_FLOATS, batch->x,
               T_LOAD_BATCH * T_GLD_FLOATS * sizeof *x);
        memcpy(indices + b * T_LOAD_BATCH, batch->indices, T_LOAD_BATCH * sizeof *indices);
    }
    train_loader_destroy(&loader);
}

static void test_gld_loader_reproducible_per_epoch_and_workers(void **state)
{
    (void)state;
    enum { N = T_LOAD_SAMPLES * T_GLD_FLOATS };
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    assert_true(a && b);
    size_t ia[T_LOAD_SAMPLES], ib[T_LOAD_SAMPLES];
    char dir[T_PATH_MAX];
    t_generate_gld(dir, T_GLD_SCALE, 4);
    train_dataset_t *ds = train_dataset_open(dir, NULL);
    assert_non_null(ds);
    t_load_epoch(ds, 0, 0, a, ia);
    t_load_epoch(ds, 3, 0, b, ib); // three workers: same samples, same augmentation
    assert_memory_equal(ia, ib, sizeof ia);
    assert_memory_equal(a, b, N * sizeof *a);
    t_load_epoch(ds, 2, 1, b, ib); // the next epoch: the same image is augmented differently
    size_t compared = 0;
    for (size_t i = 0; i < T_LOAD_SAMPLES; i++) {
        for (size_t j = 0; j < T_LOAD_SAMPLES; j++) {
            if (ia[i] == ib[j]) {
                assert_memory_not_equal(a + i * T_GLD_FLOATS, b + j * T_GLD_FLOATS,
                                        T_GLD_FLOATS * sizeof *a);
                compared++;
            }
        }
    }
    print_message("samples in both epochs: %zu\n", compared);
    train_dataset_destroy(&ds);
    free(a);
    free(b);
    jft_tmpdir_remove(dir);
}

typedef void t_gld_mutate_fn(const char *dir, const train_gld_csv_t *csv);

static void t_gld_garbage(const char *dir, const train_gld_csv_t *csv)
{
    char path[T_PATH_MAX];
    t_image_path(path, dir, csv->rows[0].image_id);
    assert_int_equal(jft_write_file(path, "this is not a JPEG file"), 0);
}

static void t_gld_truncated(const char *dir, const train_gld_csv_t *csv)
{
    char path[T_PATH_MAX];
    t_image_path(path, dir, csv->rows[0].image_id);
    assert_int_equal(truncate(path, 2000), 0);
}

static void t_gld_empty(const char *dir, const train_gld_csv_t *csv)
{
    char path[T_PATH_MAX];
    t_image_path(path, dir, csv->rows[0].image_id);
    assert_int_equal(truncate(path, 0), 0);
}

static void t_gld_removed(const char *dir, const train_gld_csv_t *csv)
{
    char path[T_PATH_MAX];
    t_image_path(path, dir, csv->rows[0].image_id);
    assert_int_equal(unlink(path), 0);
}

static void test_gld_bad_image_fails_naming_the_file(void **state)
{
    (void)state;
    const struct {
        t_gld_mutate_fn *mutate;
        int code;
        const char *fragment;
    } rows[] = {
        {t_gld_garbage, -EPROTO, "corrupt JPEG: Not a JPEG file"},
        {t_gld_truncated, -EPROTO, "corrupt JPEG: Premature end of JPEG file"},
        {t_gld_empty, -EPROTO, "0 bytes, expected a JPEG"},
        {t_gld_removed, -ENOENT, "cannot open"},
    };
    static float x[T_GLD_FLOATS];
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char dir[T_PATH_MAX], path[T_PATH_MAX];
        t_generate_gld(dir, T_GLD_TINY, 5);
        train_gld_csv_t csv = {0};
        t_load_csv(dir, &csv);
        jf_err_t err = {0};
        train_dataset_t *ds = train_dataset_open(dir, &err);
        assert_non_null(ds);
        rows[i].mutate(dir, &csv);
        int64_t y = -1;
        train_dataset_req_t req = {.index = 0, .aug_seed = 1};
        assert_int_equal(train_dataset_fetch(ds, &req, x, &y, &err), rows[i].code);
        print_message("row %zu: %s\n", i, err.msg);
        t_image_path(path, dir, csv.rows[0].image_id);
        assert_non_null(strstr(err.msg, path));
        assert_non_null(strstr(err.msg, rows[i].fragment));
        assert_int_equal(y, -1);
        req.index = 1; // the other image still reads
        assert_int_equal(train_dataset_fetch(ds, &req, x, &y, &err), 0);
        train_dataset_destroy(&ds);
        train_gld_csv_fini(&csv);
        jft_tmpdir_remove(dir);
    }
}

static void t_gld_no_csv(const char *dir, const train_gld_csv_t *csv)
{
    (void)csv;
    char path[T_PATH_MAX];
    t_path(path, dir, "train.csv");
    assert_int_equal(unlink(path), 0);
}

static void t_gld_no_images_dir(const char *dir, const train_gld_csv_t *csv)
{
    char path[T_PATH_MAX];
    for (size_t i = 0; i < csv->count; i++) {
        t_image_path(path, dir, csv->rows[i].image_id);
        assert_int_equal(unlink(path), 0);
    }
    t_path(path, dir, "images");
    assert_int_equal(rmdir(path), 0);
}

static void t_gld_bad_header(const char *dir, const train_gld_csv_t *csv)
{
    (void)csv;
    char path[T_PATH_MAX];
    t_path(path, dir, "train.csv");
    assert_int_equal(jft_write_file(path, "user,image,label\n0,x,1\n"), 0);
}

static void t_gld_duplicate(const char *dir, const train_gld_csv_t *csv)
{
    char path[T_PATH_MAX], text[512];
    t_path(path, dir, "train.csv");
    (void)snprintf(text, sizeof text, "user_id,image_id,class\n0,%s,1\n0,%s,2\n0,%s,3\n",
                   csv->rows[0].image_id, csv->rows[1].image_id, csv->rows[0].image_id);
    assert_int_equal(jft_write_file(path, text), 0);
}

static void t_gld_plus_mnist(const char *dir, const train_gld_csv_t *csv)
{
    (void)csv;
    char path[T_PATH_MAX];
    t_path(path, dir, TRAIN_MNIST_LABELS_FILE);
    assert_int_equal(jft_write_file(path, ""), 0);
}

static void test_gld_open_rejects_bad_sets(void **state)
{
    (void)state;
    const struct {
        t_gld_mutate_fn *mutate;
        int code;
        const char *fragment;
    } rows[] = {
        {t_gld_removed, -ENOENT, "train.csv:2: image '"},
        {t_gld_no_csv, -ENOENT, "/train.csv: cannot open"},
        {t_gld_no_images_dir, -ENOENT, "/images: cannot open"},
        {t_gld_bad_header, -EPROTO, "train.csv:1: header must be 'user_id,image_id,class'"},
        {t_gld_duplicate, -EPROTO, "train.csv:4: image_id '"},
        {t_gld_plus_mnist, -EINVAL, "more than one dataset (mnist and gld23k)"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char dir[T_PATH_MAX];
        t_generate_gld(dir, T_GLD_TINY, 5);
        train_gld_csv_t csv = {0};
        t_load_csv(dir, &csv);
        rows[i].mutate(dir, &csv);
        jf_err_t err = {0};
        train_dataset_t *ds = train_dataset_open(dir, &err);
        print_message("row %zu: %s\n", i, err.msg);
        assert_null(ds);
        assert_int_equal(err.code, rows[i].code);
        assert_non_null(strstr(err.msg, rows[i].fragment));
        train_gld_csv_fini(&csv);
        jft_tmpdir_remove(dir);
    }
}

static void test_datagen_refuses_a_second_kind(void **state)
{
    (void)state;
    char dir[T_PATH_MAX];
    t_generate(dir, TRAIN_DATASET_MNIST, 1);
    train_datagen_opts_t o = {
        .kind = TRAIN_DATASET_GLD23K, .scale = T_GLD_TINY, .seed = 1, .out_dir = dir};
    jf_err_t err = {0};
    assert_int_equal(train_datagen_write(&o, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "already holds mnist files"));
    o.kind = TRAIN_DATASET_MNIST; // the same kind again replaces it
    assert_int_equal(train_datagen_write(&o, &err), 0);
    jft_tmpdir_remove(dir);
}

static void t_expect_mismatch(const char *model, const char *dir, const char *fragment)
{
    train_run_opts_t o = {.data_dir = dir, .device = "cpu", .batch = 4, .epochs = 1};
    (void) snprintf(o.run.model, sizeof o.run.model, "%s", model);
    jf_err_t err = {0};
    train_run_t *run = train_run_new(&o, stdout, &err);
    print_message("%s: %s\n", model, err.msg);
    assert_null(run);
    assert_int_equal(err.code, -EINVAL);
    assert_non_null(strstr(err.msg, fragment));
}

static void test_run_pairs_models_with_datasets(void **state)
{
    (void)state;
    char gld[T_PATH_MAX], mnist[T_PATH_MAX];
    t_generate_gld(gld, T_GLD_TINY, 1);
    t_generate(mnist, TRAIN_DATASET_MNIST, 1);
    t_expect_mismatch("lenet5", gld,
                      "model 'lenet5' needs 1x28x28 input with 10 classes (mnist), but");
    t_expect_mismatch("lenet5", gld, "holds gld23k with 3x224x224 and 203 classes");
    t_expect_mismatch("resnet18", gld, "needs 3x32x32 input with 10 classes (cifar10)");
    t_expect_mismatch("mobilenetv3", mnist,
                      "model 'mobilenetv3' needs 3x224x224 input with 203 classes (gld23k)");
    jft_tmpdir_remove(gld);
    jft_tmpdir_remove(mnist);
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
        cmocka_unit_test(test_datagen_gld_is_deterministic_and_readable),
        cmocka_unit_test(test_gld_fetch_is_reproducible_per_seed),
        cmocka_unit_test(test_gld_loader_reproducible_per_epoch_and_workers),
        cmocka_unit_test(test_gld_bad_image_fails_naming_the_file),
        cmocka_unit_test(test_gld_open_rejects_bad_sets),
        cmocka_unit_test(test_datagen_refuses_a_second_kind),
        cmocka_unit_test(test_run_pairs_models_with_datasets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
