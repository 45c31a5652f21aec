/* coord_report_data and coord_report_write_html on imported sweeps (no agents needed): which
 * figures there are and what each holds against values the test computes from its own CSV, the
 * simulated mark from the import's source label, "no data" reasons, errors that name the sweep
 * or run, and a page whose embedded data cannot end its script element. */
#include "coord_import.h"
#include "coord_report.h"
#include "store_support.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S_HEADER                                                                                   \
    "board,board_type,workload,storage,power_mode,cores,cpu_khz,gpu_freq_mhz,emc_freq_hz,"         \
    "workers,batch_size,repeat,epoch,epoch_time_s,fetch_stall_s,compute_s,mean_power_w,energy_j,"  \
    "source\n"
#define S_BOARDS  2
#define S_MODES   2
#define S_EPOCHS  3 // epoch 0 is the warm-up
#define S_CSV_MAX 8192

// Epoch time (s) of board b, mode m, epoch e: distinct values so that a wrong grouping shows.
static double s_time_s(int b, int m, int e)
{
    return 10.0 + 5.0 * m + 0.5 * b + 0.25 * e;
}

static void s_import(tstore_ctx_t *c, const char *sweep, const char *source)
{
    static const char *const modes[S_MODES] = {"12,2201600,1300.5,3199000000",
                                               "4,1190400,612,2133000000"};
    char csv[S_CSV_MAX];
    size_t n = (size_t) snprintf(csv, sizeof csv, "%s", S_HEADER);
    for (int b = 0; b < S_BOARDS; b++) {
        for (int m = 0; m < S_MODES; m++) {
            for (int e = 0; e < S_EPOCHS; e++) {
                double t = s_time_s(b, m, e);
                n += (size_t) snprintf(csv + n, sizeof csv - n,
                                       "lab-%d,orin-agx,resnet18-cifar10,nvme,MAXN,%s,4,64,0,%d,"
                                       "%.17g,%.17g,%.17g,%.17g,%.17g,%s\n",
                                       b, modes[m], e, t, 0.1 * t, 0.9 * t, 20.0 / (1 + m),
                                       t * 20.0 / (1 + m), source);
            }
        }
    }
    char path[PATH_MAX + 32];
    (void) snprintf(path, sizeof path, "%s/%s.csv", c->dir, sweep);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(csv, f) >= 0);
    assert_int_equal(fclose(f), 0);
    coord_import_opts_t o = {.path = path, .sweep = sweep};
    coord_import_result_t res = {0};
    jf_err_t err = {0};
    int rc = coord_import_csv(c->store, &o, NULL, NULL, &res, &err);
    if (rc != 0) {
        fail_msg("import: %s", err.msg);
    }
    assert_int_equal(res.runs, S_BOARDS * S_MODES);
}

static const json_t *s_fig(const json_t *data, const char *id)
{
    size_t i;
    json_t *fig;
    json_array_foreach(json_object_get(data, "figures"), i, fig)
    {
        if (strcmp(json_string_value(json_object_get(fig, "id")), id) == 0) {
            return fig;
        }
    }
    fail_msg("no figure '%s'", id);
    return NULL;
}

static const json_t *s_data(const json_t *fig, size_t ds)
{
    return json_object_get(json_array_get(json_object_get(fig, "datasets"), ds), "data");
}

static json_t *s_report(tstore_ctx_t *c, const char *sweep)
{
    coord_report_opts_t o = {.sweep = sweep};
    jf_err_t err = {0};
    json_t *data = coord_report_data(c->store, &o, &err);
    if (!data) {
        fail_msg("coord_report_data: %s", err.msg);
    }
    return data;
}

static void test_figures_of_a_lab_sweep(void **state)
{
    tstore_ctx_t *c = *state;
    s_import(c, "lab", "lab-x");
    json_t *data = s_report(c, "lab");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(data, "valid_runs"), "valid")),
        S_BOARDS * S_MODES);
    // One group (nvme, 4 workers): means over both boards, both modes, measured epochs only.
    const json_t *bd = s_fig(data, "epoch_breakdown");
    double sum = 0;
    for (int b = 0; b < S_BOARDS; b++) {
        for (int m = 0; m < S_MODES; m++) {
            for (int e = 1; e < S_EPOCHS; e++) {
                sum += s_time_s(b, m, e);
            }
        }
    }
    double want = sum / (S_BOARDS * S_MODES * (S_EPOCHS - 1));
    assert_int_equal(json_array_size(s_data(bd, 2)), 1);
    assert_true(fabs(json_real_value(json_array_get(s_data(bd, 2), 0)) - want) < 1e-9);
    assert_true(fabs(json_real_value(json_array_get(s_data(bd, 0), 0)) - 0.1 * want) < 1e-9);
    // Every epoch, warm-up included, of each run.
    const json_t *series = s_fig(data, "epoch_series");
    assert_int_equal(json_array_size(s_data(series, 0)), S_EPOCHS);
    // Two modes, repeats and boards averaged: both on the front (the faster one at twice the
    // power uses more energy per epoch).
    const json_t *par = s_fig(data, "pareto_resnet18-cifar10_orin-agx");
    assert_int_equal(json_array_size(s_data(par, 0)), S_MODES);
    assert_int_equal(json_array_size(s_data(par, 1)), S_MODES);
    const json_t *var = s_fig(data, "variability_orin-agx");
    assert_int_equal(json_array_size(json_object_get(var, "labels")), S_BOARDS);
    assert_int_equal(json_array_size(json_object_get(var, "datasets")), S_MODES);
    assert_null(json_object_get(var, "no_data"));
    // Imported runs have no telemetry, the sweep no model: both say so.
    assert_non_null(strstr(json_string_value(json_object_get(s_fig(data, "run_series"), "no_data")),
                           "no valid run has telemetry"));
    assert_non_null(strstr(json_string_value(json_object_get(s_fig(data, "models"), "no_data")),
                           "no model fitted on sweep 'lab'"));
    size_t i;
    json_t *fig;
    json_array_foreach(json_object_get(data, "figures"), i, fig)
    {
        assert_false(json_is_true(json_object_get(fig, "simulated")));
    }
    json_decref(data);
}

