/* Weight files (train_weights.h): plain POSIX I/O around the shim's weight sets. */
#include "train_weights.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define S_TMP_PATH_MAX 4096

// Reads the whole file at path into a malloc'ed buffer.
static int s_read_all(const char *path, void **ret_bytes, size_t *ret_len, jf_err_t *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int code = errno == ENOENT ? -ENOENT : -EIO;
        return jf_err_set(err, code, "--init-weights '%.200s': %s", path, strerror(errno));
    }
    struct stat st;
    int rc = fstat(fd, &st) == 0
                 ? 0
                 : jf_err_set(err, -EIO, "--init-weights '%.200s': %s", path, strerror(errno));
    if (rc == 0 && (!S_ISREG(st.st_mode) || st.st_size > TRAIN_WEIGHTS_FILE_MAX)) {
        rc = jf_err_set(err, -EINVAL,
                        "--init-weights '%.200s': not a regular file of at most %ld "
                        "bytes",
                        path, TRAIN_WEIGHTS_FILE_MAX);
    }
    size_t len = rc == 0 ? (size_t) st.st_size : 0, got = 0;
    char *bytes = rc == 0 ? malloc(len ? len : 1) : NULL;
    if (rc == 0 && !bytes) {
        rc = jf_err_set(err, -ENOMEM, "--init-weights '%.200s': out of memory", path);
    }
    while (rc == 0 && got < len) {
        ssize_t n = read(fd, bytes + got, len - got);
        if (n <= 0 && !(n < 0 && errno == EINTR)) {
            rc = jf_err_set(err, -EIO, "--init-weights '%.200s': short read at %zu of %zu bytes",
                            path, got, len);
        }
        got += n > 0 ? (size_t) n : 0;
    }
    (void) close(fd); // read-only: nothing to lose
    if (rc < 0) {
        free(bytes);
        return rc;
    }
    *ret_bytes = bytes;
    *ret_len = len;
    return 0;
}

int train_weights_load_file(jf_torch_session_t *session, const char *path, jf_err_t *err)
{
    void *bytes = NULL;
    size_t len = 0;
    int rc = s_read_all(path, &bytes, &len, err);
    if (rc < 0) {
        return rc;
    }
    rc = jf_torch_session_weights_load(session, bytes, len, err);
    free(bytes);
    return rc < 0 ? jf_err_prefix(err, "--init-weights '%.200s'", path) : 0;
}

static int s_write_all(int fd, const char *bytes, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, bytes + done, len - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        done += (size_t) n;
    }
    return fsync(fd);
}

// Writes len bytes to tmp, then renames it to path.
static int s_write_file(const char *tmp, const char *path, const void *bytes, size_t len,
                        jf_err_t *err)
{
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return jf_err_set(err, -EIO, "--out-weights '%.200s': %s", tmp, strerror(errno));
    }
    int rc = s_write_all(fd, bytes, len);
    int saved = errno;
    rc = close(fd) == 0 ? rc : -1;
    rc = rc == 0 ? rename(tmp, path) : rc;
    if (rc != 0) {
        saved = saved ? saved : errno;
        (void) unlink(tmp); // may already be gone after a failed rename; nothing else to do
        return jf_err_set(err, -EIO, "--out-weights '%.200s': %s", path, strerror(saved));
    }
    return 0;
}

int train_weights_save_file(jf_torch_session_t *session, const char *path, jf_err_t *err)
{
    char tmp[S_TMP_PATH_MAX];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long) getpid());
    if (n < 0 || (size_t) n >= sizeof tmp) {
        return jf_err_set(err, -EIO, "--out-weights: path too long (%zu bytes)", strlen(path));
    }
    void *bytes = NULL;
    size_t len = 0;
    int rc = jf_torch_session_weights_save(session, &bytes, &len, err);
    if (rc < 0) {
        return jf_err_prefix(err, "--out-weights '%.200s'", path);
    }
    errno = 0;
    rc = s_write_file(tmp, path, bytes, len, err);
    free(bytes);
    return rc;
}
