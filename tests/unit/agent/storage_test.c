/* Unit tests for the storage layer of the agent: agent_storage (mounts from mountinfo fixtures of
 * Jetsons and a container host, whole-disk names from a temporary sysfs tree and by rule, the
 * dataset-on-its-medium check, the drop-caches helper with stand-in scripts), agent_diskstats
 * (fixtures and tables of malformed lines, the pread reader, rates) and agent_residency (real
 * files in a temporary directory on a filesystem with a page cache). */
#include "agent_diskstats.h"
#include "agent_residency.h"
#include "agent_storage.h"
#include "jf_fs.h"
#include "jf_units.h"
#include "jft_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cmocka.h>

#define T_TMPFS_MAGIC    0x01021994 // linux/magic.h TMPFS_MAGIC
#define T_RAMFS_MAGIC    0x858458f6 // linux/magic.h RAMFS_MAGIC
#define T_NO_SYSFS       "/nonexistent-sysfs-root"
#define T_SECTOR         INT64_C(512)
#define T_MS             INT64_C(1000)
#define T_HELPER_WAIT_US (INT64_C(10) * 1000000)

// ---------------------------------------------------------------------------------------------
// Helpers

static char *t_fixture_text(const char *name)
{
    char rel[PATH_MAX], path[PATH_MAX];
    (void) snprintf(rel, sizeof rel, "proc/%s", name);
    jft_fixture(rel, path);
    char *text = jft_read_file(path, NULL);
    if (!text) {
        fail_msg("cannot read fixture %s", path);
    }
    return text;
}

static bool t_is_ramfs(const char *dir)
{
    struct statfs sf = {0};
    return statfs(dir, &sf) == 0 && ((unsigned long) sf.f_type == T_TMPFS_MAGIC ||
                                     (unsigned long) sf.f_type == T_RAMFS_MAGIC);
}

// A fresh directory under $TMPDIR, which main() points at a filesystem with a page cache.
static void t_tmpdir(char *out)
{
    assert_int_equal(jft_tmpdir_new(out), 0);
}

static void t_rmtree(const char *dir)
{
    jft_tmpdir_remove(dir);
}

static void t_path(char *out, const char *dir, const char *rel)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", dir, rel);
    assert_true(n > 0 && n < PATH_MAX);
}

static void t_mkdir(const char *dir, const char *rel)
{
    char p[PATH_MAX];
    t_path(p, dir, rel);
    assert_int_equal(jf_fs_mkdir_p(p, 0755, NULL), 0);
}

static void t_write(const char *dir, const char *rel, const char *text)
{
    char p[PATH_MAX];
    t_path(p, dir, rel);
    assert_int_equal(jft_write_file(p, text), 0);
}

static void t_symlink(const char *dir, const char *rel, const char *target)
{
    char p[PATH_MAX];
    t_path(p, dir, rel);
    assert_int_equal(symlink(target, p), 0);
}

// A file of size bytes, written and fsynced, so that its pages are clean and can be evicted.
static void t_make_file(const char *dir, const char *rel, size_t size)
{
    char p[PATH_MAX];
    t_path(p, dir, rel);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    char *data = malloc(size + 1);
    assert_non_null(data);
    memset(data, 'j', size);
    assert_int_equal(write(fd, data, size), (ssize_t) size);
    free(data);
    assert_int_equal(fsync(fd), 0);
    assert_int_equal(close(fd), 0);
}

// Reads a file to the end, which brings all of it into the page cache.
static void t_read_whole(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    char buf[65536];
    while (read(fd, buf, sizeof buf) > 0) {
    }
    assert_int_equal(close(fd), 0);
}

static void t_assert_err(int rc, const jf_err_t *err, int code, const char *frag)
{
    if (rc != code || err->code != code || !strstr(err->msg, frag)) {
        fail_msg("expected %d with '%s', got %d: '%s'", code, frag, rc, err->msg);
    }
}

// ---------------------------------------------------------------------------------------------
// agent_diskstats: fixtures

typedef struct t_disk_row {
    const char *fixture;
    const char *device;
    int code; // 0: parses to the values below
    int64_t reads, read_sectors, read_time_ms, in_flight;
} t_disk_row_t;

static const t_disk_row_t s_disk_fixtures[] = {
    // Xavier NX, JetPack 4 (kernel 4.9): 14 fields.
    {"diskstats-xavier-nx-jp4", "nvme0n1", 0, 48213, 12663114, 98732, 0},
    {"diskstats-xavier-nx-jp4", "mmcblk0", 0, 301877, 15234810, 1376540, 2},
    {"diskstats-xavier-nx-jp4", "mmcblk0p1", 0, 300913, 15226634, 1372204, 2},
    {"diskstats-xavier-nx-jp4", "sda", 0, 1735, 97512, 20384, 0},
    {"diskstats-xavier-nx-jp4", "ram0", 0, 0, 0, 0, 0},
    // AGX Orin, JetPack 5 (kernel 5.10): 20 fields; mmcblk0boot0 must not match mmcblk0.
    {"diskstats-agx-orin-jp5", "nvme0n1", 0, 1802334, 230581210, 1130784, 0},
    {"diskstats-agx-orin-jp5", "mmcblk0", 0, 218113, 18452120, 612304, 0},
    {"diskstats-agx-orin-jp5", "mmcblk1", 0, 40412, 10322864, 402318, 0},
    {"diskstats-agx-orin-jp5", "sdb", 0, 92211, 23582496, 2871732, 1},
    // A workstation (kernel 6.x).
    {"diskstats-host", "nvme0n1", 0, 5212871, 487205688, 1625419, 3},
    {"diskstats-host", "dm-0", 0, 6401342, 486982866, 2421732, 3},
    {"diskstats-host", "vda", 0, 87994, 5274546, 52866, 0},
    // Devices that are not listed, and prefixes of names that are.
    {"diskstats-xavier-nx-jp4", "nvme1n1", -ENOENT, 0, 0, 0, 0},
    {"diskstats-xavier-nx-jp4", "nvme0n", -ENOENT, 0, 0, 0, 0},
    {"diskstats-agx-orin-jp5", "mmcblk0boot", -ENOENT, 0, 0, 0, 0},
    {"diskstats-host", "sd", -ENOENT, 0, 0, 0, 0},
};

