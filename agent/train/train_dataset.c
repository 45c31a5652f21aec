/* MNIST idx and CIFAR-10 binary readers: headers checked at open, samples read per index with
 * pread (so storage speed shows in the fetch time) and normalised as torchvision's Normalize does;
 * GLD-23k is delegated to train_gld. Not a general idx reader: only the training files of the two
 * datasets. */
#include "train_dataset.h"

#include "train_gld.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TRAIN_DATASET_FILES_MAX TRAIN_CIFAR_FILES // MNIST uses two, CIFAR-10 five
#define TRAIN_PIXEL_MAX         255.0f

typedef struct s_file {
    char *path;   // owned; dir + "/" + name, for error messages
    int fd;       // owned; -1 when closed
    off_t size;   // bytes, at open
    size_t first; // CIFAR: index of the file's first sample
    size_t count; // CIFAR: samples in the file
} s_file_t;

struct train_dataset {
    train_dataset_kind_t kind;
    train_dataset_shape_t shape;
    size_t samples;                          // total samples
    s_file_t files[TRAIN_DATASET_FILES_MAX]; // MNIST: images, labels; CIFAR: the five batches
    size_t nfiles;                           // files opened so far
    train_gld_t *gld;                        // owned; gld23k only
};

static const char *const s_kind_names[] = {"mnist", "cifar10", "gld23k"};
static const train_dataset_shape_t s_kind_shapes[] = {
    {1, TRAIN_MNIST_SIDE, TRAIN_MNIST_SIDE, TRAIN_MNIST_CLASSES},
    {TRAIN_CIFAR_CHANNELS, TRAIN_CIFAR_SIDE, TRAIN_CIFAR_SIDE, TRAIN_CIFAR_CLASSES},
    {TRAIN_GLD_CHANNELS, TRAIN_GLD_SIDE, TRAIN_GLD_SIDE, TRAIN_GLD_CLASSES},
};
static const float s_mnist_mean = 0.1307f;
static const float s_mnist_std = 0.3081f;
static const float s_cifar_mean[TRAIN_CIFAR_CHANNELS] = {0.4914f, 0.4822f, 0.4465f};
static const float s_cifar_std[TRAIN_CIFAR_CHANNELS] = {0.2470f, 0.2435f, 0.2616f};

int train_dataset_kind_parse(const char *name, train_dataset_kind_t *ret_kind, jf_err_t *err)
{
    for (size_t i = 0; name && i < sizeof s_kind_names / sizeof s_kind_names[0]; i++) {
        if (strcmp(name, s_kind_names[i]) == 0) {
            *ret_kind = (train_dataset_kind_t)i;
            return 0;
        }
    }
    return jf_err_set(err, -EINVAL,
                      "dataset: unknown kind '%.64s', expected mnist, cifar10 or "
                      "gld23k",
                      name ? name : "(null)");
}

const char *train_dataset_kind_name(train_dataset_kind_t kind)
{
    size_t i = (size_t)kind;
    return i < sizeof s_kind_names / sizeof s_kind_names[0] ? s_kind_names[i] : "unknown";
}

train_dataset_shape_t train_dataset_kind_shape(train_dataset_kind_t kind)
{
    size_t i = (size_t)kind;
    return i < sizeof s_kind_shapes / sizeof s_kind_shapes[0] ? s_kind_shapes[i]
                                                              : (train_dataset_shape_t){0};
}

static char *s_path_join(const char *dir, const char *name)
{
    size_t size = strlen(dir) + strlen(name) + 2;
    char *path = malloc(size);
    if (path) {
        (void)snprintf(path, size, "%s/%s", dir, name); // sized above, cannot truncate
    }
    return path;
}

static bool s_exists(const char *dir, const char *name)
{
    char *path = s_path_join(dir, name);
    struct stat st;
    bool found = path && stat(path, &st) == 0;
    free(path);
    return found;
}

// Opens dir/name into the next file slot.
static int s_file_open(train_dataset_t *self, const char *dir, const char *name, jf_err_t *err)
{
    assert(self->nfiles < TRAIN_DATASET_FILES_MAX);
    s_file_t *f = &self->files[self->nfiles];
    f->path = s_path_join(dir, name);
    if (!f->path) {
        return jf_err_set(err, -ENOMEM, "dataset: out of memory");
    }
    self->nfiles++;
    f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (f->fd < 0 || fstat(f->fd, &st) < 0) {
        int code = errno == ENOENT ? -ENOENT : -EIO;
        return jf_err_set(err, code, "%s: cannot open: %s", f->path, strerror(errno));
    }
    f->size = st.st_size;
    return 0;
}

