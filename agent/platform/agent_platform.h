/* The platform interface: what the agent knows about its board and how it samples it. Board
 * differences live behind it. Implementations: host (agent_platform_host.c: any Linux machine),
 * jetson (agent_platform_jetson.c: a detected Jetson family, issue #4) and sim
 * (agent_platform_sim.c, issue #5: it writes a fake board's sysfs tree, agent_sim_tree.h, and
 * reads it through the jetson platform's own detection and reader). Every sysfs, /proc and /etc path is built from the roots in agent_platform_opts_t.
 * A quantity the platform cannot read is left out of the sample, never reported as zero. */
#ifndef AGENT_PLATFORM_H
#define AGENT_PLATFORM_H

#include "agent_power.h"
#include "agent_sysfs.h"
#include "jf_board.h"
#include "jf_err.h"
#include "jf_parse.h"
#include "jf_run_spec.h"

#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define AGENT_PLATFORM_SYSFS_ROOT   "/sys"
#define AGENT_PLATFORM_PROC_ROOT    "/proc"
#define AGENT_PLATFORM_ETC_ROOT     "/etc"
#define AGENT_PLATFORM_VAR_ROOT     "/var"
#define AGENT_PLATFORM_DESCRIBE_MAX 3071              // longest agent_platform_describe text
#define AGENT_PLATFORM_SIM_SEED_DEFAULT  1   // --sim-seed
#define AGENT_PLATFORM_SIM_SPEED_DEFAULT 1.0 // --sim-speed
#define AGENT_PLATFORM_SIM_SCALE_DEFAULT 1.0 // --sim-scale: the datasets' real size
#define AGENT_PLATFORM_SIM_BOARD_DEFAULT "sim" // board name for factors without --name
#define AGENT_PLATFORM_SAMPLE_GAP_US (INT64_C(100) * 1000) // between sample_once's readings

typedef struct agent_platform agent_platform_t;

// --platform: which implementation to create.
typedef enum agent_platform_kind {
    AGENT_PLATFORM_AUTO = 0, // jetson when the device tree names a supported Jetson, else host
    AGENT_PLATFORM_JETSON,
    AGENT_PLATFORM_HOST,
    AGENT_PLATFORM_SIM,      // a simulated board of opts.sim_type
} agent_platform_kind_t;

typedef struct agent_platform_opts {
    agent_platform_kind_t kind;
    jf_board_type_t sim_type; // the family a sim platform simulates
    const char *sysfs_root;   // sysfs mount: "/sys" unless testing against a fixture tree
    const char *proc_root;    // procfs mount: "/proc"
    const char *etc_root;     // /etc, for nv_tegra_release and nvpmodel.conf: "/etc"
    const char *var_root;     // /var, for nvpmodel's lib/nvpmodel/status; NULL: "/var"
    const char *tegrastats;   // jetson: the tegrastats executable for the rails when sysfs has
                              // none readable (--tegrastats; AGENT_TEGRASTATS_PATH_DEFAULT);
                              // NULL or "none": no fallback. Copied
    // sim only (the roots above are then ignored: the platform writes its own tree):
    const char *sim_params;   // the model's parameter file (sim_params.yaml); copied
    const char *sim_train_bin; // the simulated trainer (jetfleet-train-sim); copied
    const char *sim_board;    // the board's name, for its factors; NULL: SIM_BOARD_DEFAULT
    uint64_t sim_seed;        // the fleet's seed of board factors
    double sim_speed;         // modelled seconds per wall-clock second for its runs
    double sim_scale;         // dataset size of its runs relative to the real one
} agent_platform_opts_t;

// What a sim platform simulates, for the simulated trainer's argv (plain value record).
typedef struct agent_platform_sim {
    jf_board_type_t type;        // the Jetson type simulated
    char params[PATH_MAX];       // the parameter file
    char train_bin[PATH_MAX];    // the simulated trainer its runs start (jetfleet-train-sim)
    char board[JF_IDENT_MAX + 1]; // the board name its factors come from
    uint64_t seed;               // the fleet's seed
    double speed;                // --sim-speed
    double scale;                // --sim-scale
} agent_platform_sim_t;

// Parses a --platform value: "auto", "jetson", "host" or "sim:<type>" with a Jetson board type
// ("sim:xavier-nx"). Returns 0, or -EINVAL with err listing the accepted values.
int agent_platform_kind_parse(const char *text, agent_platform_kind_t *ret_kind,
                              jf_board_type_t *ret_sim_type, jf_err_t *err);

// Creates the platform opts->kind names (auto: detects). Returns NULL with err: -ENOENT when
// --platform jetson finds no Jetson device tree, -ENOTSUP for a Jetson without a board type,
// a sim failure (agent_platform_sim_new), or an agent_sysfs_new failure (-ENOENT for a wrong
// --proc-root). Caller owns the result; release with agent_platform_destroy.
agent_platform_t *agent_platform_new(const agent_platform_opts_t *opts, jf_err_t *err);

// The host platform: any Linux machine; board type host, one power mode DEFAULT; telemetry from
// /proc, cpufreq and RAPL. Caller owns the result; release with agent_platform_destroy.
agent_platform_t *agent_platform_host_new(const agent_platform_opts_t *opts, jf_err_t *err);

// The jetson platform: detects the family and JetPack release (agent_detect.h) and samples the
// family's sysfs layout (agent_board_table.h). NULL with err (-ENOENT: not a Jetson; -ENOTSUP:
// a Jetson without a board type). Caller owns the result; release with agent_platform_destroy.
agent_platform_t *agent_platform_jetson_new(const agent_platform_opts_t *opts, jf_err_t *err);

