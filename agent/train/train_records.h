/* The records of one training run (docs: jetfleet-train output contract): one JSON object per
 * line on a stream as things happen (start, minibatch, epoch, done, error), and at the end one
 * JSON document with the run's parameters and every epoch and minibatch record. Epoch sums are
 * computed here from the minibatch records. Not a timer and not a logger.
 *
 * A simulated run (jetfleet-train --simulate, train_sim.h) writes the same lines with these
 * additions, so that nothing it produces can pass for a measurement:
 * - every line but error: "platform": "sim" and "sim_speed" (modelled seconds per wall second);
 * - start: "sim_board_type", "sim_board", "sim_seed", "sim_power_mode_id", "sim_power_mode",
 *   "sim_medium", "sim_scale", "sim_cache_resident" (the share of the dataset in the simulated
 *   page cache at the start; scalars, so the agent keeps them in the start record's info), and
 *   "sim_power_mw": {rail: mW}, the board's rails during epoch 0 (idle if the run does not fit),
 *   and "sim_load": {"gpu_pct", "cpu_busy_cores"}, the model's GPU load (percent) and busy CPU
 *   cores during epoch 0, which the sim board writes into its load counters; no "device", "threads", "blas" or "torch_version", as no torch runs;
 * - epoch: "sim_power_mw": {rail: mW}, the rails' average over this epoch; "sim_next_power_mw"
 *   over the next one (absent after the last), so that a fake power monitor can switch at the
 *   boundary, and "sim_next_load" the next one's load as "sim_load"; "sim_model_energy_mj": {rail: mJ}, the model's own energy of each rail over the
 *   epoch (sim_power_mw x e2e_us), for checking what an agent measures on the fake rails;
 *   "sim_wall_us", the wall-clock microseconds the epoch took (e2e_us / sim_speed, or more when
 *   writing the lines takes longer than that at a high speed); "sim_cache": the modelled page cache
 * {"resident_before", "resident_after" (shares of the dataset at the epoch's start and end),
 * "hit_fraction" (share of reads it served), "cache_bytes" (room it has for the dataset during the
 * run), "dataset_bytes"};
 * - times (fetch_stall_us, compute_us, e2e_us) are the model's, uncompressed, and "loss" is null,
 *   unless the run also trains the model for real (--init-weights or --out-weights, train_sim.h's
 *   learner): then the start line says "sim_trains": "cpu" and every "loss" is the real one.
 * The epoch and minibatch lines are the wire records of docs/schema.md (jf_record_*_to_json), in
 * its units (us), plus "samples_per_s" on the epoch line; the agent keeps the record's members.
 * Rail names are the board's power monitor's (VDD_IN, POM_5V_GPU, ...), powers integer mW. */
#ifndef TRAIN_RECORDS_H
#define TRAIN_RECORDS_H

#include "jf_err.h"
#include "jf_msg_run.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TRAIN_RECORDS_REAL_DIGITS 9 // significant digits of JSON reals
#define TRAIN_RECORDS_RAILS_MAX   8 // power rails of a simulated board

// Average power of a simulated board's rails over a span (plain value record).
typedef struct train_records_power {
    size_t n_rails;                             // entries used
    const char *names[TRAIN_RECORDS_RAILS_MAX]; // borrowed; as the board's power monitor names them
    int64_t power_mw[TRAIN_RECORDS_RAILS_MAX];  // mW
    double gpu_load_pct;                        // the model's GPU load over the span, percent
    double cpu_busy_cores;                      // and its busy CPU cores (sum of core shares)
} train_records_power_t;

// What the start line of a simulated run says about the simulation. Strings are copied.
typedef struct train_records_sim {
    double speed;                // modelled seconds per wall-clock second
    const char *board_type;      // the Jetson type simulated, a jf_board.h name
    const char *board;           // the simulated board's name
    uint64_t fleet_seed;         // seed of the boards' factors, <= INT64_MAX
    int power_mode_id;           // nvpmodel id of the power mode simulated
    const char *power_mode;      // and its name
    const char *medium;          // storage medium simulated
    double scale;                // dataset size relative to the real one
    train_records_power_t power; // the rails during epoch 0
    double cache_resident;       // share of the dataset in the page cache at the start, 0..1
    bool trains;                 // the model also trains for real on the CPU (a weights
                                 // option): the losses are real; start line "sim_trains": "cpu"
} train_records_sim_t;

