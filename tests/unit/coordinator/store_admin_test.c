/* Unit tests of the store's identity and its administration (coord_store_ident.h,
 * coord_store_admin.h): a store that is missing, empty or another store is refused with what was
 * expected, --new-store takes it; a store with damaged pages is called corrupt, fails its check,
 * and salvage saves exactly the runs that were not on the damaged pages; a backup is whole. */
#include "coord_store_admin.h"
#include "coord_store_ident.h"
#include "jft_store.h"
#include "store_support.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define S_RUNS          400 // enough for the runs table to span dozens of leaf pages
#define S_RUNS_EPOCHS   40  // runs that also get epoch records (every tenth)
#define S_DAMAGED_PAGES 2
#define S_SEED          17u
#define S_PATH_LEN      (PATH_MAX + 64)

static char s_note[COORD_IDENT_NOTE_LEN];

static void s_path(char *out, const tstore_ctx_t *c, const char *name)
{
    (void)snprintf(out, S_PATH_LEN, "%s/%s", c->dir, name);
}

// The fixture's store becomes the coordinator's: identity recorded, S_RUNS runs stored, some of
// them done with epochs; closed cleanly (WAL checkpointed into the file).
static void s_fill(tstore_ctx_t *c)
{
    coord_store_destroy(&c->store);
    jf_err_t err = {0};
    c->store = coord_store_open_owned(c->path, c->dir, false, s_note, &err);
    if (!c->store) {
        fail_msg("open_owned: %s", err.msg);
    }
    assert_non_null(strstr(s_note, "new store id"));
    jf_run_spec_t *runs = calloc(S_RUNS, sizeof *runs);
    assert_non_null(runs);
    for (int i = 0; i < S_RUNS; i++) {
        runs[i] = tstore_spec(TSTORE_BOARD, i + 1);
    }
    // One transaction: a commit per record would make the test as slow as the disk's fsync.
    assert_int_equal(coord_store_begin(c->store, &err), 0);
    tstore_put(c->store, runs, S_RUNS);
    for (int i = 0; i < S_RUNS; i += S_RUNS / S_RUNS_EPOCHS) {
        int64_t attempt = tstore_complete(c->store, runs[i].run_id, true);
        for (int e = 0; e < 3; e++) {
            jf_epoch_rec_t rec = tstore_epoch(e, 1000000 + e, 0.5);
            assert_int_equal(coord_store_add_epoch(c->store, runs[i].run_id, attempt, &rec, &err),
                             0);
        }
    }
    free(runs);
    assert_int_equal(coord_store_commit(c->store, &err), 0);
    assert_int_equal(coord_store_ident_save(c->store, c->dir, &err), 0);
    coord_store_destroy(&c->store);
}

static void s_copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    for (size_t n; (n = fread(buf, 1, sizeof buf, in)) > 0;) {
        assert_int_equal(fwrite(buf, 1, n, out), n);
    }
    assert_int_equal(fclose(in), 0);
    assert_int_equal(fclose(out), 0);
}

static void s_expect_refused(tstore_ctx_t *c, int code, const char *what)
{
    jf_err_t err = {0};
    coord_store_t *st = coord_store_open_owned(c->path, c->dir, false, s_note, &err);
    if (st) {
        coord_store_destroy(&st);
        fail_msg("the store was accepted; expected refusal '%s'", what);
    }
    print_message("refused: %s\n", err.msg);
    assert_int_equal(err.code, code);
    const char *frags[] = {what, "store id", "(400 runs, 40 done, 1 sweeps", "--new-store"};
    for (size_t i = 0; i < sizeof frags / sizeof frags[0]; i++) {
        if (!strstr(err.msg, frags[i])) {
            fail_msg("'%s' missing from: %s", frags[i], err.msg);
        }
    }
}

static void s_new_store_then_accepted(tstore_ctx_t *c)
{
    jf_err_t err = {0};
    coord_store_t *st = coord_store_open_owned(c->path, c->dir, true, s_note, &err);
    assert_non_null(st);
    coord_store_destroy(&st);
    st = coord_store_open_owned(c->path, c->dir, false, s_note, &err); // the new one is known
    if (!st) {
        fail_msg("after --new-store: %s", err.msg);
    }
    coord_store_destroy(&st);
}

static void test_store_truncated_refused(void **state)
{
    tstore_ctx_t *c = *state;
    s_fill(c);
    assert_int_equal(truncate(c->path, 0), 0);
    s_expect_refused(c, -ENODATA, "store empty (0 bytes)");
    s_new_store_then_accepted(c);
}

static void test_store_deleted_refused(void **state)
{
    tstore_ctx_t *c = *state;
    s_fill(c);
    assert_int_equal(unlink(c->path), 0);
    s_expect_refused(c, -ENOENT, "store missing");
    s_new_store_then_accepted(c);
}

