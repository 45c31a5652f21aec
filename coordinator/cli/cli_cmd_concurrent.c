/* jetfleet concurrent search: the concurrent training and inference searches (coord_csearch.h,
 * docs/concurrent.md "The command") with a profile function that runs each point on a board
 * through the coordinator: one concurrent run per point, added to one sweep per search and
 * waited for, its figures read back from the store's results. Re-running the same command reuses
 * the runs the store already has. Not the searches themselves (coordinator/fit/coord_csearch*). */
#include "cli_adaptive.h"
#include "cli_board_clocks.h"
#include "cli_cmds.h"
#include "cli_concurrent.h"
#include "cli_models.h"

#include "coord_csearch.h"
#include "jf_msg_ctl.h"
#include "jf_parse.h"
#include "jf_run_spec.h"
#include "jf_sweep.h"
#include "jf_units.h"
#include "jf_workload.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_USAGE                                                                                    \
    "usage: jetfleet concurrent search --board B --policy gd|al --workload MODEL-DATASET "         \
    "--infer-model M --rate R --latency-budget-ms L --power-budget-w P [--batch N] [--seed S] "    \
    "[--timeout SECONDS] [--max-profiles N] [--reruns N]"

static const int s_infer_batches[] = {1, 2, 4, 8, 16, 32};
#define S_N_INFER ((int) (sizeof s_infer_batches / sizeof s_infer_batches[0]))

typedef struct s_args {
    const char *board, *policy, *infer_model;
    const jf_workload_t *work;
    double rate_per_s, power_mw;
    int64_t budget_ms, batch, seed, timeout_s, max_profiles;
    int64_t reruns; // re-runs of profiled points (-1: the policy's default)
} s_args_t;

// A re-run's sweep seed: the search's, moved by this much per repeat (new arrivals, new noise).
#define S_RERUN_SEED_STEP 7919

// A profiled point's run and the share of its requests within the latency budget.
typedef struct s_seen {
    int point[COORD_CSEARCH_DIMS];
    char run[JF_RUN_ID_LEN + 1]; // empty: not runnable, no run
    double within_pct;           // NAN when the run has no valid record
} s_seen_t;

// The search's state: the board's space and the runs it submitted (one per profiled point).
typedef struct s_search {
    cli_ctx_t *ctx;                         // borrowed
    const s_args_t *a;                      // borrowed
    const jf_board_spec_t *board;           // borrowed from the fleet config
    jf_board_clocks_t clocks;               // the board's space (cli_board_clocks)
    cli_clocks_source_t clocks_source;      // where it came from
    int cpu_step[JF_BOARD_CLOCK_STEPS_MAX]; // clock-table index of each CPU step of the space
    int gpu_step[JF_BOARD_CLOCK_STEPS_MAX]; // and of each GPU step
    coord_csearch_space_t space;
    char sweep[JF_IDENT_MAX + 1]; // the search's sweep
    int64_t deadline_us;          // monotonic; 0: none
    size_t runs_submitted;        // points sent to the coordinator (one run each)
    size_t n_profiles;            // profile calls so far
    s_seen_t *seen;               // n_profiles entries (owned)
} s_search_t;

static int s_num(const char *v, double lo, double hi, double *ret)
{
    return v && jf_parse_double(v, lo, hi, ret, NULL) == 0 ? 0 : -1;
}

static int s_opt_i64(const char *v, int64_t lo, int64_t hi, int64_t dflt, const char *name,
                     int64_t *ret)
{
    jf_err_t err = {0};
    *ret = dflt;
    if (v && jf_parse_i64(v, lo, hi, ret, &err) != 0) {
        return cli_fail(CLI_EXIT_USAGE, "--%s: %s", name, err.msg);
    }
    return 0;
}

static const jf_workload_t *s_workload(const char *name)
{
    for (size_t i = 0; name && i < jf_workload_count(); i++) {
        if (strcmp(jf_workload_at(i)->name, name) == 0) {
            return jf_workload_at(i);
        }
    }
    return NULL;
}

