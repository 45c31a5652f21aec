/* coord_validity over a store built with the store API in a temp directory: runs with poor
 * telemetry coverage (missed, late, a long gap, also in a simulated time base), a power mode read
 * back that differs, a clock offset beyond the bound, an epoch far outside the board's other
 * epochs, energy missing, no measure record and pinned clocks read back below the mode's
 * (throttled; not concluded with DVFS on), and other load beyond the bound (real boards by
 * default, sim boards with an explicit bound) are each flagged with their reason and only it;
 * the good runs pass; the summary and coord_valid_runs agree; an unknown sweep is -ENOENT. */
#include "coord_valid_runs.h"
#include "coord_validity.h"
#include "jf_units.h"
#include "store_support.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define S_RUNS 26
#define S_GOOD                                                                                     \
    "{\"telemetry\":{\"rate_hz\":1,\"samples\":100,\"late\":0,\"missed\":0,"                       \
    "\"max_gap_us\":1000100,\"time_base\":\"monotonic\"},"                                         \
    "\"power_mode\":{\"mode_id\":0,\"mode_name\":\"MAXN\"}}"
#define S_MODE_OK     "\"power_mode\":{\"mode_id\":0,\"mode_name\":\"MAXN\"}}"
#define S_MODE_OK_OBJ "\"power_mode\":{\"mode_id\":0,\"mode_name\":\"MAXN\"}"
#define S_TEL                                                                                      \
    "{\"telemetry\":{\"rate_hz\":1,\"samples\":100,\"late\":0,\"missed\":0,"                       \
    "\"max_gap_us\":1000000},"
#define S_PINNED(dvfs_off, thermal)                                                                \
    S_TEL "\"power_mode\":{\"mode_id\":0,\"mode_name\":\"MAXN\",\"dvfs_off\":" dvfs_off "},"       \
          "\"thermal\":{" thermal "}}"
#define S_GPU_40_OF_100                                                                            \
    "\"samples\":100,\"max_temps_mc\":{\"GPU\":87500,\"CPU\":80000},\"gpu_samples\":100,"          \
    "\"gpu_below\":40,\"gpu_lowest_hz\":599250000,\"gpu_cap_hz\":1109250000"

typedef struct s_case {
    const char *board;
    int repeat;
    const char *measure;  // NULL: no measure record stored
    bool energy;          // its epochs have energy
    double e2e_s[2];      // epochs 1 and 2 (epoch 0 is warm-up)
    int reason;           // the one expected reason, or -1 for a valid run
    const char *fragment; // expected in the detail
} s_case_t;

