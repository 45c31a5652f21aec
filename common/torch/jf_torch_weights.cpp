/* Weight sets of the libtorch shim (issue 14, STYLE.md §8): save and load a session's state_dict,
 * FedAvg over serialised weight sets and flattening for checks, behind jf_torch.h. Not for
 * moving or storing blobs: that is the agent's and the coordinator's job. */
#include "jf_torch.h"

#include <cerrno>

// TODO(#14): interface only; the bodies follow on this branch.
extern "C" int jf_torch_session_weights_save(jf_torch_session_t *self, void **ret_bytes,
                                             size_t *ret_len, jf_err_t *err)
{
    (void)self;
    (void)ret_bytes;
    (void)ret_len;
    return jf_err_set(err, -ENOSYS, "torch: weights_save: not implemented yet");
}

extern "C" int jf_torch_session_weights_load(jf_torch_session_t *self, const void *bytes,
                                             size_t len, jf_err_t *err)
{
    (void)self;
    (void)bytes;
    (void)len;
    return jf_err_set(err, -ENOSYS, "torch: weights_load: not implemented yet");
}

extern "C" int jf_torch_weights_average(const void *const *blobs, const size_t *lens,
                                        const double *w, size_t n, void **ret_bytes,
                                        size_t *ret_len, jf_err_t *err)
{
    (void)blobs;
    (void)lens;
    (void)w;
    (void)n;
    (void)ret_bytes;
    (void)ret_len;
    return jf_err_set(err, -ENOSYS, "torch: weights_average: not implemented yet");
}

extern "C" int jf_torch_weights_flatten(const void *bytes, size_t len, double **ret_values,
                                        size_t *ret_n, jf_err_t *err)
{
    (void)bytes;
    (void)len;
    (void)ret_values;
    (void)ret_n;
    return jf_err_set(err, -ENOSYS, "torch: weights_flatten: not implemented yet");
}
