/* Board-to-board variability (coord_variability.h): groups of boards that ran the same
 * configuration, the boards' means and repeat CVs, and the statistics across the boards. */
#include "coord_variability.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define S_GROW_MIN 8 // first capacity of every growing array

static const char *const s_metric_names[COORD_METRIC_COUNT] = {"e2e", "stall", "compute", "energy"};

// One repeat of a board: its epochs' sums per metric.
typedef struct s_repeat {
    int repeat;                     // repeat index
    double sum[COORD_METRIC_COUNT]; // sum over its epochs (µs or mJ)
    size_t n[COORD_METRIC_COUNT];   // epochs that had the metric
    size_t epochs;                  // epochs added
} s_repeat_t;

typedef struct s_board {
    coord_var_board_t pub; // what the header shows
    s_repeat_t *reps;      // owned
    size_t n_reps;         // repeats seen
    size_t cap_reps;       // repeats allocated
} s_board_t;

typedef struct s_group {
    coord_var_group_t pub; // what the header shows; pub.n_boards counts boards
    s_board_t *boards;     // owned
    size_t cap_boards;     // boards allocated
} s_group_t;

struct coord_variability {
    s_group_t *groups; // owned
    size_t n_groups;   // groups seen
    size_t cap_groups; // groups allocated
    size_t last;       // group of the last epoch added: epochs of one run come together
};

const char *coord_metric_name(coord_metric_t metric)
{
    return metric < COORD_METRIC_COUNT ? s_metric_names[metric] : "?";
}

bool coord_metric_parse(const char *name, coord_metric_t *ret_metric)
{
    for (int m = 0; m < COORD_METRIC_COUNT; m++) {
        if (strcmp(name, s_metric_names[m]) == 0) {
            *ret_metric = (coord_metric_t) m;
            return true;
        }
    }
    return false;
}

coord_variability_t *coord_variability_new(jf_err_t *err)
{
    coord_variability_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "variability: out of memory");
    }
    return self;
}

void coord_variability_destroy(coord_variability_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    coord_variability_t *self = *self_p;
    for (size_t g = 0; g < self->n_groups; g++) {
        for (size_t b = 0; b < self->groups[g].pub.n_boards; b++) {
            free(self->groups[g].boards[b].reps);
        }
        free(self->groups[g].boards);
    }
    free(self->groups);
    free(self);
    *self_p = NULL;
}

// Makes room for one more element in *arr (n used of *cap, size bytes each); 0 or -ENOMEM.
static int s_reserve(void **arr, size_t n, size_t *cap, size_t size)
{
    if (n < *cap) {
        return 0;
    }
    size_t want = *cap ? *cap * 2 : S_GROW_MIN;
    void *p = realloc(*arr, want * size);
    if (!p) {
        return -ENOMEM;
    }
    memset((char *) p + *cap * size, 0, (want - *cap) * size);
    *arr = p;
    *cap = want;
    return 0;
}

static bool s_same_config(const coord_var_group_t *g, const coord_obs_t *o)
{
    return strcmp(g->board_type, o->board_type) == 0 && strcmp(g->workload, o->workload) == 0 &&
           strcmp(g->power_mode, o->power_mode) == 0 && strcmp(g->storage, o->storage) == 0 &&
           g->workers == o->workers && g->batch_size == o->batch_size &&
           g->dvfs_off == o->dvfs_off && strcmp(g->runtime, o->runtime) == 0;
}

static s_group_t *s_group_for(coord_variability_t *self, const coord_obs_t *o)
{
    if (self->last < self->n_groups && s_same_config(&self->groups[self->last].pub, o)) {
        return &self->groups[self->last];
    }
    for (size_t g = 0; g < self->n_groups; g++) {
        if (s_same_config(&self->groups[g].pub, o)) {
            self->last = g;
            return &self->groups[g];
        }
    }
    if (s_reserve((void **) &self->groups, self->n_groups, &self->cap_groups,
                  sizeof *self->groups) != 0) {
        return NULL;
    }
    coord_var_group_t *g = &self->groups[self->n_groups].pub;
    memcpy(g->board_type, o->board_type, sizeof g->board_type);
    memcpy(g->workload, o->workload, sizeof g->workload);
    memcpy(g->power_mode, o->power_mode, sizeof g->power_mode);
    memcpy(g->storage, o->storage, sizeof g->storage);
    g->workers = o->workers;
    g->batch_size = o->batch_size;
    g->dvfs_off = o->dvfs_off;
    memcpy(g->runtime, o->runtime, sizeof g->runtime);
    self->last = self->n_groups++;
    return &self->groups[self->last];
}

