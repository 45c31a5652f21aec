/* Who may ask the helper, and how the one request is read. The real uid (the caller under file
 * capabilities; 0 under sudo, whose sudoers rule already names the caller) and, when stdin is a
 * unix socket, the peer's uid must both be allowed: root and the jetfleet account. The request is
 * read from stdin to end of file, with a deadline, and never beyond one byte past the limit. */
#ifndef PRIVHELPER_CALLER_H
#define PRIVHELPER_CALLER_H

#include "jf_err.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PRIVHELPER_USER            "jetfleet" // the account the agent runs as
#define PRIVHELPER_ALLOWED_MAX     2
#define PRIVHELPER_READ_TIMEOUT_US (INT64_C(5) * 1000000) // the request must arrive within 5 s

// The uids allowed to ask (a plain value record).
typedef struct privhelper_caller {
    size_t n_allowed;                      // entries used in allowed
    uid_t allowed[PRIVHELPER_ALLOWED_MAX]; // uids that may ask
} privhelper_caller_t;

// Root and PRIVHELPER_USER (when that account exists).
void privhelper_caller_default(privhelper_caller_t *ret_caller);

// Checks, if fd is a unix socket, its peer's uid, then the real uid. 0, or -EPERM with err
// naming the uid that is not allowed, or -errno if the peer cannot be asked.
int privhelper_caller_check(const privhelper_caller_t *caller, int fd, jf_err_t *err);

// Reads fd to end of file into buf: at most size - 1 bytes are kept and reading stops there (a
// request of size - 1 bytes or more is too long whatever follows). *ret_len gets the count.
// 0, -ETIMEDOUT if end of file does not come within timeout_us, or -EIO.
int privhelper_caller_read(int fd, char *buf, size_t size, size_t *ret_len, int64_t timeout_us,
                           jf_err_t *err);

#endif
