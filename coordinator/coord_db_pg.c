/* The PostgreSQL back end of the store's database seam (coord_db.h) over libpq. Statements are
 * rewritten from the store's SQLite dialect (coord_db_sql.h) and prepared under generated names;
 * parameters go as text (blobs as binary), results come back as text and are typed from their
 * columns' OIDs. At open a compat script creates the SQLite functions the store uses that
 * PostgreSQL lacks. Only built with libpq (JF_HAVE_LIBPQ; docs/store.md "PostgreSQL"). */
#include "coord_db_internal.h"
#include "coord_db_sql.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libpq-fe.h>

// Type OIDs from PostgreSQL's catalog (pg_type.dat; fixed across versions).
enum {
    S_OID_BOOL = 16,
    S_OID_BYTEA = 17,
    S_OID_INT8 = 20,
    S_OID_INT2 = 21,
    S_OID_INT4 = 23,
    S_OID_FLOAT4 = 700,
    S_OID_FLOAT8 = 701,
    S_OID_NUMERIC = 1700,
};

// The SQLite functions the store's SQL calls that PostgreSQL does not have (coord_db_sql.h
// lists them), created in the connection's first schema at every open. Values follow SQLite's:
// json_extract gives a string's text, a number's JSON text, 1/0 for true/false, NULL for null or
// a missing path, an object's or array's JSON text; but it always returns text (a PostgreSQL
// function has one return type), where SQLite returns an integer or a real for a number.
// The advisory lock keeps coordinators opening the same database at once from racing on the
// catalog.
static const char s_compat_sql[] =
    "BEGIN;"
    "SELECT pg_advisory_xact_lock(7022136);"
    "CREATE OR REPLACE FUNCTION jf_sqlite_json_path(path text) RETURNS text[]"
    " LANGUAGE plpgsql IMMUTABLE STRICT AS $f$ BEGIN"
    "  IF path !~ '^[$]([.][A-Za-z_][A-Za-z0-9_]*|\\[[0-9]+\\])*$' THEN"
    "   RAISE EXCEPTION 'JSON path ''%'' is not of the form $.a.b[0]', path"
    "    USING ERRCODE = '22023';"
    "  END IF;"
    "  RETURN ARRAY(SELECT coalesce(m[1], m[2]) FROM regexp_matches(path,"
    "   '[.]([A-Za-z_][A-Za-z0-9_]*)|\\[([0-9]+)\\]', 'g') AS m);"
    " END $f$;"
    "CREATE OR REPLACE FUNCTION jf_sqlite_json_value(v json) RETURNS text"
    " LANGUAGE sql IMMUTABLE AS $f$ SELECT CASE json_typeof(v) WHEN 'null' THEN NULL"
    "  WHEN 'string' THEN v #>> '{}'"
    "  WHEN 'boolean' THEN CASE WHEN v::text = 'true' THEN '1' ELSE '0' END"
    "  ELSE v::text END $f$;"
    "CREATE OR REPLACE FUNCTION json_extract(doc text, path text) RETURNS text"
    " LANGUAGE sql IMMUTABLE STRICT AS"
    " $f$ SELECT jf_sqlite_json_value(doc::json #> jf_sqlite_json_path(path)) $f$;"
    "CREATE OR REPLACE FUNCTION json_each(doc text, path text) RETURNS TABLE(key text, value text)"
    " LANGUAGE sql IMMUTABLE STRICT AS $f$"
    " WITH s(v) AS (SELECT doc::json #> jf_sqlite_json_path(path))"
    " SELECT o.key, jf_sqlite_json_value(o.value) FROM s,"
    "  json_each(CASE WHEN json_typeof(s.v) = 'object' THEN s.v END) AS o"
    " UNION ALL SELECT (a.n - 1)::text, jf_sqlite_json_value(a.value) FROM s,"
    "  json_array_elements(CASE WHEN json_typeof(s.v) = 'array' THEN s.v END)"
    "  WITH ORDINALITY AS a(value, n) $f$;"
    "CREATE OR REPLACE FUNCTION json_array_length(doc text, path text) RETURNS bigint"
    " LANGUAGE sql IMMUTABLE STRICT AS $f$"
    " SELECT CASE WHEN v IS NULL THEN NULL WHEN json_typeof(v) = 'array'"
    "  THEN json_array_length(v)::bigint ELSE 0 END"
    " FROM (SELECT doc::json #> jf_sqlite_json_path(path)) AS s(v) $f$;"
    "CREATE OR REPLACE FUNCTION jf_total_bool(s double precision, v boolean)"
    " RETURNS double precision LANGUAGE sql IMMUTABLE STRICT AS"
    " $f$ SELECT s + CASE WHEN v THEN 1 ELSE 0 END $f$;"
    "CREATE OR REPLACE AGGREGATE total(double precision)"
    " (SFUNC = float8pl, STYPE = double precision, INITCOND = '0');"
    "CREATE OR REPLACE AGGREGATE total(boolean)"
    " (SFUNC = jf_total_bool, STYPE = double precision, INITCOND = '0');"
    "CREATE OR REPLACE FUNCTION jf_group_concat_step(acc text, v text, sep text) RETURNS text"
    " LANGUAGE sql IMMUTABLE AS $f$ SELECT CASE WHEN v IS NULL THEN acc WHEN acc IS NULL THEN v"
    "  ELSE acc || coalesce(sep, '') || v END $f$;"
    "CREATE OR REPLACE FUNCTION jf_group_concat_step(acc text, v text) RETURNS text"
    " LANGUAGE sql IMMUTABLE AS $f$ SELECT jf_group_concat_step(acc, v, ',') $f$;"
    "CREATE OR REPLACE AGGREGATE group_concat(text, text)"
    " (SFUNC = jf_group_concat_step, STYPE = text);"
    "CREATE OR REPLACE AGGREGATE group_concat(text) (SFUNC = jf_group_concat_step, STYPE = text);"
    // SQLite's scalar max(a, b) and min(a, b): NULL when either is NULL (greatest/least skip
    // NULLs).
    "CREATE OR REPLACE FUNCTION max(a anycompatible, b anycompatible) RETURNS anycompatible"
    " LANGUAGE sql IMMUTABLE AS"
    " $f$ SELECT CASE WHEN a IS NULL OR b IS NULL THEN NULL ELSE greatest(a, b) END $f$;"
    "CREATE OR REPLACE FUNCTION min(a anycompatible, b anycompatible) RETURNS anycompatible"
    " LANGUAGE sql IMMUTABLE AS"
    " $f$ SELECT CASE WHEN a IS NULL OR b IS NULL THEN NULL ELSE least(a, b) END $f$;"
    "COMMIT;";

