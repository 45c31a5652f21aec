/* Unit tests for jf_yaml: the node tree and its positions, every rejection (table-driven, with the
 * file:line:col each must give), the size and depth limits, loading, and the helpers. */
#include "jf_yaml.h"

#include "jft_fs.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define T_MAX_BYTES 4096

static jf_yaml_t *t_parse(const char *text, jf_err_t *err)
{
    return jf_yaml_parse(text, strlen(text), "t.yaml", T_MAX_BYTES, err);
}

// Parses text that must be valid and returns the document (the test fails otherwise).
static jf_yaml_t *t_parse_ok(const char *text)
{
    jf_err_t err = {0};
    jf_yaml_t *doc = t_parse(text, &err);
    if (!doc) {
        fail_msg("parse failed: %s", err.msg);
    }
    return doc;
}

static void t_assert_pos(const jf_yaml_node_t *node, int line, int column)
{
    assert_non_null(node);
    assert_int_equal(jf_yaml_node_line(node), line);
    assert_int_equal(jf_yaml_node_column(node), column);
}

static void test_tree_and_positions(void **state)
{
    (void) state;
    char path[PATH_MAX] = {0};
    jft_fixture("yaml/good/tree.yaml", path);
    jf_err_t err = {0};
    jf_yaml_t *doc = jf_yaml_load(path, T_MAX_BYTES, &err);
    assert_non_null(doc);
    const jf_yaml_node_t *root = jf_yaml_root(doc);
    assert_int_equal(jf_yaml_node_kind(root), JF_YAML_MAPPING);
    assert_int_equal(jf_yaml_node_size(root), 4);
    assert_null(jf_yaml_node_text(root));
    t_assert_pos(jf_yaml_node_key(root, 0), 2, 1);
    assert_string_equal(jf_yaml_node_text(jf_yaml_node_key(root, 1)), "list");
    const jf_yaml_node_t *name = jf_yaml_node_get(root, "name");
    assert_string_equal(jf_yaml_node_text(name), "demo");
    t_assert_pos(name, 2, 7);
    assert_ptr_equal(jf_yaml_node_value(root, 0), name);
    const jf_yaml_node_t *list = jf_yaml_node_get(root, "list");
    assert_int_equal(jf_yaml_node_kind(list), JF_YAML_SEQUENCE);
    assert_int_equal(jf_yaml_node_size(list), 3);
    t_assert_pos(jf_yaml_node_item(list, 1), 5, 5);
    assert_string_equal(jf_yaml_node_text(jf_yaml_node_item(list, 1)), "two");
    const jf_yaml_node_t *flow = jf_yaml_node_item(list, 2);
    t_assert_pos(flow, 6, 5);
    const jf_yaml_node_t *b = jf_yaml_node_get(flow, "b");
    t_assert_pos(b, 6, 15);
    t_assert_pos(jf_yaml_node_item(b, 1), 6, 19);
    const jf_yaml_node_t *quoted = jf_yaml_node_get(jf_yaml_node_get(root, "map"), "key");
    assert_string_equal(jf_yaml_node_text(quoted), "quoted value");
    t_assert_pos(quoted, 8, 8);
    assert_string_equal(jf_yaml_node_text(jf_yaml_node_get(root, "empty")), "");
    // Out-of-range and wrong-kind accessors give NULL, not a crash.
    assert_null(jf_yaml_node_get(root, "missing"));
    assert_null(jf_yaml_node_item(list, 3));
    assert_null(jf_yaml_node_item(root, 0));
    assert_null(jf_yaml_node_key(list, 0));
    assert_null(jf_yaml_node_value(root, 4));
    assert_null(jf_yaml_node_get(list, "name"));
    assert_int_equal(jf_yaml_node_size(name), 0);
    jf_yaml_destroy(&doc);
    assert_null(doc);
}

typedef struct t_bad {
    const char *text;
    int code;
    const char *fragment; // must appear in err.msg
} t_bad_t;

