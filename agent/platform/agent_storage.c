/* Storage media: mounts from /proc/self/mountinfo (proc(5)), whole disks from sysfs or the kernel's
 * naming rule, the dataset-on-its-medium check and the helper's page-cache drop. */
#include "agent_storage.h"

#include "jf_units.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define S_MOUNTINFO_FIELDS_MIN 10 // 6 fixed, "-", fstype, source, super options
#define S_READ_START_BYTES     16384
#define S_DEV_DIR              "/dev/" // sources under it are block devices
#define S_CHUNK_BYTES          512     // read size for the helper's output
#define S_UINT_DIGITS_MAX      10      // digits of UINT_MAX
#define S_REAP_POLL_MS         10      // waiting for the helper's exit after its output ended
#define S_POLL_MAX_MS          1000
#define S_KILL_GRACE_US        (INT64_C(1) * 1000000) // to reap a killed helper
#define S_HELPER_PATH_ENV      "PATH=/usr/sbin:/usr/bin:/sbin:/bin"

// ---------------------------------------------------------------------------------------------
// mountinfo

typedef struct s_tok {
    const char *p; // borrowed from the table text; not NUL-terminated
    size_t len;
} s_tok_t;

// The next space-separated field of [*p, eol); false at the end of the line.
static bool s_next_tok(const char **p, const char *eol, s_tok_t *ret)
{
    const char *s = *p;
    while (s < eol && *s == ' ') {
        s++;
    }
    const char *e = s;
    while (e < eol && *e != ' ') {
        e++;
    }
    *p = e;
    *ret = (s_tok_t){s, (size_t) (e - s)};
    return e > s;
}

static bool s_tok_is(const s_tok_t *t, const char *s)
{
    return t->len == strlen(s) && memcmp(t->p, s, t->len) == 0;
}

// Copies a mountinfo field into out, decoding the kernel's octal escapes (\040 space, \011 tab,
// \012 newline, \134 backslash: fs/proc_namespace.c mangle()). A backslash without three octal
// digits is malformed.
static int s_unescape(const s_tok_t *t, char *out, size_t size, jf_err_t *err)
{
    size_t o = 0;
    for (size_t i = 0; i < t->len; i++) {
        char c = t->p[i];
        if (c == '\\') {
            const char *d = t->p + i + 1;
            if (i + 3 >= t->len || d[0] < '0' || d[0] > '3' || d[1] < '0' || d[1] > '7' ||
                d[2] < '0' || d[2] > '7') {
                return jf_err_set(err, -EINVAL, "bad escape in '%.*s'", (int) t->len, t->p);
            }
            c = (char) ((d[0] - '0') * 64 + (d[1] - '0') * 8 + (d[2] - '0'));
            i += 3;
        }
        if (o + 1 >= size) {
            return jf_err_set(err, -EINVAL, "field '%.40s...' is too long", t->p);
        }
        out[o++] = c;
    }
    out[o] = '\0';
    return 0;
}

// A decimal in [0, UINT_MAX] from [p, p + len).
static bool s_uint(const char *p, size_t len, unsigned *ret)
{
    unsigned long long v = 0;
    if (len == 0 || len > S_UINT_DIGITS_MAX) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        if (p[i] < '0' || p[i] > '9') {
            return false;
        }
        v = v * 10 + (unsigned) (p[i] - '0');
    }
    *ret = (unsigned) v;
    return v <= UINT_MAX;
}

// "MAJ:MIN" into the mount's device numbers.
static bool s_devno(const s_tok_t *t, agent_storage_mount_t *m)
{
    const char *colon = memchr(t->p, ':', t->len);
    if (!colon) {
        return false;
    }
    size_t maj_len = (size_t) (colon - t->p);
    return s_uint(t->p, maj_len, &m->major) && s_uint(colon + 1, t->len - maj_len - 1, &m->minor);
}

