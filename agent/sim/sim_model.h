/* Performance and power model of simulated Jetson boards, one training epoch at a time: compute
 * time (a roofline over the GPU's FLOPs and DRAM bytes, or the CPU's launch overhead), the data
 * pipeline (storage medium, page cache, CPU decoding, loader workers overlapping the GPU), out of
 * memory, and the average power per rail; persistent board-to-board factors and per-run noise
 * from seeds. Pure computation over a parameter file (sim_params.h): no clocks, no sysfs, no
 * threads. The agent's sim platform and the trainer build on it. docs/simulator.md gives the
 * equations, the parameters and the calibration against the published study. */
#ifndef SIM_MODEL_H
#define SIM_MODEL_H

#include "jf_board.h"
#include "jf_err.h"
#include "sim_params.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_OOM_REASON_MAX    256    // bytes of sim_epoch_out_t.oom_reason, with the NUL
#define SIM_DATASET_SCALE_MAX 1000.0 // largest dataset_scale accepted

typedef struct sim_model sim_model_t;

// An operating point, from a power mode (sim_model_mode_op) or custom (plain value record).
typedef struct sim_op {
    int n_cores;    // CPU cores online, 1..the board's
    int64_t cpu_hz; // CPU clock of every online core
    int64_t gpu_hz; // GPU clock
    int64_t emc_hz; // EMC (memory) clock
    int gpu_cores;  // CUDA cores not power-gated; 0 means all of the board's
} sim_op_t;

// Persistent multipliers of one simulated board (plain value record; 1.0 is nominal).
typedef struct sim_board_factors {
    double compute;    // speed of its GPU and CPU work; > 1 is faster
    double storage;    // speed of its storage reads; > 1 is faster
    double idle_power; // multiplier of every rail's idle power
    bool outlier;      // drawn as one of the family's outlier boards (factors above included)
} sim_board_factors_t;

// Factors of a nominal board, for designated initialisers.
#define SIM_BOARD_FACTORS_NEUTRAL                                                                  \
    {                                                                                              \
        .compute = 1.0, .storage = 1.0, .idle_power = 1.0, .outlier = false                        \
    }

// One epoch to evaluate (plain value record; fill it with designated initialisers).
typedef struct sim_epoch_in {
    jf_board_type_t board_type;  // the Jetson type simulated
    sim_op_t op;                 // operating point during the epoch
    const char *model;           // jf_run_spec model, "mobilenetv3"; borrowed
    const char *dataset;         // jf_run_spec dataset, "gld23k"; borrowed
    const char *medium;          // jf_run_spec medium the dataset is read from; borrowed
    int workers;                 // loader workers, 0..JF_WORKERS_MAX; 0 loads in the main process
    int prefetch;                // batches prefetched per worker, 1..JF_PREFETCH_MAX
    int batch_size;              // samples per minibatch, 1..JF_BATCH_MAX
    double dataset_scale;        // dataset size relative to the real one, (0, SCALE_MAX]
    int epoch;                   // 0-based epoch index; selects the noise stream
    double resident_fraction;    // share of the dataset in the page cache at the start, 0..1
                                 // (0 after dropping caches; the previous epoch's output after)
    sim_board_factors_t factors; // the board's factors (sim_model_board_factors) or neutral
    uint64_t run_seed;           // seed of the run's noise
    bool noise;                  // false: no per-run noise, the model's expected values
} sim_epoch_in_t;

// One rail's average power during an epoch (plain value record).
typedef struct sim_rail_power {
    char name[SIM_RAIL_NAME_MAX + 1]; // as the board's power monitor names it
    int64_t power_mw;                 // average over the epoch, mW
} sim_rail_power_t;

