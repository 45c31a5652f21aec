/* The shim's private C++ types (STYLE.md §8): the network base class and the session's body,
 * shared by jf_torch.cpp (models, steps) and jf_torch_weights.cpp (weight sets). Only the shim's
 * .cpp files include this; C code sees jf_torch.h alone. */
#ifndef JF_TORCH_INTERNAL_H
#define JF_TORCH_INTERNAL_H

#include "jf_torch.h"

#include <torch/torch.h>

#include <memory>
#include <string>

namespace jf_torch_internal
{

// Common base so that a session holds any of the models through one pointer.
struct jf_net : torch::nn::Module {
    virtual torch::Tensor forward(torch::Tensor x) = 0;
};

// Translates the exception being handled into err (-ENOMEM "out of memory" or -EIO, with where
// and libtorch's first line) and returns the code. Call only from inside a catch block.
int fail(jf_err_t *err, const char *where);

} // namespace jf_torch_internal

struct jf_torch_session {
    jf_torch_model_kind_t model = JF_TORCH_MODEL_LENET5;
    jf_torch_shape_t shape = {0, 0, 0, 0};
    torch::Device device{torch::kCPU};
    std::string device_name = "cpu";
    std::shared_ptr<jf_torch_internal::jf_net> net;
    std::unique_ptr<torch::optim::SGD> optimizer;
};

#endif
