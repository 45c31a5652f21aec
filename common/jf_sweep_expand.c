/* The sweep loader's expansion (jf_sweep_internal.h): each targeted board and workload crossed
 * with the axes, minus excludes, plus include rules, into run specs with their ids. The parsing
 * that fills the context is jf_sweep.c. docs/sweeps.md "Expansion". */
#include "jf_sweep_internal.h"

#include "jf_board_clocks.h"
#include "jf_run_runtime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_COMBINATIONS_MAX ((size_t) 16 * JF_SWEEP_RUNS_MAX) // examined, before skips

static void s_fill_run(const jf_sweep_ctx_t *ctx, const jf_sweep_combo_t *c, jf_run_spec_t *s)
{
    *s = ctx->base;
    // Every source is a checked name no longer than its destination.
    (void) snprintf(s->board, sizeof s->board, "%s", c->board->name);
    (void) snprintf(s->workload, sizeof s->workload, "%s", c->workload->name);
    (void) snprintf(s->model, sizeof s->model, "%s", c->workload->model);
    (void) snprintf(s->dataset, sizeof s->dataset, "%s", c->workload->dataset);
    (void) snprintf(s->power_mode, sizeof s->power_mode, "%s", c->mode->name);
    (void) snprintf(s->storage, sizeof s->storage, "%s", c->storage);
    s->custom = c->custom ? c->custom->point : (jf_run_custom_t){0};
    s->dvfs_off = c->dvfs_off;
    s->epochs = s->roofline ? JF_RUN_ROOFLINE_EPOCHS : c->workload->epochs;
    s->concurrent = c->workload->concurrent;
    s->power_mode_id = c->mode->id;
    s->workers = c->workers;
    s->batch_size = c->batch_size;
    s->repeat = c->repeat;
    s->seed = ctx->base.seed + (uint64_t) c->repeat;
    jf_run_spec_compute_id(s);
}

static int s_grow_runs(jf_sweep_ctx_t *ctx, jf_err_t *err)
{
    jf_sweep_t *sw = ctx->sweep;
    size_t cap = ctx->runs_cap ? 2 * ctx->runs_cap : 64;
    cap = cap < JF_SWEEP_RUNS_MAX ? cap : JF_SWEEP_RUNS_MAX;
    jf_run_spec_t *runs = realloc(sw->runs, cap * sizeof *runs);
    if (!runs) {
        return jf_err_set(err, -ENOMEM, "%s: out of memory for %zu runs", sw->source, cap);
    }
    sw->runs = runs;
    ctx->runs_cap = cap;
    return 0;
}

static int s_add_spec(jf_sweep_ctx_t *ctx, const jf_run_spec_t *spec, jf_err_t *err)
{
    jf_sweep_t *sw = ctx->sweep;
    jf_err_t inner = {0};
    if (jf_run_spec_validate(spec, &inner) != 0) {
        return jf_yaml_error(err, inner.code, ctx->root,
                             "run on board '%s', workload '%s', repeat "
                             "%d: %s",
                             spec->board, spec->workload, spec->repeat, inner.msg);
    }
    if (jf_sweep_ids_reserve(&ctx->ids, sw->runs, sw->n_runs + 1) != 0) {
        return jf_err_set(err, -ENOMEM, "%s: out of memory", sw->source);
    }
    size_t *slot = jf_sweep_ids_slot(&ctx->ids, sw->runs, spec->run_id);
    if (*slot) {
        return 0; // an earlier combination already produced this run: keep the first
    }
    if (sw->n_runs == JF_SWEEP_RUNS_MAX) {
        return jf_yaml_error(err, -EINVAL, ctx->root, "sweep '%s' expands to more than %d runs",
                             sw->name, JF_SWEEP_RUNS_MAX);
    }
    int rc = sw->n_runs == ctx->runs_cap ? s_grow_runs(ctx, err) : 0;
    if (rc == 0) {
        sw->runs[sw->n_runs++] = *spec;
        *slot = sw->n_runs;
    }
    return rc;
}

