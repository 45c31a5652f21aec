/* Integration: the real programs meet bad configuration. jetfleet-coordinator given a malformed
 * fleet.yaml exits 1, and `jetfleet sweep plan|submit` given a sweep file that does not validate
 * (malformed, or a model that does not train on its dataset) exits 2, each with one error line
 * naming file:line:column and what was expected; they start nothing and never crash. */
#include "jft_fs.h"
#include "jft_proc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#define T_RUN_TIMEOUT_MS 10000

typedef struct t_case {
    const char *file;     // under tests/fixtures/yaml/bad/
    const char *position; // expected "file:line:col: what"
} t_case_t;

static const t_case_t s_fleets[] = {
    {"fleet-indent.yaml", "fleet-indent.yaml:4:12: mapping values are not allowed"},
    {"fleet-tab.yaml", "fleet-tab.yaml:3:1: found a tab character"},
    {"fleet-unknown-key.yaml", "fleet-unknown-key.yaml:4:5: unknown key 'powr_modes'"},
    {"fleet-alias.yaml", "fleet-alias.yaml:4:14: aliases are not allowed"},
    {"fleet-duplicate-board.yaml", "fleet-duplicate-board.yaml:6:11: duplicate board name"},
};

static const t_case_t s_sweeps[] = {
    {"sweep-unknown-model.yaml", "sweep-unknown-model.yaml:6:13: unknown model 'resnet50'"},
    {"sweep-impossible-pair.yaml",
     "sweep-impossible-pair.yaml:6:5: workload #2: model 'vgg11' does not train on dataset "
     "'mnist'"},
};

// Runs argv with output into <dir>/out and returns the exit code; *ret_out gets the output.
static int t_run(const char *dir, char *const argv[], char **ret_out)
{
    char out[PATH_MAX + 8];
    (void) snprintf(out, sizeof out, "%s/out", dir);
    int rc = jft_run(argv, out, T_RUN_TIMEOUT_MS * jft_timeout_scale(), NULL);
    *ret_out = jft_read_file(out, NULL);
    return rc;
}

static void t_expect(int rc, int want_rc, const char *out, const char *position)
{
    if (rc != want_rc || !out || !strstr(out, position)) {
        fail_msg("expected exit %d and '%s', got exit %d and:\n%s", want_rc, position, rc,
                 out ? out : "");
    }
}

static void test_coordinator_refuses_bad_fleet(void **state)
{
    (void) state;
    char dir[PATH_MAX], bin[PATH_MAX], cfg[PATH_MAX];
    assert_int_equal(jft_tmpdir_new(dir), 0);
    jft_bin("jetfleet-coordinator", bin);
    for (size_t i = 0; i < sizeof s_fleets / sizeof s_fleets[0]; i++) {
        char rel[128];
        (void) snprintf(rel, sizeof rel, "yaml/bad/%s", s_fleets[i].file);
        jft_fixture(rel, cfg);
        char *argv[] = {bin, "--config", cfg, "--insecure-loopback", NULL};
        char *out = NULL;
        int rc = t_run(dir, argv, &out);
        t_expect(rc, 1, out, s_fleets[i].position);
        free(out);
    }
    // Nothing was started: the fixtures sit in a read-only tree and no data directory appeared
    // in ours (the default data_dir is taken relative to the fleet file, i.e. the fixtures).
    char state_dir[PATH_MAX + 32];
    (void) snprintf(state_dir, sizeof state_dir, "%s/yaml/bad/jetfleet-data", getenv("JF_FIXTURES"));
    struct stat st;
    assert_int_not_equal(stat(state_dir, &st), 0);
    jft_tmpdir_remove(dir);
}

static void test_cli_refuses_bad_sweep(void **state)
{
    (void) state;
    char dir[PATH_MAX], bin[PATH_MAX], fleet[PATH_MAX], sweep[PATH_MAX];
    assert_int_equal(jft_tmpdir_new(dir), 0);
    jft_bin("jetfleet", bin);
    jft_fixture("yaml/good/fleet-lab.yaml", fleet);
    for (size_t i = 0; i < sizeof s_sweeps / sizeof s_sweeps[0]; i++) {
        char rel[128];
        (void) snprintf(rel, sizeof rel, "yaml/bad/%s", s_sweeps[i].file);
        jft_fixture(rel, sweep);
        static const char *const verbs[] = {"plan", "submit"};
        for (size_t v = 0; v < 2; v++) {
            char *argv[] = {bin, "--config", fleet, "sweep", (char *) verbs[v], sweep, NULL};
            char *out = NULL;
            int rc = t_run(dir, argv, &out);
            t_expect(rc, 2, out, s_sweeps[i].position);
            free(out);
        }
    }
    // A missing file is an error (exit 1), and a usage error is exit 2.
    char *argv[] = {bin, "--config", fleet, "sweep", "plan", "/nonexistent/sweep.yaml", NULL};
    char *out = NULL;
    int rc = t_run(dir, argv, &out);
    t_expect(rc, 1, out, "/nonexistent/sweep.yaml");
    free(out);
    char *usage[] = {bin, "--config", fleet, "sweep", "plan", NULL};
    assert_int_equal(t_run(dir, usage, &out), 2);
    free(out);
    jft_tmpdir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coordinator_refuses_bad_fleet),
        cmocka_unit_test(test_cli_refuses_bad_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
