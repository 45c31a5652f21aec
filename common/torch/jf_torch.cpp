/* The libtorch shim (STYLE.md §8): the models (LeNet-5; ResNet-18 and VGG-11 in CIFAR form;
 * MobileNetV3-Large as torchvision builds it), one SGD training step, device selection and build
 * information behind the C header jf_torch.h. Every extern "C" body catches every exception and
 * returns a negative errno plus a message; out-of-memory becomes -ENOMEM "out of memory" so the
 * trainer can report reason "oom". */
#include "jf_torch.h"
#include "jf_torch_session_internal.h"

#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <c10/util/Exception.h>
#include <torch/cuda.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <link.h>
#include <memory>
#include <string>

#define JF_TORCH_MSG_MAX     200 // longest libtorch message copied into an error
#define JF_TORCH_CLASSES     10
#define JF_TORCH_MNIST_SIDE  28
#define JF_TORCH_CIFAR_SIDE  32
#define JF_TORCH_GLD_CLASSES 203 // GLD-23k landmarks
#define JF_TORCH_GLD_SIDE    224

// MobileNetV3-Large as torchvision's mobilenet_v3_large (width 1.0, no dilation).
#define JF_TORCH_MNV3_DIVISOR     8     // channel counts are rounded to multiples of this
#define JF_TORCH_MNV3_SE_FACTOR   4     // squeeze-and-excitation reduces channels by this factor
#define JF_TORCH_MNV3_STEM        16    // channels of the first convolution
#define JF_TORCH_MNV3_LAST_FACTOR 6     // last convolution: this many times the last block's width
#define JF_TORCH_MNV3_HIDDEN      1280  // width of the classifier's hidden layer
#define JF_TORCH_MNV3_DROPOUT     0.2   // classifier dropout
#define JF_TORCH_MNV3_BN_EPS      0.001 // torchvision's BatchNorm settings for MobileNetV3
#define JF_TORCH_MNV3_BN_MOMENTUM 0.01
#define JF_TORCH_MNV3_LINEAR_STD  0.01 // standard deviation of the initial linear weights

namespace
{

using jf_torch_internal::jf_net;

// LeNet-5 as commonly written for MNIST: padding 2 keeps the classic 32x32 geometry for 28x28.
struct lenet5_net : jf_net {
    torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
    torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};

    lenet5_net()
    {
        conv1 = register_module("conv1",
                                torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 6, 5).padding(2)));
        conv2 = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(6, 16, 5)));
        fc1 = register_module("fc1", torch::nn::Linear(16 * 5 * 5, 120));
        fc2 = register_module("fc2", torch::nn::Linear(120, 84));
        fc3 = register_module("fc3", torch::nn::Linear(84, JF_TORCH_CLASSES));
    }

    torch::Tensor forward(torch::Tensor x) override
    {
        x = torch::max_pool2d(torch::relu(conv1->forward(x)), 2);
        x = torch::max_pool2d(torch::relu(conv2->forward(x)), 2);
        x = torch::relu(fc1->forward(x.flatten(1)));
        x = torch::relu(fc2->forward(x));
        return fc3->forward(x);
    }
};

torch::nn::Conv2d s_conv3x3(int64_t in, int64_t out, int64_t stride)
{
    return torch::nn::Conv2d(
        torch::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

// ResNet basic block: two 3x3 convolutions and an identity or 1x1 projection shortcut.
struct basic_block_impl : torch::nn::Module {
    torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
    torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
    torch::nn::Sequential shortcut;

    basic_block_impl(int64_t in, int64_t out, int64_t stride)
    {
        conv1 = register_module("conv1", s_conv3x3(in, out, stride));
        bn1 = register_module("bn1", torch::nn::BatchNorm2d(out));
        conv2 = register_module("conv2", s_conv3x3(out, out, 1));
        bn2 = register_module("bn2", torch::nn::BatchNorm2d(out));
        if (stride != 1 || in != out) {
            shortcut->push_back(
                torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)));
            shortcut->push_back(torch::nn::BatchNorm2d(out));
        }
        register_module("shortcut", shortcut);
    }

    torch::Tensor forward(torch::Tensor x)
    {
        torch::Tensor out = torch::relu(bn1->forward(conv1->forward(x)));
        out = bn2->forward(conv2->forward(out));
        // An empty Sequential cannot be called: the identity shortcut is x itself.
        out = out + (shortcut->is_empty() ? x : shortcut->forward(x));
        return torch::relu(out);
    }
};
TORCH_MODULE_IMPL(basic_block, basic_block_impl);

