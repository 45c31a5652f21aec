/* Run kinds in the analysis (docs/analysis.md "Run kinds"): a sweep whose done runs are plain
 * training on three boards plus one roofline, one idle-baseline, one concurrent-inference and one
 * container run, all valid. The model and Pareto input (coord_points_collect), variability (the
 * valid runs' epochs grouped by coord_variability) and the report's summary must equal what the
 * training runs alone give (expected values computed here from the epochs stored), the other
 * kinds counted by kind, never mixed in; variability keeps the container run in a group of its
 * own (runtime). */
#include "coord_points.h"
#include "coord_report.h"
#include "coord_run_kind.h"
#include "coord_store_roofline.h"
#include "coord_valid_runs.h"
#include "coord_variability.h"
#include "jf_units.h"
#include "store_support.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define S_MEASURE                                                                                  \
    "{\"telemetry\":{\"rate_hz\":1,\"samples\":100,\"late\":0,\"missed\":0,"                       \
    "\"max_gap_us\":1000000,\"time_base\":\"monotonic\"},"                                         \
    "\"power_mode\":{\"mode_id\":0,\"mode_name\":\"MAXN\",\"online_cpus\":[0,1,2,3],"              \
    "\"cpu_clusters\":[{\"max_hz\":1400000000}],\"gpu_max_hz\":1100000000,"                        \
    "\"emc_cap_hz\":1600000000}}"
#define S_BOARDS   3
#define S_RUNS     10 // 6 training, then roofline, idle, concurrent, container
#define S_TRAIN    6
#define S_POWER_MW 9500.0

// Board names unique to this test.
static const char *const s_boards[S_BOARDS] = {"anf-nx-1", "anf-nx-2", "anf-nx-3"};

typedef struct s_case {
    int board;       // index into s_boards
    int repeat;      // repeat index
    int kind;        // coord_run_kind_t
    double e2e_s[2]; // epochs 1 and 2 (epoch 0 is warm-up)
} s_case_t;

// The non-training runs' epochs are far from the training ones: mixing any of them in moves
// every mean checked below.
static const s_case_t s_cases[S_RUNS] = {
    {0, 0, COORD_RUN_TRAINING, {10.0, 10.2}},   {0, 1, COORD_RUN_TRAINING, {10.1, 10.3}},
    {1, 0, COORD_RUN_TRAINING, {11.0, 11.1}},   {1, 1, COORD_RUN_TRAINING, {11.2, 11.0}},
    {2, 0, COORD_RUN_TRAINING, {12.0, 12.4}},   {2, 1, COORD_RUN_TRAINING, {12.2, 12.1}},
    {0, 2, COORD_RUN_ROOFLINE, {1.0, 1.0}},     {1, 2, COORD_RUN_IDLE, {30.0, 30.0}},
    {2, 2, COORD_RUN_CONCURRENT, {50.0, 50.0}}, {0, 3, COORD_RUN_CONTAINER, {20.0, 20.0}},
};

static jf_run_spec_t s_spec(const s_case_t *k)
{
    jf_run_spec_t s = tstore_spec(s_boards[k->board], k->repeat);
    switch ((coord_run_kind_t) k->kind) {
    case COORD_RUN_ROOFLINE:
        s.roofline = true;
        break;
    case COORD_RUN_IDLE:
        s.idle_s = 30;
        break;
    case COORD_RUN_CONCURRENT:
        snprintf(s.concurrent.infer_model, sizeof s.concurrent.infer_model, "resnet18");
        s.concurrent.infer_batch = 1;
        s.concurrent.rate_per_s = 10.0;
        s.concurrent.budget_us = 100 * JF_US_PER_MS;
        break;
    case COORD_RUN_CONTAINER:
        snprintf(s.runtime, sizeof s.runtime, "container");
        break;
    default:
        break;
    }
    jf_run_spec_compute_id(&s);
    return s;
}

