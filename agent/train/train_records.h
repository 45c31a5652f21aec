/* The records of one training run (docs: jetfleet-train output contract): one JSON object per
 * line on a stream as things happen (start, minibatch, epoch, done, error), and at the end one
 * JSON document with the run's parameters and every epoch and minibatch record. Epoch sums are
 * computed here from the minibatch records. Not a timer and not a logger. */
#ifndef TRAIN_RECORDS_H
#define TRAIN_RECORDS_H

#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TRAIN_RECORDS_REAL_DIGITS 9 // significant digits of JSON reals

// Parameters of a run, for the start line and the final document. Strings are copied.
typedef struct train_records_params {
    const char *model;         // e.g. "lenet5"
    const char *dataset;       // e.g. "mnist"
    const char *device;        // e.g. "cpu", "cuda:0"
    const char *blas;          // BLAS in use, from jf_torch_info_t
    const char *torch_version; // e.g. "1.13.0"
    int threads;               // intra-op threads actually set
    int workers;               // loader workers
    int prefetch;              // batches per worker ahead
    size_t batch;              // samples per minibatch
    int epochs;                // epochs asked for
    uint64_t seed;             // training seed, <= INT64_MAX
    bool drop_last;            // last incomplete minibatch dropped
    bool loader_only;          // the data pipeline alone: model and device "none", compute 0
    size_t samples;            // dataset size
    size_t batches_per_epoch;  // minibatches per epoch
} train_records_params_t;

// One minibatch: what the trainer measured.
typedef struct train_minibatch_rec {
    size_t index;           // position in the epoch
    size_t samples;         // samples in the minibatch
    int64_t fetch_stall_us; // time compute waited for this minibatch
    int64_t compute_us;     // forward + backward + step
    double loss;            // mean loss of the minibatch
} train_minibatch_rec_t;

typedef struct train_records train_records_t;

// Creates the records; lines go to out (borrowed, usually stdout). Returns the records, or NULL
// with err (-ENOMEM, -EINVAL for a seed above INT64_MAX).
// Caller owns the result; release with train_records_destroy.
train_records_t *train_records_new(const train_records_params_t *params, FILE *out, jf_err_t *err);

// Frees everything; sets *self_p to NULL. Accepts NULL and *self_p == NULL.
void train_records_destroy(train_records_t **self_p);

// Writes the start line. Returns 0, or -EIO if the stream fails.
int train_records_start(train_records_t *self, jf_err_t *err);

// Begins epoch number epoch (0-based; epoch 0 is the warm-up).
void train_records_epoch_begin(train_records_t *self, int epoch);

// Adds a minibatch to the current epoch and writes its line. Returns 0, -ENOMEM or -EIO.
int train_records_minibatch(train_records_t *self, const train_minibatch_rec_t *rec, jf_err_t *err);

// Ends the current epoch, which took e2e_us end to end: writes its line with the sums of stall
// and compute time, samples, samples/s and the sample-weighted mean loss. Returns 0, -ENOMEM or
// -EIO.
int train_records_epoch_end(train_records_t *self, int64_t e2e_us, jf_err_t *err);

// Writes the done line with the number of epochs completed. Returns 0 or -EIO.
int train_records_done(train_records_t *self, jf_err_t *err);

// Writes the final document to path: {"params": {...}, "epochs": [{..., "minibatches": [...]}],
// "error": {...}} where "error" is present only if failure is not NULL. Returns 0 or -EIO
// naming the path.
int train_records_write_file(const train_records_t *self, const char *path, const char *reason,
                             const char *failure, jf_err_t *err);

// Writes an error line {"kind":"error","reason":reason,"detail":detail} to out. Needs no records
// object, so that failures before the run starts are reported too. Returns 0 or -EIO.
int train_records_emit_error(FILE *out, const char *reason, const char *detail);

#endif
