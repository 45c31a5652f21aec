/* splitmix64 and the draws built on it (sim_rng.h). Box-Muller keeps the normal draw exact and
 * platform-independent, given the libm's log, sqrt and cos. */
#include "sim_rng.h"

#include <assert.h>
#include <math.h>

#define SIM_RNG_GOLDEN     UINT64_C(0x9e3779b97f4a7c15)
#define SIM_RNG_MIX1       UINT64_C(0xbf58476d1ce4e5b9)
#define SIM_RNG_MIX2       UINT64_C(0x94d049bb133111eb)
#define SIM_RNG_FLOAT_BITS 53 // mantissa bits of a double
#define SIM_RNG_WORD_BITS  64 // bits of one output
#define SIM_RNG_TWO_PI     6.283185307179586

uint64_t sim_rng_next(sim_rng_t *rng)
{
    assert(rng);
    uint64_t z = (rng->state += SIM_RNG_GOLDEN);
    z = (z ^ (z >> 30)) * SIM_RNG_MIX1;
    z = (z ^ (z >> 27)) * SIM_RNG_MIX2;
    return z ^ (z >> 31);
}

void sim_rng_seed(sim_rng_t *rng, uint64_t seed, uint64_t stream)
{
    assert(rng);
    rng->state = seed;
    // One output step between seed and stream keeps (seed, stream) and (seed + 1, stream - 1)
    // apart.
    rng->state = sim_rng_next(rng) ^ (stream * SIM_RNG_GOLDEN);
}

void sim_rng_seed_name(sim_rng_t *rng, uint64_t seed, const char *name)
{
    assert(rng && name);
    sim_rng_seed(rng, seed, 0);
    for (const unsigned char *p = (const unsigned char *) name; *p; p++) {
        rng->state = sim_rng_next(rng) ^ *p;
    }
}

double sim_rng_uniform(sim_rng_t *rng)
{
    return (double) (sim_rng_next(rng) >> (SIM_RNG_WORD_BITS - SIM_RNG_FLOAT_BITS)) /
           (double) (UINT64_C(1) << SIM_RNG_FLOAT_BITS);
}

double sim_rng_normal(sim_rng_t *rng)
{
    // 1 - u is in (0, 1], so the log is finite.
    double u1 = 1.0 - sim_rng_uniform(rng);
    double u2 = sim_rng_uniform(rng);
    return sqrt(-2.0 * log(u1)) * cos(SIM_RNG_TWO_PI * u2);
}