typedef struct s_conn {
    PGconn *conn;
    uint64_t next_name; // for generated prepared-statement names
    int64_t changes;    // rows changed by the last INSERT, UPDATE or DELETE
} s_conn_t;

typedef struct s_stmt {
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
} s_stmt_t;

static PGconn *s_pg(const coord_db_t *db)
{
    return ((const s_conn_t *) db->impl)->conn;
}

static coord_db_errclass_t s_class_of(const char *state, bool connection_bad)
{
    if (connection_bad || (state && strncmp(state, "08", 2) == 0) ||
        (state && strcmp(state, "57P01") == 0)) {
        return COORD_DB_ERR_CONNECTION;
    }
    if (!state) {
        return COORD_DB_ERR_OTHER;
    }
    static const struct {
        const char *state;
        size_t n; // the prefix compared: 2 for a class
        coord_db_errclass_t cls;
    } map[] = {
        {"40001", 5, COORD_DB_ERR_BUSY},    {"40P01", 5, COORD_DB_ERR_BUSY},
        {"55P03", 5, COORD_DB_ERR_BUSY},    {"23", 2, COORD_DB_ERR_CONSTRAINT},
        {"53100", 5, COORD_DB_ERR_FULL},    {"XX001", 5, COORD_DB_ERR_CORRUPT},
        {"XX002", 5, COORD_DB_ERR_CORRUPT}, {"25006", 5, COORD_DB_ERR_READONLY},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (strncmp(state, map[i].state, map[i].n) == 0) {
            return map[i].cls;
        }
    }
    return COORD_DB_ERR_OTHER;
}