// A combination's run in one runtime; in an idle baseline sweep (idle_s) two: with telemetry at
// its rate, and sampled only at the start and end (telemetry_off), whose difference is the cost
// of measuring.
static int s_add_run_in(jf_sweep_ctx_t *ctx, const jf_sweep_combo_t *c, const char *runtime,
                        jf_err_t *err)
{
    jf_run_spec_t spec = {0};
    s_fill_run(ctx, c, &spec);
    (void) snprintf(spec.runtime, sizeof spec.runtime, "%s", runtime);
    jf_run_spec_compute_id(&spec);
    if (spec.idle_s > 0) { // an idle run is one epoch of idle_s, whatever the workload says
        spec.epochs = 1;
        jf_run_spec_compute_id(&spec);
    }
    int rc = s_add_spec(ctx, &spec, err);
    if (rc == 0 && spec.idle_s > 0) {
        spec.telemetry_off = true;
        jf_run_spec_compute_id(&spec);
        rc = s_add_spec(ctx, &spec, err);
    }
    return rc;
}

static bool s_excluded(const jf_sweep_ctx_t *ctx, const jf_sweep_combo_t *c)
{
    for (size_t i = 0; i < ctx->n_excludes; i++) {
        if (jf_sweep_rule_matches(&ctx->excludes[i], c, JF_SWEEP_KEY_BOARD, JF_SWEEP_KEY_COUNT)) {
            return true;
        }
    }
    return false;
}

// A combination's runs: one per runtime of the plan (the sweep's `runtime` list, or an include
// rule's, docs/containers.md) that no exclude rule removes.
static int s_add_run(jf_sweep_ctx_t *ctx, const jf_sweep_plan_t *p, jf_sweep_combo_t *c,
                     jf_err_t *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->runtimes.n; i++) {
        c->runtime = p->runtimes.texts[i];
        if (p->apply_excludes && s_excluded(ctx, c)) {
            ctx->sweep->skips.excluded++;
        } else {
            rc = s_add_run_in(
                ctx, c, jf_run_runtime_is_container(c->runtime) ? JF_RUN_RUNTIME_CONTAINER : "",
                err);
        }
    }
    return rc;
}

static int s_consider(jf_sweep_ctx_t *ctx, const jf_sweep_plan_t *p, jf_sweep_combo_t *c,
                      jf_err_t *err)
{
    if (++ctx->combinations > S_COMBINATIONS_MAX) {
        return jf_yaml_error(err, -EINVAL, ctx->root,
                             "sweep '%s' has more than %zu combinations; narrow its axes",
                             ctx->sweep->name, S_COMBINATIONS_MAX);
    }
    jf_sweep_skips_t *skips = &ctx->sweep->skips;
    // DVFS off needs a Jetson's clocks (a host has none to pin), as a custom point does.
    if (!c->mode || (c->dvfs_off && !jf_board_clocks(c->board->simulates))) {
        skips->no_power_mode++;
    } else if (!jf_board_spec_storage(c->board, c->storage)) {
        skips->no_storage++;
    } else {
        return s_add_run(ctx, p, c, err);
    }
    return 0;
}

// The innermost axes: workers, batch size, repeat.
static int s_expand_numbers(jf_sweep_ctx_t *ctx, const jf_sweep_plan_t *p, jf_sweep_combo_t *c,
                            jf_err_t *err)
{
    int rc = 0;
    for (size_t w = 0; rc == 0 && w < p->workers.n; w++) {
        c->workers = (int) p->workers.nums[w];
        for (size_t b = 0; rc == 0 && b < p->batches.n; b++) {
            c->batch_size = (int) p->batches.nums[b];
            for (size_t r = 0; rc == 0 && r < p->repeats.n; r++) {
                c->repeat = (int) p->repeats.nums[r];
                rc = s_consider(ctx, p, c, err);
            }
        }
    }
    return rc;
}

// Mode m of the plan on the combination's board: c->mode (NULL if the board lacks it or cannot
// run the custom point) and c->custom.
static void s_pick_mode(const jf_sweep_ctx_t *ctx, const jf_sweep_plan_t *p, size_t m,
                        jf_sweep_combo_t *c)
{
    c->custom = NULL;
    if (p->all_modes) {
        c->mode = &c->board->modes[m];
    } else if (p->modes.nums[m] <= JF_SWEEP_CUSTOM_NUM(0)) {
        c->custom = &ctx->customs[JF_SWEEP_CUSTOM_INDEX(p->modes.nums[m])];
        bool fits = jf_sweep_custom_check(c->custom, c->board, NULL) == 0;
        c->mode = fits ? jf_sweep_custom_base(c->custom, c->board) : NULL;
    } else {
        c->mode = jf_board_spec_mode(c->board, p->modes.texts[m]);
    }
}

