/* Integration: a store built with the real store API (boards, sweeps of runs at custom operating
 * points, their epochs with energy, each run done), then the real `jetfleet` binary: model fit
 * (linear, mlp, a transfer), list, predict, eval on a held-out sweep, pareto (measured, against
 * the test's own brute-force front, and predicted), recommend, and the bad requests (exit 1 with
 * one clear line; usage errors exit 2). The ground truth is a roofline-like time and a
 * frequency-dependent power with 2 % seeded noise per epoch. */
#include "coord_store.h"
#include "jf_fleet_config.h"
#include "jf_rng.h"
#include "jf_units.h"
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"

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
#include <sys/stat.h>

#define T_WORKLOAD  "lenet5-mnist"
#define T_EPOCHS    3 // epoch 0 (warm-up) and two measured ones
#define T_NOISE     0.02
#define T_CLI_MS    60000
#define T_GRID_RUNS 54
#define T_HELD_RUNS 8
#define T_XFER_RUNS 20
#define T_ERR_BOUND 10.0 // percent: CV and held-out MAPE the linear fits must reach
#define T_GAP_BOUND 10.0 // percent: recommended mode's true time over the true optimum

static const int t_cores[] = {2, 4, 6};
static const double t_cpu_ghz[] = {0.73, 1.19, 1.9};
static const double t_gpu_ghz[] = {0.3, 0.6, 1.1};
static const double t_emc_ghz[] = {1.0, 1.6};

// Ground truth of one board: epoch seconds and mean watts at a mode (scale: another workload).
static double t_time_s(const jf_run_custom_t *c, double scale)
{
    double g = (double) c->gpu_hz / 1e9;
    double e = (double) c->emc_hz / 1e9;
    double cpu = (double) c->cpu_hz / 1e9;
    double gpu = 2.0 * scale / g > 3.0 / e ? 2.0 * scale / g : 3.0 / e;
    return gpu + 4.0 / (c->n_cores * cpu);
}

static double t_power_w(const jf_run_custom_t *c)
{
    double g = (double) c->gpu_hz / 1e9;
    double e = (double) c->emc_hz / 1e9;
    double cpu = (double) c->cpu_hz / 1e9;
    return 2.0 + 0.4 * c->n_cores * cpu * cpu + 3.0 * g * g + 0.8 * e;
}

static jf_run_spec_t t_spec(const char *board, jf_run_custom_t c, int repeat)
{
    jf_run_spec_t s = {.workload = T_WORKLOAD,
                       .model = "lenet5",
                       .dataset = "mnist",
                       .epochs = T_EPOCHS,
                       .power_mode = "MAXN",
                       .storage = "sd",
                       .workers = 2,
                       .prefetch = 2,
                       .batch_size = 32,
                       .repeat = repeat,
                       .seed = 1,
                       .telemetry_hz = 1,
                       .timeout_us = 3600 * JF_US_PER_S,
                       .custom = c};
    snprintf(s.board, sizeof s.board, "%s", board);
    jf_run_spec_compute_id(&s);
    return s;
}

static jf_run_custom_t t_mode(size_t i)
{
    size_t e = i % 2, g = i / 2 % 3, p = i / 6 % 3, k = i / 18 % 3;
    return (jf_run_custom_t){.n_cores = t_cores[k],
                             .cpu_hz = (int64_t) (t_cpu_ghz[p] * 1e9),
                             .gpu_hz = (int64_t) (t_gpu_ghz[g] * 1e9),
                             .emc_hz = (int64_t) (t_emc_ghz[e] * 1e9)};
}

// The measure record of a run whose telemetry kept time (1 Hz, nothing late or missed), and of one
// whose sampler fell behind (20 of 100 samples late: jetfleet check leaves it out).
#define T_MEASURE_GOOD                                                                             \
    "{\"telemetry\":{\"rate_hz\":1,\"samples\":100,\"late\":0,\"missed\":0,"                       \
    "\"max_gap_us\":1000100,\"time_base\":\"monotonic\"}}"
#define T_MEASURE_LATE                                                                             \
    "{\"telemetry\":{\"rate_hz\":1,\"samples\":100,\"late\":20,\"missed\":0,"                      \
    "\"max_gap_us\":1000100,\"time_base\":\"monotonic\"}}"
