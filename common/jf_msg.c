/* Message envelope and the closed type table (docs/protocol.md §1-§3). */
#include "jf_msg.h"

#include "jf_msg_family.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*s_check_fn)(const json_t *body, jf_err_t *err);
typedef int (*s_decode_fn)(const json_t *body, jf_msg_t *msg, jf_err_t *err);

typedef struct s_type_entry {
    const char *name;
    unsigned dirs;             // jf_msg_dir_t bits: who may receive it
    const char *const *fields; // members allowed besides v, type, id (NULL-terminated)
    s_check_fn check;          // checks the body; NULL when decode does
    s_decode_fn decode;        // checks the body and fills msg's typed payload; NULL: none
} s_type_entry_t;

#define F(...) ((const char *const[]){__VA_ARGS__, NULL})

static const s_type_entry_t s_types[JF_MSG_TYPE_COUNT] = {
    [JF_MSG_HELLO] = {"hello", JF_MSG_TO_COORD,
                      F("name", "board_type", "platform", "software", "power_modes", "storage",
                        "started_us", "runs", "clocks"),
                      jf_msg_check_hello, NULL},
    [JF_MSG_RUN_ACCEPT] = {"run.accept", JF_MSG_TO_COORD, F("run", "attempt", "re"),
                           jf_msg_check_run_ref, NULL},
    [JF_MSG_RUN_REJECT] = {"run.reject", JF_MSG_TO_COORD,
                           F("run", "attempt", "reason", "detail", "re"), jf_msg_check_run_reject,
                           NULL},
    [JF_MSG_RUN_PROGRESS] = {"run.progress", JF_MSG_TO_COORD, F("run", "attempt", "seq", "records"),
                             NULL, jf_msg_decode_run_progress},
    [JF_MSG_TELEMETRY] = {"telemetry", JF_MSG_TO_COORD, F("run", "attempt", "seq", "samples"), NULL,
                          jf_msg_decode_telemetry},
    [JF_MSG_RUN_DONE] = {"run.done", JF_MSG_TO_COORD, F("run", "attempt", "seq", "epochs"),
                         jf_msg_check_run_done, NULL},
    [JF_MSG_RUN_FAILED] = {"run.failed", JF_MSG_TO_COORD,
                           F("run", "attempt", "seq", "reason", "detail"), jf_msg_check_run_failed,
                           NULL},
    [JF_MSG_WELCOME] = {"welcome", JF_MSG_TO_AGENT,
                        F("re", "session", "coordinator_epoch", "heartbeat_ms",
                          "heartbeat_timeout_ms", "telemetry_hz", "resume", "credit"),
                        jf_msg_check_welcome, NULL},
    [JF_MSG_RUN_ASSIGN] = {"run.assign", JF_MSG_TO_AGENT, F("run", "attempt", "params"), NULL,
                           jf_msg_decode_run_assign},
    [JF_MSG_RUN_CANCEL] = {"run.cancel", JF_MSG_TO_AGENT, F("run", "attempt"), jf_msg_check_run_ref,
                           NULL},
    [JF_MSG_ACK] = {"ack", JF_MSG_TO_AGENT, F("run", "attempt", "seq", "credit"), jf_msg_check_ack,
                    NULL},
    [JF_MSG_HEARTBEAT] = {"heartbeat", JF_MSG_TO_COORD | JF_MSG_TO_AGENT,
                          F("t_us", "run", "echo_t_us", "recv_t_us"), jf_msg_check_heartbeat, NULL},
    [JF_MSG_ERROR] = {"error", JF_MSG_TO_COORD | JF_MSG_TO_AGENT | JF_MSG_TO_CLI,
                      F("re", "code", "detail"), jf_msg_check_error, NULL},
    [JF_MSG_CTL_STATUS] = {"ctl.status", JF_MSG_TO_CTL, ((const char *const[]){NULL}),
                           jf_msg_check_ctl_status, NULL},
    [JF_MSG_CTL_SUBMIT] = {"ctl.submit", JF_MSG_TO_CTL, F("file", "yaml"), jf_msg_check_ctl_submit,
                           NULL},
    [JF_MSG_CTL_CANCEL] = {"ctl.cancel", JF_MSG_TO_CTL, F("sweep"), jf_msg_check_ctl_cancel, NULL},
    [JF_MSG_CTL_REPLY] = {"ctl.reply", JF_MSG_TO_CLI, F("re", "data"), jf_msg_check_ctl_reply,
                          NULL},
    [JF_MSG_BLOB_GET] = {"blob.get", JF_MSG_TO_COORD, F("blob", "offset"), jf_msg_check_blob_get,
                         NULL},
    [JF_MSG_RUN_WEIGHTS] = {"run.weights", JF_MSG_TO_COORD,
                            F("run", "attempt", "seq", "blob", "size_bytes", "offset", "data"),
                            NULL, jf_msg_decode_run_weights},
    [JF_MSG_BLOB_DATA] = {"blob.data", JF_MSG_TO_AGENT,
                          F("re", "blob", "size_bytes", "offset", "data"), NULL,
                          jf_msg_decode_blob_data},
};

