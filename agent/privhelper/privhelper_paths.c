/* The helper's path table (jetson-platforms.md §2.1 cpufreq, §2.2 GPU devfreq directories per
 * release, §2.3 EMC cap and lock files, §5.1 jetson_clocks' write order, §6 EMC steps). */
#include "privhelper_paths.h"

#include "privhelper_request.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define MHZ(v) ((int64_t) ((v) *1e6 + 0.5))

static const char *const s_cpu_files[PRIVHELPER_CPU_FILE_COUNT] = {
    [PRIVHELPER_CPU_ONLINE_FILE] = "online",
    [PRIVHELPER_CPU_MIN_KHZ] = "cpufreq/scaling_min_freq",
    [PRIVHELPER_CPU_MAX_KHZ] = "cpufreq/scaling_max_freq",
    [PRIVHELPER_CPU_TABLE_KHZ] = "cpufreq/scaling_available_frequencies",
    [PRIVHELPER_CPU_RELATED] = "cpufreq/related_cpus",
};

static const char *const s_devfreq_files[PRIVHELPER_DEVFREQ_FILE_COUNT] = {
    [PRIVHELPER_DEVFREQ_MIN_HZ] = "min_freq",
    [PRIVHELPER_DEVFREQ_MAX_HZ] = "max_freq",
    [PRIVHELPER_DEVFREQ_TABLE_HZ] = "available_frequencies",
};

// §2.2, oldest release first. A board has exactly one of them.
static const char *const s_gpu_dirs[] = {
    "devices/gpu.0/devfreq/57000000.gpu",                       // Nano (JP4)
    "devices/17000000.gp10b/devfreq/17000000.gp10b",            // TX2 (JP4)
    "devices/17000000.gv11b/devfreq/17000000.gv11b",            // Xavier (JP4)
    "devices/platform/17000000.gv11b/devfreq/17000000.gv11b",   // Xavier (JP5)
    "devices/17000000.ga10b/devfreq/17000000.ga10b",            // Orin (JP5)
    "devices/platform/bus@0/17000000.gpu/devfreq/17000000.gpu", // Orin (JP6)
    NULL,
};

// §2.3: JP6 moved the nvpmodel EMC cap.
static const char *const s_emc_caps[] = {
    "kernel/nvpmodel_clk_cap/emc",
    "kernel/nvpmodel_emc_cap/emc_iso_cap",
    NULL,
};

#define S_T210_CLK "kernel/debug/clk/override.emc/"
#define S_BPMP_EMC "kernel/debug/bpmp/debug/clk/emc/"

// §6 EMC steps. TX2's list is partial in the reference (unconfirmed), and Xavier NX uses the AGX
// Xavier list (its mode caps, 1600 and 1866, are in it).
static const privhelper_soc_t s_socs[] = {
    {"nvidia,tegra210",
     7,
     {MHZ(204), MHZ(408), MHZ(665.6), MHZ(800), MHZ(1065.6), MHZ(1331.2), MHZ(1600)},
     S_T210_CLK "clk_update_rate",
     S_T210_CLK "clk_state",
     true,
     "kernel/debug/tegra_bwmgr/emc_max_rate"},
    {"nvidia,tegra186",
     7,
     {MHZ(408), MHZ(665.6), MHZ(800), MHZ(1062.4), MHZ(1331.2), MHZ(1600), MHZ(1866)},
     S_BPMP_EMC "rate",
     S_BPMP_EMC "mrq_rate_locked",
     false,
     S_BPMP_EMC "max_rate"},
    {"nvidia,tegra194",
     9,
     {MHZ(204), MHZ(408), MHZ(665.6), MHZ(800), MHZ(1065.6), MHZ(1331.2), MHZ(1600), MHZ(1866),
      MHZ(2133)},
     S_BPMP_EMC "rate",
     S_BPMP_EMC "mrq_rate_locked",
     false,
     S_BPMP_EMC "max_rate"},
    {"nvidia,tegra234",
     4,
     {MHZ(204), MHZ(665.6), MHZ(2133), MHZ(3199)},
     S_BPMP_EMC "rate",
     S_BPMP_EMC "mrq_rate_locked",
     false,
     S_BPMP_EMC "max_rate"},
};

