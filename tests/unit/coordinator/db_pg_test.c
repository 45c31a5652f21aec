/* Unit tests of the PostgreSQL back end of the store's database seam (coord_db_pg.c) against a
 * real server this process starts (jft_pg.h): the store's SQLite dialect rewritten and run
 * (INSERT OR IGNORE, INTEGER PRIMARY KEY, WITHOUT ROWID, BEGIN IMMEDIATE), the compat functions
 * against SQLite's results for the same statements, types of PostgreSQL-only results, large
 * blobs, a failed transaction's COMMIT, read-only sessions, refused statements, a masked
 * password, and a server that goes away. The seam's general contract is unit.db_postgres. */
#include "coord_db.h"
#include "jft_fs.h"
#include "jft_pg.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static jft_pg_t *s_pg; // the server main starts for every case

static coord_db_t *t_open(bool read_only)
{
    coord_db_t *db = NULL;
    jf_err_t err = {0};
    if (coord_db_open(jft_pg_uri(s_pg), read_only, &db, &err) != 0) {
        fail_msg("opening %s: %s", jft_pg_uri(s_pg), err.msg);
    }
    return db;
}

static void t_exec(coord_db_t *db, const char *sql)
{
    jf_err_t err = {0};
    if (coord_db_exec_script(db, sql, &err) != 0) {
        fail_msg("%s: %s", sql, err.msg);
    }
}

static coord_db_stmt_t *t_prepare(coord_db_t *db, const char *sql)
{
    jf_err_t err = {0};
    coord_db_stmt_t *st = coord_db_prepare(db, sql, &err);
    if (!st) {
        fail_msg("%s: %s", sql, err.msg);
    }
    return st;
}

static int64_t t_scalar(coord_db_t *db, const char *sql)
{
    coord_db_stmt_t *st = t_prepare(db, sql);
    assert_int_equal(coord_db_step(st), COORD_DB_ROW);
    int64_t v = coord_db_col_int64(st, 0);
    coord_db_finalize(st);
    return v;
}

// The store's DDL and DML forms, rewritten by coord_db_sql and run on the server.
static void test_store_dialect_runs(void **state)
{
    (void) state;
    coord_db_t *db = t_open(false);
    t_exec(db, "CREATE TABLE ev(id INTEGER PRIMARY KEY, k TEXT NOT NULL UNIQUE, r REAL,"
               " b BLOB);"
               "CREATE TABLE w(a TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY(a, n))"
               " WITHOUT ROWID;");
    coord_db_stmt_t *ins = t_prepare(db, "INSERT OR IGNORE INTO ev(k, r) VALUES(?, ?)");
    for (int i = 0; i < 2; i++) { // the second is a duplicate: ignored, not an error
        coord_db_reset(ins);
        assert_int_equal(coord_db_bind_text(ins, 1, "one"), 0);
        assert_int_equal(coord_db_bind_double(ins, 2, 0.1), 0);
        assert_int_equal(coord_db_step(ins), COORD_DB_DONE);
        assert_int_equal(coord_db_changes(db), i == 0 ? 1 : 0);
    }
    coord_db_finalize(ins);
    // INTEGER PRIMARY KEY is filled when the INSERT leaves it out, as SQLite's rowid alias.
    assert_int_equal(t_scalar(db, "SELECT id FROM ev WHERE k = 'one'"), 1);
    t_exec(db, "BEGIN IMMEDIATE");
    assert_true(coord_db_in_transaction(db));
    // A 64-bit value through CAST(? AS INTEGER): BIGINT on PostgreSQL.
    coord_db_stmt_t *w = t_prepare(db, "INSERT INTO w(a, n) VALUES(?1, CAST(?2 AS INTEGER))");
    assert_int_equal(coord_db_bind_text(w, 1, "x"), 0);
    assert_int_equal(coord_db_bind_int64(w, 2, INT64_MAX), 0);
    assert_int_equal(coord_db_step(w), COORD_DB_DONE);
    coord_db_finalize(w);
    t_exec(db, "COMMIT");
    assert_false(coord_db_in_transaction(db));
    assert_true(t_scalar(db, "SELECT n FROM w WHERE a = 'x'") == INT64_MAX);
    coord_db_close(&db);
}

