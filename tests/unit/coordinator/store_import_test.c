/* coord_import_csv and coord_store_import_*: a good file lands as exactly the rows the test
 * wrote (read back with plain SQL and through coord_store_obs_each), a bad row skips its whole
 * run with its line number, a re-import is idempotent, a store failure rolls everything back,
 * and header problems (unknown or missing column) and broken quoting are refused whole. */
#include "coord_db.h"
#include "coord_import.h"
#include "store_support.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S_HEADER                                                                                   \
    "board,board_type,workload,cores,cpu_freq_mhz,gpu_freq_hz,emc_khz,workers,batch_size,epoch,"   \
    "epoch_time_s,mean_power_w,energy_j,fetch_stall_s,compute_s,source\n"
#define S_REPORTS_MAX 8

// One row of the good file, as the test writes it and expects it back.
typedef struct s_row {
    const char *board;
    int cores;
    const char *cpu_mhz; // text as written
    int64_t cpu_hz;      // what the test expects: cpu_mhz * 1e6, worked out by hand
    int epoch;
    double time_s, power_w, energy_j, stall_s, compute_s;
} s_row_t;

static const s_row_t s_good[] = {
    {"lab-1", 8, "2201.6", INT64_C(2201600000), 0, 30.5, 31.25, 953.125, 3.5, 27.0},
    {"lab-1", 8, "2201.6", INT64_C(2201600000), 1, 20.25, 30.0, 607.5, 0.25, 20.0},
    {"lab-1", 8, "2201.6", INT64_C(2201600000), 2, 20.5, 30.5, 625.25, 0.5, 20.0},
    {"lab-2", 4, "1190.4", INT64_C(1190400000), 1, 41.0, 18.0, 738.0, 1.0, 40.0},
};
#define S_N_GOOD (sizeof s_good / sizeof s_good[0])

typedef struct s_reports {
    size_t n;
    char msg[S_REPORTS_MAX][512];
} s_reports_t;

static void s_collect(const char *msg, void *arg)
{
    s_reports_t *r = arg;
    if (!r) {
        return;
    }
    if (r->n < S_REPORTS_MAX) {
        (void) snprintf(r->msg[r->n], sizeof r->msg[0], "%s", msg);
    }
    r->n++;
}

