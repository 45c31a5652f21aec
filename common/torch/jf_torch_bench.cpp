/* The roofline's microbenchmarks (jf_torch_bench.h): a large FP32 matrix product and a large
 * tensor copy through libtorch, one repetition per call, synchronised with the device. */
#include "jf_torch_bench.h"
#include "jf_torch_internal.h"

#include <torch/cuda.h>

#include <cerrno>

struct jf_torch_bench {
    jf_torch_bench_kind_t kind;
    jf_torch_device_kind_t device;
    torch::Tensor a, b, c; // MATMUL: c = a x b; COPY: b.copy_(a)
    jf_torch_bench_work_t work;
};

extern "C" bool jf_torch_bench_has_cuda(void)
{
    try {
        return torch::cuda::is_available();
    } catch (...) {
        return false;
    }
}

extern "C" const char *jf_torch_bench_name(jf_torch_bench_kind_t kind,
                                           jf_torch_device_kind_t device)
{
    bool cuda = device == JF_TORCH_DEVICE_CUDA;
    if (kind == JF_TORCH_BENCH_MATMUL) {
        return cuda ? "matmul-cuda" : "matmul-cpu";
    }
    return cuda ? "copy-cuda" : "copy-cpu";
}

static int s_check(jf_torch_bench_kind_t kind, jf_torch_device_kind_t device, int threads,
                   jf_err_t *err)
{
    if (kind != JF_TORCH_BENCH_MATMUL && kind != JF_TORCH_BENCH_COPY) {
        return jf_err_set(err, -EINVAL, "torch: unknown benchmark kind %d", static_cast<int>(kind));
    }
    if (device != JF_TORCH_DEVICE_CPU && device != JF_TORCH_DEVICE_CUDA) {
        return jf_err_set(err, -EINVAL, "torch: a benchmark runs on cpu or cuda, not kind %d",
                          static_cast<int>(device));
    }
    if (threads < 1 || threads > JF_TORCH_THREADS_MAX) {
        return jf_err_set(err, -EINVAL, "torch: benchmark threads must be in 1..%d, got %d",
                          JF_TORCH_THREADS_MAX, threads);
    }
    if (device == JF_TORCH_DEVICE_CUDA && !jf_torch_bench_has_cuda()) {
        return jf_err_set(err, -ENODEV, "torch: no usable CUDA device for the benchmark");
    }
    return 0;
}

static void s_alloc(jf_torch_bench_t *self)
{
    torch::Device dev = self->device == JF_TORCH_DEVICE_CUDA ? torch::Device(torch::kCUDA, 0)
                                                             : torch::Device(torch::kCPU);
    auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(dev);
    const double elem = sizeof(float);
    if (self->kind == JF_TORCH_BENCH_MATMUL) {
        int64_t n = self->device == JF_TORCH_DEVICE_CUDA ? JF_TORCH_BENCH_MATMUL_N_CUDA
                                                         : JF_TORCH_BENCH_MATMUL_N_CPU;
        self->a = torch::rand({n, n}, opts);
        self->b = torch::rand({n, n}, opts);
        self->c = torch::empty({n, n}, opts);
        double nd = static_cast<double>(n);
        self->work = {2 * nd * nd * nd, 3 * nd * nd * elem};
        return;
    }
    int64_t n = JF_TORCH_BENCH_COPY_BYTES / static_cast<int64_t>(sizeof(float));
    self->a = torch::rand({n}, opts);
    self->b = torch::empty({n}, opts);
    self->work = {0, 2 * static_cast<double>(n) * elem};
}

extern "C" jf_torch_bench_t *jf_torch_bench_new(jf_torch_bench_kind_t kind,
                                                jf_torch_device_kind_t device, int threads,
                                                jf_err_t *err)
{
    if (s_check(kind, device, threads, err) != 0) {
        return nullptr;
    }
    jf_torch_bench_t *self = nullptr;
    try {
        self = new jf_torch_bench_t();
        self->kind = kind;
        self->device = device;
        at::set_num_threads(threads);
        s_alloc(self);
        return self;
    } catch (...) {
        (void) jf_torch_internal_fail(err, "benchmark");
        delete self;
        return nullptr;
    }
}

extern "C" void jf_torch_bench_destroy(jf_torch_bench_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    delete *self_p;
    *self_p = nullptr;
}

extern "C" jf_torch_bench_work_t jf_torch_bench_work_of(const jf_torch_bench_t *self)
{
    return self->work;
}

extern "C" int jf_torch_bench_step(jf_torch_bench_t *self, jf_err_t *err)
{
    try {
        if (self->kind == JF_TORCH_BENCH_MATMUL) {
            torch::mm_out(self->c, self->a, self->b);
        } else {
            self->b.copy_(self->a);
        }
        if (self->device == JF_TORCH_DEVICE_CUDA) {
            torch::cuda::synchronize();
        }
        return 0;
    } catch (...) {
        return jf_torch_internal_fail(err, "benchmark step");
    }
}
