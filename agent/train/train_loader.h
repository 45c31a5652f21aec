/* Minibatch loader with PyTorch DataLoader semantics, in C with pthreads. workers = 0: the caller's
 * thread fetches and preprocesses each batch when it asks for it (no overlap with compute).
 * workers = k >= 1: k threads each prepare whole batches (worker i: batches i, i+k, i+2k, ...), at
 * most k * prefetch batches ahead of the one being computed, handed out in order. The sample order
 * is reshuffled every epoch from the seed. Not a timer: the caller times the calls. */
#ifndef TRAIN_LOADER_H
#define TRAIN_LOADER_H

#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRAIN_LOADER_WORKERS_MAX      16
#define TRAIN_LOADER_PREFETCH_MAX     16
#define TRAIN_LOADER_PREFETCH_DEFAULT 2
#define TRAIN_LOADER_BATCH_MAX        4096

// Reads and preprocesses sample index into ret_x (sample_floats floats) and *ret_y. Returns 0 or a
// negative errno with err filled. Called from the worker threads concurrently when workers >= 1.
// A fetch with random augmentation seeds it with train_loader_sample_seed.
typedef int train_loader_fetch_fn(void *ctx, size_t index, float *ret_x, int64_t *ret_y,
                                  jf_err_t *err);

typedef struct train_loader_opts {
    size_t samples;               // dataset size, >= 1
    size_t sample_floats;         // floats per sample, >= 1
    size_t batch;                 // samples per minibatch, 1..TRAIN_LOADER_BATCH_MAX
    int workers;                  // 0..TRAIN_LOADER_WORKERS_MAX
    int prefetch;                 // batches prepared ahead per worker, 1..MAX; 0 = DEFAULT
    bool drop_last;               // drop the last, incomplete minibatch of an epoch
    uint64_t seed;                // shuffle seed; epoch e uses stream e
    size_t max_batches;           // minibatches per epoch at most; 0 = no limit
    train_loader_fetch_fn *fetch; // reads one sample
    void *fetch_ctx;              // borrowed; passed to fetch
} train_loader_opts_t;

// One minibatch, borrowed from the loader: valid until the next train_loader_next,
// train_loader_epoch_start or train_loader_destroy.
typedef struct train_batch {
    size_t index;          // position in the epoch, 0-based
    size_t samples;        // samples in this minibatch
    const size_t *indices; // dataset indices, samples entries
    const float *x;        // samples * sample_floats floats
    const int64_t *y;      // samples labels
} train_batch_t;

typedef struct train_loader train_loader_t;

// Checks the options and allocates the batch buffers (workers * prefetch + 1 minibatches, or one
// when workers = 0). Returns the loader, or NULL with err: -EINVAL (options out of range, or not
// one whole minibatch with drop_last), -ENOMEM.
// Caller owns the result; release with train_loader_destroy. Use from one thread.
train_loader_t *train_loader_new(const train_loader_opts_t *opts, jf_err_t *err);

// Stops and joins any workers and frees the loader; sets *self_p to NULL. Accepts NULL.
void train_loader_destroy(train_loader_t **self_p);

// Minibatches per epoch (after drop_last and max_batches).
size_t train_loader_batches_per_epoch(const train_loader_t *self);

// Starts an epoch: stops the previous one if still running, reshuffles the sample order with
// (seed, epoch) and starts the workers, which begin prefetching at once. Returns 0, or a negative
// errno from pthread_create.
int train_loader_epoch_start(train_loader_t *self, uint64_t epoch, jf_err_t *err);

// The augmentation seed of sample index in the current epoch: a function of (opts.seed, epoch,
// index) only, so a random transform seeded from it is reproducible whatever the worker count and
// the order in which workers fetch, and differs from epoch to epoch. Safe to call from the fetch
// function (in any worker) while an epoch runs: the epoch's key is set before its workers start.
uint64_t train_loader_sample_seed(const train_loader_t *self, size_t index);

// Hands out the epoch's next minibatch in order, waiting for it if a worker is still preparing
// it (workers >= 1) or preparing it on the caller's thread (workers = 0). Releases the previous
// minibatch. *ret_batch is NULL after the last minibatch (the workers have then been joined).
// Returns 0, -EINVAL (no epoch started) or the fetch function's error for this minibatch (the
// epoch is then stopped).
int train_loader_next(train_loader_t *self, const train_batch_t **ret_batch, jf_err_t *err);

#endif
