/* Test-only look inside a weight set (torch_weights_peek.h): skips the 16-byte envelope of
 * jf_torch.h and reads the payload with libtorch, independently of the shim's decoder. */
#include "torch_weights_peek.h"

// Only what the pickle reader needs: <torch/torch.h> costs a minute of compiling.
#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <vector>

#define T_HEADER_BYTES 16

extern "C" int jft_weights_peek_int(const void *bytes, size_t len, const char *name,
                                    int64_t *ret_value)
{
    if (!bytes || len <= T_HEADER_BYTES) {
        return -1;
    }
    try {
        const char *p = static_cast<const char *>(bytes) + T_HEADER_BYTES;
        c10::IValue v = torch::jit::pickle_load(std::vector<char>(p, p + (len - T_HEADER_BYTES)));
        for (const auto &entry : v.toGenericDict()) {
            if (entry.key().toStringRef() == name) {
                *ret_value = entry.value().toTensor().flatten()[0].item<int64_t>();
                return 0;
            }
        }
    } catch (...) {
        return -1;
    }
    return -1;
}
