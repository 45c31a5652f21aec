/* Unit tests of agent/sim (sim_model, sim_params): the published study's effects (loader workers,
 * parallel fetch on slow media, the page cache, out of memory, dataset scaling), the calibration
 * against the study's Xavier NX figures (printed as a table, docs/simulator.md), seeds and board
 * factors, power rails, power modes, input checks, and the parameter file's loader from a table
 * of malformed variants of the real file. */
#include "sim_model.h"

#include "jf_board.h"
#include "jf_err.h"
#include "jft_fs.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define T_EPOCHS       3  // the study's runs: epochs 0..2 after dropping caches
#define T_BATCH        16 // the study's minibatch
#define T_PREFETCH     2  // PyTorch's default prefetch factor
#define T_NX_MODE      "MODE_15W_6CORE"
#define T_TOLERANCE    0.10 // calibration: model within 10 % of each published figure
#define T_SEED         42
#define T_FLEET_BOARDS 20 // boards of one type for the factor statistics
#define T_MSG_MAX      512
#define T_SOURCE       "test.yaml"
#define T_US_PER_S     1e6
#define T_LOW_GPU_HZ   INT64_C(510000000) // the NX's 10 W desktop GPU cap

// ---------------------------------------------------------------------------------------------
// Helpers

static sim_model_t *t_model(void)
{
    jf_err_t err = {0};
    sim_model_t *model = sim_model_load(SIM_PARAMS_PATH, &err);
    if (!model) {
        fail_msg("cannot load %s: %s", SIM_PARAMS_PATH, err.msg);
    }
    return model;
}

// The study's configuration: MobileNetV3 on GLD-23k, batch 16, on a board type in a named mode.
static sim_epoch_in_t t_in(const sim_model_t *model, jf_board_type_t type, const char *mode,
                           const char *medium, int workers)
{
    sim_epoch_in_t in = {.board_type = type,
                         .model = "mobilenetv3",
                         .dataset = "gld23k",
                         .medium = medium,
                         .workers = workers,
                         .prefetch = T_PREFETCH,
                         .batch_size = T_BATCH,
                         .dataset_scale = 1.0,
                         .factors = SIM_BOARD_FACTORS_NEUTRAL};
    jf_err_t err = {0};
    int rc = sim_model_mode_op_named(model, type, mode, &in.op, &err);
    if (rc != 0) {
        fail_msg("%s", err.msg);
    }
    return in;
}

static sim_epoch_in_t t_nx(const sim_model_t *model, const char *medium, int workers)
{
    return t_in(model, JF_BOARD_XAVIER_NX, T_NX_MODE, medium, workers);
}

static void t_epoch(const sim_model_t *model, const sim_epoch_in_t *in, sim_epoch_out_t *out)
{
    jf_err_t err = {0};
    int rc = sim_model_epoch(model, in, out, &err);
    if (rc != 0) {
        fail_msg("sim_model_epoch: %s", err.msg);
    }
}

// A run of T_EPOCHS epochs from a cold page cache, as the study ran them.
static void t_run(const sim_model_t *model, sim_epoch_in_t in, sim_epoch_out_t out[T_EPOCHS])
{
    in.resident_fraction = 0.0;
    for (int e = 0; e < T_EPOCHS; e++) {
        in.epoch = e;
        t_epoch(model, &in, &out[e]);
        assert_false(out[e].oom);
        in.resident_fraction = out[e].resident_fraction;
    }
}

static double t_median3(double a, double b, double c)
{
    return fmax(fmin(a, b), fmin(fmax(a, b), c));
}

// Median over the run's epochs of the e2e time (want_stall false) or the stall, in s.
static double t_median(const sim_epoch_out_t out[T_EPOCHS], bool want_stall)
{
    double v[T_EPOCHS];
    for (int e = 0; e < T_EPOCHS; e++) {
        v[e] = (double) (want_stall ? out[e].fetch_stall_us : out[e].e2e_us) / T_US_PER_S;
    }
    return t_median3(v[0], v[1], v[2]);
}

static double t_run_median(const sim_model_t *model, const sim_epoch_in_t *in, bool want_stall)
{
    sim_epoch_out_t out[T_EPOCHS];
    t_run(model, *in, out);
    return t_median(out, want_stall);
}

// ---------------------------------------------------------------------------------------------
// Calibration: the published Xavier NX 15 W / 6-core MobileNetV3 figures (median epochs)

typedef struct t_published {
    const char *medium;
    int workers;
    double stall_s; // < 0: not published
    double e2e_s;
} t_published_t;

