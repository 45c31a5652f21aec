/* Page-cache residency of a dataset, as vmtouch measures it: for every regular file under a
 * directory, mmap (PROT_READ, MAP_SHARED, never touched) and mincore count the pages in memory,
 * without reading or faulting in any data. Also the unprivileged per-file eviction
 * (posix_fadvise DONTNEED) for cold-cache runs. Not for the system-wide drop (agent_storage.h). */
#ifndef AGENT_RESIDENCY_H
#define AGENT_RESIDENCY_H

#include "jf_err.h"

#include <stdbool.h>
#include <stdint.h>

#define AGENT_RESIDENCY_FILES_MAX 1000000 // a sane cap for max_files (GLD-23k has 23k files)
#define AGENT_RESIDENCY_DEPTH_MAX 32      // directory levels below the dataset directory

// What one walk over a dataset found. A plain value record.
typedef struct agent_residency {
    int64_t files;          // regular files measured (or evicted)
    int64_t skipped;        // entries that are neither directories nor regular files: symlinks
                            // (never followed), fifos, sockets, devices
    int64_t total_bytes;    // sum of the regular files' sizes
    int64_t resident_bytes; // bytes of those files in the page cache (each resident page counts
                            // its part of the file, so a fully cached file counts its size);
                            // 0 from agent_residency_evict
} agent_residency_t;

// Walks dir recursively and counts the resident bytes of every regular file. dir itself may be
// a symlink; nothing below it is followed. Mount points below dir are crossed. File contents are
// never read. Returns 0; -ENOENT/-ENOTDIR/-EACCES (or another negative errno) for dir or any
// entry that cannot be opened or mapped, with err naming the path; -E2BIG when there are more than
// max_files regular files (at most AGENT_RESIDENCY_FILES_MAX); -ELOOP deeper than
// AGENT_RESIDENCY_DEPTH_MAX levels; -EINVAL for a bad max_files. Files that change during the walk
// are measured as they are when opened. Cost: about 15 us per file on a desktop, mostly open, mmap
// and munmap (23k files of 100 kB: 0.3 to 0.4 s, inodes cached); measure around runs, not on
// every telemetry sample.
int agent_residency_measure(const char *dir, int64_t max_files, agent_residency_t *ret_residency,
                            jf_err_t *err);

// Evicts the clean page-cache pages of every regular file under dir with
// posix_fadvise(POSIX_FADV_DONTNEED), walking as agent_residency_measure does. Needs no
// privileges, unlike /proc/sys/vm/drop_caches, and touches only those files: exactly the cold
// start a dataset needs. Dirty pages stay (no fsync is done; a dataset is read, not written),
// and filesystems without page-cache eviction (tmpfs) keep everything. Returns as
// agent_residency_measure; *ret_residency counts files and bytes, resident_bytes is 0.
int agent_residency_evict(const char *dir, int64_t max_files, agent_residency_t *ret_residency,
                          jf_err_t *err);

// resident_bytes / total_bytes in [0, 1] into *ret_fraction; false when there are no bytes.
bool agent_residency_fraction(const agent_residency_t *residency, double *ret_fraction);

#endif
