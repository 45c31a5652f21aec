/* The concurrent training and inference model (sim_concurrent.h; docs/simulator.md, "Concurrent
 * training and inference"): the inference model's forward-only cost from its workload's figures,
 * the memory of both, a discrete-event simulation of one training epoch time-sliced with
 * inference minibatches, and the power of the whole through the training model's rails. */
#include "sim_concurrent.h"

#include "jf_rng.h"
#include "jf_run_spec.h"
#include "jf_units.h"
#include "sim_model_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_STREAM_ARRIVALS 0x636f6e63ULL // rng streams of the arrivals and of the time draws
#define S_STREAM_DRAWS    0x64726177ULL
#define S_P50             0.50
#define S_P99             0.99
#define S_CAP0            1024 // first capacity of the request array

// One inference minibatch of n requests, s.
typedef struct s_fwd {
    double step_s;     // its time on the GPU (or the launch overhead, the larger)
    double gpu_s;      // GPU busy
    double powered_s;  // gpu_s weighted by the power drawn (memory-bound share less)
    double dram_bytes; // DRAM traffic
} s_fwd_t;

// The simulation's state and sums.
typedef struct s_des {
    jf_rng_t arrivals;     // Poisson arrivals
    jf_rng_t draws;        // minibatch time noise
    double rate_per_s;     // arrival rate
    double next_arrival_s; // time of the next arrival
    double t_s;            // now
    double *req;           // arrival times; a served request's entry becomes its latency
    size_t n_req;          // entries used
    size_t cap;            // entries allocated
    size_t head;           // first request not served
    int last;              // what ran last: 0 nothing, 1 training, 2 inference
    size_t max_requests;   // give up past this many
    double train_s, stall_s, infer_s, switch_s, infer_gpu_s, infer_powered_s, infer_dram;
    int64_t infer_batches;
} s_des_t;

// The forward pass of n samples of the inference workload at ctx's operating point.
static void s_forward(const sim_ctx_t *ctx, const sim_concurrent_params_t *cp, double n,
                      s_fwd_t *ret)
{
    const sim_workload_params_t *w = ctx->work;
    ret->dram_bytes = cp->forward_activation_traffic * n * w->activation_bytes +
                      cp->forward_parameter_traffic * w->parameters * SIM_FP32_BYTES;
    double flop_s = n * w->train_flops * cp->forward_flop_share / ctx->gpu_flops_per_s;
    double mem_s = ret->dram_bytes / ctx->dram_bytes_per_s;
    double roof_s = flop_s + mem_s;
    double efficiency = fmin(1.0, w->gpu_efficiency * ctx->board->gpu_efficiency_scale);
    ret->gpu_s = roof_s / efficiency * ctx->compute_noise;
    ret->powered_s = ret->gpu_s * (flop_s + ctx->board->gpu_memory_stall_power * mem_s) / roof_s;
    double host_s = w->kernels_per_step * cp->forward_kernel_share * ctx->g->launch_cycles /
                    ctx->cpu_cycles_per_s;
    ret->step_s = fmax(ret->gpu_s, host_s * ctx->compute_noise);
}

// The first workload of the parameter file whose model is name, or NULL.
static const sim_workload_params_t *s_infer_workload(const sim_params_t *p, const char *name)
{
    for (size_t i = 0; name && i < p->n_workloads; i++) {
        if (strcmp(p->workloads[i].model, name) == 0) {
            return &p->workloads[i];
        }
    }
    return NULL;
}

static int s_check(const sim_params_t *p, const sim_concurrent_in_t *in, jf_err_t *err)
{
    if (!s_infer_workload(p, in->infer_model)) {
        return jf_err_set(err, -EINVAL, "sim: unknown inference model '%.64s', expected one of: %s",
                          in->infer_model ? in->infer_model : "(null)", jf_run_spec_models());
    }
    if (in->infer_batch < 1 || in->infer_batch > JF_BATCH_MAX) {
        return jf_err_set(err, -EINVAL, "sim: infer_batch must be 1..%d, got %d", JF_BATCH_MAX,
                          in->infer_batch);
    }
    if (!(in->rate_per_s > 0.0 && in->rate_per_s <= SIM_CONCURRENT_RATE_MAX)) {
        return jf_err_set(err, -EINVAL, "sim: request rate must be in (0, %g] per s, got %g",
                          SIM_CONCURRENT_RATE_MAX, in->rate_per_s);
    }
    if (in->max_batches < 0) {
        return jf_err_set(err, -EINVAL, "sim: max_batches must be >= 0, got %lld",
                          (long long) in->max_batches);
    }
    if (in->budget_us <= 0) {
        return jf_err_set(err, -EINVAL, "sim: latency budget must be > 0 us, got %lld",
                          (long long) in->budget_us);
    }
    return 0;
}