#define T_BAD_SLOWDOWN 3.0 // the late run's epochs take 3x the truth: it would spoil a fit

// Stores one done run with its epochs and a measure record (bad: a run jetfleet check finds
// invalid, with its times T_BAD_SLOWDOWN x the truth); writes the measured means to ret_t/ret_e
// (s, J).
static void t_run(coord_store_t *st, const jf_run_spec_t *s, double scale, bool bad, jf_rng_t *rng,
                  double *ret_t, double *ret_e)
{
    int64_t a = 0;
    jf_err_t err = {0};
    assert_int_equal(coord_store_run_assign(st, s->run_id, &a, &err), 0);
    assert_int_equal(coord_store_run_start(st, s->run_id, a, &err), 0);
    assert_int_equal(
        coord_store_run_set_measure(st, s->run_id, a, bad ? T_MEASURE_LATE : T_MEASURE_GOOD, &err),
        0);
    double sum_t = 0.0, sum_e = 0.0;
    for (int ep = 0; ep < T_EPOCHS; ep++) {
        double t = t_time_s(&s->custom, scale) * (bad ? T_BAD_SLOWDOWN : 1.0) *
                   (1.0 + T_NOISE * jf_rng_normal(rng));
        double w = t_power_w(&s->custom) * (1.0 + T_NOISE * jf_rng_normal(rng));
        jf_epoch_rec_t r = {.epoch = ep,
                            .warmup = ep == 0,
                            .e2e_us = (int64_t) (t * 1e6),
                            .fetch_stall_us = (int64_t) (t * 1e5),
                            .compute_us = (int64_t) (t * 5e5),
                            .samples = 60000,
                            .has_energy = true,
                            .energy_mj = w * t * 1e3,
                            .avg_power_mw = w * 1e3};
        assert_int_equal(coord_store_add_epoch(st, s->run_id, a, &r, &err), 0);
        sum_t += ep ? (double) r.e2e_us / 1e6 : 0.0;
        sum_e += ep ? r.energy_mj / 1e3 : 0.0;
    }
    assert_int_equal(coord_store_run_finish(st, s->run_id, a, true, NULL, NULL, &err), 0);
    *ret_t = sum_t / (T_EPOCHS - 1);
    *ret_e = sum_e / (T_EPOCHS - 1);
}

typedef struct t_ctx {
    jft_fleet_t f;
    double grid_t[T_GRID_RUNS]; // measured means of sweep "grid" on nx-01 (s, J)
    double grid_e[T_GRID_RUNS];
} t_ctx_t;

static void t_sweep(t_ctx_t *c, coord_store_t *st, const char *name, const char *board,
                    const size_t *modes, size_t n, double scale, uint64_t seed)
{
    // The grid also has one more run, at mode 0, whose telemetry was late (left out by check).
    bool grid = strcmp(name, "grid") == 0;
    size_t total = n + grid;
    jf_run_spec_t *runs = calloc(total, sizeof *runs);
    for (size_t i = 0; i < n; i++) {
        runs[i] = t_spec(board, t_mode(modes[i]), strcmp(name, "held") == 0); // new runs
    }
    if (grid) {
        runs[n] = t_spec(board, t_mode(0), 7);
    }
    jf_sweep_t sw = {.n_runs = total, .runs = runs};
    snprintf(sw.name, sizeof sw.name, "%s", name);
    snprintf(sw.description, sizeof sw.description, "model_cli_test %s", name);
    coord_submit_result_t res = {0};
    jf_err_t err = {0};
    assert_int_equal(coord_store_sweep_put(st, &sw, "t.yaml", "x: 1\n", &res, &err), 0);
    jf_rng_t rng;
    jf_rng_seed(&rng, seed, 0);
    for (size_t i = 0; i < total; i++) {
        double t = 0.0, e = 0.0;
        t_run(st, &runs[i], scale, i == n, &rng, &t, &e);
        if (grid && i < n) {
            c->grid_t[i] = t;
            c->grid_e[i] = e;
        }
    }
    free(runs);
}

