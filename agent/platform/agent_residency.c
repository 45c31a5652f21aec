/* Page-cache residency of a dataset tree (vmtouch's method: mmap + mincore, nothing read) and
 * per-file eviction with posix_fadvise(POSIX_FADV_DONTNEED). */
#include "agent_residency.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define S_VEC_PAGES 4096 // mincore bytes per call: 16 MiB of file with 4 KiB pages

typedef struct s_walk s_walk_t;

// What to do with one open regular file; st is its fstat.
typedef int (*s_file_fn)(s_walk_t *w, int fd, const struct stat *st, jf_err_t *err);

struct s_walk {
    s_file_fn on_file;              // measure or evict
    int64_t max_files;              // -E2BIG past this many regular files
    agent_residency_t acc;          // the counts so far
    size_t page_bytes;              // sysconf(_SC_PAGESIZE)
    unsigned char vec[S_VEC_PAGES]; // mincore output, one byte per page
    char path[PATH_MAX];            // the entry being visited, for messages
    size_t path_len;                // strlen(path)
};

static int s_path_push(s_walk_t *w, const char *name, jf_err_t *err)
{
    int n = snprintf(w->path + w->path_len, sizeof w->path - w->path_len, "/%s", name);
    if (n < 0 || (size_t) n >= sizeof w->path - w->path_len) {
        w->path[w->path_len] = '\0';
        return jf_err_set(err, -ENAMETOOLONG, "residency: path under '%.200s' is too long",
                          w->path);
    }
    w->path_len += (size_t) n;
    return 0;
}

// Bytes of the page-cache pages of one mapped file, mincore S_VEC_PAGES pages at a time. Each
// resident page counts its part of the file, so the last, partial page counts only its tail.
static int s_count_resident(s_walk_t *w, const unsigned char *map, size_t size, jf_err_t *err)
{
    size_t chunk = S_VEC_PAGES * w->page_bytes;
    for (size_t off = 0; off < size; off += chunk) {
        size_t len = size - off < chunk ? size - off : chunk;
        // mincore only looks at the page tables and the page cache; it never faults a page in.
        if (mincore((void *) (map + off), len, w->vec) != 0) {
            return jf_err_set(err, -errno, "residency: mincore '%.200s': %s", w->path,
                              strerror(errno));
        }
        size_t pages = (len + w->page_bytes - 1) / w->page_bytes;
        for (size_t i = 0; i < pages; i++) {
            size_t at = off + i * w->page_bytes;
            size_t part = size - at < w->page_bytes ? size - at : w->page_bytes;
            w->acc.resident_bytes += (w->vec[i] & 1) ? (int64_t) part : 0;
        }
    }
    return 0;
}

static int s_measure_file(s_walk_t *w, int fd, const struct stat *st, jf_err_t *err)
{
    if (st->st_size == 0) {
        return 0; // nothing to map (mmap of length 0 is EINVAL)
    }
    size_t size = (size_t) st->st_size;
    // MAP_SHARED + PROT_READ maps the page cache itself; the mapping is never read from.
    void *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        return jf_err_set(err, -errno, "residency: mmap '%.200s': %s", w->path, strerror(errno));
    }
    int rc = s_count_resident(w, map, size, err);
    (void) munmap(map, size); // cannot fail for a mapping we made
    return rc;
}

static int s_evict_file(s_walk_t *w, int fd, const struct stat *st, jf_err_t *err)
{
    (void) st;
    int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); // returns the error number itself
    if (rc != 0) {
        return jf_err_set(err, -rc, "residency: fadvise '%.200s': %s", w->path, strerror(rc));
    }
    return 0;
}

// Counts one open file and hands it to on_file, unless it turned out not to be a regular file.
static int s_take_file(s_walk_t *w, int fd, jf_err_t *err)
{
    struct stat st = {0};
    if (fstat(fd, &st) != 0) {
        return jf_err_set(err, -errno, "residency: cannot stat '%.200s': %s", w->path,
                          strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) {
        w->acc.skipped++; // replaced since readdir
        return 0;
    }
    if (++w->acc.files > w->max_files) {
        return jf_err_set(err, -E2BIG, "residency: more than %lld files, at '%.200s'",
                          (long long) w->max_files, w->path);
    }
    w->acc.total_bytes += st.st_size;
    return w->on_file(w, fd, &st, err);
}

static int s_visit_file(s_walk_t *w, int dfd, const char *name, jf_err_t *err)
{
    // O_NONBLOCK: if the entry was swapped for a fifo since readdir, open must not hang on it.
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        return jf_err_set(err, -errno, "residency: cannot open '%.200s': %s", w->path,
                          strerror(errno));
    }
    int rc = s_take_file(w, fd, err);
    (void) close(fd); // read-only: nothing to report
    return rc;
}

