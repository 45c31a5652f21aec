/* One batch of the InfluxDB exporter (docs/metrics.md): what follows the cursor in the store, as
 * line protocol. No I/O but the store's reads. */
#ifndef COORD_INFLUX_BATCH_H
#define COORD_INFLUX_BATCH_H

#include "coord_influx_line.h"
#include "coord_store_export.h"

#include <jansson.h>

// Appends to lines, up to batch points (and the buffer's byte limit), the rows of every run
// attempt that follow cursor ({"attempts": {"<run>/<attempt>": {...}}}, docs/metrics.md), then
// the fleet and sweep snapshot, and moves cursor past what it appended (cursor is changed in
// place; the caller keeps the old one until InfluxDB accepted the batch). A row that line
// protocol cannot carry is skipped with a warning. Returns 0, or -EIO/-ENOMEM with err.
int coord_influx_batch_build(coord_store_t *store, coord_influx_line_t *lines, json_t *cursor,
                             int batch, jf_err_t *err);

#endif
