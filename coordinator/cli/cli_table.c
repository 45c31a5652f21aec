/* CLI tables: collect, then write as aligned text, CSV (RFC 4180 quoting) or JSON (jansson). */
#include "cli_table.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct s_row {
    char **cells;              // owned strings, NULL for SQL NULL
    coord_value_kind_t *kinds; // owned
} s_row_t;

struct cli_table {
    const char *const *want; // borrowed: the columns to keep, or NULL for all
    int ncols;               // kept columns; -1 before the first row
    int src_ncols;           // columns of the rows it is given
    char **names;            // owned, ncols of them
    int *src;                // owned: source column index of each kept column
    size_t n, cap;           // rows, and room for them
    s_row_t *rows;           // owned
    jf_err_t error;          // why the last row was refused; code 0 when none was
};

cli_table_t *cli_table_new(const char *const *columns)
{
    cli_table_t *self = calloc(1, sizeof *self);
    if (self) {
        self->want = columns;
        self->ncols = -1;
    }
    return self;
}

void cli_table_destroy(cli_table_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    cli_table_t *self = *self_p;
    for (size_t r = 0; r < self->n; r++) {
        for (int c = 0; c < self->ncols; c++) {
            free(self->rows[r].cells[c]);
        }
        free(self->rows[r].cells);
        free(self->rows[r].kinds);
    }
    for (int c = 0; c < self->ncols; c++) {
        free(self->names[c]);
    }
    free(self->names);
    free(self->src);
    free(self->rows);
    free(self);
    *self_p = NULL;
}

const char *cli_table_error(const cli_table_t *self)
{
    return self->error.msg;
}

// The source index of column name, or -1.
static int s_find(int ncols, const char *const *names, const char *name)
{
    for (int c = 0; c < ncols; c++) {
        if (strcmp(names[c], name) == 0) {
            return c;
        }
    }
    return -1;
}

// Keeps every wanted column, in the order asked for, or all of them; a wanted column the rows
// lack is an error, never a silently narrower table.
static int s_pick_columns(cli_table_t *self, int ncols, const char *const *names)
{
    int n = 0;
    while (self->want && self->want[n]) {
        n++;
    }
    n = self->want ? n : ncols;
    self->names = calloc((size_t) n + 1, sizeof *self->names);
    self->src = calloc((size_t) n + 1, sizeof *self->src);
    if (!self->names || !self->src) {
        return jf_err_set(&self->error, -ENOMEM, "table: out of memory for %d columns", n);
    }
    self->src_ncols = ncols;
    for (self->ncols = 0; self->ncols < n; self->ncols++) {
        const char *name = self->want ? self->want[self->ncols] : names[self->ncols];
        int c = s_find(ncols, names, name);
        if (c < 0) {
            return jf_err_set(&self->error, -ENOENT, "table: no column '%.64s' among its %d", name,
                              ncols);
        }
        self->src[self->ncols] = c;
        if (!(self->names[self->ncols] = strdup(name))) {
            return jf_err_set(&self->error, -ENOMEM, "table: out of memory for column '%.64s'",
                              name);
        }
    }
    return 0;
}

// Room for one more row.
static int s_reserve_row(cli_table_t *self)
{
    if (self->n < self->cap) {
        return 0;
    }
    size_t want = self->cap ? 2 * self->cap : 64;
    s_row_t *rows = realloc(self->rows, want * sizeof *rows);
    if (rows) {
        self->rows = rows;
        self->cap = want;
    }
    return rows ? 0 : jf_err_set(&self->error, -ENOMEM, "table: out of memory at row %zu", self->n);
}

int cli_table_add_row(int ncols, const char *const *names, const char *const *values,
                      const coord_value_kind_t *kinds, void *arg)
{
    cli_table_t *self = arg;
    int rc = self->error.code; // a table that refused a row stays refused
    if (rc != 0) {
        return rc;
    }
    if (self->ncols < 0 && (rc = s_pick_columns(self, ncols, names)) != 0) {
        return rc;
    }
    if (ncols != self->src_ncols) {
        return jf_err_set(&self->error, -EINVAL, "table: a row of %d columns after rows of %d",
                          ncols, self->src_ncols);
    }
    if ((rc = s_reserve_row(self)) != 0) {
        return rc;
    }
    s_row_t row = {calloc((size_t) self->ncols + 1, sizeof(char *)),
                   calloc((size_t) self->ncols + 1, sizeof(coord_value_kind_t))};
    if (!row.cells || !row.kinds) {
        free(row.cells);
        free(row.kinds);
        return jf_err_set(&self->error, -ENOMEM, "table: out of memory at row %zu", self->n);
    }
    bool lost = false; // a cell strdup could not copy: never shown as NULL
    for (int c = 0; c < self->ncols; c++) {
        const char *v = values[self->src[c]];
        row.cells[c] = v ? strdup(v) : NULL;
        row.kinds[c] = kinds ? kinds[self->src[c]] : (v ? COORD_VALUE_TEXT : COORD_VALUE_NULL);
        lost |= v && !row.cells[c];
    }
    self->rows[self->n++] = row; // kept even when lost, so destroy frees its cells
    return lost ? jf_err_set(&self->error, -ENOMEM, "table: out of memory at row %zu", self->n) : 0;
}