// The inference side's context: the training input with the inference workload's model.
static int s_infer_ctx(const sim_model_t *model, const sim_concurrent_in_t *in,
                       sim_epoch_in_t *ret_in, sim_ctx_t *ret_ctx, jf_err_t *err)
{
    const sim_workload_params_t *w = s_infer_workload(sim_model_params(model), in->infer_model);
    *ret_in = in->train;
    ret_in->model = w->model;
    ret_in->dataset = w->dataset;
    return sim_model_context(model, ret_in, ret_ctx, err);
}

static double s_draw(jf_rng_t *rng, double mean_s, double cv)
{
    return mean_s * exp(cv * jf_rng_normal(rng));
}

static int s_push(s_des_t *d, double t_s)
{
    if (d->n_req == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : S_CAP0;
        double *req = realloc(d->req, cap * sizeof *req);
        if (!req) {
            return -ENOMEM;
        }
        d->req = req;
        d->cap = cap;
    }
    d->req[d->n_req++] = t_s;
    return 0;
}

// Every arrival up to now into the queue. Returns 0, -ENOMEM or -E2BIG (too many requests).
static int s_arrive(s_des_t *d)
{
    while (d->next_arrival_s <= d->t_s) {
        if (d->n_req >= d->max_requests) {
            return -E2BIG;
        }
        if (s_push(d, d->next_arrival_s) != 0) {
            return -ENOMEM;
        }
        d->next_arrival_s += -log1p(-jf_rng_uniform(&d->arrivals)) / d->rate_per_s;
    }
    return 0;
}

static void s_hand_over(s_des_t *d, int to, double switch_s)
{
    if (d->last != 0 && d->last != to) {
        d->t_s += switch_s;
        d->switch_s += switch_s;
    }
    d->last = to;
}

// One inference minibatch of the n oldest waiting requests; their entries become latencies.
static void s_run_infer(s_des_t *d, const s_fwd_t *f, size_t n, double switch_s, double cv)
{
    s_hand_over(d, 2, switch_s);
    double took_s = s_draw(&d->draws, f->step_s, cv);
    d->t_s += took_s;
    d->infer_s += took_s;
    d->infer_gpu_s += f->gpu_s * took_s / f->step_s;
    d->infer_powered_s += f->powered_s * took_s / f->step_s;
    d->infer_dram += f->dram_bytes;
    d->infer_batches++;
    for (size_t i = 0; i < n; i++, d->head++) {
        d->req[d->head] = d->t_s - d->req[d->head];
    }
}

static void s_run_train(s_des_t *d, double slot_s, double stall_s, double switch_s, double cv)
{
    s_hand_over(d, 1, switch_s);
    double took_s = s_draw(&d->draws, slot_s, cv);
    d->t_s += took_s;
    d->train_s += took_s;
    d->stall_s += stall_s;
}

// Everything one simulation reads (borrowed).
typedef struct s_job {
    const sim_concurrent_in_t *in;
    const sim_epoch_out_t *train; // the training epoch alone
    const sim_ctx_t *infer_ctx;   // the inference workload at the operating point
    const sim_concurrent_params_t *cp;
    s_fwd_t full;    // one full inference minibatch
    double cv;       // spread of one minibatch's time (model.step_cv)
    int64_t batches; // training minibatches to simulate
} s_job_t;

static size_t s_waiting(const s_des_t *d)
{
    return d->n_req - d->head;
}

// After the epoch's last training minibatch: the waiting requests in full minibatches, then the
// rest in a partial one. No request arrives any more.
static void s_flush(s_des_t *d, const s_job_t *j)
{
    size_t batch = (size_t) j->in->infer_batch;
    while (s_waiting(d) >= batch) {
        s_run_infer(d, &j->full, batch, j->cp->switch_s, j->cv);
    }
    if (s_waiting(d) > 0) {
        s_fwd_t part = {0};
        s_forward(j->infer_ctx, j->cp, (double) s_waiting(d), &part);
        s_run_infer(d, &part, s_waiting(d), j->cp->switch_s, j->cv);
    }
}

