/* Weight blobs in the store: whole blobs by sha256, returned chunks, their checked assembly
 * (docs/protocol.md §5.7, docs/store.md "Weight blobs"). */
#include "coord_store_blobs.h"
#include "coord_store_internal.h"

#include "jf_units.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int coord_store_blob_put(coord_store_t *self, const void *data, size_t len, char *ret_sha,
                         jf_err_t *err)
{
    if (len == 0 || len > JF_BLOB_MAX_BYTES) {
        return jf_err_set(err, -EINVAL, "a blob has 1..%d bytes, got %zu", JF_BLOB_MAX_BYTES, len);
    }
    char sha[JF_BLOB_SHA256_HEX_LEN + 1] = {0};
    int rc = jf_blob_sha256(data, len, sha, err);
    rc = rc ? rc
            : coord_store_exec(self,
                               "INSERT OR IGNORE INTO blobs(sha256, size_bytes, data, created_us)"
                               " VALUES(?, ?, ?, ?)",
                               COORD_BINDS(coord_text(sha), coord_int((int64_t) len),
                                           coord_blob(data, len), coord_int(jf_clock_wall_us())),
                               err);
    if (rc == 0) {
        memcpy(ret_sha, sha, sizeof sha);
    }
    return rc;
}

// Copies column col of the current row (a blob) into a new buffer.
static int s_copy_blob(coord_db_stmt_t *st, int col, void **ret_data, size_t *ret_len,
                       jf_err_t *err)
{
    size_t n = coord_db_col_bytes(st, col);
    const void *p = coord_db_col_blob(st, col);
    void *copy = malloc(n ? n : 1);
    if (!copy) {
        return jf_err_set(err, -ENOMEM, "out of memory");
    }
    if (n) {
        memcpy(copy, p, n);
    }
    *ret_data = copy;
    *ret_len = n;
    return 0;
}

int coord_store_blob_read(coord_store_t *self, const char *sha, int64_t offset, size_t max_len,
                          void **ret_data, size_t *ret_len, int64_t *ret_size, jf_err_t *err)
{
    // substr() on a BLOB counts bytes and is 1-based.
    coord_db_stmt_t *st = coord_store_stmt(
        self, "SELECT size_bytes, substr(data, ? + 1, ?) FROM blobs WHERE sha256 = ?",
        COORD_BINDS(coord_int(offset), coord_int((int64_t) max_len), coord_text(sha)), err);
    if (!st) {
        return -EIO;
    }
    int rc = coord_db_step(st);
    int ret = 0;
    if (rc == COORD_DB_ROW) {
        int64_t size = coord_db_col_int64(st, 0);
        ret = s_copy_blob(st, 1, ret_data, ret_len, err);
        *ret_size = size;
    } else {
        ret = rc == COORD_DB_DONE ? -ENOENT : coord_store_fail(self, err, "reading a blob");
    }
    coord_db_reset(st);
    return ret;
}

int coord_store_blob_get(coord_store_t *self, const char *sha, void **ret_data, size_t *ret_len,
                         jf_err_t *err)
{
    int64_t size = 0;
    int rc = coord_store_blob_read(self, sha, 0, JF_BLOB_MAX_BYTES, ret_data, ret_len, &size, err);
    if (rc == -ENOENT) {
        return jf_err_set(err, -ENOENT, "the store has no blob %s", sha);
    }
    return rc;
}

int coord_store_weights_add_chunk(coord_store_t *self, const char *run, int64_t attempt,
                                  const jf_msg_blob_chunk_t *c, jf_err_t *err)
{
    return coord_store_exec(self,
                            "INSERT OR IGNORE INTO weight_chunks(run, attempt, \"offset\", blob,"
                            " size_bytes, data) VALUES(?, ?, ?, ?, ?, ?)",
                            COORD_BINDS(coord_text(run), coord_int(attempt), coord_int(c->offset),
                                        coord_text(c->blob), coord_int(c->size_bytes),
                                        coord_blob(c->data, c->len)),
                            err);
}

int coord_store_weights_drop(coord_store_t *self, const char *run, int64_t attempt, jf_err_t *err)
{
    return coord_store_exec(self, "DELETE FROM weight_chunks WHERE run = ? AND attempt = ?",
                            COORD_BINDS(coord_text(run), coord_int(attempt)), err);
}

int coord_store_weights_drop_orphans(coord_store_t *self, int64_t *ret_dropped, jf_err_t *err)
{
    int rc = coord_store_exec(self,
                              "DELETE FROM weight_chunks WHERE NOT EXISTS (SELECT 1 FROM runs r "
                              "WHERE r.id = weight_chunks.run AND r.attempt = weight_chunks.attempt"
                              " AND r.state IN ('assigned', 'running'))",
                              COORD_NO_BINDS, err);
    if (rc == 0) {
        *ret_dropped = (int64_t) coord_db_changes(self->db);
    }
    return rc;
}

// What the assembly has so far.
typedef struct s_assembly {
    char blob[JF_BLOB_SHA256_HEX_LEN + 1]; // the name the first chunk gives
    int64_t size;                          // the size it gives
    unsigned char *bytes;                  // size bytes (owned)
    int64_t filled;                        // bytes [0, filled) are in
} s_assembly_t;