static const t_bad_t t_bad_docs[] = {
    {"a: 1\nb:\n  c: 2\n   d: 3\n", -EINVAL, "t.yaml:4:5: mapping values are not allowed"},
    {"a: 1\n\tb: 2\n", -EINVAL, "t.yaml:2:1: found a tab character"},
    {"a: [1, 2\n", -EINVAL,
     "t.yaml:2:1: did not find expected ',' or ']' (while parsing a flow "
     "sequence at 1:4)"},
    {"a: 1\nb: 2\na: 3\n", -EINVAL, "t.yaml:3:1: duplicate key 'a' (first at 1:1)"},
    {"m:\n  x: 1\n  y: {x: 1, x: 2}\n", -EINVAL, "t.yaml:3:13: duplicate key 'x' (first at 3:7)"},
    {"a: &x 1\n", -EINVAL, "t.yaml:1:4: anchors are not allowed, found '&x'"},
    {"a: &l [1]\n", -EINVAL, "t.yaml:1:4: anchors are not allowed"},
    {"a: &m {k: 1}\n", -EINVAL, "t.yaml:1:4: anchors are not allowed"},
    {"a: 1\nb: *x\n", -EINVAL, "t.yaml:2:4: aliases are not allowed, found '*x'"},
    {"*x : 1\n", -EINVAL, "t.yaml:1:1: aliases are not allowed"},
    {"a: !!str 1\n", -EINVAL,
     "t.yaml:1:4: explicit tags are not allowed, found "
     "'tag:yaml.org,2002:str'"},
    {"a: !custom [1]\n", -EINVAL, "t.yaml:1:4: explicit tags are not allowed, found '!custom'"},
    {"a: !!map {k: 1}\n", -EINVAL, "t.yaml:1:4: explicit tags are not allowed"},
    {"? [a, b]\n: 1\n", -EINVAL, "t.yaml:1:3: mapping keys must be scalars"},
    {"{{k: 1}: 2}\n", -EINVAL, "t.yaml:1:2: mapping keys must be scalars"},
    {"a: 1\n---\nb: 2\n", -EINVAL, "t.yaml:2:1: more than one document"},
    {"", -EINVAL, "t.yaml:1:1: empty document"},
    {"# only a comment\n", -EINVAL, "t.yaml:1:1: empty document"},
    {"---\n", -EINVAL, "t.yaml:2:1: empty document"},
    {"a: \"x\\0y\"\n", -EINVAL, "t.yaml:1:4: scalar contains a NUL character"},
    {"a: b\xff\n", -EINVAL, "t.yaml:1:5: invalid leading UTF-8 octet (byte 0xff)"},
    {"a: b\n\x01\n", -EINVAL, "t.yaml:2:1: control characters are not allowed"},
};

static void test_rejects(void **state)
{
    (void) state;
    for (size_t i = 0; i < sizeof t_bad_docs / sizeof t_bad_docs[0]; i++) {
        jf_err_t err = {0};
        jf_yaml_t *doc = t_parse(t_bad_docs[i].text, &err);
        if (doc || err.code != t_bad_docs[i].code || !strstr(err.msg, t_bad_docs[i].fragment)) {
            fail_msg("row %zu: code %d, message '%s', expected %d and '%s'", i, err.code, err.msg,
                     t_bad_docs[i].code, t_bad_docs[i].fragment);
        }
        jf_yaml_destroy(&doc);
    }
}

// "k:" followed by depth-1 nested flow sequences: the root mapping is level 1.
static char *t_nested(int depth)
{
    size_t n = 3 + 2 * (size_t) depth + 2;
    char *text = calloc(1, n);
    assert_non_null(text);
    memcpy(text, "k: ", 3);
    for (int i = 0; i < depth - 1; i++) {
        text[3 + i] = '[';
        text[3 + (depth - 1) + i] = ']';
    }
    return text;
}

static void test_depth_limit(void **state)
{
    (void) state;
    char *ok = t_nested(JF_YAML_DEPTH_MAX);
    jf_yaml_t *doc = t_parse_ok(ok);
    jf_yaml_destroy(&doc);
    char *deep = t_nested(JF_YAML_DEPTH_MAX + 1);
    jf_err_t err = {0};
    doc = t_parse(deep, &err);
    assert_null(doc);
    assert_int_equal(err.code, -EINVAL);
    assert_non_null(strstr(err.msg, "t.yaml:1:35: nesting is deeper than 32 levels"));
    free(ok);
    free(deep);
}

static void test_size_limit(void **state)
{
    (void) state;
    const char *text = "a: 1\n";
    jf_err_t err = {0};
    jf_yaml_t *doc = jf_yaml_parse(text, 5, "big.yaml", 4, &err);
    assert_null(doc);
    assert_int_equal(err.code, -EFBIG);
    assert_string_equal(err.msg, "big.yaml:1:1: input is larger than the limit of 4 bytes");
    doc = jf_yaml_parse(text, 5, NULL, 5, &err);
    assert_non_null(doc);
    jf_yaml_destroy(&doc);
    doc = jf_yaml_parse(NULL, 0, NULL, 5, &err);
    assert_null(doc);
    assert_string_equal(err.msg, "<input>:1:1: empty document");
}