// The compat functions and the typed extraction the store can use, on both back ends: every
// column of every row must read the same (numbers compared as numbers).
static const char s_fixture[] =
    "CREATE TABLE j(id INTEGER PRIMARY KEY, doc TEXT NOT NULL);"
    "INSERT INTO j(id, doc) VALUES(1, '{\"a\":{\"b\":1.5,\"i\":12,\"s\":\"x y\",\"t\":true,"
    "\"f\":false,\"n\":null,\"o\":{\"c\":[1,2]},\"arr\":[10,20,30]},"
    "\"cl\":[{\"max_hz\":1000},{\"max_hz\":900},{\"max_hz\":1190}]}');"
    "INSERT INTO j(id, doc) VALUES(2, '{\"a\":{\"b\":-2e3,\"s\":\"\"},\"cl\":[]}');"
    "CREATE TABLE n(x INTEGER, y REAL);"
    "INSERT INTO n(x, y) VALUES(1, 0.5), (2, NULL), (NULL, 2.25), (3, 1e300);"
    "CREATE TABLE g(s TEXT);"
    "INSERT INTO g(s) VALUES('b'), (NULL), ('a'), ('c');"
    "CREATE TABLE m(a INTEGER, b INTEGER);"
    "INSERT INTO m(a, b) VALUES(1, 2), (5, 3), (7, NULL);";

static const char *const s_compat_queries[] = {
    "SELECT json_extract(doc, '$.a.s'), json_extract(doc, '$.a.n'),"
    " json_extract(doc, '$.missing'), json_extract(doc, '$.a.nope.deeper') FROM j ORDER BY id",
    "SELECT json_extract(doc, '$.a.b'), json_extract(doc, '$.a.i'), json_extract(doc, '$.a.t'),"
    " json_extract(doc, '$.a.f') FROM j ORDER BY id",
    "SELECT json_extract(doc, '$.a.arr[1]'), json_extract(doc, '$.a.o'),"
    " json_extract(doc, '$.a.o.c[0]'), json_extract(doc, '$.cl[2].max_hz') FROM j ORDER BY id",
    "SELECT j.id, c.value FROM j, json_each(j.doc, '$.cl') AS c ORDER BY j.id, c.key",
    "SELECT j.id, c.key, c.value FROM j, json_each(j.doc, '$.a.o') AS c ORDER BY j.id, c.key",
    "SELECT j.id, max(CAST(json_extract(c.value, '$.max_hz') AS INTEGER))"
    " FROM j, json_each(j.doc, '$.cl') AS c GROUP BY j.id ORDER BY j.id",
    "SELECT coalesce(CAST(json_extract(doc, '$.a.b') AS REAL), 0),"
    " coalesce(CAST(json_extract(doc, '$.a.i') AS INTEGER), 0),"
    " coalesce(json_extract(doc, '$.a.s'), '') FROM j ORDER BY id",
    // json_tree's ids are SQLite's internal node numbers: compare the order, not the numbers.
    "SELECT j.id, t.key, t.value, t.type, t.atom, t.parent IS NULL, t.fullkey, t.path"
    " FROM j, json_tree(j.doc) AS t ORDER BY j.id, t.id",
    "SELECT j.id, t.fullkey, t.value FROM j, json_tree(j.doc) AS t"
    " WHERE t.type IN ('integer', 'real') AND t.parent IS NOT NULL ORDER BY j.id, t.id",
    "SELECT json_array_length(doc, '$.cl'), json_array_length(doc, '$.a'),"
    " json_array_length(doc, '$.nope') FROM j ORDER BY id",
    "SELECT total(x), total(x > 1), total(y), count(*) FROM n",
    "SELECT total(x), total(y) FROM n WHERE x > 100",
    "SELECT sum(x > 1), sum(x IS NULL), sum(y > 1), sum(x > 100) FROM n",
    "SELECT sum(x > 1) FROM n WHERE x > 100",
    "SELECT group_concat(s, ', '), group_concat(s) FROM (SELECT s FROM g ORDER BY s) AS q",
    "SELECT group_concat(s, ', ') FROM g WHERE s IS NULL",
    "SELECT a, max(a, b), min(a, b), max(a, 4), min(b, 2) FROM m ORDER BY a",
    "SELECT cid, name, pk FROM pragma_table_info('j') ORDER BY cid",
    "SELECT name, \"notnull\", dflt_value IS NULL FROM pragma_table_info('n') ORDER BY cid",
    "SELECT count(*) FROM pragma_table_info('m') WHERE name = 'b'",
};

typedef struct t_pair {
    char dir[PATH_MAX];
    coord_db_t *lite;
    coord_db_t *pg;
} t_pair_t;

