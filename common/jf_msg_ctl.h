/* Control family: the CLI's requests to the coordinator on the control endpoint and the replies
 * (docs/protocol.md §6). Every request gets exactly one ctl.reply or error. */
#ifndef JF_MSG_CTL_H
#define JF_MSG_CTL_H

#include "jf_msg.h"

#include <jansson.h>
#include <stdint.h>

#define JF_CTL_YAML_MAX (768 * 1024) // a submitted sweep file

// ctl.submit carrying a sweep file's name (for messages) and its text. Caller owns.
json_t *jf_msg_ctl_submit_new(int64_t id, const char *file, const char *yaml);
// ctl.cancel of a sweep by name.
json_t *jf_msg_ctl_cancel_new(int64_t id, const char *sweep);
// ctl.reply to message re; takes over *data_p (an object) on success.
json_t *jf_msg_ctl_reply_new(int64_t id, int64_t re, json_t **data_p);

#endif
