/* unit.store_blobs: the store's weight blobs (coord_store_blobs.h, docs/protocol.md §5.7): a blob
 * put and read back whole and by chunks, and the assembly of a run's returned chunks, which must
 * name one blob, cover it without gap and hash to its name, and ignores retransmitted chunks. */
#include "coord_store_blobs.h"
#include "coord_store_internal.h"
#include "store_support.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define T_RUN  "r0123456789abcdef"
#define T_SIZE (JF_BLOB_CHUNK_MAX_BYTES * 2 + 1000) // three chunks, the last short

static unsigned char s_bytes[T_SIZE];

static void t_fill(void)
{
    for (size_t i = 0; i < T_SIZE; i++) {
        s_bytes[i] = (unsigned char) (i * 7 + 3);
    }
}

static void test_put_get_read(void **state)
{
    tstore_ctx_t *c = *state;
    t_fill();
    char sha[JF_BLOB_SHA256_HEX_LEN + 1], sha2[JF_BLOB_SHA256_HEX_LEN + 1],
        want[JF_BLOB_SHA256_HEX_LEN + 1];
    assert_int_equal(jf_blob_sha256(s_bytes, T_SIZE, want, NULL), 0);
    assert_int_equal(coord_store_blob_put(c->store, s_bytes, T_SIZE, sha, NULL), 0);
    assert_string_equal(sha, want);
    assert_int_equal(coord_store_blob_put(c->store, s_bytes, T_SIZE, sha2, NULL), 0); // again
    assert_string_equal(sha2, want);
    void *data = NULL;
    size_t len = 0;
    assert_int_equal(coord_store_blob_get(c->store, sha, &data, &len, NULL), 0);
    assert_int_equal(len, T_SIZE);
    assert_memory_equal(data, s_bytes, T_SIZE);
    free(data);
    int64_t size = 0;
    assert_int_equal(coord_store_blob_read(c->store, sha, T_SIZE - 10, JF_BLOB_CHUNK_MAX_BYTES,
                                           &data, &len, &size, NULL),
                     0);
    assert_int_equal(len, 10);
    assert_int_equal(size, T_SIZE);
    assert_memory_equal(data, s_bytes + T_SIZE - 10, 10);
    free(data);
    assert_int_equal(coord_store_blob_read(c->store, sha, T_SIZE, 100, &data, &len, &size, NULL),
                     0);
    assert_int_equal(len, 0); // past the end: nothing
    free(data);
    jf_err_t err = {0};
    want[0] = want[0] == 'a' ? 'b' : 'a';
    assert_int_equal(coord_store_blob_get(c->store, want, &data, &len, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "no blob"));
    assert_int_equal(coord_store_blob_put(c->store, s_bytes, 0, sha, &err), -EINVAL);
}

// Stores chunk [off, off + len) of s_bytes as (T_RUN, attempt), naming blob sha and size.
static void t_chunk(coord_store_t *store, int64_t attempt, const char *sha, int64_t size,
                    size_t off, size_t len)
{
    jf_msg_blob_chunk_t ch = {
        .size_bytes = size, .offset = (int64_t) off, .data = s_bytes + off, .len = len};
    memcpy(ch.blob, sha, sizeof ch.blob);
    assert_int_equal(coord_store_weights_add_chunk(store, T_RUN, attempt, &ch, NULL), 0);
}

static void test_assemble_in_any_order_with_retransmissions(void **state)
{
    tstore_ctx_t *c = *state;
    t_fill();
    char sha[JF_BLOB_SHA256_HEX_LEN + 1], got[JF_BLOB_SHA256_HEX_LEN + 1];
    assert_int_equal(jf_blob_sha256(s_bytes, T_SIZE, sha, NULL), 0);
    const size_t k = JF_BLOB_CHUNK_MAX_BYTES;
    t_chunk(c->store, 1, sha, T_SIZE, 2 * k, T_SIZE - 2 * k);
    t_chunk(c->store, 1, sha, T_SIZE, 0, k);
    t_chunk(c->store, 1, sha, T_SIZE, 0, k); // a retransmission
    t_chunk(c->store, 1, sha, T_SIZE, k, k);
    jf_err_t err = {0};
    assert_int_equal(coord_store_run_weights(c->store, T_RUN, 1, got, &err), -ENOENT);
    assert_int_equal(coord_store_weights_assemble(c->store, T_RUN, 1, got, &err), 0);
    assert_string_equal(got, sha);
    memset(got, 0, sizeof got);
    assert_int_equal(coord_store_run_weights(c->store, T_RUN, 1, got, NULL), 0);
    assert_string_equal(got, sha);
    void *data = NULL;
    size_t len = 0;
    assert_int_equal(coord_store_blob_get(c->store, sha, &data, &len, NULL), 0);
    assert_memory_equal(data, s_bytes, T_SIZE);
    free(data);
}

