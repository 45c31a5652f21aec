/* Which storage medium holds a dataset: the mount of a path from /proc/self/mountinfo (proc(5)),
 * its source device and the whole disk that /proc/diskstats lists, and the check that a dataset
 * sits on its medium's configured mount (docs/fleet-yaml.md `storage`). Also the page-cache drop
 * through the privileged helper (jetson-platforms.md §9). Not for reading disk counters
 * (agent_diskstats.h) or page-cache residency (agent_residency.h). */
#ifndef AGENT_STORAGE_H
#define AGENT_STORAGE_H

#include "jf_err.h"

#include <limits.h>
#include <stdint.h>

#define AGENT_STORAGE_DISK_MAX            31 // kernel DISK_NAME_LEN (32) without the NUL
#define AGENT_STORAGE_FSTYPE_MAX          63
#define AGENT_STORAGE_MOUNTINFO_MAX_BYTES (4 * 1024 * 1024) // container hosts list thousands
#define AGENT_STORAGE_HELPER_OUTPUT_MAX   200 // bytes of the helper's output kept for messages
#define AGENT_STORAGE_DROP_TIMEOUT_US     (INT64_C(120) * 1000000) // sync can take a while on SD
#define AGENT_STORAGE_DROP_REQUEST        "drop-caches\n"

// Where the kernel's tables are read from; tests point these at fixture or temporary trees.
typedef struct agent_storage_roots {
    const char *proc_root;  // "/proc": <proc_root>/self/mountinfo
    const char *sysfs_root; // "/sys": <sysfs_root>/dev/block/MAJ:MIN
} agent_storage_roots_t;

// One mount, as mountinfo lists it (octal escapes such as \040 decoded), and its disk.
typedef struct agent_storage_mount {
    char mount_point[PATH_MAX];                // where it is mounted: "/mnt/nvme"
    char source[PATH_MAX];                     // mount source: "/dev/nvme0n1p1", "overlay", "tmpfs"
    char fstype[AGENT_STORAGE_FSTYPE_MAX + 1]; // "ext4", "tmpfs", "overlay", ...
    unsigned major;                        // st_dev major of the filesystem (0: no block device)
    unsigned minor;                        // st_dev minor
    char disk[AGENT_STORAGE_DISK_MAX + 1]; // whole disk for /proc/diskstats ("nvme0n1"); ""
                                           // when the filesystem is on no block device
} agent_storage_mount_t;

// A storage medium as fleet.yaml configures it; both strings are borrowed for the call.
typedef struct agent_storage_medium {
    const char *name;  // medium name: "nvme", "sd", "emmc", "usb-hdd"
    const char *mount; // its configured mount point (fleet.yaml `mount`), absolute
} agent_storage_medium_t;

// Finds the mount holding path (absolute and already resolved: no symlinks, no "." or "..") in
// mountinfo text: the longest mount point that is path or a directory prefix of it; among equal
// mount points the last listed wins (it is mounted on top). Fills every field but disk. Returns
// 0; -ENOENT when no mount holds path; -EINVAL for a malformed line of the text
// ("mountinfo:7: ...") or a relative path.
int agent_storage_find_mount(const char *mountinfo, const char *path,
                             agent_storage_mount_t *ret_mount, jf_err_t *err);

// The whole-disk name of a mount's device into ret_disk (AGENT_STORAGE_DISK_MAX + 1 bytes): from
// <sysfs_root>/dev/block/MAJ:MIN (a partition has a `partition` file and its disk is the parent
// directory), else by the kernel's naming rule from the source's basename (nvme0n1p1 -> nvme0n1,
// mmcblk0p1 -> mmcblk0, sda1 -> sda). "" for a filesystem on no block device (tmpfs, overlay,
// nfs). Returns 0; -ENODEV when sysfs has no node for the device and no rule knows its name
// ("/dev/root" without sysfs); -EINVAL when the name found does not fit.
int agent_storage_disk_name(const char *sysfs_root, const agent_storage_mount_t *mount,
                            char *ret_disk, jf_err_t *err);

// Resolves path (realpath: it must exist) and finds its mount from <proc_root>/self/mountinfo,
// disk included. Returns 0; -ENOENT when path or the table does not exist; -EINVAL for a
// malformed table; -EFBIG past AGENT_STORAGE_MOUNTINFO_MAX_BYTES; another negative errno when
// reading fails. err names path or the file.
int agent_storage_locate(const agent_storage_roots_t *roots, const char *path,
                         agent_storage_mount_t *ret_mount, jf_err_t *err);

// Confirms that dataset_dir lives on medium's configured mount: the mount holding dataset_dir
// must be medium->mount itself (both resolved). Fills *ret_mount with the dataset's mount on
// success. Returns 0; -EXDEV when the dataset is on another mount, with err saying both, e.g.
// "dataset '/mnt/nvme/x' is on /dev/mmcblk0p1 mounted at /, but medium 'nvme' is configured at
// /mnt/nvme, which is not a mount point"; or an error of agent_storage_locate.
int agent_storage_check(const agent_storage_roots_t *roots, const char *dataset_dir,
                        const agent_storage_medium_t *medium, agent_storage_mount_t *ret_mount,
                        jf_err_t *err);

// Drops the page cache through the privileged helper (reliability-security.md §2.3): spawns
// helper_path with argv {helper_path, NULL}, a cleared environment and its own process group,
// writes AGENT_STORAGE_DROP_REQUEST on its stdin and waits for it to exit, up to timeout_us
// (AGENT_STORAGE_DROP_TIMEOUT_US is a good value). Blocks the caller meanwhile: call it before a
// run starts, not from a loop that must stay responsive. Returns 0 when the helper exits 0;
// -ENOENT/-EACCES when it cannot be started; -EIO when it exits non-zero or dies by a signal (err
// quotes the start of its stdout and stderr); -ETIMEDOUT when it runs past the timeout (it is
// killed).
int agent_storage_drop_caches_via(const char *helper_path, int64_t timeout_us, jf_err_t *err);

// The same with a whole command line: argv[0] is the program's absolute path, the rest its
// arguments (NULL-terminated; {"/usr/bin/sudo", "-n", "/usr/local/libexec/jetfleet-privhelper"}
// on a board), so that the helper can run through sudo. -EINVAL for an empty or relative argv.
int agent_storage_drop_caches_argv(const char *const *argv, int64_t timeout_us, jf_err_t *err);

#endif
