/* Private to sim_model*.c: the model object and the pieces one epoch's evaluation passes between
 * its time model (sim_model_time.c) and its power model (sim_model_power.c). All times in
 * seconds and sizes in bytes as doubles: the model's arithmetic; sim_model.c converts the
 * results to jf_units.h units. */
#ifndef SIM_MODEL_INTERNAL_H
#define SIM_MODEL_INTERNAL_H

#include "sim_model.h"

#define SIM_FP32_BYTES 4.0 // bytes of one parameter or activation (FP32 training)

struct sim_model {
    sim_params_t params; // the whole parameter set
};

// The epoch's input resolved to parameter records and rates.
typedef struct sim_ctx {
    const sim_global_params_t *g;      // borrowed from the model
    const sim_board_params_t *board;   // borrowed from the model
    const sim_medium_params_t *medium; // borrowed from the model
    const sim_workload_params_t *work; // borrowed from the model
    const sim_epoch_in_t *in;          // borrowed from the caller
    double cpu_cycles_per_s;           // useful reference-core cycles per s of one core
    double gpu_flops_per_s;            // peak FP32 rate of the ungated cores at the op's clock
    double dram_bytes_per_s;           // DRAM bandwidth at the op's EMC clock
    double loader_cores;               // cores the loader workers can use
    double compute_noise;              // per-run multiplier of step times (1 without noise)
    double fetch_noise;                // per-run multiplier of fetch times (1 without noise)
    double samples;                    // samples in the epoch
} sim_ctx_t;

// Memory of the run against the board's RAM.
typedef struct sim_memory {
    double need_bytes;  // parameters, optimizer state and activations, with allocator slack
    double avail_bytes; // RAM less the OS and the training runtime
    double cache_bytes; // page cache that can keep the dataset's pages for the next epoch
} sim_memory_t;

// Everything the epoch took, in the model's units.
typedef struct sim_totals {
    double batches;        // minibatches
    double compute_s;      // training steps
    double stall_s;        // waiting for data
    double first_stall_s;  // of which before minibatch 0
    double stall_sd_s;     // spread of one later wait
    double gpu_busy_s;     // GPU busy
    double gpu_powered_s;  // GPU busy, weighted by the power drawn (memory-bound share less)
    double loader_cpu_s;   // CPU time of the loader workers (0 without workers)
    double dram_bytes;     // DRAM traffic of the training steps
    double hit_fraction;   // page-cache hits among sample reads
    double resident_after; // share of the dataset cached afterwards
} sim_totals_t;

// Checks in against the model and resolves it into *ret_ctx with the operating point's rates and
// the run's noise, as sim_model_epoch does (ret_ctx borrows in). Returns 0 or -EINVAL with err
// naming the field (sim_model_epoch's errors). For sim_concurrent.c.
int sim_model_context(const sim_model_t *self, const sim_epoch_in_t *in, sim_ctx_t *ret_ctx,
                      jf_err_t *err);

// The memory budget of the epoch's run.
void sim_memory_budget(const sim_ctx_t *ctx, sim_memory_t *ret_mem);

// Share of one epoch's sample reads that hit the page cache when resident of the dataset is
// cached at the start and the cache can hold capacity times the dataset (docs/simulator.md,
// "Page cache"); *ret_after is the cached share at the end.
double sim_cache_hits(double resident, double capacity, double *ret_after);

// The epoch's times, traffic and cache effect with a page cache of cache_bytes.
void sim_epoch_totals(const sim_ctx_t *ctx, double cache_bytes, sim_totals_t *ret_totals);

// Average power of every rail over an epoch of e2e_s seconds (0: idle) into out->rails.
void sim_power_rails(const sim_ctx_t *ctx, const sim_totals_t *totals, double e2e_s,
                     sim_epoch_out_t *out);

#endif
