/* Store statement cache and typed binds: every SQL statement is prepared once and kept, keyed by
 * the address of its text; parameters are bound from coord_bind_t lists whose count is checked
 * against the statement's. Not for SQL text itself (the coord_store_*.c of each table). */
#include "coord_store_internal.h"

#include <errno.h>
#include <stdlib.h>

static int s_bind_one(sqlite3_stmt *st, int i, const coord_bind_t *b)
{
    switch (b->type) {
    case COORD_BIND_TEXT:
        return b->text ? sqlite3_bind_text(st, i, b->text, -1, SQLITE_TRANSIENT)
                       : sqlite3_bind_null(st, i);
    case COORD_BIND_INT:
        return sqlite3_bind_int64(st, i, b->i);
    case COORD_BIND_REAL:
        return sqlite3_bind_double(st, i, b->d);
    case COORD_BIND_BLOB:
        return sqlite3_bind_blob64(st, i, b->text, b->i, SQLITE_TRANSIENT);
    default:
        return SQLITE_MISUSE;
    }
}

static int s_bind(coord_store_t *self, sqlite3_stmt *st, const coord_bind_t *binds, jf_err_t *err)
{
    int n = 0;
    while (binds && binds[n].type != COORD_BIND_END) {
        n++;
    }
    int want = sqlite3_bind_parameter_count(st);
    if (n != want) {
        return jf_err_set(err, -EINVAL,
                          "%s: %d values bound to a statement of %d parameters: %.80s", self->path,
                          n, want, sqlite3_sql(st));
    }
    for (int i = 0; i < n; i++) {
        if (s_bind_one(st, i + 1, &binds[i]) != SQLITE_OK) {
            return coord_store_fail(self, err, "binding a parameter");
        }
    }
    return 0;
}

static int s_grow(coord_store_t *self, jf_err_t *err)
{
    if (self->n_stmts < self->cap_stmts) {
        return 0;
    }
    size_t cap = self->cap_stmts ? 2 * self->cap_stmts : 64;
    coord_stmt_slot_t *more = realloc(self->stmts, cap * sizeof *more);
    if (!more) {
        return jf_err_set(err, -ENOMEM, "store: out of memory for the statement cache");
    }
    self->stmts = more;
    self->cap_stmts = cap;
    return 0;
}

static sqlite3_stmt *s_cached(coord_store_t *self, const char *sql, jf_err_t *err)
{
    for (size_t i = 0; i < self->n_stmts; i++) {
        if (self->stmts[i].sql == sql) {
            sqlite3_stmt *st = self->stmts[i].stmt;
            (void)sqlite3_reset(st); // its error was reported by the step that failed
            (void)sqlite3_clear_bindings(st);
            return st;
        }
    }
    if (s_grow(self, err) != 0) {
        return NULL;
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v3(self->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
        coord_store_fail(self, err, "preparing a statement");
        return NULL;
    }
    self->stmts[self->n_stmts++] = (coord_stmt_slot_t){.sql = sql, .stmt = st};
    return st;
}

sqlite3_stmt *coord_store_stmt(coord_store_t *self, const char *sql, const coord_bind_t *binds,
                               jf_err_t *err)
{
    sqlite3_stmt *st = s_cached(self, sql, err);
    if (st && s_bind(self, st, binds, err) != 0) {
        return NULL;
    }
    return st;
}

int coord_store_exec(coord_store_t *self, const char *sql, const coord_bind_t *binds, jf_err_t *err)
{
    sqlite3_stmt *st = coord_store_stmt(self, sql, binds, err);
    if (!st) {
        return -EIO;
    }
    int rc = sqlite3_step(st);
    while (rc == SQLITE_ROW) {
        rc = sqlite3_step(st);
    }
    int ret = rc == SQLITE_DONE ? 0 : coord_store_fail(self, err, "executing a statement");
    (void)sqlite3_reset(st);
    return ret;
}

int coord_store_scalar(coord_store_t *self, const char *sql, const coord_bind_t *binds,
                       int64_t *ret_value, jf_err_t *err)
{
    sqlite3_stmt *st = coord_store_stmt(self, sql, binds, err);
    if (!st) {
        return -EIO;
    }
    int rc = sqlite3_step(st);
    int ret = 0;
    if (rc == SQLITE_ROW) {
        *ret_value = sqlite3_column_int64(st, 0);
    } else if (rc == SQLITE_DONE) {
        ret = -ENOENT;
    } else {
        ret = coord_store_fail(self, err, "querying");
    }
    (void)sqlite3_reset(st);
    return ret;
}

void coord_store_stmts_finalize(coord_store_t *self)
{
    for (size_t i = 0; i < self->n_stmts; i++) {
        sqlite3_finalize(self->stmts[i].stmt);
    }
    free(self->stmts);
    self->stmts = NULL;
    self->n_stmts = self->cap_stmts = 0;
    for (int i = 0; i < COORD_SPEC_SQL_COUNT; i++) {
        sqlite3_free(self->spec_sql[i]);
        self->spec_sql[i] = NULL;
    }
    for (int i = 0; i < COORD_TABLE_COUNT; i++) {
        sqlite3_free(self->table_sql[i]);
        self->table_sql[i] = NULL;
    }
}
