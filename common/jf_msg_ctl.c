/* Control family codecs (docs/protocol.md §6). */
#include "jf_msg_ctl.h"

#include "jf_msg_family.h"
#include "jf_parse.h"

#include <errno.h>
#include <limits.h>

int jf_msg_check_ctl_status(const json_t *body, jf_err_t *err)
{
    (void) body;
    (void) err;
    return 0;
}

int jf_msg_check_ctl_submit(const json_t *body, jf_err_t *err)
{
    json_t *yaml = json_object_get(body, "yaml");
    json_t *file = json_object_get(body, "file");
    if (!json_is_string(file) || json_string_length(file) == 0 ||
        json_string_length(file) >= PATH_MAX) {
        return jf_err_set(err, -EPROTO, "'file' must be a non-empty string");
    }
    if (!json_is_string(yaml) || json_string_length(yaml) > JF_CTL_YAML_MAX) {
        return jf_err_set(err, -EPROTO, "'yaml' must be a string of at most %d bytes",
                          JF_CTL_YAML_MAX);
    }
    return 0;
}

int jf_msg_check_ctl_cancel(const json_t *body, jf_err_t *err)
{
    if (!jf_parse_is_ident(json_string_value(json_object_get(body, "sweep")))) {
        return jf_err_set(err, -EPROTO, "'sweep' must be a sweep name");
    }
    return 0;
}

int jf_msg_check_ctl_reply(const json_t *body, jf_err_t *err)
{
    if (!json_is_integer(json_object_get(body, "re")) ||
        !json_is_object(json_object_get(body, "data"))) {
        return jf_err_set(err, -EPROTO, "ctl.reply needs integer 're' and object 'data'");
    }
    return 0;
}

json_t *jf_msg_ctl_submit_new(int64_t id, const char *file, const char *yaml)
{
    json_t *msg = jf_msg_new(JF_MSG_CTL_SUBMIT, id);
    if (msg && json_object_update_new(msg, json_pack("{s:s, s:s}", "file", file, "yaml", yaml))) {
        json_decref(msg);
        return NULL;
    }
    return msg;
}

json_t *jf_msg_ctl_cancel_new(int64_t id, const char *sweep)
{
    json_t *msg = jf_msg_new(JF_MSG_CTL_CANCEL, id);
    if (msg && json_object_set_new(msg, "sweep", json_string(sweep)) != 0) {
        json_decref(msg);
        return NULL;
    }
    return msg;
}

json_t *jf_msg_ctl_reply_new(int64_t id, int64_t re, json_t **data_p)
{
    json_t *msg = jf_msg_new(JF_MSG_CTL_REPLY, id);
    if (!msg || json_object_set_new(msg, "re", json_integer(re)) != 0 ||
        json_object_set(msg, "data", *data_p) != 0) {
        json_decref(msg);
        return NULL;
    }
    json_decref(*data_p);
    *data_p = NULL;
    return msg;
}