static void test_assemble_refuses(void **state)
{
    tstore_ctx_t *c = *state;
    t_fill();
    char sha[JF_BLOB_SHA256_HEX_LEN + 1], other[JF_BLOB_SHA256_HEX_LEN + 1];
    char got[JF_BLOB_SHA256_HEX_LEN + 1];
    assert_int_equal(jf_blob_sha256(s_bytes, T_SIZE, sha, NULL), 0);
    assert_int_equal(jf_blob_sha256("x", 1, other, NULL), 0);
    const size_t k = JF_BLOB_CHUNK_MAX_BYTES;
    struct {
        int64_t attempt;
        const char *frag;
    } rows[] = {{1, "no chunk"}, {2, "expected offset"}, {3, "another blob"}, {4, "sha256 is"}};
    t_chunk(c->store, 2, sha, T_SIZE, 0, k); // a gap: the middle chunk is missing
    t_chunk(c->store, 2, sha, T_SIZE, 2 * k, T_SIZE - 2 * k);
    t_chunk(c->store, 3, sha, T_SIZE, 0, k); // the second chunk names another blob
    t_chunk(c->store, 3, other, T_SIZE, k, k);
    t_chunk(c->store, 4, other, T_SIZE, 0, k); // complete, but the bytes are not 'other'
    t_chunk(c->store, 4, other, T_SIZE, k, k);
    t_chunk(c->store, 4, other, T_SIZE, 2 * k, T_SIZE - 2 * k);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        jf_err_t err = {0};
        assert_int_equal(coord_store_weights_assemble(c->store, T_RUN, rows[i].attempt, got, &err),
                         -EBADMSG);
        if (!strstr(err.msg, rows[i].frag)) {
            fail_msg("attempt %lld: '%s' lacks '%s'", (long long) rows[i].attempt, err.msg,
                     rows[i].frag);
        }
        assert_int_equal(coord_store_run_weights(c->store, T_RUN, rows[i].attempt, got, NULL),
                         -ENOENT);
    }
}

// Dropping an attempt's chunks leaves nothing to assemble for it, and the other attempts' chunks.
static void test_drop_chunks(void **state)
{
    tstore_ctx_t *c = *state;
    t_fill();
    char sha[JF_BLOB_SHA256_HEX_LEN + 1], got[JF_BLOB_SHA256_HEX_LEN + 1];
    assert_int_equal(jf_blob_sha256(s_bytes, T_SIZE, sha, NULL), 0);
    const size_t k = JF_BLOB_CHUNK_MAX_BYTES;
    for (int64_t attempt = 1; attempt <= 2; attempt++) {
        t_chunk(c->store, attempt, sha, T_SIZE, 0, k);
        t_chunk(c->store, attempt, sha, T_SIZE, k, k);
        t_chunk(c->store, attempt, sha, T_SIZE, 2 * k, T_SIZE - 2 * k);
    }
    assert_int_equal(coord_store_weights_drop(c->store, T_RUN, 1, NULL), 0);
    assert_int_equal(coord_store_weights_drop(c->store, T_RUN, 9, NULL), 0); // none: no error
    jf_err_t err = {0};
    assert_int_equal(coord_store_weights_assemble(c->store, T_RUN, 1, got, &err), -EBADMSG);
    assert_non_null(strstr(err.msg, "no chunk"));
    assert_int_equal(coord_store_weights_assemble(c->store, T_RUN, 2, got, NULL), 0);
    assert_string_equal(got, sha);
}

