/* Files below a directory descriptor (see privhelper_root.h for the rules). */
#include "privhelper_root.h"

#include "jf_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define S_OPEN_FLAGS (O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
#define S_DIR_FLAGS  (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

struct privhelper_root {
    int fd;             // O_DIRECTORY descriptor; -1 when not open
    bool walk_only;     // resolve strictly by the openat walk even where openat2 exists (tests)
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

void privhelper_root_set_walk_only(privhelper_root_t *self, bool walk_only)
{
    self->walk_only = walk_only;
}

// openat2 (Linux 5.6) resolving rel beneath dir_fd with no symlink anywhere on the way: ELOOP
// for a symlink, EXDEV for ".." or an absolute path out of the root. glibc has no wrapper.
static int s_openat2(int dir_fd, const char *rel, int flags)
{
    struct open_how how = {.flags = (uint64_t) flags,
                           .resolve =
                               RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    long fd = syscall(SYS_openat2, dir_fd, rel, &how, sizeof how);
    return fd >= 0 ? (int) fd : -errno;
}

static bool s_is_link(int dir_fd, const char *name)
{
    struct stat st;
    return fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

static bool s_is_name(const char *name)
{
    return name[0] != '\0' && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

// The same without openat2: each directory component opened with O_NOFOLLOW | O_DIRECTORY
// relative to the one before (ELOOP on a symlink), the last with O_NOFOLLOW; an empty, "." or
// ".." component is refused (EXDEV), as RESOLVE_BENEATH would for a way out.
static int s_walk(int root_fd, const char *rel, int flags)
{
    char buf[PATH_MAX];
    int n = snprintf(buf, sizeof buf, "%s", rel);
    if (n <= 0 || (size_t) n >= sizeof buf) {
        return -ENAMETOOLONG;
    }
    int dir = root_fd, fd = -EXDEV;
    for (char *name = buf, *slash = strchr(buf, '/');; slash = strchr(name, '/')) {
        if (slash) {
            *slash = '\0';
        }
        fd = s_is_name(name) ? openat(dir, name, slash ? S_DIR_FLAGS : flags | O_NOFOLLOW) : -EXDEV;
        fd = fd == -1 ? -errno : fd;
        // O_DIRECTORY | O_NOFOLLOW on a symlink fails with ENOTDIR: report it as openat2 does.
        fd = fd == -ENOTDIR && slash && s_is_link(dir, name) ? -ELOOP : fd;
        if (dir != root_fd) {
            (void) close(dir); // a directory opened only to walk through it
        }
        if (fd < 0 || !slash) {
            return fd;
        }
        dir = fd;
        name = slash + 1;
    }
}

// True if every component of rel is a name: no "", "." or "..", so no leading '/' either.
// openat2 would allow a ".." that stays beneath; refusing it makes both ways agree.
static bool s_is_plain_path(const char *rel)
{
    char buf[PATH_MAX];
    int n = snprintf(buf, sizeof buf, "%s", rel);
    if (n <= 0 || (size_t) n >= sizeof buf) {
        return false;
    }
    for (char *name = buf, *slash = NULL; name; name = slash ? slash + 1 : NULL) {
        slash = strchr(name, '/');
        if (slash) {
            *slash = '\0';
        }
        if (!s_is_name(name)) {
            return false;
        }
    }
    return true;
}

int privhelper_root_open_beneath(const privhelper_root_t *self, const char *rel, int flags,
                                 jf_err_t *err)
{
    int fd = !s_is_plain_path(rel) ? -EXDEV
             : self->walk_only     ? -ENOSYS
                                   : s_openat2(self->fd, rel, flags | O_NOFOLLOW | O_CLOEXEC);
    // ENOSYS: a kernel before 5.6; EPERM: a seccomp filter that does not know the call.
    if (fd == -ENOSYS || fd == -EPERM) {
        fd = s_walk(self->fd, rel, flags | O_CLOEXEC);
    }
    // O_DIRECTORY on a symlink at the end fails with ENOTDIR; name the cause.
    fd = fd == -ENOTDIR && s_is_link(self->fd, rel) ? -ELOOP : fd;
    if (fd == -EXDEV) {
        return jf_err_set(err, fd,
                          "'%s%s' is not a plain path beneath the root (an absolute path, or an "
                          "empty, '.' or '..' component)",
                          self->dir, rel);
    }
    if (fd == -ELOOP) {
        return jf_err_set(err, fd,
                          "cannot open '%s%s' beneath the root without following a symbolic "
                          "link: %s",
                          self->dir, rel, strerror(-fd));
    }
    if (fd < 0) {
        return jf_err_set(err, fd, "cannot open '%s%s': %s", self->dir, rel, strerror(-fd));
    }
    return fd;
}

static int s_check_regular(const privhelper_root_t *self, int fd, const char *rel, jf_err_t *err)
{
    struct stat st = {0};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        (void) close(fd); // not a file we will use
        return jf_err_set(err, S_ISLNK(st.st_mode) ? -ELOOP : -EINVAL,
                          "'%s%s' is not a regular file", self->dir, rel);
    }
    return fd;
}

int privhelper_root_check_write(const privhelper_root_t *self, const char *rel, jf_err_t *err)
{
    // O_PATH opens nothing for reading or writing: a symlink at the end comes back as itself.
    int fd = privhelper_root_open_beneath(self, rel, O_PATH, err);
    fd = fd < 0 ? fd : s_check_regular(self, fd, rel, err);
    if (fd < 0) {
        return fd;
    }
    (void) close(fd); // an O_PATH descriptor: nothing to flush
    return 0;
}

// Opens rel for reading and checks that it is a regular file: the last component is not
// followed, the ones before are (reads need /proc/device-tree, /etc/nvpmodel.conf and
// cpuN/cpufreq, all symlinks on a board). The descriptor, or -errno with err.
static int s_open_read(const privhelper_root_t *self, const char *rel, int flags, jf_err_t *err)
{
    int fd = openat(self->fd, rel, flags | S_OPEN_FLAGS);
    if (fd < 0) {
        int e = errno;
        return jf_err_set(err, -e, "cannot open '%s%s': %s", self->dir, rel, strerror(e));
    }
    return s_check_regular(self, fd, rel, err);
}

int privhelper_root_read(const privhelper_root_t *self, const char *rel, char *buf, size_t size,
                         size_t *ret_len, jf_err_t *err)
{
    int fd = s_open_read(self, rel, O_RDONLY, err);
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
    int fd =
        privhelper_root_open_beneath(self, rel, O_WRONLY | O_TRUNC | O_NONBLOCK | O_NOCTTY, err);
    fd = fd < 0 ? fd : s_check_regular(self, fd, rel, err);
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
