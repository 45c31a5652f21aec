/* GLD-23k reader: train.csv checked at open, one JPEG read per fetch. Each fetch borrows a scratch
 * (a JPEG decoder, a resizer and a path buffer, all reused) from a small pool under a mutex, so
 * parallel loader workers decode without allocating per sample and without sharing a decoder. */
#include "train_gld.h"

#include "jf_rng.h"
#include "train_jpeg.h"
#include "train_transform.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct s_scratch {
    train_jpeg_t *jpeg;           // owned
    train_transform_t *transform; // owned
    char *path;                   // owned; path_size bytes: the image being fetched
    bool busy;                    // borrowed by a fetch (guarded by the pool's lock)
} s_scratch_t;

typedef struct s_pool {
    pthread_mutex_t lock;
    s_scratch_t *slots[TRAIN_GLD_SCRATCH_MAX]; // owned; the first count are made
    size_t count;                              // guarded by lock
} s_pool_t;

struct train_gld {
    char *images_dir;    // owned; dir + "/images"
    size_t path_size;    // bytes of any image path, with the NUL
    train_gld_csv_t csv; // sample i is csv.rows[i]
    s_pool_t *pool;      // owned; mutable through a const dataset: fetches share it
};

static void s_scratch_destroy(s_scratch_t **self_p)
{
    if (!*self_p) {
        return;
    }
    train_jpeg_destroy(&(*self_p)->jpeg);
    train_transform_destroy(&(*self_p)->transform);
    free((*self_p)->path);
    free(*self_p);
    *self_p = NULL;
}

static s_scratch_t *s_scratch_new(size_t path_size, jf_err_t *err)
{
    s_scratch_t *s = calloc(1, sizeof *s);
    if (s) {
        s->path = malloc(path_size);
        s->jpeg = train_jpeg_new(err);
        s->transform = s->jpeg ? train_transform_new(err) : NULL;
    }
    if (!s || !s->path || !s->jpeg || !s->transform) {
        (void)jf_err_set(err, -ENOMEM, "gld: out of memory for a decoder");
        s_scratch_destroy(&s);
    }
    return s;
}

// Borrows an idle scratch, making one if none is idle; beyond the pool's size the scratch is
// temporary (*ret_pooled false) and the caller destroys it.
static s_scratch_t *s_acquire(const train_gld_t *self, bool *ret_pooled, jf_err_t *err)
{
    s_pool_t *pool = self->pool;
    s_scratch_t *found = NULL;
    (void)pthread_mutex_lock(&pool->lock); // default mutex: cannot fail when used correctly
    for (size_t i = 0; !found && i < pool->count; i++) {
        found = pool->slots[i]->busy ? NULL : pool->slots[i];
    }
    if (!found && pool->count < TRAIN_GLD_SCRATCH_MAX) {
        found = s_scratch_new(self->path_size, err);
        pool->slots[pool->count] = found;
        pool->count += found ? 1 : 0;
    }
    *ret_pooled = found != NULL;
    if (found) {
        found->busy = true;
    }
    (void)pthread_mutex_unlock(&pool->lock);
    // More fetches at once than the pool holds (or no memory for a pooled one): a temporary one.
    return found ? found : s_scratch_new(self->path_size, err);
}

static void s_release(const train_gld_t *self, s_scratch_t *s, bool pooled)
{
    if (!pooled) {
        s_scratch_destroy(&s);
        return;
    }
    (void)pthread_mutex_lock(&self->pool->lock);
    s->busy = false;
    (void)pthread_mutex_unlock(&self->pool->lock);
}

static char *s_join(const char *dir, const char *name)
{
    size_t size = strlen(dir) + strlen(name) + 2;
    char *path = malloc(size);
    if (path) {
        (void)snprintf(path, size, "%s/%s", dir, name); // sized above, cannot truncate
    }
    return path;
}

static void s_image_path(const train_gld_t *self, const train_gld_row_t *row, char *out)
{
    // path_size counts the longest id, so this cannot truncate.
    (void)snprintf(out, self->path_size, "%s/%s%s", self->images_dir, row->image_id,
                   TRAIN_GLD_IMAGE_EXT);
}

