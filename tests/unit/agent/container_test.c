/* Unit: the container command around a trainer's (agent/session/agent_container.c,
 * docs/containers.md): parsing --container, table-driven with the expected error fragments, and
 * wrapping (engine and run first, the dataset read-only, the options and image, then the
 * trainer's command unchanged; a name right after run; no engine configured is -ENOENT naming
 * --container); a run's container name; its removal, and the listing of a board's containers
 * (names of its runs only), by scripts standing in for the engine. */
#include "agent_container.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    assert_int_equal(agent_container_wrap(&c, NULL, "/d/mnist", &in, &out, &err), 0);
    const char *want[] = {"run",      "-v", "/d/mnist:/d/mnist:ro",   "--rm",
                          "--rootfs", "/r", "/opt/jf/jetfleet-train", "--data",
                          "/d/mnist"};
    assert_string_equal(out.program, "/usr/bin/podman");
    assert_int_equal(out.n_args, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < out.n_args; i++) {
        assert_string_equal(out.args[i], want[i]);
    }
    // No dataset directory: no volume.
    assert_int_equal(agent_container_wrap(&c, NULL, NULL, &in, &out, &err), 0);
    assert_string_equal(out.args[1], "--rm");
    // A name: right after run.
    assert_int_equal(agent_container_wrap(&c, "jf-x-1", NULL, &in, &out, &err), 0);
    assert_string_equal(out.args[0], "run");
    assert_string_equal(out.args[1], "--name");
    assert_string_equal(out.args[2], "jf-x-1");
    assert_string_equal(out.args[3], "--rm");
    // No engine configured.
    agent_container_t none;
    assert_int_equal(agent_container_parse(NULL, &none, NULL), 0);
    assert_int_equal(agent_container_wrap(&none, NULL, "/d", &in, &out, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "no container engine configured (--container)"));
}

// Names: FNV-1a of "abc" is e71fa2190541574b (the published test vector); the board's other
// characters become '_', a long board is cut to 48 characters.
static void test_name(void **state)
{
    (void) state;
    char name[AGENT_CONTAINER_NAME_MAX];
    agent_container_name("nx-01", "abc", 2, name);
    assert_string_equal(name, "jf-nx-01-e71fa2190541574b-2");
    agent_container_name("a b/c", "abc", 10, name);
    assert_string_equal(name, "jf-a_b_c-e71fa2190541574b-10");
    char board[80];
    memset(board, 'b', sizeof board - 1);
    board[sizeof board - 1] = '\0';
    agent_container_name(board, "abc", 1, name);
    assert_int_equal(strlen(name), 3 + 48 + 1 + 16 + 2);
}

// Removal runs `ENGINE kill NAME`, then `ENGINE rm -f NAME`, in the background: an engine that
// is a script appending its arguments to a file shows both, in order, within 5 s.
static void test_remove(void **state)
{
    (void) state;
    char dir[] = "/tmp/jf-container-test.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char engine[PATH_MAX], out[PATH_MAX], cmd[3 * PATH_MAX];
    (void) snprintf(engine, sizeof engine, "%s/engine", dir);
    (void) snprintf(out, sizeof out, "%s/args", dir);
    FILE *f = fopen(engine, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\necho \"$@\" >> %s.tmp\n[ \"$1\" = rm ] && mv %s.tmp %s\n", out, out,
            out);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(engine, 0755), 0);
    (void) snprintf(cmd, sizeof cmd, "%s run img", engine);
    agent_container_t c;
    assert_int_equal(agent_container_parse(cmd, &c, NULL), 0);
    jf_err_t err = {0};
    assert_int_equal(agent_container_remove(&c, "jf-x-1", &err), 0);
    char got[256] = "";
    char first[256] = "";
    for (int i = 0; i < 500 && !got[0]; i++) {
        FILE *a = fopen(out, "r");
        if (a) {
            if (!fgets(first, sizeof first, a) || !fgets(got, sizeof got, a)) {
                got[0] = '\0';
            }
            (void) fclose(a);
        }
        if (!got[0]) {
            (void) usleep(10000);
        }
    }
    assert_string_equal(first, "kill jf-x-1\n");
    assert_string_equal(got, "rm -f jf-x-1\n");
    // Nothing configured, or no name: nothing to do.
    agent_container_t none;
    assert_int_equal(agent_container_parse(NULL, &none, NULL), 0);
    assert_int_equal(agent_container_remove(&none, "jf-x-1", &err), 0);
    (void) unlink(out);
    (void) unlink(engine);
    (void) rmdir(dir);
}

