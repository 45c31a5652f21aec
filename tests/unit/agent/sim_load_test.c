/* Unit tests for the simulated boards' load counters (docs/simulator.md, "Load";
 * agent/platform/agent_sim_load.c and the fake tree's /proc/stat and GPU load file): the busy
 * share of each core and of all cores over an interval, as /proc/stat's parser and the jetson
 * reader compute it, equals the utilisation set (computed here from the busy cores by hand); the
 * GPU load file holds the model's GPU load; offline cores' counters stop; idle after a run. */
#include "agent_board_table.h"
#include "agent_procfs.h"
#include "agent_sim_load.h"
#include "agent_sim_tree.h"
#include "agent_sysfs.h"
#include "jf_board.h"
#include "sim_model.h"

#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#define T_US_PER_S 1000000LL
#define T_TICK_PCT 0.05 // percent: counters are whole ticks (10 ms) over 100 s intervals
#define T_LAYOUTS  8

static void t_parse(const agent_sim_load_t *l, agent_proc_stat_t *ret)
{
    char text[AGENT_SIM_LOAD_STAT_MAX];
    size_t len = agent_sim_load_stat_text(l, text, sizeof text);
    assert_true(len > 0);
    assert_int_equal(agent_procfs_parse_stat(text, ret, NULL), 0);
}

// 2.5 busy cores on 6: core 0 (the training process) 100 %, each other core 1.5 / 5 = 30 %,
// all cores 2.5 / 6; the text keeps its length as the counters grow.
static void test_counters(void **state)
{
    (void) state;
    agent_sim_load_t l;
    agent_sim_load_init(&l, 6);
    agent_proc_stat_t a = {0}, b = {0};
    char text0[AGENT_SIM_LOAD_STAT_MAX];
    size_t len0 = agent_sim_load_stat_text(&l, text0, sizeof text0);
    agent_sim_load_set(&l, 0.8, 2.5, 10 * T_US_PER_S);
    t_parse(&l, &a);
    agent_sim_load_advance(&l, 110 * T_US_PER_S);
    t_parse(&l, &b);
    char text1[AGENT_SIM_LOAD_STAT_MAX];
    assert_int_equal(agent_sim_load_stat_text(&l, text1, sizeof text1), len0);
    double pct = 0;
    assert_true(agent_procfs_load_pct(&a.total, &b.total, &pct));
    assert_float_equal(pct, 100.0 * 2.5 / 6.0, T_TICK_PCT);
    assert_true(agent_procfs_load_pct(&a.cpus[0], &b.cpus[0], &pct));
    assert_float_equal(pct, 100.0, T_TICK_PCT);
    for (int i = 1; i < 6; i++) {
        assert_true(agent_procfs_load_pct(&a.cpus[i], &b.cpus[i], &pct));
        assert_float_equal(pct, 100.0 * (2.5 - 1.0) / 5.0, T_TICK_PCT);
    }
    assert_int_equal(agent_sim_load_gpu_permille(&l), 800);
    // Two cores online: their counters move, the others stop; busy cores are capped.
    agent_sim_load_set_online(&l, 2);
    agent_sim_load_set(&l, 1.5, 9.0, 110 * T_US_PER_S);
    assert_float_equal(l.busy_cores, 2.0, 0.0);
    assert_int_equal(agent_sim_load_gpu_permille(&l), 1000);
    agent_sim_load_advance(&l, 210 * T_US_PER_S);
    agent_proc_stat_t c = {0};
    t_parse(&l, &c);
    assert_true(agent_procfs_load_pct(&b.cpus[1], &c.cpus[1], &pct));
    assert_float_equal(pct, 100.0, T_TICK_PCT);
    assert_int_equal(c.cpus[4].busy, b.cpus[4].busy);
    assert_int_equal(c.cpus[4].idle, b.cpus[4].idle);
}

static const agent_board_layout_t *t_layout(jf_board_type_t type)
{
    const agent_board_layout_t *all[T_LAYOUTS] = {NULL};
    assert_true(agent_board_table_layouts(type, all, T_LAYOUTS) > 0);
    return all[0];
}

static json_t *t_sample(agent_sysfs_t *reader)
{
    jf_err_t err = {0};
    json_t *s = json_object();
    assert_int_equal(agent_sysfs_sample(reader, s, &err), 0);
    return s;
}

static double t_pct(const json_t *s, const char *key)
{
    const json_t *v = json_object_get(s, key);
    if (!json_is_number(v)) {
        fail_msg("sample has no %s", key);
    }
    return json_number_value(v);
}

// An AGX Xavier tree read by the jetson reader: the GPU load and the CPU load of the samples
// are the load the trainer's line gave; back to 0 at the end of the run.
static void test_tree_read_by_reader(void **state)
{
    (void) state;
    jf_err_t err = {0};
    sim_model_t *model = sim_model_load(SIM_PARAMS_PATH, &err);
    assert_non_null(model);
    agent_sim_tree_opts_t to = {.type = JF_BOARD_AGX_XAVIER, .model = model};
    sim_model_board_factors(model, JF_BOARD_AGX_XAVIER, 1, "sim-load", &to.factors);
    agent_sim_tree_t *tree = agent_sim_tree_new(&to, &err);
    assert_non_null(tree);
    agent_sysfs_opts_t so = {.sysfs_root = agent_sim_tree_sysfs_root(tree),
                             .proc_root = agent_sim_tree_proc_root(tree),
                             .layout = t_layout(JF_BOARD_AGX_XAVIER),
                             .source = "sysfs"};
    agent_sysfs_t *reader = agent_sysfs_new(&so, &err);
    assert_non_null(reader);
    json_t *s = t_sample(reader);
    assert_float_equal(t_pct(s, "gpu_load_pct"), 0.0, 0.0); // idle board
    json_decref(s);
    json_t *load = json_pack("{s:f, s:f}", "gpu_pct", 73.4, "cpu_busy_cores", 3.0);
    assert_int_equal(agent_sim_tree_set_load(tree, load, 0, &err), 0);
    assert_int_equal(agent_sim_tree_advance(tree, 101 * T_US_PER_S, &err), 0);
    s = t_sample(reader);
    assert_float_equal(t_pct(s, "gpu_load_pct"), 73.4, 0.0);
    assert_float_equal(t_pct(s, "cpu_load_pct"), 100.0 * 3.0 / 8.0, T_TICK_PCT); // MAXN: 8 cores
    json_decref(s);
    assert_int_equal(agent_sim_tree_set_load(tree, NULL, 101 * T_US_PER_S, &err), 0);
    assert_int_equal(agent_sim_tree_advance(tree, 201 * T_US_PER_S, &err), 0);
    s = t_sample(reader);
    assert_float_equal(t_pct(s, "gpu_load_pct"), 0.0, 0.0);
    assert_float_equal(t_pct(s, "cpu_load_pct"), 0.0, T_TICK_PCT);
    json_decref(s);
    json_decref(load);
    agent_sysfs_destroy(&reader);
    agent_sim_tree_destroy(&tree);
    sim_model_destroy(&model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counters),
        cmocka_unit_test(test_tree_read_by_reader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
