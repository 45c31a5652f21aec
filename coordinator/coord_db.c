/* The database seam's public calls: choose the back end from the target, keep the last error,
 * dispatch everything else through the connection's ops (coord_db_internal.h). */
#include "coord_db_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool coord_db_is_postgres_uri(const char *target)
{
    return target && (strncmp(target, "postgresql://", 13) == 0 ||
                      strncmp(target, "postgres://", 11) == 0);
}

// Replaces the value of each "password=" query parameter in s with "***".
static void s_mask_query_password(char *s, size_t cap)
{
    char *p = strchr(s, '?');
    while (p && (p = strstr(p, "password=")) != NULL) {
        p += 9;
        if (p[-10] != '?' && p[-10] != '&') {
            continue;
        }
        char rest[COORD_DB_TARGET_MAX] = {0};
        (void) snprintf(rest, sizeof rest, "%s", p + strcspn(p, "&"));
        (void) snprintf(p, cap - (size_t) (p - s), "***%s", rest);
    }
}

// Copies a URI for messages with the password of "scheme://user:password@host" as "***".
static void s_mask_userinfo(char *out, size_t cap, const char *target)
{
    const char *scheme_end = strstr(target, "://");
    const char *at = scheme_end ? strchr(scheme_end + 3, '@') : NULL;
    const char *colon = NULL;
    for (const char *p = scheme_end ? scheme_end + 3 : NULL; p && p < at; p++) {
        if (*p == ':') {
            colon = p;
            break;
        }
    }
    if (!colon) {
        (void) snprintf(out, cap, "%s", target);
        return;
    }
    (void) snprintf(out, cap, "%.*s***%s", (int) (colon + 1 - target), target, at);
}

// The target for messages: no password, in the user part or in a "password=" query parameter.
static void s_mask_target(char *out, size_t cap, const char *target)
{
    s_mask_userinfo(out, cap, target);
    s_mask_query_password(out, cap);
}

int coord_db_set_error(coord_db_t *db, coord_db_errclass_t cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void) vsnprintf(db->errmsg, sizeof db->errmsg, fmt, ap);
    va_end(ap);
    db->errclass = cls;
    return cls == COORD_DB_ERR_CORRUPT ? -EBADMSG : -EIO;
}

static const coord_db_ops_t *s_ops_for(const char *target, jf_err_t *err)
{
    if (!coord_db_is_postgres_uri(target)) {
        return &coord_db_sqlite_ops;
    }
#ifdef JF_HAVE_LIBPQ
    (void) err; // only the build without libpq fails here
    return &coord_db_pg_ops;
#else
    jf_err_set(err, -ENOTSUP, "a PostgreSQL store was asked for, but this jetfleet was built "
                              "without libpq (install libpq-dev and rebuild)");
    return NULL;
#endif
}

int coord_db_open(const char *target, bool read_only, coord_db_t **ret_db, jf_err_t *err)
{
    *ret_db = NULL;
    const coord_db_ops_t *ops = s_ops_for(target, err);
    if (!ops) {
        return -ENOTSUP;
    }
    coord_db_t *db = calloc(1, sizeof *db);
    if (!db) {
        return jf_err_set(err, -ENOMEM, "store: out of memory");
    }
    db->ops = ops;
    db->kind = ops == &coord_db_sqlite_ops ? COORD_DB_SQLITE : COORD_DB_POSTGRES;
    db->read_only = read_only;
    s_mask_target(db->target, sizeof db->target, target);
    int rc = ops->open(db, target, read_only, err);
    if (rc != 0) {
        free(db);
        return rc;
    }
    *ret_db = db;
    return 0;
}

void coord_db_close(coord_db_t **db_p)
{
    if (!db_p || !*db_p) {
        return;
    }
    coord_db_t *db = *db_p;
    db->ops->close(db);
    free(db);
    *db_p = NULL;
}

coord_db_kind_t coord_db_kind(const coord_db_t *db)
{
    return db->kind;
}

const char *coord_db_target(const coord_db_t *db)
{
    return db->target;
}