// fleet.yaml pointed at a new path: the refusal names where the known store was.
static void test_store_moved_refused(void **state)
{
    tstore_ctx_t *c = *state;
    s_fill(c);
    char moved[S_PATH_LEN], was[S_PATH_LEN + 32];
    s_path(moved, c, "moved.db");
    (void)snprintf(was, sizeof was, "(it was at '%s')", c->path);
    jf_err_t err = {0};
    coord_store_t *st = coord_store_open_owned(moved, c->dir, false, s_note, &err);
    assert_null(st);
    assert_int_equal(err.code, -ENOENT);
    assert_non_null(strstr(err.msg, was));
}

static void test_store_replaced_refused(void **state)
{
    tstore_ctx_t *c = *state;
    s_fill(c);
    char other_dir[S_PATH_LEN], other[S_PATH_LEN];
    s_path(other_dir, c, "other");
    assert_int_equal(mkdir(other_dir, 0700), 0);
    s_path(other, c, "other/store.db");
    jf_err_t err = {0};
    coord_store_t *st = coord_store_open_owned(other, other_dir, false, s_note, &err);
    assert_non_null(st);
    coord_store_destroy(&st);
    s_copy_file(other, c->path);
    tstore_rmtree_flat(other_dir);
    s_expect_refused(c, -ESTALE, "store is another (store id");
    s_new_store_then_accepted(c);
}

static int s_count_row(int ncols, const char *const *names, const char *const *values,
                       const coord_value_kind_t *kinds, void *arg)
{
    (void)ncols, (void)names, (void)values, (void)kinds;
    ++*(size_t *)arg;
    return 0;
}

// Readers name the damage: the CLI's read-only store and the coordinator's open.
static void s_expect_corrupt_messages(tstore_ctx_t *c)
{
    jf_err_t err = {0};
    coord_store_t *st = coord_store_open(c->path, true, &err);
    size_t rows = 0;
    int rc = st ? coord_store_select(st, COORD_TABLE_RUNS, NULL, NULL, s_count_row, &rows, &err)
                : err.code;
    coord_store_destroy(&st);
    print_message("reader: %s\n", err.msg);
    assert_int_equal(rc, -EBADMSG);
    assert_non_null(strstr(err.msg, "corrupt"));
    assert_null(strstr(err.msg, "not a jetfleet store"));
    st = coord_store_open_owned(c->path, c->dir, false, s_note, &err);
    assert_null(st);
    print_message("coordinator: %s\n", err.msg);
    assert_int_equal(err.code, -EBADMSG);
    assert_non_null(strstr(err.msg, "corrupt"));
    assert_non_null(strstr(err.msg, "jetfleet store salvage"));
}

static const coord_salvage_table_t *s_table(const coord_salvage_report_t *r, const char *name)
{
    for (size_t i = 0; i < r->n_tables; i++) {
        if (strcmp(r->table[i].name, name) == 0) {
            return &r->table[i];
        }
    }
    fail_msg("no table '%s' in the salvage report", name);
    return NULL;
}

// Exactly the runs off the damaged pages, each real, with all its epochs and sweep membership.
static void s_expect_saved(const char *saved, const char *good, int64_t lost,
                           const coord_salvage_report_t *sr)
{
    int64_t got = jft_store_sql_int(saved, NULL, "SELECT count(*) FROM runs");
    print_message("runs_total=%d\nruns_recovered=%" PRId64 "\n", S_RUNS, got);
    assert_int_equal(got, S_RUNS - lost);
    assert_int_equal(s_table(sr, "runs")->rows, got);
    assert_int_equal(s_table(sr, "runs")->unreadable, lost); // rowids are dense: one per row
    assert_int_equal(jft_store_sql_int(saved, good,
                                       "SELECT count(*) FROM runs r JOIN orig.runs o "
                                       "ON o.id = r.id AND o.state = r.state"),
                     got);
    int64_t epochs = jft_store_sql_int(saved, NULL, "SELECT count(*) FROM epochs");
    print_message("epochs_recovered=%" PRId64 "\n", epochs);
    assert_int_equal(epochs, jft_store_sql_int(saved, good,
                                               "SELECT count(*) FROM orig.epochs WHERE "
                                               "run IN (SELECT id FROM main.runs)"));
    assert_int_equal(jft_store_sql_int(saved, NULL, "SELECT count(*) FROM sweep_runs"), got);
    assert_string_equal(sr->not_copied, "");
}