static void test_diskstats_fixtures(void **state)
{
    (void) state;
    size_t failed = 0;
    for (size_t i = 0; i < sizeof s_disk_fixtures / sizeof s_disk_fixtures[0]; i++) {
        const t_disk_row_t *r = &s_disk_fixtures[i];
        char *text = t_fixture_text(r->fixture);
        agent_disk_sample_t s = {.reads = -42};
        jf_err_t err = {0};
        int rc = agent_diskstats_parse(text, r->device, &s, &err);
        bool ok = r->code == 0
                      ? rc == 0 && strcmp(s.device, r->device) == 0 && s.reads == r->reads &&
                            s.read_bytes == r->read_sectors * T_SECTOR &&
                            s.read_time_us == r->read_time_ms * T_MS &&
                            s.in_flight == r->in_flight && s.mono_us == 0
                      : rc == r->code && s.reads == -42 && strstr(err.msg, r->device);
        if (!ok) {
            print_error("row %zu %s '%s': rc %d '%s' reads %lld\n", i, r->fixture, r->device, rc,
                        err.msg, (long long) s.reads);
            failed++;
        }
        free(text);
    }
    assert_int_equal(failed, 0);
}

// ---------------------------------------------------------------------------------------------
// agent_diskstats: tables of malformed and unusual lines

#define T_NVME    "259 0 nvme0n1 "
#define T_NVME_OK T_NVME "7 0 16 3 0 0 0 0 1 0 0\n" // reads 7, 16 sectors, 3 ms, 1 in flight

typedef struct t_line_row {
    const char *text;
    const char *device;
    int code;
    const char *frag;   // for a failure
    int64_t reads;      // for a success
    int64_t read_bytes; // for a success
} t_line_row_t;

static const t_line_row_t s_disk_lines[] = {
    {T_NVME_OK, "nvme0n1", 0, NULL, 7, 16 * T_SECTOR},
    {"259\t0\tnvme0n1\t7 0 16 3 0 0 0 0 1 0 0", "nvme0n1", 0, NULL, 7, 16 * T_SECTOR},
    // Kernel 4.18..5.4 (18 fields) and a future kernel with more fields.
    {T_NVME "7 0 16 3 0 0 0 0 1 0 0 0 0 0 0\n", "nvme0n1", 0, NULL, 7, 16 * T_SECTOR},
    {T_NVME "7 0 16 3 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0\n", "nvme0n1", 0, NULL, 7, 16 * T_SECTOR},
    // Lines of other devices are not ours to judge.
    {"garbage\n8 0 sda 1 2\n\n" T_NVME_OK, "nvme0n1", 0, NULL, 7, 16 * T_SECTOR},
    {"8 1 sda1 x\n" T_NVME_OK "259 1 nvme0n1p1 -1\n", "nvme0n1", 0, NULL, 7, 16 * T_SECTOR},
    // Counters at the limits.
    {T_NVME "9223372036854775807 0 18014398509481983 0 0 0 0 0 0 0 0\n", "nvme0n1", 0, NULL,
     INT64_MAX, 18014398509481983 * T_SECTOR},
    // Too few fields.
    {T_NVME "1 2 3\n", "nvme0n1", -EINVAL,
     "diskstats:1: device 'nvme0n1': expected at least 14 fields, got 6", 0, 0},
    {T_NVME "7 0 16 3 0 0 0 0 1 0\n", "nvme0n1", -EINVAL, "got 13", 0, 0},
    {"8 0 sda 1 1 1 1 1 1 1 1 1 1 1\n259 0 nvme0n1\n", "nvme0n1", -EINVAL,
     "diskstats:2: device 'nvme0n1': expected at least 14 fields, got 3", 0, 0},
    // Counters that are not non-negative decimals.
    {T_NVME "7 0 x 3 0 0 0 0 1 0 0\n", "nvme0n1", -EINVAL,
     "field 6: expected a non-negative counter, got 'x'", 0, 0},
    {T_NVME "-7 0 16 3 0 0 0 0 1 0 0\n", "nvme0n1", -EINVAL, "field 4: expected", 0, 0},
    {T_NVME "+7 0 16 3 0 0 0 0 1 0 0\n", "nvme0n1", -EINVAL, "field 4: expected", 0, 0},
    {T_NVME "7 0 16 3 0 0 0 0 1 0 0x1\n", "nvme0n1", -EINVAL, "field 14: expected", 0, 0},
    {T_NVME "7 0 16 3 0 0 0 0 1 0 0 0 0 0 oops\n", "nvme0n1", -EINVAL, "field 18", 0, 0},
    {"25x 0 nvme0n1 7 0 16 3 0 0 0 0 1 0 0\n", "nvme0n1", -EINVAL, "field 1: expected", 0, 0},
    {T_NVME "7 0 1.5 3 0 0 0 0 1 0 0\n", "nvme0n1", -EINVAL, "field 6: expected", 0, 0},
    // Out of range: past INT64_MAX, past 20 digits, sectors or milliseconds that overflow.
    {T_NVME "9223372036854775808 0 16 3 0 0 0 0 1 0 0\n", "nvme0n1", -EINVAL,
     "diskstats:1: device 'nvme0n1': field 4:", 0, 0},
    {T_NVME "18446744073709551616 0 16 3 0 0 0 0 1 0 0\n", "nvme0n1", -EINVAL, "field 4:", 0, 0},
    {T_NVME "123456789012345678901 0 16 3 0 0 0 0 1 0 0\n", "nvme0n1", -EINVAL,
     "field 4: expected a non-negative counter", 0, 0},
    {T_NVME "7 0 18014398509481984 3 0 0 0 0 1 0 0\n", "nvme0n1", -EINVAL, "too large", 0, 0},
    {T_NVME "7 0 16 9223372036854776 0 0 0 0 1 0 0\n", "nvme0n1", -EINVAL, "too large", 0, 0},
    // Not there at all.
    {"", "nvme0n1", -ENOENT, "diskstats: no line for device 'nvme0n1'", 0, 0},
    {"8 1 sda1 1 1 1 1 1 1 1 1 1 1 1\n", "sda", -ENOENT, "no line for device 'sda'", 0, 0},
    {T_NVME_OK, "an-overly-long-block-device-name-x", -EINVAL, "is too long", 0, 0},
};

static void test_diskstats_lines(void **state)
{
    (void) state;
    size_t failed = 0;
    for (size_t i = 0; i < sizeof s_disk_lines / sizeof s_disk_lines[0]; i++) {
        const t_line_row_t *r = &s_disk_lines[i];
        agent_disk_sample_t s = {.reads = -42};
        jf_err_t err = {0};
        int rc = agent_diskstats_parse(r->text, r->device, &s, &err);
        bool ok = r->code == 0 ? rc == 0 && s.reads == r->reads && s.read_bytes == r->read_bytes
                               : rc == r->code && err.code == r->code && s.reads == -42 &&
                                     strstr(err.msg, r->frag);
        if (!ok) {
            print_error("row %zu: rc %d '%s' reads %lld\n", i, rc, err.msg, (long long) s.reads);
            failed++;
        }
    }
    assert_int_equal(failed, 0);
}

// ---------------------------------------------------------------------------------------------
// agent_diskstats: the reader, rates and JSON

