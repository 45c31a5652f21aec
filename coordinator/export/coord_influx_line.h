/* InfluxDB line protocol writer (docs/metrics.md, "Line protocol"): points appended to a bounded
 * text buffer with the escaping of InfluxDB's line protocol reference (measurement: comma and
 * space; tag keys, tag values and field keys: comma, equals sign and space; string field values:
 * double quote and backslash). Builds text only; sending it is coord_influx. */
#ifndef COORD_INFLUX_LINE_H
#define COORD_INFLUX_LINE_H

#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct coord_influx_line coord_influx_line_t;

// An empty buffer that holds at most max_bytes of text. Caller owns the result; release with
// coord_influx_line_destroy. NULL on out of memory.
coord_influx_line_t *coord_influx_line_new(size_t max_bytes);
void coord_influx_line_destroy(coord_influx_line_t **self_p);

// Starts a point of measurement. Tags and fields follow; coord_influx_line_end finishes it and
// coord_influx_line_cancel drops it. Only one point is open at a time.
void coord_influx_line_begin(coord_influx_line_t *self, const char *measurement);
// Adds a tag (call before the first field). An empty value leaves the tag out, as the protocol
// has no empty tag values.
void coord_influx_line_tag(coord_influx_line_t *self, const char *key, const char *value);
void coord_influx_line_field_i64(coord_influx_line_t *self, const char *key, int64_t value);
// A NaN or infinite value leaves the field out (the protocol has none).
void coord_influx_line_field_f64(coord_influx_line_t *self, const char *key, double value);
void coord_influx_line_field_str(coord_influx_line_t *self, const char *key, const char *value);
void coord_influx_line_field_bool(coord_influx_line_t *self, const char *key, bool value);
// Finishes the open point with its timestamp in ns. Returns 0; -EINVAL when the point has no
// field or a name or value holds a newline or a control character (the protocol cannot carry
// them), -ENOSPC when the buffer would exceed max_bytes. On failure the point is dropped and the
// buffer is as before coord_influx_line_begin.
int coord_influx_line_end(coord_influx_line_t *self, int64_t t_ns, jf_err_t *err);
void coord_influx_line_cancel(coord_influx_line_t *self);

// The finished points, one per line, each ending in '\n'. Borrowed; valid until the next call.
const char *coord_influx_line_text(const coord_influx_line_t *self);
size_t coord_influx_line_len(const coord_influx_line_t *self);
size_t coord_influx_line_points(const coord_influx_line_t *self);
// Drops every point after the first `points` (a length and count read before adding them).
void coord_influx_line_truncate(coord_influx_line_t *self, size_t len, size_t points);
// Empties the buffer.
void coord_influx_line_clear(coord_influx_line_t *self);

#endif