// Records res's error (or the connection's, when res has none) on db; returns coord_db's code.
static int s_fail(coord_db_t *db, const PGresult *res, const char *doing)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    const char *whole = res ? PQresultErrorMessage(res) : "";
    // An error libpq made itself (no SQLSTATE) may be a write to a closed socket, noticed only
    // once libpq reads from it again. (The connection's own message is read after this.)
    if (!state) {
        (void) PQconsumeInput(s_pg(db));
    }
    const char *text = primary ? primary : whole[0] ? whole : PQerrorMessage(s_pg(db));
    int len = (int) strcspn(text, "\n"); // libpq's messages end in a newline
    bool bad = PQstatus(s_pg(db)) == CONNECTION_BAD;
    return coord_db_set_error(db, s_class_of(state, bad), "%s (SQLSTATE %s)%s: %.*s", doing,
                              state ? state : "none", bad ? ", connection to the server lost" : "",
                              len, text);
}

static int s_fail_err(coord_db_t *db, const PGresult *res, const char *doing, jf_err_t *err)
{
    int rc = s_fail(db, res, doing);
    return jf_err_set(err, rc, "%s: %s", db->target, db->errmsg);
}

// Runs one PostgreSQL-native statement or script with PQexec (no rewriting).
static int s_exec_native(coord_db_t *db, const char *sql, const char *doing, jf_err_t *err)
{
    PGresult *res = PQexec(s_pg(db), sql);
    ExecStatusType st = PQresultStatus(res);
    int rc = 0;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_EMPTY_QUERY) {
        rc = s_fail_err(db, res, doing, err);
        PGresult *rb = PQexec(s_pg(db), "ROLLBACK"); // the compat script's own transaction
        PQclear(rb);
    }
    PQclear(res);
    return rc;
}

// Notices (e.g. "table does not exist, skipping") are informational: the store reports errors.
static void s_ignore_notice(void *arg, const char *message)
{
    (void) arg;
    (void) message;
}

static int s_open(coord_db_t *db, const char *target, bool read_only, jf_err_t *err)
{
    s_conn_t *c = calloc(1, sizeof *c);
    if (!c) {
        return jf_err_set(err, -ENOMEM, "%s: out of memory", db->target);
    }
    db->impl = c;
    c->conn = PQconnectdb(target);
    if (!c->conn || PQstatus(c->conn) != CONNECTION_OK) {
        const char *why = c->conn ? PQerrorMessage(c->conn) : "out of memory";
        int rc = jf_err_set(err, -EIO, "%s: cannot connect: %.*s", db->target,
                            (int) strcspn(why, "\n"), why);
        PQfinish(c->conn);
        free(c);
        db->impl = NULL;
        return rc;
    }
    (void) PQsetNoticeProcessor(c->conn, s_ignore_notice, NULL);
    int rc = s_exec_native(db, s_compat_sql, "creating the SQLite compat functions", err);
    if (rc == 0 && read_only) {
        rc = s_exec_native(db, "SET default_transaction_read_only = on", "setting read-only", err);
    }
    if (rc != 0) {
        PQfinish(c->conn);
        free(c);
        db->impl = NULL;
    }
    return rc;
}

static void s_close(coord_db_t *db)
{
    s_conn_t *c = db->impl;
    if (c) {
        PQfinish(c->conn);
        free(c);
        db->impl = NULL;
    }
}

static void s_forget_row(s_stmt_t *s)
{
    int n = s->res ? PQnfields(s->res) : 0;
    for (int i = 0; s->decoded && i < n; i++) {
        free(s->decoded[i]);
        s->decoded[i] = NULL;
    }
}

static void s_reset(coord_db_stmt_t *st)
{
    s_stmt_t *s = st->impl;
    s_forget_row(s);
    free(s->decoded);
    free(s->decoded_len);
    s->decoded = NULL;
    s->decoded_len = NULL;
    PQclear(s->res);
    s->res = NULL;
    s->row = -1;
}

static void s_clear_bindings(coord_db_stmt_t *st)
{
    s_stmt_t *s = st->impl;
    for (int i = 0; i < s->n_params; i++) {
        free(s->values[i]);
        s->values[i] = NULL;
        s->lengths[i] = 0;
        s->formats[i] = 0;
        s->types[i] = 0;
    }
}

static void s_free_stmt(s_stmt_t *s)
{
    PQclear(s->desc);
    free(s->pg);
    free(s->values);
    free(s->lengths);
    free(s->formats);
    free(s->types);
    free(s->prepared_types);
    free(s);
}

