/* Tables the CLI prints: collected rows of text with their kinds, written aligned for people,
 * or as CSV or JSON (an array of objects) for pandas. Not for anything but output. */
#ifndef CLI_TABLE_H
#define CLI_TABLE_H

#include "coord_store.h"
#include "jf_err.h"

#include <stdio.h>

typedef struct cli_table cli_table_t;

typedef enum cli_format {
    CLI_FORMAT_TEXT = 0,
    CLI_FORMAT_CSV,
    CLI_FORMAT_JSON,
} cli_format_t;

// A table that keeps only the named columns (NULL: all), in that order, however many there
// are. Caller owns; release with cli_table_destroy. NULL when out of memory.
cli_table_t *cli_table_new(const char *const *columns);
void cli_table_destroy(cli_table_t **self_p);

// A coord_row_fn: pass the table as arg to coord_store_select. Returns 0, or refuses the row
// (and every later one) with -ENOENT when a named column is not among the row's (never a
// narrower table), -EINVAL when a row's width differs from the first row's, -ENOMEM;
// cli_table_error says why.
int cli_table_add_row(int ncols, const char *const *names, const char *const *values,
                      const coord_value_kind_t *kinds, void *arg);

// Why the table refused a row, naming the column ("table: no column 'x' among its 12"); ""
// when it refused none. Borrowed: valid while the table lives.
const char *cli_table_error(const cli_table_t *self);

// Adds a row of text cells (used for computed tables); fails as cli_table_add_row does.
int cli_table_add_text(cli_table_t *self, int ncols, const char *const *names,
                       const char *const *values);

size_t cli_table_rows(const cli_table_t *self);

// Writes the table. Returns 0 or -EIO if writing failed.
int cli_table_write(const cli_table_t *self, cli_format_t format, FILE *out);

#endif