static void test_load(void **state)
{
    (void) state;
    char dir[PATH_MAX] = {0};
    assert_int_equal(jft_tmpdir_new(dir), 0);
    char path[PATH_MAX + 16] = {0};
    (void) snprintf(path, sizeof path, "%s/ten.yaml", dir);
    assert_int_equal(jft_write_file(path, "a: 123456\n"), 0);
    jf_err_t err = {0};
    jf_yaml_t *doc = jf_yaml_load(path, 10, &err);
    assert_non_null(doc);
    assert_string_equal(jf_yaml_node_text(jf_yaml_node_get(jf_yaml_root(doc), "a")), "123456");
    jf_yaml_destroy(&doc);
    doc = jf_yaml_load(path, 9, &err);
    assert_null(doc);
    assert_int_equal(err.code, -EFBIG);
    assert_non_null(strstr(err.msg, "ten.yaml:1:1: input is larger than the limit of 9 bytes"));
    doc = jf_yaml_load(dir, 9, &err);
    assert_null(doc);
    assert_int_equal(err.code, -EISDIR);
    (void) snprintf(path, sizeof path, "%s/missing.yaml", dir);
    doc = jf_yaml_load(path, 9, &err);
    assert_null(doc);
    assert_int_equal(err.code, -ENOENT);
    assert_non_null(strstr(err.msg, "missing.yaml: cannot read: No such file"));
    jft_tmpdir_remove(dir);
}

static void test_check_keys(void **state)
{
    (void) state;
    static const char *const allowed[] = {"name", "type", "power_modes"};
    jf_yaml_t *doc = t_parse_ok("- name: nx-01\n  powr_modes: [a]\n- name: nx-02\n  zzz: 1\n");
    const jf_yaml_node_t *root = jf_yaml_root(doc);
    jf_err_t err = {0};
    assert_int_equal(jf_yaml_check_keys(root, allowed, 3, "the file", &err), -EINVAL);
    assert_string_equal(err.msg, "t.yaml:1:1: the document must be a mapping, got a sequence");
    assert_int_equal(
        jf_yaml_check_keys(jf_yaml_node_item(root, 0), allowed, 3, "board 'nx-01'", &err), -EINVAL);
    assert_string_equal(err.msg, "t.yaml:2:3: unknown key 'powr_modes' in board 'nx-01', "
                                 "expected one of: name, type, power_modes; did you mean "
                                 "'power_modes'?");
    assert_int_equal(jf_yaml_check_keys(jf_yaml_node_item(root, 1), allowed, 3, "x", &err),
                     -EINVAL);
    assert_string_equal(err.msg, "t.yaml:4:3: unknown key 'zzz' in x, expected one of: name, type, "
                                 "power_modes");
    assert_int_equal(jf_yaml_check_keys(jf_yaml_node_item(root, 0), allowed, 3, "x", NULL),
                     -EINVAL);
    static const char *const both[] = {"name", "powr_modes"};
    assert_int_equal(jf_yaml_check_keys(jf_yaml_node_item(root, 0), both, 2, "x", &err), 0);
    jf_yaml_destroy(&doc);
}

// A long list of allowed keys is cut with "..." so the suggestion still fits the message.
static void test_check_keys_long_list(void **state)
{
    (void) state;
    static const char *const allowed[] = {
        "alpha_one",    "bravo_two",   "charlie_three", "delta_four",        "echo_five",
        "foxtrot_six",  "golf_seven",  "hotel_eight",   "india_nine",        "juliet_ten",
        "kilo_eleven",  "lima_twelve", "mike_thirteen", "november_fourteen", "oscar_fifteen",
        "papa_sixteen", "quebec_17",   "romeo_18",      "sierra_19",         "tango_20",
        "uniform_21",   "victor_22",   "whiskey_23"};
    jf_yaml_t *doc = t_parse_ok("whiskey_32: 1\n");
    jf_err_t err = {0};
    size_t n = sizeof allowed / sizeof allowed[0];
    assert_int_equal(jf_yaml_check_keys(jf_yaml_root(doc), allowed, n, "the file", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "t.yaml:1:1: unknown key 'whiskey_32' in the file, expected "
                                    "one of: alpha_one, bravo_two"));
    assert_non_null(strstr(err.msg, ", ...; did you mean 'whiskey_23'?"));
    assert_true(strlen(err.msg) < JF_ERR_MSG_MAX - 1);
    jf_yaml_destroy(&doc);
}

