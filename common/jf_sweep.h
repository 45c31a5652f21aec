/* Sweep files (sweeps/NAME.yaml): load, validate and expand into runs, deterministically.
 * A sweep is workloads x device types x power modes x storage x workers x batch sizes x repeats
 * over the targeted boards, with exclude and include rules. Format: docs/sweeps.md. */
#ifndef JF_SWEEP_H
#define JF_SWEEP_H

#include "jf_err.h"
#include "jf_fleet_config.h"
#include "jf_run_spec.h"

#include <stddef.h>

#define JF_SWEEP_RUNS_MAX       200000
#define JF_SWEEP_FILE_MAX_BYTES (1024 * 1024)
#define JF_SWEEP_DESC_MAX       512

typedef struct jf_sweep_skips {
    size_t excluded;        // combinations removed by exclude rules, once per runtime
    size_t no_storage;      // board lacks the requested medium
    size_t no_power_mode;   // board lacks the requested power mode
} jf_sweep_skips_t;

typedef struct jf_sweep {
    char name[JF_IDENT_MAX + 1];            // sweep name (its id in the store and the CLI)
    char description[JF_SWEEP_DESC_MAX + 1];
    char source[PATH_MAX];                  // file name used in error messages
    size_t n_runs;
    jf_run_spec_t *runs;                    // owned; expansion order, ids unique
    jf_sweep_skips_t skips;                 // what the expansion left out, and why
} jf_sweep_t;

// Loads a sweep file and expands it against the fleet. Caller owns the result; release with
// jf_sweep_destroy. NULL on failure with err "<file>:<line>:<col>: <what>, expected <...>".
jf_sweep_t *jf_sweep_load(const char *path, const jf_fleet_config_t *fleet, jf_err_t *err);

// Same from memory; source_name is used in messages.
jf_sweep_t *jf_sweep_parse(const char *text, size_t len, const char *source_name,
                           const jf_fleet_config_t *fleet, jf_err_t *err);

// Frees the sweep and sets *self_p to NULL. Accepts NULL and *self_p == NULL.
void jf_sweep_destroy(jf_sweep_t **self_p);

#endif