static bool t_number(const char *s, double *ret)
{
    char *end = NULL;
    *ret = s && s[0] ? strtod(s, &end) : 0.0;
    return s && s[0] && end && *end == '\0';
}

static void t_same_value(const char *q, int row, int col, const char *lite, const char *pg)
{
    double a = 0, b = 0;
    if (t_number(lite, &a) && t_number(pg, &b)) {
        if (a != b) {
            fail_msg("%s: row %d col %d: SQLite %s, PostgreSQL %s", q, row, col, lite, pg);
        }
        return;
    }
    if ((lite == NULL) != (pg == NULL) || (lite && strcmp(lite, pg) != 0)) {
        fail_msg("%s: row %d col %d: SQLite '%s', PostgreSQL '%s'", q, row, col,
                 lite ? lite : "NULL", pg ? pg : "NULL");
    }
}

static void t_same_rows(const t_pair_t *p, const char *q)
{
    coord_db_stmt_t *a = t_prepare(p->lite, q);
    coord_db_stmt_t *b = t_prepare(p->pg, q);
    int rows = 0;
    for (;; rows++) {
        int ra = coord_db_step(a), rb = coord_db_step(b);
        if (ra != rb) {
            fail_msg("%s: row %d: SQLite step %d (%s), PostgreSQL step %d (%s)", q, rows, ra,
                     coord_db_errmsg(p->lite), rb, coord_db_errmsg(p->pg));
        }
        if (ra != COORD_DB_ROW) {
            break;
        }
        assert_int_equal(coord_db_col_count(a), coord_db_col_count(b));
        for (int c = 0; c < coord_db_col_count(a); c++) {
            t_same_value(q, rows, c, coord_db_col_text(a, c), coord_db_col_text(b, c));
        }
    }
    assert_true(rows > 0);
    coord_db_finalize(a);
    coord_db_finalize(b);
}

static void test_compat_functions_match_sqlite(void **state)
{
    (void) state;
    t_pair_t p = {0};
    assert_int_equal(jft_tmpdir_new_sized(p.dir, sizeof p.dir), 0);
    char path[PATH_MAX + 16] = {0};
    (void) snprintf(path, sizeof path, "%s/lite.db", p.dir);
    jf_err_t err = {0};
    assert_int_equal(coord_db_open(path, false, &p.lite, &err), 0);
    p.pg = t_open(false);
    t_exec(p.lite, s_fixture);
    t_exec(p.pg, s_fixture);
    for (size_t i = 0; i < sizeof s_compat_queries / sizeof s_compat_queries[0]; i++) {
        t_same_rows(&p, s_compat_queries[i]);
    }
    printf("compat_queries_matched=%zu\n", sizeof s_compat_queries / sizeof s_compat_queries[0]);
    coord_db_close(&p.lite);
    coord_db_close(&p.pg);
    jft_tmpdir_remove(p.dir);
}

// json_extract returns text on PostgreSQL (one return type per function): a bad path is an error
// that says which, not a silent NULL.
static void test_json_extract_bad_path_is_an_error(void **state)
{
    (void) state;
    coord_db_t *db = t_open(false);
    coord_db_stmt_t *st = t_prepare(db, "SELECT json_extract('{\"a\":1}', 'a.b')");
    assert_true(coord_db_step(st) < 0);
    assert_non_null(strstr(coord_db_errmsg(db), "'a.b' is not of the form $.a.b[0]"));
    coord_db_finalize(st);
    coord_db_close(&db);
}

// Results only PostgreSQL gives: booleans read as SQLite's 1 and 0, numeric as REAL.
static void test_postgres_result_types(void **state)
{
    (void) state;
    coord_db_t *db = t_open(false);
    coord_db_stmt_t *st =
        t_prepare(db, "SELECT 1 < 2, 2 < 1, CAST(2.5 AS NUMERIC), sum(x), CAST(7 AS SMALLINT)"
                      " FROM (SELECT 40 AS x UNION ALL SELECT 2) AS q");
    assert_int_equal(coord_db_step(st), COORD_DB_ROW);
    assert_int_equal(coord_db_col_type(st, 0), COORD_DB_T_INT);
    assert_int_equal(coord_db_col_int64(st, 0), 1);
    assert_string_equal(coord_db_col_text(st, 0), "1");
    assert_int_equal(coord_db_col_int64(st, 1), 0);
    assert_int_equal(coord_db_col_type(st, 2), COORD_DB_T_REAL);
    assert_true(coord_db_col_double(st, 2) == 2.5);
    assert_int_equal(coord_db_col_int64(st, 2), 2); // truncated, as SQLite reads a real
    assert_int_equal(coord_db_col_int64(st, 3), 42);
    assert_int_equal(coord_db_col_type(st, 4), COORD_DB_T_INT);
    assert_int_equal(coord_db_col_int64(st, 4), 7);
    coord_db_finalize(st);
    coord_db_close(&db);
}