static const t_published_t t_study[] = {
    {"usb-hdd", 0, 704, 1226}, {"sd", 0, 502, 1027}, {"nvme", 0, 455, 980},
    {"usb-hdd", 1, 173, 713},  {"sd", 1, 18.4, 599}, {"nvme", 1, 18.6, 595},
    {"usb-hdd", 2, 19, 590},   {"sd", 2, -1, 590},   {"nvme", 2, -1, 590},
};

static double t_rel_err(double model, double published)
{
    return fabs(model / published - 1.0);
}

static void test_calibration_against_study(void **state)
{
    (void) state;
    sim_model_t *model = t_model();
    print_message("%-8s %-7s %12s %12s %12s %12s\n", "medium", "workers", "stall model",
                  "stall study", "e2e model", "e2e study");
    for (size_t i = 0; i < sizeof t_study / sizeof t_study[0]; i++) {
        const t_published_t *p = &t_study[i];
        sim_epoch_in_t in = t_nx(model, p->medium, p->workers);
        sim_epoch_out_t out[T_EPOCHS];
        t_run(model, in, out);
        double stall = t_median(out, true);
        double e2e = t_median(out, false);
        print_message("%-8s %-7d %12.1f %12.1f %12.1f %12.1f\n", p->medium, p->workers, stall,
                      p->stall_s, e2e, p->e2e_s);
        if (p->stall_s >= 0 && t_rel_err(stall, p->stall_s) > T_TOLERANCE) {
            fail_msg("%s w%d: stall %.1f s vs %.1f s", p->medium, p->workers, stall, p->stall_s);
        }
        if (t_rel_err(e2e, p->e2e_s) > T_TOLERANCE) {
            fail_msg("%s w%d: e2e %.1f s vs %.1f s", p->medium, p->workers, e2e, p->e2e_s);
        }
    }
    sim_model_destroy(&model);
}

// ---------------------------------------------------------------------------------------------
// The study's qualitative effects

static const char *const t_media[] = {"usb-hdd", "sd", "nvme"};
#define T_N_MEDIA (sizeof t_media / sizeof t_media[0])

static void test_one_worker_cuts_the_stall(void **state)
{
    (void) state;
    sim_model_t *model = t_model();
    for (size_t i = 0; i < T_N_MEDIA; i++) {
        sim_epoch_in_t w0 = t_nx(model, t_media[i], 0);
        sim_epoch_in_t w1 = t_nx(model, t_media[i], 1);
        double s0 = t_run_median(model, &w0, true);
        double s1 = t_run_median(model, &w1, true);
        double e0 = t_run_median(model, &w0, false);
        double e1 = t_run_median(model, &w1, false);
        // Pipelining hides the fetch behind the GPU: at least halves the wait on every medium.
        if (!(s1 < 0.5 * s0) || !(e1 < e0)) {
            fail_msg("%s: w0 stall %.1f e2e %.1f, w1 stall %.1f e2e %.1f", t_media[i], s0, e0, s1,
                     e1);
        }
    }
    sim_model_destroy(&model);
}

typedef struct t_parallel_row {
    const char *medium;
    bool helps; // does a second worker cut the stall substantially?
} t_parallel_row_t;

static void test_parallel_fetch_helps_slow_media_only(void **state)
{
    (void) state;
    static const t_parallel_row_t rows[] = {{"usb-hdd", true}, {"nvme", false}, {"sd", false}};
    sim_model_t *model = t_model();
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        sim_epoch_in_t w1 = t_nx(model, rows[i].medium, 1);
        sim_epoch_in_t w2 = t_nx(model, rows[i].medium, 2);
        double s1 = t_run_median(model, &w1, true);
        double s2 = t_run_median(model, &w2, true);
        double e1 = t_run_median(model, &w1, false);
        double e2 = t_run_median(model, &w2, false);
        bool helped = s2 < 0.5 * s1 && e2 < 0.95 * e1;
        bool same = t_rel_err(e2, e1) < 0.02;
        if (rows[i].helps ? !helped : !same) {
            fail_msg("%s: w1 stall %.1f e2e %.1f, w2 stall %.1f e2e %.1f", rows[i].medium, s1, e1,
                     s2, e2);
        }
    }
    sim_model_destroy(&model);
}

typedef struct t_cache_row {
    const char *model;
    const char *dataset;
} t_cache_row_t;