static int t_setup(void **state)
{
    t_ctx_t *c = calloc(1, sizeof *c);
    assert_int_equal(jft_fleet_setup(&c->f, 1), 0);
    mkdir(c->f.data_dir, 0700);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/jetfleet.db", c->f.data_dir);
    jf_err_t err = {0};
    coord_store_t *st = coord_store_open(path, false, &err);
    assert_non_null(st);
    assert_int_equal(coord_store_board_hello(st, "nx-01", "xavier-nx", "sim", "{}", &err), 0);
    assert_int_equal(coord_store_board_hello(st, "nx-02", "xavier-nx", "sim", "{}", &err), 0);
    size_t modes[T_GRID_RUNS];
    for (size_t i = 0; i < T_GRID_RUNS; i++) {
        modes[i] = i;
    }
    t_sweep(c, st, "grid", "nx-01", modes, T_GRID_RUNS, 1.0, 1);
    // nx-02 runs a heavier variant (its GPU work 1.6x): 20 profiled modes for the transfer.
    size_t xfer[T_XFER_RUNS];
    for (size_t i = 0; i < T_XFER_RUNS; i++) {
        xfer[i] = (i * 11) % T_GRID_RUNS;
    }
    t_sweep(c, st, "grid2", "nx-02", xfer, T_XFER_RUNS, 1.6, 2);
    size_t held[T_HELD_RUNS] = {1, 8, 15, 22, 29, 36, 43, 50}; // repeats measured anew
    t_sweep(c, st, "held", "nx-01", held, T_HELD_RUNS, 1.0, 3);
    coord_store_destroy(&st);
    *state = c;
    return 0;
}

static int t_teardown(void **state)
{
    t_ctx_t *c = *state;
    int rc = jft_fleet_teardown(&c->f);
    free(c);
    return rc;
}

// The value after "key=" in text, or fails the test.
static double t_value(const char *text, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "%s=", key);
    const char *p = strstr(text, k);
    if (!p) {
        fail_msg("no '%s' in output:\n%s", k, text);
    }
    return strtod(p + strlen(k), NULL);
}

static char *t_cli(t_ctx_t *c, int rc, const char *const *args)
{
    char *out = jft_cli_expect(&c->f, rc, T_CLI_MS * jft_timeout_scale(), args);
    printf("$ jetfleet %s %s ...\n%s", args[0], args[1] ? args[1] : "", out);
    return out;
}

static void t_expect_fail(t_ctx_t *c, int rc, const char *const *args, const char *frag)
{
    char *out = t_cli(c, rc, args);
    if (!strstr(out, frag)) {
        fail_msg("expected '%s' in:\n%s", frag, out);
    }
    assert_non_null(strchr(out, '\n'));
    assert_ptr_equal(strchr(out, '\n') + 1, out + strlen(out)); // one line
    free(out);
}

// The front of the grid's measured (time, energy) by brute force: points no other dominates.
static size_t t_front_size(const t_ctx_t *c)
{
    size_t n = 0;
    for (size_t i = 0; i < T_GRID_RUNS; i++) {
        bool dominated = false;
        for (size_t k = 0; k < T_GRID_RUNS && !dominated; k++) {
            dominated = c->grid_t[k] <= c->grid_t[i] && c->grid_e[k] <= c->grid_e[i] &&
                        (c->grid_t[k] < c->grid_t[i] || c->grid_e[k] < c->grid_e[i]);
        }
        n += !dominated;
    }
    return n;
}

static size_t t_lines(const char *text)
{
    size_t n = 0;
    for (const char *p = text; *p; p++) {
        n += *p == '\n';
    }
    return n;
}

// The recommended mode of out (recommend's "mode cores=.. cpu_mhz=.." line) as a custom point.
static jf_run_custom_t t_recommended(const char *out)
{
    return (jf_run_custom_t){.n_cores = (int) t_value(out, "cores"),
                             .cpu_hz = (int64_t) (t_value(out, "cpu_mhz") * 1e6),
                             .gpu_hz = (int64_t) (t_value(out, "gpu_mhz") * 1e6),
                             .emc_hz = (int64_t) (t_value(out, "emc_mhz") * 1e6)};
}

