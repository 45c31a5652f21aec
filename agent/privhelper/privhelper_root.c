/* Files below a directory descriptor (see privhelper_root.h for the rules). */
#include "privhelper_root.h"

#include "jf_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define S_OPEN_FLAGS (O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)

struct privhelper_root {
    int fd;             // O_DIRECTORY descriptor; -1 when not open
    char dir[PATH_MAX]; // as given, ending with '/', for messages
};

privhelper_root_t *privhelper_root_open(const char *dir, jf_err_t *err)
{
    privhelper_root_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "out of memory");
        return NULL;
    }
    size_t n = strlen(dir);
    int len =
        snprintf(self->dir, sizeof self->dir, "%s%s", dir, n > 0 && dir[n - 1] == '/' ? "" : "/");
    self->fd = len > 0 && (size_t) len < sizeof self->dir
                   ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                   : -1;
    if (self->fd < 0) {
        int e = len > 0 && (size_t) len < sizeof self->dir ? errno : ENAMETOOLONG;
        jf_err_set(err, -e, "cannot open directory '%.200s': %s", dir, strerror(e));
        privhelper_root_destroy(&self);
    }
    return self;
}

void privhelper_root_destroy(privhelper_root_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    if ((*self_p)->fd >= 0) {
        (void) close((*self_p)->fd); // a directory opened for reading: nothing to flush
    }
    free(*self_p);
    *self_p = NULL;
}

int privhelper_root_fd(const privhelper_root_t *self)
{
    return self->fd;
}

bool privhelper_root_is_file(const privhelper_root_t *self, const char *rel)
{
    struct stat st;
    return fstatat(self->fd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

// Opens rel and checks that it is a regular file. The descriptor, or -errno with err.
static int s_open(const privhelper_root_t *self, const char *rel, int flags, jf_err_t *err)
{
    int fd = openat(self->fd, rel, flags | S_OPEN_FLAGS);
    if (fd < 0) {
        int e = errno;
        return jf_err_set(err, -e, "cannot open '%s%s': %s", self->dir, rel, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        (void) close(fd); // not a file we will use
        return jf_err_set(err, -EINVAL, "'%s%s' is not a regular file", self->dir, rel);
    }
    return fd;
}

int privhelper_root_read(const privhelper_root_t *self, const char *rel, char *buf, size_t size,
                         size_t *ret_len, jf_err_t *err)
{
    int fd = s_open(self, rel, O_RDONLY, err);
    if (fd < 0) {
        return fd;
    }
    size_t n = 0;
    ssize_t got = 0;
    while (n < size && (got = read(fd, buf + n, size - n)) > 0) {
        n += (size_t) got;
    }
    int e = got < 0 ? errno : 0;
    (void) close(fd); // read-only
    if (e != 0) {
        return jf_err_set(err, -EIO, "cannot read '%s%s': %s", self->dir, rel, strerror(e));
    }
    if (n >= size) {
        return jf_err_set(err, -EFBIG, "'%s%s' is larger than %zu bytes", self->dir, rel, size - 1);
    }
    buf[n] = '\0';
    *ret_len = n;
    return 0;
}

int privhelper_root_read_list(const privhelper_root_t *self, const char *rel, int64_t *values,
                              size_t max, size_t *ret_n, jf_err_t *err)
{
    char buf[PRIVHELPER_VALUE_MAX];
    size_t len = 0;
    int rc = privhelper_root_read(self, rel, buf, sizeof buf, &len, err);
    if (rc != 0) {
        return rc;
    }
    if (strlen(buf) != len || strspn(buf, "0123456789 \t\n") != len) {
        return jf_err_set(err, -EINVAL, "'%s%s' does not hold decimal numbers", self->dir, rel);
    }
    size_t n = 0;
    for (char *s = buf + strspn(buf, " \t\n"); *s; s += strspn(s, " \t\n")) {
        size_t digits = strcspn(s, " \t\n");
        char save = s[digits];
        s[digits] = '\0';
        if (n == max) {
            return jf_err_set(err, -E2BIG, "'%s%s' holds more than %zu numbers", self->dir, rel,
                              max);
        }
        if (jf_parse_i64(s, 0, INT64_MAX, &values[n++], NULL) != 0) {
            return jf_err_set(err, -EINVAL, "'%s%s': number too large", self->dir, rel);
        }
        s[digits] = save;
        s += digits;
    }
    *ret_n = n;
    return 0;
}

int privhelper_root_read_i64(const privhelper_root_t *self, const char *rel, int64_t *ret_value,
                             jf_err_t *err)
{
    int64_t v[2] = {0};
    size_t n = 0;
    int rc = privhelper_root_read_list(self, rel, v, 2, &n, err);
    if (rc == -E2BIG || (rc == 0 && n != 1)) {
        rc = jf_err_set(err, -EINVAL, "'%s%s' does not hold one number", self->dir, rel);
    }
    if (rc == 0) {
        *ret_value = v[0];
    }
    return rc;
}

int privhelper_root_write_i64(const privhelper_root_t *self, const char *rel, int64_t value,
                              jf_err_t *err)
{
    char text[32];
    int len = snprintf(text, sizeof text, "%lld\n", (long long) value);
    int fd = s_open(self, rel, O_WRONLY | O_TRUNC, err);
    if (fd < 0) {
        return fd;
    }
    ssize_t put = write(fd, text, (size_t) len);
    int e = put < 0 ? errno : (put != len ? EIO : 0);
    // sysfs reports a refused value at write or at close; a plain file at close (a full disk).
    if (close(fd) != 0 && e == 0) {
        e = errno;
    }
    if (e != 0) {
        return jf_err_set(err, -e, "cannot write %lld to '%s%s': %s", (long long) value, self->dir,
                          rel, strerror(e));
    }
    return 0;
}