// ResNet-18 for 32x32 inputs: 3x3 stem, no max-pool, [2, 2, 2, 2] basic blocks.
struct resnet18_net : jf_net {
    torch::nn::Conv2d stem{nullptr};
    torch::nn::BatchNorm2d bn{nullptr};
    torch::nn::Sequential layers;
    torch::nn::Linear fc{nullptr};

    resnet18_net()
    {
        stem = register_module("stem", s_conv3x3(3, 64, 1));
        bn = register_module("bn", torch::nn::BatchNorm2d(64));
        const int64_t widths[] = {64, 128, 256, 512};
        int64_t in = 64;
        for (int64_t out : widths) {
            int64_t stride = out == 64 ? 1 : 2;
            layers->push_back(basic_block(in, out, stride));
            layers->push_back(basic_block(out, out, 1));
            in = out;
        }
        register_module("layers", layers);
        fc = register_module("fc", torch::nn::Linear(512, JF_TORCH_CLASSES));
    }

    torch::Tensor forward(torch::Tensor x) override
    {
        x = layers->forward(torch::relu(bn->forward(stem->forward(x))));
        x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
        return fc->forward(x);
    }
};

// VGG-11 with BatchNorm for 32x32 inputs: five max-pools leave 512x1x1 for one linear layer.
struct vgg11_net : jf_net {
    torch::nn::Sequential features;
    torch::nn::Linear classifier{nullptr};

    vgg11_net()
    {
        const int64_t cfg[] = {64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0}; // 0 = pool
        int64_t in = 3;
        for (int64_t out : cfg) {
            if (out == 0) {
                features->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)));
                continue;
            }
            features->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1)));
            features->push_back(torch::nn::BatchNorm2d(out));
            features->push_back(torch::nn::ReLU());
            in = out;
        }
        register_module("features", features);
        classifier = register_module("classifier", torch::nn::Linear(512, JF_TORCH_CLASSES));
    }

    torch::Tensor forward(torch::Tensor x) override
    {
        return classifier->forward(features->forward(x).flatten(1));
    }
};

// torchvision's _make_divisible: the multiple of JF_TORCH_MNV3_DIVISOR nearest to v (ties go up),
// at least the divisor and never more than 10 % below v.
int64_t s_make_divisible(double v)
{
    const int64_t d = JF_TORCH_MNV3_DIVISOR;
    int64_t rounded = std::max(d, static_cast<int64_t>(v + d / 2.0) / d * d);
    return rounded < 0.9 * v ? rounded + d : rounded;
}

enum class s_act { NONE, RELU, HARDSWISH };

torch::Tensor s_activate(const torch::Tensor &x, s_act act)
{
    switch (act) {
    case s_act::RELU:
        return torch::relu(x);
    case s_act::HARDSWISH:
        return torch::hardswish(x); // libtorch 1.13 has no torch::nn::Hardswish module
    case s_act::NONE:
        break;
    }
    return x;
}

// A bias-free convolution with "same" padding, as torchvision's Conv2dNormActivation uses.
torch::nn::Conv2dOptions s_conv_opts(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                                     int64_t groups)
{
    return torch::nn::Conv2dOptions(in, out, kernel)
        .stride(stride)
        .padding((kernel - 1) / 2)
        .groups(groups)
        .bias(false);
}

// Convolution, BatchNorm and an optional activation (torchvision's Conv2dNormActivation).
struct conv_bn_act_impl : torch::nn::Module {
    torch::nn::Conv2d conv{nullptr};
    torch::nn::BatchNorm2d bn{nullptr};
    s_act act;

    conv_bn_act_impl(const torch::nn::Conv2dOptions &opts, s_act activation) : act(activation)
    {
        conv = register_module("conv", torch::nn::Conv2d(opts));
        bn = register_module(
            "bn", torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(opts.out_channels())
                                             .eps(JF_TORCH_MNV3_BN_EPS)
                                             .momentum(JF_TORCH_MNV3_BN_MOMENTUM)));
    }

    torch::Tensor forward(torch::Tensor x)
    {
        return s_activate(bn->forward(conv->forward(x)), act);
    }
};
TORCH_MODULE_IMPL(conv_bn_act, conv_bn_act_impl);