// After the optional fields: "- fstype source super-options".
static int s_parse_tail(const char *p, const char *eol, agent_storage_mount_t *m, jf_err_t *err)
{
    s_tok_t t = {0};
    bool sep = false;
    while (!sep && s_next_tok(&p, eol, &t)) {
        sep = s_tok_is(&t, "-");
    }
    s_tok_t fstype = {0}, source = {0}, opts = {0};
    if (!sep || !s_next_tok(&p, eol, &fstype) || !s_next_tok(&p, eol, &source) ||
        !s_next_tok(&p, eol, &opts)) {
        return jf_err_set(err, -EINVAL, "expected '- fstype source options' after the options");
    }
    int rc = s_unescape(&fstype, m->fstype, sizeof m->fstype, err);
    return rc != 0 ? rc : s_unescape(&source, m->source, sizeof m->source, err);
}

// "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue"
static int s_parse_mount_line(const char *p, const char *eol, agent_storage_mount_t *m,
                              jf_err_t *err)
{
    s_tok_t f[6] = {0};
    unsigned ignored = 0; // mount and parent ids: checked, not kept
    for (size_t i = 0; i < 6; i++) {
        if (!s_next_tok(&p, eol, &f[i])) {
            return jf_err_set(err, -EINVAL, "expected at least %d fields, got %zu",
                              S_MOUNTINFO_FIELDS_MIN, i);
        }
    }
    if (!s_uint(f[0].p, f[0].len, &ignored) || !s_uint(f[1].p, f[1].len, &ignored) ||
        !s_devno(&f[2], m)) {
        return jf_err_set(err, -EINVAL, "expected 'ID PARENT MAJ:MIN', got '%.*s %.*s %.*s'",
                          (int) f[0].len, f[0].p, (int) f[1].len, f[1].p, (int) f[2].len, f[2].p);
    }
    int rc = s_unescape(&f[4], m->mount_point, sizeof m->mount_point, err);
    if (rc == 0 && m->mount_point[0] != '/') {
        rc = jf_err_set(err, -EINVAL, "mount point '%.100s' is not absolute", m->mount_point);
    }
    return rc != 0 ? rc : s_parse_tail(p, eol, m, err);
}

// Length of mount point mp when it holds path, else 0 ("/" holds everything: length 1).
static size_t s_holds(const char *mp, const char *path)
{
    size_t len = strlen(mp);
    if (strcmp(mp, "/") == 0) {
        return 1;
    }
    if (strncmp(mp, path, len) != 0 || (path[len] != '\0' && path[len] != '/')) {
        return 0;
    }
    return len;
}

