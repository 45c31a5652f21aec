/* A training set on disk in its real format: MNIST idx files, CIFAR-10 binary batches or GLD-23k
 * (train.csv plus images/<image_id>.jpg, train_gld.h), the kind recognised from the files present.
 * Samples are read one at a time and preprocessed to floats, as a PyTorch Dataset.__getitem__
 * would; nothing is loaded up front except headers (and GLD-23k's train.csv). Formats:
 * yann.lecun.com/exdb/mnist (idx), cs.toronto.edu/~kriz/cifar.html (binary version), TensorFlow
 * Federated's gldv2 split (train_gld_csv.h). */
#ifndef TRAIN_DATASET_H
#define TRAIN_DATASET_H

#include "jf_err.h"

#include <stddef.h>
#include <stdint.h>

#define TRAIN_MNIST_CLASSES       10
#define TRAIN_MNIST_IMAGES_FILE   "train-images-idx3-ubyte"
#define TRAIN_MNIST_LABELS_FILE   "train-labels-idx1-ubyte"
#define TRAIN_MNIST_IMAGES_MAGIC  2051 // idx3, unsigned bytes
#define TRAIN_MNIST_LABELS_MAGIC  2049 // idx1, unsigned bytes
#define TRAIN_MNIST_IMAGES_HEADER 16   // magic, count, rows, cols: big-endian uint32 each
#define TRAIN_MNIST_LABELS_HEADER 8    // magic, count
#define TRAIN_MNIST_SIDE          28
#define TRAIN_MNIST_SAMPLES       60000 // images in the real training set
#define TRAIN_CIFAR_FILES         5     // data_batch_1.bin .. data_batch_5.bin
#define TRAIN_CIFAR_FILE_FORMAT   "data_batch_%d.bin"
#define TRAIN_CIFAR_SIDE          32
#define TRAIN_CIFAR_CHANNELS      3
#define TRAIN_CIFAR_IMAGE_BYTES   3072  // 1024 red, then 1024 green, then 1024 blue
#define TRAIN_CIFAR_RECORD_BYTES  3073  // one label byte, then the image
#define TRAIN_CIFAR_BATCH_SAMPLES 10000 // records per file in the real training set
#define TRAIN_CIFAR_CLASSES       10
#define TRAIN_GLD_CHANNELS        3
#define TRAIN_GLD_SIDE            224 // RandomResizedCrop output (train_transform.h)
#define TRAIN_DATASET_FLOATS_MAX  (TRAIN_GLD_CHANNELS * TRAIN_GLD_SIDE * TRAIN_GLD_SIDE)

typedef enum train_dataset_kind {
    TRAIN_DATASET_MNIST = 0,
    TRAIN_DATASET_CIFAR10,
    TRAIN_DATASET_GLD23K,
} train_dataset_kind_t;

// Shape of one sample: channels*height*width floats in CHW order, and its label range.
typedef struct train_dataset_shape {
    int channels; // image channels
    int height;   // pixels
    int width;    // pixels
    int classes;  // labels are 0..classes-1: 10 for mnist and cifar10, 203 for gld23k
} train_dataset_shape_t;

// One sample to fetch (plain value record).
typedef struct train_dataset_req {
    size_t index;      // 0..size-1
    uint64_t aug_seed; // seeds the sample's random augmentation (gld23k: crop and flip); the
                       // same (index, aug_seed) gives the same floats; mnist and cifar10 ignore it
} train_dataset_req_t;

typedef struct train_dataset train_dataset_t;

// Parses "mnist", "cifar10" or "gld23k". Returns 0, or -EINVAL with err naming the text.
int train_dataset_kind_parse(const char *name, train_dataset_kind_t *ret_kind, jf_err_t *err);

// The kind's name as jf_run_spec uses it (a static string), or "unknown".
const char *train_dataset_kind_name(train_dataset_kind_t kind);

// The sample shape every dataset of a kind has; all zero for an unknown kind.
train_dataset_shape_t train_dataset_kind_shape(train_dataset_kind_t kind);

// Recognises the kind of dataset in dir from the files present: MNIST if either idx file is
// there, CIFAR-10 if data_batch_1.bin is, GLD-23k if train.csv or images/ is. Reads nothing.
// Returns 0, -ENOENT (none of them) or -EINVAL (files of two kinds), with err naming dir.
int train_dataset_detect(const char *dir, train_dataset_kind_t *ret_kind, jf_err_t *err);

// Opens the dataset in dir, of the kind train_dataset_detect finds. Checks every header and file
// size (GLD-23k: all of train.csv and that every image listed exists). Returns the dataset, or
// NULL with err naming the file: -ENOENT (no dataset, a CIFAR batch file or a GLD-23k image
// missing), -EPROTO (bad magic, shape, count, train.csv line or a truncated file), -EINVAL (two
// kinds present), -EIO (read failure). Caller owns the result; release with train_dataset_destroy.
train_dataset_t *train_dataset_open(const char *dir, jf_err_t *err);

// Closes the files and frees the dataset; sets *self_p to NULL. Accepts NULL and *self_p == NULL.
void train_dataset_destroy(train_dataset_t **self_p);

train_dataset_kind_t train_dataset_kind(const train_dataset_t *self);

// Number of samples.
size_t train_dataset_size(const train_dataset_t *self);

train_dataset_shape_t train_dataset_shape(const train_dataset_t *self);

// Floats per sample (channels * height * width).
size_t train_dataset_sample_floats(const train_dataset_t *self);

// Reads sample req->index from disk and preprocesses it into ret_x (train_dataset_sample_floats
// floats) and its label into *ret_y. MNIST and CIFAR-10 are normalised (MNIST mean 0.1307, std
// 0.3081; CIFAR-10 per-channel means 0.4914, 0.4822, 0.4465, stds 0.2470, 0.2435, 0.2616);
// GLD-23k is decoded and augmented from req->aug_seed (train_gld_fetch). Returns 0, -EINVAL
// (index out of range), -EPROTO (label outside 0..classes-1 or a bad JPEG, naming the file),
// -ENOENT or -EIO (read failure or file shrunk), -ENOMEM. Safe to call from several threads at
// once.
int train_dataset_fetch(const train_dataset_t *self, const train_dataset_req_t *req, float *ret_x,
                        int64_t *ret_y, jf_err_t *err);

#endif
