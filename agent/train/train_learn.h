/* Real training beside a simulated run (docs/simulator.md "Local rounds", issue 14): with
 * --init-weights or --out-weights, jetfleet-train --simulate also trains the model on the CPU
 * with libtorch on the dataset in --data, one real step per simulated minibatch on as many
 * samples, so that a simulated board's round returns really trained weights and real losses while
 * its times and power stay the model's. The learner feeds train_sim through train_sim_learner_t.
 * Not the simulation (train_sim.h) and not a real run's loop (train_run.h). */
#ifndef TRAIN_LEARN_H
#define TRAIN_LEARN_H

#include "jf_err.h"
#include "train_run.h"

#include <stddef.h>
#include <stdio.h>

typedef struct train_learn train_learn_t;

// Opens the dataset in opts->data_dir (it must fit opts->run.model and hold one whole minibatch),
// a loader over it (no workers, whole minibatches, shuffled from opts->seed) and a CPU session
// seeded with opts->seed, then loads opts->init_weights if set. Returns the learner, or NULL with
// err: -EINVAL (model and dataset do not match, bad weights), -ENOENT/-EPROTO/-EIO (dataset or
// weights file), -ENOMEM. Caller owns the result; release with train_learn_destroy.
train_learn_t *train_learn_new(const train_run_opts_t *opts, jf_err_t *err);

// Frees everything; sets *self_p to NULL. Accepts NULL and *self_p == NULL.
void train_learn_destroy(train_learn_t **self_p);

// Starts epoch epoch's pass over the dataset, shuffled as jetfleet-train shuffles that epoch
// (the loader's stream epoch of the seed). Returns 0 or the loader's error.
int train_learn_epoch_start(train_learn_t *self, int epoch, jf_err_t *err);

// One SGD step (after train_learn_epoch_start) on the first samples samples (1..batch) of the
// loader's next minibatch; when the epoch's pass has no minibatch left (the simulated epoch is
// longer than the real dataset), a further pass with a stream of its own (from opts->epochs on)
// continues it. *ret_loss gets the step's mean loss. Returns 0, -EINVAL (samples out of range) or
// the loader's or the shim's error.
int train_learn_step(train_learn_t *self, size_t samples, double *ret_loss, jf_err_t *err);

// Writes the session's weights to opts->out_weights if set (train_weights_save_file).
int train_learn_finish(train_learn_t *self, jf_err_t *err);

// jetfleet-train --simulate with a weights option: the simulated run opts describes, with a
// learner. Record lines go to out. Returns 0 or the first failure (train_sim_exec's, the
// learner's).
int train_learn_exec_sim(const train_run_opts_t *opts, FILE *out, jf_err_t *err);

#endif
