/* The workload catalogue (common/jf_workload.c) against its sources: the trainer's models and
 * dataset kinds (common/torch/jf_torch.h, agent/train/train_dataset.h), which pair by input shape
 * and class count, and the simulator's parameter file (sim_params.yaml), which holds
 * the memory figures. A change to either source that the catalogue does not follow fails here. */
#include "jf_torch.h"
#include "jf_workload.h"
#include "sim_params.h"
#include "train_dataset.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static bool t_same(const jf_workload_shape_t *a, int channels, int height, int width, int classes)
{
    return a->channels == channels && a->height == height && a->width == width &&
           a->classes == classes;
}

// Every entry's model and dataset exist in the trainer with exactly the catalogue's shape.
static void test_entries_match_trainer(void **state)
{
    (void) state;
    for (size_t i = 0; i < jf_workload_count(); i++) {
        const jf_workload_t *w = jf_workload_at(i);
        jf_err_t err = {0};
        jf_torch_model_kind_t m = JF_TORCH_MODEL_LENET5;
        train_dataset_kind_t d = TRAIN_DATASET_MNIST;
        jf_torch_shape_t ms = {0};
        assert_int_equal(jf_torch_model_parse(w->model, &m, &err), 0);
        assert_int_equal(jf_torch_model_shape(m, &ms, &err), 0);
        assert_int_equal(train_dataset_kind_parse(w->dataset, &d, &err), 0);
        train_dataset_shape_t ds = train_dataset_kind_shape(d);
        if (!t_same(&w->shape, ms.channels, ms.height, ms.width, ms.classes) ||
            !t_same(&w->shape, ds.channels, ds.height, ds.width, ds.classes)) {
            fail_msg("%s: catalogue shape differs from the trainer's", w->name);
        }
    }
}

// The trainer trains a model on a dataset kind exactly when their shapes agree
// (agent/train/train_run.c); the catalogue must list exactly those pairs.
static void test_pairs_are_the_trainers(void **state)
{
    (void) state;
    size_t pairs = 0;
    for (int m = JF_TORCH_MODEL_LENET5; m <= JF_TORCH_MODEL_MOBILENETV3; m++) {
        jf_torch_shape_t ms = {0};
        assert_int_equal(jf_torch_model_shape((jf_torch_model_kind_t) m, &ms, NULL), 0);
        for (int d = TRAIN_DATASET_MNIST; d <= TRAIN_DATASET_GLD23K; d++) {
            train_dataset_shape_t ds = train_dataset_kind_shape((train_dataset_kind_t) d);
            bool fits = ms.channels == ds.channels && ms.height == ds.height &&
                        ms.width == ds.width && ms.classes == ds.classes;
            const char *model = jf_torch_model_name((jf_torch_model_kind_t) m);
            const char *dataset = train_dataset_kind_name((train_dataset_kind_t) d);
            if (fits != (jf_workload_find(model, dataset) != NULL)) {
                fail_msg("%s on %s: trainer says %d, catalogue disagrees", model, dataset, fits);
            }
            pairs += fits ? 1 : 0;
        }
    }
    assert_int_equal(pairs, jf_workload_count());
}

// The simulator's workloads are the catalogue's, with the same memory figures.
static void test_memory_matches_simulator(void **state)
{
    (void) state;
    sim_params_t *p = calloc(1, sizeof *p);
    assert_non_null(p);
    jf_err_t err = {0};
    if (sim_params_load(SIM_PARAMS_PATH, p, &err) != 0) {
        fail_msg("%s", err.msg);
    }
    assert_int_equal(p->n_workloads, jf_workload_count());
    for (size_t i = 0; i < jf_workload_count(); i++) {
        const jf_workload_t *w = jf_workload_at(i);
        const sim_workload_params_t *s = sim_params_workload(p, w->model, w->dataset);
        if (!s || !w->has_memory) {
            fail_msg("%s: missing in %s or without figures", w->name, SIM_PARAMS_PATH);
        }
        // The file gives MB with up to 4 decimals; the loader multiplies by 1e6 in double.
        assert_true(fabs(s->parameters - (double) w->parameters) < 0.5);
        assert_true(fabs(s->optimizer_copies - (double) w->optimizer_copies) < 1e-9);
        assert_true(fabs(s->activation_bytes - (double) w->activation_bytes) < 0.5);
        assert_true(fabs(s->input_bytes -
                         4.0 * w->shape.channels * w->shape.height * w->shape.width) < 0.5);
    }
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entries_match_trainer),
        cmocka_unit_test(test_pairs_are_the_trainers),
        cmocka_unit_test(test_memory_matches_simulator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