int agent_storage_find_mount(const char *mountinfo, const char *path,
                             agent_storage_mount_t *ret_mount, jf_err_t *err)
{
    if (path[0] != '/') {
        return jf_err_set(err, -EINVAL, "mountinfo: path '%.200s' is not absolute", path);
    }
    agent_storage_mount_t cur = {0}, best = {0};
    size_t best_len = 0;
    int lineno = 0;
    for (const char *p = mountinfo; *p;) {
        const char *eol = strchr(p, '\n');
        eol = eol ? eol : p + strlen(p);
        lineno++;
        int rc = eol > p ? s_parse_mount_line(p, eol, &cur, err) : 0;
        if (rc != 0) {
            (void) jf_err_prefix(err, "mountinfo:%d", lineno); // keeps rc; err may be NULL
            return rc;
        }
        size_t len = eol > p ? s_holds(cur.mount_point, path) : 0;
        if (len > 0 && len >= best_len) {
            best = cur;
            best_len = len;
        }
        p = *eol ? eol + 1 : eol;
    }
    if (best_len == 0) {
        return jf_err_set(err, -ENOENT, "mountinfo: no mount holds '%.200s'", path);
    }
    *ret_mount = best;
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Whole-disk names

typedef enum s_part_style {
    S_PART_P_DIGITS, // partitions append "p<N>" to a name ending in a digit: nvme0n1p1, mmcblk0p1
    S_PART_DIGITS,   // partitions append "<N>": sda1, vdb2
    S_PART_NONE,     // not partitioned: dm-0, zram0
} s_part_style_t;

// Block device families by name prefix (the kernel's disk_name() rule; board differences are
// data). mmcblk0boot0 and mmcblk0rpmb are disks of their own in diskstats.
static const struct {
    const char *prefix;
    s_part_style_t style;
} s_disk_families[] = {
    {"nvme", S_PART_P_DIGITS}, {"mmcblk", S_PART_P_DIGITS}, {"loop", S_PART_P_DIGITS},
    {"nbd", S_PART_P_DIGITS},  {"md", S_PART_P_DIGITS},     {"sd", S_PART_DIGITS},
    {"vd", S_PART_DIGITS},     {"hd", S_PART_DIGITS},       {"xvd", S_PART_DIGITS},
    {"dm-", S_PART_NONE},      {"zram", S_PART_NONE},
};

// Length of the whole-disk part of a device name of the given style.
static size_t s_disk_len(const char *name, s_part_style_t style)
{
    size_t len = strlen(name);
    size_t digits = len;
    while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9') {
        digits--;
    }
    if (style == S_PART_DIGITS) {
        return digits;
    }
    bool p_part = style == S_PART_P_DIGITS && digits >= 2 && digits < len &&
                  name[digits - 1] == 'p' && name[digits - 2] >= '0' && name[digits - 2] <= '9';
    return p_part ? digits - 1 : len;
}

static int s_disk_by_rule(const agent_storage_mount_t *m, char *ret_disk, jf_err_t *err)
{
    const char *slash = strrchr(m->source, '/');
    const char *name = slash ? slash + 1 : m->source;
    for (size_t i = 0; i < sizeof s_disk_families / sizeof s_disk_families[0]; i++) {
        size_t plen = strlen(s_disk_families[i].prefix);
        size_t len = s_disk_len(name, s_disk_families[i].style);
        if (strncmp(name, s_disk_families[i].prefix, plen) != 0 || len <= plen) {
            continue;
        }
        if (len > AGENT_STORAGE_DISK_MAX) {
            return jf_err_set(err, -EINVAL, "disk name of '%.100s' is too long", m->source);
        }
        (void) snprintf(ret_disk, AGENT_STORAGE_DISK_MAX + 1, "%.*s", (int) len, name);
        return 0;
    }
    return jf_err_set(err, -ENODEV,
                      "cannot tell the disk of '%.100s' (%u:%u) without sysfs: unknown name",
                      m->source, m->major, m->minor);
}

static int s_copy_disk(const char *name, char *ret_disk, jf_err_t *err)
{
    if (strlen(name) == 0 || strlen(name) > AGENT_STORAGE_DISK_MAX) {
        return jf_err_set(err, -EINVAL, "sysfs: bad block device name '%.40s'", name);
    }
    (void) snprintf(ret_disk, AGENT_STORAGE_DISK_MAX + 1, "%s", name);
    return 0;
}

// <sysfs>/dev/block/MAJ:MIN links to .../block/<disk>[/<partition>]; a partition's directory has
// a `partition` file. -ENOENT when the node is not there (no sysfs, or an anonymous device).
static int s_disk_by_sysfs(const char *sysfs_root, const agent_storage_mount_t *m, char *ret_disk,
                           jf_err_t *err)
{
    char node[PATH_MAX], real[PATH_MAX], part[PATH_MAX + 16];
    int len = snprintf(node, sizeof node, "%s/dev/block/%u:%u", sysfs_root, m->major, m->minor);
    if (len < 0 || (size_t) len >= sizeof node || !realpath(node, real)) {
        return -ENOENT;
    }
    (void) snprintf(part, sizeof part, "%s/partition", real);
    bool is_partition = access(part, F_OK) == 0;
    char *slash = strrchr(real, '/');
    if (is_partition && slash && slash != real) {
        *slash = '\0'; // the parent directory is the disk
        slash = strrchr(real, '/');
    }
    return s_copy_disk(slash ? slash + 1 : real, ret_disk, err);
}