static void s_build(coord_store_t *st, jf_run_spec_t *specs)
{
    jf_err_t err = {0};
    for (size_t b = 0; b < S_BOARDS; b++) {
        assert_int_equal(
            coord_store_board_hello(st, s_boards[b], "xavier-nx", "jetson", "{}", &err), 0);
        assert_int_equal(coord_store_board_set_clock(st, s_boards[b], -300, 800, 1, &err), 0);
    }
    for (size_t i = 0; i < S_RUNS; i++) {
        specs[i] = s_spec(&s_cases[i]);
    }
    tstore_put(st, specs, S_RUNS);
    for (size_t i = 0; i < S_RUNS; i++) {
        int64_t a = tstore_assign(st, specs[i].run_id);
        assert_int_equal(coord_store_run_start(st, specs[i].run_id, a, &err), 0);
        for (int e = 0; e < 3; e++) {
            double s = e ? s_cases[i].e2e_s[e - 1] : 30.0;
            jf_epoch_rec_t rec = tstore_epoch(e, (int64_t) (s * 1e6), 1.0);
            rec.has_energy = true;
            rec.avg_power_mw = S_POWER_MW;
            rec.energy_mj = S_POWER_MW * s;
            assert_int_equal(coord_store_add_epoch(st, specs[i].run_id, a, &rec, &err), 0);
        }
        assert_int_equal(coord_store_run_set_measure(st, specs[i].run_id, a, S_MEASURE, &err), 0);
        assert_int_equal(coord_store_run_finish(st, specs[i].run_id, a, true, NULL, NULL, &err), 0);
    }
}

static double s_run_mean_us(const s_case_t *k)
{
    return (k->e2e_s[0] + k->e2e_s[1]) / 2.0 * 1e6;
}

static const s_case_t *s_case_of(const jf_run_spec_t *specs, const char *run)
{
    for (size_t i = 0; i < S_RUNS; i++) {
        if (strcmp(specs[i].run_id, run) == 0) {
            return &s_cases[i];
        }
    }
    fail_msg("unknown run %s", run);
    return NULL;
}

// Models, Pareto fronts, recommend and adaptive profiling read their runs here.
static void test_points_training_only(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t specs[S_RUNS];
    s_build(c->store, specs);
    jf_err_t err = {0};
    coord_valid_runs_t *valid = coord_valid_runs_new(c->store, "smoke", NULL, &err);
    assert_non_null(valid);
    coord_points_filter_t f = {.workload = "lenet5-mnist", .valid = valid};
    coord_run_mean_t *runs = NULL;
    size_t n = 0;
    coord_points_left_t left = {0};
    assert_int_equal(coord_points_collect(c->store, "smoke", &f, &runs, &n, &left, &err), 0);
    assert_int_equal(n, S_TRAIN);
    double sum_us = 0.0, want_sum_us = 0.0;
    for (size_t i = 0; i < n; i++) {
        const s_case_t *k = s_case_of(specs, runs[i].run);
        assert_int_equal(k->kind, COORD_RUN_TRAINING);
        assert_true(fabs(runs[i].time_us - s_run_mean_us(k)) < 1e-6);
        sum_us += runs[i].time_us;
    }
    for (size_t i = 0; i < S_RUNS; i++) {
        want_sum_us += s_cases[i].kind == COORD_RUN_TRAINING ? s_run_mean_us(&s_cases[i]) : 0.0;
    }
    printf("points_mean_time_s=%.4f expected=%.4f\n", sum_us / n / 1e6,
           want_sum_us / S_TRAIN / 1e6);
    assert_true(fabs(sum_us - want_sum_us) < 1e-3);
    assert_int_equal(left.invalid, 0);
    assert_int_equal(left.no_op, 0);
    assert_int_equal(left.other_kind, 4);
    for (int k = COORD_RUN_CONTAINER; k < COORD_RUN_KIND_COUNT; k++) {
        assert_int_equal(left.by_kind[k], 1);
    }
    assert_int_equal(coord_valid_runs_summary(valid)->runs, S_TRAIN);
    assert_int_equal(coord_valid_runs_summary(valid)->valid, S_TRAIN);
    char text[256];
    coord_valid_runs_kinds_format(valid, text, sizeof text);
    printf("note: %s\n", text);
    assert_string_equal(text,
                        "not training, left out: container 1, roofline 1, idle 1, concurrent 1");
    free(runs);
    coord_valid_runs_destroy(&valid);
}

