/* Bench: how long fitting takes on 4,400 modes (a generated roofline surface with 3 % noise), and
 * the models' quality on the real Orin AGX power-mode data (shared/reference/orin-agx-powermodes,
 * 4,368 modes; time in a lab unit, so only ratios and MAPE are reported): trained on a seeded
 * 80 %, MAPE on the other 20 %. Prints name=value lines. Usage: jf-fit-time [ORIN_CSV]. */
#include "coord_model.h"
#include "jf_rng.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define B_N         4400
#define B_NOISE     0.03
#define B_ROWS_MAX  10000
#define B_TRAIN_PCT 80
#define B_SEED      2024
#define B_LINE_MAX  512

static double b_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

// 4,400 modes: 11 core counts x 10 CPU x 10 GPU x 4 EMC clocks, roofline time with noise.
static void b_surface(coord_point_t *pts)
{
    jf_rng_t rng;
    jf_rng_seed(&rng, B_SEED, 0);
    for (size_t n = 0; n < B_N; n++) { // one index over the four axes, emc fastest
        int k = 1 + (int) (n / 400);
        double cg = 0.4 + 0.2 * (double) (n / 40 % 10);
        double gg = 0.3 + 0.1 * (double) (n / 4 % 10);
        double eg = 0.6 + 0.5 * (double) (n % 4);
        double t = fmax(2.0 / gg, 3.0 / eg) + 4.0 / (k * cg);
        pts[n] = (coord_point_t){.op = {.cores = k,
                                        .cpu_hz = (int64_t) (cg * 1e9),
                                        .gpu_hz = (int64_t) (gg * 1e9),
                                        .emc_hz = (int64_t) (eg * 1e9),
                                        .workers = 2,
                                        .batch_size = 32},
                                 .y = t * 1e6 * (1.0 + B_NOISE * jf_rng_normal(&rng))};
    }
}

static int b_time_fit(const char *name, coord_model_kind_t kind, bool skip_cv,
                      const coord_point_t *pts, size_t n)
{
    coord_model_opts_t o = {.kind = kind, .target = COORD_TARGET_TIME, .skip_cv = skip_cv};
    jf_err_t err = {0};
    double t0 = b_now_s();
    coord_model_t *m = coord_model_fit(&o, pts, n, &err);
    double dt = b_now_s() - t0;
    if (!m) {
        fprintf(stderr, "fit-time: %s: %s\n", name, err.msg);
        return 1;
    }
    printf("%s_s=%.3f\n", name, dt);
    if (!skip_cv) {
        printf("%s_mape_pct=%.3f\n", name, coord_model_cv_mape_pct(m));
    }
    if (!skip_cv && kind == COORD_MODEL_LINEAR) {
        printf("fit4400_s=%.3f\n", dt); // what `jetfleet model fit` does by default
    }
    coord_model_destroy(&m);
    return 0;
}

// Reads the Orin CSV (header, then cores,cpu_khz,gpu_hz,emc_hz,time,power_w) into time and
// power points. Returns the row count, or -1 with a message naming the line.
static long b_read_orin(const char *path, coord_point_t *tp, coord_point_t *pp)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "fit-time: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[B_LINE_MAX];
    long n = 0;
    for (long ln = 1; fgets(line, sizeof line, f) && n < B_ROWS_MAX; ln++) {
        int cores = 0;
        double khz = 0, ghz = 0, ehz = 0, t = 0, w = 0;
        char extra = 0;
        if (ln == 1) {
            continue; // the header
        }
        if (sscanf(line, "%d,%lf,%lf,%lf,%lf,%lf %c", &cores, &khz, &ghz, &ehz, &t, &w, &extra) !=
            6) {
            fprintf(stderr, "fit-time: %s:%ld: expected 6 numbers\n", path, ln);
            fclose(f);
            return -1;
        }
        coord_op_t op = {.cores = cores,
                         .cpu_hz = (int64_t) (khz * 1e3),
                         .gpu_hz = (int64_t) ghz,
                         .emc_hz = (int64_t) ehz,
                         .batch_size = 1};
        tp[n] = (coord_point_t){.op = op, .y = t};
        pp[n++] = (coord_point_t){.op = op, .y = w * 1e3};
    }
    fclose(f);
    return n;
}

static void b_split(coord_point_t *pts, size_t n)
{
    jf_rng_t rng;
    jf_rng_seed(&rng, B_SEED, 1);
    for (size_t i = n; i > 1; i--) { // the same permutation for both targets: same seed
        size_t j = (size_t) jf_rng_below(&rng, i);
        coord_point_t t = pts[i - 1];
        pts[i - 1] = pts[j];
        pts[j] = t;
    }
}

static int b_orin_one(const char *name, coord_model_kind_t kind, coord_target_t target,
                      coord_point_t *pts, size_t n)
{
    size_t ntrain = n * B_TRAIN_PCT / 100;
    coord_model_opts_t o = {.kind = kind, .target = target, .skip_cv = kind == COORD_MODEL_MLP};
    jf_err_t err = {0};
    coord_model_t *m = coord_model_fit(&o, pts, ntrain, &err);
    double mape = NAN;
    if (!m || coord_model_mape(m, pts + ntrain, n - ntrain, &mape, &err) != 0) {
        fprintf(stderr, "fit-time: %s: %s\n", name, err.msg);
        coord_model_destroy(&m);
        return 1;
    }
    printf("%s_heldout_mape_pct=%.3f%s\n", name, mape,
           kind == COORD_MODEL_LINEAR ? (coord_model_uses_log(m) ? " (log)" : " (value)") : "");
    coord_model_destroy(&m);
    return 0;
}

static int b_orin(const char *path)
{
    coord_point_t *tp = malloc(B_ROWS_MAX * sizeof *tp);
    coord_point_t *pp = malloc(B_ROWS_MAX * sizeof *pp);
    long n = tp && pp ? b_read_orin(path, tp, pp) : -1;
    int rc = n > 0 ? 0 : 1;
    if (rc == 0) {
        printf("orin_modes=%ld orin_train_pct=%d\n", n, B_TRAIN_PCT);
        b_split(tp, (size_t) n);
        b_split(pp, (size_t) n);
        rc |= b_orin_one("orin_linear_time", COORD_MODEL_LINEAR, COORD_TARGET_TIME, tp, n);
        rc |= b_orin_one("orin_linear_power", COORD_MODEL_LINEAR, COORD_TARGET_POWER, pp, n);
        rc |= b_orin_one("orin_mlp_time", COORD_MODEL_MLP, COORD_TARGET_TIME, tp, n);
        rc |= b_orin_one("orin_mlp_power", COORD_MODEL_MLP, COORD_TARGET_POWER, pp, n);
    }
    free(tp);
    free(pp);
    return rc;
}

int main(int argc, char **argv)
{
    coord_point_t *pts = malloc(B_N * sizeof *pts);
    if (!pts) {
        return 1;
    }
    b_surface(pts);
    int rc = b_time_fit("fit4400_linear", COORD_MODEL_LINEAR, true, pts, B_N);
    rc |= b_time_fit("fit4400_linear_cv", COORD_MODEL_LINEAR, false, pts, B_N);
    rc |= b_time_fit("fit4400_mlp", COORD_MODEL_MLP, true, pts, B_N);
    rc |= b_time_fit("fit4400_mlp_cv", COORD_MODEL_MLP, false, pts, B_N);
    free(pts);
    if (argc > 1) {
        rc |= b_orin(argv[1]);
    } else {
        printf("orin=skipped (no CSV given)\n");
    }
    return rc;
}
