/* Unit tests of the database seam's contract (coordinator/coord_db.h): binds of every type (NULL
 * text, NaN), "?N" parameters, column types and NULL reads, blobs, changes, transactions,
 * scripts of several statements, error text and class, and bad SQL. Every case opens the target
 * that t_target gives: a SQLite file in a fresh mkdtemp directory (unit.db), or, built with
 * JF_DB_TEST_PG, a database on a PostgreSQL server main starts (unit.db_postgres, jft_pg.h). */
#include "coord_db.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

typedef struct t_db {
    char dir[PATH_MAX];         // the test's own directory ("" when the target is not a file)
    char target[PATH_MAX + 16]; // what coord_db_open opens
    coord_db_t *db;
} t_db_t;

static void t_rmtree_flat(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            char p[PATH_MAX + 256];
            (void) snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            (void) unlink(p); // best effort: a leftover file only costs disk
        }
    }
    (void) closedir(d);
    (void) rmdir(dir);
}

#ifdef JF_DB_TEST_PG
#include "jft_pg.h"

// unit.db_postgres: the same cases against one PostgreSQL server that main starts (jft_pg.h).
static jft_pg_t *s_pg;

static int t_target(t_db_t *t)
{
    t->dir[0] = '\0';
    (void) snprintf(t->target, sizeof t->target, "%s", jft_pg_uri(s_pg));
    return 0;
}
#else
// The database the cases run against: a new SQLite file in its own directory.
static int t_target(t_db_t *t)
{
    const char *tmp = getenv("TMPDIR");
    (void) snprintf(t->dir, sizeof t->dir, "%s/jf-db-test-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(t->dir)) {
        return -errno;
    }
    (void) snprintf(t->target, sizeof t->target, "%s/db.sqlite", t->dir);
    return 0;
}

#endif

static int t_setup(void **state)
{
    t_db_t *t = calloc(1, sizeof *t);
    if (!t || t_target(t) != 0) {
        free(t);
        return -1;
    }
    jf_err_t err = {0};
    if (coord_db_open(t->target, false, &t->db, &err) != 0) {
        fprintf(stderr, "opening %s: %s\n", t->target, err.msg);
        t_rmtree_flat(t->dir);
        free(t);
        return -1;
    }
    *state = t;
    return 0;
}

