/* jetfleet rounds plan FILE: what each board of a rounds file would run in one round under its
 * policy, as the boards' fitted time and power models predict it, beside the maxn baseline
 * (docs/rounds.md "Planning"). Boards without a model are profiled first, unless --no-profile.
 * No training: the plan is a prediction. */
#include "cli_rounds.h"

#include "coord_adaptive.h"
#include "coord_rounds_plan.h"
#include "jf_parse.h"
#include "jf_units.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_USAGE                                                                                    \
    "usage: jetfleet rounds plan FILE [--no-profile] [--profile-modes N] [--timeout SECONDS]"
#define S_TIMEOUT_MAX_S (7 * 24 * 3600)
#define S_PROFILE_MAX   1000

typedef struct s_args {
    const char *file;
    bool profile;
    cli_rounds_profile_opts_t popts;
} s_args_t;

static int s_parse(int argc, char **argv, s_args_t *a)
{
    static const struct option opts[] = {{"no-profile", no_argument, NULL, 'n'},
                                         {"profile-modes", required_argument, NULL, 'm'},
                                         {"timeout", required_argument, NULL, 't'},
                                         {NULL, 0, NULL, 0}};
    *a = (s_args_t){.profile = true, .popts = {.n = CLI_ROUNDS_PROFILE_MODES}};
    optind = 0; // argv[0] ("plan") stands for the program name
    int64_t v = 0;
    jf_err_t err = {0};
    for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        if (c == '?') {
            return cli_fail(CLI_EXIT_USAGE, S_USAGE);
        }
        a->profile = a->profile && c != 'n';
        if (c == 'm' || c == 't') {
            int64_t max = c == 'm' ? S_PROFILE_MAX : S_TIMEOUT_MAX_S;
            if (jf_parse_i64(optarg, 1, max, &v, &err) != 0) {
                return cli_fail(CLI_EXIT_USAGE, "--%s '%s': %s",
                                c == 'm' ? "profile-modes" : "timeout", optarg, err.msg);
            }
            a->popts.n = c == 'm' ? (size_t) v : a->popts.n;
            a->popts.timeout_us = c == 't' ? v * JF_US_PER_S : a->popts.timeout_us;
        }
    }
    if (optind != argc - 1) {
        return cli_fail(CLI_EXIT_USAGE, S_USAGE);
    }
    if (a->popts.n < coord_adaptive_min_points()) {
        return cli_fail(CLI_EXIT_USAGE,
                        "--profile-modes %zu: too few to fit time and power "
                        "models, need at least %zu",
                        a->popts.n, coord_adaptive_min_points());
    }
    a->file = argv[optind];
    return CLI_EXIT_OK;
}

// The plan's inputs: the rounds file, its boards and their mode tables.
typedef struct s_plan {
    jf_rounds_t *cfg;              // owned
    const jf_board_spec_t **specs; // owned array; the specs borrowed from the fleet
    size_t n;
    coord_rounds_board_t *boards; // owned (coord_rounds_boards_free)
    size_t n_boards;
} s_plan_t;

static void s_plan_fini(s_plan_t *p)
{
    coord_rounds_boards_free(&p->boards, p->n_boards);
    free(p->specs);
    jf_rounds_destroy(&p->cfg);
}

static int s_load_boards(cli_ctx_t *ctx, s_plan_t *p, jf_err_t *err)
{
    coord_store_t *st = cli_ctx_store(ctx, err);
    coord_rounds_boards_free(&p->boards, p->n_boards);
    return st ? coord_rounds_boards_load(st, p->cfg, p->specs, p->n, &p->boards, &p->n_boards, err)
              : -EIO;
}

// Profiles each board without modes (or says which lack them, with --no-profile), then reloads.
static int s_profile_missing(cli_ctx_t *ctx, const s_args_t *a, s_plan_t *p, jf_err_t *err)
{
    size_t missing = 0;
    for (size_t i = 0; i < p->n_boards; i++) {
        if (p->boards[i].n_modes > 0) {
            continue;
        }
        missing++;
        if (!a->profile) {
            return cli_fail(CLI_EXIT_ERROR,
                            "board '%s' has no fitted time and power models for %s (run without "
                            "--no-profile to profile it first)",
                            p->boards[i].name, p->cfg->workload);
        }
        int code = cli_rounds_profile(ctx, p->cfg, p->specs[i], &a->popts);
        if (code != CLI_EXIT_OK) {
            return code;
        }
    }
    if (missing > 0 && s_load_boards(ctx, p, err) != 0) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err->msg);
    }
    return CLI_EXIT_OK;
}

static void s_print_choice(const coord_rounds_board_t *b, const coord_rounds_choice_t *c)
{
    printf("board=%s mode=%s mode_id=%d", b->name, c->mode_name, c->mode_id);
    if (c->custom) {
        printf(" custom=%dc,cpu%.4gG,gpu%.4gG,emc%.4gG", c->op.cores, (double) c->op.cpu_hz / 1e9,
               (double) c->op.gpu_hz / 1e9, (double) c->op.emc_hz / 1e9);
    }
    printf(" minibatches=%lld pred_s=%.3f pred_j=%.3f wait_s=%.3f power_w=%.3f meets=%s "
           "time_model=%lld power_model=%lld warmup_s=%.3f warmup_ghz_s=%.4f warmup_runs=%zu "
           "error_s=%.3f\n",
           (long long) c->minibatches, c->pred_s, c->pred_j, c->wait_s, b->modes[c->mode].power_w,
           c->meets ? "yes" : "no", (long long) b->time_model, (long long) b->power_model,
           b->modes[c->mode].warmup_s, b->warmup_ghz_s, b->warmup_runs, b->error_s);
}