static const s_case_t s_cases[S_RUNS] = {
    {"nx-01", 0, S_GOOD, true, {10.00, 10.10}, -1, NULL},
    {"nx-01", 1, S_GOOD, true, {10.05, 10.02}, -1, NULL},
    {"nx-01", 2, S_GOOD, true, {9.98, 10.03}, -1, NULL},
    {"nx-01",
     3,
     S_GOOD,
     true,
     {10.01, 14.00},
     COORD_INVALID_EPOCH_OUTLIER,
     "epoch 2 e2e 14.000 s vs median"},
    {"nx-02",
     0,
     "{\"telemetry\":{\"rate_hz\":1,\"samples\":90,\"late\":0,\"missed\":10,"
     "\"max_gap_us\":1000000}," S_MODE_OK,
     true,
     {10.0, 10.0},
     COORD_INVALID_TELEMETRY,
     "10 of 100 sampling deadlines missed"},
    {"nx-02",
     1,
     "{\"telemetry\":{\"rate_hz\":1,\"samples\":100,\"late\":20,\"missed\":0,"
     "\"max_gap_us\":1000000}," S_MODE_OK,
     true,
     {10.0, 10.1},
     COORD_INVALID_TELEMETRY,
     "20 of 100 samples late"},
    {"nx-02",
     2,
     "{\"telemetry\":{\"rate_hz\":1,\"samples\":100,\"late\":0,\"missed\":0,"
     "\"max_gap_us\":5000000}," S_MODE_OK,
     true,
     {10.1, 10.0},
     COORD_INVALID_TELEMETRY,
     "longest telemetry gap 5.000 s"},
    {"nx-03",
     0,
     "{\"telemetry\":{\"rate_hz\":1,\"samples\":100,\"late\":0,\"missed\":0,"
     "\"max_gap_us\":1000000},\"power_mode\":{\"mode_id\":2,\"mode_name\":\"MODE_10W\"}}",
     true,
     {10.0, 10.0},
     COORD_INVALID_POWER_MODE,
     "read back 2 MODE_10W, asked 0 MAXN"},
    {"nx-03",
     2,
     "{\"telemetry\":{\"rate_hz\":1,\"samples\":100,\"late\":0,\"missed\":0,"
     "\"max_gap_us\":1000000},\"power_mode\":{\"mode_id\":0,\"mode_name\":\"MODE_10W\"}}",
     true,
     {10.0, 10.0},
     COORD_INVALID_POWER_MODE,
     "read back 0 MODE_10W, asked 0 MAXN"},
    {"nx-03",
     1,
     "{\"telemetry\":{\"rate_hz\":1,\"samples\":100,\"late\":0,\"missed\":0}}",
     true,
     {10.0, 10.0},
     COORD_INVALID_POWER_MODE,
     "not read back"},
    {"nx-04",
     0,
     S_GOOD,
     true,
     {10.0, 10.0},
     COORD_INVALID_CLOCK_OFFSET,
     "clock offset 20.000 ms beyond the bound 5.000 ms"},
    {"nx-05",
     0,
     S_GOOD,
     false,
     {10.0, 10.0},
     COORD_INVALID_ENERGY_MISSING,
     "epoch 1 has no energy"},
    {"nx-05", 1, NULL, true, {10.0, 10.0}, COORD_INVALID_NO_MEASURE, "no measure record"},
    // A sim board: times are modelled, the sampler ran at 10 Hz of wall time at speed 200, so a
    // period is 20 modelled seconds: a 50 s gap is fine, a 70 s one is not.
    {"sim-1",
     0,
     "{\"telemetry\":{\"rate_hz\":10,\"samples\":100,\"late\":0,\"missed\":0,"
     "\"max_gap_us\":50000000,\"time_base\":\"simulated, speed "
     "200\",\"wall_rate_hz\":10}," S_MODE_OK,
     true,
     {10.0, 10.0},
     -1,
     NULL},
    {"sim-1",
     1,
     "{\"telemetry\":{\"rate_hz\":10,\"samples\":100,\"late\":0,\"missed\":0,"
     "\"max_gap_us\":70000000,\"time_base\":\"simulated, speed "
     "200\",\"wall_rate_hz\":10}," S_MODE_OK,
     true,
     {10.0, 10.0},
     COORD_INVALID_TELEMETRY,
     "longest telemetry gap 70.000 s"},
    // Pinned clocks below the mode's: throttled, with the numbers and the hottest zone.
    {"nx-06",
     0,
     S_PINNED("true", S_GPU_40_OF_100),
     true,
     {10.0, 10.0},
     COORD_INVALID_THROTTLED,
     "GPU below the mode's 1109 MHz in 40 of 100 samples (40.0% > 5%), lowest 599 MHz; hottest "
     "zone GPU 87.5 C"},
    // The same clocks with DVFS on: a governor lowers them too, nothing is concluded.
    {"nx-06", 1, S_PINNED("false", S_GPU_40_OF_100), true, {10.0, 10.0}, -1, NULL},
    {"nx-06",
     2,
     S_PINNED("true", "\"samples\":100,\"cpu_samples\":600,\"cpu_below\":60,"
                      "\"cpu_max_shortfall_pct\":25.0"),
     true,
     {10.0, 10.0},
     COORD_INVALID_THROTTLED,
     "CPU cores below their cluster's cap in 60 of 600 readings (10.0% > 5%), up to 25.0% below"},
    // A sim board runs at the mode's caps: 5 of 100 (5%) is within the bound, 6 is not.
    {"sim-1",
     2,
     S_PINNED("false", "\"samples\":100,\"gpu_samples\":100,\"gpu_below\":5,"
                       "\"gpu_lowest_hz\":599250000,\"gpu_cap_hz\":1109250000"),
     true,
     {10.0, 10.0},
     -1,
     NULL},
    {"sim-1",
     3,
     S_PINNED("false", "\"samples\":100,\"gpu_samples\":100,\"gpu_below\":6,"
                       "\"gpu_lowest_hz\":599250000,\"gpu_cap_hz\":1109250000"),
     true,
     {10.0, 10.0},
     COORD_INVALID_THROTTLED,
     "in 6 of 100 samples (6.0% > 5%)"},
    // Other load: 40% on a real board is beyond the default 25%, 20% is not; a sim board's (the
    // host's) is not checked without an explicit bound.
    {"nx-07",
     0,
     S_TEL S_MODE_OK_OBJ ",\"other_load\":{\"intervals\":30,\"mean_pct\":40.0,\"max_pct\":70.0}}",
     true,
     {10.0, 10.0},
     COORD_INVALID_OTHER_LOAD,
     "other load 40.0% of the CPUs' time on average (> 25%), at most 70.0%"},
    {"nx-07",
     1,
     S_TEL S_MODE_OK_OBJ ",\"other_load\":{\"intervals\":30,\"mean_pct\":20.0,\"max_pct\":30.0}}",
     true,
     {10.0, 10.0},
     -1,
     NULL},
    // GPU load before epoch 0: 40 % on a real board is another process's (> 10 %), 5 % is not;
    // a sim board's is modelled and not checked.
    {"nx-07",
     2,
     S_TEL S_MODE_OK_OBJ ",\"gpu_before\":{\"samples\":12,\"mean_pct\":40.0,\"max_pct\":80.0}}",
     true,
     {10.0, 10.0},
     COORD_INVALID_OTHER_LOAD,
     "GPU load 40.0% on average before epoch 0 began (> 10%: another process), at most 80.0%, "
     "over 12 samples"},
    {"nx-07",
     3,
     S_TEL S_MODE_OK_OBJ ",\"gpu_before\":{\"samples\":12,\"mean_pct\":5.0,\"max_pct\":30.0}}",
     true,
     {10.0, 10.0},
     -1,
     NULL},
    {"sim-1",
     5,
     S_TEL S_MODE_OK_OBJ ",\"gpu_before\":{\"samples\":12,\"mean_pct\":90.0,\"max_pct\":95.0}}",
     true,
     {10.0, 10.0},
     -1,
     NULL},
    {"sim-1",
     4,
     S_TEL S_MODE_OK_OBJ ",\"other_load\":{\"intervals\":30,\"mean_pct\":90.0,\"max_pct\":95.0}}",
     true,
     {10.0, 10.0},
     -1,
     NULL},
};

