/* The C++17 half of torch_header_test: includes jf_torch.h alone, with warnings as errors, and
 * reports the header's layout as the C++ compiler sees it. */
#include "jf_torch.h"     // first and alone: the header must compile as C++ by itself
#include "jf_torch_fit.h" // the regression half of the shim, in C++17 too
#include "jf_torch_bench.h" // the roofline's microbenchmarks and work counting, in C++17 too
#include "jf_torch_flops.h"

extern "C" size_t t_cxx_layout(size_t which);

extern "C" size_t t_cxx_layout(size_t which)
{
    const size_t facts[] = {
        sizeof(jf_torch_info_t),
        offsetof(jf_torch_info_t, cuda_available),
        offsetof(jf_torch_info_t, threads),
        sizeof(jf_torch_session_opts_t),
        offsetof(jf_torch_session_opts_t, seed),
        sizeof(jf_torch_shape_t),
        sizeof(jf_torch_model_kind_t),
        static_cast<size_t>(JF_TORCH_MODEL_MOBILENETV3),
        static_cast<size_t>(JF_TORCH_DEVICE_AUTO),
        sizeof(jf_err_t),
        sizeof(jf_torch_mlp_train_opts_t),
        offsetof(jf_torch_mlp_train_opts_t, weight_decay),
    };
    return which < sizeof facts / sizeof facts[0] ? facts[which] : SIZE_MAX;
}
