/* jetfleet sweep submit --adaptive N: rounds of chosen custom points (coord_adaptive), each
 * submitted as the sweep restricted to the points chosen so far (the coordinator's ordinary
 * submit path: the runs already stored stay, the new ones are added), then time and power models
 * fitted with `jetfleet model fit`. docs/sweeps.md "Adaptive sweeps". */
#include "cli_adaptive.h"

#include "cli_models.h"
#include "coord_adaptive.h"
#include "jf_msg_ctl.h"
#include "jf_sweep.h"
#include "jf_sweep_power.h"
#include "jf_units.h"
#include "jf_yaml.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The sweep file and what the store holds of it.
typedef struct s_plan {
    const char *file;            // borrowed
    jf_sweep_t *sw;              // the full expansion (owned)
    jf_yaml_t *doc;              // the file's tree (owned)
    const jf_yaml_node_t *modes; // its power_modes sequence (borrowed from doc)
    size_t n;                    // power_modes entries: the candidates
    coord_op_t *ops;             // n: each entry's operating point (owned)
    size_t *cand_of_run;         // sw->n_runs: the entry each run is at (owned)
    bool *submitted;             // n: a run of it is in the store's sweep (owned)
    coord_adaptive_obs_t *obs;   // up to n: measured entries, idx into the entries (owned)
    size_t n_obs;
    size_t n_submitted; // entries with a run in the store's sweep
} s_plan_t;

static void s_plan_fini(s_plan_t *p)
{
    jf_sweep_destroy(&p->sw);
    jf_yaml_destroy(&p->doc);
    free(p->ops);
    free(p->cand_of_run);
    free(p->submitted);
    free(p->obs);
    memset(p, 0, sizeof *p);
}

// Each power_modes entry's custom point, with every clock given (the models need them all).
static int s_plan_entries(s_plan_t *p, jf_err_t *err)
{
    p->modes = jf_yaml_node_get(jf_yaml_root(p->doc), "power_modes");
    if (!p->modes || jf_yaml_node_kind(p->modes) != JF_YAML_SEQUENCE) {
        return jf_err_set(err, -EINVAL,
                          "%s: --adaptive needs a power_modes list of custom points to choose "
                          "from; the sweep has %s",
                          p->file, p->modes ? "'power_modes: all'" : "no power_modes");
    }
    p->n = jf_yaml_node_size(p->modes);
    p->ops = calloc(p->n ? p->n : 1, sizeof *p->ops);
    p->submitted = calloc(p->n ? p->n : 1, sizeof *p->submitted);
    p->obs = calloc(p->n ? p->n : 1, sizeof *p->obs);
    if (!p->ops || !p->submitted || !p->obs) {
        return jf_err_set(err, -ENOMEM, "%s: out of memory", p->file);
    }
    for (size_t i = 0; i < p->n; i++) {
        const jf_yaml_node_t *item = jf_yaml_node_item(p->modes, i);
        jf_sweep_custom_t c = {0};
        bool custom = jf_yaml_node_kind(item) == JF_YAML_MAPPING &&
                      jf_sweep_custom_parse(item, &c, NULL) == 0;
        if (!custom || c.point.gpu_hz == 0 || c.point.emc_hz == 0) {
            return jf_err_set(err, -EINVAL,
                              "%s:%d:%d: --adaptive needs every power_modes entry to be a custom "
                              "point with cores, cpu_freq, gpu_freq and emc_freq",
                              p->file, jf_yaml_node_line(item), jf_yaml_node_column(item));
        }
        p->ops[i] = (coord_op_t){.cores = c.point.n_cores,
                                 .cpu_hz = c.point.cpu_hz,
                                 .gpu_hz = c.point.gpu_hz,
                                 .emc_hz = c.point.emc_hz};
    }
    return 0;
}

