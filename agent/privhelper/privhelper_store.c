/* Saved-state slots in one directory, all opened relative to its descriptor with O_NOFOLLOW. */
#include "privhelper_store.h"

#include "privhelper_paths.h"
#include "privhelper_request.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define S_NAME_MAX 32

struct privhelper_store {
    int fd; // the state directory, flocked; -1 when not open
};

static bool s_safe(const struct stat *st)
{
    return st->st_uid == geteuid() && (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

privhelper_store_t *privhelper_store_open(const privhelper_root_t *root, jf_err_t *err)
{
    privhelper_store_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "out of memory");
        return NULL;
    }
    // Beneath the root with no symlink on the way: slots are written here.
    self->fd =
        privhelper_root_open_beneath(root, PRIVHELPER_STATE_DIR, O_RDONLY | O_DIRECTORY, NULL);
    struct stat st;
    int rc = self->fd < 0 ? self->fd : 0;
    if (rc == 0 && (fstat(self->fd, &st) != 0 || !s_safe(&st))) {
        rc = -EPERM;
    }
    // Held until destroy: two helpers never interleave a store and a restore.
    if (rc == 0 && flock(self->fd, LOCK_EX) != 0) {
        rc = -errno;
    }
    if (rc != 0) {
        jf_err_set(err, rc, "state directory /%s: %s%s", PRIVHELPER_STATE_DIR, strerror(-rc),
                   rc == -EPERM ? " (must be owned by the helper's user, mode 0700)" : "");
        privhelper_store_destroy(&self);
    }
    return self;
}

void privhelper_store_destroy(privhelper_store_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    if ((*self_p)->fd >= 0) {
        (void) close((*self_p)->fd); // releases the lock; nothing buffered on a directory
    }
    free(*self_p);
    *self_p = NULL;
}

static void s_name(char *buf, int slot, const char *suffix)
{
    (void) snprintf(buf, S_NAME_MAX, "state-%d%s", slot, suffix); // slot is 0..16
}

bool privhelper_store_has(const privhelper_store_t *self, int slot)
{
    char name[S_NAME_MAX];
    s_name(name, slot, "");
    struct stat st;
    return fstatat(self->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

int privhelper_store_free_slot(const privhelper_store_t *self, int *ret_slot, jf_err_t *err)
{
    for (int slot = 1; slot <= PRIVHELPER_STATES_MAX; slot++) {
        if (!privhelper_store_has(self, slot)) {
            *ret_slot = slot;
            return 0;
        }
    }
    return jf_err_set(err, -ENOSPC, "all %d state slots are used: restore one first",
                      PRIVHELPER_STATES_MAX);
}

int privhelper_store_read(const privhelper_store_t *self, int slot, char *buf, size_t size,
                          size_t *ret_len, jf_err_t *err)
{
    char name[S_NAME_MAX];
    s_name(name, slot, "");
    int fd = openat(self->fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        int e = errno;
        return jf_err_set(err, -e, "no state %d stored (%s)", slot, strerror(e));
    }
    struct stat st;
    int rc = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && s_safe(&st) ? 0 : -EPERM;
    ssize_t n = rc == 0 ? read(fd, buf, size) : 0;
    (void) close(fd); // read-only
    if (rc == 0 && (n < 0 || (size_t) n >= size)) {
        rc = n < 0 ? -EIO : -EFBIG;
    }
    if (rc != 0) {
        return jf_err_set(err, rc, "cannot read state %d: %s", slot, strerror(-rc));
    }
    buf[n] = '\0';
    *ret_len = (size_t) n;
    return 0;
}

static int s_write_all(int fd, const char *text, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, text, len);
        if (n < 0) {
            return -errno;
        }
        text += n;
        len -= (size_t) n;
    }
    return fsync(fd) == 0 ? 0 : -errno;
}

int privhelper_store_write(privhelper_store_t *self, int slot, const char *text, size_t len,
                           jf_err_t *err)
{
    char name[S_NAME_MAX], tmp[S_NAME_MAX];
    s_name(name, slot, "");
    s_name(tmp, slot, ".tmp");
    (void) unlinkat(self->fd, tmp, 0); // a leftover of a helper that died mid-write
    int fd = openat(self->fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int rc = fd < 0 ? -errno : s_write_all(fd, text, len);
    if (fd >= 0 && close(fd) != 0 && rc == 0) {
        rc = -errno;
    }
    // link(2) fails on an existing name: a slot is never replaced.
    if (rc == 0 && linkat(self->fd, tmp, self->fd, name, 0) != 0) {
        rc = -errno;
    }
    (void) unlinkat(self->fd, tmp, 0); // done with it either way
    if (rc == 0 && fsync(self->fd) != 0) {
        rc = -errno;
    }
    if (rc != 0) {
        return jf_err_set(err, rc, "cannot save state %d: %s", slot, strerror(-rc));
    }
    return 0;
}

int privhelper_store_remove(privhelper_store_t *self, int slot, jf_err_t *err)
{
    char name[S_NAME_MAX];
    s_name(name, slot, "");
    if (unlinkat(self->fd, name, 0) != 0) {
        int e = errno;
        return jf_err_set(err, -e, "cannot remove state %d: %s", slot, strerror(e));
    }
    return 0;
}
