/* Test support: a Jetson's filesystem in a directory (jft_jetson.h). */
#include "jft_jetson.h"

#include "jft_fs.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int s_path(char *out, const char *dir, const char *rel)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", dir, rel);
    return n > 0 && n < PATH_MAX ? 0 : -ENAMETOOLONG;
}

static int s_copy_file(const char *from, const char *root, const char *rel)
{
    char dst[PATH_MAX];
    char *text = jft_read_file(from, NULL);
    int rc = text ? s_path(dst, root, rel) : -EIO;
    rc = rc ? rc : jft_write_file(dst, text);
    free(text);
    return rc;
}

int jft_jetson_tree_make(const char *root, const char *type)
{
    char fix[PATH_MAX], rel[PATH_MAX], dst[PATH_MAX];
    (void) snprintf(rel, sizeof rel, "privhelper/%s", type);
    jft_fixture(rel, fix);
    int rc = jft_copy_tree(fix, root);
    (void) snprintf(rel, sizeof rel, "sysfs/%s", type);
    jft_fixture(rel, fix);
    rc = rc ? rc : jft_copy_tree(fix, root);
    (void) snprintf(rel, sizeof rel, "nvpmodel/%s.conf", type);
    jft_fixture(rel, fix);
    rc = rc ? rc : s_copy_file(fix, root, "etc/nvpmodel.conf");
    rc = rc ? rc : s_path(dst, root, "proc/self");
    if (rc == 0 && mkdir(dst, 0755) != 0) {
        rc = -errno;
    }
    rc = rc ? rc : s_copy_file("/proc/self/mountinfo", root, "proc/self/mountinfo");
    rc = rc ? rc : s_copy_file("/proc/diskstats", root, "proc/diskstats");
    return rc;
}

// nftw has no argument for its callback: the walk's state is this file's, one walk at a time.
static char **s_paths;
static size_t s_n, s_cap;

static int s_collect(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void) sb;
    (void) ftw;
    if (flag != FTW_F) {
        return 0;
    }
    if (s_n == s_cap) {
        size_t cap = s_cap ? 2 * s_cap : 256;
        char **p = realloc(s_paths, cap * sizeof *p);
        if (!p) {
            return -1;
        }
        s_paths = p;
        s_cap = cap;
    }
    s_paths[s_n] = strdup(path);
    return s_paths[s_n++] ? 0 : -1;
}

static int s_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

// Appends path and its contents to *text (of *len bytes).
static int s_append(char **text, size_t *len, const char *path)
{
    size_t flen = 0;
    char *body = jft_read_file(path, &flen);
    size_t add = strlen(path) + flen + 8;
    char *grown = body ? realloc(*text, *len + add) : NULL;
    if (grown) {
        *len += (size_t) snprintf(grown + *len, add, "%s:\n%s\n", path, body);
        *text = grown;
    }
    free(body);
    return grown ? 0 : -1;
}

char *jft_jetson_tree_text(const char *dir, const char *rel)
{
    char top[PATH_MAX];
    if (s_path(top, dir, rel) != 0) {
        return NULL;
    }
    s_paths = NULL;
    s_n = s_cap = 0;
    int rc = nftw(top, s_collect, 16, FTW_PHYS);
    qsort(s_paths, s_n, sizeof *s_paths, s_cmp);
    char *text = calloc(1, 1);
    size_t len = 0;
    for (size_t i = 0; i < s_n; i++) {
        if (rc == 0 && text && s_append(&text, &len, s_paths[i]) != 0) {
            rc = -1;
        }
        free(s_paths[i]);
    }
    free(s_paths);
    s_paths = NULL;
    if (rc != 0) {
        free(text);
        return NULL;
    }
    return text;
}