static int t_teardown(void **state)
{
    t_db_t *t = *state;
    coord_db_close(&t->db);
    assert_null(t->db);
    if (t->dir[0]) {
        t_rmtree_flat(t->dir);
    }
    free(t);
    return 0;
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

static void test_kind_follows_target(void **state)
{
    t_db_t *t = *state;
    bool pg = coord_db_is_postgres_uri(t->target);
    assert_int_equal(coord_db_kind(t->db), pg ? COORD_DB_POSTGRES : COORD_DB_SQLITE);
    assert_true((coord_db_sqlite(t->db) == NULL) == pg);
    assert_string_equal(coord_db_errmsg(t->db), "no error");
    assert_int_equal(coord_db_errclass(t->db), COORD_DB_ERR_NONE);
    assert_true(coord_db_is_postgres_uri("postgresql://u@h/db"));
    assert_true(coord_db_is_postgres_uri("postgres://h/db"));
    assert_false(coord_db_is_postgres_uri("/var/lib/jetfleet/jetfleet.db"));
}

static void test_binds_and_reads_of_every_type(void **state)
{
    t_db_t *t = *state;
    t_exec(t->db, "CREATE TABLE v(k INTEGER, i INTEGER, r REAL, s TEXT, b BLOB)");
    coord_db_stmt_t *ins = t_prepare(t->db, "INSERT INTO v(k, i, r, s, b) VALUES(?, ?, ?, ?, ?)");
    assert_int_equal(coord_db_param_count(ins), 5);
    // Row 1: values. 2^53 + 1 is not a double: an integer that went through one would change.
    static const unsigned char bytes[] = {0x00, 0xff, 0x10, 0x00, 0x7f};
    const int64_t big = (INT64_C(1) << 53) + 1;
    assert_int_equal(coord_db_bind_int64(ins, 1, 1), 0);
    assert_int_equal(coord_db_bind_int64(ins, 2, big), 0);
    assert_int_equal(coord_db_bind_double(ins, 3, 0.1), 0);
    char text[] = "h\xc3\xa9llo, 'world'";
    assert_int_equal(coord_db_bind_text(ins, 4, text), 0);
    assert_int_equal(coord_db_bind_blob(ins, 5, bytes, sizeof bytes), 0);
    text[0] = 'X'; // bound text is copied
    assert_int_equal(coord_db_step(ins), COORD_DB_DONE);
    assert_int_equal(coord_db_changes(t->db), 1);
    // Row 2: every NULL form (NULL, NULL text, NaN).
    coord_db_reset(ins);
    coord_db_clear_bindings(ins);
    assert_int_equal(coord_db_bind_int64(ins, 1, 2), 0);
    assert_int_equal(coord_db_bind_null(ins, 2), 0);
    assert_int_equal(coord_db_bind_double(ins, 3, NAN), 0);
    assert_int_equal(coord_db_bind_text(ins, 4, NULL), 0);
    assert_int_equal(coord_db_bind_null(ins, 5), 0);
    assert_int_equal(coord_db_step(ins), COORD_DB_DONE);
    // Row 3: negative numbers, an empty string and an empty blob are values, not NULL.
    coord_db_reset(ins);
    assert_int_equal(coord_db_bind_int64(ins, 1, 3), 0);
    assert_int_equal(coord_db_bind_int64(ins, 2, INT64_MIN), 0);
    assert_int_equal(coord_db_bind_double(ins, 3, -1e300), 0);
    assert_int_equal(coord_db_bind_text(ins, 4, ""), 0);
    assert_int_equal(coord_db_bind_blob(ins, 5, bytes, 0), 0);
    assert_int_equal(coord_db_step(ins), COORD_DB_DONE);
    coord_db_finalize(ins);

    coord_db_stmt_t *sel = t_prepare(t->db, "SELECT i, r, s, b FROM v ORDER BY k");
    assert_int_equal(coord_db_param_count(sel), 0);
    assert_int_equal(coord_db_col_count(sel), 4);
    assert_int_equal(coord_db_step(sel), COORD_DB_ROW);
    assert_int_equal(coord_db_col_type(sel, 0), COORD_DB_T_INT);
    assert_int_equal(coord_db_col_type(sel, 1), COORD_DB_T_REAL);
    assert_int_equal(coord_db_col_type(sel, 2), COORD_DB_T_TEXT);
    assert_int_equal(coord_db_col_type(sel, 3), COORD_DB_T_BLOB);
    assert_false(coord_db_col_is_null(sel, 0));
    assert_true(coord_db_col_int64(sel, 0) == big);
    assert_true(coord_db_col_double(sel, 1) == 0.1);
    assert_string_equal(coord_db_col_text(sel, 2), "h\xc3\xa9llo, 'world'");
    assert_int_equal(coord_db_col_bytes(sel, 3), sizeof bytes);
    assert_memory_equal(coord_db_col_blob(sel, 3), bytes, sizeof bytes);

    assert_int_equal(coord_db_step(sel), COORD_DB_ROW);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(coord_db_col_type(sel, i), COORD_DB_T_NULL);
        assert_true(coord_db_col_is_null(sel, i));
    }
    assert_int_equal(coord_db_col_int64(sel, 0), 0);
    assert_true(coord_db_col_double(sel, 1) == 0.0);
    assert_null(coord_db_col_text(sel, 2));
    assert_null(coord_db_col_blob(sel, 3));
    assert_int_equal(coord_db_col_bytes(sel, 3), 0);

    assert_int_equal(coord_db_step(sel), COORD_DB_ROW);
    assert_true(coord_db_col_int64(sel, 0) == INT64_MIN);
    assert_true(coord_db_col_double(sel, 1) == -1e300);
    assert_false(coord_db_col_is_null(sel, 2));
    assert_string_equal(coord_db_col_text(sel, 2), "");
    assert_false(coord_db_col_is_null(sel, 3));
    assert_int_equal(coord_db_col_bytes(sel, 3), 0);

    assert_int_equal(coord_db_step(sel), COORD_DB_DONE);
    coord_db_finalize(sel);
    coord_db_finalize(NULL); // NULL-safe
}

