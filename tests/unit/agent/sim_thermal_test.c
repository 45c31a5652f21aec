/* Unit tests for the simulated boards' thermal zones (issue #5; docs/simulator.md, "Thermal"):
 * the fake tree of every family holds exactly the family's zones (agent_board_table.c) and the
 * jetson reader reports them; temperatures follow the first-order model in modelled time (63.2 %
 * of a step after one time constant, back to idle after the load), through files the reader
 * opened once; the same inputs give the same temperatures; parameters that do not match the
 * layout are refused. */
#include "agent_board_table.h"
#include "agent_platform.h"
#include "agent_sim_tree.h"
#include "agent_sysfs.h"
#include "jf_board.h"
#include "sim_model.h"
#include "sim_thermal.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jft_fs.h"

#define T_US_PER_S  1000000.0
#define T_STEP_TOL  0.002 // share of a step: the files hold millidegrees
#define T_STEADY_TOL_C 0.002 // degrees C: the rounding to the millidegree
#define T_IDLE_MIN  30000 // a devkit at idle, mC (docs/simulator.md, "Thermal")
#define T_IDLE_MAX  50000
#define T_NX_LOAD   12000 // mW on VDD_IN: a loaded Xavier NX
#define T_LAYOUTS   8

static const jf_board_type_t s_families[] = {JF_BOARD_AGX_XAVIER, JF_BOARD_XAVIER_NX,
                                             JF_BOARD_NANO, JF_BOARD_ORIN_AGX,
                                             JF_BOARD_ORIN_NANO};

#define T_N_FAMILIES (sizeof s_families / sizeof s_families[0])

static sim_model_t *t_model(void)
{
    jf_err_t err = {0};
    sim_model_t *model = sim_model_load(SIM_PARAMS_PATH, &err);
    if (!model) {
        fail_msg("%s", err.msg);
    }
    return model;
}

static agent_sim_tree_t *t_tree(const sim_model_t *model, jf_board_type_t type)
{
    jf_err_t err = {0};
    agent_sim_tree_opts_t to = {.type = type, .model = model};
    sim_model_board_factors(model, type, 1, "sim-thermal", &to.factors);
    agent_sim_tree_t *tree = agent_sim_tree_new(&to, &err);
    if (!tree) {
        fail_msg("%s: %s", jf_board_type_name(type), err.msg);
    }
    return tree;
}

// The layout the tree is written in: the family's newest (agent_sim_tree.h).
static const agent_board_layout_t *t_layout(jf_board_type_t type)
{
    const agent_board_layout_t *all[T_LAYOUTS] = {NULL};
    assert_true(agent_board_table_layouts(type, all, T_LAYOUTS) > 0);
    return all[0];
}

static size_t t_n_layout_zones(const agent_board_layout_t *l)
{
    size_t n = 0;
    while (n < AGENT_BOARD_ZONES_MAX && l->zones[n].type) {
        n++;
    }
    return n;
}

// The parameters of the zone of that kernel type, or the test fails.
static const sim_zone_params_t *t_zone_params(const sim_board_params_t *b, const char *type)
{
    for (size_t i = 0; i < b->n_zones; i++) {
        if (strcmp(b->zones[i].type, type) == 0) {
            return &b->zones[i];
        }
    }
    fail_msg("no parameters for zone '%s'", type);
    return NULL;
}

// <sysfs>/class/thermal/thermal_zone<n>/<file>, read and trimmed; NULL if absent.
static char *t_zone_file(const agent_sim_tree_t *tree, size_t n, const char *file)
{
    char path[PATH_MAX];
    int len = snprintf(path, sizeof path, "%s/class/thermal/thermal_zone%zu/%s",
                       agent_sim_tree_sysfs_root(tree), n, file);
    assert_true(len > 0 && (size_t) len < sizeof path);
    char *text = jft_read_file(path, NULL);
    if (text) {
        text[strcspn(text, " \n")] = '\0';
    }
    return text;
}

