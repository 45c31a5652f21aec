/* Tests of jetfleet-privhelper: the real binary ($JF_BIN_DIR) with --root on a copy of
 * tests/fixtures/privhelper/xavier-nx in a mkdtemp directory and the fake nvpmodel
 * (nvpmodel_fake.c). reliability-security.md §7 #8: each valid request must change exactly the
 * files it names, and each invalid one must exit 2 with one line on stderr and leave every file
 * of the tree (content and mtime) and outside it untouched. Prints
 * valid_applied=N/N invalid_applied=0/M files_written_outside_fixture=0. Also the request
 * formatter and the saved-state text through jf_privhelper directly. */
#include "jft_fs.h"
#include "power_tree.h"
#include "privhelper_plan.h"
#include "privhelper_request.h"
#include "privhelper_spawn.h"
#include "privhelper_state.h"

#include <dirent.h>
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

#define T_TIMEOUT_US  (INT64_C(20) * 1000000)
#define T_CHANGES_MAX 20

#define T_ANY    "<any content>"
#define CPU(n)   "sys/devices/system/cpu/cpu" #n
#define FQ(n)    "sys/devices/system/cpu/cpufreq/policy" #n "/" // cpuN/cpufreq links here
#define IDLE(n)  CPU(n) "/cpuidle/state"
#define GPU      "sys/devices/17000000.gv11b/devfreq/17000000.gv11b/"
#define EMC      "sys/kernel/debug/bpmp/debug/clk/emc/"
#define CAP      "sys/kernel/nvpmodel_emc_cap/emc_iso_cap"
#define STATE    "var/lib/jetfleet-privhelper/state-"
#define CALLS    "var/lib/nvpmodel/fake-calls"
#define STATUS   "var/lib/nvpmodel/status"
#define RAILGATE "sys/devices/gpu.0/railgate_enable"

// ---------------------------------------------------------------------------------------------
// Running the helper on a tree (power_tree.h).

static void t_run(const jft_power_tree_t *tree, const char *input, size_t len, bool socket,
                  bool wrong_uid, const char *const *extra, privhelper_spawn_result_t *r)
{
    char other_uid[16];
    (void) snprintf(other_uid, sizeof other_uid, "%u", (unsigned) getuid() + 4242);
    const char *argv[16] = {tree->helper,
                            "--root",
                            tree->root,
                            "--nvpmodel",
                            tree->fake,
                            "--allow-uid",
                            wrong_uid ? other_uid : tree->uid};
    size_t n = 7;
    for (size_t i = 0; extra && extra[i] && n < 15; i++) {
        argv[n++] = extra[i];
    }
    static const char *const envp[] = {"PATH=/usr/bin:/bin", NULL};
    privhelper_spawn_opts_t o = {.argv = argv,
                                 .envp = envp,
                                 .input = input,
                                 .input_len = len,
                                 .input_socket = socket,
                                 .timeout_us = T_TIMEOUT_US};
    jf_err_t err = {0};
    assert_int_equal(privhelper_spawn_run(&o, r, &err), 0);
    assert_false(r->timed_out);
}

