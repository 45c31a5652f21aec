/* Small file-system operations both daemons and the tools need: creating a directory with its
 * parents, writing a file atomically, reading a bounded file whole. Not for path validation of network input (names from the network never become paths;
 * see docs/protocol.md §8). */
#ifndef JF_FS_H
#define JF_FS_H

#include "jf_err.h"

#include <stddef.h>
#include <sys/types.h>

// Creates dir and any missing parents with the given mode (like `mkdir -p`). An existing
// directory is success; an existing non-directory is -ENOTDIR. 0 or a negative errno with err
// naming the component that failed.
int jf_fs_mkdir_p(const char *dir, mode_t mode, jf_err_t *err);

// Writes len bytes to path whole or not at all: into "<path>.tmp", fsync'ed, then renamed over
// path. 0 or a negative errno with err naming the file.
int jf_fs_write_atomic(const char *path, const void *data, size_t len, jf_err_t *err);

// Reads the whole file at path, at most max_len bytes: *ret_data (caller frees; never NULL) and
// *ret_len. -EFBIG when it is larger, else 0 or a negative errno with err naming the file.
int jf_fs_read_all(const char *path, size_t max_len, void **ret_data, size_t *ret_len,
                   jf_err_t *err);

#endif
