/* Unit tests of the rounds file loader (jf_rounds.h): the good fixtures load with every field,
 * every tests/fixtures/rounds/bad/ file fails with its file:line:col (table-driven), and the
 * board selection resolves against tests/fixtures/yaml/good/fleet-lab.yaml. */
#include "jf_rounds.h"

#include "jft_fs.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static jf_rounds_t *t_load(const char *rel, jf_err_t *err)
{
    char path[PATH_MAX] = {0};
    jft_fixture(rel, path);
    return jf_rounds_load(path, err);
}

static jf_fleet_config_t *t_lab(void)
{
    char path[PATH_MAX] = {0};
    jft_fixture("yaml/good/fleet-lab.yaml", path);
    jf_err_t err = {0};
    jf_fleet_config_t *f = jf_fleet_config_load(path, &err);
    if (!f) {
        fail_msg("fleet-lab.yaml: %s", err.msg);
    }
    return f;
}

static void test_good_every_key(void **state)
{
    (void) state;
    jf_err_t err = {0};
    jf_rounds_t *r = t_load("rounds/good.yaml", &err);
    if (!r) {
        fail_msg("%s", err.msg);
    }
    assert_string_equal(r->name, "fl-lab");
    assert_int_equal(r->n_select, 2);
    assert_int_equal(r->select[0].by, JF_ROUNDS_BY_TYPE);
    assert_int_equal(r->select[0].type, JF_BOARD_XAVIER_NX);
    assert_int_equal(r->select[1].by, JF_ROUNDS_BY_NAME);
    assert_string_equal(r->select[1].value, "nano-01");
    assert_string_equal(r->workload, "lenet5-mnist");
    assert_int_equal(r->batch_size, 32);
    assert_int_equal(r->workers, 2);
    assert_string_equal(r->storage, "nvme");
    assert_int_equal(r->rounds, 4);
    assert_int_equal(r->local_unit, JF_ROUNDS_EPOCHS);
    assert_int_equal(r->local_count, 2);
    assert_int_equal(r->policy, JF_ROUNDS_EQUAL_FINISH);
    assert_true(r->spread_pct == 8.0);
    assert_int_equal(r->timeout_us, INT64_C(90000000));
    assert_int_equal(r->straggler, JF_ROUNDS_WAIT);
    assert_int_equal(r->n_budget, 2);
    assert_int_equal(r->n_idle, 1);
    assert_int_equal(r->seed, 7);
    jf_rounds_destroy(&r);
    assert_null(r);
}

static void test_minimal_defaults(void **state)
{
    (void) state;
    jf_err_t err = {0};
    jf_rounds_t *r = t_load("rounds/minimal.yaml", &err);
    if (!r) {
        fail_msg("%s", err.msg);
    }
    assert_int_equal(r->policy, JF_ROUNDS_DEADLINE);
    assert_int_equal(r->deadline_us, INT64_C(30000000));
    assert_int_equal(r->workers, JF_ROUNDS_DEFAULT_WORKERS);
    assert_int_equal(r->timeout_us, JF_ROUNDS_DEFAULT_TIMEOUT_US);
    assert_true(r->spread_pct == JF_ROUNDS_DEFAULT_SPREAD_PCT);
    assert_int_equal(r->straggler, JF_ROUNDS_DROP);
    assert_int_equal(r->local_unit, JF_ROUNDS_MINIBATCHES);
    assert_int_equal(r->local_count, 20);
    assert_string_equal(r->storage, "");
    jf_rounds_destroy(&r);
}

typedef struct t_bad {
    const char *file; // under tests/fixtures/rounds/bad/
    int code;
    const char *fragment; // expected in err.msg
} t_bad_t;