static void test_require_and_expect(void **state)
{
    (void) state;
    jf_yaml_t *doc = t_parse_ok("a: 1\nb: [x]\nc: {d: e}\n");
    const jf_yaml_node_t *root = jf_yaml_root(doc);
    const jf_yaml_node_t *v = NULL;
    jf_err_t err = {0};
    assert_int_equal(jf_yaml_node_require(root, "b", "the test", &v, &err), 0);
    assert_ptr_equal(v, jf_yaml_node_get(root, "b"));
    assert_int_equal(jf_yaml_node_require(root, "z", "the test", &v, &err), -EINVAL);
    assert_string_equal(err.msg, "t.yaml:1:1: missing required key 'z' in the test");
    assert_int_equal(jf_yaml_node_expect(v, JF_YAML_SEQUENCE, &err), 0);
    assert_int_equal(jf_yaml_node_expect(v, JF_YAML_MAPPING, &err), -EINVAL);
    assert_string_equal(err.msg, "t.yaml:2:4: 'b' must be a mapping, got a sequence");
    assert_int_equal(jf_yaml_node_expect(jf_yaml_node_item(v, 0), JF_YAML_MAPPING, &err), -EINVAL);
    assert_string_equal(err.msg, "t.yaml:2:5: 'b'[0] must be a mapping, got a scalar");
    assert_int_equal(jf_yaml_node_expect(jf_yaml_node_get(root, "c"), JF_YAML_SCALAR, &err),
                     -EINVAL);
    assert_string_equal(err.msg, "t.yaml:3:4: 'c' must be a scalar, got a mapping");
    jf_yaml_destroy(&doc);
}

static void test_numbers(void **state)
{
    (void) state;
    jf_yaml_t *doc = t_parse_ok("i: -42\nlist: [1, 99]\nd: 2.5\nbad: 3x\nm: {k: 1}\n");
    const jf_yaml_node_t *root = jf_yaml_root(doc);
    const jf_yaml_node_t *list = jf_yaml_node_get(root, "list");
    jf_err_t err = {0};
    int64_t v64 = 0;
    int v = 0;
    double d = 0;
    assert_int_equal(jf_yaml_node_to_i64(jf_yaml_node_get(root, "i"), -100, 0, &v64, &err), 0);
    assert_int_equal(v64, -42);
    assert_int_equal(jf_yaml_node_to_int(jf_yaml_node_item(list, 0), 0, 16, &v, &err), 0);
    assert_int_equal(v, 1);
    v = 7;
    assert_int_equal(jf_yaml_node_to_int(jf_yaml_node_item(list, 1), 0, 16, &v, &err), -EINVAL);
    assert_int_equal(v, 7); // untouched on failure
    assert_string_equal(err.msg, "t.yaml:2:11: 'list'[1]: 99 is out of range [0, 16]");
    assert_int_equal(jf_yaml_node_to_i64(jf_yaml_node_get(root, "bad"), 0, 9, &v64, &err), -EINVAL);
    assert_string_equal(err.msg, "t.yaml:4:6: 'bad': expected an integer, got '3x'");
    assert_int_equal(jf_yaml_node_to_int(jf_yaml_node_get(root, "m"), 0, 9, &v, &err), -EINVAL);
    assert_string_equal(err.msg, "t.yaml:5:4: 'm' must be a scalar, got a mapping");
    assert_int_equal(jf_yaml_node_to_double(jf_yaml_node_get(root, "d"), 0, 3, &d, &err), 0);
    assert_true(d > 2.49 && d < 2.51);
    assert_int_equal(jf_yaml_node_to_double(jf_yaml_node_get(root, "d"), 0, 1, &d, &err), -EINVAL);
    assert_string_equal(err.msg, "t.yaml:3:4: 'd': 2.5 is out of range [0, 1]");
    assert_int_equal(jf_yaml_node_to_double(list, 0, 1, &d, &err), -EINVAL);
    jf_yaml_destroy(&doc);
}

