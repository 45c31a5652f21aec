/* Physically motivated regression features of an operating point for the linear models
 * (docs/analysis.md "Models": each feature and why). Not for fitting or storage (coord_model.h).
 * Frequencies enter in GHz so the columns stay of similar size (conditioning). */
#ifndef COORD_FEATURES_H
#define COORD_FEATURES_H

#include <stdbool.h>
#include <stdint.h>

#define COORD_FEATURES_MAX 12 // most features of any target

// What a model predicts: epoch wall time (µs), mean power (mW), energy per epoch (mJ).
typedef enum coord_target {
    COORD_TARGET_TIME = 0,
    COORD_TARGET_POWER,
    COORD_TARGET_ENERGY,
} coord_target_t;

// An operating point and loader configuration (plain value record).
typedef struct coord_op {
    int cores;      // CPU cores online, >= 1
    int64_t cpu_hz; // CPU clock
    int64_t gpu_hz; // GPU clock
    int64_t emc_hz; // memory clock
    int workers;    // loader workers, >= 0
    int batch_size; // samples per minibatch, >= 1
} coord_op_t;

// "time", "power", "energy" (static), or "unknown".
const char *coord_target_name(coord_target_t target);
// Parses a target name. false if it is none of them.
bool coord_target_parse(const char *name, coord_target_t *ret_target);

// Number of features of the target's linear model (the constant included).
int coord_features_count(coord_target_t target);

// The name of feature i of the target (static string, e.g. "inv_gpu_ghz"), or NULL past the end.
const char *coord_features_name(coord_target_t target, int i);

// Writes the target's coord_features_count values for op into ret_row. Returns 0, or -EINVAL
// when a clock or the core count is not positive (the reciprocals would not be finite).
int coord_features_row(coord_target_t target, const coord_op_t *op, double *ret_row);

#endif
