/* The simulator's parameters (plain value records) and their loader: per board type, storage
 * medium and workload, plus the model's global constants, read strictly from a YAML file
 * (agent/share/sim_params.yaml). Every key is required and unknown keys are errors that
 * name file:line:column. Units in the file are the ones its key names say (MHz, MiB, GB/s, us);
 * the records hold SI values (Hz, bytes, bytes/s, s) and mW. docs/simulator.md explains each
 * parameter and where its value comes from. */
#ifndef SIM_PARAMS_H
#define SIM_PARAMS_H

#include "jf_board.h"
#include "jf_err.h"
#include "jf_parse.h"

#include <stdbool.h>
#include <stddef.h>

#define SIM_PARAMS_VERSION        1                      // the file's `version`
#define SIM_PARAMS_FILE_MAX_BYTES (256 * 1024)           // largest parameter file read
#define SIM_RAILS_MAX             8                      // power rails per board
#define SIM_RAIL_NAME_MAX         JF_POWER_MODE_NAME_MAX // longest rail name, without the NUL
#define SIM_MEDIA_MAX             8                      // storage media (jf_run_spec_media)
#define SIM_WORKLOADS_MAX         8                      // workloads (model and dataset pairs)
#define SIM_ZONES_MAX             16                     // thermal zones per board
#define SIM_ZONE_TYPE_MAX         31                     // longest zone type, without the NUL

// The dynamic power components that rails draw on.
typedef enum sim_load {
    SIM_LOAD_CPU = 0, // CPU cores
    SIM_LOAD_GPU,     // the GPU
    SIM_LOAD_DRAM,    // DRAM traffic (memory controller and devices)
    SIM_LOAD_COUNT,
} sim_load_t;

// One power rail as the board's INA3221 names it.
typedef struct sim_rail_params {
    char name[SIM_RAIL_NAME_MAX + 1]; // "VDD_IN", "POM_5V_GPU", ...
    double idle_mw;                   // rail power with the board idle, mW
    double share[SIM_LOAD_COUNT];     // fraction of each component's dynamic power on this
                                      // rail (> 1 on an input rail: regulator losses)
} sim_rail_params_t;

// One nvpmodel mode: id and name as jf_board.h lists them, and its operating point.
typedef struct sim_mode_params {
    int id;                                // nvpmodel id
    char name[JF_POWER_MODE_NAME_MAX + 1]; // nvpmodel name
    int cores;                             // CPU cores online
    double cpu_hz;                         // CPU clock cap
    double gpu_hz;                         // GPU clock cap
    double emc_hz;                         // EMC (memory) clock cap
    int gpu_cores;                         // CUDA cores left by the mode's TPC power gating
} sim_mode_params_t;

// One thermal zone as the kernel names it (thermal_zoneN/type), and its first-order model
// (docs/simulator.md, "Thermal"): T_ss = ambient_c + r_c_per_w x P, approached with tau_s.
typedef struct sim_zone_params {
    char type[SIM_ZONE_TYPE_MAX + 1]; // "CPU-therm", "tj-thermal", ...
    bool offline;                     // a power-gated sensor: reads -256 C; r and tau unused
    double r_c_per_w;                 // degrees C per W of the board's heating power
    double tau_s;                     // time constant, modelled s (> 0 unless offline)
} sim_zone_params_t;

// Board-to-board spread of one family (docs/simulator.md, "Board factors and noise"): lognormal
// sigmas of the persistent factors, and an occasional outlier board.
typedef struct sim_spread_params {
    double compute_sigma;             // of a board's compute speed
    double storage_sigma;             // of its storage speed
    double idle_power_sigma;          // of its idle power
    double outlier_probability;       // chance that a board is an outlier, 0..1
    double outlier_compute_factor;    // an outlier's compute speed multiplier (< 1: slower)
    double outlier_idle_power_factor; // an outlier's idle power multiplier
} sim_spread_params_t;

// One board type: specifications, memory budget, power and modes.
typedef struct sim_board_params {
    bool present;                      // the file describes this type
    int gpu_cuda_cores;                // CUDA cores of the module
    double gpu_flops_per_core_cycle;   // FP32 FLOPs per core per cycle (an FMA is 2)
    double gpu_max_hz;                 // highest GPU clock
    int cpu_cores;                     // CPU cores of the module
    double cpu_core_speed;             // work per cycle of one core, Carmel = 1
    double cpu_max_hz;                 // highest CPU clock
    double emc_max_hz;                 // highest EMC clock
    double dram_bytes_per_s;           // DRAM bandwidth at emc_max_hz, bytes/s
    double ram_bytes;                  // RAM the kernel sees (MemTotal), bytes
    double os_bytes;                   // RAM the OS and desktop use at idle, bytes
    double runtime_bytes;              // RAM of the training runtime before the model, bytes
    double gpu_efficiency_scale;       // multiplies each workload's gpu_efficiency on this
                                       // family (1 on the Xavier NX, the calibration board)
    double gpu_memory_stall_power;     // share of the GPU's dynamic power drawn while its
                                       // kernels wait on memory, 0..1 (1: busy is busy)
    double dram_efficiency;            // achieved share of dram_bytes_per_s in the steps'
                                       // memory term (1 on the calibration board)
    sim_spread_params_t spread;        // board-to-board spread of the family
    double dynamic_mw[SIM_LOAD_COUNT]; // at the highest clocks: one busy CPU core, the busy GPU
                                       // with all cores, DRAM at full bandwidth; mW
    size_t n_rails;                    // entries used in rails
    sim_rail_params_t rails[SIM_RAILS_MAX];
    size_t n_modes; // entries used in modes, same order as jf_board.h
    sim_mode_params_t modes[JF_POWER_MODES_MAX];
    double ambient_c; // the thermal model's ambient, degrees C
    size_t n_zones;   // entries used in zones: the modelled ones, then the offline ones
    sim_zone_params_t zones[SIM_ZONES_MAX];
    double throttle_c;       // simulated throttling (thermal.throttle, optional): at or above
                             // this temperature in any zone the GPU clock is lowered; 0: off
    double throttle_gpu_pct; // the GPU clock while throttled, % of the mode's (1..100)
} sim_board_params_t;

