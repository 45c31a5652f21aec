/* fleet.yaml coordinator.influx (jf_influx_config.h) over jf_yaml: InfluxDB 1.x (db, rp) or 2.x
 * (org, bucket, token_file) target of the coordinator's exporter. */
#include "jf_influx_config.h"

#include "jf_units.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define S_COUNT(a)       (sizeof(a) / sizeof((a)[0]))
#define S_FLUSH_MIN_US   (100 * JF_US_PER_MS)
#define S_FLUSH_MAX_US   (INT64_C(10) * 60 * JF_US_PER_S)
#define S_TIMEOUT_MIN_US (JF_US_PER_S)
#define S_TIMEOUT_MAX_US (INT64_C(10) * 60 * JF_US_PER_S)

static const char *const s_keys[] = {
    "url", "db", "rp", "org", "bucket", "token_file", "batch", "flush_interval", "timeout"};

typedef struct s_str_key {
    const char *key;
    size_t offset; // of the char array in jf_influx_config_t
    size_t size;
} s_str_key_t;

static const s_str_key_t s_str_keys[] = {
    {"url", offsetof(jf_influx_config_t, url), JF_INFLUX_URL_MAX + 1},
    {"db", offsetof(jf_influx_config_t, db), JF_INFLUX_NAME_MAX + 1},
    {"rp", offsetof(jf_influx_config_t, rp), JF_INFLUX_NAME_MAX + 1},
    {"org", offsetof(jf_influx_config_t, org), JF_INFLUX_NAME_MAX + 1},
    {"bucket", offsetof(jf_influx_config_t, bucket), JF_INFLUX_NAME_MAX + 1},
};

static int s_strings(const jf_yaml_node_t *node, jf_influx_config_t *c, jf_err_t *err)
{
    for (size_t i = 0; i < S_COUNT(s_str_keys); i++) {
        const jf_yaml_node_t *v = jf_yaml_node_get(node, s_str_keys[i].key);
        char *field = (char *) c + s_str_keys[i].offset;
        int rc = v ? jf_yaml_node_to_str(v, field, s_str_keys[i].size, err) : 0;
        if (rc != 0) {
            return rc;
        }
        if (v && field[0] == '\0') {
            return jf_yaml_error(err, -EINVAL, v, "'%s' must not be empty", s_str_keys[i].key);
        }
    }
    return 0;
}

// Exactly one of db (1.x) and bucket (2.x); org only and always with bucket; rp only with db.
static int s_target(const jf_yaml_node_t *node, const jf_influx_config_t *c, jf_err_t *err)
{
    const jf_yaml_node_t *url = jf_yaml_node_get(node, "url");
    if (strncmp(c->url, "http://", 7) != 0 && strncmp(c->url, "https://", 8) != 0) {
        return jf_yaml_error(err, -EINVAL, url,
                             "'url' must start with http:// or https://, got '%.64s'", c->url);
    }
    if ((c->db[0] != '\0') == (c->bucket[0] != '\0')) {
        return jf_yaml_error(err, -EINVAL, node,
                             "influx needs exactly one of 'db' (InfluxDB 1.x) and 'bucket' "
                             "(InfluxDB 2.x)");
    }
    if (c->bucket[0] != '\0' && c->org[0] == '\0') {
        return jf_yaml_error(err, -EINVAL, node, "influx 'bucket' needs 'org'");
    }
    const jf_yaml_node_t *org = jf_yaml_node_get(node, "org");
    if (c->db[0] != '\0' && org) {
        return jf_yaml_error(err, -EINVAL, org,
                             "'org' goes with 'bucket' (InfluxDB 2.x), not 'db'");
    }
    const jf_yaml_node_t *rp = jf_yaml_node_get(node, "rp");
    if (c->bucket[0] != '\0' && rp) {
        return jf_yaml_error(err, -EINVAL, rp, "'rp' goes with 'db' (InfluxDB 1.x), not 'bucket'");
    }
    return 0;
}

static int s_token_file(const jf_yaml_node_t *node, const char *base_dir, jf_influx_config_t *c,
                        jf_err_t *err)
{
    const jf_yaml_node_t *v = jf_yaml_node_get(node, "token_file");
    char raw[PATH_MAX] = {0};
    int rc = v ? jf_yaml_node_to_str(v, raw, sizeof raw, err) : 0;
    if (!v || rc != 0) {
        return rc;
    }
    if (raw[0] == '\0') {
        return jf_yaml_error(err, -EINVAL, v, "'token_file' must not be empty");
    }
    int n = raw[0] == '/' ? snprintf(c->token_file, sizeof c->token_file, "%s", raw)
                          : snprintf(c->token_file, sizeof c->token_file, "%s/%s", base_dir, raw);
    if (n < 0 || (size_t) n >= sizeof c->token_file) {
        return jf_yaml_error(err, -ENAMETOOLONG, v,
                             "'token_file' resolves to a path longer than %d bytes", PATH_MAX - 1);
    }
    return 0;
}

static int s_numbers(const jf_yaml_node_t *node, jf_influx_config_t *c, jf_err_t *err)
{
    const jf_yaml_node_t *v = jf_yaml_node_get(node, "batch");
    int rc = v ? jf_yaml_node_to_int(v, 1, JF_INFLUX_BATCH_MAX, &c->batch, err) : 0;
    v = jf_yaml_node_get(node, "flush_interval");
    rc = rc || !v ? rc
                  : jf_yaml_node_to_duration_us(v, S_FLUSH_MIN_US, S_FLUSH_MAX_US,
                                                &c->flush_interval_us, err);
    v = jf_yaml_node_get(node, "timeout");
    rc = rc || !v ? rc
                  : jf_yaml_node_to_duration_us(v, S_TIMEOUT_MIN_US, S_TIMEOUT_MAX_US,
                                                &c->timeout_us, err);
    return rc;
}

int jf_influx_config_parse(const jf_yaml_node_t *node, const char *base_dir, jf_influx_config_t *c,
                           jf_err_t *err)
{
    *c = (jf_influx_config_t){.batch = JF_INFLUX_DEFAULT_BATCH,
                              .flush_interval_us = JF_INFLUX_DEFAULT_FLUSH_US,
                              .timeout_us = JF_INFLUX_DEFAULT_TIMEOUT_US};
    int rc = jf_yaml_node_expect(node, JF_YAML_MAPPING, err);
    rc = rc ? rc : jf_yaml_check_keys(node, s_keys, S_COUNT(s_keys), "influx", err);
    const jf_yaml_node_t *url = NULL;
    rc = rc ? rc : jf_yaml_node_require(node, "url", "influx", &url, err);
    rc = rc ? rc : s_strings(node, c, err);
    rc = rc ? rc : s_target(node, c, err);
    rc = rc ? rc : s_token_file(node, base_dir, c, err);
    rc = rc ? rc : s_numbers(node, c, err);
    c->enabled = rc == 0;
    return rc;
}