static void s_print_summary(const char *prefix, const coord_rounds_choice_t *c, size_t n)
{
    coord_rounds_summary_t s = {0};
    coord_rounds_summarise(c, n, &s);
    printf("%s_round_s=%.3f %s_spread_s=%.3f %s_spread_pct=%.2f %s_energy_j=%.3f %s_missed=%zu "
           "%s_minibatches=%lld %s_j_per_minibatch=%.5f\n",
           prefix, s.round_s, prefix, s.spread_s, prefix, s.spread_pct, prefix, s.energy_j, prefix,
           s.n_missed, prefix, (long long) s.minibatches, prefix,
           s.minibatches ? s.energy_j / (double) s.minibatches : 0.0);
}

// What the figures rest on, in words.
static void s_print_notes(const s_plan_t *p, const coord_rounds_choice_t *c, int64_t m)
{
    for (size_t i = 0; i < p->n_boards; i++) {
        if (p->boards[i].idle_w <= 0.0) {
            printf("note: idle power of '%s' unknown: its wait at the barrier counts 0 J (give "
                   "idle_power in the rounds file)\n",
                   p->boards[i].name);
        }
        if (p->boards[i].warmup_runs == 0) {
            printf("note: warm-up of '%s' not measured (its profiling runs have no minibatch "
                   "records or no epoch after the warm-up): pred_s leaves a round's warm-up "
                   "epoch out\n",
                   p->boards[i].name);
        }
        if (c[i].minibatches != m) {
            printf("note: '%s' cannot finish with the slowest board at %lld minibatches in any "
                   "candidate mode (too coarse): %lld minibatches this round\n",
                   p->boards[i].name, (long long) m, (long long) c[i].minibatches);
        }
        if (!c[i].meets) {
            printf("note: '%s' cannot meet the %s target even in its fastest allowed mode; it "
                   "runs that mode\n",
                   p->boards[i].name, jf_rounds_policy_name(p->cfg->policy));
        }
        if (p->specs[i]->type == JF_BOARD_SIM) {
            printf("note: '%s' is simulated: its models were fitted on simulated measurements\n",
                   p->boards[i].name);
        }
    }
    printf("note: predictions from fitted models (docs/analysis.md \"Models\"); nothing was "
           "trained\n");
}

static int s_print_plan(const s_plan_t *p, jf_err_t *err)
{
    coord_rounds_choice_t *c = calloc(p->n_boards + 1, sizeof *c);
    coord_rounds_choice_t *mx = calloc(p->n_boards + 1, sizeof *mx);
    jf_rounds_t maxn = *p->cfg;
    maxn.policy = JF_ROUNDS_MAXN;
    int rc = c && mx ? 0 : jf_err_set(err, -ENOMEM, "out of memory");
    rc = rc ? rc : coord_rounds_plan(p->cfg, p->boards, p->n_boards, c, err);
    rc = rc ? rc : coord_rounds_plan(&maxn, p->boards, p->n_boards, mx, err);
    if (rc == 0) {
        const char *pol = jf_rounds_policy_name(p->cfg->policy);
        printf("rounds=%s policy=%s workload=%s batch_size=%d boards=%zu local_%s=%lld\n",
               p->cfg->name, pol, p->cfg->workload, p->cfg->batch_size, p->n_boards,
               p->cfg->local_unit == JF_ROUNDS_EPOCHS ? "epochs" : "minibatches",
               (long long) p->cfg->local_count);
        for (size_t i = 0; i < p->n_boards; i++) {
            s_print_choice(&p->boards[i], &c[i]);
        }
        s_print_summary("plan", c, p->n_boards);
        s_print_summary("maxn", mx, p->n_boards);
        s_print_notes(p, c, mx[0].minibatches);
    }
    free(mx);
    free(c);
    return rc;
}

int cli_rounds_plan(cli_ctx_t *ctx, int argc, char **argv)
{
    s_args_t a = {0};
    int code = s_parse(argc, argv, &a);
    if (code != CLI_EXIT_OK) {
        return code;
    }
    jf_err_t err = {0};
    s_plan_t p = {0};
    const jf_fleet_config_t *fleet = cli_ctx_fleet(ctx, &err);
    if (!fleet) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    p.cfg = jf_rounds_load(a.file, &err);
    int rc = p.cfg ? jf_rounds_resolve(p.cfg, fleet, &p.specs, &p.n, &err)
                   : (err.code ? err.code : -EINVAL);
    if (rc != 0) {
        s_plan_fini(&p);
        return cli_fail(rc == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_ERROR, "%s", err.msg);
    }
    rc = s_load_boards(ctx, &p, &err);
    code = rc ? cli_fail(CLI_EXIT_ERROR, "%s", err.msg) : s_profile_missing(ctx, &a, &p, &err);
    if (code == CLI_EXIT_OK && s_print_plan(&p, &err) != 0) {
        code = cli_fail(CLI_EXIT_ERROR, "rounds plan: %s", err.msg);
    }
    s_plan_fini(&p);
    return code;
}
