/* GLD-23k (Google Landmarks v2, the 23k-image federated split) in its on-disk form: train.csv
 * (train_gld_csv.h) and images/<image_id>.jpg. A sample is read from its file, decoded and
 * transformed as the study's torchvision pipeline does (train_transform.h) on every fetch, with
 * the random crop and flip drawn from the fetch's augmentation seed. Used by train_dataset, which
 * is the interface the trainer sees; not a writer (train_datagen writes synthetic sets). */
#ifndef TRAIN_GLD_H
#define TRAIN_GLD_H

#include "jf_err.h"
#include "train_dataset.h"
#include "train_gld_csv.h"

#include <stddef.h>
#include <stdint.h>

#define TRAIN_GLD_CSV_FILE    "train.csv"
#define TRAIN_GLD_IMAGES_DIR  "images"
#define TRAIN_GLD_IMAGE_EXT   ".jpg"
#define TRAIN_GLD_SAMPLES     23080 // images in the real split
#define TRAIN_GLD_USERS       233   // users (federated clients) in the real split
#define TRAIN_GLD_SCRATCH_MAX 32    // decoders kept for reuse: one per concurrent fetch
#define TRAIN_GLD_AUG_STREAM  1     // rng stream of the augmentation drawn from a fetch's seed

typedef struct train_gld train_gld_t;

// Opens the dataset in dir: loads and checks train.csv and that every image it lists is a file in
// images/. Returns the dataset, or NULL with err: -ENOENT (train.csv, images/ or an image
// missing; the message names the path and the train.csv line), -EPROTO (bad train.csv, naming
// file:line), -EIO, -ENOMEM. Caller owns the result; release with train_gld_destroy.
train_gld_t *train_gld_open(const char *dir, jf_err_t *err);

// Frees the dataset and its decoders; sets *self_p to NULL. Accepts NULL and *self_p == NULL.
// No fetch may be running.
void train_gld_destroy(train_gld_t **self_p);

// Number of images (rows of train.csv).
size_t train_gld_size(const train_gld_t *self);

// Row index of train.csv (0-based, in file order), borrowed until destroy; NULL if out of range.
const train_gld_row_t *train_gld_row(const train_gld_t *self, size_t index);

// Reads image req->index, draws its crop and flip from req->aug_seed, decodes only the crop and
// writes 3 x 224 x 224 normalised floats (CHW) into ret_x and the class into *ret_y. The same
// (index, aug_seed) always gives the same floats. Returns 0, -EINVAL (index out of range),
// -ENOENT/-EIO (file gone or unreadable) or -EPROTO (not a usable JPEG), with err naming the
// image's path, or -ENOMEM. Safe to call from several threads at once: each call borrows a
// decoder from a pool of TRAIN_GLD_SCRATCH_MAX (making a temporary one beyond that).
int train_gld_fetch(const train_gld_t *self, const train_dataset_req_t *req, float *ret_x,
                    int64_t *ret_y, jf_err_t *err);

#endif