// Squeeze-and-excitation: per-channel weights from the pooled input through two 1x1
// convolutions (with bias), ReLU and hardsigmoid.
struct squeeze_excite_impl : torch::nn::Module {
    torch::nn::Conv2d fc1{nullptr}, fc2{nullptr};

    explicit squeeze_excite_impl(int64_t channels)
    {
        int64_t squeezed =
            s_make_divisible(static_cast<double>(channels / JF_TORCH_MNV3_SE_FACTOR));
        fc1 = register_module("fc1",
                              torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, squeezed, 1)));
        fc2 = register_module("fc2",
                              torch::nn::Conv2d(torch::nn::Conv2dOptions(squeezed, channels, 1)));
    }

    torch::Tensor forward(torch::Tensor x)
    {
        torch::Tensor scale = torch::adaptive_avg_pool2d(x, {1, 1});
        scale = torch::hardsigmoid(fc2->forward(torch::relu(fc1->forward(scale))));
        return x * scale;
    }
};
TORCH_MODULE_IMPL(squeeze_excite, squeeze_excite_impl);

// One row of torchvision's mobilenet_v3_large table; the input width is the previous row's out.
struct mnv3_block_cfg {
    int64_t kernel, expanded, out;
    bool se;
    s_act act;
    int64_t stride;
};

// The table's activation names, as torchvision spells them.
constexpr s_act RE = s_act::RELU, HS = s_act::HARDSWISH;
const mnv3_block_cfg s_mnv3_large[] = {
    {3, 16, 16, false, RE, 1},  {3, 64, 24, false, RE, 2},  {3, 72, 24, false, RE, 1},
    {5, 72, 40, true, RE, 2},   {5, 120, 40, true, RE, 1},  {5, 120, 40, true, RE, 1},
    {3, 240, 80, false, HS, 2}, {3, 200, 80, false, HS, 1}, {3, 184, 80, false, HS, 1},
    {3, 184, 80, false, HS, 1}, {3, 480, 112, true, HS, 1}, {3, 672, 112, true, HS, 1},
    {5, 672, 160, true, HS, 2}, {5, 960, 160, true, HS, 1}, {5, 960, 160, true, HS, 1},
};

// MobileNetV3 inverted residual: 1x1 expansion (skipped when it would not widen), depthwise
// kxk, optional squeeze-and-excitation, linear 1x1 projection; identity shortcut when the
// shape is kept.
struct inverted_residual_impl : torch::nn::Module {
    torch::nn::Sequential block;
    bool residual = false;

    inverted_residual_impl(int64_t in, const mnv3_block_cfg &cfg)
    {
        int64_t exp = s_make_divisible(static_cast<double>(cfg.expanded));
        int64_t out = s_make_divisible(static_cast<double>(cfg.out));
        residual = cfg.stride == 1 && in == out;
        if (exp != in) {
            block->push_back(conv_bn_act(s_conv_opts(in, exp, 1, 1, 1), cfg.act));
        }
        block->push_back(conv_bn_act(s_conv_opts(exp, exp, cfg.kernel, cfg.stride, exp), cfg.act));
        if (cfg.se) {
            block->push_back(squeeze_excite(exp));
        }
        block->push_back(conv_bn_act(s_conv_opts(exp, out, 1, 1, 1), s_act::NONE));
        register_module("block", block);
    }

    torch::Tensor forward(torch::Tensor x)
    {
        torch::Tensor out = block->forward(x);
        return residual ? out + x : out;
    }
};
TORCH_MODULE_IMPL(inverted_residual, inverted_residual_impl);

// torchvision's MobileNetV3 initialisation: Kaiming-normal (fan-out) convolutions, unit
// BatchNorm, N(0, 0.01) linear weights, zero biases.
void s_mnv3_init(torch::nn::Module &net)
{
    torch::NoGradGuard no_grad;
    for (const auto &m : net.modules(false)) {
        if (auto *conv = m->as<torch::nn::Conv2d>()) {
            torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut);
            if (conv->bias.defined()) {
                torch::nn::init::zeros_(conv->bias);
            }
        } else if (auto *bn = m->as<torch::nn::BatchNorm2d>()) {
            torch::nn::init::ones_(bn->weight);
            torch::nn::init::zeros_(bn->bias);
        } else if (auto *fc = m->as<torch::nn::Linear>()) {
            torch::nn::init::normal_(fc->weight, 0.0, JF_TORCH_MNV3_LINEAR_STD);
            torch::nn::init::zeros_(fc->bias);
        }
    }
}

