/* Helpers shared by the model-fitting unit tests (fit_test.c, fit_phys_test.c): the 576-mode grid
 * of operating points the generated surfaces are evaluated on, a fit that fails the test on error,
 * and the MAPE of a model over points. */
#ifndef FIT_SUPPORT_H
#define FIT_SUPPORT_H

#include "coord_model.h"

#include <stddef.h>

#define TFIT_GHZ    1e9
#define TFIT_GRID_N 576 // 4 cores x 6 cpu x 6 gpu x 4 emc

// The grid (cores 1-8, CPU 0.4-2.2 GHz, GPU 0.3-1.3 GHz, EMC 0.6-2.1 GHz; 2 workers, batch 32)
// in ops (TFIT_GRID_N entries), emc fastest. Returns TFIT_GRID_N.
size_t tfit_grid(coord_op_t *ops);

// coord_model_fit, failing the test with its message on error. Caller owns the result.
coord_model_t *tfit_fit(const coord_model_opts_t *o, const coord_point_t *pts, size_t n);

// The model's MAPE over n points (percent), failing the test on error.
double tfit_heldout(coord_model_t *m, const coord_point_t *pts, size_t n);

#endif
