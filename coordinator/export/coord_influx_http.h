/* HTTP side of the InfluxDB exporter: gzip a batch and POST it to /write (1.x) or /api/v2/write
 * (2.x) with libcurl, precision ns. No retry policy; coord_influx decides. */
#ifndef COORD_INFLUX_HTTP_H
#define COORD_INFLUX_HTTP_H

#include "jf_err.h"
#include "jf_influx_config.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct coord_influx_http coord_influx_http_t;

// A client for cfg; token (may be NULL) is sent as "Authorization: Token <token>". Caller owns
// the result; release with coord_influx_http_destroy. NULL with err on failure.
coord_influx_http_t *coord_influx_http_new(const jf_influx_config_t *cfg, const char *token,
                                           jf_err_t *err);
void coord_influx_http_destroy(coord_influx_http_t **self_p);

// Sends len bytes of line protocol. Returns 0 when InfluxDB accepted them (HTTP 2xx); -EBADMSG
// when it refused them as bad data (HTTP 400: sending them again cannot help); -EIO for any other
// failure (no connection, timeout, 5xx, 401, 404 database not found: worth retrying). err has the
// HTTP status and InfluxDB's answer or curl's error.
int coord_influx_http_write(coord_influx_http_t *self, const char *text, size_t len, jf_err_t *err);

#endif