// Checks every option's value (v in s_parse's names order).
static int s_check(const char *const *v, s_args_t *a)
{
    a->work = s_workload(v[2]);
    if (!a->work) {
        return cli_fail(CLI_EXIT_USAGE, "--workload '%.200s': expected one of: %s", v[2],
                        jf_workload_pairs());
    }
    if (!jf_workload_is_model(v[3])) {
        return cli_fail(CLI_EXIT_USAGE, "--infer-model '%.200s': expected one of: %s", v[3],
                        jf_workload_models());
    }
    double power_w = 0;
    if (s_num(v[4], 0.001, 100000, &a->rate_per_s) != 0) {
        return cli_fail(CLI_EXIT_USAGE,
                        "--rate '%.200s': expected requests per second in "
                        "0.001..100000",
                        v[4]);
    }
    if (s_num(v[6], 0.001, 10000, &power_w) != 0) {
        return cli_fail(CLI_EXIT_USAGE,
                        "--power-budget-w '%.200s': expected watts in "
                        "0.001..10000",
                        v[6]);
    }
    a->power_mw = power_w * 1000.0;
    int rc = s_opt_i64(v[5], 1, 3600000, 0, "latency-budget-ms", &a->budget_ms);
    rc = rc ? rc : s_opt_i64(v[7], 1, JF_BATCH_MAX, 16, "batch", &a->batch);
    rc = rc ? rc : s_opt_i64(v[8], 0, INT64_MAX / 2, 1, "seed", &a->seed);
    rc = rc ? rc : s_opt_i64(v[9], 1, 7 * 24 * 3600, 0, "timeout", &a->timeout_s);
    rc = rc ? rc : s_opt_i64(v[10], 1, COORD_CSEARCH_AL_MAX, 0, "max-profiles", &a->max_profiles);
    rc = rc ? rc : s_opt_i64(v[11], 0, COORD_CSEARCH_AL_MAX - 1, -1, "reruns", &a->reruns);
    return rc;
}

static int s_parse(int argc, char **argv, s_args_t *a)
{
    static const char *const names[] = {"board",
                                        "policy",
                                        "workload",
                                        "infer-model",
                                        "rate",
                                        "latency-budget-ms",
                                        "power-budget-w",
                                        "batch",
                                        "seed",
                                        "timeout",
                                        "max-profiles",
                                        "reruns",
                                        NULL};
    const char *v[CLI_MODELS_OPTS_MAX] = {0};
    if (cli_models_opts("concurrent search", argc, argv, names, v) != 0) {
        return cli_fail(CLI_EXIT_USAGE, S_USAGE);
    }
    for (int i = 0; i < 7; i++) {
        if (!v[i]) {
            return cli_fail(CLI_EXIT_USAGE, "--%s is required; %s", names[i], S_USAGE);
        }
    }
    if (strcmp(v[1], "gd") != 0 && strcmp(v[1], "al") != 0) {
        return cli_fail(CLI_EXIT_USAGE, "--policy '%.200s': expected gd or al", v[1]);
    }
    *a = (s_args_t){.board = v[0], .policy = v[1], .infer_model = v[3]};
    return s_check(v, a);
}

// Every stride-th of n steps counted down from the top, ascending into kept; returns how many.
static int s_keep(int kept[JF_BOARD_CLOCK_STEPS_MAX], size_t n, int stride)
{
    int k = 0;
    for (int i = ((int) n - 1) % stride; i < (int) n; i += stride) {
        kept[k++] = i;
    }
    return k;
}

// The board's space: every core count, every CLI_CONCURRENT_CPU_STRIDE-th CPU and
// CLI_CONCURRENT_GPU_STRIDE-th GPU step from the top, every EMC step, the inference batches.
static int s_space(cli_ctx_t *ctx, s_search_t *s, jf_err_t *err)
{
    const jf_fleet_config_t *fleet = cli_ctx_fleet(ctx, err);
    s->board = fleet ? jf_fleet_config_board(fleet, s->a->board) : NULL;
    if (!fleet) {
        return -EIO;
    }
    if (!s->board) {
        return jf_err_set(err, -EINVAL, "--board '%.200s': no such board in the fleet",
                          s->a->board);
    }
    int rc = s->board->n_storage > 0
                 ? cli_board_clocks(ctx, s->board, &s->clocks, &s->clocks_source, err)
                 : -ENOTSUP;
    if (rc == -ENOTSUP) {
        return jf_err_set(err, -EINVAL,
                          "--board '%.200s': a board with custom power modes and a storage "
                          "medium is needed",
                          s->a->board);
    }
    if (rc != 0) {
        return rc;
    }
    s->space.size[0] = s->clocks.n_cpus;
    s->space.size[1] = s_keep(s->cpu_step, s->clocks.n_cpu_steps, CLI_CONCURRENT_CPU_STRIDE);
    s->space.size[2] = s_keep(s->gpu_step, s->clocks.n_gpu_steps, CLI_CONCURRENT_GPU_STRIDE);
    s->space.size[3] = (int) s->clocks.n_emc_steps;
    s->space.size[4] = S_N_INFER;
    return 0;
}

