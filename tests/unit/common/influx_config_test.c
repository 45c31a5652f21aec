/* Unit tests for fleet.yaml coordinator.influx (jf_influx_config, docs/fleet-yaml.md): defaults,
 * 1.x and 2.x targets, and each error with its file:line:col. */
#include "jf_fleet_config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define T_BOARD                                                                                    \
    "boards:\n  - {name: b, type: host, storage: [{medium: local, mount: /, "                      \
    "dataset_root: /d}]}\n"

static jf_fleet_config_t *t_parse(const char *influx, jf_err_t *err)
{
    char text[2048] = {0};
    (void) snprintf(text, sizeof text, "coordinator:\n  influx:\n%s" T_BOARD, influx);
    return jf_fleet_config_parse(text, strlen(text), "t.yaml", "/etc/lab", err);
}

static void test_v1_defaults(void **state)
{
    (void) state;
    jf_err_t err = {0};
    jf_fleet_config_t *f = t_parse("    url: http://127.0.0.1:8086\n    db: lab\n", &err);
    assert_non_null(f);
    const jf_influx_config_t *c = &f->coord.influx;
    assert_true(c->enabled);
    assert_string_equal(c->url, "http://127.0.0.1:8086");
    assert_string_equal(c->db, "lab");
    assert_string_equal(c->rp, "");
    assert_int_equal(c->batch, JF_INFLUX_DEFAULT_BATCH);
    assert_int_equal(c->flush_interval_us, JF_INFLUX_DEFAULT_FLUSH_US);
    assert_int_equal(c->timeout_us, JF_INFLUX_DEFAULT_TIMEOUT_US);
    jf_fleet_config_destroy(&f);
}

static void test_v2_and_absent(void **state)
{
    (void) state;
    jf_err_t err = {0};
    jf_fleet_config_t *f = t_parse("    url: https://influx:8086\n    org: o\n    bucket: b\n"
                                   "    token_file: secrets/token\n    batch: 100\n"
                                   "    flush_interval: 250ms\n    timeout: 3s\n",
                                   &err);
    assert_non_null(f);
    const jf_influx_config_t *c = &f->coord.influx;
    assert_string_equal(c->bucket, "b");
    assert_string_equal(c->token_file, "/etc/lab/secrets/token");
    assert_int_equal(c->batch, 100);
    assert_int_equal(c->flush_interval_us, 250000);
    assert_int_equal(c->timeout_us, 3000000);
    jf_fleet_config_destroy(&f);
    f = jf_fleet_config_parse(T_BOARD, strlen(T_BOARD), "t.yaml", "/", &err);
    assert_non_null(f);
    assert_false(f->coord.influx.enabled);
    jf_fleet_config_destroy(&f);
}

typedef struct t_bad {
    const char *influx;
    const char *fragment;
} t_bad_t;

static void test_errors(void **state)
{
    (void) state;
    static const t_bad_t rows[] = {
        {"    db: lab\n", "t.yaml:3:5: "},
        {"    url: ftp://x\n    db: lab\n", "t.yaml:3:10: 'url' must start with http://"},
        {"    url: http://x\n", "t.yaml:3:5: influx needs exactly one of 'db'"},
        {"    url: http://x\n    db: a\n    bucket: b\n    org: o\n", "exactly one of 'db'"},
        {"    url: http://x\n    bucket: b\n", "t.yaml:3:5: influx 'bucket' needs 'org'"},
        {"    url: http://x\n    db: a\n    org: o\n", "t.yaml:5:10: 'org' goes with 'bucket'"},
        {"    url: http://x\n    org: o\n    bucket: b\n    rp: r\n", "t.yaml:6:9: 'rp' goes with"},
        {"    url: http://x\n    db: a\n    batch: 0\n", "t.yaml:5:12: "},
        {"    url: http://x\n    db: a\n    flush_interval: 5\n", "t.yaml:5:21: "},
        {"    url: http://x\n    db: a\n    timeout: 20m\n", "t.yaml:5:14: "},
        {"    url: http://x\n    db: a\n    tokenfile: t\n", "t.yaml:5:5: unknown key 'tokenfile'"},
        {"    url: http://x\n    db: ''\n", "t.yaml:4:9: 'db' must not be empty"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        jf_err_t err = {0};
        jf_fleet_config_t *f = t_parse(rows[i].influx, &err);
        if (f || err.code != -EINVAL || !strstr(err.msg, rows[i].fragment)) {
            print_error("row %zu: got code %d '%s', want '%s'\n", i, err.code, err.msg,
                        rows[i].fragment);
        }
        assert_null(f);
        assert_int_equal(err.code, -EINVAL);
        assert_non_null(strstr(err.msg, rows[i].fragment));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v1_defaults),
        cmocka_unit_test(test_v2_and_absent),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
