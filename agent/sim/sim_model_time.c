/* The time side of the model (docs/simulator.md, "Compute", "Data pipeline", "Page cache",
 * "Memory and out of memory"): per-batch costs, the serial and the pipelined loader, the page
 * cache across epochs and the memory budget. Not the power side (sim_model_power.c) nor input
 * checking (sim_model.c). */
#include "sim_model_internal.h"

#include <math.h>

#define S_SQRT_2   1.4142135623730951
#define S_SQRT_2PI 2.5066282746310002
#define S_GROUPS   2 // full batches, then the partial last one

// Time components of one batch of n samples, s.
typedef struct s_batch {
    double samples;       // n
    double gpu_s;         // GPU work: the roofline bounds over the efficiency
    double gpu_powered_s; // gpu_s weighted by the power drawn: its memory-bound share at
                          // gpu_memory_stall_power (docs/simulator.md, "Power")
    double step_s;        // one training step alone: GPU work or launch overhead, the larger
    double io_s;          // storage reads (page-cache misses): seek_s + transfer_s
    double seek_s;        // of which the reads' latency, which queued reads overlap
    double transfer_s;    // and their transfer at the medium's bandwidth, which they do not
    double cpu_s;         // decoding and augmenting on one core
    double handoff_s;     // handing the batch to the GPU (and out of a worker)
    double dram_bytes;    // DRAM traffic of the step
} s_batch_t;

// One batch in the running pipeline.
typedef struct s_flow {
    double step_s;        // training step, slowed by the loader beside it
    double gpu_busy_s;    // GPU busy during it
    double gpu_powered_s; // and weighted by the power it draws (s_batch_t)
    double stall_s;       // expected wait for this batch in steady state, handoff included
    double stall_sd_s;    // spread of that wait
    double fetch_s;       // one worker's time to build the batch (io + cpu)
    double handoff_s;     // the batch's handoff
    double loader_cpu_s;  // worker CPU time for the batch
} s_flow_t;

void sim_memory_budget(const sim_ctx_t *ctx, sim_memory_t *ret_mem)
{
    const sim_workload_params_t *w = ctx->work;
    const sim_board_params_t *b = ctx->board;
    double tensors = w->parameters * SIM_FP32_BYTES * w->optimizer_copies +
                     ctx->in->batch_size * w->activation_bytes;
    ret_mem->need_bytes = tensors * ctx->g->allocator_overhead;
    ret_mem->avail_bytes = b->ram_bytes - b->os_bytes - b->runtime_bytes;
    // Worker processes hold RAM too (it could be swapped, so it does not decide OOM), and the
    // page cache keeps once-read pages only in its inactive share.
    double free_bytes =
        ret_mem->avail_bytes - ret_mem->need_bytes - ctx->in->workers * ctx->g->worker_bytes;
    ret_mem->cache_bytes = fmax(0.0, free_bytes) * ctx->g->cache_share;
}

// x + (1 - x) ln(1 - x): the hit share of an epoch that starts with the cache full of x of the
// dataset under LRU and a fresh shuffle.
static double s_lru_phi(double x)
{
    return x >= 1.0 ? 1.0 : x + (1.0 - x) * log1p(-x);
}

double sim_cache_hits(double resident, double capacity, double *ret_after)
{
    if (capacity >= 1.0) {
        *ret_after = 1.0;
        return resident;
    }
    double r = fmin(resident, capacity);
    // The misses first fill the free space (hits at rate r) until t1, then evict the oldest.
    double t1 = (capacity - r) / (1.0 - r);
    *ret_after = capacity;
    return r * t1 + (1.0 - t1) * s_lru_phi(r);
}

