/* Points of the InfluxDB exporter (docs/metrics.md): turns the store's rows (a telemetry sample,
 * a minibatch, an epoch, a run's result, fleet and sweep counts) into line protocol points with
 * the measurement, tag and field names that docs/metrics.md lists. No I/O. */
#ifndef COORD_INFLUX_POINTS_H
#define COORD_INFLUX_POINTS_H

#include "coord_influx_line.h"
#include "coord_store_export.h"

// The tags every point of a run attempt carries.
typedef struct coord_influx_run_tags {
    const char *board;      // borrowed
    const char *board_type; // borrowed; "" when the board never said hello
    const char *run;        // borrowed
    const char *workload;   // borrowed
    int64_t attempt;
    bool simulated; // the board's platform is "sim"
} coord_influx_run_tags_t;

// Appends the points of one stored telemetry sample (sample_json, taken at t_us). Returns 0, or
// -EPROTO when the sample is not a JSON object, or the first error of coord_influx_line_end
// (-ENOSPC: buffer full). On failure nothing of this sample is left in lines.
int coord_influx_points_telemetry(coord_influx_line_t *lines, const coord_influx_run_tags_t *tags,
                                  int64_t t_us, const char *sample_json, jf_err_t *err);

// One row of COORD_EXPORT_MINIBATCHES / COORD_EXPORT_EPOCHS, timed at base_us plus the row's
// cum_us (docs/metrics.md, "Timestamps").
int coord_influx_points_minibatch(coord_influx_line_t *lines, const coord_influx_run_tags_t *tags,
                                  int64_t base_us, const coord_export_row_t *row, jf_err_t *err);
int coord_influx_points_epoch(coord_influx_line_t *lines, const coord_influx_run_tags_t *tags,
                              int64_t base_us, const coord_export_row_t *row, jf_err_t *err);

// A finished run's result: the attempt's state and failure reason (NULL: none), when it
// finished, and a COORD_EXPORT_RESULT row.
typedef struct coord_influx_result {
    const char *state;       // borrowed: done or failed
    const char *fail_reason; // borrowed; NULL when none
    int64_t finished_us;
} coord_influx_result_t;
int coord_influx_points_result(coord_influx_line_t *lines, const coord_influx_run_tags_t *tags,
                               const coord_influx_result_t *result, const coord_export_row_t *row,
                               jf_err_t *err);

// A COORD_EXPORT_FLEET row, or one COORD_EXPORT_SWEEPS row, as a snapshot at t_us.
int coord_influx_points_fleet(coord_influx_line_t *lines, int64_t t_us,
                              const coord_export_row_t *row, jf_err_t *err);
int coord_influx_points_sweep(coord_influx_line_t *lines, int64_t t_us,
                              const coord_export_row_t *row, jf_err_t *err);

#endif