// A diskstats table with filler lines first, so that it is larger than the reader's first buffer.
static void t_write_diskstats(const char *root, int64_t nvme_reads)
{
    size_t cap = 64 * 1024, n = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (int i = 0; i < 200; i++) {
        n += (size_t) snprintf(text + n, cap - n, "   7 %7d loop%d 0 0 0 0 0 0 0 0 0 0 0\n", i, i);
    }
    (void) snprintf(text + n, cap - n, " 259       0 nvme0n1 %lld 0 2048 40 0 0 0 0 0 0 0\n",
                    (long long) nvme_reads);
    t_write(root, "diskstats", text);
    free(text);
}

static void test_diskstats_reader(void **state)
{
    (void) state;
    char root[PATH_MAX];
    t_tmpdir(root);
    t_write_diskstats(root, 100);
    jf_err_t err = {0};
    agent_diskstats_t *ds = agent_diskstats_new(root, "nvme0n1", &err);
    assert_non_null(ds);
    agent_disk_sample_t a = {0}, b = {0};
    assert_int_equal(agent_diskstats_read(ds, &a, &err), 0);
    assert_int_equal(a.reads, 100);
    assert_int_equal(a.read_bytes, 2048 * T_SECTOR);
    assert_int_equal(a.read_time_us, 40 * T_MS);
    assert_true(a.mono_us > 0);
    // New content in the same file: the open descriptor sees it (pread from offset 0).
    t_write_diskstats(root, 250);
    assert_int_equal(agent_diskstats_read(ds, &b, &err), 0);
    assert_int_equal(b.reads, 250);
    assert_true(b.mono_us >= a.mono_us);
    // The device disappears (removed USB disk): an error, not zeros.
    t_write(root, "diskstats", "8 0 sda 1 1 1 1 1 1 1 1 1 1 1\n");
    t_assert_err(agent_diskstats_read(ds, &b, &err), &err, -ENOENT, "'nvme0n1'");
    assert_int_equal(b.reads, 250);
    // Past the size cap.
    char *big = malloc(AGENT_DISKSTATS_FILE_MAX_BYTES + 2);
    assert_non_null(big);
    memset(big, ' ', AGENT_DISKSTATS_FILE_MAX_BYTES + 1);
    big[AGENT_DISKSTATS_FILE_MAX_BYTES + 1] = '\0';
    t_write(root, "diskstats", big);
    free(big);
    t_assert_err(agent_diskstats_read(ds, &b, &err), &err, -EFBIG, "/diskstats: larger than");
    agent_diskstats_destroy(&ds);
    assert_null(ds);
    agent_diskstats_destroy(&ds);
    agent_diskstats_destroy(NULL);
    t_rmtree(root);
}

static void test_diskstats_new_errors(void **state)
{
    (void) state;
    char root[PATH_MAX];
    t_tmpdir(root);
    jf_err_t err = {0};
    // Not a device name: a path, empty, hidden, too long.
    const char *bad[] = {"../sda", "sda/1",    "",
                         ".sda",   "nvme0n1 ", "abcdefghijklmnopqrstuvwxyz012345"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_null(agent_diskstats_new(root, bad[i], &err));
        t_assert_err(err.code, &err, -EINVAL, "is not a block device name");
    }
    assert_null(agent_diskstats_new(root, "nvme0n1", &err)); // no file yet
    t_assert_err(err.code, &err, -ENOENT, "/diskstats: cannot open");
    t_write_diskstats(root, 1);
    assert_null(agent_diskstats_new(root, "sda", &err));
    t_assert_err(err.code, &err, -ENOENT, "no line for device 'sda'");
    assert_null(agent_diskstats_new(root, "sdz", NULL)); // err may be NULL
    t_rmtree(root);
}

// The real /proc/diskstats, when there is one: the first device listed reads twice.
static void test_diskstats_real(void **state)
{
    (void) state;
    char *text = jft_read_file("/proc/diskstats", NULL);
    char name[64] = {0};
    bool listed = text && sscanf(text, "%*u %*u %63s", name) == 1;
    free(text);
    if (!listed) {
        print_message("no /proc/diskstats here; skipping\n");
        skip();
    }
    jf_err_t err = {0};
    agent_diskstats_t *ds = agent_diskstats_new("/proc", name, &err);
    if (!ds) {
        fail_msg("%s", err.msg);
    }
    agent_disk_sample_t a = {0}, b = {0};
    assert_int_equal(agent_diskstats_read(ds, &a, &err), 0);
    assert_int_equal(agent_diskstats_read(ds, &b, &err), 0);
    assert_true(b.reads >= a.reads && b.read_bytes >= a.read_bytes);
    agent_diskstats_destroy(&ds);
}

static void test_diskstats_rate(void **state)
{
    (void) state;
    agent_disk_sample_t a = {"nvme0n1", 100, 1048576, 50000, 0, 1000000};
    agent_disk_sample_t b = {"nvme0n1", 300, 3145728, 250000, 2, 3000000};
    agent_disk_rate_t r = {0};
    jf_err_t err = {0};
    assert_int_equal(agent_diskstats_rate(&a, &b, &r, &err), 0);
    assert_int_equal(r.interval_us, 2000000);
    assert_float_equal(r.reads_per_s, 100.0, 1e-9);
    assert_float_equal(r.read_bytes_per_s, 1048576.0, 1e-6);
    assert_float_equal(r.read_await_us, 1000.0, 1e-9);
    agent_disk_sample_t idle = a; // no reads in the interval: no await to speak of
    idle.mono_us += 1000000;
    assert_int_equal(agent_diskstats_rate(&a, &idle, &r, &err), 0);
    assert_float_equal(r.reads_per_s, 0.0, 0.0);
    assert_float_equal(r.read_await_us, 0.0, 0.0);
    t_assert_err(agent_diskstats_rate(&b, &a, &r, &err), &err, -EINVAL, "no time passed");
    agent_disk_sample_t other = b;
    (void) snprintf(other.device, sizeof other.device, "sda");
    t_assert_err(agent_diskstats_rate(&a, &other, &r, &err), &err, -EINVAL, "'nvme0n1' and 'sda'");
    agent_disk_sample_t back = b;
    back.read_time_us = 10; // a 32-bit millisecond counter that wrapped
    t_assert_err(agent_diskstats_rate(&a, &back, &r, &err), &err, -ERANGE, "went backwards");
    back = b;
    back.reads = 1;
    t_assert_err(agent_diskstats_rate(&a, &back, &r, &err), &err, -ERANGE, "'nvme0n1'");
}

