/* Import: reads an import CSV with libcsv (strict quoting), groups its rows into runs and stores
 * the good runs in one transaction (docs/import.md). Row parsing is coord_import_row.c; SQL is
 * coord_store_import.c. */
#include "coord_import_internal.h"

#include "jf_parse.h"

#include <csv.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_WHY_MAX 512

typedef struct s_reader {
    const coord_import_opts_t *opts;
    coord_import_report_fn report; // NULL: bad rows are only counted
    void *arg;
    int line;     // line being fed to libcsv (1-based)
    int rec_line; // line where the current record's first field ended
    size_t n_fields;
    bool field_too_long;
    char fields[COORD_IMPORT_FIELDS_MAX][COORD_IMPORT_FIELD_MAX + 1];
    bool have_header;
    coord_iheader_t header;
    coord_irow_t *rows; // owned (malloc)
    size_t n_rows, cap_rows;
    int rc; // a failure that stops the import (header, memory, too many rows)
    jf_err_t *err;
} s_reader_t;

static void s_report(s_reader_t *r, int line, const char *why)
{
    char msg[S_WHY_MAX + 4096 + 32];
    (void) snprintf(msg, sizeof msg, "%s:%d: %s", r->opts->path, line, why);
    if (r->report) {
        r->report(msg, r->arg);
    }
}

static void s_on_field(void *s, size_t len, void *data)
{
    s_reader_t *r = data;
    if (r->n_fields == 0) {
        r->rec_line = r->line;
    }
    if (r->n_fields < COORD_IMPORT_FIELDS_MAX) {
        r->field_too_long = r->field_too_long || len > COORD_IMPORT_FIELD_MAX;
        size_t n = len > COORD_IMPORT_FIELD_MAX ? COORD_IMPORT_FIELD_MAX : len;
        memcpy(r->fields[r->n_fields], s ? s : "", s ? n : 0);
        r->fields[r->n_fields][s ? n : 0] = '\0';
    }
    r->n_fields++;
}

static coord_irow_t *s_new_row(s_reader_t *r)
{
    if (r->n_rows == r->cap_rows) {
        size_t cap = r->cap_rows ? 2 * r->cap_rows : 1024;
        coord_irow_t *rows = realloc(r->rows, cap * sizeof *rows);
        if (!rows) {
            r->rc = jf_err_set(r->err, -ENOMEM, "%s: out of memory reading rows", r->opts->path);
            return NULL;
        }
        r->rows = rows;
        r->cap_rows = cap;
    }
    coord_irow_t *row = &r->rows[r->n_rows++];
    memset(row, 0, sizeof *row);
    return row;
}

static void s_data_row(s_reader_t *r)
{
    if (r->n_rows >= COORD_IMPORT_ROWS_MAX) {
        r->rc = jf_err_set(r->err, -EINVAL, "%s:%d: more than %d rows", r->opts->path, r->rec_line,
                           COORD_IMPORT_ROWS_MAX);
        return;
    }
    coord_irow_t *row = s_new_row(r);
    if (!row) {
        return;
    }
    row->line = r->rec_line;
    char why[S_WHY_MAX] = "";
    int rc = 0;
    if (r->n_fields > COORD_IMPORT_FIELDS_MAX || r->field_too_long) {
        (void) snprintf(why, sizeof why, "more than %d fields or a field over %d bytes",
                        COORD_IMPORT_FIELDS_MAX, COORD_IMPORT_FIELD_MAX);
        rc = -EINVAL;
    } else {
        rc = coord_irow_parse(&r->header, r->fields, r->n_fields, r->opts->sweep,
                              r->opts->board_type, row, why, sizeof why);
    }
    if (rc != 0) {
        row->bad = true;
        s_report(r, row->line, why);
    }
}

static void s_on_record(int c, void *data)
{
    (void) c;
    s_reader_t *r = data;
    if (r->rc == 0 && !r->have_header) {
        size_t n = r->n_fields > COORD_IMPORT_FIELDS_MAX ? COORD_IMPORT_FIELDS_MAX : r->n_fields;
        r->rc = coord_iheader_parse(&r->header, r->fields, n, r->opts->path,
                                    r->opts->board_type != NULL, r->err);
        r->have_header = true;
    } else if (r->rc == 0) {
        s_data_row(r);
    }
    r->n_fields = 0;
    r->field_too_long = false;
}

