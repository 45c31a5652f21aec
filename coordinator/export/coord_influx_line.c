/* InfluxDB line protocol writer (coord_influx_line.h). A point is written straight into the
 * buffer and rolled back to its start when it cannot be finished. */
#include "coord_influx_line.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_NUM_MAX       40   // room for a %.17g double or an int64 with its suffix
#define S_INITIAL_BYTES 4096 // first allocation; it doubles as points are added

struct coord_influx_line {
    char *buf;        // owned; len used, cap allocated, always NUL-terminated
    size_t len;       // bytes of finished points plus the open one
    size_t cap;       // allocated bytes
    size_t max_bytes; // limit on len
    size_t mark;      // len when the open point began
    size_t n_points;  // finished points
    size_t n_fields;  // fields of the open point
    bool open;        // a point is open
    bool bad;         // the open point has a character the protocol cannot carry
    bool full;        // the open point outgrew max_bytes
};

coord_influx_line_t *coord_influx_line_new(size_t max_bytes)
{
    coord_influx_line_t *self = calloc(1, sizeof *self);
    if (!self) {
        return NULL;
    }
    self->cap = S_INITIAL_BYTES;
    self->max_bytes = max_bytes;
    self->buf = malloc(self->cap);
    if (!self->buf) {
        coord_influx_line_destroy(&self);
        return NULL;
    }
    self->buf[0] = '\0';
    return self;
}

void coord_influx_line_destroy(coord_influx_line_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    free((*self_p)->buf);
    free(*self_p);
    *self_p = NULL;
}

static void s_put(coord_influx_line_t *self, const char *s, size_t n)
{
    if (self->full || self->len + n + 1 > self->max_bytes + 1) {
        self->full = true;
        return;
    }
    if (self->len + n + 1 > self->cap) {
        size_t cap = self->cap;
        while (cap < self->len + n + 1) {
            cap *= 2;
        }
        char *grown = realloc(self->buf, cap);
        if (!grown) {
            self->full = true; // out of memory is reported like a full buffer: the point is dropped
            return;
        }
        self->buf = grown;
        self->cap = cap;
    }
    memcpy(self->buf + self->len, s, n);
    self->len += n;
    self->buf[self->len] = '\0';
}

// Writes s with a backslash before each character in specials. Newlines and other control
// characters mark the point bad: the protocol has no way to carry them.
static void s_put_escaped(coord_influx_line_t *self, const char *s, const char *specials)
{
    for (const char *p = s; *p; p++) {
        if ((unsigned char) *p < 0x20 || *p == 0x7f) {
            self->bad = true;
            return;
        }
        if (strchr(specials, *p)) {
            s_put(self, "\\", 1);
        }
        s_put(self, p, 1);
    }
}

void coord_influx_line_begin(coord_influx_line_t *self, const char *measurement)
{
    assert(!self->open);
    self->open = true;
    self->bad = !measurement[0];
    self->full = false;
    self->mark = self->len;
    self->n_fields = 0;
    s_put_escaped(self, measurement, ", ");
}

void coord_influx_line_tag(coord_influx_line_t *self, const char *key, const char *value)
{
    assert(self->open && self->n_fields == 0);
    if (!value || !value[0]) {
        return;
    }
    s_put(self, ",", 1);
    s_put_escaped(self, key, ",= ");
    s_put(self, "=", 1);
    s_put_escaped(self, value, ",= ");
}

static void s_field_key(coord_influx_line_t *self, const char *key)
{
    assert(self->open);
    s_put(self, self->n_fields == 0 ? " " : ",", 1);
    s_put_escaped(self, key, ",= ");
    s_put(self, "=", 1);
    self->n_fields++;
}

void coord_influx_line_field_i64(coord_influx_line_t *self, const char *key, int64_t value)
{
    char num[S_NUM_MAX];
    int n = snprintf(num, sizeof num, "%" PRId64 "i", value);
    s_field_key(self, key);
    s_put(self, num, (size_t) n);
}

void coord_influx_line_field_f64(coord_influx_line_t *self, const char *key, double value)
{
    if (!isfinite(value)) {
        return;
    }
    char num[S_NUM_MAX];
    int n = snprintf(num, sizeof num, "%.17g", value);
    s_field_key(self, key);
    s_put(self, num, (size_t) n);
}

void coord_influx_line_field_str(coord_influx_line_t *self, const char *key, const char *value)
{
    s_field_key(self, key);
    s_put(self, "\"", 1);
    s_put_escaped(self, value, "\"\\");
    s_put(self, "\"", 1);
}

void coord_influx_line_field_bool(coord_influx_line_t *self, const char *key, bool value)
{
    s_field_key(self, key);
    s_put(self, value ? "true" : "false", value ? 4 : 5);
}

void coord_influx_line_cancel(coord_influx_line_t *self)
{
    if (!self->open) {
        return;
    }
    self->len = self->mark;
    self->buf[self->len] = '\0';
    self->open = false;
}

int coord_influx_line_end(coord_influx_line_t *self, int64_t t_ns, jf_err_t *err)
{
    char num[S_NUM_MAX];
    int n = snprintf(num, sizeof num, " %" PRId64 "\n", t_ns);
    s_put(self, num, (size_t) n);
    int rc = 0;
    if (self->n_fields == 0) {
        rc = jf_err_set(err, -EINVAL, "influx: point of '%.64s' has no field",
                        self->buf + self->mark);
    } else if (self->bad) {
        rc = jf_err_set(err, -EINVAL,
                        "influx: point has an empty measurement or a control character in a name "
                        "or value, which line protocol cannot carry");
    } else if (self->full) {
        rc = jf_err_set(err, -ENOSPC, "influx: batch is full (%zu bytes)", self->max_bytes);
    }
    if (rc != 0) {
        coord_influx_line_cancel(self);
        return rc;
    }
    self->open = false;
    self->n_points++;
    return 0;
}

const char *coord_influx_line_text(const coord_influx_line_t *self)
{
    return self->buf;
}

size_t coord_influx_line_len(const coord_influx_line_t *self)
{
    return self->len;
}

size_t coord_influx_line_points(const coord_influx_line_t *self)
{
    return self->n_points;
}

void coord_influx_line_clear(coord_influx_line_t *self)
{
    assert(!self->open);
    self->len = 0;
    self->buf[0] = '\0';
    self->n_points = 0;
}

void coord_influx_line_truncate(coord_influx_line_t *self, size_t len, size_t points)
{
    assert(!self->open && len <= self->len && points <= self->n_points);
    self->len = len;
    self->buf[len] = '\0';
    self->n_points = points;
}
