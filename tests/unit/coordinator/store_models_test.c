/* Unit tests of the store's models table (coord_store_models.c): a save/load round trip of every
 * field, ids in order through models_each, an unknown id, a constraint refused, a read-only
 * store that refuses to write, and the 12 -> 13 migration (the phys kind) keeping rows and ids. */
#include "coord_db.h"
#include "coord_store.h"
#include "coord_store_internal.h"
#include "store_support.h"

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
// clang-format on

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static coord_model_row_t t_row(const char *target, int64_t from)
{
    coord_model_row_t r = {.training_runs = 54,
                           .cv_mape_pct = 3.25,
                           .transfer_from = from,
                           .created_us = 1700000000123456};
    snprintf(r.name, sizeof r.name, "m-%s", target);
    snprintf(r.sweep, sizeof r.sweep, "grid");
    snprintf(r.scope, sizeof r.scope, "board");
    snprintf(r.scope_value, sizeof r.scope_value, "nx-01");
    snprintf(r.workload, sizeof r.workload, "lenet5-mnist");
    snprintf(r.target, sizeof r.target, "%s", target);
    snprintf(r.kind, sizeof r.kind, "mlp");
    r.features = strdup("{\"inputs\":[\"cores\"],\"workers\":2,\"batch_size\":32}");
    r.params = strdup("{\"w\":[0.5,-1.25e-7]}");
    return r;
}

typedef struct t_seen {
    int64_t ids[8];
    int n;
} t_seen_t;

static int t_collect(const coord_model_row_t *row, void *arg)
{
    t_seen_t *s = arg;
    s->ids[s->n++] = row->id;
    return 0;
}

static void test_roundtrip(void **state)
{
    tstore_ctx_t *ctx = *state;
    coord_model_row_t in = t_row("time", 0);
    int64_t id1 = 0;
    int64_t id2 = 0;
    jf_err_t err = {0};
    assert_int_equal(coord_store_model_put(ctx->store, &in, &id1, &err), 0);
    coord_model_row_t in2 = t_row("power", id1);
    in2.cv_mape_pct = NAN; // stored as NULL, read back as NaN
    assert_int_equal(coord_store_model_put(ctx->store, &in2, &id2, &err), 0);
    assert_true(id2 > id1);
    coord_model_row_t out = {0};
    assert_int_equal(coord_store_model_get(ctx->store, id1, &out, &err), 0);
    assert_int_equal(out.id, id1);
    assert_string_equal(out.name, in.name);
    assert_string_equal(out.sweep, "grid");
    assert_string_equal(out.scope, "board");
    assert_string_equal(out.scope_value, "nx-01");
    assert_string_equal(out.workload, "lenet5-mnist");
    assert_string_equal(out.target, "time");
    assert_string_equal(out.kind, "mlp");
    assert_string_equal(out.features, in.features);
    assert_string_equal(out.params, in.params);
    assert_int_equal(out.training_runs, 54);
    assert_true(out.cv_mape_pct == 3.25);
    assert_int_equal(out.transfer_from, 0);
    assert_int_equal(out.created_us, 1700000000123456);
    coord_model_row_fini(&out);
    assert_int_equal(coord_store_model_get(ctx->store, id2, &out, &err), 0);
    assert_int_equal(out.transfer_from, id1);
    assert_true(isnan(out.cv_mape_pct));
    coord_model_row_fini(&out);
    t_seen_t seen = {0};
    assert_int_equal(coord_store_models_each(ctx->store, t_collect, &seen, &err), 0);
    assert_int_equal(seen.n, 2);
    assert_int_equal(seen.ids[0], id1);
    assert_int_equal(seen.ids[1], id2);
    coord_model_row_fini(&in);
    coord_model_row_fini(&in2);
}

