/* Bench: how the models' error falls with the number of profiled modes N, for active profiling
 * (coord_adaptive: a spread of coord_adaptive_min_points modes, then rounds of --batch chosen
 * from what was measured) and for a seeded random choice of N modes. For each N, a linear time
 * and a linear power model (what `jetfleet model fit` fits by default; --kind phys: phys models)
 * are fitted on the N modes and scored on every other mode of the table: MAPE, averaged over the
 * seeds. The choice of modes is coord_adaptive's whatever --kind says. The table is the
 * ground truth, one line per mode: cores,cpu_hz,gpu_hz,emc_hz,workers,batch,time_us,power_mw
 * (after a header); bench/adaptive-profiling.sh makes it from jf-simtable and the real Orin data.
 * Usage: jf-adaptive-bench --table FILE --prefix NAME [--n 10,20,...] [--seeds K] [--batch B]
 *        [--kind linear|phys] */
#include "coord_adaptive.h"
#include "coord_model.h"
#include "coord_pareto.h"
#include "jf_parse.h"
#include "jf_rng.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define B_MODES_MAX 20000
#define B_NS_MAX    16
#define B_LINE_MAX  512

typedef struct b_table {
    coord_op_t ops[B_MODES_MAX];
    double time_us[B_MODES_MAX];
    double power_mw[B_MODES_MAX];
    size_t n;
} b_table_t;

typedef struct b_opts {
    const char *table, *prefix;
    size_t ns[B_NS_MAX], n_ns;
    int64_t seeds, batch;
    coord_model_kind_t kind; // of the scored models
} b_opts_t;

static int b_read(const char *path, b_table_t *t)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "adaptive-bench: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[B_LINE_MAX];
    t->n = 0;
    for (long ln = 1; fgets(line, sizeof line, f); ln++) {
        coord_op_t op = {0};
        long long c = 0, g = 0, e = 0;
        double tu = 0, pm = 0;
        char extra = 0;
        if (ln == 1) {
            continue; // the header
        }
        if (t->n == B_MODES_MAX ||
            sscanf(line, "%d,%lld,%lld,%lld,%d,%d,%lf,%lf %c", &op.cores, &c, &g, &e, &op.workers,
                   &op.batch_size, &tu, &pm, &extra) != 8) {
            fprintf(stderr, "adaptive-bench: %s:%ld: expected 8 numbers (at most %d modes)\n", path,
                    ln, B_MODES_MAX);
            fclose(f);
            return -1;
        }
        op.cpu_hz = c;
        op.gpu_hz = g;
        op.emc_hz = e;
        t->ops[t->n] = op;
        t->time_us[t->n] = tu;
        t->power_mw[t->n++] = pm;
    }
    fclose(f);
    return 0;
}

#define B_FIGS 6    // per N: time MAPE, power MAPE, recommend gap, over budget, no mode predicted,
                    // seeds with a gap
#define B_BUDGETS 8 // power budgets between the lowest and highest true mode power

// A linear model of target fitted on the chosen modes (caller destroys), and its MAPE over the
// other modes in *ret_mape; NULL when the fit failed.
static coord_model_t *b_fit(const b_table_t *t, const bool *chosen, coord_target_t target,
                            coord_model_kind_t kind, double *ret_mape)
{
    const double *y = target == COORD_TARGET_TIME ? t->time_us : t->power_mw;
    coord_point_t *train = calloc(t->n, sizeof *train), *test = calloc(t->n, sizeof *test);
    size_t ntr = 0, nte = 0;
    for (size_t i = 0; train && test && i < t->n; i++) {
        coord_point_t p = {.op = t->ops[i], .y = y[i]};
        if (chosen[i]) {
            train[ntr++] = p;
        } else {
            test[nte++] = p;
        }
    }
    // A phys model's cross-validation only measures it (a linear one's chooses value or log).
    coord_model_opts_t o = {.kind = kind, .target = target, .skip_cv = kind == COORD_MODEL_PHYS};
    jf_err_t err = {0};
    coord_model_t *m = train && test ? coord_model_fit(&o, train, ntr, &err) : NULL;
    *ret_mape = NAN;
    if (!m || coord_model_mape(m, test, nte, ret_mape, &err) != 0) {
        fprintf(stderr, "adaptive-bench: fit on %zu modes: %s\n", ntr, err.msg);
        coord_model_destroy(&m);
    }
    free(train);
    free(test);
    return m;
}

