/* Compiles common/torch/jf_torch.h alone as C11 (this file) and as C++17 (torch_header_cxx.cpp),
 * both with warnings as errors, and checks that the two languages agree on the layout of the
 * header's structs and the values of its enums (STYLE.md §8). Links no libtorch. */
#include "jf_torch.h"     // first, so it must compile on its own
#include "jf_torch_fit.h" // after jf_torch.h, but it includes nothing of it
#include "jf_torch_bench.h" // the roofline's microbenchmarks and work counting, in C11 too
#include "jf_torch_flops.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

// Defined in torch_header_cxx.cpp: the same facts as seen by the C++ compiler.
size_t t_cxx_layout(size_t which);

static size_t t_c_layout(size_t which)
{
    const size_t facts[] = {
        sizeof(jf_torch_info_t),
        offsetof(jf_torch_info_t, cuda_available),
        offsetof(jf_torch_info_t, threads),
        sizeof(jf_torch_session_opts_t),
        offsetof(jf_torch_session_opts_t, seed),
        sizeof(jf_torch_shape_t),
        sizeof(jf_torch_model_kind_t),
        (size_t) JF_TORCH_MODEL_MOBILENETV3,
        (size_t) JF_TORCH_DEVICE_AUTO,
        sizeof(jf_err_t),
        sizeof(jf_torch_mlp_train_opts_t),
        offsetof(jf_torch_mlp_train_opts_t, weight_decay),
    };
    return which < sizeof facts / sizeof facts[0] ? facts[which] : SIZE_MAX;
}

static void test_c_and_cxx_agree(void **state)
{
    (void) state;
    for (size_t i = 0; t_c_layout(i) != SIZE_MAX; i++) {
        assert_int_equal(t_c_layout(i), t_cxx_layout(i));
    }
    assert_int_equal(t_cxx_layout(99), SIZE_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_c_and_cxx_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
