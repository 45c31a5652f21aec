/* Unit tests for the storage layer of the agent: agent_storage (mounts from mountinfo fixtures of
 * Jetsons and a container host, whole-disk names from a temporary sysfs tree and by rule, the
 * dataset-on-its-medium check, the drop-caches helper with stand-in scripts) and agent_residency
 * (real files in a temporary directory on a filesystem with a page cache). agent_diskstats is
 * diskstats_test.c. */
#include "agent_residency.h"
#include "agent_storage.h"
#include "jf_fs.h"
#include "jf_units.h"
#include "jft_check.h"
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
#define T_HELPER_WAIT_US (INT64_C(10) * 1000000)

// ---------------------------------------------------------------------------------------------
// Helpers

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

static void t_mkdir(const char *dir, const char *rel)
{
    char p[PATH_MAX];
    jft_path(p, dir, rel);
    assert_int_equal(jf_fs_mkdir_p(p, 0755, NULL), 0);
}

static void t_symlink(const char *dir, const char *rel, const char *target)
{
    char p[PATH_MAX];
    jft_path(p, dir, rel);
    assert_int_equal(symlink(target, p), 0);
}

// A file of size bytes, written and fsynced, so that its pages are clean and can be evicted.
static void t_make_file(const char *dir, const char *rel, size_t size)
{
    char p[PATH_MAX];
    jft_path(p, dir, rel);
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
        char rel[PATH_MAX];
        jft_path(rel, "proc", r->fixture);
        char *text = jft_fixture_text(rel);
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
    jft_write_at(root, "devices/platform/3460000.sdhci/block/mmcblk0/mmcblk0p1/partition", "1\n");
    jft_write_at(root, "devices/platform/nvme/block/nvme0n1/nvme0n1p1/partition", "1\n");
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
    jft_path(lab->proc, lab->dir, "proc");
    jft_path(lab->sysfs, lab->dir, "sys");
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
    jft_write_at(lab->proc, "self/mountinfo", text);
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
    jft_path(path, lab.dir, "nvme/ds");
    jft_path(want, lab.dir, "nvme");
    assert_int_equal(agent_storage_locate(&lab.roots, path, &m, &err), 0);
    assert_string_equal(m.mount_point, want);
    assert_string_equal(m.disk, "nvme0n1");
    jft_path(path, lab.dir, "link"); // resolved before the lookup
    assert_int_equal(agent_storage_locate(&lab.roots, path, &m, &err), 0);
    assert_string_equal(m.mount_point, want);
    jft_path(path, lab.dir, "plain/ds");
    assert_int_equal(agent_storage_locate(&lab.roots, path, &m, &err), 0);
    assert_string_equal(m.mount_point, "/");
    assert_string_equal(m.disk, "mmcblk0");
    jft_path(path, lab.dir, "missing");
    jft_expect_err(agent_storage_locate(&lab.roots, path, &m, &err), &err, -ENOENT, "/missing'");
    agent_storage_roots_t no_proc = {.proc_root = lab.sysfs, .sysfs_root = lab.sysfs};
    jft_path(path, lab.dir, "nvme/ds");
    jft_expect_err(agent_storage_locate(&no_proc, path, &m, &err), &err, -ENOENT,
                 "/sys/self/mountinfo: cannot open");
    jft_write_at(lab.proc, "self/mountinfo", "1 0 8:1 / / rw\n");
    jft_expect_err(agent_storage_locate(&lab.roots, path, &m, &err), &err, -EINVAL, "mountinfo:1:");
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
        jft_path(ds, lab.dir, r->dataset);
        bool absolute = r->mount[0] == '/'; // else under the lab directory
        jft_path(mount, absolute ? "" : lab.dir, absolute ? r->mount + 1 : r->mount);
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
    jft_path(p, dir, name);
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
        jft_path(helper, dir, r->name);
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
    jft_path(helper, dir, "args");
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
    jft_path(fifo, dir, "fifo");
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
    jft_expect_err(agent_residency_measure(dir, 5, &r, &err), &err, -E2BIG, "more than 5 files");
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
    jft_path(file, dir, "data");
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
    jft_path(path, dir, "missing");
    jft_expect_err(agent_residency_measure(path, 10, &r, &err), &err, -ENOENT, "/missing'");
    t_make_file(dir, "file", 10);
    jft_path(path, dir, "file");
    jft_expect_err(agent_residency_evict(path, 10, &r, &err), &err, -ENOTDIR, "/file'");
    jft_expect_err(agent_residency_measure(dir, -1, &r, &err), &err, -EINVAL, "max_files -1");
    jft_expect_err(agent_residency_measure(dir, AGENT_RESIDENCY_FILES_MAX + 1, &r, &err), &err,
                 -EINVAL, "is not in [0, ");
    assert_int_equal(r.files, -42);
    // Deeper than the walk goes.
    char rel[PATH_MAX] = "d";
    for (int i = 0; i <= AGENT_RESIDENCY_DEPTH_MAX; i++) {
        t_mkdir(dir, rel);
        size_t n = strlen(rel);
        (void) snprintf(rel + n, sizeof rel - n, "/d");
    }
    jft_expect_err(agent_residency_measure(dir, 10, &r, &err), &err, -ELOOP, "deeper than 32");
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
