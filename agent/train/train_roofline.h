/* A roofline run (docs/roofline.md "Microbenchmarks"): jetfleet-train --roofline runs the peak
 * compute and peak bandwidth microbenchmarks instead of training, one per epoch, and writes the
 * record lines of a run (train_records.h) whose epoch lines name the benchmark and the work it
 * did; the agent measures the energy of each epoch as for training. jetfleet-train-sim
 * --roofline writes the same lines from the board's performance model (labelled simulated). */
#ifndef TRAIN_ROOFLINE_H
#define TRAIN_ROOFLINE_H

#include "jf_err.h"
#include "jf_units.h"
#include "train_run.h"

#include <stdio.h>

#define TRAIN_ROOFLINE_WARMUP_US (1 * JF_US_PER_S) // epoch 0: the CPU matrix product, unused
#define TRAIN_ROOFLINE_BENCH_US  (3 * JF_US_PER_S) // each later epoch runs at least this long
#define TRAIN_ROOFLINE_THREADS_MAX                                                                 \
    64 // threads when the run leaves them to the trainer: the
       // online CPUs, at most this many

// Runs the microbenchmarks on this machine through libtorch: epoch 0 the warm-up (the CPU
// matrix product), then matmul-cpu, copy-cpu and, with a usable CUDA device, matmul-cuda and
// copy-cuda, at most opts->epochs epochs in all. Each epoch repeats its benchmark until it has
// run TRAIN_ROOFLINE_BENCH_US, one minibatch line per repetition (samples 1, its time as
// compute). Threads: opts->threads, or the online CPUs when 0. Lines go to out. Returns 0,
// -ENOMEM, -EIO.
int train_roofline_exec(const train_run_opts_t *opts, FILE *out, jf_err_t *err);

#define TRAIN_ROOFLINE_SIM_EPOCHS  3 // a sim board: warm-up, matmul-cuda, copy-cuda (train_sim.c)
#define TRAIN_ROOFLINE_SIM_STEP_US (100 * 1000) // a sim board: modelled time per minibatch line

#endif
