/* Error record: a negative errno code plus a message that says where, what and what was expected.
 * Not for logging: the code that decides what to do about an error logs it (STYLE.md §4, §6). */
#ifndef JF_ERR_H
#define JF_ERR_H

#include <stddef.h>

#define JF_ERR_MSG_MAX 256

typedef struct jf_err {
    int code;                 // 0 or a negative errno value
    char msg[JF_ERR_MSG_MAX]; // NUL-terminated, truncated if longer
} jf_err_t;

// Clears err (code 0, empty message). err may be NULL.
void jf_err_clear(jf_err_t *err);

// Fills err with code and a printf-style message and returns code, so a failure is one line:
// `return jf_err_set(err, -EINVAL, "...")`. err may be NULL (then only code is returned).
int jf_err_set(jf_err_t *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

// Prepends context ("fmt: ") to err's message, keeping the original reason, and returns err's
// code (or -EINVAL if err is NULL or empty).
int jf_err_prefix(jf_err_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
