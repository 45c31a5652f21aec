/* Files below one directory, opened relative to a descriptor of that directory taken once: how
 * the helper touches the file system, and how the agent reads back what it set. The last path
 * component is always opened with O_NOFOLLOW, so a symlink planted at a target cannot redirect
 * a read or a write, and writes open existing regular files only: nothing is ever created.
 * Intermediate symlinks are followed, as sysfs needs (cpuN/cpufreq -> ../cpufreq/policyN). */
#ifndef PRIVHELPER_ROOT_H
#define PRIVHELPER_ROOT_H

#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PRIVHELPER_VALUE_MAX 4096 // largest value file read (a frequency table is ~400 bytes)

typedef struct privhelper_root privhelper_root_t;

// Opens dir (O_DIRECTORY). Caller owns the result; release with privhelper_root_destroy. NULL
// with err (-ENOENT, -ENOTDIR, -EACCES, -ENOMEM).
privhelper_root_t *privhelper_root_open(const char *dir, jf_err_t *err);

// Closes the directory; accepts NULL and *self_p == NULL; sets *self_p to NULL.
void privhelper_root_destroy(privhelper_root_t **self_p);

// The directory's descriptor (borrowed; valid until destroy).
int privhelper_root_fd(const privhelper_root_t *self);

// True if rel names a regular file (not a symlink) below the root.
bool privhelper_root_is_file(const privhelper_root_t *self, const char *rel);

// Reads the whole regular file rel into buf (size bytes, NUL-terminated); *ret_len gets its
// length (it may contain NUL bytes). Returns 0, -errno from open (-ELOOP for a symlink), -EINVAL
// for a non-regular file, -EFBIG if it holds size bytes or more, -EIO; err names the path.
int privhelper_root_read(const privhelper_root_t *self, const char *rel, char *buf, size_t size,
                         size_t *ret_len, jf_err_t *err);

// Reads a file holding one non-negative decimal number (a trailing newline allowed). 0, an
// error of privhelper_root_read, or -EINVAL if the content is not one number.
int privhelper_root_read_i64(const privhelper_root_t *self, const char *rel, int64_t *ret_value,
                             jf_err_t *err);

// Reads a file of blank-separated non-negative decimal numbers (scaling_available_frequencies,
// related_cpus) into values (max entries); *ret_n gets the count. 0, an error of
// privhelper_root_read, -EINVAL for other content, -E2BIG for more than max numbers.
int privhelper_root_read_list(const privhelper_root_t *self, const char *rel, int64_t *values,
                              size_t max, size_t *ret_n, jf_err_t *err);

// Writes "<value>\n" to the existing regular file rel (O_WRONLY|O_TRUNC|O_NOFOLLOW, never
// O_CREAT; O_TRUNC so that a plain file in a test tree holds exactly the value, sysfs ignores
// it). Returns 0, -errno from open or write (the kernel's refusal of a value comes back here),
// or -EINVAL for a non-regular file; err names the path.
int privhelper_root_write_i64(const privhelper_root_t *self, const char *rel, int64_t value,
                              jf_err_t *err);

#endif
