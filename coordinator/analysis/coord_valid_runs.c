/* The valid runs of a sweep (coord_valid_runs.h): sorted run ids and the verdicts' summary. */
#include "coord_valid_runs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef char s_id_t[COORD_OBS_NAME_MAX + 1];

struct coord_valid_runs {
    coord_validity_summary_t summary;
    s_id_t *ids; // owned: the valid runs' ids, sorted
    size_t n_ids;
    size_t cap_ids;
};

static int s_keep(const coord_run_validity_t *v, void *arg)
{
    coord_valid_runs_t *self = arg;
    coord_validity_summary_add(&self->summary, v);
    if (!v->valid) {
        return 0;
    }
    if (self->n_ids == self->cap_ids) {
        size_t want = self->cap_ids ? self->cap_ids * 2 : 16;
        s_id_t *p = realloc(self->ids, want * sizeof *p);
        if (!p) {
            return -ENOMEM;
        }
        self->ids = p;
        self->cap_ids = want;
    }
    memcpy(self->ids[self->n_ids++], v->run, sizeof(s_id_t));
    return 0;
}

static int s_cmp_id(const void *a, const void *b)
{
    return strcmp(a, b);
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
    if (self->n_ids > 1) { // ids is NULL when no run is valid, and qsort wants an array
        qsort(self->ids, self->n_ids, sizeof *self->ids, s_cmp_id);
    }
    return self;
}

void coord_valid_runs_destroy(coord_valid_runs_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    free((*self_p)->ids);
    free(*self_p);
    *self_p = NULL;
}

bool coord_valid_runs_has(const coord_valid_runs_t *self, const char *run)
{
    return self->n_ids > 0 && bsearch(run, self->ids, self->n_ids, sizeof *self->ids, s_cmp_id);
}

const coord_validity_summary_t *coord_valid_runs_summary(const coord_valid_runs_t *self)
{
    return &self->summary;
}