// Every family's tree holds thermal_zone0..N-1 with the layout's types in its order, and the
// sim platform's sample (the jetson reader) reports every zone that is not offline under its
// telemetry name, at an idle temperature.
static void test_zones_of_each_family(void **state)
{
    (void) state;
    sim_model_t *model = t_model();
    for (size_t f = 0; f < T_N_FAMILIES; f++) {
        jf_board_type_t type = s_families[f];
        const agent_board_layout_t *l = t_layout(type);
        const sim_board_params_t *b = &sim_model_params(model)->boards[type];
        size_t n = t_n_layout_zones(l);
        assert_true(n > 0);
        assert_int_equal(b->n_zones, n);
        agent_sim_tree_t *tree = t_tree(model, type);
        for (size_t i = 0; i <= n; i++) {
            char *text = t_zone_file(tree, i, "type");
            if (i == n) {
                assert_null(text); // nothing beyond the family's zones
                break;
            }
            assert_non_null(text);
            assert_string_equal(text, l->zones[i].type);
            free(text);
        }
        agent_sim_tree_destroy(&tree);
        jf_err_t err = {0};
        agent_platform_opts_t o = {.kind = AGENT_PLATFORM_SIM, .sim_type = type,
                                   .sim_params = SIM_PARAMS_PATH, .sim_seed = 1, .sim_speed = 1};
        agent_platform_t *p = agent_platform_new(&o, &err);
        if (!p) {
            fail_msg("%s: %s", jf_board_type_name(type), err.msg);
        }
        json_t *s = json_object();
        assert_int_equal(agent_platform_sample(p, s, &err), 0);
        const json_t *temps = json_object_get(s, "temps_mc");
        size_t online = 0;
        for (size_t i = 0; i < n; i++) {
            const json_t *v = json_object_get(temps, l->zones[i].name);
            if (t_zone_params(b, l->zones[i].type)->offline) {
                assert_null(v); // -256 C: left out, as a power-gated sensor on a real board
                continue;
            }
            online++;
            if (!json_is_integer(v) || json_integer_value(v) < T_IDLE_MIN ||
                json_integer_value(v) > T_IDLE_MAX) {
                fail_msg("%s zone %s: want an idle temperature, got %s", jf_board_type_name(type),
                         l->zones[i].name, v ? "another value" : "none");
            }
        }
        assert_int_equal(json_object_size(temps), online);
        json_decref(s);
        agent_platform_destroy(&p);
    }
    sim_model_destroy(&model);
}

// temps_mc of one sample of reader.
static json_t *t_sample_temps(agent_sysfs_t *reader)
{
    jf_err_t err = {0};
    json_t *s = json_object();
    assert_int_equal(agent_sysfs_sample(reader, s, &err), 0);
    json_t *temps = json_incref(json_object_get(s, "temps_mc"));
    assert_non_null(temps);
    json_decref(s);
    return temps;
}

// Checks every modelled zone of b in temps against T = to + (from - to) x exp(-dt / tau).
static void t_check_lag(const agent_board_layout_t *l, const sim_board_params_t *b,
                        const json_t *temps, double from_mw, double to_mw, double dt_s)
{
    for (size_t i = 0; i < t_n_layout_zones(l); i++) {
        const sim_zone_params_t *z = t_zone_params(b, l->zones[i].type);
        if (z->offline) {
            continue;
        }
        double t0 = b->ambient_c + z->r_c_per_w * from_mw / 1000.0;
        double ss = b->ambient_c + z->r_c_per_w * to_mw / 1000.0;
        double got = (double) json_integer_value(json_object_get(temps, l->zones[i].name)) / 1e3;
        if (fabs(ss - t0) < T_STEADY_TOL_C) { // no step: at the steady state
            if (fabs(got - ss) > T_STEADY_TOL_C) {
                fail_msg("zone %s: %.3f C, want %.3f", l->zones[i].type, got, ss);
            }
            continue;
        }
        double share = (got - t0) / (ss - t0);
        double want = 1.0 - exp(-dt_s / z->tau_s);
        if (fabs(share - want) > T_STEP_TOL) {
            fail_msg("zone %s after %g s: %.4f of the step, want %.4f (T %.3f C, from %.3f to "
                     "%.3f)",
                     l->zones[i].type, dt_s, share, want, got, t0, ss);
        }
    }
}