// A dataset that fits in RAM: epoch 0 reads the medium, later epochs the page cache, so they
// take the same time on every medium.
static void test_cached_dataset_equalises_media(void **state)
{
    (void) state;
    static const t_cache_row_t rows[] = {
        {"lenet5", "mnist"}, {"resnet18", "cifar10"}, {"vgg11", "cifar10"}};
    sim_model_t *model = t_model();
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        double later[T_N_MEDIA][T_EPOCHS] = {{0}};
        double first[T_N_MEDIA] = {0};
        for (size_t i = 0; i < T_N_MEDIA; i++) {
            // Without workers the reads are not hidden behind the GPU, so epoch 0 shows them.
            sim_epoch_in_t in = t_in(model, JF_BOARD_AGX_XAVIER, "MAXN", t_media[i], 0);
            in.model = rows[r].model;
            in.dataset = rows[r].dataset;
            sim_epoch_out_t out[T_EPOCHS];
            t_run(model, in, out);
            assert_true(out[0].resident_fraction >= 1.0);
            assert_true(out[1].cache_hit_fraction >= 1.0);
            first[i] = (double) out[0].e2e_us;
            later[i][1] = (double) out[1].e2e_us;
            later[i][2] = (double) out[2].e2e_us;
        }
        // usb-hdd is t_media[0], nvme t_media[2]: the cold epoch shows the medium...
        assert_true(first[0] > 1.2 * first[2]);
        // ...the warm ones do not.
        for (size_t i = 1; i < T_N_MEDIA; i++) {
            assert_true(t_rel_err(later[i][1], later[0][1]) < 0.01);
            assert_true(t_rel_err(later[i][2], later[0][2]) < 0.01);
        }
    }
    sim_model_destroy(&model);
}

// On the NX the 1x GLD-23k set does not stay cached (RAM less the run's footprint is too small).
static void test_gld_does_not_stay_cached_on_nx(void **state)
{
    (void) state;
    sim_model_t *model = t_model();
    for (int workers = 0; workers <= 2; workers++) {
        sim_epoch_out_t out[T_EPOCHS];
        t_run(model, t_nx(model, "nvme", workers), out);
        assert_true(out[0].resident_fraction < 0.5);
        assert_true(out[1].cache_hit_fraction < 0.15);
    }
    sim_model_destroy(&model);
}

typedef struct t_oom_row {
    jf_board_type_t type;
    const char *mode;
    const char *model;
    const char *dataset;
    bool oom;
} t_oom_row_t;

static void test_out_of_memory(void **state)
{
    (void) state;
    static const t_oom_row_t rows[] = {
        {JF_BOARD_NANO, "MAXN", "resnet18", "cifar10", true},
        {JF_BOARD_NANO, "MAXN", "lenet5", "mnist", false},
        {JF_BOARD_XAVIER_NX, T_NX_MODE, "resnet18", "cifar10", false},
        {JF_BOARD_AGX_XAVIER, "MAXN", "resnet18", "cifar10", false},
    };
    sim_model_t *model = t_model();
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        sim_epoch_in_t in = t_in(model, rows[i].type, rows[i].mode, "sd", 0);
        in.model = rows[i].model;
        in.dataset = rows[i].dataset;
        sim_epoch_out_t out = {0};
        t_epoch(model, &in, &out);
        assert_int_equal(out.oom, rows[i].oom);
        assert_int_equal(out.need_bytes > out.avail_bytes, rows[i].oom);
        if (rows[i].oom) {
            assert_non_null(strstr(out.oom_reason, "out of memory"));
            assert_int_equal(out.e2e_us, 0);
        } else {
            assert_string_equal(out.oom_reason, "");
            assert_true(out.e2e_us > 0);
        }
    }
    sim_model_destroy(&model);
}

typedef struct t_scale_row {
    const char *medium;
    int workers;
} t_scale_row_t;

static void test_epoch_time_linear_in_dataset_size(void **state)
{
    (void) state;
    static const t_scale_row_t rows[] = {{"nvme", 1}, {"sd", 1}, {"usb-hdd", 2}, {"nvme", 2}};
    static const double scales[] = {0.25, 1.0, 4.0};
    sim_model_t *model = t_model();
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        sim_epoch_in_t in = t_nx(model, rows[i].medium, rows[i].workers);
        double base = t_run_median(model, &in, false);
        for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++) {
            in.dataset_scale = scales[s];
            double e2e = t_run_median(model, &in, false);
            if (t_rel_err(e2e / base, scales[s]) > 0.03) {
                fail_msg("%s w%d x%.2f: %.1f s vs %.1f s at 1x", rows[i].medium, rows[i].workers,
                         scales[s], e2e, base);
            }
        }
    }
    sim_model_destroy(&model);
}

// ---------------------------------------------------------------------------------------------
// Seeds, noise and board factors

