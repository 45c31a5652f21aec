/* A run's part of its dataset (--shard K/N, issue 14): in a federated round each board can train
 * on its own part. Shard K of N holds the samples whose index i has i mod N = K (interleaved, so
 * every shard sees every region of the files). Plain value record and pure functions; not a
 * loader (train_loader.h). */
#ifndef TRAIN_SHARD_H
#define TRAIN_SHARD_H

#include "jf_err.h"

#include <stddef.h>

#define TRAIN_SHARD_COUNT_MAX 4096 // largest N of --shard K/N

typedef struct train_shard {
    int index; // K, 0..count-1
    int count; // N, 1..TRAIN_SHARD_COUNT_MAX; 0: no shard (the whole dataset)
} train_shard_t;

// Parses "K/N" (0 <= K < N <= TRAIN_SHARD_COUNT_MAX) into *ret_shard. Returns 0, or -EINVAL with
// err naming the text and what was expected.
int train_shard_parse(const char *text, train_shard_t *ret_shard, jf_err_t *err);

// Samples of a dataset of total samples in the shard (total itself without a shard).
size_t train_shard_size(const train_shard_t *shard, size_t total);

// The dataset index of the shard's local-th sample.
size_t train_shard_global(const train_shard_t *shard, size_t local);

#endif
