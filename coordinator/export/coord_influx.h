/* The InfluxDB exporter (docs/metrics.md): a thread of its own (a czmq actor) that reads what the
 * coordinator has committed to the store, on its own read-only connection, and writes it to an
 * InfluxDB /write endpoint (1.x db/rp or 2.x org/bucket) over libcurl, gzip-compressed, in
 * batches. Its position is a cursor file in the data directory, advanced only after InfluxDB
 * accepted a batch, so the store is the spool: nothing is lost while InfluxDB is down or the
 * coordinator restarts. The event loop never waits for it. */
#ifndef COORD_INFLUX_H
#define COORD_INFLUX_H

#include "jf_err.h"
#include "jf_influx_config.h"

#define COORD_INFLUX_BATCH_MAX_BYTES (8 * 1024 * 1024) // line protocol text per request
#define COORD_INFLUX_BACKOFF_MAX_US  (INT64_C(60) * 1000000)
#define COORD_INFLUX_CURSOR_FILE     "influx-cursor.json" // in the data directory
#define COORD_INFLUX_TOKEN_MAX       4096

typedef struct coord_influx coord_influx_t;

// Starts the exporter for cfg (cfg->enabled), reading the store at store_path and keeping its
// cursor in data_dir. The token file, when configured, is read here (its contents are never
// logged). Caller owns the result; release with coord_influx_destroy. NULL with err when the
// token file cannot be read or the thread cannot start.
coord_influx_t *coord_influx_new(const jf_influx_config_t *cfg, const char *store_path,
                                 const char *data_dir, jf_err_t *err);

// Stops the thread (an unsent batch is dropped; its rows are sent again at the next start, since
// the cursor did not pass them) and frees everything. Accepts NULL and *self_p == NULL.
void coord_influx_destroy(coord_influx_t **self_p);

#endif