static void test_same_seed_same_results(void **state)
{
    (void) state;
    sim_model_t *model = t_model();
    sim_epoch_in_t in = t_nx(model, "sd", 1);
    in.noise = true;
    in.run_seed = T_SEED;
    sim_model_board_factors(model, JF_BOARD_XAVIER_NX, T_SEED, "nx-07", &in.factors);
    sim_epoch_out_t a = {0}, b = {0}, c = {0};
    t_epoch(model, &in, &a);
    t_epoch(model, &in, &b);
    assert_memory_equal(&a, &b, sizeof a);
    in.run_seed = T_SEED + 1;
    t_epoch(model, &in, &c);
    assert_true(c.e2e_us != a.e2e_us);
    // Another epoch of the same run draws other noise, but only a little.
    in.run_seed = T_SEED;
    in.epoch = 1;
    t_epoch(model, &in, &c);
    assert_true(c.e2e_us != a.e2e_us);
    assert_true(t_rel_err((double) c.e2e_us, (double) a.e2e_us) < 0.1);
    sim_model_destroy(&model);
}

static void test_board_factors(void **state)
{
    (void) state;
    sim_model_t *model = t_model();
    const sim_spread_params_t *v = &sim_model_params(model)->boards[JF_BOARD_XAVIER_NX].spread;
    double sum = 0, sum2 = 0;
    int n = 0;
    for (int i = 0; i < T_FLEET_BOARDS; i++) {
        char name[JF_IDENT_MAX + 1];
        (void) snprintf(name, sizeof name, "nx-%02d", i + 1);
        sim_board_factors_t f = {0}, again = {0};
        sim_model_board_factors(model, JF_BOARD_XAVIER_NX, T_SEED, name, &f);
        sim_model_board_factors(model, JF_BOARD_XAVIER_NX, T_SEED, name, &again);
        assert_memory_equal(&f, &again, sizeof f);
        if (f.outlier) { // an outlier's factors are shifted on purpose (sim_physics_test.c)
            continue;
        }
        // Within 5 sigma of nominal: boards of a type differ a little.
        assert_true(fabs(log(f.compute)) < 5 * v->compute_sigma);
        assert_true(fabs(log(f.storage)) < 5 * v->storage_sigma);
        assert_true(fabs(log(f.idle_power)) < 5 * v->idle_power_sigma);
        sum += log(f.compute);
        sum2 += log(f.compute) * log(f.compute);
        n++;
    }
    double sd = sqrt(sum2 / n - (sum / n) * (sum / n));
    assert_true(sd > 0.5 * v->compute_sigma && sd < 2.0 * v->compute_sigma);
    // Another fleet seed gives the same name other factors.
    sim_board_factors_t a = {0}, b = {0};
    sim_model_board_factors(model, JF_BOARD_XAVIER_NX, T_SEED, "nx-01", &a);
    sim_model_board_factors(model, JF_BOARD_XAVIER_NX, T_SEED + 1, "nx-01", &b);
    assert_true(a.compute != b.compute);
    sim_model_destroy(&model);
}

static void test_boards_of_a_type_differ_a_little(void **state)
{
    (void) state;
    sim_model_t *model = t_model();
    sim_epoch_in_t in = t_nx(model, "usb-hdd", 1);
    sim_epoch_out_t out[2] = {{0}};
    const char *names[2] = {"nx-01", "nx-02"};
    for (int i = 0; i < 2; i++) {
        sim_model_board_factors(model, JF_BOARD_XAVIER_NX, T_SEED, names[i], &in.factors);
        t_epoch(model, &in, &out[i]);
    }
    assert_true(out[0].e2e_us != out[1].e2e_us);
    assert_true(t_rel_err((double) out[0].e2e_us, (double) out[1].e2e_us) < 0.15);
    assert_true(out[0].rails[0].power_mw != out[1].rails[0].power_mw);
    sim_model_destroy(&model);
}

// ---------------------------------------------------------------------------------------------
// Power, modes, minibatch distribution

static void test_power_rails(void **state)
{
    (void) state;
    static const char *const nx_rails[] = {"VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC"};
    sim_model_t *model = t_model();
    const sim_board_params_t *nx = &sim_model_params(model)->boards[JF_BOARD_XAVIER_NX];
    sim_epoch_out_t full = {0}, low = {0};
    sim_epoch_in_t in = t_nx(model, "nvme", 1);
    t_epoch(model, &in, &full);
    assert_int_equal(full.n_rails, 3);
    for (size_t i = 0; i < full.n_rails; i++) {
        assert_string_equal(full.rails[i].name, nx_rails[i]);
        assert_true((double) full.rails[i].power_mw >= nx->rails[i].idle_mw);
    }
    // Training draws several watts over idle on the input rail, within the 15 W budget's reach.
    assert_true(full.rails[0].power_mw > 2 * (int64_t) nx->rails[0].idle_mw);
    assert_true(full.rails[0].power_mw < 20000);
    // A lower GPU clock alone (a custom operating point): a longer epoch at lower power on the
    // CPU/GPU rail.
    in.op.gpu_hz = T_LOW_GPU_HZ;
    t_epoch(model, &in, &low);
    assert_true(low.e2e_us > full.e2e_us);
    // Dynamic power ~ f^2: most of the GPU's share of the rail goes at under half the clock.
    double dynamic_mw = (double) full.rails[1].power_mw - nx->rails[1].idle_mw;
    assert_true((double) (full.rails[1].power_mw - low.rails[1].power_mw) > 0.4 * dynamic_mw);
    // So does a 10 W mode.
    in = t_in(model, JF_BOARD_XAVIER_NX, "MODE_10W_4CORE", "nvme", 1);
    t_epoch(model, &in, &low);
    assert_true(low.rails[0].power_mw < full.rails[0].power_mw);
    assert_true(low.e2e_us > full.e2e_us);
    sim_model_destroy(&model);
}