static void test_models_table(void **state)
{
    tstore_ctx_t *c = *state;
    s_import(c, "lab", "lab-x");
    coord_model_row_t row = {.sweep = "lab",
                             .scope = "type",
                             .scope_value = "orin-agx",
                             .workload = "resnet18-cifar10",
                             .target = "time",
                             .kind = "linear",
                             .features = "[\"const\"]",
                             .params = "{\"cv_under_pct\": 3.25}",
                             .training_runs = 4,
                             .cv_mape_pct = 1.5};
    (void) snprintf(row.name, sizeof row.name, "t1");
    int64_t id = 0;
    jf_err_t err = {0};
    assert_int_equal(coord_store_model_put(c->store, &row, &id, &err), 0);
    (void) snprintf(row.sweep, sizeof row.sweep, "other"); // another sweep's model is not listed
    assert_int_equal(coord_store_model_put(c->store, &row, &(int64_t){0}, &err), 0);
    json_t *data = s_report(c, "lab");
    const json_t *models = s_fig(data, "models");
    assert_null(json_object_get(models, "no_data"));
    const json_t *rows = json_object_get(models, "rows");
    assert_int_equal(json_array_size(rows), 1);
    const json_t *r = json_array_get(rows, 0);
    assert_int_equal(json_integer_value(json_array_get(r, 0)), id);
    assert_true(fabs(json_real_value(json_array_get(r, 8)) - 1.5) < 1e-12);
    assert_true(fabs(json_real_value(json_array_get(r, 9)) - 3.25) < 1e-12);
    assert_string_equal(json_string_value(json_array_get(r, 10)), "measured");
    json_decref(data);
}

static void test_simulated_import_is_marked(void **state)
{
    tstore_ctx_t *c = *state;
    s_import(c, "simt", "simulated");
    json_t *data = s_report(c, "simt");
    size_t i, marked = 0;
    json_t *fig;
    json_array_foreach(json_object_get(data, "figures"), i, fig)
    {
        bool has_data = json_object_get(fig, "no_data") == NULL;
        assert_true(!has_data || json_is_true(json_object_get(fig, "simulated")));
        marked += has_data;
    }
    assert_true(marked >= 4);
    json_decref(data);
}

static void test_errors_name_sweep_and_run(void **state)
{
    tstore_ctx_t *c = *state;
    s_import(c, "lab", "lab-x");
    jf_err_t err = {0};
    coord_report_opts_t o = {.sweep = "nope"};
    assert_null(coord_report_data(c->store, &o, &err));
    assert_int_equal(err.code, -ENOENT);
    assert_non_null(strstr(err.msg, "no sweep named 'nope'"));
    o = (coord_report_opts_t){.sweep = "lab", .run = "r-missing"};
    assert_null(coord_report_data(c->store, &o, &err));
    assert_int_equal(err.code, -ENOENT);
    assert_non_null(strstr(err.msg, "run 'r-missing' is not a done run of sweep 'lab'"));
}

static void test_html_is_one_safe_file(void **state)
{
    (void) state;
    json_t *data = json_pack("{s:s, s:{s:s}, s:[]}", "sweep", "x</script><b>bold", "valid_runs",
                             "summary", "1 runs", "figures");
    char *page = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&page, &len);
    assert_non_null(f);
    jf_err_t err = {0};
    assert_int_equal(coord_report_write_html(data, f, &err), 0);
    assert_int_equal(fclose(f), 0);
    assert_non_null(strstr(page, "Chart.js v4.4.1"));
    assert_non_null(strstr(page, "id=\"jf-data\""));
    assert_null(strstr(page, "x</script>"));
    assert_null(strstr(page, "src=\"http"));
    free(page);
    f = fopen("/dev/full", "w");
    if (f) {
        assert_int_equal(coord_report_write_html(data, f, &err), -EIO);
        assert_non_null(strstr(err.msg, "writing the page failed"));
        (void) fclose(f); // the failure was the point
    }
    json_decref(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_figures_of_a_lab_sweep, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_models_table, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_simulated_import_is_marked, tstore_setup,
                                        tstore_teardown),
        cmocka_unit_test_setup_teardown(test_errors_name_sweep_and_run, tstore_setup,
                                        tstore_teardown),
        cmocka_unit_test(test_html_is_one_safe_file),
    };
    int rc = tstore_main_begin();
    if (rc != 0) {
        return rc;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    tstore_main_end();
    return rc;
}
