/* One jetfleet-train run: opens the dataset, checks it fits the model, builds the torch session,
 * the loader and the records, then runs the epochs, timing every minibatch (fetch stall and
 * compute) and every epoch end to end. The output contract is in train_records.h. Not an
 * option parser (train_options.h) and not where exit codes are decided (train_main.c). */
#ifndef TRAIN_RUN_H
#define TRAIN_RUN_H

#include "jf_err.h"
#include "jf_run_spec.h"
#include "train_records.h"
#include "train_shard.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TRAIN_RUN_FAULT_ENV "JF_TRAIN_FAULT" // test hook: crash|oom after the first epoch

typedef enum train_fault {
    TRAIN_FAULT_NONE = 0,
    TRAIN_FAULT_CRASH, // raise SIGSEGV (default action) after the first epoch record
    TRAIN_FAULT_OOM,   // fail with -ENOMEM "out of memory" after the first epoch record
} train_fault_t;

// A simulated run's settings (--simulate, train_sim.h): the Jetson board whose performance model
// runs in place of torch. Plain value record; strings borrowed from the caller (argv).
typedef struct train_run_sim_opts {
    const char *params_path; // borrowed; the model's parameter file (agent/share/sim_params.yaml)
    const char *board_type;  // borrowed; the Jetson type simulated, a jf_board.h type name
    const char *board;       // borrowed; the simulated board's name: selects its factors
    uint64_t fleet_seed;     // seed of the boards' factors, <= INT64_MAX
    const char *mode;        // borrowed; nvpmodel power mode, id or name
    const char *medium;      // borrowed; storage medium the dataset is read from
    double scale;            // dataset size relative to the real one (1: the full set)
    double speed;            // time compression: modelled seconds per wall-clock second
    double cache_resident;   // share of the dataset in the page cache at the start, 0..1
    int point_cores;         // --sim-point: cores online over the mode's; 0: the mode's point
    int64_t point_cpu_hz;    // --sim-point: the CPU clock (with point_cores)
    int64_t point_gpu_hz;    // --sim-point: the GPU clock; 0: the mode's
    int64_t point_emc_hz;    // --sim-point: the EMC clock; 0: the mode's
} train_run_sim_opts_t;

typedef struct train_run_opts {
    jf_run_spec_t run;        // the run's own options (--model, --batch, ...: the run spec's
                              // fields with a trainer flag, docs/schema.md); run.model is ""
                              // when not given (--loader-only); the other fields stay zero
    const char *data_dir;     // borrowed; directory holding an MNIST, CIFAR-10 or GLD-23k set
    const char *device;       // borrowed; cpu, cuda or auto
    const char *json_out;     // borrowed; path of the final document, or NULL for none
    int workers;              // loader workers (the fields from here to seed are run's, copied),
                              // 0..TRAIN_LOADER_WORKERS_MAX
    int prefetch;             // batches per worker ahead, 1..TRAIN_LOADER_PREFETCH_MAX
    size_t batch;             // samples per minibatch
    int epochs;               // epochs to run, >= 1; epoch 0 is the warm-up
    int threads;              // torch intra-op threads; 0 = 1
    uint64_t seed;            // model initialisation and shuffle seed, <= INT64_MAX
    bool drop_last;           // drop each epoch's last incomplete minibatch
    size_t max_batches;       // minibatches per epoch at most; 0 = all (--max-batches, or
                              // --minibatches of a federated round's local work)
    const char *init_weights; // borrowed; weight set to start from (--init-weights), or NULL
    const char *out_weights;  // borrowed; where the final weights go (--out-weights), or NULL
    train_shard_t shard;      // the part of the dataset trained (--shard K/N); count 0: all
    bool loader_only;         // data pipeline alone: no model (model may be NULL), compute 0
    train_fault_t fault;      // test hook
    bool simulate;            // run the performance model of a Jetson (sim) instead of torch
    train_run_sim_opts_t sim; // with simulate: the board simulated
} train_run_opts_t;

typedef struct train_run train_run_t;

// Prepares a run; record lines will go to out (borrowed, usually stdout). Returns the run, or
// NULL with err: -EINVAL (bad options, model and dataset do not match), -ENOENT/-EPROTO/-EIO
// (dataset), -ENOTSUP (model not built yet), -ENODEV (no CUDA), -ENOMEM.
// Caller owns the result; release with train_run_destroy.
train_run_t *train_run_new(const train_run_opts_t *opts, FILE *out, jf_err_t *err);

// Releases everything the run owns; sets *self_p to NULL. Accepts NULL and *self_p == NULL.
void train_run_destroy(train_run_t **self_p);

// Runs all epochs, writing the start, minibatch, epoch and done lines, and at the end the
// document to opts->json_out if set (with an "error" member on failure). Returns 0, or the first
// failure: -ENOMEM (out of memory, host or device), -EIO, or a dataset error.
int train_run_exec(train_run_t *self, jf_err_t *err);

// The JF_TRAIN_FAULT test hook, which a run (real or simulated) calls after its first epoch
// record: TRAIN_FAULT_CRASH flushes out (the record stream) and dies by SIGSEGV; TRAIN_FAULT_OOM
// returns -ENOMEM "out of memory (test hook ...)"; TRAIN_FAULT_NONE returns 0.
int train_run_fault(train_fault_t fault, FILE *out, jf_err_t *err);

// What runs the epochs of a run, real or simulated. All pointers borrowed.
typedef struct train_run_driver {
    const train_run_opts_t *opts;                       // epochs, fault hook, json_out
    FILE *out;                                          // record lines
    train_records_t *records;                           // the run's records
    int (*epoch)(void *ctx, int epoch, jf_err_t *err); // runs one epoch and writes its lines
    void *ctx;                                          // for epoch
    int (*finish)(void *ctx, jf_err_t *err); // after the last epoch, before the done line (the
                                             // weights file); NULL: nothing
} train_run_driver_t;

// Writes the start line, runs every epoch (the fault hook after epoch 0), calls finish if set,
// writes the done line, and the final document when opts->json_out is set. Returns 0 or the
// first failure.
int train_run_drive(const train_run_driver_t *driver, jf_err_t *err);

// The error line's reason for a failure code: "oom" for -ENOMEM, "invalid" for bad input
// (-EINVAL, -EPROTO, -ENOENT, -ENOTSUP, -ENODEV), "crashed" for anything else.
const char *train_run_failure_reason(int code);

#endif
