/* Internal to common/: the per-type schema checkers that jf_msg.c's type table calls. Each
 * checks one decoded message body (envelope already checked) and returns 0 or -EPROTO/-EINVAL
 * with err naming the field. Not for use outside common/. */
#ifndef JF_MSG_FAMILY_H
#define JF_MSG_FAMILY_H

#include "jf_err.h"
#include "jf_msg.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int jf_msg_check_hello(const json_t *body, jf_err_t *err);
int jf_msg_check_welcome(const json_t *body, jf_err_t *err);
int jf_msg_check_heartbeat(const json_t *body, jf_err_t *err);
int jf_msg_check_error(const json_t *body, jf_err_t *err);
int jf_msg_check_run_ref(const json_t *body, jf_err_t *err);     // run.accept, run.cancel
int jf_msg_check_run_reject(const json_t *body, jf_err_t *err);
// run.assign: checks the body and, on success, sets msg->assign (allocated; jf_msg_fini frees
// it) to the decoded spec and attempt, so the receiver takes the struct, never the JSON.
int jf_msg_decode_run_assign(const json_t *body, jf_msg_t *msg, jf_err_t *err);
// run.progress / telemetry: check the body and, on success, set msg->progress / msg->telemetry
// (allocated; jf_msg_fini frees them through the two functions below).
int jf_msg_decode_run_progress(const json_t *body, jf_msg_t *msg, jf_err_t *err);
int jf_msg_decode_telemetry(const json_t *body, jf_msg_t *msg, jf_err_t *err);
// Free a payload and everything it owns; accept NULL.
void jf_msg_run_progress_free(jf_msg_run_progress_t *progress);
void jf_msg_telemetry_free(jf_msg_telemetry_t *telemetry);
int jf_msg_check_run_done(const json_t *body, jf_err_t *err);
int jf_msg_check_run_failed(const json_t *body, jf_err_t *err);
int jf_msg_check_ack(const json_t *body, jf_err_t *err);
int jf_msg_check_ctl_status(const json_t *body, jf_err_t *err);
int jf_msg_check_ctl_submit(const json_t *body, jf_err_t *err);
int jf_msg_check_ctl_cancel(const json_t *body, jf_err_t *err);
int jf_msg_check_ctl_reply(const json_t *body, jf_err_t *err);
// Blob family (jf_msg_blob.c): blob.get is checked; blob.data and run.weights set msg->chunk
// (allocated; jf_msg_fini frees it through jf_msg_blob_chunk_free).
int jf_msg_check_blob_get(const json_t *body, jf_err_t *err);
int jf_msg_decode_blob_data(const json_t *body, jf_msg_t *msg, jf_err_t *err);
int jf_msg_decode_run_weights(const json_t *body, jf_msg_t *msg, jf_err_t *err);
void jf_msg_blob_chunk_free(jf_msg_blob_chunk_t *chunk);

// Shared field helpers for the checkers and the typed parsers.
// Copies the string member key (required unless optional) into dst of size bytes; checks length.
int jf_msg_get_str(const json_t *body, const char *key, bool optional, char *dst, size_t size,
                   jf_err_t *err);
// Reads the integer member key, which must lie in [lo, hi].
int jf_msg_get_int(const json_t *body, const char *key, int64_t lo, int64_t hi,
                   int64_t *ret_value, jf_err_t *err);
// Reads the number member key (integer or real), which must be finite and lie in [lo, hi].
int jf_msg_get_num(const json_t *body, const char *key, double lo, double hi, double *ret_value,
                   jf_err_t *err);
// Reads the boolean member key.
int jf_msg_get_bool(const json_t *body, const char *key, bool *ret_value, jf_err_t *err);

// Fails with -EPROTO naming the first member of obj not in keys (NULL-terminated).
int jf_msg_only_keys(const json_t *obj, const char *const *keys, jf_err_t *err);

#endif
