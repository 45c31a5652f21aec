/* The store's weight blobs (docs/store.md "Weight blobs", docs/protocol.md §5.7): blobs kept under
 * their sha256, the chunks of a run's returned weights as they arrive in its stream, and their
 * assembly into a checked blob at the run's end. Federated rounds' records are in
 * coord_store_rounds.h. Same connection and thread rules as coord_store.h. */
#ifndef COORD_STORE_BLOBS_H
#define COORD_STORE_BLOBS_H

#include "coord_store.h"
#include "jf_blob.h"
#include "jf_err.h"
#include "jf_msg_blob.h"

#include <stddef.h>
#include <stdint.h>

// Stores len bytes (1..JF_BLOB_MAX_BYTES) as a blob and writes its sha256 to ret_sha
// (JF_BLOB_SHA256_HEX_LEN + 1 bytes). Storing a blob that is already there changes nothing.
// 0, -EINVAL (empty or too large), -EIO with err.
int coord_store_blob_put(coord_store_t *self, const void *data, size_t len, char *ret_sha,
                         jf_err_t *err);

// The whole blob named sha: *ret_data (caller frees) and *ret_len. -ENOENT if the store has no
// such blob, -EIO, -ENOMEM with err.
int coord_store_blob_get(coord_store_t *self, const char *sha, void **ret_data, size_t *ret_len,
                         jf_err_t *err);

// At most max_len bytes of blob sha from offset on (the answer to a blob.get): *ret_data
// (caller frees), *ret_len (0 when offset is at or past the end) and the blob's size. -ENOENT
// if the store has no such blob, -EIO, -ENOMEM with err.
int coord_store_blob_read(coord_store_t *self, const char *sha, int64_t offset, size_t max_len,
                          void **ret_data, size_t *ret_len, int64_t *ret_size, jf_err_t *err);

// Keeps one chunk of the weights returned by (run, attempt) (a run.weights message). A chunk
// already stored at that offset is left as it is (a retransmission). Call inside the tick's
// transaction. 0, -EIO with err.
int coord_store_weights_add_chunk(coord_store_t *self, const char *run, int64_t attempt,
                                  const jf_msg_blob_chunk_t *chunk, jf_err_t *err);

// Drops the chunks of (run, attempt): an attempt that ended without assembling them keeps no
// half-blob. Call inside the tick's transaction. 0, -EIO with err.
int coord_store_weights_drop(coord_store_t *self, const char *run, int64_t attempt, jf_err_t *err);

// Drops the chunks of every attempt that is not in progress (assigned or running) any more:
// those a store written by an older coordinator kept after the attempt ended. Call inside a
// transaction. 0 with *ret_dropped, -EIO with err.
int coord_store_weights_drop_orphans(coord_store_t *self, int64_t *ret_dropped, jf_err_t *err);

// Assembles the chunks of (run, attempt) into a blob: they must name one blob and size, cover
// [0, size) without gap or overlap, and hash to the blob's name. Then stores the blob, records it
// as the attempt's returned weights, drops the chunks and writes the name to ret_sha. -EBADMSG
// when they do not check out (none, a gap, another blob, a wrong hash), with err saying what;
// -EIO, -ENOMEM.
int coord_store_weights_assemble(coord_store_t *self, const char *run, int64_t attempt,
                                 char *ret_sha, jf_err_t *err);

// The weights (blob name into ret_sha) returned by the run's attempt. -ENOENT if none.
int coord_store_run_weights(coord_store_t *self, const char *run, int64_t attempt, char *ret_sha,
                            jf_err_t *err);

#endif
