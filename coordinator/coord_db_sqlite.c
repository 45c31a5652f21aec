/* The database seam's SQLite back end (coord_db.h): one sqlite3 connection opened as the store
 * always opened it (no shared cache, NOMUTEX: one thread per connection, a busy timeout), its
 * statements as sqlite3_stmt. Error classes come from SQLite's extended result codes. */
#include "coord_db_internal.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

// How long a statement waits for another connection's lock before SQLITE_BUSY.
#define COORD_DB_SQLITE_BUSY_TIMEOUT_MS 5000

static sqlite3 *s_handle(const coord_db_t *db)
{
    return db->impl;
}

static sqlite3_stmt *s_stmt(const coord_db_stmt_t *st)
{
    return st->impl;
}

static coord_db_errclass_t s_class(int extended_rc)
{
    switch (extended_rc & 0xff) { // extended codes keep the primary code in the low byte
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
        return COORD_DB_ERR_NONE;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return COORD_DB_ERR_BUSY;
    case SQLITE_CONSTRAINT:
        return COORD_DB_ERR_CONSTRAINT;
    case SQLITE_FULL:
        return COORD_DB_ERR_FULL;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return COORD_DB_ERR_CORRUPT;
    case SQLITE_READONLY:
        return COORD_DB_ERR_READONLY;
    default:
        return COORD_DB_ERR_OTHER;
    }
}

// Records the connection's last error as SQLite reports it; returns -EIO or -EBADMSG.
static int s_fail(coord_db_t *db)
{
    sqlite3 *h = s_handle(db);
    int code = sqlite3_extended_errcode(h);
    coord_db_errclass_t cls = s_class(code);
    return coord_db_set_error(db, cls == COORD_DB_ERR_NONE ? COORD_DB_ERR_OTHER : cls, "%s",
                              sqlite3_errmsg(h));
}

static int s_check(coord_db_stmt_t *st, int rc)
{
    return rc == SQLITE_OK ? 0 : s_fail(st->db);
}

static int s_open(coord_db_t *db, const char *target, bool read_only, jf_err_t *err)
{
    int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    sqlite3 *h = NULL;
    int rc = sqlite3_open_v2(target, &h, flags | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        int code = h ? sqlite3_extended_errcode(h) : SQLITE_NOMEM;
        int ret =
            coord_db_set_error(db, s_class(code), "%s", h ? sqlite3_errmsg(h) : "out of memory");
        jf_err_set(err, ret, "%s: cannot open the store: %s", db->target, db->errmsg);
        (void) sqlite3_close(h); // NULL-safe; nothing was prepared on it
        return ret;
    }
    (void) sqlite3_busy_timeout(h, COORD_DB_SQLITE_BUSY_TIMEOUT_MS); // only fails on a NULL handle
    db->impl = h;
    return 0;
}

static void s_close(coord_db_t *db)
{
    sqlite3 *h = s_handle(db);
    if (h && sqlite3_close(h) != SQLITE_OK) {
        // Only unfinalized statements cause this; close once the last one is finalized.
        (void) sqlite3_close_v2(h);
    }
    db->impl = NULL;
}

static int s_exec_script(coord_db_t *db, const char *sql, jf_err_t *err)
{
    char *msg = NULL;
    if (sqlite3_exec(s_handle(db), sql, NULL, NULL, &msg) == SQLITE_OK) {
        return 0;
    }
    int code = sqlite3_extended_errcode(s_handle(db));
    coord_db_errclass_t cls = s_class(code);
    int ret = coord_db_set_error(db, cls == COORD_DB_ERR_NONE ? COORD_DB_ERR_OTHER : cls, "%s",
                                 msg ? msg : sqlite3_errmsg(s_handle(db)));
    sqlite3_free(msg);
    return jf_err_set(err, ret, "%s: %s", db->target, db->errmsg);
}

static bool s_only_space(const char *p)
{
    for (; p && *p; p++) {
        if (!strchr(" \t\r\n;", *p)) {
            return false;
        }
    }
    return true;
}

static int s_prepare(coord_db_stmt_t *st, jf_err_t *err)
{
    coord_db_t *db = st->db;
    sqlite3_stmt *s = NULL;
    const char *tail = NULL;
    // Persistent: the store prepares each statement once and keeps it (coord_store_stmt.c).
    if (sqlite3_prepare_v3(s_handle(db), st->sql, -1, SQLITE_PREPARE_PERSISTENT, &s, &tail) !=
        SQLITE_OK) {
        int ret = s_fail(db);
        return jf_err_set(err, ret, "%s: preparing a statement: %s", db->target, db->errmsg);
    }
    if (!s || !s_only_space(tail)) {
        (void) sqlite3_finalize(s); // NULL-safe
        (void) coord_db_set_error(db, COORD_DB_ERR_OTHER, "%s (one statement expected): %.80s",
                                  s ? "more than one statement" : "no statement", st->sql);
        return jf_err_set(err, -EINVAL, "%s: preparing a statement: %s", db->target, db->errmsg);
    }
    st->impl = s;
    return 0;
}