// Reads exactly len bytes at offset; a short file is an error that names the file.
static int s_read_full(const s_file_t *f, void *buf, size_t len, off_t offset, jf_err_t *err)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(f->fd, (char *)buf + done, len - done, offset + (off_t)done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return jf_err_set(err, -EIO, "%s: read failed at offset %lld: %s", f->path,
                              (long long)offset, strerror(errno));
        }
        if (n == 0) {
            return jf_err_set(err, -EIO,
                              "%s: file ends at offset %lld, %zu bytes short "
                              "(truncated?)",
                              f->path, (long long)(offset + (off_t)done), len - done);
        }
        done += (size_t)n;
    }
    return 0;
}

static uint32_t s_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

// Checks that a file holds exactly header + count * record bytes.
static int s_check_size(const s_file_t *f, size_t header, size_t count, size_t record,
                        jf_err_t *err)
{
    long long expected = (long long)header + (long long)count * (long long)record;
    if ((long long)f->size < expected) {
        return jf_err_set(err, -EPROTO, "%s: truncated: %zu records need %lld bytes, file has %lld",
                          f->path, count, expected, (long long)f->size);
    }
    if ((long long)f->size > expected) {
        return jf_err_set(err, -EPROTO,
                          "%s: %lld bytes, expected %lld for %zu records (trailing "
                          "data)",
                          f->path, (long long)f->size, expected, count);
    }
    return 0;
}

// Reads an idx header of words big-endian uint32 values and checks the magic.
static int s_read_idx_header(const s_file_t *f, uint32_t magic, uint32_t *ret_words, size_t words,
                             jf_err_t *err)
{
    unsigned char raw[TRAIN_MNIST_IMAGES_HEADER] = {0};
    assert(words * 4 <= sizeof raw);
    if ((size_t)f->size < words * 4) {
        return jf_err_set(err, -EPROTO, "%s: truncated: %lld bytes, the idx header needs %zu",
                          f->path, (long long)f->size, words * 4);
    }
    int rc = s_read_full(f, raw, words * 4, 0, err);
    if (rc < 0) {
        return rc;
    }
    for (size_t i = 0; i < words; i++) {
        ret_words[i] = s_be32(raw + 4 * i);
    }
    if (ret_words[0] != magic) {
        return jf_err_set(err, -EPROTO, "%s: bad magic %u, expected %u", f->path, ret_words[0],
                          magic);
    }
    return 0;
}

static int s_open_mnist(train_dataset_t *self, const char *dir, jf_err_t *err)
{
    uint32_t img[4] = {0}, lab[2] = {0};
    int rc = s_file_open(self, dir, TRAIN_MNIST_IMAGES_FILE, err);
    rc = rc < 0 ? rc : s_file_open(self, dir, TRAIN_MNIST_LABELS_FILE, err);
    rc = rc < 0 ? rc : s_read_idx_header(&self->files[0], TRAIN_MNIST_IMAGES_MAGIC, img, 4, err);
    rc = rc < 0 ? rc : s_read_idx_header(&self->files[1], TRAIN_MNIST_LABELS_MAGIC, lab, 2, err);
    if (rc < 0) {
        return rc;
    }
    if (img[2] != TRAIN_MNIST_SIDE || img[3] != TRAIN_MNIST_SIDE) {
        return jf_err_set(err, -EPROTO, "%s: images are %ux%u, expected %dx%d", self->files[0].path,
                          img[2], img[3], TRAIN_MNIST_SIDE, TRAIN_MNIST_SIDE);
    }
    if (img[1] == 0 || img[1] != lab[1]) {
        return jf_err_set(err, -EPROTO, "%s: %u labels for %u images in %s", self->files[1].path,
                          lab[1], img[1], TRAIN_MNIST_IMAGES_FILE);
    }
    rc = s_check_size(&self->files[0], TRAIN_MNIST_IMAGES_HEADER, img[1],
                      TRAIN_MNIST_SIDE * TRAIN_MNIST_SIDE, err);
    rc = rc < 0 ? rc : s_check_size(&self->files[1], TRAIN_MNIST_LABELS_HEADER, lab[1], 1, err);
    self->samples = img[1];
    return rc;
}