static void test_minibatch_distribution_adds_up(void **state)
{
    (void) state;
    sim_model_t *model = t_model();
    for (int workers = 0; workers <= 2; workers++) {
        sim_epoch_out_t out = {0};
        sim_epoch_in_t in = t_nx(model, "usb-hdd", workers);
        t_epoch(model, &in, &out);
        assert_int_equal(out.samples, 23080);
        assert_int_equal(out.batches, 1443); // 1442 full and one of 8
        double stall = (double) out.first_stall_us + (double) (out.batches - 1) * out.stall_mean_us;
        assert_true(t_rel_err(stall, (double) out.fetch_stall_us) < 0.001);
        double compute = (double) out.batches * out.step_mean_us;
        assert_true(t_rel_err(compute, (double) out.compute_us) < 0.001);
        assert_int_equal(out.e2e_us, out.fetch_stall_us + out.compute_us);
        assert_true(out.step_sd_us > 0 && out.stall_sd_us >= 0);
    }
    sim_model_destroy(&model);
}

static void test_mode_ops(void **state)
{
    (void) state;
    sim_model_t *model = t_model();
    sim_op_t op = {0}, named = {0};
    jf_err_t err = {0};
    assert_int_equal(sim_model_mode_op(model, JF_BOARD_XAVIER_NX, 2, &op, &err), 0);
    assert_int_equal(op.n_cores, 6);
    assert_int_equal(op.cpu_hz, INT64_C(1420800000));
    assert_int_equal(op.gpu_hz, INT64_C(1109250000));
    assert_int_equal(op.emc_hz, INT64_C(1600000000));
    assert_int_equal(sim_model_mode_op_named(model, JF_BOARD_XAVIER_NX, T_NX_MODE, &named, &err),
                     0);
    assert_memory_equal(&op, &named, sizeof op);
    // Every mode of every Jetson type in jf_board.h resolves, by id and by name.
    for (int t = 0; t < JF_BOARD_HOST; t++) {
        const jf_board_family_t *family = jf_board_family((jf_board_type_t) t);
        for (size_t m = 0; m < family->n_modes; m++) {
            assert_int_equal(sim_model_mode_op(model, family->type, family->modes[m].id, &op, &err),
                             0);
            assert_int_equal(
                sim_model_mode_op_named(model, family->type, family->modes[m].name, &op, &err), 0);
        }
    }
    assert_int_equal(sim_model_mode_op(model, JF_BOARD_XAVIER_NX, 9, &op, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "xavier-nx has no power mode 9"));
    assert_int_equal(sim_model_mode_op_named(model, JF_BOARD_NANO, "MODE_15W", &op, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "'MODE_15W'"));
    assert_int_equal(sim_model_mode_op(model, JF_BOARD_HOST, 0, &op, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "'host'"));
    sim_model_destroy(&model);
}

// ---------------------------------------------------------------------------------------------
// Input checks

typedef enum t_field {
    T_WORKERS = 0,
    T_PREFETCH_0,
    T_BATCH_0,
    T_SCALE_0,
    T_RESIDENT,
    T_MEDIUM,
    T_MODEL,
    T_CORES,
    T_CPU_HZ,
    T_BOARD,
    T_FACTOR,
    T_EPOCH,
} t_field_t;

typedef struct t_bad_in {
    t_field_t field;
    const char *fragment;
} t_bad_in_t;

static void t_break(sim_epoch_in_t *in, t_field_t field)
{
    switch (field) {
    case T_WORKERS:
        in->workers = 17;
        break;
    case T_PREFETCH_0:
        in->prefetch = 0;
        break;
    case T_BATCH_0:
        in->batch_size = 0;
        break;
    case T_SCALE_0:
        in->dataset_scale = 0.0;
        break;
    case T_RESIDENT:
        in->resident_fraction = 1.5;
        break;
    case T_MEDIUM:
        in->medium = "floppy";
        break;
    case T_MODEL:
        in->model = "alexnet";
        break;
    case T_CORES:
        in->op.n_cores = 7;
        break;
    case T_CPU_HZ:
        in->op.cpu_hz = INT64_C(3000000000);
        break;
    case T_BOARD:
        in->board_type = JF_BOARD_HOST;
        break;
    case T_FACTOR:
        in->factors.storage = 0.0;
        break;
    case T_EPOCH:
        in->epoch = -1;
        break;
    }
}

