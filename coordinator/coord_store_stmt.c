/* Store statement cache and typed binds: every SQL statement is prepared once and kept, keyed by
 * the address of its text; parameters are bound from coord_bind_t lists whose count is checked
 * against the statement's. Not for SQL text itself (the coord_store_*.c of each table). */
#include "coord_store_internal.h"

#include <errno.h>
#include <sqlite3.h> // sqlite3_free: the built SQL is an sqlite3_str string
#include <stdlib.h>

static int s_bind_one(coord_db_stmt_t *st, int i, const coord_bind_t *b)
{
    switch (b->type) {
    case COORD_BIND_TEXT:
        return coord_db_bind_text(st, i, b->text); // NULL binds NULL
    case COORD_BIND_INT:
        return coord_db_bind_int64(st, i, b->i);
    case COORD_BIND_REAL:
        return coord_db_bind_double(st, i, b->d); // NaN binds NULL
    case COORD_BIND_BLOB:
        return b->text ? coord_db_bind_blob(st, i, b->text, (size_t) b->i)
                       : coord_db_bind_null(st, i);
    default:
        return -EINVAL;
    }
}

static int s_bind(coord_store_t *self, coord_db_stmt_t *st, const coord_bind_t *binds,
                  jf_err_t *err)
{
    int n = 0;
    while (binds && binds[n].type != COORD_BIND_END) {
        n++;
    }
    int want = coord_db_param_count(st);
    if (n != want) {
        return jf_err_set(err, -EINVAL,
                          "%s: %d values bound to a statement of %d parameters: %.80s", self->path,
                          n, want, coord_db_sql(st));
    }
    for (int i = 0; i < n; i++) {
        if (s_bind_one(st, i + 1, &binds[i]) != 0) {
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

static coord_db_stmt_t *s_cached(coord_store_t *self, const char *sql, jf_err_t *err)
{
    for (size_t i = 0; i < self->n_stmts; i++) {
        if (self->stmts[i].sql == sql) {
            coord_db_stmt_t *st = self->stmts[i].stmt;
            coord_db_reset(st); // its error was reported by the step that failed
            coord_db_clear_bindings(st);
            return st;
        }
    }
    if (s_grow(self, err) != 0) {
        return NULL;
    }
    coord_db_stmt_t *st = coord_db_prepare(self->db, sql, NULL);
    if (!st) {
        coord_store_fail(self, err, "preparing a statement");
        return NULL;
    }
    self->stmts[self->n_stmts++] = (coord_stmt_slot_t){.sql = sql, .stmt = st};
    return st;
}

coord_db_stmt_t *coord_store_stmt(coord_store_t *self, const char *sql, const coord_bind_t *binds,
                                  jf_err_t *err)
{
    coord_db_stmt_t *st = s_cached(self, sql, err);
    if (st && s_bind(self, st, binds, err) != 0) {
        return NULL;
    }
    return st;
}

int coord_store_exec(coord_store_t *self, const char *sql, const coord_bind_t *binds, jf_err_t *err)
{
    coord_db_stmt_t *st = coord_store_stmt(self, sql, binds, err);
    if (!st) {
        return -EIO;
    }
    int rc = coord_db_step(st);
    while (rc == COORD_DB_ROW) {
        rc = coord_db_step(st);
    }
    int ret = rc == COORD_DB_DONE ? 0 : coord_store_fail(self, err, "executing a statement");
    coord_db_reset(st);
    return ret;
}

int coord_store_scalar(coord_store_t *self, const char *sql, const coord_bind_t *binds,
                       int64_t *ret_value, jf_err_t *err)
{
    coord_db_stmt_t *st = coord_store_stmt(self, sql, binds, err);
    if (!st) {
        return -EIO;
    }
    int rc = coord_db_step(st);
    int ret = 0;
    if (rc == COORD_DB_ROW) {
        *ret_value = coord_db_col_int64(st, 0);
    } else if (rc == COORD_DB_DONE) {
        ret = -ENOENT;
    } else {
        ret = coord_store_fail(self, err, "querying");
    }
    coord_db_reset(st);
    return ret;
}

void coord_store_stmts_finalize(coord_store_t *self)
{
    for (size_t i = 0; i < self->n_stmts; i++) {
        coord_db_finalize(self->stmts[i].stmt);
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