static void test_diskstats_json(void **state)
{
    (void) state;
    agent_disk_sample_t s = {"mmcblk0", 301877, 7800222720, 1376540000, 2, 77};
    json_t *j = agent_diskstats_to_json(&s);
    assert_non_null(j);
    char *text = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
    assert_non_null(text);
    assert_string_equal(text, "{\"device\":\"mmcblk0\",\"in_flight\":2,\"read_bytes\":7800222720,"
                              "\"read_time_us\":1376540000,\"reads\":301877}");
    free(text);
    json_decref(j);
}

// ---------------------------------------------------------------------------------------------
// agent_storage: mounts from mountinfo fixtures

typedef struct t_mount_row {
    const char *fixture;
    const char *path;
    const char *mount_point;
    const char *source;
    const char *fstype;
    unsigned major, minor;
} t_mount_row_t;

#define T_NX   "mountinfo-xavier-nx-jp4"
#define T_AGX  "mountinfo-agx-xavier-jp5"
#define T_NANO "mountinfo-nano-jp4"
#define T_HOST "mountinfo-host-container"

static const t_mount_row_t s_mounts[] = {
    // Xavier NX, JetPack 4: root on the SD card shows as /dev/root; NVMe; an NTFS USB disk.
    {T_NX, "/home/jetson/datasets/gld23k", "/", "/dev/root", "ext4", 179, 1},
    {T_NX, "/mnt/nvme/datasets/gld23k", "/mnt/nvme", "/dev/nvme0n1p1", "ext4", 259, 1},
    {T_NX, "/mnt/nvme", "/mnt/nvme", "/dev/nvme0n1p1", "ext4", 259, 1},
    {T_NX, "/mnt/nvmeX/data", "/", "/dev/root", "ext4", 179, 1},
    {T_NX, "/media/jetson/My Passport/gld23k", "/media/jetson/My Passport", "/dev/sda1", "fuseblk",
     8, 1},
    {T_NX, "/run/user/1000/gvfs/x", "/run/user/1000/gvfs", "gvfsd-fuse", "fuse.gvfsd-fuse", 0, 46},
    {T_NX, "/run/user/1000x", "/run", "tmpfs", "tmpfs", 0, 22},
    {T_NX, "/", "/", "/dev/root", "ext4", 179, 1},
    // AGX Xavier, JetPack 5: root on eMMC; SD card, NVMe and a USB disk as media.
    {T_AGX, "/data/x", "/", "/dev/mmcblk0p1", "ext4", 179, 1},
    {T_AGX, "/mnt/sd/gld23k/train", "/mnt/sd", "/dev/mmcblk1p1", "ext4", 179, 33},
    {T_AGX, "/mnt/nvme/gld23k", "/mnt/nvme", "/dev/nvme0n1p1", "ext4", 259, 1},
    {T_AGX, "/mnt/usb-hdd/gld23k", "/mnt/usb-hdd", "/dev/sdb1", "ext4", 8, 17},
    // Nano, JetPack 4: SD root and a USB disk.
    {T_NANO, "/mnt/usb-hdd/d", "/mnt/usb-hdd", "/dev/sda1", "ext4", 8, 1},
    {T_NANO, "/mnt/usb-hdd-old/d", "/", "/dev/mmcblk0p1", "ext4", 179, 1},
    // A container: overlay root, bind mounts, tmpfs, a mount on top of another, btrfs.
    {T_HOST, "/opt/datasets", "/", "overlay", "overlay", 0, 52},
    {T_HOST, "/data/gld23k", "/data", "/dev/nvme0n1p2", "ext4", 259, 2},
    {T_HOST, "/data2/gld23k", "/data2", "/dev/sda1", "ext4", 8, 1},
    {T_HOST, "/datax", "/", "overlay", "overlay", 0, 52},
    {T_HOST, "/tmp/jft-1/ds", "/tmp", "tmpfs", "tmpfs", 0, 60},
    {T_HOST, "/mnt/stack/ds", "/mnt/stack", "tmpfs", "tmpfs", 0, 61},
    {T_HOST, "/mnt/btrfs/ds", "/mnt/btrfs", "/dev/sdb2", "btrfs", 0, 62},
    {T_HOST, "/run/netns/test", "/run/netns/test", "nsfs", "nsfs", 0, 4},
};

static void test_mount_fixtures(void **state)
{
    (void) state;
    size_t failed = 0;
    for (size_t i = 0; i < sizeof s_mounts / sizeof s_mounts[0]; i++) {
        const t_mount_row_t *r = &s_mounts[i];
        char *text = t_fixture_text(r->fixture);
        agent_storage_mount_t m = {0};
        jf_err_t err = {0};
        int rc = agent_storage_find_mount(text, r->path, &m, &err);
        if (rc != 0 || strcmp(m.mount_point, r->mount_point) != 0 ||
            strcmp(m.source, r->source) != 0 || strcmp(m.fstype, r->fstype) != 0 ||
            m.major != r->major || m.minor != r->minor || m.disk[0] != '\0') {
            print_error("row %zu %s '%s': rc %d '%s' -> '%s' '%s' '%s' %u:%u\n", i, r->fixture,
                        r->path, rc, err.msg, m.mount_point, m.source, m.fstype, m.major, m.minor);
            failed++;
        }
        free(text);
    }
    assert_int_equal(failed, 0);
}

#define T_ROOT_LINE "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"

typedef struct t_text_mount_row {
    const char *text;
    const char *path;
    int code;
    const char *frag; // a fragment of the message, or the mount point found (code 0)
} t_text_mount_row_t;

