/* unit.blob: weight blobs' names and wire text (jf_blob) and the blob family's builders and
 * decoders (jf_msg_blob, docs/protocol.md §5.7): a known sha256, base64 round trips at the chunk
 * limit, hostile base64 refused, built messages decoded back to the same bytes, parts out of
 * range refused by the builders. The malformed messages are in tests/fixtures/messages/bad/
 * (unit.msg). */
#include "jf_blob.h"
#include "jf_msg.h"
#include "jf_msg_blob.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_sha256_known_vector(void **state)
{
    (void) state;
    char hex[JF_BLOB_SHA256_HEX_LEN + 1];
    // FIPS 180-2 appendix B.1: sha256("abc").
    assert_int_equal(jf_blob_sha256("abc", 3, hex, NULL), 0);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_true(jf_blob_is_sha256(hex));
    hex[3] = 'A';
    assert_false(jf_blob_is_sha256(hex));
    assert_false(jf_blob_is_sha256("abc"));
    assert_false(jf_blob_is_sha256(NULL));
}

static void test_base64_round_trip_at_the_limit(void **state)
{
    (void) state;
    static const size_t lens[] = {
        1, 2, 3, 4, 1000, JF_BLOB_CHUNK_MAX_BYTES - 1, JF_BLOB_CHUNK_MAX_BYTES};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        unsigned char *in = malloc(lens[i]);
        assert_non_null(in);
        for (size_t k = 0; k < lens[i]; k++) {
            in[k] = (unsigned char) (k * 131 + i);
        }
        char *text = jf_blob_base64(in, lens[i]);
        assert_non_null(text);
        void *out = NULL;
        size_t n = 0;
        assert_int_equal(jf_blob_unbase64(text, JF_BLOB_CHUNK_MAX_BYTES, &out, &n, NULL), 0);
        assert_int_equal(n, lens[i]);
        assert_memory_equal(in, out, n);
        free(out);
        free(text);
        free(in);
    }
}

