/* The workload catalogue: which model trains on which dataset, the input shape of each pair and,
 * where known, the memory its training tensors need per batch. One constant table shared by the
 * sweep loader (coordinator and CLI), the run spec's vocabularies and the agent's run check. It
 * is not the trainer (agent/train) nor the simulator (agent/sim): their figures are the sources,
 * cross-checked by tests/unit/agent/workload_sources_test.c. docs/workloads.md documents it. */
#ifndef JF_WORKLOAD_H
#define JF_WORKLOAD_H

#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JF_WORKLOAD_FP32_BYTES 4 // bytes per parameter: every model trains in FP32

// One sample as the model takes it: channels x height x width floats in CHW order.
typedef struct jf_workload_shape {
    int channels; // input channels
    int height;   // pixels
    int width;    // pixels
    int classes;  // output classes; labels are 0..classes-1
} jf_workload_shape_t;

// One supported model-dataset pair (a plain value record in a constant table).
typedef struct jf_workload {
    const char *name;          // "<model>-<dataset>", the simulator's workload name
    const char *model;         // static string, e.g. "resnet18"
    const char *dataset;       // static string, e.g. "cifar10"
    jf_workload_shape_t shape; // the model's input = the dataset's sample (jf_torch.h)
    bool has_memory;           // the three figures below are known; false: absent, not zero
    int64_t parameters;        // trainable parameters, count
    int optimizer_copies;      // parameter-sized tensors kept: weights, gradients, momentum
    int64_t activation_bytes;  // activations saved for the backward pass per sample, bytes
    const char *memory_source; // where the three figures come from (static string), or NULL
} jf_workload_t;

// Number of catalogue entries, and entry i (0..count-1; NULL past the end). Borrowed, static.
size_t jf_workload_count(void);
const jf_workload_t *jf_workload_at(size_t i);

// The pair's entry, or NULL if the model does not train on the dataset (or either is unknown or
// NULL). Borrowed, static.
const jf_workload_t *jf_workload_find(const char *model, const char *dataset);

// Checks a pair. Returns 0, or -EINVAL with err saying what is wrong and what is expected:
// "unknown model 'x', expected one of: ...", "unknown dataset ...", or "model 'vgg11' does not
// train on dataset 'mnist': vgg11 takes 3x32x32 input with 10 classes (cifar10)". The caller
// adds the position.
int jf_workload_check_pair(const char *model, const char *dataset, jf_err_t *err);

// Memory the training tensors of one step need at batch_size (>= 1): weights, gradients and
// optimizer state (parameters * 4 * optimizer_copies) plus batch_size samples of saved
// activations. Not counted: the allocator's overhead, the runtime (CUDA context, libraries) and
// loader workers. Returns 0 and writes *ret_bytes, -ENOENT if the figures are not known (nothing
// written), or -EINVAL for batch_size < 1.
int jf_workload_memory_bytes(const jf_workload_t *w, int batch_size, int64_t *ret_bytes);

bool jf_workload_is_model(const char *name);   // a model of some catalogue entry
bool jf_workload_is_dataset(const char *name); // a dataset of some catalogue entry

// Comma-separated vocabularies for messages, in catalogue order (static strings):
// models "lenet5, resnet18, ...", datasets "mnist, cifar10, ...", pairs "lenet5-mnist, ...".
const char *jf_workload_models(void);
const char *jf_workload_datasets(void);
const char *jf_workload_pairs(void);

#endif
