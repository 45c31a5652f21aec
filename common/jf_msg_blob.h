/* Blob family (docs/protocol.md §5.7): weight blobs between the coordinator and agents, in
 * chunks that fit one message. blob.get asks for one chunk of a blob the coordinator holds;
 * blob.data carries it; run.weights carries a chunk of the weights a run produced, as a message of
 * the run's result stream (numbered, spooled, acknowledged like run.progress, §5.3). Every chunk
 * names the whole blob's sha256 and size, so a receiver checks the assembled bytes before use. */
#ifndef JF_MSG_BLOB_H
#define JF_MSG_BLOB_H

#include "jf_blob.h"
#include "jf_err.h"
#include "jf_msg.h"
#include "jf_msg_run.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

// One checked chunk of a blob: blob.data or run.weights (jf_msg_t.chunk). Plain value record;
// data is owned (jf_msg_fini frees it).
struct jf_msg_blob_chunk {
    char blob[JF_BLOB_SHA256_HEX_LEN + 1]; // sha256 of the whole blob, lowercase hex
    int64_t size_bytes;                    // the whole blob's size, 1..JF_BLOB_MAX_BYTES
    int64_t offset;                        // this chunk's first byte in the blob
    void *data;                            // the chunk's bytes, decoded from base64; owned
    size_t len;                            // 1..JF_BLOB_CHUNK_MAX_BYTES; offset + len <= size
    int64_t re;                            // blob.data: the blob.get answered; else -1
    jf_msg_run_ref_t ref;                  // run.weights: run, attempt, seq; else zero
};

// A chunk's place in its blob (plain value record for the builders).
typedef struct jf_msg_blob_part {
    const char *blob;   // sha256 hex of the whole blob (borrowed)
    int64_t size_bytes; // the whole blob's size
    int64_t offset;     // the chunk's first byte
    const void *data;   // the chunk (borrowed)
    size_t len;         // its length, 1..JF_BLOB_CHUNK_MAX_BYTES
} jf_msg_blob_part_t;

// blob.get: asks for the chunk of blob that starts at offset. Caller owns; NULL out of memory.
json_t *jf_msg_blob_get_new(int64_t id, const char *blob, int64_t offset);

// blob.data answering blob.get re. Caller owns; NULL out of memory or a part out of range.
json_t *jf_msg_blob_data_new(int64_t id, int64_t re, const jf_msg_blob_part_t *part);

// run.weights: one chunk of the run's final weights, at stream position ref->seq. Caller owns;
// NULL out of memory or a part out of range.
json_t *jf_msg_run_weights_new(int64_t id, const jf_msg_run_ref_t *ref,
                               const jf_msg_blob_part_t *part);

// blob.get's members: writes the blob's name (JF_BLOB_SHA256_HEX_LEN + 1 bytes) and the offset.
// Returns 0, or -EPROTO/-EINVAL naming the member. The body was checked by jf_msg_decode.
int jf_msg_blob_get_parse(const json_t *body, char *ret_blob, int64_t *ret_offset, jf_err_t *err);

#endif
