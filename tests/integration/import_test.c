/* Integration: the real `jetfleet import` on the fixture CSVs (tests/fixtures/import/) into the
 * store of a running coordinator; then `results`, `export`, `runs` and `sweep list` on the
 * imported sweep, and `status`, which must not list imported boards as fleet boards. Bad rows
 * are reported with their line and skipped with their run; broken quoting and bad requests exit
 * 1 (usage 2) with one line and leave the store unchanged. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S_CLI_MS 60000

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    *state = f;
    return f && jft_fleet_setup(f, 1) == 0 && jft_fleet_start_coordinator(f) == 0 ? 0 : -1;
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

static char *s_import(jft_fleet_t *f, int expect_rc, const char *sweep, const char *fixture)
{
    char path[PATH_MAX];
    jft_fixture(fixture, path);
    const char *args[] = {"import", "--sweep-name", sweep, path, NULL};
    return jft_cli_expect(f, expect_rc, S_CLI_MS, args);
}

static size_t s_lines(const char *text)
{
    size_t n = 0;
    for (const char *p = text; p && *p; p++) {
        n += *p == '\n';
    }
    return n;
}

// The fixture's figures for board lab-a at 12 cores, epochs 1 and 2 (good.csv, lines 3 and 4):
// the results table's mean leaves the warm-up (epoch 0, line 2) out.
#define S_LAB_A_E1_S 18.25
#define S_LAB_A_E2_S 18.75

static void s_check_tables(jft_fleet_t *f)
{
    const char *results[] = {"export", "--sweep", "lab", "--what", "results", NULL};
    char *out = jft_cli_expect(f, 0, S_CLI_MS, results);
    assert_int_equal(s_lines(out), 1 + 3); // header and one row per run
    char want[64];
    (void) snprintf(want, sizeof want, ",%.17g,", (S_LAB_A_E1_S + S_LAB_A_E2_S) / 2);
    assert_non_null(strstr(out, want));
    free(out);
    const char *epochs[] = {"export", "--sweep", "lab", "--what", "epochs", NULL};
    out = jft_cli_expect(f, 0, S_CLI_MS, epochs);
    assert_int_equal(s_lines(out), 1 + 9);
    assert_non_null(strstr(out, ",18.25,"));
    assert_non_null(strstr(out, "imported"));
    free(out);
    const char *runs[] = {"runs", "--sweep", "lab", NULL};
    out = jft_cli_expect(f, 0, S_CLI_MS, runs);
    assert_non_null(strstr(out, "lab-b"));
    assert_non_null(strstr(out, "custom 4c cpu1.19G gpu0.612G emc2.13G on MAXN"));
    free(out);
    const char *list[] = {"sweep", "list", NULL};
    out = jft_cli_expect(f, 0, S_CLI_MS, list);
    assert_non_null(strstr(out, "imported"));
    assert_non_null(strstr(out, "fixture, hand-written"));
    free(out);
    // Measured elsewhere: the fleet-side checks cannot apply, so the runs stay in the analysis
    // and check says what it did not look at.
    const char *check[] = {"check", "--sweep", "lab", NULL};
    out = jft_cli_expect(f, 0, S_CLI_MS, check);
    assert_non_null(strstr(out, "3 runs, 3 valid, 0 left out"));
    assert_non_null(strstr(out, "imported: only the epoch-outlier rule is checked"));
    free(out);
}

static void test_import_good_file(void **state)
{
    jft_fleet_t *f = *state;
    char *out = s_import(f, 0, "lab", "import/good.csv");
    assert_non_null(
        strstr(out, "imported 3 runs (9 epochs) from 9 rows; skipped 0 rows in 0 runs"));
    free(out);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM epochs WHERE warmup = 1"), 3);
    s_check_tables(f);
    // Idempotent: the same file again changes nothing.
    out = s_import(f, 0, "lab", "import/good.csv");
    free(out);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM runs"), 3);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM epochs"), 9);
    // The coordinator serves its fleet (host-1) and nothing else: no imported board in status.
    const char *status[] = {"status", NULL};
    out = jft_cli_expect(f, 0, S_CLI_MS, status);
    assert_non_null(strstr(out, "host-1"));
    assert_null(strstr(out, "lab-a"));
    assert_null(strstr(out, "lab-b"));
    free(out);
}

static void test_import_bad_rows(void **state)
{
    jft_fleet_t *f = *state;
    char *out = s_import(f, 0, "bad", "import/bad_rows.csv");
    assert_non_null(
        strstr(out, "imported 2 runs (3 epochs) from 7 rows; skipped 4 rows in 3 runs"));
    assert_non_null(strstr(out, "bad_rows.csv:4: column 'energy_j'"));
    assert_non_null(strstr(out, "bad_rows.csv:6: 6 fields, but the header has 13"));
    assert_non_null(strstr(out, "bad_rows.csv:7: column 'board_type': unknown board type"));
    free(out);
    // Never half-loaded: lab-b's good row (line 3) is not stored.
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM runs WHERE board = 'lab-b'"), 0);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM epochs"), 3);
}

static void test_import_refusals(void **state)
{
    jft_fleet_t *f = *state;
    char *out = s_import(f, 1, "broken", "import/malformed_quoting.csv");
    assert_non_null(strstr(out, "malformed_quoting.csv:3: malformed quoting"));
    assert_int_equal(s_lines(out), 1);
    free(out);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM sweeps"), 0);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM runs"), 0);
    out = s_import(f, 1, "x", "import/no-such-file.csv");
    assert_non_null(strstr(out, "no-such-file.csv: No such file"));
    free(out);
    out = s_import(f, 1, "Bad Name", "import/good.csv");
    assert_non_null(strstr(out, "sweep name 'Bad Name'"));
    free(out);
    const char *usage[] = {"import", "file.csv", NULL};
    out = jft_cli_expect(f, 2, S_CLI_MS, usage);
    assert_non_null(strstr(out, "usage: jetfleet import"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_import_good_file, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_import_bad_rows, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_import_refusals, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