// The fastest true time of the grid's modes whose true power is within budget_w.
static double t_true_best(double budget_w)
{
    double best = INFINITY;
    for (size_t i = 0; i < T_GRID_RUNS; i++) {
        jf_run_custom_t m = t_mode(i);
        if (t_power_w(&m) <= budget_w && t_time_s(&m, 1.0) < best) {
            best = t_time_s(&m, 1.0);
        }
    }
    return best;
}

// Against the ground truth of the grid, for a recommendation without a margin: the recommended
// mode's true time over the true optimum under the budget, bounded by what two models with a
// few percent of error can miss by. Printed.
static void t_expect_near_optimum(const char *out, double budget_w)
{
    jf_run_custom_t rec = t_recommended(out);
    double best = t_true_best(budget_w);
    double gap = 100.0 * (t_time_s(&rec, 1.0) - best) / best;
    printf("recommend_gap_pct=%.2f\n", gap);
    assert_true(gap < T_GAP_BOUND);
}

// With a margin: the recommended mode's true power is within the budget. Printed with the gap
// to the true optimum, which the margin may widen (a step of this coarse grid is ~10 %).
static void t_expect_within_budget(const char *out, double budget_w)
{
    jf_run_custom_t rec = t_recommended(out);
    double best = t_true_best(budget_w);
    double gap = 100.0 * (t_time_s(&rec, 1.0) - best) / best;
    bool over = t_power_w(&rec) > budget_w;
    printf("budget_w=%.0f margin_pct=%.2f recommend_gap_pct=%.2f recommend_over_budget=%d\n",
           budget_w, t_value(out, "margin_pct"), gap, over);
    assert_false(over);
}

#define T_FIT(target, kind, board, sweep)                                                          \
    (const char *const[])                                                                          \
    {                                                                                              \
        "model", "fit", "--sweep", sweep, "--workload", T_WORKLOAD, "--board", board, "--target",  \
            target, "--kind", kind, NULL                                                           \
    }

static void test_fit_predict_eval(void **state)
{
    t_ctx_t *c = *state;
    char *out = t_cli(c, 0, T_FIT("time", "linear", "nx-01", "grid"));
    // 54 points: the grid's 55th run (late telemetry, 3x slower) is left out, and said so.
    assert_non_null(strstr(out, "model=1 kind=linear target=time points=54 cv_mape_pct="));
    assert_non_null(strstr(out, "valid runs only: 54 runs used, 1 left out as invalid, 0 without a "
                                "known operating point (see: jetfleet check --sweep grid)"));
    double cv = t_value(out, "cv_mape_pct");
    printf("grid_linear_time_cv_mape_pct=%.3f\n", cv);
    assert_true(cv < T_ERR_BOUND);
    free(out);
    out = t_cli(c, 0, T_FIT("power", "linear", "nx-01", "grid"));
    assert_non_null(strstr(out, "model=2 kind=linear target=power points=54"));
    assert_true(t_value(out, "cv_mape_pct") < T_ERR_BOUND);
    free(out);
    out = t_cli(c, 0, T_FIT("time", "mlp", "nx-01", "grid"));
    assert_non_null(strstr(out, "model=3 kind=mlp target=time points=54"));
    free(out);
    out = t_cli(c, 0,
                (const char *const[]){"model", "fit", "--sweep", "grid2", "--workload", T_WORKLOAD,
                                      "--board", "nx-02", "--target", "time", "--kind", "mlp",
                                      "--transfer-from", "3", "--name", "xfer", NULL});
    assert_non_null(strstr(out, "model=4 kind=mlp target=time points=20"));
    assert_non_null(strstr(out, "transfer=yes"));
    printf("transfer20_time_cv_mape_pct=%.3f\n", t_value(out, "cv_mape_pct"));
    free(out);
    out = t_cli(c, 0, (const char *const[]){"model", "list", NULL});
    assert_non_null(strstr(out, "xfer"));
    assert_non_null(strstr(out, "lenet5-mnist-nx-01-power-linear"));
    assert_int_equal(jft_fleet_sql_int(&c->f, "SELECT transfer_from FROM models WHERE id = 4"), 3);
    free(out);
    // The truth at (4 cores, 1.19 GHz, 0.6 GHz, 1.6 GHz): max(2/0.6, 3/1.6) + 4/(4*1.19) s.
    out = t_cli(c, 0,
                (const char *const[]){"model", "predict", "--model", "1", "--cores", "4",
                                      "--cpu-freq", "1190MHz", "--gpu-freq", "0.6GHz", "--emc-freq",
                                      "1600000000", NULL});
    double truth = 2.0 / 0.6 + 4.0 / (4 * 1.19);
    double got = t_value(out, "time_s");
    printf("predict_time_s=%.4f truth_s=%.4f\n", got, truth);
    assert_true(fabs(got - truth) / truth < T_ERR_BOUND / 100.0);
    free(out);
    out = t_cli(c, 0,
                (const char *const[]){"model", "eval", "--model", "1", "--sweep", "held", NULL});
    assert_non_null(strstr(out, "points=8 mape_pct="));
    printf("held_linear_time_mape_pct=%.3f\n", t_value(out, "mape_pct"));
    assert_true(t_value(out, "mape_pct") < T_ERR_BOUND);
    free(out);
    // The phys kind: stored as phys, says which start it kept, scored on the held-out sweep.
    out = t_cli(c, 0, T_FIT("time", "phys", "nx-01", "grid"));
    assert_non_null(strstr(out, "model=5 kind=phys target=time points=54 cv_mape_pct="));
    assert_non_null(strstr(out, " phys_start="));
    free(out);
    out = t_cli(c, 0,
                (const char *const[]){"model", "eval", "--model", "5", "--sweep", "held", NULL});
    printf("held_phys_time_mape_pct=%.3f\n", t_value(out, "mape_pct"));
    assert_true(t_value(out, "mape_pct") < T_ERR_BOUND);
    free(out);
    assert_int_equal(jft_fleet_sql_int(&c->f, "SELECT count(*) FROM models WHERE kind = 'phys'"),
                     1);
}