static void test_numbered_params_and_names(void **state)
{
    t_db_t *t = *state;
    coord_db_stmt_t *st = t_prepare(t->db, "SELECT ?2 AS second, ?1 AS first, ?2 + 1 AS third");
    assert_int_equal(coord_db_param_count(st), 2);
    assert_int_equal(coord_db_bind_int64(st, 1, 10), 0);
    assert_int_equal(coord_db_bind_int64(st, 2, 20), 0);
    assert_int_equal(coord_db_step(st), COORD_DB_ROW);
    assert_int_equal(coord_db_col_count(st), 3);
    assert_string_equal(coord_db_col_name(st, 0), "second");
    assert_string_equal(coord_db_col_name(st, 1), "first");
    assert_string_equal(coord_db_col_name(st, 2), "third");
    assert_int_equal(coord_db_col_int64(st, 0), 20);
    assert_int_equal(coord_db_col_int64(st, 1), 10);
    assert_int_equal(coord_db_col_int64(st, 2), 21);
    assert_int_equal(coord_db_step(st), COORD_DB_DONE);
    // Reset keeps the binds: the same row again.
    coord_db_reset(st);
    assert_int_equal(coord_db_step(st), COORD_DB_ROW);
    assert_int_equal(coord_db_col_int64(st, 1), 10);
    assert_string_equal(coord_db_sql(st), "SELECT ?2 AS second, ?1 AS first, ?2 + 1 AS third");
    coord_db_finalize(st);
}

static void test_changes_and_returning(void **state)
{
    t_db_t *t = *state;
    t_exec(t->db, "CREATE TABLE c(id INTEGER PRIMARY KEY, g INTEGER NOT NULL)");
    coord_db_stmt_t *ins = t_prepare(t->db, "INSERT INTO c(g) VALUES(?) RETURNING id");
    int64_t ids[3] = {0};
    for (int i = 0; i < 3; i++) {
        coord_db_reset(ins);
        assert_int_equal(coord_db_bind_int64(ins, 1, i < 2 ? 7 : 8), 0);
        assert_int_equal(coord_db_step(ins), COORD_DB_ROW);
        ids[i] = coord_db_col_int64(ins, 0);
        assert_int_equal(coord_db_step(ins), COORD_DB_DONE);
        assert_int_equal(coord_db_changes(t->db), 1);
    }
    coord_db_finalize(ins);
    assert_true(ids[0] < ids[1] && ids[1] < ids[2]);
    coord_db_stmt_t *up = t_prepare(t->db, "UPDATE c SET g = g + 1 WHERE g = ?");
    assert_int_equal(coord_db_bind_int64(up, 1, 7), 0);
    assert_int_equal(coord_db_step(up), COORD_DB_DONE);
    assert_int_equal(coord_db_changes(t->db), 2);
    coord_db_reset(up);
    assert_int_equal(coord_db_bind_int64(up, 1, 100), 0);
    assert_int_equal(coord_db_step(up), COORD_DB_DONE);
    assert_int_equal(coord_db_changes(t->db), 0);
    coord_db_finalize(up);
    coord_db_stmt_t *del = t_prepare(t->db, "DELETE FROM c WHERE id = ?");
    assert_int_equal(coord_db_bind_int64(del, 1, ids[2]), 0);
    assert_int_equal(coord_db_step(del), COORD_DB_DONE);
    assert_int_equal(coord_db_changes(t->db), 1);
    coord_db_finalize(del);
    assert_int_equal(t_scalar(t->db, "SELECT count(*) FROM c WHERE g = 8"), 2);
}

static void test_scripts_and_transactions(void **state)
{
    t_db_t *t = *state;
    t_exec(t->db, "CREATE TABLE a(x INTEGER);\n"
                  "INSERT INTO a(x) VALUES(1);\n"
                  "INSERT INTO a(x) VALUES(2); INSERT INTO a(x) VALUES(3);");
    assert_int_equal(t_scalar(t->db, "SELECT sum(x) FROM a"), 6);
    assert_false(coord_db_in_transaction(t->db));
    t_exec(t->db, "BEGIN");
    assert_true(coord_db_in_transaction(t->db));
    t_exec(t->db, "DELETE FROM a");
    t_exec(t->db, "ROLLBACK");
    assert_false(coord_db_in_transaction(t->db));
    assert_int_equal(t_scalar(t->db, "SELECT count(*) FROM a"), 3);
    t_exec(t->db, "BEGIN; DELETE FROM a WHERE x = 1;");
    assert_true(coord_db_in_transaction(t->db));
    t_exec(t->db, "COMMIT");
    assert_false(coord_db_in_transaction(t->db));
    assert_int_equal(t_scalar(t->db, "SELECT count(*) FROM a"), 2);
}