// The least true time among modes whose true power is within budget (INFINITY: none).
static double b_best_time(const b_table_t *t, double budget_mw)
{
    double best = INFINITY;
    for (size_t i = 0; i < t->n; i++) {
        best = t->power_mw[i] <= budget_mw && t->time_us[i] < best ? t->time_us[i] : best;
    }
    return best;
}

// Recommendations (coord_recommend, no margin) from the models' predictions of every mode under
// B_BUDGETS power budgets, against the truth: adds to figs the mean gap over the recommendations
// truly within their budget (percent of the recommended mode's true time over the fastest mode
// truly within it), how many were truly over their budget, and how many budgets got none.
static void b_recommend(const b_table_t *t, coord_model_t *tm, coord_model_t *pm, double *figs)
{
    coord_pareto_point_t *pts = calloc(t->n, sizeof *pts);
    double lo = INFINITY, hi = 0.0, gap = 0.0;
    int answered = 0;
    for (size_t i = 0; pts && i < t->n; i++) {
        pts[i].op = t->ops[i];
        (void) coord_model_predict(tm, &t->ops[i], &pts[i].time_us, NULL);
        (void) coord_model_predict(pm, &t->ops[i], &pts[i].power_mw, NULL);
        pts[i].energy_mj = pts[i].time_us * pts[i].power_mw / 1e6;
        lo = t->power_mw[i] < lo ? t->power_mw[i] : lo;
        hi = t->power_mw[i] > hi ? t->power_mw[i] : hi;
    }
    for (int b = 1; pts && b <= B_BUDGETS; b++) {
        double budget = lo + (hi - lo) * b / (B_BUDGETS + 1), closest = 0.0;
        size_t idx = 0;
        if (coord_recommend(pts, t->n, COORD_BUDGET_POWER, budget, &idx, &closest, NULL) != 0) {
            figs[4] += 1; // no mode predicted within the budget
            continue;
        }
        if (t->power_mw[idx] > budget) {
            figs[3] += 1; // truly over the budget: counted, not in the gap
            continue;
        }
        double best = b_best_time(t, budget);
        gap += 100.0 * (t->time_us[idx] - best) / best;
        answered++;
    }
    figs[2] += answered ? gap / answered : 0.0;
    figs[5] += answered > 0;
    free(pts);
}

// Adds the figures at each N of o->ns to sums (B_FIGS per N) as modes are chosen.
static void b_score_at(const b_opts_t *o, const b_table_t *t, const bool *chosen, size_t n_chosen,
                       double *sums)
{
    for (size_t k = 0; k < o->n_ns; k++) {
        if (o->ns[k] != n_chosen) {
            continue;
        }
        double *figs = &sums[B_FIGS * k];
        double mt = NAN, mp = NAN;
        coord_model_t *tm = b_fit(t, chosen, COORD_TARGET_TIME, o->kind, &mt);
        coord_model_t *pm = b_fit(t, chosen, COORD_TARGET_POWER, o->kind, &mp);
        figs[0] += mt;
        figs[1] += mp;
        if (tm && pm) {
            b_recommend(t, tm, pm, figs);
        }
        coord_model_destroy(&tm);
        coord_model_destroy(&pm);
    }
}

