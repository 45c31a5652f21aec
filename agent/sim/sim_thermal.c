/* The first-order thermal model of a simulated board's zones (sim_thermal.h,
 * docs/simulator.md "Thermal"). */
#include "sim_thermal.h"

#include "jf_units.h"

#include <assert.h>
#include <math.h>

static double s_clean_mw(double power_mw)
{
    return isfinite(power_mw) && power_mw > 0.0 ? power_mw : 0.0;
}

double sim_thermal_steady_c(const sim_board_params_t *board, size_t i, double power_mw)
{
    assert(board && i < board->n_zones);
    const sim_zone_params_t *z = &board->zones[i];
    return z->offline ? board->ambient_c
                      : board->ambient_c + z->r_c_per_w * s_clean_mw(power_mw) / 1000.0;
}

void sim_thermal_init(sim_thermal_t *self, const sim_board_params_t *board, double power_mw,
                      int64_t model_us)
{
    assert(self && board && board->n_zones <= SIM_ZONES_MAX);
    *self = (sim_thermal_t){.board = board, .power_mw = s_clean_mw(power_mw), .model_us = model_us};
    for (size_t i = 0; i < board->n_zones; i++) {
        self->temp_c[i] = sim_thermal_steady_c(board, i, self->power_mw);
    }
}

void sim_thermal_advance(sim_thermal_t *self, int64_t model_us)
{
    if (model_us <= self->model_us) {
        return;
    }
    double dt_s = (double) (model_us - self->model_us) / (double) JF_US_PER_S;
    for (size_t i = 0; i < self->board->n_zones; i++) {
        const sim_zone_params_t *z = &self->board->zones[i];
        if (z->offline) {
            continue;
        }
        double ss = sim_thermal_steady_c(self->board, i, self->power_mw);
        self->temp_c[i] = ss + (self->temp_c[i] - ss) * exp(-dt_s / z->tau_s);
    }
    self->model_us = model_us;
}

void sim_thermal_set_power(sim_thermal_t *self, double power_mw, int64_t model_us)
{
    sim_thermal_advance(self, model_us);
    self->power_mw = s_clean_mw(power_mw);
}

int64_t sim_thermal_zone_mc(const sim_thermal_t *self, size_t i)
{
    assert(i < self->board->n_zones);
    if (self->board->zones[i].offline) {
        return SIM_THERMAL_OFFLINE_MC;
    }
    return llround(self->temp_c[i] * 1000.0);
}
