/* Store: bare against container runs of one combination (docs/containers.md): for each done
 * container run of a sweep, the done bare run with the same parameters, and what each measured.
 * Read-only. */
#ifndef COORD_STORE_RUNTIME_H
#define COORD_STORE_RUNTIME_H

#include "coord_store.h"
#include "jf_err.h"
#include "jf_run_spec.h"

#include <stdbool.h>

// What one run measured, for the comparison (a plain value record). has_ false: not measured.
typedef struct coord_runtime_side {
    char run[JF_RUN_ID_LEN + 1]; // the run
    bool has_e2e;
    double e2e_s; // mean epoch time, warm-up epoch 0 left out when there are more, s
    bool has_run;
    double run_s; // the attempt's wall time from start to finish (start-up included), s
    bool has_energy;
    double energy_mj; // mean epoch energy over the same epochs, mJ
    bool has_cpu;
    double cpu_pct; // mean cpu_load_pct of the run's samples, %
    bool has_gpu;
    double gpu_pct; // mean gpu_load_pct, %
    bool has_ram;
    double ram_bytes; // mean ram_used_bytes, bytes
} coord_runtime_side_t;

// One combination run bare and in a container (a plain value record).
typedef struct coord_runtime_pair {
    char board[JF_IDENT_MAX + 1];
    char workload[JF_IDENT_MAX + 1];
    char power[JF_RUN_POWER_LABEL_MAX + 1];
    int workers, batch_size, repeat;
    coord_runtime_side_t bare, container;
} coord_runtime_pair_t;

typedef int (*coord_runtime_pair_fn)(const coord_runtime_pair_t *pair, void *arg);

// Calls fn for each pair of sweep's done runs that differ only in runtime (every run spec
// parameter but the id and runtime equal), in board, workload, power order. A nonzero return
// from fn stops the walk and is returned. Returns 0 (fn never called: no pair), or -EIO with err.
int coord_store_runtime_pairs(coord_store_t *self, const char *sweep, coord_runtime_pair_fn fn,
                              void *arg, jf_err_t *err);

#endif