static int s_open_cifar(train_dataset_t *self, const char *dir, jf_err_t *err)
{
    for (int i = 0; i < TRAIN_CIFAR_FILES; i++) {
        char name[32];
        (void)snprintf(name, sizeof name, TRAIN_CIFAR_FILE_FORMAT, i + 1); // fits
        int rc = s_file_open(self, dir, name, err);
        if (rc < 0) {
            return rc;
        }
        s_file_t *f = &self->files[i];
        if (f->size == 0 || f->size % TRAIN_CIFAR_RECORD_BYTES != 0) {
            return jf_err_set(err, -EPROTO,
                              "%s: %lld bytes is not a positive multiple of the "
                              "%d-byte record (truncated?)",
                              f->path, (long long)f->size, TRAIN_CIFAR_RECORD_BYTES);
        }
        f->first = self->samples;
        f->count = (size_t)f->size / TRAIN_CIFAR_RECORD_BYTES;
        self->samples += f->count;
    }
    return 0;
}

static int s_open_gld(train_dataset_t *self, const char *dir, jf_err_t *err)
{
    self->gld = train_gld_open(dir, err);
    if (!self->gld) {
        return err && err->code < 0 ? err->code : -EIO;
    }
    self->samples = train_gld_size(self->gld);
    return 0;
}

int train_dataset_detect(const char *dir, train_dataset_kind_t *ret_kind, jf_err_t *err)
{
    const bool present[] = {
        s_exists(dir, TRAIN_MNIST_IMAGES_FILE) || s_exists(dir, TRAIN_MNIST_LABELS_FILE),
        s_exists(dir, "data_batch_1.bin"),
        s_exists(dir, TRAIN_GLD_CSV_FILE) || s_exists(dir, TRAIN_GLD_IMAGES_DIR),
    };
    char kinds[64] = "";
    size_t found = 0, kind = 0;
    for (size_t i = 0; i < sizeof present / sizeof present[0]; i++) {
        if (present[i]) {
            size_t at = strlen(kinds);
            (void)snprintf(kinds + at, sizeof kinds - at, "%s%s", found ? " and " : "",
                           s_kind_names[i]); // three short names fit
            kind = found++ == 0 ? i : kind;
        }
    }
    if (found > 1) {
        return jf_err_set(err, -EINVAL,
                          "%s: holds files of more than one dataset (%s); keep one dataset per "
                          "directory",
                          dir, kinds);
    }
    if (found == 0) {
        return jf_err_set(err, -ENOENT,
                          "%s: no dataset found: expected %s and %s (mnist), "
                          "data_batch_1.bin .. data_batch_5.bin (cifar10) or %s and %s/ (gld23k)",
                          dir, TRAIN_MNIST_IMAGES_FILE, TRAIN_MNIST_LABELS_FILE, TRAIN_GLD_CSV_FILE,
                          TRAIN_GLD_IMAGES_DIR);
    }
    *ret_kind = (train_dataset_kind_t)kind;
    return 0;
}

train_dataset_t *train_dataset_open(const char *dir, jf_err_t *err)
{
    train_dataset_kind_t kind = TRAIN_DATASET_MNIST;
    if (train_dataset_detect(dir, &kind, err) < 0) {
        return NULL;
    }
    train_dataset_t *self = calloc(1, sizeof *self);
    if (!self) {
        (void)jf_err_set(err, -ENOMEM, "dataset: out of memory");
        return NULL;
    }
    self->kind = kind;
    self->shape = train_dataset_kind_shape(kind);
    for (size_t i = 0; i < TRAIN_DATASET_FILES_MAX; i++) {
        self->files[i].fd = -1;
    }
    int rc = kind == TRAIN_DATASET_MNIST     ? s_open_mnist(self, dir, err)
             : kind == TRAIN_DATASET_CIFAR10 ? s_open_cifar(self, dir, err)
                                             : s_open_gld(self, dir, err);
    if (rc < 0) {
        train_dataset_destroy(&self);
    }
    return self;
}

