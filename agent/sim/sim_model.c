/* The model object (sim_model.h): loading, power modes as operating points, board factors, and
 * one epoch's evaluation: checking the input, resolving it against the parameters, drawing the
 * run's noise, then the memory budget, the times (sim_model_time.c) and the power
 * (sim_model_power.c). docs/simulator.md describes the model. */
#include "sim_model_internal.h"

#include "jf_rng.h"
#include "jf_run_spec.h"
#include "jf_units.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_HZ_SLACK     1e-9 // relative: an op's integer Hz against a limit read as MHz
#define S_MIB          1048576.0
#define S_NOISE_STREAM 1 // rng stream offset of the run noise: epoch e uses stream e + this

static sim_model_t *s_new(void)
{
    return calloc(1, sizeof(sim_model_t));
}

sim_model_t *sim_model_load(const char *path, jf_err_t *err)
{
    sim_model_t *self = s_new();
    if (!self) {
        (void) jf_err_set(err, -ENOMEM, "%s: out of memory", path); // the NULL says it
        return NULL;
    }
    if (sim_params_load(path, &self->params, err) != 0) {
        sim_model_destroy(&self);
    }
    return self;
}

sim_model_t *sim_model_parse(const char *text, size_t len, const char *source, jf_err_t *err)
{
    sim_model_t *self = s_new();
    if (!self) {
        (void) jf_err_set(err, -ENOMEM, "%s: out of memory", source ? source : "<input>");
        return NULL;
    }
    if (sim_params_parse(text, len, source, &self->params, err) != 0) {
        sim_model_destroy(&self);
    }
    return self;
}

void sim_model_destroy(sim_model_t **self_p)
{
    if (self_p && *self_p) {
        free(*self_p);
        *self_p = NULL;
    }
}

const sim_params_t *sim_model_params(const sim_model_t *self)
{
    assert(self);
    return &self->params;
}

static const sim_board_params_t *s_board(const sim_model_t *self, jf_board_type_t type)
{
    if ((int) type < 0 || type >= JF_BOARD_TYPE_COUNT || !self->params.boards[type].present) {
        return NULL;
    }
    return &self->params.boards[type];
}

static int s_no_board(jf_board_type_t type, jf_err_t *err)
{
    return jf_err_set(err, -EINVAL,
                      "sim: no parameters for board type '%s', expected one of: agx-xavier, "
                      "xavier-nx, nano, orin-agx, orin-nano",
                      jf_board_type_name(type));
}

static void s_mode_to_op(const sim_mode_params_t *m, sim_op_t *ret_op)
{
    *ret_op = (sim_op_t){.n_cores = m->cores,
                         .cpu_hz = llround(m->cpu_hz),
                         .gpu_hz = llround(m->gpu_hz),
                         .emc_hz = llround(m->emc_hz),
                         .gpu_cores = m->gpu_cores};
}

int sim_model_mode_op(const sim_model_t *self, jf_board_type_t type, int mode_id, sim_op_t *ret_op,
                      jf_err_t *err)
{
    const sim_board_params_t *b = s_board(self, type);
    if (!b) {
        return s_no_board(type, err);
    }
    for (size_t i = 0; i < b->n_modes; i++) {
        if (b->modes[i].id == mode_id) {
            s_mode_to_op(&b->modes[i], ret_op);
            return 0;
        }
    }
    return jf_err_set(err, -EINVAL, "sim: %s has no power mode %d", jf_board_type_name(type),
                      mode_id);
}

int sim_model_mode_op_named(const sim_model_t *self, jf_board_type_t type, const char *mode_name,
                            sim_op_t *ret_op, jf_err_t *err)
{
    const sim_board_params_t *b = s_board(self, type);
    if (!b) {
        return s_no_board(type, err);
    }
    for (size_t i = 0; mode_name && i < b->n_modes; i++) {
        if (strcmp(b->modes[i].name, mode_name) == 0) {
            s_mode_to_op(&b->modes[i], ret_op);
            return 0;
        }
    }
    return jf_err_set(err, -EINVAL, "sim: %s has no power mode '%.64s'", jf_board_type_name(type),
                      mode_name ? mode_name : "(null)");
}

