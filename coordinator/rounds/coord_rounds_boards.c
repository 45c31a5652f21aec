/* The planner's mode tables from the store (coord_rounds_boards_load, coord_rounds_plan.h): each
 * board's newest fitted time and power models of the rounds' workload, the candidate operating
 * points those models are asked about (the grid of what was measured on the board), and the
 * warm-up term measured on the same runs. Only plain training runs count (the analysis' run-kind
 * filter, coord_valid_runs). docs/rounds.md "Planning". Not the policies (coord_rounds_plan.c). */
#include "coord_rounds_plan.h"

#include "coord_model.h"
#include "coord_model_pick.h"
#include "coord_obs.h"
#include "coord_valid_runs.h"
#include "jf_parse.h"
#include "jf_units.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_AXIS_MAX        64   // distinct values per clock or core count kept for the grid
#define S_WARMUP_RUNS_MAX 1024 // runs of one board the warm-up term is measured on, at most

// One model from the store, with the loader configuration it was trained on (for heads).
static coord_model_t *s_model(coord_store_t *store, int64_t id, char *ret_sweep, size_t size,
                              jf_err_t *err)
{
    coord_model_row_t row = {0};
    if (coord_store_model_get(store, id, &row, err) != 0) {
        return NULL;
    }
    coord_model_kind_t kind = COORD_MODEL_LINEAR;
    coord_target_t target = COORD_TARGET_TIME;
    coord_model_t *m = NULL;
    if (!coord_model_kind_parse(row.kind, &kind) || !coord_target_parse(row.target, &target)) {
        jf_err_set(err, -EINVAL, "model %lld: unknown kind '%s' or target '%s'", (long long) id,
                   row.kind, row.target);
    } else {
        m = coord_model_load(kind, target, row.params, err);
    }
    if (m) {
        json_t *f = json_loads(row.features, 0, NULL);
        json_t *w = json_object_get(f, "workers");
        json_t *b = json_object_get(f, "batch_size");
        coord_model_set_trained_config(m, json_is_integer(w) ? (int) json_integer_value(w) : -1,
                                       json_is_integer(b) ? (int) json_integer_value(b) : -1);
        json_decref(f);
        snprintf(ret_sweep, size, "%s", row.sweep);
    } else {
        jf_err_prefix(err, "model %lld", (long long) id);
    }
    coord_model_row_fini(&row);
    return m;
}

// The distinct measured values on each axis, the presets seen, and the samples per epoch.
typedef struct s_seen {
    const jf_board_spec_t *spec;     // borrowed
    const char *workload;            // borrowed
    const coord_valid_runs_t *kinds; // borrowed: the sweep's runs by kind
    bool by_type;                    // match the board's type rather than its name
    jf_board_type_t type;
    size_t n[4];
    int64_t axis[4][S_AXIS_MAX]; // cores, cpu, gpu, emc
    size_t n_presets;
    coord_rounds_mode_t presets[JF_POWER_MODES_MAX]; // op and name of read-back presets
    int64_t samples;                                 // most samples in one epoch
} s_seen_t;

static void s_axis_add(s_seen_t *s, int a, int64_t v)
{
    for (size_t i = 0; i < s->n[a]; i++) {
        if (s->axis[a][i] == v) {
            return;
        }
    }
    if (s->n[a] < S_AXIS_MAX) {
        s->axis[a][s->n[a]++] = v;
    }
}

static void s_preset_add(s_seen_t *s, const coord_obs_t *o)
{
    const jf_power_mode_t *pm = jf_board_spec_mode(s->spec, o->power_mode);
    if (!pm || s->n_presets >= JF_POWER_MODES_MAX) {
        return; // a custom point's label, or a mode this board does not list
    }
    for (size_t i = 0; i < s->n_presets; i++) {
        if (s->presets[i].mode_id == pm->id) {
            return;
        }
    }
    coord_rounds_mode_t *m = &s->presets[s->n_presets++];
    *m = (coord_rounds_mode_t){
        .mode_id = pm->id,
        .op = {.cores = o->cores, .cpu_hz = o->cpu_hz, .gpu_hz = o->gpu_hz, .emc_hz = o->emc_hz}};
    snprintf(m->mode, sizeof m->mode, "%s", pm->name);
}