static void test_errors(void **state)
{
    tstore_ctx_t *ctx = *state;
    coord_model_row_t out = {0};
    jf_err_t err = {0};
    assert_int_equal(coord_store_model_get(ctx->store, 42, &out, &err), -ENOENT);
    assert_string_equal(err.msg, "no model with id 42");
    coord_model_row_t bad = t_row("latency", 0); // not a target
    int64_t id = 0;
    assert_int_equal(coord_store_model_put(ctx->store, &bad, &id, &err), -EIO);
    // The database's own words: SQLite "CHECK constraint failed", PostgreSQL "violates check
    // constraint".
    assert_true(strstr(err.msg, "CHECK") || strstr(err.msg, "check constraint"));
    coord_model_row_fini(&bad);
    coord_store_t *ro = coord_store_open(ctx->path, true, &err);
    assert_non_null(ro);
    coord_model_row_t r = t_row("time", 0);
    assert_int_not_equal(coord_store_model_put(ro, &r, &id, &err), 0);
    coord_model_row_fini(&r);
    coord_store_destroy(&ro);
}

// A version-12 models table (migration 7 -> 8's, kinds linear and mlp) with rows 5 and 7 (7 a
// transfer from 5), put back in place of the current one; the store is then reopened, which
// migrates it to 13.
static const char t_v12[] =
    "BEGIN IMMEDIATE;"
    "CREATE TABLE models_old(id INTEGER PRIMARY KEY, name TEXT NOT NULL, sweep TEXT NOT NULL,"
    " scope TEXT NOT NULL CHECK(scope IN ('board','type')), scope_value TEXT NOT NULL,"
    " workload TEXT NOT NULL, target TEXT NOT NULL CHECK(target IN ('time','power','energy')),"
    " kind TEXT NOT NULL CHECK(kind IN ('linear','mlp')), features TEXT NOT NULL,"
    " params TEXT NOT NULL, training_runs INTEGER NOT NULL, cv_mape_pct REAL,"
    " transfer_from INTEGER REFERENCES models_old(id), created_us INTEGER NOT NULL);"
    "INSERT INTO models_old VALUES(5, 'a', 'grid', 'board', 'nx-01', 'w', 'time', 'mlp', '[]',"
    " '{}', 10, 2.5, NULL, 1);"
    "INSERT INTO models_old VALUES(7, 'b', 'grid', 'board', 'nx-01', 'w', 'time', 'linear', '[]',"
    " '{}', 10, NULL, 5, 2);"
    "DROP TABLE models;"
    "ALTER TABLE models_old RENAME TO models;"
    "PRAGMA user_version = 12;"
    "COMMIT;";

static void test_migration_phys_kind(void **state)
{
    tstore_ctx_t *ctx = *state;
    jf_err_t err = {0};
    assert_int_equal(coord_db_exec_script(ctx->store->db, t_v12, &err), 0);
    coord_store_destroy(&ctx->store);
    ctx->store = coord_store_open(ctx->path, false, &err);
    if (!ctx->store) {
        fail_msg("reopen: %s", err.msg);
    }
    assert_int_equal(coord_store_schema_version(ctx->store), 13);
    coord_model_row_t out = {0};
    assert_int_equal(coord_store_model_get(ctx->store, 7, &out, &err), 0);
    assert_string_equal(out.kind, "linear");
    assert_int_equal(out.transfer_from, 5);
    coord_model_row_fini(&out);
    assert_int_equal(coord_store_model_get(ctx->store, 5, &out, &err), 0);
    assert_true(out.cv_mape_pct == 2.5);
    coord_model_row_fini(&out);
    // A new model takes the next id after the copied ones (on PostgreSQL: the moved sequence).
    coord_model_row_t in = t_row("power", 7);
    snprintf(in.kind, sizeof in.kind, "phys");
    int64_t id = 0;
    if (coord_store_model_put(ctx->store, &in, &id, &err) != 0) {
        fail_msg("put phys: %s", err.msg);
    }
    assert_int_equal(id, 8);
    snprintf(in.kind, sizeof in.kind, "cubic");
    assert_int_equal(coord_store_model_put(ctx->store, &in, &id, &err), -EIO);
    assert_true(strstr(err.msg, "CHECK") || strstr(err.msg, "check constraint"));
    coord_model_row_fini(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_roundtrip, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_errors, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_migration_phys_kind, tstore_setup, tstore_teardown),
    };
    int rc = tstore_main_begin();
    if (rc != 0) {
        return rc;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    tstore_main_end();
    return rc;
}
