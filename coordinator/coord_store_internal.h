/* Private to coord_store*.c: the store struct, the statement cache and the bind helpers. */
#ifndef COORD_STORE_INTERNAL_H
#define COORD_STORE_INTERNAL_H

#include "coord_db.h"
#include "coord_store.h"

#include <jansson.h>
#include <stdarg.h>

// The statements coord_store_spec.c builds from the schema tables.
typedef enum coord_spec_sql {
    COORD_SPEC_SQL_INSERT = 0, // a new pending run
    COORD_SPEC_SQL_BY_ID,      // a run's spec by id
    COORD_SPEC_SQL_NEXT,       // a board's next pending run
    COORD_SPEC_SQL_EPOCH,      // an epoch record (run, attempt, then its schema's columns)
    COORD_SPEC_SQL_MINIBATCH,  // a minibatch record, the same way
    COORD_SPEC_SQL_COUNT,
} coord_spec_sql_t;

// Telemetry write cache: slots per (run, attempt), direct-mapped by hash, so its memory is
// bounded (a slot holds one parsed layout). A hit saves two queries and the parse of the layout's
// JSON per sample. It holds only committed or current-transaction rows: coord_store_rollback,
// retention and a commit by another connection (PRAGMA data_version, seen at BEGIN) empty it.
#define COORD_TCACHE_SLOTS 4096

typedef struct coord_tcache_slot {
    char run[JF_RUN_ID_LEN + 1]; // "" when the slot is empty
    int64_t attempt;
    int64_t series;      // telemetry_series.id
    int64_t t0_us;       // the series' t0_us
    int64_t layout_n;    // the series' latest layout's n (-1: none cached)
    int64_t layout_t_us; // its t_us
    json_t *layout_base; // owned: its base sample; NULL with layout_n = -1
} coord_tcache_slot_t;

typedef struct coord_stmt_slot {
    const char *sql;       // borrowed: a string literal (or a string the store owns), the cache
                           // key (by address)
    coord_db_stmt_t *stmt; // owned
} coord_stmt_slot_t;

struct coord_store {
    coord_db_t *db;  // owned: SQLite today (coord_db.h)
    char path[4096]; // for messages
    bool read_only;
    size_t n_stmts;                       // statements cached
    size_t cap_stmts;                     // slots allocated; the cache grows, so it cannot overflow
    coord_stmt_slot_t *stmts;             // owned (malloc), n_stmts used
    char *spec_sql[COORD_SPEC_SQL_COUNT]; // owned (sqlite3_malloc): the run spec statements,
                                          // built from the run spec's schema on first use
    char *table_sql[COORD_TABLE_COUNT];   // owned (sqlite3_malloc): coord_store_select's
                                          // queries, built on first use
    coord_tcache_slot_t *tcache;          // owned (calloc on first use): COORD_TCACHE_SLOTS slots
    int64_t data_version;                 // the data version (coord_store_data_version) at the
                                          // last BEGIN
};

// One bound SQL parameter. Build them with coord_text/coord_int/coord_real, whose prototypes
// the compiler checks (the letter strings they replace were not), inside COORD_BINDS(...).
typedef enum coord_bind_type {
    COORD_BIND_END = 0, // ends a list
    COORD_BIND_TEXT,    // text; a NULL text binds NULL
    COORD_BIND_INT,     // int64_t
    COORD_BIND_REAL,    // double; NaN binds NULL (coord_db_bind_double)
    COORD_BIND_BLOB,    // bytes (text points at them, i counts them); NULL bytes bind NULL
} coord_bind_type_t;

typedef struct coord_bind {
    coord_bind_type_t type;
    const char *text; // COORD_BIND_TEXT, _BLOB; borrowed, copied by coord_db at bind time
    int64_t i;        // COORD_BIND_INT; COORD_BIND_BLOB: its length in bytes
    double d;         // COORD_BIND_REAL
} coord_bind_t;

static inline coord_bind_t coord_text(const char *text)
{
    return (coord_bind_t){.type = COORD_BIND_TEXT, .text = text};
}

static inline coord_bind_t coord_int(int64_t v)
{
    return (coord_bind_t){.type = COORD_BIND_INT, .i = v};
}

static inline coord_bind_t coord_real(double v)
{
    return (coord_bind_t){.type = COORD_BIND_REAL, .d = v};
}

