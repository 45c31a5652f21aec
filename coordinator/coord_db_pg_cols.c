/* The PostgreSQL back end's column readers (coord_db_pg_internal.h): results come back as text
 * and are typed from the column's OID as coord_db.h says; values read as SQLite would give them
 * (booleans 1 and 0, a real truncated to an integer, a bytea decoded to its bytes). */
#include "coord_db_pg_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void coord_db_pg_forget_row(coord_db_pg_stmt_t *s)
{
    int n = s->res ? PQnfields(s->res) : 0;
    for (int i = 0; s->decoded && i < n; i++) {
        free(s->decoded[i]);
        s->decoded[i] = NULL;
    }
}

// True when column i of the current row exists and is not NULL.
static bool s_has_value(const coord_db_pg_stmt_t *s, int i)
{
    return s->res && s->row >= 0 && s->row < PQntuples(s->res) && i >= 0 && i < PQnfields(s->res) &&
           !PQgetisnull(s->res, s->row, i);
}

// The result's columns: the current result's, or before the first step the prepared
// statement's. A statement typed by its binds is prepared here with the binds so far (as SQLite
// names a statement's columns before it runs); a failure leaves its error on the connection.
static const PGresult *s_columns(const coord_db_stmt_t *st)
{
    coord_db_pg_stmt_t *s = st->impl;
    if (!s->res && s->typed_by_binds && !s->prepared) {
        // The ops take the statement const for reads; it is a heap object that coord_db.c
        // owns, never const itself.
        (void) coord_db_pg_prepare_typed((coord_db_stmt_t *) st);
    }
    return s->res ? s->res : s->desc;
}

int coord_db_pg_col_count(const coord_db_stmt_t *st)
{
    const PGresult *r = s_columns(st);
    return r ? PQnfields(r) : 0;
}

const char *coord_db_pg_col_name(const coord_db_stmt_t *st, int i)
{
    const PGresult *r = s_columns(st);
    return r && i >= 0 && i < PQnfields(r) ? PQfname(r, i) : NULL;
}

coord_db_type_t coord_db_pg_col_type(const coord_db_stmt_t *st, int i)
{
    const coord_db_pg_stmt_t *s = st->impl;
    if (!s_has_value(s, i)) {
        return COORD_DB_T_NULL;
    }
    switch (PQftype(s->res, i)) {
    case COORD_DB_PG_OID_BOOL:
    case COORD_DB_PG_OID_INT2:
    case COORD_DB_PG_OID_INT4:
    case COORD_DB_PG_OID_INT8:
        return COORD_DB_T_INT;
    case COORD_DB_PG_OID_FLOAT4:
    case COORD_DB_PG_OID_FLOAT8:
    case COORD_DB_PG_OID_NUMERIC:
        return COORD_DB_T_REAL;
    case COORD_DB_PG_OID_BYTEA:
        return COORD_DB_T_BLOB;
    default:
        return COORD_DB_T_TEXT;
    }
}

static bool s_is_bool(const coord_db_pg_stmt_t *s, int i)
{
    return PQftype(s->res, i) == COORD_DB_PG_OID_BOOL;
}

// A value's text as SQLite would give it (booleans as 1 and 0); NULL for a NULL column.
static const char *s_value(const coord_db_pg_stmt_t *s, int i)
{
    if (!s_has_value(s, i)) {
        return NULL;
    }
    const char *v = PQgetvalue(s->res, s->row, i);
    return s_is_bool(s, i) ? (v[0] == 't' ? "1" : "0") : v;
}

double coord_db_pg_col_double(const coord_db_stmt_t *st, int i)
{
    const char *v = s_value(st->impl, i);
    return v ? strtod(v, NULL) : 0.0;
}

// As SQLite's column_int64: an integer's value, a real truncated toward zero (clamped to the
// int64 range), the leading number of a text.
int64_t coord_db_pg_col_int64(const coord_db_stmt_t *st, int i)
{
    const char *v = s_value(st->impl, i);
    if (!v) {
        return 0;
    }
    char *end = NULL;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno == 0 && (*end == '\0' || (*end != '.' && *end != 'e' && *end != 'E'))) {
        return n;
    }
    double d = strtod(v, NULL);
    if (d != d) {
        return 0;
    }
    return d >= 9223372036854775807.0    ? INT64_MAX
           : d <= -9223372036854775808.0 ? INT64_MIN
                                         : (int64_t) d;
}

// Decodes column i's bytea for the current row once, with a NUL after it so that it reads as
// text too (freed when the row changes).
static const unsigned char *s_decoded(const coord_db_stmt_t *st, int i, size_t *ret_len)
{
    coord_db_pg_stmt_t *s = st->impl;
    if (!s->decoded[i]) {
        size_t len = 0;
        unsigned char *raw =
            PQunescapeBytea((const unsigned char *) PQgetvalue(s->res, s->row, i), &len);
        s->decoded[i] = raw ? malloc(len + 1) : NULL;
        if (s->decoded[i]) {
            memcpy(s->decoded[i], raw, len);
            s->decoded[i][len] = '\0';
            s->decoded_len[i] = len;
        }
        PQfreemem(raw);
    }
    *ret_len = s->decoded[i] ? s->decoded_len[i] : 0;
    return s->decoded[i];
}

const void *coord_db_pg_col_blob(const coord_db_stmt_t *st, int i)
{
    size_t len = 0;
    if (coord_db_pg_col_type(st, i) == COORD_DB_T_BLOB) {
        return s_decoded(st, i, &len);
    }
    return s_value(st->impl, i);
}

const char *coord_db_pg_col_text(const coord_db_stmt_t *st, int i)
{
    size_t len = 0;
    if (coord_db_pg_col_type(st, i) == COORD_DB_T_BLOB) {
        return (const char *) s_decoded(st, i, &len); // a blob's text is its bytes, as in SQLite
    }
    return s_value(st->impl, i);
}

size_t coord_db_pg_col_bytes(const coord_db_stmt_t *st, int i)
{
    size_t len = 0;
    coord_db_type_t t = coord_db_pg_col_type(st, i);
    if (t == COORD_DB_T_BLOB) {
        (void) s_decoded(st, i, &len);
        return len;
    }
    const char *v = s_value(st->impl, i);
    return v ? strlen(v) : 0;
}