#undef F

const char *jf_msg_type_name(jf_msg_type_t type)
{
    if ((int) type < 0 || type >= JF_MSG_TYPE_COUNT) {
        return "?";
    }
    return s_types[type].name;
}

static bool s_type_lookup(const char *name, jf_msg_type_t *ret_type)
{
    for (int i = 0; i < JF_MSG_TYPE_COUNT; i++) {
        if (strcmp(name, s_types[i].name) == 0) {
            *ret_type = (jf_msg_type_t) i;
            return true;
        }
    }
    return false;
}

static bool s_field_allowed(const s_type_entry_t *t, const char *key)
{
    if (strcmp(key, "v") == 0 || strcmp(key, "type") == 0 || strcmp(key, "id") == 0) {
        return true;
    }
    for (const char *const *f = t->fields; *f; f++) {
        if (strcmp(*f, key) == 0) {
            return true;
        }
    }
    return false;
}

// Commands are strict: a member the receiver does not know could change what the message means.
static int s_check_fields(const s_type_entry_t *t, const json_t *root, jf_err_t *err)
{
    const char *key = NULL;
    json_t *value = NULL;
    json_object_foreach((json_t *) root, key, value) {
        (void) value;
        if (!s_field_allowed(t, key)) {
            return jf_err_set(err, -EPROTO, "%s: unknown member '%.64s'", t->name, key);
        }
    }
    return 0;
}

static int s_decode_envelope(const json_t *root, unsigned dir, jf_msg_type_t *ret_type,
                             const char **ret_code, int64_t *ret_id, jf_err_t *err)
{
    json_t *jid = json_object_get(root, "id");
    if (json_is_integer(jid) && json_integer_value(jid) >= 0) {
        *ret_id = json_integer_value(jid);
    }
    json_t *jv = json_object_get(root, "v");
    if (!json_is_integer(jv) || json_integer_value(jv) != JF_PROTOCOL_VERSION) {
        *ret_code = JF_MSG_E_BAD_VERSION;
        return jf_err_set(err, -EPROTO, "'v' must be the integer %d (supported: [%d])",
                          JF_PROTOCOL_VERSION, JF_PROTOCOL_VERSION);
    }
    const char *tname = json_string_value(json_object_get(root, "type"));
    if (!tname || !s_type_lookup(tname, ret_type) || !(s_types[*ret_type].dirs & dir)) {
        *ret_code = JF_MSG_E_UNKNOWN_TYPE;
        if (!tname) {
            return jf_err_set(err, -EPROTO, "'type' must be a string");
        }
        return jf_err_set(err, -EPROTO, "type '%.32s' is not a message this receiver accepts",
                          tname);
    }
    if (*ret_id < 0) {
        *ret_code = JF_MSG_E_BAD_FIELD;
        return jf_err_set(err, -EPROTO, "'id' must be a non-negative integer");
    }
    return 0;
}

