/* Private to coord_model*.c: the model struct and the mlp and head halves' entry points. */
#ifndef COORD_MODEL_INTERNAL_H
#define COORD_MODEL_INTERNAL_H

#include "coord_model.h"
#include "jf_torch_fit.h"

struct coord_model {
    coord_model_kind_t kind;
    coord_target_t target;
    double cv_mape_pct;                     // NaN when not cross-validated
    bool log;                               // the model works on log(value)
    int n_coef;                             // linear: coord_features_count
    double coef[COORD_FEATURES_MAX];        // linear coefficients
    double in_mean[COORD_MODEL_MLP_INPUTS]; // mlp input standardisation
    double in_std[COORD_MODEL_MLP_INPUTS];
    double y_mean;       // mlp: mean of log(value) over the training points
    double y_std;        // mlp: its standard deviation
    jf_torch_mlp_t *mlp; // owned; mlp only
    coord_model_t *ref;  // owned; a head's copy of its reference model, else NULL (a head is
                         // kind linear: this is what makes it a head)
    double head[COORD_MODEL_HEAD_INPUTS + 1]; // head: const, then per head input
    double head_ridge;                        // head: the ridge it was fitted with
    coord_model_head_form_t head_form;        // head: log (head[]) or sum (coef[], n_coef)
    coord_model_transfer_t transfer;          // HEAD or FINETUNE for a transfer, else AUTO
    int trained_workers;                      // loader workers of all training points, or -1
    int trained_batch;                        // batch size of all training points, or -1
    double cv_under_pct; // COORD_MODEL_UNDER_Q quantile of held-out underestimates (%), or NaN
    double phys[JF_TORCH_PHYS_POWER_PARAMS]; // phys: the form's parameters
    int n_phys;                              // phys: how many (the form's)
    double phys_scale;                       // phys: the form predicts y / phys_scale
    int phys_start; // phys: which start won: 0 the reference's, 1 the default, 2 a perturbed one
    double one_se_lowest_cv_pct;          // kept by the one-standard-error rule: the lowest
                                          // candidate's cross-validated MAPE, else NaN
    coord_model_transfer_t one_se_lowest; // and its method (HEAD or FINETUNE)
};

// A new zeroed model of kind and target, nothing known yet (NaN figures, -1 configuration).
// NULL with err when out of memory.
coord_model_t *coord_model_alloc(coord_model_kind_t kind, coord_target_t target, jf_err_t *err);

// A model from its params JSON (borrowed). Caller owns; NULL with err.
coord_model_t *coord_model_load_json(coord_model_kind_t kind, coord_target_t target,
                                     const json_t *params, jf_err_t *err);

// Fits self (kind linear, fields zeroed) as a head on n points: a copy of ref, then least squares
// of log(y) - log(ref(op)) on the standardised head inputs with ridge * n. 0, or a negative errno.
// The sum form instead (self->head_form set): least squares of y = b y_ref + c . features,
// each row divided by y (relative errors, as MAPE weighs them), into coef[].
int coord_model_head_fit(coord_model_t *self, const coord_model_t *ref, const coord_point_t *pts,
                         size_t n, double ridge, jf_err_t *err);
int coord_model_head_predict(coord_model_t *self, const coord_op_t *op, double *ret_y,
                             jf_err_t *err);
json_t *coord_model_head_params_json(const coord_model_t *self);
int coord_model_head_load(coord_model_t *self, const json_t *params, jf_err_t *err);

// The mlp's raw inputs of op (cores, GHz clocks, workers, batch).
void coord_model_mlp_inputs(const coord_op_t *op, double *ret_in);

// Fits self (kind mlp, fields zeroed) on n points, from scratch or from ref's parameters and
// standardisation. 0, or a negative errno with err.
int coord_model_mlp_fit(coord_model_t *self, const coord_model_t *ref, const coord_point_t *pts,
                        size_t n, jf_err_t *err);

// Predicts one point with the mlp. 0 or -EIO with err.
int coord_model_mlp_predict(coord_model_t *self, const coord_op_t *op, double *ret_y,
                            jf_err_t *err);

json_t *coord_model_mlp_params_json(const coord_model_t *self);
int coord_model_mlp_load(coord_model_t *self, const json_t *params, jf_err_t *err);

// The phys kind (coord_model_phys.c): fewest points (parameters + 2; 0 for energy, which it does
// not model), the fit of self (kind phys, fields zeroed) on n points sharing one loader
// configuration, starting from ref's parameters too when ref is a phys model of the target (ref
// may be NULL), prediction, params JSON and its load. Each returns 0 or a negative errno with err.
size_t coord_model_phys_min_points(coord_target_t target);
int coord_model_phys_fit(coord_model_t *self, const coord_model_t *ref, const coord_point_t *pts,
                         size_t n, jf_err_t *err);
int coord_model_phys_predict(coord_model_t *self, const coord_op_t *op, double *ret_y,
                             jf_err_t *err);
json_t *coord_model_phys_params_json(const coord_model_t *self);
int coord_model_phys_load(coord_model_t *self, const json_t *params, jf_err_t *err);

#endif