// Adds the current row's chunk (offset, blob, size_bytes, data) in offset order.
static int s_take_chunk(s_assembly_t *a, coord_db_stmt_t *st, jf_err_t *err)
{
    int64_t offset = coord_db_col_int64(st, 0);
    const char *blob = coord_db_col_text(st, 1);
    int64_t size = coord_db_col_int64(st, 2);
    int64_t n = (int64_t) coord_db_col_bytes(st, 3);
    if (!a->bytes) {
        if (!blob || !jf_blob_is_sha256(blob) || size < 1 || size > JF_BLOB_MAX_BYTES) {
            return jf_err_set(err, -EBADMSG, "the first chunk names no valid blob");
        }
        memcpy(a->blob, blob, sizeof a->blob);
        a->size = size;
        a->bytes = malloc((size_t) size);
        if (!a->bytes) {
            return jf_err_set(err, -ENOMEM, "out of memory");
        }
    }
    if (!blob || strcmp(blob, a->blob) != 0 || size != a->size) {
        return jf_err_set(err, -EBADMSG, "the chunk at offset %lld names another blob or size",
                          (long long) offset);
    }
    if (offset != a->filled || offset + n > a->size) {
        return jf_err_set(err, -EBADMSG, "chunk at offset %lld of %lld bytes, expected offset %lld",
                          (long long) offset, (long long) n, (long long) a->filled);
    }
    memcpy(a->bytes + offset, coord_db_col_blob(st, 3), (size_t) n);
    a->filled += n;
    return 0;
}

static int s_collect(coord_store_t *self, const char *run, int64_t attempt, s_assembly_t *a,
                     jf_err_t *err)
{
    coord_db_stmt_t *st =
        coord_store_stmt(self,
                         "SELECT \"offset\", blob, size_bytes, data FROM weight_chunks"
                         " WHERE run = ? AND attempt = ? ORDER BY \"offset\"",
                         COORD_BINDS(coord_text(run), coord_int(attempt)), err);
    if (!st) {
        return -EIO;
    }
    int rc = 0, step = 0;
    while (rc == 0 && (step = coord_db_step(st)) == COORD_DB_ROW) {
        rc = s_take_chunk(a, st, err);
    }
    if (rc == 0 && step != COORD_DB_DONE) {
        rc = coord_store_fail(self, err, "reading returned weights");
    }
    coord_db_reset(st);
    if (rc == 0 && !a->bytes) {
        rc = jf_err_set(err, -EBADMSG, "no chunk of weights arrived");
    } else if (rc == 0 && a->filled != a->size) {
        rc = jf_err_set(err, -EBADMSG, "chunks cover %lld of the blob's %lld bytes",
                        (long long) a->filled, (long long) a->size);
    }
    return rc;
}

int coord_store_weights_assemble(coord_store_t *self, const char *run, int64_t attempt,
                                 char *ret_sha, jf_err_t *err)
{
    s_assembly_t a = {0};
    char sha[JF_BLOB_SHA256_HEX_LEN + 1] = {0};
    int rc = s_collect(self, run, attempt, &a, err);
    rc = rc ? rc : jf_blob_sha256(a.bytes, (size_t) a.size, sha, err);
    if (rc == 0 && strcmp(sha, a.blob) != 0) {
        rc = jf_err_set(err, -EBADMSG, "the weights' sha256 is %.16s..., the chunks say %.16s...",
                        sha, a.blob);
    }
    rc = rc ? rc : coord_store_blob_put(self, a.bytes, (size_t) a.size, sha, err);
    rc = rc ? rc
            : coord_store_exec(self,
                               "INSERT INTO run_weights(run, attempt, blob) VALUES(?, ?, ?)"
                               " ON CONFLICT(run, attempt) DO UPDATE SET blob = excluded.blob",
                               COORD_BINDS(coord_text(run), coord_int(attempt), coord_text(sha)),
                               err);
    rc = rc ? rc : coord_store_weights_drop(self, run, attempt, err);
    free(a.bytes);
    if (rc == 0) {
        memcpy(ret_sha, sha, sizeof sha);
    }
    return rc;
}

int coord_store_run_weights(coord_store_t *self, const char *run, int64_t attempt, char *ret_sha,
                            jf_err_t *err)
{
    coord_db_stmt_t *st =
        coord_store_stmt(self, "SELECT blob FROM run_weights WHERE run = ? AND attempt = ?",
                         COORD_BINDS(coord_text(run), coord_int(attempt)), err);
    if (!st) {
        return -EIO;
    }
    int rc = coord_db_step(st);
    int ret = 0;
    if (rc == COORD_DB_ROW) {
        const char *blob = coord_db_col_text(st, 0);
        ret =
            blob && jf_blob_is_sha256(blob)
                ? (memcpy(ret_sha, blob, JF_BLOB_SHA256_HEX_LEN + 1), 0)
                : jf_err_set(err, -EBADMSG, "run %s: a returned blob name that is not sha256", run);
    } else {
        ret = rc == COORD_DB_DONE ? -ENOENT : coord_store_fail(self, err, "reading run weights");
    }
    coord_db_reset(st);
    return ret;
}
