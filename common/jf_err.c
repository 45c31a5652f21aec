/* Error record helpers (STYLE.md §4). */
#include "jf_err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void jf_err_clear(jf_err_t *err)
{
    if (err) {
        err->code = 0;
        err->msg[0] = '\0';
    }
}

int jf_err_set(jf_err_t *err, int code, const char *fmt, ...)
{
    if (!err) {
        return code;
    }
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    (void) vsnprintf(err->msg, sizeof err->msg, fmt, ap); // truncation is acceptable
    va_end(ap);
    return code;
}

int jf_err_prefix(jf_err_t *err, const char *fmt, ...)
{
    if (!err) {
        return -EINVAL;
    }
    char prefix[JF_ERR_MSG_MAX] = {0};
    va_list ap;
    va_start(ap, fmt);
    (void) vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    char joined[2 * JF_ERR_MSG_MAX + 4] = {0};
    (void) snprintf(joined, sizeof joined, "%s: %s", prefix, err->msg);
    memcpy(err->msg, joined, JF_ERR_MSG_MAX - 1); // keeps the head if the whole is too long
    err->msg[JF_ERR_MSG_MAX - 1] = '\0';
    if (err->code == 0) {
        err->code = -EINVAL;
    }
    return err->code;
}