static const t_text_mount_row_t s_text_mounts[] = {
    // Escapes decode (\040 space, \011 tab, \134 backslash); the last line needs no newline.
    {T_ROOT_LINE "2 1 8:2 / /a\\040b\\011c\\134d rw - ext4 /dev/sda2 rw\n", "/a b\tc\\d/x", 0,
     "/a b\tc\\d"},
    {T_ROOT_LINE "3 1 0:40 / /m rw - tmpfs tmpfs rw", "/m/x", 0, "/m"},
    {"36 35 98:0 /mnt1 /mnt2\n", "/mnt2", -EINVAL,
     "mountinfo:1: expected at least 10 fields, got 5"},
    {"", "/x", -ENOENT, "mountinfo: no mount holds '/x'"},
    {"2 1 8:2 / /data rw - ext4 /dev/sda2 rw\n", "/x", -ENOENT, "no mount holds '/x'"},
    {T_ROOT_LINE "x 1 8:2 / /data rw - ext4 /dev/sda2 rw\n", "/data", -EINVAL,
     "mountinfo:2: expected 'ID PARENT MAJ:MIN', got 'x 1 8:2'"},
    {T_ROOT_LINE "2 -1 8:2 / /data rw - ext4 /dev/sda2 rw\n", "/data", -EINVAL, "mountinfo:2:"},
    {T_ROOT_LINE "2 1 8-2 / /data rw - ext4 /dev/sda2 rw\n", "/data", -EINVAL, "'2 1 8-2'"},
    {T_ROOT_LINE "2 1 8: / /data rw - ext4 /dev/sda2 rw\n", "/data", -EINVAL, "MAJ:MIN"},
    {T_ROOT_LINE "2 1 8:99999999999 / /data rw - ext4 /dev/sda2 rw\n", "/data", -EINVAL, "MAJ:MIN"},
    {T_ROOT_LINE "2 1 8:2 / data rw - ext4 /dev/sda2 rw\n", "/data", -EINVAL,
     "mountinfo:2: mount point 'data' is not absolute"},
    {T_ROOT_LINE "2 1 8:2 / /data rw shared:1 ext4 /dev/sda2 rw\n", "/data", -EINVAL,
     "mountinfo:2: expected '- fstype source options'"},
    {T_ROOT_LINE "2 1 8:2 / /data rw - ext4\n", "/data", -EINVAL, "expected '- fstype source"},
    {T_ROOT_LINE "2 1 8:2 / /data rw - ext4 /dev/sda2\n", "/data", -EINVAL, "mountinfo:2:"},
    {T_ROOT_LINE "2 1 8:2 / /my\\04disk rw - ext4 /dev/sda2 rw\n", "/data", -EINVAL,
     "mountinfo:2: bad escape in '/my\\04disk'"},
    {T_ROOT_LINE "2 1 8:2 / /my\\400 rw - ext4 /dev/sda2 rw\n", "/data", -EINVAL, "bad escape"},
    {T_ROOT_LINE "2 1 8:2 / /data rw - ext4 /dev/sd\\x rw\n", "/data", -EINVAL, "bad escape"},
    {T_ROOT_LINE, "data/x", -EINVAL, "mountinfo: path 'data/x' is not absolute"},
};

static void test_mount_texts(void **state)
{
    (void) state;
    size_t failed = 0;
    for (size_t i = 0; i < sizeof s_text_mounts / sizeof s_text_mounts[0]; i++) {
        const t_text_mount_row_t *r = &s_text_mounts[i];
        agent_storage_mount_t m = {.major = 4242};
        jf_err_t err = {0};
        int rc = agent_storage_find_mount(r->text, r->path, &m, &err);
        bool ok = r->code == 0 ? rc == 0 && strcmp(m.mount_point, r->frag) == 0 && m.major != 4242
                               : rc == r->code && err.code == r->code && strstr(err.msg, r->frag) &&
                                     m.major == 4242;
        if (!ok) {
            print_error("row %zu: rc %d '%s'\n", i, rc, err.msg);
            failed++;
        }
    }
    assert_int_equal(failed, 0);
}

// ---------------------------------------------------------------------------------------------
// agent_storage: whole-disk names

typedef struct t_rule_row {
    const char *source;
    unsigned major, minor;
    int code;
    const char *disk; // or the message fragment for a failure
} t_rule_row_t;

static const t_rule_row_t s_rules[] = {
    {"/dev/nvme0n1p1", 259, 1, 0, "nvme0n1"},
    {"/dev/nvme0n1", 259, 0, 0, "nvme0n1"},
    {"/dev/nvme1n2p12", 259, 9, 0, "nvme1n2"},
    {"/dev/mmcblk0p1", 179, 1, 0, "mmcblk0"},
    {"/dev/mmcblk1p1", 179, 33, 0, "mmcblk1"},
    {"/dev/mmcblk0", 179, 0, 0, "mmcblk0"},
    {"/dev/sda1", 8, 1, 0, "sda"},
    {"/dev/sdb", 8, 16, 0, "sdb"},
    {"/dev/sdaa15", 65, 175, 0, "sdaa"},
    {"/dev/vda", 254, 0, 0, "vda"},
    {"/dev/xvda1", 202, 1, 0, "xvda"},
    {"/dev/loop0p1", 259, 5, 0, "loop0"},
    {"/dev/md127", 9, 127, 0, "md127"},
    {"/dev/dm-0", 253, 0, 0, "dm-0"},
    {"/dev/zram0", 252, 0, 0, "zram0"},
    // No block device at all.
    {"overlay", 0, 52, 0, ""},
    {"tmpfs", 0, 60, 0, ""},
    {"server:/export", 0, 70, 0, ""},
    // Names no rule knows: sysfs is needed.
    {"/dev/root", 179, 1, -ENODEV, "cannot tell the disk of '/dev/root' (179:1) without sysfs"},
    {"/dev/mapper/vg-root", 253, 0, -ENODEV, "'/dev/mapper/vg-root'"},
    {"/dev/sd", 8, 0, -ENODEV, "'/dev/sd'"},
};

// Runs rows against a sysfs root; returns how many failed.
static size_t t_disk_rows(const char *sysfs_root, const t_rule_row_t *rows, size_t n)
{
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        const t_rule_row_t *r = &rows[i];
        agent_storage_mount_t m = {.major = r->major, .minor = r->minor};
        (void) snprintf(m.source, sizeof m.source, "%s", r->source);
        char disk[AGENT_STORAGE_DISK_MAX + 1] = "untouched";
        jf_err_t err = {0};
        int rc = agent_storage_disk_name(sysfs_root, &m, disk, &err);
        bool ok = r->code == 0 ? rc == 0 && strcmp(disk, r->disk) == 0
                               : rc == r->code && err.code == r->code && strstr(err.msg, r->disk) &&
                                     strcmp(disk, "untouched") == 0;
        if (!ok) {
            print_error("row %zu '%s': rc %d disk '%s' '%s'\n", i, r->source, rc, disk, err.msg);
            failed++;
        }
    }
    return failed;
}

static void test_disk_rules(void **state)
{
    (void) state;
    assert_int_equal(t_disk_rows(T_NO_SYSFS, s_rules, sizeof s_rules / sizeof s_rules[0]), 0);
}

// A sysfs tree shaped like a Jetson's: eMMC partition 179:1, NVMe disk and partition, dm-0.
static void t_make_sysfs(const char *root)
{
    static const char *const dirs[] = {
        "dev/block", "devices/platform/3460000.sdhci/block/mmcblk0/mmcblk0p1",
        "devices/platform/nvme/block/nvme0n1/nvme0n1p1", "devices/virtual/block/dm-0"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        t_mkdir(root, dirs[i]);
    }
    t_write(root, "devices/platform/3460000.sdhci/block/mmcblk0/mmcblk0p1/partition", "1\n");
    t_write(root, "devices/platform/nvme/block/nvme0n1/nvme0n1p1/partition", "1\n");
    t_symlink(root, "dev/block/179:1",
              "../../devices/platform/3460000.sdhci/block/mmcblk0/mmcblk0p1");
    t_symlink(root, "dev/block/259:0", "../../devices/platform/nvme/block/nvme0n1");
    t_symlink(root, "dev/block/259:1", "../../devices/platform/nvme/block/nvme0n1/nvme0n1p1");
    t_symlink(root, "dev/block/253:0", "../../devices/virtual/block/dm-0");
}