typedef struct s_feed {
    coord_variability_t *var;
    const coord_valid_runs_t *valid;
} s_feed_t;

static int s_feed(const coord_obs_t *o, void *arg)
{
    s_feed_t *f = arg;
    return coord_valid_runs_has(f->valid, o->run) ? coord_variability_add(f->var, o, NULL) : 0;
}

// Variability keeps container runs, in their own group (runtime), and nothing else.
static void test_variability_training_by_runtime(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t specs[S_RUNS];
    s_build(c->store, specs);
    jf_err_t err = {0};
    coord_valid_runs_t *valid = coord_valid_runs_new(c->store, "smoke", NULL, &err);
    assert_non_null(valid);
    coord_valid_runs_keep_kind(valid, COORD_RUN_CONTAINER);
    s_feed_t feed = {.var = coord_variability_new(&err), .valid = valid};
    assert_non_null(feed.var);
    assert_int_equal(coord_store_obs_each(c->store, "smoke", s_feed, &feed, &err), 0);
    assert_int_equal(coord_variability_compute(feed.var, &err), 0);
    assert_int_equal(coord_variability_groups(feed.var), 2);
    // The bare group: each board's mean over its training epochs, then their mean.
    double board_mean_us[S_BOARDS] = {0};
    for (size_t i = 0; i < S_RUNS; i++) {
        if (s_cases[i].kind == COORD_RUN_TRAINING) {
            board_mean_us[s_cases[i].board] += s_run_mean_us(&s_cases[i]) / 2.0; // 2 repeats
        }
    }
    double want_us = (board_mean_us[0] + board_mean_us[1] + board_mean_us[2]) / S_BOARDS;
    const coord_var_group_t *bare = coord_variability_group(feed.var, 0);
    const coord_var_group_t *cont = coord_variability_group(feed.var, 1);
    if (strcmp(bare->runtime, "bare") != 0) {
        const coord_var_group_t *t = bare;
        bare = cont;
        cont = t;
    }
    assert_string_equal(bare->runtime, "bare");
    assert_string_equal(cont->runtime, "container");
    assert_int_equal(bare->n_boards, S_BOARDS);
    assert_int_equal(cont->n_boards, 1);
    assert_true(bare->metric[COORD_METRIC_E2E].has);
    printf("variability_bare_mean_s=%.4f expected=%.4f\n",
           bare->metric[COORD_METRIC_E2E].between.mean / 1e6, want_us / 1e6);
    assert_true(fabs(bare->metric[COORD_METRIC_E2E].between.mean - want_us) < 1e-3);
    assert_int_equal(coord_valid_runs_summary(valid)->runs, S_TRAIN + 1);
    char text[256];
    coord_valid_runs_kinds_format(valid, text, sizeof text);
    printf("note: %s\n", text);
    assert_string_equal(text, "not training, left out: roofline 1, idle 1, concurrent 1");
    coord_variability_destroy(&feed.var);
    coord_valid_runs_destroy(&valid);
}

