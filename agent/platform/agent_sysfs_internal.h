/* Private to agent_sysfs*.c: the reader's state, shared by the CPU/GPU/memory part
 * (agent_sysfs.c) and the directory-scanned part: rails, thermal zones, RAPL
 * (agent_sysfs_scan.c). */
#ifndef AGENT_SYSFS_INTERNAL_H
#define AGENT_SYSFS_INTERNAL_H

#include "agent_sysfs.h"

#include <limits.h>

typedef struct agent_sysfs_rail {
    char name[AGENT_SYSFS_NAME_MAX + 1]; // label as the monitor names it ("VDD_IN")
    int voltage_fd;                      // owned; -1 when absent. mV
    int current_fd;                      // owned; -1 when absent. mA
    int power_fd;                        // owned; -1 when absent (hwmon: computed). mW
} agent_sysfs_rail_t;

// A value file under a name: a thermal zone (m°C) or a RAPL zone (µJ).
typedef struct agent_sysfs_named {
    char name[AGENT_SYSFS_NAME_MAX + 1];
    int fd; // owned
} agent_sysfs_named_t;

struct agent_sysfs {
    char sysfs_root[AGENT_SYSFS_ROOT_MAX + 1];
    char proc_root[AGENT_SYSFS_ROOT_MAX + 1];
    const agent_board_layout_t *layout;  // borrowed (static)
    const char *source;                  // borrowed (static)
    int stat_fd;                         // owned: <proc>/stat
    int meminfo_fd;                      // owned: <proc>/meminfo; -1 when absent
    int online_fd;                       // owned: <sysfs>/devices/system/cpu/online; -1
    int gpu_freq_fd;                     // owned: devfreq cur_freq, Hz; -1
    int gpu_load_fd;                     // owned: per-mille; -1
    int emc_rate_fd;                     // owned: Hz; -1
    int emc_activity_fd;                 // owned: mc_all; -1
    size_t n_cpus;                       // cores reported; 0 until /proc/stat tells
    int cpu_freq_fd[AGENT_SYSFS_CPUS_MAX]; // owned: cpuN scaling_cur_freq, kHz; -1
    bool online_known;                   // online[] holds the last cpu online list read
    bool online[AGENT_SYSFS_CPUS_MAX];
    size_t n_rails;
    agent_sysfs_rail_t rails[AGENT_SYSFS_RAILS_MAX];
    size_t n_zones;
    agent_sysfs_named_t zones[AGENT_SYSFS_ZONES_MAX];
    size_t n_rapl;
    agent_sysfs_named_t rapl[AGENT_SYSFS_RAPL_MAX];
    int64_t rapl_range_uj[AGENT_SYSFS_RAPL_MAX]; // max_energy_range_uj, read once; 0 unknown
    bool have_prev;                      // prev holds the previous /proc/stat reading
    agent_proc_stat_t prev;
    agent_proc_stat_t now;
    size_t missing_len;
    char missing[AGENT_SYSFS_MISSING_MAX + 1];
    char buf[AGENT_SYSFS_PROC_MAX];      // /proc text of the current sample
};

// Opens root/rel read-only; the fd, or -1 after noting "what (path: reason)" in the missing
// list when what is not NULL.
int agent_sysfs_open(agent_sysfs_t *self, const char *root, const char *rel, const char *what);

// Adds "what (detail)" to the missing list (truncated when full).
void agent_sysfs_note_missing(agent_sysfs_t *self, const char *what, const char *detail);

// Reads a small text file once (a label or a name) into buf without its trailing newline.
// false when it cannot be read or is empty.
bool agent_sysfs_read_name(const char *path, char *buf, size_t size);

// pread of a value file at offset 0, parsed with agent_sysfs_parse_value. false when fd is -1,
// the read fails or the value is malformed or out of [min, max].
bool agent_sysfs_read_i64(int fd, int64_t min, int64_t max, int64_t *ret_value);

// Directory-scanned parts (agent_sysfs_scan.c): open at creation, add to a sample.
void agent_sysfs_open_rails(agent_sysfs_t *self);
void agent_sysfs_open_zones(agent_sysfs_t *self);
void agent_sysfs_open_rapl(agent_sysfs_t *self);
void agent_sysfs_add_temps(agent_sysfs_t *self, json_t *sample);
void agent_sysfs_add_rails(agent_sysfs_t *self, json_t *sample);
void agent_sysfs_add_rapl(agent_sysfs_t *self, json_t *sample);

#endif