static bool s_run_at(const jf_run_spec_t *r, const coord_op_t *op)
{
    return r->custom.n_cores == op->cores && r->custom.cpu_hz == op->cpu_hz &&
           r->custom.gpu_hz == op->gpu_hz && r->custom.emc_hz == op->emc_hz;
}

// One board, one workload, one loader configuration: the models are per board and workload.
static int s_plan_runs(s_plan_t *p, jf_err_t *err)
{
    const jf_run_spec_t *r0 = &p->sw->runs[0];
    p->cand_of_run = calloc(p->sw->n_runs, sizeof *p->cand_of_run);
    if (!p->cand_of_run) {
        return jf_err_set(err, -ENOMEM, "%s: out of memory", p->file);
    }
    for (size_t r = 0; r < p->sw->n_runs; r++) {
        const jf_run_spec_t *s = &p->sw->runs[r];
        if (strcmp(s->board, r0->board) != 0 || strcmp(s->workload, r0->workload) != 0 ||
            s->workers != r0->workers || s->batch_size != r0->batch_size || s->dvfs_off) {
            return jf_err_set(err, -EINVAL,
                              "%s: --adaptive profiles one board and one workload with one "
                              "workers value and batch size (DVFS on); this sweep has more",
                              p->file);
        }
        p->cand_of_run[r] = SIZE_MAX;
        for (size_t i = 0; i < p->n && p->cand_of_run[r] == SIZE_MAX; i++) {
            p->cand_of_run[r] = s_run_at(s, &p->ops[i]) ? i : SIZE_MAX;
        }
    }
    for (size_t i = 0; i < p->n; i++) {
        p->ops[i].workers = r0->workers;
        p->ops[i].batch_size = r0->batch_size;
    }
    return 0;
}

static int s_plan_load(cli_ctx_t *ctx, const char *file, s_plan_t *p, jf_err_t *err)
{
    *p = (s_plan_t){.file = file};
    const jf_fleet_config_t *fleet = cli_ctx_fleet(ctx, err);
    p->sw = fleet ? jf_sweep_load(file, fleet, err) : NULL; // errors with their positions
    if (!p->sw) {
        return fleet ? err->code : -EIO;
    }
    if (p->sw->n_runs == 0 || p->sw->skips.no_power_mode > 0) {
        return jf_err_set(err, -EINVAL,
                          "%s: --adaptive needs every power mode runnable on the board (%zu runs, "
                          "%zu left out for the power mode)",
                          file, p->sw->n_runs, p->sw->skips.no_power_mode);
    }
    p->doc = jf_yaml_load(file, JF_SWEEP_FILE_MAX_BYTES, err);
    int rc = p->doc ? s_plan_entries(p, err) : err->code;
    return rc ? rc : s_plan_runs(p, err);
}

// The entry a stored run id is at, or SIZE_MAX.
static size_t s_cand_of_id(const s_plan_t *p, const char *run)
{
    for (size_t r = 0; run && r < p->sw->n_runs; r++) {
        if (strcmp(p->sw->runs[r].run_id, run) == 0) {
            return p->cand_of_run[r];
        }
    }
    return SIZE_MAX;
}

static int s_on_stored_run(int ncols, const char *const *names, const char *const *values,
                           const coord_value_kind_t *kinds, void *arg)
{
    (void) kinds;
    s_plan_t *p = arg;
    for (int i = 0; i < ncols; i++) {
        size_t c = strcmp(names[i], "run") == 0 ? s_cand_of_id(p, values[i]) : SIZE_MAX;
        if (c != SIZE_MAX) {
            p->submitted[c] = true;
        }
    }
    return 0;
}