static void test_constraint_error_has_text_and_class(void **state)
{
    t_db_t *t = *state;
    t_exec(t->db, "CREATE TABLE u(k TEXT PRIMARY KEY, n INTEGER NOT NULL)");
    coord_db_stmt_t *ins = t_prepare(t->db, "INSERT INTO u(k, n) VALUES(?, ?)");
    assert_int_equal(coord_db_bind_text(ins, 1, "a"), 0);
    assert_int_equal(coord_db_bind_int64(ins, 2, 1), 0);
    assert_int_equal(coord_db_step(ins), COORD_DB_DONE);
    coord_db_reset(ins);
    int rc = coord_db_step(ins); // the same key again
    assert_true(rc < 0);
    assert_int_equal(coord_db_errclass(t->db), COORD_DB_ERR_CONSTRAINT);
    assert_string_not_equal(coord_db_errmsg(t->db), "no error");
    printf("constraint_errmsg=%s\n", coord_db_errmsg(t->db));
    // NOT NULL is a constraint too.
    coord_db_reset(ins);
    assert_int_equal(coord_db_bind_text(ins, 1, "b"), 0);
    assert_int_equal(coord_db_bind_null(ins, 2), 0);
    assert_true(coord_db_step(ins) < 0);
    assert_int_equal(coord_db_errclass(t->db), COORD_DB_ERR_CONSTRAINT);
    coord_db_finalize(ins);
    assert_int_equal(t_scalar(t->db, "SELECT count(*) FROM u"), 1);
}

static void test_script_syntax_error(void **state)
{
    t_db_t *t = *state;
    jf_err_t err = {0};
    int rc = coord_db_exec_script(t->db, "CREATE TABLE s(x INTEGER); CREAT TABLE oops(y)", &err);
    assert_true(rc < 0);
    assert_int_equal(err.code, rc);
    assert_int_equal(coord_db_errclass(t->db), COORD_DB_ERR_OTHER);
    assert_non_null(strstr(err.msg, coord_db_target(t->db))); // says where
    assert_non_null(strstr(err.msg, coord_db_errmsg(t->db))); // and what
    printf("syntax_errmsg=%s\n", err.msg);
}

static void test_prepare_of_bad_sql(void **state)
{
    t_db_t *t = *state;
    static const char *const bad[] = {
        "SELEC 1",                        // syntax
        "SELECT nope FROM no_such_table", // unknown table
        "",                               // no statement
        "SELECT 1; SELECT 2",             // two statements
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        jf_err_t err = {0};
        coord_db_stmt_t *st = coord_db_prepare(t->db, bad[i], &err);
        assert_null(st);
        assert_true(err.code < 0);
        assert_non_null(strstr(err.msg, coord_db_target(t->db)));
        assert_string_not_equal(coord_db_errmsg(t->db), "no error");
        printf("prepare_error_%zu=%s\n", i, err.msg);
    }
    // err may be NULL.
    assert_null(coord_db_prepare(t->db, "SELEC 2", NULL));
    // The connection still works.
    assert_int_equal(t_scalar(t->db, "SELECT 41 + 1"), 42);
}

// SQLite only (a file path target): a read-only open of a missing file fails and says which.
static void test_sqlite_open_missing_read_only(void **state)
{
    t_db_t *t = *state;
    if (coord_db_kind(t->db) != COORD_DB_SQLITE) {
        skip();
    }
    char missing[PATH_MAX + 32];
    (void) snprintf(missing, sizeof missing, "%s/missing.sqlite", t->dir);
    coord_db_t *db = NULL;
    jf_err_t err = {0};
    assert_true(coord_db_open(missing, true, &db, &err) < 0);
    assert_null(db);
    assert_non_null(strstr(err.msg, missing));
    printf("open_error=%s\n", err.msg);
    assert_int_equal(access(missing, F_OK), -1); // read-only does not create it
    coord_db_close(&db);                         // NULL-safe
    coord_db_close(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_kind_follows_target, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_binds_and_reads_of_every_type, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_numbered_params_and_names, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_changes_and_returning, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_scripts_and_transactions, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_constraint_error_has_text_and_class, t_setup,
                                        t_teardown),
        cmocka_unit_test_setup_teardown(test_script_syntax_error, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_prepare_of_bad_sql, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_sqlite_open_missing_read_only, t_setup, t_teardown),
    };
#ifdef JF_DB_TEST_PG
    jf_err_t err = {0};
    int rc = jft_pg_start("jft_db", &s_pg, &err);
    if (rc != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return rc == JFT_PG_SKIP ? 77 : 1; // 77: ctest's SKIP_RETURN_CODE
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    jft_pg_destroy(&s_pg);
    return rc;
#else
    return cmocka_run_group_tests(tests, NULL, NULL);
#endif
}