static void s_finalize(coord_db_stmt_t *st)
{
    s_stmt_t *s = st->impl;
    if (!s) {
        return;
    }
    s_reset(st);
    s_clear_bindings(st);
    if (s->prepared && PQstatus(s_pg(st->db)) == CONNECTION_OK) {
        char sql[64] = {0};
        (void) snprintf(sql, sizeof sql, "DEALLOCATE %s", s->name);
        PQclear(PQexec(s_pg(st->db), sql)); // best effort: the server forgets it at disconnect
    }
    s_free_stmt(s);
    st->impl = NULL;
}

static bool s_starts_with_word(const char *sql, const char *word)
{
    sql += strspn(sql, " \t\r\n");
    size_t n = strlen(word);
    return strncasecmp(sql, word, n) == 0 && !isalnum((unsigned char) sql[n]) && sql[n] != '_';
}

static s_stmt_t *s_new_stmt(int n_params)
{
    s_stmt_t *s = calloc(1, sizeof *s);
    size_t n = n_params > 0 ? (size_t) n_params : 1;
    if (s) {
        s->values = calloc(n, sizeof *s->values);
        s->lengths = calloc(n, sizeof *s->lengths);
        s->formats = calloc(n, sizeof *s->formats);
        s->types = calloc(n, sizeof *s->types);
        s->prepared_types = calloc(n, sizeof *s->prepared_types);
        s->n_params = n_params;
        s->row = -1;
    }
    if (s && (!s->values || !s->lengths || !s->formats || !s->types || !s->prepared_types)) {
        s_free_stmt(s);
        return NULL;
    }
    return s;
}

static void s_exec_quiet(coord_db_t *db, const char *sql)
{
    PQclear(PQexec(s_pg(db), sql)); // its failure shows in the statement that follows
}

// PQprepare with types (NULL: the server's choice), and the result's columns. Inside a
// transaction a savepoint keeps a failed prepare from aborting it, as a failed prepare in SQLite
// leaves the transaction alone. Returns the failed result (caller clears) or NULL on success.
static PGresult *s_server_prepare(coord_db_t *db, s_stmt_t *s, const Oid *types)
{
    bool in_tx = PQtransactionStatus(s_pg(db)) == PQTRANS_INTRANS;
    if (in_tx) {
        s_exec_quiet(db, "SAVEPOINT jf_prepare");
    }
    PGresult *res = PQprepare(s_pg(db), s->name, s->pg, s->n_params, types);
    bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    if (ok) {
        PQclear(res);
        res = NULL;
        s->prepared = true;
        PQclear(s->desc);
        s->desc = PQdescribePrepared(s_pg(db), s->name);
    }
    if (in_tx) {
        s_exec_quiet(db, ok ? "RELEASE SAVEPOINT jf_prepare"
                            : "ROLLBACK TO SAVEPOINT jf_prepare; RELEASE SAVEPOINT jf_prepare");
    }
    return res;
}

// True when the server failed to type a parameter from the SQL alone ("?2" alone and in
// "?2 + 1": 42P08; "? IS NULL" alone: 42P18): the binds' types will decide.
static bool s_untyped_parameter(const PGresult *res)
{
    const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
    return state && (strcmp(state, "42P08") == 0 || strcmp(state, "42P18") == 0);
}

static int s_prepare(coord_db_stmt_t *st, jf_err_t *err)
{
    coord_db_t *db = st->db;
    char *pg = NULL;
    int n_params = 0;
    jf_err_t rw_err = {0};
    if (coord_db_sql_is_blank(st->sql, strlen(st->sql))) {
        (void) coord_db_set_error(db, COORD_DB_ERR_OTHER, "preparing '%.100s': no statement",
                                  st->sql);
        return jf_err_set(err, -EINVAL, "%s: %s", db->target, db->errmsg);
    }
    if (coord_db_sql_to_pg(st->sql, strlen(st->sql), &pg, &n_params, &rw_err) != 0) {
        (void) coord_db_set_error(db, COORD_DB_ERR_OTHER, "%s", rw_err.msg);
        return jf_err_set(err, rw_err.code, "%s: %s", db->target, rw_err.msg);
    }
    s_stmt_t *s = s_new_stmt(n_params);
    if (!s) {
        free(pg);
        return jf_err_set(err, -ENOMEM, "%s: out of memory preparing a statement", db->target);
    }
    s_conn_t *c = db->impl;
    (void) snprintf(s->name, sizeof s->name, "jf_%" PRIu64, ++c->next_name);
    s->is_commit = s_starts_with_word(pg, "COMMIT") || s_starts_with_word(pg, "END");
    s->pg = pg;
    PGresult *res = s_server_prepare(db, s, NULL);
    s->typed_by_binds = res && s_untyped_parameter(res);
    int rc = 0;
    if (res && !s->typed_by_binds) {
        char doing[160] = {0};
        (void) snprintf(doing, sizeof doing, "preparing '%.100s'", st->sql);
        rc = s_fail_err(db, res, doing, err);
        s_free_stmt(s);
        s = NULL;
    }
    PQclear(res);
    st->impl = s;
    return rc;
}