// A simulated epoch's page cache, as the model gives it (plain value record).
typedef struct train_records_cache {
    double resident_before; // share of the dataset resident at the epoch's start, 0..1
    double resident_after;  // and at its end
    double hit_fraction;    // share of sample reads served by the page cache
    int64_t cache_bytes;    // page cache that can keep the dataset's pages during the run
    int64_t dataset_bytes;  // the dataset's size at the run's scale
} train_records_cache_t;

// A simulated epoch's additions to its line.
typedef struct train_records_epoch_sim {
    int64_t wall_us;                         // wall-clock time the epoch took, us
    const train_records_power_t *power;      // borrowed; the rails during this epoch
    const train_records_power_t *next_power; // borrowed; during the next, NULL after the last
    const train_records_cache_t *cache;      // borrowed; the page cache; NULL: not written
    const jf_epoch_concurrent_t *concurrent; // borrowed; a concurrent run's inference in the
                                             // epoch (the line's "concurrent"); NULL: none
} train_records_epoch_sim_t;

// Parameters of a run, for the start line and the final document. Strings are copied.
typedef struct train_records_params {
    const char *model;              // e.g. "lenet5"
    const char *dataset;            // e.g. "mnist"
    const char *device;             // e.g. "cpu", "cuda:0"
    const char *blas;               // BLAS in use, from jf_torch_info_t
    const char *torch_version;      // e.g. "1.13.0"
    int threads;                    // intra-op threads actually set
    int workers;                    // loader workers
    int prefetch;                   // batches per worker ahead
    size_t batch;                   // samples per minibatch
    int epochs;                     // epochs asked for
    uint64_t seed;                  // training seed, <= INT64_MAX
    bool drop_last;                 // last incomplete minibatch dropped
    bool loader_only;               // the data pipeline alone: model and device "none", compute 0
    size_t samples;                 // dataset size
    size_t batches_per_epoch;       // minibatches per epoch
    const train_records_sim_t *sim; // borrowed for train_records_new; NULL for a real run.
                                    // Set: device, blas, torch_version and threads are unused
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
// with err (-ENOMEM, -EINVAL for a seed or simulation seed above INT64_MAX, a simulation with
// more than TRAIN_RECORDS_RAILS_MAX rails).
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

// train_records_epoch_end for a simulated run: the same line plus sim's fields (see the top of
// this file). Returns 0, -EINVAL (more than TRAIN_RECORDS_RAILS_MAX rails), -ENOMEM or -EIO.
int train_records_epoch_end_sim(train_records_t *self, int64_t e2e_us,
                                const train_records_epoch_sim_t *sim, jf_err_t *err);

// Marks the current epoch as a roofline run's microbenchmark (docs/roofline.md): its epoch line
// will carry bench (a name, at most JF_EPOCH_BENCH_MAX bytes), work_flop and work_bytes. Reset
// by train_records_epoch_begin.
void train_records_epoch_work(train_records_t *self, const char *bench, double flop, double bytes);

// Gives the current epoch a concurrent run's inference figures (copied): its line will carry
// "concurrent". Reset by train_records_epoch_begin.
void train_records_epoch_concurrent(train_records_t *self, const jf_epoch_concurrent_t *c);

// Writes the done line with the number of epochs completed. Returns 0 or -EIO.
int train_records_done(train_records_t *self, jf_err_t *err);

// Writes the final document to path: {"params": {...}, "epochs": [{..., "minibatches": [...]}],
// "error": {...}} where "error" is present only if failure is not NULL. Returns 0 or -EIO
// naming the path.
int train_records_write_file(const train_records_t *self, const char *path, const char *reason,
                             const char *failure, jf_err_t *err);

// Writes the final document to path after a run that ended with rc: 0, or its failure, whose
// message is err->msg and whose error line says reason. The run's failure keeps precedence over
// a failure to write: returns rc if it is negative (err unchanged), else 0 or -EIO naming the path.
int train_records_finish_file(const train_records_t *self, const char *path, int rc,
                              const char *reason, jf_err_t *err);

// Writes an error line {"kind":"error","reason":reason,"detail":detail} to out. Needs no records
// object, so that failures before the run starts are reported too. Returns 0 or -EIO.
int train_records_emit_error(FILE *out, const char *reason, const char *detail);

#endif
