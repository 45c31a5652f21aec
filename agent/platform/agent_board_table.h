/* Board differences as data (STYLE.md §7): how each Jetson family is recognised, its CPU layout,
 * and where its telemetry lives in sysfs for each JetPack generation; the host's layout apart.
 * Constant tables only, no file access. Implements ../shared/reference/jetson-platforms.md §1.1
 * (identity), §2.1-2.6 (paths, rails, thermal zones). Power modes live in jf_board.h. */
#ifndef AGENT_BOARD_TABLE_H
#define AGENT_BOARD_TABLE_H

#include "jf_board.h"

#include <stdbool.h>
#include <stddef.h>

#define AGENT_BOARD_MATCH_MAX    4  // compatible tokens / model substrings per family
#define AGENT_BOARD_CLUSTERS_MAX 4  // CPU clusters per family
#define AGENT_BOARD_PATHS_MAX    3  // candidate files for one quantity (the first that opens wins)
#define AGENT_BOARD_INA_MAX      2  // INA3221 monitors per board
#define AGENT_BOARD_INA_CHANNELS 3  // channels per INA3221 (hwmon channel 7, the sum, is not read)
#define AGENT_BOARD_ZONES_MAX    16 // thermal zone renames per layout

// How one family is recognised from the device tree, and its CPU layout.
typedef struct agent_board_ident {
    jf_board_type_t type;       // JF_BOARD_TYPE_COUNT: a Jetson we recognise but do not support
    const char *label;          // "Jetson Xavier NX", for messages
    const char *soc;            // last /proc/device-tree/compatible token, "nvidia,tegra194"
    const char *compat[AGENT_BOARD_MATCH_MAX]; // module P-numbers found in compatible ("p3668")
    const char *models[AGENT_BOARD_MATCH_MAX]; // substrings of /proc/device-tree/model
    size_t n_cpus;              // cores of the largest SKU; <sysfs>/devices/system/cpu/present wins
    size_t n_clusters;          // entries used in cluster_first_cpu
    size_t cluster_first_cpu[AGENT_BOARD_CLUSTERS_MAX]; // first core of each cpufreq policy
} agent_board_ident_t;

// The INA3221 driver generations (§2.5): which files hold a channel's readings.
typedef enum agent_ina_driver {
    AGENT_INA_NONE = 0,
    AGENT_INA_IIO,   // JetPack 4: NVIDIA ina3221x IIO driver, in <i2c dev>/iio:deviceK/
    AGENT_INA_HWMON, // JetPack 5+: upstream ina3221 hwmon driver, in <i2c dev>/hwmon/hwmonK/
} agent_ina_driver_t;

// A per-channel file name: prefix, channel number, suffix ("in" 1 "_label" -> "in1_label").
typedef struct agent_ina_file {
    const char *prefix; // NULL: the driver has no such file
    const char *suffix;
} agent_ina_file_t;

// File names of one driver generation.
typedef struct agent_ina_files {
    agent_ina_driver_t driver;
    const char *subdir;          // below the i2c device dir, holding the driver dir ("", "hwmon")
    const char *dir_prefix;      // the driver dir's name before its number ("iio:device", "hwmon")
    int first_channel;           // channel number of the first rail (0 on iio, 1 on hwmon)
    agent_ina_file_t label;      // rail name
    agent_ina_file_t voltage_mv; // bus voltage, mV
    agent_ina_file_t current_ma; // current, mA
    agent_ina_file_t power_mw;   // power, mW; no prefix when the driver has none (V x I / 1000)
} agent_ina_files_t;

// One INA3221 on the board.
typedef struct agent_board_ina {
    const char *i2c_dev;                         // "7-0040", under <sysfs>/bus/i2c/devices/
    const char *rails[AGENT_BOARD_INA_CHANNELS]; // expected labels in channel order; "NC" = none
} agent_board_ina_t;

// A thermal zone's kernel type and the name telemetry uses (as tegrastats prints it).
typedef struct agent_board_zone {
    const char *type; // thermal_zoneN/type: "CPU-therm", "tj-thermal"
    const char *name; // temps_mc key: "CPU", "tj"
} agent_board_zone_t;

// Where one family's telemetry lives for a range of JetPack major versions. Paths are relative
// to the sysfs root ("/sys"). A NULL path or list entry means the board does not expose it.
typedef struct agent_board_layout {
    jf_board_type_t type;
    int jetpack_min;                               // first JetPack major with these paths
    int jetpack_max;                               // last one
    const char *gpu_devfreq_dir;                   // devfreq dir; cur_freq there is in Hz
    const char *gpu_load[AGENT_BOARD_PATHS_MAX];   // GPU load, per-mille
    const char *emc_rate[AGENT_BOARD_PATHS_MAX];   // EMC clock, Hz (debugfs: root only)
    const char *emc_activity[AGENT_BOARD_PATHS_MAX]; // EMC activity counter "mc_all"
    agent_ina_driver_t ina_driver;
    size_t n_ina;                                  // entries used in ina
    agent_board_ina_t ina[AGENT_BOARD_INA_MAX];
    const char *input_rail;                        // board input rail; NULL: the board has none
    const char *thermal_dir;                       // dir of thermal_zoneN; NULL: not read
    agent_board_zone_t zones[AGENT_BOARD_ZONES_MAX]; // renames; ends at the first NULL type
    const char *rapl_dir;                          // dir of intel-rapl:* zones; NULL: not read
} agent_board_layout_t;

// All identity rows, supported families first. Borrowed (static); *ret_count entries.
const agent_board_ident_t *agent_board_table_idents(size_t *ret_count);

// The identity row of a supported Jetson family; NULL for host, sim or an invalid type.
const agent_board_ident_t *agent_board_table_ident(jf_board_type_t type);

// The layout of a Jetson family for a JetPack major version; NULL when the table has none (an
// unknown version: probe agent_board_table_layouts instead). Borrowed (static).
const agent_board_layout_t *agent_board_table_layout(jf_board_type_t type, int jetpack_major);

// Up to max layouts of a family, newest JetPack first, into ret; returns how many.
size_t agent_board_table_layouts(jf_board_type_t type, const agent_board_layout_t **ret,
                                 size_t max);

// The host's layout: /proc, cpufreq and RAPL only. Borrowed (static).
const agent_board_layout_t *agent_board_table_host(void);

// The file names of an INA3221 driver generation; NULL for AGENT_INA_NONE. Borrowed (static).
const agent_ina_files_t *agent_board_table_ina_files(agent_ina_driver_t driver);

// The telemetry name of a thermal zone type in a layout: its rename, or type itself when the
// layout does not list it (a zone a newer release added keeps the kernel's name). Borrowed.
const char *agent_board_table_zone_name(const agent_board_layout_t *layout, const char *type);

#endif
