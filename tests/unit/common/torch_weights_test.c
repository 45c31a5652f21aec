/* Unit tests for the shim's weight sets (jf_torch.h, issue 14): a save/load round trip gives the
 * same values, FedAvg of three sets with weights 1, 2, 3 equals the weighted mean computed here
 * element by element, another model's weights are refused naming the tensor, integer buffers
 * (VGG-11's BatchNorm counters) take the maximum, and truncated, bit-flipped or re-wrapped
 * garbage blobs are -EINVAL, never a crash. */
#include "jf_torch.h"
#include "torch_weights_peek.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#define T_REL_TOL      1e-6 // relative tolerance of the FedAvg check
#define T_ABS_FLOOR    1e-9 // below this magnitude the tolerance is absolute
#define T_FLIPS        300  // single-bit corruptions tried
#define T_TRUNC_STRIDE 997  // truncation lengths tried past the first T_TRUNC_DENSE
#define T_TRUNC_DENSE  64
#define T_HEADER_BYTES 16 // the envelope (jf_torch.h)

static jf_torch_session_t *t_session(jf_torch_model_kind_t model, uint64_t seed)
{
    jf_torch_session_opts_t opts = {.model = model, .device = JF_TORCH_DEVICE_CPU, .seed = seed};
    jf_err_t err = {0};
    jf_torch_session_t *s = jf_torch_session_new(&opts, &err);
    if (!s) {
        fail_msg("session: %s", err.msg);
    }
    return s;
}

typedef struct t_blob {
    void *bytes;
    size_t len;
} t_blob_t;

static t_blob_t t_save(jf_torch_session_t *s)
{
    t_blob_t b = {0};
    jf_err_t err = {0};
    if (jf_torch_session_weights_save(s, &b.bytes, &b.len, &err) != 0) {
        fail_msg("save: %s", err.msg);
    }
    return b;
}

static double *t_flatten(const t_blob_t *b, size_t *ret_n)
{
    double *v = NULL;
    jf_err_t err = {0};
    if (jf_torch_weights_flatten(b->bytes, b->len, &v, ret_n, &err) != 0) {
        fail_msg("flatten: %s", err.msg);
    }
    return v;
}