// The per-entry means of the valid done runs (jetfleet check's), time and power.
static int s_collect_obs(cli_ctx_t *ctx, coord_store_t *store, s_plan_t *p, jf_err_t *err)
{
    coord_points_filter_t f = {.workload = p->sw->runs[0].workload, .board = p->sw->runs[0].board};
    coord_run_mean_t *runs = NULL;
    size_t n = 0;
    coord_points_left_t left = {0};
    int rc = cli_models_runs(ctx, store, p->sw->name, &f, &runs, &n, &left, err);
    double *t = calloc(p->n ? p->n : 1, sizeof *t), *w = calloc(p->n ? p->n : 1, sizeof *w);
    int *k = calloc(p->n ? p->n : 1, sizeof *k);
    rc = rc == -ENOENT ? 0 : rc; // nothing measured yet
    rc = rc ? rc : (t && w && k ? 0 : jf_err_set(err, -ENOMEM, "out of memory"));
    for (size_t r = 0; rc == 0 && r < n; r++) {
        size_t c = s_cand_of_id(p, runs[r].run);
        if (c != SIZE_MAX && runs[r].has_energy) {
            t[c] += runs[r].time_us;
            w[c] += runs[r].power_mw;
            k[c]++;
        }
    }
    p->n_obs = 0;
    for (size_t c = 0; rc == 0 && c < p->n; c++) {
        if (k[c] > 0) {
            p->obs[p->n_obs++] =
                (coord_adaptive_obs_t){.idx = c, .time_us = t[c] / k[c], .power_mw = w[c] / k[c]};
        }
    }
    free(runs);
    free(t);
    free(w);
    free(k);
    return rc;
}

// What the store has: which entries were submitted, which measured. Returns how many submitted.
static int s_refresh(cli_ctx_t *ctx, s_plan_t *p, size_t *ret_submitted, jf_err_t *err)
{
    coord_store_t *store = cli_ctx_store(ctx, err);
    if (!store) {
        return -EIO;
    }
    memset(p->submitted, 0, p->n * sizeof *p->submitted);
    int rc =
        coord_store_select(store, COORD_TABLE_RUNS, p->sw->name, NULL, s_on_stored_run, p, err);
    rc = rc ? rc : s_collect_obs(ctx, store, p, err);
    size_t n = 0;
    for (size_t c = 0; rc == 0 && c < p->n; c++) {
        n += p->submitted[c];
    }
    if (rc == 0) {
        *ret_submitted = n;
        p->n_submitted = n;
    }
    return rc;
}

static json_t *s_node_json(const jf_yaml_node_t *node)
{
    switch (jf_yaml_node_kind(node)) {
    case JF_YAML_SCALAR:
        return json_string(jf_yaml_node_text(node));
    case JF_YAML_SEQUENCE: {
        json_t *a = json_array();
        for (size_t i = 0; a && i < jf_yaml_node_size(node); i++) {
            (void) json_array_append_new(a, s_node_json(jf_yaml_node_item(node, i)));
        }
        return a;
    }
    case JF_YAML_MAPPING: {
        json_t *o = json_object();
        for (size_t i = 0; o && i < jf_yaml_node_size(node); i++) {
            (void) json_object_set_new(o, jf_yaml_node_text(jf_yaml_node_key(node, i)),
                                       s_node_json(jf_yaml_node_value(node, i)));
        }
        return o;
    }
    }
    return NULL;
}

// The sweep file with power_modes restricted to the submitted entries, as JSON text (YAML reads
// JSON; every scalar becomes a string, which the sweep loader reads as it reads plain text).
// Caller frees; NULL when out of memory.
static char *s_subset_yaml(const s_plan_t *p)
{
    json_t *root = s_node_json(jf_yaml_root(p->doc)), *modes = json_array();
    for (size_t i = 0; modes && i < p->n; i++) {
        if (p->submitted[i]) {
            (void) json_array_append_new(modes, s_node_json(jf_yaml_node_item(p->modes, i)));
        }
    }
    char *text = NULL;
    if (root && modes && json_object_set(root, "power_modes", modes) == 0) {
        text = json_dumps(root, JSON_PRESERVE_ORDER | JSON_INDENT(1));
    }
    json_decref(root);
    json_decref(modes);
    return text;
}