static void test_pareto_recommend(void **state)
{
    t_ctx_t *c = *state;
    free(t_cli(c, 0, T_FIT("time", "linear", "nx-01", "grid")));
    free(t_cli(c, 0, T_FIT("power", "linear", "nx-01", "grid")));
    // A per-type model: the type's boards in the sweep (only nx-01 ran "grid").
    char *out = t_cli(c, 0,
                      (const char *const[]){"model", "fit", "--sweep", "grid", "--workload",
                                            T_WORKLOAD, "--type", "xavier-nx", "--target", "energy",
                                            "--kind", "mlp", NULL});
    assert_non_null(strstr(out, "model=3 kind=mlp target=energy points=54"));
    assert_true(t_value(out, "cv_mape_pct") < T_ERR_BOUND);
    free(out);
    out = t_cli(c, 0,
                (const char *const[]){"model", "eval", "--model", "3", "--sweep", "held", NULL});
    assert_non_null(strstr(out, "points=8 mape_pct="));
    free(out);
    out = t_cli(c, 0,
                (const char *const[]){"pareto", "--sweep", "grid", "--workload", T_WORKLOAD,
                                      "--board", "nx-01", "--format", "csv", NULL});
    size_t want = t_front_size(c);
    // The output holds stderr too: the "valid runs only" line, a header line, one per front mode.
    assert_non_null(strstr(out, "valid runs only: 54 runs used, 1 left out as invalid"));
    printf("pareto_front_rows=%zu brute_force=%zu\n", t_lines(out) - 2, want);
    assert_int_equal(t_lines(out) - 2, want);
    free(out);
    out = t_cli(c, 0,
                (const char *const[]){"pareto", "--sweep", "grid", "--workload", T_WORKLOAD,
                                      "--board", "nx-01", "--predicted", "1,2", NULL});
    assert_non_null(strstr(out, "predicted"));
    assert_non_null(strstr(out, "measured_energy_j"));
    free(out);
    out = t_cli(c, 0,
                (const char *const[]){"recommend", "--workload", T_WORKLOAD, "--board", "nx-01",
                                      "--sweep", "grid", "--power-budget", "6", "--time-model", "1",
                                      "--power-model", "2", "--margin", "0", NULL});
    assert_true(t_value(out, "predicted_power_w") <= 6.0);
    assert_non_null(strstr(out, "measured_time_s="));
    assert_true(t_value(out, "candidates") == 54);
    assert_true(t_value(out, "margin_pct") == 0.0);
    t_expect_near_optimum(out, 6.0);
    free(out);
    // With the default margin (2 x the power model's CV MAPE): never over budget on the truth.
    for (int budget = 4; budget <= 12; budget++) {
        char b[16];
        snprintf(b, sizeof b, "%d", budget);
        out = t_cli(c, 0,
                    (const char *const[]){"recommend", "--workload", T_WORKLOAD, "--board", "nx-01",
                                          "--sweep", "grid", "--power-budget", b, "--time-model",
                                          "1", "--power-model", "2", NULL});
        assert_true(t_value(out, "margin_pct") > 0.0);
        t_expect_within_budget(out, budget);
        free(out);
    }
    out = t_cli(c, 0,
                (const char *const[]){"recommend", "--workload", T_WORKLOAD, "--board", "nx-01",
                                      "--sweep", "grid", "--time-budget", "8", "--time-model", "1",
                                      "--power-model", "2", NULL});
    assert_true(t_value(out, "predicted_time_s") <= 8.0);
    free(out);
}