// MobileNetV3-Large (torchvision's mobilenet_v3_large): hardswish stem of 16 channels at stride
// 2, fifteen inverted residual blocks, a 1x1 convolution to 960, global average pooling and
// Linear(960, 1280) + hardswish + dropout + Linear(1280, classes).
struct mobilenetv3_net : jf_net {
    torch::nn::Sequential features;
    torch::nn::Linear fc1{nullptr}, fc2{nullptr};
    torch::nn::Dropout dropout{nullptr};

    explicit mobilenetv3_net(int64_t classes)
    {
        int64_t in = s_make_divisible(JF_TORCH_MNV3_STEM);
        features->push_back(conv_bn_act(s_conv_opts(3, in, 3, 2, 1), s_act::HARDSWISH));
        for (const mnv3_block_cfg &cfg : s_mnv3_large) {
            features->push_back(inverted_residual(in, cfg));
            in = s_make_divisible(static_cast<double>(cfg.out));
        }
        int64_t last = JF_TORCH_MNV3_LAST_FACTOR * in;
        features->push_back(conv_bn_act(s_conv_opts(in, last, 1, 1, 1), s_act::HARDSWISH));
        register_module("features", features);
        fc1 = register_module("fc1", torch::nn::Linear(last, JF_TORCH_MNV3_HIDDEN));
        dropout = register_module("dropout", torch::nn::Dropout(JF_TORCH_MNV3_DROPOUT));
        fc2 = register_module("fc2", torch::nn::Linear(JF_TORCH_MNV3_HIDDEN, classes));
        s_mnv3_init(*this);
    }

    torch::Tensor forward(torch::Tensor x) override
    {
        x = torch::adaptive_avg_pool2d(features->forward(x), {1, 1}).flatten(1);
        x = dropout->forward(torch::hardswish(fc1->forward(x)));
        return fc2->forward(x);
    }
};

const char *const s_model_names[] = {"lenet5", "resnet18", "vgg11", "mobilenetv3"};
const char *const s_device_names[] = {"cpu", "cuda", "auto"};
const size_t s_model_count = sizeof s_model_names / sizeof s_model_names[0];
const size_t s_device_count = sizeof s_device_names / sizeof s_device_names[0];

bool s_is_oom_text(const char *text)
{
    // c10 reports host allocation failures as "DefaultCPUAllocator: can't allocate memory" and
    // CUDA ones as "CUDA out of memory. Tried to allocate ...".
    return strstr(text, "out of memory") != nullptr || strstr(text, "can't allocate") != nullptr;
}

// Copies the first line of a libtorch message, at most JF_TORCH_MSG_MAX bytes.
std::string s_first_line(const char *text)
{
    std::string line(text, strcspn(text, "\n"));
    if (line.size() > JF_TORCH_MSG_MAX) {
        line.resize(JF_TORCH_MSG_MAX);
        line += "...";
    }
    return line;
}

// Translates the exception being handled into err. Call only from inside a catch block.
int s_fail(jf_err_t *err, const char *where)
{
    std::string text;
    bool oom = false;
    try {
        throw;
    } catch (const c10::OutOfMemoryError &e) {
        oom = true;
        text = s_first_line(e.what_without_backtrace());
    } catch (const c10::Error &e) {
        text = s_first_line(e.what_without_backtrace());
    } catch (const std::bad_alloc &) {
        oom = true;
        text = "std::bad_alloc";
    } catch (const std::exception &e) {
        text = s_first_line(e.what());
    } catch (...) {
        text = "unknown exception";
    }
    if (oom || s_is_oom_text(text.c_str())) {
        return jf_err_set(err, -ENOMEM, "torch: %s: out of memory (%s)", where, text.c_str());
    }
    return jf_err_set(err, -EIO, "torch: %s: %s", where, text.c_str());
}

std::shared_ptr<jf_net> s_build_net(jf_torch_model_kind_t model, int64_t classes)
{
    switch (model) {
    case JF_TORCH_MODEL_LENET5:
        return std::make_shared<lenet5_net>();
    case JF_TORCH_MODEL_RESNET18:
        return std::make_shared<resnet18_net>();
    case JF_TORCH_MODEL_VGG11:
        return std::make_shared<vgg11_net>();
    case JF_TORCH_MODEL_MOBILENETV3:
        return std::make_shared<mobilenetv3_net>(classes);
    }
    return nullptr;
}