void sim_model_board_factors(const sim_model_t *self, jf_board_type_t type, uint64_t seed,
                             const char *board_name, sim_board_factors_t *ret_factors)
{
    assert(self && board_name && ret_factors);
    *ret_factors = (sim_board_factors_t) SIM_BOARD_FACTORS_NEUTRAL;
    const sim_board_params_t *b = s_board(self, type);
    if (!b) {
        return;
    }
    const sim_spread_params_t *v = &b->spread;
    jf_rng_t rng = {0};
    jf_rng_seed_name(&rng, seed, board_name);
    // Draw order is part of the format: compute, storage, idle power, then the outlier draw.
    ret_factors->compute = exp(v->compute_sigma * jf_rng_normal(&rng));
    ret_factors->storage = exp(v->storage_sigma * jf_rng_normal(&rng));
    ret_factors->idle_power = exp(v->idle_power_sigma * jf_rng_normal(&rng));
    if (jf_rng_uniform(&rng) < v->outlier_probability) {
        ret_factors->outlier = true;
        ret_factors->compute *= v->outlier_compute_factor;
        ret_factors->idle_power *= v->outlier_idle_power_factor;
    }
}

// True if 0 < hz <= limit_hz (up to rounding).
static bool s_hz_ok(int64_t hz, double limit_hz)
{
    return hz > 0 && (double) hz <= limit_hz * (1.0 + S_HZ_SLACK);
}

static int s_check_op(const sim_board_params_t *b, const sim_op_t *op, jf_err_t *err)
{
    if (op->n_cores < 1 || op->n_cores > b->cpu_cores) {
        return jf_err_set(err, -EINVAL, "sim: op.n_cores must be 1..%d, got %d", b->cpu_cores,
                          op->n_cores);
    }
    if (op->gpu_cores < 0 || op->gpu_cores > b->gpu_cuda_cores) {
        return jf_err_set(err, -EINVAL, "sim: op.gpu_cores must be 0..%d, got %d",
                          b->gpu_cuda_cores, op->gpu_cores);
    }
    if (!s_hz_ok(op->cpu_hz, b->cpu_max_hz) || !s_hz_ok(op->gpu_hz, b->gpu_max_hz) ||
        !s_hz_ok(op->emc_hz, b->emc_max_hz)) {
        return jf_err_set(err, -EINVAL,
                          "sim: op clocks must be positive and at most %.0f, %.0f and %.0f Hz "
                          "(CPU, GPU, EMC), got %" PRId64 ", %" PRId64 " and %" PRId64,
                          b->cpu_max_hz, b->gpu_max_hz, b->emc_max_hz, op->cpu_hz, op->gpu_hz,
                          op->emc_hz);
    }
    return 0;
}

static int s_check_loader(const sim_epoch_in_t *in, jf_err_t *err)
{
    if (in->workers < 0 || in->workers > JF_WORKERS_MAX) {
        return jf_err_set(err, -EINVAL, "sim: workers must be 0..%d, got %d", JF_WORKERS_MAX,
                          in->workers);
    }
    if (in->prefetch < 1 || in->prefetch > JF_PREFETCH_MAX) {
        return jf_err_set(err, -EINVAL, "sim: prefetch must be 1..%d, got %d", JF_PREFETCH_MAX,
                          in->prefetch);
    }
    if (in->batch_size < 1 || in->batch_size > JF_BATCH_MAX) {
        return jf_err_set(err, -EINVAL, "sim: batch_size must be 1..%d, got %d", JF_BATCH_MAX,
                          in->batch_size);
    }
    return 0;
}

static int s_check_state(const sim_epoch_in_t *in, jf_err_t *err)
{
    if (!(in->dataset_scale > 0.0 && in->dataset_scale <= SIM_DATASET_SCALE_MAX)) {
        return jf_err_set(err, -EINVAL, "sim: dataset_scale must be in (0, %g], got %g",
                          SIM_DATASET_SCALE_MAX, in->dataset_scale);
    }
    if (in->epoch < 0) {
        return jf_err_set(err, -EINVAL, "sim: epoch must be >= 0, got %d", in->epoch);
    }
    if (!(in->resident_fraction >= 0.0 && in->resident_fraction <= 1.0)) {
        return jf_err_set(err, -EINVAL, "sim: resident_fraction must be in [0, 1], got %g",
                          in->resident_fraction);
    }
    const sim_board_factors_t *f = &in->factors;
    if (!(f->compute > 0.0 && f->storage > 0.0 && f->idle_power > 0.0) ||
        !isfinite(f->compute + f->storage + f->idle_power)) {
        return jf_err_set(err, -EINVAL, "sim: board factors must be positive and finite");
    }
    return 0;
}

