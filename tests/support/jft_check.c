/* Test support: small checks that fail the running cmocka test (jft_check.h). */
#include "jft_check.h"

#include "jft_fs.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

void jft_path(char *out, const char *dir, const char *rel)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", dir, rel);
    assert_true(n > 0 && n < PATH_MAX);
}

void jft_write_at(const char *dir, const char *rel, const char *text)
{
    char p[PATH_MAX];
    jft_path(p, dir, rel);
    assert_int_equal(jft_write_file(p, text), 0);
}

void jft_expect_err(int rc, const jf_err_t *err, int code, const char *frag)
{
    if (rc != code || err->code != code || !strstr(err->msg, frag)) {
        fail_msg("expected %d with '%s', got %d: '%s'", code, frag, rc, err->msg);
    }
}

char *jft_fixture_text(const char *rel)
{
    char path[PATH_MAX];
    jft_fixture(rel, path);
    char *text = jft_read_file(path, NULL);
    if (!text) {
        fail_msg("cannot read fixture %s", path);
    }
    return text;
}

char *jft_cli_expect(jft_fleet_t *f, int expect_rc, int timeout_ms, const char *const *args)
{
    char out[PATH_MAX + 16];
    (void) snprintf(out, sizeof out, "%s/cli.out", f->dir);
    int rc = jft_fleet_cli(f, out, timeout_ms, args);
    char *text = jft_read_file(out, NULL);
    if (rc != expect_rc) {
        fprintf(stderr, "jetfleet %s exited %d:\n%s\n", args[0], rc, text ? text : "");
    }
    assert_int_equal(rc, expect_rc);
    assert_non_null(text);
    return text;
}
