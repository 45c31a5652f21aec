/* The store's reads for the rooflines (docs/roofline.md): a board's roofline benchmarks per power
 * setting, summed over its done roofline runs, and its measured training runs summed per power
 * setting, model and batch size, for comparing predictions with measurements. Read-only. */
#ifndef COORD_STORE_ROOFLINE_H
#define COORD_STORE_ROOFLINE_H

#include "coord_store.h"

#include <stdbool.h>
#include <stdint.h>

#define COORD_ROOFLINE_NAME_MAX 127 // longest power label, bench, model, platform copied

// One benchmark in one power setting, over every measured epoch of the board's done roofline
// runs in it (their last attempts, warm-up left out). A plain value record.
typedef struct coord_roofline_bench {
    char power[COORD_ROOFLINE_NAME_MAX + 1];    // the runs' power label ("MODE_15W_6CORE", ...)
    char bench[COORD_ROOFLINE_NAME_MAX + 1];    // "matmul-cpu", "copy-cuda", ...
    char platform[COORD_ROOFLINE_NAME_MAX + 1]; // the board's platform: "sim" is simulated
    int epochs;                                 // epochs summed
    double flop;                                // FLOPs done
    double bytes;                               // bytes moved
    int64_t time_us;                            // time they took (e2e_us)
    bool has_energy;                            // every epoch has its energy
    double energy_mj;                           // their energy, board total
} coord_roofline_bench_t;

// A board's training runs of one model, batch size and power setting: done, plain bare training
// (not roofline, idle, concurrent or container: docs/analysis.md "Run kinds"), last attempts,
// warm-up left out. A plain value record.
typedef struct coord_roofline_measured {
    char power[COORD_ROOFLINE_NAME_MAX + 1]; // power label
    char model[COORD_ROOFLINE_NAME_MAX + 1]; // model name (jf_torch_model_parse's)
    int batch_size;                          // samples per minibatch
    int epochs;                              // epochs summed
    int64_t minibatches;      // minibatches in them (ceil(samples / batch) per epoch)
    int64_t compute_us;       // time in training steps
    bool has_energy;          // every epoch has its energy
    double compute_energy_mj; // energy of the steps: each epoch's energy x compute_us / e2e_us
} coord_roofline_measured_t;

typedef int (*coord_roofline_bench_fn)(const coord_roofline_bench_t *b, void *arg);
typedef int (*coord_roofline_measured_fn)(const coord_roofline_measured_t *m, void *arg);

// Calls fn for each (power, bench) of board's roofline runs (power NULL: every setting), in
// power then bench order; stops at fn's first non-zero return, which it returns. Returns 0, or
// -EIO (SQLite, in err).
int coord_store_roofline_benches(coord_store_t *self, const char *board, const char *power,
                                 coord_roofline_bench_fn fn, void *arg, jf_err_t *err);

// The same for the board's measured training runs per (power, model, batch size).
int coord_store_roofline_measured(coord_store_t *self, const char *board, const char *power,
                                  coord_roofline_measured_fn fn, void *arg, jf_err_t *err);

#endif
