/* Blob family: blob.get, blob.data, run.weights (docs/protocol.md §5.7). Every member is checked
 * before use: the blob's name, its size, the chunk's place in it, and the chunk's base64 text,
 * whose decoded length must fit the chunk limit and the blob. */
#include "jf_msg_blob.h"
#include "jf_msg_family.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int s_get_blob_name(const json_t *body, char *ret_blob, jf_err_t *err)
{
    char name[JF_BLOB_SHA256_HEX_LEN + 1] = {0};
    int rc = jf_msg_get_str(body, "blob", false, name, sizeof name, err);
    if (rc == 0 && !jf_blob_is_sha256(name)) {
        rc = jf_err_set(err, -EINVAL, "'blob' must be 64 lowercase hex digits (sha256)");
    }
    if (rc == 0) {
        memcpy(ret_blob, name, sizeof name);
    }
    return rc;
}

int jf_msg_blob_get_parse(const json_t *body, char *ret_blob, int64_t *ret_offset, jf_err_t *err)
{
    char name[JF_BLOB_SHA256_HEX_LEN + 1] = {0};
    int64_t offset = 0;
    int rc = s_get_blob_name(body, name, err);
    rc = rc ? rc : jf_msg_get_int(body, "offset", 0, JF_BLOB_MAX_BYTES - 1, &offset, err);
    if (rc == 0) {
        memcpy(ret_blob, name, sizeof name);
        *ret_offset = offset;
    }
    return rc;
}

int jf_msg_check_blob_get(const json_t *body, jf_err_t *err)
{
    char name[JF_BLOB_SHA256_HEX_LEN + 1];
    int64_t offset = 0;
    return jf_msg_blob_get_parse(body, name, &offset, err);
}

void jf_msg_blob_chunk_free(jf_msg_blob_chunk_t *chunk)
{
    if (chunk) {
        free(chunk->data);
        free(chunk);
    }
}

// The members every chunk has: blob, size_bytes, offset, data; the data decoded, and the chunk
// inside the blob. Fills c (its data owned by c) or leaves it without data.
static int s_parse_chunk(const json_t *body, jf_msg_blob_chunk_t *c, jf_err_t *err)
{
    int rc = s_get_blob_name(body, c->blob, err);
    rc = rc ? rc : jf_msg_get_int(body, "size_bytes", 1, JF_BLOB_MAX_BYTES, &c->size_bytes, err);
    rc = rc ? rc : jf_msg_get_int(body, "offset", 0, JF_BLOB_MAX_BYTES - 1, &c->offset, err);
    if (rc) {
        return rc;
    }
    const char *text = json_string_value(json_object_get(body, "data"));
    if (!text) {
        return jf_err_set(err, -EPROTO, "'data' must be a string");
    }
    rc = jf_blob_unbase64(text, JF_BLOB_CHUNK_MAX_BYTES, &c->data, &c->len, err);
    if (rc) {
        return jf_err_prefix(err, "'data'");
    }
    if (c->len == 0) {
        return jf_err_set(err, -EINVAL, "'data' is empty: a chunk has 1..%d bytes",
                          JF_BLOB_CHUNK_MAX_BYTES);
    }
    if (c->offset + (int64_t) c->len > c->size_bytes) {
        return jf_err_set(err, -EINVAL, "chunk [%lld, %lld) ends past the blob's 'size_bytes' %lld",
                          (long long) c->offset, (long long) (c->offset + (int64_t) c->len),
                          (long long) c->size_bytes);
    }
    return 0;
}

// Parses into a new chunk and hands it to msg->chunk; on failure frees it.
static int s_decode_into(const json_t *body, jf_msg_t *msg, jf_msg_blob_chunk_t *c, int rc,
                         jf_err_t *err)
{
    rc = rc ? rc : s_parse_chunk(body, c, err);
    if (rc) {
        jf_msg_blob_chunk_free(c);
        return rc;
    }
    msg->chunk = c;
    return 0;
}

int jf_msg_decode_blob_data(const json_t *body, jf_msg_t *msg, jf_err_t *err)
{
    jf_msg_blob_chunk_t *c = calloc(1, sizeof *c);
    if (!c) {
        return jf_err_set(err, -ENOMEM, "out of memory");
    }
    int rc = jf_msg_get_int(body, "re", 0, INT64_MAX, &c->re, err);
    return s_decode_into(body, msg, c, rc, err);
}

int jf_msg_decode_run_weights(const json_t *body, jf_msg_t *msg, jf_err_t *err)
{
    jf_msg_blob_chunk_t *c = calloc(1, sizeof *c);
    if (!c) {
        return jf_err_set(err, -ENOMEM, "out of memory");
    }
    c->re = -1;
    int rc =
        json_object_get(body, "seq") ? 0 : jf_err_set(err, -EPROTO, "'seq' must be an integer");
    rc = rc ? rc : jf_msg_run_ref_parse(body, &c->ref, err);
    return s_decode_into(body, msg, c, rc, err);
}

json_t *jf_msg_blob_get_new(int64_t id, const char *blob, int64_t offset)
{
    json_t *msg = jf_msg_new(JF_MSG_BLOB_GET, id);
    if (msg && json_object_update_new(msg, json_pack("{s:s, s:I}", "blob", blob, "offset",
                                                     (json_int_t) offset)) != 0) {
        json_decref(msg);
        return NULL;
    }
    return msg;
}

static bool s_part_ok(const jf_msg_blob_part_t *p)
{
    return p->len >= 1 && p->len <= JF_BLOB_CHUNK_MAX_BYTES && p->offset >= 0 &&
           p->size_bytes <= JF_BLOB_MAX_BYTES && p->offset + (int64_t) p->len <= p->size_bytes;
}

// Adds blob, size_bytes, offset and data to msg; NULL (msg released) on failure.
static json_t *s_add_part(json_t *msg, const jf_msg_blob_part_t *p)
{
    char *text = msg && s_part_ok(p) ? jf_blob_base64(p->data, p->len) : NULL;
    if (!text ||
        json_object_update_new(msg, json_pack("{s:s, s:I, s:I, s:s}", "blob", p->blob, "size_bytes",
                                              (json_int_t) p->size_bytes, "offset",
                                              (json_int_t) p->offset, "data", text)) != 0) {
        json_decref(msg);
        msg = NULL;
    }
    free(text);
    return msg;
}

json_t *jf_msg_blob_data_new(int64_t id, int64_t re, const jf_msg_blob_part_t *part)
{
    json_t *msg = jf_msg_new(JF_MSG_BLOB_DATA, id);
    if (msg && json_object_set_new(msg, "re", json_integer(re)) != 0) {
        json_decref(msg);
        return NULL;
    }
    return s_add_part(msg, part);
}

json_t *jf_msg_run_weights_new(int64_t id, const jf_msg_run_ref_t *ref,
                               const jf_msg_blob_part_t *part)
{
    json_t *msg = jf_msg_run_ref_new(JF_MSG_RUN_WEIGHTS, id, ref->run, ref->attempt);
    if (msg && json_object_set_new(msg, "seq", json_integer(ref->seq)) != 0) {
        json_decref(msg);
        return NULL;
    }
    return s_add_part(msg, part);
}
