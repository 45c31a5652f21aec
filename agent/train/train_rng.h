/* Small seeded pseudo-random generator (splitmix64) for shuffling and synthetic data. Not for
 * anything that needs unpredictability: the point is that a seed gives the same sequence on every
 * machine. */
#ifndef TRAIN_RNG_H
#define TRAIN_RNG_H

#include <stddef.h>
#include <stdint.h>

// Plain value record: embed it and seed it with train_rng_seed before use.
typedef struct train_rng {
    uint64_t state; // generator state
} train_rng_t;

// Seeds rng from a seed and a stream number, so that (seed, epoch) pairs give unrelated streams.
void train_rng_seed(train_rng_t *rng, uint64_t seed, uint64_t stream);

// The next 64 random bits.
uint64_t train_rng_next(train_rng_t *rng);

// A number in 0..bound-1 (bound >= 1), without modulo bias.
uint64_t train_rng_below(train_rng_t *rng, uint64_t bound);

// Shuffles items in place (Fisher-Yates).
void train_rng_shuffle(train_rng_t *rng, size_t *items, size_t count);

#endif