// The salvaged store is sound, keeps the identity, and the coordinator takes it with a note.
static void s_expect_taken_back(tstore_ctx_t *c, const char *saved)
{
    coord_store_check_report_t r = {0};
    jf_err_t err = {0};
    assert_int_equal(coord_store_check(saved, false, &r, &err), 0);
    assert_int_equal(r.problems, 0);
    assert_int_equal(rename(saved, c->path), 0);
    coord_store_t *st = coord_store_open_owned(c->path, c->dir, false, s_note, &err);
    if (!st) {
        fail_msg("salvaged store refused: %s", err.msg);
    }
    coord_store_destroy(&st);
    assert_non_null(strstr(s_note, "fewer than"));
}

static void test_damaged_store_salvaged(void **state)
{
    tstore_ctx_t *c = *state;
    s_fill(c);
    char good[S_PATH_LEN], saved[S_PATH_LEN];
    s_path(good, c, "undamaged.db");
    s_path(saved, c, "salvaged.db");
    s_copy_file(c->path, good);
    int64_t lost = jft_store_damage_runs(c->path, S_DAMAGED_PAGES, S_SEED);
    s_expect_corrupt_messages(c);
    coord_store_check_report_t r = {0};
    jf_err_t err = {0};
    assert_int_equal(coord_store_check(c->path, false, &r, &err), 0);
    print_message("check_problems=%zu\n", r.problems);
    assert_true(r.problems > 0);
    coord_salvage_report_t sr = {0};
    if (coord_store_salvage(c->path, saved, &sr, &err) != 0) {
        fail_msg("salvage: %s", err.msg);
    }
    s_expect_saved(saved, good, lost, &sr);
    s_expect_taken_back(c, saved);
}

static void test_backup_whole_and_not_overwriting(void **state)
{
    tstore_ctx_t *c = *state;
    s_fill(c);
    char out[S_PATH_LEN];
    s_path(out, c, "backup.db");
    int64_t runs = -1;
    jf_err_t err = {0};
    assert_int_equal(coord_store_backup(c->path, out, &runs, &err), 0);
    assert_int_equal(runs, S_RUNS);
    coord_store_check_report_t r = {0};
    assert_int_equal(coord_store_check(out, false, &r, &err), 0);
    assert_int_equal(r.problems, 0);
    assert_int_equal(r.runs, S_RUNS);
    assert_true(r.has_store_id);
    assert_int_equal(coord_store_backup(c->path, out, &runs, &err), -EEXIST);
    assert_non_null(strstr(err.msg, "not overwriting"));
    char missing[S_PATH_LEN];
    s_path(missing, c, "missing.db");
    assert_int_equal(coord_store_check(missing, false, &r, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "missing.db"));
}

// check, backup and salvage use SQLite's own tools: on a PostgreSQL store they refuse, saying
// so (never a silent skip), without printing the URI's password and without creating out_path.
static void test_admin_refuses_postgres(void **state)
{
    tstore_ctx_t *c = *state;
    static const char uri[] = "postgresql://jf:secret@127.0.0.1:1/jf";
    char out[S_PATH_LEN];
    s_path(out, c, "copy.db");
    jf_err_t err = {0};
    coord_store_check_report_t r = {0};
    coord_salvage_report_t sr = {0};
    int64_t runs = -1;
    int rcs[3] = {coord_store_check(uri, false, &r, &err), 0, 0};
    char msgs[3][sizeof err.msg];
    memcpy(msgs[0], err.msg, sizeof err.msg);
    rcs[1] = coord_store_backup(uri, out, &runs, &err);
    memcpy(msgs[1], err.msg, sizeof err.msg);
    rcs[2] = coord_store_salvage(uri, out, &sr, &err);
    memcpy(msgs[2], err.msg, sizeof err.msg);
    static const char *const verbs[3] = {"store check", "store backup", "store salvage"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rcs[i], -ENOTSUP);
        assert_non_null(strstr(msgs[i], verbs[i]));
        assert_non_null(strstr(msgs[i], "not supported on a PostgreSQL store"));
        assert_null(strstr(msgs[i], "secret"));
    }
    assert_int_equal(access(out, F_OK), -1);
    // The coordinator runs on a PostgreSQL store (docs/store.md §10): its open tries the server,
    // and one that cannot be reached fails it, without printing the password either.
    err = (jf_err_t){0};
    assert_null(coord_store_open_owned(uri, c->dir, false, s_note, &err));
    assert_int_equal(err.code, -EIO);
    assert_non_null(strstr(err.msg, "cannot connect"));
    assert_null(strstr(err.msg, "secret"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_store_truncated_refused, tstore_setup,
                                        tstore_teardown),
        cmocka_unit_test_setup_teardown(test_store_deleted_refused, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_store_moved_refused, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_store_replaced_refused, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_damaged_store_salvaged, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_backup_whole_and_not_overwriting, tstore_setup,
                                        tstore_teardown),
        cmocka_unit_test_setup_teardown(test_admin_refuses_postgres, tstore_setup, tstore_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
