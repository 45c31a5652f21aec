/* Private to coord_store*.c: the store struct, the statement cache and the bind helpers. */
#ifndef COORD_STORE_INTERNAL_H
#define COORD_STORE_INTERNAL_H

#include "coord_store.h"

#include <sqlite3.h>
#include <stdarg.h>

#define COORD_STMT_CACHE_MAX 64
#define COORD_BUSY_TIMEOUT_MS 5000

typedef struct coord_stmt_slot {
    const char *sql;     // borrowed: a string literal, the cache key (by address)
    sqlite3_stmt *stmt;  // owned
} coord_stmt_slot_t;

struct coord_store {
    sqlite3 *db;                      // owned
    char path[4096];                  // for messages
    bool read_only;
    size_t n_stmts;
    coord_stmt_slot_t stmts[COORD_STMT_CACHE_MAX];
};

// Returns the cached, reset statement for sql (a literal), preparing it on first use; binds the
// arguments described by fmt: 't' const char * (NULL binds NULL), 'i' int64_t, 'd' double.
// NULL on failure with err.
sqlite3_stmt *coord_store_stmt(coord_store_t *self, const char *sql, jf_err_t *err,
                               const char *fmt, ...);

// Prepares/binds like coord_store_stmt and steps to completion (no rows expected).
int coord_store_exec(coord_store_t *self, const char *sql, jf_err_t *err, const char *fmt, ...);

// Runs sql (bound by fmt) expecting one integer in the first column of the first row;
// -ENOENT if no row.
int coord_store_scalar(coord_store_t *self, const char *sql, int64_t *ret_value, jf_err_t *err,
                       const char *fmt, ...);

// Sets err from SQLite's last error, with context; returns -EIO, or -EBADMSG with
// COORD_STORE_CORRUPT_HINT added when SQLite says the file is damaged.
int coord_store_fail(coord_store_t *self, jf_err_t *err, const char *what);

// Migrations to the latest schema (coord_store_schema.c).
int coord_store_migrate(coord_store_t *self, jf_err_t *err);

#endif