// A Xavier NX (its input rail VDD_IN is the heating power): a load step from idle reaches 63.2 %
// of the way to its steady state after one time constant (and the zones with a longer one
// their share), nearly all of it after ten; back at idle the zones fall the same way. Read by
// the jetson reader through files it opened once.
static void test_step_response(void **state)
{
    (void) state;
    sim_model_t *model = t_model();
    const sim_board_params_t *b = &sim_model_params(model)->boards[JF_BOARD_XAVIER_NX];
    const agent_board_layout_t *l = t_layout(JF_BOARD_XAVIER_NX);
    agent_sim_tree_t *tree = t_tree(model, JF_BOARD_XAVIER_NX);
    jf_err_t err = {0};
    agent_sysfs_opts_t so = {.sysfs_root = agent_sim_tree_sysfs_root(tree),
                             .proc_root = agent_sim_tree_proc_root(tree), .layout = l,
                             .source = "sysfs"};
    agent_sysfs_t *reader = agent_sysfs_new(&so, &err);
    assert_non_null(reader);
    double idle_mw = (double) agent_sim_tree_heating_mw(tree);
    assert_true(idle_mw > 1000 && idle_mw < 5000);
    json_t *temps = t_sample_temps(reader);
    t_check_lag(l, b, temps, idle_mw, idle_mw, 0); // the idle steady state
    json_decref(temps);
    double tau_s = t_zone_params(b, "CPU-therm")->tau_s;
    int64_t tau_us = (int64_t) (tau_s * T_US_PER_S);
    json_t *load = json_pack("{s:i}", "VDD_IN", T_NX_LOAD);
    int64_t start_us = 5 * tau_us; // idle until then: nothing moves
    assert_int_equal(agent_sim_tree_advance(tree, start_us, &err), 0);
    assert_int_equal(agent_sim_tree_set_power(tree, load, start_us, &err), 0);
    assert_int_equal(agent_sim_tree_heating_mw(tree), T_NX_LOAD);
    assert_int_equal(agent_sim_tree_advance(tree, start_us + tau_us, &err), 0);
    temps = t_sample_temps(reader);
    t_check_lag(l, b, temps, idle_mw, T_NX_LOAD, tau_s);
    json_decref(temps);
    assert_int_equal(agent_sim_tree_advance(tree, start_us, &err), 0); // the past: no change
    temps = t_sample_temps(reader);
    t_check_lag(l, b, temps, idle_mw, T_NX_LOAD, tau_s);
    json_decref(temps);
    // Twenty time constants of the slowest zone (300 s): at the loaded steady state, in a
    // plausible range.
    int64_t loaded_us = start_us + (int64_t) (300.0 * 20 * T_US_PER_S);
    assert_int_equal(agent_sim_tree_set_power(tree, load, loaded_us, &err), 0);
    temps = t_sample_temps(reader);
    t_check_lag(l, b, temps, T_NX_LOAD, T_NX_LOAD, 0);
    json_int_t cpu = json_integer_value(json_object_get(temps, "CPU"));
    assert_true(cpu > 50000 && cpu < 75000);
    json_decref(temps);
    // Idle again: the fall takes the same time constants.
    assert_int_equal(agent_sim_tree_set_power(tree, NULL, loaded_us, &err), 0);
    assert_int_equal(agent_sim_tree_advance(tree, loaded_us + tau_us, &err), 0);
    temps = t_sample_temps(reader);
    t_check_lag(l, b, temps, T_NX_LOAD, idle_mw, tau_s);
    json_decref(temps);
    json_decref(load);
    agent_sysfs_destroy(&reader);
    agent_sim_tree_destroy(&tree);
    sim_model_destroy(&model);
}

// Every zone file's text of a tree, joined.
static char *t_all_temps(const agent_sim_tree_t *tree, size_t n)
{
    char *all = calloc(n, 32);
    assert_non_null(all);
    for (size_t i = 0; i < n; i++) {
        char *text = t_zone_file(tree, i, "temp");
        assert_non_null(text);
        (void) snprintf(all + strlen(all), 32 * n - strlen(all), "%s ", text);
        free(text);
    }
    return all;
}

// One power history with its modelled times, on a tree (loaded_mw for the load).
static void t_history(agent_sim_tree_t *tree, int loaded_mw)
{
    jf_err_t err = {0};
    json_t *load = json_pack("{s:i, s:i}", "VDD_GPU_SOC", loaded_mw, "VDD_CPU_CV", 4000);
    assert_int_equal(agent_sim_tree_set_power(tree, load, 1000000, &err), 0);
    assert_int_equal(agent_sim_tree_advance(tree, 37000000, &err), 0);
    assert_int_equal(agent_sim_tree_set_power(tree, load, 80500000, &err), 0);
    assert_int_equal(agent_sim_tree_set_power(tree, NULL, 123456789, &err), 0);
    assert_int_equal(agent_sim_tree_advance(tree, 150000000, &err), 0);
    json_decref(load);
}

