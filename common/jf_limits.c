/* fleet.yaml coordinator.limits (jf_limits.h): defaults and the parser, over jf_yaml. Sizes and
 * rates are plain integers (bytes, messages); the window is a duration. */
#include "jf_limits.h"

#include "jf_units.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#define S_RATE_MAX      (INT64_C(1) << 40) // any per-second figure or burst
#define S_SIZE_MIN      1024               // a message cap below this would refuse a heartbeat
#define S_SIZE_MAX      (INT64_C(4) * 1024 * 1024) // the transport limit (ZMQ_MAXMSGSIZE)
#define S_WINDOW_MIN_US (100 * JF_US_PER_MS)
#define S_WINDOW_MAX_US (INT64_C(24) * 3600 * JF_US_PER_S)

typedef struct s_key {
    const char *key;
    size_t offset; // of the int64_t in jf_limits_t
    int64_t min, max;
} s_key_t;

static const s_key_t s_int_keys[] = {
    {"messages_per_s", offsetof(jf_limits_t, messages_per_s), 1, S_RATE_MAX},
    {"message_burst", offsetof(jf_limits_t, message_burst), 1, S_RATE_MAX},
    {"bytes_per_s", offsetof(jf_limits_t, bytes_per_s), S_SIZE_MIN, S_RATE_MAX},
    {"byte_burst", offsetof(jf_limits_t, byte_burst), S_SIZE_MIN, S_RATE_MAX},
    {"max_stream_bytes", offsetof(jf_limits_t, max_stream_bytes), S_SIZE_MIN, S_SIZE_MAX},
    {"max_other_bytes", offsetof(jf_limits_t, max_other_bytes), S_SIZE_MIN, S_SIZE_MAX},
    {"unregistered_per_s", offsetof(jf_limits_t, unregistered_per_s), 1, S_RATE_MAX},
    {"unregistered_burst", offsetof(jf_limits_t, unregistered_burst), 1, S_RATE_MAX},
};
static const char *const s_keys[] = {"messages_per_s",     "message_burst",      "bytes_per_s",
                                     "byte_burst",         "max_stream_bytes",   "max_other_bytes",
                                     "unregistered_per_s", "unregistered_burst", "quarantine_after",
                                     "quarantine_window"};

#define S_COUNT(a) (sizeof(a) / sizeof((a)[0]))

void jf_limits_defaults(jf_limits_t *l)
{
    *l = (jf_limits_t){
        .messages_per_s = JF_LIMITS_MESSAGES_PER_S,
        .message_burst = JF_LIMITS_MESSAGE_BURST,
        .bytes_per_s = JF_LIMITS_BYTES_PER_S,
        .byte_burst = JF_LIMITS_BYTE_BURST,
        .max_stream_bytes = JF_LIMITS_MAX_STREAM_BYTES,
        .max_other_bytes = JF_LIMITS_MAX_OTHER_BYTES,
        .quarantine_after = JF_LIMITS_QUARANTINE_AFTER,
        .quarantine_window_us = JF_LIMITS_QUARANTINE_WINDOW_US,
        .unregistered_per_s = JF_LIMITS_UNREGISTERED_PER_S,
        .unregistered_burst = JF_LIMITS_UNREGISTERED_BURST,
    };
}

static int s_ints(const jf_yaml_node_t *node, jf_limits_t *l, jf_err_t *err)
{
    for (size_t i = 0; i < S_COUNT(s_int_keys); i++) {
        const jf_yaml_node_t *v = jf_yaml_node_get(node, s_int_keys[i].key);
        int64_t *field = (int64_t *) ((char *) l + s_int_keys[i].offset);
        int rc = v ? jf_yaml_node_to_i64(v, s_int_keys[i].min, s_int_keys[i].max, field, err) : 0;
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int s_quarantine(const jf_yaml_node_t *node, jf_limits_t *l, jf_err_t *err)
{
    const jf_yaml_node_t *v = jf_yaml_node_get(node, "quarantine_after");
    int rc = v ? jf_yaml_node_to_int(v, 1, JF_LIMITS_VIOLATIONS_MAX, &l->quarantine_after, err) : 0;
    v = jf_yaml_node_get(node, "quarantine_window");
    if (rc == 0 && v) {
        rc = jf_yaml_node_to_duration_us(v, S_WINDOW_MIN_US, S_WINDOW_MAX_US,
                                         &l->quarantine_window_us, err);
    }
    return rc;
}

int jf_limits_parse(const jf_yaml_node_t *node, jf_limits_t *l, jf_err_t *err)
{
    int rc = jf_yaml_node_expect(node, JF_YAML_MAPPING, err);
    rc = rc ? rc : jf_yaml_check_keys(node, s_keys, S_COUNT(s_keys), "limits", err);
    rc = rc ? rc : s_ints(node, l, err);
    rc = rc ? rc : s_quarantine(node, l, err);
    if (rc != 0) {
        return rc;
    }
    // A bucket shallower than the largest message it must pass would refuse that message for
    // ever, however slowly it came.
    int64_t largest =
        l->max_stream_bytes > l->max_other_bytes ? l->max_stream_bytes : l->max_other_bytes;
    if (l->byte_burst < largest) {
        const jf_yaml_node_t *at = jf_yaml_node_get(node, "byte_burst");
        return jf_yaml_error(err, -EINVAL, at ? at : node,
                             "'byte_burst' (%lld) must be at least the largest message allowed "
                             "(%lld bytes)",
                             (long long) l->byte_burst, (long long) largest);
    }
    return 0;
}