static int s_walk_dir(s_walk_t *w, int dir_fd, int depth, jf_err_t *err);

static int s_visit_dir(s_walk_t *w, int dfd, const char *name, int depth, jf_err_t *err)
{
    if (depth > AGENT_RESIDENCY_DEPTH_MAX) {
        return jf_err_set(err, -ELOOP, "residency: '%.200s' is deeper than %d levels", w->path,
                          AGENT_RESIDENCY_DEPTH_MAX);
    }
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        return jf_err_set(err, -errno, "residency: cannot open '%.200s': %s", w->path,
                          strerror(errno));
    }
    return s_walk_dir(w, fd, depth, err);
}

// The entry's type from readdir, or from fstatat when the filesystem does not say (DT_UNKNOWN).
static unsigned char s_entry_type(int dfd, const struct dirent *e)
{
    struct stat st = {0};
    if (e->d_type != DT_UNKNOWN || fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return e->d_type; // a failed fstatat leaves DT_UNKNOWN: counted as skipped
    }
    return S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
}

static int s_visit(s_walk_t *w, int dfd, const struct dirent *e, int depth, jf_err_t *err)
{
    size_t saved = w->path_len;
    int rc = s_path_push(w, e->d_name, err);
    unsigned char type = rc == 0 ? s_entry_type(dfd, e) : DT_UNKNOWN;
    if (rc == 0 && type == DT_DIR) {
        rc = s_visit_dir(w, dfd, e->d_name, depth + 1, err);
    } else if (rc == 0 && type == DT_REG) {
        rc = s_visit_file(w, dfd, e->d_name, err);
    } else if (rc == 0) {
        w->acc.skipped++; // symlinks are never followed; fifos, sockets, devices hold no data
    }
    w->path_len = saved;
    w->path[saved] = '\0';
    return rc;
}

// Visits every entry of an open directory; takes over dir_fd and closes it.
static int s_walk_dir(s_walk_t *w, int dir_fd, int depth, jf_err_t *err)
{
    DIR *d = fdopendir(dir_fd);
    if (!d) {
        int saved = errno;
        (void) close(dir_fd);
        return jf_err_set(err, -saved, "residency: cannot read '%.200s': %s", w->path,
                          strerror(saved));
    }
    int rc = 0;
    while (rc == 0) {
        errno = 0;
        const struct dirent *e = readdir(d);
        if (!e) {
            rc = errno ? jf_err_set(err, -errno, "residency: cannot read '%.200s': %s", w->path,
                                    strerror(errno))
                       : 0;
            break;
        }
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            rc = s_visit(w, dirfd(d), e, depth, err);
        }
    }
    (void) closedir(d); // also closes dir_fd; read-only
    return rc;
}

static int s_run(const char *dir, int64_t max_files, s_file_fn fn, agent_residency_t *ret,
                 jf_err_t *err)
{
    if (max_files < 0 || max_files > AGENT_RESIDENCY_FILES_MAX) {
        return jf_err_set(err, -EINVAL, "residency: max_files %lld is not in [0, %d]",
                          (long long) max_files, AGENT_RESIDENCY_FILES_MAX);
    }
    s_walk_t *w = calloc(1, sizeof *w); // PATH_MAX and the mincore vector: not on the stack
    if (!w) {
        return jf_err_set(err, -ENOMEM, "residency: out of memory");
    }
    w->on_file = fn;
    w->max_files = max_files;
    w->page_bytes = (size_t) sysconf(_SC_PAGESIZE);
    w->path_len = (size_t) snprintf(w->path, sizeof w->path, "%.*s", PATH_MAX - 1, dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = fd < 0 ? jf_err_set(err, -errno, "residency: cannot open dataset '%.200s': %s", dir,
                                 strerror(errno))
                    : s_walk_dir(w, fd, 0, err);
    if (rc == 0) {
        *ret = w->acc;
    }
    free(w);
    return rc;
}

int agent_residency_measure(const char *dir, int64_t max_files, agent_residency_t *ret_residency,
                            jf_err_t *err)
{
    return s_run(dir, max_files, s_measure_file, ret_residency, err);
}

int agent_residency_evict(const char *dir, int64_t max_files, agent_residency_t *ret_residency,
                          jf_err_t *err)
{
    return s_run(dir, max_files, s_evict_file, ret_residency, err);
}

bool agent_residency_fraction(const agent_residency_t *residency, double *ret_fraction)
{
    if (residency->total_bytes <= 0) {
        return false;
    }
    *ret_fraction = (double) residency->resident_bytes / (double) residency->total_bytes;
    return true;
}
