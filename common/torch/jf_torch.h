/* The libtorch shim (STYLE.md §8): a plain C11 view of the models jetfleet trains, one training
 * step at a time, and of the libtorch build in use. Not for data loading, timing or records: those
 * are C (agent/train). No C++ type, tensor or exception crosses this header. */
#ifndef JF_TORCH_H
#define JF_TORCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// jf_err.h has no C++ guard of its own, so it is included inside this one.
#include "jf_err.h"

#define JF_TORCH_THREADS_DEFAULT 1   // intra-op threads when the caller asks for 0
#define JF_TORCH_THREADS_MAX     256 // largest intra-op thread count accepted
#define JF_TORCH_BATCH_MAX       4096
#define JF_TORCH_INFO_TEXT_MAX   160  // size of the text fields of jf_torch_info_t, with the NUL
#define JF_TORCH_LR              0.01 // SGD learning rate
#define JF_TORCH_MOMENTUM        0.9  // SGD momentum

typedef enum jf_torch_model_kind {
    JF_TORCH_MODEL_LENET5 = 0,  // LeNet-5, 1x28x28 -> 10 (MNIST)
    JF_TORCH_MODEL_RESNET18,    // ResNet-18, CIFAR form (3x3 stem, no max-pool), 3x32x32 -> 10
    JF_TORCH_MODEL_VGG11,       // VGG-11 with BatchNorm, CIFAR form, 3x32x32 -> 10
    JF_TORCH_MODEL_MOBILENETV3, // MobileNetV3-Large (torchvision's), 3x224x224 -> 203 (GLD-23k)
} jf_torch_model_kind_t;

typedef enum jf_torch_device_kind {
    JF_TORCH_DEVICE_CPU = 0,
    JF_TORCH_DEVICE_CUDA, // CUDA device 0; an error if this libtorch has no usable CUDA
    JF_TORCH_DEVICE_AUTO, // CUDA device 0 if usable, else the CPU
} jf_torch_device_kind_t;

// The input one model expects: a sample is channels*height*width floats in CHW order.
typedef struct jf_torch_shape {
    int channels; // input channels
    int height;   // input height, pixels
    int width;    // input width, pixels
    int classes;  // number of output classes; labels are 0..classes-1
} jf_torch_shape_t;

typedef struct jf_torch_session_opts {
    jf_torch_model_kind_t model;   // which network to build
    jf_torch_device_kind_t device; // where to run it
    int threads;   // intra-op threads, 0..JF_TORCH_THREADS_MAX; 0 = JF_TORCH_THREADS_DEFAULT
    uint64_t seed; // seeds libtorch's generator before the weights are initialised
} jf_torch_session_opts_t;

// The libtorch build and process settings, for the records of a run.
typedef struct jf_torch_info {
    char torch_version[JF_TORCH_INFO_TEXT_MAX]; // e.g. "1.13.0", from the libtorch headers
    char blas[JF_TORCH_INFO_TEXT_MAX];   // BLAS_INFO of the build and the BLAS library loaded
    char lapack[JF_TORCH_INFO_TEXT_MAX]; // LAPACK_INFO of the build, e.g. "generic"
    bool cuda_available;                 // a CUDA device can be used
    int cuda_devices;                    // number of CUDA devices, 0 without CUDA
    int threads;                         // current intra-op threads (process-wide)
} jf_torch_info_t;

typedef struct jf_torch_session jf_torch_session_t;

// Parses a model name ("lenet5", "resnet18", "vgg11", "mobilenetv3"). Returns 0, or -EINVAL with
// err naming the text and the accepted names.
int jf_torch_model_parse(const char *name, jf_torch_model_kind_t *ret_model, jf_err_t *err);

// The model's name as jf_torch_model_parse accepts it (a static string), or "unknown".
const char *jf_torch_model_name(jf_torch_model_kind_t model);

// The input shape and class count of a model. Returns 0, or -EINVAL for an unknown kind.
int jf_torch_model_shape(jf_torch_model_kind_t model, jf_torch_shape_t *ret_shape, jf_err_t *err);

// Parses "cpu", "cuda" or "auto". Returns 0, or -EINVAL with err naming the text.
int jf_torch_device_parse(const char *name, jf_torch_device_kind_t *ret_device, jf_err_t *err);

// Builds the model on the chosen device with SGD (lr JF_TORCH_LR, momentum JF_TORCH_MOMENTUM) and
// cross-entropy loss. Sets libtorch's intra-op thread count and seeds its global generator: both
// are process-wide, so build one session at a time. Returns the session, or NULL with err:
// -EINVAL (bad options), -ENODEV (CUDA asked for, none usable), -ENOMEM ("out of memory"), -EIO
// (any other libtorch failure).
// Caller owns the result; release with jf_torch_session_destroy. Use from one thread at a time.
jf_torch_session_t *jf_torch_session_new(const jf_torch_session_opts_t *opts, jf_err_t *err);

