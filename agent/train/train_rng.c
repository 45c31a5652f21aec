/* splitmix64 (Steele, Lea, Flood 2014): one 64-bit state, good enough statistics for shuffling and
 * synthetic images, and identical on every platform. */
#include "train_rng.h"

#include <assert.h>

#define TRAIN_RNG_GOLDEN UINT64_C(0x9e3779b97f4a7c15)

void train_rng_seed(train_rng_t *rng, uint64_t seed, uint64_t stream)
{
    assert(rng);
    rng->state = seed;
    // Mixing the stream through one output step keeps (seed, stream) and (seed + 1, stream - 1)
    // apart.
    rng->state = train_rng_next(rng) ^ (stream * TRAIN_RNG_GOLDEN);
}

uint64_t train_rng_next(train_rng_t *rng)
{
    uint64_t z = (rng->state += TRAIN_RNG_GOLDEN);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

uint64_t train_rng_below(train_rng_t *rng, uint64_t bound)
{
    assert(bound >= 1);
    // Reject the top partial range so every value is equally likely.
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t value = train_rng_next(rng);
    while (value >= limit) {
        value = train_rng_next(rng);
    }
    return value % bound;
}

void train_rng_shuffle(train_rng_t *rng, size_t *items, size_t count)
{
    for (size_t i = count; i > 1; i--) {
        size_t j = (size_t)train_rng_below(rng, i);
        size_t tmp = items[i - 1];
        items[i - 1] = items[j];
        items[j] = tmp;
    }
}