int cli_table_add_text(cli_table_t *self, int ncols, const char *const *names,
                       const char *const *values)
{
    return cli_table_add_row(ncols, names, values, NULL, self);
}

size_t cli_table_rows(const cli_table_t *self)
{
    return self->n;
}

// Reals are shown with 4 significant digits for people; CSV and JSON keep full precision.
static const char *s_cell_text(const s_row_t *row, int c, char *buf, size_t size)
{
    if (!row->cells[c]) {
        return "-";
    }
    if (row->kinds[c] == COORD_VALUE_REAL) {
        (void) snprintf(buf, size, "%.4g", strtod(row->cells[c], NULL));
        return buf;
    }
    return row->cells[c];
}

static int s_write_text(const cli_table_t *self, FILE *out)
{
    size_t *width = calloc((size_t) self->ncols + 1, sizeof *width);
    char buf[64]; // "%.4g" of a double needs at most 11
    if (!width) {
        return -ENOMEM;
    }
    for (int c = 0; c < self->ncols; c++) {
        width[c] = strlen(self->names[c]);
        for (size_t r = 0; r < self->n; r++) {
            size_t w = strlen(s_cell_text(&self->rows[r], c, buf, sizeof buf));
            width[c] = w > width[c] ? w : width[c];
        }
    }
    for (int c = 0; c < self->ncols; c++) {
        bool last = c + 1 == self->ncols; // no padding after the last column
        fprintf(out, "%-*s%s", last ? 0 : (int) width[c], self->names[c], last ? "\n" : "  ");
    }
    for (size_t r = 0; r < self->n; r++) {
        for (int c = 0; c < self->ncols; c++) {
            bool last = c + 1 == self->ncols;
            fprintf(out, "%-*s%s", last ? 0 : (int) width[c],
                    s_cell_text(&self->rows[r], c, buf, sizeof buf), last ? "\n" : "  ");
        }
    }
    free(width);
    return ferror(out) ? -EIO : 0;
}

static void s_csv_cell(const char *v, FILE *out)
{
    if (!v) {
        return; // an empty field is NULL (pandas reads it as NaN)
    }
    if (!strpbrk(v, ",\"\n\r")) {
        fputs(v, out);
        return;
    }
    fputc('"', out);
    for (const char *p = v; *p; p++) {
        if (*p == '"') {
            fputc('"', out);
        }
        fputc(*p, out);
    }
    fputc('"', out);
}

static int s_write_csv(const cli_table_t *self, FILE *out)
{
    for (int c = 0; c < self->ncols; c++) {
        s_csv_cell(self->names[c], out);
        fputc(c + 1 < self->ncols ? ',' : '\n', out);
    }
    for (size_t r = 0; r < self->n; r++) {
        for (int c = 0; c < self->ncols; c++) {
            s_csv_cell(self->rows[r].cells[c], out);
            fputc(c + 1 < self->ncols ? ',' : '\n', out);
        }
    }
    return ferror(out) ? -EIO : 0;
}

static json_t *s_json_cell(const char *v, coord_value_kind_t kind)
{
    switch (kind) {
    case COORD_VALUE_INT:
        return json_integer(strtoll(v, NULL, 10));
    case COORD_VALUE_REAL:
        return json_real(strtod(v, NULL));
    case COORD_VALUE_TEXT:
        return json_string(v);
    default:
        return json_null();
    }
}

static int s_write_json(const cli_table_t *self, FILE *out)
{
    json_t *arr = json_array();
    for (size_t r = 0; arr && r < self->n; r++) {
        json_t *obj = json_object();
        for (int c = 0; obj && c < self->ncols; c++) {
            (void) json_object_set_new(obj, self->names[c],
                                       s_json_cell(self->rows[r].cells[c], self->rows[r].kinds[c]));
        }
        (void) json_array_append_new(arr, obj);
    }
    int rc = arr && json_dumpf(arr, out, JSON_INDENT(1)) == 0 ? 0 : -EIO;
    fputc('\n', out);
    json_decref(arr);
    return rc == 0 && !ferror(out) ? 0 : -EIO;
}

int cli_table_write(const cli_table_t *self, cli_format_t format, FILE *out)
{
    if (self->ncols < 0) {
        return format == CLI_FORMAT_JSON ? (fputs("[]\n", out) < 0 ? -EIO : 0) : 0;
    }
    switch (format) {
    case CLI_FORMAT_CSV:
        return s_write_csv(self, out);
    case CLI_FORMAT_JSON:
        return s_write_json(self, out);
    default:
        return s_write_text(self, out);
    }
}
