/* Benchmark: the concurrent searches (coordinator/fit/coord_csearch.h) against exhaustive search
 * on simulated boards (agent/sim/sim_concurrent.h; docs/concurrent.md "Benchmark"). Every point
 * of a board's space (cores x CPU x GPU x EMC steps of jf_board_clocks x inference batch sizes)
 * is profiled once on the simulator; for a grid of latency and power budgets spread over the
 * ranges those profiles span, each search answers, its answer is run again with another seed to
 * check the budgets, and its throughput is compared with the best point within the budgets.
 * Prints name=value lines. Built and run by bench/concurrent-search.sh. Simulated data. */
#include "coord_csearch.h"
#include "jf_board_clocks.h"
#include "sim_concurrent.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define B_GRID       10 // budgets per axis: B_GRID x B_GRID pairs per board
#define B_RATE_PER_S 30.0
#define B_SCALE      0.1 // of CIFAR-10 (313 training minibatches), of which a profile runs
#define B_BATCHES    100 // the first B_BATCHES
#define B_REQUESTS_MAX                                                                             \
    20000                 // a profile past this many requests failed: the inference cannot
                          // keep up (a stable one at the slowest point sees about 2,100)
#define B_SEED       1    // profiling seed; the check runs with B_SEED + 1
#define B_NEAR_PCT   7.0  // the study's "within 7 % of optimal"
#define B_LAT_SPREAD 10.0 // latency budgets from the best p99 up to this many times it

static const int b_batches[] = {1, 2, 4, 8, 16, 32};
#define B_N_BATCHES ((int) (sizeof b_batches / sizeof b_batches[0]))

// The space keeps every B_STRIDE-th CPU and GPU clock step (ending at the top) and every core
// count, every EMC step and every batch size: the exhaustive search covers the same space.
#define B_STRIDE 2

typedef struct b_board {
    int cpu_step[JF_BOARD_CLOCK_STEPS_MAX]; // clock-table index of each CPU step kept
    int gpu_step[JF_BOARD_CLOCK_STEPS_MAX]; // and of each GPU step
    const sim_model_t *model;
    jf_board_type_t type;
    const jf_board_clocks_t *clocks;
    coord_csearch_space_t space;
    size_t n_points;
    coord_csearch_obs_t *obs; // every point's profile (n_points)
} b_board_t;

static void b_point_of(const b_board_t *b, size_t idx, int p[COORD_CSEARCH_DIMS])
{
    for (int d = COORD_CSEARCH_DIMS - 1; d >= 0; d--) {
        p[d] = (int) (idx % (size_t) b->space.size[d]);
        idx /= (size_t) b->space.size[d];
    }
}

static size_t b_index(const b_board_t *b, const int p[COORD_CSEARCH_DIMS])
{
    size_t idx = 0;
    for (int d = 0; d < COORD_CSEARCH_DIMS; d++) {
        idx = idx * (size_t) b->space.size[d] + (size_t) p[d];
    }
    return idx;
}

// Runs one point on the simulator with seed.
static int b_run(const b_board_t *b, const int p[COORD_CSEARCH_DIMS], uint64_t seed,
                 coord_csearch_obs_t *o, jf_err_t *err)
{
    sim_concurrent_in_t in = {.train = {.board_type = b->type,
                                        .model = "resnet18",
                                        .dataset = "cifar10",
                                        .medium = "nvme",
                                        .workers = 2,
                                        .prefetch = 2,
                                        .batch_size = 16,
                                        .dataset_scale = B_SCALE,
                                        .resident_fraction = 1.0,
                                        .factors = SIM_BOARD_FACTORS_NEUTRAL,
                                        .noise = true,
                                        .run_seed = seed * 1000003u + b_index(b, p),
                                        .op = {.n_cores = p[0] + 1,
                                               .cpu_hz = b->clocks->cpu_steps_hz[b->cpu_step[p[1]]],
                                               .gpu_hz = b->clocks->gpu_steps_hz[b->gpu_step[p[2]]],
                                               .emc_hz = b->clocks->emc_steps_hz[p[3]]}},
                              .infer_model = "mobilenetv3",
                              .infer_batch = b_batches[p[4]],
                              .rate_per_s = B_RATE_PER_S,
                              .budget_us = 1,
                              .seed = seed * 7919u + b_index(b, p),
                              .max_batches = B_BATCHES,
                              .max_requests = B_REQUESTS_MAX};
    sim_concurrent_out_t out;
    int rc = sim_concurrent_epoch(b->model, &in, &out, err);
    if (rc == -E2BIG) {
        // The queue outgrew B_REQUESTS_MAX: the inference cannot keep up with the rate at this
        // point, a profile that fails (as a run past its timeout); never chosen.
        *o = (coord_csearch_obs_t){.ok = false};
        return 0;
    }
    if (rc == 0) {
        *o = (coord_csearch_obs_t){.ok = !out.oom,
                                   .train_sps = out.train_samples_per_s,
                                   .latency_us = (double) out.latency_p99_us,
                                   .power_mw = (double) out.power_mw};
    }
    return rc;
}