static void s_print_pick(const s_plan_t *p, const coord_adaptive_pick_t *k)
{
    const coord_op_t *op = &p->ops[k->idx];
    printf("  mode=%zu cores=%d cpu_mhz=%.1f gpu_mhz=%.2f emc_mhz=%.0f reason=%s score=%.4g\n",
           k->idx + 1, op->cores, (double) op->cpu_hz / 1e6, (double) op->gpu_hz / 1e6,
           (double) op->emc_hz / 1e6, coord_adaptive_reason_name(k->reason), k->score);
}

// Chooses the next round among the entries not yet submitted (an entry submitted but without a
// valid measurement is not chosen again), and marks them submitted. *ret_n: how many.
static int s_choose(s_plan_t *p, const cli_adaptive_opts_t *o, size_t round, size_t *ret_n,
                    jf_err_t *err)
{
    size_t n_sub = p->n_submitted;
    size_t want = n_sub == 0 ? coord_adaptive_min_points() : o->batch;
    want = want < o->n - n_sub ? want : o->n - n_sub;
    size_t *map = calloc(p->n, sizeof *map), m = 0, got = 0;
    coord_op_t *cands = calloc(p->n, sizeof *cands);
    coord_adaptive_obs_t *obs = calloc(p->n_obs ? p->n_obs : 1, sizeof *obs);
    coord_adaptive_pick_t *picks = calloc(want, sizeof *picks);
    int rc = map && cands && obs && picks ? 0 : jf_err_set(err, -ENOMEM, "out of memory");
    for (size_t i = 0, j = 0; rc == 0 && i < p->n; i++) {
        bool measured = j < p->n_obs && p->obs[j].idx == i; // obs are in entry order
        if (measured) {
            obs[j] = p->obs[j];
            obs[j++].idx = m;
        }
        if (measured || !p->submitted[i]) {
            cands[m] = p->ops[i];
            map[m++] = i;
        }
    }
    coord_adaptive_opts_t ao = {.seed = o->seed, .batch = want};
    rc = rc ? rc : coord_adaptive_choose(&ao, cands, m, obs, p->n_obs, picks, &got, err);
    if (rc == 0) {
        printf("round %zu: %zu modes measured and valid, %zu submitted; chose %zu\n", round,
               p->n_obs, n_sub, got);
    }
    for (size_t i = 0; rc == 0 && i < got; i++) {
        picks[i].idx = map[picks[i].idx];
        p->submitted[picks[i].idx] = true;
        s_print_pick(p, &picks[i]);
    }
    *ret_n = got;
    free(map);
    free(cands);
    free(obs);
    free(picks);
    return rc;
}

static int s_submit(cli_ctx_t *ctx, const s_plan_t *p, jf_err_t *err)
{
    char *yaml = s_subset_yaml(p);
    json_t *data = NULL;
    if (!yaml || strlen(yaml) > JF_CTL_YAML_MAX) {
        free(yaml);
        return jf_err_set(err, -E2BIG, "%s: the sweep restricted to the chosen modes is too large",
                          p->file);
    }
    int rc = cli_ctx_request(ctx, jf_msg_ctl_submit_new(1, p->file, yaml), &data, err);
    if (rc == 0) {
        printf("submitted sweep '%s': %lld runs (%lld new)\n", p->sw->name,
               json_integer_value(json_object_get(data, "runs")),
               json_integer_value(json_object_get(data, "added")));
    }
    json_decref(data);
    free(yaml);
    return rc;
}

static int s_fit(cli_ctx_t *ctx, const s_plan_t *p, const char *target)
{
    char *argv[] = {"fit",
                    "--sweep",
                    p->sw->name,
                    "--workload",
                    p->sw->runs[0].workload,
                    "--board",
                    p->sw->runs[0].board,
                    "--target",
                    (char *) target,
                    NULL};
    return cli_cmd_model(ctx, 9, argv);
}