// Reads "KEY=value" up to the next ',' from torch::show_config().
std::string s_config_value(const std::string &config, const char *key)
{
    size_t at = config.find(key);
    if (at == std::string::npos) {
        return "unknown";
    }
    at += strlen(key);
    size_t end = config.find_first_of(",\n", at);
    return config.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

int s_find_blas_library(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *path = info->dlpi_name;
    const char *base = path ? strrchr(path, '/') : nullptr;
    base = base ? base + 1 : path;
    if (!base || (strncmp(base, "libblas", 7) != 0 && strncmp(base, "libopenblas", 11) != 0 &&
                  strncmp(base, "libmkl_rt", 9) != 0 && strncmp(base, "libblis", 7) != 0)) {
        return 0;
    }
    char resolved[PATH_MAX];
    *static_cast<std::string *>(data) = realpath(path, resolved) ? resolved : path;
    return 1; // stop at the first BLAS found
}

// The build's BLAS_INFO and the BLAS shared library mapped into the process: Debian's libtorch
// uses whatever libblas.so.3 the alternatives system points at (reference BLAS or OpenBLAS).
std::string s_blas_text(const std::string &config)
{
    std::string library;
    (void)dl_iterate_phdr(s_find_blas_library, &library); // returns the callback's last value
    std::string text = s_config_value(config, "BLAS_INFO=");
    if (!library.empty()) {
        text += " (" + library + ")";
    }
    return text;
}

} // namespace

int jf_torch_internal::fail(jf_err_t *err, const char *where)
{
    return s_fail(err, where);
}

extern "C" int jf_torch_model_parse(const char *name, jf_torch_model_kind_t *ret_model,
                                    jf_err_t *err)
{
    for (size_t i = 0; name && i < s_model_count; i++) {
        if (strcmp(name, s_model_names[i]) == 0) {
            *ret_model = static_cast<jf_torch_model_kind_t>(i);
            return 0;
        }
    }
    return jf_err_set(err, -EINVAL,
                      "torch: unknown model '%.64s', expected one of lenet5, "
                      "resnet18, vgg11, mobilenetv3",
                      name ? name : "(null)");
}

extern "C" const char *jf_torch_model_name(jf_torch_model_kind_t model)
{
    size_t i = static_cast<size_t>(model);
    return i < s_model_count ? s_model_names[i] : "unknown";
}

extern "C" int jf_torch_model_shape(jf_torch_model_kind_t model, jf_torch_shape_t *ret_shape,
                                    jf_err_t *err)
{
    switch (model) {
    case JF_TORCH_MODEL_LENET5:
        *ret_shape = {1, JF_TORCH_MNIST_SIDE, JF_TORCH_MNIST_SIDE, JF_TORCH_CLASSES};
        return 0;
    case JF_TORCH_MODEL_RESNET18:
    case JF_TORCH_MODEL_VGG11:
        *ret_shape = {3, JF_TORCH_CIFAR_SIDE, JF_TORCH_CIFAR_SIDE, JF_TORCH_CLASSES};
        return 0;
    case JF_TORCH_MODEL_MOBILENETV3:
        *ret_shape = {3, JF_TORCH_GLD_SIDE, JF_TORCH_GLD_SIDE, JF_TORCH_GLD_CLASSES};
        return 0;
    }
    return jf_err_set(err, -EINVAL, "torch: unknown model kind %d", static_cast<int>(model));
}

extern "C" int jf_torch_device_parse(const char *name, jf_torch_device_kind_t *ret_device,
                                     jf_err_t *err)
{
    for (size_t i = 0; name && i < s_device_count; i++) {
        if (strcmp(name, s_device_names[i]) == 0) {
            *ret_device = static_cast<jf_torch_device_kind_t>(i);
            return 0;
        }
    }
    return jf_err_set(err, -EINVAL, "torch: unknown device '%.64s', expected cpu, cuda or auto",
                      name ? name : "(null)");
}

