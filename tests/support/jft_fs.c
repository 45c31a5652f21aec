/* Test support: files and waiting. */
#include "jft_fs.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *s_tmp_root(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

int jft_tmpdir_new_sized(char *out, size_t size)
{
    int n = snprintf(out, size, "%s/jft-XXXXXX", s_tmp_root());
    if (n < 0 || (size_t) n >= size) {
        return -ENAMETOOLONG;
    }
    return mkdtemp(out) ? 0 : -errno;
}

int jft_tmpdir_new(char *out)
{
    return jft_tmpdir_new_sized(out, PATH_MAX);
}

static int s_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void) sb;
    (void) flag;
    (void) ftw;
    (void) remove(path); // best effort: a leftover file only wastes /tmp space
    return 0;
}

void jft_tmpdir_remove(const char *path)
{
    const char *root = s_tmp_root();
    if (!path || !*path || strncmp(path, root, strlen(root)) != 0 || strstr(path, "..")) {
        return;
    }
    (void) nftw(path, s_rm, 16, FTW_DEPTH | FTW_PHYS);
}

static int s_copy_file(const char *src, const char *dst, mode_t mode)
{
    size_t len = 0;
    char *data = jft_read_file(src, &len);
    FILE *f = data ? fopen(dst, "wb") : NULL;
    int rc = f && fwrite(data, 1, len, f) == len ? 0 : -EIO;
    if (f && fclose(f) != 0) {
        rc = -EIO;
    }
    free(data);
    return rc == 0 && chmod(dst, mode & 07777) != 0 ? -errno : rc;
}

static int s_copy_entry(const char *src, const char *dst)
{
    struct stat st;
    char target[PATH_MAX];
    if (lstat(src, &st) != 0) {
        return -errno;
    }
    if (S_ISDIR(st.st_mode)) {
        return jft_copy_tree(src, dst);
    }
    if (S_ISLNK(st.st_mode)) {
        ssize_t n = readlink(src, target, sizeof target - 1);
        if (n < 0) {
            return -errno;
        }
        target[n] = '\0';
        (void) unlink(dst); // replaced if there
        return symlink(target, dst) == 0 ? 0 : -errno;
    }
    return s_copy_file(src, dst, st.st_mode);
}

int jft_copy_tree(const char *src, const char *dst)
{
    if (mkdir(dst, 0755) != 0 && errno != EEXIST) {
        return -errno;
    }
    DIR *d = opendir(src);
    if (!d) {
        return -errno;
    }
    int rc = 0;
    for (struct dirent *e = readdir(d); rc == 0 && e; e = readdir(d)) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        char s_path[PATH_MAX], d_path[PATH_MAX];
        int a = snprintf(s_path, sizeof s_path, "%s/%s", src, e->d_name);
        int b = snprintf(d_path, sizeof d_path, "%s/%s", dst, e->d_name);
        rc = a < 0 || b < 0 || (size_t) a >= sizeof s_path || (size_t) b >= sizeof d_path
                 ? -ENAMETOOLONG
                 : s_copy_entry(s_path, d_path);
    }
    (void) closedir(d); // read-only
    return rc;
}

char *jft_read_file(const char *path, size_t *ret_len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) {
            break;
        }
        char *grown = realloc(buf, 2 * cap + 1);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (ret_len) {
            *ret_len = n;
        }
    }
    return buf;
}

int jft_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        return -errno;
    }
    int bad = fputs(text, f) < 0;
    bad |= fclose(f) != 0;
    return bad ? -EIO : 0;
}

void jft_bin(const char *name, char *out)
{
    const char *dir = getenv("JF_BIN_DIR");
    (void) snprintf(out, PATH_MAX, "%s/%s", dir ? dir : ".", name);
}

void jft_fixture(const char *rel, char *out)
{
    const char *dir = getenv("JF_FIXTURES");
    (void) snprintf(out, PATH_MAX, "%s/%s", dir ? dir : "tests/fixtures", rel);
}

int jft_timeout_scale(void)
{
    const char *s = getenv("JF_TEST_TIMEOUT_SCALE");
    long v = s ? strtol(s, NULL, 10) : 1;
    return v >= 1 && v <= 100 ? (int) v : 1;
}

bool jft_wait_until(bool (*cond)(void *arg), void *arg, int timeout_ms)
{
    int limit = timeout_ms * jft_timeout_scale();
    for (int waited = 0;; waited += 20) {
        if (cond(arg)) {
            return true;
        }
        if (waited >= limit) {
            return false;
        }
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 20 * 1000000L};
        (void) nanosleep(&ts, NULL);
    }
}
