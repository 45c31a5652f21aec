/* The libtorch shim's regression half (STYLE.md §8): least squares and a small MLP regressor for
 * the coordinator's time/power/energy models (coordinator/fit, docs/analysis.md "Models"). Not
 * for the training workloads (jf_torch.h) nor for features, standardisation or cross-validation:
 * those are C. No C++ type, tensor or exception crosses this header. */
#ifndef JF_TORCH_FIT_H
#define JF_TORCH_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// jf_err.h has no C++ guard of its own, so it is included inside this one.
#include "jf_err.h"

#define JF_TORCH_FIT_LAYERS_MAX 8        // most layer sizes an MLP takes (input .. output)
#define JF_TORCH_FIT_WIDTH_MAX  1024     // widest layer accepted
#define JF_TORCH_FIT_ROWS_MAX   10000000 // most rows one call takes

typedef struct jf_torch_mlp jf_torch_mlp_t;

// The optimiser of jf_torch_mlp_train.
typedef enum jf_torch_mlp_optim {
    JF_TORCH_MLP_ADAM = 0, // full-batch Adam steps
    JF_TORCH_MLP_LBFGS,    // L-BFGS with a strong-Wolfe line search (full batch)
} jf_torch_mlp_optim_t;

// Training settings of jf_torch_mlp_train (full batch, mean squared error).
typedef struct jf_torch_mlp_train_opts {
    int epochs;                 // Adam: steps; L-BFGS: most iterations (it stops earlier when the
                                // gradient or the loss stops moving), >= 1
    double lr;                  // Adam: learning rate; L-BFGS: initial step (1 is usual), > 0
    double weight_decay;        // L2 weight decay (Adam's; for L-BFGS weight_decay / 2 x |w|^2 is
                                // added to the loss, the same gradient), >= 0
    jf_torch_mlp_optim_t optim; // Adam unless set
} jf_torch_mlp_train_opts_t;

// Least squares in double precision: the coefficients b (p values) minimising
// |x b - y|^2 + ridge |b|^2, x row-major n x p. Sets libtorch to 1 intra-op thread (process-wide)
// so the result does not depend on the machine's load. Returns 0 with ret_coef written, -EINVAL
// (n < p, p == 0, ridge < 0, a non-finite value) or -EIO from libtorch, with err.
int jf_torch_lstsq(const double *x, size_t n, size_t p, const double *y, double ridge,
                   double *ret_coef, jf_err_t *err);

// A fully connected network with tanh between layers: sizes[0] inputs, sizes[n_sizes - 1]
// outputs, 2 <= n_sizes <= JF_TORCH_FIT_LAYERS_MAX. Seeds libtorch's global generator with seed
// before initialising the weights and sets 1 intra-op thread (both process-wide: build one at a
// time). Caller owns the result; release with jf_torch_mlp_destroy. NULL with err on failure.
jf_torch_mlp_t *jf_torch_mlp_new(const int *sizes, int n_sizes, uint64_t seed, jf_err_t *err);
void jf_torch_mlp_destroy(jf_torch_mlp_t **self_p);

// A new network of src's shape with src's parameters: the start of a transfer (PowerTrain's
// method: reuse the reference model, then jf_torch_mlp_train on the new points). Caller owns
// the result (jf_torch_mlp_destroy); NULL with err.
jf_torch_mlp_t *jf_torch_mlp_clone(const jf_torch_mlp_t *src, jf_err_t *err);

// Inputs and outputs of the network, as given to jf_torch_mlp_new.
int jf_torch_mlp_inputs(const jf_torch_mlp_t *self);
int jf_torch_mlp_outputs(const jf_torch_mlp_t *self);

// Trains on n rows (x row-major n x inputs, y n x outputs; the caller standardises both). Seeds
// libtorch's generator with seed first so the run is repeatable. Returns 0, -EINVAL for bad
// options or non-finite data, -EIO from libtorch, with err.
int jf_torch_mlp_train(jf_torch_mlp_t *self, const float *x, const float *y, size_t n,
                       const jf_torch_mlp_train_opts_t *opts, uint64_t seed, jf_err_t *err);

// Writes the network's outputs for n rows of x into ret_y (n x outputs). 0, or -EIO with err.
int jf_torch_mlp_predict(jf_torch_mlp_t *self, const float *x, size_t n, float *ret_y,
                         jf_err_t *err);

// Number of parameters (weights and biases of every layer).
size_t jf_torch_mlp_param_count(const jf_torch_mlp_t *self);

// Copies the parameters, flattened in the network's parameter order, into ret_params (count
// values, which must equal jf_torch_mlp_param_count). 0, or -EINVAL with err.
int jf_torch_mlp_params(const jf_torch_mlp_t *self, float *ret_params, size_t count, jf_err_t *err);

// Loads parameters written by jf_torch_mlp_params for a network of the same sizes. 0, or -EINVAL
// (count differs, a value not finite) with err.
int jf_torch_mlp_set_params(jf_torch_mlp_t *self, const float *params, size_t count, jf_err_t *err);

// Physical parametric regression (coordinator/fit/coord_model_phys.c, docs/analysis.md "Physical
// models"): a time or power form over (cores, CPU, GPU, EMC GHz) with a few parameters, fitted by
// L-BFGS on the relative (log) residuals under a soft-L1 loss. The forms are written once, here.
typedef enum jf_torch_phys_form {
    JF_TORCH_PHYS_TIME = 0, // smooth max of CPU and (GPU, memory) time, plus a constant
    JF_TORCH_PHYS_POWER,    // static power plus each unit's dynamic power weighted by its share
                            // of the (latent) time
} jf_torch_phys_form_t;

#define JF_TORCH_PHYS_TIME_PARAMS  7  // parameters of the time form
#define JF_TORCH_PHYS_POWER_PARAMS 17 // of the power form (the time form's 7 first)
#define JF_TORCH_PHYS_INPUTS       4  // cores, CPU, GPU, EMC clock in GHz

// Parameters of form, or 0 for an unknown form.
static inline int jf_torch_phys_params(jf_torch_phys_form_t form)
{
    return form == JF_TORCH_PHYS_TIME    ? JF_TORCH_PHYS_TIME_PARAMS
           : form == JF_TORCH_PHYS_POWER ? JF_TORCH_PHYS_POWER_PARAMS
                                         : 0;
}

// Fits form on n rows (x row-major n x JF_TORCH_PHYS_INPUTS, y > 0 in any unit; the form predicts
// y / scale, where scale is the caller's, e.g. the geometric mean of y) from each of n_starts
// starting points (row-major n_starts x params) in turn, at most max_iter L-BFGS iterations each;
// keeps the parameters of the lowest final loss. Writes them to ret_params, the loss to
// *ret_loss and the winning start's index to *ret_start. Starts whose loss is not finite are
// skipped; ret_params may be starts (each start is copied before it descends). 0; -EINVAL (bad
// sizes, a non-finite or non-positive value); -EIO when no start gave a finite loss, or from
// libtorch; with err.
int jf_torch_phys_fit(jf_torch_phys_form_t form, const double *x, const double *y, size_t n,
                      double scale, const double *starts, size_t n_starts, int max_iter,
                      double *ret_params, double *ret_loss, size_t *ret_start, jf_err_t *err);

// Predicts n rows of x with params (the form's count); writes y (already times scale) to ret_y.
// 0, -EINVAL (a prediction not finite), or -EIO with err.
int jf_torch_phys_predict(jf_torch_phys_form_t form, const double *params, double scale,
                          const double *x, size_t n, double *ret_y, jf_err_t *err);

#ifdef __cplusplus
}
#endif

#endif