// The type's own schema: a checker, or a decoder that keeps the typed form it built in msg.
static int s_check_body(const s_type_entry_t *t, const json_t *root, jf_msg_t *msg, jf_err_t *err)
{
    return t->decode ? t->decode(root, msg, err) : t->check(root, err);
}

int jf_msg_decode(const void *data, size_t len, unsigned dir, size_t max_bytes, jf_msg_t *ret_msg,
                  const char **ret_code, int64_t *ret_id, jf_err_t *err)
{
    *ret_id = -1;
    *ret_code = JF_MSG_E_BAD_JSON;
    if (len > max_bytes) {
        *ret_code = JF_MSG_E_TOO_LARGE;
        return jf_err_set(err, -EMSGSIZE, "message of %zu bytes exceeds the limit of %zu", len,
                          max_bytes);
    }
    json_error_t jerr;
    json_t *root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        return jf_err_set(err, -EPROTO, "invalid JSON at line %d column %d: %s", jerr.line,
                          jerr.column, jerr.text);
    }
    int rc = -EPROTO;
    jf_msg_type_t type = JF_MSG_TYPE_COUNT;
    jf_msg_t msg = {.body = root}; // owns root from here: jf_msg_fini releases it on failure
    if (!json_is_object(root)) {
        jf_err_set(err, -EPROTO, "a message must be a JSON object");
        goto out_fini;
    }
    rc = s_decode_envelope(root, dir, &type, ret_code, ret_id, err);
    if (rc == 0) {
        *ret_code = JF_MSG_E_BAD_FIELD;
        rc = s_check_fields(&s_types[type], root, err);
    }
    if (rc == 0 && (rc = s_check_body(&s_types[type], root, &msg, err)) != 0) {
        jf_err_prefix(err, "%s", s_types[type].name);
    }
    if (rc == 0) {
        msg.type = type;
        msg.id = *ret_id;
        *ret_msg = msg;
        *ret_code = NULL;
        return 0;
    }
out_fini:
    jf_msg_fini(&msg);
    return rc < 0 ? (rc == -EINVAL ? -EPROTO : rc) : -EPROTO;
}

void jf_msg_fini(jf_msg_t *msg)
{
    if (!msg) {
        return;
    }
    json_decref(msg->body);
    msg->body = NULL;
    free(msg->assign);
    msg->assign = NULL;
    jf_msg_run_progress_free(msg->progress);
    msg->progress = NULL;
    jf_msg_telemetry_free(msg->telemetry);
    msg->telemetry = NULL;
    jf_msg_blob_chunk_free(msg->chunk);
    msg->chunk = NULL;
}

json_t *jf_msg_new(jf_msg_type_t type, int64_t id)
{
    return json_pack("{s:i, s:s, s:I}", "v", JF_PROTOCOL_VERSION, "type", jf_msg_type_name(type),
                     "id", (json_int_t) id);
}

char *jf_msg_encode(const json_t *msg, size_t *ret_len)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    if (text && ret_len) {
        *ret_len = strlen(text);
    }
    return text;
}

json_t *jf_msg_error_new(int64_t id, int64_t re, const char *code, const char *detail)
{
    json_t *msg = jf_msg_new(JF_MSG_ERROR, id);
    if (!msg) {
        return NULL;
    }
    json_t *jre = re >= 0 ? json_integer(re) : json_null();
    // Details may quote hostile input: keep them printable ASCII so the reply is always valid JSON.
    char cut[JF_MSG_TEXT_MAX + 1] = {0};
    for (size_t i = 0; detail && detail[i] && i < JF_MSG_TEXT_MAX; i++) {
        unsigned char c = (unsigned char) detail[i];
        cut[i] = (c < 0x20 || c >= 0x7f) ? '?' : (char) c;
    }
    if (json_object_set_new(msg, "re", jre) != 0 ||
        json_object_set_new(msg, "code", json_string(code)) != 0 ||
        json_object_set_new(msg, "detail", json_string(cut)) != 0) {
        json_decref(msg);
        return NULL;
    }
    return msg;
}