static int s_fit(int n)
{
    return n < 0 || n >= PRIVHELPER_PATH_MAX ? -ENAMETOOLONG : 0;
}

int privhelper_paths_cpu(char *buf, const char *prefix, int cpu, privhelper_cpu_file_t file)
{
    if (cpu < 0 || cpu >= PRIVHELPER_CPUS_MAX || (unsigned) file >= PRIVHELPER_CPU_FILE_COUNT) {
        return -EINVAL;
    }
    return s_fit(snprintf(buf, PRIVHELPER_PATH_MAX, "%sdevices/system/cpu/cpu%d/%s", prefix, cpu,
                          s_cpu_files[file]));
}

int privhelper_paths_policy(char *buf, const char *prefix, int cpu, privhelper_cpu_file_t file)
{
    static const char dir[] = "cpufreq/";
    if (cpu < 0 || cpu >= PRIVHELPER_CPUS_MAX || file == PRIVHELPER_CPU_ONLINE_FILE ||
        (unsigned) file >= PRIVHELPER_CPU_FILE_COUNT) {
        return -EINVAL;
    }
    return s_fit(snprintf(buf, PRIVHELPER_PATH_MAX, "%sdevices/system/cpu/cpufreq/policy%d/%s",
                          prefix, cpu, s_cpu_files[file] + sizeof dir - 1));
}

int privhelper_paths_cpu_idle(char *buf, const char *prefix, int cpu, int state)
{
    if (cpu < 0 || cpu >= PRIVHELPER_CPUS_MAX || state < 0 || state >= PRIVHELPER_IDLE_STATES_MAX) {
        return -EINVAL;
    }
    return s_fit(snprintf(buf, PRIVHELPER_PATH_MAX,
                          "%sdevices/system/cpu/cpu%d/cpuidle/state%d/disable", prefix, cpu,
                          state));
}

int privhelper_paths_devfreq(char *buf, const char *prefix, const char *dir,
                             privhelper_devfreq_file_t file)
{
    if ((unsigned) file >= PRIVHELPER_DEVFREQ_FILE_COUNT) {
        return -EINVAL;
    }
    return s_fit(snprintf(buf, PRIVHELPER_PATH_MAX, "%s%s/%s", prefix, dir, s_devfreq_files[file]));
}

int privhelper_paths_sys(char *buf, const char *prefix, const char *rel)
{
    return s_fit(snprintf(buf, PRIVHELPER_PATH_MAX, "%s%s", prefix, rel));
}

int privhelper_paths_find_gpu_dir(const privhelper_root_t *root, const char *prefix, char *buf)
{
    char table[PRIVHELPER_PATH_MAX];
    buf[0] = '\0';
    for (size_t i = 0; s_gpu_dirs[i]; i++) {
        if (privhelper_paths_devfreq(table, prefix, s_gpu_dirs[i], PRIVHELPER_DEVFREQ_TABLE_HZ) ==
                0 &&
            privhelper_root_is_file(root, table)) {
            return privhelper_paths_sys(buf, prefix, s_gpu_dirs[i]);
        }
    }
    return -ENOENT;
}

int privhelper_paths_find_emc_cap(const privhelper_root_t *root, const char *prefix, char *buf)
{
    for (size_t i = 0; s_emc_caps[i]; i++) {
        if (privhelper_paths_sys(buf, prefix, s_emc_caps[i]) == 0 &&
            privhelper_root_is_file(root, buf)) {
            return 0;
        }
    }
    buf[0] = '\0';
    return -ENOENT;
}

const privhelper_soc_t *privhelper_paths_soc(const char *compatible)
{
    for (size_t i = 0; compatible && i < sizeof s_socs / sizeof s_socs[0]; i++) {
        if (strcmp(compatible, s_socs[i].compatible) == 0) {
            return &s_socs[i];
        }
    }
    return NULL;
}

bool privhelper_paths_is_emc_step(const privhelper_soc_t *soc, int64_t hz)
{
    for (size_t i = 0; soc && i < soc->n_emc_steps; i++) {
        if (soc->emc_steps_hz[i] == hz) {
            return true;
        }
    }
    return false;
}
