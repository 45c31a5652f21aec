/* Appends a run's verdict (coord_valid_runs_verdict) to each row on its way to a table. */
#include "cli_valid_cols.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define S_REASONS_MAX 160

static int s_run_col(int ncols, const char *const *names)
{
    for (int i = 0; i < ncols; i++) {
        if (strcmp(names[i], "run") == 0) {
            return i;
        }
    }
    return -1;
}

int cli_valid_cols_row(int ncols, const char *const *names, const char *const *values,
                       const coord_value_kind_t *kinds, void *arg)
{
    cli_valid_cols_t *c = arg;
    int run = s_run_col(ncols, names);
    if (run < 0 || ncols + CLI_VALID_COLS_N > COORD_TABLE_COLS_MAX) {
        (void) snprintf(c->error, sizeof c->error,
                        run < 0 ? "validity columns: the table has no 'run' column"
                                : "validity columns: %d columns and 3 more exceed %d",
                        ncols, COORD_TABLE_COLS_MAX);
        return -EINVAL;
    }
    const char *n2[COORD_TABLE_COLS_MAX];
    const char *v2[COORD_TABLE_COLS_MAX];
    coord_value_kind_t k2[COORD_TABLE_COLS_MAX];
    memcpy(n2, names, (size_t) ncols * sizeof *n2);
    memcpy(v2, values, (size_t) ncols * sizeof *v2);
    memcpy(k2, kinds, (size_t) ncols * sizeof *k2);
    const coord_run_validity_t *v = coord_valid_runs_verdict(c->valid, values[run]);
    char reasons[S_REASONS_MAX] = "";
    if (v) {
        coord_validity_reasons_format(v, reasons, sizeof reasons);
    }
    const char *added[CLI_VALID_COLS_N][2] = {
        {"valid", v ? (v->valid ? "yes" : "no") : NULL},
        {"invalid_reasons", v && !v->valid ? reasons : NULL},
        {"invalid_detail", v && v->detail[0] ? v->detail : NULL},
    };
    for (int i = 0; i < CLI_VALID_COLS_N; i++) {
        n2[ncols + i] = added[i][0];
        v2[ncols + i] = added[i][1];
        k2[ncols + i] = added[i][1] ? COORD_VALUE_TEXT : COORD_VALUE_NULL;
    }
    return c->fn(ncols + CLI_VALID_COLS_N, n2, v2, k2, c->arg);
}
