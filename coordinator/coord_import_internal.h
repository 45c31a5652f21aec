/* Private to coord_import*.c: the columns of an import file and one parsed row. */
#ifndef COORD_IMPORT_INTERNAL_H
#define COORD_IMPORT_INTERNAL_H

#include "coord_import.h"

#include <stdbool.h>

typedef enum coord_icol {
    COORD_ICOL_BOARD = 0,
    COORD_ICOL_TYPE,
    COORD_ICOL_WORKLOAD,
    COORD_ICOL_CORES,
    COORD_ICOL_CPU,
    COORD_ICOL_GPU,
    COORD_ICOL_EMC,
    COORD_ICOL_WORKERS,
    COORD_ICOL_BATCH,
    COORD_ICOL_EPOCH,
    COORD_ICOL_TIME,
    COORD_ICOL_POWER,
    COORD_ICOL_ENERGY,
    COORD_ICOL_STORAGE, // optional from here on
    COORD_ICOL_REPEAT,
    COORD_ICOL_STALL,
    COORD_ICOL_COMPUTE,
    COORD_ICOL_MODE,
    COORD_ICOL_SOURCE,
    COORD_ICOL_COUNT,
} coord_icol_t;

// Which column each field of a record is, from the header row.
typedef struct coord_iheader {
    size_t n;                                  // fields per record
    coord_icol_t col[COORD_IMPORT_FIELDS_MAX]; // field i holds this column
    int64_t scale[COORD_IMPORT_FIELDS_MAX];    // Hz per unit of a clock column's spelling, else 1
    int field_of[COORD_ICOL_COUNT];            // field index of each column, -1 if absent
} coord_iheader_t;

// One data row, parsed.
typedef struct coord_irow {
    int line;                                 // line of the file (1-based; the header is 1)
    bool keyed;                               // run.id is known (its key fields parsed)
    bool bad;                                 // the row failed a check; its run is skipped
    coord_import_run_t run;                   // the run it belongs to (run.ord = line)
    coord_import_epoch_t epoch;               // its epoch
    char source[COORD_IMPORT_SOURCE_MAX + 1]; // the source column, "" if absent
} coord_irow_t;

// Reads the header record (n fields). Returns 0, or -EINVAL with err naming path:1 and the
// unknown, repeated or missing column. type_given: --board-type makes board_type optional.
int coord_iheader_parse(coord_iheader_t *h, char (*fields)[COORD_IMPORT_FIELD_MAX + 1], size_t n,
                        const char *path, bool type_given, jf_err_t *err);

// Parses one data record into *row (row->line set by the caller). Returns 0, or -EINVAL with why
// (without the FILE:LINE prefix); row->keyed tells whether its run is known all the same.
int coord_irow_parse(const coord_iheader_t *h, char (*fields)[COORD_IMPORT_FIELD_MAX + 1], size_t n,
                     const char *sweep, const char *type, coord_irow_t *row, char *why,
                     size_t why_size);

#endif
