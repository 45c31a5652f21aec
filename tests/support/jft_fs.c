/* Test support: files and waiting. */
#include "jft_fs.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