// The profile function of the searches: the exhaustive pass's result for the point, as if run.
static int b_profile(void *arg, const int p[COORD_CSEARCH_DIMS], coord_csearch_obs_t *o,
                     jf_err_t *err)
{
    (void) err;
    const b_board_t *b = arg;
    *o = b->obs[b_index(b, p)];
    return 0;
}

// Steps of a clock table the simulated board can run (at most its maximum).
static int b_steps(const int64_t *steps_hz, size_t n, double max_hz)
{
    int k = 0;
    while ((size_t) k < n && (double) steps_hz[k] <= max_hz * (1.0 + 1e-9)) {
        k++;
    }
    return k;
}

// Every B_STRIDE-th of n steps, counted down from the top, ascending into kept; returns how many.
static int b_keep(int kept[JF_BOARD_CLOCK_STEPS_MAX], int n)
{
    int k = 0;
    for (int i = (n - 1) % B_STRIDE; i < n; i += B_STRIDE) {
        kept[k++] = i;
    }
    return k;
}

static int b_board_init(b_board_t *b, const sim_model_t *model, jf_board_type_t type, jf_err_t *err)
{
    const sim_board_params_t *bp = &sim_model_params(model)->boards[type];
    b->model = model;
    b->type = type;
    b->clocks = jf_board_clocks(type);
    b->space.size[0] = b->clocks->n_cpus < bp->cpu_cores ? b->clocks->n_cpus : bp->cpu_cores;
    b->space.size[1] = b_keep(
        b->cpu_step, b_steps(b->clocks->cpu_steps_hz, b->clocks->n_cpu_steps, bp->cpu_max_hz));
    b->space.size[2] = b_keep(
        b->gpu_step, b_steps(b->clocks->gpu_steps_hz, b->clocks->n_gpu_steps, bp->gpu_max_hz));
    b->space.size[3] = b_steps(b->clocks->emc_steps_hz, b->clocks->n_emc_steps, bp->emc_max_hz);
    b->space.size[4] = B_N_BATCHES;
    b->n_points = 1;
    for (int d = 0; d < COORD_CSEARCH_DIMS; d++) {
        b->n_points *= (size_t) b->space.size[d];
    }
    b->obs = calloc(b->n_points, sizeof *b->obs);
    if (!b->obs) {
        return jf_err_set(err, -12, "out of memory");
    }
    for (size_t i = 0; i < b->n_points; i++) {
        int p[COORD_CSEARCH_DIMS];
        b_point_of(b, i, p);
        int rc = b_run(b, p, B_SEED, &b->obs[i], err);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

// The best throughput within the budgets over every point; 0 if none.
static double b_optimum(const b_board_t *b, const coord_csearch_budget_t *bud)
{
    double best = 0.0;
    for (size_t i = 0; i < b->n_points; i++) {
        const coord_csearch_obs_t *o = &b->obs[i];
        if (o->ok && o->latency_us <= bud->latency_us && o->power_mw <= bud->power_mw &&
            o->train_sps > best) {
            best = o->train_sps;
        }
    }
    return best;
}

typedef struct b_tally {
    int cases;       // budget pairs with a feasible point
    int found;       // answers (a profiled point within both budgets)
    int within;      // answers whose check run met both budgets
    int near;        // answers within B_NEAR_PCT of the optimum (and found)
    double gap_sum;  // gaps in %, a missing answer counted 100
    double profiled; // profiles (sum over cases for gd; the one session for al)
} b_tally_t;

static int b_account(const b_board_t *b, const coord_csearch_budget_t *bud, double opt,
                     const coord_csearch_result_t *r, b_tally_t *t, jf_err_t *err)
{
    t->cases++;
    if (!r->found) {
        t->gap_sum += 100.0;
        return 0;
    }
    t->found++;
    coord_csearch_obs_t check = {0};
    int rc = b_run(b, r->point, B_SEED + 1, &check, err);
    if (rc != 0) {
        return rc;
    }
    t->within += check.ok && check.latency_us <= bud->latency_us && check.power_mw <= bud->power_mw;
    double gap = 100.0 * (opt - r->obs.train_sps) / opt;
    t->gap_sum += gap;
    t->near += gap <= B_NEAR_PCT;
    return 0;
}

// Budget grids over the ranges the profiles span: power from the least to the most any point
// draws, latency from the best p99 to B_LAT_SPREAD times it (log-spaced).
static void b_budgets(const b_board_t *b, double lat_us[B_GRID], double pow_mw[B_GRID])
{
    double pmin = INFINITY, pmax = 0.0, lmin = INFINITY;
    for (size_t i = 0; i < b->n_points; i++) {
        if (b->obs[i].ok) {
            pmin = fmin(pmin, b->obs[i].power_mw);
            pmax = fmax(pmax, b->obs[i].power_mw);
            lmin = fmin(lmin, b->obs[i].latency_us);
        }
    }
    for (int k = 0; k < B_GRID; k++) {
        double f = (k + 1.0) / B_GRID;
        pow_mw[k] = pmin + f * (pmax - pmin);
        lat_us[k] = lmin * pow(B_LAT_SPREAD, f);
    }
}

static void b_print(const char *board, const char *search, const b_tally_t *t, double profiled)
{
    printf("%s_%s_cases=%d\n", board, search, t->cases);
    printf("%s_%s_answered_pct=%.1f\n", board, search, 100.0 * t->found / t->cases);
    printf("%s_%s_within_budget_pct=%.1f\n", board, search, 100.0 * t->within / t->cases);
    printf("%s_%s_gap_to_optimal_pct=%.2f\n", board, search, t->gap_sum / t->cases);
    printf("%s_%s_within_7pct_of_optimal_pct=%.1f\n", board, search, 100.0 * t->near / t->cases);
    printf("%s_%s_modes_profiled=%.1f\n", board, search, profiled);
}

static void b_add(b_tally_t *sum, const b_tally_t *t)
{
    sum->cases += t->cases;
    sum->within += t->within;
    sum->found += t->found;
    sum->near += t->near;
    sum->gap_sum += t->gap_sum;
    sum->profiled += t->profiled;
}

// One budget pair: the descent in a session of its own, the active search's shared answer.
static int b_case(const b_board_t *b, const coord_csearch_budget_t *bud, coord_csearch_t *al,
                  b_tally_t *gd_t, b_tally_t *al_t, jf_err_t *err)
{
    double opt = b_optimum(b, bud);
    if (opt <= 0.0) {
        return 1; // nothing fits: not a case
    }
    coord_csearch_t *gd = coord_csearch_new(&b->space, b_profile, (void *) b, err);
    coord_csearch_result_t r = {0};
    int rc = gd ? coord_csearch_gd(gd, bud, NULL, &r, err) : -1;
    coord_csearch_destroy(&gd);
    rc = rc != 0 ? rc : b_account(b, bud, opt, &r, gd_t, err);
    gd_t->profiled += (double) r.profiled;
    rc = rc != 0 ? rc : coord_csearch_choose(al, bud, &r, err);
    return rc != 0 ? rc : b_account(b, bud, opt, &r, al_t, err);
}

static int b_study(const sim_model_t *model, jf_board_type_t type, b_tally_t *gd_sum,
                   b_tally_t *al_sum, jf_err_t *err)
{
    b_board_t b = {0};
    int rc = b_board_init(&b, model, type, err);
    coord_csearch_t *al = rc == 0 ? coord_csearch_new(&b.space, b_profile, &b, err) : NULL;
    size_t al_profiled = 0;
    coord_csearch_al_opts_t opts = {.seed = B_SEED};
    rc = rc != 0 ? rc : al ? coord_csearch_al(al, &opts, &al_profiled, err) : -1;
    double lat[B_GRID], pw[B_GRID];
    b_tally_t gd_t = {0}, al_t = {0};
    int infeasible = 0;
    if (rc == 0) {
        b_budgets(&b, lat, pw);
    }
    for (int i = 0; rc == 0 && i < B_GRID * B_GRID; i++) {
        coord_csearch_budget_t bud = {.latency_us = lat[i / B_GRID], .power_mw = pw[i % B_GRID]};
        rc = b_case(&b, &bud, al, &gd_t, &al_t, err);
        infeasible += rc == 1;
        rc = rc == 1 ? 0 : rc;
    }
    if (rc == 0) {
        const char *name = jf_board_type_name(type);
        printf("%s_points=%zu\n%s_cases_infeasible=%d\n", name, b.n_points, name, infeasible);
        b_print(name, "gd", &gd_t, gd_t.cases ? gd_t.profiled / gd_t.cases : 0.0);
        al_t.profiled = (double) al_profiled;
        b_print(name, "al", &al_t, (double) al_profiled);
        b_add(gd_sum, &gd_t);
        b_add(al_sum, &al_t);
    }
    coord_csearch_destroy(&al);
    free(b.obs);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        (void) fprintf(stderr, "usage: %s SIM_PARAMS.yaml BOARD_TYPE...\n", argv[0]);
        return 2;
    }
    jf_err_t err = {0};
    sim_model_t *model = sim_model_load(argv[1], &err);
    int rc = model ? 0 : -1;
    b_tally_t gd = {0}, al = {0};
    int boards = 0;
    printf("data=simulated\n");
    for (int i = 2; rc == 0 && i < argc; i++, boards++) {
        jf_board_type_t type;
        if (!jf_board_type_parse(argv[i], &type) || !jf_board_clocks(type)) {
            (void) fprintf(stderr, "concurrent-search: unknown Jetson type '%s'\n", argv[i]);
            sim_model_destroy(&model);
            return 2;
        }
        rc = b_study(model, type, &gd, &al, &err);
    }
    sim_model_destroy(&model);
    if (rc != 0) {
        (void) fprintf(stderr, "concurrent-search: %s\n", err.msg);
        return 1;
    }
    b_print("all", "gd", &gd, gd.cases ? gd.profiled / gd.cases : 0.0);
    b_print("all", "al", &al, boards ? al.profiled / boards : 0.0);
    return 0;
}