// The epoch: before each training minibatch, the full inference minibatches waiting at that moment
// (those arriving meanwhile wait for the next turn, so training is never starved), then the
// training minibatch; after the last one, the rest. Returns 0, -ENOMEM or -E2BIG.
static int s_simulate(s_des_t *d, const s_job_t *j)
{
    const sim_epoch_out_t *t = j->train;
    size_t batch = (size_t) j->in->infer_batch;
    double first_stall_s = (double) t->first_stall_us / JF_US_PER_S;
    double stall_s = (double) t->stall_mean_us / JF_US_PER_S;
    double step_s = (double) t->step_mean_us / JF_US_PER_S;
    for (int64_t b = 0; b < j->batches; b++) {
        int rc = s_arrive(d);
        if (rc != 0) {
            return rc;
        }
        for (size_t turns = s_waiting(d) / batch; turns > 0; turns--) {
            s_run_infer(d, &j->full, batch, j->cp->switch_s, j->cv);
        }
        double wait_s = b == 0 ? first_stall_s : stall_s;
        s_run_train(d, wait_s + step_s, wait_s, j->cp->switch_s, j->cv);
    }
    int rc = s_arrive(d);
    if (rc == 0) {
        s_flush(d, j);
    }
    return rc;
}

static int s_cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a;
    double y = *(const double *) b;
    return (x > y) - (x < y);
}

static int64_t s_us(double seconds)
{
    return llround(seconds * (double) JF_US_PER_S);
}

// The nearest-rank q-quantile of n sorted values (n > 0).
static double s_quantile(const double *sorted, size_t n, double q)
{
    size_t rank = (size_t) ceil(q * (double) n);
    return sorted[rank > 0 ? rank - 1 : 0];
}

static void s_fill_latency(s_des_t *d, int64_t budget_us, sim_concurrent_out_t *out)
{
    out->requests = (int64_t) d->n_req;
    out->infer_batches = d->infer_batches;
    out->within_budget = 1.0; // no request, none late
    if (d->n_req == 0) {
        return;
    }
    qsort(d->req, d->n_req, sizeof *d->req, s_cmp_double);
    out->latency_p50_us = s_us(s_quantile(d->req, d->n_req, S_P50));
    out->latency_p99_us = s_us(s_quantile(d->req, d->n_req, S_P99));
    out->latency_max_us = s_us(d->req[d->n_req - 1]);
    size_t within = 0;
    while (within < d->n_req && s_us(d->req[within]) <= budget_us) {
        within++;
    }
    out->within_budget = (double) within / (double) d->n_req;
}

// The board's power: its input rail (a rail drawing more than the components: regulator losses)
// if it has one, else the sum of its rails.
static int64_t s_board_mw(const sim_board_params_t *b, const sim_epoch_out_t *eo)
{
    int64_t sum_mw = 0;
    for (size_t i = 0; i < eo->n_rails; i++) {
        if (b->rails[i].share[SIM_LOAD_CPU] > 1.0) {
            return eo->rails[i].power_mw;
        }
        sum_mw += eo->rails[i].power_mw;
    }
    return sum_mw;
}

// Power over the concurrent epoch: the training epoch's own sums plus the inference
// minibatches' GPU and DRAM work; the process keeps main_process_cores busy during them too.
static void s_fill_power(const sim_ctx_t *tctx, const s_des_t *d, double share,
                         sim_concurrent_out_t *out)
{
    sim_memory_t mem = {0};
    sim_memory_budget(tctx, &mem);
    sim_totals_t tot = {0};
    sim_epoch_totals(tctx, mem.cache_bytes, &tot);
    // A bounded profile ran share of the epoch's minibatches, and so of its work.
    tot.gpu_busy_s *= share;
    tot.gpu_powered_s *= share;
    tot.dram_bytes *= share;
    tot.loader_cpu_s *= share;
    tot.gpu_busy_s += d->infer_gpu_s;
    tot.gpu_powered_s += d->infer_powered_s;
    tot.dram_bytes += d->infer_dram;
    tot.loader_cpu_s += d->infer_s * tctx->g->main_process_cores;
    sim_epoch_out_t eo = {0};
    sim_power_rails(tctx, &tot, d->t_s, &eo);
    out->n_rails = eo.n_rails;
    memcpy(out->rails, eo.rails, sizeof out->rails);
    out->power_mw = s_board_mw(tctx->board, &eo);
    out->gpu_load = d->t_s > 0.0 ? fmin(1.0, tot.gpu_busy_s / d->t_s) : 0.0;
}