static void s_batch_times(const sim_ctx_t *ctx, double n, double hit, s_batch_t *ret)
{
    const sim_workload_params_t *w = ctx->work;
    const sim_global_params_t *g = ctx->g;
    const sim_medium_params_t *m = ctx->medium;
    ret->samples = n;
    ret->dram_bytes = g->activation_traffic * n * w->activation_bytes +
                      g->parameter_traffic * w->parameters * SIM_FP32_BYTES;
    // The step's kernels are each mostly compute- or memory-bound and run one after another,
    // so their bounds add up (docs/simulator.md, "Compute").
    double flop_s = n * w->train_flops / ctx->gpu_flops_per_s;
    double mem_s = ret->dram_bytes / ctx->dram_bytes_per_s;
    double roof_s = flop_s + mem_s;
    // The workload's efficiency on the calibration board, scaled for this family.
    double efficiency = fmin(1.0, w->gpu_efficiency * ctx->board->gpu_efficiency_scale);
    ret->gpu_s = roof_s / efficiency * ctx->compute_noise;
    ret->gpu_powered_s =
        ret->gpu_s * (flop_s + ctx->board->gpu_memory_stall_power * mem_s) / roof_s;
    double host_s = w->kernels_per_step * g->launch_cycles / ctx->cpu_cycles_per_s;
    ret->step_s = fmax(ret->gpu_s, host_s * ctx->compute_noise);
    // A sample smaller than a page shares its read with its neighbours in the file.
    double reads = fmin(1.0, w->sample_bytes / g->page_bytes);
    double misses = n * (1.0 - hit) / ctx->in->factors.storage * ctx->fetch_noise;
    ret->seek_s = misses * reads * m->latency_s;
    ret->transfer_s = misses * w->sample_bytes / m->bytes_per_s;
    ret->io_s = ret->seek_s + ret->transfer_s;
    ret->cpu_s = n * w->cpu_cycles / ctx->cpu_cycles_per_s * ctx->fetch_noise;
    ret->handoff_s = n * w->input_bytes * g->handoff_cycles_per_byte / ctx->cpu_cycles_per_s;
}

// E[max(0, X)] and Var[max(0, X)] for X ~ N(mu, sd^2).
static double s_positive_part(double mu, double sd, double *ret_var)
{
    if (sd <= 0.0) {
        *ret_var = 0.0;
        return fmax(0.0, mu);
    }
    double z = mu / sd;
    double cdf = 0.5 * erfc(-z / S_SQRT_2);
    double pdf = exp(-0.5 * z * z) / S_SQRT_2PI;
    double mean = mu * cdf + sd * pdf;
    double second = (mu * mu + sd * sd) * cdf + mu * sd * pdf;
    *ret_var = fmax(0.0, second - mean * mean);
    return mean;
}

// Workers 0: the main process reads, decodes and hands over each batch, then trains on it.
static void s_flow_serial(const sim_ctx_t *ctx, const s_batch_t *b, s_flow_t *ret)
{
    ret->step_s = b->step_s;
    ret->gpu_busy_s = b->gpu_s;
    ret->gpu_powered_s = b->gpu_powered_s;
    ret->fetch_s = b->io_s + b->cpu_s;
    ret->handoff_s = b->handoff_s;
    ret->stall_s = ret->fetch_s + b->handoff_s;
    ret->stall_sd_s = ret->fetch_s * ctx->work->fetch_cv / sqrt(b->samples);
    ret->loader_cpu_s = 0.0;
}

// The time the medium needs for a batch's reads with k workers each keeping one read
// outstanding: the device overlaps the latency of up to queue_depth queued reads by
// min(k, queue_depth)^queue_gain (a disk's elevator shortens seeks, an SSD's channels serve reads
// at once), while the transfers share its bandwidth (docs/simulator.md, "Data pipeline").
static double s_disk_s(const sim_ctx_t *ctx, const s_batch_t *b, double k)
{
    const sim_medium_params_t *m = ctx->medium;
    return b->seek_s / pow(fmin(k, m->queue_depth), m->queue_gain) + b->transfer_s;
}

