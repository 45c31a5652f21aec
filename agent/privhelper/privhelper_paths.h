/* Where jetfleet-privhelper may read and write, as compiled-in data: the cpufreq, devfreq and
 * EMC files of ../shared/reference/jetson-platforms.md §2.1-2.3 and §5.1, relative to the sysfs
 * root, and the few files outside sysfs relative to the filesystem root. Requests only choose
 * numbers; every path is built here. The agent reads the same files to verify a mode. */
#ifndef PRIVHELPER_PATHS_H
#define PRIVHELPER_PATHS_H

#include "privhelper_root.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PRIVHELPER_PATH_MAX        160 // longest relative path built here, NUL included
#define PRIVHELPER_IDLE_STATES_MAX 8   // cpuidle stateK directories looked at per core
#define PRIVHELPER_EMC_STEPS_MAX   12  // EMC rates per SoC

// Below the filesystem root ("/" on a board, a fixture tree in tests).
#define PRIVHELPER_SYSFS_PREFIX     "sys/" // the sysfs root, as a prefix of the paths below
#define PRIVHELPER_CONF_PATH        "etc/nvpmodel.conf"
#define PRIVHELPER_COMPATIBLE_PATH  "proc/device-tree/compatible"
#define PRIVHELPER_DROP_CACHES_PATH "proc/sys/vm/drop_caches"
#define PRIVHELPER_STATUS_PATH      "var/lib/nvpmodel/status"     // nvpmodel's persisted mode
#define PRIVHELPER_STATE_DIR        "var/lib/jetfleet-privhelper" // root-owned, 0700, made at install

// An absolute path: the nvpmodel binary of package nvidia-l4t-nvpmodel (§4.1).
#define PRIVHELPER_NVPMODEL_BIN "/usr/sbin/nvpmodel"

// Below the sysfs root.
#define PRIVHELPER_GPU_RAILGATE_PATH "devices/gpu.0/railgate_enable"

typedef enum privhelper_cpu_file {
    PRIVHELPER_CPU_ONLINE_FILE = 0, // online: 1 or 0
    PRIVHELPER_CPU_MIN_KHZ,         // cpufreq/scaling_min_freq
    PRIVHELPER_CPU_MAX_KHZ,         // cpufreq/scaling_max_freq
    PRIVHELPER_CPU_TABLE_KHZ,       // cpufreq/scaling_available_frequencies
    PRIVHELPER_CPU_RELATED,         // cpufreq/related_cpus: the cores of the policy
    PRIVHELPER_CPU_FILE_COUNT,
} privhelper_cpu_file_t;

typedef enum privhelper_devfreq_file {
    PRIVHELPER_DEVFREQ_MIN_HZ = 0, // min_freq
    PRIVHELPER_DEVFREQ_MAX_HZ,     // max_freq
    PRIVHELPER_DEVFREQ_TABLE_HZ,   // available_frequencies
    PRIVHELPER_DEVFREQ_FILE_COUNT,
} privhelper_devfreq_file_t;

// How one SoC's memory clock is capped and locked (§2.3, §5.1; a plain value record).
typedef struct privhelper_soc {
    const char *compatible; // last /proc/device-tree/compatible token, "nvidia,tegra194"
    size_t n_emc_steps;     // entries used in emc_steps_hz
    int64_t emc_steps_hz[PRIVHELPER_EMC_STEPS_MAX]; // rates emc-freq accepts, ascending
    const char *emc_rate;     // sysfs-relative debugfs file that takes the locked rate, Hz
    const char *emc_lock;     // the file that takes 1 (locked) or 0
    bool rate_before_lock;    // T210 writes the rate first; T186 and later the lock first
    const char *emc_max_rate; // the highest rate the clock allows, Hz (dvfs off without a cap)
} privhelper_soc_t;

// Builds prefix + "devices/system/cpu/cpu<cpu>/<file>" into buf (PRIVHELPER_PATH_MAX bytes).
// prefix is PRIVHELPER_SYSFS_PREFIX for the helper, "" for a reader rooted at /sys. Returns 0,
// or -EINVAL for a cpu outside 0..63 or an unknown file.
int privhelper_paths_cpu(char *buf, const char *prefix, int cpu, privhelper_cpu_file_t file);

// prefix + "devices/system/cpu/cpufreq/policy<cpu>/<file>" for the cpufreq files (not
// PRIVHELPER_CPU_ONLINE_FILE), cpu being the policy's first core: the directory itself, where
// cpu<cpu>/cpufreq is only a symlink to it, so that a write resolves with no symlink on the way
// (privhelper_root.h). Returns 0, or -EINVAL for a cpu outside 0..63 or another file.
int privhelper_paths_policy(char *buf, const char *prefix, int cpu, privhelper_cpu_file_t file);

// prefix + "devices/system/cpu/cpu<cpu>/cpuidle/state<state>/disable". 0 or -EINVAL.
int privhelper_paths_cpu_idle(char *buf, const char *prefix, int cpu, int state);

// prefix + dir + "/" + the devfreq file into buf. 0 or -ENAMETOOLONG.
int privhelper_paths_devfreq(char *buf, const char *prefix, const char *dir,
                             privhelper_devfreq_file_t file);

// prefix + rel into buf. 0 or -ENAMETOOLONG.
int privhelper_paths_sys(char *buf, const char *prefix, const char *rel);

// The first GPU devfreq directory of the table (Nano, TX2, Xavier JP4/JP5, Orin JP5/JP6) whose
// available_frequencies file is a regular file below root, as prefix + directory into buf
// (PRIVHELPER_PATH_MAX). 0 or -ENOENT.
int privhelper_paths_find_gpu_dir(const privhelper_root_t *root, const char *prefix, char *buf);

// The first EMC cap file of the table (nvpmodel_clk_cap on JP6, nvpmodel_emc_cap before) that
// is a regular file below root, as prefix + file into
// buf. 0 or -ENOENT.
int privhelper_paths_find_emc_cap(const privhelper_root_t *root, const char *prefix, char *buf);

// The SoC row for the last compatible token; NULL if unknown (then EMC is not touched).
const privhelper_soc_t *privhelper_paths_soc(const char *compatible);

// True if hz is one of soc's EMC steps.
bool privhelper_paths_is_emc_step(const privhelper_soc_t *soc, int64_t hz);

#endif
