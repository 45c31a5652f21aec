/* Security tests of jetfleet-privhelper (issue #17 §2), with the test binary jft-privhelper-test
 * on a copy of tests/fixtures/privhelper/xavier-nx (power_tree.h): a stored slot edited after
 * clocks-store is refused with the value named, as a request with that value would be; a
 * directory on a write's path that is a symlink (to outside the tree) is refused with nothing
 * written anywhere; and the strict resolution itself through jf_privhelper, by openat2 and by
 * the openat walk used where the kernel lacks openat2. Prints forged_slots_refused=N/N,
 * symlinked_dirs_refused=N/N, files_written_outside=0 and the resolution table's counts. */
#include "jft_fs.h"
#include "power_tree.h"
#include "privhelper_plan.h"
#include "privhelper_root.h"
#include "privhelper_spawn.h"

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
#include <unistd.h>

#include <cmocka.h>

#define T_TIMEOUT_US (INT64_C(20) * 1000000)
#define CPU(n)       "sys/devices/system/cpu/cpu" #n
#define CPUFQ(n)     CPU(n) "/cpufreq/"
#define POLICY(n)    "sys/devices/system/cpu/cpufreq/policy" #n
#define GPU          "sys/devices/17000000.gv11b/devfreq/17000000.gv11b/"
#define STATE_DIR    "var/lib/jetfleet-privhelper"
#define STATE        STATE_DIR "/state-"

// Runs the helper on the tree with input on stdin.
static void t_run(const jft_power_tree_t *tree, const char *input, privhelper_spawn_result_t *r)
{
    static const char *const envp[] = {"PATH=/usr/bin:/bin", NULL};
    privhelper_spawn_opts_t o = {.argv = tree->argv,
                                 .envp = envp,
                                 .input = input,
                                 .input_len = strlen(input),
                                 .timeout_us = T_TIMEOUT_US};
    jf_err_t err = {0};
    assert_int_equal(privhelper_spawn_run(&o, r, &err), 0);
    assert_false(r->timed_out);
}

static bool t_one_line(const char *text)
{
    const char *nl = strchr(text, '\n');
    return nl && nl[1] == '\0' && nl != text;
}

// A refused request: exit 2, one line naming frag, and no entry of the whole mkdtemp directory
// (the tree and outside it) changed, mtimes included. Returns whether all of that held.
static bool t_refused(const jft_power_tree_t *tree, const char *request, const char *frag,
                      size_t *ret_changed)
{
    jft_power_snap_t *before = jft_power_snap(tree->top);
    privhelper_spawn_result_t r;
    t_run(tree, request, &r);
    jft_power_snap_t *after = jft_power_snap(tree->top);
    *ret_changed = jft_power_snap_diff(before, after, true, NULL, NULL);
    bool ok = r.exit_code == 2 && r.out[0] == '\0' && t_one_line(r.err) && strstr(r.err, frag) &&
              *ret_changed == 0;
    if (!ok) {
        print_error("'%.*s': exit %d, %zu changes, err '%s', want '%s'\n",
                    (int) strcspn(request, "\n"), request, r.exit_code, *ret_changed, r.err, frag);
    }
    free(after);
    free(before);
    return ok;
}

// ---------------------------------------------------------------------------------------------
// A stored slot edited after clocks-store: restore must check its values as a request's.

typedef struct t_forged {
    const char *word; // the line of state-1 that starts with this is replaced...
    const char *line; // ...by this one
    const char *frag; // the error names the value
} t_forged_t;

static const t_forged_t s_forged[] = {
    {"policy 0 ", "policy 0 1000 2000",
     "state 1: 1000 kHz is not in /" CPUFQ(0) "scaling_available_frequencies"},
    {"policy 0 ", "policy 0 1190400 2000",
     "state 1: 2000 kHz is not in /" CPUFQ(0) "scaling_available_frequencies"},
    {"policy 2 ", "policy 3 1190400 1190400", "state 1: cpu3 is not the first core"},
    {"gpu ", "gpu 1 2", "state 1: 1 Hz is not in /" GPU "available_frequencies"},
    {"gpu ", "gpu 114750000 2", "state 1: 2 Hz is not in /" GPU "available_frequencies"},
    {"emc-cap ", "emc-cap 7", "state 1: EMC cap 7 Hz is not an EMC rate of nvidia,tegra194"},
    {"emc-lock ", "emc-lock 1 7", "state 1: EMC rate 7 Hz is not an EMC rate of nvidia,tegra194"},
};
#define T_N_FORGED (sizeof s_forged / sizeof s_forged[0])

