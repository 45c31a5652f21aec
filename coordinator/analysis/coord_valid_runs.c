/* The valid runs of a sweep (coord_valid_runs.h): every verdict, sorted by run id, and their
 * summary. */
#include "coord_valid_runs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct coord_valid_runs {
    coord_validity_summary_t summary;
    coord_run_validity_t *verdicts; // owned: every checked run's verdict, sorted by run id
    size_t n_verdicts;
    size_t cap_verdicts;
    bool keep[COORD_RUN_KIND_COUNT];   // the kinds has() keeps
    size_t left[COORD_RUN_KIND_COUNT]; // runs left out for their kind
};

// The summary and the left-out counts from the verdicts and the kept kinds.
static void s_count(coord_valid_runs_t *self)
{
    memset(&self->summary, 0, sizeof self->summary);
    memset(self->left, 0, sizeof self->left);
    for (size_t i = 0; i < self->n_verdicts; i++) {
        const coord_run_validity_t *v = &self->verdicts[i];
        if (self->keep[v->kind]) {
            coord_validity_summary_add(&self->summary, v);
        } else {
            self->left[v->kind]++;
        }
    }
}

static int s_keep(const coord_run_validity_t *v, void *arg)
{
    coord_valid_runs_t *self = arg;
    if (self->n_verdicts == self->cap_verdicts) {
        size_t want = self->cap_verdicts ? self->cap_verdicts * 2 : 16;
        coord_run_validity_t *p = realloc(self->verdicts, want * sizeof *p);
        if (!p) {
            return -ENOMEM;
        }
        self->verdicts = p;
        self->cap_verdicts = want;
    }
    self->verdicts[self->n_verdicts++] = *v;
    return 0;
}

// Compares a run id (or a verdict) with a verdict by run id: the run id is a verdict's first
// member, so both sides can be read as strings.
static int s_cmp_id(const void *a, const void *b)
{
    return strcmp(a, ((const coord_run_validity_t *) b)->run);
}

static int s_cmp_verdict(const void *a, const void *b)
{
    return strcmp(((const coord_run_validity_t *) a)->run, ((const coord_run_validity_t *) b)->run);
}

coord_valid_runs_t *coord_valid_runs_new(coord_store_t *store, const char *sweep,
                                         const coord_validity_opts_t *opts, jf_err_t *err)
{
    coord_valid_runs_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "validity: out of memory");
        return NULL;
    }
    int rc = coord_validity_check_sweep(store, sweep, opts, s_keep, self, err);
    if (rc == -ENOMEM && err && !err->msg[0]) {
        jf_err_set(err, rc, "validity: out of memory");
    }
    if (rc != 0) {
        coord_valid_runs_destroy(&self);
        return NULL;
    }
    if (self->n_verdicts > 1) { // verdicts is NULL without runs, and qsort wants an array
        qsort(self->verdicts, self->n_verdicts, sizeof *self->verdicts, s_cmp_verdict);
    }
    self->keep[COORD_RUN_TRAINING] = true;
    s_count(self);
    return self;
}

void coord_valid_runs_destroy(coord_valid_runs_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    free((*self_p)->verdicts);
    free(*self_p);
    *self_p = NULL;
}

const coord_run_validity_t *coord_valid_runs_verdict(const coord_valid_runs_t *self,
                                                     const char *run)
{
    if (self->n_verdicts == 0 || !run) {
        return NULL;
    }
    return bsearch(run, self->verdicts, self->n_verdicts, sizeof *self->verdicts, s_cmp_id);
}

void coord_valid_runs_keep_kind(coord_valid_runs_t *self, coord_run_kind_t kind)
{
    if (kind >= 0 && kind < COORD_RUN_KIND_COUNT) {
        self->keep[kind] = true;
        s_count(self);
    }
}

bool coord_valid_runs_has(const coord_valid_runs_t *self, const char *run)
{
    const coord_run_validity_t *v = coord_valid_runs_verdict(self, run);
    return v && v->valid && self->keep[v->kind];
}

bool coord_valid_runs_is_other_kind(const coord_valid_runs_t *self, const char *run)
{
    const coord_run_validity_t *v = coord_valid_runs_verdict(self, run);
    return v && !self->keep[v->kind];
}

const size_t *coord_valid_runs_left_kinds(const coord_valid_runs_t *self)
{
    return self->left;
}

size_t coord_valid_runs_left_kinds_total(const coord_valid_runs_t *self)
{
    size_t n = 0;
    for (int k = 0; k < COORD_RUN_KIND_COUNT; k++) {
        n += self->left[k];
    }
    return n;
}

void coord_valid_runs_kinds_format(const coord_valid_runs_t *self, char *buf, size_t size)
{
    if (size == 0) {
        return;
    }
    buf[0] = '\0';
    size_t used = 0;
    for (int k = 0; k < COORD_RUN_KIND_COUNT && used < size; k++) {
        if (self->left[k] > 0) {
            int n = snprintf(buf + used, size - used, "%s%s %zu",
                             used ? ", " : "not training, left out: ",
                             coord_run_kind_name((coord_run_kind_t) k), self->left[k]);
            used += n > 0 ? (size_t) n : 0;
        }
    }
}

const coord_validity_summary_t *coord_valid_runs_summary(const coord_valid_runs_t *self)
{
    return &self->summary;
}