static int s_check_opts(const jf_torch_session_opts_t *opts, jf_err_t *err)
{
    if (!opts) {
        return jf_err_set(err, -EINVAL, "torch: session options missing");
    }
    if (opts->threads < 0 || opts->threads > JF_TORCH_THREADS_MAX) {
        return jf_err_set(err, -EINVAL, "torch: threads must be in 0..%d, got %d",
                          JF_TORCH_THREADS_MAX, opts->threads);
    }
    if (opts->device != JF_TORCH_DEVICE_CPU && opts->device != JF_TORCH_DEVICE_CUDA &&
        opts->device != JF_TORCH_DEVICE_AUTO) {
        return jf_err_set(err, -EINVAL, "torch: unknown device kind %d",
                          static_cast<int>(opts->device));
    }
    return 0;
}

static int s_pick_device(jf_torch_session_t *self, jf_torch_device_kind_t kind, jf_err_t *err)
{
    bool cuda = torch::cuda::is_available();
    if (kind == JF_TORCH_DEVICE_CUDA && !cuda) {
        return jf_err_set(err, -ENODEV,
                          "torch: device 'cuda' asked for, but this libtorch has "
                          "no usable CUDA device");
    }
    if (kind == JF_TORCH_DEVICE_CPU || !cuda) {
        return 0; // auto without CUDA means the CPU; the caller records the device name
    }
    self->device = torch::Device(torch::kCUDA, 0);
    self->device_name = "cuda:0";
    return 0;
}

static int s_session_build(jf_torch_session_t *self, const jf_torch_session_opts_t *opts,
                           jf_err_t *err)
{
    // C callers may store any int in the enum field, but C++ must not load an enum value outside
    // the enumerators' range (undefined behaviour): check the raw integer first.
    int raw = 0;
    static_assert(sizeof raw == sizeof opts->model, "enum and int differ in size");
    std::memcpy(&raw, &opts->model, sizeof raw);
    if (raw < JF_TORCH_MODEL_LENET5 || raw > JF_TORCH_MODEL_MOBILENETV3) {
        return jf_err_set(err, -EINVAL, "torch: unknown model kind %d", raw);
    }
    int rc = jf_torch_model_shape(opts->model, &self->shape, err);
    if (rc < 0) {
        return rc;
    }
    self->model = opts->model;
    rc = s_pick_device(self, opts->device, err);
    if (rc < 0) {
        return rc;
    }
    torch::set_num_threads(opts->threads > 0 ? opts->threads : JF_TORCH_THREADS_DEFAULT);
    torch::manual_seed(opts->seed);
    self->net = s_build_net(opts->model, self->shape.classes);
    self->net->to(self->device);
    self->net->train();
    self->optimizer = std::make_unique<torch::optim::SGD>(
        self->net->parameters(), torch::optim::SGDOptions(JF_TORCH_LR).momentum(JF_TORCH_MOMENTUM));
    return 0;
}

extern "C" jf_torch_session_t *jf_torch_session_new(const jf_torch_session_opts_t *opts,
                                                    jf_err_t *err)
{
    if (s_check_opts(opts, err) < 0) {
        return nullptr;
    }
    jf_torch_session_t *self = nullptr;
    int rc = 0;
    try {
        self = new jf_torch_session_t();
        rc = s_session_build(self, opts, err);
    } catch (...) {
        rc = s_fail(err, "session_new");
    }
    if (rc < 0) {
        jf_torch_session_destroy(&self);
        return nullptr;
    }
    return self;
}

extern "C" void jf_torch_session_destroy(jf_torch_session_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    try {
        delete *self_p;
    } catch (...) {
        // Destructors of libtorch objects do not throw in practice; nothing to report here.
    }
    *self_p = nullptr;
}

static int s_check_step(const jf_torch_session_t *self, const float *x, const int64_t *y,
                        size_t batch, jf_err_t *err)
{
    if (!self || !x || !y) {
        return jf_err_set(err, -EINVAL, "torch: step: session, inputs and labels are required");
    }
    if (batch < 1 || batch > JF_TORCH_BATCH_MAX) {
        return jf_err_set(err, -EINVAL, "torch: step: batch must be in 1..%d, got %zu",
                          JF_TORCH_BATCH_MAX, batch);
    }
    for (size_t i = 0; i < batch; i++) {
        if (y[i] < 0 || y[i] >= self->shape.classes) {
            return jf_err_set(err, -EINVAL, "torch: step: label %zu is %lld, expected 0..%d", i,
                              static_cast<long long>(y[i]), self->shape.classes - 1);
        }
    }
    return 0;
}