// Replaces the line of the slot file that starts with f->word.
static void t_forge(const jft_power_tree_t *tree, const t_forged_t *f)
{
    char *text = jft_power_read(tree, STATE "1");
    assert_non_null(text);
    char *at = strstr(text, f->word);
    assert_non_null(at);
    assert_true(at == text || at[-1] == '\n');
    char forged[PRIVHELPER_STATE_TEXT_MAX];
    int n = snprintf(forged, sizeof forged, "%.*s%s%s", (int) (at - text), text, f->line,
                     strchr(at, '\n'));
    assert_true(n > 0 && (size_t) n < sizeof forged);
    jft_power_write(tree, STATE "1", forged);
    free(text);
}

// Returns true if the forged slot was refused as required with nothing changed anywhere.
static bool t_forged_row(const t_forged_t *f)
{
    jft_power_tree_t tree;
    jft_power_tree_new(&tree);
    privhelper_spawn_result_t r;
    t_run(&tree, "clocks-store\n", &r);
    assert_string_equal(r.out, "ok state=1\n");
    t_forge(&tree, f);
    size_t changed = 0;
    bool ok = t_refused(&tree, "restore 1\n", f->frag, &changed);
    jft_power_tree_remove(&tree);
    return ok;
}

static void test_forged_slot(void **state)
{
    (void) state;
    size_t refused = 0;
    for (size_t i = 0; i < T_N_FORGED; i++) {
        refused += t_forged_row(&s_forged[i]);
    }
    printf("forged_slots_refused=%zu/%zu\n", refused, T_N_FORGED);
    assert_int_equal(refused, T_N_FORGED);
}

// ---------------------------------------------------------------------------------------------
// A directory on a write's path replaced by a symlink to a copy outside the tree: refused at
// plan time (exit 2), nothing written in the tree or outside it.

typedef struct t_linked {
    const char *dir;     // moved to top/outside and replaced by an absolute symlink to it
    const char *request; // a request that writes below dir
    const char *frag;    // the refusal names the path
} t_linked_t;

#define T_BENEATH "beneath the root without following a symbolic link"

static const t_linked_t s_linked[] = {
    {CPU(5), "cpu-online 5 0\n", CPU(5) "/online' " T_BENEATH},
    {POLICY(4), "cpu-freq 4 1190400\n", POLICY(4) "/scaling_m"},
    {CPU(3) "/cpuidle", "dvfs off\n", CPU(3) "/cpuidle/state0/disable' " T_BENEATH},
    {"sys/devices/17000000.gv11b", "gpu-freq 114750000\n", GPU "m"},
    {"sys/kernel", "emc-freq 1600000000\n", "sys/kernel/nvpmodel_emc_cap/emc_iso_cap' " T_BENEATH},
    {"sys", "cpu-online 1 0\n", CPU(1) "/online' " T_BENEATH},
    {"proc/sys", "drop-caches\n", "proc/sys/vm/drop_caches' " T_BENEATH},
    {STATE_DIR, "clocks-store\n", "state directory /" STATE_DIR ": Too many levels of symbolic"},
    {"var/lib", "clocks-store\n", "state directory /" STATE_DIR ": Too many levels of symbolic"},
};
#define T_N_LINKED (sizeof s_linked / sizeof s_linked[0])

static void t_link_out(const jft_power_tree_t *tree, const char *dir, size_t i)
{
    char inside[PATH_MAX], outside[PATH_MAX];
    jft_power_path(inside, "%s/%s", tree->root, dir);
    jft_power_path(outside, "%s/outside/moved-%zu", tree->top, i);
    assert_int_equal(rename(inside, outside), 0);
    assert_int_equal(symlink(outside, inside), 0);
}

static void test_symlinked_directory(void **state)
{
    (void) state;
    size_t refused = 0, outside = 0;
    for (size_t i = 0; i < T_N_LINKED; i++) {
        jft_power_tree_t tree;
        jft_power_tree_new(&tree);
        t_link_out(&tree, s_linked[i].dir, i);
        size_t changed = 0;
        refused += t_refused(&tree, s_linked[i].request, s_linked[i].frag, &changed);
        outside += changed;
        jft_power_tree_remove(&tree);
    }
    printf("symlinked_dirs_refused=%zu/%zu files_written_outside=%zu\n", refused, T_N_LINKED,
           outside);
    assert_int_equal(refused, T_N_LINKED);
    assert_int_equal(outside, 0);
}

// ---------------------------------------------------------------------------------------------
// privhelper_root_write_i64 on a small tree, by openat2 and by the openat walk.

typedef struct t_resolve {
    const char *rel;
    int rc;
} t_resolve_t;