// The search's sweep name: a hash of everything that decides which runs it makes.
static void s_sweep_name(s_search_t *s)
{
    char key[1024];
    const s_args_t *a = s->a;
    (void) snprintf(key, sizeof key, "%s|%s|%s|%s|%.6g|%lld|%.6g|%lld|%lld|%lld|%lld", a->board,
                    a->policy, a->work->name, a->infer_model, a->rate_per_s,
                    (long long) a->budget_ms, a->power_mw, (long long) a->batch,
                    (long long) a->seed, (long long) a->max_profiles, (long long) a->reruns);
    uint64_t h = 1469598103934665603ull; // FNV-1a
    for (const unsigned char *p = (const unsigned char *) key; *p; p++) {
        h = (h ^ *p) * 1099511628211ull;
    }
    (void) snprintf(s->sweep, sizeof s->sweep, "csearch-%016llx", (unsigned long long) h);
}

static json_t *s_hz(int64_t hz)
{
    char text[32];
    (void) snprintf(text, sizeof text, "%lld", (long long) hz);
    return json_string(text);
}

// The sweep of one point with a seed as JSON text (YAML reads JSON). Caller frees; NULL when out
// of memory.
static char *s_point_yaml(const s_search_t *s, const int p[COORD_CSEARCH_DIMS], int64_t seed)
{
    const s_args_t *a = s->a;
    json_t *custom = json_pack("{s:{s:i, s:o, s:o, s:o}}", "custom", "cores", p[0] + 1, "cpu_freq",
                               s_hz(s->clocks.cpu_steps_hz[s->cpu_step[p[1]]]), "gpu_freq",
                               s_hz(s->clocks.gpu_steps_hz[s->gpu_step[p[2]]]), "emc_freq",
                               s_hz(s->clocks.emc_steps_hz[p[3]]));
    json_t *root = json_pack(
        "{s:s, s:s, s:{s:[s]}, s:[{s:s, s:s, s:s, s:i, s:{s:s, s:i, s:f, s:I}}], s:[o], s:[s], "
        "s:[I], s:I}",
        "name", s->sweep, "description", "jetfleet concurrent search", "target", "boards", a->board,
        "workloads", "name", "csearch", "model", a->work->model, "dataset", a->work->dataset,
        "epochs", CLI_CONCURRENT_EPOCHS, "inference", "model", a->infer_model, "batch",
        s_infer_batches[p[4]], "rate_per_s", a->rate_per_s, "budget_ms", (json_int_t) a->budget_ms,
        "power_modes", custom, "storage", s->board->storage[0].medium, "batch_sizes",
        (json_int_t) a->batch, "seed", (json_int_t) seed);
    char *text = root ? json_dumps(root, JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    return text;
}

// What the store's results say of one run.
typedef struct s_found {
    const char *run;   // the run looked for (borrowed)
    bool done;         // a results row (done runs only)
    double within_pct; // share of requests within the latency budget, %
    coord_csearch_obs_t obs;
    char reason[256]; // a failed run's fail_reason and fail_detail
} s_found_t;

static double s_col(int ncols, const char *const *names, const char *const *values,
                    const char *name)
{
    for (int i = 0; i < ncols; i++) {
        if (strcmp(names[i], name) == 0) {
            return values[i] ? strtod(values[i], NULL) : NAN;
        }
    }
    return NAN;
}

static const char *s_text(int ncols, const char *const *names, const char *const *values,
                          const char *name)
{
    for (int i = 0; i < ncols; i++) {
        if (strcmp(names[i], name) == 0) {
            return values[i] ? values[i] : "";
        }
    }
    return "";
}

static int s_on_run(int ncols, const char *const *names, const char *const *values,
                    const coord_value_kind_t *kinds, void *arg)
{
    (void) kinds;
    s_found_t *f = arg;
    if (strcmp(s_text(ncols, names, values, "run"), f->run) == 0) {
        (void) snprintf(f->reason, sizeof f->reason, "%s: %.200s",
                        s_text(ncols, names, values, "fail_reason"),
                        s_text(ncols, names, values, "fail_detail"));
    }
    return 0;
}

static int s_on_result(int ncols, const char *const *names, const char *const *values,
                       const coord_value_kind_t *kinds, void *arg)
{
    (void) kinds;
    s_found_t *f = arg;
    if (ncols < 1 || strcmp(names[0], "run") != 0 || !values[0] || strcmp(values[0], f->run)) {
        return 0;
    }
    f->done = true;
    f->obs.train_sps = s_col(ncols, names, values, "samples_per_s");
    f->obs.latency_us = s_col(ncols, names, values, "latency_p99_s") * 1e6;
    f->obs.power_mw = s_col(ncols, names, values, "avg_power_mw");
    f->within_pct = s_col(ncols, names, values, "within_budget") * 100.0;
    f->obs.ok = f->obs.train_sps > 0 && isfinite(f->obs.latency_us) && isfinite(f->obs.power_mw);
    return 0;
}

static void s_print_point(const s_search_t *s, const int p[COORD_CSEARCH_DIMS], const char *tag)
{
    printf("%s cores=%d cpu_mhz=%.1f gpu_mhz=%.2f emc_mhz=%.0f infer_batch=%d", tag, p[0] + 1,
           (double) s->clocks.cpu_steps_hz[s->cpu_step[p[1]]] / 1e6,
           (double) s->clocks.gpu_steps_hz[s->gpu_step[p[2]]] / 1e6,
           (double) s->clocks.emc_steps_hz[p[3]] / 1e6, s_infer_batches[p[4]]);
}

static void s_print_obs(const s_found_t *f)
{
    if (f->obs.ok) {
        printf(" train_samples_per_s=%.2f latency_p99_ms=%.2f within_budget_pct=%.1f "
               "power_w=%.3f\n",
               f->obs.train_sps, f->obs.latency_us / 1e3, f->within_pct, f->obs.power_mw / 1e3);
    } else {
        printf(" failed (%s)\n", f->reason[0] ? f->reason : "no valid record");
    }
}

// Submits the point's sweep (adding its run to the search's sweep) and waits for it.
static int s_run_point(s_search_t *s, const char *yaml, jf_err_t *err)
{
    json_t *data = NULL;
    int rc = cli_ctx_request(s->ctx, jf_msg_ctl_submit_new(1, s->sweep, yaml), &data, err);
    json_decref(data);
    if (rc != 0) {
        return rc;
    }
    s->runs_submitted++;
    int64_t left = 0;
    if (s->deadline_us) {
        left = s->deadline_us - jf_clock_mono_us();
        left = left > 0 ? left : 1;
    }
    int code = cli_sweep_wait(s->ctx, s->sweep, left, true);
    return code == CLI_EXIT_OK
               ? 0
               : jf_err_set(err, -ETIMEDOUT, "sweep '%s': waiting failed", s->sweep);
}

// Runs the point's sweep and reads its run's figures (or fail reason) into *f.
static int s_measure(s_search_t *s, const char *yaml, s_found_t *f, jf_err_t *err)
{
    coord_store_t *store = cli_ctx_store(s->ctx, err);
    int rc = store ? s_run_point(s, yaml, err) : -EIO;
    rc = rc ? rc
            : coord_store_select(store, COORD_TABLE_RESULTS, s->sweep, NULL, s_on_result, f, err);
    return rc || f->done
               ? rc
               : coord_store_select(store, COORD_TABLE_RUNS, s->sweep, NULL, s_on_run, f, err);
}

// Runs point p with the sweep seed seed (tag names it in the output: "profile", "rerun").
static int s_point(s_search_t *s, const int p[COORD_CSEARCH_DIMS], int64_t seed, const char *tag,
                   coord_csearch_obs_t *ret_obs, jf_err_t *err)
{
    char *yaml = s_point_yaml(s, p, seed);
    jf_sweep_t *sw = NULL;
    const jf_fleet_config_t *fleet = cli_ctx_fleet(s->ctx, err);
    if (!yaml || !fleet) {
        free(yaml);
        return yaml ? -EIO : jf_err_set(err, -ENOMEM, "out of memory");
    }
    s_seen_t *seen = realloc(s->seen, (s->n_profiles + 1) * sizeof *seen);
    if (!seen) {
        free(yaml);
        return jf_err_set(err, -ENOMEM, "out of memory");
    }
    s->seen = seen;
    seen = &s->seen[s->n_profiles];
    *seen = (s_seen_t){.within_pct = NAN};
    memcpy(seen->point, p, sizeof seen->point);
    s_found_t f = {0};
    char label[32];
    (void) snprintf(label, sizeof label, "%s %zu:", tag, ++s->n_profiles);
    s_print_point(s, p, label);
    // The run id, as the coordinator will expand it; a point the board cannot run is no run.
    jf_err_t perr = {0};
    sw = jf_sweep_parse(yaml, strlen(yaml), s->sweep, fleet, &perr);
    int rc = 0;
    if (!sw || sw->n_runs != 1) {
        printf(" not runnable: %s\n", sw ? "the board skips it" : perr.msg);
    } else {
        printf(" run=%s\n", sw->runs[0].run_id);
        fflush(stdout);
        f.run = sw->runs[0].run_id;
        (void) snprintf(seen->run, sizeof seen->run, "%s", f.run);
        rc = s_measure(s, yaml, &f, err);
        seen->within_pct = f.obs.ok ? f.within_pct : NAN;
        s_print_point(s, p, "  measured");
        s_print_obs(&f);
    }
    if (rc == 0) {
        *ret_obs = f.obs;
    }
    jf_sweep_destroy(&sw);
    free(yaml);
    return rc;
}

static int s_profile(void *arg, const int p[COORD_CSEARCH_DIMS], coord_csearch_obs_t *ret_obs,
                     jf_err_t *err)
{
    s_search_t *s = arg;
    return s_point(s, p, s->a->seed, "profile", ret_obs, err);
}

// The searches' re-run (docs/concurrent.md, "Noise and the margin"): the same point as another
// run of the sweep, its seed moved, so its arrivals and noise are its own.
static int s_rerun(void *arg, const int p[COORD_CSEARCH_DIMS], int repeat,
                   coord_csearch_obs_t *ret_obs, jf_err_t *err)
{
    s_search_t *s = arg;
    return s_point(s, p, s->a->seed + (int64_t) repeat * S_RERUN_SEED_STEP, "rerun", ret_obs, err);
}

// Runs the policy's search; *ret_result is its answer for the budgets.
static int s_search(coord_csearch_t *cs, const s_args_t *a, coord_csearch_result_t *ret_result,
                    jf_err_t *err)
{
    coord_csearch_budget_t budget = {.latency_us = (double) a->budget_ms * 1e3,
                                     .power_mw = a->power_mw};
    if (strcmp(a->policy, "gd") == 0) {
        // The descent re-runs nothing by default: a few re-runs leave a t quantile so large
        // that almost no point is left inside the margin (docs/concurrent.md).
        coord_csearch_gd_opts_t o = {.max_profiles = (size_t) a->max_profiles,
                                     .reruns = a->reruns > 0 ? (size_t) a->reruns : 0};
        return coord_csearch_gd(cs, &budget, &o, ret_result, err);
    }
    size_t max = a->max_profiles ? (size_t) a->max_profiles : COORD_CSEARCH_AL_MAX;
    // No re-runs unless asked: with whole-epoch profiles the 20 re-runs of the library's default
    // cost more exploration than their margin buys (docs/concurrent.md, "Benchmark").
    size_t reruns = a->reruns >= 0 ? (size_t) a->reruns : 0;
    coord_csearch_al_opts_t o = {.min_profiles = max < COORD_CSEARCH_AL_MIN ? max : 0,
                                 .max_profiles = max,
                                 .reruns = reruns > 0 ? reruns : (size_t) -1,
                                 .seed = (uint64_t) a->seed};
    size_t profiled = 0;
    int rc = coord_csearch_al(cs, &o, &profiled, err);
    return rc ? rc : coord_csearch_choose(cs, &budget, ret_result, err);
}

static int s_report(const s_search_t *s, const coord_csearch_t *cs, const coord_csearch_result_t *r)
{
    const s_args_t *a = s->a;
    coord_csearch_noise_t noise;
    coord_csearch_noise(cs, &noise);
    printf("modes_profiled=%zu\nruns_submitted=%zu\nnoise_dof=%d\nlatency_log_sd=%.4f\n"
           "power_log_sd=%.4f\n",
           coord_csearch_profiled(cs), s->runs_submitted, noise.dof, noise.latency_log_sd,
           noise.power_log_sd);
    if (!r->found) {
        return cli_fail(CLI_EXIT_ERROR,
                        "no profiled point meets both budgets (latency p99 <= %lld ms, power <= "
                        "%.3f W) on board '%s' among %zu profiled; sweep '%s' has the runs",
                        (long long) a->budget_ms, a->power_mw / 1e3, a->board,
                        coord_csearch_profiled(cs), s->sweep);
    }
    const s_seen_t *seen = NULL;
    for (size_t i = 0; i < s->n_profiles && !seen; i++) {
        seen = memcmp(s->seen[i].point, r->point, sizeof r->point) == 0 ? &s->seen[i] : NULL;
    }
    s_print_point(s, r->point, "chosen:");
    printf(" run=%s\ntrain_samples_per_s=%.2f\nlatency_p99_ms=%.2f\nwithin_budget_pct=%.1f\n"
           "power_w=%.3f\n",
           seen ? seen->run : "?", r->obs.train_sps, r->obs.latency_us / 1e3,
           seen ? seen->within_pct : NAN, r->obs.power_mw / 1e3);
    return CLI_EXIT_OK;
}

static int s_concurrent_search(cli_ctx_t *ctx, int argc, char **argv)
{
    s_args_t a;
    int code = s_parse(argc, argv, &a);
    if (code != 0) {
        return code;
    }
    jf_err_t err = {0};
    s_search_t s = {.ctx = ctx, .a = &a};
    int rc = s_space(ctx, &s, &err);
    if (rc != 0) {
        return cli_fail(rc == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_ERROR, "%s", err.msg);
    }
    s_sweep_name(&s);
    s.deadline_us = a.timeout_s ? jf_clock_mono_us() + a.timeout_s * JF_US_PER_S : 0;
    printf("search: policy=%s board=%s (%s) sweep=%s space=%dx%dx%dx%dx%d clocks=%s\n", a.policy,
           a.board, s.board->type == JF_BOARD_SIM ? "simulated" : "measured", s.sweep,
           s.space.size[0], s.space.size[1], s.space.size[2], s.space.size[3], s.space.size[4],
           s.clocks_source == CLI_CLOCKS_BOARD ? "board" : "family");
    printf("space: %s\n", cli_clocks_source_text(s.clocks_source));
    coord_csearch_t *cs = coord_csearch_new(&s.space, s_profile, &s, &err);
    if (cs) {
        coord_csearch_set_rerun(cs, s_rerun, &s);
    }
    coord_csearch_result_t r = {0};
    rc = cs ? s_search(cs, &a, &r, &err) : -ENOMEM;
    code = rc == 0 ? s_report(&s, cs, &r) : cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    coord_csearch_destroy(&cs);
    free(s.seen);
    return code;
}

int cli_cmd_concurrent(cli_ctx_t *ctx, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("%s\n", S_USAGE);
            return CLI_EXIT_OK;
        }
    }
    if (argc < 1 || strcmp(argv[0], "search") != 0) {
        return cli_fail(CLI_EXIT_USAGE, "concurrent: expected 'search'; %s", S_USAGE);
    }
    return s_concurrent_search(ctx, argc - 1, argv + 1);
}
