/* Integration: `jetfleet containers --sweep S` on a store built with the store API (no container
 * engine needed, unlike integration.containers): one combination run bare and in a container on
 * a board with readable power and a GPU, with known epoch times, energy and telemetry means. The
 * report must give every overhead issue #15 asks for (time, CPU, GPU and memory utilisation,
 * energy) with the figures the records imply (docs/containers.md "The overhead report"). */
#include "coord_store.h"
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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define T_CLI_MS  60000
#define T_EPOCHS  3 // epoch 0 (warm-up, left out) and two measured ones
#define T_SAMPLES 4 // telemetry samples per run
#define T_MIB     1048576.0

// What one side of the pair measured: its measured epochs' time and energy, its samples' means.
typedef struct t_side {
    const char *runtime; // "" bare, "container"
    double e2e_s, energy_mj, cpu_pct, gpu_pct, ram_mib;
} t_side_t;

static const t_side_t t_bare = {"", 10.0, 40000.0, 40.0, 50.0, 1000.0};
static const t_side_t t_cont = {"container", 11.0, 46000.0, 45.0, 48.0, 1100.0};

static jf_run_spec_t t_spec(const char *runtime)
{
    jf_run_spec_t s = {.workload = "lenet5-mnist",
                       .model = "lenet5",
                       .dataset = "mnist",
                       .board = "nx-01",
                       .epochs = T_EPOCHS,
                       .power_mode = "MAXN",
                       .storage = "sd",
                       .workers = 2,
                       .prefetch = 2,
                       .batch_size = 32,
                       .seed = 1,
                       .telemetry_hz = 1,
                       .timeout_us = 3600 * JF_US_PER_S};
    (void) snprintf(s.runtime, sizeof s.runtime, "%s", runtime);
    jf_run_spec_compute_id(&s);
    return s;
}

// Stores one done run: its epochs (the warm-up twice as long, to be left out) and samples
// spread evenly around the side's means.
static void t_run(coord_store_t *st, const jf_run_spec_t *s, const t_side_t *side)
{
    int64_t a = 0;
    jf_err_t err = {0};
    assert_int_equal(coord_store_run_assign(st, s->run_id, &a, &err), 0);
    assert_int_equal(coord_store_run_start(st, s->run_id, a, &err), 0);
    for (int ep = 0; ep < T_EPOCHS; ep++) {
        double k = ep == 0 ? 2.0 : 1.0;
        jf_epoch_rec_t r = {.epoch = ep,
                            .warmup = ep == 0,
                            .e2e_us = (int64_t) (k * side->e2e_s * 1e6),
                            .compute_us = (int64_t) (side->e2e_s * 5e5),
                            .samples = 60000,
                            .has_energy = true,
                            .energy_mj = k * side->energy_mj,
                            .avg_power_mw = side->energy_mj / side->e2e_s};
        assert_int_equal(coord_store_add_epoch(st, s->run_id, a, &r, &err), 0);
    }
    for (int i = 0; i < T_SAMPLES; i++) {
        double d = i % 2 ? 1.0 : -1.0; // +-1 around the mean
        char sample[256];
        (void) snprintf(sample, sizeof sample,
                        "{\"cpu_load_pct\":%.1f,\"gpu_load_pct\":%.1f,\"ram_used_bytes\":%.0f,"
                        "\"power_mw\":4000}",
                        side->cpu_pct + d, side->gpu_pct - d, (side->ram_mib + d) * T_MIB);
        assert_int_equal(coord_store_add_telemetry(st, s->run_id, a, i + 1, 0,
                                                   1700000000000000 + i * JF_US_PER_S, sample,
                                                   &err),
                         0);
    }
    assert_int_equal(coord_store_run_finish(st, s->run_id, a, true, NULL, NULL, &err), 0);
}

static int t_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    assert_int_equal(jft_fleet_setup(f, 1), 0);
    mkdir(f->data_dir, 0700);
    char path[PATH_MAX + 32];
    (void) snprintf(path, sizeof path, "%s/jetfleet.db", f->data_dir);
    jf_err_t err = {0};
    coord_store_t *st = coord_store_open(path, false, &err);
    assert_non_null(st);
    assert_int_equal(coord_store_board_hello(st, "nx-01", "xavier-nx", "jetson", "{}", &err), 0);
    jf_run_spec_t runs[2] = {t_spec(t_bare.runtime), t_spec(t_cont.runtime)};
    jf_sweep_t sw = {.n_runs = 2, .runs = runs};
    (void) snprintf(sw.name, sizeof sw.name, "ctr");
    coord_submit_result_t res = {0};
    assert_int_equal(coord_store_sweep_put(st, &sw, "t.yaml", "x: 1\n", &res, &err), 0);
    t_run(st, &runs[0], &t_bare);
    t_run(st, &runs[1], &t_cont);
    coord_store_destroy(&st);
    *state = f;
    return 0;
}

static int t_teardown(void **state)
{
    jft_fleet_t *f = *state;
    int rc = jft_fleet_teardown(f);
    free(f);
    return rc;
}

// The value of "key=" in text, or fails the test.
static double t_value(const char *text, const char *key)
{
    char k[64];
    (void) snprintf(k, sizeof k, "\n%s=", key);
    const char *p = strstr(text, k);
    if (!p) {
        fail_msg("no '%s=' in output:\n%s", key, text);
    }
    return strtod(p + strlen(k), NULL);
}

// Every overhead figure, as the records imply it: time and energy in % of bare (the warm-up
// epoch left out), CPU and GPU load in percentage points, RAM in MiB.
static void test_overhead_figures(void **state)
{
    jft_fleet_t *f = *state;
    char *out = jft_cli_expect(f, 0, T_CLI_MS * jft_timeout_scale(),
                               (const char *const[]){"containers", "--sweep", "ctr", NULL});
    printf("%s", out);
    static const struct {
        const char *key;
        double want;
    } rows[] = {
        {"pairs", 1.0},
        {"time_overhead_pct", 100.0 * (11.0 - 10.0) / 10.0},
        {"energy_overhead_pct", 100.0 * (46000.0 - 40000.0) / 40000.0},
        {"cpu_load_delta_pct", 45.0 - 40.0},
        {"gpu_load_delta_pct", 48.0 - 50.0},
        {"ram_used_delta_mib", 1100.0 - 1000.0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        double got = t_value(out, rows[i].key);
        if (fabs(got - rows[i].want) > 0.01) {
            fail_msg("%s=%.3f, expected %.3f", rows[i].key, got, rows[i].want);
        }
    }
    // The attempt's wall time is the store's clock: present, not a known figure.
    assert_non_null(strstr(out, "\nrun_time_overhead_pct="));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_overhead_figures, t_setup, t_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