// The "mode cores=.. batch_size=.." line of recommend's output, into line.
static void t_mode_line(const char *out, char *line, size_t size)
{
    const char *p = strstr(out, "\nmode cores=");
    assert_non_null(p);
    (void) snprintf(line, size, "%.*s", (int) strcspn(p + 1, "\n"), p + 1);
}

#define T_RECOMMEND_NEWEST(board)                                                                  \
    (const char *const[])                                                                          \
    {                                                                                              \
        "recommend", "--workload", T_WORKLOAD, "--board", board, "--power-budget", "6",            \
            "--margin", "0", NULL                                                                  \
    }

// recommend without model ids (issue #15): with no fitted model, the rooflines, and the error
// says why (this store has none); once fitted, the store's newest pair of the board, with the
// same mode as when the ids are given; a newer model replaces an older one; a board without a
// pair of its own gets its type's.
static void test_recommend_newest(void **state)
{
    t_ctx_t *c = *state;
    t_expect_fail(c, 1, T_RECOMMEND_NEWEST("nx-01"),
                  "recommend: no fitted time and power models of 'lenet5-mnist' for board "
                  "'nx-01' or type 'xavier-nx', so from the rooflines: board 'nx-01' has no "
                  "roofline in the store");
    free(t_cli(c, 0, T_FIT("time", "linear", "nx-01", "grid")));
    free(t_cli(c, 0, T_FIT("power", "linear", "nx-01", "grid")));
    char *ref =
        t_cli(c, 0,
              (const char *const[]){"recommend", "--workload", T_WORKLOAD, "--board", "nx-01",
                                    "--sweep", "grid", "--power-budget", "6", "--time-model", "1",
                                    "--power-model", "2", "--margin", "0", NULL});
    assert_non_null(strstr(ref, "source=model (time model 1 and power model 2 given"));
    char *out = t_cli(c, 0, T_RECOMMEND_NEWEST("nx-01"));
    assert_non_null(strstr(out, "source=model (the store's newest fitted models of workload "
                                "'lenet5-mnist' for board 'nx-01': time model 1, power model 2, "
                                "fitted on sweep 'grid'; candidates from sweep 'grid')"));
    assert_true(t_value(out, "candidates") == 54);
    char want[256], got[256];
    t_mode_line(ref, want, sizeof want);
    t_mode_line(out, got, sizeof got);
    assert_string_equal(got, want);
    free(out);
    free(ref);
    free(t_cli(c, 0, T_FIT("time", "linear", "nx-01", "grid")));
    out = t_cli(c, 0, T_RECOMMEND_NEWEST("nx-01"));
    assert_non_null(strstr(out, "for board 'nx-01': time model 3, power model 2,"));
    free(out);
    // nx-02 has no pair of its own (only a time model): its type's, on the type's runs of "grid".
    free(t_cli(c, 0, T_FIT("time", "linear", "nx-02", "grid2")));
    static const char *const targets[] = {"time", "power"};
    for (size_t i = 0; i < 2; i++) {
        free(t_cli(c, 0,
                   (const char *const[]){"model", "fit", "--sweep", "grid", "--workload",
                                         T_WORKLOAD, "--type", "xavier-nx", "--target", targets[i],
                                         "--kind", "linear", NULL}));
    }
    out = t_cli(c, 0, T_RECOMMEND_NEWEST("nx-02"));
    assert_non_null(strstr(out, "for board type 'xavier-nx', as the board has no pair of its own: "
                                "time model 5, power model 6, fitted on sweep 'grid'"));
    assert_true(t_value(out, "candidates") == 54);
    free(out);
}