static void s_store_run(coord_store_t *st, const jf_run_spec_t *spec, const s_case_t *k)
{
    jf_err_t err = {0};
    int64_t a = tstore_assign(st, spec->run_id);
    assert_int_equal(coord_store_run_start(st, spec->run_id, a, &err), 0);
    for (int e = 0; e < 3; e++) {
        jf_epoch_rec_t rec = tstore_epoch(e, (int64_t) ((e ? k->e2e_s[e - 1] : 30.0) * 1e6), 1.0);
        rec.has_energy = k->energy;
        rec.energy_mj = 9500.0 * (double) rec.e2e_us / 1e6;
        rec.avg_power_mw = 9500.0;
        assert_int_equal(coord_store_add_epoch(st, spec->run_id, a, &rec, &err), 0);
    }
    if (k->measure) {
        assert_int_equal(coord_store_run_set_measure(st, spec->run_id, a, k->measure, &err), 0);
    }
    assert_int_equal(coord_store_run_finish(st, spec->run_id, a, true, NULL, NULL, &err), 0);
}

// Stores every case as a done run of sweep "smoke", plus one run left pending (not judged).
static void s_build(coord_store_t *st, jf_run_spec_t *specs)
{
    static const char *const boards[] = {"nx-01", "nx-02", "nx-03", "nx-04",
                                         "nx-05", "nx-06", "nx-07", "sim-1"};
    jf_err_t err = {0};
    for (size_t b = 0; b < sizeof boards / sizeof boards[0]; b++) {
        bool sim = strcmp(boards[b], "sim-1") == 0;
        assert_int_equal(
            coord_store_board_hello(st, boards[b], "xavier-nx", sim ? "sim" : "jetson", "{}", &err),
            0);
        int64_t offset_us = strcmp(boards[b], "nx-04") == 0 ? 20000 : -300;
        assert_int_equal(coord_store_board_set_clock(st, boards[b], offset_us, 800, 1, &err), 0);
    }
    for (size_t i = 0; i < S_RUNS; i++) {
        specs[i] = tstore_spec(s_cases[i].board, s_cases[i].repeat);
    }
    specs[S_RUNS] = tstore_spec("nx-01", 9);
    tstore_put(st, specs, S_RUNS + 1);
    for (size_t i = 0; i < S_RUNS; i++) {
        s_store_run(st, &specs[i], &s_cases[i]);
    }
}