static int s_bind_slot(coord_db_stmt_t *st, int i, char *value, int len, Oid type)
{
    s_stmt_t *s = st->impl;
    if (i < 1 || i > s->n_params) {
        free(value);
        (void) coord_db_set_error(st->db, COORD_DB_ERR_OTHER,
                                  "binding parameter %d of '%.100s': out of range 1..%d", i,
                                  st->sql, s->n_params);
        return -ERANGE;
    }
    free(s->values[i - 1]);
    s->values[i - 1] = value;
    s->lengths[i - 1] = len;
    s->formats[i - 1] = type == S_OID_BYTEA ? 1 : 0;
    s->types[i - 1] = type;
    return 0;
}

static int s_bind_null(coord_db_stmt_t *st, int i)
{
    return s_bind_slot(st, i, NULL, 0, 0);
}

static int s_bind_copy(coord_db_stmt_t *st, int i, const char *text, Oid type)
{
    char *copy = strdup(text);
    if (!copy) {
        return -ENOMEM;
    }
    return s_bind_slot(st, i, copy, 0, type);
}

static int s_bind_int64(coord_db_stmt_t *st, int i, int64_t v)
{
    char text[24] = {0};
    (void) snprintf(text, sizeof text, "%" PRId64, v);
    return s_bind_copy(st, i, text, S_OID_INT8);
}

static int s_bind_double(coord_db_stmt_t *st, int i, double v)
{
    char text[32] = {0};
    if (isinf(v)) {
        (void) snprintf(text, sizeof text, "%s", v > 0 ? "Infinity" : "-Infinity");
    } else {
        (void) snprintf(text, sizeof text, "%.17g", v); // exact: round-trips every double
    }
    return s_bind_copy(st, i, text, S_OID_FLOAT8);
}

static int s_bind_text(coord_db_stmt_t *st, int i, const char *text)
{
    return s_bind_copy(st, i, text, 0);
}

static int s_bind_blob(coord_db_stmt_t *st, int i, const void *bytes, size_t len)
{
    if (len > (size_t) INT32_MAX) {
        return -EFBIG;
    }
    char *copy = malloc(len ? len : 1);
    if (!copy) {
        return -ENOMEM;
    }
    if (len) {
        memcpy(copy, bytes, len);
    }
    return s_bind_slot(st, i, copy, (int) len, S_OID_BYTEA);
}

static int s_param_count(const coord_db_stmt_t *st)
{
    return ((const s_stmt_t *) st->impl)->n_params;
}

static bool s_changes_rows(const char *status)
{
    return s_starts_with_word(status, "INSERT") || s_starts_with_word(status, "UPDATE") ||
           s_starts_with_word(status, "DELETE") || s_starts_with_word(status, "MERGE");
}

// Checks a statement's result: 0, or coord_db's code with the error recorded on db. A COMMIT the
// server answered with ROLLBACK (an earlier statement of the transaction failed) is an error.
static int s_check_result(coord_db_t *db, const PGresult *res, bool is_commit)
{
    ExecStatusType status = PQresultStatus(res);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && status != PGRES_EMPTY_QUERY) {
        return s_fail(db, res, "running the statement");
    }
    if (is_commit && strcmp(PQcmdStatus((PGresult *) res), "ROLLBACK") == 0) {
        return coord_db_set_error(db, COORD_DB_ERR_OTHER,
                                  "COMMIT rolled back: a statement in the transaction had failed");
    }
    const char *n = PQcmdTuples((PGresult *) res);
    if (s_changes_rows(PQcmdStatus((PGresult *) res)) && n[0]) {
        ((s_conn_t *) db->impl)->changes = strtoll(n, NULL, 10);
    }
    return 0;
}

