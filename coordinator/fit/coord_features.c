/* Features of an operating point for the linear models: reciprocal clocks for time (work / rate),
 * clock and voltage-like terms for power; docs/analysis.md "Models" says why each is there. */
#include "coord_features.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#define S_HZ_PER_GHZ 1e9

static const char *const s_target_names[] = {"time", "power", "energy"};

// Time: a constant (fixed per-epoch cost), the reciprocal of each clock (cycles of work on that
// unit), 1/cores and 1/(cores*cpu) (CPU work spread over the cores: decode, collation), the
// GPU-memory cross term (kernels that wait on both), and 1/(workers+1) (loader parallelism).
static const char *const s_time_names[] = {
    "const",     "inv_cpu_ghz",   "inv_gpu_ghz", "inv_emc_ghz",
    "inv_cores", "inv_cores_cpu", "inv_gpu_emc", "inv_workers1",
};

// Power: a constant (idle rails), cores*cpu, gpu and emc (dynamic power ~ C V^2 f with V flat at
// low clocks), and the cubes cores*cpu^3, gpu^3, emc^3 (V rising with f, so C V^2 f ~ f^3).
static const char *const s_power_names[] = {
    "const", "cores_cpu_ghz", "gpu_ghz", "emc_ghz", "cores_cpu_ghz3", "gpu_ghz3", "emc_ghz3",
};

// Energy = power x time: the time features plus the squared clocks (dynamic energy per cycle
// ~ C V^2, V rising with f).
static const char *const s_energy_extra[] = {"cpu_ghz2", "gpu_ghz2", "emc_ghz2"};

#define S_N_TIME  ((int) (sizeof s_time_names / sizeof s_time_names[0]))
#define S_N_POWER ((int) (sizeof s_power_names / sizeof s_power_names[0]))
#define S_N_EXTRA ((int) (sizeof s_energy_extra / sizeof s_energy_extra[0]))

const char *coord_target_name(coord_target_t target)
{
    return (unsigned) target < 3 ? s_target_names[target] : "unknown";
}

bool coord_target_parse(const char *name, coord_target_t *ret_target)
{
    for (int i = 0; i < 3; i++) {
        if (strcmp(name, s_target_names[i]) == 0) {
            *ret_target = (coord_target_t) i;
            return true;
        }
    }
    return false;
}

int coord_features_count(coord_target_t target)
{
    return target == COORD_TARGET_POWER  ? S_N_POWER
           : target == COORD_TARGET_TIME ? S_N_TIME
                                         : S_N_TIME + S_N_EXTRA;
}

const char *coord_features_name(coord_target_t target, int i)
{
    if (i < 0 || i >= coord_features_count(target)) {
        return NULL;
    }
    if (target == COORD_TARGET_POWER) {
        return s_power_names[i];
    }
    return i < S_N_TIME ? s_time_names[i] : s_energy_extra[i - S_N_TIME];
}

static void s_time_row(double c, double g, double e, double cores, double workers, double *row)
{
    row[0] = 1.0;
    row[1] = 1.0 / c;
    row[2] = 1.0 / g;
    row[3] = 1.0 / e;
    row[4] = 1.0 / cores;
    row[5] = 1.0 / (cores * c);
    row[6] = 1.0 / (g * e);
    row[7] = 1.0 / (workers + 1.0);
}

int coord_features_row(coord_target_t target, const coord_op_t *op, double *ret_row)
{
    if (op->cores < 1 || op->cpu_hz <= 0 || op->gpu_hz <= 0 || op->emc_hz <= 0 || op->workers < 0) {
        return -EINVAL;
    }
    double c = (double) op->cpu_hz / S_HZ_PER_GHZ;
    double g = (double) op->gpu_hz / S_HZ_PER_GHZ;
    double e = (double) op->emc_hz / S_HZ_PER_GHZ;
    double cores = op->cores;
    if (target == COORD_TARGET_POWER) {
        double row[] = {1.0, cores * c, g, e, cores * c * c * c, g * g * g, e * e * e};
        memcpy(ret_row, row, sizeof row);
        return 0;
    }
    s_time_row(c, g, e, cores, op->workers, ret_row);
    if (target == COORD_TARGET_ENERGY) {
        ret_row[S_N_TIME] = c * c;
        ret_row[S_N_TIME + 1] = g * g;
        ret_row[S_N_TIME + 2] = e * e;
    }
    return 0;
}