static double s_step(jf_torch_session_t *self, const float *x, const int64_t *y, int64_t batch)
{
    const jf_torch_shape_t *s = &self->shape;
    // from_blob borrows the caller's memory; nothing below writes to the input tensors.
    torch::Tensor xt = torch::from_blob(const_cast<float *>(x),
                                        {batch, s->channels, s->height, s->width}, torch::kFloat32)
                           .to(self->device);
    torch::Tensor yt =
        torch::from_blob(const_cast<int64_t *>(y), {batch}, torch::kInt64).to(self->device);
    self->optimizer->zero_grad();
    torch::Tensor loss = torch::nn::functional::cross_entropy(self->net->forward(xt), yt);
    loss.backward();
    self->optimizer->step();
    double value = loss.item<double>();
    if (self->device.is_cuda()) {
        torch::cuda::synchronize(); // so that time measured around the step is real
    }
    return value;
}

extern "C" int jf_torch_session_step(jf_torch_session_t *self, const float *x, const int64_t *y,
                                     size_t batch, double *ret_loss, jf_err_t *err)
{
    int rc = s_check_step(self, x, y, batch, err);
    if (rc < 0) {
        return rc;
    }
    try {
        double loss = s_step(self, x, y, static_cast<int64_t>(batch));
        if (ret_loss) {
            *ret_loss = loss;
        }
        return 0;
    } catch (...) {
        return s_fail(err, "step");
    }
}

extern "C" int jf_torch_session_infer(jf_torch_session_t *self, const float *x, size_t batch,
                                      jf_err_t *err)
{
    if (!self || !x) {
        return jf_err_set(err, -EINVAL, "torch: infer: session and inputs are required");
    }
    if (batch < 1 || batch > JF_TORCH_BATCH_MAX) {
        return jf_err_set(err, -EINVAL, "torch: infer: batch must be in 1..%d, got %zu",
                          JF_TORCH_BATCH_MAX, batch);
    }
    try {
        const jf_torch_shape_t *s = &self->shape;
        torch::NoGradGuard no_grad;
        self->net->eval(); // BatchNorm uses its running statistics, as a served model does
        torch::Tensor xt =
            torch::from_blob(const_cast<float *>(x),
                             {static_cast<int64_t>(batch), s->channels, s->height, s->width},
                             torch::kFloat32)
                .to(self->device);
        torch::Tensor out = self->net->forward(xt);
        if (self->device.is_cuda()) {
            torch::cuda::synchronize(); // so that time measured around the call is real
        }
        return out.size(0) == static_cast<int64_t>(batch)
                   ? 0
                   : jf_err_set(err, -EIO, "torch: infer: %lld outputs for %zu inputs",
                                static_cast<long long>(out.size(0)), batch);
    } catch (...) {
        return s_fail(err, "infer");
    }
}

extern "C" const char *jf_torch_session_device_name(const jf_torch_session_t *self)
{
    return self->device_name.c_str();
}

extern "C" jf_torch_model_kind_t jf_torch_session_model(const jf_torch_session_t *self)
{
    return self->model;
}

static void s_copy_text(char *dst, const std::string &src)
{
    (void)snprintf(dst, JF_TORCH_INFO_TEXT_MAX, "%s", src.c_str()); // truncation is fine here
}

extern "C" int jf_torch_info_read(jf_torch_info_t *ret_info, jf_err_t *err)
{
    try {
        jf_torch_info_t info = {};
        std::string config = torch::show_config();
        s_copy_text(info.torch_version, TORCH_VERSION);
        s_copy_text(info.blas, s_blas_text(config));
        s_copy_text(info.lapack, s_config_value(config, "LAPACK_INFO="));
        info.cuda_available = torch::cuda::is_available();
        info.cuda_devices = info.cuda_available ? static_cast<int>(torch::cuda::device_count()) : 0;
        info.threads = at::get_num_threads();
        *ret_info = info;
        return 0;
    } catch (...) {
        return s_fail(err, "info");
    }
}

// For the shim's other files (jf_torch_internal.h): one forward pass of a freshly built model.
torch::Tensor jf_torch_internal_forward(jf_torch_model_kind_t model, const torch::Tensor &x)
{
    jf_torch_shape_t shape = {};
    if (jf_torch_model_shape(model, &shape, nullptr) != 0) {
        throw std::invalid_argument("unknown model kind");
    }
    std::shared_ptr<jf_net> net = s_build_net(model, shape.classes);
    net->train();
    return net->forward(x);
}

int jf_torch_internal_fail(jf_err_t *err, const char *where)
{
    return s_fail(err, where);
}