typedef struct s_seen {
    coord_run_validity_t v[S_RUNS + 1];
    size_t n;
} s_seen_t;

static int s_collect(const coord_run_validity_t *v, void *arg)
{
    s_seen_t *seen = arg;
    assert_true(seen->n < S_RUNS);
    seen->v[seen->n++] = *v;
    return 0;
}

static void s_expect_case(const coord_run_validity_t *v, const jf_run_spec_t *spec,
                          const s_case_t *k)
{
    assert_string_equal(v->run, spec->run_id);
    assert_string_equal(v->board, k->board);
    assert_string_equal(v->board_type, "xavier-nx");
    assert_int_equal(v->epochs, 2);
    for (int r = 0; r < COORD_INVALID_COUNT; r++) {
        if (v->reason[r] != (r == k->reason)) {
            fail_msg("run %s (%s repeat %d): reason %s is %d, expected %d; detail '%s'", v->run,
                     k->board, k->repeat, coord_invalid_name((coord_invalid_t) r), v->reason[r],
                     r == k->reason, v->detail);
        }
    }
    assert_int_equal(v->valid, k->reason < 0);
    if (k->fragment && !strstr(v->detail, k->fragment)) {
        fail_msg("run %s: detail '%s' lacks '%s'", v->run, v->detail, k->fragment);
    }
}

static void test_each_reason(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t specs[S_RUNS + 1];
    s_build(c->store, specs);
    s_seen_t seen = {0};
    jf_err_t err = {0};
    assert_int_equal(coord_validity_check_sweep(c->store, "smoke", NULL, s_collect, &seen, &err),
                     0);
    assert_int_equal(seen.n, S_RUNS); // the pending run is not judged
    coord_validity_summary_t sum = {0};
    for (size_t i = 0; i < S_RUNS; i++) {
        s_expect_case(&seen.v[i], &specs[i], &s_cases[i]);
        coord_validity_summary_add(&sum, &seen.v[i]);
    }
    char text[256];
    coord_validity_summary_format(&sum, text, sizeof text);
    assert_string_equal(text, "26 runs, 10 valid, 16 left out: no-measure 1, telemetry 4, "
                              "power-mode 3, clock-offset 1, energy-missing 1, epoch-outlier 1, "
                              "throttled 3, other-load 2");
}

static void test_clock_bound_and_valid_runs(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t specs[S_RUNS + 1];
    s_build(c->store, specs);
    jf_err_t err = {0};
    coord_validity_opts_t opts = {.clock_offset_bound_us = 25 * JF_US_PER_MS};
    coord_valid_runs_t *valid = coord_valid_runs_new(c->store, "smoke", &opts, &err);
    assert_non_null(valid);
    const coord_validity_summary_t *s = coord_valid_runs_summary(valid);
    assert_int_equal(s->runs, S_RUNS);
    assert_int_equal(s->valid, 11); // nx-04's 20 ms is within a 25 ms bound
    assert_int_equal(s->by_reason[COORD_INVALID_CLOCK_OFFSET], 0);
    assert_int_equal(s->by_reason[COORD_INVALID_TELEMETRY], 4);
    for (size_t i = 0; i < S_RUNS; i++) {
        bool want = s_cases[i].reason < 0 || s_cases[i].reason == COORD_INVALID_CLOCK_OFFSET;
        assert_int_equal(coord_valid_runs_has(valid, specs[i].run_id), want);
    }
    assert_false(coord_valid_runs_has(valid, specs[S_RUNS].run_id)); // pending
    assert_false(coord_valid_runs_has(valid, "r0000000000000000"));
    // Every done run's verdict, as check prints it; none for a pending or unknown run.
    for (size_t i = 0; i < S_RUNS; i++) {
        const coord_run_validity_t *v = coord_valid_runs_verdict(valid, specs[i].run_id);
        assert_non_null(v);
        assert_string_equal(v->run, specs[i].run_id);
        char reasons[160];
        coord_validity_reasons_format(v, reasons, sizeof reasons);
        bool want = s_cases[i].reason < 0 || s_cases[i].reason == COORD_INVALID_CLOCK_OFFSET;
        assert_string_equal(reasons,
                            want ? "" : coord_invalid_name((coord_invalid_t) s_cases[i].reason));
    }
    assert_null(coord_valid_runs_verdict(valid, specs[S_RUNS].run_id));
    assert_null(coord_valid_runs_verdict(valid, "r0000000000000000"));
    coord_valid_runs_destroy(&valid);
    assert_null(valid);
}

