/* Store: the models table (fitted time/power/energy models, docs/analysis.md "Models"). */
#include "coord_store_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char s_put_sql[] =
    "INSERT INTO models(name, sweep, scope, scope_value, workload, target, kind, features,"
    " params, training_runs, cv_mape_pct, transfer_from, created_us)"
    " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id";

#define S_SELECT                                                                                   \
    "SELECT id, name, sweep, scope, scope_value, workload, target, kind, features, params,"        \
    " training_runs, cv_mape_pct, coalesce(transfer_from, 0), created_us FROM models"
static const char s_all_sql[] = S_SELECT " ORDER BY id";
static const char s_get_sql[] = S_SELECT " WHERE id = ?";

int coord_store_model_put(coord_store_t *self, const coord_model_row_t *row, int64_t *ret_id,
                          jf_err_t *err)
{
    int64_t id = 0;
    int rc = coord_store_scalar(
        self, s_put_sql,
        COORD_BINDS(coord_text(row->name), coord_text(row->sweep), coord_text(row->scope),
                    coord_text(row->scope_value), coord_text(row->workload),
                    coord_text(row->target), coord_text(row->kind), coord_text(row->features),
                    coord_text(row->params), coord_int(row->training_runs),
                    coord_real(row->cv_mape_pct),
                    row->transfer_from > 0 ? coord_int(row->transfer_from) : coord_text(NULL),
                    coord_int(row->created_us)),
        &id, err);
    if (rc == 0) {
        *ret_id = id;
    }
    return rc == -ENOENT ? jf_err_set(err, -EIO, "%s: storing a model: no id returned", self->path)
                         : rc;
}

static char *s_dup_text(coord_db_stmt_t *st, int col)
{
    const char *t = coord_db_col_text(st, col);
    return strdup(t ? (const char *) t : "");
}

static void s_copy(char *dst, size_t size, coord_db_stmt_t *st, int col)
{
    const char *t = coord_db_col_text(st, col);
    snprintf(dst, size, "%s", t ? (const char *) t : "");
}

// Fills r from the current row. -ENOMEM when the JSON copies fail.
static int s_row(coord_db_stmt_t *st, coord_model_row_t *r)
{
    memset(r, 0, sizeof *r);
    r->id = coord_db_col_int64(st, 0);
    char *texts[] = {r->name, r->sweep, r->scope, r->scope_value, r->workload, r->target, r->kind};
    size_t sizes[] = {sizeof r->name,     sizeof r->sweep,  sizeof r->scope, sizeof r->scope_value,
                      sizeof r->workload, sizeof r->target, sizeof r->kind};
    for (int i = 0; i < 7; i++) {
        s_copy(texts[i], sizes[i], st, i + 1);
    }
    r->features = s_dup_text(st, 8);
    r->params = s_dup_text(st, 9);
    r->training_runs = coord_db_col_int64(st, 10);
    r->cv_mape_pct = coord_db_col_is_null(st, 11) ? NAN : coord_db_col_double(st, 11);
    r->transfer_from = coord_db_col_int64(st, 12);
    r->created_us = coord_db_col_int64(st, 13);
    if (!r->features || !r->params) {
        coord_model_row_fini(r);
        return -ENOMEM;
    }
    return 0;
}

void coord_model_row_fini(coord_model_row_t *row)
{
    free(row->features);
    free(row->params);
    row->features = NULL;
    row->params = NULL;
}

int coord_store_model_get(coord_store_t *self, int64_t id, coord_model_row_t *ret_row,
                          jf_err_t *err)
{
    coord_db_stmt_t *st = coord_store_stmt(self, s_get_sql, COORD_BINDS(coord_int(id)), err);
    if (!st) {
        return -EIO;
    }
    int step = coord_db_step(st);
    int rc = step == COORD_DB_ROW ? s_row(st, ret_row)
             : step == COORD_DB_DONE
                 ? jf_err_set(err, -ENOENT, "no model with id %lld", (long long) id)
                 : coord_store_fail(self, err, "reading a model");
    if (rc == -ENOMEM) {
        jf_err_set(err, rc, "reading model %lld: out of memory", (long long) id);
    }
    coord_db_reset(st); // the statement stays cached; its error was reported above
    return rc;
}

int coord_store_models_each(coord_store_t *self, coord_model_row_fn fn, void *arg, jf_err_t *err)
{
    coord_db_stmt_t *st = coord_store_stmt(self, s_all_sql, COORD_NO_BINDS, err);
    if (!st) {
        return -EIO;
    }
    int rc = 0;
    int step;
    coord_model_row_t r;
    while (rc == 0 && (step = coord_db_step(st)) == COORD_DB_ROW) {
        rc = s_row(st, &r);
        rc = rc == 0 ? fn(&r, arg) : jf_err_set(err, rc, "reading models: out of memory");
        coord_model_row_fini(&r);
    }
    if (rc == 0 && step != COORD_DB_DONE) {
        rc = coord_store_fail(self, err, "reading models");
    }
    coord_db_reset(st); // the statement stays cached; its error was reported above
    return rc;
}
