/* The sysfs/procfs telemetry reader: given a board layout (agent_board_table.h) and the two
 * roots, it opens every file it will need once, at creation, and re-reads them with pread for
 * each sample: no open per sample, no process spawned. It produces the quantities of
 * docs/telemetry.md that the files expose and leaves out the rest. Used by the jetson and host
 * platforms, and by the sim platform over a sysfs tree it writes. Does not log. */
#ifndef AGENT_SYSFS_H
#define AGENT_SYSFS_H

#include "agent_board_table.h"
#include "agent_procfs.h"
#include "jf_err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_SYSFS_CPUS_MAX     AGENT_PROCFS_CPUS_MAX // most cores reported
#define AGENT_SYSFS_ROOT_MAX     1023  // longest --sysfs-root / --proc-root accepted
#define AGENT_SYSFS_VALUE_MAX    63    // longest value file accepted, in bytes (longer: absent)
#define AGENT_SYSFS_NAME_MAX     63    // longest rail, zone or RAPL name kept
#define AGENT_SYSFS_ZONES_MAX    48    // most thermal zones read
#define AGENT_SYSFS_RAPL_MAX     16    // most RAPL zones read
#define AGENT_SYSFS_RAILS_MAX    (AGENT_BOARD_INA_MAX * AGENT_BOARD_INA_CHANNELS)
#define AGENT_SYSFS_MISSING_MAX  2047  // longest agent_sysfs_missing text
#define AGENT_SYSFS_PROC_MAX     (64 * 1024) // most bytes read of /proc/stat or /proc/meminfo
#define AGENT_SYSFS_TEMP_OFFLINE_MC (-256000) // a zone at or below this is offline (-256 C)

typedef struct agent_sysfs agent_sysfs_t;

typedef struct agent_sysfs_opts {
    const char *sysfs_root;             // sysfs mount, "/sys"; copied
    const char *proc_root;              // procfs mount, "/proc"; copied
    const agent_board_layout_t *layout; // borrowed: a static agent_board_table row
    size_t n_cpus;  // cores to report when <sysfs>/devices/system/cpu/present is unreadable;
                    // 0: as many as /proc/stat lists
    const char *source; // the samples' "source" ("sysfs", "proc"); borrowed static string
} agent_sysfs_opts_t;

// Opens the files of opts->layout under the roots. A file that is missing or cannot be opened
// only makes its quantity absent (agent_sysfs_missing lists them). Returns NULL with err when
// <proc>/stat cannot be opened (a wrong --proc-root), -ENAMETOOLONG for a root longer than
// AGENT_SYSFS_ROOT_MAX, or -ENOMEM. Caller owns the result;
// release with agent_sysfs_destroy.
agent_sysfs_t *agent_sysfs_new(const agent_sysfs_opts_t *opts, jf_err_t *err);

// Closes every file and frees self. Accepts NULL and *self_p == NULL; sets *self_p to NULL.
void agent_sysfs_destroy(agent_sysfs_t **self_p);

// Adds one sample to the object sample (docs/telemetry.md; units in the key names): t_us,
// mono_us, source; cpu_load_pct and cpu_core_load_pct (from the second sample on: load is the
// difference of two /proc/stat readings), cpu_core_freq_hz, cpu_online, gpu_load_pct,
// gpu_freq_hz, emc_freq_hz, emc_load_pct, the /proc/meminfo quantities, temps_mc, rails,
// input_power_mw and rapl_energy_uj. A file that cannot be read or holds a malformed or
// out-of-range value (agent_sysfs_parse_value) leaves its quantity out; an offline core is null
// in the per-core arrays; an offline thermal zone (<= -256 C or a read error) is left out.
// Returns 0, or -EIO with err when not one quantity could be read. Not thread-safe: one caller.
int agent_sysfs_sample(agent_sysfs_t *self, json_t *sample, jf_err_t *err);

// Whether some power rail was opened with a power file, or with both voltage and current files
// (its power can then be read). false: the board's monitor is missing or not readable, and the
// platform may fall back on tegrastats (docs/telemetry.md).
bool agent_sysfs_has_power(const agent_sysfs_t *self);

// Number of cores the per-core arrays have (0 until known when opts->n_cpus was 0).
size_t agent_sysfs_n_cpus(const agent_sysfs_t *self);

// What could not be opened at creation, as "quantity (path: reason); ..." for one log line;
// "" when everything was there. Borrowed; valid until self is destroyed.
const char *agent_sysfs_missing(const agent_sysfs_t *self);

// Parses a sysfs value file's text: an optional '-', decimal digits, then optional trailing
// whitespace (the newline), into [min, max]. Returns 0, or -EINVAL with err for anything else:
// empty, leading blanks or '+', junk, overflow, out of range.
int agent_sysfs_parse_value(const char *text, int64_t min, int64_t max, int64_t *ret_value,
                            jf_err_t *err);

// Parses a kernel CPU list ("0-3,6\n"; empty means none) into ret_set[0..n) (indexes >= n are
// ignored). Returns 0, or -EINVAL with err for malformed text (ret_set is then unchanged).
int agent_sysfs_parse_cpu_list(const char *text, bool *ret_set, size_t n, jf_err_t *err);

#endif
