/* An idle baseline run of jetfleet-train (--idle-s S, docs/baseline.md): no model, no data: the
 * start line, one epoch of S seconds in which the trainer only sleeps, and the done line, so
 * that the agent measures the idle board with the code that measures a training run. The
 * simulated trainer has its own (train_sim.c), which also models the idle power. */
#ifndef TRAIN_IDLE_H
#define TRAIN_IDLE_H

#include "jf_err.h"
#include "train_run.h"

#include <stdio.h>

// Runs the idle baseline opts->run.idle_s (> 0) describes; lines go to out (borrowed). The
// epoch's e2e_us is the time slept, measured on CLOCK_MONOTONIC. Returns 0; -EINVAL with err
// when opts is not an idle run of one epoch; -ENOMEM or -EIO when a line cannot be written.
int train_idle_exec(const train_run_opts_t *opts, FILE *out, jf_err_t *err);

#endif