// Whether two weight sets hold the same floating values (their bytes need not be the same).
static void t_assert_same_values(const t_blob_t *a, const t_blob_t *b)
{
    size_t na = 0, nb = 0;
    double *va = t_flatten(a, &na), *vb = t_flatten(b, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(va, vb, na * sizeof *va);
    free(va);
    free(vb);
}

// A few SGD steps on a constant batch, so that the weights (and BatchNorm's counters) move.
static void t_steps(jf_torch_session_t *s, jf_torch_model_kind_t model, int steps)
{
    jf_torch_shape_t shape = {0};
    assert_int_equal(jf_torch_model_shape(model, &shape, NULL), 0);
    size_t batch = 2, floats = (size_t) (shape.channels * shape.height * shape.width);
    float *x = calloc(batch * floats, sizeof *x);
    int64_t y[2] = {0, 1};
    assert_non_null(x);
    for (size_t i = 0; i < batch * floats; i++) {
        x[i] = (float) ((i * 7919) % 13) / 13.0f - 0.5f;
    }
    for (int k = 0; k < steps; k++) {
        jf_err_t err = {0};
        double loss = 0.0;
        assert_int_equal(jf_torch_session_step(s, x, y, batch, &loss, &err), 0);
    }
    free(x);
}

static void test_round_trip(void **state)
{
    (void) state;
    jf_torch_session_t *a = t_session(JF_TORCH_MODEL_LENET5, 1);
    jf_torch_session_t *b = t_session(JF_TORCH_MODEL_LENET5, 2);
    t_steps(a, JF_TORCH_MODEL_LENET5, 2); // momentum in a's optimiser; weights off the seed's
    t_blob_t wa = t_save(a), wb = t_save(b);
    size_t na = 0, nb = 0;
    double *va = t_flatten(&wa, &na), *vb = t_flatten(&wb, &nb);
    assert_int_equal(na, nb);
    assert_true(na > 60000); // LeNet-5 has 61 706 parameters (docs/simulator.md)
    assert_true(memcmp(va, vb, na * sizeof *va) != 0);
    jf_err_t err = {0};
    assert_int_equal(jf_torch_session_weights_load(b, wa.bytes, wa.len, &err), 0);
    t_blob_t wb2 = t_save(b);
    size_t nb2 = 0;
    double *vb2 = t_flatten(&wb2, &nb2);
    assert_int_equal(nb2, na);
    assert_memory_equal(vb2, va, na * sizeof *va);
    printf("weights_lenet5_bytes=%zu\nweights_lenet5_values=%zu\n", wa.len, na);
    free(va);
    free(vb);
    free(vb2);
    free(wa.bytes);
    free(wb.bytes);
    free(wb2.bytes);
    jf_torch_session_destroy(&a);
    jf_torch_session_destroy(&b);
}

static void test_average_is_weighted_mean(void **state)
{
    (void) state;
    t_blob_t blobs[3];
    double *v[3];
    size_t n[3];
    for (int i = 0; i < 3; i++) {
        jf_torch_session_t *s = t_session(JF_TORCH_MODEL_LENET5, 10 + (uint64_t) i);
        blobs[i] = t_save(s);
        v[i] = t_flatten(&blobs[i], &n[i]);
        jf_torch_session_destroy(&s);
    }
    const void *bytes[3] = {blobs[0].bytes, blobs[1].bytes, blobs[2].bytes};
    size_t lens[3] = {blobs[0].len, blobs[1].len, blobs[2].len};
    double w[3] = {1.0, 2.0, 3.0};
    t_blob_t avg = {0};
    jf_err_t err = {0};
    assert_int_equal(jf_torch_weights_average(bytes, lens, w, 3, &avg.bytes, &avg.len, &err), 0);
    size_t nm = 0;
    double *m = t_flatten(&avg, &nm), worst = 0.0;
    assert_int_equal(nm, n[0]);
    for (size_t k = 0; k < nm; k++) {
        double want = (1.0 * v[0][k] + 2.0 * v[1][k] + 3.0 * v[2][k]) / 6.0;
        double rel = fabs(m[k] - want) / fmax(fabs(want), T_ABS_FLOOR);
        worst = fmax(worst, rel);
        if (rel > T_REL_TOL) {
            fail_msg("value %zu: average %.9g, weighted mean %.9g", k, m[k], want);
        }
    }
    printf("fedavg_values=%zu\nfedavg_max_rel_err=%.3g\n", nm, worst);
    for (int i = 0; i < 3; i++) {
        free(v[i]);
        free(blobs[i].bytes);
    }
    free(m);
    free(avg.bytes);
}

static void test_other_model_refused(void **state)
{
    (void) state;
    jf_torch_session_t *l = t_session(JF_TORCH_MODEL_LENET5, 1);
    jf_torch_session_t *r = t_session(JF_TORCH_MODEL_RESNET18, 1);
    t_blob_t wl = t_save(l), wr = t_save(r);
    t_blob_t before = t_save(l);
    jf_err_t err = {0};
    assert_int_equal(jf_torch_session_weights_load(l, wr.bytes, wr.len, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "tensor 0 is 'stem.weight'"));
    assert_non_null(strstr(err.msg, "expected 'conv1.weight'"));
    t_blob_t after = t_save(l); // unchanged by the failed load
    t_assert_same_values(&after, &before);
    const void *bytes[2] = {wl.bytes, wr.bytes};
    size_t lens[2] = {wl.len, wr.len};
    double w[2] = {1.0, 1.0};
    void *out = NULL;
    size_t out_len = 0;
    err = (jf_err_t){0};
    assert_int_equal(jf_torch_weights_average(bytes, lens, w, 2, &out, &out_len, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "blob 1"));
    assert_null(out);
    double bad[2] = {0.0, 0.0}, neg[2] = {1.0, -1.0};
    assert_int_equal(jf_torch_weights_average(bytes, lens, bad, 2, &out, &out_len, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "add up to 0"));
    assert_int_equal(jf_torch_weights_average(bytes, lens, neg, 2, &out, &out_len, &err), -EINVAL);
    assert_int_equal(jf_torch_weights_average(bytes, lens, w, 0, &out, &out_len, &err), -EINVAL);
    free(wl.bytes);
    free(wr.bytes);
    free(before.bytes);
    free(after.bytes);
    jf_torch_session_destroy(&l);
    jf_torch_session_destroy(&r);
}

// VGG-11's BatchNorm layers count their training steps (num_batches_tracked, int64): after 0, 1
// and 2 steps the average of the three sets holds 2, and its floating values stay the mean.
static void test_integer_buffers_take_max(void **state)
{
    (void) state;
    t_blob_t blobs[3];
    for (int i = 0; i < 3; i++) {
        jf_torch_session_t *s = t_session(JF_TORCH_MODEL_VGG11, 5);
        t_steps(s, JF_TORCH_MODEL_VGG11, i);
        blobs[i] = t_save(s);
        jf_torch_session_destroy(&s);
    }
    const char *name = "features.1.num_batches_tracked";
    for (int i = 0; i < 3; i++) {
        int64_t count = -1;
        assert_int_equal(jft_weights_peek_int(blobs[i].bytes, blobs[i].len, name, &count), 0);
        assert_int_equal(count, i);
    }
    const void *bytes[3] = {blobs[0].bytes, blobs[1].bytes, blobs[2].bytes};
    size_t lens[3] = {blobs[0].len, blobs[1].len, blobs[2].len};
    double w[3] = {3.0, 2.0, 1.0}; // the largest count has the smallest weight
    t_blob_t avg = {0};
    jf_err_t err = {0};
    assert_int_equal(jf_torch_weights_average(bytes, lens, w, 3, &avg.bytes, &avg.len, &err), 0);
    int64_t count = -1;
    assert_int_equal(jft_weights_peek_int(avg.bytes, avg.len, name, &count), 0);
    assert_int_equal(count, 2);
    printf("vgg11_num_batches_tracked_avg=%lld\n", (long long) count);
    for (int i = 0; i < 3; i++) {
        free(blobs[i].bytes);
    }
    free(avg.bytes);
}

// Every entry point refuses a bad blob with -EINVAL and leaves the session's weights alone.
static void t_expect_refused(jf_torch_session_t *s, const void *bytes, size_t len, const char *what)
{
    jf_err_t err = {0};
    int rc = jf_torch_session_weights_load(s, bytes, len, &err);
    if (rc != -EINVAL) {
        fail_msg("%s: load gave %d (%s), expected -EINVAL", what, rc, err.msg);
    }
    double *v = NULL;
    size_t n = 0;
    rc = jf_torch_weights_flatten(bytes, len, &v, &n, &err);
    if (rc != -EINVAL) {
        fail_msg("%s: flatten gave %d (%s), expected -EINVAL", what, rc, err.msg);
    }
    double w = 1.0;
    void *out = NULL;
    size_t out_len = 0;
    rc = jf_torch_weights_average(&bytes, &len, &w, 1, &out, &out_len, &err);
    if (rc != -EINVAL) {
        fail_msg("%s: average gave %d (%s), expected -EINVAL", what, rc, err.msg);
    }
}

// bytes as an envelope with a correct length and CRC-32: the payload reaches libtorch's parser.
static unsigned char *t_wrap(const unsigned char *payload, size_t len)
{
    unsigned char *out = malloc(T_HEADER_BYTES + len + 1);
    assert_non_null(out);
    uint32_t crc = (uint32_t) crc32(crc32(0L, Z_NULL, 0), payload, (uInt) len);
    memcpy(out, "JFW1", 4);
    for (int i = 0; i < 4; i++) {
        out[4 + i] = (unsigned char) (crc >> (8 * i));
    }
    for (int i = 0; i < 8; i++) {
        out[8 + i] = (unsigned char) ((uint64_t) len >> (8 * i));
    }
    memcpy(out + T_HEADER_BYTES, payload, len);
    return out;
}

static void test_hostile_blobs_refused(void **state)
{
    (void) state;
    jf_torch_session_t *s = t_session(JF_TORCH_MODEL_LENET5, 3);
    t_blob_t good = t_save(s);
    unsigned char *copy = malloc(good.len);
    assert_non_null(copy);
    size_t tried = 0;
    for (size_t len = 0; len < good.len; len += len < T_TRUNC_DENSE ? 1 : T_TRUNC_STRIDE) {
        memcpy(copy, good.bytes, len);
        t_expect_refused(s, copy, len, "truncated");
        tried++;
    }
    t_expect_refused(s, good.bytes, good.len - 1, "truncated by one byte");
    uint32_t rng = 2024;
    for (int i = 0; i < T_FLIPS; i++, tried++) {
        memcpy(copy, good.bytes, good.len);
        rng = rng * 1103515245u + 12345u;
        size_t at = i < 128 ? (size_t) i / 8 : ((size_t) rng << 8 ^ rng >> 8) % good.len;
        copy[at] ^= (unsigned char) (1u << (i % 8));
        t_expect_refused(s, copy, good.len, "bit flip");
    }
    // Past the envelope: truncated and garbage payloads with a correct CRC reach libtorch.
    const unsigned char *payload = (const unsigned char *) good.bytes + T_HEADER_BYTES;
    size_t payload_len = good.len - T_HEADER_BYTES;
    for (size_t len = 1; len < payload_len; len = len * 3 + 1, tried++) {
        unsigned char *wrapped = t_wrap(payload, len);
        t_expect_refused(s, wrapped, T_HEADER_BYTES + len, "re-wrapped truncated payload");
        free(wrapped);
    }
    unsigned char garbage[4096];
    for (size_t i = 0; i < sizeof garbage; i++) {
        rng = rng * 1103515245u + 12345u;
        garbage[i] = (unsigned char) (rng >> 16);
    }
    unsigned char *wrapped = t_wrap(garbage, sizeof garbage);
    t_expect_refused(s, wrapped, T_HEADER_BYTES + sizeof garbage, "re-wrapped garbage");
    free(wrapped);
    t_expect_refused(s, NULL, 0, "NULL");
    // After all that the session still holds its own weights.
    t_blob_t again = t_save(s);
    t_assert_same_values(&again, &good);
    printf("hostile_blobs_refused=%zu\n", tried + 2);
    free(copy);
    free(good.bytes);
    free(again.bytes);
    jf_torch_session_destroy(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_average_is_weighted_mean),
        cmocka_unit_test(test_other_model_refused),
        cmocka_unit_test(test_integer_buffers_take_max),
        cmocka_unit_test(test_hostile_blobs_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
