/* Tables the CLI prints: collected rows of text with their kinds, written aligned for people,
 * or as CSV or JSON (an array of objects) for pandas. Not for anything but output. */
#ifndef CLI_TABLE_H
#define CLI_TABLE_H

#include "coord_store.h"

#include <stdio.h>

typedef struct cli_table cli_table_t;

typedef enum cli_format {
    CLI_FORMAT_TEXT = 0,
    CLI_FORMAT_CSV,
    CLI_FORMAT_JSON,
} cli_format_t;

// A table that keeps only the named columns (NULL: all), in that order. Caller owns.
cli_table_t *cli_table_new(const char *const *columns);
void cli_table_destroy(cli_table_t **self_p);

// A coord_row_fn: pass the table as arg to coord_store_select.
int cli_table_add_row(int ncols, const char *const *names, const char *const *values,
                      const coord_value_kind_t *kinds, void *arg);

// Adds a row of text cells (ncols must match the table's columns; used for computed tables).
int cli_table_add_text(cli_table_t *self, int ncols, const char *const *names,
                       const char *const *values);

size_t cli_table_rows(const cli_table_t *self);

// Writes the table. Returns 0 or -EIO if writing failed.
int cli_table_write(const cli_table_t *self, cli_format_t format, FILE *out);

#endif