// Prepares a statement the server could not type alone with its binds' types.
static int s_prepare_typed(coord_db_stmt_t *st)
{
    s_stmt_t *s = st->impl;
    if (s->prepared) {
        char sql[64] = {0};
        (void) snprintf(sql, sizeof sql, "DEALLOCATE %s", s->name);
        s_exec_quiet(st->db, sql);
        s->prepared = false;
    }
    PGresult *res = s_server_prepare(st->db, s, s->types);
    if (res) {
        int rc = s_fail(st->db, res, "preparing the statement with its parameters' types");
        PQclear(res);
        return rc;
    }
    memcpy(s->prepared_types, s->types, (size_t) s->n_params * sizeof *s->types);
    return 0;
}

// Runs the statement (its first step after a reset); 0 when it produced a result to walk.
static int s_execute(coord_db_stmt_t *st)
{
    s_stmt_t *s = st->impl;
    size_t types_size = (size_t) s->n_params * sizeof *s->types;
    if (s->typed_by_binds &&
        (!s->prepared || memcmp(s->types, s->prepared_types, types_size) != 0)) {
        int rc = s_prepare_typed(st);
        if (rc != 0) {
            return rc;
        }
    }
    s->res = PQexecPrepared(s_pg(st->db), s->name, s->n_params, (const char *const *) s->values,
                            s->lengths, s->formats, 0);
    int rc = s_check_result(st->db, s->res, s->is_commit);
    if (rc != 0) {
        s_reset(st);
        return rc;
    }
    int cols = PQnfields(s->res);
    s->decoded = calloc(cols > 0 ? (size_t) cols : 1, sizeof *s->decoded);
    s->decoded_len = calloc(cols > 0 ? (size_t) cols : 1, sizeof *s->decoded_len);
    if (!s->decoded || !s->decoded_len) {
        s_reset(st);
        return coord_db_set_error(st->db, COORD_DB_ERR_OTHER, "out of memory reading a result");
    }
    return 0;
}

static int s_step(coord_db_stmt_t *st)
{
    s_stmt_t *s = st->impl;
    if (!s->res) {
        int rc = s_execute(st);
        if (rc != 0) {
            return rc;
        }
    }
    s_forget_row(s);
    if (s->row < PQntuples(s->res)) {
        s->row++;
    }
    return s->row < PQntuples(s->res) ? COORD_DB_ROW : COORD_DB_DONE;
}

// True when column i of the current row exists and is not NULL.
static bool s_has_value(const s_stmt_t *s, int i)
{
    return s->res && s->row >= 0 && s->row < PQntuples(s->res) && i >= 0 && i < PQnfields(s->res) &&
           !PQgetisnull(s->res, s->row, i);
}

static int s_col_count(const coord_db_stmt_t *st)
{
    const s_stmt_t *s = st->impl;
    const PGresult *r = s->res ? s->res : s->desc;
    return r ? PQnfields(r) : 0;
}

static const char *s_col_name(const coord_db_stmt_t *st, int i)
{
    const s_stmt_t *s = st->impl;
    const PGresult *r = s->res ? s->res : s->desc;
    return r && i >= 0 && i < PQnfields(r) ? PQfname(r, i) : NULL;
}

static coord_db_type_t s_col_type(const coord_db_stmt_t *st, int i)
{
    const s_stmt_t *s = st->impl;
    if (!s_has_value(s, i)) {
        return COORD_DB_T_NULL;
    }
    switch (PQftype(s->res, i)) {
    case S_OID_BOOL:
    case S_OID_INT2:
    case S_OID_INT4:
    case S_OID_INT8:
        return COORD_DB_T_INT;
    case S_OID_FLOAT4:
    case S_OID_FLOAT8:
    case S_OID_NUMERIC:
        return COORD_DB_T_REAL;
    case S_OID_BYTEA:
        return COORD_DB_T_BLOB;
    default:
        return COORD_DB_T_TEXT;
    }
}

static bool s_is_bool(const s_stmt_t *s, int i)
{
    return PQftype(s->res, i) == S_OID_BOOL;
}