static int s_syntax(s_reader_t *r, struct csv_parser *p, const char *what)
{
    return jf_err_set(r->err, -EINVAL, "%s:%d: %s (libcsv: %s); nothing imported", r->opts->path,
                      r->line, what, csv_strerror(csv_error(p)));
}

// Feeds the file to libcsv a line at a time, so each record knows its line. Broken quoting
// stops the import: the rows after it cannot be told apart.
static int s_read(s_reader_t *r, FILE *f)
{
    struct csv_parser p;
    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
        return jf_err_set(r->err, -ENOMEM, "%s: out of memory", r->opts->path);
    }
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len = 0;
    while (r->rc == 0 && (len = getline(&buf, &cap, f)) > 0) {
        r->line++;
        if (csv_parse(&p, buf, (size_t) len, s_on_field, s_on_record, r) != (size_t) len) {
            r->rc = s_syntax(r, &p, "malformed quoting");
        }
    }
    if (r->rc == 0 && csv_fini(&p, s_on_field, s_on_record, r) != 0) {
        r->rc = s_syntax(r, &p, "a quoted field is not closed by the end of the file");
    }
    if (r->rc == 0 && !r->have_header) {
        r->rc =
            jf_err_set(r->err, -EINVAL, "%s: empty file: a header row is required", r->opts->path);
    }
    free(buf);
    csv_free(&p);
    return r->rc;
}