static void test_bad_requests(void **state)
{
    t_ctx_t *c = *state;
    t_expect_fail(c, 1, T_FIT("time", "linear", "nx-01", "nosuch"), "no sweep named 'nosuch'");
    t_expect_fail(c, 1, T_FIT("time", "linear", "nx-01", "held"),
                  "too few points to fit: 8 modes, need at least 10");
    t_expect_fail(c, 1, T_FIT("time", "linear", "nx-09", "grid"),
                  "sweep 'grid' has no measured runs of workload 'lenet5-mnist' on board 'nx-09'");
    t_expect_fail(c, 2, (const char *const[]){"model", "fit", "--sweep", "grid", NULL},
                  "usage: jetfleet model fit");
    t_expect_fail(c, 1,
                  (const char *const[]){"model", "predict", "--model", "99", "--cores", "2",
                                        "--cpu-freq", "1GHz", "--gpu-freq", "1GHz", "--emc-freq",
                                        "1GHz", NULL},
                  "no model with id 99");
    free(t_cli(c, 0, T_FIT("time", "linear", "nx-01", "grid")));
    free(t_cli(c, 0, T_FIT("power", "linear", "nx-01", "grid")));
    t_expect_fail(c, 1,
                  (const char *const[]){"recommend", "--workload", T_WORKLOAD, "--board", "nx-01",
                                        "--sweep", "grid", "--power-budget", "0.5", "--time-model",
                                        "1", "--power-model", "2", NULL},
                  "no mode meets a power budget of 0.5 W (the lowest predicted is");
    t_expect_fail(c, 1,
                  (const char *const[]){"recommend", "--workload", T_WORKLOAD, "--board", "nx-01",
                                        "--sweep", "grid", "--power-budget", "5", "--time-model",
                                        "2", "--power-model", "1", NULL},
                  "need a time model and a power model");
    t_expect_fail(c, 2,
                  (const char *const[]){"recommend", "--workload", T_WORKLOAD, "--board", "nx-01",
                                        "--sweep", "grid", "--time-model", "1", "--power-model",
                                        "2", NULL},
                  "usage: jetfleet recommend");
    t_expect_fail(c, 1,
                  (const char *const[]){"pareto", "--sweep", "grid", "--workload", T_WORKLOAD,
                                        "--board", "nx-09", NULL},
                  "has no measured runs");
    t_expect_fail(c, 1,
                  (const char *const[]){"model", "fit", "--sweep", "grid2", "--workload",
                                        T_WORKLOAD, "--board", "nx-02", "--target", "time",
                                        "--kind", "mlp", "--transfer-from", "2", NULL},
                  "transfer needs a reference mlp of target time");
    t_expect_fail(c, 1, T_FIT("energy", "phys", "nx-01", "grid"),
                  "phys models time and power, not energy");
}

// Arguments: none (every test), or --only / --skip and a cmocka test-name pattern, so that ctest
// runs the tests as two groups, each within its timeout (integration.cmake).
int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--only") == 0) {
        cmocka_set_test_filter(argv[2]);
    } else if (argc == 3 && strcmp(argv[1], "--skip") == 0) {
        cmocka_set_skip_filter(argv[2]);
    } else if (argc != 1) {
        fprintf(stderr, "usage: %s [--only PATTERN | --skip PATTERN]\n", argv[0]);
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fit_predict_eval, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_pareto_recommend, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_recommend_newest, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_bad_requests, t_setup, t_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
