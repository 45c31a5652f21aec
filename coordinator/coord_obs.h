/* One measured epoch of a finished run, as the analysis sees it (plain value record): the board,
 * the configuration it ran in, its operating point and what the epoch took. The analysis
 * (variability, model fitting, Pareto fronts) reads only these records, never the simulator's
 * parameters: a simulated board's epochs are what its agent reported, like a real board's. */
#ifndef COORD_OBS_H
#define COORD_OBS_H

#include <stdbool.h>
#include <stdint.h>

#define COORD_OBS_NAME_MAX 127 // longest run id, board, type, workload, medium, mode name

typedef struct coord_obs {
    char sweep[COORD_OBS_NAME_MAX + 1];      // the sweep asked for
    char run[COORD_OBS_NAME_MAX + 1];        // run id
    char board[COORD_OBS_NAME_MAX + 1];      // board name
    char board_type[COORD_OBS_NAME_MAX + 1]; // "xavier-nx"; a sim board's simulated type
    char platform[COORD_OBS_NAME_MAX + 1];   // "jetson", "host", "sim", "imported"
    char workload[COORD_OBS_NAME_MAX + 1];   // the sweep's workload name
    char storage[COORD_OBS_NAME_MAX + 1];    // medium the dataset was read from
    char power_mode[COORD_OBS_NAME_MAX + 1]; // the run's power label ("MAXN", "custom ...")
    int workers;                             // loader workers
    int batch_size;                          // samples per minibatch
    int repeat;                              // repeat index within the sweep
    bool dvfs_off;                           // clocks pinned
    int64_t attempt;                         // the attempt the epoch belongs to (the run's last)
    int epoch;                               // 1.. (epoch 0 is warm-up and never returned)
    bool has_op;    // the operating point below is known (custom point or read back)
    int cores;      // CPU cores online
    int64_t cpu_hz; // CPU clock (highest cluster maximum)
    int64_t gpu_hz; // GPU clock (the mode's maximum)
    int64_t emc_hz; // memory clock cap
    int64_t e2e_us;           // the epoch's wall time
    int64_t fetch_stall_us;   // time the training loop waited for data
    int64_t compute_us;       // time in training steps
    bool has_energy;          // energy_mj and avg_power_mw are measured
    double energy_mj;         // energy of the epoch
    double avg_power_mw;      // mean power during the epoch
    int64_t samples;          // samples trained in the epoch
    char runtime[COORD_OBS_NAME_MAX + 1]; // "bare" or "container" (docs/containers.md)
} coord_obs_t;

#endif