static const t_bad_t t_bad_files[] = {
    {"rounds-unknown-key.yaml", -EINVAL,
     "rounds-unknown-key.yaml:8:1: unknown key 'polcy' in the rounds file"},
    {"rounds-missing-policy.yaml", -EINVAL,
     "rounds-missing-policy.yaml:1:1: missing required "
     "key 'policy'"},
    {"rounds-bad-policy.yaml", -EINVAL,
     "rounds-bad-policy.yaml:7:9: unknown policy 'equal-finnish', expected maxn, equal-finish or "
     "deadline; did you mean 'equal-finish'?"},
    {"rounds-deadline-missing.yaml", -EINVAL,
     "rounds-deadline-missing.yaml:7:9: policy deadline needs a 'deadline'"},
    {"rounds-deadline-unused.yaml", -EINVAL,
     "rounds-deadline-unused.yaml:8:11: 'deadline' is used only by policy deadline"},
    {"rounds-spread-unused.yaml", -EINVAL,
     "rounds-spread-unused.yaml:9:9: 'spread' is used only by policy equal-finish"},
    {"rounds-bad-spread.yaml", -EINVAL,
     "rounds-bad-spread.yaml:8:9: 'spread': expected a percentage above 0 and at most 50"},
    {"rounds-bad-type.yaml", -EINVAL, "rounds-bad-type.yaml:2:17: unknown board type 'xavier-mx'"},
    {"rounds-two-selectors.yaml", -EINVAL,
     "rounds-two-selectors.yaml:2:10: a boards entry must have exactly one of name, type or "
     "label, got 2"},
    {"rounds-bad-workload.yaml", -EINVAL,
     "rounds-bad-workload.yaml:3:11: model 'vgg11' does not train on dataset 'mnist'"},
    {"rounds-local-both.yaml", -EINVAL,
     "rounds-local-both.yaml:6:8: 'local' must have exactly one of minibatches or epochs, got 2"},
    {"rounds-zero-rounds.yaml", -EINVAL, "rounds-zero-rounds.yaml:5:9: 'rounds'"},
    {"rounds-bad-watts.yaml", -EINVAL, "rounds-bad-watts.yaml:9:30: 'watts': -3 is out of range"},
    {"rounds-budget-twice.yaml", -EINVAL,
     "rounds-budget-twice.yaml:10:5: 'xavier-nx' is listed twice"},
    {"rounds-bad-straggler.yaml", -EINVAL,
     "rounds-bad-straggler.yaml:8:12: unknown straggler policy 'ignore', expected drop or wait"},
    {"rounds-not-mapping.yaml", -EINVAL, "rounds-not-mapping.yaml:1:1:"},
};

#define T_N_BAD (sizeof t_bad_files / sizeof t_bad_files[0])

static void test_bad_fixtures(void **state)
{
    (void) state;
    for (size_t i = 0; i < T_N_BAD; i++) {
        char rel[PATH_MAX] = {0};
        (void) snprintf(rel, sizeof rel, "rounds/bad/%s", t_bad_files[i].file);
        jf_err_t err = {0};
        jf_rounds_t *r = t_load(rel, &err);
        if (r || err.code != t_bad_files[i].code || !strstr(err.msg, t_bad_files[i].fragment)) {
            fail_msg("%s: code %d, message '%s', expected %d and '%s'", t_bad_files[i].file,
                     err.code, err.msg, t_bad_files[i].code, t_bad_files[i].fragment);
        }
    }
}

static void test_every_bad_fixture_has_a_row(void **state)
{
    (void) state;
    char dir[PATH_MAX] = {0};
    jft_fixture("rounds/bad", dir);
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t seen = 0;
    for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        if (e->d_name[0] == '.') {
            continue;
        }
        bool found = false;
        for (size_t i = 0; i < T_N_BAD && !found; i++) {
            found = strcmp(t_bad_files[i].file, e->d_name) == 0;
        }
        if (!found) {
            closedir(d);
            fail_msg("tests/fixtures/rounds/bad/%s has no row in t_bad_files", e->d_name);
        }
        seen++;
    }
    closedir(d);
    assert_int_equal(seen, T_N_BAD);
}

