/* The simulated trainer (jetfleet-train --simulate): runs a workload on the performance model of a
 * Jetson board (agent/sim, docs/simulator.md) in place of torch, epoch by epoch, carrying the page
 * cache from one epoch to the next, and writes the record lines a real run writes
 * (train_records.h, with the simulation's additions), in real time compressed by the run's speed,
 * so that the agent's code paths run as they do for a real board. Not the model itself
 * (sim_model.h), not an option parser (train_options.h). */
#ifndef TRAIN_SIM_H
#define TRAIN_SIM_H

#include "jf_err.h"
#include "train_run.h"

#include <stdio.h>

#define TRAIN_SIM_SPEED_MIN     1.0      // slowest --sim-speed: the modelled time itself
#define TRAIN_SIM_SPEED_MAX     100000.0 // fastest --sim-speed
#define TRAIN_SIM_SPEED_DEFAULT 1.0
#define TRAIN_SIM_SCALE_MIN     0.0001 // smallest --sim-scale
#define TRAIN_SIM_SCALE_MAX     1000.0 // largest --sim-scale (SIM_DATASET_SCALE_MAX)
#define TRAIN_SIM_SCALE_DEFAULT 1.0    // the dataset's full size

typedef struct train_sim train_sim_t;

// Prepares the simulated run opts describes (opts->simulate, opts->sim; opts->run.model selects the
// workload and its dataset, whose samples the model knows): loads the parameter file, resolves
// the board type, board name, power mode and medium, and evaluates epoch 0. Record lines will go
// to out (borrowed, usually stdout). Returns the run, or NULL with err: -EINVAL naming the option
// for a bad board type or name, power mode, model or medium, or a value out of the model's range,
// and "--sim-params: <file>: ..." for a parameter file that cannot be read or parsed (whatever
// the errno, as it is bad input to the run); -ENOMEM. A workload that does not fit the board is
// not an error here: the run reports it (train_sim_exec). Caller owns the result; release with
// train_sim_destroy.
train_sim_t *train_sim_new(const train_run_opts_t *opts, FILE *out, jf_err_t *err);

// The seed of the model's noise (sim_epoch_in_t.run_seed) for a run with training seed seed on
// board (a name; NULL counts as "") at operating point op: the three mixed (jf_rng_seed_name
// over "board=<board> op=<cores>,<cpu_hz>,<gpu_hz>,<emc_hz>,<gpu_cores>"), so that two modes or
// two boards of one sweep do not share their noise. Deterministic.
struct sim_op; // sim_op_t (sim_model.h)
uint64_t train_sim_noise_seed(uint64_t seed, const char *board, const struct sim_op *op);

// Real training beside the model (docs/simulator.md "Local rounds"): with a learner, each
// simulated minibatch is also one real training step of the model on as many samples, and its
// record carries that step's loss; the times and power stay the model's.
typedef struct train_sim_learner {
    // Trains one minibatch of samples samples; *ret_loss gets its mean loss. Returns 0 or a
    // negative errno with err filled.
    int (*step)(void *ctx, size_t samples, double *ret_loss, jf_err_t *err);
    // At the start of each epoch (0-based), before its first step.
    int (*epoch_start)(void *ctx, int epoch, jf_err_t *err);
    // After the last epoch, before the done line (the weights file); NULL: nothing.
    int (*finish)(void *ctx, jf_err_t *err);
    void *ctx; // borrowed; passed to both
} train_sim_learner_t;

// Sets the run's learner (copied; its ctx borrowed until the run is destroyed). Call before
// train_sim_exec. A run whose options have --init-weights or --out-weights needs one (its start
// line says "sim_trains": "cpu"): train_sim_exec refuses it with -EINVAL otherwise.
void train_sim_set_learner(train_sim_t *self, const train_sim_learner_t *learner);

// Frees everything the run owns and sets *self_p to NULL. Accepts NULL and *self_p == NULL.
void train_sim_destroy(train_sim_t **self_p);

// Runs the simulation: the start line; per epoch, its minibatch lines (stall and compute drawn
// around the model's per-minibatch means and spreads, seeded by opts->seed, and scaled to add up
// to the model's epoch totals), each written once its modelled end divided by the speed has
// passed since the start (absolute CLOCK_MONOTONIC deadlines, so no drift builds up), then the
// epoch line with the modelled times; the done line; the document (opts->json_out). With
// opts->max_batches = k, an epoch stops after its first k minibatches and its figures are theirs.
// Returns 0; -ENOMEM "out of memory: ..." after the start line when the workload does not fit
// the board; the JF_TRAIN_FAULT hook's outcome after epoch 0; -EIO if a line cannot be written.
int train_sim_exec(train_sim_t *self, jf_err_t *err);

#endif
