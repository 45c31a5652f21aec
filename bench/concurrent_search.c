/* Benchmark: the concurrent searches (coordinator/fit/coord_csearch.h) against exhaustive search
 * on simulated boards (agent/sim/sim_concurrent.h; docs/concurrent.md "Benchmark"). Every point
 * of a board's space (cores x CPU x GPU x EMC steps of jf_board_clocks x inference batch sizes)
 * is profiled once on the simulator; for a grid of latency and power budgets spread over the
 * ranges those profiles span, each search answers, its answer is run again with another seed to
 * check the budgets, and its throughput is compared with the best point within the budgets; each
 * miss is classed (no answer, check run over a budget, far from the optimum). The searches'
 * re-runs run the simulator with seeds of their own. Prints name=value lines. Built and run by
 * bench/concurrent-search.sh. Simulated data. */
#include "coord_csearch.h"
#include "jf_board_clocks.h"
#include "jf_parse.h"
#include "sim_concurrent.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define B_GRID       10 // budgets per axis: B_GRID x B_GRID pairs per board
#define B_RATE_PER_S 30.0
#define B_SCALE                                                                                    \
    1.0 // of CIFAR-10: a profile is one whole epoch, 3,125 minibatches of 16, as the
        // measured epoch of a `jetfleet concurrent search` run
#define B_EPOCH_BATCHES 3125
#define B_REQUESTS_MAX                                                                             \
    (200 * B_EPOCH_BATCHES) // a profile past this many requests failed: the inference cannot
                            // keep up (a stable one at the slowest point sees about 21 per batch)
#define B_SEED                                                                                     \
    1                        // profiling seed (JF_CSEARCH_SEED overrides it); the check runs with
                             // seed + 1, a search's k-th re-run of a point with seed + 1 + k
#define B_NEAR_PCT     7.0   // the study's "within 7 % of optimal"
#define B_LAT_SPREAD   10.0  // latency budgets from the best p99 up to this many times it
#define B_NOISE_STRIDE 7     // b_noise re-runs every 7th point
#define B_Z97          1.881 // the normal quantile of 0.97, one-sided

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
    uint64_t seed;            // of the profiles
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
                              .max_batches = 0, // the whole epoch
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