static void test_base64_hostile(void **state)
{
    (void) state;
    static const struct {
        const char *text;
        const char *frag;
    } rows[] = {
        {"abc", "not padded base64"},    // not a multiple of 4
        {"ab!d", "not base64"},          // a character outside the alphabet
        {"ab==cdef", "not base64"},      // padding inside
        {"YWJj\n", "not padded base64"}, // a newline
        {"YW Jj", "not padded base64"},  // a space
        {"YWJjZA", "not padded base64"}, // unpadded
        {"YQ==YQ==", "not base64"},      // data after padding
        {"AAAAAAAA", "decodes to 6 bytes, more than 5"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        void *out = NULL;
        size_t n = 0;
        jf_err_t err = {0};
        assert_int_equal(jf_blob_unbase64(rows[i].text, 5, &out, &n, &err), -EINVAL);
        if (!strstr(err.msg, rows[i].frag)) {
            fail_msg("'%s': got '%s', expected '%s'", rows[i].text, err.msg, rows[i].frag);
        }
        assert_null(out);
    }
}

// Builds, encodes and decodes back; returns the decoded message (caller: jf_msg_fini).
static jf_msg_t t_round_trip(json_t *built, unsigned dir)
{
    assert_non_null(built);
    size_t len = 0;
    char *text = jf_msg_encode(built, &len);
    json_decref(built);
    assert_non_null(text);
    assert_true(len < JF_MSG_MAX_BYTES_AGENT);
    jf_msg_t m = {0};
    const char *code = NULL;
    int64_t id = -1;
    jf_err_t err = {0};
    int rc = jf_msg_decode(text, len, dir, JF_MSG_MAX_BYTES_AGENT, &m, &code, &id, &err);
    free(text);
    if (rc != 0) {
        fail_msg("decode: %s", err.msg);
    }
    return m;
}

static void test_builders_round_trip(void **state)
{
    (void) state;
    unsigned char *bytes = malloc(JF_BLOB_CHUNK_MAX_BYTES);
    assert_non_null(bytes);
    for (size_t k = 0; k < JF_BLOB_CHUNK_MAX_BYTES; k++) {
        bytes[k] = (unsigned char) (k ^ 0x5a);
    }
    char sha[JF_BLOB_SHA256_HEX_LEN + 1];
    assert_int_equal(jf_blob_sha256("x", 1, sha, NULL), 0);
    jf_msg_blob_part_t part = {.blob = sha,
                               .size_bytes = 3 * JF_BLOB_CHUNK_MAX_BYTES,
                               .offset = 2 * JF_BLOB_CHUNK_MAX_BYTES,
                               .data = bytes,
                               .len = JF_BLOB_CHUNK_MAX_BYTES};
    jf_msg_t m = t_round_trip(jf_msg_blob_data_new(8, 7, &part), JF_MSG_TO_AGENT);
    assert_int_equal(m.type, JF_MSG_BLOB_DATA);
    assert_non_null(m.chunk);
    assert_int_equal(m.chunk->re, 7);
    assert_string_equal(m.chunk->blob, sha);
    assert_int_equal(m.chunk->offset, part.offset);
    assert_int_equal(m.chunk->size_bytes, part.size_bytes);
    assert_int_equal(m.chunk->len, part.len);
    assert_memory_equal(m.chunk->data, bytes, part.len);
    jf_msg_fini(&m);

    jf_msg_run_ref_t ref = {.run = "r0123456789abcdef", .attempt = 2, .seq = 9};
    m = t_round_trip(jf_msg_run_weights_new(5, &ref, &part), JF_MSG_TO_COORD);
    assert_int_equal(m.type, JF_MSG_RUN_WEIGHTS);
    assert_string_equal(m.chunk->ref.run, ref.run);
    assert_int_equal(m.chunk->ref.attempt, 2);
    assert_int_equal(m.chunk->ref.seq, 9);
    assert_memory_equal(m.chunk->data, bytes, part.len);
    jf_msg_fini(&m);

    m = t_round_trip(jf_msg_blob_get_new(3, sha, 98304), JF_MSG_TO_COORD);
    char name[JF_BLOB_SHA256_HEX_LEN + 1];
    int64_t offset = 0;
    assert_int_equal(jf_msg_blob_get_parse(m.body, name, &offset, NULL), 0);
    assert_string_equal(name, sha);
    assert_int_equal(offset, 98304);
    jf_msg_fini(&m);
    free(bytes);
}

static void test_builders_refuse_parts_out_of_range(void **state)
{
    (void) state;
    char sha[JF_BLOB_SHA256_HEX_LEN + 1];
    assert_int_equal(jf_blob_sha256("x", 1, sha, NULL), 0);
    static unsigned char bytes[JF_BLOB_CHUNK_MAX_BYTES + 1];
    const jf_msg_blob_part_t bad[] = {
        {.blob = sha, .size_bytes = 10, .offset = 0, .data = bytes, .len = 0},
        {.blob = sha, .size_bytes = 10, .offset = 5, .data = bytes, .len = 6},
        {.blob = sha, .size_bytes = JF_BLOB_MAX_BYTES + 1, .offset = 0, .data = bytes, .len = 1},
        {.blob = sha,
         .size_bytes = 2 * JF_BLOB_CHUNK_MAX_BYTES,
         .offset = 0,
         .data = bytes,
         .len = JF_BLOB_CHUNK_MAX_BYTES + 1},
        {.blob = sha, .size_bytes = 10, .offset = -1, .data = bytes, .len = 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_null(jf_msg_blob_data_new(1, 1, &bad[i]));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_known_vector),
        cmocka_unit_test(test_base64_round_trip_at_the_limit),
        cmocka_unit_test(test_base64_hostile),
        cmocka_unit_test(test_builders_round_trip),
        cmocka_unit_test(test_builders_refuse_parts_out_of_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
