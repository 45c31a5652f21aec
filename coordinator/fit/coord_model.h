/* Time, power and energy models of one board (or board type) and workload: `linear` (least
 * squares on coord_features, on the value or its log, whichever cross-validates better), `mlp`
 * (a small network on standardised inputs, optionally fine-tuned from a reference mlp), and
 * the head, a transfer: a log-linear correction of a reference model's prediction, kind linear
 * (least squares on inputs that include the reference's log prediction; it embeds the reference),
 * and `phys` (a parametric form of time or power from how the boards work, coord_model_phys.c).
 * k-fold cross-validated MAPE and held-out underestimates; JSON for the store. Not for SQL
 * (coord_store_models.c) nor for reading sweeps (coord_points.h). docs/analysis.md "Models". */
#ifndef COORD_MODEL_H
#define COORD_MODEL_H

#include "coord_features.h"
#include "jf_err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COORD_MODEL_CV_FOLDS   5    // k of the k-fold cross-validation
#define COORD_MODEL_CV_SEED    12   // seed of the fold shuffle (fixed: repeatable figures)
#define COORD_MODEL_RIDGE      1e-9 // ridge term of the least squares (features are O(1))
#define COORD_MODEL_MLP_INPUTS 6    // cores, cpu GHz, gpu GHz, emc GHz, workers, batch
#define COORD_MODEL_MLP_HIDDEN 16   // units in each of the two hidden layers
// From scratch on at least as many points as the network has parameters: L-BFGS (full batch,
// no weight decay); on fewer: Adam (docs/analysis.md "MLP models").
#define COORD_MODEL_MLP_EPOCHS     200   // most L-BFGS iterations
#define COORD_MODEL_MLP_LR         1.0   // L-BFGS initial step from scratch
#define COORD_MODEL_MLP_ADAM_STEPS 800   // full-batch Adam steps from scratch on fewer points
#define COORD_MODEL_MLP_ADAM_LR    0.02  // their learning rate
#define COORD_MODEL_MLP_DECAY      1e-5  // Adam weight decay (from scratch and fine-tuning)
#define COORD_MODEL_XFER_EPOCHS    400   // fine-tuning steps of a transfer
#define COORD_MODEL_XFER_LR        0.003 // fine-tuning learning rate of a transfer
#define COORD_MODEL_MLP_SEED       7     // weight initialisation and training seed
#define COORD_MODEL_MLP_MIN        8     // fewest points an mlp is fitted on (inputs + 2)
#define COORD_MODEL_STD_MIN        1e-12 // a spread below this standardises by 1 (a constant input)
#define COORD_MODEL_HEAD_INPUTS    5     // log ref prediction, log cores, log cpu, gpu, emc GHz
#define COORD_MODEL_HEAD_MIN       8     // fewest points a head is fitted on (inputs + const + 2)
#define COORD_MODEL_UNDER_Q        0.95  // quantile of the held-out underestimates kept for margins

typedef enum coord_model_kind {
    COORD_MODEL_LINEAR = 0,
    COORD_MODEL_MLP,
    COORD_MODEL_PHYS, // a physically motivated parametric form, time or power (coord_model_phys.c)
} coord_model_kind_t;

// The form of a head: a product of power laws (log) or a sum of parts (sum).
typedef enum coord_model_head_form {
    COORD_MODEL_HEAD_LOG = 0, // log y = a + b log y_ref + c . log(cores, clocks)
    COORD_MODEL_HEAD_SUM,     // y = b y_ref + c . coord_features(target) (relative least squares)
} coord_model_head_form_t;

// How a transfer (opts.transfer_from) is made.
typedef enum coord_model_transfer {
    COORD_MODEL_TRANSFER_AUTO = 0, // cross-validate the head (several ridge terms and forms),
                                   // for an mlp reference fine-tuning, and phys where it fits;
                                   // keep the lowest MAPE, or phys within one standard error
                                   // of it. With skip_cv: the head without ridge
    COORD_MODEL_TRANSFER_HEAD,     // a head on the reference's prediction (kind linear)
    COORD_MODEL_TRANSFER_FINETUNE, // fine-tune a copy of the reference mlp (kind mlp)
    COORD_MODEL_TRANSFER_PHYS,     // a phys model on the new points, started from the reference's
                                   // parameters when the reference is phys (kind phys). AUTO
                                   // cross-validates it too (time or power, one loader
                                   // configuration, enough points in every fold)
} coord_model_transfer_t;

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
    const coord_model_t *transfer_from; // reference model (borrowed), or NULL; kind is then
                                        // decided by transfer, not by kind
    bool skip_cv;                       // fit only; cv_mape_pct is then NaN
    coord_model_transfer_t transfer;    // how to transfer (with transfer_from)
    double head_ridge;                  // head with skip_cv: ridge on its standardised inputs,
                                        // per point (0: none); with cross-validation the fit
                                        // chooses among its own (docs/analysis.md)
    coord_model_head_form_t head_form;  // head with skip_cv: its form; else cross-validated
} coord_model_opts_t;