// Whether a run of the sweep is one of the board's (or its type's) plain training runs of the
// workload: roofline, idle, concurrent and container runs are not training epochs.
static bool s_mine(const s_seen_t *s, const char *run, const char *board, const char *board_type,
                   const char *workload)
{
    jf_board_type_t t = JF_BOARD_TYPE_COUNT;
    bool mine = s->by_type ? jf_board_type_parse(board_type, &t) && t == s->type
                           : strcmp(board, s->spec->name) == 0;
    return mine && strcmp(workload, s->workload) == 0 &&
           !coord_valid_runs_is_other_kind(s->kinds, run);
}

static int s_seen_fn(const coord_obs_t *o, void *arg)
{
    s_seen_t *s = arg;
    if (!s_mine(s, o->run, o->board, o->board_type, o->workload) || !o->has_op || o->dvfs_off) {
        return 0;
    }
    int64_t v[4] = {o->cores, o->cpu_hz, o->gpu_hz, o->emc_hz};
    for (int a = 0; a < 4; a++) {
        s_axis_add(s, a, v[a]);
    }
    s_preset_add(s, o);
    s->samples = o->samples > s->samples ? o->samples : s->samples;
    return 0;
}

// The board's fastest preset: the one named MAXN, else the one with the highest wattage in its
// name ("MODE_20W_6CORE"), more cores breaking ties; else its family's default.
static int s_maxn_id(const jf_board_spec_t *spec, jf_board_type_t type)
{
    int best = -1;
    long best_w = -1, best_c = -1;
    for (size_t i = 0; i < spec->n_modes; i++) {
        const char *nm = spec->modes[i].name;
        if (strcmp(nm, "MAXN") == 0) {
            return spec->modes[i].id;
        }
        const char *p = strncmp(nm, "MODE_", 5) == 0 ? nm + 5 : nm;
        char *end = NULL;
        long w = strtol(p, &end, 10);
        long c = end && *end == 'W' && end[1] == '_' ? strtol(end + 2, NULL, 10) : 0;
        if (end != p && *end == 'W' && (w > best_w || (w == best_w && c > best_c))) {
            best = spec->modes[i].id;
            best_w = w;
            best_c = c;
        }
    }
    const jf_board_family_t *fam = jf_board_family(type);
    return best >= 0 ? best : fam ? fam->default_mode_id : 0;
}

// Predicts one candidate; a non-positive prediction leaves the mode out (returns 1).
static int s_predict(coord_model_t *tm, coord_model_t *pm, int64_t mpe, coord_rounds_mode_t *m,
                     jf_err_t *err)
{
    double t_us = 0.0, p_mw = 0.0;
    int rc = coord_model_predict(tm, &m->op, &t_us, err);
    rc = rc ? rc : coord_model_predict(pm, &m->op, &p_mw, err);
    if (rc != 0) {
        return rc;
    }
    if (!(t_us > 0.0) || !(p_mw > 0.0) || !isfinite(t_us) || !isfinite(p_mw)) {
        return 1;
    }
    m->minibatch_s = t_us / (double) JF_US_PER_S / (double) mpe;
    m->power_w = p_mw / 1e3;
    return 0;
}

// The candidate at grid index g (mixed radix over the four axes), named by a preset when one
// has exactly this point, else a custom point on the maxn mode.
static coord_rounds_mode_t s_grid_mode(const s_seen_t *s, size_t g, const jf_rounds_t *cfg,
                                       const coord_rounds_board_t *b)
{
    int64_t v[4];
    for (int a = 0; a < 4; a++) {
        v[a] = s->axis[a][g % s->n[a]];
        g /= s->n[a];
    }
    coord_rounds_mode_t m = {.custom = true,
                             .mode_id = b->maxn_mode_id,
                             .op = {.cores = (int) v[0],
                                    .cpu_hz = v[1],
                                    .gpu_hz = v[2],
                                    .emc_hz = v[3],
                                    .workers = cfg->workers,
                                    .batch_size = cfg->batch_size}};
    for (size_t i = 0; i < s->n_presets; i++) {
        const coord_op_t *p = &s->presets[i].op;
        if (p->cores == v[0] && p->cpu_hz == v[1] && p->gpu_hz == v[2] && p->emc_hz == v[3]) {
            m.custom = false;
            m.mode_id = s->presets[i].mode_id;
        }
    }
    const jf_power_mode_t *pm = NULL;
    for (size_t i = 0; i < s->spec->n_modes && !pm; i++) {
        pm = s->spec->modes[i].id == m.mode_id ? &s->spec->modes[i] : NULL;
    }
    snprintf(m.mode, sizeof m.mode, "%s", pm ? pm->name : "");
    return m;
}

