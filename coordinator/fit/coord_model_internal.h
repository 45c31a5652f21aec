/* Private to coord_model*.c: the model struct and the mlp half's entry points. */
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
};

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

#endif