static int b_adaptive(const b_opts_t *o, const b_table_t *t, uint64_t seed, double *sums,
                      size_t *ret_reasons)
{
    size_t nmax = o->ns[o->n_ns - 1], n_obs = 0;
    coord_adaptive_obs_t *obs = calloc(nmax, sizeof *obs);
    coord_adaptive_pick_t *picks = calloc(nmax, sizeof *picks);
    bool *chosen = calloc(t->n, sizeof *chosen);
    int rc = obs && picks && chosen ? 0 : -ENOMEM;
    while (rc == 0 && n_obs < nmax) {
        size_t want = n_obs == 0 ? coord_adaptive_min_points() : (size_t) o->batch, got = 0;
        coord_adaptive_opts_t ao = {.seed = seed,
                                    .batch = want < nmax - n_obs ? want : nmax - n_obs};
        jf_err_t err = {0};
        rc = coord_adaptive_choose(&ao, t->ops, t->n, obs, n_obs, picks, &got, &err);
        if (rc != 0 || got == 0) {
            fprintf(stderr, "adaptive-bench: choose: %s\n", rc ? err.msg : "no modes left");
            rc = rc ? rc : -ENOENT;
        }
        for (size_t i = 0; rc == 0 && i < got; i++) {
            size_t idx = picks[i].idx; // "measuring" it: its figures from the table
            obs[n_obs++] = (coord_adaptive_obs_t){
                .idx = idx, .time_us = t->time_us[idx], .power_mw = t->power_mw[idx]};
            chosen[idx] = true;
            ret_reasons[picks[i].reason]++;
            b_score_at(o, t, chosen, n_obs, sums);
        }
    }
    free(obs);
    free(picks);
    free(chosen);
    return rc;
}

static int b_random(const b_opts_t *o, const b_table_t *t, uint64_t seed, double *sums)
{
    size_t *perm = calloc(t->n, sizeof *perm);
    bool *chosen = calloc(t->n, sizeof *chosen);
    if (!perm || !chosen) {
        free(perm);
        free(chosen);
        return -ENOMEM;
    }
    for (size_t i = 0; i < t->n; i++) {
        perm[i] = i;
    }
    jf_rng_t rng;
    jf_rng_seed(&rng, seed, 99);
    jf_rng_shuffle(&rng, perm, t->n);
    for (size_t i = 0; i < o->ns[o->n_ns - 1]; i++) {
        chosen[perm[i]] = true;
        b_score_at(o, t, chosen, i + 1, sums);
    }
    free(perm);
    free(chosen);
    return 0;
}

static int b_parse_ns(const char *arg, b_opts_t *o)
{
    o->n_ns = 0;
    for (const char *p = arg; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t) (comma - p) : strlen(p);
        char tok[32];
        int64_t v = 0;
        if (len >= sizeof tok || o->n_ns == B_NS_MAX) {
            return -EINVAL;
        }
        memcpy(tok, p, len);
        tok[len] = '\0';
        if (jf_parse_i64(tok, 1, B_MODES_MAX, &v, NULL) != 0 ||
            (o->n_ns > 0 && (size_t) v <= o->ns[o->n_ns - 1])) {
            return -EINVAL;
        }
        o->ns[o->n_ns++] = (size_t) v;
        p += len + (comma != NULL);
    }
    return o->n_ns > 0 && o->ns[0] >= coord_adaptive_min_points() ? 0 : -EINVAL;
}