// "linear", "mlp", "phys" (static), or "unknown".
const char *coord_model_kind_name(coord_model_kind_t kind);
// Parses a kind name; false for any other text.
bool coord_model_kind_parse(const char *name, coord_model_kind_t *ret_kind);

// Fewest points a model of this kind and target is fitted on (features + 2 for linear, parameters
// + 2 for phys, which does not model energy: 0 then; a head needs COORD_MODEL_HEAD_MIN).
size_t coord_model_min_points(coord_model_kind_t kind, coord_target_t target);

// Fits a model on n points and cross-validates it (coord_model_cv). Caller owns the result;
// release with coord_model_destroy. NULL with err: -EINVAL "too few points to fit: N modes, need
// at least M", a point without a valid operating point or a positive value, a transfer from a
// reference of another target, fine-tuning from a reference that is not an mlp, a head whose
// reference predicts a non-positive value, a phys model of energy or of points with several
// loader configurations; -EIO from libtorch.
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

// As coord_model_cv, and writes each point's held-out relative underestimate (y - y_pred) /
// y_pred to ret_under (n values; NULL: not wanted).
int coord_model_cv_under(const coord_model_opts_t *opts, const coord_point_t *pts, size_t n,
                         double *ret_mape_pct, double *ret_under, jf_err_t *err);

// Predicts the target at op (internal unit). 0, -EINVAL for an invalid op, -EIO from libtorch.
int coord_model_predict(coord_model_t *self, const coord_op_t *op, double *ret_y, jf_err_t *err);

// MAPE (percent) of the model's predictions over n points. 0, or as coord_model_predict.
int coord_model_mape(coord_model_t *self, const coord_point_t *pts, size_t n, double *ret_mape_pct,
                     jf_err_t *err);

coord_model_kind_t coord_model_kind(const coord_model_t *self);
coord_target_t coord_model_target(const coord_model_t *self);
// The fit's cross-validated MAPE in percent (NaN when skipped or loaded without it).
double coord_model_cv_mape_pct(const coord_model_t *self);
// The COORD_MODEL_UNDER_Q quantile (nearest rank) of the fit's held-out relative underestimates
// (y - y_pred) / y_pred in percent, at least 0: how far below the truth the model's predictions
// fell for 95 % of the modes it did not see. NaN when not cross-validated or loaded from a model
// stored without it.
double coord_model_cv_under_pct(const coord_model_t *self);
// For a phys model: which start its fit kept, "reference" (a phys reference's parameters),
// "default" or "perturbed" (static); NULL for other kinds.
const char *coord_model_phys_start_name(const coord_model_t *self);
// For a transfer: the method the fit used (HEAD, FINETUNE or PHYS); AUTO for a model fitted without
// a reference or loaded from the store.
coord_model_transfer_t coord_model_transfer(const coord_model_t *self);
// The one-standard-error rule by which a transfer's AUTO keeps a phys candidate over a better
// cross-validated one (docs/analysis.md "Which transfer auto keeps"): true when the preferred
// candidate's held-out errors ape_pref exceed the best's ape_best (n points each, percent) on
// average by no more than one standard error of their paired differences; true below 2 points.
bool coord_model_within_one_se(const double *ape_pref, const double *ape_best, size_t n);

// True when this fit's AUTO kept phys by that rule over a candidate of lower cross-validated
// MAPE: that MAPE in *ret_cv_pct and its method in *ret_method (either may be NULL). False for
// a model loaded from the store.
bool coord_model_kept_by_one_se(const coord_model_t *self, double *ret_cv_pct,
                                coord_model_transfer_t *ret_method);

// "auto", "head", "finetune", "phys" (static), or "unknown"; and the parse (false for other text).
const char *coord_model_transfer_name(coord_model_transfer_t t);
bool coord_model_transfer_parse(const char *name, coord_model_transfer_t *ret_t);
// Records the loader configuration the model was trained on (workers, batch size; -1 when its
// runs had several), for models loaded from the store; coord_model_fit records it itself. A head
// queries its reference at that configuration, as the reference knows no other.
void coord_model_set_trained_config(coord_model_t *self, int workers, int batch_size);
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