int agent_storage_disk_name(const char *sysfs_root, const agent_storage_mount_t *mount,
                            char *ret_disk, jf_err_t *err)
{
    char disk[AGENT_STORAGE_DISK_MAX + 1] = {0};
    int rc = mount->major != 0 ? s_disk_by_sysfs(sysfs_root, mount, disk, err) : -ENOENT;
    if (rc == -ENOENT && strncmp(mount->source, S_DEV_DIR, strlen(S_DEV_DIR)) == 0) {
        // No sysfs node: a container without /sys, or an anonymous device number (btrfs).
        rc = s_disk_by_rule(mount, disk, err);
    } else if (rc == -ENOENT) {
        rc = 0; // tmpfs, overlay, nfs, ...: no block device, no diskstats line
    }
    if (rc != 0) {
        return rc;
    }
    memcpy(ret_disk, disk, sizeof disk);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Locating a path

// Grows a text buffer by doubling, to at most max_bytes + 1 (the NUL).
static int s_grow_text(char **text, size_t *cap, size_t max_bytes, const char *path, jf_err_t *err)
{
    if (*cap > max_bytes) {
        return jf_err_set(err, -EFBIG, "%s: larger than %zu bytes", path, max_bytes);
    }
    size_t want = *cap ? *cap * 2 : S_READ_START_BYTES;
    want = want > max_bytes + 1 ? max_bytes + 1 : want;
    char *bigger = realloc(*text, want);
    if (!bigger) {
        return jf_err_set(err, -ENOMEM, "%s: out of memory", path);
    }
    *text = bigger;
    *cap = want;
    return 0;
}

// Reads a whole /proc file (its size is unknown in advance) into a NUL-terminated heap buffer.
// Caller owns *ret_text (free).
static int s_read_text(const char *path, size_t max_bytes, char **ret_text, jf_err_t *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return jf_err_set(err, -errno, "%s: cannot open: %s", path, strerror(errno));
    }
    char *text = NULL;
    size_t cap = 0, off = 0;
    int rc = 0;
    for (;;) {
        rc = off + 1 >= cap ? s_grow_text(&text, &cap, max_bytes, path, err) : 0;
        ssize_t n = rc == 0 ? read(fd, text + off, cap - 1 - off) : 0;
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            rc = jf_err_set(err, -EIO, "%s: read failed: %s", path, strerror(errno));
        }
        if (n <= 0) {
            break;
        }
        off += (size_t) n;
    }
    (void) close(fd); // read-only: nothing to report
    if (rc != 0) {
        free(text);
        return rc;
    }
    text[off] = '\0';
    *ret_text = text;
    return 0;
}

static int s_read_mountinfo(const agent_storage_roots_t *roots, char **ret_text, jf_err_t *err)
{
    char path[PATH_MAX];
    int len = snprintf(path, sizeof path, "%s/self/mountinfo", roots->proc_root);
    if (len < 0 || (size_t) len >= sizeof path) {
        return jf_err_set(err, -ENAMETOOLONG, "proc root '%.200s' is too long", roots->proc_root);
    }
    return s_read_text(path, AGENT_STORAGE_MOUNTINFO_MAX_BYTES, ret_text, err);
}

// Finds real_path's mount in an already read table and names its disk.
static int s_locate_in(const char *table, const char *sysfs_root, const char *real_path,
                       agent_storage_mount_t *ret_mount, jf_err_t *err)
{
    agent_storage_mount_t m = {0};
    int rc = agent_storage_find_mount(table, real_path, &m, err);
    rc = rc != 0 ? rc : agent_storage_disk_name(sysfs_root, &m, m.disk, err);
    if (rc != 0) {
        return rc;
    }
    *ret_mount = m;
    return 0;
}