// Parameters PostgreSQL cannot type from the SQL alone take their binds' types, text for a NULL
// or text bind (the store's optional filters: "?2 IS NULL OR ?2 = ?2").
static void test_parameters_typed_from_binds(void **state)
{
    (void) state;
    coord_db_t *db = t_open(false);
    coord_db_stmt_t *st = t_prepare(db, "SELECT ?1 IS NULL, (?2 IS NULL OR ?2 = ?2), ?3 + 1");
    assert_int_equal(coord_db_bind_null(st, 1), 0);
    assert_int_equal(coord_db_bind_text(st, 2, "x"), 0);
    assert_int_equal(coord_db_bind_int64(st, 3, 41), 0);
    assert_int_equal(coord_db_col_count(st), 3); // before the first step, as in SQLite
    assert_non_null(coord_db_col_name(st, 2));
    assert_int_equal(coord_db_step(st), COORD_DB_ROW);
    assert_int_equal(coord_db_col_int64(st, 0), 1);
    assert_int_equal(coord_db_col_int64(st, 1), 1);
    assert_int_equal(coord_db_col_int64(st, 2), 42);
    // Other binds' types: prepared again.
    coord_db_reset(st);
    assert_int_equal(coord_db_bind_text(st, 1, "y"), 0);
    assert_int_equal(coord_db_bind_null(st, 2), 0);
    assert_int_equal(coord_db_bind_double(st, 3, 0.5), 0);
    assert_int_equal(coord_db_step(st), COORD_DB_ROW);
    assert_int_equal(coord_db_col_int64(st, 0), 0);
    assert_int_equal(coord_db_col_int64(st, 1), 1);
    assert_true(coord_db_col_double(st, 2) == 1.5);
    coord_db_finalize(st);
    coord_db_close(&db);
}

static void test_large_blob_with_zero_bytes(void **state)
{
    (void) state;
    coord_db_t *db = t_open(false);
    t_exec(db, "CREATE TABLE lb(k INTEGER PRIMARY KEY, data BLOB NOT NULL)");
    size_t n = (size_t) 1 << 20;
    unsigned char *bytes = malloc(n);
    assert_non_null(bytes);
    for (size_t i = 0; i < n; i++) {
        bytes[i] = (unsigned char) ((i * 2654435761u) >> 13); // every byte value, zeros too
    }
    coord_db_stmt_t *ins = t_prepare(db, "INSERT INTO lb(data) VALUES(?) RETURNING k");
    assert_int_equal(coord_db_bind_blob(ins, 1, bytes, n), 0);
    assert_int_equal(coord_db_step(ins), COORD_DB_ROW);
    coord_db_finalize(ins);
    coord_db_stmt_t *sel = t_prepare(db, "SELECT data, substr(data, ? + 1, ?) FROM lb");
    assert_int_equal(coord_db_bind_int64(sel, 1, 1000), 0);
    assert_int_equal(coord_db_bind_int64(sel, 2, 64), 0);
    assert_int_equal(coord_db_step(sel), COORD_DB_ROW);
    assert_int_equal(coord_db_col_type(sel, 0), COORD_DB_T_BLOB);
    assert_int_equal(coord_db_col_bytes(sel, 0), n);
    assert_memory_equal(coord_db_col_blob(sel, 0), bytes, n);
    assert_int_equal(coord_db_col_bytes(sel, 1), 64);
    assert_memory_equal(coord_db_col_blob(sel, 1), bytes + 1000, 64);
    coord_db_finalize(sel);
    free(bytes);
    coord_db_close(&db);
}

