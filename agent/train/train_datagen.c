/* Synthetic MNIST and CIFAR-10 writers. A class template is a grid of bright and dark cells
 * (4x4-pixel blocks, per channel for CIFAR-10) drawn from the seed; an image is its class's
 * template plus uniform noise. Headers and record layouts follow the real formats exactly. */
#include "train_datagen.h"

#include "jf_fs.h"

#include "train_rng.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TRAIN_DATAGEN_CELL       4   // template cell side, pixels
#define TRAIN_DATAGEN_BRIGHT     210 // pixel value of a bright template cell
#define TRAIN_DATAGEN_DARK       30  // pixel value of a dark template cell
#define TRAIN_DATAGEN_NOISE      60  // noise is uniform in -NOISE..+NOISE
#define TRAIN_DATAGEN_DIR_MODE   0755
#define TRAIN_DATAGEN_STREAM_ALL 1 // rng stream for templates, labels and noise

typedef struct s_gen {
    train_rng_t rng;
    size_t image_bytes;                                                      // bytes per image
    int side;                                                                // pixels per side
    unsigned char templates[TRAIN_DATASET_CLASSES][TRAIN_CIFAR_IMAGE_BYTES]; // per class
} s_gen_t;

typedef struct s_out {
    char *path; // owned
    FILE *file; // owned; NULL when closed
} s_out_t;

static size_t s_round_at_least_one(double value)
{
    double r = floor(value + 0.5);
    return r < 1.0 ? 1 : (size_t)r;
}

size_t train_datagen_samples(train_dataset_kind_t kind, double scale)
{
    if (kind == TRAIN_DATASET_MNIST) {
        return s_round_at_least_one(TRAIN_MNIST_SAMPLES * scale);
    }
    if (kind == TRAIN_DATASET_CIFAR10) {
        return TRAIN_CIFAR_FILES * s_round_at_least_one(TRAIN_CIFAR_BATCH_SAMPLES * scale);
    }
    return 0;
}

static void s_gen_init(s_gen_t *g, int channels, int side, uint64_t seed)
{
    train_rng_seed(&g->rng, seed, TRAIN_DATAGEN_STREAM_ALL);
    g->side = side;
    g->image_bytes = (size_t)channels * (size_t)side * (size_t)side;
    int cells = side / TRAIN_DATAGEN_CELL;
    for (int k = 0; k < TRAIN_DATASET_CLASSES; k++) {
        for (int c = 0; c < channels; c++) {
            unsigned char cell[TRAIN_CIFAR_SIDE / TRAIN_DATAGEN_CELL]
                              [TRAIN_CIFAR_SIDE / TRAIN_DATAGEN_CELL];
            for (int i = 0; i < cells * cells; i++) {
                bool bright = train_rng_below(&g->rng, 2) == 1;
                cell[i / cells][i % cells] = bright ? TRAIN_DATAGEN_BRIGHT : TRAIN_DATAGEN_DARK;
            }
            unsigned char *plane = g->templates[k] + (size_t)c * (size_t)(side * side);
            for (int p = 0; p < side * side; p++) {
                plane[p] = cell[p / side / TRAIN_DATAGEN_CELL][p % side / TRAIN_DATAGEN_CELL];
            }
        }
    }
}

// Draws a label and writes its image (template plus noise) into out.
static int s_gen_image(s_gen_t *g, unsigned char *out)
{
    int label = (int)train_rng_below(&g->rng, TRAIN_DATASET_CLASSES);
    for (size_t i = 0; i < g->image_bytes; i++) {
        int noise = (int)train_rng_below(&g->rng, 2 * TRAIN_DATAGEN_NOISE + 1);
        int value = g->templates[label][i] + noise - TRAIN_DATAGEN_NOISE;
        out[i] = (unsigned char)(value < 0 ? 0 : value > 255 ? 255 : value);
    }
    return label;
}

static int s_out_open(s_out_t *out, const char *dir, const char *name, jf_err_t *err)
{
    size_t size = strlen(dir) + strlen(name) + 2;
    out->path = malloc(size);
    if (!out->path) {
        return jf_err_set(err, -ENOMEM, "datagen: out of memory");
    }
    (void)snprintf(out->path, size, "%s/%s", dir, name); // sized above
    out->file = fopen(out->path, "wb");
    if (!out->file) {
        return jf_err_set(err, -EIO, "%s: cannot create: %s", out->path, strerror(errno));
    }
    return 0;
}

static int s_out_write(s_out_t *out, const void *data, size_t len, jf_err_t *err)
{
    if (fwrite(data, 1, len, out->file) != len) {
        return jf_err_set(err, -EIO, "%s: write failed: %s", out->path, strerror(errno));
    }
    return 0;
}

// Closes out and frees its path. Returns rc, or -EIO if rc was 0 and the close failed.
static int s_out_close(s_out_t *out, int rc, jf_err_t *err)
{
    if (out->file && fclose(out->file) != 0 && rc == 0) {
        rc = jf_err_set(err, -EIO, "%s: write failed at close: %s", out->path, strerror(errno));
    }
    free(out->path);
    *out = (s_out_t){0};
    return rc;
}

