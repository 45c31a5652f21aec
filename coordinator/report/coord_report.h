/* The HTML report of a stored sweep (issue #13; docs/report.md): the figure data, built with
 * jansson from the store and from the same analysis code the CLI prints (valid runs, variability,
 * Pareto fronts, stored models), and the one-file page that draws it with the embedded Chart.js.
 * Not for printing tables (the CLI's commands) nor for computing anything the analysis does not. */
#ifndef COORD_REPORT_H
#define COORD_REPORT_H

#include "coord_store.h"
#include "coord_validity.h"
#include "jf_err.h"

#include <jansson.h>
#include <stdio.h>

#define COORD_REPORT_SERIES_MAX 8 // most runs drawn in the epoch time series figure

// What to report (plain value record).
typedef struct coord_report_opts {
    const char *sweep;                  // the sweep's name
    const char *run;                    // run whose power and utilisation are drawn; NULL: the
                                        // sweep's first valid run with telemetry
    const coord_validity_opts_t *valid; // the validity bounds (jetfleet check's); NULL: defaults
} coord_report_opts_t;

// The report's data: {"sweep", "valid_runs": {...}, "figures": [...]} (docs/report.md "Data").
// Every figure is present, with "no_data" saying why when it has nothing to draw. Caller owns
// (json_decref). NULL with err: -ENOENT for an unknown sweep or a --run that is not a done run of
// the sweep, -ENODATA for a sweep without a valid run, -EIO, -ENOMEM.
json_t *coord_report_data(coord_store_t *store, const coord_report_opts_t *opts, jf_err_t *err);

// Writes the page for data (coord_report_data's) to out: one HTML file with the charting
// library, the report's script and style and the data embedded, needing no network to view.
// 0, or -EIO with err when writing fails, -ENOMEM.
int coord_report_write_html(const json_t *data, FILE *out, jf_err_t *err);

#endif