static int s_fill_modes(const s_seen_t *s, const jf_rounds_t *cfg, coord_model_t *tm,
                        coord_model_t *pm, coord_rounds_board_t *b, jf_err_t *err)
{
    size_t total = 1;
    for (int a = 0; a < 4; a++) {
        total *= s->n[a];
    }
    if (total == 0 || s->samples <= 0) {
        return 0; // nothing measured to predict around: as without a model
    }
    if (total > COORD_ROUNDS_MODES_MAX) {
        return jf_err_set(err, -E2BIG, "board '%s': %zu candidate modes, at most %d", b->name,
                          total, COORD_ROUNDS_MODES_MAX);
    }
    b->minibatches_per_epoch = (s->samples + cfg->batch_size - 1) / cfg->batch_size;
    b->modes = calloc(total, sizeof *b->modes);
    if (!b->modes) {
        return jf_err_set(err, -ENOMEM, "out of memory");
    }
    for (size_t g = 0; g < total; g++) {
        coord_rounds_mode_t m = s_grid_mode(s, g, cfg, b);
        int rc = s_predict(tm, pm, b->minibatches_per_epoch, &m, err);
        if (rc < 0) {
            jf_err_prefix(err, "board '%s'", b->name);
            return rc;
        }
        if (rc == 0) {
            b->modes[b->n_modes++] = m;
        }
    }
    return 0;
}

// One profiling run's warm-up measurement (docs/rounds.md "Warm-up").
typedef struct s_wrun {
    char run[COORD_OBS_NAME_MAX + 1];
    double first_s;        // epoch 0: its first minibatches' stall + compute, s
    int64_t first_n;       // how many minibatches that is (at most the round's local work)
    double later_s;        // the run's first later epoch: its end-to-end time, s
    int64_t later_samples; // and its samples
    int64_t cpu_hz;        // its CPU clock (the operating point of its epochs), 0 = unknown
} s_wrun_t;

typedef struct s_warm {
    const s_seen_t *seen; // which runs are the board's
    int64_t m;            // minibatches of a round's run (INT64_MAX: the whole epoch)
    int batch_size;       // the rounds' (and the profiling runs') batch size
    size_t n;             // runs[0..n)
    s_wrun_t runs[S_WARMUP_RUNS_MAX];
} s_warm_t;

// The value of column name in an exported row; NULL when absent or NULL.
static const char *s_col(int ncols, const char *const *names, const char *const *values,
                         const char *name)
{
    for (int i = 0; i < ncols; i++) {
        if (strcmp(names[i], name) == 0) {
            return values[i];
        }
    }
    return NULL;
}

static double s_col_num(int ncols, const char *const *names, const char *const *values,
                        const char *name)
{
    const char *v = s_col(ncols, names, values, name);
    double d = NAN;
    return v && jf_parse_double(v, -1e18, 1e18, &d, NULL) == 0 ? d : NAN;
}

// The board's run of an exported row, or NULL when the row is not of one (add: make its entry).
static s_wrun_t *s_wrun(s_warm_t *w, int ncols, const char *const *names, const char *const *values,
                        bool add)
{
    const char *run = s_col(ncols, names, values, "run");
    const char *board = s_col(ncols, names, values, "board");
    const char *type = s_col(ncols, names, values, "board_type");
    const char *workload = s_col(ncols, names, values, "workload");
    if (!run || !board || !workload || !s_mine(w->seen, run, board, type ? type : "", workload)) {
        return NULL;
    }
    for (size_t i = w->n; i-- > 0;) {
        if (strcmp(w->runs[i].run, run) == 0) {
            return &w->runs[i];
        }
    }
    if (!add || w->n >= S_WARMUP_RUNS_MAX) {
        return NULL;
    }
    s_wrun_t *r = &w->runs[w->n++];
    *r = (s_wrun_t){0};
    (void) snprintf(r->run, sizeof r->run, "%s", run);
    return r;
}