static inline coord_bind_t coord_blob(const void *bytes, size_t len)
{
    return (coord_bind_t){.type = COORD_BIND_BLOB, .text = bytes, .i = (int64_t) len};
}

// A COORD_BIND_END-terminated list of binds, in the statement's parameter order.
#define COORD_BINDS(...) ((const coord_bind_t[]){__VA_ARGS__, {.type = COORD_BIND_END}})
#define COORD_NO_BINDS   ((const coord_bind_t *) NULL)

// Returns the cached, reset statement for sql (a literal, or a string the store owns: the cache
// keys by address), preparing it on first use, with binds bound (NULL: none). The number of
// binds must equal the statement's parameters (-EINVAL otherwise). NULL on failure with err.
coord_db_stmt_t *coord_store_stmt(coord_store_t *self, const char *sql, const coord_bind_t *binds,
                                  jf_err_t *err);

// Prepares/binds like coord_store_stmt and steps to completion (rows are skipped).
int coord_store_exec(coord_store_t *self, const char *sql, const coord_bind_t *binds,
                     jf_err_t *err);

// Runs sql expecting one integer in the first column of the first row; -ENOENT if no row.
int coord_store_scalar(coord_store_t *self, const char *sql, const coord_bind_t *binds,
                       int64_t *ret_value, jf_err_t *err);

// Finalizes and frees every cached statement and the built SQL (coord_store_destroy).
void coord_store_stmts_finalize(coord_store_t *self);

// Inserts rec, a record of the schema of statement which (an INSERT), with the binds of lead
// before its columns and those of trail after (both COORD_BIND_END-terminated or NULL).
int coord_store_rec_insert(coord_store_t *self, coord_spec_sql_t which, const coord_bind_t *lead,
                           const void *rec, const coord_bind_t *trail, jf_err_t *err);

// Inserts spec as a pending run (ON CONFLICT(id) DO NOTHING): its schema columns, ord, the
// power label and the creation time (coord_store_spec.c).
int coord_store_spec_insert(coord_store_t *self, const jf_run_spec_t *spec, int64_t ord,
                            jf_err_t *err);

// Adds to runs, as a nullable column, every run spec column that the schema table has and the
// table lacks (a new optional field: NULL reads as absent), so adding a field needs no hand-made
// migration. A required field still needs a migration that fills it. Returns 0 or -EIO.
int coord_store_spec_sync_columns(coord_store_t *self, jf_err_t *err);

// Reads the spec of run id key (COORD_SPEC_SQL_BY_ID) or of board key's next pending run
// (COORD_SPEC_SQL_NEXT) from its columns and validates it. -ENOENT when there is none; -EIO
// when the stored values are not a valid spec.
int coord_store_spec_read(coord_store_t *self, coord_spec_sql_t which, const char *key,
                          jf_run_spec_t *ret_spec, jf_err_t *err);

// Sets err from the connection's last error (coord_db_errmsg), with context; returns -EIO, or
// -EBADMSG with COORD_STORE_CORRUPT_HINT added when it is COORD_DB_ERR_CORRUPT (a damaged file).
int coord_store_fail(coord_store_t *self, jf_err_t *err, const char *what);

// The store's schema version in *ret_version (0: an empty database); -ENOENT when it has none
// (coord_store_schema.c).
int coord_store_user_version(coord_store_t *self, int64_t *ret_version, jf_err_t *err);

// A number that changes when another connection commits to the store (coord_store.c).
int coord_store_data_version(coord_store_t *self, int64_t *ret_version, jf_err_t *err);

// Moves the version-8 telemetry rows (table telemetry_v8, one JSON text row per sample) into
// the typed tables and drops telemetry_v8 (coord_store_telemetry.c; migration 8 -> 9, inside
// its transaction). Returns 0, or -EIO/-EPROTO naming the row that could not be moved.
int coord_store_telemetry_migrate_v8(coord_store_t *self, jf_err_t *err);

// Empties the telemetry write cache (coord_store_telemetry.c); frees it when release is true.
void coord_store_tcache_clear(coord_store_t *self, bool release);

// Migrations to the latest schema (coord_store_schema.c).
int coord_store_migrate(coord_store_t *self, jf_err_t *err);

#endif
