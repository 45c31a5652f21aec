/* A board's rooflines, measured runs and workload work for the CLI (cli_roofline.h). */
#include "cli_roofline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct s_benches {
    coord_roofline_bench_t *rows;
    size_t n, cap;
} s_benches_t;

// Grows *rows (n used of *cap) by one; returns the new slot or NULL when out of memory.
static void *s_grow(void **rows, size_t *n, size_t *cap, size_t size)
{
    if (*n == *cap) {
        size_t cap2 = *cap ? 2 * *cap : 8;
        void *p = realloc(*rows, cap2 * size);
        if (!p) {
            return NULL;
        }
        *rows = p;
        *cap = cap2;
    }
    return (char *) *rows + (*n)++ * size;
}

static int s_add_bench(const coord_roofline_bench_t *b, void *arg)
{
    s_benches_t *s = arg;
    coord_roofline_bench_t *slot = s_grow((void **) &s->rows, &s->n, &s->cap, sizeof *slot);
    if (!slot) {
        return -ENOMEM;
    }
    *slot = *b;
    return 0;
}

typedef struct s_measured {
    cli_roofline_set_t *set;
    size_t cap;
} s_measured_t;

static int s_add_measured(const coord_roofline_measured_t *m, void *arg)
{
    s_measured_t *s = arg;
    coord_roofline_measured_t *slot =
        s_grow((void **) &s->set->measured, &s->set->n_measured, &s->cap, sizeof *slot);
    if (!slot) {
        return -ENOMEM;
    }
    *slot = *m;
    return 0;
}

// One roofline per power label: CUDA's benchmarks where the setting has them, else the CPU's.
static int s_roofs(cli_roofline_set_t *set, const s_benches_t *b)
{
    size_t cap = 0;
    for (size_t i = 0; i < b->n;) {
        const char *device = "cpu";
        size_t j = coord_roofline_group(b->rows, b->n, i, &device);
        coord_roofline_t r;
        jf_err_t err = {0};
        if (coord_roofline_from_benches(&b->rows[i], j - i, device, &r, &err) != 0) {
            (void) fprintf(stderr, "jetfleet: roofline: skipping '%s': %s\n", b->rows[i].power,
                           err.msg);
        } else {
            coord_roofline_t *slot = s_grow((void **) &set->roofs, &set->n_roofs, &cap, sizeof r);
            if (!slot) {
                return -ENOMEM;
            }
            *slot = r;
        }
        i = j;
    }
    return 0;
}

int cli_roofline_load(coord_store_t *store, const char *board, const char *power,
                      cli_roofline_set_t *ret_set, jf_err_t *err)
{
    memset(ret_set, 0, sizeof *ret_set);
    s_benches_t b = {0};
    int rc = coord_store_roofline_benches(store, board, power, s_add_bench, &b, err);
    rc = rc == 0 ? s_roofs(ret_set, &b) : rc;
    free(b.rows);
    if (rc == 0 && ret_set->n_roofs == 0) {
        return jf_err_set(err, -ENOENT,
                          "board '%s' has no roofline%s%s in the store: run a sweep with "
                          "'roofline: true' on it (docs/roofline.md)",
                          board, power ? " in " : "", power ? power : "");
    }
    s_measured_t m = {.set = ret_set};
    rc = rc == 0 ? coord_store_roofline_measured(store, board, power, s_add_measured, &m, err) : rc;
    return rc == -ENOMEM ? jf_err_set(err, -ENOMEM, "roofline: out of memory") : rc;
}

void cli_roofline_fini(cli_roofline_set_t *self)
{
    free(self->roofs);
    free(self->measured);
    memset(self, 0, sizeof *self);
}

int cli_roofline_work(cli_roofline_set_t *self, const char *model, int batch,
                      jf_torch_work_t *ret_work, jf_err_t *err)
{
    jf_torch_model_kind_t kind;
    int rc = jf_torch_model_parse(model, &kind, err);
    if (rc != 0 || (int) kind < 0 || (int) kind >= CLI_ROOFLINE_MODELS) {
        return rc != 0 ? rc : jf_err_set(err, -EINVAL, "roofline: unknown model '%s'", model);
    }
    if (!self->have_cost[kind]) {
        rc = jf_torch_model_cost(kind, &self->costs[kind], err);
        if (rc != 0) {
            return rc;
        }
        self->have_cost[kind] = true;
    }
    jf_torch_cost_minibatch(&self->costs[kind], batch, ret_work);
    return 0;
}

const coord_roofline_t *cli_roofline_find(const cli_roofline_set_t *self, const char *power)
{
    for (size_t i = 0; i < self->n_roofs; i++) {
        if (strcmp(self->roofs[i].power, power) == 0) {
            return &self->roofs[i];
        }
    }
    return NULL;
}