// The report's summary counts the training runs and says how many others it left out.
static void test_report_summary(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t specs[S_RUNS];
    s_build(c->store, specs);
    jf_err_t err = {0};
    coord_report_opts_t opts = {.sweep = "smoke"};
    json_t *data = coord_report_data(c->store, &opts, &err);
    if (!data) {
        fail_msg("report: %s", err.msg);
    }
    json_t *v = json_object_get(data, "valid_runs");
    assert_int_equal(json_integer_value(json_object_get(v, "runs")), S_TRAIN);
    assert_int_equal(json_integer_value(json_object_get(v, "valid")), S_TRAIN);
    assert_int_equal(json_integer_value(json_object_get(v, "not_training")), 4);
    assert_string_equal(json_string_value(json_object_get(v, "not_training_summary")),
                        "not training, left out: container 1, roofline 1, idle 1, concurrent 1");
    // The Pareto figure's runs: the training ones, the others counted.
    size_t i;
    json_t *fig;
    const char *note = NULL;
    json_array_foreach(json_object_get(data, "figures"), i, fig)
    {
        const char *n = json_string_value(json_object_get(fig, "note"));
        note = n && strstr(n, "as not plain training") ? n : note;
    }
    assert_non_null(note);
    printf("pareto note: %s\n", note);
    assert_non_null(strstr(note, "6 valid runs"));
    assert_non_null(strstr(note, "0 left out without a known operating point, 4 as not plain "
                                 "training"));
    json_decref(data);
}

static int s_sum_measured(const coord_roofline_measured_t *m, void *arg)
{
    coord_roofline_measured_t *sum = arg;
    sum->epochs += m->epochs;
    sum->compute_us += m->compute_us;
    return 0;
}

// The rooflines' measured side (jetfleet roofline, recommend from rooflines): a board's plain
// training epochs only.
static void test_roofline_measured_training_only(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t specs[S_RUNS];
    s_build(c->store, specs);
    jf_err_t err = {0};
    for (int b = 0; b < S_BOARDS; b++) {
        coord_roofline_measured_t sum = {0};
        assert_int_equal(
            coord_store_roofline_measured(c->store, s_boards[b], NULL, s_sum_measured, &sum, &err),
            0);
        int want_epochs = 0;
        int64_t want_compute_us = 0;
        for (size_t i = 0; i < S_RUNS; i++) {
            if (s_cases[i].board == b && s_cases[i].kind == COORD_RUN_TRAINING) {
                for (int e = 0; e < 2; e++) {
                    // tstore_epoch: compute is half the epoch's time
                    want_compute_us +=
                        tstore_epoch(1, (int64_t) (s_cases[i].e2e_s[e] * 1e6), 1.0).compute_us;
                    want_epochs++;
                }
            }
        }
        printf("roofline_measured_%s_epochs=%d expected=%d\n", s_boards[b], sum.epochs,
               want_epochs);
        assert_int_equal(sum.epochs, want_epochs);
        assert_int_equal(sum.compute_us, want_compute_us);
    }
}

static void test_kind_of(void **state)
{
    (void) state;
    assert_int_equal(coord_run_kind_of(false, 0, false, NULL), COORD_RUN_TRAINING);
    assert_int_equal(coord_run_kind_of(false, 0, false, "bare"), COORD_RUN_TRAINING);
    assert_int_equal(coord_run_kind_of(false, 0, false, "container"), COORD_RUN_CONTAINER);
    assert_int_equal(coord_run_kind_of(false, 0, true, "container"), COORD_RUN_CONCURRENT);
    assert_int_equal(coord_run_kind_of(false, 5, true, ""), COORD_RUN_IDLE);
    assert_int_equal(coord_run_kind_of(true, 5, true, "container"), COORD_RUN_ROOFLINE);
    assert_string_equal(coord_run_kind_name(COORD_RUN_IDLE), "idle");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_of),
        cmocka_unit_test_setup_teardown(test_points_training_only, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_variability_training_by_runtime, tstore_setup,
                                        tstore_teardown),
        cmocka_unit_test_setup_teardown(test_report_summary, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_roofline_measured_training_only, tstore_setup,
                                        tstore_teardown),
    };
    int rc = tstore_main_begin();
    if (rc != 0) {
        return rc;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    tstore_main_end();
    return rc;
}
