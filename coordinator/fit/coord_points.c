/* Per-run means of a sweep's measured epochs for the models and Pareto fronts (coord_points.h). */
#include "coord_points.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct s_collect {
    const coord_points_filter_t *f;
    coord_run_mean_t *runs; // owned until handed over
    size_t n;
    size_t cap;
    coord_points_left_t left;
    char last_left[COORD_OBS_NAME_MAX + 1]; // the last run counted in left
    size_t energy_epochs;                   // epochs of the current run with energy
} s_collect_t;

static bool s_match(const coord_points_filter_t *f, const coord_obs_t *o)
{
    return (!f->workload || strcmp(f->workload, o->workload) == 0) &&
           (!f->board || strcmp(f->board, o->board) == 0) &&
           (!f->type || strcmp(f->type, o->board_type) == 0);
}

// Starts a new run record for o. 0 or -ENOMEM.
static int s_start(s_collect_t *c, const coord_obs_t *o)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        coord_run_mean_t *r = realloc(c->runs, cap * sizeof *r);
        if (!r) {
            return -ENOMEM;
        }
        c->runs = r;
        c->cap = cap;
    }
    coord_run_mean_t *r = &c->runs[c->n++];
    memset(r, 0, sizeof *r);
    memcpy(r->run, o->run, sizeof r->run);
    memcpy(r->board, o->board, sizeof r->board);
    r->op = (coord_op_t){.cores = o->cores,
                         .cpu_hz = o->cpu_hz,
                         .gpu_hz = o->gpu_hz,
                         .emc_hz = o->emc_hz,
                         .workers = o->workers,
                         .batch_size = o->batch_size};
    r->has_energy = true;
    c->energy_epochs = 0;
    return 0;
}

static int s_on_obs(const coord_obs_t *o, void *arg)
{
    s_collect_t *c = arg;
    if (!s_match(c->f, o)) {
        return 0;
    }
    bool other = c->f->valid && coord_valid_runs_is_other_kind(c->f->valid, o->run);
    bool invalid = c->f->valid && !coord_valid_runs_has(c->f->valid, o->run);
    if (invalid || !o->has_op) {
        // A run's epochs come together: count it once, at its first epoch.
        if (strcmp(c->last_left, o->run) != 0) {
            *(other ? &c->left.other_kind : invalid ? &c->left.invalid : &c->left.no_op) += 1;
            if (other) { // only then is the verdict known to exist
                c->left.by_kind[coord_valid_runs_verdict(c->f->valid, o->run)->kind]++;
            }
        }
        memcpy(c->last_left, o->run, sizeof c->last_left);
        return 0;
    }
    if ((c->n == 0 || strcmp(c->runs[c->n - 1].run, o->run) != 0) && s_start(c, o) != 0) {
        return -ENOMEM;
    }
    coord_run_mean_t *r = &c->runs[c->n - 1];
    // Running means: the epochs of one run come together, so each record is final when the
    // next run starts.
    r->epochs++;
    r->time_us += ((double) o->e2e_us - r->time_us) / r->epochs;
    r->has_energy = r->has_energy && o->has_energy;
    if (r->has_energy) {
        c->energy_epochs++;
        r->power_mw += (o->avg_power_mw - r->power_mw) / (double) c->energy_epochs;
        r->energy_mj += (o->energy_mj - r->energy_mj) / (double) c->energy_epochs;
    }
    return 0;
}

int coord_points_collect(coord_store_t *store, const char *sweep, const coord_points_filter_t *f,
                         coord_run_mean_t **ret_runs, size_t *ret_n, coord_points_left_t *ret_left,
                         jf_err_t *err)
{
    s_collect_t c = {.f = f};
    int rc = coord_store_obs_each(store, sweep, s_on_obs, &c, err);
    if (rc == -ENOMEM) {
        jf_err_set(err, rc, "reading sweep '%s': out of memory", sweep);
    }
    if (rc != 0) {
        free(c.runs);
        return rc;
    }
    *ret_runs = c.runs;
    *ret_n = c.n;
    *ret_left = c.left;
    return 0;
}

size_t coord_points_of(const coord_run_mean_t *runs, size_t n, coord_target_t target,
                       coord_point_t *ret_pts)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (target != COORD_TARGET_TIME && !runs[i].has_energy) {
            continue;
        }
        double y = target == COORD_TARGET_TIME    ? runs[i].time_us
                   : target == COORD_TARGET_POWER ? runs[i].power_mw
                                                  : runs[i].energy_mj;
        ret_pts[k++] = (coord_point_t){.op = runs[i].op, .y = y};
    }
    return k;
}