static void test_disk_sysfs(void **state)
{
    (void) state;
    char root[PATH_MAX];
    t_tmpdir(root);
    t_make_sysfs(root);
    static const t_rule_row_t rows[] = {
        {"/dev/sdb2", 0, 62, 0, "sdb"},      // btrfs: an anonymous device number, a disk behind it
        {"/dev/root", 179, 1, 0, "mmcblk0"}, // sysfs knows what the name hides
        {"/dev/nvme0n1p1", 259, 1, 0, "nvme0n1"},   // a partition: its parent
        {"/dev/nvme0n1", 259, 0, 0, "nvme0n1"},     // a whole disk: itself
        {"/dev/mapper/vg-root", 253, 0, 0, "dm-0"}, // the kernel name, not the mapper alias
        {"/dev/sda1", 8, 1, 0, "sda"},              // not in this sysfs: the naming rule
        {"tmpfs", 0, 30, 0, ""},
    };
    size_t failed = t_disk_rows(root, rows, sizeof rows / sizeof rows[0]);
    t_rmtree(root);
    assert_int_equal(failed, 0);
}

// ---------------------------------------------------------------------------------------------
// agent_storage: locating real paths and checking media

typedef struct t_lab {
    char tmp[PATH_MAX];   // the temporary directory, to remove
    char dir[PATH_MAX];   // its realpath, as mountinfo shows paths
    char proc[PATH_MAX];  // <dir>/proc with self/mountinfo
    char sysfs[PATH_MAX]; // <dir>/sys
    agent_storage_roots_t roots;
} t_lab_t;

// A temporary tree in which <dir>/nvme and <dir>/sd are mount points by the fixture mountinfo.
static void t_lab_new(t_lab_t *lab)
{
    t_tmpdir(lab->tmp);
    assert_non_null(realpath(lab->tmp, lab->dir));
    t_path(lab->proc, lab->dir, "proc");
    t_path(lab->sysfs, lab->dir, "sys");
    const char *dirs[] = {"proc/self", "sys", "nvme/ds", "sd/ds", "plain/ds"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        t_mkdir(lab->dir, dirs[i]);
    }
    t_make_sysfs(lab->sysfs);
    t_symlink(lab->dir, "link", "nvme/ds");
    char text[4 * PATH_MAX];
    (void) snprintf(text, sizeof text,
                    "26 0 179:1 / / rw,relatime shared:1 - ext4 /dev/root rw\n"
                    "127 26 259:1 / %s/nvme rw,relatime shared:68 - ext4 /dev/nvme0n1p1 rw\n"
                    "130 26 179:33 / %s/sd rw,relatime shared:70 - ext4 /dev/mmcblk1p1 rw\n",
                    lab->dir, lab->dir);
    t_write(lab->proc, "self/mountinfo", text);
    lab->roots = (agent_storage_roots_t){.proc_root = lab->proc, .sysfs_root = lab->sysfs};
}

static void test_locate(void **state)
{
    (void) state;
    t_lab_t lab = {0};
    t_lab_new(&lab);
    char path[PATH_MAX], want[PATH_MAX];
    agent_storage_mount_t m = {0};
    jf_err_t err = {0};
    t_path(path, lab.dir, "nvme/ds");
    t_path(want, lab.dir, "nvme");
    assert_int_equal(agent_storage_locate(&lab.roots, path, &m, &err), 0);
    assert_string_equal(m.mount_point, want);
    assert_string_equal(m.disk, "nvme0n1");
    t_path(path, lab.dir, "link"); // resolved before the lookup
    assert_int_equal(agent_storage_locate(&lab.roots, path, &m, &err), 0);
    assert_string_equal(m.mount_point, want);
    t_path(path, lab.dir, "plain/ds");
    assert_int_equal(agent_storage_locate(&lab.roots, path, &m, &err), 0);
    assert_string_equal(m.mount_point, "/");
    assert_string_equal(m.disk, "mmcblk0");
    t_path(path, lab.dir, "missing");
    t_assert_err(agent_storage_locate(&lab.roots, path, &m, &err), &err, -ENOENT, "/missing'");
    agent_storage_roots_t no_proc = {.proc_root = lab.sysfs, .sysfs_root = lab.sysfs};
    t_path(path, lab.dir, "nvme/ds");
    t_assert_err(agent_storage_locate(&no_proc, path, &m, &err), &err, -ENOENT,
                 "/sys/self/mountinfo: cannot open");
    t_write(lab.proc, "self/mountinfo", "1 0 8:1 / / rw\n");
    t_assert_err(agent_storage_locate(&lab.roots, path, &m, &err), &err, -EINVAL, "mountinfo:1:");
    t_rmtree(lab.tmp);
}

typedef struct t_check_row {
    const char *dataset; // under the lab directory
    const char *medium;
    const char *mount; // under the lab directory, or absolute when it starts with '/'
    int code;
    const char *frag; // the disk for a success, a fragment of the message for a failure
} t_check_row_t;

static const t_check_row_t s_checks[] = {
    {"nvme/ds", "nvme", "nvme", 0, "nvme0n1"},
    {"link", "nvme", "nvme", 0, "nvme0n1"},
    {"sd/ds", "sd", "sd", 0, "mmcblk1"},
    {"plain/ds", "sd", "/", 0, "mmcblk0"},
    {"plain/ds", "nvme", "nvme", -EXDEV,
     "/plain/ds' is on /dev/root mounted at /, but medium "
     "'nvme' is mounted at "},
    {"nvme/ds", "sd", "sd", -EXDEV, "/nvme/ds' is on /dev/nvme0n1p1 mounted at "},
    {"sd/ds", "nvme", "nvme", -EXDEV, "/nvme (/dev/nvme0n1p1)"},
    {"nvme/ds", "usb-hdd", "plain", -EXDEV, "medium 'usb-hdd' is configured at "},
    {"nvme/ds", "usb-hdd", "plain", -EXDEV, "/plain, which is not a mount point"},
    {"nvme/ds", "usb-hdd", "usb", -EXDEV, "/usb, which does not exist"},
    {"missing", "nvme", "nvme", -ENOENT, "dataset '"},
};

