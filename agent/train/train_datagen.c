/* Synthetic MNIST, CIFAR-10 and GLD-23k writers. A class template is a grid of bright and dark
 * cells (4x4-pixel blocks, per channel for CIFAR-10) drawn from the seed; an image is its class's
 * template plus uniform noise. Headers and record layouts follow the real formats exactly. A
 * GLD-23k class is a smooth pattern of seeded sine waves per channel, shifted per image, plus
 * noise that sets the JPEG size; each image has its own rng stream, so image i is the same
 * whatever the scale. */
#include "train_datagen.h"

#include "jf_fs.h"
#include "jf_rng.h"

#include "train_gld.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <turbojpeg.h>

#define TRAIN_DATAGEN_CELL       4   // template cell side, pixels
#define TRAIN_DATAGEN_BRIGHT     210 // pixel value of a bright template cell
#define TRAIN_DATAGEN_DARK       30  // pixel value of a dark template cell
#define TRAIN_DATAGEN_NOISE      60  // noise is uniform in -NOISE..+NOISE
#define TRAIN_DATAGEN_DIR_MODE   0755
#define TRAIN_DATAGEN_STREAM_ALL 1 // rng stream for templates, labels and noise
// GLD-23k streams: one per class template, one per image (labels, id, shift and noise).
#define S_GLD_STREAM_CLASS (UINT64_C(1) << 32)
#define S_GLD_STREAM_IMAGE (UINT64_C(2) << 32)
#define S_SMALL_CLASSES    TRAIN_MNIST_CLASSES // MNIST and CIFAR-10 both have 10 classes
#define S_GLD_CHANNELS     3
#define S_GLD_SHIFT_MAX    256  // a pattern is shifted by 0..255 pixels per image and axis
#define S_GLD_ID_BYTES     17   // 16 hex digits and the NUL
#define S_GLD_MID          128  // mid-grey, the patterns' centre level
#define S_GLD_BASE_SPREAD  40.0 // a class's base level is MID + -SPREAD..SPREAD per channel
#define S_GLD_SLOW_AMP     45.0 // levels, at most, of the slow wave along each axis
#define S_GLD_SLOW_FREQ    0.03 // rad/pixel, at most (a period of 200 pixels and more)
#define S_GLD_FAST_AMP     15.0 // levels, at most, of the faster wave
#define S_GLD_FAST_FREQ    0.12 // rad/pixel, at most (a period of 50 pixels and more)
#define S_WAVE_AMP_MIN     0.25 // a wave's amplitude is 0.25..1 times its maximum
#define S_WAVE_FREQ_MIN    0.1  // and its frequency 0.1..1 times its maximum

typedef struct s_gen {
    jf_rng_t rng;
    size_t image_bytes;                                                // bytes per image
    int side;                                                          // pixels per side
    unsigned char templates[S_SMALL_CLASSES][TRAIN_CIFAR_IMAGE_BYTES]; // per class
} s_gen_t;

// One sine wave along an axis: amplitude (levels), angular frequency (rad/pixel), phase (rad).
typedef struct s_wave {
    double amp, freq, phase;
} s_wave_t;

// A GLD-23k class: per channel a base level and two waves along x and two along y.
typedef struct s_gld_class {
    double base[S_GLD_CHANNELS];
    s_wave_t x[S_GLD_CHANNELS][2], y[S_GLD_CHANNELS][2];
} s_gld_class_t;

typedef struct s_gld_gen {
    const train_datagen_opts_t *opts; // borrowed
    size_t count;                     // images to write
    size_t users;                     // users to spread them over
    tjhandle tj;                      // owned; TurboJPEG compressor
    unsigned char *rgb;               // owned; WIDTH * HEIGHT * 3
    unsigned char *jpeg;              // owned; tjBufSize bytes, reused for every image
    unsigned long jpeg_cap;           // bytes in jpeg
    char *images_dir;                 // owned; out_dir + "/images"
    int16_t col[S_GLD_CHANNELS][TRAIN_DATAGEN_GLD_WIDTH];  // this image's x pattern, levels
    int16_t row[S_GLD_CHANNELS][TRAIN_DATAGEN_GLD_HEIGHT]; // this image's y pattern, levels
} s_gld_gen_t;

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
    switch (kind) {
    case TRAIN_DATASET_MNIST:
        return s_round_at_least_one(TRAIN_MNIST_SAMPLES * scale);
    case TRAIN_DATASET_CIFAR10:
        return TRAIN_CIFAR_FILES * s_round_at_least_one(TRAIN_CIFAR_BATCH_SAMPLES * scale);
    case TRAIN_DATASET_GLD23K:
        return s_round_at_least_one(TRAIN_GLD_SAMPLES * scale);
    }
    return 0;
}

