/* Parsers for the /proc tables the host platform reads: /proc/stat CPU times and /proc/meminfo.
 * Pure functions over text, so they run against fixtures. Not for sysfs (issue #4's readers). */
#ifndef AGENT_PROCFS_H
#define AGENT_PROCFS_H

#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_PROCFS_CPUS_MAX 256

typedef struct agent_cpu_times {
    uint64_t busy;  // user + nice + system + irq + softirq + steal, in clock ticks
    uint64_t idle;  // idle + iowait, in clock ticks
} agent_cpu_times_t;

typedef struct agent_proc_stat {
    agent_cpu_times_t total;                       // the "cpu" line
    size_t n_cpus;                                 // "cpuN" lines found
    agent_cpu_times_t cpus[AGENT_PROCFS_CPUS_MAX]; // indexed by N
} agent_proc_stat_t;

typedef struct agent_meminfo {
    int64_t total_bytes;      // MemTotal
    int64_t available_bytes;  // MemAvailable
    int64_t cached_bytes;     // Cached (page cache)
    int64_t swap_total_bytes; // SwapTotal
    int64_t swap_free_bytes;  // SwapFree
} agent_meminfo_t;

// Parses /proc/stat text. Returns 0, or -EINVAL with err naming the line.
int agent_procfs_parse_stat(const char *text, agent_proc_stat_t *ret_stat, jf_err_t *err);

// Parses /proc/meminfo text; every field above must be present. Returns 0 or -EINVAL.
int agent_procfs_parse_meminfo(const char *text, agent_meminfo_t *ret_info, jf_err_t *err);

// Load in percent between two readings; false when no time passed.
bool agent_procfs_load_pct(const agent_cpu_times_t *before, const agent_cpu_times_t *after,
                           double *ret_pct);

#endif