static void test_check(void **state)
{
    (void) state;
    t_lab_t lab = {0};
    t_lab_new(&lab);
    size_t failed = 0;
    for (size_t i = 0; i < sizeof s_checks / sizeof s_checks[0]; i++) {
        const t_check_row_t *r = &s_checks[i];
        char ds[PATH_MAX], mount[PATH_MAX];
        t_path(ds, lab.dir, r->dataset);
        bool absolute = r->mount[0] == '/'; // else under the lab directory
        t_path(mount, absolute ? "" : lab.dir, absolute ? r->mount + 1 : r->mount);
        agent_storage_medium_t medium = {.name = r->medium, .mount = mount};
        agent_storage_mount_t m = {.major = 4242};
        jf_err_t err = {0};
        int rc = agent_storage_check(&lab.roots, ds, &medium, &m, &err);
        bool ok = r->code == 0 ? rc == 0 && strcmp(m.disk, r->frag) == 0
                               : rc == r->code && err.code == r->code && strstr(err.msg, r->frag) &&
                                     m.major == 4242;
        if (!ok) {
            print_error("row %zu '%s' on '%s': rc %d disk '%s' '%s'\n", i, r->dataset, r->medium,
                        rc, m.disk, err.msg);
            failed++;
        }
    }
    t_rmtree(lab.tmp);
    assert_int_equal(failed, 0);
}

// The real tables of this machine: the working directory is on some mount that holds it.
static void test_locate_real(void **state)
{
    (void) state;
    agent_storage_roots_t roots = {.proc_root = "/proc", .sysfs_root = "/sys"};
    char cwd[PATH_MAX];
    assert_non_null(realpath(".", cwd));
    agent_storage_mount_t m = {0};
    jf_err_t err = {0};
    if (agent_storage_locate(&roots, ".", &m, &err) != 0) {
        fail_msg("%s", err.msg);
    }
    size_t len = strlen(m.mount_point);
    assert_true(strcmp(m.mount_point, "/") == 0 ||
                (strncmp(cwd, m.mount_point, len) == 0 && (cwd[len] == '/' || !cwd[len])));
    print_message("working directory on %s (%s, %u:%u, disk '%s')\n", m.mount_point, m.source,
                  m.major, m.minor, m.disk);
    agent_storage_medium_t medium = {.name = "local", .mount = m.mount_point};
    assert_int_equal(agent_storage_check(&roots, ".", &medium, &m, &err), 0);
}

// ---------------------------------------------------------------------------------------------
// agent_storage: the drop-caches helper, played by shell scripts

static void t_script(const char *dir, const char *name, const char *body, mode_t mode)
{
    char p[PATH_MAX];
    t_path(p, dir, name);
    assert_int_equal(jft_write_file(p, body), 0);
    assert_int_equal(chmod(p, mode), 0);
}

typedef struct t_helper_row {
    const char *name;
    const char *body; // NULL: no such file
    mode_t mode;
    int code;
    const char *frag;
} t_helper_row_t;

static const t_helper_row_t s_helpers[] = {
    // One request line then end of file, no arguments, a cleared environment.
    {"helper",
     "#!/bin/sh\nread line\nread more && exit 8\ngot=\"$line|$#|${HOME:-none}\"\n"
     "[ \"$got\" = 'drop-caches|0|none' ] || { echo \"got $got\"; exit 9; }\necho dropped\n",
     0755, 0, ""},
    // A helper that never reads its stdin must not hurt the agent (no SIGPIPE).
    {"quiet", "#!/bin/sh\nexit 0\n", 0755, 0, ""},
    {"denied", "#!/bin/sh\necho 'drop-caches: must be run as root' >&2\nexit 3\n", 0755, -EIO,
     "failed with exit status 3: 'drop-caches: must be run as root'"},
    {"chatty", "#!/bin/sh\nyes 'too much output' | head -n 50000\nexit 1\n", 0755, -EIO,
     "exit status 1: 'too much output too much output"},
    {"crash", "#!/bin/sh\nkill -9 $$\n", 0755, -EIO, "killed by signal 9"},
    {"hang", "#!/bin/sh\nsleep 30\n", 0755, -ETIMEDOUT, "still running after 300 ms, killed"},
    {"plain", "#!/bin/sh\nexit 0\n", 0644, -EACCES, "cannot start helper '"},
    {"missing", NULL, 0, -ENOENT, "/missing': No such file"},
};

static void test_drop_caches(void **state)
{
    (void) state;
    char dir[PATH_MAX];
    t_tmpdir(dir);
    size_t failed = 0;
    for (size_t i = 0; i < sizeof s_helpers / sizeof s_helpers[0]; i++) {
        const t_helper_row_t *r = &s_helpers[i];
        char helper[PATH_MAX];
        t_path(helper, dir, r->name);
        if (r->body) {
            t_script(dir, r->name, r->body, r->mode);
        }
        jf_err_t err = {0};
        int64_t t0_us = jf_clock_mono_us();
        int rc = agent_storage_drop_caches_via(helper, INT64_C(300) * 1000, &err);
        if (rc != r->code || err.code != r->code || !strstr(err.msg, r->frag) ||
            jf_clock_mono_us() - t0_us > T_HELPER_WAIT_US) {
            print_error("row %zu '%s': rc %d '%s'\n", i, r->name, rc, err.msg);
            failed++;
        }
    }
    t_rmtree(dir);
    assert_int_equal(failed, 0);
}

// The helper as a command line (sudo -n HELPER on a board): its arguments reach it as given.
static void test_drop_caches_argv(void **state)
{
    (void) state;
    char dir[PATH_MAX], helper[PATH_MAX];
    t_tmpdir(dir);
    t_script(dir, "args",
             "#!/bin/sh\nread line\n[ \"$line|$#|$1|$2\" = 'drop-caches|2|--root|/x y' ] || "
             "{ echo \"got $line|$#|$1|$2\"; exit 9; }\n",
             0755);
    t_path(helper, dir, "args");
    const char *const argv[] = {helper, "--root", "/x y", NULL};
    jf_err_t err = {0};
    if (agent_storage_drop_caches_argv(argv, INT64_C(5) * 1000000, &err) != 0) {
        fail_msg("%s", err.msg);
    }
    const char *const wrong[] = {helper, "--root", "/elsewhere", NULL};
    assert_int_equal(agent_storage_drop_caches_argv(wrong, INT64_C(5) * 1000000, &err), -EIO);
    assert_non_null(strstr(err.msg, "got drop-caches|2|--root|/elsewhere"));
    const char *const relative[] = {"args", NULL};
    assert_int_equal(agent_storage_drop_caches_argv(relative, 1000000, &err), -EINVAL);
    assert_int_equal(agent_storage_drop_caches_argv(NULL, 1000000, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "needs an absolute path"));
    t_rmtree(dir);
}

// ---------------------------------------------------------------------------------------------
// agent_residency

