/* Test support for the helper and power tests: a copy of tests/fixtures/privhelper/xavier-nx in
 * a mkdtemp directory (top/root, plus etc/nvpmodel.conf from tests/fixtures/nvpmodel/) beside a
 * victim file top/outside/victim, and the command line that runs the real helper on it with the
 * fake nvpmodel; snapshots of a tree to tell which files a run changed. Failures are cmocka
 * assertions. */
#ifndef JFT_POWER_TREE_H
#define JFT_POWER_TREE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct jft_power_tree {
    char top[PATH_MAX];    // the mkdtemp directory
    char root[PATH_MAX];   // top/root: the fixture copy, the helper's --root
    char sys[PATH_MAX];    // top/root/sys: agent_power's sysfs root
    char conf[PATH_MAX];   // top/root/etc/nvpmodel.conf
    char victim[PATH_MAX]; // top/outside/victim, holding "1\n"
    char helper[PATH_MAX]; // $JF_BIN_DIR/jft-privhelper-test
    char fake[PATH_MAX];   // $JF_BIN_DIR/jft-fake-nvpmodel
    char uid[16];          // getuid(), for --allow-uid
    const char *argv[8];   // helper --root ROOT --nvpmodel FAKE --allow-uid UID, NULL (borrowed)
} jft_power_tree_t;

// Makes a fresh tree.
void jft_power_tree_new(jft_power_tree_t *tree);

// Removes it.
void jft_power_tree_remove(jft_power_tree_t *tree);

// snprintf into a PATH_MAX buffer; fails the test if it does not fit.
void jft_power_path(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// The content of root/rel (caller frees), or NULL if it cannot be read.
char *jft_power_read(const jft_power_tree_t *tree, const char *rel);

// Writes text to root/rel (created if needed).
void jft_power_write(const jft_power_tree_t *tree, const char *rel, const char *text);

// A hash of the names and contents of every file below root, leaving out the subtree skip
// (relative to root; NULL: nothing left out).
uint64_t jft_power_tree_hash(const jft_power_tree_t *tree, const char *skip);

#define JFT_POWER_ENTRIES_MAX 1024 // entries of one snapshot
#define JFT_POWER_REL_MAX     200  // longest relative path in a snapshot
#define JFT_POWER_TEXT_MAX    64   // bytes of a file kept for content checks
#define JFT_POWER_FNV_SEED    UINT64_C(14695981039346656037)

// One entry of a snapshot: type, mode, mtime and content hash of a file, directory or symlink.
typedef struct jft_power_entry {
    char rel[JFT_POWER_REL_MAX];
    mode_t mode;
    int64_t mtime_ns;
    off_t size;
    uint64_t hash;                 // FNV-1a of the content, or of a symlink's target
    char text[JFT_POWER_TEXT_MAX]; // the content's first bytes, NUL-terminated
} jft_power_entry_t;

// Every entry below a directory, with paths relative to it.
typedef struct jft_power_snap {
    size_t n;
    jft_power_entry_t e[JFT_POWER_ENTRIES_MAX];
} jft_power_snap_t;

// FNV-1a of n bytes continuing from h (JFT_POWER_FNV_SEED to start).
uint64_t jft_power_fnv(uint64_t h, const char *p, size_t n);

// A snapshot of every entry below dir. Caller frees it with free().
jft_power_snap_t *jft_power_snap(const char *dir);

// The entry for rel, or NULL.
const jft_power_entry_t *jft_power_snap_find(const jft_power_snap_t *s, const char *rel);

// Calls fn (may be NULL) for every path added, removed or changed between a and b (with
// with_mtime, also files rewritten with the same content; a directory's own size and mtime never
// count). Returns the count.
size_t jft_power_snap_diff(const jft_power_snap_t *a, const jft_power_snap_t *b, bool with_mtime,
                           void (*fn)(const char *rel, void *arg), void *arg);

#endif