static int64_t t_chunk_rows(coord_store_t *store, const char *run)
{
    int64_t n = -1;
    jf_err_t err = {0};
    if (coord_store_scalar(store, "SELECT count(*) FROM weight_chunks WHERE run = ?",
                           COORD_BINDS(coord_text(run)), &n, &err) != 0) {
        fail_msg("count chunks of %s: %s", run, err.msg);
    }
    return n;
}

// Every way an attempt ends takes its chunks with it: requeued (lost, or the agent busy),
// failed (a run.reject, a run.failed), done; and at a coordinator's start the chunks of
// attempts no longer in progress (a store an older coordinator left them in) are dropped, those
// of a running attempt kept.
static void test_attempt_end_drops_chunks(void **state)
{
    tstore_ctx_t *c = *state;
    t_fill();
    char sha[JF_BLOB_SHA256_HEX_LEN + 1];
    assert_int_equal(jf_blob_sha256(s_bytes, T_SIZE, sha, NULL), 0);
    jf_run_spec_t runs[3] = {tstore_spec(TSTORE_BOARD, 1), tstore_spec(TSTORE_BOARD, 2),
                             tstore_spec(TSTORE_BOARD, 3)};
    (void) tstore_put(c->store, runs, 3);
    jf_err_t err = {0};
    // Requeued: the attempt was lost.
    int64_t a = tstore_assign(c->store, runs[0].run_id);
    jf_msg_blob_chunk_t ch = {.size_bytes = T_SIZE, .data = s_bytes, .len = 100};
    memcpy(ch.blob, sha, sizeof ch.blob);
    assert_int_equal(coord_store_weights_add_chunk(c->store, runs[0].run_id, a, &ch, NULL), 0);
    assert_int_equal(t_chunk_rows(c->store, runs[0].run_id), 1);
    bool failed = true;
    assert_int_equal(
        coord_store_run_requeue(c->store, runs[0].run_id, a, 3, "agent lost", &failed, &err), 0);
    assert_false(failed);
    assert_int_equal(t_chunk_rows(c->store, runs[0].run_id), 0);
    // Failed: rejected by the agent after some chunks.
    a = tstore_assign(c->store, runs[1].run_id);
    assert_int_equal(coord_store_weights_add_chunk(c->store, runs[1].run_id, a, &ch, NULL), 0);
    assert_int_equal(
        coord_store_run_finish(c->store, runs[1].run_id, a, false, "invalid", "no", &err), 0);
    assert_int_equal(t_chunk_rows(c->store, runs[1].run_id), 0);
    // Orphans: chunks of an ended attempt (as an older coordinator left them) go, those of the
    // running attempt stay.
    int64_t b = tstore_assign(c->store, runs[2].run_id);
    assert_int_equal(coord_store_run_start(c->store, runs[2].run_id, b, NULL), 0);
    assert_int_equal(coord_store_weights_add_chunk(c->store, runs[2].run_id, b, &ch, NULL), 0);
    assert_int_equal(coord_store_weights_add_chunk(c->store, runs[1].run_id, a, &ch, NULL), 0);
    assert_int_equal(coord_store_weights_add_chunk(c->store, runs[2].run_id, b + 7, &ch, NULL), 0);
    int64_t dropped = -1;
    assert_int_equal(coord_store_weights_drop_orphans(c->store, &dropped, &err), 0);
    assert_int_equal(dropped, 2);
    assert_int_equal(t_chunk_rows(c->store, runs[1].run_id), 0);
    assert_int_equal(t_chunk_rows(c->store, runs[2].run_id), 1);
}

#define T_TEST(f) cmocka_unit_test_setup_teardown(f, tstore_setup, tstore_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T_TEST(test_put_get_read),
        T_TEST(test_assemble_in_any_order_with_retransmissions),
        T_TEST(test_assemble_refuses),
        T_TEST(test_drop_chunks),
        T_TEST(test_attempt_end_drops_chunks),
    };
    int rc = tstore_main_begin();
    if (rc != 0) {
        return rc;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    tstore_main_end();
    return rc;
}
