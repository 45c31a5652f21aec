/* Unit tests for jf_rng: known answers that pin the sequences (the values the generator gave as
 * agent/train/train_rng and agent/sim/sim_rng before it moved here, so every seeded dataset,
 * shuffle and simulated board stays as it was), streams and names that separate, and the shapes
 * of the below, uniform, normal and shuffle draws. */
#include "jf_rng.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define T_DRAWS 20000 // draws for the distribution checks

static void test_known_answers(void **state)
{
    (void)state;
    jf_rng_t rng = {0};
    jf_rng_seed(&rng, 5, 0);
    assert_true(jf_rng_next(&rng) == UINT64_C(0xfad6e24671254235));
    assert_true(jf_rng_next(&rng) == UINT64_C(0x1b1a399b7fc87089));
    assert_true(jf_rng_next(&rng) == UINT64_C(0xdd2622e06671d6a5));
    jf_rng_seed(&rng, 42, 7);
    const uint64_t below[] = {4, 9, 4, 4, 9};
    for (size_t i = 0; i < sizeof below / sizeof below[0]; i++) {
        assert_int_equal(jf_rng_below(&rng, 10), below[i]);
    }
    jf_rng_seed_name(&rng, 2024, "sim-nx-01");
    assert_true(jf_rng_next(&rng) == UINT64_C(0x6510cc2be21b22b6));
    jf_rng_seed(&rng, 9, 3);
    assert_float_equal(jf_rng_uniform(&rng), 0.88824100540534057, 1e-17);
    assert_float_equal(jf_rng_normal(&rng), -1.8905822010172948, 1e-15);
    assert_float_equal(jf_rng_normal(&rng), 1.5768532921049747, 1e-15);
}

static void test_streams_and_names_separate(void **state)
{
    (void)state;
    jf_rng_t a = {0}, b = {0};
    jf_rng_seed(&a, 1, 2);
    jf_rng_seed(&b, 2, 1);
    assert_true(jf_rng_next(&a) != jf_rng_next(&b));
    jf_rng_seed(&a, 1, 2);
    jf_rng_seed(&b, 1, 2);
    assert_true(jf_rng_next(&a) == jf_rng_next(&b));
    // Every byte of a name counts, including a difference in its last one.
    jf_rng_seed_name(&a, 7, "nx-01");
    jf_rng_seed_name(&b, 7, "nx-02");
    assert_true(jf_rng_next(&a) != jf_rng_next(&b));
    jf_rng_seed_name(&a, 7, "nx-01");
    jf_rng_seed_name(&b, 8, "nx-01");
    assert_true(jf_rng_next(&a) != jf_rng_next(&b));
}

static void test_below_and_uniform_ranges(void **state)
{
    (void)state;
    jf_rng_t rng = {0};
    jf_rng_seed(&rng, 11, 0);
    int counts[3] = {0};
    double sum = 0.0;
    for (int i = 0; i < T_DRAWS; i++) {
        uint64_t v = jf_rng_below(&rng, 3);
        assert_true(v < 3);
        counts[v]++;
        double u = jf_rng_uniform(&rng);
        assert_true(u >= 0.0 && u < 1.0);
        sum += u;
    }
    for (int k = 0; k < 3; k++) {
        assert_true(abs(counts[k] - T_DRAWS / 3) < T_DRAWS / 30);
    }
    assert_float_equal(sum / T_DRAWS, 0.5, 0.01);
    assert_int_equal(jf_rng_below(&rng, 1), 0);
}

static void test_normal_moments(void **state)
{
    (void)state;
    jf_rng_t rng = {0};
    jf_rng_seed(&rng, 12, 0);
    double sum = 0.0, squares = 0.0;
    for (int i = 0; i < T_DRAWS; i++) {
        double z = jf_rng_normal(&rng);
        assert_true(isfinite(z));
        sum += z;
        squares += z * z;
    }
    double mean = sum / T_DRAWS;
    assert_float_equal(mean, 0.0, 0.03);
    assert_float_equal(squares / T_DRAWS - mean * mean, 1.0, 0.05);
}

static void test_shuffle_is_a_seeded_permutation(void **state)
{
    (void)state;
    size_t items[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    jf_rng_t rng = {0};
    jf_rng_seed(&rng, 1, 2);
    jf_rng_shuffle(&rng, items, 8);
    const size_t expected[8] = {5, 0, 7, 4, 2, 1, 3, 6};
    assert_memory_equal(items, expected, sizeof items);
    size_t one[1] = {9};
    jf_rng_shuffle(&rng, one, 1);
    jf_rng_shuffle(&rng, NULL, 0);
    assert_int_equal(one[0], 9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answers),
        cmocka_unit_test(test_streams_and_names_separate),
        cmocka_unit_test(test_below_and_uniform_ranges),
        cmocka_unit_test(test_normal_moments),
        cmocka_unit_test(test_shuffle_is_a_seeded_permutation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