// The walk: regular files counted, symlinks, fifos not followed, subdirectories entered.
static void test_residency_walk(void **state)
{
    (void) state;
    char dir[PATH_MAX], fifo[PATH_MAX];
    t_tmpdir(dir);
    size_t page = (size_t) sysconf(_SC_PAGESIZE);
    t_mkdir(dir, "sub");
    t_mkdir(dir, "sub/deeper");
    t_make_file(dir, "empty", 0);
    t_make_file(dir, "one", 1);
    t_make_file(dir, "page", page);
    t_make_file(dir, "odd", 10000);
    t_make_file(dir, "sub/three-and-a-bit", 3 * page + 5);
    t_make_file(dir, "sub/deeper/big", 64 * page);
    t_symlink(dir, "link-file", "odd");
    t_symlink(dir, "link-dir", "sub");
    t_symlink(dir, "link-out", "/etc");
    t_path(fifo, dir, "fifo");
    assert_int_equal(mkfifo(fifo, 0644), 0);
    int64_t total = (int64_t) (0 + 1 + page + 10000 + 3 * page + 5 + 64 * page);
    agent_residency_t r = {0};
    jf_err_t err = {0};
    assert_int_equal(agent_residency_measure(dir, 100, &r, &err), 0);
    assert_int_equal(r.files, 6);
    assert_int_equal(r.skipped, 4);
    assert_int_equal(r.total_bytes, total);
    assert_true(r.resident_bytes >= 0 && r.resident_bytes <= total);
    assert_int_equal(agent_residency_measure(dir, 6, &r, &err), 0); // exactly at the limit
    t_assert_err(agent_residency_measure(dir, 5, &r, &err), &err, -E2BIG, "more than 5 files");
    assert_int_equal(agent_residency_evict(dir, 100, &r, &err), 0);
    assert_int_equal(r.files, 6);
    assert_int_equal(r.total_bytes, total);
    assert_int_equal(r.resident_bytes, 0);
    t_rmtree(dir);
}

// Residency follows the page cache: all of a file after reading it, less after DONTNEED, and
// measuring does not bring anything back.
static void test_residency_values(void **state)
{
    (void) state;
    char dir[PATH_MAX], file[PATH_MAX];
    t_tmpdir(dir);
    if (t_is_ramfs(dir)) {
        t_rmtree(dir);
        print_message("'%s' is tmpfs, which keeps its pages: skipping\n", dir);
        skip();
    }
    size_t page = (size_t) sysconf(_SC_PAGESIZE);
    size_t size = 256 * page + 123;
    t_make_file(dir, "data", size);
    t_path(file, dir, "data");
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    assert_int_equal(close(fd), 0);
    agent_residency_t r = {0}, again = {0};
    double fraction = -1;
    jf_err_t err = {0};
    assert_int_equal(agent_residency_measure(dir, 10, &r, &err), 0);
    assert_int_equal(r.total_bytes, (int64_t) size);
    assert_true(r.resident_bytes < r.total_bytes);
    t_read_whole(file);
    assert_int_equal(agent_residency_measure(dir, 10, &r, &err), 0);
    assert_int_equal(r.resident_bytes, (int64_t) size); // the partial last page counts its tail
    assert_true(agent_residency_fraction(&r, &fraction));
    assert_float_equal(fraction, 1.0, 0.0);
    assert_int_equal(agent_residency_evict(dir, 10, &r, &err), 0);
    assert_int_equal(agent_residency_measure(dir, 10, &r, &err), 0);
    assert_true(r.resident_bytes < (int64_t) size);
    assert_int_equal(agent_residency_measure(dir, 10, &again, &err), 0);
    assert_int_equal(again.resident_bytes, r.resident_bytes); // mincore faulted nothing in
    assert_true(agent_residency_fraction(&r, &fraction));
    assert_true(fraction < 1.0);
    print_message("residency after DONTNEED: %.3f\n", fraction);
    t_rmtree(dir);
}

static void test_residency_errors(void **state)
{
    (void) state;
    char dir[PATH_MAX], path[PATH_MAX];
    t_tmpdir(dir);
    agent_residency_t r = {.files = -42};
    jf_err_t err = {0};
    double fraction = -1;
    assert_int_equal(agent_residency_measure(dir, 0, &r, &err), 0); // empty: no bytes at all
    assert_int_equal(r.files, 0);
    assert_false(agent_residency_fraction(&r, &fraction));
    assert_float_equal(fraction, -1, 0.0);
    r.files = -42;
    t_path(path, dir, "missing");
    t_assert_err(agent_residency_measure(path, 10, &r, &err), &err, -ENOENT, "/missing'");
    t_make_file(dir, "file", 10);
    t_path(path, dir, "file");
    t_assert_err(agent_residency_evict(path, 10, &r, &err), &err, -ENOTDIR, "/file'");
    t_assert_err(agent_residency_measure(dir, -1, &r, &err), &err, -EINVAL, "max_files -1");
    t_assert_err(agent_residency_measure(dir, AGENT_RESIDENCY_FILES_MAX + 1, &r, &err), &err,
                 -EINVAL, "is not in [0, ");
    assert_int_equal(r.files, -42);
    // Deeper than the walk goes.
    char rel[PATH_MAX] = "d";
    for (int i = 0; i <= AGENT_RESIDENCY_DEPTH_MAX; i++) {
        t_mkdir(dir, rel);
        size_t n = strlen(rel);
        (void) snprintf(rel + n, sizeof rel - n, "/d");
    }
    t_assert_err(agent_residency_measure(dir, 10, &r, &err), &err, -ELOOP, "deeper than 32");
    t_rmtree(dir);
}

int main(void)
{
    // Page-cache eviction cannot be seen on tmpfs: then temporary files go to the working
    // directory (the build tree). jft_tmpdir_new and _remove work under $TMPDIR.
    const char *tmp = getenv("TMPDIR");
    char cwd[PATH_MAX];
    if (t_is_ramfs(tmp && *tmp ? tmp : "/tmp") && getcwd(cwd, sizeof cwd)) {
        (void) setenv("TMPDIR", cwd, 1);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diskstats_fixtures),
        cmocka_unit_test(test_diskstats_lines),
        cmocka_unit_test(test_diskstats_reader),
        cmocka_unit_test(test_diskstats_new_errors),
        cmocka_unit_test(test_diskstats_real),
        cmocka_unit_test(test_diskstats_rate),
        cmocka_unit_test(test_diskstats_json),
        cmocka_unit_test(test_mount_fixtures),
        cmocka_unit_test(test_mount_texts),
        cmocka_unit_test(test_disk_rules),
        cmocka_unit_test(test_disk_sysfs),
        cmocka_unit_test(test_locate),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_locate_real),
        cmocka_unit_test(test_drop_caches),
        cmocka_unit_test(test_drop_caches_argv),
        cmocka_unit_test(test_residency_walk),
        cmocka_unit_test(test_residency_values),
        cmocka_unit_test(test_residency_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
