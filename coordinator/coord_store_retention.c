/* Telemetry retention (coord_store_retention.h; docs/store.md, "Retention and free space"):
 * finished runs' raw samples deleted or averaged (coord_store_telemetry.c) in bounded batches,
 * and the store filesystem's free space.
 * The policy's clock (when to run, the cutoff) is the caller's. */
#include "coord_store_retention.h"

#include "coord_store_internal.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>

// The samples that retention may take: those of runs that ended (done or failed) at or before
// the cutoff. A run submitted again is pending (finished_us cleared), so its earlier attempts
// stay until it ends again. CROSS JOIN fixes the loop order (SQLite's rule): runs outside, then
// their series, then samples by their primary key's prefix. Left to the planner, it scanned
// the whole table for every batch (EXPLAIN QUERY PLAN: SCAN t).
#define S_DUE_WHERE  " WHERE r.state IN ('done', 'failed') AND r.finished_us <= ?1"
#define S_DUE_SERIES " FROM runs r CROSS JOIN telemetry_series s ON s.run = r.id" S_DUE_WHERE
#define S_PRUNABLE_FROM                                                                            \
    " FROM runs r CROSS JOIN telemetry_series s ON s.run = r.id"                                   \
    " CROSS JOIN telemetry_sample t ON t.series = s.id" S_DUE_WHERE

static const char s_sql_delete[] = "DELETE FROM telemetry_sample WHERE (series, seq, idx) IN"
                                   " (SELECT t.series, t.seq, t.idx" S_PRUNABLE_FROM " LIMIT ?2)";
// A drained series' layouts and the series itself go once its samples have.
static const char s_sql_delete_layouts[] =
    "DELETE FROM telemetry_layout WHERE series IN (SELECT s.id" S_DUE_SERIES
    " AND NOT EXISTS (SELECT 1 FROM telemetry_sample t WHERE t.series = s.id))";
static const char s_sql_delete_series[] =
    "DELETE FROM telemetry_series WHERE id IN (SELECT s.id" S_DUE_SERIES
    " AND NOT EXISTS (SELECT 1 FROM telemetry_sample t WHERE t.series = s.id))";
static const char s_sql_count[] = "SELECT count(*)" S_PRUNABLE_FROM;
static const char s_sql_count_raw[] =
    "SELECT count(*)" S_PRUNABLE_FROM " AND s.averaged = 0 AND t.mean_of IS NULL";
static const char s_sql_total[] = "SELECT count(*) FROM telemetry_sample";

int coord_store_prune_telemetry(coord_store_t *self, int64_t cutoff_us, int64_t max_rows,
                                int64_t *ret_deleted, jf_err_t *err)
{
    if (max_rows < 1) {
        return jf_err_set(err, -EINVAL, "prune: max_rows must be at least 1, got %lld",
                          (long long) max_rows);
    }
    coord_store_tcache_clear(self, false); // the cache must not name a deleted series
    int rc = coord_store_exec(self, s_sql_delete,
                              COORD_BINDS(coord_int(cutoff_us), coord_int(max_rows)), err);
    if (rc != 0) {
        return rc;
    }
    int64_t deleted = coord_db_changes(self->db);
    if (deleted < max_rows) {
        rc = coord_store_exec(self, s_sql_delete_layouts, COORD_BINDS(coord_int(cutoff_us)), err);
        rc = rc ? rc
                : coord_store_exec(self, s_sql_delete_series, COORD_BINDS(coord_int(cutoff_us)),
                                   err);
        if (rc != 0) {
            return rc;
        }
    }
    *ret_deleted = deleted;
    return 0;
}

int coord_store_prunable_telemetry(coord_store_t *self, int64_t cutoff_us, int64_t *ret_rows,
                                   jf_err_t *err)
{
    return coord_store_scalar(self, s_sql_count, COORD_BINDS(coord_int(cutoff_us)), ret_rows, err);
}

int coord_store_age_telemetry(coord_store_t *self, jf_retention_after_t after, int64_t cutoff_us,
                              int64_t max_rows, int64_t *ret_rows, jf_err_t *err)
{
    switch (after) {
    case JF_RETENTION_DROP:
        return coord_store_prune_telemetry(self, cutoff_us, max_rows, ret_rows, err);
    case JF_RETENTION_MEANS:
        return coord_store_telemetry_means(self, cutoff_us, max_rows, ret_rows, err);
    default:
        *ret_rows = 0;
        return 0;
    }
}

int coord_store_agable_telemetry(coord_store_t *self, jf_retention_after_t after, int64_t cutoff_us,
                                 int64_t *ret_rows, jf_err_t *err)
{
    if (after == JF_RETENTION_KEEP) {
        *ret_rows = 0;
        return 0;
    }
    return coord_store_scalar(self, after == JF_RETENTION_MEANS ? s_sql_count_raw : s_sql_count,
                              COORD_BINDS(coord_int(cutoff_us)), ret_rows, err);
}

int coord_store_count_telemetry(coord_store_t *self, int64_t *ret_rows, jf_err_t *err)
{
    return coord_store_scalar(self, s_sql_total, COORD_NO_BINDS, ret_rows, err);
}

int coord_store_free_bytes(const coord_store_t *self, int64_t *ret_bytes, jf_err_t *err)
{
    char copy[sizeof self->path] = {0};
    (void) snprintf(copy, sizeof copy, "%s", self->path);
    const char *dir = dirname(copy); // may point into copy or at a static "."
    struct statvfs vfs = {0};
    if (statvfs(dir, &vfs) != 0) {
        int e = errno;
        return jf_err_set(err, -e, "free space of '%s': statvfs: %s", dir, strerror(e));
    }
    *ret_bytes = (int64_t) vfs.f_bavail * (int64_t) vfs.f_frsize;
    return 0;
}