// Epoch rows: each run's first later epoch (epochs come in order).
static int s_warm_epoch_fn(int ncols, const char *const *names, const char *const *values,
                           const coord_value_kind_t *kinds, void *arg)
{
    (void) kinds;
    s_warm_t *w = arg;
    double epoch = s_col_num(ncols, names, values, "epoch");
    s_wrun_t *r = epoch >= 1.0 ? s_wrun(w, ncols, names, values, true) : NULL;
    if (r && r->later_samples == 0) {
        r->later_s = s_col_num(ncols, names, values, "e2e_s");
        double samples = s_col_num(ncols, names, values, "samples");
        r->later_samples = isfinite(r->later_s) && samples > 0.0 ? (int64_t) samples : 0;
    }
    return 0;
}

// Minibatch rows: the first m minibatches of each run's warm-up epoch.
static int s_warm_minibatch_fn(int ncols, const char *const *names, const char *const *values,
                               const coord_value_kind_t *kinds, void *arg)
{
    (void) kinds;
    s_warm_t *w = arg;
    double epoch = s_col_num(ncols, names, values, "epoch");
    double idx = s_col_num(ncols, names, values, "minibatch");
    s_wrun_t *r = epoch == 0.0 && idx >= 0.0 && idx < (double) w->m
                      ? s_wrun(w, ncols, names, values, false)
                      : NULL;
    double t = s_col_num(ncols, names, values, "fetch_stall_s") +
               s_col_num(ncols, names, values, "compute_s");
    if (r && isfinite(t)) {
        r->first_s += t;
        r->first_n++;
    }
    return 0;
}

// The CPU clock of each run, from its epochs' operating point.
static int s_warm_obs_fn(const coord_obs_t *o, void *arg)
{
    s_warm_t *w = arg;
    for (size_t i = 0; o->has_op && i < w->n; i++) {
        w->runs[i].cpu_hz = strcmp(w->runs[i].run, o->run) == 0 ? o->cpu_hz : w->runs[i].cpu_hz;
    }
    return 0;
}

// The warm-up term of the board from the runs of its models' sweep: per run, the first
// minibatches of epoch 0 against as many at its later epoch's mean, times its CPU clock
// (coord_rounds_warmup_estimate). Runs without minibatch records, a later epoch or a known CPU
// clock do not count; with none, no term.
static int s_warmup(coord_store_t *store, const char *sweep, const s_seen_t *seen,
                    const jf_rounds_t *cfg, coord_rounds_board_t *b, jf_err_t *err)
{
    s_warm_t *w = calloc(1, sizeof *w);
    double *extra = calloc(2 * S_WARMUP_RUNS_MAX, sizeof *extra);
    if (!w || !extra) {
        free(w);
        free(extra);
        return jf_err_set(err, -ENOMEM, "out of memory");
    }
    double *ghz = extra + S_WARMUP_RUNS_MAX;
    *w = (s_warm_t){.seen = seen,
                    .m = cfg->local_unit == JF_ROUNDS_MINIBATCHES ? cfg->local_count : INT64_MAX,
                    .batch_size = cfg->batch_size};
    int rc = coord_store_select(store, COORD_TABLE_EPOCHS, sweep, "done", s_warm_epoch_fn, w, err);
    rc = rc ? rc
            : coord_store_select(store, COORD_TABLE_MINIBATCHES, sweep, "done", s_warm_minibatch_fn,
                                 w, err);
    rc = rc ? rc : coord_store_obs_each(store, sweep, s_warm_obs_fn, w, err);
    size_t n = 0;
    for (size_t i = 0; rc == 0 && i < w->n; i++) {
        const s_wrun_t *r = &w->runs[i];
        if (r->first_n > 0 && r->later_samples > 0 && r->cpu_hz > 0) {
            double later_n = ceil((double) r->later_samples / (double) w->batch_size);
            ghz[n] = (double) r->cpu_hz / 1e9;
            extra[n++] = r->first_s - (double) r->first_n * r->later_s / later_n;
        }
    }
    double ghz_s = 0.0, rel_err = 0.0;
    if (rc == 0 && coord_rounds_warmup_estimate(extra, ghz, n, &ghz_s, &rel_err) == 0) {
        coord_rounds_set_warmup(b, ghz_s, rel_err);
        b->warmup_runs = n;
    }
    free(extra);
    free(w);
    return rc;
}

