/* Shared by the report's files (coord_report.c builds the context and the per-epoch figures,
 * coord_report_figs.c the analysis figures): the sweep's valid observations and figure
 * builders. Private to coordinator/report/. */
#ifndef COORD_REPORT_INTERNAL_H
#define COORD_REPORT_INTERNAL_H

#include "coord_obs.h"
#include "coord_report.h"
#include "coord_valid_runs.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct coord_report_ctx {
    coord_store_t *store;            // borrowed
    const coord_report_opts_t *opts; // borrowed
    coord_valid_runs_t *valid;       // owned by coord_report_data
    coord_obs_t *obs;                // owned: the valid runs' measured epochs (warm-up left out)
    size_t n_obs;                    // records in obs
    size_t cap_obs;                  // room in obs
    bool origin_sim;                 // an imported sweep whose file says source: simulated
} coord_report_ctx_t;

// A new figure object {id, title, kind, x_label, y_label, simulated: false, datasets: []}.
// NULL when out of memory.
json_t *coord_report_fig_new(const char *id, const char *title, const char *kind,
                             const char *x_label, const char *y_label);

// Appends a dataset {label, axis, data: []} to fig and returns its data array (borrowed), or NULL
// when out of memory.
json_t *coord_report_fig_dataset(json_t *fig, const char *label, const char *axis);

// Sets fig's "no_data" reason (printf format).
void coord_report_fig_no_data(json_t *fig, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

// Appends {x, y} to data. 0 or -ENOMEM.
int coord_report_xy(json_t *data, double x, double y);

// Appends fig to figs (taking it over; NULL counts as out of memory). 0 or -ENOMEM with err.
int coord_report_add(json_t *figs, json_t *fig, jf_err_t *err);

// Whether obs is simulated data: its board is simulated (platform "sim"), or the sweep was
// imported from a file labelled simulated (docs/import.md).
bool coord_report_obs_is_sim(const coord_report_ctx_t *ctx, const coord_obs_t *obs);

// The analysis figures: Pareto fronts per workload and board type, board-to-board variability
// per type, the stored models' errors. Each appends to figs. 0 or a negative errno with err.
int coord_report_pareto(const coord_report_ctx_t *ctx, json_t *figs, jf_err_t *err);
int coord_report_variability(const coord_report_ctx_t *ctx, json_t *figs, jf_err_t *err);
int coord_report_models(const coord_report_ctx_t *ctx, json_t *figs, jf_err_t *err);

// The roofline figure of the sweep's first board (coord_report_roofline.c). 0 or a negative
// errno with err.
int coord_report_roofline(const coord_report_ctx_t *ctx, json_t *figs, jf_err_t *err);

#endif
