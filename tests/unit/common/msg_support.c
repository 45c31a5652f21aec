/* Helpers shared by the wire-protocol unit tests (msg_support.h). */
#include "msg_support.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

size_t tmsg_max_bytes(unsigned dir)
{
    return dir == JF_MSG_TO_AGENT ? JF_MSG_MAX_BYTES_AGENT : JF_MSG_MAX_BYTES_COORD;
}

// Reads messages/<sub>/<name> from JF_FIXTURES (may hold NUL bytes: the length is returned).
char *tmsg_read_fixture(const char *sub, const char *name, size_t *ret_len)
{
    const char *root = getenv("JF_FIXTURES");
    assert_non_null(root);
    char path[PATH_MAX];
    (void) snprintf(path, sizeof path, "%s/messages/%s/%s", root, sub, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail_msg("cannot open fixture %s", path);
    }
    char *buf = malloc(TMSG_FILE_MAX);
    assert_non_null(buf);
    *ret_len = fread(buf, 1, TMSG_FILE_MAX, f);
    assert_int_equal(fclose(f), 0);
    assert_true(*ret_len < TMSG_FILE_MAX);
    return buf;
}

tmsg_decoded_t tmsg_decode(const void *data, size_t len, unsigned dir)
{
    tmsg_decoded_t d = {.code = "unset", .id = -99};
    d.rc = jf_msg_decode(data, len, dir, tmsg_max_bytes(dir), &d.msg, &d.code, &d.id, &d.err);
    return d;
}

// Checks a failed decode: return code, error code, message fragment, reported id, no body.
// Prints the mismatch and returns false, so a table run reports every bad row at once.
bool tmsg_check_fail(const char *what, const tmsg_decoded_t *d, int rc, const char *code,
                         const char *frag, int64_t id)
{
    if (d->rc != rc || !d->code || strcmp(d->code, code) != 0 || !strstr(d->err.msg, frag) ||
        d->id != id || d->msg.body) {
        print_error("%s: got rc %d code '%s' id %lld msg '%s'; expected rc %d code '%s' id %lld "
                    "and a message containing '%s'\n",
                    what, d->rc, d->code ? d->code : "(null)", (long long) d->id, d->err.msg, rc,
                    code, (long long) id, frag);
        return false;
    }
    return true;
}

void tmsg_expect_fail(const char *what, const tmsg_decoded_t *d, int rc, const char *code,
                          const char *frag, int64_t id)
{
    if (!tmsg_check_fail(what, d, rc, code, frag, id)) {
        fail_msg("%s: unexpected decode result", what);
    }
}

// Encodes msg (consumed), decodes it for dir and returns the decoded message (caller: fini).
jf_msg_t tmsg_roundtrip(json_t *msg, unsigned dir)
{
    assert_non_null(msg);
    size_t len = 0;
    char *text = jf_msg_encode(msg, &len);
    json_decref(msg);
    assert_non_null(text);
    assert_int_equal(len, strlen(text));
    tmsg_decoded_t d = tmsg_decode(text, len, dir);
    if (d.rc != 0) {
        fail_msg("decode of '%.200s' failed: %s (%s)", text, d.err.msg, d.code);
    }
    free(text);
    assert_null(d.code);
    return d.msg;
}

const char *tmsg_str(const json_t *body, const char *key)
{
    const char *s = json_string_value(json_object_get(body, key));
    assert_non_null(s);
    return s;
}

int64_t tmsg_int(const json_t *body, const char *key)
{
    const json_t *v = json_object_get(body, key);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}
