/* Unit tests of the workload catalogue (common/jf_workload.c): pair lookup and check from a
 * table, shapes, memory per batch, and the vocabulary strings against the table. */
#include "jf_workload.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static void test_check_pair(void **state)
{
    (void) state;
    static const struct {
        const char *model;
        const char *dataset;
        int code;
        const char *fragment; // in err.msg; NULL for success
    } rows[] = {
        {"lenet5", "mnist", 0, NULL},
        {"resnet18", "cifar10", 0, NULL},
        {"vgg11", "cifar10", 0, NULL},
        {"mobilenetv3", "gld23k", 0, NULL},
        {"vgg11", "mnist", -EINVAL,
         "model 'vgg11' does not train on dataset 'mnist': vgg11 takes 3x32x32 input with 10 "
         "classes (cifar10)"},
        {"lenet5", "cifar10", -EINVAL, "lenet5 takes 1x28x28 input with 10 classes (mnist)"},
        {"mobilenetv3", "mnist", -EINVAL, "mobilenetv3 takes 3x224x224 input with 203 classes"},
        {"resnet18", "gld23k", -EINVAL, "model 'resnet18' does not train on dataset 'gld23k'"},
        {"resnet50", "cifar10", -EINVAL,
         "unknown model 'resnet50', expected one of: lenet5, resnet18, vgg11, mobilenetv3"},
        {"lenet5", "imagenet", -EINVAL,
         "unknown dataset 'imagenet', expected one of: mnist, cifar10, gld23k"},
        {"LeNet5", "mnist", -EINVAL, "unknown model 'LeNet5'"},
        {NULL, "mnist", -EINVAL, "unknown model '(null)'"},
        {"lenet5", NULL, -EINVAL, "unknown dataset '(null)'"},
        {"", "", -EINVAL, "unknown model ''"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        jf_err_t err = {0};
        int rc = jf_workload_check_pair(rows[i].model, rows[i].dataset, &err);
        if (rc != rows[i].code) {
            fail_msg("row %zu: rc %d, expected %d (%s)", i, rc, rows[i].code, err.msg);
        }
        if (rows[i].fragment && !strstr(err.msg, rows[i].fragment)) {
            fail_msg("row %zu: '%s' does not contain '%s'", i, err.msg, rows[i].fragment);
        }
        // find agrees with check on every row
        bool found = jf_workload_find(rows[i].model, rows[i].dataset) != NULL;
        assert_int_equal(found, rows[i].code == 0);
    }
    assert_int_equal(jf_workload_check_pair("vgg11", "mnist", NULL), -EINVAL); // err may be NULL
}

static void test_shapes(void **state)
{
    (void) state;
    static const struct {
        const char *model;
        const char *dataset;
        jf_workload_shape_t shape;
        const char *name;
    } rows[] = {
        {"lenet5", "mnist", {1, 28, 28, 10}, "lenet5-mnist"},
        {"resnet18", "cifar10", {3, 32, 32, 10}, "resnet18-cifar10"},
        {"vgg11", "cifar10", {3, 32, 32, 10}, "vgg11-cifar10"},
        {"mobilenetv3", "gld23k", {3, 224, 224, 203}, "mobilenetv3-gld23k"},
    };
    assert_int_equal(jf_workload_count(), sizeof rows / sizeof rows[0]);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const jf_workload_t *w = jf_workload_find(rows[i].model, rows[i].dataset);
        assert_non_null(w);
        assert_ptr_equal(w, jf_workload_at(i));
        assert_string_equal(w->name, rows[i].name);
        assert_int_equal(w->shape.channels, rows[i].shape.channels);
        assert_int_equal(w->shape.height, rows[i].shape.height);
        assert_int_equal(w->shape.width, rows[i].shape.width);
        assert_int_equal(w->shape.classes, rows[i].shape.classes);
    }
    assert_null(jf_workload_at(jf_workload_count()));
}

