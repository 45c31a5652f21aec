/* Files below one directory, opened relative to a descriptor of that directory taken once: how
 * the helper touches the file system, and how the agent reads back what it set. A write resolves
 * every component beneath the directory with no symlink anywhere on the way (openat2 with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, else an openat walk), and opens an existing regular
 * file only: nothing is ever created, and nothing outside the directory is reached. A read opens
 * its last component with O_NOFOLLOW but follows the ones before, as a board needs
 * (cpuN/cpufreq -> ../cpufreq/policyN, /proc/device-tree, /etc/nvpmodel.conf). */
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

// For tests: resolve privhelper_root_open_beneath by the openat walk even where the kernel has
// openat2, so that both ways are tested on one machine.
void privhelper_root_set_walk_only(privhelper_root_t *self, bool walk_only);

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

// Opens rel (flags: O_RDONLY, O_WRONLY, O_PATH, O_DIRECTORY, ...; O_NOFOLLOW and O_CLOEXEC are
// added) beneath the root with no symlink on the way: openat2 where the kernel has it (5.6+),
// else the openat walk. The descriptor (caller closes it), or -ELOOP (a symlink on the way),
// -EXDEV (a way out: "..", an absolute path), -errno from open; err names the path.
int privhelper_root_open_beneath(const privhelper_root_t *self, const char *rel, int flags,
                                 jf_err_t *err);

// 0 if rel resolves beneath the root with no symlink on the way to an existing regular file
// (what privhelper_root_write_i64 would open), without opening it for writing; else an error of
// privhelper_root_open_beneath, -ELOOP for a symlink at rel itself, -EINVAL for another type.
int privhelper_root_check_write(const privhelper_root_t *self, const char *rel, jf_err_t *err);

// Writes "<value>\n" to the existing regular file rel, opened as privhelper_root_open_beneath
// does (O_WRONLY|O_TRUNC, never O_CREAT; O_TRUNC so that a plain file in a test tree holds
// exactly the value, sysfs ignores it). Returns 0, an error of privhelper_root_open_beneath or
// of write (the kernel's refusal of a value comes back here), or -EINVAL for a non-regular file;
// err names the path.
int privhelper_root_write_i64(const privhelper_root_t *self, const char *rel, int64_t value,
                              jf_err_t *err);

#endif