bool coord_op_same(const coord_op_t *a, const coord_op_t *b)
{
    return a->cores == b->cores && a->cpu_hz == b->cpu_hz && a->gpu_hz == b->gpu_hz &&
           a->emc_hz == b->emc_hz && a->workers == b->workers && a->batch_size == b->batch_size;
}

int coord_points_modes(const coord_run_mean_t *runs, size_t n, coord_pareto_point_t **ret_modes,
                       size_t *ret_n, jf_err_t *err)
{
    coord_pareto_point_t *m = malloc((n ? n : 1) * sizeof *m);
    size_t *count = calloc(n ? n : 1, sizeof *count);
    if (!m || !count) {
        free(m);
        free(count);
        return jf_err_set(err, -ENOMEM, "modes: out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!runs[i].has_energy) {
            continue;
        }
        size_t j = 0;
        while (j < k && !coord_op_same(&m[j].op, &runs[i].op)) {
            j++;
        }
        if (j == k) {
            m[k++] = (coord_pareto_point_t){.op = runs[i].op};
        }
        double c = (double) ++count[j];
        m[j].time_us += (runs[i].time_us - m[j].time_us) / c;
        m[j].power_mw += (runs[i].power_mw - m[j].power_mw) / c;
        m[j].energy_mj += (runs[i].energy_mj - m[j].energy_mj) / c;
    }
    free(count);
    *ret_modes = m;
    *ret_n = k;
    return 0;
}

// Adds v to the set vals (n of them) unless it is there already.
static void s_add_distinct(int64_t *vals, size_t *n, int64_t v)
{
    for (size_t i = 0; i < *n; i++) {
        if (vals[i] == v) {
            return;
        }
    }
    vals[(*n)++] = v;
}

#define S_AXES 5 // cores, cpu, gpu, emc, (workers, batch) pairs

static int64_t s_axis_value(const coord_op_t *op, int axis)
{
    int64_t v[S_AXES] = {op->cores, op->cpu_hz, op->gpu_hz, op->emc_hz,
                         ((int64_t) op->workers << 32) | (uint32_t) op->batch_size};
    return v[axis];
}

static coord_op_t s_grid_op(int64_t *const *vals, const size_t *count, size_t index)
{
    size_t pick[S_AXES];
    for (int a = S_AXES - 1; a >= 0; a--) {
        pick[a] = index % count[a];
        index /= count[a];
    }
    int64_t wb = vals[4][pick[4]];
    return (coord_op_t){.cores = (int) vals[0][pick[0]],
                        .cpu_hz = vals[1][pick[1]],
                        .gpu_hz = vals[2][pick[2]],
                        .emc_hz = vals[3][pick[3]],
                        .workers = (int) (wb >> 32),
                        .batch_size = (int) (uint32_t) wb};
}

int coord_points_grid(const coord_run_mean_t *runs, size_t n, coord_op_t **ret_ops, size_t *ret_n,
                      jf_err_t *err)
{
    int64_t *vals[S_AXES] = {0};
    size_t count[S_AXES] = {0};
    size_t total = n ? 1 : 0;
    int rc = 0;
    for (int a = 0; a < S_AXES && rc == 0; a++) {
        vals[a] = malloc((n ? n : 1) * sizeof *vals[a]);
        rc = vals[a] ? 0 : jf_err_set(err, -ENOMEM, "grid: out of memory");
        for (size_t i = 0; rc == 0 && i < n; i++) {
            s_add_distinct(vals[a], &count[a], s_axis_value(&runs[i].op, a));
        }
        total = rc == 0 && total <= COORD_GRID_MAX ? total * count[a] : total;
    }
    if (rc == 0 && total > COORD_GRID_MAX) {
        rc = jf_err_set(err, -E2BIG, "the grid of the measured clocks has over %d modes",
                        COORD_GRID_MAX);
    }
    coord_op_t *ops = rc == 0 ? malloc((total ? total : 1) * sizeof *ops) : NULL;
    rc = rc == 0 && !ops ? jf_err_set(err, -ENOMEM, "grid: out of memory") : rc;
    for (size_t i = 0; rc == 0 && i < total; i++) {
        ops[i] = s_grid_op(vals, count, i);
    }
    for (int a = 0; a < S_AXES; a++) {
        free(vals[a]);
    }
    if (rc == 0) {
        *ret_ops = ops;
        *ret_n = total;
    }
    return rc;
}