static void test_bool_duration_strings(void **state)
{
    (void) state;
    jf_yaml_t *doc = t_parse_ok("t: yes\nf: maybe\nd: 500ms\nn: 5\nid: nx-01\nbad: NX 01\n");
    const jf_yaml_node_t *root = jf_yaml_root(doc);
    jf_err_t err = {0};
    bool b = false;
    assert_int_equal(jf_yaml_node_to_bool(jf_yaml_node_get(root, "t"), &b, &err), 0);
    assert_true(b);
    assert_int_equal(jf_yaml_node_to_bool(jf_yaml_node_get(root, "f"), &b, &err), -EINVAL);
    assert_string_equal(err.msg, "t.yaml:2:4: 'f': expected true or false, got 'maybe'");
    assert_int_equal(jf_yaml_node_to_bool(root, &b, &err), -EINVAL);
    int64_t us = 0;
    const jf_yaml_node_t *d = jf_yaml_node_get(root, "d");
    assert_int_equal(jf_yaml_node_to_duration_us(d, 0, 1000000, &us, &err), 0);
    assert_int_equal(us, 500000);
    assert_int_equal(jf_yaml_node_to_duration_us(d, 0, 1000, &us, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "t.yaml:3:4: 'd': duration '500ms' is out of range"));
    assert_int_equal(jf_yaml_node_to_duration_us(jf_yaml_node_get(root, "n"), 0, 10, &us, &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "t.yaml:4:4: 'n': expected a duration with a unit"));
    assert_int_equal(jf_yaml_node_to_duration_us(root, 0, 10, &us, &err), -EINVAL);
    char buf[8] = {0};
    assert_int_equal(jf_yaml_node_to_ident(jf_yaml_node_get(root, "id"), buf, sizeof buf, &err), 0);
    assert_string_equal(buf, "nx-01");
    assert_int_equal(jf_yaml_node_to_str(jf_yaml_node_get(root, "bad"), buf, 5, &err), -EINVAL);
    assert_string_equal(err.msg, "t.yaml:6:6: 'bad' is longer than 4 bytes");
    assert_int_equal(jf_yaml_node_to_ident(jf_yaml_node_get(root, "bad"), buf, sizeof buf, &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "t.yaml:6:6: 'bad' must be a name of 1..64"));
    assert_non_null(strstr(err.msg, "got 'NX 01'"));
    assert_int_equal(jf_yaml_node_to_str(root, buf, sizeof buf, &err), -EINVAL);
    assert_int_equal(jf_yaml_node_to_ident(root, buf, sizeof buf, &err), -EINVAL);
    jf_yaml_destroy(&doc);
}

static void test_suggest(void **state)
{
    (void) state;
    static const char *const words[] = {"power_modes", "storage", "labels", "seed"};
    assert_string_equal(jf_yaml_suggest("powr_modes", words, 4), "power_modes");
    assert_string_equal(jf_yaml_suggest("strage", words, 4), "storage");
    assert_string_equal(jf_yaml_suggest("lables", words, 4), "labels"); // a swap costs 2
    assert_null(jf_yaml_suggest("zzzzzz", words, 4));
    assert_null(jf_yaml_suggest("sd", words, 4)); // "seed" is 2 away, but so is everything short
    assert_null(jf_yaml_suggest("storage", words, 0));
    char longword[80] = {0};
    memset(longword, 'a', sizeof longword - 1);
    assert_null(jf_yaml_suggest(longword, words, 4));
}

static void test_error_and_destroy(void **state)
{
    (void) state;
    jf_yaml_t *doc = t_parse_ok("a:\n  b: 1\n");
    const jf_yaml_node_t *b = jf_yaml_node_get(jf_yaml_node_get(jf_yaml_root(doc), "a"), "b");
    jf_err_t err = {0};
    assert_int_equal(jf_yaml_error(&err, -ERANGE, b, "value %d is odd", 1), -ERANGE);
    assert_int_equal(err.code, -ERANGE);
    assert_string_equal(err.msg, "t.yaml:2:6: value 1 is odd");
    assert_int_equal(jf_yaml_error(NULL, -EINVAL, b, "x"), -EINVAL);
    jf_yaml_destroy(&doc);
    jf_yaml_destroy(&doc);
    jf_yaml_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_and_positions),
        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_size_limit),
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_check_keys),
        cmocka_unit_test(test_check_keys_long_list),
        cmocka_unit_test(test_require_and_expect),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_bool_duration_strings),
        cmocka_unit_test(test_suggest),
        cmocka_unit_test(test_error_and_destroy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