static void s_finalize(coord_db_stmt_t *st)
{
    (void) sqlite3_finalize(s_stmt(st)); // it returns the last step's error, reported then
    st->impl = NULL;
}

static int s_bind_null(coord_db_stmt_t *st, int i)
{
    return s_check(st, sqlite3_bind_null(s_stmt(st), i));
}

static int s_bind_int64(coord_db_stmt_t *st, int i, int64_t v)
{
    return s_check(st, sqlite3_bind_int64(s_stmt(st), i, v));
}

static int s_bind_double(coord_db_stmt_t *st, int i, double v)
{
    return s_check(st, sqlite3_bind_double(s_stmt(st), i, v));
}

static int s_bind_text(coord_db_stmt_t *st, int i, const char *text)
{
    return s_check(st, sqlite3_bind_text(s_stmt(st), i, text, -1, SQLITE_TRANSIENT));
}

static int s_bind_blob(coord_db_stmt_t *st, int i, const void *bytes, size_t len)
{
    return s_check(st, sqlite3_bind_blob64(s_stmt(st), i, bytes, len, SQLITE_TRANSIENT));
}

static int s_param_count(const coord_db_stmt_t *st)
{
    return sqlite3_bind_parameter_count(s_stmt(st));
}

static int s_step(coord_db_stmt_t *st)
{
    int rc = sqlite3_step(s_stmt(st));
    if (rc == SQLITE_ROW) {
        return COORD_DB_ROW;
    }
    if (rc == SQLITE_DONE) {
        return COORD_DB_DONE;
    }
    return s_fail(st->db);
}

static void s_reset(coord_db_stmt_t *st)
{
    (void) sqlite3_reset(s_stmt(st)); // it returns the last step's error, reported then
}

static void s_clear_bindings(coord_db_stmt_t *st)
{
    (void) sqlite3_clear_bindings(s_stmt(st)); // always SQLITE_OK
}

static int s_col_count(const coord_db_stmt_t *st)
{
    return sqlite3_column_count(s_stmt(st));
}

static const char *s_col_name(const coord_db_stmt_t *st, int i)
{
    return sqlite3_column_name(s_stmt(st), i);
}

static coord_db_type_t s_col_type(const coord_db_stmt_t *st, int i)
{
    switch (sqlite3_column_type(s_stmt(st), i)) {
    case SQLITE_INTEGER:
        return COORD_DB_T_INT;
    case SQLITE_FLOAT:
        return COORD_DB_T_REAL;
    case SQLITE_TEXT:
        return COORD_DB_T_TEXT;
    case SQLITE_BLOB:
        return COORD_DB_T_BLOB;
    default:
        return COORD_DB_T_NULL;
    }
}

static int64_t s_col_int64(const coord_db_stmt_t *st, int i)
{
    return sqlite3_column_int64(s_stmt(st), i);
}

static double s_col_double(const coord_db_stmt_t *st, int i)
{
    return sqlite3_column_double(s_stmt(st), i);
}

static const char *s_col_text(const coord_db_stmt_t *st, int i)
{
    return (const char *) sqlite3_column_text(s_stmt(st), i);
}

static const void *s_col_blob(const coord_db_stmt_t *st, int i)
{
    return sqlite3_column_blob(s_stmt(st), i);
}

static size_t s_col_bytes(const coord_db_stmt_t *st, int i)
{
    return (size_t) sqlite3_column_bytes(s_stmt(st), i);
}

static int64_t s_changes(const coord_db_t *db)
{
    return sqlite3_changes64(s_handle(db));
}

static bool s_in_transaction(const coord_db_t *db)
{
    return !sqlite3_get_autocommit(s_handle(db));
}

const coord_db_ops_t coord_db_sqlite_ops = {
    .open = s_open,
    .close = s_close,
    .exec_script = s_exec_script,
    .prepare = s_prepare,
    .finalize = s_finalize,
    .bind_null = s_bind_null,
    .bind_int64 = s_bind_int64,
    .bind_double = s_bind_double,
    .bind_text = s_bind_text,
    .bind_blob = s_bind_blob,
    .param_count = s_param_count,
    .step = s_step,
    .reset = s_reset,
    .clear_bindings = s_clear_bindings,
    .col_count = s_col_count,
    .col_name = s_col_name,
    .col_type = s_col_type,
    .col_int64 = s_col_int64,
    .col_double = s_col_double,
    .col_text = s_col_text,
    .col_blob = s_col_blob,
    .col_bytes = s_col_bytes,
    .changes = s_changes,
    .in_transaction = s_in_transaction,
};

struct sqlite3 *coord_db_sqlite(coord_db_t *db)
{
    return db && db->kind == COORD_DB_SQLITE ? s_handle(db) : NULL;
}
