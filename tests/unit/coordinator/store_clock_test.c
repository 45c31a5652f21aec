/* Unit tests for the store's clock columns (migration 5 -> 6, docs/store.md): a board's estimate
 * is stored, and a run that starts (coord_store_run_start) copies the estimate in force, NULL
 * when there was none. Read back through the coord_db seam, so unit.store_clock_postgres runs
 * the same on PostgreSQL (docs/store.md §10). */
#include "coord_db.h"
#include "coord_store.h"
#include "store_support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

// The three clock columns of one row, read with a separate connection ("NULL" for SQL NULL).
typedef struct t_clock_row {
    char offset[32];
    char rtt[32];
    char at[32];
} t_clock_row_t;

static t_clock_row_t t_read(const char *path, const char *sql, const char *key)
{
    coord_db_t *db = NULL;
    jf_err_t err = {0};
    t_clock_row_t r;
    memset(&r, 0, sizeof r);
    if (coord_db_open(path, true, &db, &err) != 0) {
        fail_msg("open %s: %s", path, err.msg);
    }
    coord_db_stmt_t *st = coord_db_prepare(db, sql, &err);
    if (!st) {
        fail_msg("prepare: %s", err.msg);
    }
    assert_int_equal(coord_db_bind_text(st, 1, key), 0);
    assert_int_equal(coord_db_step(st), COORD_DB_ROW);
    char *cols[] = {r.offset, r.rtt, r.at};
    for (int i = 0; i < 3; i++) {
        // As integers: the two back ends print a number column's text alike only that way.
        bool null = coord_db_col_is_null(st, i);
        (void) snprintf(cols[i], sizeof r.offset, null ? "NULL" : "%lld",
                        (long long) coord_db_col_int64(st, i));
    }
    coord_db_finalize(st);
    coord_db_close(&db);
    return r;
}

#define T_BOARD_SQL "SELECT clock_offset_us, clock_rtt_us, clock_at_us FROM boards WHERE name = ?"
#define T_RUN_SQL   "SELECT clock_offset_us, clock_rtt_us, clock_at_us FROM runs WHERE id = ?"

static void test_board_and_run_clock(void **state)
{
    tstore_ctx_t *c = *state;
    jf_err_t err = {0};
    assert_int_equal(
        coord_store_board_hello(c->store, TSTORE_BOARD, "xavier-nx", "sim", "{}", &err), 0);
    jf_run_spec_t runs[2] = {tstore_spec(TSTORE_BOARD, 0), tstore_spec(TSTORE_BOARD, 1)};
    tstore_put(c->store, runs, 2);

    // Before any estimate: the run keeps NULL, never 0.
    int64_t a0 = tstore_assign(c->store, runs[0].run_id);
    assert_int_equal(coord_store_run_start(c->store, runs[0].run_id, a0, &err), 0);

    assert_int_equal(coord_store_board_set_clock(c->store, TSTORE_BOARD, -7250, 830,
                                                 INT64_C(1700000007000150), &err),
                     0);
    int64_t a1 = tstore_assign(c->store, runs[1].run_id);
    assert_int_equal(coord_store_run_start(c->store, runs[1].run_id, a1, &err), 0);
    // A later estimate changes the board, not the run that already started.
    assert_int_equal(coord_store_board_set_clock(c->store, TSTORE_BOARD, 12, 400, 1, &err), 0);

    t_clock_row_t b = t_read(c->path, T_BOARD_SQL, TSTORE_BOARD);
    t_clock_row_t r0 = t_read(c->path, T_RUN_SQL, runs[0].run_id);
    t_clock_row_t r1 = t_read(c->path, T_RUN_SQL, runs[1].run_id);
    printf("board offset_us=%s rtt_us=%s run0 offset_us=%s run1 offset_us=%s rtt_us=%s\n", b.offset,
           b.rtt, r0.offset, r1.offset, r1.rtt);
    assert_string_equal(b.offset, "12");
    assert_string_equal(b.rtt, "400");
    assert_string_equal(r0.offset, "NULL");
    assert_string_equal(r0.rtt, "NULL");
    assert_string_equal(r1.offset, "-7250");
    assert_string_equal(r1.rtt, "830");
    assert_string_equal(r1.at, "1700000007000150");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_board_and_run_clock, tstore_setup, tstore_teardown),
    };
    int rc = tstore_main_begin();
    if (rc != 0) {
        return rc;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    tstore_main_end();
    return rc;
}