// Workers k: k producers, each building whole batches, bounded by the medium's queued reads
// and the cores left for them; the step slows by the loader cores busy beside it; a batch
// waits when producing one takes longer than a step, smoothed by the prefetch queue.
static void s_flow_parallel(const sim_ctx_t *ctx, const s_batch_t *b, s_flow_t *ret)
{
    double k = ctx->in->workers;
    double fetch_s = b->io_s + b->cpu_s;
    double period_s = fmax(fetch_s / k, s_disk_s(ctx, b, k));
    period_s = fmax(period_s, b->cpu_s / fmin(k, ctx->loader_cores));
    double busy_cores = b->cpu_s / fmax(period_s, b->step_s);
    double slowdown = 1.0 + ctx->g->interference_per_core * busy_cores;
    ret->step_s = b->step_s * slowdown;
    ret->gpu_busy_s = b->gpu_s * slowdown;
    ret->gpu_powered_s = b->gpu_powered_s * slowdown;
    double sd = period_s * ctx->work->fetch_cv / sqrt(b->samples * k * ctx->in->prefetch);
    double var = 0.0;
    ret->stall_s = s_positive_part(period_s - ret->step_s, sd, &var) + b->handoff_s;
    ret->stall_sd_s = sqrt(var);
    ret->fetch_s = fetch_s;
    ret->handoff_s = b->handoff_s;
    ret->loader_cpu_s = b->cpu_s;
}

static void s_flow(const sim_ctx_t *ctx, double n, double hit, s_flow_t *ret, double *ret_dram)
{
    s_batch_t b = {0};
    s_batch_times(ctx, n, hit, &b);
    *ret_dram = b.dram_bytes;
    if (ctx->in->workers == 0) {
        s_flow_serial(ctx, &b, ret);
    } else {
        s_flow_parallel(ctx, &b, ret);
    }
}

// The wait before minibatch 0: with workers, starting them and one worker building the whole
// first batch; without, the batch's own fetch.
static double s_first_stall(const sim_ctx_t *ctx, const s_flow_t *first)
{
    if (ctx->in->workers == 0) {
        return first->stall_s;
    }
    double spawn_s = ctx->in->workers * ctx->g->worker_spawn_cycles / ctx->cpu_cycles_per_s;
    return spawn_s + first->fetch_s + first->handoff_s;
}

// Adds count batches of one kind to the totals; var collects the spread of their waits.
static void s_add_group(sim_totals_t *t, double count, const s_flow_t *f, double dram_bytes,
                        double *var)
{
    t->batches += count;
    t->compute_s += count * f->step_s;
    t->stall_s += count * f->stall_s;
    t->gpu_busy_s += count * f->gpu_busy_s;
    t->gpu_powered_s += count * f->gpu_powered_s;
    t->loader_cpu_s += count * f->loader_cpu_s;
    t->dram_bytes += count * dram_bytes;
    *var += count * f->stall_sd_s * f->stall_sd_s;
}

void sim_epoch_totals(const sim_ctx_t *ctx, double cache_bytes, sim_totals_t *ret)
{
    double batch = ctx->in->batch_size;
    double after = 0.0;
    double hit = sim_cache_hits(ctx->in->resident_fraction,
                                cache_bytes / (ctx->samples * ctx->work->sample_bytes), &after);
    *ret = (sim_totals_t){.hit_fraction = hit, .resident_after = after};
    // Full batches, then the partial last one if the samples do not divide evenly.
    double count[S_GROUPS] = {floor(ctx->samples / batch), 0.0};
    double size[S_GROUPS] = {batch, ctx->samples - count[0] * batch};
    count[1] = size[1] > 0.0 ? 1.0 : 0.0;
    s_flow_t flow[S_GROUPS] = {{0}};
    double var = 0.0;
    for (int i = 0; i < S_GROUPS; i++) {
        double dram_bytes = 0.0;
        if (count[i] > 0.0) {
            s_flow(ctx, size[i], hit, &flow[i], &dram_bytes);
            s_add_group(ret, count[i], &flow[i], dram_bytes, &var);
        }
    }
    // Minibatch 0 waits differently (worker start-up); the spread describes the later ones.
    const s_flow_t *first = count[0] > 0.0 ? &flow[0] : &flow[1];
    ret->first_stall_s = s_first_stall(ctx, first);
    ret->stall_s += ret->first_stall_s - first->stall_s;
    var -= first->stall_sd_s * first->stall_sd_s;
    ret->stall_sd_s = ret->batches > 1.0 ? sqrt(fmax(0.0, var) / (ret->batches - 1.0)) : 0.0;
}
