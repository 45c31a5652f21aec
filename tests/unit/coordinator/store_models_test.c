/* Unit tests of the store's models table (coord_store_models.c): a save/load round trip of every
 * field, ids in order through models_each, an unknown id, a constraint refused, and a read-only
 * store that refuses to write. */
#include "coord_store.h"
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_roundtrip, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_errors, tstore_setup, tstore_teardown),
    };
    int rc = tstore_main_begin();
    if (rc != 0) {
        return rc;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    tstore_main_end();
    return rc;
}