// PostgreSQL aborts a transaction at its first failed statement; its COMMIT then rolls back.
// That must reach the caller as an error, never as a silent loss of the transaction's rows.
static void test_commit_of_failed_transaction_is_an_error(void **state)
{
    (void) state;
    coord_db_t *db = t_open(false);
    t_exec(db, "CREATE TABLE ft(k TEXT PRIMARY KEY)");
    t_exec(db, "BEGIN; INSERT INTO ft(k) VALUES('a');");
    jf_err_t err = {0};
    assert_true(coord_db_exec_script(db, "INSERT INTO ft(k) VALUES('a')", &err) < 0);
    assert_int_equal(coord_db_errclass(db), COORD_DB_ERR_CONSTRAINT);
    coord_db_stmt_t *commit = t_prepare(db, "COMMIT");
    assert_true(coord_db_step(commit) < 0);
    assert_non_null(strstr(coord_db_errmsg(db), "COMMIT rolled back"));
    coord_db_finalize(commit);
    assert_false(coord_db_in_transaction(db));
    // The same through a script.
    t_exec(db, "BEGIN; INSERT INTO ft(k) VALUES('b');");
    assert_true(coord_db_exec_script(db, "INSERT INTO ft(k) VALUES('b')", &err) < 0);
    assert_true(coord_db_exec_script(db, "COMMIT", &err) < 0);
    assert_non_null(strstr(err.msg, "COMMIT rolled back"));
    assert_int_equal(t_scalar(db, "SELECT count(*) FROM ft"), 0);
    coord_db_close(&db);
}

static void test_read_only_session(void **state)
{
    (void) state;
    coord_db_t *rw = t_open(false);
    t_exec(rw, "CREATE TABLE ro(x INTEGER)");
    coord_db_close(&rw);
    coord_db_t *db = t_open(true);
    jf_err_t err = {0};
    assert_true(coord_db_exec_script(db, "INSERT INTO ro(x) VALUES(1)", &err) < 0);
    assert_int_equal(coord_db_errclass(db), COORD_DB_ERR_READONLY);
    printf("read_only_errmsg=%s\n", err.msg);
    assert_int_equal(t_scalar(db, "SELECT count(*) FROM ro"), 0);
    coord_db_close(&db);
}

// The two PRAGMAs the store runs on every back end: user_version is transactional (a migration's
// version commits or rolls back with it); data_version changes when another connection commits.
static void test_store_pragmas(void **state)
{
    (void) state;
    coord_db_t *db = t_open(false);
    coord_db_t *other = t_open(false);
    assert_int_equal(t_scalar(db, "PRAGMA user_version"), 0);
    t_exec(db, "BEGIN IMMEDIATE; PRAGMA user_version = 5; ROLLBACK;");
    assert_int_equal(t_scalar(db, "PRAGMA user_version"), 0);
    t_exec(db, "BEGIN IMMEDIATE; PRAGMA user_version = 7; COMMIT;");
    assert_int_equal(t_scalar(other, "PRAGMA user_version"), 7);
    t_exec(db, "PRAGMA user_version = 8");
    assert_int_equal(t_scalar(other, "PRAGMA user_version"), 8);
    t_exec(db, "CREATE TABLE dv(x INTEGER)");
    int64_t before = t_scalar(db, "PRAGMA data_version");
    assert_int_equal(t_scalar(db, "PRAGMA data_version"), before); // nothing committed since
    t_exec(other, "INSERT INTO dv(x) VALUES(1)");
    int64_t after = t_scalar(db, "PRAGMA data_version");
    printf("data_version_before=%lld data_version_after=%lld\n", (long long) before,
           (long long) after);
    assert_true(after != before);
    coord_db_close(&other);
    coord_db_close(&db);
}

// What coord_db_sql refuses fails at prepare, naming the construct and the database.
static void test_refused_statement(void **state)
{
    (void) state;
    coord_db_t *db = t_open(false);
    jf_err_t err = {0};
    assert_null(coord_db_prepare(db, "PRAGMA journal_mode=WAL", &err));
    assert_int_equal(err.code, -EINVAL);
    assert_non_null(strstr(err.msg, "cannot rewrite PRAGMA"));
    assert_non_null(strstr(err.msg, coord_db_target(db)));
    assert_true(coord_db_exec_script(db, "SELECT 1; INSERT OR REPLACE INTO t VALUES(1)", &err) < 0);
    assert_non_null(strstr(err.msg, "INSERT OR REPLACE"));
    printf("refused_errmsg=%s\n", err.msg);
    coord_db_close(&db);
}