static int s_expand_modes(jf_sweep_ctx_t *ctx, const jf_sweep_plan_t *p, jf_sweep_combo_t *c,
                          jf_err_t *err)
{
    size_t n = p->all_modes ? c->board->n_modes : p->modes.n;
    int rc = 0;
    for (size_t m = 0; rc == 0 && m < n; m++) {
        s_pick_mode(ctx, p, m, c);
        for (size_t d = 0; rc == 0 && d < p->dvfs.n; d++) {
            c->dvfs_off = p->dvfs.nums[d] == 1;
            for (size_t s = 0; rc == 0 && s < p->storage.n; s++) {
                c->storage = p->storage.texts[s];
                rc = s_expand_numbers(ctx, p, c, err);
            }
        }
    }
    return rc;
}

static int s_expand_plan(jf_sweep_ctx_t *ctx, const jf_sweep_plan_t *p, jf_err_t *err)
{
    int rc = 0;
    for (size_t b = 0; rc == 0 && b < ctx->fleet->n_boards; b++) {
        if (!ctx->targeted[b]) {
            continue;
        }
        for (size_t w = 0; rc == 0 && w < ctx->n_workloads; w++) {
            jf_sweep_combo_t c = {.board = &ctx->fleet->boards[b], .workload = &ctx->workloads[w]};
            // An include rule's axis keys replace the axes, so only its board and workload keys
            // can fail to match.
            if (!p->filter ||
                jf_sweep_rule_matches(p->filter, &c, JF_SWEEP_KEY_BOARD, JF_SWEEP_KEY_POWER_MODE)) {
                rc = s_expand_modes(ctx, p, &c, err);
            }
        }
    }
    return rc;
}

static void s_include_plan(const jf_sweep_ctx_t *ctx, const jf_sweep_rule_t *rule,
                           jf_sweep_plan_t *p)
{
    *p = ctx->main;
    p->filter = rule;
    p->apply_excludes = false;
    if (rule->has[JF_SWEEP_KEY_POWER_MODE]) {
        p->all_modes = false;
        p->modes = rule->values[JF_SWEEP_KEY_POWER_MODE];
    }
    p->dvfs = rule->has[JF_SWEEP_KEY_DVFS] ? rule->values[JF_SWEEP_KEY_DVFS] : p->dvfs;
    p->storage = rule->has[JF_SWEEP_KEY_STORAGE] ? rule->values[JF_SWEEP_KEY_STORAGE] : p->storage;
    p->workers = rule->has[JF_SWEEP_KEY_WORKERS] ? rule->values[JF_SWEEP_KEY_WORKERS] : p->workers;
    p->batches =
        rule->has[JF_SWEEP_KEY_BATCH_SIZE] ? rule->values[JF_SWEEP_KEY_BATCH_SIZE] : p->batches;
    p->repeats = rule->has[JF_SWEEP_KEY_REPEAT] ? rule->values[JF_SWEEP_KEY_REPEAT] : p->repeats;
    p->runtimes =
        rule->has[JF_SWEEP_KEY_RUNTIME] ? rule->values[JF_SWEEP_KEY_RUNTIME] : p->runtimes;
}

int jf_sweep_expand(jf_sweep_ctx_t *ctx, jf_err_t *err)
{
    int rc = s_expand_plan(ctx, &ctx->main, err);
    for (size_t i = 0; rc == 0 && i < ctx->n_includes; i++) {
        s_include_plan(ctx, &ctx->includes[i], &ctx->scratch);
        rc = s_expand_plan(ctx, &ctx->scratch, err);
    }
    const jf_sweep_t *sw = ctx->sweep;
    if (rc == 0 && sw->n_runs == 0) {
        return jf_yaml_error(err, -EINVAL, ctx->root,
                             "sweep '%s' expands to no runs: %zu excluded, %zu lacking storage, "
                             "%zu lacking power mode",
                             sw->name, sw->skips.excluded, sw->skips.no_storage,
                             sw->skips.no_power_mode);
    }
    return rc;
}
