/* splitmix64 and the draws built on it (jf_rng.h). The sequences are part of the project's
 * reproducibility: changing any step here changes every seeded shuffle, synthetic dataset,
 * simulated board and simulated run, so tests/unit/common/rng_test.c pins known answers. */
#include "jf_rng.h"

#include <assert.h>
#include <math.h>

#define JF_RNG_GOLDEN     UINT64_C(0x9e3779b97f4a7c15)
#define JF_RNG_MIX1       UINT64_C(0xbf58476d1ce4e5b9)
#define JF_RNG_MIX2       UINT64_C(0x94d049bb133111eb)
#define JF_RNG_FLOAT_BITS 53 // mantissa bits of a double
#define JF_RNG_WORD_BITS  64 // bits of one output
#define JF_RNG_TWO_PI     6.283185307179586

uint64_t jf_rng_next(jf_rng_t *rng)
{
    assert(rng);
    uint64_t z = (rng->state += JF_RNG_GOLDEN);
    z = (z ^ (z >> 30)) * JF_RNG_MIX1;
    z = (z ^ (z >> 27)) * JF_RNG_MIX2;
    return z ^ (z >> 31);
}

void jf_rng_seed(jf_rng_t *rng, uint64_t seed, uint64_t stream)
{
    assert(rng);
    rng->state = seed;
    // One output step between seed and stream keeps (seed, stream) and (seed + 1, stream - 1)
    // apart.
    rng->state = jf_rng_next(rng) ^ (stream * JF_RNG_GOLDEN);
}

void jf_rng_seed_name(jf_rng_t *rng, uint64_t seed, const char *name)
{
    assert(rng && name);
    jf_rng_seed(rng, seed, 0);
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        rng->state = jf_rng_next(rng) ^ *p;
    }
}

uint64_t jf_rng_below(jf_rng_t *rng, uint64_t bound)
{
    assert(bound >= 1);
    // Reject the top partial range so every value is equally likely.
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t value = jf_rng_next(rng);
    while (value >= limit) {
        value = jf_rng_next(rng);
    }
    return value % bound;
}

double jf_rng_uniform(jf_rng_t *rng)
{
    return (double)(jf_rng_next(rng) >> (JF_RNG_WORD_BITS - JF_RNG_FLOAT_BITS)) /
           (double)(UINT64_C(1) << JF_RNG_FLOAT_BITS);
}

double jf_rng_normal(jf_rng_t *rng)
{
    // 1 - u is in (0, 1], so the log is finite.
    double u1 = 1.0 - jf_rng_uniform(rng);
    double u2 = jf_rng_uniform(rng);
    return sqrt(-2.0 * log(u1)) * cos(JF_RNG_TWO_PI * u2);
}

void jf_rng_shuffle(jf_rng_t *rng, size_t *items, size_t count)
{
    for (size_t i = count; i > 1; i--) {
        size_t j = (size_t)jf_rng_below(rng, i);
        size_t tmp = items[i - 1];
        items[i - 1] = items[j];
        items[j] = tmp;
    }
}