static s_board_t *s_board_for(s_group_t *g, const coord_obs_t *o)
{
    for (size_t b = 0; b < g->pub.n_boards; b++) {
        if (strcmp(g->boards[b].pub.board, o->board) == 0) {
            return &g->boards[b];
        }
    }
    if (s_reserve((void **) &g->boards, g->pub.n_boards, &g->cap_boards, sizeof *g->boards) != 0) {
        return NULL;
    }
    s_board_t *b = &g->boards[g->pub.n_boards++];
    memcpy(b->pub.board, o->board, sizeof b->pub.board);
    memcpy(b->pub.platform, o->platform, sizeof b->pub.platform);
    g->pub.any_sim = g->pub.any_sim || strcmp(o->platform, "sim") == 0;
    return b;
}

static s_repeat_t *s_repeat_for(s_board_t *b, int repeat)
{
    for (size_t r = 0; r < b->n_reps; r++) {
        if (b->reps[r].repeat == repeat) {
            return &b->reps[r];
        }
    }
    if (s_reserve((void **) &b->reps, b->n_reps, &b->cap_reps, sizeof *b->reps) != 0) {
        return NULL;
    }
    b->reps[b->n_reps].repeat = repeat;
    return &b->reps[b->n_reps++];
}

int coord_variability_add(coord_variability_t *self, const coord_obs_t *obs, jf_err_t *err)
{
    if (obs->e2e_us < 0 || obs->fetch_stall_us < 0 || obs->compute_us < 0) {
        return jf_err_set(err, -EINVAL, "variability: run '%s' epoch %d has a negative time",
                          obs->run, obs->epoch);
    }
    s_group_t *g = s_group_for(self, obs);
    s_board_t *b = g ? s_board_for(g, obs) : NULL;
    s_repeat_t *r = b ? s_repeat_for(b, obs->repeat) : NULL;
    if (!r) {
        return jf_err_set(err, -ENOMEM, "variability: out of memory");
    }
    double v[COORD_METRIC_COUNT] = {(double) obs->e2e_us, (double) obs->fetch_stall_us,
                                    (double) obs->compute_us, obs->energy_mj};
    for (int m = 0; m < COORD_METRIC_COUNT; m++) {
        if (m != COORD_METRIC_ENERGY || obs->has_energy) {
            r->sum[m] += v[m];
            r->n[m]++;
        }
    }
    r->epochs++;
    return 0;
}

// A board's mean per epoch (pooled over its repeats) and the CV of its repeats' means.
static int s_board_figures(s_board_t *b, coord_metric_t m, double *work, jf_err_t *err)
{
    coord_var_board_t *p = &b->pub;
    double sum = 0.0;
    size_t n = 0;
    size_t with = 0;
    p->epochs = 0;
    p->repeats = b->n_reps;
    for (size_t r = 0; r < b->n_reps; r++) {
        const s_repeat_t *rep = &b->reps[r];
        p->epochs += rep->epochs;
        sum += rep->sum[m];
        n += rep->n[m];
        if (rep->n[m] == rep->epochs && rep->epochs > 0) {
            work[with++] = rep->sum[m] / (double) rep->n[m];
        }
    }
    // A metric missing on any epoch (energy not readable then) is left out for the whole
    // board rather than averaged over the epochs that happen to have it.
    p->has[m] = n == p->epochs && n > 0;
    p->mean[m] = p->has[m] ? sum / (double) n : 0.0;
    coord_stats_t s = {0};
    p->has_repeat_cv[m] = false;
    if (p->has[m] && with >= 2) {
        int rc = coord_stats_compute(work, with, &s, err);
        if (rc != 0) {
            return rc;
        }
        p->has_repeat_cv[m] = s.has_cv;
        p->repeat_cv_pct[m] = s.cv_pct;
    }
    return 0;
}

