/* nvpmodel conf parser: NVIDIA's power-mode file (PARAM definitions, POWER_MODEL blocks, the
 * PM_CONFIG default) into modes with their online cores and clock limits in Hz. It only reads;
 * applying a mode is nvpmodel's job, run by jetfleet-privhelper. Implements
 * ../shared/reference/jetson-platforms.md §4.2 (syntax) and §2.0 (units: cpufreq kHz, else Hz). */
#ifndef AGENT_NVPMODEL_H
#define AGENT_NVPMODEL_H

#include "jf_board.h"
#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_NVPMODEL_FILE_MAX     (256 * 1024) // largest conf accepted, in bytes
#define AGENT_NVPMODEL_LINE_MAX     511          // longest line, in bytes without the newline
#define AGENT_NVPMODEL_NAME_MAX     47           // longest PARAM or argument name
#define AGENT_NVPMODEL_PATH_MAX     191          // longest path in a PARAM definition
#define AGENT_NVPMODEL_ATTR_MAX     31           // longest HWMON attribute name
#define AGENT_NVPMODEL_VALUE_MAX    31           // longest value in a POWER_MODEL line
#define AGENT_NVPMODEL_PARAMS_MAX   64           // PARAM definitions per conf
#define AGENT_NVPMODEL_ARGS_MAX     16           // arguments per PARAM (CPU_ONLINE: one per core)
#define AGENT_NVPMODEL_MODES_MAX    JF_POWER_MODES_MAX
#define AGENT_NVPMODEL_SETTINGS_MAX 96                    // lines per POWER_MODEL
#define AGENT_NVPMODEL_CLOCKS_MAX   48                    // CLOCK params set by one POWER_MODEL
#define AGENT_NVPMODEL_CPUS_MAX     64                    // cores a CPU_ONLINE param may name
#define AGENT_NVPMODEL_ID_MAX       255                   // largest mode id (jf_power_mode_t)
#define AGENT_NVPMODEL_HZ_MAX       INT64_C(100000000000) // 100 GHz: above is a typo, not a clock

#define AGENT_NVPMODEL_STATUS_PATH "/var/lib/nvpmodel/status" // the persisted mode (§4.1)
#define AGENT_NVPMODEL_STATUS_MAX  256                        // bytes read from it

#define AGENT_NVPMODEL_UNSET    INT64_C(-2) // the mode has no line for this limit
#define AGENT_NVPMODEL_NO_LIMIT INT64_C(-1) // -1 in the conf (INT_MAX), or EMC MAX_FREQ 0 (no cap)

typedef struct agent_nvpmodel agent_nvpmodel_t;

typedef enum agent_nvpmodel_param_type {
    AGENT_NVPMODEL_FILE = 0, // the value is a string written to the argument's file
    AGENT_NVPMODEL_CLOCK,    // FREQ_TABLE, MIN_FREQ, MAX_FREQ (and _KNEXT variants); integer values
    AGENT_NVPMODEL_HWMON,    // "<arg> <hwmon dir> <attribute>"; integer values
} agent_nvpmodel_param_type_t;

// What a CLOCK param drives, from its paths (cpufreq) or its name (GPU, EMC).
typedef enum agent_nvpmodel_clock_kind {
    AGENT_NVPMODEL_CLOCK_CPU = 0, // a cpufreq policy; conf values in kHz
    AGENT_NVPMODEL_CLOCK_GPU,     // the GPU devfreq node; Hz
    AGENT_NVPMODEL_CLOCK_EMC,     // the EMC cap; Hz, MAX_FREQ 0 = no cap
    AGENT_NVPMODEL_CLOCK_ENGINE,  // DLA, PVA, NVDEC, ... caps; Hz
} agent_nvpmodel_clock_kind_t;

// One argument of a PARAM definition (a plain value record).
typedef struct agent_nvpmodel_arg {
    char name[AGENT_NVPMODEL_NAME_MAX + 1]; // "CORE_3", "MAX_FREQ", "MIN_FREQ_KNEXT", "WARN"
    char path[AGENT_NVPMODEL_PATH_MAX + 1]; // absolute path as written; HWMON: the directory
    char attr[AGENT_NVPMODEL_ATTR_MAX + 1]; // HWMON attribute ("curr1_max"); "" otherwise
} agent_nvpmodel_arg_t;

// One `< PARAM TYPE=... NAME=... >` definition (a plain value record).
typedef struct agent_nvpmodel_param {
    agent_nvpmodel_param_type_t type;       // FILE, CLOCK or HWMON
    char name[AGENT_NVPMODEL_NAME_MAX + 1]; // "CPU_ONLINE", "CPU_DENVER_0", "GPU", "EMC"
    agent_nvpmodel_clock_kind_t kind;       // CLOCK params: what it drives; ENGINE otherwise
    int first_core;                         // CPU clocks: the core named in its paths; else -1
    int64_t unit_hz;                        // CLOCK: Hz per conf unit (1000 for cpufreq); else 1
    int line;                               // line of the header, 1-based
    size_t n_args;                          // entries used in args
    agent_nvpmodel_arg_t args[AGENT_NVPMODEL_ARGS_MAX]; // in file order
} agent_nvpmodel_param_t;