// What an epoch took (plain value record). With oom set, only the memory fields, the reason
// and the idle rail powers are meaningful; the times are 0.
typedef struct sim_epoch_out {
    bool oom;                            // the workload does not fit in the board's memory
    char oom_reason[SIM_OOM_REASON_MAX]; // why, for the run's error; "" unless oom
    int64_t need_bytes;                  // memory the training needs (model, activations)
    int64_t avail_bytes;                 // RAM left for it after the OS and the runtime
    int64_t cache_bytes;                 // page cache that can keep the dataset's pages
                                         // during the run (docs/simulator.md "Page cache")
    int64_t dataset_bytes;               // the dataset on disk at the run's scale
    int64_t samples;                     // samples in the epoch
    int64_t batches;                     // minibatches in the epoch (the last may be partial)
    int64_t fetch_stall_us;              // time the training loop waited for data
    int64_t compute_us;                  // time in training steps
    int64_t e2e_us;                      // the epoch's wall time: fetch_stall_us + compute_us
    int64_t first_stall_us;              // wait before minibatch 0 (worker start-up included)
    int64_t stall_mean_us;               // wait before each later minibatch: mean
    int64_t stall_sd_us;                 // and standard deviation
    int64_t step_mean_us;                // one training step: mean
    int64_t step_sd_us;                  // and standard deviation
    double cache_hit_fraction;           // share of sample reads the page cache served, 0..1
    double resident_fraction;            // share of the dataset in the page cache afterwards
    double gpu_load;                     // share of the epoch the GPU computes, 0..1 (0: oom)
    double cpu_busy_cores;               // busy cores averaged over the epoch: the training
                                         // process plus the workers' decoding, <= online cores
    size_t n_rails;                      // entries used in rails, in the parameter file's order
    sim_rail_power_t rails[SIM_RAILS_MAX];
} sim_epoch_out_t;

// Loads the parameter file at path (sim_params_load). Caller owns the result; release with
// sim_model_destroy. NULL on failure with err as sim_params_load reports it.
sim_model_t *sim_model_load(const char *path, jf_err_t *err);

// The same from text (sim_params_parse); source names it in messages. Caller owns the result.
sim_model_t *sim_model_parse(const char *text, size_t len, const char *source, jf_err_t *err);

// Frees the model and sets *self_p to NULL. Accepts NULL and *self_p == NULL.
void sim_model_destroy(sim_model_t **self_p);

// The model's parameters. Borrowed; valid until the model is destroyed.
const sim_params_t *sim_model_params(const sim_model_t *self);

// The operating point of nvpmodel mode mode_id of a board type (the ids of jf_board.h) into
// *ret_op. Returns 0, or -EINVAL with err naming the type or the mode.
int sim_model_mode_op(const sim_model_t *self, jf_board_type_t type, int mode_id, sim_op_t *ret_op,
                      jf_err_t *err);

// The same by mode name ("MODE_15W_6CORE"). Returns 0 or -EINVAL.
int sim_model_mode_op_named(const sim_model_t *self, jf_board_type_t type, const char *mode_name,
                            sim_op_t *ret_op, jf_err_t *err);

// The persistent factors of the simulated board board_name of type in a fleet seeded with seed:
// each a lognormal multiplier exp(sigma * z) with the family's spread sigmas
// (boards.<type>.spread) and z drawn from (seed, board_name); then, with the family's
// outlier_probability, the board is an outlier and its compute and idle-power factors are
// multiplied by the outlier factors. Same type, seed and name, same factors; a type without
// parameters gets neutral factors. Cannot fail.
void sim_model_board_factors(const sim_model_t *self, jf_board_type_t type, uint64_t seed,
                             const char *board_name, sim_board_factors_t *ret_factors);

// Evaluates one epoch into *ret_out (written only on success). Returns 0, also when the
// workload does not fit (ret_out->oom); -EINVAL with err naming the field for an input outside
// the ranges above, a board type without parameters, an unknown workload or medium.
int sim_model_epoch(const sim_model_t *self, const sim_epoch_in_t *in, sim_epoch_out_t *ret_out,
                    jf_err_t *err);

// The roofline of an operating point (docs/simulator.md "Roofline"; plain value record).
typedef struct sim_roofline {
    double gpu_flop_per_s;   // peak FP32 rate: ungated cores x FLOPs/core/cycle x f_gpu x F_c
    double dram_bytes_per_s; // bandwidth achieved: dram x efficiency x f_emc / emc_max x F_c
    sim_epoch_out_t compute; // load and rail powers while the GPU computes at its peak
    sim_epoch_out_t memory;  // the same while it streams DRAM at that bandwidth
} sim_roofline_t;

// The modelled peak compute and bandwidth of a board type at operating point op with a board's
// factors, and the rails' power in each of the two loads, into *ret_roof. Returns 0, or -EINVAL
// with err naming a board type without parameters or an operating point beyond the board.
int sim_model_roofline(const sim_model_t *self, jf_board_type_t type, const sim_op_t *op,
                       const sim_board_factors_t *factors, sim_roofline_t *ret_roof, jf_err_t *err);

#endif