// The boards' means flagged by the modified z-score, once the group's statistics are known.
static void s_flag_boards(s_group_t *g, coord_metric_t m)
{
    coord_var_metric_t *vm = &g->pub.metric[m];
    for (size_t b = 0; b < g->pub.n_boards; b++) {
        coord_var_board_t *p = &g->boards[b].pub;
        p->has_z[m] = p->has[m] && coord_stats_modified_z(&vm->between, p->mean[m], &p->z[m]);
        p->outlier[m] = p->has_z[m] && p->z[m] > COORD_STATS_OUTLIER_Z;
        vm->outliers += p->outlier[m];
    }
}

static int s_group_metric(s_group_t *g, coord_metric_t m, double *work, jf_err_t *err)
{
    coord_var_metric_t *vm = &g->pub.metric[m];
    *vm = (coord_var_metric_t){0};
    size_t n = 0;
    size_t n_cv = 0;
    for (size_t b = 0; b < g->pub.n_boards; b++) {
        const coord_var_board_t *p = &g->boards[b].pub;
        if (p->has[m]) {
            work[n++] = p->mean[m];
        }
    }
    vm->has = n >= 2;
    int rc = vm->has ? coord_stats_compute(work, n, &vm->between, err) : 0;
    if (rc != 0 || !vm->has) {
        return rc;
    }
    vm->has_spread = vm->between.min > 0.0;
    vm->spread_ratio = vm->has_spread ? vm->between.max / vm->between.min : 0.0;
    vm->spread_pct = vm->has_spread ? 100.0 * (vm->spread_ratio - 1.0) : 0.0;
    s_flag_boards(g, m);
    for (size_t b = 0; b < g->pub.n_boards; b++) {
        const coord_var_board_t *p = &g->boards[b].pub;
        if (p->has[m] && p->has_repeat_cv[m]) {
            work[n_cv++] = p->repeat_cv_pct[m];
        }
    }
    vm->repeat_cv_boards = n_cv;
    vm->repeat_cv_median_pct = n_cv ? coord_stats_median_sort(work, n_cv) : 0.0;
    return 0;
}

static int s_group_compute(s_group_t *g, double *work, jf_err_t *err)
{
    int rc = 0;
    for (int m = 0; rc == 0 && m < COORD_METRIC_COUNT; m++) {
        for (size_t b = 0; rc == 0 && b < g->pub.n_boards; b++) {
            rc = s_board_figures(&g->boards[b], (coord_metric_t) m, work, err);
        }
        rc = rc == 0 ? s_group_metric(g, (coord_metric_t) m, work, err) : rc;
    }
    return rc;
}

int coord_variability_compute(coord_variability_t *self, jf_err_t *err)
{
    size_t most = 1;
    for (size_t g = 0; g < self->n_groups; g++) {
        const s_group_t *grp = &self->groups[g];
        most = grp->pub.n_boards > most ? grp->pub.n_boards : most;
        for (size_t b = 0; b < grp->pub.n_boards; b++) {
            most = grp->boards[b].n_reps > most ? grp->boards[b].n_reps : most;
        }
    }
    double *work = malloc(most * sizeof *work);
    if (!work) {
        return jf_err_set(err, -ENOMEM, "variability: out of memory");
    }
    int rc = 0;
    for (size_t g = 0; rc == 0 && g < self->n_groups; g++) {
        rc = s_group_compute(&self->groups[g], work, err);
    }
    free(work);
    return rc;
}

size_t coord_variability_groups(const coord_variability_t *self)
{
    return self->n_groups;
}

const coord_var_group_t *coord_variability_group(const coord_variability_t *self, size_t i)
{
    return i < self->n_groups ? &self->groups[i].pub : NULL;
}

const coord_var_board_t *coord_variability_board(const coord_variability_t *self, size_t group,
                                                 size_t board)
{
    if (group >= self->n_groups || board >= self->groups[group].pub.n_boards) {
        return NULL;
    }
    return &self->groups[group].boards[board].pub;
}
