/* Test support: small checks that fail the running cmocka test (paths that must fit, files that
 * must be written, an error that must carry a code and name what failed, a fixture's text). */
#ifndef JFT_CHECK_H
#define JFT_CHECK_H

#include "jf_err.h"
#include "jft_fleet.h"

// dir/rel into out (PATH_MAX); fails the test when it does not fit.
void jft_path(char *out, const char *dir, const char *rel);

// Writes text to dir/rel; fails the test on error.
void jft_write_at(const char *dir, const char *rel, const char *text);

// rc and err->code must be code, and err->msg must contain frag.
void jft_expect_err(int rc, const jf_err_t *err, int code, const char *frag);

// The text of fixture $JF_FIXTURES/rel; fails the test when unreadable. Caller frees.
char *jft_fixture_text(const char *rel);

// Runs the CLI (jft_fleet_cli, output into <f->dir>/cli.out) and returns its output (caller
// frees); prints the output and fails the test when it does not exit expect_rc.
char *jft_cli_expect(jft_fleet_t *f, int expect_rc, int timeout_ms, const char *const *args);

#endif
