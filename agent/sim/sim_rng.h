/* Seeded pseudo-random numbers for the simulator: splitmix64 (Steele, Lea, Flood 2014) plus
 * uniform and standard-normal draws. For board-to-board factors and per-run noise that a seed
 * makes identical on every machine; not for anything that needs unpredictability.
 * agent/train/train_rng.[ch] has the same generator: the two belong in one common/jf_rng. */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <stddef.h>
#include <stdint.h>

// Plain value record: embed it and seed it with sim_rng_seed or sim_rng_seed_name before use.
typedef struct sim_rng {
    uint64_t state; // generator state
} sim_rng_t;

// Seeds rng from a seed and a stream number, so that (seed, stream) pairs give unrelated
// sequences.
void sim_rng_seed(sim_rng_t *rng, uint64_t seed, uint64_t stream);

// Seeds rng from a seed and a name (every byte of name counts): the stream of one named board.
void sim_rng_seed_name(sim_rng_t *rng, uint64_t seed, const char *name);

// The next 64 random bits.
uint64_t sim_rng_next(sim_rng_t *rng);

// A number in [0, 1) with 53 random bits.
double sim_rng_uniform(sim_rng_t *rng);

// A standard normal number (mean 0, standard deviation 1), Box-Muller transform.
double sim_rng_normal(sim_rng_t *rng);

#endif
