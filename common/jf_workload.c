/* The workload catalogue (jf_workload.h, docs/workloads.md): a constant table and lookups. */
#include "jf_workload.h"

#include <errno.h>
#include <string.h>

// Where the memory figures come from: the simulator's parameter file, whose workload section
// derives them from the shim's layer definitions (docs/simulator.md,
// "`workloads.<model>-<dataset>`").
#define S_SIM_SOURCE "the simulator's sim_params.yaml (derived from common/torch/jf_torch.cpp)"

// Shapes are the trainer's: jf_torch_model_shape (common/torch/jf_torch.h) and the dataset kinds
// of agent/train/train_dataset.h; the pairs are the ones whose shapes match there.
static const jf_workload_t s_catalogue[] = {
    {.name = "lenet5-mnist",
     .model = "lenet5",
     .dataset = "mnist",
     .shape = {1, 28, 28, 10},
     .has_memory = true,
     .parameters = 61706,
     .optimizer_copies = 3,
     .activation_bytes = 71000,
     .memory_source = S_SIM_SOURCE},
    {.name = "resnet18-cifar10",
     .model = "resnet18",
     .dataset = "cifar10",
     .shape = {3, 32, 32, 10},
     .has_memory = true,
     .parameters = 11173962,
     .optimizer_copies = 3,
     .activation_bytes = 8129000,
     .memory_source = S_SIM_SOURCE},
    {.name = "vgg11-cifar10",
     .model = "vgg11",
     .dataset = "cifar10",
     .shape = {3, 32, 32, 10},
     .has_memory = true,
     .parameters = 9231114,
     .optimizer_copies = 3,
     .activation_bytes = 2193000,
     .memory_source = S_SIM_SOURCE},
    {.name = "mobilenetv3-gld23k",
     .model = "mobilenetv3",
     .dataset = "gld23k",
     .shape = {3, 224, 224, 203},
     .has_memory = true,
     .parameters = 4462075,
     .optimizer_copies = 3,
     .activation_bytes = 54640000,
     .memory_source = S_SIM_SOURCE},
};

#define S_N (sizeof s_catalogue / sizeof s_catalogue[0])

size_t jf_workload_count(void)
{
    return S_N;
}

const jf_workload_t *jf_workload_at(size_t i)
{
    return i < S_N ? &s_catalogue[i] : NULL;
}

const jf_workload_t *jf_workload_find(const char *model, const char *dataset)
{
    for (size_t i = 0; model && dataset && i < S_N; i++) {
        if (strcmp(s_catalogue[i].model, model) == 0 &&
            strcmp(s_catalogue[i].dataset, dataset) == 0) {
            return &s_catalogue[i];
        }
    }
    return NULL;
}

bool jf_workload_is_model(const char *name)
{
    for (size_t i = 0; name && i < S_N; i++) {
        if (strcmp(s_catalogue[i].model, name) == 0) {
            return true;
        }
    }
    return false;
}

bool jf_workload_is_dataset(const char *name)
{
    for (size_t i = 0; name && i < S_N; i++) {
        if (strcmp(s_catalogue[i].dataset, name) == 0) {
            return true;
        }
    }
    return false;
}

// The lists are literals rather than joined at run time so that they need no buffer; the unit
// test checks that each equals the table, in order and without repeats.
const char *jf_workload_models(void)
{
    return "lenet5, resnet18, vgg11, mobilenetv3";
}

const char *jf_workload_datasets(void)
{
    return "mnist, cifar10, gld23k";
}

const char *jf_workload_pairs(void)
{
    return "lenet5-mnist, resnet18-cifar10, vgg11-cifar10, mobilenetv3-gld23k";
}

// The first entry for a model, for saying what it takes.
static const jf_workload_t *s_first_of_model(const char *model)
{
    for (size_t i = 0; i < S_N; i++) {
        if (strcmp(s_catalogue[i].model, model) == 0) {
            return &s_catalogue[i];
        }
    }
    return NULL;
}

int jf_workload_check_pair(const char *model, const char *dataset, jf_err_t *err)
{
    if (!jf_workload_is_model(model)) {
        return jf_err_set(err, -EINVAL, "unknown model '%.64s', expected one of: %s",
                          model ? model : "(null)", jf_workload_models());
    }
    if (!jf_workload_is_dataset(dataset)) {
        return jf_err_set(err, -EINVAL, "unknown dataset '%.64s', expected one of: %s",
                          dataset ? dataset : "(null)", jf_workload_datasets());
    }
    if (jf_workload_find(model, dataset)) {
        return 0;
    }
    const jf_workload_t *w = s_first_of_model(model);
    const jf_workload_shape_t *s = &w->shape;
    // No list of every pair here: with a file:line:col and a workload in front, it would not fit
    // in the 256 bytes of err; the model's own dataset is what the user needs.
    return jf_err_set(err, -EINVAL,
                      "model '%s' does not train on dataset '%s': %s takes %dx%dx%d input with "
                      "%d classes (%s)",
                      model, dataset, model, s->channels, s->height, s->width, s->classes,
                      w->dataset);
}

int jf_workload_memory_bytes(const jf_workload_t *w, int batch_size, int64_t *ret_bytes)
{
    if (batch_size < 1) {
        return -EINVAL;
    }
    if (!w || !w->has_memory) {
        return -ENOENT;
    }
    *ret_bytes = w->parameters * JF_WORKLOAD_FP32_BYTES * w->optimizer_copies +
                 (int64_t) batch_size * w->activation_bytes;
    return 0;
}