// An explicit other-load bound applies to every board, sim boards (the host's load) included.
static void test_other_load_bound(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t specs[S_RUNS + 1];
    s_build(c->store, specs);
    jf_err_t err = {0};
    coord_validity_opts_t opts = {.other_load_max_pct = 10.0};
    coord_valid_runs_t *valid = coord_valid_runs_new(c->store, "smoke", &opts, &err);
    assert_non_null(valid);
    // nx-07's two and its GPU's, and sim-1's CPU (its GPU's is not checked, bound or not).
    assert_int_equal(coord_valid_runs_summary(valid)->by_reason[COORD_INVALID_OTHER_LOAD], 4);
    const coord_run_validity_t *v = coord_valid_runs_verdict(valid, specs[S_RUNS - 1].run_id);
    assert_non_null(v);
    assert_true(v->reason[COORD_INVALID_OTHER_LOAD]);
    assert_non_null(strstr(v->detail, "other load 90.0% of the CPUs' time on average (> 10%), at "
                                      "most 95.0% (a sim board: the host's load)"));
    coord_valid_runs_destroy(&valid);
}

static void test_unknown_sweep(void **state)
{
    tstore_ctx_t *c = *state;
    jf_err_t err = {0};
    s_seen_t seen = {0};
    assert_int_equal(coord_validity_check_sweep(c->store, "nope", NULL, s_collect, &seen, &err),
                     -ENOENT);
    assert_string_equal(err.msg, "no sweep named 'nope'");
    assert_null(coord_valid_runs_new(c->store, "nope", NULL, &err));
    assert_string_equal(err.msg, "no sweep named 'nope'");
    assert_string_equal(coord_invalid_name(COORD_INVALID_COUNT), "?");
}

static void test_unreadable_measure(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t spec = tstore_spec("nx-01", 0);
    tstore_put(c->store, &spec, 1);
    // JSON but not an object. (Text that is not JSON at all cannot be stored by the coordinator,
    // which writes what jansson encoded, and SQLite's JSON functions in the epochs query would
    // refuse it.)
    s_case_t k = {"nx-01", 0, "[1, 2]", true, {10.0, 10.0}, 0, NULL};
    s_store_run(c->store, &spec, &k);
    s_seen_t seen = {0};
    jf_err_t err = {0};
    int rc = coord_validity_check_sweep(c->store, "smoke", NULL, s_collect, &seen, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(seen.n, 1);
    assert_false(seen.v[0].valid);
    assert_true(seen.v[0].reason[COORD_INVALID_NO_MEASURE]);
    assert_non_null(strstr(seen.v[0].detail, "measure record unreadable"));
    assert_non_null(strstr(seen.v[0].detail, "not an object"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_each_reason, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_clock_bound_and_valid_runs, tstore_setup,
                                        tstore_teardown),
        cmocka_unit_test_setup_teardown(test_other_load_bound, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_unknown_sweep, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_unreadable_measure, tstore_setup, tstore_teardown),
    };
    int rc = tstore_main_begin();
    if (rc != 0) {
        return rc;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    tstore_main_end();
    return rc;
}