static void t_pre(const jft_power_tree_t *tree, const char *const *pre)
{
    for (size_t i = 0; pre[i]; i++) {
        privhelper_spawn_result_t r;
        t_run(tree, pre[i], strlen(pre[i]), false, false, NULL, &r);
        if (r.exit_code != 0) {
            fail_msg("setup request '%s' failed: %s", pre[i], r.err);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Valid requests: the files whose content must change, relative to the root.

typedef struct t_change {
    const char *rel;
    const char *content; // T_ANY: exists with any content; NULL: removed
} t_change_t;

typedef struct t_valid {
    const char *pre[6]; // NULL-terminated
    const char *request;
    bool socket;
    const char *reply;
    bool back_to_start; // every file holds what the fixture holds, the state slots are gone
    const char *calls;  // back_to_start: what the fake nvpmodel's call log holds (NULL: empty)
    t_change_t changes[T_CHANGES_MAX];
} t_valid_t;

static const t_valid_t s_valid[] = {
    {.request = "nvpmodel 0\n",
     .reply = "ok",
     .changes = {{CPU(2) "/online", "0\n"},
                 {CPU(3) "/online", "0\n"},
                 {CPU(4) "/online", "0\n"},
                 {CPU(5) "/online", "0\n"},
                 {FQ(0) "scaling_max_freq", "1907200\n"},
                 {STATUS, "pmode:0000 fmode:quiet\n"},
                 {CALLS, "-m 0\n"}}},
    {.request = "nvpmodel 8\n",
     .reply = "ok",
     .changes = {{CAP, "1866000000\n"}, {STATUS, "pmode:0008 fmode:quiet\n"}, {CALLS, "-m 8\n"}}},
    {.request = "cpu-online 5 0\n", .reply = "ok", .changes = {{CPU(5) "/online", "0\n"}}},
    {.pre = {"cpu-online 1 0\n"},
     .request = "cpu-online 1 1\n",
     .reply = "ok",
     .changes = {{CPU(1) "/online", "1\n"}}},
    {.request = "cpu-freq 0 1190400\n",
     .reply = "ok",
     .changes = {{FQ(0) "scaling_max_freq", "1190400\n"}}},
    {.request = "cpu-freq 2 1907200\n",
     .reply = "ok",
     .changes = {{FQ(2) "scaling_min_freq", "1907200\n"}, {FQ(2) "scaling_max_freq", "1907200\n"}}},
    {.request = "cpu-freq 4 115200\n",
     .reply = "ok",
     .changes = {{FQ(4) "scaling_min_freq", "115200\n"}, {FQ(4) "scaling_max_freq", "115200\n"}}},
    {.request = "gpu-freq 510000000\n",
     .reply = "ok",
     .changes = {{GPU "min_freq", "510000000\n"}, {GPU "max_freq", "510000000\n"}}},
    {.request = "emc-freq 1866000000\n",
     .reply = "ok emc=locked",
     .changes = {{CAP, "1866000000\n"},
                 {EMC "mrq_rate_locked", "1\n"},
                 {EMC "rate", "1866000000\n"}}},
    {.request = "dvfs off\n",
     .reply = "ok emc=locked",
     .changes = {{FQ(0) "scaling_min_freq", "1420800\n"},
                 {FQ(2) "scaling_min_freq", "1420800\n"},
                 {FQ(4) "scaling_min_freq", "1420800\n"},
                 {GPU "min_freq", "1109250000\n"},
                 {RAILGATE, "0\n"},
                 {IDLE(0) "0/disable", "1\n"},
                 {IDLE(0) "1/disable", "1\n"},
                 {IDLE(1) "0/disable", "1\n"},
                 {IDLE(1) "1/disable", "1\n"},
                 {IDLE(2) "0/disable", "1\n"},
                 {IDLE(2) "1/disable", "1\n"},
                 {IDLE(3) "0/disable", "1\n"},
                 {IDLE(3) "1/disable", "1\n"},
                 {IDLE(4) "0/disable", "1\n"},
                 {IDLE(4) "1/disable", "1\n"},
                 {IDLE(5) "0/disable", "1\n"},
                 {IDLE(5) "1/disable", "1\n"},
                 {EMC "mrq_rate_locked", "1\n"},
                 {STATE "0", T_ANY}}},
    {.request = "clocks-store\n", .reply = "ok state=1", .changes = {{STATE "1", T_ANY}}},
    {.request = "drop-caches\n", .reply = "ok", .changes = {{"proc/sys/vm/drop_caches", "3\n"}}},
    {.pre = {"clocks-store\n", "cpu-freq 0 115200\n", "cpu-online 5 0\n", "gpu-freq 204000000\n",
             "emc-freq 2133000000\n"},
     .request = "restore 1\n",
     .reply = "ok",
     .back_to_start = true,
     .calls = "-m 2\n", // the mode in force at clocks-store, re-set first
     .changes = {{FQ(0) "scaling_min_freq", "1190400\n"},
                 {FQ(0) "scaling_max_freq", "1420800\n"},
                 {CPU(5) "/online", "1\n"},
                 {GPU "min_freq", "114750000\n"},
                 {GPU "max_freq", "1109250000\n"},
                 {CAP, "1600000000\n"},
                 {EMC "mrq_rate_locked", "0\n"},
                 {EMC "rate", "1600000000\n"},
                 {STATE "1", NULL}}},
    {.pre = {"dvfs off\n"},
     .request = "dvfs restore\n",
     .reply = "ok",
     .back_to_start = true,
     .calls = "-m 2\n"},
    // Restore puts nvpmodel's mode back: status names mode 2 again, as in the fixture.
    {.pre = {"clocks-store\n", "nvpmodel 0\n", "cpu-freq 0 1190400\n"},
     .request = "restore 1\n",
     .reply = "ok",
     .back_to_start = true,
     .calls = "-m 0\n-m 2\n"},
    {.request = "cpu-online 2 0\n",
     .socket = true,
     .reply = "ok",
     .changes = {{CPU(2) "/online", "0\n"}}},
    // A second dvfs off pins again and keeps the state saved by the first.
    {.pre = {"dvfs off\n", "dvfs off\n"},
     .request = "dvfs restore\n",
     .reply = "ok",
     .back_to_start = true,
     .calls = "-m 2\n"},
};

#define T_N_VALID (sizeof s_valid / sizeof s_valid[0])

typedef struct t_collect {
    char paths[T_CHANGES_MAX * 2][JFT_POWER_REL_MAX];
    size_t n;
} t_collect_t;

static void t_collect(const char *rel, void *arg)
{
    t_collect_t *c = arg;
    if (c->n < T_CHANGES_MAX * 2) {
        (void) snprintf(c->paths[c->n++], JFT_POWER_REL_MAX, "%s", rel);
    }
}

static bool t_changes_ok(const t_valid_t *v, const jft_power_snap_t *after, const t_collect_t *got)
{
    size_t want = 0;
    for (; want < T_CHANGES_MAX && v->changes[want].rel; want++) {
        char rel[JFT_POWER_REL_MAX];
        (void) snprintf(rel, sizeof rel, "root/%s", v->changes[want].rel);
        const jft_power_entry_t *e = jft_power_snap_find(after, rel);
        const char *c = v->changes[want].content;
        bool ok = c ? e && (strcmp(c, T_ANY) == 0 || strcmp(e->text, c) == 0) : !e;
        if (!ok) {
            print_error("  %s: got '%s', want '%s'\n", rel, e ? e->text : "(none)",
                        c ? c : "(removed)");
            return false;
        }
    }
    if (got->n != want) {
        for (size_t i = 0; i < got->n; i++) {
            print_error("  changed: %s\n", got->paths[i]);
        }
        return false;
    }
    return true;
}

// back_to_start: every file below the root as at the start, but the fake nvpmodel's call log,
// which must hold v->calls.
static bool t_back_to_start(const t_valid_t *v, const jft_power_snap_t *start,
                            const jft_power_snap_t *after)
{
    t_collect_t *got = calloc(1, sizeof *got);
    assert_non_null(got);
    (void) jft_power_snap_diff(start, after, false, t_collect, got);
    const jft_power_entry_t *calls = jft_power_snap_find(after, "root/" CALLS);
    bool ok = calls && strcmp(calls->text, v->calls ? v->calls : "") == 0;
    for (size_t i = 0; i < got->n; i++) {
        if (strcmp(got->paths[i], "root/" CALLS) != 0) {
            ok = false;
            print_error("  changed since the start: %s\n", got->paths[i]);
        }
    }
    if (!ok) {
        print_error("  nvpmodel calls '%s', want '%s'\n", calls ? calls->text : "(none)",
                    v->calls ? v->calls : "");
    }
    free(got);
    return ok;
}

// Returns true if the row passed; adds to *outside the changes outside the root.
static bool t_valid_row(const t_valid_t *v, size_t *outside)
{
    jft_power_tree_t tree;
    jft_power_tree_new(&tree);
    jft_power_snap_t *start = jft_power_snap(tree.top);
    t_pre(&tree, v->pre);
    jft_power_snap_t *before = jft_power_snap(tree.top);
    privhelper_spawn_result_t r;
    t_run(&tree, v->request, strlen(v->request), v->socket, false, NULL, &r);
    jft_power_snap_t *after = jft_power_snap(tree.top);
    t_collect_t *got = calloc(1, sizeof *got);
    assert_non_null(got);
    (void) jft_power_snap_diff(before, after, false, t_collect, got);
    for (size_t i = 0; i < got->n; i++) {
        *outside += strncmp(got->paths[i], "root/", 5) != 0;
    }
    size_t reply_len = strlen(v->reply);
    bool ok = r.exit_code == 0 && r.err[0] == '\0' && strncmp(r.out, v->reply, reply_len) == 0 &&
              strcmp(r.out + reply_len, "\n") == 0;
    ok = ok && (v->back_to_start ? t_back_to_start(v, start, after) : t_changes_ok(v, after, got));
    if (!ok) {
        print_error("valid '%.*s': exit %d out '%s' err '%s'\n", (int) strcspn(v->request, "\n"),
                    v->request, r.exit_code, r.out, r.err);
    }
    free(got);
    free(after);
    free(before);
    free(start);
    jft_power_tree_remove(&tree);
    return ok;
}

// ---------------------------------------------------------------------------------------------
// Invalid requests: exit 2, one line on stderr with frag, no change anywhere (mtimes included).

#define R(s, f) .input = s, .len = sizeof(s) - 1, .frag = f // sizeof keeps NUL bytes
#define A10     "aaaaaaaaaa"
#define A100    A10 A10 A10 A10 A10 A10 A10 A10 A10 A10
#define Z10     "0000000000"
#define Z100    Z10 Z10 Z10 Z10 Z10 Z10 Z10 Z10 Z10 Z10

typedef struct t_invalid {
    const char *input;
    size_t len;
    const char *frag;
    const char *pre[2];
    bool socket;
    bool wrong_uid;
    bool symlink;        // cpu4/online is a symlink to outside/victim
    const char *args[3]; // extra options
    const char *status;  // written to nvpmodel's status file before pre (NULL: the fixture's)
} t_invalid_t;

static const t_invalid_t s_invalid[] = {
    // Framing and bytes
    {R("", "empty request")},
    {R("\n", "empty request")},
    {R(A100 A100 A100, "request longer than 256 bytes")},
    {R("nvpmodel " Z100 Z100 Z10 Z10 Z10 Z10 "0000000\n", "request longer than 256 bytes")},
    {R("nvpmodel 2\0\n", "NUL byte at offset 10")},
    {R("nvp\0model 2\n", "NUL byte at offset 3")},
    {R("nvpmodel 2\nnvpmodel 3\n", "bytes after the request line")},
    {R("drop-caches\n\n", "bytes after the request line")},
    {R("nvpmodel 2; reboot\n", "byte 0x3b at offset 10")},
    {R("nvpmodel 2 && reboot\n", "byte 0x26")},
    {R("nvpmodel $(reboot)\n", "byte 0x24")},
    {R("nvpmodel `reboot`\n", "byte 0x60")},
    {R("NVPMODEL 2\n", "byte 0x4e at offset 0")},
    {R("nvpmodel +2\n", "byte 0x2b")},
    {R("cpu-freq 0 1190400.0\n", "byte 0x2e")},
    {R("cpu-freq 0 1.19e6\n", "byte 0x2e")},
    {R("cpu-freq\t0\t1190400\n", "byte 0x09")},
    {R("cpu-freq 0 1190400\r\n", "byte 0x0d")},
    {R("drop-caches\xc3\xa9\n", "byte 0xc3")},
    {R("\xff\xfe", "byte 0xff")},
    {R("cpu-freq 0 1190400 \n", "single spaces")},
    {R(" cpu-freq 0 1190400\n", "single spaces")},
    {R("cpu-freq  0 1190400\n", "single spaces")},
    // Paths
    {R("restore ../../etc/shadow\n", "a path is not allowed")},
    {R("cpu-freq /sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq 1190400\n",
       "a path is not allowed")},
    {R("write /proc/sys/vm/drop_caches 3\n", "a path is not allowed")},
    // Verbs and arity
    {R("reboot\n", "unknown verb 'reboot'")},
    {R("nvpmodel\n", "'nvpmodel <mode>' takes 1 argument, got 0")},
    {R("nvpmodel 2 3\n", "takes 1 argument, got 2")},
    {R("cpu-online 1\n", "takes 2 arguments, got 1")},
    {R("cpu-online 1 0 1\n", "takes 2 arguments, got 3")},
    {R("gpu-freq\n", "takes 1 argument, got 0")},
    {R("drop-caches 3\n", "'drop-caches' takes 0 arguments, got 1")},
    {R("drop-caches drop-caches\n", "takes 0 arguments, got 1")},
    {R("clocks-store now\n", "takes 0 arguments, got 1")},
    {R("dvfs\n", "'dvfs' must be followed by 'off' or 'restore'")},
    {R("dvfs on\n", "'dvfs' must be followed by 'off' or 'restore'")},
    {R("dvfs off now\n", "'dvfs off' takes 0 arguments, got 1")},
    // Numbers
    {R("nvpmodel 256\n", "mode 256 is out of range 0..255")},
    {R("nvpmodel -1\n", "mode '-1' is not a decimal number")},
    {R("nvpmodel 0x2\n", "mode '0x2' is not a decimal number")},
    {R("nvpmodel 02\n", "mode '02' is not a decimal number")},
    {R("cpu-online 64 1\n", "cpu 64 is out of range 0..63")},
    {R("cpu-online 99999999999999999999 1\n", "is not a decimal number")},
    {R("cpu-online 1 2\n", "online 2 is out of range 0..1")},
    {R("cpu-online 1 -0\n", "online '-0' is not a decimal number")},
    {R("cpu-freq 0 0\n", "khz 0 is out of range 1..100000000")},
    {R("gpu-freq 0\n", "hz 0 is out of range")},
    {R("restore 0\n", "state 0 is out of range 1..16")},
    {R("restore 17\n", "state 17 is out of range 1..16")},
    // Values checked against the board
    {R("nvpmodel 9\n", "mode 9 is not in /etc/nvpmodel.conf (modes: 0 1 2 3 4 5 6 7 8)")},
    {R("cpu-online 0 0\n", "cpu0 is always online")},
    {R("cpu-online 6 1\n", "cpu6 does not exist on this board")},
    {R("cpu-freq 6 1190400\n", "cpu6 has no cpufreq policy")},
    {R("cpu-freq 1 1190400\n", "cpu1 is not the first core of its cluster")},
    {R("cpu-freq 4 1190400\n", "cpu4 is offline"), .pre = {"cpu-online 4 0\n"}},
    {R("cpu-freq 0 1000000\n",
       "1000000 kHz is not in /sys/devices/system/cpu/cpu0/cpufreq/scaling_available_frequencies")},
    {R("cpu-freq 0 1190401\n", "1190401 kHz is not in")},
    {R("gpu-freq 500000000\n", "500000000 Hz is not in /" GPU "available_frequencies")},
    {R("gpu-freq 510000001\n", "510000001 Hz is not in")},
    {R("emc-freq 1700000000\n", "1700000000 Hz is not an EMC rate of nvidia,tegra194")},
    {R("emc-freq 3199000000\n", "3199000000 Hz is not an EMC rate")},
    {R("dvfs restore\n", "DVFS is not off (no state 0 stored)")},
    {R("restore 7\n", "no state 7 stored")},
    {R("restore 2\n", "no state 2 stored"), .pre = {"clocks-store\n"}},
    {R("restore 1\n",
       "state 1's nvpmodel mode: mode 9 is not in /etc/nvpmodel.conf (modes: 0 1 2 3 4 5 6 7 8)"),
     .pre = {"clocks-store\n"},
     .status = "pmode:0009 fmode:quiet\n"},
    {R("clocks-store\n", "cannot tell the nvpmodel mode in force from /var/lib/nvpmodel/status: "
                         "nvpmodel status: expected 'pmode:NNNN ...', got 'mode:2"),
     .status = "mode:2\n"},
    {R("dvfs off\n", "cannot tell the nvpmodel mode in force"), .status = "pmode:9999\n"},
    // Callers, options and the file system
    {R("drop-caches\n", "caller uid"), .wrong_uid = true},
    {R("drop-caches\n", "peer uid"), .socket = true, .wrong_uid = true},
    {R("drop-caches\n", "--root needs an absolute path"), .args = {"--root", "relative/root"}},
    {R("drop-caches\n", "unexpected argument 'drop-caches'"), .args = {"drop-caches"}},
    {R("drop-caches\n", "unknown option"), .args = {"--bogus"}},
    {R("cpu-online 4 0\n", "Too many levels of symbolic links"), .symlink = true},
};

#define T_N_INVALID (sizeof s_invalid / sizeof s_invalid[0])

static void t_plant_symlink(const jft_power_tree_t *tree)
{
    char path[PATH_MAX];
    jft_power_path(path, "%s/" CPU(4) "/online", tree->root);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink(tree->victim, path), 0);
}

static bool t_one_line(const char *text)
{
    const char *nl = strchr(text, '\n');
    return nl && nl[1] == '\0' && nl != text;
}

// Returns true if the request was applied in any way; adds to *outside the changes outside the
// root and to *failed the rows whose reply was not as required.
static bool t_invalid_row(const t_invalid_t *v, size_t *outside, size_t *failed)
{
    jft_power_tree_t tree;
    jft_power_tree_new(&tree);
    if (v->status) {
        jft_power_write(&tree, STATUS, v->status);
    }
    t_pre(&tree, v->pre);
    if (v->symlink) {
        t_plant_symlink(&tree);
    }
    jft_power_snap_t *before = jft_power_snap(tree.top);
    privhelper_spawn_result_t r;
    t_run(&tree, v->input, v->len, v->socket, v->wrong_uid, v->args, &r);
    jft_power_snap_t *after = jft_power_snap(tree.top);
    t_collect_t *got = calloc(1, sizeof *got);
    assert_non_null(got);
    size_t changed = jft_power_snap_diff(before, after, true, t_collect, got);
    for (size_t i = 0; i < got->n; i++) {
        *outside += strncmp(got->paths[i], "root/", 5) != 0;
    }
    bool replied =
        r.exit_code == 2 && r.out[0] == '\0' && t_one_line(r.err) && strstr(r.err, v->frag) != NULL;
    if (!replied || changed != 0) {
        print_error("invalid row '%.40s': exit %d, %zu changes (first '%s'), err '%s', want '%s'\n",
                    v->input, r.exit_code, changed, got->n ? got->paths[0] : "", r.err, v->frag);
        *failed += !replied;
    }
    free(got);
    free(after);
    free(before);
    jft_power_tree_remove(&tree);
    return changed != 0 || r.exit_code == 0;
}

// The files of this machine's own cpufreq the helper would write if it ignored --root.
static uint64_t t_system_hash(void)
{
    uint64_t h = 0;
    static const char *const leaves[] = {"online", "cpufreq/scaling_min_freq",
                                         "cpufreq/scaling_max_freq"};
    for (int cpu = 0; cpu < PRIVHELPER_CPUS_MAX; cpu++) {
        for (size_t k = 0; k < sizeof leaves / sizeof leaves[0]; k++) {
            char path[PATH_MAX];
            jft_power_path(path, "/sys/devices/system/cpu/cpu%d/%s", cpu, leaves[k]);
            size_t len = 0;
            char *data = jft_read_file(path, &len);
            h = h * 31 + (data ? jft_power_fnv(JFT_POWER_FNV_SEED, data, len) : 0);
            free(data);
        }
    }
    return h;
}

static void test_vocabulary(void **state)
{
    (void) state;
    uint64_t system_before = t_system_hash();
    size_t valid_ok = 0, applied = 0, outside = 0, failed = 0;
    for (size_t i = 0; i < T_N_VALID; i++) {
        valid_ok += t_valid_row(&s_valid[i], &outside);
    }
    for (size_t i = 0; i < T_N_INVALID; i++) {
        applied += t_invalid_row(&s_invalid[i], &outside, &failed);
    }
    outside += t_system_hash() != system_before;
    printf("valid_applied=%zu/%zu invalid_applied=%zu/%zu files_written_outside_fixture=%zu "
           "invalid_replies_wrong=%zu\n",
           valid_ok, T_N_VALID, applied, T_N_INVALID, outside, failed);
    assert_true(T_N_VALID >= 10 && T_N_INVALID >= 50);
    assert_int_equal(valid_ok, T_N_VALID);
    assert_int_equal(applied, 0);
    assert_int_equal(outside, 0);
    assert_int_equal(failed, 0);
}

// nvpmodel may exit 255 after a core-disabling mode that did apply (§4.3): the helper reports
// the failure in one line, exit 1, and the agent reads the sysfs state to see what holds.
static void test_nvpmodel_failure(void **state)
{
    (void) state;
    jft_power_tree_t tree;
    jft_power_tree_new(&tree);
    jft_power_write(&tree, "etc/fake-nvpmodel-exit", "255\n");
    privhelper_spawn_result_t r;
    t_run(&tree, "nvpmodel 0\n", 11, false, false, NULL, &r);
    assert_int_equal(r.exit_code, 1);
    assert_true(t_one_line(r.err));
    assert_non_null(strstr(r.err, "failed: step 1 of 1: nvpmodel -m 0 exited with status 255"));
    char *text = jft_power_read(&tree, CPU(2) "/online");
    assert_string_equal(text, "0\n");
    free(text);
    jft_power_tree_remove(&tree);
}

static void test_help(void **state)
{
    (void) state;
    char helper[PATH_MAX];
    jft_bin("jft-privhelper-test", helper);
    const char *argv[] = {helper, "--help", NULL};
    static const char *const envp[] = {NULL};
    privhelper_spawn_opts_t o = {.argv = argv, .envp = envp, .timeout_us = T_TIMEOUT_US};
    privhelper_spawn_result_t r;
    assert_int_equal(privhelper_spawn_run(&o, &r, NULL), 0);
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.out, "cpu-freq <cpu> <khz>"));
}