// The searches' re-run function: the point run again on the simulator with a seed of its own.
static int b_rerun(void *arg, const int p[COORD_CSEARCH_DIMS], int repeat, coord_csearch_obs_t *o,
                   jf_err_t *err)
{
    const b_board_t *b = arg;
    return b_run(b, p, b->seed + 1 + (uint64_t) repeat, o, err);
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

// The exhaustive pass: every point profiled with the board's seed into b->obs, split over
// JF_JOBS worker processes (default: the online cores), point i to worker i mod jobs. The
// figures do not depend on the split (each point's seeds are its own).
static int b_parallel(b_board_t *b, jf_err_t *err)
{
    long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    int64_t env_jobs = 0;
    const char *env = getenv("JF_JOBS");
    if (env) {
        if (jf_parse_i64(env, 1, 64, &env_jobs, NULL) != 0) {
            return jf_err_set(err, -EINVAL, "JF_JOBS '%.40s': expected an integer from 1 to 64",
                              env);
        }
        jobs = (long) env_jobs;
    }
    jobs = jobs < 1 ? 1 : jobs > 64 ? 64 : jobs;
    pid_t pids[64];
    long started = 0;
    (void) fflush(stdout); // a child must not print what the parent buffered
    for (long w = 0; w < jobs; w++) {
        pid_t pid = fork();
        if (pid < 0) {
            break;
        }
        if (pid == 0) {
            int rc = 0;
            for (size_t i = (size_t) w; rc == 0 && i < b->n_points; i += (size_t) jobs) {
                int p[COORD_CSEARCH_DIMS];
                b_point_of(b, i, p);
                rc = b_run(b, p, b->seed, &b->obs[i], err);
            }
            if (rc != 0) {
                (void) fprintf(stderr, "concurrent-search: %s\n", err->msg);
            }
            _exit(rc == 0 ? 0 : 1);
        }
        pids[started++] = pid;
    }
    int failed = started < jobs;
    for (long w = 0; w < started; w++) {
        int status = 0;
        failed |= waitpid(pids[w], &status, 0) != pids[w] || !WIFEXITED(status) ||
                  WEXITSTATUS(status) != 0;
    }
    return failed ? jf_err_set(err, -EIO, "the exhaustive pass failed (a worker said why above)")
                  : 0;
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
    // Shared with the worker processes that fill it.
    b->obs = mmap(NULL, b->n_points * sizeof *b->obs, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (b->obs == MAP_FAILED) {
        b->obs = NULL;
        return jf_err_set(err, -ENOMEM, "out of memory");
    }
    return b_parallel(b, err);
}

// The best throughput within the budgets over every point (its index into *ret_idx); 0 if none.
static double b_optimum(const b_board_t *b, const coord_csearch_budget_t *bud, size_t *ret_idx)
{
    double best = 0.0;
    for (size_t i = 0; i < b->n_points; i++) {
        const coord_csearch_obs_t *o = &b->obs[i];
        if (o->ok && o->latency_us <= bud->latency_us && o->power_mw <= bud->power_mw &&
            o->train_sps > best) {
            best = o->train_sps;
            *ret_idx = i;
        }
    }
    return best;
}

// Whether the exhaustive optimum (point idx) meets both budgets when run again: what answering
// with the optimum itself would score on the check.
static int b_oracle(const b_board_t *b, const coord_csearch_budget_t *bud, size_t idx,
                    bool *ret_within, jf_err_t *err)
{
    int p[COORD_CSEARCH_DIMS];
    b_point_of(b, idx, p);
    coord_csearch_obs_t check = {0};
    int rc = b_run(b, p, b->seed + 1, &check, err);
    *ret_within = rc == 0 && check.ok && check.latency_us <= bud->latency_us &&
                  check.power_mw <= bud->power_mw;
    return rc;
}

typedef struct b_tally {
    int cases;       // budget pairs with a feasible point
    int found;       // answers (a profiled point within both budgets)
    int within;      // answers whose check run met both budgets
    int near;        // answers within B_NEAR_PCT of the optimum (and found)
    double gap_sum;  // gaps in %, a missing answer counted 100
    double profiled; // profiles (sum over cases for gd; the one session for al)
    // Why a case is not "within budget and within B_NEAR_PCT of the optimum":
    int miss_none;      // no answer
    int miss_rerun;     // near the optimum, but its check run fails a budget
    int miss_far;       // its check run meets both budgets, but it is far from the optimum
    int miss_both;      // far and failing its check run
    int rerun_fail_lat; // check runs over the latency budget
    int rerun_fail_pow; // check runs over the power budget
    int oracle_within;  // cases whose exhaustive optimum meets both budgets on its check run
} b_tally_t;

static int b_account(const b_board_t *b, const coord_csearch_budget_t *bud, double opt,
                     const coord_csearch_result_t *r, b_tally_t *t, jf_err_t *err)
{
    t->cases++;
    if (!r->found) {
        t->gap_sum += 100.0;
        t->miss_none++;
        return 0;
    }
    t->found++;
    coord_csearch_obs_t check = {0};
    int rc = b_run(b, r->point, b->seed + 1, &check, err);
    if (rc != 0) {
        return rc;
    }
    bool lat_ok = check.ok && check.latency_us <= bud->latency_us;
    bool pow_ok = check.ok && check.power_mw <= bud->power_mw;
    bool within = lat_ok && pow_ok;
    t->within += within;
    t->rerun_fail_lat += !lat_ok;
    t->rerun_fail_pow += !pow_ok;
    double gap = 100.0 * (opt - r->obs.train_sps) / opt;
    bool near = gap <= B_NEAR_PCT;
    t->gap_sum += gap;
    t->near += near;
    t->miss_rerun += near && !within;
    t->miss_far += !near && within;
    t->miss_both += !near && !within;
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

static int b_cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a;
    double y = *(const double *) b;
    return (x > y) - (x < y);
}

// The re-run noise of the profiles: every B_NOISE_STRIDE-th point run again with the check's
// seed; prints the standard deviation and the 97th percentile of log(second / first) of the p99
// latency and of the power, over the points that ran both times.
static int b_noise(const b_board_t *b, const char *name, double *ret_lat_sd, jf_err_t *err)
{
    size_t cap = b->n_points / B_NOISE_STRIDE + 1;
    double *dl = malloc(cap * sizeof *dl);
    double *dp = malloc(cap * sizeof *dp);
    size_t n = 0;
    int rc = dl && dp ? 0 : jf_err_set(err, -ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < b->n_points; i += B_NOISE_STRIDE) {
        int p[COORD_CSEARCH_DIMS];
        coord_csearch_obs_t o = {0};
        b_point_of(b, i, p);
        rc = b_run(b, p, b->seed + 1, &o, err);
        if (rc == 0 && o.ok && b->obs[i].ok) {
            dl[n] = log(o.latency_us / b->obs[i].latency_us);
            dp[n++] = log(o.power_mw / b->obs[i].power_mw);
        }
    }
    double *v[2] = {dl, dp};
    const char *what[2] = {"latency", "power"};
    for (int k = 0; rc == 0 && n > 1 && k < 2; k++) {
        double sum = 0.0, sq = 0.0;
        for (size_t i = 0; i < n; i++) {
            sum += v[k][i];
            sq += v[k][i] * v[k][i];
        }
        double mean = sum / (double) n;
        qsort(v[k], n, sizeof v[k][0], b_cmp_double);
        double sd = sqrt(fmax(0.0, sq / (double) n - mean * mean));
        *ret_lat_sd = k == 0 ? sd : *ret_lat_sd;
        printf("%s_rerun_log_ratio_%s_sd=%.4f\n%s_rerun_log_ratio_%s_p97=%.4f\n", name, what[k], sd,
               name, what[k], v[k][(size_t) (0.97 * (double) (n - 1))]);
    }
    free(dl);
    free(dp);
    return rc;
}

static void b_print(const char *board, const char *search, const b_tally_t *t, double profiled)
{
    printf("%s_%s_cases=%d\n", board, search, t->cases);
    printf("%s_%s_answered_pct=%.1f\n", board, search, 100.0 * t->found / t->cases);
    printf("%s_%s_within_budget_pct=%.1f\n", board, search, 100.0 * t->within / t->cases);
    printf("%s_%s_within_budget_of_answered_pct=%.1f\n", board, search,
           t->found ? 100.0 * t->within / t->found : 0.0);
    printf("%s_%s_gap_to_optimal_pct=%.2f\n", board, search, t->gap_sum / t->cases);
    printf("%s_%s_within_7pct_of_optimal_pct=%.1f\n", board, search, 100.0 * t->near / t->cases);
    printf("%s_%s_modes_profiled=%.1f\n", board, search, profiled);
    printf("%s_%s_within_budget_and_7pct_pct=%.1f\n", board, search,
           100.0 * (t->cases - t->miss_none - t->miss_rerun - t->miss_far - t->miss_both) /
               t->cases);
    printf("%s_%s_miss_no_answer=%d\n%s_%s_miss_rerun_fails_budget=%d\n", board, search,
           t->miss_none, board, search, t->miss_rerun);
    printf("%s_%s_miss_far_from_optimal=%d\n%s_%s_miss_far_and_rerun_fails=%d\n", board, search,
           t->miss_far, board, search, t->miss_both);
    printf("%s_%s_rerun_over_latency=%d\n%s_%s_rerun_over_power=%d\n", board, search,
           t->rerun_fail_lat, board, search, t->rerun_fail_pow);
}

static void b_add(b_tally_t *sum, const b_tally_t *t)
{
    sum->cases += t->cases;
    sum->within += t->within;
    sum->found += t->found;
    sum->near += t->near;
    sum->gap_sum += t->gap_sum;
    sum->profiled += t->profiled;
    sum->miss_none += t->miss_none;
    sum->miss_rerun += t->miss_rerun;
    sum->miss_far += t->miss_far;
    sum->miss_both += t->miss_both;
    sum->rerun_fail_lat += t->rerun_fail_lat;
    sum->rerun_fail_pow += t->rerun_fail_pow;
    sum->oracle_within += t->oracle_within;
}

// The searches scored, each with its own tally: the descent alone (no re-runs: no margin), the
// active search without re-runs (both as `jetfleet concurrent search` runs them by default), the
// descent given the noise the active search with re-runs learned as a prior (its margin), the
// active search with 20 re-runs (its answers keep a margin for the noise they learn), and the
// exhaustive search answering with the margin of the noise b_noise measured (what a search that
// knew the noise and profiled everything would score).
enum { B_GD, B_AL, B_GD_PRIOR, B_AL_RERUNS, B_EXHAUSTIVE_MARGIN, B_KINDS };
static const char *const b_kind_name[B_KINDS] = {"gd", "al", "gd_prior", "al_reruns",
                                                 "exhaustive_margin"};
// The session of each active-search kind in b_sessions_t.al: 0 with re-runs, 1 without.
#define B_AL_SESSION(k) ((k) == B_AL_RERUNS ? 0 : 1)

typedef struct b_sessions {
    coord_csearch_t *al[2];      // the active search with and without re-runs (owned)
    size_t al_profiled[2];       // their profiles
    double margin_lat;           // B_EXHAUSTIVE_MARGIN's latency margin (log)
    coord_csearch_noise_t noise; // what al[0] learned: B_GD's prior
    b_tally_t t[B_KINDS];        // one tally per kind
} b_sessions_t;

// The exhaustive search with a margin: the best point whose latency times exp(margin) meets the
// latency budget.
static void b_exhaustive_margin(const b_board_t *b, const coord_csearch_budget_t *bud,
                                double margin, coord_csearch_result_t *r)
{
    coord_csearch_budget_t tight = {.latency_us = bud->latency_us * exp(-margin),
                                    .power_mw = bud->power_mw};
    size_t idx = 0;
    *r = (coord_csearch_result_t){0};
    if (b_optimum(b, &tight, &idx) > 0.0) {
        r->found = true;
        b_point_of(b, idx, r->point);
        r->obs = b->obs[idx];
    }
}

// The descent for one budget pair in a session of its own, given the noise prior or not.
static int b_gd(const b_board_t *b, const coord_csearch_budget_t *bud,
                const coord_csearch_noise_t *prior, coord_csearch_result_t *r, jf_err_t *err)
{
    coord_csearch_t *gd = coord_csearch_new(&b->space, b_profile, (void *) b, err);
    if (gd && prior) {
        coord_csearch_set_noise(gd, prior);
    }
    int rc = gd ? coord_csearch_gd(gd, bud, NULL, r, err) : -1;
    coord_csearch_destroy(&gd);
    return rc;
}

// One budget pair: every kind's answer, accounted.
static int b_case(const b_board_t *b, const coord_csearch_budget_t *bud, b_sessions_t *s,
                  jf_err_t *err)
{
    size_t opt_idx = 0;
    double opt = b_optimum(b, bud, &opt_idx);
    if (opt <= 0.0) {
        return 1; // nothing fits: not a case
    }
    bool oracle = false;
    int rc = b_oracle(b, bud, opt_idx, &oracle, err);
    for (int k = 0; rc == 0 && k < B_KINDS; k++) {
        coord_csearch_result_t r = {0};
        if (k == B_GD || k == B_GD_PRIOR) {
            rc = b_gd(b, bud, k == B_GD_PRIOR ? &s->noise : NULL, &r, err);
            s->t[k].profiled += (double) r.profiled;
        } else if (k == B_AL || k == B_AL_RERUNS) {
            rc = coord_csearch_choose(s->al[B_AL_SESSION(k)], bud, &r, err);
        } else {
            b_exhaustive_margin(b, bud, s->margin_lat, &r);
        }
        s->t[k].oracle_within += oracle;
        rc = rc != 0 ? rc : b_account(b, bud, opt, &r, &s->t[k], err);
    }
    return rc;
}

// The active searches of one board, with and without re-runs.
static int b_al(const b_board_t *b, b_sessions_t *s, jf_err_t *err)
{
    int rc = 0;
    for (int i = 0; rc == 0 && i < 2; i++) {
        s->al[i] = coord_csearch_new(&b->space, b_profile, (void *) b, err);
        if (s->al[i] && i == 0) {
            coord_csearch_set_rerun(s->al[i], b_rerun, (void *) b);
        }
        coord_csearch_al_opts_t opts = {.seed = b->seed};
        rc = s->al[i] ? coord_csearch_al(s->al[i], &opts, &s->al_profiled[i], err) : -1;
    }
    if (rc == 0) {
        coord_csearch_noise(s->al[0], &s->noise);
    }
    return rc;
}

static void b_report(const char *name, b_sessions_t *s, b_tally_t sum[B_KINDS])
{
    coord_csearch_noise_t nz = {0};
    coord_csearch_noise(s->al[0], &nz);
    printf("%s_al_reruns_learned_latency_log_sd=%.4f\n%s_al_reruns_learned_power_log_sd=%.4f\n"
           "%s_al_reruns_learned_dof=%d\n%s_exhaustive_margin_latency_log=%.4f\n",
           name, nz.latency_log_sd, name, nz.power_log_sd, name, nz.dof, name, s->margin_lat);
    for (int k = 0; k < B_KINDS; k++) {
        b_tally_t *t = &s->t[k];
        if (k == B_AL || k == B_AL_RERUNS) {
            t->profiled = (double) s->al_profiled[B_AL_SESSION(k)];
        }
        b_print(name, b_kind_name[k], t,
                k == B_AL || k == B_AL_RERUNS ? t->profiled
                : t->cases                    ? t->profiled / t->cases
                                              : 0.0);
        b_add(&sum[k], t);
    }
}

static int b_study(const sim_model_t *model, jf_board_type_t type, uint64_t seed,
                   b_tally_t sum[B_KINDS], jf_err_t *err)
{
    b_board_t b = {.seed = seed};
    b_sessions_t s = {0};
    const char *name = jf_board_type_name(type);
    double sd_ratio = 0.0;
    int rc = b_board_init(&b, model, type, err);
    rc = rc != 0 ? rc : b_noise(&b, name, &sd_ratio, err);
    rc = rc != 0 ? rc : b_al(&b, &s, err);
    // A new run less a first one has the standard deviation sd_ratio.
    s.margin_lat = B_Z97 * sd_ratio;
    double lat[B_GRID], pw[B_GRID];
    int infeasible = 0;
    if (rc == 0) {
        b_budgets(&b, lat, pw);
    }
    for (int i = 0; rc == 0 && i < B_GRID * B_GRID; i++) {
        coord_csearch_budget_t bud = {.latency_us = lat[i / B_GRID], .power_mw = pw[i % B_GRID]};
        rc = b_case(&b, &bud, &s, err);
        infeasible += rc == 1;
        rc = rc == 1 ? 0 : rc;
    }
    if (rc == 0) {
        printf("%s_points=%zu\n%s_cases_infeasible=%d\n", name, b.n_points, name, infeasible);
        printf("%s_optimum_rerun_within_budget_pct=%.1f\n", name,
               s.t[B_GD].cases ? 100.0 * s.t[B_GD].oracle_within / s.t[B_GD].cases : 0.0);
        b_report(name, &s, sum);
    }
    coord_csearch_destroy(&s.al[0]);
    coord_csearch_destroy(&s.al[1]);
    if (b.obs) {
        (void) munmap(b.obs, b.n_points * sizeof *b.obs);
    }
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
    b_tally_t sum[B_KINDS] = {{0}};
    int boards = 0;
    int64_t seed = B_SEED;
    const char *env = getenv("JF_CSEARCH_SEED");
    if (env && jf_parse_i64(env, 0, INT32_MAX, &seed, NULL) != 0) {
        (void) fprintf(stderr, "concurrent-search: JF_CSEARCH_SEED '%.40s': expected an integer\n",
                       env);
        sim_model_destroy(&model);
        return 2;
    }
    printf("data=simulated\nseed=%" PRId64 "\n", seed);
    for (int i = 2; rc == 0 && i < argc; i++, boards++) {
        jf_board_type_t type;
        if (!jf_board_type_parse(argv[i], &type) || !jf_board_clocks(type)) {
            (void) fprintf(stderr, "concurrent-search: unknown Jetson type '%s'\n", argv[i]);
            sim_model_destroy(&model);
            return 2;
        }
        rc = b_study(model, type, (uint64_t) seed, sum, &err);
    }
    sim_model_destroy(&model);
    if (rc != 0) {
        (void) fprintf(stderr, "concurrent-search: %s\n", err.msg);
        return 1;
    }
    const b_tally_t *gd = &sum[B_GD];
    printf("all_optimum_rerun_within_budget_pct=%.1f\n",
           gd->cases ? 100.0 * gd->oracle_within / gd->cases : 0.0);
    for (int k = 0; k < B_KINDS; k++) {
        const b_tally_t *t = &sum[k];
        bool per_board = k == B_AL || k == B_AL_RERUNS;
        b_print("all", b_kind_name[k], t,
                per_board ? (boards ? t->profiled / boards : 0.0)
                          : (t->cases ? t->profiled / t->cases : 0.0));
    }
    return 0;
}
