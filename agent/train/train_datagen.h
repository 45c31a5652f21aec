/* Synthetic training sets in the real on-disk formats (MNIST idx, CIFAR-10 binary batches) under
 * the standard file names, so jetfleet-train and the storage study run without the real data.
 * Each class has its own seeded template and every image is that template plus noise, so a model
 * learns them within a few steps. Not a benchmark of accuracy. */
#ifndef TRAIN_DATAGEN_H
#define TRAIN_DATAGEN_H

#include "jf_err.h"
#include "train_dataset.h"

#include <stddef.h>
#include <stdint.h>

#define TRAIN_DATAGEN_SCALE_MAX 16.0 // largest scale accepted (16x the real training set)

typedef struct train_datagen_opts {
    train_dataset_kind_t kind; // mnist or cifar10 (gld23k is not built yet)
    double scale;              // fraction of the real size, in (0, TRAIN_DATAGEN_SCALE_MAX]
    uint64_t seed;             // same seed, same bytes
    const char *out_dir;       // borrowed; created (one level) if missing
} train_datagen_opts_t;

// Images the generator writes for a kind and scale: MNIST round(60000 * scale), CIFAR-10 five
// files of round(10000 * scale) records; at least one image per file. 0 for an unsupported kind.
size_t train_datagen_samples(train_dataset_kind_t kind, double scale);

// Writes the dataset files into opts->out_dir, replacing files of the same names. Returns 0,
// -EINVAL (scale out of range), -ENOTSUP (gld23k: not built yet) or -EIO (with err naming the
// file that could not be written).
int train_datagen_write(const train_datagen_opts_t *opts, jf_err_t *err);

#endif