// The sim platform: loads the model's parameters, writes the fake board's tree in a private
// temporary directory (removed by agent_platform_destroy) and creates the jetson platform's
// detection and reader over it; name "sim", board type opts->sim_type. NULL with err: the
// parameter file's error, -EINVAL for a type without parameters, a write error, or the jetson
// platform's. Caller owns the result; release with agent_platform_destroy.
agent_platform_t *agent_platform_sim_new(const agent_platform_opts_t *opts, jf_err_t *err);

// What the platform simulates; NULL unless it is a sim platform. Borrowed. For tests and the
// platform's own files: the session and the measurements ask the run interface below instead.
const agent_platform_sim_t *agent_platform_sim(const agent_platform_t *self);

// Sim: writes rail powers into the fake power monitor (agent_sim_tree_set_power: an object
// {rail: mW}, NULL for idle). Returns 0, -ENOTSUP on other platforms, or a write error.
// The tree's thermal zones follow in modelled time (monotonic time since the platform was made
// times --sim-speed): they are advanced to now under the old power first.
int agent_platform_sim_set_power(agent_platform_t *self, const json_t *power_mw, jf_err_t *err);

// Closes every file and frees self. Accepts NULL and *self_p == NULL; sets *self_p to NULL.
void agent_platform_destroy(agent_platform_t **self_p);

// "host", "jetson" or "sim" (the hello's platform field). Static string.
const char *agent_platform_name(const agent_platform_t *self);
jf_board_type_t agent_platform_board_type(const agent_platform_t *self);

// The board's power modes: on a Jetson (and a sim board) those of <etc root>/nvpmodel.conf, ids
// and names as the conf has them, or the family's jf_board.h defaults when it cannot be loaded
// (agent_platform_describe says which; runs are then refused, as the power handle fails too).
// Borrowed; *ret_count entries.
const jf_power_mode_t *agent_platform_modes(const agent_platform_t *self, size_t *ret_count);

// Puts the board in a power mode for a run. Returns 0, or a negative errno with err (a mode the
// board does not have is -EINVAL; -ENOTSUP where the platform cannot switch modes yet).
int agent_platform_set_mode(agent_platform_t *self, int mode_id, jf_err_t *err);

// Puts the board in mode mode_id with a custom point on top (custom NULL or n_cores 0: none)
// and DVFS off if asked, for a platform without a power handle. Returns 0; -ENOTSUP with err
// saying why where the platform cannot (a host has no modes to change); -EINVAL for a mode the
// board does not have or a point outside its custom-mode space.
int agent_platform_set_point(agent_platform_t *self, int mode_id, const jf_run_custom_t *custom,
                             bool dvfs_off, jf_err_t *err);

// Adds one telemetry sample's quantities (docs/telemetry.md; units in the key names, t_us and
// mono_us included) to sample. Load needs two readings, so the first sample has none. Returns
// 0, or a negative errno if nothing could be read (-ENODEV once the reader was taken). One
// thread at a time.
int agent_platform_sample(agent_platform_t *self, json_t *sample, jf_err_t *err);

// Hands the telemetry reader over to the caller, so that one thread (the agent's sampler) owns
// it alone; agent_platform_sample fails from then on. Caller owns the result; release with
// agent_sysfs_destroy. NULL when it was taken already.
agent_sysfs_t *agent_platform_take_reader(agent_platform_t *self);

// The tegrastats executable the sampler runs while a run is measured, because this Jetson's
// sysfs has no readable power rail (docs/telemetry.md "tegrastats fallback"); NULL when the
// rails are readable, the fallback is disabled (--tegrastats none) or the platform is not a
// Jetson. Borrowed; valid until self is destroyed.
const char *agent_platform_tegrastats(const agent_platform_t *self);

// The name of the board's input rail in the samples' rails[] ("VDD_IN", "POM_5V_IN"), or NULL
// when the board has none (AGX Xavier, AGX Orin, a host). Static string.
const char *agent_platform_input_rail(const agent_platform_t *self);

// Creates the handle that switches the board's power modes for runs: on a Jetson an agent_power
// over <etc root>/nvpmodel.conf, the sysfs root and <var root>/lib/nvpmodel/status, running the
// privileged helper helper_argv (NULL: none configured; the handle then only reads back). Returns 0 with *ret_power set, or 0
// with *ret_power NULL on a platform whose modes need no handle (host: DEFAULT only, nothing
// changes; agent_platform_set_mode covers the others). Caller owns the result; release with
// agent_power_destroy. A negative errno with err when the board's conf cannot be loaded.
int agent_platform_power_new(const agent_platform_t *self, const char *const *helper_argv,
                             agent_power_t **ret_power, jf_err_t *err);

// --sample-once: takes two readings gap_us apart, so that the load is measured over that gap,
// and writes the second as one line of compact JSON to out, board_type first. With the
// tegrastats fallback (agent_platform_tegrastats) it runs tegrastats at an interval of gap_us
// for one line and completes the sample from it (agent_tegrastats_child_fill); when tegrastats
// cannot give one the sample goes without rails and err says why (rc 0). Returns 0, or a
// negative errno with err (nothing readable; -EIO when writing to out failed).
int agent_platform_sample_once(agent_platform_t *self, int64_t gap_us, FILE *out, jf_err_t *err);

// Software facts for the hello (an object of strings: agent, libzmq, jansson, kernel; on a
// Jetson also l4t and jetpack when known). Caller owns the result.
json_t *agent_platform_software(const agent_platform_t *self);

// One line for the start-up log: what was detected and which quantities are absent and why.
// Borrowed; valid until self is destroyed.
const char *agent_platform_describe(const agent_platform_t *self);

#endif
