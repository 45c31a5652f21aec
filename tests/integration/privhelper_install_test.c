/* The helper the project installs never takes the test options (docs/privileges.md §4-5):
 * `cmake --install` of this build into a mkdtemp prefix, then the installed helper is run with
 * --root, --nvpmodel and --allow-uid, and every one must be refused; the same probes against
 * jft-privhelper-test must be accepted (so the probe can tell). Then the other build
 * configurations the project offers are configured (not built) into mkdtemp trees, and their
 * compile commands and install scripts are checked: the installed target is compiled with
 * JF_PRIVHELPER_TEST_HOOKS=0 and the test binary is never installed; likewise the agent's
 * library has its test-only options and hooks (JF_AGENT_TEST_HOOKS) only where tests are built. */
#include "jft_fs.h"
#include "jft_proc.h"

#include <jansson.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#define T_RUN_MS       10000  // one probe of the helper
#define T_CONFIGURE_MS 100000 // one cmake configure on a loaded machine (scaled)
#define T_INSTALLED    "libexec/jetfleet-privhelper"

// The three test options, each with a value that would be valid for a test build. A probe runs
// the helper with one of them and stdin /dev/null: a helper that takes the option goes on to the
// caller check or the (empty) request and is refused for that, never for the option.
static const char *const s_probes[][2] = {
    {"--root", "/nonexistent-jetfleet-root"},
    {"--nvpmodel", "/nonexistent-jetfleet-nvpmodel"},
    {"--allow-uid", "0"},
};
#define T_N_PROBES (sizeof s_probes / sizeof s_probes[0])

static void t_path(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void t_path(char *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, PATH_MAX, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && n < PATH_MAX);
}

// Runs argv; returns its exit code, and its output (caller frees) in *ret_out.
static int t_run(char *const argv[], const char *dir, int timeout_ms, char **ret_out)
{
    char log[PATH_MAX];
    t_path(log, "%s/run.log", dir);
    int code = jft_run(argv, log, timeout_ms, NULL);
    *ret_out = jft_read_file(log, NULL);
    assert_non_null(*ret_out);
    return code;
}

// How many of the probes helper accepts (it does not refuse the option); a refusal must name the
// option and exit 2.
static size_t t_accepted(const char *helper, const char *dir)
{
    size_t accepted = 0;
    for (size_t i = 0; i < T_N_PROBES; i++) {
        char *argv[] = {(char *) helper, (char *) s_probes[i][0], (char *) s_probes[i][1], NULL};
        char *out = NULL;
        int code = t_run(argv, dir, T_RUN_MS, &out);
        char want[64];
        (void) snprintf(want, sizeof want, "rejected: %s is accepted only by a test build",
                        s_probes[i][0]);
        if (!strstr(out, want)) {
            accepted++;
        } else {
            assert_int_equal(code, 2);
        }
        free(out);
    }
    return accepted;
}

static void test_installed_helper_refuses_test_options(void **state)
{
    (void) state;
    char top[PATH_MAX], prefix[PATH_MAX], helper[PATH_MAX], test_helper[PATH_MAX];
    assert_int_equal(jft_tmpdir_new(top), 0);
    t_path(prefix, "%s/prefix", top);
    char *argv[] = {JFT_CMAKE_COMMAND, "--install", JFT_BUILD_DIR, "--prefix", prefix, NULL};
    char *out = NULL;
    int code = t_run(argv, top, T_RUN_MS * jft_timeout_scale(), &out);
    if (code != 0) {
        fprintf(stderr, "cmake --install:\n%s\n", out);
    }
    assert_int_equal(code, 0);
    // cmake lists every file it installs: the test binary must not be among them.
    assert_non_null(strstr(out, T_INSTALLED));
    assert_null(strstr(out, "jft-privhelper-test"));
    free(out);
    t_path(helper, "%s/%s", prefix, T_INSTALLED);
    struct stat st;
    assert_int_equal(stat(helper, &st), 0);
    assert_true(S_ISREG(st.st_mode) && (st.st_mode & S_IXUSR));
    size_t installed = t_accepted(helper, top);
    jft_bin("jft-privhelper-test", test_helper);
    size_t test_build = t_accepted(test_helper, top);
    printf("installed_accepts_test_options=%zu/%zu test_binary_accepts=%zu/%zu\n", installed,
           T_N_PROBES, test_build, T_N_PROBES);
    assert_int_equal(installed, 0);
    assert_int_equal(test_build, T_N_PROBES);
    jft_tmpdir_remove(top);
}