static void test_memory(void **state)
{
    (void) state;
    // Expected values worked by hand from docs/simulator.md's workload table:
    // parameters * 4 bytes * 3 copies + batch * activation bytes per sample.
    static const struct {
        const char *model;
        const char *dataset;
        int batch;
        int code;
        int64_t bytes;
    } rows[] = {
        {"lenet5", "mnist", 1, 0, INT64_C(740472) + INT64_C(71000)},
        {"lenet5", "mnist", 16, 0, INT64_C(740472) + INT64_C(1136000)},
        {"resnet18", "cifar10", 16, 0, INT64_C(134087544) + INT64_C(130064000)},
        {"vgg11", "cifar10", 32, 0, INT64_C(110773368) + INT64_C(70176000)},
        {"mobilenetv3", "gld23k", 16, 0, INT64_C(53544900) + INT64_C(874240000)},
        {"lenet5", "mnist", 0, -EINVAL, 0},
        {"lenet5", "mnist", -3, -EINVAL, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int64_t bytes = -1;
        const jf_workload_t *w = jf_workload_find(rows[i].model, rows[i].dataset);
        assert_non_null(w);
        assert_true(w->has_memory);
        assert_non_null(w->memory_source);
        int rc = jf_workload_memory_bytes(w, rows[i].batch, &bytes);
        if (rc != rows[i].code) {
            fail_msg("row %zu: rc %d, expected %d", i, rc, rows[i].code);
        }
        assert_int_equal(bytes, rc == 0 ? rows[i].bytes : -1); // written only on success
    }
    // An entry without figures is absent, not zero.
    jf_workload_t unknown = *jf_workload_at(0);
    unknown.has_memory = false;
    int64_t bytes = -1;
    assert_int_equal(jf_workload_memory_bytes(&unknown, 16, &bytes), -ENOENT);
    assert_int_equal(bytes, -1);
    assert_int_equal(jf_workload_memory_bytes(NULL, 16, &bytes), -ENOENT);
}

// Each comma-separated item of list, in order, must be produced by item(0..), without repeats.
static void s_check_list(const char *list, const char *(*item)(const jf_workload_t *), bool dedupe)
{
    char want[512] = {0};
    size_t used = 0;
    for (size_t i = 0; i < jf_workload_count(); i++) {
        const char *text = item(jf_workload_at(i));
        bool seen = false;
        for (size_t j = 0; dedupe && j < i; j++) {
            seen = seen || strcmp(item(jf_workload_at(j)), text) == 0;
        }
        if (!seen) {
            int n = snprintf(want + used, sizeof want - used, "%s%s", used ? ", " : "", text);
            assert_true(n > 0 && (size_t) n < sizeof want - used);
            used += (size_t) n;
        }
    }
    assert_string_equal(list, want);
}

static const char *s_model(const jf_workload_t *w)
{
    return w->model;
}

static const char *s_dataset(const jf_workload_t *w)
{
    return w->dataset;
}

static const char *s_name(const jf_workload_t *w)
{
    return w->name;
}

static void test_vocabularies(void **state)
{
    (void) state;
    s_check_list(jf_workload_models(), s_model, true);
    s_check_list(jf_workload_datasets(), s_dataset, true);
    s_check_list(jf_workload_pairs(), s_name, false);
    static const struct {
        bool (*is)(const char *);
        const char *yes[4];
        const char *no[5];
    } rows[] = {
        {jf_workload_is_model,
         {"lenet5", "resnet18", "vgg11", "mobilenetv3"},
         {"resnet", "Lenet5", "lenet5 ", "", NULL}},
        {jf_workload_is_dataset,
         {"mnist", "cifar10", "gld23k", NULL},
         {"cifar100", "MNIST", "mnist\n", "", NULL}},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        for (size_t j = 0; j < 4 && rows[i].yes[j]; j++) {
            assert_true(rows[i].is(rows[i].yes[j]));
        }
        for (size_t j = 0; j < 5; j++) {
            assert_false(rows[i].is(rows[i].no[j]));
        }
    }
    for (size_t i = 0; i < jf_workload_count(); i++) {
        const jf_workload_t *w = jf_workload_at(i);
        char name[128] = {0};
        (void) snprintf(name, sizeof name, "%s-%s", w->model, w->dataset);
        assert_string_equal(w->name, name);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_pair),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_vocabularies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
