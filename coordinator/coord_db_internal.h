/* Private to coord_db*.c: the connection and statement structs and the back ends' operations.
 * coord_db.c dispatches every public call through the connection's ops; coord_db_sqlite.c and
 * coord_db_pg.c implement them. */
#ifndef COORD_DB_INTERNAL_H
#define COORD_DB_INTERNAL_H

#include "coord_db.h"

#define COORD_DB_TARGET_MAX 1024
#define COORD_DB_ERRMSG_MAX 512

typedef struct coord_db_ops coord_db_ops_t;

struct coord_db {
    const coord_db_ops_t *ops;
    coord_db_kind_t kind;
    bool read_only;
    char target[COORD_DB_TARGET_MAX]; // for messages: the path, or the URI with "***" for a password
    char errmsg[COORD_DB_ERRMSG_MAX]; // the last error's text ("" when none)
    coord_db_errclass_t errclass;     // the last error's class
    void *impl;                       // owned by the back end
};

struct coord_db_stmt {
    coord_db_t *db; // borrowed: the connection it was prepared on
    char *sql;      // owned (malloc): the SQL as written
    void *impl;     // owned by the back end
};

struct coord_db_ops {
    // Connects db->impl to target; on failure fills err and leaves db->impl NULL or freed.
    int (*open)(coord_db_t *db, const char *target, bool read_only, jf_err_t *err);
    void (*close)(coord_db_t *db);
    int (*exec_script)(coord_db_t *db, const char *sql, jf_err_t *err);
    int (*prepare)(coord_db_stmt_t *st, jf_err_t *err); // fills st->impl from st->sql
    void (*finalize)(coord_db_stmt_t *st);
    int (*bind_null)(coord_db_stmt_t *st, int i);
    int (*bind_int64)(coord_db_stmt_t *st, int i, int64_t v);
    int (*bind_double)(coord_db_stmt_t *st, int i, double v);
    int (*bind_text)(coord_db_stmt_t *st, int i, const char *text);
    int (*bind_blob)(coord_db_stmt_t *st, int i, const void *bytes, size_t len);
    int (*param_count)(const coord_db_stmt_t *st);
    int (*step)(coord_db_stmt_t *st);
    void (*reset)(coord_db_stmt_t *st);
    void (*clear_bindings)(coord_db_stmt_t *st);
    int (*col_count)(const coord_db_stmt_t *st);
    const char *(*col_name)(const coord_db_stmt_t *st, int i);
    coord_db_type_t (*col_type)(const coord_db_stmt_t *st, int i);
    int64_t (*col_int64)(const coord_db_stmt_t *st, int i);
    double (*col_double)(const coord_db_stmt_t *st, int i);
    const char *(*col_text)(const coord_db_stmt_t *st, int i);
    const void *(*col_blob)(const coord_db_stmt_t *st, int i);
    size_t (*col_bytes)(const coord_db_stmt_t *st, int i);
    int64_t (*changes)(const coord_db_t *db);
    bool (*in_transaction)(const coord_db_t *db);
};

extern const coord_db_ops_t coord_db_sqlite_ops; // coord_db_sqlite.c
#ifdef JF_HAVE_LIBPQ
extern const coord_db_ops_t coord_db_pg_ops; // coord_db_pg.c
#endif

// Records the connection's last error (the back ends call it on every failure) and returns
// -EIO, or -EBADMSG for COORD_DB_ERR_CORRUPT.
int coord_db_set_error(coord_db_t *db, coord_db_errclass_t cls, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