// One `<PARAM> <ARG> <VALUE>` line of a POWER_MODEL, in file order (a plain value record).
typedef struct agent_nvpmodel_setting {
    uint16_t param;                           // index into the conf's params
    uint16_t arg;                             // index into that param's args
    char value[AGENT_NVPMODEL_VALUE_MAX + 1]; // as written: "1", "on", "1907200", "-1"
    int line;                                 // 1-based
} agent_nvpmodel_setting_t;

// The limits a mode sets on one CLOCK param, converted to Hz (a plain value record).
typedef struct agent_nvpmodel_clock {
    uint16_t param;                   // index into the conf's params
    agent_nvpmodel_clock_kind_t kind; // copied from the param
    int first_core;                   // CPU: first core of the cluster; -1 otherwise
    int64_t min_hz;                   // MIN_FREQ in Hz; AGENT_NVPMODEL_UNSET if the mode has none
    int64_t max_hz;                   // MAX_FREQ in Hz; AGENT_NVPMODEL_NO_LIMIT or _UNSET
} agent_nvpmodel_clock_t;

// One `< POWER_MODEL ID=n NAME=... >` block (a plain value record).
typedef struct agent_nvpmodel_mode {
    int id;                                // 0..AGENT_NVPMODEL_ID_MAX
    char name[JF_POWER_MODE_NAME_MAX + 1]; // "MODE_15W_6CORE"
    int line;                              // line of the header, 1-based
    uint64_t online_mask;                  // bit N: a CPU_ONLINE line sets cpuN to 1
    uint64_t listed_mask;                  // bit N: the mode has a CPU_ONLINE line for cpuN
    size_t n_clocks;                       // entries used in clocks
    agent_nvpmodel_clock_t clocks[AGENT_NVPMODEL_CLOCKS_MAX];       // one per CLOCK param set
    size_t n_settings;                                              // entries used in settings
    agent_nvpmodel_setting_t settings[AGENT_NVPMODEL_SETTINGS_MAX]; // every line, in order
} agent_nvpmodel_mode_t;

// Parses conf text of len bytes; name is used in messages ("<name>:<line>: ..."). Caller owns
// the result; release with agent_nvpmodel_destroy. NULL with err (-EINVAL for bad syntax or
// content, naming file and line; -ENOMEM).
agent_nvpmodel_t *agent_nvpmodel_parse(const char *text, size_t len, const char *name,
                                       jf_err_t *err);

// Reads and parses the conf at path (at most AGENT_NVPMODEL_FILE_MAX bytes). Caller owns the
// result; release with agent_nvpmodel_destroy. NULL with err (-ENOENT, -EIO, -EFBIG, -EINVAL).
agent_nvpmodel_t *agent_nvpmodel_load(const char *path, jf_err_t *err);

// Frees the conf; accepts NULL and *self_p == NULL; sets *self_p to NULL.
void agent_nvpmodel_destroy(agent_nvpmodel_t **self_p);

// The id named by PM_CONFIG DEFAULT (always one of the modes).
int agent_nvpmodel_default_id(const agent_nvpmodel_t *self);

// Number of POWER_MODEL blocks, and the i-th in file order (borrowed; NULL past the end).
size_t agent_nvpmodel_n_modes(const agent_nvpmodel_t *self);
const agent_nvpmodel_mode_t *agent_nvpmodel_mode_at(const agent_nvpmodel_t *self, size_t i);

// The mode with this id; NULL if the conf has none (borrowed).
const agent_nvpmodel_mode_t *agent_nvpmodel_mode(const agent_nvpmodel_t *self, int id);

// Number of PARAM definitions, and the i-th (borrowed; NULL past the end).
size_t agent_nvpmodel_n_params(const agent_nvpmodel_t *self);
const agent_nvpmodel_param_t *agent_nvpmodel_param_at(const agent_nvpmodel_t *self, size_t i);

// The limits mode sets on the clock of kind (for CPU: the cluster whose first core is
// first_core; ignored for the others); NULL if the mode sets none (borrowed).
const agent_nvpmodel_clock_t *agent_nvpmodel_mode_clock(const agent_nvpmodel_mode_t *mode,
                                                        agent_nvpmodel_clock_kind_t kind,
                                                        int first_core);

// Number of cores the mode sets online.
int agent_nvpmodel_mode_n_online(const agent_nvpmodel_mode_t *mode);

// Parses the text (len bytes; need not be NUL-terminated) of nvpmodel's status file,
// /var/lib/nvpmodel/status ("pmode:0002 fmode:quiet", jetson-platforms.md §4.1): the mode it
// names into *ret_id. Returns 0, or -EINVAL with err quoting the text (no "pmode:" prefix, no
// digits, an id above AGENT_NVPMODEL_ID_MAX, junk after the number).
int agent_nvpmodel_parse_status(const char *text, size_t len, int *ret_id, jf_err_t *err);

// "cpu", "gpu", "emc" or "engine".
const char *agent_nvpmodel_clock_kind_name(agent_nvpmodel_clock_kind_t kind);

#endif