static int s_realpath(const char *what, const char *path, char *ret_real, jf_err_t *err)
{
    if (!realpath(path, ret_real)) {
        return jf_err_set(err, -errno, "%s '%.200s': %s", what, path, strerror(errno));
    }
    return 0;
}

int agent_storage_locate(const agent_storage_roots_t *roots, const char *path,
                         agent_storage_mount_t *ret_mount, jf_err_t *err)
{
    char real[PATH_MAX];
    char *table = NULL;
    int rc = s_realpath("path", path, real, err);
    rc = rc != 0 ? rc : s_read_mountinfo(roots, &table, err);
    rc = rc != 0 ? rc : s_locate_in(table, roots->sysfs_root, real, ret_mount, err);
    free(table);
    return rc;
}

// The -EXDEV message: where the dataset is, and what the medium's configured mount is instead.
static int s_wrong_mount(const char *table, const char *dataset_dir,
                         const agent_storage_mount_t *ds, const agent_storage_medium_t *medium,
                         jf_err_t *err)
{
    char real[PATH_MAX];
    char what[PATH_MAX + 64] = "configured at ";
    agent_storage_mount_t mm = {0};
    size_t n = strlen(what);
    if (!realpath(medium->mount, real)) {
        (void) snprintf(what + n, sizeof what - n, "%s, which does not exist", medium->mount);
    } else if (agent_storage_find_mount(table, real, &mm, NULL) != 0 ||
               strcmp(mm.mount_point, real) != 0) {
        (void) snprintf(what + n, sizeof what - n, "%s, which is not a mount point", medium->mount);
    } else {
        (void) snprintf(what, sizeof what, "mounted at %s (%s)", medium->mount, mm.source);
    }
    return jf_err_set(err, -EXDEV, "dataset '%s' is on %s mounted at %s, but medium '%s' is %s",
                      dataset_dir, ds->source, ds->mount_point, medium->name, what);
}

int agent_storage_check(const agent_storage_roots_t *roots, const char *dataset_dir,
                        const agent_storage_medium_t *medium, agent_storage_mount_t *ret_mount,
                        jf_err_t *err)
{
    char ds_real[PATH_MAX], medium_real[PATH_MAX];
    char *table = NULL;
    agent_storage_mount_t ds = {0};
    int rc = s_realpath("dataset", dataset_dir, ds_real, err);
    rc = rc != 0 ? rc : s_read_mountinfo(roots, &table, err);
    rc = rc != 0 ? rc : s_locate_in(table, roots->sysfs_root, ds_real, &ds, err);
    if (rc == 0 &&
        (!realpath(medium->mount, medium_real) || strcmp(ds.mount_point, medium_real) != 0)) {
        rc = s_wrong_mount(table, dataset_dir, &ds, medium, err);
    }
    free(table);
    if (rc == 0) {
        *ret_mount = ds;
    }
    return rc;
}

// ---------------------------------------------------------------------------------------------
// Dropping the page cache through the privileged helper

// A pipe whose read end already holds the request, so writing can never raise SIGPIPE: the
// helper may exit without reading, and the agent must not die for it.
static int s_request_pipe(int *ret_read_fd, jf_err_t *err)
{
    int fds[2] = {-1, -1};
    if (pipe2(fds, O_CLOEXEC) != 0) {
        return jf_err_set(err, -errno, "drop-caches: cannot create a pipe: %s", strerror(errno));
    }
    size_t len = strlen(AGENT_STORAGE_DROP_REQUEST);
    ssize_t n = write(fds[1], AGENT_STORAGE_DROP_REQUEST, len); // fits in any pipe buffer
    int saved = errno;
    (void) close(fds[1]); // the helper sees end of file after the request line
    if (n != (ssize_t) len) {
        (void) close(fds[0]);
        return jf_err_set(err, -EIO, "drop-caches: cannot write the request: %s", strerror(saved));
    }
    *ret_read_fd = fds[0];
    return 0;
}