static int b_args(int argc, char **argv, b_opts_t *o)
{
    static const struct option opts[] = {{"table", required_argument, NULL, 't'},
                                         {"prefix", required_argument, NULL, 'p'},
                                         {"n", required_argument, NULL, 'n'},
                                         {"seeds", required_argument, NULL, 's'},
                                         {"batch", required_argument, NULL, 'b'},
                                         {"kind", required_argument, NULL, 'k'},
                                         {NULL, 0, NULL, 0}};
    int bad = b_parse_ns("10,20,30,50,100", o);
    for (int c; bad == 0 && (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        o->table = c == 't' ? optarg : o->table;
        o->prefix = c == 'p' ? optarg : o->prefix;
        bad |= c == 'n' ? b_parse_ns(optarg, o) : 0;
        bad |= c == 's' ? jf_parse_i64(optarg, 1, 1000, &o->seeds, NULL) : 0;
        bad |= c == 'b' ? jf_parse_i64(optarg, 1, 1000, &o->batch, NULL) : 0;
        bad |=
            c == 'k' && (!coord_model_kind_parse(optarg, &o->kind) || o->kind == COORD_MODEL_MLP);
        bad |= c == '?';
    }
    if (bad || !o->table || !o->prefix || optind != argc) {
        fprintf(stderr,
                "usage: jf-adaptive-bench --table FILE --prefix NAME [--n 10,20,30,50,100] "
                "[--seeds K] [--batch B] [--kind linear|phys] (each N >= %zu, increasing)\n",
                coord_adaptive_min_points());
        return -EINVAL;
    }
    return 0;
}

static void b_print(const b_opts_t *o, const char *method, const double *sums)
{
    for (size_t k = 0; k < o->n_ns; k++) {
        const double *f = &sums[B_FIGS * k];
        double n = (double) o->seeds;
        printf("%s_%s_n%zu_time_mape=%.2f\n", o->prefix, method, o->ns[k], f[0] / n);
        printf("%s_%s_n%zu_power_mape=%.2f\n", o->prefix, method, o->ns[k], f[1] / n);
        printf("%s_%s_n%zu_recommend_gap_pct=%.2f\n", o->prefix, method, o->ns[k],
               f[5] > 0 ? f[2] / f[5] : NAN);
        printf("%s_%s_n%zu_over_budget=%.2f\n", o->prefix, method, o->ns[k], f[3] / n);
        printf("%s_%s_n%zu_no_mode=%.2f\n", o->prefix, method, o->ns[k], f[4] / n);
    }
}

int main(int argc, char **argv)
{
    static b_table_t t;
    b_opts_t o = {.seeds = 5, .batch = 5};
    if (b_args(argc, argv, &o) != 0) {
        return 2;
    }
    if (b_read(o.table, &t) != 0 || t.n <= o.ns[o.n_ns - 1]) {
        fprintf(stderr, "adaptive-bench: %s: %zu modes, need more than %zu\n", o.table, t.n,
                o.ns[o.n_ns - 1]);
        return 1;
    }
    double ad[B_FIGS * B_NS_MAX] = {0}, rnd[B_FIGS * B_NS_MAX] = {0};
    size_t reasons[3] = {0};
    for (int64_t s = 1; s <= o.seeds; s++) {
        if (b_adaptive(&o, &t, (uint64_t) s, ad, reasons) != 0 ||
            b_random(&o, &t, (uint64_t) s, rnd) != 0) {
            return 1;
        }
    }
    printf("# %s: %zu modes; linear time and power models; MAPE (%%) over the unprofiled modes, "
           "mean of %lld seeds; recommend_gap_pct: mean over %d power budgets of the recommended "
           "mode's "
           "true time over the fastest truly within the budget, over those truly within it, mean "
           "over the seeds that had one (no margin); over_budget: how many were truly over it; "
           "no_mode: budgets without one; "
           "adaptive rounds of %lld after a spread of %zu; "
           "adaptive picks: "
           "%zu spread, %zu uncertainty, %zu front\n",
           o.prefix, t.n, (long long) o.seeds, B_BUDGETS, (long long) o.batch,
           coord_adaptive_min_points(), reasons[COORD_ADAPTIVE_SPREAD],
           reasons[COORD_ADAPTIVE_UNCERTAINTY], reasons[COORD_ADAPTIVE_FRONT]);
    b_print(&o, "adaptive", ad);
    b_print(&o, "random", rnd);
    return 0;
}
