/* Unit tests for the store's side of the schema tables (coord_store_spec.c, coord_store_stmt.c):
 * every run spec column the schema names exists in the runs table with the right type (PRAGMA
 * table_info), a spec round-trips through the columns, a store written by the release before
 * the schema table (tests/fixtures/store/release-v4.sql) migrates and reads the same specs and
 * run ids as its params copy said, and a bind list of the wrong length is refused. */
#include "coord_store_internal.h"
#include "jf_msg_run.h"
#include "jf_run_spec.h"
#include "store_support.h"

#include <errno.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define T_FIXTURE_RUNS 3 // runs in release-v4.sql

typedef struct t_cols {
    sqlite3 *db;       // the store's SQLite connection (coord_db_sqlite), borrowed
    const char *table; // the table the schema's columns are in
    size_t n;          // columns checked
} t_cols_t;

static int t_check_column(const jf_schema_leaf_t *leaf, void *arg)
{
    t_cols_t *c = arg;
    if (leaf->column[0] == '\0') {
        return 0;
    }
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(c->db,
                                        "SELECT type FROM pragma_table_info(?) WHERE name = ?", -1,
                                        &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_bind_text(st, 1, c->table, -1, SQLITE_STATIC), SQLITE_OK);
    assert_int_equal(sqlite3_bind_text(st, 2, leaf->column, -1, SQLITE_STATIC), SQLITE_OK);
    if (sqlite3_step(st) != SQLITE_ROW) {
        fail_msg("schema field '%s': no column '%s' in %s", leaf->name, leaf->column, c->table);
    }
    const char *type = (const char *)sqlite3_column_text(st, 0);
    if (strcmp(type, jf_schema_sql_type(leaf->field->type)) != 0) {
        fail_msg("column '%s' is %s, the schema says %s", leaf->column, type,
                 jf_schema_sql_type(leaf->field->type));
    }
    sqlite3_finalize(st);
    c->n++;
    return 0;
}

static void test_columns_match_table_info(void **state)
{
    tstore_ctx_t *c = *state;
    static const struct {
        const char *table;
        const jf_schema_t *(*schema)(void);
    } tables[] = {{"runs", jf_run_spec_schema},
                  {"epochs", jf_epoch_rec_schema},
                  {"minibatches", jf_minibatch_rec_schema}};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        t_cols_t cols = {.db = coord_db_sqlite(c->store->db), .table = tables[i].table};
        assert_int_equal(jf_schema_each_leaf(tables[i].schema(), t_check_column, &cols), 0);
        assert_int_equal(cols.n, jf_schema_n_columns(tables[i].schema()));
        printf("%s_columns=%zu\n", tables[i].table, cols.n);
    }
    // The params copy is gone (migration 4 -> 5).
    int64_t n = -1;
    assert_int_equal(coord_store_scalar(c->store,
                                        "SELECT count(*) FROM pragma_table_info('runs') "
                                        "WHERE name = 'params'",
                                        COORD_NO_BINDS, &n, NULL),
                     0);
    assert_int_equal(n, 0);
}

static jf_run_spec_t t_spec_with_extras(void)
{
    jf_run_spec_t s = tstore_spec(TSTORE_BOARD, 3);
    s.custom = (jf_run_custom_t){.n_cores = 2, .cpu_hz = 1190400000, .emc_hz = 1600000000};
    s.dvfs_off = true;
    s.threads = 7;
    jf_run_spec_compute_id(&s);
    return s;
}

static void test_spec_roundtrips_through_columns(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[2] = {tstore_spec(TSTORE_BOARD, 0), t_spec_with_extras()};
    tstore_put(c->store, runs, 2);
    for (size_t i = 0; i < 2; i++) {
        jf_run_spec_t back = {0};
        jf_err_t err = {0};
        assert_int_equal(coord_store_run_spec(c->store, runs[i].run_id, &back, &err), 0);
        json_t *a = jf_run_spec_to_json(&runs[i]), *b = jf_run_spec_to_json(&back);
        assert_true(json_equal(a, b));
        json_decref(a);
        json_decref(b);
        jf_run_spec_compute_id(&back);
        assert_string_equal(back.run_id, runs[i].run_id);
    }
    jf_run_spec_t next = {0};
    assert_int_equal(coord_store_next_pending(c->store, TSTORE_BOARD, &next, NULL), 0);
    assert_string_equal(next.run_id, runs[0].run_id);
}