// One storage medium.
typedef struct sim_medium_params {
    char name[JF_IDENT_MAX + 1]; // jf_run_spec_is_medium: "sd", "usb-hdd", ...
    double bytes_per_s;          // sequential read bandwidth, bytes/s
    double latency_s;            // cost of one random read (seek, lookup, command), s
    int queue_depth;             // queued reads whose latency the device overlaps, at most
    double queue_gain;           // latency speed-up with q queued reads: q^queue_gain
} sim_medium_params_t;

// One workload: a model trained on a dataset, per sample unless the name says otherwise.
typedef struct sim_workload_params {
    char model[JF_IDENT_MAX + 1];   // jf_run_spec_is_model
    char dataset[JF_IDENT_MAX + 1]; // jf_run_spec_is_dataset
    double samples;                 // training samples at dataset scale 1
    double sample_bytes;            // bytes of one sample on disk
    double input_bytes;             // bytes of one preprocessed sample (the batch tensor)
    double train_flops;             // FLOPs of forward + backward for one sample
    double parameters;              // trainable parameters (count)
    double optimizer_copies;        // parameter-sized tensors kept: weights, grads, state
    double activation_bytes;        // activations saved for the backward pass, bytes
    double kernels_per_step;        // framework operations launched per training step
    double cpu_cycles;              // CPU cycles to read, decode and augment one sample
    double fetch_cv;                // coefficient of variation of one sample's fetch time
    double gpu_efficiency;          // achieved fraction of the roofline bound
} sim_workload_params_t;

// Constants of the model itself, the same for every board.
typedef struct sim_global_params {
    double page_bytes;              // the page cache's unit of reading, bytes
    double cache_share;             // share of free RAM that keeps once-per-epoch pages
    double launch_cycles;           // CPU cycles to launch one framework operation
    double activation_traffic;      // DRAM passes over the saved activations per step
    double parameter_traffic;       // DRAM passes over the parameters per step
    double allocator_overhead;      // GPU memory held per byte the tensors need
    double worker_bytes;            // private RAM of one loader worker process, bytes
    double worker_spawn_cycles;     // CPU cycles to start one loader worker
    double main_process_cores;      // cores the training process keeps busy
    double dvfs_exponent;           // dynamic power ~ (f / f_max)^this
    double step_cv;                 // coefficient of variation of one step's compute time
    double handoff_cycles_per_byte; // CPU cycles per batch byte to hand a batch to the GPU
    double interference_per_core;   // step slow-down per loader core busy beside it
} sim_global_params_t;

// Spread of the per-run noise (lognormal sigmas); the board-to-board spread is per family
// (sim_spread_params_t).
typedef struct sim_variability_params {
    double run_compute_sigma; // per-epoch compute time noise
    double run_fetch_sigma;   // per-epoch fetch time noise
} sim_variability_params_t;

// Constants of the concurrent training and inference model (docs/simulator.md, "Concurrent
// training and inference"): the forward-only cost of a workload's model from its training
// figures, and the GPU's time-slice switch.
typedef struct sim_concurrent_params {
    double switch_s;                   // GPU time lost switching between the two processes, s
    double forward_flop_share;         // forward FLOPs / training FLOPs of one sample
    double forward_kernel_share;       // forward operations / operations of a training step
    double forward_activation_traffic; // DRAM passes over the activations in a forward pass
    double forward_parameter_traffic;  // DRAM passes over the parameters in a forward pass
    double forward_live_share;         // activations alive at once in a forward-only pass, as
                                       // a share of the training pass's saved activations
} sim_concurrent_params_t;

// The whole parameter set (plain value record; about 30 kB).
typedef struct sim_params {
    sim_global_params_t model;
    sim_variability_params_t variability;
    sim_board_params_t boards[JF_BOARD_TYPE_COUNT]; // indexed by jf_board_type_t; host and sim
                                                    // are never present
    size_t n_media;
    sim_medium_params_t media[SIM_MEDIA_MAX];
    size_t n_workloads;
    sim_workload_params_t workloads[SIM_WORKLOADS_MAX];
    sim_concurrent_params_t concurrent; // the concurrent training and inference model
} sim_params_t;

// Parses a parameter file's text (len bytes; source names it in messages, NULL = "<input>")
// into *ret_params, which is written only on success. Returns 0, or -EINVAL with err
// "<source>:<line>:<col>: <what>, expected <...>": a syntax error, an unknown or missing key, a
// value of the wrong kind or out of range, a Jetson type, medium or study workload missing, a
// mode list that differs from jf_board.h's; -EFBIG if len > SIM_PARAMS_FILE_MAX_BYTES; -ENOMEM.
int sim_params_parse(const char *text, size_t len, const char *source, sim_params_t *ret_params,
                     jf_err_t *err);

// Reads the file at path and parses it as sim_params_parse does (path names it in messages).
// Also -errno with "<path>: cannot read: <reason>".
int sim_params_load(const char *path, sim_params_t *ret_params, jf_err_t *err);

// The medium or workload record by name, or NULL. Borrowed from params.
const sim_medium_params_t *sim_params_medium(const sim_params_t *params, const char *name);
const sim_workload_params_t *sim_params_workload(const sim_params_t *params, const char *model,
                                                 const char *dataset);

#endif
