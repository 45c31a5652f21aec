/* Weight blobs: opaque byte strings (libtorch-serialised weights, common/torch/jf_torch.h) named
 * by their sha256, and the base64 text they travel in (libsodium does both). The limits here are
 * the wire's (docs/protocol.md §5.7): the blob's size, and the chunk that fits one message of
 * each receiver (§1.4). Not the store of blobs (coordinator/coord_store_blobs.c). */
#ifndef JF_BLOB_H
#define JF_BLOB_H

#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JF_BLOB_SHA256_HEX_LEN 64                 // lowercase hex, without the NUL
#define JF_BLOB_MAX_BYTES      (64 * 1024 * 1024) // largest blob (resnet18's weights: ~45 MB)
// Largest chunk of one message, raw bytes: its base64 text (4/3 of it, 131,072 bytes) and the
// envelope stay far below the agent's 256 KiB application limit (§1.4).
#define JF_BLOB_CHUNK_MAX_BYTES (96 * 1024)

// True if text is 64 lowercase hex digits.
bool jf_blob_is_sha256(const char *text);

// The sha256 of len bytes as lowercase hex into ret_hex (JF_BLOB_SHA256_HEX_LEN + 1 bytes).
// Returns 0, or -EIO when libsodium cannot be initialised.
int jf_blob_sha256(const void *data, size_t len, char *ret_hex, jf_err_t *err);

// The base64 text (RFC 4648 §4, with padding) of len bytes. Caller owns the result; release with
// free(). NULL when out of memory or len is over JF_BLOB_MAX_BYTES.
char *jf_blob_base64(const void *data, size_t len);

// Decodes base64 text (RFC 4648 §4, padded, nothing else allowed) of at most max_len decoded
// bytes. On success *ret_data (caller frees; never NULL, even for 0 bytes) and *ret_len are set.
// Returns -EINVAL (not base64, or decodes to more than max_len bytes) with err saying which, or
// -ENOMEM.
int jf_blob_unbase64(const char *text, size_t max_len, void **ret_data, size_t *ret_len,
                     jf_err_t *err);

#endif