void train_dataset_destroy(train_dataset_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    train_dataset_t *self = *self_p;
    for (size_t i = 0; i < self->nfiles; i++) {
        if (self->files[i].fd >= 0) {
            (void)close(self->files[i].fd); // read-only: nothing to lose on close
        }
        free(self->files[i].path);
    }
    train_gld_destroy(&self->gld);
    free(self);
    *self_p = NULL;
}

train_dataset_kind_t train_dataset_kind(const train_dataset_t *self)
{
    return self->kind;
}

size_t train_dataset_size(const train_dataset_t *self)
{
    return self->samples;
}

train_dataset_shape_t train_dataset_shape(const train_dataset_t *self)
{
    return self->shape;
}

size_t train_dataset_sample_floats(const train_dataset_t *self)
{
    return (size_t)self->shape.channels * (size_t)self->shape.height * (size_t)self->shape.width;
}

static int s_check_label(const s_file_t *f, size_t index, unsigned char label, int classes,
                         jf_err_t *err)
{
    if (label >= classes) {
        return jf_err_set(err, -EPROTO, "%s: sample %zu has label %u, expected 0..%d", f->path,
                          index, label, classes - 1);
    }
    return 0;
}

static int s_fetch_mnist(const train_dataset_t *self, size_t index, float *ret_x, int64_t *ret_y,
                         jf_err_t *err)
{
    enum { PIXELS = TRAIN_MNIST_SIDE * TRAIN_MNIST_SIDE };
    unsigned char raw[PIXELS];
    unsigned char label = 0;
    off_t at = TRAIN_MNIST_IMAGES_HEADER + (off_t)index * PIXELS;
    int rc = s_read_full(&self->files[0], raw, PIXELS, at, err);
    at = TRAIN_MNIST_LABELS_HEADER + (off_t)index;
    rc = rc < 0 ? rc : s_read_full(&self->files[1], &label, 1, at, err);
    rc = rc < 0 ? rc : s_check_label(&self->files[1], index, label, TRAIN_MNIST_CLASSES, err);
    if (rc < 0) {
        return rc;
    }
    for (size_t i = 0; i < PIXELS; i++) {
        ret_x[i] = ((float)raw[i] / TRAIN_PIXEL_MAX - s_mnist_mean) / s_mnist_std;
    }
    *ret_y = label;
    return 0;
}

static int s_fetch_cifar(const train_dataset_t *self, size_t index, float *ret_x, int64_t *ret_y,
                         jf_err_t *err)
{
    enum { PLANE = TRAIN_CIFAR_SIDE * TRAIN_CIFAR_SIDE };
    size_t k = 0;
    while (index >= self->files[k].first + self->files[k].count) {
        k++; // index < samples, so this stops at the last file at the latest
    }
    const s_file_t *f = &self->files[k];
    unsigned char raw[TRAIN_CIFAR_RECORD_BYTES];
    off_t at = (off_t)(index - f->first) * TRAIN_CIFAR_RECORD_BYTES;
    int rc = s_read_full(f, raw, sizeof raw, at, err);
    rc = rc < 0 ? rc : s_check_label(f, index - f->first, raw[0], TRAIN_CIFAR_CLASSES, err);
    if (rc < 0) {
        return rc;
    }
    // The record's image is already CHW: 1024 red, 1024 green, 1024 blue bytes.
    for (size_t i = 0; i < TRAIN_CIFAR_IMAGE_BYTES; i++) {
        size_t c = i / PLANE;
        ret_x[i] = ((float)raw[1 + i] / TRAIN_PIXEL_MAX - s_cifar_mean[c]) / s_cifar_std[c];
    }
    *ret_y = raw[0];
    return 0;
}

int train_dataset_fetch(const train_dataset_t *self, const train_dataset_req_t *req, float *ret_x,
                        int64_t *ret_y, jf_err_t *err)
{
    if (req->index >= self->samples) {
        return jf_err_set(err, -EINVAL, "dataset: sample %zu out of range, %zu samples", req->index,
                          self->samples);
    }
    switch (self->kind) {
    case TRAIN_DATASET_MNIST:
        return s_fetch_mnist(self, req->index, ret_x, ret_y, err);
    case TRAIN_DATASET_CIFAR10:
        return s_fetch_cifar(self, req->index, ret_x, ret_y, err);
    case TRAIN_DATASET_GLD23K:
        break;
    }
    return train_gld_fetch(self->gld, req, ret_x, ret_y, err);
}
