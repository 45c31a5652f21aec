/* Counting the work of a training minibatch (jf_torch_flops.h, docs/roofline.md "Counting"): one
 * forward pass on the CPU records the autograd graph, and a walk over its nodes applies one rule
 * per operation (convolution, matrix product, BatchNorm, element-wise, pooling, views) to the
 * shapes the graph holds. Not a profiler: nothing is timed. */
#include "jf_torch_flops.h"
#include "jf_torch_internal.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>

#include <cerrno>
#include <cstring>
#include <type_traits>
#include <unordered_set>
#include <vector>

namespace
{

using torch::autograd::AccumulateGrad;
using torch::autograd::Node;

enum class s_cls { CONV, MATMUL, NORM, ELEMENT, POOL, VIEW, LEAF };

// One rule: the autograd node names that start with prefix, their class and, for NORM, ELEMENT
// and POOL, the FLOPs per output (NORM, ELEMENT) or input (POOL) element.
struct s_rule {
    const char *prefix;
    s_cls cls;
    double flop_per_elem;
};

const s_rule s_rules[] = {
    {"ConvolutionBackward", s_cls::CONV, 0},
    {"AddmmBackward", s_cls::MATMUL, 0},
    {"MmBackward", s_cls::MATMUL, 0},
    {"NativeBatchNormBackward", s_cls::NORM, 4}, // statistics 2 + normalise-and-scale 2
    {"ReluBackward", s_cls::ELEMENT, 1},
    {"HardswishBackward", s_cls::ELEMENT, 5},   // x * min(max(x + 3, 0), 6) / 6
    {"HardsigmoidBackward", s_cls::ELEMENT, 4}, // min(max(x + 3, 0), 6) / 6
    {"MulBackward", s_cls::ELEMENT, 1},
    {"AddBackward", s_cls::ELEMENT, 1},
    {"NativeDropoutBackward", s_cls::ELEMENT, 2}, // mask and scale
    {"MaxPool2DWithIndicesBackward", s_cls::POOL, 1},
    {"AdaptiveAvgPool2DBackward", s_cls::POOL, 1},
    {"MeanBackward", s_cls::POOL, 1},
    {"ViewBackward", s_cls::VIEW, 0},
    {"ReshapeAliasBackward", s_cls::VIEW, 0},
    {"UnsafeViewBackward", s_cls::VIEW, 0},
    {"TBackward", s_cls::VIEW, 0},
    {"TransposeBackward", s_cls::VIEW, 0},
    {"PermuteBackward", s_cls::VIEW, 0},
    {"SqueezeBackward", s_cls::VIEW, 0},
    {"UnsqueezeBackward", s_cls::VIEW, 0},
    {"ExpandBackward", s_cls::VIEW, 0},
    {"torch::autograd::AccumulateGrad", s_cls::LEAF, 0},
};

const s_rule *s_find_rule(const std::string &name)
{
    for (const s_rule &r : s_rules) {
        if (name.compare(0, strlen(r.prefix), r.prefix) == 0) {
            return &r;
        }
    }
    return nullptr;
}

// The element count of a node's input slot. libtorch 1.13 keeps InputMetadata's shape private;
// zeros_like() is the public way to it (a small allocation at the counting batch size).
double s_numel(const Node *node, size_t input_nr)
{
    return static_cast<double>(node->input_metadata(input_nr).zeros_like().numel());
}

// The parameter an input edge leads to through views (a Linear's transposed weight), if any.
const AccumulateGrad *s_param_behind(const Node *fn)
{
    for (int depth = 0; fn && depth < 4; depth++) {
        if (const auto *acc = dynamic_cast<const AccumulateGrad *>(fn)) {
            return acc;
        }
        const s_rule *r = s_find_rule(fn->name());
        if (!r || r->cls != s_cls::VIEW || fn->next_edges().size() != 1) {
            return nullptr;
        }
        fn = fn->next_edges()[0].function.get();
    }
    return nullptr;
}

// What one node reads and writes: activations in and out (elements), its weight and bias.
struct s_node_io {
    double in_elems = 0;
    double out_elems = 0;
    at::Tensor weight; // the parameter with more than one dimension, undefined if none
    bool bias = false; // a one-dimensional parameter among the inputs
};

s_node_io s_node_read(const Node *node)
{
    s_node_io io;
    for (uint32_t i = 0; i < node->num_inputs(); i++) {
        io.out_elems += s_numel(node, i);
    }
    for (const auto &edge : node->next_edges()) {
        if (!edge.is_valid()) {
            continue;
        }
        if (const AccumulateGrad *acc = s_param_behind(edge.function.get())) {
            if (acc->variable.dim() > 1) {
                io.weight = acc->variable;
            } else {
                io.bias = true;
            }
            continue;
        }
        io.in_elems += s_numel(edge.function.get(), edge.input_nr);
    }
    return io;
}

// Forward FLOPs of one node by its rule; -1 for a node without a rule.
double s_node_flop(const s_rule *r, const s_node_io &io)
{
    if (!r) {
        return -1;
    }
    double bias = io.bias ? io.out_elems : 0;
    switch (r->cls) {
    case s_cls::CONV: // weight out x in/groups x kh x kw: a multiply-add per weight per output
        return io.weight.defined()
                   ? 2 * io.out_elems * static_cast<double>(io.weight.numel() / io.weight.size(0)) +
                         bias
                   : -1;
    case s_cls::MATMUL: // weight out x in
        return io.weight.defined()
                   ? 2 * io.out_elems * static_cast<double>(io.weight.size(1)) + bias
                   : -1;
    case s_cls::NORM:
    case s_cls::ELEMENT:
        return r->flop_per_elem * io.out_elems;
    case s_cls::POOL:
        return r->flop_per_elem * io.in_elems;
    case s_cls::VIEW:
    case s_cls::LEAF:
        break;
    }
    return 0;
}

// Adds one node's work to the batch totals (the cost's per-sample fields hold batch totals
// until s_walk divides them).
void s_count_node(const Node *node, jf_torch_cost_t *c)
{
    const s_rule *r = s_find_rule(node->name());
    c->ops++;
    if (r && r->cls == s_cls::LEAF) {
        const auto *acc = dynamic_cast<const AccumulateGrad *>(node);
        c->params += acc ? acc->variable.numel() : 0;
        return;
    }
    if (r && r->cls == s_cls::VIEW) {
        return;
    }
    s_node_io io = s_node_read(node);
    double flop = s_node_flop(r, io);
    if (flop < 0) {
        c->ops_unknown++;
        flop = io.out_elems;
    }
    bool heavy = r && (r->cls == s_cls::CONV || r->cls == s_cls::MATMUL);
    double bytes = (io.in_elems + io.out_elems) * JF_TORCH_FLOPS_ELEM_BYTES;
    c->fwd_flop_per_sample += flop;
    c->bwd_flop_per_sample += heavy ? 2 * flop : flop;
    c->fwd_bytes_per_sample += bytes;
    c->bwd_bytes_per_sample += 2 * bytes;
}

// Walks the graph behind out once per node; input_elems is the batch's input (no gradient, so
// not in the graph), read once by the first layer.
jf_torch_cost_t s_walk(const torch::Tensor &out, double batch, double input_elems)
{
    jf_torch_cost_t c = {};
    std::unordered_set<const Node *> seen;
    std::vector<const Node *> todo = {out.grad_fn().get()};
    while (!todo.empty()) {
        const Node *node = todo.back();
        todo.pop_back();
        if (!node || !seen.insert(node).second) {
            continue;
        }
        s_count_node(node, &c);
        for (const auto &edge : node->next_edges()) {
            if (edge.is_valid()) {
                todo.push_back(edge.function.get());
            }
        }
    }
    c.fwd_bytes_per_sample += input_elems * JF_TORCH_FLOPS_ELEM_BYTES;
    c.fwd_flop_per_sample /= batch;
    c.bwd_flop_per_sample /= batch;
    c.fwd_bytes_per_sample /= batch;
    c.bwd_bytes_per_sample /= batch;
    c.param_bytes = static_cast<double>(c.params) * JF_TORCH_FLOPS_ELEM_BYTES;
    return c;
}

int s_check_layer(const jf_torch_layer_t *l, jf_err_t *err)
{
    const int side = JF_TORCH_LAYER_SIDE_MAX;
    // The kind comes from C, where any int fits the enum; in C++ loading a value outside the
    // enumerators' range is undefined (UBSan: "not a valid value"), so it is read as its bytes.
    std::underlying_type_t<jf_torch_layer_kind_t> kind = 0;
    if (l) {
        std::memcpy(&kind, &l->kind, sizeof kind);
    }
    if (!l || (kind != JF_TORCH_LAYER_CONV2D && kind != JF_TORCH_LAYER_LINEAR)) {
        return jf_err_set(err, -EINVAL, "torch: layer missing or of unknown kind");
    }
    if (l->in < 1 || l->in > side || l->out < 1 || l->out > side) {
        return jf_err_set(err, -EINVAL, "torch: layer 'in' and 'out' must be in 1..%d, got %d, %d",
                          side, l->in, l->out);
    }
    if (l->kind == JF_TORCH_LAYER_LINEAR) {
        return 0;
    }
    if (l->height < 1 || l->height > side || l->width < 1 || l->width > side) {
        return jf_err_set(err, -EINVAL, "torch: layer 'height' and 'width' must be in 1..%d", side);
    }
    if (l->kernel < 1 || l->kernel > l->height || l->kernel > l->width || l->stride < 1 ||
        l->stride > l->kernel || l->padding < 0 || l->padding >= l->kernel) {
        return jf_err_set(err, -EINVAL,
                          "torch: layer 'kernel' %d, 'stride' %d or 'padding' %d out of range "
                          "(kernel 1..side, stride 1..kernel, padding 0..kernel-1)",
                          l->kernel, l->stride, l->padding);
    }
    return 0;
}

} // namespace