// Starts the helper with stdin from in_fd, stdout and stderr into out_fd, default signal
// dispositions and an empty mask, in its own process group, with a cleared environment.
static int s_spawn_helper(const char *const *argv, int in_fd, int out_fd, pid_t *ret_pid,
                          jf_err_t *err)
{
    const char *helper_path = argv[0];
    char *const envp[] = {(char *) S_HELPER_PATH_ENV, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t all, none;
    (void) sigfillset(&all);
    (void) sigemptyset(&none);
    (void) posix_spawn_file_actions_init(&fa);
    (void) posix_spawnattr_init(&attr);
    (void) posix_spawn_file_actions_adddup2(&fa, in_fd, STDIN_FILENO);
    (void) posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
    (void) posix_spawn_file_actions_adddup2(&fa, out_fd, STDERR_FILENO);
    (void) posix_spawnattr_setsigdefault(&attr, &all);
    (void) posix_spawnattr_setsigmask(&attr, &none);
    (void) posix_spawnattr_setpgroup(&attr, 0); // own group: a timeout kills its whole tree
    (void) posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                               POSIX_SPAWN_SETSIGMASK);
    int rc = posix_spawn(ret_pid, helper_path, &fa, &attr, (char *const *) argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        return jf_err_set(err, -rc, "drop-caches: cannot start helper '%.200s': %s", helper_path,
                          strerror(rc));
    }
    return 0;
}

// Reads the helper's output until end of file or the deadline, keeping the first bytes in out
// (NUL-terminated) and discarding the rest so that the helper never blocks on a full pipe.
static int s_collect_output(int fd, int64_t deadline_us, char *out, size_t size)
{
    size_t kept = 0;
    for (;;) {
        int64_t left_ms = (deadline_us - jf_clock_mono_us() + 999) / JF_US_PER_MS;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        // At most S_POLL_MAX_MS per wait, so that a huge timeout cannot overflow poll's int.
        int ready = left_ms > 0
                        ? poll(&pfd, 1, (int) (left_ms < S_POLL_MAX_MS ? left_ms : S_POLL_MAX_MS))
                        : 0;
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready <= 0) {
            return -ETIMEDOUT;
        }
        char chunk[S_CHUNK_BYTES];
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break; // end of file, or an error that ends the output just the same
        }
        size_t take = (size_t) n < size - 1 - kept ? (size_t) n : size - 1 - kept;
        memcpy(out + kept, chunk, take);
        kept += take;
    }
    out[kept] = '\0';
    return 0;
}

// Waits for the helper to exit until the deadline. The output has ended, so the exit is near;
// L4T's 4.9 kernels have no pidfd to poll, hence the short waits between tries.
static int s_reap(pid_t pid, int64_t deadline_us, int *ret_status)
{
    for (;;) {
        pid_t r = waitpid(pid, ret_status, WNOHANG);
        if (r == pid) {
            return 0;
        }
        if (r < 0 && errno != EINTR) {
            return -ECHILD;
        }
        if (jf_clock_mono_us() >= deadline_us) {
            return -ETIMEDOUT;
        }
        (void) poll(NULL, 0, S_REAP_POLL_MS); // a timed wait; EINTR only shortens it
    }
}

// The helper's output on one line: newlines and control bytes become spaces, trailing blanks go.
static void s_one_line(char *s)
{
    size_t len = strlen(s);
    for (size_t i = 0; i < len; i++) {
        s[i] = (unsigned char) s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i];
    }
    while (len > 0 && s[len - 1] == ' ') {
        s[--len] = '\0';
    }
}

