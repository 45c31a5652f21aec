/* Unit tests for the CLI's table printer (coordinator/cli/cli_table.c): columns picked by name
 * in the order asked for, tables and column lists wider than the store's 64 columns kept whole,
 * and a column the rows lack or a row of another width refused with a message naming it, never
 * a silently narrower table. */
#include "cli_table.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define T_WIDE 100 // more columns than COORD_TABLE_COLS_MAX, the old fixed cap

// Column names c0..c{n-1} and values v0..v{n-1}, in static storage.
static char t_names_buf[T_WIDE][8], t_values_buf[T_WIDE][8];
static const char *t_names[T_WIDE + 1], *t_values[T_WIDE + 1];

static void t_fill(void)
{
    for (int i = 0; i < T_WIDE; i++) {
        (void) snprintf(t_names_buf[i], sizeof t_names_buf[i], "c%d", i);
        (void) snprintf(t_values_buf[i], sizeof t_values_buf[i], "v%d", i);
        t_names[i] = t_names_buf[i];
        t_values[i] = t_values_buf[i];
    }
}

// The table as CSV, in a malloc'ed string.
static char *t_csv(const cli_table_t *t)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    assert_int_equal(cli_table_write(t, CLI_FORMAT_CSV, out), 0);
    assert_int_equal(fclose(out), 0);
    return text;
}

static size_t t_count(const char *s, char ch)
{
    size_t n = 0;
    for (; *s; s++) {
        n += *s == ch;
    }
    return n;
}

// One case: the columns asked for (NULL: all), the source row's width, what add_row returns,
// and the CSV header it writes or the fragment of its error.
typedef struct t_case {
    const char *what;
    const char *const *want;
    int src_ncols;
    int code;
    const char *csv_head; // prefix of the CSV when code is 0
    int csv_cols;         // columns in the CSV
    const char *error;    // fragment of cli_table_error when code != 0
} t_case_t;

static const char *const t_reorder[] = {"c2", "c0", NULL};
static const char *const t_missing[] = {"c1", "nope", NULL};
static const char *t_wide_want[T_WIDE + 1]; // every column, in reverse order

static void test_columns_table(void **state)
{
    (void) state;
    t_fill();
    for (int i = 0; i < T_WIDE; i++) {
        t_wide_want[i] = t_names[T_WIDE - 1 - i];
    }
    const t_case_t cases[] = {
        {"picked in order", t_reorder, 3, 0, "c2,c0\nv2,v0\n", 2, NULL},
        {"all", NULL, 3, 0, "c0,c1,c2\n", 3, NULL},
        {"a missing column", t_missing, 3, -ENOENT, NULL, 0, "no column 'nope' among its 3"},
        {"a wide table, all", NULL, T_WIDE, 0, "c0,c1,", T_WIDE, NULL},
        {"a wide column list", t_wide_want, T_WIDE, 0, "c99,c98,", T_WIDE, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const t_case_t *k = &cases[i];
        cli_table_t *t = cli_table_new(k->want);
        assert_non_null(t);
        int rc = cli_table_add_row(k->src_ncols, t_names, t_values, NULL, t);
        if (rc != k->code) {
            fail_msg("%s: code %d, want %d", k->what, rc, k->code);
        }
        if (k->code != 0) {
            assert_non_null(strstr(cli_table_error(t), k->error));
            // A refused table stays refused: no later row makes it narrower.
            assert_int_equal(cli_table_add_row(k->src_ncols, t_names, t_values, NULL, t), k->code);
        } else {
            char *csv = t_csv(t);
            assert_string_equal(cli_table_error(t), "");
            assert_memory_equal(csv, k->csv_head, strlen(k->csv_head));
            // A header and one row, each csv_cols cells: nothing cut.
            assert_int_equal(t_count(csv, ','), 2 * ((size_t) k->csv_cols - 1));
            assert_int_equal(t_count(csv, '\n'), 2);
            free(csv);
        }
        cli_table_destroy(&t);
        assert_null(t);
    }
}

static void test_row_of_another_width(void **state)
{
    (void) state;
    t_fill();
    cli_table_t *t = cli_table_new(NULL);
    assert_int_equal(cli_table_add_text(t, 4, t_names, t_values), 0);
    assert_int_equal(cli_table_add_text(t, 3, t_names, t_values), -EINVAL);
    assert_non_null(strstr(cli_table_error(t), "a row of 3 columns after rows of 4"));
    assert_int_equal(cli_table_rows(t), 1);
    cli_table_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns_table),
        cmocka_unit_test(test_row_of_another_width),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
