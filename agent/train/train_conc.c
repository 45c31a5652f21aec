/* The inference side of a real concurrent run: arrivals, queue, latencies (train_conc.h). */
#include "train_conc.h"

#include "jf_rng.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#define S_CAP0 1024
#define S_P50  0.50
#define S_P99  0.99

struct train_conc {
    train_conc_opts_t o;
    jf_rng_t arrivals;     // this epoch's stream
    int64_t next_us;       // the next arrival (monotonic)
    int64_t *req;          // owned: arrival times of waiting requests, then latencies of served
    size_t n_req, cap;     // requests of the epoch; capacity
    size_t head;           // req[0..head) are served (latencies), req[head..n_req) wait
    int64_t infer_batches; // this epoch's
    int64_t infer_us;
    int64_t switch_us;
};

train_conc_t *train_conc_new(const train_conc_opts_t *opts, jf_err_t *err)
{
    if (opts->batch < 1 || !(opts->rate_per_s > 0.0) || !isfinite(opts->rate_per_s) ||
        opts->budget_us <= 0 || opts->max_requests < 0) {
        (void) jf_err_set(err, -EINVAL,
                          "concurrent: batch %d, rate %g per s, budget %lld us or max requests "
                          "%lld out of range",
                          opts->batch, opts->rate_per_s, (long long) opts->budget_us,
                          (long long) opts->max_requests);
        return NULL;
    }
    train_conc_t *self = calloc(1, sizeof *self);
    if (!self) {
        (void) jf_err_set(err, -ENOMEM, "concurrent: out of memory");
        return NULL;
    }
    self->o = *opts;
    if (self->o.max_requests == 0 || self->o.max_requests > TRAIN_CONC_REQUESTS_MAX) {
        self->o.max_requests = TRAIN_CONC_REQUESTS_MAX;
    }
    return self;
}

void train_conc_destroy(train_conc_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    free((*self_p)->req);
    free(*self_p);
    *self_p = NULL;
}

// The gap to the next arrival, us: exponential with mean 1/rate.
static int64_t s_gap_us(train_conc_t *self)
{
    double gap_s = -log1p(-jf_rng_uniform(&self->arrivals)) / self->o.rate_per_s;
    double us = gap_s * 1e6;
    return us < 1.0 ? 1 : us > 1e15 ? INT64_C(1000000000000000) : (int64_t) llround(us);
}

void train_conc_epoch_begin(train_conc_t *self, int epoch, int64_t now_us)
{
    jf_rng_seed(&self->arrivals, self->o.seed, (uint64_t) epoch);
    self->n_req = 0;
    self->head = 0;
    self->infer_batches = 0;
    self->infer_us = 0;
    self->switch_us = 0;
    self->next_us = now_us + s_gap_us(self);
}

int train_conc_arrive(train_conc_t *self, int64_t now_us, jf_err_t *err)
{
    while (self->next_us <= now_us) {
        if ((int64_t) self->n_req >= self->o.max_requests) {
            return jf_err_set(err, -E2BIG,
                              "concurrent: more than %lld requests arrived in one epoch: the "
                              "inference does not keep up with %g requests per s",
                              (long long) self->o.max_requests, self->o.rate_per_s);
        }
        if (self->n_req == self->cap) {
            size_t cap = self->cap ? 2 * self->cap : S_CAP0;
            int64_t *req = realloc(self->req, cap * sizeof *req);
            if (!req) {
                return jf_err_set(err, -ENOMEM, "concurrent: out of memory");
            }
            self->req = req;
            self->cap = cap;
        }
        self->req[self->n_req++] = self->next_us;
        self->next_us += s_gap_us(self);
    }
    return 0;
}

size_t train_conc_waiting(const train_conc_t *self)
{
    return self->n_req - self->head;
}

void train_conc_served(train_conc_t *self, size_t n, int64_t end_us, int64_t infer_us)
{
    n = n < train_conc_waiting(self) ? n : train_conc_waiting(self);
    for (size_t i = 0; i < n; i++, self->head++) {
        int64_t latency = end_us - self->req[self->head];
        self->req[self->head] = latency > 0 ? latency : 0;
    }
    self->infer_batches++;
    self->infer_us += infer_us;
}

void train_conc_switched(train_conc_t *self, int64_t switch_us)
{
    self->switch_us += switch_us > 0 ? switch_us : 0;
}

static int s_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

// The nearest-rank q-quantile of n sorted values (n > 0).
static int64_t s_quantile(const int64_t *sorted, size_t n, double q)
{
    size_t rank = (size_t) ceil(q * (double) n);
    return sorted[rank > 0 ? rank - 1 : 0];
}

void train_conc_epoch_end(train_conc_t *self, jf_epoch_concurrent_t *ret)
{
    size_t n = self->head; // the served ones
    *ret = (jf_epoch_concurrent_t){.requests = (int64_t) n,
                                   .infer_batches = self->infer_batches,
                                   .infer_us = self->infer_us,
                                   .switch_us = self->switch_us,
                                   .within_budget = 1.0};
    if (n == 0) {
        return;
    }
    qsort(self->req, n, sizeof *self->req, s_cmp_i64);
    ret->latency_p50_us = s_quantile(self->req, n, S_P50);
    ret->latency_p99_us = s_quantile(self->req, n, S_P99);
    ret->latency_max_us = self->req[n - 1];
    size_t within = 0;
    while (within < n && self->req[within] <= self->o.budget_us) {
        within++;
    }
    ret->within_budget = (double) within / (double) n;
}
