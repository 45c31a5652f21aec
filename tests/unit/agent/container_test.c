/* Unit: the container command around a trainer's (agent/session/agent_container.c,
 * docs/containers.md): parsing --container, table-driven with the expected error fragments, and
 * wrapping (engine and run first, the dataset read-only, the options and image, then the
 * trainer's command unchanged; no engine configured is -ENOENT naming --container). */
#include "agent_container.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

typedef struct t_row {
    const char *text;
    int code;
    const char *fragment; // in err.msg on failure; "" for success
    size_t n_words;       // on success
} t_row_t;

static const t_row_t s_rows[] = {
    {NULL, 0, "", 0},
    {"", 0, "", 0},
    {"/usr/bin/podman run img", 0, "", 3},
    {"  /usr/bin/podman   run  --rm  --rootfs /r ", 0, "", 5},
    {"podman run img", -EINVAL, "the engine an absolute path", 0},
    {"/usr/bin/podman img", -EINVAL, "expected ENGINE run [OPTIONS] IMAGE", 0},
    {"/usr/bin/podman run", -EINVAL, "'/usr/bin/podman run'", 0},
    {"/e run 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23", -EINVAL,
     "more than 24 words", 0},
};

static void test_parse(void **state)
{
    (void) state;
    for (size_t i = 0; i < sizeof s_rows / sizeof s_rows[0]; i++) {
        agent_container_t c;
        jf_err_t err = {0};
        int rc = agent_container_parse(s_rows[i].text, &c, &err);
        if (rc != s_rows[i].code || strstr(err.msg, s_rows[i].fragment) == NULL ||
            (rc == 0 && c.n_words != s_rows[i].n_words)) {
            fail_msg("row %zu '%s': rc %d, %zu words, '%s'", i,
                     s_rows[i].text ? s_rows[i].text : "(null)", rc, c.n_words, err.msg);
        }
    }
}

static void test_wrap(void **state)
{
    (void) state;
    agent_container_t c;
    assert_int_equal(agent_container_parse("/usr/bin/podman run --rm --rootfs /r", &c, NULL), 0);
    agent_platform_trainer_t in = {
        .program = "/opt/jf/jetfleet-train", .n_args = 2, .args = {"--data", "/d/mnist"}};
    agent_platform_trainer_t out;
    jf_err_t err = {0};
    assert_int_equal(agent_container_wrap(&c, "/d/mnist", &in, &out, &err), 0);
    const char *want[] = {"run",      "-v", "/d/mnist:/d/mnist:ro",   "--rm",
                          "--rootfs", "/r", "/opt/jf/jetfleet-train", "--data",
                          "/d/mnist"};
    assert_string_equal(out.program, "/usr/bin/podman");
    assert_int_equal(out.n_args, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < out.n_args; i++) {
        assert_string_equal(out.args[i], want[i]);
    }
    // No dataset directory: no volume.
    assert_int_equal(agent_container_wrap(&c, NULL, &in, &out, &err), 0);
    assert_string_equal(out.args[1], "--rm");
    // No engine configured.
    agent_container_t none;
    assert_int_equal(agent_container_parse(NULL, &none, NULL), 0);
    assert_int_equal(agent_container_wrap(&none, "/d", &in, &out, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "no container engine configured (--container)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_wrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
