/* The store's reads for the InfluxDB exporter (coordinator/export/coord_influx, docs/metrics.md):
 * run attempts, and each attempt's telemetry samples, minibatches and epochs after a cursor, in the
 * order they were stored. Read-only; the exporter uses its own read-only connection. */
#ifndef COORD_STORE_EXPORT_H
#define COORD_STORE_EXPORT_H

#include "coord_store.h"

#define COORD_EXPORT_COLS_MAX 16

typedef enum coord_export_query {
    COORD_EXPORT_ATTEMPTS = 0, // runs with attempt > 0: id, attempt, state, board, board type,
                               // platform, workload, started_us, finished_us, fail_reason
    COORD_EXPORT_T0,           // the attempt's telemetry series: t0_us
    COORD_EXPORT_TELEMETRY,    // seq, idx, t_us, sample (JSON text) after (a, b) = (seq, idx)
    COORD_EXPORT_MINIBATCHES,  // epoch, idx, samples, fetch_stall_us, compute_us, loss, cum_us
                               // after (a, b) = (epoch, idx); cum_us sums fetch_stall_us +
                               // compute_us of the attempt's minibatches up to this one
    COORD_EXPORT_EPOCHS,       // epoch, warmup, e2e_us, fetch_stall_us, compute_us, samples,
                               // loss, energy_mj, avg_power_mw, peak_power_mw, cum_us after
                               // (a, b) = (epoch, any); cum_us sums e2e_us up to this epoch
    COORD_EXPORT_RESULT,       // epochs, e2e_us, energy_mj (sums over the attempt's epochs)
    COORD_EXPORT_FLEET,        // boards_online, boards, pending, active, done, failed
    COORD_EXPORT_SWEEPS,       // per sweep: name, runs, pending, active, done, failed
    COORD_EXPORT_STORE_ID,     // the store's identity (docs/store.md, "Identity"), if it has one
    COORD_EXPORT_COUNT,
} coord_export_query_t;

// Which rows: the attempt (run, attempt) and, for the record queries, those after (a, b), at
// most limit of them. Queries that take fewer ignore the rest.
typedef struct coord_export_key {
    const char *run; // borrowed
    int64_t attempt;
    int64_t a, b;  // cursor: the last row already exported
    int64_t limit; // rows at most
} coord_export_key_t;

// One row: per column its kind and value (i for INT, d for REAL and INT, s for TEXT).
typedef struct coord_export_row {
    int ncols;
    coord_value_kind_t kind[COORD_EXPORT_COLS_MAX];
    int64_t i[COORD_EXPORT_COLS_MAX];
    double d[COORD_EXPORT_COLS_MAX];
    const char *s[COORD_EXPORT_COLS_MAX]; // borrowed; valid during the callback only
} coord_export_row_t;

typedef int (*coord_export_row_fn)(const coord_export_row_t *row, void *arg);

// Runs query q for key and calls fn per row in order. fn returns 0 to go on, or a negative errno
// to stop (returned as is). Returns 0, or -EIO with err from SQLite.
int coord_store_export_each(coord_store_t *self, coord_export_query_t q,
                            const coord_export_key_t *key, coord_export_row_fn fn, void *arg,
                            jf_err_t *err);

#endif
