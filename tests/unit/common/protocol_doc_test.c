/* Unit test: docs/protocol.md and the decoder agree. Every message example in the document (each
 * JSON object starting {"v":1 in its text, inline or in a block) must pass the real decoder,
 * and the document's statements about what the decoder refuses are checked against it. */
#include "jf_msg.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S_DOC_MAX_BYTES (1024 * 1024)
#define S_ALL_DIRS      (JF_MSG_TO_COORD | JF_MSG_TO_AGENT | JF_MSG_TO_CTL | JF_MSG_TO_CLI)

static char *s_read_doc(void)
{
    FILE *f = fopen(JF_PROTOCOL_DOC, "r");
    char *buf = calloc(1, S_DOC_MAX_BYTES + 1);
    size_t n = f && buf ? fread(buf, 1, S_DOC_MAX_BYTES, f) : 0;
    if (f) {
        fclose(f);
    }
    if (n == 0) {
        free(buf);
        fail_msg("%s: cannot read", JF_PROTOCOL_DOC);
    }
    return buf;
}

static int s_line_of(const char *doc, const char *at)
{
    int line = 1;
    for (const char *p = doc; p < at; p++) {
        line += *p == '\n';
    }
    return line;
}

// Decodes one example (the JSON object at p) as any receiver; 0 or the decoder's code.
static const char *s_check_example(const char *doc, const char *p, size_t *ret_len)
{
    json_error_t jerr;
    json_t *j = json_loadb(p, strlen(p), JSON_DISABLE_EOF_CHECK, &jerr);
    if (!j) {
        fail_msg("%s:%d: example is not JSON: %s", JF_PROTOCOL_DOC, s_line_of(doc, p), jerr.text);
    }
    json_decref(j);
    *ret_len = (size_t)jerr.position;
    jf_msg_t msg = {0};
    const char *code = NULL;
    int64_t id = -1;
    jf_err_t err = {0};
    if (jf_msg_decode(p, *ret_len, S_ALL_DIRS, JF_MSG_MAX_BYTES_COORD, &msg, &code, &id, &err) !=
        0) {
        fprintf(stderr, "%s:%d: %s: %s\n", JF_PROTOCOL_DOC, s_line_of(doc, p), code, err.msg);
        return code ? code : "?";
    }
    jf_msg_fini(&msg);
    return NULL;
}

static void test_every_example_decodes(void **state)
{
    (void)state;
    char *doc = s_read_doc();
    int examples = 0, refused = 0;
    for (const char *p = strstr(doc, "{\"v\":1"); p; p = strstr(p, "{\"v\":1")) {
        size_t len = 0;
        refused += s_check_example(doc, p, &len) != NULL;
        examples++;
        p += len ? len : 1;
    }
    printf("protocol_doc_examples=%d\nprotocol_doc_refused=%d\n", examples, refused);
    free(doc);
    assert_true(examples >= 30); // the document has an example of every message type
    assert_int_equal(refused, 0);
}

// §6.2: a ctl.status request has no members; one with `re` is refused like any unknown member.
static void test_status_with_re_refused(void **state)
{
    (void)state;
    const char text[] = "{\"v\":1,\"type\":\"ctl.status\",\"id\":1,\"re\":3}";
    jf_msg_t msg = {0};
    const char *code = NULL;
    int64_t id = -1;
    jf_err_t err = {0};
    assert_int_not_equal(jf_msg_decode(text, strlen(text), JF_MSG_TO_CTL, JF_MSG_MAX_BYTES_COORD,
                                       &msg, &code, &id, &err),
                         0);
    assert_string_equal(code, "bad_field");
    char *doc = s_read_doc();
    assert_null(strstr(doc, "tolerates a member `re`"));
    assert_non_null(strstr(doc, "A `ctl.status` with any member, `re` included, is refused"));
    free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_example_decodes),
        cmocka_unit_test(test_status_with_re_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
