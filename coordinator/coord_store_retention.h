/* Retention of the store's telemetry (docs/store.md, "Retention and free space"): which raw
 * samples may go, deleting them in bounded batches, and the free space of the store's
 * filesystem for the coordinator's free-space floor. Not the policy's timing: coord_server and
 * `jetfleet store prune` decide when to call these. */
#ifndef COORD_STORE_RETENTION_H
#define COORD_STORE_RETENTION_H

#include "coord_store.h"
#include "jf_err.h"
#include "jf_fleet_config.h"

#include <stdint.h>

// Rows deleted per batch: one batch is one statement inside a short transaction, so neither
// the coordinator's tick nor a concurrent writer waits long for it (STYLE.md §7).
#define COORD_RETENTION_BATCH_ROWS 500

// Deletes at most max_rows telemetry rows of runs that are finished (state done or failed)
// with finished_us <= cutoff_us (wall clock, µs). Rows of pending, assigned or running runs are
// never touched; every stored row has been acknowledged, since acks follow the commit. Runs
// inside the caller's transaction, if any. *ret_deleted is the number deleted (< max_rows when
// nothing more is due). Returns 0, -EINVAL for max_rows < 1, or -EIO/-EBADMSG from SQLite.
int coord_store_prune_telemetry(coord_store_t *self, int64_t cutoff_us, int64_t max_rows,
                                int64_t *ret_deleted, jf_err_t *err);

// The number of telemetry rows coord_store_prune_telemetry would delete for cutoff_us.
int coord_store_prunable_telemetry(coord_store_t *self, int64_t cutoff_us, int64_t *ret_rows,
                                   jf_err_t *err);

// Replaces raw samples of finished runs (as for coord_store_prune_telemetry) by per-second
// means (docs/store.md, "Retention"), at most max_rows raw samples, in the caller's transaction
// if any. A second's samples are averaged together; one cut by the batch's end waits for the
// next call. A series found with no raw samples left is marked averaged and counts as one.
// *ret_rows is the work done: 0 when nothing more is due. Returns 0, -EINVAL for max_rows < 1,
// -EPROTO for a stored row that does not unpack, or -EIO/-EBADMSG from SQLite.
int coord_store_telemetry_means(coord_store_t *self, int64_t cutoff_us, int64_t max_rows,
                                int64_t *ret_rows, jf_err_t *err);

// One batch of the policy after: coord_store_prune_telemetry (drop),
// coord_store_telemetry_means (means), nothing (keep, *ret_rows 0). *ret_rows > 0: call again.
int coord_store_age_telemetry(coord_store_t *self, jf_retention_after_t after, int64_t cutoff_us,
                              int64_t max_rows, int64_t *ret_rows, jf_err_t *err);

// The rows the policy after would take for cutoff_us: samples to delete (drop), raw samples
// to average (means), 0 (keep).
int coord_store_agable_telemetry(coord_store_t *self, jf_retention_after_t after, int64_t cutoff_us,
                                 int64_t *ret_rows, jf_err_t *err);

// The number of telemetry rows in the store (samples and means).
int coord_store_count_telemetry(coord_store_t *self, int64_t *ret_rows, jf_err_t *err);

// Bytes available to this (unprivileged) process on the filesystem that holds the store's
// file (statvfs f_bavail x f_frsize of the file's directory). Returns 0 or a negative errno
// with err naming the directory.
int coord_store_free_bytes(const coord_store_t *self, int64_t *ret_bytes, jf_err_t *err);

#endif