extern "C" int jf_torch_model_cost(jf_torch_model_kind_t model, jf_torch_cost_t *ret_cost,
                                   jf_err_t *err)
{
    jf_torch_shape_t shape = {};
    if (jf_torch_model_shape(model, &shape, err) != 0) {
        return -EINVAL;
    }
    try {
        const int64_t batch = JF_TORCH_FLOPS_BATCH;
        torch::Tensor x = torch::rand({batch, shape.channels, shape.height, shape.width});
        torch::Tensor out = jf_torch_internal_forward(model, x);
        *ret_cost = s_walk(out, static_cast<double>(batch), static_cast<double>(x.numel()));
        return 0;
    } catch (...) {
        return jf_torch_internal_fail(err, "counting work");
    }
}

extern "C" int jf_torch_layer_cost(const jf_torch_layer_t *layer, jf_torch_cost_t *ret_cost,
                                   jf_err_t *err)
{
    if (s_check_layer(layer, err) != 0) {
        return -EINVAL;
    }
    try {
        const int64_t batch = JF_TORCH_FLOPS_BATCH;
        torch::Tensor x, out;
        if (layer->kind == JF_TORCH_LAYER_LINEAR) {
            torch::nn::Linear fc(torch::nn::LinearOptions(layer->in, layer->out).bias(layer->bias));
            x = torch::rand({batch, layer->in});
            out = fc->forward(x);
        } else {
            torch::nn::Conv2d conv(torch::nn::Conv2dOptions(layer->in, layer->out, layer->kernel)
                                       .stride(layer->stride)
                                       .padding(layer->padding)
                                       .bias(layer->bias));
            x = torch::rand({batch, layer->in, layer->height, layer->width});
            out = conv->forward(x);
        }
        *ret_cost = s_walk(out, static_cast<double>(batch), static_cast<double>(x.numel()));
        return 0;
    } catch (...) {
        return jf_torch_internal_fail(err, "counting work");
    }
}

extern "C" void jf_torch_cost_minibatch(const jf_torch_cost_t *cost, int batch,
                                        jf_torch_work_t *ret_work)
{
    double b = batch;
    jf_torch_work_t w = {};
    w.fwd_flop = b * cost->fwd_flop_per_sample;
    w.bwd_flop = b * cost->bwd_flop_per_sample;
    w.fwd_bytes = cost->param_bytes + b * cost->fwd_bytes_per_sample;
    w.bwd_bytes = 2 * cost->param_bytes + b * cost->bwd_bytes_per_sample;
    w.flop = w.fwd_flop + w.bwd_flop;
    w.bytes = w.fwd_bytes + w.bwd_bytes;
    *ret_work = w;
}