// The definition of macro (e.g. "-DJF_PRIVHELPER_TEST_HOOKS=") that source is compiled with for
// target (told by the object the command writes), or NULL if that target is not in the tree's
// compile commands. Caller frees.
static char *t_definition(const json_t *commands, const char *target, const char *source,
                          const char *macro)
{
    char object[PATH_MAX];
    t_path(object, "-o CMakeFiles/%s.dir/%s.o ", target, source);
    size_t i = 0;
    const json_t *c = NULL;
    json_array_foreach(commands, i, c)
    {
        const char *cmd = json_string_value(json_object_get(c, "command"));
        if (cmd && strstr(cmd, object)) {
            const char *def = strstr(cmd, macro);
            return def ? strndup(def, strcspn(def, " ")) : strdup("(none)");
        }
    }
    return NULL;
}

static char *t_hooks_definition(const json_t *commands, const char *target)
{
    return t_definition(commands, target, "privhelper_main.c", "-DJF_PRIVHELPER_TEST_HOOKS=");
}

// The agent's test-only options and hooks (--spool-in-memory, --spool-forget-on-send,
// JF_TEST_*) exist only where tests are built: docs/programs.md.
static void t_check_agent_hooks(const json_t *commands, bool tests)
{
    char *def =
        t_definition(commands, "jf_agent", "agent_options.c", "-DJF_AGENT_TEST_HOOKS=");
    assert_non_null(def);
    assert_string_equal(def, tests ? "-DJF_AGENT_TEST_HOOKS=1" : "-DJF_AGENT_TEST_HOOKS=0");
    free(def);
}

// Configures the project with the options into dir/b, then checks what the tree would compile
// and install. Returns whether the test binary exists in that configuration.
static bool t_check_configuration(const char *dir, char *const options[])
{
    char build[PATH_MAX], file[PATH_MAX];
    t_path(build, "%s/b", dir);
    char *argv[12] = {JFT_CMAKE_COMMAND, "-S", JFT_SOURCE_DIR, "-B", build};
    size_t n = 5;
    for (size_t i = 0; options[i] && n < 11; i++) {
        argv[n++] = options[i];
    }
    char *out = NULL;
    int code = t_run(argv, dir, T_CONFIGURE_MS * jft_timeout_scale(), &out);
    if (code != 0) {
        fprintf(stderr, "cmake configure:\n%s\n", out);
    }
    assert_int_equal(code, 0);
    free(out);
    t_path(file, "%s/compile_commands.json", build);
    json_error_t jerr;
    json_t *commands = json_load_file(file, 0, &jerr);
    assert_non_null(commands);
    char *installed = t_hooks_definition(commands, "jetfleet-privhelper");
    char *test_binary = t_hooks_definition(commands, "jft-privhelper-test");
    t_check_agent_hooks(commands, test_binary != NULL);
    json_decref(commands);
    assert_non_null(installed);
    assert_string_equal(installed, "-DJF_PRIVHELPER_TEST_HOOKS=0");
    assert_true(!test_binary || strcmp(test_binary, "-DJF_PRIVHELPER_TEST_HOOKS=1") == 0);
    bool has_test_binary = test_binary != NULL;
    free(installed);
    free(test_binary);
    t_path(file, "%s/agent/privhelper/cmake_install.cmake", build);
    char *script = jft_read_file(file, NULL);
    assert_non_null(script);
    assert_non_null(strstr(script, "bin/jetfleet-privhelper"));
    assert_null(strstr(script, "jft-privhelper-test"));
    free(script);
    return has_test_binary;
}

// Release without tests (what a package build does), Release with tests, and a sanitizer build
// that still asks for the old option, which must change nothing.
static void test_every_configuration_compiles_hooks_out(void **state)
{
    (void) state;
    char *release_no_tests[] = {"-DCMAKE_BUILD_TYPE=Release", "-DJF_BUILD_TESTS=OFF", NULL};
    char *release_tests[] = {"-DCMAKE_BUILD_TYPE=Release", "-DJF_BUILD_TESTS=ON", NULL};
    char *sanitize_old_option[] = {"-DCMAKE_BUILD_TYPE=Debug", "-DJF_SANITIZE=ON",
                                   "-DJF_BUILD_TESTS=ON", "-DJF_PRIVHELPER_TEST_HOOKS=ON", NULL};
    char *const *configs[] = {release_no_tests, release_tests, sanitize_old_option};
    const bool want_test_binary[] = {false, true, true};
    size_t checked = 0;
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        char dir[PATH_MAX];
        assert_int_equal(jft_tmpdir_new(dir), 0);
        assert_int_equal(t_check_configuration(dir, configs[i]), want_test_binary[i]);
        jft_tmpdir_remove(dir);
        checked++;
    }
    printf("configurations_checked=%zu installed_with_hooks=0\n", checked);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_installed_helper_refuses_test_options),
        cmocka_unit_test(test_every_configuration_compiles_hooks_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