// A connection that fails says which database, with the password masked.
static void test_connect_failure_masks_password(void **state)
{
    (void) state;
    coord_db_t *db = NULL;
    jf_err_t err = {0};
    char uri[PATH_MAX + 128] = {0};
    (void) snprintf(uri, sizeof uri, "postgresql://jfuser:s3cret@/no_such_db?host=%s",
                    jft_pg_dir(s_pg));
    assert_true(coord_db_open(uri, false, &db, &err) < 0);
    assert_null(db);
    assert_null(strstr(err.msg, "s3cret"));
    assert_non_null(strstr(err.msg, "postgresql://jfuser:***@"));
    assert_non_null(strstr(err.msg, "cannot connect"));
    printf("connect_errmsg=%s\n", err.msg);
    // A password given as a query parameter is masked too.
    (void) snprintf(uri, sizeof uri, "postgresql:///no_such_db?user=jfuser&password=s3cret&host=%s",
                    jft_pg_dir(s_pg));
    assert_true(coord_db_open(uri, false, &db, &err) < 0);
    assert_null(strstr(err.msg, "s3cret"));
    assert_non_null(strstr(err.msg, "&password=***&host="));
}

// A server that never answers (a Unix socket nobody accepts on) fails the open after the
// default connect timeout instead of hanging it.
static void test_unanswered_connect_times_out(void **state)
{
    (void) state;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int n = snprintf(addr.sun_path, sizeof addr.sun_path, "%s/.s.PGSQL.5499", jft_pg_dir(s_pg));
    assert_true(n > 0 && (size_t) n < sizeof addr.sun_path);
    assert_int_equal(bind(fd, (const struct sockaddr *) &addr, sizeof addr), 0);
    assert_int_equal(listen(fd, 4), 0);
    char uri[PATH_MAX + 64] = {0};
    (void) snprintf(uri, sizeof uri, "postgresql:///x?host=%s&port=5499", jft_pg_dir(s_pg));
    coord_db_t *db = NULL;
    jf_err_t err = {0};
    struct timespec t0 = {0}, t1 = {0};
    (void) clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_true(coord_db_open(uri, false, &db, &err) < 0);
    (void) clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("unanswered_connect_s=%.1f\n",
           (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9);
    printf("unanswered_connect_errmsg=%s\n", err.msg);
    assert_null(db);
    (void) close(fd);
    (void) unlink(addr.sun_path);
}

// Runs last: the server is stopped under an open connection.
static void test_stopped_server_is_a_connection_error(void **state)
{
    (void) state;
    coord_db_t *db = t_open(false);
    coord_db_stmt_t *st = t_prepare(db, "SELECT 1");
    jft_pg_stop(s_pg);
    assert_true(coord_db_step(st) < 0);
    printf("connection_errmsg=%s\n", coord_db_errmsg(db));
    assert_int_equal(coord_db_errclass(db), COORD_DB_ERR_CONNECTION);
    coord_db_finalize(st);
    jf_err_t err = {0};
    assert_true(coord_db_exec_script(db, "SELECT 1", &err) < 0);
    assert_int_equal(coord_db_errclass(db), COORD_DB_ERR_CONNECTION);
    coord_db_close(&db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_dialect_runs),
        cmocka_unit_test(test_compat_functions_match_sqlite),
        cmocka_unit_test(test_json_extract_bad_path_is_an_error),
        cmocka_unit_test(test_postgres_result_types),
        cmocka_unit_test(test_parameters_typed_from_binds),
        cmocka_unit_test(test_large_blob_with_zero_bytes),
        cmocka_unit_test(test_commit_of_failed_transaction_is_an_error),
        cmocka_unit_test(test_read_only_session),
        cmocka_unit_test(test_store_pragmas),
        cmocka_unit_test(test_refused_statement),
        cmocka_unit_test(test_connect_failure_masks_password),
        cmocka_unit_test(test_unanswered_connect_times_out),
        cmocka_unit_test(test_stopped_server_is_a_connection_error),
    };
    jf_err_t err = {0};
    struct timespec t0 = {0}, t1 = {0};
    (void) clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = jft_pg_start("jft_db_pg", &s_pg, &err);
    if (rc != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return rc == JFT_PG_SKIP ? 77 : 1; // 77: ctest's SKIP_RETURN_CODE
    }
    (void) clock_gettime(CLOCK_MONOTONIC, &t1);
    // initdb, the server's start and a CREATE DATABASE: what each PostgreSQL test pays first.
    printf("pg_start_ms=%lld\n",
           (long long) ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    jft_pg_destroy(&s_pg);
    return rc;
}
