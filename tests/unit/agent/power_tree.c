/* Fixture trees for the helper and power tests (see power_tree.h). */
#include "power_tree.h"

#include "jft_fs.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

void jft_power_path(char *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, PATH_MAX, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && n < PATH_MAX);
}

static void s_copy_file(const char *src, const char *dst)
{
    size_t len = 0;
    char *data = jft_read_file(src, &len);
    assert_non_null(data);
    FILE *f = fopen(dst, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    free(data);
}

void jft_power_tree_new(jft_power_tree_t *tree)
{
    char path[PATH_MAX], fixture[PATH_MAX];
    memset(tree, 0, sizeof *tree);
    assert_int_equal(jft_tmpdir_new(tree->top), 0);
    jft_power_path(tree->root, "%s/root", tree->top);
    jft_fixture("privhelper/xavier-nx", fixture);
    // jft_copy_tree keeps symlinks (cpuN/cpufreq -> ../cpufreq/policyN) as symlinks.
    assert_int_equal(jft_copy_tree(fixture, tree->root), 0);
    jft_power_path(tree->sys, "%s/sys", tree->root);
    jft_power_path(path, "%s/etc", tree->root);
    assert_int_equal(mkdir(path, 0755), 0);
    jft_power_path(tree->conf, "%s/etc/nvpmodel.conf", tree->root);
    jft_fixture("nvpmodel/xavier-nx.conf", fixture);
    s_copy_file(fixture, tree->conf);
    jft_power_path(path, "%s/outside", tree->top);
    assert_int_equal(mkdir(path, 0755), 0);
    jft_power_path(tree->victim, "%s/outside/victim", tree->top);
    // A number: if the helper followed a planted symlink, a write would land here.
    assert_int_equal(jft_write_file(tree->victim, "1\n"), 0);
    jft_bin("jft-privhelper-test", tree->helper);
    jft_bin("jft-fake-nvpmodel", tree->fake);
    (void) snprintf(tree->uid, sizeof tree->uid, "%u", (unsigned) getuid());
    const char *argv[] = {tree->helper, "--root",      tree->root, "--nvpmodel",
                          tree->fake,   "--allow-uid", tree->uid,  NULL};
    memcpy(tree->argv, argv, sizeof argv);
}

void jft_power_tree_remove(jft_power_tree_t *tree)
{
    jft_tmpdir_remove(tree->top);
}

char *jft_power_read(const jft_power_tree_t *tree, const char *rel)
{
    char path[PATH_MAX];
    jft_power_path(path, "%s/%s", tree->root, rel);
    return jft_read_file(path, NULL);
}

void jft_power_write(const jft_power_tree_t *tree, const char *rel, const char *text)
{
    char path[PATH_MAX];
    jft_power_path(path, "%s/%s", tree->root, rel);
    assert_int_equal(jft_write_file(path, text), 0);
}

uint64_t jft_power_fnv(uint64_t h, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h = (h ^ (unsigned char) p[i]) * UINT64_C(1099511628211);
    }
    return h;
}

// Sums per-file hashes, so that the order readdir gives does not matter.
static uint64_t s_hash_dir(const char *base, const char *rel, const char *skip)
{
    char path[PATH_MAX];
    uint64_t sum = 0;
    jft_power_path(path, "%s/%s", base, rel);
    DIR *d = opendir(path);
    assert_non_null(d);
    for (struct dirent *de = readdir(d); de; de = readdir(d)) {
        char child[PATH_MAX];
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
            continue;
        }
        jft_power_path(child, "%s%s%s", rel, *rel ? "/" : "", de->d_name);
        if (skip && strcmp(child, skip) == 0) {
            continue;
        }
        jft_power_path(path, "%s/%s", base, child);
        struct stat st;
        assert_int_equal(lstat(path, &st), 0);
        uint64_t h = jft_power_fnv(JFT_POWER_FNV_SEED, child, strlen(child));
        if (S_ISDIR(st.st_mode)) {
            sum += h + s_hash_dir(base, child, skip);
            continue;
        }
        size_t len = 0;
        char *data = S_ISREG(st.st_mode) ? jft_read_file(path, &len) : NULL;
        sum += jft_power_fnv(h, data ? data : "", len);
        free(data);
    }
    assert_int_equal(closedir(d), 0);
    return sum;
}

uint64_t jft_power_tree_hash(const jft_power_tree_t *tree, const char *skip)
{
    return s_hash_dir(tree->root, "", skip);
}

static void s_fill(jft_power_entry_t *e, const char *path)
{
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    e->mode = st.st_mode;
    e->mtime_ns = (int64_t) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    e->size = st.st_size;
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlink(path, target, sizeof target);
        assert_true(n > 0);
        e->hash = jft_power_fnv(JFT_POWER_FNV_SEED, target, (size_t) n);
    } else if (S_ISREG(st.st_mode)) {
        size_t len = 0;
        char *data = jft_read_file(path, &len);
        assert_non_null(data);
        e->hash = jft_power_fnv(JFT_POWER_FNV_SEED, data, len);
        (void) snprintf(e->text, sizeof e->text, "%s", data);
        free(data);
    }
}

static void s_walk(jft_power_snap_t *s, const char *base, const char *rel)
{
    char path[PATH_MAX];
    jft_power_path(path, "%s/%s", base, rel);
    DIR *d = opendir(path);
    assert_non_null(d);
    for (struct dirent *de = readdir(d); de; de = readdir(d)) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
            continue;
        }
        assert_true(s->n < JFT_POWER_ENTRIES_MAX);
        jft_power_entry_t *e = &s->e[s->n++];
        memset(e, 0, sizeof *e);
        int n = snprintf(e->rel, sizeof e->rel, "%s%s%s", rel, *rel ? "/" : "", de->d_name);
        assert_true(n > 0 && (size_t) n < sizeof e->rel);
        jft_power_path(path, "%s/%s", base, e->rel);
        s_fill(e, path);
        if (S_ISDIR(e->mode)) {
            s_walk(s, base, e->rel);
        }
    }
    assert_int_equal(closedir(d), 0);
}

jft_power_snap_t *jft_power_snap(const char *dir)
{
    jft_power_snap_t *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s_walk(s, dir, "");
    return s;
}

const jft_power_entry_t *jft_power_snap_find(const jft_power_snap_t *s, const char *rel)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->e[i].rel, rel) == 0) {
            return &s->e[i];
        }
    }
    return NULL;
}

static bool s_same(const jft_power_entry_t *a, const jft_power_entry_t *b, bool with_mtime)
{
    // A directory's size and mtime follow its entries (tmpfs): its content is compared instead.
    bool dir = a && S_ISDIR(a->mode);
    return a && b && a->mode == b->mode && a->hash == b->hash && (dir || a->size == b->size) &&
           (!with_mtime || dir || a->mtime_ns == b->mtime_ns);
}

// Calls fn for every path that differs between a and b (added, removed, or changed; with
// with_mtime, also a file rewritten with the same content). Returns the count.
size_t jft_power_snap_diff(const jft_power_snap_t *a, const jft_power_snap_t *b, bool with_mtime,
                           void (*fn)(const char *rel, void *arg), void *arg)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n; i++) {
        if (!s_same(&a->e[i], jft_power_snap_find(b, a->e[i].rel), with_mtime)) {
            n++;
            if (fn) {
                fn(a->e[i].rel, arg);
            }
        }
    }
    for (size_t i = 0; i < b->n; i++) {
        if (!jft_power_snap_find(a, b->e[i].rel)) {
            n++;
            if (fn) {
                fn(b->e[i].rel, arg);
            }
        }
    }
    return n;
}
