/* The PostgreSQL back end of the store's database seam (coord_db.h) over libpq. Statements are
 * rewritten from the store's SQLite dialect (coord_db_sql.h) and prepared under generated names;
 * parameters go as text (blobs as binary), results come back as text and are typed from their
 * columns' OIDs (coord_db_pg_cols.c). At open a compat script creates the SQLite functions the
 * store uses that PostgreSQL lacks (coord_db_pg_compat.c). Only built with libpq (JF_HAVE_LIBPQ;
 * docs/store.md "PostgreSQL"). */
#include "coord_db_pg_internal.h"
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

typedef struct s_conn {
    PGconn *conn;
    uint64_t next_name; // for generated prepared-statement names
    int64_t changes;    // rows changed by the last INSERT, UPDATE or DELETE
} s_conn_t;

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
    // A default connect timeout, so that an unreachable server fails the open instead of
    // hanging it for the system's TCP timeout; the URI's own connect_timeout, expanded from
    // dbname after it, overrides it.
    static const char *const keys[] = {"connect_timeout", "dbname", NULL};
    const char *const values[] = {COORD_DB_PG_CONNECT_TIMEOUT_S, target, NULL};
    c->conn = PQconnectdbParams(keys, values, 1);
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
    int rc = s_exec_native(db, coord_db_pg_compat_sql, "creating the SQLite compat functions", err);
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

static void s_reset(coord_db_stmt_t *st)
{
    coord_db_pg_stmt_t *s = st->impl;
    coord_db_pg_forget_row(s);
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
    coord_db_pg_stmt_t *s = st->impl;
    for (int i = 0; i < s->n_params; i++) {
        free(s->values[i]);
        s->values[i] = NULL;
        s->lengths[i] = 0;
        s->formats[i] = 0;
        s->types[i] = 0;
    }
}

static void s_free_stmt(coord_db_pg_stmt_t *s)
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
    coord_db_pg_stmt_t *s = st->impl;
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

static coord_db_pg_stmt_t *s_new_stmt(int n_params)
{
    coord_db_pg_stmt_t *s = calloc(1, sizeof *s);
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
static PGresult *s_server_prepare(coord_db_t *db, coord_db_pg_stmt_t *s, const Oid *types)
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
    coord_db_pg_stmt_t *s = s_new_stmt(n_params);
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
    coord_db_pg_stmt_t *s = st->impl;
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
    s->formats[i - 1] = type == COORD_DB_PG_OID_BYTEA ? 1 : 0;
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
    return s_bind_copy(st, i, text, COORD_DB_PG_OID_INT8);
}

static int s_bind_double(coord_db_stmt_t *st, int i, double v)
{
    char text[32] = {0};
    if (isinf(v)) {
        (void) snprintf(text, sizeof text, "%s", v > 0 ? "Infinity" : "-Infinity");
    } else {
        (void) snprintf(text, sizeof text, "%.17g", v); // exact: round-trips every double
    }
    return s_bind_copy(st, i, text, COORD_DB_PG_OID_FLOAT8);
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
    return s_bind_slot(st, i, copy, (int) len, COORD_DB_PG_OID_BYTEA);
}

static int s_param_count(const coord_db_stmt_t *st)
{
    return ((const coord_db_pg_stmt_t *) st->impl)->n_params;
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

// s_server_prepare with the binds' types, text where a bind has none (in prepared_types, which
// the caller sets to the binds' types after).
static PGresult *s_server_prepare_as_text(coord_db_t *db, coord_db_pg_stmt_t *s)
{
    for (int i = 0; i < s->n_params; i++) {
        s->prepared_types[i] = s->types[i] ? s->types[i] : COORD_DB_PG_OID_TEXT;
    }
    return s_server_prepare(db, s, s->prepared_types);
}

int coord_db_pg_prepare_typed(coord_db_stmt_t *st)
{
    coord_db_pg_stmt_t *s = st->impl;
    if (s->prepared) {
        char sql[64] = {0};
        (void) snprintf(sql, sizeof sql, "DEALLOCATE %s", s->name);
        s_exec_quiet(st->db, sql);
        s->prepared = false;
    }
    PGresult *res = s_server_prepare(st->db, s, s->types);
    if (res && s_untyped_parameter(res)) {
        // A NULL or text bind where the SQL does not say the type either ("?2 IS NULL OR
        // ?2 = ?2"): as text, the type SQLite compares such a value as.
        PQclear(res);
        res = s_server_prepare_as_text(st->db, s);
    }
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
    coord_db_pg_stmt_t *s = st->impl;
    size_t types_size = (size_t) s->n_params * sizeof *s->types;
    if (s->typed_by_binds &&
        (!s->prepared || memcmp(s->types, s->prepared_types, types_size) != 0)) {
        int rc = coord_db_pg_prepare_typed(st);
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
    coord_db_pg_stmt_t *s = st->impl;
    if (!s->res) {
        int rc = s_execute(st);
        if (rc != 0) {
            return rc;
        }
    }
    coord_db_pg_forget_row(s);
    if (s->row < PQntuples(s->res)) {
        s->row++;
    }
    return s->row < PQntuples(s->res) ? COORD_DB_ROW : COORD_DB_DONE;
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
    .col_count = coord_db_pg_col_count,
    .col_name = coord_db_pg_col_name,
    .col_type = coord_db_pg_col_type,
    .col_int64 = coord_db_pg_col_int64,
    .col_double = coord_db_pg_col_double,
    .col_text = coord_db_pg_col_text,
    .col_bytes = coord_db_pg_col_bytes,
    .col_blob = coord_db_pg_col_blob,
    .changes = s_changes,
    .in_transaction = s_in_transaction,
};
