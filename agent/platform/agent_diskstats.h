/* /proc/diskstats for one block device, what iostat reads: reads completed, bytes read, time
 * spent reading and I/Os in flight, as the `disk` object of docs/telemetry.md, plus per-interval
 * rates between two readings. Field layout: the kernel's Documentation/admin-guide/iostats.rst
 * (14 fields up to 4.17, 18 from 4.18, 20 from 5.5). Not for finding which device holds a path
 * (agent_storage.h). */
#ifndef AGENT_DISKSTATS_H
#define AGENT_DISKSTATS_H

#include "jf_err.h"

#include <jansson.h>
#include <stdint.h>

#define AGENT_DISKSTATS_NAME_MAX       31 // kernel DISK_NAME_LEN (32) without the NUL
#define AGENT_DISKSTATS_FIELDS_MIN     14 // major, minor, name and 11 counters (kernel 2.6 .. 4.17)
#define AGENT_DISKSTATS_SECTOR_BYTES   512 // diskstats counts 512-byte sectors on every device
#define AGENT_DISKSTATS_FILE_MAX_BYTES (1024 * 1024) // larger than any real table; caps the buffer

typedef struct agent_diskstats agent_diskstats_t;

// One reading of one device: counters since boot (docs/telemetry.md `disk`).
typedef struct agent_disk_sample {
    char device[AGENT_DISKSTATS_NAME_MAX + 1]; // whole-disk name as diskstats prints it: "nvme0n1"
    int64_t reads;                             // reads completed (field 4)
    int64_t read_bytes;                        // sectors read (field 6) x 512
    int64_t read_time_us;                      // time spent reading (field 7, ms) x 1000
    int64_t in_flight;                         // I/Os in progress now (field 12)
    int64_t mono_us;                           // CLOCK_MONOTONIC of the reading; 0 from the parser
} agent_disk_sample_t;

// What happened between two readings of the same device, iostat style.
typedef struct agent_disk_rate {
    int64_t interval_us;     // after.mono_us - before.mono_us, > 0
    double reads_per_s;      // read IOPS (iostat r/s)
    double read_bytes_per_s; // read throughput (iostat rkB/s x 1024)
    double read_await_us;    // mean time per completed read (iostat r_await); 0 with no reads
} agent_disk_rate_t;

// Finds device's line in /proc/diskstats text and parses it into *ret_sample (mono_us 0). Only
// that line is checked: lines of other devices may be anything. Returns 0; -ENOENT when no line
// names device; -EINVAL when its line has fewer than AGENT_DISKSTATS_FIELDS_MIN fields, a counter
// that is not a non-negative decimal, or a value too large for the units above. err names the
// line ("diskstats:3: ...").
int agent_diskstats_parse(const char *text, const char *device, agent_disk_sample_t *ret_sample,
                          jf_err_t *err);

// Opens <proc_root>/diskstats once for device (a kernel name such as "nvme0n1", "mmcblk0",
// "sda"; not a path) and checks that the device is listed. Caller owns the result; release with
// agent_diskstats_destroy. NULL with err when device is not a plain name (-EINVAL), the file
// cannot be opened or read, or the device is not listed (-ENOENT).
agent_diskstats_t *agent_diskstats_new(const char *proc_root, const char *device, jf_err_t *err);

// Closes the file and frees everything; accepts NULL and *self_p == NULL; sets *self_p = NULL.
void agent_diskstats_destroy(agent_diskstats_t **self_p);

// Re-reads the file (pread from offset 0, no reopen) and parses the device's line, stamping
// mono_us. Returns 0, or a negative errno as agent_diskstats_parse (-EIO when the read fails,
// -EFBIG past AGENT_DISKSTATS_FILE_MAX_BYTES). Not thread-safe: one reader per object.
int agent_diskstats_read(agent_diskstats_t *self, agent_disk_sample_t *ret_sample, jf_err_t *err);

// Rates between two readings of the same device. Returns 0; -EINVAL when the devices differ or
// no time passed; -ERANGE when a counter went backwards (a wrapped 32-bit ms counter on old
// kernels, or a device that was removed and re-added): skip that interval.
int agent_diskstats_rate(const agent_disk_sample_t *before, const agent_disk_sample_t *after,
                         agent_disk_rate_t *ret_rate, jf_err_t *err);

// The telemetry `disk` object: {"device", "reads", "read_bytes", "read_time_us", "in_flight"}.
// Caller owns the result (json_decref); NULL only when out of memory.
json_t *agent_diskstats_to_json(const agent_disk_sample_t *sample);

#endif