static void test_bind_count_checked(void **state)
{
    tstore_ctx_t *c = *state;
    jf_err_t err = {0};
    int64_t v = 0;
    int rc = coord_store_scalar(c->store, "SELECT count(*) FROM runs WHERE id = ? AND board = ?",
                                COORD_BINDS(coord_text("r0")), &v, &err);
    assert_int_equal(rc, -EIO);
    assert_int_equal(err.code, -EINVAL);
    assert_non_null(strstr(err.msg, "1 values bound to a statement of 2 parameters"));
}

// The fixture's params copies, read before the migration drops them.
typedef struct t_release {
    size_t n;
    jf_run_spec_t specs[T_FIXTURE_RUNS];
} t_release_t;

static int t_on_params(void *arg, int ncols, char **values, char **names)
{
    t_release_t *r = arg;
    (void)names;
    assert_int_equal(ncols, 1);
    assert_true(r->n < T_FIXTURE_RUNS);
    json_t *j = json_loads(values[0], 0, NULL);
    jf_err_t err = {0};
    if (jf_run_spec_from_json(j, &r->specs[r->n], &err) != 0) {
        fail_msg("fixture params: %s", err.msg);
    }
    json_decref(j);
    r->n++;
    return 0;
}

static char *t_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = calloc(1, 1 << 16);
    assert_non_null(buf);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    assert_true(n > 0 && n < (1 << 16) - 1);
    fclose(f);
    return buf;
}

static void t_load_fixture(const char *path, t_release_t *ret)
{
    char fixture[PATH_MAX] = {0};
    (void)snprintf(fixture, sizeof fixture, "%s/store/release-v4.sql", getenv("JF_FIXTURES"));
    char *sql = t_read_file(fixture);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fail_msg("loading %s: %s", fixture, msg);
    }
    assert_int_equal(
        sqlite3_exec(db, "SELECT params FROM runs ORDER BY ord", t_on_params, ret, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
    free(sql);
}

static void test_release_store_migrates(void **state)
{
    tstore_ctx_t *c = *state;
    char path[PATH_MAX + 32] = {0};
    (void)snprintf(path, sizeof path, "%s/release.db", c->dir);
    t_release_t rel = {0};
    t_load_fixture(path, &rel);
    assert_int_equal(rel.n, T_FIXTURE_RUNS);
    jf_err_t err = {0};
    coord_store_t *st = coord_store_open(path, false, &err);
    if (!st) {
        fail_msg("open: %s", err.msg);
    }
    assert_int_equal(coord_store_schema_version(st), coord_store_schema_latest());
    for (size_t i = 0; i < rel.n; i++) {
        jf_run_spec_t back = {0};
        if (coord_store_run_spec(st, rel.specs[i].run_id, &back, &err) != 0) {
            fail_msg("run %s: %s", rel.specs[i].run_id, err.msg);
        }
        json_t *a = jf_run_spec_to_json(&rel.specs[i]), *b = jf_run_spec_to_json(&back);
        assert_true(json_equal(a, b));
        json_decref(a);
        json_decref(b);
        jf_run_spec_t again = back;
        jf_run_spec_compute_id(&again);
        assert_string_equal(again.run_id, rel.specs[i].run_id); // ids are unchanged
    }
    printf("release_runs_migrated=%zu\n", rel.n);
    coord_store_destroy(&st);
    (void)remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_columns_match_table_info, tstore_setup,
                                        tstore_teardown),
        cmocka_unit_test_setup_teardown(test_spec_roundtrips_through_columns, tstore_setup,
                                        tstore_teardown),
        cmocka_unit_test_setup_teardown(test_bind_count_checked, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_release_store_migrates, tstore_setup, tstore_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