// Releases the session and sets *self_p to NULL. Accepts NULL and *self_p == NULL.
void jf_torch_session_destroy(jf_torch_session_t **self_p);

// One training step on a minibatch: forward, cross-entropy loss, backward, SGD step, then waits
// for the device to finish, so that time measured around the call is the real compute time.
// x holds batch samples of the model's shape (CHW floats, borrowed, not modified); y holds batch
// labels in 0..classes-1. *ret_loss gets the minibatch's mean loss. Returns 0, -EINVAL (batch
// outside 1..JF_TORCH_BATCH_MAX, NULL buffers, label out of range), -ENOMEM ("out of memory") or
// -EIO (any other libtorch failure).
int jf_torch_session_step(jf_torch_session_t *self, const float *x, const int64_t *y, size_t batch,
                          double *ret_loss, jf_err_t *err);

// One inference minibatch: the forward pass alone, without gradients and in evaluation mode (a
// served model; the session's model stays in that mode), then waits for the device, so that time
// measured around the call is the real compute time. x holds batch samples of the model's shape
// (borrowed). For a session that only serves: do not mix with jf_torch_session_step. Returns 0,
// -EINVAL (batch outside 1..JF_TORCH_BATCH_MAX, NULL buffers), -ENOMEM or -EIO.
int jf_torch_session_infer(jf_torch_session_t *self, const float *x, size_t batch, jf_err_t *err);

// The device the session runs on: "cpu" or "cuda:0". Borrowed; valid until the session is
// destroyed.
const char *jf_torch_session_device_name(const jf_torch_session_t *self);

// The session's model kind.
jf_torch_model_kind_t jf_torch_session_model(const jf_torch_session_t *self);

// Fills *ret_info with the libtorch version, the BLAS and LAPACK in use (from show_config() and
// the BLAS library mapped into the process), CUDA availability and the current intra-op thread
// count. Returns 0, or -EIO if libtorch fails.
int jf_torch_info_read(jf_torch_info_t *ret_info, jf_err_t *err);

// Federated-learning weights (issue 14). A weight set is the model's state_dict (every parameter,
// then every buffer, by name, each in the model's registration order, as libtorch's torch::save
// of a module orders them) serialised with libtorch (torch::pickle_save of a Dict name -> CPU
// tensor) inside a 16-byte envelope: "JFW1", the payload's CRC-32 (zlib) and its length, both
// little-endian. It is device-independent and says which model it holds only through its names
// and shapes. Blobs are untrusted input: a truncated or corrupted blob gives -EINVAL (the envelope
// is checked before libtorch parses the payload).

// The session's weights, serialised. *ret_bytes (malloc'ed; caller frees it with free()) and
// *ret_len are written only on success. Returns 0, -EINVAL (NULL arguments), -ENOMEM ("out of
// memory") or -EIO (any other libtorch failure).
int jf_torch_session_weights_save(jf_torch_session_t *self, void **ret_bytes, size_t *ret_len,
                                  jf_err_t *err);

// Replaces the session's weights by serialised ones of the same model: every name, shape and
// dtype must match the session's model, else -EINVAL naming the first mismatch; a blob that does
// not decode is -EINVAL too. On success the optimiser's momentum is reset; on failure the
// session's weights are unchanged. bytes is borrowed.
int jf_torch_session_weights_load(jf_torch_session_t *self, const void *bytes, size_t len,
                                  jf_err_t *err);

// FedAvg: the weighted mean (w[i] >= 0, sum > 0; callers pass sample counts) of n >= 1
// serialised weight sets of one model, element-wise for floating tensors; integer buffers
// (BatchNorm's num_batches_tracked) take the maximum. Returns 0, or -EINVAL (bad weights, a blob
// that does not decode, or names/shapes/dtypes that differ between blobs, naming the first
// difference), -ENOMEM or -EIO. The blobs are borrowed; *ret_bytes is malloc'ed, caller frees it
// with free().
int jf_torch_weights_average(const void *const *blobs, const size_t *lens, const double *w,
                             size_t n, void **ret_bytes, size_t *ret_len, jf_err_t *err);

// Every floating value of a serialised weight set, tensor by tensor in state_dict order and in
// each tensor's row-major order, as doubles (for checks and tests). *ret_values is malloc'ed
// (NULL when *ret_n is 0); caller frees it with free(). Returns 0, -EINVAL (blob that does not
// decode), -ENOMEM or -EIO.
int jf_torch_weights_flatten(const void *bytes, size_t len, double **ret_values, size_t *ret_n,
                             jf_err_t *err);

#ifdef __cplusplus
}
#endif

#endif