// Models and modes of one board; without both models the board keeps n_modes 0.
static int s_board(coord_store_t *store, const jf_rounds_t *cfg, const jf_board_spec_t *spec,
                   coord_rounds_board_t *b, jf_err_t *err)
{
    jf_board_type_t type = spec->type == JF_BOARD_SIM ? spec->simulates : spec->type;
    *b = (coord_rounds_board_t){.type = type,
                                .budget_w = jf_rounds_budget_w(cfg, spec),
                                .idle_w = jf_rounds_idle_w(cfg, spec),
                                .maxn_mode_id = s_maxn_id(spec, type),
                                .time_scale = 1.0};
    snprintf(b->name, sizeof b->name, "%s", spec->name);
    coord_model_pick_t p = {0};
    int rc = coord_model_pick_newest(store, cfg->workload, spec->name, jf_board_type_name(type), &p,
                                     err);
    if (rc != 0 || !coord_model_pick_is_found(&p)) {
        return rc;
    }
    bool by_type = p.by_type;
    int64_t tid = p.time_id;
    int64_t pid = p.power_id;
    char sweep[COORD_MODEL_TEXT_MAX + 1] = "";
    char unused[COORD_MODEL_TEXT_MAX + 1] = "";
    coord_model_t *tm = s_model(store, tid, sweep, sizeof sweep, err);
    coord_model_t *pm = tm ? s_model(store, pid, unused, sizeof unused, err) : NULL;
    s_seen_t *seen = pm ? calloc(1, sizeof *seen) : NULL;
    rc = !tm || !pm ? -EINVAL : seen ? 0 : jf_err_set(err, -ENOMEM, "out of memory");
    coord_valid_runs_t *kinds = rc == 0 ? coord_valid_runs_new(store, sweep, NULL, err) : NULL;
    rc = rc ? rc : kinds ? 0 : -EIO;
    if (rc == 0) {
        *seen = (s_seen_t){.spec = spec,
                           .workload = cfg->workload,
                           .kinds = kinds,
                           .by_type = by_type,
                           .type = type};
        rc = coord_store_obs_each(store, sweep, s_seen_fn, seen, err);
        rc = rc ? rc : s_fill_modes(seen, cfg, tm, pm, b, err);
        rc = rc || b->n_modes == 0 ? rc : s_warmup(store, sweep, seen, cfg, b, err);
        b->time_model = rc == 0 && b->n_modes ? tid : 0;
        b->power_model = rc == 0 && b->n_modes ? pid : 0;
    }
    coord_valid_runs_destroy(&kinds);
    free(seen);
    coord_model_destroy(&pm);
    coord_model_destroy(&tm);
    return rc;
}

int coord_rounds_boards_load(coord_store_t *store, const jf_rounds_t *cfg,
                             const jf_board_spec_t *const *boards, size_t n,
                             coord_rounds_board_t **ret, size_t *ret_n, jf_err_t *err)
{
    coord_rounds_board_t *out = calloc(n ? n : 1, sizeof *out);
    if (!out) {
        return jf_err_set(err, -ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        int rc = s_board(store, cfg, boards[i], &out[i], err);
        if (rc != 0) {
            coord_rounds_boards_free(&out, n);
            return rc;
        }
    }
    *ret = out;
    *ret_n = n;
    return 0;
}

void coord_rounds_boards_free(coord_rounds_board_t **boards, size_t n)
{
    if (!boards || !*boards) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        free((*boards)[i].modes);
    }
    free(*boards);
    *boards = NULL;
}
