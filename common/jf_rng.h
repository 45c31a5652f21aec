/* Seeded pseudo-random numbers (splitmix64, Steele, Lea, Flood 2014) for everything that must
 * repeat from a seed on every machine: the loader's shuffle and augmentation, synthetic data,
 * the simulator's board factors and noise, the simulated trainer's per-minibatch draws. Not for
 * anything that needs unpredictability. One generator for the whole project, so that a seed means
 * the same sequence everywhere. */
#ifndef JF_RNG_H
#define JF_RNG_H

#include <stddef.h>
#include <stdint.h>

// Plain value record: embed it and seed it with jf_rng_seed or jf_rng_seed_name before use.
typedef struct jf_rng {
    uint64_t state; // generator state
} jf_rng_t;

// Seeds rng from a seed and a stream number, so that (seed, stream) pairs give unrelated
// sequences (the stream is typically an epoch, a sample index or a purpose).
void jf_rng_seed(jf_rng_t *rng, uint64_t seed, uint64_t stream);

// Seeds rng from a seed and a name, every byte of which counts (stream 0 of seed, then the
// bytes): the stream of one named thing, such as a simulated board. name must not be NULL.
void jf_rng_seed_name(jf_rng_t *rng, uint64_t seed, const char *name);

// The next 64 random bits.
uint64_t jf_rng_next(jf_rng_t *rng);

// A number in 0..bound-1 (bound >= 1), without modulo bias.
uint64_t jf_rng_below(jf_rng_t *rng, uint64_t bound);

// A number in [0, 1) with 53 random bits (one jf_rng_next).
double jf_rng_uniform(jf_rng_t *rng);

// A standard normal number (mean 0, standard deviation 1) by the Box-Muller transform (two
// jf_rng_uniform draws, the cosine branch only, so each call takes exactly two draws).
double jf_rng_normal(jf_rng_t *rng);

// Shuffles items in place (Fisher-Yates, count - 1 jf_rng_below draws).
void jf_rng_shuffle(jf_rng_t *rng, size_t *items, size_t count);

#endif