static void test_epoch_rejects_bad_input(void **state)
{
    (void) state;
    static const t_bad_in_t rows[] = {
        {T_WORKERS, "workers must be 0..16, got 17"},
        {T_PREFETCH_0, "prefetch must be 1..16, got 0"},
        {T_BATCH_0, "batch_size must be 1..4096, got 0"},
        {T_SCALE_0, "dataset_scale must be in (0, 1000], got 0"},
        {T_RESIDENT, "resident_fraction must be in [0, 1], got 1.5"},
        {T_MEDIUM, "unknown medium 'floppy'"},
        {T_MODEL, "no workload for model 'alexnet' on dataset 'gld23k'"},
        {T_CORES, "op.n_cores must be 1..6, got 7"},
        {T_CPU_HZ, "op clocks must be positive"},
        {T_BOARD, "no parameters for board type 'host'"},
        {T_FACTOR, "board factors must be positive"},
        {T_EPOCH, "epoch must be >= 0, got -1"},
    };
    sim_model_t *model = t_model();
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        sim_epoch_in_t in = t_nx(model, "sd", 1);
        t_break(&in, rows[i].field);
        sim_epoch_out_t out = {.samples = -1};
        jf_err_t err = {0};
        assert_int_equal(sim_model_epoch(model, &in, &out, &err), -EINVAL);
        if (!strstr(err.msg, rows[i].fragment)) {
            fail_msg("row %zu: '%s' lacks '%s'", i, err.msg, rows[i].fragment);
        }
        assert_int_equal(out.samples, -1); // untouched on failure
    }
    sim_model_destroy(&model);
}

// ---------------------------------------------------------------------------------------------
// The parameter file

typedef struct t_bad_params {
    const char *find;    // text of the real file to replace (its first occurrence)
    const char *until;   // NULL: replace find itself; else replace from find up to this text
    const char *replace; // replacement
    const char *at;      // text in the mutated file whose line the message must name
    const char *fragment;
} t_bad_params_t;

// The real file's text with one span replaced; caller frees.
static char *t_mutate(const char *text, const t_bad_params_t *row)
{
    const char *start = strstr(text, row->find);
    if (!start) {
        fail_msg("'%s' is not in the parameter file", row->find);
    }
    const char *end = start + strlen(row->find);
    if (row->until) {
        end = strstr(start, row->until);
        if (!end) {
            fail_msg("'%s' does not follow '%s'", row->until, row->find);
        }
    }
    size_t head = (size_t) (start - text);
    size_t size = head + strlen(row->replace) + strlen(end) + 1;
    char *out = malloc(size);
    assert_non_null(out);
    (void) snprintf(out, size, "%.*s%s%s", (int) head, text, row->replace, end);
    return out;
}

static int t_line_of(const char *text, const char *what)
{
    const char *at = strstr(text, what);
    if (!at) {
        fail_msg("'%s' is not in the mutated file", what);
    }
    int line = 1;
    for (const char *p = text; p < at; p++) {
        line += *p == '\n';
    }
    return line + (what[0] == '\n'); // a leading newline belongs to the line before
}

