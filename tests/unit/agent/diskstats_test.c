/* Unit tests for agent_diskstats: /proc/diskstats fixtures of Jetsons and a workstation, tables
 * of malformed and unusual lines, the pread reader against a temporary file, rates and JSON. The
 * storage and residency tests are storage_test.c. */
#include "agent_diskstats.h"
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
#include <unistd.h>

#include <cmocka.h>

#define T_SECTOR INT64_C(512)
#define T_MS     INT64_C(1000)

// ---------------------------------------------------------------------------------------------
// Helpers

// A fresh directory under $TMPDIR, which main() points at a filesystem with a page cache.
static void t_tmpdir(char *out)
{
    assert_int_equal(jft_tmpdir_new(out), 0);
}

static void t_rmtree(const char *dir)
{
    jft_tmpdir_remove(dir);
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
        char rel[PATH_MAX];
        jft_path(rel, "proc", r->fixture);
        char *text = jft_fixture_text(rel);
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
    jft_write_at(root, "diskstats", text);
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
    jft_write_at(root, "diskstats", "8 0 sda 1 1 1 1 1 1 1 1 1 1 1\n");
    jft_expect_err(agent_diskstats_read(ds, &b, &err), &err, -ENOENT, "'nvme0n1'");
    assert_int_equal(b.reads, 250);
    // Past the size cap.
    char *big = malloc(AGENT_DISKSTATS_FILE_MAX_BYTES + 2);
    assert_non_null(big);
    memset(big, ' ', AGENT_DISKSTATS_FILE_MAX_BYTES + 1);
    big[AGENT_DISKSTATS_FILE_MAX_BYTES + 1] = '\0';
    jft_write_at(root, "diskstats", big);
    free(big);
    jft_expect_err(agent_diskstats_read(ds, &b, &err), &err, -EFBIG, "/diskstats: larger than");
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
        jft_expect_err(err.code, &err, -EINVAL, "is not a block device name");
    }
    assert_null(agent_diskstats_new(root, "nvme0n1", &err)); // no file yet
    jft_expect_err(err.code, &err, -ENOENT, "/diskstats: cannot open");
    t_write_diskstats(root, 1);
    assert_null(agent_diskstats_new(root, "sda", &err));
    jft_expect_err(err.code, &err, -ENOENT, "no line for device 'sda'");
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
    jft_expect_err(agent_diskstats_rate(&b, &a, &r, &err), &err, -EINVAL, "no time passed");
    agent_disk_sample_t other = b;
    (void) snprintf(other.device, sizeof other.device, "sda");
    jft_expect_err(agent_diskstats_rate(&a, &other, &r, &err), &err, -EINVAL, "'nvme0n1' and 'sda'");
    agent_disk_sample_t back = b;
    back.read_time_us = 10; // a 32-bit millisecond counter that wrapped
    jft_expect_err(agent_diskstats_rate(&a, &back, &r, &err), &err, -ERANGE, "went backwards");
    back = b;
    back.reads = 1;
    jft_expect_err(agent_diskstats_rate(&a, &back, &r, &err), &err, -ERANGE, "'nvme0n1'");
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diskstats_fixtures),
        cmocka_unit_test(test_diskstats_lines),
        cmocka_unit_test(test_diskstats_reader),
        cmocka_unit_test(test_diskstats_new_errors),
        cmocka_unit_test(test_diskstats_real),
        cmocka_unit_test(test_diskstats_rate),
        cmocka_unit_test(test_diskstats_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