// ---------------------------------------------------------------------------------------------
// jf_privhelper directly: the formatter the agent uses and the saved-state text.

static void test_request_format(void **state)
{
    (void) state;
    static const struct {
        privhelper_request_t req;
        const char *text; // NULL: refused
    } rows[] = {
        {{PRIVHELPER_NVPMODEL, 1, {2}}, "nvpmodel 2"},
        {{PRIVHELPER_CPU_ONLINE, 2, {5, 0}}, "cpu-online 5 0"},
        {{PRIVHELPER_CPU_FREQ, 2, {4, 1190400}}, "cpu-freq 4 1190400"},
        {{PRIVHELPER_GPU_FREQ, 1, {510000000}}, "gpu-freq 510000000"},
        {{PRIVHELPER_EMC_FREQ, 1, {1866000000}}, "emc-freq 1866000000"},
        {{PRIVHELPER_DVFS_OFF, 0, {0}}, "dvfs off"},
        {{PRIVHELPER_DVFS_RESTORE, 0, {0}}, "dvfs restore"},
        {{PRIVHELPER_CLOCKS_STORE, 0, {0}}, "clocks-store"},
        {{PRIVHELPER_RESTORE, 1, {16}}, "restore 16"},
        {{PRIVHELPER_DROP_CACHES, 0, {0}}, "drop-caches"},
        {{PRIVHELPER_CPU_ONLINE, 2, {0, 0}}, NULL},
        {{PRIVHELPER_CPU_FREQ, 1, {4}}, NULL},
        {{PRIVHELPER_RESTORE, 1, {0}}, NULL},
        {{PRIVHELPER_GPU_FREQ, 1, {-5}}, NULL},
        {{PRIVHELPER_VERB_COUNT, 0, {0}}, NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char buf[PRIVHELPER_LINE_MAX];
        jf_err_t err = {0};
        int rc = privhelper_request_format(&rows[i].req, buf, sizeof buf, &err);
        if (rows[i].text) {
            assert_int_equal(rc, 0);
            assert_string_equal(buf, rows[i].text);
        } else {
            assert_int_equal(rc, -EINVAL);
            assert_true(err.msg[0] != '\0');
        }
    }
    assert_string_equal(privhelper_verb_syntax(PRIVHELPER_CPU_FREQ), "cpu-freq <cpu> <khz>");
    assert_string_equal(privhelper_verb_syntax(PRIVHELPER_VERB_COUNT), "?");
}

static void test_state_round_trip(void **state)
{
    (void) state;
    privhelper_state_t *st = calloc(1, sizeof *st), *back = calloc(1, sizeof *back);
    assert_true(st && back);
    st->online_known = 0x3e;
    st->online = 0x0e;
    st->n_policies = 2;
    st->policies[0] = (privhelper_policy_t){0, 1190400, 1420800};
    st->policies[1] = (privhelper_policy_t){2, 115200, 1907200};
    st->has_gpu = st->has_emc_cap = st->has_emc_lock = st->has_railgate = true;
    st->gpu_min_hz = 114750000;
    st->gpu_max_hz = 1109250000;
    st->emc_cap_hz = 0;
    st->emc_locked = 1;
    st->emc_rate_hz = 1866000000;
    st->railgate = 1;
    st->n_idle = 1;
    st->idle[0] = (privhelper_idle_t){3, 1, 1};
    char text[PRIVHELPER_STATE_TEXT_MAX];
    size_t len = 0;
    jf_err_t err = {0};
    assert_int_equal(privhelper_state_format(st, text, sizeof text, &len, &err), 0);
    assert_int_equal(privhelper_state_parse(text, len, back, &err), 0);
    char again[PRIVHELPER_STATE_TEXT_MAX];
    size_t again_len = 0;
    assert_int_equal(privhelper_state_format(back, again, sizeof again, &again_len, &err), 0);
    assert_int_equal(again_len, len);
    assert_memory_equal(text, again, len);
    assert_int_equal(back->n_policies, 2);
    assert_int_equal(back->policies[1].max_khz, 1907200);
    assert_int_equal(back->online, 0x0e);
    assert_int_equal(back->idle[0].cpu, 3);
    assert_int_equal(privhelper_state_format(st, text, 40, &len, &err), -ENOSPC);
    free(st);
    free(back);
}

static void test_state_refused(void **state)
{
    (void) state;
    privhelper_state_t *back = calloc(1, sizeof *back);
    assert_non_null(back);
    jf_err_t err = {0};
    static const struct {
        const char *text;
        const char *frag;
    } bad[] = {
        {"", "state:1: not a"},
        {"jetfleet-privhelper-state 2\n", "state:1: not a"},
        {"jetfleet-privhelper-state 1\nonline 1 1", "state:2: empty, unterminated"},
        {"jetfleet-privhelper-state 1\n\n", "state:2: empty"},
        {"jetfleet-privhelper-state 1\nonline 1 1\nonline 1 0\n", "state:3: repeated"},
        {"jetfleet-privhelper-state 1\nonline 0 1\n", "state:2: repeated item, cpu0"},
        {"jetfleet-privhelper-state 1\nonline 1 2\n", "state:2: bad number '2'"},
        {"jetfleet-privhelper-state 1\npolicy 0 01 5\n", "state:2: bad number '01'"},
        {"jetfleet-privhelper-state 1\npolicy 0 -1 5\n", "state:2: bad number '-1'"},
        {"jetfleet-privhelper-state 1\ngpu 1\n", "state:2: unknown line 'gpu' or wrong field"},
        {"jetfleet-privhelper-state 1\npath /etc/shadow\n", "state:2: unknown line 'path'"},
        {"jetfleet-privhelper-state 1\ngpu 1 2\ngpu 1 2\n", "state:3: repeated"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = privhelper_state_parse(bad[i].text, strlen(bad[i].text), back, &err);
        if (rc != -EINVAL || !strstr(err.msg, bad[i].frag)) {
            fail_msg("state row %zu: rc %d '%s', want '%s'", i, rc, err.msg, bad[i].frag);
        }
    }
    free(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_format),   cmocka_unit_test(test_state_round_trip),
        cmocka_unit_test(test_state_refused),    cmocka_unit_test(test_help),
        cmocka_unit_test(test_nvpmodel_failure), cmocka_unit_test(test_vocabulary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