static const t_bad_params_t t_bad_params[] = {
    {"    gpu_cuda_cores: 384", NULL, "    gpu_cuda_corez: 384", "    gpu_cuda_corez",
     "unknown key 'gpu_cuda_corez' in board 'xavier-nx'"},
    {"    cpu_cores: 6 ", NULL, "    cpu_cores: six ", "    cpu_cores: six",
     "'cpu_cores': expected an integer, got 'six' in board 'xavier-nx'"},
    {"  cache_share: 0.5", NULL, "  cache_share: 1.5", "  cache_share",
     "'cache_share': 1.5 is out of range [0, 1] in model"},
    {"  cache_share: 0.5", NULL, "  cache_share: {a: 1}", "  cache_share", "must be a scalar"},
    {"    os_mib: 1024", "    runtime_mib: 2700", "", "    gpu_cuda_cores: 512",
     "missing required key 'os_mib' in board 'agx-xavier'"},
    {"  # Jetson Nano 4 GB", "  # Jetson AGX Orin", "",
     "\n  agx-xavier:", "board 'nano' is missing from boards"},
    {"  orin-nano:", NULL, "  orin-nx:", "  orin-nx:", "unknown board type 'orin-nx'"},
    {"name: MODE_15W_6CORE,", NULL, "name: MODE_15W_6CORES,", "{id: 2, name: MODE_15W_6CORES",
     "mode 2 'MODE_15W_6CORES' is not a mode of board 'xavier-nx'"},
    {"      - {id: 8, name: MODE_20W_6CORE", "\n\n", "", "      - {id: 0, name: MODE_15W_2CORE",
     "mode 8 'MODE_20W_6CORE' of board 'xavier-nx' (jf_board.h) is missing"},
    {"{id: 2, name: MODE_15W_6CORE, cores: 6,", NULL, "{id: 2, name: MODE_15W_6CORE, cores: 7,",
     "{id: 2, name: MODE_15W_6CORE, cores: 7", "has 7 cores and 384 GPU cores, expected at most"},
    {"      - {id: 1, name: MODE_10W,", NULL, "      - {id: 0, name: MAXN,",
     "      - {id: 0, name: MAXN, cores: 2", "mode 0 listed twice in board 'agx-xavier'"},
    {"name: VDD_CPU_GPU_CV, idle_mw: 650", NULL, "name: VDD_IN, idle_mw: 650",
     "      - {name: VDD_IN, idle_mw: 650", "rail 'VDD_IN' listed twice in board 'xavier-nx'"},
    {"  local:", "\nworkloads:", "", "\n  sd:", "medium 'local' is missing from media"},
    {"  hdd:\n", NULL, "  floppy:\n", "  floppy:", "unknown medium 'floppy' in media"},
    {"  vgg11-cifar10:", NULL,
     "  vgg11-mnist:", "\n  lenet5-mnist:", "workload 'vgg11-cifar10' is missing from workloads"},
    {"  lenet5-mnist:", NULL,
     "  lenet5mnist:", "  lenet5mnist:", "workload 'lenet5mnist' must be named <model>-<dataset>"},
    {"version: 1", NULL, "version: 2", "version: 2", "unsupported version 2, expected 1"},
    {"version: 1", NULL, "version: 1\nextra: 2", "extra: 2",
     "unknown key 'extra' in the parameter file"},
    {"    gpu_efficiency: 0.265         # FITTED", NULL, "    gpu_efficiency: 0 #",
     "    gpu_efficiency: 0 #", "'gpu_efficiency': 0 is out of range"},
    // Thermal zones (docs/simulator.md, "Thermal").
    {"{type: CPU-therm, r_c_per_w: 3.0, tau_s: 60}", NULL,
     "{type: CPU-therm, r_c_per_w: 3.0, tau_s: 0}", "{type: CPU-therm, r_c_per_w: 3.0, tau_s: 0}",
     "'tau_s': 0 is out of range [0.001, 1e+06] in zone 1 of thermal of board 'xavier-nx'"},
    {"{type: GPU-therm, r_c_per_w: 3.0,", NULL, "{type: CPU-therm, r_c_per_w: 3.0,",
     "CPU-therm, r_c_per_w: 3.0, tau_s: 60}        # assumed: GPU",
     "zone 'CPU-therm' listed twice in thermal of board 'xavier-nx'"},
    {"    thermal:                      # docs: \"Thermal\"; zones of agent_board_table.c\n", NULL,
     "    thermals:\n", "    thermals:", "unknown key 'thermals' in board 'nano'"},
    {"[cv0-thermal,", NULL, "[cv0 thermal,", "[cv0 thermal,",
     "zone type in thermal of board 'orin-agx' must be 1 to 31 of [A-Za-z0-9_-], got 'cv0 "
     "thermal'"},
};

static void test_params_reject_malformed_files(void **state)
{
    (void) state;
    char *text = jft_read_file(SIM_PARAMS_PATH, NULL);
    assert_non_null(text);
    for (size_t i = 0; i < sizeof t_bad_params / sizeof t_bad_params[0]; i++) {
        const t_bad_params_t *row = &t_bad_params[i];
        char *bad = t_mutate(text, row);
        char where[64];
        (void) snprintf(where, sizeof where, "%s:%d:", T_SOURCE, t_line_of(bad, row->at));
        jf_err_t err = {0};
        sim_model_t *model = sim_model_parse(bad, strlen(bad), T_SOURCE, &err);
        assert_null(model);
        assert_int_equal(err.code, -EINVAL);
        if (strncmp(err.msg, where, strlen(where)) != 0 || !strstr(err.msg, row->fragment)) {
            fail_msg("row %zu: '%s' lacks '%s' or '%s'", i, err.msg, where, row->fragment);
        }
        free(bad);
    }
    free(text);
}