static void test_missing_file(void **state)
{
    (void) state;
    jf_err_t err = {0};
    assert_null(jf_rounds_load("/nonexistent/rounds.yaml", &err));
    assert_int_equal(err.code, -ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/rounds.yaml"));
}

static void test_resolve_good(void **state)
{
    (void) state;
    jf_fleet_config_t *lab = t_lab();
    jf_err_t err = {0};
    jf_rounds_t *r = t_load("rounds/good.yaml", &err);
    assert_non_null(r);
    const jf_board_spec_t **boards = NULL;
    size_t n = 0;
    if (jf_rounds_resolve(r, lab, &boards, &n, &err) != 0) {
        fail_msg("%s", err.msg);
    }
    assert_int_equal(n, 3); // nx-01, nx-02 (type), nano-01 (name), in fleet order
    assert_string_equal(boards[0]->name, "nx-01");
    assert_string_equal(boards[1]->name, "nx-02");
    assert_string_equal(boards[2]->name, "nano-01");
    assert_true(jf_rounds_budget_w(r, boards[0]) == 12.5); // by type
    assert_true(jf_rounds_budget_w(r, boards[1]) == 9.0);  // by name, beats the type
    assert_true(jf_rounds_budget_w(r, boards[2]) == 0.0);  // none
    assert_true(jf_rounds_idle_w(r, boards[2]) == 1.2);
    assert_true(jf_rounds_idle_w(r, boards[0]) == 0.0);
    free(boards);
    jf_rounds_destroy(&r);
    jf_fleet_config_destroy(&lab);
}

// A sim board is selected by the type it simulates; labels select too.
static void test_resolve_label_and_sim(void **state)
{
    (void) state;
    static const char text[] = "name: x\n"
                               "boards: [{label: rack-a}, {type: nano}]\n"
                               "workload: {model: lenet5, dataset: mnist}\n"
                               "batch_size: 8\nrounds: 1\nlocal: {minibatches: 1}\npolicy: maxn\n";
    jf_fleet_config_t *lab = t_lab();
    jf_err_t err = {0};
    jf_rounds_t *r = jf_rounds_parse(text, sizeof text - 1, "inline.yaml", &err);
    assert_non_null(r);
    const jf_board_spec_t **boards = NULL;
    size_t n = 0;
    assert_int_equal(jf_rounds_resolve(r, lab, &boards, &n, &err), 0);
    assert_int_equal(n, 4); // nx-01 and nano-01 (rack-a), nano-02, sim-nano-01 (nano)
    assert_string_equal(boards[3]->name, "sim-nano-01");
    free(boards);
    jf_rounds_destroy(&r);
    jf_fleet_config_destroy(&lab);
}

typedef struct t_unresolved {
    const char *text;
    const char *fragment;
} t_unresolved_t;

static void test_resolve_errors(void **state)
{
    (void) state;
    static const t_unresolved_t cases[] = {
        {"name: x\nboards: [{type: nano}, {name: nx-99}]\n", "inline.yaml:2:24: no board in "},
        {"name: x\nboards: [{type: orin-agx}]\n", "inline.yaml:2:10: no board in "},
        {"name: x\nboards: [{type: nano}]\npower_budget: [{name: nx-01, watts: 5}]\n",
         "inline.yaml:3:16: no board selected here has name 'nx-01'"},
        {"name: x\nboards: [{type: nano}]\nidle_power: [{type: xavier-nx, watts: 1}]\n",
         "inline.yaml:3:14: no board selected here has type 'xavier-nx'"},
    };
    static const char tail[] = "workload: {model: lenet5, dataset: mnist}\n"
                               "batch_size: 8\nrounds: 1\nlocal: {minibatches: 1}\npolicy: maxn\n";
    jf_fleet_config_t *lab = t_lab();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        (void) snprintf(text, sizeof text, "%s%s", cases[i].text, tail);
        jf_err_t err = {0};
        jf_rounds_t *r = jf_rounds_parse(text, strlen(text), "inline.yaml", &err);
        if (!r) {
            fail_msg("case %zu: %s", i, err.msg);
        }
        const jf_board_spec_t **boards = NULL;
        size_t n = 0;
        int rc = jf_rounds_resolve(r, lab, &boards, &n, &err);
        if (rc != -EINVAL || !strstr(err.msg, cases[i].fragment)) {
            fail_msg("case %zu: rc %d, message '%s', expected '%s'", i, rc, err.msg,
                     cases[i].fragment);
        }
        jf_rounds_destroy(&r);
    }
    jf_fleet_config_destroy(&lab);
}

// Every example in rounds/ loads and resolves against fleet.yaml.example.
static void test_examples(void **state)
{
    (void) state;
    static const char *const files[] = {"equal-finish.yaml", "deadline.yaml", "maxn.yaml"};
    char fixtures[PATH_MAX] = {0}, path[PATH_MAX + 64] = {0};
    jft_fixture("", fixtures);
    (void) snprintf(path, sizeof path, "%s/../../fleet.yaml.example", fixtures);
    jf_err_t err = {0};
    jf_fleet_config_t *fleet = jf_fleet_config_load(path, &err);
    if (!fleet) {
        fail_msg("%s", err.msg);
    }
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        (void) snprintf(path, sizeof path, "%s/../../rounds/%s", fixtures, files[i]);
        jf_rounds_t *r = jf_rounds_load(path, &err);
        const jf_board_spec_t **boards = NULL;
        size_t n = 0;
        if (!r || jf_rounds_resolve(r, fleet, &boards, &n, &err) != 0) {
            fail_msg("rounds/%s: %s", files[i], err.msg);
        }
        assert_true(n > 0);
        free(boards);
        jf_rounds_destroy(&r);
    }
    jf_fleet_config_destroy(&fleet);
}

static void test_names(void **state)
{
    (void) state;
    jf_rounds_policy_t p = JF_ROUNDS_MAXN;
    assert_true(jf_rounds_policy_parse("deadline", &p));
    assert_int_equal(p, JF_ROUNDS_DEADLINE);
    assert_false(jf_rounds_policy_parse("fastest", &p));
    assert_string_equal(jf_rounds_policy_name(JF_ROUNDS_EQUAL_FINISH), "equal-finish");
    assert_string_equal(jf_rounds_straggler_name(JF_ROUNDS_WAIT), "wait");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_every_key),
        cmocka_unit_test(test_minimal_defaults),
        cmocka_unit_test(test_bad_fixtures),
        cmocka_unit_test(test_every_bad_fixture_has_a_row),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_resolve_good),
        cmocka_unit_test(test_resolve_label_and_sim),
        cmocka_unit_test(test_resolve_errors),
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
