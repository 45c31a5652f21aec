/* Helpers shared by the model-fitting unit tests (fit_support.h). */
#include "fit_support.h"

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
// clang-format on

size_t tfit_grid(coord_op_t *ops)
{
    static const int cores[] = {1, 2, 4, 8};
    static const double cpu[] = {0.4, 0.7, 1.0, 1.3, 1.7, 2.2};
    static const double gpu[] = {0.3, 0.5, 0.7, 0.9, 1.1, 1.3};
    static const double emc[] = {0.6, 1.0, 1.6, 2.1};
    size_t n = 0;
    for (; n < TFIT_GRID_N; n++) { // one index over the four axes, emc fastest
        ops[n] = (coord_op_t){.cores = cores[n / 144],
                              .cpu_hz = (int64_t) (cpu[n / 24 % 6] * TFIT_GHZ),
                              .gpu_hz = (int64_t) (gpu[n / 4 % 6] * TFIT_GHZ),
                              .emc_hz = (int64_t) (emc[n % 4] * TFIT_GHZ),
                              .workers = 2,
                              .batch_size = 32};
    }
    return n;
}

coord_model_t *tfit_fit(const coord_model_opts_t *o, const coord_point_t *pts, size_t n)
{
    jf_err_t err = {0};
    coord_model_t *m = coord_model_fit(o, pts, n, &err);
    if (!m) {
        fail_msg("fit: %s", err.msg);
    }
    return m;
}

double tfit_heldout(coord_model_t *m, const coord_point_t *pts, size_t n)
{
    double mape = 0.0;
    jf_err_t err = {0};
    assert_int_equal(coord_model_mape(m, pts, n, &mape, &err), 0);
    return mape;
}