static int s_write_be32s(s_out_t *out, const uint32_t *words, size_t count, jf_err_t *err)
{
    unsigned char raw[16];
    for (size_t i = 0; i < count && i < sizeof raw / 4; i++) {
        raw[4 * i] = (unsigned char)(words[i] >> 24);
        raw[4 * i + 1] = (unsigned char)(words[i] >> 16);
        raw[4 * i + 2] = (unsigned char)(words[i] >> 8);
        raw[4 * i + 3] = (unsigned char)words[i];
    }
    return s_out_write(out, raw, 4 * count, err);
}

static int s_write_mnist(s_gen_t *g, const char *dir, size_t count, jf_err_t *err)
{
    s_out_t images = {0}, labels = {0};
    const uint32_t ihead[] = {TRAIN_MNIST_IMAGES_MAGIC, (uint32_t)count, TRAIN_MNIST_SIDE,
                              TRAIN_MNIST_SIDE};
    const uint32_t lhead[] = {TRAIN_MNIST_LABELS_MAGIC, (uint32_t)count};
    int rc = s_out_open(&images, dir, TRAIN_MNIST_IMAGES_FILE, err);
    rc = rc < 0 ? rc : s_out_open(&labels, dir, TRAIN_MNIST_LABELS_FILE, err);
    rc = rc < 0 ? rc : s_write_be32s(&images, ihead, 4, err);
    rc = rc < 0 ? rc : s_write_be32s(&labels, lhead, 2, err);
    for (size_t i = 0; rc == 0 && i < count; i++) {
        unsigned char image[TRAIN_MNIST_SIDE * TRAIN_MNIST_SIDE];
        unsigned char label = (unsigned char)s_gen_image(g, image);
        rc = s_out_write(&images, image, sizeof image, err);
        rc = rc < 0 ? rc : s_out_write(&labels, &label, 1, err);
    }
    rc = s_out_close(&images, rc, err);
    return s_out_close(&labels, rc, err);
}

static int s_write_cifar(s_gen_t *g, const char *dir, size_t per_file, jf_err_t *err)
{
    int rc = 0;
    for (int k = 1; rc == 0 && k <= TRAIN_CIFAR_FILES; k++) {
        char name[32];
        (void)snprintf(name, sizeof name, TRAIN_CIFAR_FILE_FORMAT, k); // fits
        s_out_t out = {0};
        rc = s_out_open(&out, dir, name, err);
        for (size_t i = 0; rc == 0 && i < per_file; i++) {
            unsigned char record[TRAIN_CIFAR_RECORD_BYTES];
            record[0] = (unsigned char)s_gen_image(g, record + 1);
            rc = s_out_write(&out, record, sizeof record, err);
        }
        rc = s_out_close(&out, rc, err);
    }
    return rc;
}

static int s_check_opts(const train_datagen_opts_t *opts, jf_err_t *err)
{
    if (opts->kind == TRAIN_DATASET_GLD23K) {
        return jf_err_set(err, -ENOTSUP, "datagen: kind 'gld23k' not built yet");
    }
    if (opts->kind != TRAIN_DATASET_MNIST && opts->kind != TRAIN_DATASET_CIFAR10) {
        return jf_err_set(err, -EINVAL, "datagen: unknown dataset kind %d", (int)opts->kind);
    }
    if (!(opts->scale > 0.0 && opts->scale <= TRAIN_DATAGEN_SCALE_MAX)) {
        return jf_err_set(err, -EINVAL, "datagen: scale must be in (0, %g], got %g",
                          TRAIN_DATAGEN_SCALE_MAX, opts->scale);
    }
    if (!opts->out_dir || !*opts->out_dir) {
        return jf_err_set(err, -EINVAL, "datagen: output directory missing");
    }
    return 0;
}

int train_datagen_write(const train_datagen_opts_t *opts, jf_err_t *err)
{
    int rc = s_check_opts(opts, err);
    if (rc < 0) {
        return rc;
    }
    jf_err_t mkerr = {0};
    if (jf_fs_mkdir_p(opts->out_dir, TRAIN_DATAGEN_DIR_MODE, &mkerr) < 0) {
        return jf_err_set(err, -EIO, "%s: cannot create directory (%s)", opts->out_dir,
                          mkerr.msg);
    }
    s_gen_t *g = calloc(1, sizeof *g);
    if (!g) {
        return jf_err_set(err, -ENOMEM, "datagen: out of memory");
    }
    if (opts->kind == TRAIN_DATASET_MNIST) {
        s_gen_init(g, 1, TRAIN_MNIST_SIDE, opts->seed);
        rc = s_write_mnist(g, opts->out_dir, train_datagen_samples(opts->kind, opts->scale), err);
    } else {
        s_gen_init(g, TRAIN_CIFAR_CHANNELS, TRAIN_CIFAR_SIDE, opts->seed);
        size_t per_file = train_datagen_samples(opts->kind, opts->scale) / TRAIN_CIFAR_FILES;
        rc = s_write_cifar(g, opts->out_dir, per_file, err);
    }
    free(g);
    return rc;
}