size_t train_datagen_gld_users(double scale)
{
    size_t users = s_round_at_least_one(TRAIN_GLD_USERS * scale);
    size_t images = train_datagen_samples(TRAIN_DATASET_GLD23K, scale);
    return users < images ? users : images;
}

static void s_gen_init(s_gen_t *g, int channels, int side, uint64_t seed)
{
    jf_rng_seed(&g->rng, seed, TRAIN_DATAGEN_STREAM_ALL);
    g->side = side;
    g->image_bytes = (size_t)channels * (size_t)side * (size_t)side;
    int cells = side / TRAIN_DATAGEN_CELL;
    for (int k = 0; k < S_SMALL_CLASSES; k++) {
        for (int c = 0; c < channels; c++) {
            unsigned char cell[TRAIN_CIFAR_SIDE / TRAIN_DATAGEN_CELL]
                              [TRAIN_CIFAR_SIDE / TRAIN_DATAGEN_CELL];
            for (int i = 0; i < cells * cells; i++) {
                bool bright = jf_rng_below(&g->rng, 2) == 1;
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
    int label = (int)jf_rng_below(&g->rng, S_SMALL_CLASSES);
    for (size_t i = 0; i < g->image_bytes; i++) {
        int noise = (int)jf_rng_below(&g->rng, 2 * TRAIN_DATAGEN_NOISE + 1);
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

// A uniform number in [lo, hi) from rng.
static double s_uniform(jf_rng_t *rng, double lo, double hi)
{
    return lo + (hi - lo) * jf_rng_uniform(rng);
}

static s_wave_t s_draw_wave(jf_rng_t *rng, double amp_max, double freq_max)
{
    return (s_wave_t){.amp = s_uniform(rng, S_WAVE_AMP_MIN * amp_max, amp_max),
                      .freq = s_uniform(rng, S_WAVE_FREQ_MIN * freq_max, freq_max),
                      .phase = s_uniform(rng, 0.0, 2.0 * M_PI)};
}

// Class k's pattern, the same for every image of the class: a base colour, a slow and a faster
// wave per axis and channel.
static s_gld_class_t s_gld_class(uint64_t seed, int k)
{
    jf_rng_t rng;
    jf_rng_seed(&rng, seed, S_GLD_STREAM_CLASS + (uint64_t)k);
    s_gld_class_t cls = {0};
    for (int c = 0; c < S_GLD_CHANNELS; c++) {
        cls.base[c] = s_uniform(&rng, -S_GLD_BASE_SPREAD, S_GLD_BASE_SPREAD);
        cls.x[c][0] = s_draw_wave(&rng, S_GLD_SLOW_AMP, S_GLD_SLOW_FREQ);
        cls.x[c][1] = s_draw_wave(&rng, S_GLD_FAST_AMP, S_GLD_FAST_FREQ);
        cls.y[c][0] = s_draw_wave(&rng, S_GLD_SLOW_AMP, S_GLD_SLOW_FREQ);
        cls.y[c][1] = s_draw_wave(&rng, S_GLD_FAST_AMP, S_GLD_FAST_FREQ);
    }
    return cls;
}

static double s_waves(const s_wave_t w[2], int at)
{
    return w[0].amp * sin(w[0].freq * at + w[0].phase) +
           w[1].amp * sin(w[1].freq * at + w[1].phase);
}

// Fills g->col and g->row with class cls shifted by (dx, dy).
static void s_gld_axes(s_gld_gen_t *g, const s_gld_class_t *cls, int dx, int dy)
{
    for (int c = 0; c < S_GLD_CHANNELS; c++) {
        for (int x = 0; x < TRAIN_DATAGEN_GLD_WIDTH; x++) {
            g->col[c][x] = (int16_t)lrint(S_GLD_MID + cls->base[c] + s_waves(cls->x[c], x + dx));
        }
        for (int y = 0; y < TRAIN_DATAGEN_GLD_HEIGHT; y++) {
            g->row[c][y] = (int16_t)lrint(s_waves(cls->y[c], y + dy));
        }
    }
}

// Draws the pixels of the current image into g->rgb: pattern plus noise, eight noise values
// from each 64 random bits.
static void s_gld_pixels(s_gld_gen_t *g, jf_rng_t *rng)
{
    enum { SPAN = 2 * TRAIN_DATAGEN_GLD_NOISE + 1, BYTES = 8 };
    unsigned char *p = g->rgb;
    uint64_t bits = 0;
    int left = 0;
    for (int y = 0; y < TRAIN_DATAGEN_GLD_HEIGHT; y++) {
        for (int x = 0; x < TRAIN_DATAGEN_GLD_WIDTH; x++) {
            for (int c = 0; c < S_GLD_CHANNELS; c++) {
                if (left == 0) {
                    bits = jf_rng_next(rng);
                    left = BYTES;
                }
                int noise = (int)(((bits & 0xff) * SPAN) >> 8) - TRAIN_DATAGEN_GLD_NOISE;
                bits >>= 8;
                left--;
                int v = g->col[c][x] + g->row[c][y] + noise;
                *p++ = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        }
    }
}

static int s_write_file(const char *dir, const char *name, const void *data, size_t len,
                        jf_err_t *err)
{
    s_out_t out = {0};
    int rc = s_out_open(&out, dir, name, err);
    rc = rc < 0 ? rc : s_out_write(&out, data, len, err);
    return s_out_close(&out, rc, err);
}

// Draws, encodes and writes image i, and its line of train.csv.
static int s_gld_image(s_gld_gen_t *g, size_t i, FILE *csv, jf_err_t *err)
{
    jf_rng_t rng;
    jf_rng_seed(&rng, g->opts->seed, S_GLD_STREAM_IMAGE + i);
    int label = (int)jf_rng_below(&rng, TRAIN_GLD_CLASSES);
    size_t user = (size_t)jf_rng_below(&rng, g->users);
    char id[S_GLD_ID_BYTES], name[S_GLD_ID_BYTES + sizeof TRAIN_GLD_IMAGE_EXT];
    (void)snprintf(id, sizeof id, "%08x%08x", (unsigned)(jf_rng_next(&rng) >> 32),
                   (unsigned)i); // i < 2^32: scale is capped
    (void)snprintf(name, sizeof name, "%s%s", id, TRAIN_GLD_IMAGE_EXT);
    s_gld_class_t cls = s_gld_class(g->opts->seed, label);
    s_gld_axes(g, &cls, (int)jf_rng_below(&rng, S_GLD_SHIFT_MAX),
               (int)jf_rng_below(&rng, S_GLD_SHIFT_MAX));
    s_gld_pixels(g, &rng);
    unsigned long size = g->jpeg_cap;
    if (tjCompress2(g->tj, g->rgb, TRAIN_DATAGEN_GLD_WIDTH, 0, TRAIN_DATAGEN_GLD_HEIGHT, TJPF_RGB,
                    &g->jpeg, &size, TJSAMP_420, TRAIN_DATAGEN_GLD_QUALITY, TJFLAG_NOREALLOC) < 0) {
        return jf_err_set(err, -EIO, "datagen: cannot encode %s: %s", name, tjGetErrorStr2(g->tj));
    }
    int rc = s_write_file(g->images_dir, name, g->jpeg, size, err);
    if (rc == 0 && fprintf(csv, "%zu,%s,%d\n", user, id, label) < 0) {
        rc = jf_err_set(err, -EIO, "datagen: write failed on %s: %s", TRAIN_GLD_CSV_FILE,
                        strerror(errno));
    }
    return rc;
}

static void s_gld_fini(s_gld_gen_t *g)
{
    if (g->tj) {
        (void)tjDestroy(g->tj); // frees the compressor; nothing to report
    }
    tjFree(g->jpeg);
    free(g->rgb);
    free(g->images_dir);
}

static int s_gld_init(s_gld_gen_t *g, const train_datagen_opts_t *opts, jf_err_t *err)
{
    g->opts = opts;
    g->count = train_datagen_samples(TRAIN_DATASET_GLD23K, opts->scale);
    g->users = train_datagen_gld_users(opts->scale);
    size_t size = strlen(opts->out_dir) + sizeof TRAIN_GLD_IMAGES_DIR + 1;
    g->images_dir = malloc(size);
    g->rgb = malloc((size_t)TRAIN_DATAGEN_GLD_WIDTH * TRAIN_DATAGEN_GLD_HEIGHT * S_GLD_CHANNELS);
    g->jpeg_cap = tjBufSize(TRAIN_DATAGEN_GLD_WIDTH, TRAIN_DATAGEN_GLD_HEIGHT, TJSAMP_420);
    g->jpeg = tjAlloc((int)g->jpeg_cap);
    g->tj = tjInitCompress();
    if (!g->images_dir || !g->rgb || !g->jpeg || !g->tj) {
        return jf_err_set(err, -ENOMEM, "datagen: out of memory (or TurboJPEG: %s)",
                          tjGetErrorStr2(g->tj));
    }
    (void)snprintf(g->images_dir, size, "%s/%s", opts->out_dir, TRAIN_GLD_IMAGES_DIR); // sized
    jf_err_t mkerr = {0};
    if (jf_fs_mkdir_p(g->images_dir, TRAIN_DATAGEN_DIR_MODE, &mkerr) < 0) {
        return jf_err_set(err, -EIO, "%s: cannot create directory (%s)", g->images_dir, mkerr.msg);
    }
    return 0;
}

static int s_write_gld(const train_datagen_opts_t *opts, jf_err_t *err)
{
    s_gld_gen_t *g = calloc(1, sizeof *g);
    if (!g) {
        return jf_err_set(err, -ENOMEM, "datagen: out of memory");
    }
    s_out_t csv = {0};
    int rc = s_gld_init(g, opts, err);
    rc = rc < 0 ? rc : s_out_open(&csv, opts->out_dir, TRAIN_GLD_CSV_FILE, err);
    if (rc == 0 && fprintf(csv.file, "%s\n", TRAIN_GLD_CSV_HEADER) < 0) {
        rc = jf_err_set(err, -EIO, "%s: write failed: %s", csv.path, strerror(errno));
    }
    for (size_t i = 0; rc == 0 && i < g->count; i++) {
        rc = s_gld_image(g, i, csv.file, err);
    }
    rc = s_out_close(&csv, rc, err);
    s_gld_fini(g);
    free(g);
    return rc;
}

static int s_check_opts(const train_datagen_opts_t *opts, jf_err_t *err)
{
    if (opts->kind != TRAIN_DATASET_MNIST && opts->kind != TRAIN_DATASET_CIFAR10 &&
        opts->kind != TRAIN_DATASET_GLD23K) {
        return jf_err_set(err, -EINVAL, "datagen: unknown dataset kind %d", (int)opts->kind);
    }
    if (!(opts->scale > 0.0 && opts->scale <= TRAIN_DATAGEN_SCALE_MAX)) {
        return jf_err_set(err, -EINVAL, "datagen: scale must be in (0, %g], got %g",
                          TRAIN_DATAGEN_SCALE_MAX, opts->scale);
    }
    if (!opts->out_dir || !*opts->out_dir) {
        return jf_err_set(err, -EINVAL, "datagen: output directory missing");
    }
    train_dataset_kind_t present = opts->kind;
    jf_err_t found = {0};
    int rc = train_dataset_detect(opts->out_dir, &present, &found);
    if (rc == -EINVAL) {
        return jf_err_set(err, -EINVAL, "datagen: %s", found.msg);
    }
    if (rc == 0 && present != opts->kind) {
        return jf_err_set(err, -EINVAL,
                          "'%.200s' already holds %s files; a second kind would make it "
                          "unreadable, so write %s into its own directory",
                          opts->out_dir, train_dataset_kind_name(present),
                          train_dataset_kind_name(opts->kind));
    }
    return 0;
}

// Writes MNIST or CIFAR-10 into out_dir.
static int s_write_small(const train_datagen_opts_t *opts, jf_err_t *err)
{
    s_gen_t *g = calloc(1, sizeof *g);
    if (!g) {
        return jf_err_set(err, -ENOMEM, "datagen: out of memory");
    }
    int rc = 0;
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

int train_datagen_write(const train_datagen_opts_t *opts, jf_err_t *err)
{
    int rc = s_check_opts(opts, err);
    if (rc < 0) {
        return rc;
    }
    jf_err_t mkerr = {0};
    if (jf_fs_mkdir_p(opts->out_dir, TRAIN_DATAGEN_DIR_MODE, &mkerr) < 0) {
        return jf_err_set(err, -EIO, "%s: cannot create directory (%s)", opts->out_dir, mkerr.msg);
    }
    return opts->kind == TRAIN_DATASET_GLD23K ? s_write_gld(opts, err) : s_write_small(opts, err);
}