// A value's text as SQLite would give it (booleans as 1 and 0); NULL for a NULL column.
static const char *s_value(const s_stmt_t *s, int i)
{
    if (!s_has_value(s, i)) {
        return NULL;
    }
    const char *v = PQgetvalue(s->res, s->row, i);
    return s_is_bool(s, i) ? (v[0] == 't' ? "1" : "0") : v;
}

static double s_col_double(const coord_db_stmt_t *st, int i)
{
    const char *v = s_value(st->impl, i);
    return v ? strtod(v, NULL) : 0.0;
}

// As SQLite's column_int64: an integer's value, a real truncated toward zero (clamped to the
// int64 range), the leading number of a text.
static int64_t s_col_int64(const coord_db_stmt_t *st, int i)
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
    s_stmt_t *s = st->impl;
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

static const void *s_col_blob(const coord_db_stmt_t *st, int i)
{
    size_t len = 0;
    if (s_col_type(st, i) == COORD_DB_T_BLOB) {
        return s_decoded(st, i, &len);
    }
    return s_value(st->impl, i);
}

static const char *s_col_text(const coord_db_stmt_t *st, int i)
{
    size_t len = 0;
    if (s_col_type(st, i) == COORD_DB_T_BLOB) {
        return (const char *) s_decoded(st, i, &len); // a blob's text is its bytes, as in SQLite
    }
    return s_value(st->impl, i);
}

static size_t s_col_bytes(const coord_db_stmt_t *st, int i)
{
    size_t len = 0;
    coord_db_type_t t = s_col_type(st, i);
    if (t == COORD_DB_T_BLOB) {
        (void) s_decoded(st, i, &len);
        return len;
    }
    const char *v = s_value(st->impl, i);
    return v ? strlen(v) : 0;
}

static int64_t s_changes(const coord_db_t *db)
{
    return ((const s_conn_t *) db->impl)->changes;
}

static bool s_in_transaction(const coord_db_t *db)
{
    PGTransactionStatusType t = PQtransactionStatus(s_pg(db));
    return t == PQTRANS_INTRANS || t == PQTRANS_INERROR || t == PQTRANS_ACTIVE;
}

// Rewrites and runs one statement of a script (no parameters: one round trip, no prepare).
static int s_exec_one(coord_db_t *db, const char *sql, size_t len, jf_err_t *err)
{
    char *pg = NULL;
    int n_params = 0;
    jf_err_t rw_err = {0};
    if (coord_db_sql_to_pg(sql, len, &pg, &n_params, &rw_err) != 0) {
        (void) coord_db_set_error(db, COORD_DB_ERR_OTHER, "%s", rw_err.msg);
        return jf_err_set(err, rw_err.code, "%s: %s", db->target, rw_err.msg);
    }
    if (n_params > 0) {
        free(pg);
        (void) coord_db_set_error(db, COORD_DB_ERR_OTHER, "a script's statement has parameters");
        return jf_err_set(err, -EINVAL, "%s: '%.*s': %s", db->target, (int) (len > 100 ? 100 : len),
                          sql, db->errmsg);
    }
    PGresult *res = PQexec(s_pg(db), pg); // NULL (out of memory) reads as a fatal error
    int rc =
        s_check_result(db, res, s_starts_with_word(pg, "COMMIT") || s_starts_with_word(pg, "END"));
    PQclear(res);
    free(pg);
    if (rc != 0) {
        (void) jf_err_set(err, rc, "%s: '%.*s': %s", db->target, (int) (len > 100 ? 100 : len), sql,
                          db->errmsg);
    }
    return rc;
}

// Like sqlite3_exec: each statement in turn, rewritten, stopping at the first error.
static int s_exec_script(coord_db_t *db, const char *sql, jf_err_t *err)
{
    for (const char *p = sql; *p;) {
        size_t len = coord_db_sql_statement_len(p);
        if (!coord_db_sql_is_blank(p, len)) {
            int rc = s_exec_one(db, p, len, err);
            if (rc != 0) {
                return rc;
            }
        }
        p += len;
    }
    return 0;
}

const coord_db_ops_t coord_db_pg_ops = {
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
    .col_bytes = s_col_bytes,
    .col_blob = s_col_blob,
    .changes = s_changes,
    .in_transaction = s_in_transaction,
};
