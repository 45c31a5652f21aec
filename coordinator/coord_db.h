/* The store's database seam: one connection and its statements, on SQLite (the embedded
 * default, a file path) or PostgreSQL (libpq, a "postgresql://" or "postgres://" URI). The
 * coord_store*.c files talk to the database only through this header, so every query runs on
 * both back ends. SQL is written in the SQLite dialect the store has always used; the PostgreSQL
 * back end rewrites it before preparing (coord_db_sql.h says which forms it rewrites).
 * Not for the agent's spool, which stays SQLite (agent/session/agent_spool_db.c). */
#ifndef COORD_DB_H
#define COORD_DB_H

#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct coord_db coord_db_t;
typedef struct coord_db_stmt coord_db_stmt_t;

typedef enum coord_db_kind {
    COORD_DB_SQLITE = 0,
    COORD_DB_POSTGRES,
} coord_db_kind_t;

// What coord_db_step returns besides a negative errno.
enum { COORD_DB_DONE = 0, COORD_DB_ROW = 1 };

// The class of the last error on a connection (coord_db_errclass), for the callers that react to
// one kind: a busy database is retried, a constraint is a duplicate, corrupt asks for a salvage.
typedef enum coord_db_errclass {
    COORD_DB_ERR_NONE = 0,
    COORD_DB_ERR_OTHER,
    COORD_DB_ERR_BUSY,       // SQLITE_BUSY/LOCKED; PostgreSQL 40001, 40P01, 55P03
    COORD_DB_ERR_CONSTRAINT, // SQLITE_CONSTRAINT; PostgreSQL class 23
    COORD_DB_ERR_FULL,       // SQLITE_FULL; PostgreSQL 53100
    COORD_DB_ERR_CORRUPT,    // SQLITE_CORRUPT/NOTADB; PostgreSQL XX001, XX002
    COORD_DB_ERR_READONLY,   // SQLITE_READONLY; PostgreSQL 25006
    COORD_DB_ERR_CONNECTION, // PostgreSQL: the server went away (class 08, CONNECTION_BAD)
} coord_db_errclass_t;

// True when target names a PostgreSQL database ("postgresql://..." or "postgres://...").
bool coord_db_is_postgres_uri(const char *target);

// Opens target: a PostgreSQL URI, or else a SQLite file path (created when !read_only). On
// SQLite, read_only opens the file read-only; on PostgreSQL it sets the session read-only
// (default_transaction_read_only). Returns 0, or a negative errno with err saying which target
// and why (a URI's password is never printed).
int coord_db_open(const char *target, bool read_only, coord_db_t **ret_db, jf_err_t *err);

// Closes the connection. Finalize its statements first (the store's cache does). NULL-safe; sets
// *db_p to NULL.
void coord_db_close(coord_db_t **db_p);

coord_db_kind_t coord_db_kind(const coord_db_t *db);

// The target for messages: the file path, or the URI with any password replaced by "***".
const char *coord_db_target(const coord_db_t *db);

// The last error's text and class on this connection (after a failed call).
const char *coord_db_errmsg(const coord_db_t *db);
coord_db_errclass_t coord_db_errclass(const coord_db_t *db);

// Runs one or more ;-separated statements without parameters (schema scripts, BEGIN, COMMIT).
int coord_db_exec_script(coord_db_t *db, const char *sql, jf_err_t *err);

// Prepares one statement. Parameters are written "?" or "?N" (1-based). NULL on failure, with
// err. The statement belongs to db: finalize it before closing db.
coord_db_stmt_t *coord_db_prepare(coord_db_t *db, const char *sql, jf_err_t *err);

// Binds parameter i (1-based). Text and blobs are copied. Return 0 or a negative errno.
int coord_db_bind_null(coord_db_stmt_t *st, int i);
int coord_db_bind_int64(coord_db_stmt_t *st, int i, int64_t v);
int coord_db_bind_double(coord_db_stmt_t *st, int i, double v); // NaN binds NULL
int coord_db_bind_text(coord_db_stmt_t *st, int i, const char *text); // NULL binds NULL
int coord_db_bind_blob(coord_db_stmt_t *st, int i, const void *bytes, size_t len);
int coord_db_param_count(const coord_db_stmt_t *st);

// Runs the statement on its first call after a reset and moves to the next row: COORD_DB_ROW
// (a row is readable), COORD_DB_DONE, or a negative errno (coord_db_errmsg says why).
int coord_db_step(coord_db_stmt_t *st);

// Forgets the current result so the statement can run again (binds are kept until cleared).
void coord_db_reset(coord_db_stmt_t *st);
void coord_db_clear_bindings(coord_db_stmt_t *st);
void coord_db_finalize(coord_db_stmt_t *st); // NULL-safe

// A column's type in the current row: SQLite's storage class; on PostgreSQL from the column's
// type (int2/int4/int8/bool: INT, float4/float8/numeric: REAL, bytea: BLOB, else TEXT).
typedef enum coord_db_type {
    COORD_DB_T_NULL = 0,
    COORD_DB_T_INT,
    COORD_DB_T_REAL,
    COORD_DB_T_TEXT,
    COORD_DB_T_BLOB,
} coord_db_type_t;

// The current row's columns (0-based), valid until the next step or reset. A NULL column reads
// as 0, 0.0, NULL text and NULL blob; coord_db_col_is_null tells NULL from 0.
int coord_db_col_count(const coord_db_stmt_t *st);
const char *coord_db_col_name(const coord_db_stmt_t *st, int i);
bool coord_db_col_is_null(const coord_db_stmt_t *st, int i);
coord_db_type_t coord_db_col_type(const coord_db_stmt_t *st, int i);
int64_t coord_db_col_int64(const coord_db_stmt_t *st, int i);
double coord_db_col_double(const coord_db_stmt_t *st, int i);
const char *coord_db_col_text(const coord_db_stmt_t *st, int i);
const void *coord_db_col_blob(const coord_db_stmt_t *st, int i);
size_t coord_db_col_bytes(const coord_db_stmt_t *st, int i);

// The statement's SQL as written (for messages).
const char *coord_db_sql(const coord_db_stmt_t *st);

// Rows changed by the last INSERT, UPDATE or DELETE run on db.
int64_t coord_db_changes(const coord_db_t *db);

// True while a transaction is open on db.
bool coord_db_in_transaction(const coord_db_t *db);

// SQLite only: the underlying handle, for what has no PostgreSQL counterpart here (the online
// backup API, salvage, registering the telemetry SQL function). NULL on PostgreSQL.
struct sqlite3 *coord_db_sqlite(coord_db_t *db);

#endif
