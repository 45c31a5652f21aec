/* Telemetry retention (coord_store_retention.h; docs/store.md, "Retention and free space"):
 * finished runs' raw samples deleted in bounded batches, and the store filesystem's free space.
 * The policy's clock (when to run, the cutoff) is the caller's. */
#include "coord_store_retention.h"

#include "coord_store_internal.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>

// The telemetry rows that retention may take: those of runs that ended (done or failed) at or
// before the cutoff. A run submitted again is pending (finished_us cleared), so its earlier
// attempts stay until it ends again. CROSS JOIN fixes the loop order (SQLite's rule): runs
// outside, telemetry by its primary key's prefix inside. Left to the planner, it scanned the
// whole telemetry table for every batch (EXPLAIN QUERY PLAN: SCAN t).
#define S_PRUNABLE_FROM                                                                            \
    " FROM runs r CROSS JOIN telemetry t ON t.run = r.id"                                          \
    " WHERE r.state IN ('done', 'failed') AND r.finished_us <= ?"

static const char s_sql_delete[] =
    "DELETE FROM telemetry WHERE (run, attempt, seq, idx) IN"
    " (SELECT t.run, t.attempt, t.seq, t.idx" S_PRUNABLE_FROM " LIMIT ?)";
static const char s_sql_count[] = "SELECT count(*)" S_PRUNABLE_FROM;
static const char s_sql_total[] = "SELECT count(*) FROM telemetry";

int coord_store_prune_telemetry(coord_store_t *self, int64_t cutoff_us, int64_t max_rows,
                                int64_t *ret_deleted, jf_err_t *err)
{
    if (max_rows < 1) {
        return jf_err_set(err, -EINVAL, "prune: max_rows must be at least 1, got %lld",
                          (long long) max_rows);
    }
    int rc = coord_store_exec(self, s_sql_delete,
                              COORD_BINDS(coord_int(cutoff_us), coord_int(max_rows)), err);
    if (rc != 0) {
        return rc;
    }
    *ret_deleted = sqlite3_changes64(self->db);
    return 0;
}

int coord_store_prunable_telemetry(coord_store_t *self, int64_t cutoff_us, int64_t *ret_rows,
                                   jf_err_t *err)
{
    return coord_store_scalar(self, s_sql_count, COORD_BINDS(coord_int(cutoff_us)), ret_rows, err);
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
