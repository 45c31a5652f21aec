/* The one-place proof (docs/schema.md "Adding a run field"): built with JF_SCHEMA_TEST_FIELD,
 * the run spec has one more optional field, test_knob, added only as a struct member and a row
 * of the schema table (common/jf_run_spec_schema.c). This test checks that it round-trips
 * through the JSON form (run.assign), enters the run id only when set, gets a store column (added
 * on open) with its binds, an export column under its header, and a trainer option that parses
 * back, and that jetfleet-train's option parser takes it into its parsed options, with no
 * parser, encoder, binder or list edited for it. */
#include "coord_store_internal.h"
#include "jf_msg_run.h"
#include "jf_run_spec.h"
#include "store_support.h"
#include "train_options.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#ifndef JF_SCHEMA_TEST_FIELD
#error                                                                                             \
    "schema_field_test is built with JF_SCHEMA_TEST_FIELD (tests/unit/coordinator/coordinator.cmake)"
#endif

#define T_KNOB 7

static jf_run_spec_t t_spec(int knob)
{
    jf_run_spec_t s = tstore_spec(TSTORE_BOARD, 0);
    s.test_knob = knob;
    jf_run_spec_compute_id(&s);
    return s;
}

static void test_json_and_message(void **state)
{
    (void)state;
    jf_run_spec_t s = t_spec(T_KNOB);
    json_t *msg = jf_msg_run_assign_new(3, &s, 1);
    assert_non_null(msg);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(msg, "params"), "test_knob")), T_KNOB);
    jf_run_spec_t back = {0};
    int64_t attempt = 0;
    jf_err_t err = {0};
    assert_int_equal(jf_msg_run_assign_parse(msg, &back, &attempt, &err), 0);
    assert_int_equal(back.test_knob, T_KNOB);
    // Its range comes from the table as well.
    json_object_set_new(json_object_get(msg, "params"), "test_knob", json_integer(1001));
    assert_int_equal(jf_msg_run_assign_parse(msg, &back, &attempt, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "'test_knob' must be in [0, 1000], got 1001"));
    json_decref(msg);
    // Unset, it is left out of the form.
    jf_run_spec_t zero = t_spec(0);
    json_t *j = jf_run_spec_to_json(&zero);
    assert_null(json_object_get(j, "test_knob"));
    json_decref(j);
}

static void test_run_id(void **state)
{
    (void)state;
    jf_run_spec_t without = t_spec(0), with = t_spec(T_KNOB);
    jf_run_spec_t plain = tstore_spec(TSTORE_BOARD, 0); // computed without the field set
    assert_string_equal(without.run_id, plain.run_id);
    assert_string_not_equal(with.run_id, without.run_id);
}

static void test_store_and_export(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[1] = {t_spec(T_KNOB)};
    tstore_put(c->store, runs, 1);
    jf_run_spec_t back = {0};
    jf_err_t err = {0};
    assert_int_equal(coord_store_run_spec(c->store, runs[0].run_id, &back, &err), 0);
    assert_int_equal(back.test_knob, T_KNOB);
    tstore_table_t t;
    tstore_select(c->store, COORD_TABLE_RUNS, NULL, NULL, &t);
    assert_string_equal(tstore_val(&t, 0, "test_knob"), "7");
    tstore_table_free(&t);
}

static void test_trainer_argv(void **state)
{
    (void)state;
    jf_run_spec_t s = t_spec(T_KNOB);
    jf_schema_argv_t argv;
    assert_int_equal(jf_schema_to_argv(jf_run_spec_schema(), &s, NULL, &argv), 0);
    size_t at = argv.n;
    for (size_t i = 0; i + 1 < argv.n; i++) {
        at = strcmp(argv.args[i], "--test-knob") == 0 ? i : at;
    }
    assert_true(at < argv.n);
    assert_string_equal(argv.args[at + 1], "7");
    jf_run_spec_t parsed = {0};
    jf_err_t err = {0};
    assert_int_equal(
        jf_schema_from_flag(jf_run_spec_schema(), &parsed, "--test-knob", argv.args[at + 1], &err),
        0);
    assert_int_equal(parsed.test_knob, T_KNOB);
    assert_int_equal(
        jf_schema_from_flag(jf_run_spec_schema(), &parsed, "--test-knob", "5000", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "--test-knob"));
}

// The trainer takes the option with no handler of its own: train_options reads the table.
static void test_trainer_options(void **state)
{
    (void) state;
    char *argv[] = {
        "jetfleet-train", "--model", "lenet5",   "--data", "/d",          "--workers", "0",
        "--batch",        "16",      "--epochs", "2",      "--test-knob", "7",         NULL};
    train_run_opts_t o = {0};
    bool help = false;
    jf_err_t err = {0};
    assert_int_equal(train_options_parse(13, argv, &o, &help, &err), 0);
    assert_false(help);
    assert_int_equal(o.run.test_knob, T_KNOB);
    assert_int_equal(o.batch, 16);
    argv[12] = "1001"; // the table's range, [0, 1000]
    assert_int_equal(train_options_parse(13, argv, &o, &help, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "--test-knob: 1001 is out of range [0, 1000]"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_and_message),
        cmocka_unit_test(test_run_id),
        cmocka_unit_test_setup_teardown(test_store_and_export, tstore_setup, tstore_teardown),
        cmocka_unit_test(test_trainer_argv),
        cmocka_unit_test(test_trainer_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