// Resolves the board, workload and medium and checks every field of in.
static int s_resolve(const sim_model_t *self, const sim_epoch_in_t *in, sim_ctx_t *ctx,
                     jf_err_t *err)
{
    *ctx = (sim_ctx_t){.g = &self->params.model, .in = in};
    ctx->board = s_board(self, in->board_type);
    if (!ctx->board) {
        return s_no_board(in->board_type, err);
    }
    ctx->work = sim_params_workload(&self->params, in->model, in->dataset);
    if (!ctx->work) {
        return jf_err_set(err, -EINVAL, "sim: no workload for model '%.64s' on dataset '%.64s'",
                          in->model ? in->model : "(null)", in->dataset ? in->dataset : "(null)");
    }
    ctx->medium = sim_params_medium(&self->params, in->medium);
    if (!ctx->medium) {
        return jf_err_set(err, -EINVAL, "sim: unknown medium '%.64s', expected one of: %s",
                          in->medium ? in->medium : "(null)", jf_run_spec_media());
    }
    int rc = s_check_op(ctx->board, &in->op, err);
    rc = rc != 0 ? rc : s_check_loader(in, err);
    return rc != 0 ? rc : s_check_state(in, err);
}

// Rates of the operating point, the board's factors and the run's noise.
static void s_rates(const sim_model_t *self, sim_ctx_t *ctx)
{
    const sim_epoch_in_t *in = ctx->in;
    const sim_board_params_t *b = ctx->board;
    double speed = in->factors.compute;
    double gpu_cores = in->op.gpu_cores > 0 ? in->op.gpu_cores : b->gpu_cuda_cores;
    ctx->cpu_cycles_per_s = (double) in->op.cpu_hz * b->cpu_core_speed * speed;
    ctx->gpu_flops_per_s = gpu_cores * b->gpu_flops_per_core_cycle * in->op.gpu_hz * speed;
    // The steps' memory term sees the bandwidth the family achieves (dram_efficiency); DRAM
    // power stays relative to the full bandwidth (sim_model_power.c).
    ctx->dram_bytes_per_s =
        b->dram_bytes_per_s * b->dram_efficiency * in->op.emc_hz / b->emc_max_hz * speed;
    ctx->loader_cores = fmax(1.0, in->op.n_cores - ctx->g->main_process_cores);
    ctx->samples = fmax(1.0, round(ctx->work->samples * in->dataset_scale));
    ctx->compute_noise = 1.0;
    ctx->fetch_noise = 1.0;
    if (in->noise) {
        const sim_variability_params_t *v = &self->params.variability;
        jf_rng_t rng = {0};
        jf_rng_seed(&rng, in->run_seed, (uint64_t) in->epoch + S_NOISE_STREAM);
        ctx->compute_noise = exp(v->run_compute_sigma * jf_rng_normal(&rng));
        ctx->fetch_noise = exp(v->run_fetch_sigma * jf_rng_normal(&rng));
    }
}

int sim_model_context(const sim_model_t *self, const sim_epoch_in_t *in, sim_ctx_t *ret_ctx,
                      jf_err_t *err)
{
    int rc = s_resolve(self, in, ret_ctx, err);
    if (rc == 0) {
        s_rates(self, ret_ctx);
    }
    return rc;
}

static int64_t s_us(double seconds)
{
    return llround(seconds * (double) JF_US_PER_S);
}

static void s_fill_times(const sim_totals_t *t, double step_cv, sim_epoch_out_t *out)
{
    out->batches = llround(t->batches);
    out->fetch_stall_us = s_us(t->stall_s);
    out->compute_us = s_us(t->compute_s);
    out->e2e_us = out->fetch_stall_us + out->compute_us;
    out->first_stall_us = s_us(t->first_stall_s);
    double later = t->batches - 1.0;
    out->stall_mean_us = later > 0.0 ? s_us((t->stall_s - t->first_stall_s) / later) : 0;
    out->stall_sd_us = s_us(t->stall_sd_s);
    out->step_mean_us = s_us(t->compute_s / t->batches);
    out->step_sd_us = llround((double) out->step_mean_us * step_cv);
    out->cache_hit_fraction = t->hit_fraction;
    out->resident_fraction = t->resident_after;
}

// The epoch's utilisation as a board's load counters would show it (docs/simulator.md, "Load"):
// the GPU is busy while it computes; the training process keeps its cores busy all epoch, the
// workers add their decoding time.
static void s_fill_load(const sim_ctx_t *ctx, const sim_totals_t *t, sim_epoch_out_t *out)
{
    double e2e_s = t->compute_s + t->stall_s;
    if (e2e_s <= 0.0) {
        return;
    }
    out->gpu_load = fmin(1.0, t->gpu_busy_s / e2e_s);
    out->cpu_busy_cores =
        fmin(ctx->in->op.n_cores, ctx->g->main_process_cores + t->loader_cpu_s / e2e_s);
}

