/* jetfleet import: runs measured elsewhere, read from a CSV file (libcsv) into the store as an
 * imported sweep (docs/import.md). Bad rows are reported as FILE:LINE and skipped with every
 * other row of their run; the store changes in one transaction or not at all. Not a general CSV
 * reader: the columns are the ones docs/import.md lists. */
#ifndef COORD_IMPORT_H
#define COORD_IMPORT_H

#include "coord_store.h"
#include "jf_err.h"

#include <stddef.h>

#define COORD_IMPORT_FIELDS_MAX 32      // fields of one record
#define COORD_IMPORT_FIELD_MAX  255     // bytes of one field, without the NUL
#define COORD_IMPORT_ROWS_MAX   2000000 // data rows of one file
#define COORD_IMPORT_SOURCE_MAX 64      // bytes of the source label, without the NUL

typedef struct coord_import_opts {
    const char *path;       // the CSV file; borrowed
    const char *sweep;      // the sweep's name (jf_parse_is_ident); borrowed
    const char *board_type; // type of every row (--board-type); NULL: the board_type column
} coord_import_opts_t;

typedef struct coord_import_result {
    size_t rows;         // data rows read (the header not counted)
    size_t runs;         // runs stored
    size_t epochs;       // epochs stored, warm-ups included
    size_t skipped_rows; // rows not stored: bad ones and the other rows of their runs
    size_t skipped_runs; // runs not stored (a row whose run cannot be told counts as one)
} coord_import_result_t;

// Called once per bad row with "FILE:LINE: what" (a borrowed string, valid during the call).
typedef void (*coord_import_report_fn)(const char *msg, void *arg);

// Reads opts->path and stores its good runs in one transaction as sweep opts->sweep, source
// 'imported'. Returns 0 with *ret_result filled; -EINVAL for a file that cannot be imported at
// all (no header, an unknown or missing column, broken quoting, no good run) with err naming
// FILE:LINE; -ENOENT for an unreadable file; -EEXIST for a name clash with fleet sweeps or
// boards; -EIO when the store fails. On any failure the store is unchanged. report may be NULL.
int coord_import_csv(coord_store_t *store, const coord_import_opts_t *opts,
                     coord_import_report_fn report, void *arg, coord_import_result_t *ret_result,
                     jf_err_t *err);

// The deterministic run id of run in sweep: "r" + 16 hex digits of FNV-1a 64 over the sweep
// name, board, workload, storage, cores, CPU/GPU/EMC clocks, workers, batch size and repeat.
// buf holds JF_RUN_ID_LEN + 1 bytes.
void coord_import_run_id(const char *sweep, const coord_import_run_t *run, char *buf);

#endif