// The same inputs give the same temperatures, to the millidegree; another load does not.
static void test_deterministic(void **state)
{
    (void) state;
    sim_model_t *model = t_model();
    size_t n = t_n_layout_zones(t_layout(JF_BOARD_ORIN_AGX));
    char *runs[3] = {NULL};
    for (int k = 0; k < 3; k++) {
        agent_sim_tree_t *tree = t_tree(model, JF_BOARD_ORIN_AGX);
        t_history(tree, k < 2 ? 25000 : 20000);
        runs[k] = t_all_temps(tree, n);
        agent_sim_tree_destroy(&tree);
    }
    assert_string_equal(runs[0], runs[1]);
    assert_string_not_equal(runs[0], runs[2]);
    assert_non_null(strstr(runs[0], "-256000")); // the CV zones are offline
    for (int k = 0; k < 3; k++) {
        free(runs[k]);
    }
    sim_model_destroy(&model);
}

// Parameters whose zones are not the layout's: the tree is refused, naming the zone or counts.
static void test_zones_must_match_layout(void **state)
{
    (void) state;
    static const struct {
        const char *find;
        const char *replace;
        jf_board_type_t type;
        const char *fragment;
    } rows[] = {
        {"{type: PMIC-Die, r_c_per_w: 0.5,", "{type: PMIC-Dye, r_c_per_w: 0.5,",
         JF_BOARD_XAVIER_NX, "no thermal parameters for zone 'PMIC-Die' of xavier-nx"},
        {"      offline_zones: []", "      offline_zones: [iwlwifi]", JF_BOARD_AGX_XAVIER,
         "the agx-xavier parameters list 9 thermal zones, the sysfs layout 8"},
    };
    char *text = jft_read_file(SIM_PARAMS_PATH, NULL);
    assert_non_null(text);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *at = strstr(text, rows[i].find);
        assert_non_null(at);
        size_t head = (size_t) (at - text);
        size_t size = strlen(text) + strlen(rows[i].replace) + 1;
        char *bad = malloc(size);
        assert_non_null(bad);
        (void) snprintf(bad, size, "%.*s%s%s", (int) head, text, rows[i].replace,
                        at + strlen(rows[i].find));
        jf_err_t err = {0};
        sim_model_t *model = sim_model_parse(bad, strlen(bad), "bad.yaml", &err);
        if (!model) {
            fail_msg("row %zu: %s", i, err.msg);
        }
        agent_sim_tree_opts_t to = {.type = rows[i].type, .model = model,
                                    .factors = SIM_BOARD_FACTORS_NEUTRAL};
        agent_sim_tree_t *tree = agent_sim_tree_new(&to, &err);
        assert_null(tree);
        assert_int_equal(err.code, -EINVAL);
        if (!strstr(err.msg, rows[i].fragment)) {
            fail_msg("row %zu: '%s' lacks '%s'", i, err.msg, rows[i].fragment);
        }
        sim_model_destroy(&model);
        free(bad);
    }
    free(text);
}

// A copy of the parameter file with find replaced by replace, parsed; NULL with err.
static sim_model_t *t_parse_edited(const char *find, const char *replace, jf_err_t *err)
{
    char *text = jft_read_file(SIM_PARAMS_PATH, NULL);
    assert_non_null(text);
    const char *at = strstr(text, find);
    assert_non_null(at);
    size_t head = (size_t) (at - text);
    size_t size = strlen(text) + strlen(replace) + 1;
    char *edited = malloc(size);
    assert_non_null(edited);
    (void) snprintf(edited, size, "%.*s%s%s", (int) head, text, replace, at + strlen(find));
    sim_model_t *model = sim_model_parse(edited, strlen(edited), "edited.yaml", err);
    free(edited);
    free(text);
    return model;
}

// The GPU's cur_freq file of a Xavier NX tree, in Hz.
static long long t_gpu_hz(const agent_sim_tree_t *tree)
{
    char path[PATH_MAX];
    (void) snprintf(path, sizeof path, "%s/%s/cur_freq", agent_sim_tree_sysfs_root(tree),
                    t_layout(JF_BOARD_XAVIER_NX)->gpu_devfreq_dir);
    char *text = jft_read_file(path, NULL);
    assert_non_null(text);
    long long hz = strtoll(text, NULL, 10);
    free(text);
    return hz;
}


