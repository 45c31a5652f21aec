/* Private to coord_db_pg*.c: the PostgreSQL back end's statement, the type OIDs it reads, the
 * column readers (coord_db_pg_cols.c) and the compat script (coord_db_pg_compat.c). */
#ifndef COORD_DB_PG_INTERNAL_H
#define COORD_DB_PG_INTERNAL_H

#include "coord_db_internal.h"

#include <libpq-fe.h>

// Type OIDs from PostgreSQL's catalog (pg_type.dat; fixed across versions).
enum {
    COORD_DB_PG_OID_BOOL = 16,
    COORD_DB_PG_OID_BYTEA = 17,
    COORD_DB_PG_OID_INT8 = 20,
    COORD_DB_PG_OID_INT2 = 21,
    COORD_DB_PG_OID_INT4 = 23,
    COORD_DB_PG_OID_FLOAT4 = 700,
    COORD_DB_PG_OID_FLOAT8 = 701,
    COORD_DB_PG_OID_NUMERIC = 1700,
    COORD_DB_PG_OID_TEXT = 25,
};

typedef struct coord_db_pg_stmt {
    char name[32];           // the prepared statement's name on the server
    char *pg;                // owned: the rewritten SQL
    bool is_commit;          // COMMIT or END: a server answer of ROLLBACK is an error
    bool typed_by_binds;     // the server could not type a parameter alone: prepared at each step
                             // whose bound types differ from the last (prepared_types)
    bool prepared;           // the server holds name
    int n_params;            // the largest parameter number
    char **values;           // n_params entries, owned; NULL binds NULL
    int *lengths;            // n_params entries: a blob's length
    int *formats;            // n_params entries: 0 text, 1 binary (blobs)
    Oid *types;              // n_params entries: the bound values' types (0: the server's choice)
    Oid *prepared_types;     // n_params entries: the types name was prepared with
    PGresult *desc;          // owned: the result's columns as prepared (NULL when typed_by_binds)
    PGresult *res;           // owned: the current result, NULL before the first step
    int row;                 // the current row, -1 before the first
    unsigned char **decoded; // per column of res: the current row's bytea, NUL-terminated, owned
    size_t *decoded_len;     // per column: its length (without the NUL)
} coord_db_pg_stmt_t;

// Seconds a connection may take unless the URI says otherwise (libpq's connect_timeout).
#define COORD_DB_PG_CONNECT_TIMEOUT_S "10"

// The SQL run at every open that creates the SQLite functions the store uses (coord_db_sql.h).
extern const char coord_db_pg_compat_sql[];

// Prepares a statement the server could not type alone (typed_by_binds) with its binds' types,
// text where a bind has none (coord_db_pg.c). Returns 0 or coord_db's code, the error on db.
int coord_db_pg_prepare_typed(coord_db_stmt_t *st);

// Frees the current row's decoded blobs (before the next row, a reset or a finalize).
void coord_db_pg_forget_row(coord_db_pg_stmt_t *s);

// The current row's columns, as coord_db.h's coord_db_col_* (the ops of coord_db_pg_ops).
int coord_db_pg_col_count(const coord_db_stmt_t *st);
const char *coord_db_pg_col_name(const coord_db_stmt_t *st, int i);
coord_db_type_t coord_db_pg_col_type(const coord_db_stmt_t *st, int i);
int64_t coord_db_pg_col_int64(const coord_db_stmt_t *st, int i);
double coord_db_pg_col_double(const coord_db_stmt_t *st, int i);
const char *coord_db_pg_col_text(const coord_db_stmt_t *st, int i);
const void *coord_db_pg_col_blob(const coord_db_stmt_t *st, int i);
size_t coord_db_pg_col_bytes(const coord_db_stmt_t *st, int i);

#endif
