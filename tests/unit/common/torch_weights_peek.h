/* Test-only look inside a weight set (jf_torch.h) for what jf_torch_weights_flatten does not
 * show: the integer buffers. C++ over libtorch (torch_weights_peek.cpp), for torch_weights_test. */
#ifndef TORCH_WEIGHTS_PEEK_H
#define TORCH_WEIGHTS_PEEK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// The first element of the named tensor of a weight set as an integer. Returns 0, or -1 when
// the blob does not decode or has no such tensor.
int jft_weights_peek_int(const void *bytes, size_t len, const char *name, int64_t *ret_value);

#ifdef __cplusplus
}
#endif

#endif