const char *coord_db_errmsg(const coord_db_t *db)
{
    return db->errmsg[0] ? db->errmsg : "no error";
}

coord_db_errclass_t coord_db_errclass(const coord_db_t *db)
{
    return db->errclass;
}

int coord_db_exec_script(coord_db_t *db, const char *sql, jf_err_t *err)
{
    return db->ops->exec_script(db, sql, err);
}

coord_db_stmt_t *coord_db_prepare(coord_db_t *db, const char *sql, jf_err_t *err)
{
    coord_db_stmt_t *st = calloc(1, sizeof *st);
    char *copy = strdup(sql);
    if (!st || !copy) {
        free(st);
        free(copy);
        jf_err_set(err, -ENOMEM, "%s: out of memory preparing a statement", db->target);
        return NULL;
    }
    st->db = db;
    st->sql = copy;
    if (db->ops->prepare(st, err) != 0) {
        free(st->sql);
        free(st);
        return NULL;
    }
    return st;
}

int coord_db_bind_null(coord_db_stmt_t *st, int i)
{
    return st->db->ops->bind_null(st, i);
}

int coord_db_bind_int64(coord_db_stmt_t *st, int i, int64_t v)
{
    return st->db->ops->bind_int64(st, i, v);
}

int coord_db_bind_double(coord_db_stmt_t *st, int i, double v)
{
    return v != v ? st->db->ops->bind_null(st, i) : st->db->ops->bind_double(st, i, v);
}

int coord_db_bind_text(coord_db_stmt_t *st, int i, const char *text)
{
    return text ? st->db->ops->bind_text(st, i, text) : st->db->ops->bind_null(st, i);
}

int coord_db_bind_blob(coord_db_stmt_t *st, int i, const void *bytes, size_t len)
{
    return st->db->ops->bind_blob(st, i, bytes, len);
}

int coord_db_param_count(const coord_db_stmt_t *st)
{
    return st->db->ops->param_count(st);
}

int coord_db_step(coord_db_stmt_t *st)
{
    return st->db->ops->step(st);
}

void coord_db_reset(coord_db_stmt_t *st)
{
    st->db->ops->reset(st);
}

void coord_db_clear_bindings(coord_db_stmt_t *st)
{
    st->db->ops->clear_bindings(st);
}

void coord_db_finalize(coord_db_stmt_t *st)
{
    if (!st) {
        return;
    }
    st->db->ops->finalize(st);
    free(st->sql);
    free(st);
}

int coord_db_col_count(const coord_db_stmt_t *st)
{
    return st->db->ops->col_count(st);
}

const char *coord_db_col_name(const coord_db_stmt_t *st, int i)
{
    return st->db->ops->col_name(st, i);
}

bool coord_db_col_is_null(const coord_db_stmt_t *st, int i)
{
    return st->db->ops->col_type(st, i) == COORD_DB_T_NULL;
}

coord_db_type_t coord_db_col_type(const coord_db_stmt_t *st, int i)
{
    return st->db->ops->col_type(st, i);
}

int64_t coord_db_col_int64(const coord_db_stmt_t *st, int i)
{
    return st->db->ops->col_int64(st, i);
}

double coord_db_col_double(const coord_db_stmt_t *st, int i)
{
    return st->db->ops->col_double(st, i);
}

const char *coord_db_col_text(const coord_db_stmt_t *st, int i)
{
    return st->db->ops->col_text(st, i);
}

const void *coord_db_col_blob(const coord_db_stmt_t *st, int i)
{
    return st->db->ops->col_blob(st, i);
}

size_t coord_db_col_bytes(const coord_db_stmt_t *st, int i)
{
    return st->db->ops->col_bytes(st, i);
}

const char *coord_db_sql(const coord_db_stmt_t *st)
{
    return st->sql;
}

int64_t coord_db_changes(const coord_db_t *db)
{
    return db->ops->changes(db);
}

bool coord_db_in_transaction(const coord_db_t *db)
{
    return db->ops->in_transaction(db);
}