static const t_resolve_t s_resolve[] = {
    {"a/b/file", 0},
    {"a/abs/file", -ELOOP},      // a -> top/outside, absolute
    {"a/up/file", -ELOOP},       // a/up -> ../../outside, relative
    {"a/inside/file", -ELOOP},   // a/inside -> b: a symlink that stays in the tree is refused too
    {"a/flink", -ELOOP},         // the file itself a symlink to outside/file
    {"a/../a/b/file", -EXDEV},   // ".." refused even when it stays beneath
    {"../outside/file", -EXDEV}, // out of the root
    {"/tmp/file", -EXDEV},       // absolute
    {"a//b/file", -EXDEV},       // an empty component
    {"a/./b/file", -EXDEV},      // "."
    {"a/b/missing", -ENOENT},    // never created
    {"a/b", -EISDIR},            // a directory, not a file
};
#define T_N_RESOLVE (sizeof s_resolve / sizeof s_resolve[0])

static void t_make_small_tree(const char *top)
{
    char p[PATH_MAX];
    static const char *const dirs[] = {"root", "root/a", "root/a/b", "outside"};
    for (size_t i = 0; i < 4; i++) {
        jft_power_path(p, "%s/%s", top, dirs[i]);
        assert_int_equal(mkdir(p, 0755), 0);
    }
    jft_power_path(p, "%s/root/a/b/file", top);
    assert_int_equal(jft_write_file(p, "1\n"), 0);
    jft_power_path(p, "%s/outside/file", top);
    assert_int_equal(jft_write_file(p, "1\n"), 0);
    char target[PATH_MAX];
    jft_power_path(target, "%s/outside", top);
    jft_power_path(p, "%s/root/a/abs", top);
    assert_int_equal(symlink(target, p), 0);
    jft_power_path(p, "%s/root/a/up", top);
    assert_int_equal(symlink("../../outside", p), 0);
    jft_power_path(p, "%s/root/a/inside", top);
    assert_int_equal(symlink("b", p), 0);
    jft_power_path(p, "%s/root/a/flink", top);
    assert_int_equal(symlink("../../outside/file", p), 0);
}

// Runs the table with one way of resolving; returns the rows that came out as required.
static size_t t_resolve_table(const char *top, bool walk_only)
{
    char dir[PATH_MAX];
    jft_power_path(dir, "%s/root", top);
    jf_err_t err = {0};
    privhelper_root_t *root = privhelper_root_open(dir, &err);
    assert_non_null(root);
    privhelper_root_set_walk_only(root, walk_only);
    size_t ok = 0;
    for (size_t i = 0; i < T_N_RESOLVE; i++) {
        memset(&err, 0, sizeof err);
        int rc = privhelper_root_write_i64(root, s_resolve[i].rel, 7, &err);
        int checked = privhelper_root_check_write(root, s_resolve[i].rel, NULL);
        bool named = rc == 0 || strstr(err.msg, s_resolve[i].rel) != NULL;
        // A directory fails the write open with EISDIR, the O_PATH check with EINVAL.
        bool same = checked == rc || (rc == -EISDIR && checked == -EINVAL);
        if (rc == s_resolve[i].rc && named && same) {
            ok++;
        } else {
            print_error("%s '%s': rc %d (check %d) '%s', want %d\n", walk_only ? "walk" : "openat2",
                        s_resolve[i].rel, rc, checked, err.msg, s_resolve[i].rc);
        }
    }
    privhelper_root_destroy(&root);
    return ok;
}

static void test_resolution(void **state)
{
    (void) state;
    char top[PATH_MAX], p[PATH_MAX];
    assert_int_equal(jft_tmpdir_new(top), 0);
    t_make_small_tree(top);
    size_t by_openat2 = t_resolve_table(top, false);
    size_t by_walk = t_resolve_table(top, true);
    jft_power_path(p, "%s/outside/file", top);
    char *outside = jft_read_file(p, NULL);
    jft_power_path(p, "%s/root/a/b/file", top);
    char *inside = jft_read_file(p, NULL);
    printf("resolution_rows_openat2=%zu/%zu resolution_rows_walk=%zu/%zu outside_file='%.1s'\n",
           by_openat2, T_N_RESOLVE, by_walk, T_N_RESOLVE, outside ? outside : "?");
    assert_int_equal(by_openat2, T_N_RESOLVE);
    assert_int_equal(by_walk, T_N_RESOLVE);
    assert_string_equal(outside, "1\n");
    assert_string_equal(inside, "7\n");
    free(outside);
    free(inside);
    jft_tmpdir_remove(top);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forged_slot),
        cmocka_unit_test(test_symlinked_directory),
        cmocka_unit_test(test_resolution),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
