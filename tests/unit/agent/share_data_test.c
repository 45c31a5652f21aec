/* The agent's shipped board tables against the tests' copies: every nvpmodel conf in
 * agent/share/nvpmodel/ (embedded in the agent, installed beside it) has a byte-identical copy
 * in tests/fixtures/nvpmodel/ and the other way round, so that the parser, helper and power
 * tests read exactly what the sim boards write (cmake/jf_embed_confs.cmake). */
#include "jft_fs.h"

#include <dirent.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define T_CONFS_MIN 5 // the Jetson families the sim boards cover (jf_embed_nvpmodel_confs)

// Calls check(dir_a, dir_b, name) for every *.conf in dir_a; returns how many there were.
static int t_each_conf(const char *dir_a, const char *dir_b,
                       void (*check)(const char *, const char *, const char *))
{
    DIR *d = opendir(dir_a);
    if (!d) {
        fail_msg("cannot open '%s'", dir_a);
    }
    int n = 0;
    for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".conf") == 0) {
            check(dir_a, dir_b, e->d_name);
            n++;
        }
    }
    closedir(d);
    return n;
}

static void t_same_file(const char *dir_a, const char *dir_b, const char *name)
{
    char a[PATH_MAX] = {0};
    char b[PATH_MAX] = {0};
    (void) snprintf(a, sizeof a, "%s/%s", dir_a, name);
    (void) snprintf(b, sizeof b, "%s/%s", dir_b, name);
    size_t len_a = 0;
    size_t len_b = 0;
    char *text_a = jft_read_file(a, &len_a);
    char *text_b = jft_read_file(b, &len_b);
    if (!text_a || !text_b) {
        fail_msg("'%s' has no counterpart '%s'", text_a ? a : b, text_a ? b : a);
    }
    if (len_a != len_b || memcmp(text_a, text_b, len_a) != 0) {
        fail_msg("'%s' and '%s' differ: edit both, they must stay identical", a, b);
    }
    free(text_a);
    free(text_b);
}

static void test_confs_identical_both_ways(void **state)
{
    (void) state;
    char fixtures[PATH_MAX] = {0};
    jft_fixture("nvpmodel", fixtures);
    int n_share = t_each_conf(JF_SHARE_DIR "/nvpmodel", fixtures, t_same_file);
    int n_fixtures = t_each_conf(fixtures, JF_SHARE_DIR "/nvpmodel", t_same_file);
    print_message("share_confs=%d fixture_confs=%d\n", n_share, n_fixtures);
    assert_true(n_share >= T_CONFS_MIN);
    assert_int_equal(n_share, n_fixtures);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_confs_identical_both_ways),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
