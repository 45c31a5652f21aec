/* Tests of a simulated board's page cache between runs (agent_sim_cache.h): a dataset's state
 * carried to its next run, a drop, and the eviction of other datasets by a run's room. */
#include "agent_sim_cache.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define T_MB INT64_C(1000000)

static void test_empty_cache_is_cold(void **state)
{
    (void)state;
    agent_sim_cache_t c = {0};
    assert_float_equal(agent_sim_cache_resident(&c, "mnist"), 0.0, 0.0);
}

static void test_a_dataset_keeps_its_residency_until_a_drop(void **state)
{
    (void)state;
    agent_sim_cache_t c = {0};
    agent_sim_cache_update(&c, "mnist", 1.0, 900 * T_MB, 47 * T_MB);
    assert_float_equal(agent_sim_cache_resident(&c, "mnist"), 1.0, 0.0);
    agent_sim_cache_update(&c, "gld23k", 0.3, 870 * T_MB, 2900 * T_MB);
    assert_float_equal(agent_sim_cache_resident(&c, "gld23k"), 0.3, 1e-9);
    agent_sim_cache_drop(&c);
    assert_float_equal(agent_sim_cache_resident(&c, "mnist"), 0.0, 0.0);
    assert_float_equal(agent_sim_cache_resident(&c, "gld23k"), 0.0, 0.0);
}

// A run of another dataset: the older pages keep the room the run's cache had beside its own
// dataset, the most recently used first.
static void test_other_datasets_keep_the_room_left(void **state)
{
    (void)state;
    agent_sim_cache_t c = {0};
    agent_sim_cache_update(&c, "mnist", 1.0, 10000 * T_MB, 50 * T_MB);
    agent_sim_cache_update(&c, "cifar10", 1.0, 10000 * T_MB, 150 * T_MB);
    // A big board: GLD-23k fits beside both.
    agent_sim_cache_update(&c, "gld23k", 1.0, 10000 * T_MB, 2900 * T_MB);
    assert_float_equal(agent_sim_cache_resident(&c, "mnist"), 1.0, 0.0);
    assert_float_equal(agent_sim_cache_resident(&c, "cifar10"), 1.0, 0.0);
    // Room for 100 MB beside it: CIFAR-10 (more recent) keeps 100 MB of 150, MNIST nothing.
    agent_sim_cache_update(&c, "gld23k", 1.0, 3000 * T_MB, 2900 * T_MB);
    assert_float_equal(agent_sim_cache_resident(&c, "cifar10"), 100.0 / 150.0, 1e-9);
    assert_float_equal(agent_sim_cache_resident(&c, "mnist"), 0.0, 0.0);
    // A dataset larger than the cache fills it: nothing else stays.
    agent_sim_cache_update(&c, "gld23k", 0.3, 870 * T_MB, 2900 * T_MB);
    assert_float_equal(agent_sim_cache_resident(&c, "cifar10"), 0.0, 0.0);
}

static void test_bad_input_is_clamped_or_ignored(void **state)
{
    (void)state;
    agent_sim_cache_t c = {0};
    agent_sim_cache_update(&c, "mnist", 1.5, 100 * T_MB, 50 * T_MB);
    assert_float_equal(agent_sim_cache_resident(&c, "mnist"), 1.0, 0.0);
    agent_sim_cache_update(&c, "mnist", -1.0, 100 * T_MB, 50 * T_MB);
    assert_float_equal(agent_sim_cache_resident(&c, "mnist"), 0.0, 0.0);
    agent_sim_cache_update(&c, "cifar10", 1.0, 100 * T_MB, 0); // no size: ignored
    assert_float_equal(agent_sim_cache_resident(&c, "cifar10"), 0.0, 0.0);
}

// More datasets than entries: the least recently used entry is reused.
static void test_full_table_reuses_the_oldest(void **state)
{
    (void)state;
    agent_sim_cache_t c = {0};
    char names[AGENT_SIM_CACHE_DATASETS_MAX + 1][8];
    for (int i = 0; i <= AGENT_SIM_CACHE_DATASETS_MAX; i++) {
        names[i][0] = (char)('a' + i);
        names[i][1] = '\0';
        agent_sim_cache_update(&c, names[i], 1.0, 1000 * T_MB, T_MB);
    }
    assert_int_equal(c.n, AGENT_SIM_CACHE_DATASETS_MAX);
    assert_float_equal(agent_sim_cache_resident(&c, names[0]), 0.0, 0.0);
    assert_float_equal(agent_sim_cache_resident(&c, names[AGENT_SIM_CACHE_DATASETS_MAX]), 1.0, 0.0);
    assert_float_equal(agent_sim_cache_resident(&c, names[1]), 1.0, 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_cache_is_cold),
        cmocka_unit_test(test_a_dataset_keeps_its_residency_until_a_drop),
        cmocka_unit_test(test_other_datasets_keep_the_room_left),
        cmocka_unit_test(test_bad_input_is_clamped_or_ignored),
        cmocka_unit_test(test_full_table_reuses_the_oldest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
