/* The work of one training minibatch, counted from a model's layers (docs/roofline.md
 * "Counting"): floating-point operations and bytes moved, forward and backward, for the roofline.
 * Not a measurement and not a profiler: a model of the work, from the autograd graph of one
 * forward pass on the CPU. No C++ type, tensor or exception crosses this header. */
#ifndef JF_TORCH_FLOPS_H
#define JF_TORCH_FLOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "jf_err.h"
#include "jf_torch.h"

#define JF_TORCH_FLOPS_ELEM_BYTES 4 // FP32: every tensor element moved counts 4 bytes
#define JF_TORCH_FLOPS_BATCH                                                                       \
    2                                // samples of the forward pass counted (training-mode BatchNorm
                                     // needs more than one value per channel)
#define JF_TORCH_LAYER_SIDE_MAX 1024 // largest input side or channel count of a single layer

// The work of a model, split into what scales with the batch and what does not.
typedef struct jf_torch_cost {
    double fwd_flop_per_sample;  // forward FLOPs per sample (a multiply-add is 2)
    double bwd_flop_per_sample;  // backward FLOPs per sample
    double fwd_bytes_per_sample; // forward activation bytes read and written per sample
    double bwd_bytes_per_sample; // backward activation and gradient bytes per sample
    double param_bytes;          // bytes of the parameters (FP32), read once per pass
    int64_t params;              // parameter elements
    int ops;                     // graph nodes counted (views included)
    int ops_unknown;             // nodes without a rule, counted as 1 FLOP per output element
} jf_torch_cost_t;

// One minibatch's totals from a cost (jf_torch_cost_minibatch).
typedef struct jf_torch_work {
    double fwd_flop;  // forward FLOPs
    double bwd_flop;  // backward FLOPs
    double fwd_bytes; // forward bytes: parameters once + activations
    double bwd_bytes; // backward bytes: parameters and their gradients + activations
    double flop;      // fwd_flop + bwd_flop
    double bytes;     // fwd_bytes + bwd_bytes
} jf_torch_work_t;

typedef enum jf_torch_layer_kind {
    JF_TORCH_LAYER_CONV2D = 0, // Conv2d(in, out, kernel, stride, padding) on in x height x width
    JF_TORCH_LAYER_LINEAR,     // Linear(in, out) on in features (height, width unused)
} jf_torch_layer_kind_t;

// One layer, for checking the counting rules on a layer alone.
typedef struct jf_torch_layer {
    jf_torch_layer_kind_t kind;
    int in;      // input channels or features, 1..JF_TORCH_LAYER_SIDE_MAX
    int out;     // output channels or features, 1..JF_TORCH_LAYER_SIDE_MAX
    int kernel;  // CONV2D: square kernel side, 1..height
    int stride;  // CONV2D: 1..kernel
    int padding; // CONV2D: 0..kernel-1
    int height;  // CONV2D: input height, 1..JF_TORCH_LAYER_SIDE_MAX
    int width;   // CONV2D: input width, 1..JF_TORCH_LAYER_SIDE_MAX
    bool bias;   // the layer has a bias
} jf_torch_layer_t;

// Counts the work of one forward and backward pass of a model per sample, by walking the
// autograd graph of a forward pass of JF_TORCH_FLOPS_BATCH samples built on the CPU (convolution,
// linear, BatchNorm, activations, pooling, element-wise ops; rules in docs/roofline.md). Takes
// about a second for mobilenetv3. Returns 0, -EINVAL (unknown model), -ENOMEM or -EIO.
int jf_torch_model_cost(jf_torch_model_kind_t model, jf_torch_cost_t *ret_cost, jf_err_t *err);

// The same count for a network of one layer (its input needs no gradient, like a model's image
// input). Returns 0, -EINVAL (a field out of its range, named in err), -ENOMEM or -EIO.
int jf_torch_layer_cost(const jf_torch_layer_t *layer, jf_torch_cost_t *ret_cost, jf_err_t *err);

// One minibatch of batch samples (batch >= 1): per-sample parts times batch plus the parameters
// (forward: read once; backward: read and their gradients written, 2x).
void jf_torch_cost_minibatch(const jf_torch_cost_t *cost, int batch, jf_torch_work_t *ret_work);

#ifdef __cplusplus
}
#endif

#endif