// Simulated throttling (thermal.throttle): the GPU clock at gpu_pct of the mode's while a zone
// is at or above temp_c, the mode's again once all are below; bad values are refused.
static void test_throttle(void **state)
{
    (void) state;
    jf_err_t err = {0};
    // Idle is about 38 C and a loaded board heads for about 64 C: 50 C is crossed under load.
    sim_model_t *model = t_parse_edited(
        "      offline_zones: []\n\n  # Jetson Nano",
        "      offline_zones: []\n      throttle: {temp_c: 50, gpu_pct: 40}\n\n  # Jetson Nano",
        &err);
    if (!model) {
        fail_msg("%s", err.msg);
    }
    agent_sim_tree_t *tree = t_tree(model, JF_BOARD_XAVIER_NX);
    long long mode_hz = t_gpu_hz(tree);
    assert_true(mode_hz > 0);
    json_t *load = json_pack("{s:f}", "VDD_IN", (double) T_NX_LOAD);
    assert_int_equal(agent_sim_tree_set_power(tree, load, 0, &err), 0);
    assert_int_equal(t_gpu_hz(tree), mode_hz); // still idle-warm
    assert_int_equal(agent_sim_tree_advance(tree, 600 * (int64_t) T_US_PER_S, &err), 0);
    assert_int_equal(t_gpu_hz(tree), llround((double) mode_hz * 0.40)); // ten time constants
    assert_int_equal(agent_sim_tree_set_power(tree, NULL, 600 * (int64_t) T_US_PER_S, &err), 0);
    assert_int_equal(agent_sim_tree_advance(tree, 1800 * (int64_t) T_US_PER_S, &err), 0);
    assert_int_equal(t_gpu_hz(tree), mode_hz); // cooled down
    json_decref(load);
    agent_sim_tree_destroy(&tree);
    sim_model_destroy(&model);
    static const struct {
        const char *throttle;
        const char *fragment;
    } bad[] = {
        {"throttle: {temp_c: 50, gpu_pct: 0}", "gpu_pct"},
        {"throttle: {temp_c: 50}", "gpu_pct"},
        {"throttle: {temp_c: 50, gpu_pct: 50, hz: 1}", "hz"},
        {"throttle: 50", ""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char replace[256];
        (void) snprintf(replace, sizeof replace, "      offline_zones: []\n      %s\n\n  # Jetson Nano",
                        bad[i].throttle);
        err = (jf_err_t){0};
        sim_model_t *m = t_parse_edited("      offline_zones: []\n\n  # Jetson Nano", replace, &err);
        if (m || !strstr(err.msg, bad[i].fragment)) {
            fail_msg("row %zu: model %p, error '%s' (wanted '%s')", i, (void *) m, err.msg,
                     bad[i].fragment);
        }
        printf("throttle_refused_%zu: %s\n", i, err.msg);
    }
}

// The model alone: steady state, the lag, a non-finite power counted as none.
static void test_model(void **state)
{
    (void) state;
    sim_board_params_t b = {.ambient_c = 25.0, .n_zones = 2};
    b.zones[0] = (sim_zone_params_t){.type = "A", .r_c_per_w = 2.0, .tau_s = 10.0};
    b.zones[1] = (sim_zone_params_t){.type = "B", .offline = true};
    sim_thermal_t t;
    sim_thermal_init(&t, &b, 5000.0, 0);
    assert_int_equal(sim_thermal_zone_mc(&t, 0), 35000);
    assert_int_equal(sim_thermal_zone_mc(&t, 1), SIM_THERMAL_OFFLINE_MC);
    sim_thermal_set_power(&t, 15000.0, 2000000);
    assert_int_equal(sim_thermal_zone_mc(&t, 0), 35000);
    sim_thermal_advance(&t, 12000000);
    assert_int_equal(sim_thermal_zone_mc(&t, 0), llround((55.0 - 20.0 * exp(-1.0)) * 1000.0));
    sim_thermal_set_power(&t, NAN, 12000000);
    sim_thermal_advance(&t, 1012000000);
    assert_int_equal(sim_thermal_zone_mc(&t, 0), 25000);
    assert_true(fabs(sim_thermal_steady_c(&b, 0, -1.0) - 25.0) < 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model),
        cmocka_unit_test(test_zones_of_each_family),
        cmocka_unit_test(test_step_response),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_zones_must_match_layout),
        cmocka_unit_test(test_throttle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
