/* The roofline's microbenchmarks in the libtorch shim (docs/roofline.md "Microbenchmarks"): one
 * repetition at a time of a large matrix product (peak compute) or a large tensor copy (peak
 * memory bandwidth), on the CPU or the CUDA device, with the work each repetition does. Timing,
 * repetition and records are the caller's (agent/train/train_roofline.c). No C++ type, tensor or
 * exception crosses this header. */
#ifndef JF_TORCH_BENCH_H
#define JF_TORCH_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "jf_err.h"
#include "jf_torch.h"

#define JF_TORCH_BENCH_MATMUL_N_CPU  1024 // side of the square FP32 matrices on the CPU
#define JF_TORCH_BENCH_MATMUL_N_CUDA 4096 // and on a CUDA device
#define JF_TORCH_BENCH_COPY_BYTES    (64 * 1024 * 1024) // FP32 tensor copied, well past caches

typedef enum jf_torch_bench_kind {
    JF_TORCH_BENCH_MATMUL = 0, // C = A x B, n x n FP32: 2 n^3 FLOPs, 3 n^2 x 4 bytes
    JF_TORCH_BENCH_COPY,       // dst.copy_(src): 0 FLOPs, 2 x JF_TORCH_BENCH_COPY_BYTES bytes
} jf_torch_bench_kind_t;

typedef struct jf_torch_bench jf_torch_bench_t;

// The work of one repetition (plain value record).
typedef struct jf_torch_bench_work {
    double flop;  // floating-point operations (a multiply-add is 2)
    double bytes; // bytes read plus written, each tensor once
} jf_torch_bench_work_t;

// Allocates the benchmark's tensors on device (CPU or CUDA; AUTO is refused: the caller says
// which) with threads intra-op threads (1..JF_TORCH_THREADS_MAX; process-wide). Returns the
// benchmark, or NULL with err: -EINVAL (bad kind, device or threads), -ENODEV (CUDA asked for,
// none usable), -ENOMEM ("out of memory"), -EIO. Caller owns the result; release with
// jf_torch_bench_destroy.
jf_torch_bench_t *jf_torch_bench_new(jf_torch_bench_kind_t kind, jf_torch_device_kind_t device,
                                     int threads, jf_err_t *err);

// Releases the benchmark and sets *self_p to NULL. Accepts NULL and *self_p == NULL.
void jf_torch_bench_destroy(jf_torch_bench_t **self_p);

// The work one repetition does (from the tensor sizes).
jf_torch_bench_work_t jf_torch_bench_work_of(const jf_torch_bench_t *self);

// One repetition, then waits for the device to finish, so that time measured around the call is
// the real time. Returns 0, -ENOMEM or -EIO.
int jf_torch_bench_step(jf_torch_bench_t *self, jf_err_t *err);

// True if a CUDA device is usable by this libtorch.
bool jf_torch_bench_has_cuda(void);

// A name for bench and device: "matmul-cpu", "copy-cpu", "matmul-cuda", "copy-cuda" (static).
const char *jf_torch_bench_name(jf_torch_bench_kind_t kind, jf_torch_device_kind_t device);

#ifdef __cplusplus
}
#endif

#endif
