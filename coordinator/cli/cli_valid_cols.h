/* The validity columns of `jetfleet results` and `jetfleet export` (issue #12; docs/analysis.md
 * "Measurement validity", docs/store.md's export columns): each row of a run gets `valid` (yes,
 * no, or empty for a run that is not done), `invalid_reasons` and `invalid_detail`, the verdict
 * `jetfleet check` prints for that run, from the same code (coord_valid_runs.h). */
#ifndef CLI_VALID_COLS_H
#define CLI_VALID_COLS_H

#include "coord_store.h"
#include "coord_valid_runs.h"

#define CLI_VALID_COLS_N 3 // columns added to each row

// A coord_row_fn wrapper: arg is a cli_valid_cols_t. Each row (it must have a `run` column)
// goes on to fn with the three columns appended. Returns fn's result, or -EINVAL for a row
// without a `run` column or with more than COORD_TABLE_COLS_MAX columns once widened (error
// then says which).
typedef struct cli_valid_cols {
    const coord_valid_runs_t *valid; // borrowed: the sweep's verdicts
    coord_row_fn fn;                 // where the widened rows go
    void *arg;                       // fn's argument; borrowed
    char error[160];                 // why a row was refused here; "" when none was
} cli_valid_cols_t;

int cli_valid_cols_row(int ncols, const char *const *names, const char *const *values,
                       const coord_value_kind_t *kinds, void *arg);

#endif