static void s_fill_oom(const sim_ctx_t *ctx, const sim_memory_t *mem, sim_epoch_out_t *out)
{
    out->oom = true;
    (void) snprintf(out->oom_reason, sizeof out->oom_reason,
                    "out of memory: %.32s-%.32s at batch size %d needs %lld MiB; %.16s has %lld "
                    "MiB left after the OS and the training runtime",
                    ctx->work->model, ctx->work->dataset, ctx->in->batch_size,
                    (long long) llround(mem->need_bytes / S_MIB),
                    jf_board_type_name(ctx->in->board_type),
                    (long long) llround(fmax(0.0, mem->avail_bytes) / S_MIB));
    out->resident_fraction = ctx->in->resident_fraction;
}

int sim_model_epoch(const sim_model_t *self, const sim_epoch_in_t *in, sim_epoch_out_t *ret_out,
                    jf_err_t *err)
{
    assert(self && in && ret_out);
    sim_ctx_t ctx = {0};
    int rc = s_resolve(self, in, &ctx, err);
    if (rc != 0) {
        return rc;
    }
    s_rates(self, &ctx);
    sim_memory_t mem = {0};
    sim_memory_budget(&ctx, &mem);
    sim_epoch_out_t out = {.need_bytes = llround(mem.need_bytes),
                           .avail_bytes = llround(mem.avail_bytes),
                           .cache_bytes = llround(fmax(0.0, mem.cache_bytes)),
                           .dataset_bytes = llround(ctx.samples * ctx.work->sample_bytes),
                           .samples = llround(ctx.samples)};
    sim_totals_t totals = {0};
    if (mem.need_bytes > mem.avail_bytes) {
        s_fill_oom(&ctx, &mem, &out);
    } else {
        sim_epoch_totals(&ctx, mem.cache_bytes, &totals);
        s_fill_times(&totals, ctx.g->step_cv, &out);
        s_fill_load(&ctx, &totals, &out);
    }
    sim_power_rails(&ctx, &totals, totals.compute_s + totals.stall_s, &out);
    *ret_out = out;
    return 0;
}

// The roofline's two loads (docs/simulator.md "Roofline"): the GPU computing at its peak with no
// DRAM traffic to speak of, and streaming DRAM at the bandwidth with the GPU's kernels waiting on
// memory; the training process's cores busy in both.
static void s_roofline_load(const sim_ctx_t *ctx, double gpu_powered, double dram_bytes_per_s,
                            sim_epoch_out_t *out)
{
    sim_totals_t t = {.compute_s = 1.0,
                      .gpu_busy_s = 1.0,
                      .gpu_powered_s = gpu_powered,
                      .dram_bytes = dram_bytes_per_s};
    s_fill_load(ctx, &t, out);
    sim_power_rails(ctx, &t, 1.0, out);
}

int sim_model_roofline(const sim_model_t *self, jf_board_type_t type, const sim_op_t *op,
                       const sim_board_factors_t *factors, sim_roofline_t *ret_roof, jf_err_t *err)
{
    assert(self && op && factors && ret_roof);
    sim_epoch_in_t in = {.board_type = type, .op = *op, .factors = *factors};
    sim_ctx_t ctx = {.g = &self->params.model, .in = &in, .board = s_board(self, type)};
    if (!ctx.board) {
        return s_no_board(type, err);
    }
    int rc = s_check_op(ctx.board, op, err);
    if (rc != 0) {
        return rc;
    }
    // The rates of s_rates, without the workload's part.
    const sim_board_params_t *b = ctx.board;
    double gpu_cores = op->gpu_cores > 0 ? op->gpu_cores : b->gpu_cuda_cores;
    sim_roofline_t r = {0};
    r.gpu_flop_per_s = gpu_cores * b->gpu_flops_per_core_cycle * op->gpu_hz * factors->compute;
    r.dram_bytes_per_s =
        b->dram_bytes_per_s * b->dram_efficiency * op->emc_hz / b->emc_max_hz * factors->compute;
    s_roofline_load(&ctx, 1.0, 0.0, &r.compute);
    s_roofline_load(&ctx, b->gpu_memory_stall_power, r.dram_bytes_per_s, &r.memory);
    *ret_roof = r;
    return 0;
}
