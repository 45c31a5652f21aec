/* Test support: temporary directories, files, our binaries' paths, waiting with a deadline. */
#ifndef JFT_FS_H
#define JFT_FS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

// Creates a fresh directory under $TMPDIR (or /tmp) into out (PATH_MAX). 0 or -errno.
int jft_tmpdir_new(char *out);

// The same into out of size bytes; -ENAMETOOLONG if the name does not fit.
int jft_tmpdir_new_sized(char *out, size_t size);

// Removes a directory tree. Refuses anything not under /tmp or $TMPDIR.
void jft_tmpdir_remove(const char *path);

// Reads a whole file (NUL-terminated, caller frees); NULL if it cannot be read.
char *jft_read_file(const char *path, size_t *ret_len);

// Writes text to path (truncating). 0 or -errno.
int jft_write_file(const char *path, const char *text);

// Copies the tree src into dst (created if missing; an existing dst is merged into, files of the
// same name overwritten, so that trees can be laid over each other). Symlinks are copied as
// symlinks. 0 or -errno.
int jft_copy_tree(const char *src, const char *dst);

// Path of one of our executables: $JF_BIN_DIR/name, into out (PATH_MAX).
void jft_bin(const char *name, char *out);

// Path of a fixture: $JF_FIXTURES/rel, into out (PATH_MAX).
void jft_fixture(const char *rel, char *out);

// Polls cond every 20 ms until it returns true or timeout_ms (scaled by JF_TEST_TIMEOUT_SCALE)
// passes. Returns true if cond became true.
bool jft_wait_until(bool (*cond)(void *arg), void *arg, int timeout_ms);

// JF_TEST_TIMEOUT_SCALE as an integer >= 1.
int jft_timeout_scale(void);

#endif