static int s_by_run(const void *a, const void *b)
{
    const coord_irow_t *x = *(const coord_irow_t *const *) a;
    const coord_irow_t *y = *(const coord_irow_t *const *) b;
    int c = strcmp(x->run.id, y->run.id);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

// A run's rows (sorted by line) agree with its first row where they must, name each epoch once
// and carry the file's one source label (origin, set by the first good row). False, with each
// offending row reported, when the run must be skipped.
static bool s_run_ok(s_reader_t *r, coord_irow_t **rows, size_t n, char *origin)
{
    bool ok = true;
    char why[S_WHY_MAX];
    for (size_t i = 0; i < n; i++) {
        ok = ok && !rows[i]->bad;
    }
    for (size_t i = 0; ok && i < n; i++) {
        const coord_irow_t *x = rows[i];
        why[0] = '\0';
        for (size_t j = 0; j < i && !why[0]; j++) {
            if (rows[j]->epoch.epoch == x->epoch.epoch) {
                (void) snprintf(why, sizeof why, "epoch %d of this run is also at line %d",
                                x->epoch.epoch, rows[j]->line);
            }
        }
        if (!why[0] && (strcmp(x->run.board_type, rows[0]->run.board_type) != 0 ||
                        strcmp(x->run.power_mode, rows[0]->run.power_mode) != 0)) {
            (void) snprintf(why, sizeof why,
                            "board_type or power_mode differs from line %d of "
                            "the same run",
                            rows[0]->line);
        }
        if (!why[0] && origin[0] && strcmp(origin, x->source) != 0) {
            (void) snprintf(why, sizeof why,
                            "source '%s' differs from the file's '%s': one "
                            "file, one source",
                            x->source, origin);
        }
        if (why[0]) {
            s_report(r, x->line, why);
            ok = false;
        }
    }
    if (ok && !origin[0]) {
        (void) snprintf(origin, COORD_IMPORT_SOURCE_MAX + 1, "%s", rows[0]->source);
    }
    return ok;
}

typedef struct s_plan {
    coord_irow_t **sorted; // owned array of borrowed rows: keyed rows by run, then line
    size_t n_sorted;
    bool *good; // owned: per sorted row, whether its run is stored
    char origin[COORD_IMPORT_SOURCE_MAX + 1];
} s_plan_t;

// Sorts the keyed rows into runs and decides which runs are stored; counts the rest.
static int s_plan_runs(s_reader_t *r, s_plan_t *pl, coord_import_result_t *res)
{
    pl->sorted = calloc(r->n_rows ? r->n_rows : 1, sizeof *pl->sorted);
    pl->good = calloc(r->n_rows ? r->n_rows : 1, sizeof *pl->good);
    if (!pl->sorted || !pl->good) {
        return jf_err_set(r->err, -ENOMEM, "%s: out of memory", r->opts->path);
    }
    for (size_t i = 0; i < r->n_rows; i++) {
        if (r->rows[i].keyed) {
            pl->sorted[pl->n_sorted++] = &r->rows[i];
        } else {
            res->skipped_rows++; // a row whose run cannot be told is a skipped run of its own
            res->skipped_runs++;
        }
    }
    qsort(pl->sorted, pl->n_sorted, sizeof *pl->sorted, s_by_run);
    for (size_t i = 0, j = 0; i < pl->n_sorted; i = j) {
        for (j = i; j < pl->n_sorted && strcmp(pl->sorted[j]->run.id, pl->sorted[i]->run.id) == 0;
             j++) {
        }
        bool ok = s_run_ok(r, &pl->sorted[i], j - i, pl->origin);
        for (size_t k = i; k < j; k++) {
            pl->good[k] = ok;
        }
        res->runs += ok;
        res->epochs += ok ? j - i : 0;
        res->skipped_runs += !ok;
        res->skipped_rows += ok ? 0 : j - i;
    }
    res->rows = r->n_rows;
    return 0;
}

// Stores the good runs of the plan, one run at a time, inside the caller's transaction.
static int s_store_runs(coord_store_t *store, const s_reader_t *r, const s_plan_t *pl)
{
    coord_import_epoch_t *eps = calloc(pl->n_sorted ? pl->n_sorted : 1, sizeof *eps);
    if (!eps) {
        return jf_err_set(r->err, -ENOMEM, "%s: out of memory", r->opts->path);
    }
    int rc = coord_store_import_sweep(store, r->opts->sweep, r->opts->path,
                                      pl->origin[0] ? pl->origin : NULL, r->err);
    for (size_t i = 0, j = 0; rc == 0 && i < pl->n_sorted; i = j) {
        size_t n = 0;
        for (j = i; j < pl->n_sorted && strcmp(pl->sorted[j]->run.id, pl->sorted[i]->run.id) == 0;
             j++) {
            eps[n++] = pl->sorted[j]->epoch;
        }
        if (pl->good[i]) {
            rc = coord_store_import_run(store, r->opts->sweep, &pl->sorted[i]->run, eps, n, r->err);
            rc = rc ? jf_err_prefix(r->err, "%s:%d", r->opts->path, pl->sorted[i]->line) : 0;
        }
    }
    free(eps);
    return rc;
}

static int s_store(coord_store_t *store, s_reader_t *r, coord_import_result_t *res)
{
    s_plan_t pl = {0};
    int rc = s_plan_runs(r, &pl, res);
    if (rc == 0 && res->runs == 0) {
        rc = jf_err_set(r->err, -EINVAL, "%s: no run could be imported (%zu rows, all skipped)",
                        r->opts->path, res->rows);
    }
    rc = rc ? rc : coord_store_begin(store, r->err);
    if (rc == 0) {
        rc = s_store_runs(store, r, &pl);
        rc = rc ? rc : coord_store_commit(store, r->err);
        if (rc != 0) {
            coord_store_rollback(store);
        }
    }
    free(pl.sorted);
    free(pl.good);
    return rc;
}

int coord_import_csv(coord_store_t *store, const coord_import_opts_t *opts,
                     coord_import_report_fn report, void *arg, coord_import_result_t *ret_result,
                     jf_err_t *err)
{
    if (!jf_parse_is_ident(opts->sweep)) {
        return jf_err_set(err, -EINVAL,
                          "sweep name '%.64s' must be 1 to 64 of a-z, 0-9, '.', '_', '-'",
                          opts->sweep);
    }
    FILE *f = fopen(opts->path, "r");
    if (!f) {
        return jf_err_set(err, -ENOENT, "%s: %s", opts->path, strerror(errno));
    }
    s_reader_t *r = calloc(1, sizeof *r);
    if (!r) {
        fclose(f);
        return jf_err_set(err, -ENOMEM, "%s: out of memory", opts->path);
    }
    *r = (s_reader_t){.opts = opts, .report = report, .arg = arg, .err = err};
    coord_import_result_t res = {0};
    int rc = s_read(r, f);
    fclose(f);
    rc = rc ? rc : s_store(store, r, &res);
    if (rc == 0) {
        *ret_result = res;
    }
    free(r->rows);
    free(r);
    return rc;
}