static void s_write(const tstore_ctx_t *c, const char *name, const char *text, char *path,
                    size_t size)
{
    (void) snprintf(path, size, "%s/%s", c->dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static void s_good_csv(char *buf, size_t size)
{
    size_t n = (size_t) snprintf(buf, size, "%s", S_HEADER);
    for (size_t i = 0; i < S_N_GOOD; i++) {
        const s_row_t *r = &s_good[i];
        n += (size_t) snprintf(buf + n, size - n,
                               "%s,orin-agx,resnet,%d,%s,1300500000,3199000,4,64,%d,%.17g,%.17g,"
                               "%.17g,%.17g,%.17g,lab-x\n",
                               r->board, r->cores, r->cpu_mhz, r->epoch, r->time_s, r->power_w,
                               r->energy_j, r->stall_s, r->compute_s);
    }
}

static int s_import(tstore_ctx_t *c, const char *path, s_reports_t *rep, coord_import_result_t *res,
                    jf_err_t *err)
{
    coord_import_opts_t o = {.path = path, .sweep = "lab"};
    return coord_import_csv(c->store, &o, s_collect, rep, res, err);
}

// The store read on a connection of its own, through the seam (a file or a PostgreSQL URI).
static coord_db_stmt_t *s_prepare(const tstore_ctx_t *c, const char *sql, coord_db_t **ret_db)
{
    jf_err_t err = {0};
    if (coord_db_open(c->path, true, ret_db, &err) != 0) {
        fail_msg("open %s: %s", c->path, err.msg);
    }
    coord_db_stmt_t *st = coord_db_prepare(*ret_db, sql, &err);
    if (!st) {
        fail_msg("prepare: %s", err.msg);
    }
    return st;
}

static int64_t s_count(const tstore_ctx_t *c, const char *sql)
{
    coord_db_t *db = NULL;
    coord_db_stmt_t *st = s_prepare(c, sql, &db);
    assert_int_equal(coord_db_step(st), COORD_DB_ROW);
    int64_t n = coord_db_col_int64(st, 0);
    coord_db_finalize(st);
    coord_db_close(&db);
    return n;
}

// Every epoch stored, checked against the row the test wrote (matched by board and epoch).
static void s_expect_good_rows(const tstore_ctx_t *c)
{
    coord_db_t *db = NULL;
    coord_db_stmt_t *st =
        s_prepare(c,
                  "SELECT r.board, e.epoch, e.warmup, e.e2e_us, e.fetch_stall_us,"
                  " e.compute_us, e.energy_mj, e.avg_power_mw, r.custom_cores,"
                  " r.custom_cpu_hz, r.custom_gpu_hz, r.custom_emc_hz, r.state, b.platform,"
                  " b.type, r.workers, r.batch_size FROM epochs e JOIN runs r ON r.id ="
                  " e.run JOIN boards b ON b.name = r.board WHERE e.run = ?",
                  &db);
    for (size_t i = 0; i < S_N_GOOD; i++) {
        const s_row_t *w = &s_good[i];
        coord_import_run_t key = {.cores = w->cores,
                                  .cpu_hz = w->cpu_hz,
                                  .gpu_hz = INT64_C(1300500000),
                                  .emc_hz = INT64_C(3199000000),
                                  .workers = 4,
                                  .batch_size = 64};
        (void) snprintf(key.board, sizeof key.board, "%s", w->board);
        (void) snprintf(key.workload, sizeof key.workload, "resnet");
        (void) snprintf(key.storage, sizeof key.storage, "unknown");
        char id[JF_RUN_ID_LEN + 1];
        coord_import_run_id("lab", &key, id);
        coord_db_reset(st);
        assert_int_equal(coord_db_bind_text(st, 1, id), 0);
        bool found = false;
        while (coord_db_step(st) == COORD_DB_ROW) {
            if (coord_db_col_int64(st, 1) != w->epoch) {
                continue;
            }
            found = true;
            assert_string_equal(coord_db_col_text(st, 0), w->board);
            assert_int_equal(coord_db_col_int64(st, 2), w->epoch == 0);
            assert_int_equal(coord_db_col_int64(st, 3), llround(w->time_s * 1e6));
            assert_int_equal(coord_db_col_int64(st, 4), llround(w->stall_s * 1e6));
            assert_int_equal(coord_db_col_int64(st, 5), llround(w->compute_s * 1e6));
            assert_true(fabs(coord_db_col_double(st, 6) - w->energy_j * 1000.0) < 1e-6);
            assert_true(fabs(coord_db_col_double(st, 7) - w->power_w * 1000.0) < 1e-6);
            assert_int_equal(coord_db_col_int64(st, 8), w->cores);
            assert_int_equal(coord_db_col_int64(st, 9), w->cpu_hz);
            assert_int_equal(coord_db_col_int64(st, 10), INT64_C(1300500000));
            assert_int_equal(coord_db_col_int64(st, 11), INT64_C(3199000000));
            assert_string_equal(coord_db_col_text(st, 12), "done");
            assert_string_equal(coord_db_col_text(st, 13), "imported");
            assert_string_equal(coord_db_col_text(st, 14), "orin-agx");
            assert_int_equal(coord_db_col_int64(st, 15), 4);
            assert_int_equal(coord_db_col_int64(st, 16), 64);
        }
        assert_true(found);
    }
    coord_db_finalize(st);
    coord_db_close(&db);
}

typedef struct s_obs_sum {
    size_t n;
    int64_t e2e_us;
    bool all_op, all_energy, all_imported;
} s_obs_sum_t;

static int s_obs(const coord_obs_t *o, void *arg)
{
    s_obs_sum_t *s = arg;
    s->n++;
    s->e2e_us += o->e2e_us;
    s->all_op = s->all_op && o->has_op && o->cores > 0 && o->emc_hz == INT64_C(3199000000);
    s->all_energy = s->all_energy && o->has_energy;
    s->all_imported = s->all_imported && strcmp(o->platform, "imported") == 0 &&
                      strcmp(o->board_type, "orin-agx") == 0;
    return 0;
}

static void test_good_file(void **state)
{
    tstore_ctx_t *c = *state;
    char text[4096], path[PATH_MAX + 32];
    s_good_csv(text, sizeof text);
    s_write(c, "good.csv", text, path, sizeof path);
    s_reports_t rep = {0};
    coord_import_result_t res = {0};
    jf_err_t err = {0};
    assert_int_equal(s_import(c, path, &rep, &res, &err), 0);
    assert_int_equal(rep.n, 0);
    assert_int_equal(res.rows, S_N_GOOD);
    assert_int_equal(res.runs, 2);
    assert_int_equal(res.epochs, S_N_GOOD);
    assert_int_equal(res.skipped_rows + res.skipped_runs, 0);
    s_expect_good_rows(c);
    assert_int_equal(s_count(c, "SELECT count(*) FROM epochs"), S_N_GOOD);
    assert_int_equal(
        s_count(c, "SELECT count(*) FROM sweeps WHERE source = 'imported' AND origin = 'lab-x'"),
        1);
    assert_int_equal(s_count(c, "SELECT count(*) FROM boards WHERE online = 0"), 2);
    // The analysis sees the measured epochs only (epoch 0 of lab-1 is the warm-up).
    s_obs_sum_t sum = {.all_op = true, .all_energy = true, .all_imported = true};
    assert_int_equal(coord_store_obs_each(c->store, "lab", s_obs, &sum, &err), 0);
    int64_t want_us = 0;
    for (size_t i = 0; i < S_N_GOOD; i++) {
        want_us += s_good[i].epoch ? llround(s_good[i].time_s * 1e6) : 0;
    }
    assert_int_equal(sum.n, S_N_GOOD - 1);
    assert_int_equal(sum.e2e_us, want_us);
    assert_true(sum.all_op && sum.all_energy && sum.all_imported);
}

static void test_bad_row_skips_run(void **state)
{
    tstore_ctx_t *c = *state;
    char path[PATH_MAX + 32];
    s_write(c, "bad.csv",
            S_HEADER "a,orin-agx,w,8,2201.6,1300500000,3199000,4,64,1,20,30,600,0,20,s\n"
                     "b,orin-agx,w,8,2201.6,1300500000,3199000,4,64,1,20,30,600,0,20,s\n"
                     "b,orin-agx,w,8,2201.6,1300500000,3199000,4,64,2,twenty,30,600,0,20,s\n"
                     "a,orin-agx,w,8,2201.6,1300500000,3199000,4,64,2,20,30,600,0,20,s\n",
            path, sizeof path);
    s_reports_t rep = {0};
    coord_import_result_t res = {0};
    jf_err_t err = {0};
    assert_int_equal(s_import(c, path, &rep, &res, &err), 0);
    assert_int_equal(rep.n, 1);
    char want[PATH_MAX + 64];
    (void) snprintf(want, sizeof want, "%s:4: column 'epoch_time_s'", path);
    assert_non_null(strstr(rep.msg[0], want));
    assert_int_equal(res.rows, 4);
    assert_int_equal(res.runs, 1);
    assert_int_equal(res.epochs, 2);
    assert_int_equal(res.skipped_rows, 2);
    assert_int_equal(res.skipped_runs, 1);
    // Never half-loaded: board b's good row (line 3) is not stored either.
    assert_int_equal(s_count(c, "SELECT count(*) FROM runs WHERE board = 'b'"), 0);
    assert_int_equal(s_count(c, "SELECT count(*) FROM epochs"), 2);
}

static const char s_dump_sql[] =
    "SELECT (SELECT count(*) FROM runs) || '/' || (SELECT count(*) FROM sweep_runs) || '/' ||"
    " (SELECT count(*) FROM boards) || '/' || (SELECT count(*) FROM sweeps) || '/' ||"
    " (SELECT sum(e2e_us) + count(*) FROM epochs)";

static char *s_dump(const tstore_ctx_t *c)
{
    coord_db_t *db = NULL;
    coord_db_stmt_t *st = s_prepare(c, s_dump_sql, &db);
    assert_int_equal(coord_db_step(st), COORD_DB_ROW);
    char *d = strdup(coord_db_col_text(st, 0));
    coord_db_finalize(st);
    coord_db_close(&db);
    return d;
}

static void test_reimport_idempotent(void **state)
{
    tstore_ctx_t *c = *state;
    char text[4096], path[PATH_MAX + 32];
    s_good_csv(text, sizeof text);
    s_write(c, "good.csv", text, path, sizeof path);
    coord_import_result_t res = {0};
    jf_err_t err = {0};
    assert_int_equal(s_import(c, path, NULL, &res, &err), 0);
    char *first = s_dump(c);
    assert_int_equal(s_import(c, path, NULL, &res, &err), 0);
    char *second = s_dump(c);
    assert_string_equal(first, second);
    assert_int_equal(s_count(c, "SELECT count(*) FROM runs"), 2);
    assert_int_equal(s_count(c, "SELECT count(*) FROM epochs"), S_N_GOOD);
    free(first);
    free(second);
}

static void test_store_failure_rolls_back(void **state)
{
    tstore_skip_on_postgres("it injects the failure with a SQLite trigger on the store file");
    tstore_ctx_t *c = *state;
    char text[4096], path[PATH_MAX + 32];
    s_good_csv(text, sizeof text);
    s_write(c, "good.csv", text, path, sizeof path);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(c->path, &db), SQLITE_OK);
    // A real SQLite failure midway: the second run's epoch 2 insert aborts.
    assert_int_equal(sqlite3_exec(db,
                                  "CREATE TRIGGER fail_epoch BEFORE INSERT ON epochs WHEN "
                                  "NEW.epoch = 2 BEGIN SELECT RAISE(ABORT, 'injected'); END",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    coord_import_result_t res = {0};
    jf_err_t err = {0};
    assert_int_equal(s_import(c, path, NULL, &res, &err), -EIO);
    assert_non_null(strstr(err.msg, "injected"));
    assert_int_equal(s_count(c, "SELECT count(*) FROM sweeps"), 0);
    assert_int_equal(s_count(c, "SELECT count(*) FROM runs"), 0);
    assert_int_equal(s_count(c, "SELECT count(*) FROM epochs"), 0);
    assert_int_equal(s_count(c, "SELECT count(*) FROM boards"), 0);
}

// Files refused whole: {content, expected code, fragment after "FILE"}.
typedef struct s_refusal {
    const char *text;
    int code;
    const char *fragment;
} s_refusal_t;

static const s_refusal_t s_refusals[] = {
    {"board,board_type,workload,colour\n", -EINVAL, ":1: unknown column 'colour'"},
    {"board,board_type,workload,cores,cpu_hz,gpu_hz,emc_hz,workers,batch_size,epoch,"
     "epoch_time_s,mean_power_w\nx,orin-agx,w,8,1,1,1,0,1,1,1,1\n",
     -EINVAL, ":1: required column 'energy_j' is missing"},
    {"board,cpu_hz,cpu_mhz\n", -EINVAL, ":1: column 'cpu_freq_hz' is given twice"},
    {"", -EINVAL, ": empty file: a header row is required"},
    {S_HEADER "a,orin-agx,w,8,2201.6,1300500000,3199000,4,64,1,20,30,600,0,20,s\n"
              "a,\"orin\"agx,w,8,2201.6,1300500000,3199000,4,64,2,20,30,600,0,20,s\n",
     -EINVAL, ":3: malformed quoting"},
    {S_HEADER "a,\"orin-agx,w,8,2201.6,1300500000,3199000,4,64,1,20,30,600,0,20,s\n", -EINVAL,
     ":2: a quoted field is not closed by the end of the file"},
    {S_HEADER "a,sim,w,8,2201.6,1300500000,3199000,4,64,1,20,30,600,0,20,s\n", -EINVAL,
     ": no run could be imported"},
};

static void test_refused_files(void **state)
{
    tstore_ctx_t *c = *state;
    for (size_t i = 0; i < sizeof s_refusals / sizeof s_refusals[0]; i++) {
        char path[PATH_MAX + 32], want[PATH_MAX + 128];
        s_write(c, "refused.csv", s_refusals[i].text, path, sizeof path);
        coord_import_result_t res = {0};
        jf_err_t err = {0};
        int rc = s_import(c, path, NULL, &res, &err);
        (void) snprintf(want, sizeof want, "%s%s", path, s_refusals[i].fragment);
        if (rc != s_refusals[i].code || !strstr(err.msg, want)) {
            fail_msg("case %zu: rc %d, '%s'; want %d, '%s'", i, rc, err.msg, s_refusals[i].code,
                     want);
        }
        assert_int_equal(s_count(c, "SELECT count(*) FROM sweeps"), 0);
    }
}

// Bad rows: {row after S_HEADER, fragment of the report after "FILE:2: "}.
typedef struct s_bad_row {
    const char *row;
    const char *fragment;
} s_bad_row_t;

static const s_bad_row_t s_bad_rows[] = {
    {"a,orin-agx,w,8,2201.6,1300500000,3199000,4,64,1,20,30,600,0,20\n", "15 fields, but"},
    {"a,orin-nx,w,8,2201.6,1300500000,3199000,4,64,1,20,30,600,0,20,s\n",
     "column 'board_type': unknown board type 'orin-nx'"},
    {"a,orin-agx,w,13,2201.6,1300500000,3199000,4,64,1,20,30,600,0,20,s\n", "column 'cores'"},
    {"a,xavier-nx,w,8,2201.6,1300500000,3199000,4,64,1,20,30,600,0,20,s\n",
     "column 'cores': 8 cores, but a xavier-nx has at most 6"},
    {"a,orin-agx,w,8,-5,1300500000,3199000,4,64,1,20,30,600,0,20,s\n", "column 'cpu_freq_hz'"},
    {"a,orin-agx,w,8,2201.6,1300500000,3199000,4,64,1,20,30,600,25,20,s\n",
     "column 'fetch_stall_s'"},
    {"a,orin-agx,W!,8,2201.6,1300500000,3199000,4,64,1,20,30,600,0,20,s\n",
     "column 'workload': 'W!' is not a name"},
    {"a,orin-agx,w,8,2201.6,1300500000,3199000,4,64,1,20,0,600,0,20,s\n", "column 'mean_power_w'"},
};

static void test_bad_rows_table(void **state)
{
    tstore_ctx_t *c = *state;
    for (size_t i = 0; i < sizeof s_bad_rows / sizeof s_bad_rows[0]; i++) {
        char text[1024], path[PATH_MAX + 32], want[PATH_MAX + 128];
        (void) snprintf(text, sizeof text,
                        S_HEADER "%s"
                                 "ok,orin-agx,w,8,2201.6,1300500000,3199000,4,64,1,20,30,600,0,20,"
                                 "s\n",
                        s_bad_rows[i].row);
        s_write(c, "rows.csv", text, path, sizeof path);
        s_reports_t rep = {0};
        coord_import_result_t res = {0};
        jf_err_t err = {0};
        assert_int_equal(s_import(c, path, &rep, &res, &err), 0);
        (void) snprintf(want, sizeof want, "%s:2: %s", path, s_bad_rows[i].fragment);
        if (rep.n != 1 || !strstr(rep.msg[0], want)) {
            fail_msg("case %zu: %zu reports, first '%s'; want '%s'", i, rep.n,
                     rep.n ? rep.msg[0] : "", want);
        }
        assert_int_equal(res.runs, 1);
        assert_int_equal(res.skipped_runs, 1);
    }
}

static void test_duplicate_epoch(void **state)
{
    tstore_ctx_t *c = *state;
    char path[PATH_MAX + 32], want[PATH_MAX + 128];
    s_write(c, "dup.csv",
            S_HEADER "a,orin-agx,w,8,2201.6,1300500000,3199000,4,64,1,20,30,600,0,20,s\n"
                     "a,orin-agx,w,8,2201.6,1300500000,3199000,4,64,1,21,30,630,0,20,s\n"
                     "b,orin-agx,w,8,2201.6,1300500000,3199000,4,64,1,21,30,630,0,20,s\n",
            path, sizeof path);
    s_reports_t rep = {0};
    coord_import_result_t res = {0};
    jf_err_t err = {0};
    assert_int_equal(s_import(c, path, &rep, &res, &err), 0);
    (void) snprintf(want, sizeof want, "%s:3: epoch 1 of this run is also at line 2", path);
    assert_int_equal(rep.n, 1);
    assert_non_null(strstr(rep.msg[0], want));
    assert_int_equal(res.runs, 1);
    assert_int_equal(res.skipped_rows, 2);
}

// --board-type: the type of a file without the column; a row whose column disagrees is bad.
static void test_board_type_option(void **state)
{
    tstore_ctx_t *c = *state;
    char path[PATH_MAX + 32];
    s_write(c, "notype.csv",
            "board,workload,cores,cpu_hz,gpu_hz,emc_hz,workers,batch_size,epoch,epoch_time_s,"
            "mean_power_w,energy_j\n"
            "nx-lab,w,6,1190400000,510000000,1600000000,2,32,1,20,10,200\n",
            path, sizeof path);
    coord_import_result_t res = {0};
    jf_err_t err = {0};
    coord_import_opts_t o = {.path = path, .sweep = "lab"};
    assert_int_equal(coord_import_csv(c->store, &o, NULL, NULL, &res, &err), -EINVAL);
    assert_non_null(strstr(err.msg, ":1: required column 'board_type' is missing"));
    o.board_type = "xavier-nx";
    assert_int_equal(coord_import_csv(c->store, &o, NULL, NULL, &res, &err), 0);
    assert_int_equal(res.runs, 1);
    assert_int_equal(s_count(c, "SELECT count(*) FROM boards WHERE type = 'xavier-nx'"), 1);
    char text[1024];
    s_good_csv(text, sizeof text);
    s_write(c, "good.csv", text, path, sizeof path);
    s_reports_t rep = {0};
    o.sweep = "lab2";
    assert_int_equal(coord_import_csv(c->store, &o, s_collect, &rep, &res, &err), -EINVAL);
    assert_int_equal(rep.n, S_N_GOOD);
    assert_non_null(strstr(rep.msg[0], "'orin-agx' differs from --board-type 'xavier-nx'"));
}

static void test_fleet_board_refused(void **state)
{
    tstore_ctx_t *c = *state;
    jf_err_t err = {0};
    assert_int_equal(coord_store_board_hello(c->store, "lab-1", "orin-agx", "jetson", NULL, &err),
                     0);
    char text[4096], path[PATH_MAX + 32];
    s_good_csv(text, sizeof text);
    s_write(c, "good.csv", text, path, sizeof path);
    coord_import_result_t res = {0};
    assert_int_equal(s_import(c, path, NULL, &res, &err), -EEXIST);
    assert_non_null(strstr(err.msg, "board 'lab-1' is already in the store as a fleet board"));
    assert_int_equal(s_count(c, "SELECT count(*) FROM runs"), 0);
    assert_int_equal(s_count(c, "SELECT count(*) FROM boards WHERE platform = 'jetson'"), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_good_file, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_bad_row_skips_run, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_reimport_idempotent, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_store_failure_rolls_back, tstore_setup,
                                        tstore_teardown),
        cmocka_unit_test_setup_teardown(test_refused_files, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_bad_rows_table, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_epoch, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_board_type_option, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_fleet_board_refused, tstore_setup, tstore_teardown),
    };
    int rc = tstore_main_begin();
    if (rc != 0) {
        return rc;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    tstore_main_end();
    return rc;
}