// Which names are a board's run containers: exactly agent_container_name's shape.
static void test_is_boards(void **state)
{
    (void) state;
    const struct {
        const char *board, *name;
        bool is;
    } rows[] = {
        {"nx-1", "jf-nx-1-e71fa2190541574b-2", true},
        {"nx-1", "jf-nx-1-e71fa2190541574b-123", true},
        {"nx-1", "jf-nx-1-b-e71fa2190541574b-2", false}, // board nx-1-b's
        {"nx-1-b", "jf-nx-1-b-e71fa2190541574b-2", true},
        {"nx-1", "jf-nx-1-E71FA2190541574B-2", false},
        {"nx-1", "jf-nx-1-e71fa2190541574b-", false},
        {"nx-1", "jf-nx-1-e71fa2190541574b-2x", false},
        {"nx-1", "jf-nx-1-e71fa2190541574-2", false},
        {"nx-1", "jf-nx-10-e71fa2190541574b-2", false},
        {"a b/c", "jf-a_b_c-e71fa2190541574b-10", true},
        {"nx-1", "other", false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (agent_container_is_boards(rows[i].board, rows[i].name) != rows[i].is) {
            fail_msg("row %zu: board '%s', name '%s': expected %d", i, rows[i].board, rows[i].name,
                     (int) rows[i].is);
        }
    }
    char name[AGENT_CONTAINER_NAME_MAX];
    agent_container_name("a b/c", "r0123456789abcdef", 3, name);
    assert_true(agent_container_is_boards("a b/c", name));
}

// An engine script: `ps` prints body (its arguments go to DIR/ps-args) and exits with code.
static void t_engine(const char *dir, const char *body, int code, agent_container_t *ret)
{
    char engine[PATH_MAX], cmd[PATH_MAX + 16];
    (void) snprintf(engine, sizeof engine, "%s/engine", dir);
    FILE *f = fopen(engine, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n[ \"$1\" = ps ] || exit 9\necho \"$@\" > %s/ps-args\n%s\nexit %d\n", dir,
            body, code);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(engine, 0755), 0);
    (void) snprintf(cmd, sizeof cmd, "%s run img", engine);
    assert_int_equal(agent_container_parse(cmd, ret, NULL), 0);
}

// Listing a board's containers: `ENGINE ps -a --filter name=jf-BOARD- --format {{.Names}}`, and
// only the names of the board's own runs kept (the filter is a substring match); a failing
// engine is -EIO with its output, a hanging one -ETIMEDOUT, none configured -ENOENT.
static void test_list(void **state)
{
    (void) state;
    char dir[] = "/tmp/jf-container-list.XXXXXX";
    assert_non_null(mkdtemp(dir));
    agent_container_t c;
    t_engine(dir,
             "printf 'jf-nx-1-e71fa2190541574b-2\\njf-nx-1-b-e71fa2190541574b-1\\n"
             "x-jf-nx-1-e71fa2190541574b-1\\njf-nx-1-00000000000000ff-1\\n'",
             0, &c);
    char names[4][AGENT_CONTAINER_NAME_MAX];
    size_t n = 99;
    jf_err_t err = {0};
    assert_int_equal(agent_container_list(&c, "nx-1", names, 4, &n, 5000, &err), 0);
    assert_int_equal(n, 2);
    assert_string_equal(names[0], "jf-nx-1-e71fa2190541574b-2");
    assert_string_equal(names[1], "jf-nx-1-00000000000000ff-1");
    char path[PATH_MAX + 16], args[256] = "";
    (void) snprintf(path, sizeof path, "%s/ps-args", dir);
    FILE *a = fopen(path, "r");
    assert_non_null(a);
    assert_non_null(fgets(args, sizeof args, a));
    (void) fclose(a);
    assert_string_equal(args, "ps -a --filter name=jf-nx-1- --format {{.Names}}\n");
    // At most max names.
    assert_int_equal(agent_container_list(&c, "nx-1", names, 1, &n, 5000, &err), 0);
    assert_int_equal(n, 1);
    t_engine(dir, "echo 'Error: cannot connect to the engine'", 125, &c);
    assert_int_equal(agent_container_list(&c, "nx-1", names, 4, &n, 5000, &err), -EIO);
    assert_non_null(strstr(err.msg, "failed: Error: cannot connect to the engine"));
    assert_int_equal(n, 0);
    t_engine(dir, "sleep 30", 0, &c);
    assert_int_equal(agent_container_list(&c, "nx-1", names, 4, &n, 200, &err), -ETIMEDOUT);
    assert_non_null(strstr(err.msg, "did not answer within 200 ms"));
    agent_container_t none;
    assert_int_equal(agent_container_parse(NULL, &none, NULL), 0);
    assert_int_equal(agent_container_list(&none, "nx-1", names, 4, &n, 200, &err), -ENOENT);
    (void) unlink(path);
    (void) snprintf(path, sizeof path, "%s/engine", dir);
    (void) unlink(path);
    (void) rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),     cmocka_unit_test(test_wrap),
        cmocka_unit_test(test_name),      cmocka_unit_test(test_remove),
        cmocka_unit_test(test_is_boards), cmocka_unit_test(test_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
