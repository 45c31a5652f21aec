/* Caller checks (SO_PEERCRED, getuid) and the bounded read of the request. */
#include "privhelper_caller.h"

#include "jf_units.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void privhelper_caller_default(privhelper_caller_t *ret_caller)
{
    ret_caller->n_allowed = 0;
    ret_caller->allowed[ret_caller->n_allowed++] = 0;
    const struct passwd *pw = getpwnam(PRIVHELPER_USER);
    if (pw && pw->pw_uid != 0) {
        ret_caller->allowed[ret_caller->n_allowed++] = pw->pw_uid;
    }
}

static bool s_allowed(const privhelper_caller_t *caller, uid_t uid)
{
    for (size_t i = 0; i < caller->n_allowed; i++) {
        if (caller->allowed[i] == uid) {
            return true;
        }
    }
    return false;
}

// The peer first: when stdin is a socket, its creator is who is asking (sudo runs us as root).
int privhelper_caller_check(const privhelper_caller_t *caller, int fd, jf_err_t *err)
{
    struct ucred cred = {0};
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
        if (!s_allowed(caller, cred.uid)) {
            return jf_err_set(err, -EPERM, "peer uid %u on stdin is not allowed",
                              (unsigned) cred.uid);
        }
    } else if (errno != ENOTSOCK) {
        // A pipe or a terminal has no peer to ask (ENOTSOCK); anything else is a failure.
        return jf_err_set(err, -errno, "cannot ask stdin for its peer: %s", strerror(errno));
    }
    uid_t uid = getuid();
    if (!s_allowed(caller, uid)) {
        return jf_err_set(err, -EPERM, "caller uid %u is not allowed", (unsigned) uid);
    }
    return 0;
}

int privhelper_caller_read(int fd, char *buf, size_t size, size_t *ret_len, int64_t timeout_us,
                           jf_err_t *err)
{
    int64_t deadline_us = jf_clock_mono_us() + timeout_us;
    size_t n = 0;
    while (n + 1 < size) {
        int64_t left_ms = (deadline_us - jf_clock_mono_us() + 999) / 1000;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int ready = left_ms > 0 ? poll(&pfd, 1, left_ms > INT_MAX ? INT_MAX : (int) left_ms) : 0;
        if (ready == 0) {
            return jf_err_set(err, -ETIMEDOUT, "no complete request within %lld ms",
                              (long long) (timeout_us / 1000));
        }
        ssize_t got = ready > 0 ? read(fd, buf + n, size - 1 - n) : -1;
        if (got == 0) {
            break;
        }
        if (got < 0 && errno != EINTR && errno != EAGAIN) {
            return jf_err_set(err, -EIO, "cannot read the request: %s", strerror(errno));
        }
        n += got > 0 ? (size_t) got : 0;
    }
    buf[n] = '\0';
    *ret_len = n;
    return 0;
}
