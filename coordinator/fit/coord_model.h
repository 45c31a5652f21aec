/* Time, power and energy models of one board (or board type) and workload: `linear` (least
 * squares on coord_features, on the value or its log, whichever cross-validates better) and
 * `mlp` (a small network on standardised inputs, optionally transferred from a reference mlp).
 * k-fold cross-validated MAPE; JSON for the store. Not for SQL (coord_store_models.c) nor for
 * reading sweeps (coord_points.h). docs/analysis.md "Models". */
#ifndef COORD_MODEL_H
#define COORD_MODEL_H

#include "coord_features.h"
#include "jf_err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COORD_MODEL_CV_FOLDS    5     // k of the k-fold cross-validation
#define COORD_MODEL_CV_SEED     12    // seed of the fold shuffle (fixed: repeatable figures)
#define COORD_MODEL_RIDGE       1e-9  // ridge term of the least squares (features are O(1))
#define COORD_MODEL_MLP_INPUTS  6     // cores, cpu GHz, gpu GHz, emc GHz, workers, batch
#define COORD_MODEL_MLP_HIDDEN  16    // units in each of the two hidden layers
#define COORD_MODEL_MLP_EPOCHS  800   // full-batch Adam steps from scratch
#define COORD_MODEL_MLP_LR      0.02  // Adam learning rate from scratch
#define COORD_MODEL_MLP_DECAY   1e-5  // Adam weight decay
#define COORD_MODEL_XFER_EPOCHS 400   // fine-tuning steps of a transfer
#define COORD_MODEL_XFER_LR     0.003 // fine-tuning learning rate of a transfer
#define COORD_MODEL_MLP_SEED    7     // weight initialisation and training seed
#define COORD_MODEL_MLP_MIN     8     // fewest points an mlp is fitted on (inputs + 2)
#define COORD_MODEL_STD_MIN     1e-12 // a spread below this standardises by 1 (a constant input)

typedef enum coord_model_kind {
    COORD_MODEL_LINEAR = 0,
    COORD_MODEL_MLP,
} coord_model_kind_t;

// Whether a linear model fits the value or its logarithm.
typedef enum coord_model_log {
    COORD_MODEL_LOG_AUTO = 0, // both; keep the one with the lower cross-validated MAPE
    COORD_MODEL_LOG_OFF,      // the value
    COORD_MODEL_LOG_ON,       // log(value), predictions exp(.)
} coord_model_log_t;

// One training point: an operating point and the measured value of the target there, in the
// internal unit (time µs, power mW, energy mJ).
typedef struct coord_point {
    coord_op_t op; // where
    double y;      // what was measured (µs, mW or mJ), > 0
} coord_point_t;

typedef struct coord_model coord_model_t;

// What to fit (plain value record; designated initialisers).
typedef struct coord_model_opts {
    coord_model_kind_t kind;
    coord_target_t target;
    coord_model_log_t log;              // linear only
    const coord_model_t *transfer_from; // mlp only: reference model (borrowed), or NULL
    bool skip_cv;                       // fit only; cv_mape_pct is then NaN
} coord_model_opts_t;

// "linear", "mlp" (static), or "unknown".
const char *coord_model_kind_name(coord_model_kind_t kind);
// Parses a kind name; false for any other text.
bool coord_model_kind_parse(const char *name, coord_model_kind_t *ret_kind);

// Fewest points a model of this kind and target is fitted on (features + 2 for linear).
size_t coord_model_min_points(coord_model_kind_t kind, coord_target_t target);

// Fits a model on n points and cross-validates it (coord_model_cv). Caller owns the result;
// release with coord_model_destroy. NULL with err: -EINVAL "too few points to fit: N modes, need
// at least M", a point without a valid operating point or a positive value, a transfer from a
// model that is not an mlp of the same target; -EIO from libtorch.
coord_model_t *coord_model_fit(const coord_model_opts_t *opts, const coord_point_t *pts, size_t n,
                               jf_err_t *err);

// The fold (0..k-1) of each of n points: a shuffle with COORD_MODEL_CV_SEED dealt round-robin
// into COORD_MODEL_CV_FOLDS folds, or one fold per point (leave-one-out) when n < 2k. Writes n
// values to ret_fold and returns the number of folds.
size_t coord_model_folds(size_t n, size_t *ret_fold);

// Cross-validated MAPE (percent): for each fold, fit on the others with opts (skip_cv) and
// predict the fold; the mean absolute percentage error over all n held-out predictions.
int coord_model_cv(const coord_model_opts_t *opts, const coord_point_t *pts, size_t n,
                   double *ret_mape_pct, jf_err_t *err);

// Predicts the target at op (internal unit). 0, -EINVAL for an invalid op, -EIO from libtorch.
int coord_model_predict(coord_model_t *self, const coord_op_t *op, double *ret_y, jf_err_t *err);

// MAPE (percent) of the model's predictions over n points. 0, or as coord_model_predict.
int coord_model_mape(coord_model_t *self, const coord_point_t *pts, size_t n, double *ret_mape_pct,
                     jf_err_t *err);

coord_model_kind_t coord_model_kind(const coord_model_t *self);
coord_target_t coord_model_target(const coord_model_t *self);
// The fit's cross-validated MAPE in percent (NaN when skipped or loaded without it).
double coord_model_cv_mape_pct(const coord_model_t *self);
// True when a linear model fits log(value).
bool coord_model_uses_log(const coord_model_t *self);
// Linear coefficients (coord_features_count of them; borrowed), NULL for an mlp.
const double *coord_model_coef(const coord_model_t *self);

// The model as JSON for the store: its input feature names, and its parameters. New
// references (caller decrefs); NULL when out of memory.
json_t *coord_model_features_json(const coord_model_t *self);
json_t *coord_model_params_json(const coord_model_t *self);

// A model from the store's kind, target and params JSON text. Caller owns (coord_model_destroy).
// NULL with err (-EINVAL) naming what is wrong in the params.
coord_model_t *coord_model_load(coord_model_kind_t kind, coord_target_t target,
                                const char *params_json, jf_err_t *err);

void coord_model_destroy(coord_model_t **self_p);

#endif