static int s_exit_status(const char *helper_path, int status, char *output, jf_err_t *err)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        return 0;
    }
    s_one_line(output);
    char said[AGENT_STORAGE_HELPER_OUTPUT_MAX + 16] = "no output";
    if (output[0]) {
        (void) snprintf(said, sizeof said, "'%s'", output);
    }
    if (WIFSIGNALED(status)) {
        return jf_err_set(err, -EIO, "drop-caches: helper '%.100s' killed by signal %d: %s",
                          helper_path, WTERMSIG(status), said);
    }
    return jf_err_set(err, -EIO, "drop-caches: helper '%.100s' failed with exit status %d: %s",
                      helper_path, WIFEXITED(status) ? WEXITSTATUS(status) : -1, said);
}

// Kills a helper that ran past its deadline, with its process group, and reaps it. A helper
// that runs as another user (sudo) may refuse the signal: then it is left to finish, unreaped,
// rather than blocking the agent in waitpid.
static int s_kill(const char *helper_path, pid_t pid, int64_t timeout_us, jf_err_t *err)
{
    long long ms = (long long) (timeout_us / JF_US_PER_MS);
    if (kill(-pid, SIGKILL) != 0) {
        return jf_err_set(err, -ETIMEDOUT,
                          "drop-caches: helper '%.200s' still running after %lld ms and cannot "
                          "be killed: %s",
                          helper_path, ms, strerror(errno));
    }
    // A process inside sync() sleeps uninterruptibly and dies only when the write-back wait
    // ends, so the reap gets a bounded grace too.
    int status = 0;
    bool reaped = s_reap(pid, jf_clock_mono_us() + S_KILL_GRACE_US, &status) == 0;
    return jf_err_set(err, -ETIMEDOUT,
                      "drop-caches: helper '%.200s' still running after %lld ms, killed%s",
                      helper_path, ms, reaped ? "" : " (not yet exited)");
}

int agent_storage_drop_caches_via(const char *helper_path, int64_t timeout_us, jf_err_t *err)
{
    const char *const argv[] = {helper_path, NULL};
    return agent_storage_drop_caches_argv(argv, timeout_us, err);
}

int agent_storage_drop_caches_argv(const char *const *argv, int64_t timeout_us, jf_err_t *err)
{
    if (!argv || !argv[0] || argv[0][0] != '/') {
        return jf_err_set(err, -EINVAL, "drop-caches: the helper command needs an absolute path");
    }
    const char *helper_path = argv[0];
    int64_t deadline_us = jf_clock_mono_us() + timeout_us;
    int in_fd = -1, out[2] = {-1, -1};
    pid_t pid = 0;
    int rc = s_request_pipe(&in_fd, err);
    if (rc != 0) {
        return rc;
    }
    if (pipe2(out, O_CLOEXEC) != 0) {
        rc = jf_err_set(err, -errno, "drop-caches: cannot create a pipe: %s", strerror(errno));
        goto out_close_in;
    }
    rc = s_spawn_helper(argv, in_fd, out[1], &pid, err);
    (void) close(out[1]); // the helper has its copy; ours would hide its end of file
    if (rc != 0) {
        goto out_close_out;
    }
    char output[AGENT_STORAGE_HELPER_OUTPUT_MAX + 1] = {0};
    int status = 0;
    rc = s_collect_output(out[0], deadline_us, output, sizeof output);
    rc = rc == 0 ? s_reap(pid, deadline_us, &status) : rc;
    if (rc == -ETIMEDOUT) {
        rc = s_kill(helper_path, pid, timeout_us, err);
    } else if (rc == 0) {
        rc = s_exit_status(helper_path, status, output, err);
    } else {
        rc = jf_err_set(err, rc, "drop-caches: lost the helper '%.200s' (SIGCHLD ignored?)",
                        helper_path);
    }
out_close_out:
    (void) close(out[0]); // read end: nothing to report
out_close_in:
    (void) close(in_fd);
    return rc;
}
