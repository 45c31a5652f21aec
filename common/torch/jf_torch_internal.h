/* What the shim's C++ files share and C never sees: the models of jf_torch.cpp for the other
 * files of the shim (jf_torch_flops.cpp) and its translation of exceptions into errors. */
#ifndef JF_TORCH_INTERNAL_H
#define JF_TORCH_INTERNAL_H

#include "jf_torch.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

// Builds the model (CPU, training mode, default initialisation) and runs one forward pass on x
// (batch x C x H x W). The result keeps the autograd graph, and with it the parameters, alive.
// Throws as libtorch does; std::invalid_argument for an unknown kind.
torch::Tensor jf_torch_internal_forward(jf_torch_model_kind_t model, const torch::Tensor &x);

// Translates the exception being handled into err (-ENOMEM "out of memory" or -EIO) and returns
// the code. Call only from inside a catch block.
int jf_torch_internal_fail(jf_err_t *err, const char *where);

#endif