static int s_fit_all(cli_ctx_t *ctx, const s_plan_t *p)
{
    int rc = s_fit(ctx, p, "time");
    rc = rc ? rc : s_fit(ctx, p, "power");
    size_t need = coord_model_min_points(COORD_MODEL_LINEAR, COORD_TARGET_ENERGY);
    if (rc == 0 && p->n_obs >= need) {
        rc = s_fit(ctx, p, "energy");
    } else if (rc == 0) {
        printf("energy: no model (%zu valid modes, a linear energy model needs %zu); pareto "
               "--predicted and recommend use time x power\n",
               p->n_obs, need);
    }
    return rc;
}

static int s_check_n(const s_plan_t *p, const cli_adaptive_opts_t *o)
{
    if (o->n < coord_adaptive_min_points()) {
        return cli_fail(CLI_EXIT_USAGE,
                        "--adaptive %zu: too few modes to fit time and power models, need at "
                        "least %zu",
                        o->n, coord_adaptive_min_points());
    }
    if (o->n > p->n) {
        return cli_fail(CLI_EXIT_USAGE,
                        "--adaptive %zu: sweep '%s' has only %zu power modes (%s); run it "
                        "without --adaptive to profile them all",
                        o->n, p->sw->name, p->n, p->file);
    }
    return CLI_EXIT_OK;
}

static int64_t s_left_us(int64_t deadline_us)
{
    if (deadline_us == 0) {
        return 0;
    }
    int64_t left = deadline_us - jf_clock_mono_us();
    return left > 0 ? left : 1;
}

// The rounds: refresh from the store, choose, submit, wait; until o->n entries are submitted.
static int s_rounds(cli_ctx_t *ctx, s_plan_t *p, const cli_adaptive_opts_t *o, jf_err_t *err)
{
    int64_t deadline = o->timeout_us ? jf_clock_mono_us() + o->timeout_us : 0;
    size_t n_sub = 0, got = 0;
    int rc = s_refresh(ctx, p, &n_sub, err);
    int code = rc == 0 && n_sub > 0 ? cli_sweep_wait(ctx, p->sw->name, s_left_us(deadline), true)
                                    : CLI_EXIT_OK; // runs of an earlier, interrupted loop
    rc = rc == 0 && code == CLI_EXIT_OK ? s_refresh(ctx, p, &n_sub, err) : rc;
    for (size_t round = 1; rc == 0 && code == CLI_EXIT_OK && n_sub < o->n; round++) {
        rc = s_choose(p, o, round, &got, err);
        rc = rc ? rc : (got ? s_submit(ctx, p, err) : -ENOENT);
        code = rc ? code : cli_sweep_wait(ctx, p->sw->name, s_left_us(deadline), true);
        rc = rc == 0 && code == CLI_EXIT_OK ? s_refresh(ctx, p, &n_sub, err) : rc;
    }
    if (rc == -ENOENT) {
        jf_err_set(err, rc, "sweep '%s': no modes left to choose", p->sw->name);
    }
    return rc ? -1 : code;
}

int cli_adaptive_submit(cli_ctx_t *ctx, const char *file, const cli_adaptive_opts_t *opts)
{
    jf_err_t err = {0};
    s_plan_t p = {0};
    int rc = s_plan_load(ctx, file, &p, &err);
    if (rc != 0) {
        s_plan_fini(&p);
        return cli_fail(rc == -EINVAL || rc == -EFBIG ? CLI_EXIT_USAGE : CLI_EXIT_ERROR, "%s",
                        err.msg);
    }
    int code = s_check_n(&p, opts);
    code = code ? code : s_rounds(ctx, &p, opts, &err);
    if (code < 0) {
        code = cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    if (code == CLI_EXIT_OK) {
        printf("profiled %zu of %zu modes (%zu measured and valid); fitting on the valid ones\n",
               p.n_submitted, p.n, p.n_obs);
        code = s_fit_all(ctx, &p);
    }
    s_plan_fini(&p);
    return code;
}