static void test_params_load(void **state)
{
    (void) state;
    jf_err_t err = {0};
    sim_model_t *model = sim_model_load("/nonexistent/sim_params.yaml", &err);
    assert_null(model);
    assert_int_equal(err.code, -ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/sim_params.yaml"));
    char *text = jft_read_file(SIM_PARAMS_PATH, NULL);
    assert_non_null(text);
    model = sim_model_parse(text, strlen(text), T_SOURCE, &err);
    assert_non_null(model);
    const sim_params_t *p = sim_model_params(model);
    assert_int_equal(p->n_media, 8);
    assert_int_equal(p->n_workloads, 4);
    assert_int_equal(p->boards[JF_BOARD_XAVIER_NX].gpu_cuda_cores, 384);
    assert_true(fabs(p->boards[JF_BOARD_XAVIER_NX].ram_bytes - 6851.0 * 1048576.0) < 1.0);
    assert_false(p->boards[JF_BOARD_HOST].present);
    sim_model_destroy(&model);
    sim_model_destroy(&model); // NULL is fine
    free(text);
}

// The roofline of a mode (docs/simulator.md "Roofline"): the peaks worked by hand from the
// parameter file, a slower board's factor scaling both, the memory load drawing DRAM power the
// compute load does not, and an operating point beyond the board refused.
static void test_roofline_peaks(void **state)
{
    (void) state;
    sim_model_t *model = t_model();
    const sim_board_params_t *b = &sim_model_params(model)->boards[JF_BOARD_XAVIER_NX];
    sim_op_t op;
    jf_err_t err = {0};
    assert_int_equal(sim_model_mode_op_named(model, JF_BOARD_XAVIER_NX, "MODE_20W_6CORE", &op,
                                             &err),
                     0);
    sim_board_factors_t f = SIM_BOARD_FACTORS_NEUTRAL;
    sim_roofline_t r;
    assert_int_equal(sim_model_roofline(model, JF_BOARD_XAVIER_NX, &op, &f, &r, &err), 0);
    double cores = op.gpu_cores > 0 ? op.gpu_cores : b->gpu_cuda_cores;
    double want_flop = cores * b->gpu_flops_per_core_cycle * (double) op.gpu_hz;
    double want_bytes =
        b->dram_bytes_per_s * b->dram_efficiency * (double) op.emc_hz / b->emc_max_hz;
    assert_true(fabs(r.gpu_flop_per_s - want_flop) <= 1e-9 * want_flop);
    assert_true(fabs(r.dram_bytes_per_s - want_bytes) <= 1e-9 * want_bytes);
    int64_t compute_mw = 0, memory_mw = 0;
    for (size_t i = 0; i < r.compute.n_rails; i++) {
        compute_mw += r.compute.rails[i].power_mw;
        memory_mw += r.memory.rails[i].power_mw;
    }
    assert_true(r.compute.n_rails > 0 && r.compute.n_rails == r.memory.n_rails);
    assert_true(memory_mw > compute_mw); // the same GPU power (stall power 1 here) plus DRAM's
    printf("nx_20w_peak_gflop_s=%.1f\nnx_20w_peak_gb_s=%.2f\n", r.gpu_flop_per_s / 1e9,
           r.dram_bytes_per_s / 1e9);
    f.compute = 0.5;
    sim_roofline_t slow;
    assert_int_equal(sim_model_roofline(model, JF_BOARD_XAVIER_NX, &op, &f, &slow, &err), 0);
    assert_true(fabs(slow.gpu_flop_per_s - 0.5 * want_flop) <= 1e-9 * want_flop);
    assert_true(fabs(slow.dram_bytes_per_s - 0.5 * want_bytes) <= 1e-9 * want_bytes);
    op.gpu_hz = (int64_t) (2 * b->gpu_max_hz);
    assert_int_equal(sim_model_roofline(model, JF_BOARD_XAVIER_NX, &op, &f, &r, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "op clocks"));
    sim_model_destroy(&model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roofline_peaks),
        cmocka_unit_test(test_calibration_against_study),
        cmocka_unit_test(test_one_worker_cuts_the_stall),
        cmocka_unit_test(test_parallel_fetch_helps_slow_media_only),
        cmocka_unit_test(test_cached_dataset_equalises_media),
        cmocka_unit_test(test_gld_does_not_stay_cached_on_nx),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_epoch_time_linear_in_dataset_size),
        cmocka_unit_test(test_same_seed_same_results),
        cmocka_unit_test(test_board_factors),
        cmocka_unit_test(test_boards_of_a_type_differ_a_little),
        cmocka_unit_test(test_power_rails),
        cmocka_unit_test(test_minibatch_distribution_adds_up),
        cmocka_unit_test(test_mode_ops),
        cmocka_unit_test(test_epoch_rejects_bad_input),
        cmocka_unit_test(test_params_reject_malformed_files),
        cmocka_unit_test(test_params_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