// Memory of both models in the one process: the training epoch's need plus the inference model's
// weights and the activations a forward-only pass keeps alive. True if they fit.
static bool s_fits(const sim_ctx_t *ictx, const sim_concurrent_params_t *cp,
                   const sim_concurrent_in_t *in, const sim_epoch_out_t *tr,
                   sim_concurrent_out_t *out)
{
    const sim_workload_params_t *w = ictx->work;
    double infer_bytes = (w->parameters * SIM_FP32_BYTES +
                          in->infer_batch * w->activation_bytes * cp->forward_live_share) *
                         ictx->g->allocator_overhead;
    out->need_bytes = tr->need_bytes + llround(infer_bytes);
    out->avail_bytes = tr->avail_bytes;
    out->batches =
        in->max_batches > 0 && in->max_batches < tr->batches ? in->max_batches : tr->batches;
    // Every minibatch is full but the epoch's last one.
    out->samples =
        out->batches == tr->batches ? tr->samples : out->batches * (int64_t) in->train.batch_size;
    if (tr->oom) {
        out->oom = true;
        memcpy(out->oom_reason, tr->oom_reason, sizeof out->oom_reason);
    } else if (out->need_bytes > out->avail_bytes) {
        out->oom = true;
        (void) snprintf(out->oom_reason, sizeof out->oom_reason,
                        "out of memory: training %.32s and inference %.32s at batch %d need %lld "
                        "MiB together; %lld MiB left after the OS and the runtime",
                        in->train.model, in->infer_model, in->infer_batch,
                        (long long) (out->need_bytes >> 20),
                        (long long) (out->avail_bytes > 0 ? out->avail_bytes >> 20 : 0));
    }
    return !out->oom;
}

static void s_fill_times(const s_des_t *d, sim_concurrent_out_t *out)
{
    out->e2e_us = s_us(d->t_s);
    out->train_us = s_us(d->train_s);
    out->fetch_stall_us = s_us(d->stall_s);
    out->infer_us = s_us(d->infer_s);
    out->switch_us = s_us(d->switch_s);
    out->train_samples_per_s = d->t_s > 0.0 ? (double) out->samples / d->t_s : 0.0;
}

static int s_run(const s_job_t *j, const sim_ctx_t *tctx, sim_concurrent_out_t *out, jf_err_t *err)
{
    int64_t cap = j->in->max_requests;
    s_des_t d = {.rate_per_s = j->in->rate_per_s,
                 .max_requests = (size_t) (cap > 0 && cap < SIM_CONCURRENT_REQUESTS_MAX
                                               ? cap
                                               : SIM_CONCURRENT_REQUESTS_MAX)};
    jf_rng_seed(&d.arrivals, j->in->seed, S_STREAM_ARRIVALS);
    jf_rng_seed(&d.draws, j->in->seed, S_STREAM_DRAWS);
    d.next_arrival_s = -log1p(-jf_rng_uniform(&d.arrivals)) / d.rate_per_s;
    int rc = s_simulate(&d, j);
    if (rc == -E2BIG) {
        rc = jf_err_set(err, -E2BIG,
                        "sim: more than %zu requests in one epoch at %g per s (the inference "
                        "does not keep up, or the epoch is long); lower the rate or the dataset "
                        "scale",
                        d.max_requests, j->in->rate_per_s);
    } else if (rc != 0) {
        rc = jf_err_set(err, rc, "sim: out of memory for %zu requests", d.n_req);
    } else {
        s_fill_times(&d, out);
        s_fill_latency(&d, j->in->budget_us, out);
        s_fill_power(tctx, &d, (double) j->batches / (double) j->train->batches, out);
    }
    free(d.req);
    return rc;
}

int sim_concurrent_epoch(const sim_model_t *model, const sim_concurrent_in_t *in,
                         sim_concurrent_out_t *ret_out, jf_err_t *err)
{
    const sim_params_t *p = sim_model_params(model);
    sim_epoch_out_t tr = {0};
    int rc = s_check(p, in, err);
    rc = rc != 0 ? rc : sim_model_epoch(model, &in->train, &tr, err);
    sim_ctx_t tctx = {0};
    rc = rc != 0 ? rc : sim_model_context(model, &in->train, &tctx, err);
    sim_epoch_in_t iin = {0};
    sim_ctx_t ictx = {0};
    rc = rc != 0 ? rc : s_infer_ctx(model, in, &iin, &ictx, err);
    if (rc != 0) {
        return rc;
    }
    sim_concurrent_out_t out = {0};
    s_job_t job = {
        .in = in, .train = &tr, .infer_ctx = &ictx, .cp = &p->concurrent, .cv = p->model.step_cv};
    s_forward(&ictx, &p->concurrent, in->infer_batch, &job.full);
    out.infer_step_us = s_us(job.full.step_s);
    if (s_fits(&ictx, &p->concurrent, in, &tr, &out)) {
        job.batches = out.batches;
        rc = s_run(&job, &tctx, &out, err);
    } else {
        // The idle rails, as sim_model_epoch gives them for a run that does not fit.
        out.n_rails = tr.n_rails;
        memcpy(out.rails, tr.rails, sizeof out.rails);
        out.power_mw = s_board_mw(tctx.board, &tr);
    }
    if (rc == 0) {
        *ret_out = out;
    }
    return rc;
}
