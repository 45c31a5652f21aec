/* mkdir -p for data directories and dataset output directories; whole-file writes and reads
 * (weight files, docs/protocol.md §5.7). */
#include "jf_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int s_mkdir_one(const char *path, mode_t mode, jf_err_t *err)
{
    if (mkdir(path, mode) == 0) {
        return 0;
    }
    int e = errno;
    struct stat st = {0};
    if (e == EEXIST && stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            return 0;
        }
        return jf_err_set(err, -ENOTDIR, "%s: exists and is not a directory", path);
    }
    return jf_err_set(err, -e, "%s: cannot create directory: %s", path, strerror(e));
}

int jf_fs_mkdir_p(const char *dir, mode_t mode, jf_err_t *err)
{
    char path[PATH_MAX] = {0};
    int n = snprintf(path, sizeof path, "%s", dir ? dir : "");
    if (n <= 0 || (size_t) n >= sizeof path) {
        return jf_err_set(err, -ENAMETOOLONG, "directory name empty or too long");
    }
    // Create each parent in turn: cut the string at every '/' after the first character.
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') {
            continue;
        }
        *p = '\0';
        int rc = s_mkdir_one(path, mode, err);
        *p = '/';
        if (rc < 0) {
            return rc;
        }
    }
    return s_mkdir_one(path, mode, err);
}

// Writes all of len bytes to fd, through short writes and EINTR.
static int s_write_all(int fd, const unsigned char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return n < 0 ? -errno : -EIO;
        }
        p += n;
        len -= (size_t) n;
    }
    return 0;
}

int jf_fs_write_atomic(const char *path, const void *data, size_t len, jf_err_t *err)
{
    char tmp[PATH_MAX];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (n < 0 || (size_t) n >= sizeof tmp) {
        return jf_err_set(err, -ENAMETOOLONG, "%s: path too long", path);
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        return jf_err_set(err, -errno, "%s: cannot create: %s", tmp, strerror(errno));
    }
    int rc = s_write_all(fd, data, len);
    rc = rc ? rc : (fsync(fd) == 0 ? 0 : -errno);
    if (close(fd) != 0 && rc == 0) {
        rc = -errno;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = -errno;
    }
    if (rc != 0) {
        (void) unlink(tmp); // best effort: the error below is what matters
        return jf_err_set(err, rc, "%s: cannot write: %s", path, strerror(-rc));
    }
    return 0;
}

int jf_fs_read_all(const char *path, size_t max_len, void **ret_data, size_t *ret_len,
                   jf_err_t *err)
{
    FILE *f = fopen(path, "rbe");
    if (!f) {
        return jf_err_set(err, -errno, "%s: cannot open: %s", path, strerror(errno));
    }
    unsigned char *buf = malloc(max_len + 1);
    size_t n = buf ? fread(buf, 1, max_len + 1, f) : 0;
    int rc = !buf          ? jf_err_set(err, -ENOMEM, "out of memory")
             : ferror(f)   ? jf_err_set(err, -EIO, "%s: read error", path)
             : n > max_len ? jf_err_set(err, -EFBIG, "%s: larger than %zu bytes", path, max_len)
                           : 0;
    (void) fclose(f); // read-only: nothing to lose
    if (rc != 0) {
        free(buf);
        return rc;
    }
    *ret_data = buf;
    *ret_len = n;
    return 0;
}