// Checks that images/ is a directory and that every listed image is a regular file in it.
static int s_check_images(const train_gld_t *self, const char *csv_path, jf_err_t *err)
{
    struct stat st;
    if (stat(self->images_dir, &st) < 0) {
        return jf_err_set(err, -ENOENT, "%.200s: cannot open: %s", self->images_dir,
                          strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) {
        return jf_err_set(err, -ENOENT, "%.200s: not a directory", self->images_dir);
    }
    char *path = malloc(self->path_size);
    if (!path) {
        return jf_err_set(err, -ENOMEM, "gld: out of memory");
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < self->csv.count; i++) {
        s_image_path(self, &self->csv.rows[i], path);
        if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
            rc = jf_err_set(err, -ENOENT, "%.200s:%zu: image '%s' missing: %.200s", csv_path, i + 2,
                            self->csv.rows[i].image_id, path);
        }
    }
    free(path);
    return rc;
}

static int s_open(train_gld_t *self, const char *dir, jf_err_t *err)
{
    char *csv_path = s_join(dir, TRAIN_GLD_CSV_FILE);
    self->images_dir = s_join(dir, TRAIN_GLD_IMAGES_DIR);
    if (!csv_path || !self->images_dir) {
        free(csv_path);
        return jf_err_set(err, -ENOMEM, "gld: out of memory");
    }
    self->path_size = strlen(self->images_dir) + 1 + TRAIN_GLD_ID_MAX + sizeof TRAIN_GLD_IMAGE_EXT;
    int rc = train_gld_csv_load(csv_path, &self->csv, err);
    rc = rc < 0 ? rc : s_check_images(self, csv_path, err);
    free(csv_path);
    return rc;
}

train_gld_t *train_gld_open(const char *dir, jf_err_t *err)
{
    train_gld_t *self = calloc(1, sizeof *self);
    s_pool_t *pool = calloc(1, sizeof *pool);
    if (!self || !pool) {
        free(self);
        free(pool);
        (void)jf_err_set(err, -ENOMEM, "gld: out of memory");
        return NULL;
    }
    (void)pthread_mutex_init(&pool->lock, NULL); // default attributes: cannot fail on Linux
    self->pool = pool;
    if (s_open(self, dir, err) < 0) {
        train_gld_destroy(&self);
    }
    return self;
}

void train_gld_destroy(train_gld_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    train_gld_t *self = *self_p;
    for (size_t i = 0; i < self->pool->count; i++) {
        s_scratch_destroy(&self->pool->slots[i]);
    }
    (void)pthread_mutex_destroy(&self->pool->lock);
    free(self->pool);
    train_gld_csv_fini(&self->csv);
    free(self->images_dir);
    free(self);
    *self_p = NULL;
}

size_t train_gld_size(const train_gld_t *self)
{
    return self->csv.count;
}

const train_gld_row_t *train_gld_row(const train_gld_t *self, size_t index)
{
    return index < self->csv.count ? &self->csv.rows[index] : NULL;
}

// Load, draw, decode the crop, resize, flip and normalise, with the scratch s.
static int s_fetch_with(const train_gld_t *self, s_scratch_t *s, const train_dataset_req_t *req,
                        float *ret_x, jf_err_t *err)
{
    s_image_path(self, &self->csv.rows[req->index], s->path);
    train_jpeg_info_t info = {0};
    int rc = train_jpeg_load(s->jpeg, s->path, &info, err);
    if (rc < 0) {
        return rc;
    }
    jf_rng_t rng;
    jf_rng_seed(&rng, req->aug_seed, TRAIN_GLD_AUG_STREAM);
    train_transform_params_t p = {0};
    train_transform_draw(&rng, info.width, info.height, &p);
    train_jpeg_region_t region = {.left = p.crop.left,
                                  .top = p.crop.top,
                                  .width = p.crop.width,
                                  .height = p.crop.height,
                                  .scale_denom = train_transform_dct_denom(&p.crop)};
    train_jpeg_pixels_t pixels = {0};
    rc = train_jpeg_decode(s->jpeg, &region, &pixels, err);
    if (rc < 0) {
        return rc;
    }
    rc = train_transform_apply(s->transform, &pixels, p.flip, ret_x, err);
    if (rc < 0 && err) {
        (void)jf_err_prefix(err, "%.200s", s->path); // the resizer does not know the file
    }
    return rc;
}

int train_gld_fetch(const train_gld_t *self, const train_dataset_req_t *req, float *ret_x,
                    int64_t *ret_y, jf_err_t *err)
{
    if (req->index >= self->csv.count) {
        return jf_err_set(err, -EINVAL, "gld: sample %zu out of range, %zu samples", req->index,
                          self->csv.count);
    }
    bool pooled = false;
    s_scratch_t *s = s_acquire(self, &pooled, err);
    if (!s) {
        return -ENOMEM;
    }
    int rc = s_fetch_with(self, s, req, ret_x, err);
    s_release(self, s, pooled);
    if (rc == 0) {
        *ret_y = self->csv.rows[req->index].label;
    }
    return rc;
}
