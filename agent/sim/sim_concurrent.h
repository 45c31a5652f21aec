/* Concurrent training and inference on one simulated board (docs/simulator.md, "Concurrent
 * training and inference"): one training epoch whose minibatches share the GPU, by time-slicing at
 * minibatch boundaries, with inference minibatches of a second model serving requests that arrive
 * as a seeded Poisson process. Gives training throughput, the requests' latency distribution and
 * the board's power. Pure computation on top of sim_model.h; not a scheduler for real boards. */
#ifndef SIM_CONCURRENT_H
#define SIM_CONCURRENT_H

#include "sim_model.h"

#define SIM_CONCURRENT_REQUESTS_MAX 5000000  // most requests one evaluation simulates
#define SIM_CONCURRENT_RATE_MAX     100000.0 // highest request rate accepted, per s

// One concurrent epoch to evaluate (plain value record; designated initialisers).
typedef struct sim_concurrent_in {
    sim_epoch_in_t train;    // the training side, as for sim_model_epoch (borrowed strings)
    const char *infer_model; // jf_run_spec model whose forward pass serves requests; borrowed
    int infer_batch;         // requests per inference minibatch, 1..JF_BATCH_MAX
    double rate_per_s;       // mean request arrival rate, (0, SIM_CONCURRENT_RATE_MAX]
    int64_t budget_us;       // latency budget of one request, > 0
    uint64_t seed;           // seed of the arrivals and of the minibatch time draws
    int64_t max_batches;     // > 0: only the epoch's first max_batches training minibatches (a
                             // bounded profile); 0: the whole epoch
    int64_t max_requests;    // > 0: give up (-E2BIG) past this many requests, as when the
                             // inference cannot keep up; 0: SIM_CONCURRENT_REQUESTS_MAX
} sim_concurrent_in_t;

// What the concurrent epoch took (plain value record, jf_units.h units). With oom set only the
// memory fields, the reason and the idle rails are meaningful.
typedef struct sim_concurrent_out {
    bool oom;                            // the two models do not fit together
    char oom_reason[SIM_OOM_REASON_MAX]; // why; "" unless oom
    int64_t need_bytes;                  // memory both need: training plus inference
    int64_t avail_bytes;                 // RAM left for them after the OS and the runtime
    int64_t e2e_us;                      // the epoch's wall time, inference included
    int64_t samples;                     // training samples simulated
    int64_t batches;                     // training minibatches simulated
    int64_t train_us;                    // time in training minibatches (stalls included)
    int64_t fetch_stall_us;              // of which waiting for training data
    int64_t infer_us;                    // time in inference minibatches
    int64_t switch_us;                   // time lost switching between the two
    double train_samples_per_s;          // samples / e2e
    int64_t requests;                    // requests that arrived (all are served)
    int64_t infer_batches;               // inference minibatches (the last may be partial)
    int64_t infer_step_us;               // one full inference minibatch, expected
    int64_t latency_p50_us;              // request latency, arrival to its batch's end: median
    int64_t latency_p99_us;              // 99th percentile
    int64_t latency_max_us;              // largest
    double within_budget;                // share of requests within budget_us, 0..1
    double gpu_load;                     // share of e2e the GPU computes, 0..1
    int64_t power_mw;                    // board power: the input rail if the family has one
                                         // (shares > 1), else the sum of the rails
    size_t n_rails;                      // entries used in rails
    sim_rail_power_t rails[SIM_RAILS_MAX];
} sim_concurrent_out_t;

// Evaluates one concurrent epoch into *ret_out (written only on success): the training epoch of
// sim_model_epoch with inference minibatches interleaved at minibatch boundaries whenever
// infer_batch requests wait (and once more at the end for the rest). Returns 0, also for oom;
// -EINVAL with err naming the field for bad input (sim_model_epoch's, an unknown inference model,
// a rate, batch or budget out of range); -E2BIG when more than SIM_CONCURRENT_REQUESTS_MAX
// requests arrive during the epoch (a slow operating point at a high rate: lower one of them or
// the dataset scale); -ENOMEM.
int sim_concurrent_epoch(const sim_model_t *model, const sim_concurrent_in_t *in,
                         sim_concurrent_out_t *ret_out, jf_err_t *err);

#endif
