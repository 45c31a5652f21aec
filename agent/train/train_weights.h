/* Weight files of the trainers' local-round mode (issue 14; docs/workloads.md "Weights"): read a
 * weight set (jf_torch.h) from a file into a session (--init-weights), and write a session's
 * weights to a file atomically (--out-weights: a temporary file beside it, fsync, rename). Not
 * the serialisation itself (the shim's) and not the transfer of blobs (the agent's). */
#ifndef TRAIN_WEIGHTS_H
#define TRAIN_WEIGHTS_H

#include "jf_err.h"
#include "jf_torch.h"

#define TRAIN_WEIGHTS_FILE_MAX (1024L * 1024 * 1024) // largest weight file read, bytes

// Replaces the session's weights by those in the file at path (borrowed). Returns 0, -ENOENT or
// -EIO (file unreadable), -EINVAL (too large, or not a weight set of the session's model: the
// shim's message, prefixed with "--init-weights '<path>'"), -ENOMEM.
int train_weights_load_file(jf_torch_session_t *session, const char *path, jf_err_t *err);

// Writes the session's weights to path (borrowed): to "<path>.tmp.<pid>" first, flushed to disk,
// then renamed over path, so that a reader sees the old file or the whole new one. Returns 0,
// -EIO (naming the path; the temporary file is removed), -ENOMEM.
int train_weights_save_file(jf_torch_session_t *session, const char *path, jf_err_t *err);

#endif
