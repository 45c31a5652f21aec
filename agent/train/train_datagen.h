/* Synthetic training sets in the real on-disk formats (MNIST idx, CIFAR-10 binary batches, GLD-23k
 * train.csv plus images/<image_id>.jpg) under the standard file names, so jetfleet-train and the
 * storage study run without the real data. Each class has its own seeded template and every image
 * is that template plus noise, so a model learns them within a few steps. GLD-23k images are
 * 800x600 JPEGs of about 100 kB (TurboJPEG, quality 90, 4:2:0), like the real ones in size, so
 * decode and storage costs are realistic. Not a benchmark of accuracy. */
#ifndef TRAIN_DATAGEN_H
#define TRAIN_DATAGEN_H

#include "jf_err.h"
#include "train_dataset.h"

#include <stddef.h>
#include <stdint.h>

#define TRAIN_DATAGEN_SCALE_MAX   16.0 // largest scale accepted (16x the real training set)
#define TRAIN_DATAGEN_GLD_WIDTH   800  // pixels
#define TRAIN_DATAGEN_GLD_HEIGHT  600  // pixels
#define TRAIN_DATAGEN_GLD_QUALITY 90   // JPEG quality, 1..100
#define TRAIN_DATAGEN_GLD_NOISE   9 // per-value noise is uniform in -NOISE..+NOISE: ~100 kB files

typedef struct train_datagen_opts {
    train_dataset_kind_t kind; // mnist, cifar10 or gld23k
    double scale;              // fraction of the real size, in (0, TRAIN_DATAGEN_SCALE_MAX]
    uint64_t seed;             // same seed, same bytes
    const char *out_dir;       // borrowed; created (one level) if missing
} train_datagen_opts_t;

// Images the generator writes for a kind and scale: MNIST round(60000 * scale), CIFAR-10 five
// files of round(10000 * scale) records, GLD-23k round(23080 * scale) JPEGs; at least one image
// per file. 0 for an unknown kind.
size_t train_datagen_samples(train_dataset_kind_t kind, double scale);

// Users (federated clients) in a generated GLD-23k train.csv: round(233 * scale), at least 1 and
// at most the number of images.
size_t train_datagen_gld_users(double scale);

// Writes the dataset files into opts->out_dir, replacing files of the same names (GLD-23k:
// train.csv and images/<image_id>.jpg; each image's class and user are drawn from the seed, its
// id is 8 seeded hex digits then the image's number in 8 hex digits). Returns 0, -EINVAL (scale out
// of range, or out_dir already holds a dataset of another kind, which would make it unreadable),
// -EIO (with err naming the file that could not be written) or -ENOMEM.
int train_datagen_write(const train_datagen_opts_t *opts, jf_err_t *err);

#endif
