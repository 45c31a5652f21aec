/* jetfleet-train --roofline (train_roofline.h): the microbenchmarks of jf_torch_bench.h timed
 * here, in C, one epoch each, with the work of every epoch in its line. */
#include "train_roofline.h"

#include "jf_torch.h"
#include "jf_torch_bench.h"
#include "train_records.h"

#include <errno.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

typedef struct s_plan {
    jf_torch_bench_kind_t kind;
    jf_torch_device_kind_t device;
    int64_t min_us; // run at least this long
} s_plan_t;

static int64_t s_now_us(void)
{
    struct timespec ts;
    (void) clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * JF_US_PER_S + ts.tv_nsec / 1000;
}

// The epochs of this machine: warm-up, the CPU's two, CUDA's two when usable.
static int s_plans(bool cuda, s_plan_t plans[JF_RUN_ROOFLINE_EPOCHS])
{
    const jf_torch_device_kind_t cpu = JF_TORCH_DEVICE_CPU, gpu = JF_TORCH_DEVICE_CUDA;
    int n = 0;
    plans[n++] = (s_plan_t){JF_TORCH_BENCH_MATMUL, cpu, TRAIN_ROOFLINE_WARMUP_US};
    plans[n++] = (s_plan_t){JF_TORCH_BENCH_MATMUL, cpu, TRAIN_ROOFLINE_BENCH_US};
    plans[n++] = (s_plan_t){JF_TORCH_BENCH_COPY, cpu, TRAIN_ROOFLINE_BENCH_US};
    if (cuda) {
        plans[n++] = (s_plan_t){JF_TORCH_BENCH_MATMUL, gpu, TRAIN_ROOFLINE_BENCH_US};
        plans[n++] = (s_plan_t){JF_TORCH_BENCH_COPY, gpu, TRAIN_ROOFLINE_BENCH_US};
    }
    return n;
}

// One epoch: repetitions until plan->min_us has passed, a minibatch line each.
static int s_epoch(train_records_t *rec, const s_plan_t *plan, int epoch, int threads,
                   jf_err_t *err)
{
    jf_torch_bench_t *bench = jf_torch_bench_new(plan->kind, plan->device, threads, err);
    if (!bench) {
        return err ? err->code : -EIO;
    }
    train_records_epoch_begin(rec, epoch);
    int64_t start_us = s_now_us(), end_us = start_us;
    size_t reps = 0;
    int rc = 0;
    while (rc == 0 && end_us - start_us < plan->min_us) {
        int64_t t0_us = s_now_us();
        rc = jf_torch_bench_step(bench, err);
        end_us = s_now_us();
        train_minibatch_rec_t m = {
            .index = reps++, .samples = 1, .compute_us = end_us - t0_us, .loss = NAN};
        rc = rc != 0 ? rc : train_records_minibatch(rec, &m, err);
    }
    jf_torch_bench_work_t w = jf_torch_bench_work_of(bench);
    jf_torch_bench_destroy(&bench);
    if (rc != 0) {
        return rc;
    }
    train_records_epoch_work(rec, jf_torch_bench_name(plan->kind, plan->device),
                             w.flop * (double) reps, w.bytes * (double) reps);
    return train_records_epoch_end(rec, end_us - start_us, err);
}

static int s_threads(const train_run_opts_t *opts)
{
    if (opts->threads > 0) {
        return opts->threads;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online < 1                            ? 1
           : online > TRAIN_ROOFLINE_THREADS_MAX ? TRAIN_ROOFLINE_THREADS_MAX
                                                 : (int) online;
}

static train_records_t *s_records(const train_run_opts_t *opts, bool cuda, int threads, FILE *out,
                                  jf_err_t *err)
{
    jf_torch_info_t info = {0};
    if (jf_torch_info_read(&info, err) != 0) {
        return NULL;
    }
    train_records_params_t p = {
        .model = opts->run.model[0] ? opts->run.model : "none",
        .dataset = "none",
        .device = cuda ? "cpu+cuda:0" : "cpu",
        .blas = info.blas,
        .torch_version = info.torch_version,
        .threads = threads,
        .prefetch = 1,
        .batch = 1,
        .epochs = opts->epochs,
        .seed = opts->seed,
    };
    return train_records_new(&p, out, err);
}

int train_roofline_exec(const train_run_opts_t *opts, FILE *out, jf_err_t *err)
{
    s_plan_t plans[JF_RUN_ROOFLINE_EPOCHS];
    bool cuda = jf_torch_bench_has_cuda();
    int n = s_plans(cuda, plans), threads = s_threads(opts);
    n = n < opts->epochs ? n : opts->epochs;
    train_records_t *rec = s_records(opts, cuda, threads, out, err);
    if (!rec) {
        return err ? err->code : -ENOMEM;
    }
    int rc = train_records_start(rec, err);
    for (int e = 0; rc == 0 && e < n; e++) {
        rc = s_epoch(rec, &plans[e], e, threads, err);
    }
    rc = rc != 0 ? rc : train_records_done(rec, err);
    if (opts->json_out) {
        rc = train_records_finish_file(rec, opts->json_out, rc, train_run_failure_reason(rc), err);
    }
    train_records_destroy(&rec);
    return rc;
}
