/* fleet.yaml coordinator.influx (docs/fleet-yaml.md, docs/metrics.md): where the coordinator's
 * exporter writes telemetry, run progress and results in InfluxDB line protocol. The settings and
 * their parser only; the exporter is coordinator/export/coord_influx. */
#ifndef JF_INFLUX_CONFIG_H
#define JF_INFLUX_CONFIG_H

#include "jf_err.h"
#include "jf_yaml.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#define JF_INFLUX_URL_MAX            255
#define JF_INFLUX_NAME_MAX           255 // db, rp, org, bucket
#define JF_INFLUX_DEFAULT_BATCH      5000
#define JF_INFLUX_BATCH_MAX          100000
#define JF_INFLUX_DEFAULT_FLUSH_US   (INT64_C(1) * 1000000)
#define JF_INFLUX_DEFAULT_TIMEOUT_US (INT64_C(10) * 1000000)

typedef struct jf_influx_config {
    bool enabled;                        // false when fleet.yaml has no coordinator.influx
    char url[JF_INFLUX_URL_MAX + 1];     // base URL, http:// or https://, without /write
    char db[JF_INFLUX_NAME_MAX + 1];     // InfluxDB 1.x database; "" for 2.x
    char rp[JF_INFLUX_NAME_MAX + 1];     // 1.x retention policy; "" for the database's default
    char org[JF_INFLUX_NAME_MAX + 1];    // 2.x organisation; "" for 1.x
    char bucket[JF_INFLUX_NAME_MAX + 1]; // 2.x bucket; "" for 1.x
    char token_file[PATH_MAX];           // absolute; "" for none. The token is read by the
                                         // exporter, never stored here
    int batch;                           // points per request, 1..JF_INFLUX_BATCH_MAX
    int64_t flush_interval_us;           // how often the exporter looks for new data
    int64_t timeout_us;                  // per HTTP request
} jf_influx_config_t;

// Parses the coordinator's `influx` mapping (node) into c; base_dir (absolute) resolves a
// relative token_file. Returns 0, or -EINVAL with err "<file>:<line>:<col>: <what>" (unknown or
// missing key, both or neither of db and bucket, a value out of range). c is left partly filled on
// failure.
int jf_influx_config_parse(const jf_yaml_node_t *node, const char *base_dir, jf_influx_config_t *c,
                           jf_err_t *err);

#endif
