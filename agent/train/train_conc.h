/* The inference side of a real concurrent run (docs/concurrent.md, "The run kind"): requests that
 * arrive as a seeded Poisson process during each training epoch, queued until the trainer serves
 * them at a minibatch boundary, and the epoch's figures (requests, inference minibatches and
 * time, hand-over time, latency percentiles, share within budget). Bookkeeping only: the caller
 * gives every time (CLOCK_MONOTONIC, us) and runs the forward passes. The policy is the simulated
 * board's (agent/sim/sim_concurrent.c): before each training minibatch the full inference
 * minibatches waiting at that moment, after the epoch's last one the rest. One thread. */
#ifndef TRAIN_CONC_H
#define TRAIN_CONC_H

#include "jf_err.h"
#include "jf_msg_run.h"

#include <stddef.h>
#include <stdint.h>

// Most requests one epoch may queue: past it the inference cannot keep up with the rate (each
// request costs 8 bytes).
#define TRAIN_CONC_REQUESTS_MAX 5000000

typedef struct train_conc train_conc_t;

typedef struct train_conc_opts {
    int batch;            // requests per inference minibatch, >= 1
    double rate_per_s;    // mean arrival rate, > 0
    int64_t budget_us;    // latency budget of one request, > 0
    uint64_t seed;        // the arrivals' seed; each epoch draws its own stream from it
    int64_t max_requests; // > 0: an epoch with more fails (-E2BIG); 0: TRAIN_CONC_REQUESTS_MAX
} train_conc_opts_t;

// Caller owns the result; release with train_conc_destroy. NULL with err on bad options
// (-EINVAL naming the field) or out of memory.
train_conc_t *train_conc_new(const train_conc_opts_t *opts, jf_err_t *err);

// Accepts NULL and *self_p == NULL.
void train_conc_destroy(train_conc_t **self_p);

// A new epoch begins at now_us: no request waits, the first arrives after an exponential gap.
void train_conc_epoch_begin(train_conc_t *self, int epoch, int64_t now_us);

// Queues every request that has arrived by now_us. Returns 0, -E2BIG with err (the epoch's
// requests passed max_requests: the inference does not keep up) or -ENOMEM.
int train_conc_arrive(train_conc_t *self, int64_t now_us, jf_err_t *err);

// Requests waiting to be served.
size_t train_conc_waiting(const train_conc_t *self);

// The n oldest waiting requests (n <= waiting) were served by one inference minibatch that ended
// at end_us and computed for infer_us.
void train_conc_served(train_conc_t *self, size_t n, int64_t end_us, int64_t infer_us);

// Time spent handing the processor between training and inference (the serving turn's time
// outside its forward passes).
void train_conc_switched(train_conc_t *self, int64_t switch_us);

// The epoch's figures (every request queued must have been served). Latency percentiles are
// nearest-rank; an epoch without requests has 0 latencies and within_budget 1.
void train_conc_epoch_end(train_conc_t *self, jf_epoch_concurrent_t *ret);

#endif
