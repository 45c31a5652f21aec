/* Unit tests for train_loader: every sample once per epoch, reshuffling, drop_last, in-order
 * hand-out, the prefetch bound, errors from fetch, and overlap of fetch with compute (none with
 * workers = 0, some with workers >= 1). A probe fetch function stands in for the dataset and a
 * sleep stands in for the model, so no torch is involved. */
#include "jf_units.h"
#include "train_loader.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define T_SAMPLES_MAX   256
#define T_INTERVALS_MAX 1024
#define T_FLOATS        4 // floats per probe sample

typedef struct t_interval {
    int64_t start_us;
    int64_t end_us;
} t_interval_t;

// Stands in for a dataset: records each fetch and can be slow or fail.
typedef struct t_probe {
    pthread_mutex_t lock;
    int64_t fetch_sleep_us; // per sample
    bool fail;              // fail when fetching fail_index
    size_t fail_index;
    size_t calls; // fetch calls started
    t_interval_t fetches[T_INTERVALS_MAX];
    size_t nfetches;
} t_probe_t;

static void t_sleep_us(int64_t us)
{
    struct timespec ts = {.tv_sec = us / JF_US_PER_S, .tv_nsec = (us % JF_US_PER_S) * 1000};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static int t_fetch(void *ctx, size_t index, float *ret_x, int64_t *ret_y, jf_err_t *err)
{
    t_probe_t *p = ctx;
    (void)pthread_mutex_lock(&p->lock);
    p->calls++;
    (void)pthread_mutex_unlock(&p->lock);
    int64_t start = jf_clock_mono_us();
    if (p->fail && index == p->fail_index) {
        return jf_err_set(err, -EIO, "probe: sample %zu unreadable", index);
    }
    if (p->fetch_sleep_us > 0) {
        t_sleep_us(p->fetch_sleep_us);
    }
    for (size_t i = 0; i < T_FLOATS; i++) {
        ret_x[i] = (float)index;
    }
    *ret_y = (int64_t)(index % 10);
    (void)pthread_mutex_lock(&p->lock);
    if (p->nfetches < T_INTERVALS_MAX) {
        p->fetches[p->nfetches++] = (t_interval_t){start, jf_clock_mono_us()};
    }
    (void)pthread_mutex_unlock(&p->lock);
    return 0;
}

static train_loader_t *t_loader(t_probe_t *p, size_t samples, size_t batch, int workers,
                                bool drop_last)
{
    (void)pthread_mutex_init(&p->lock, NULL);
    train_loader_opts_t o = {.samples = samples,
                             .sample_floats = T_FLOATS,
                             .batch = batch,
                             .workers = workers,
                             .prefetch = 2,
                             .drop_last = drop_last,
                             .seed = 42,
                             .fetch = t_fetch,
                             .fetch_ctx = p};
    jf_err_t err = {0};
    train_loader_t *loader = train_loader_new(&o, &err);
    assert_non_null(loader);
    return loader;
}

// Runs one epoch, counting each index handed out and checking the batch contents and order.
static size_t t_epoch_counts(train_loader_t *loader, uint64_t epoch, size_t *counts,
                             size_t *ret_order)
{
    jf_err_t err = {0};
    assert_int_equal(train_loader_epoch_start(loader, epoch, &err), 0);
    const train_batch_t *b = NULL;
    size_t nbatches = 0, n = 0;
    while (train_loader_next(loader, &b, &err) == 0 && b) {
        assert_int_equal(b->index, nbatches++);
        for (size_t j = 0; j < b->samples; j++) {
            assert_true(b->indices[j] < T_SAMPLES_MAX);
            assert_true(b->x[j * T_FLOATS] == (float)b->indices[j]);
            assert_int_equal(b->y[j], (int64_t)(b->indices[j] % 10));
            counts[b->indices[j]]++;
            ret_order[n++] = b->indices[j];
        }
    }
    assert_int_equal(err.code, 0);
    return nbatches;
}

static void t_every_sample_once(int workers)
{
    t_probe_t p = {0};
    train_loader_t *loader = t_loader(&p, 103, 10, workers, false);
    assert_int_equal(train_loader_batches_per_epoch(loader), 11);
    for (uint64_t epoch = 0; epoch < 2; epoch++) {
        size_t counts[T_SAMPLES_MAX] = {0}, order[T_SAMPLES_MAX] = {0};
        assert_int_equal(t_epoch_counts(loader, epoch, counts, order), 11);
        for (size_t i = 0; i < 103; i++) {
            assert_int_equal(counts[i], 1);
        }
    }
    train_loader_destroy(&loader);
    assert_null(loader);
}

static void test_every_sample_once_workers_0(void **state)
{
    (void)state;
    t_every_sample_once(0);
}

static void test_every_sample_once_workers_3(void **state)
{
    (void)state;
    t_every_sample_once(3);
}

static void t_drop_last(int workers)
{
    t_probe_t p = {0};
    train_loader_t *loader = t_loader(&p, 103, 10, workers, true);
    assert_int_equal(train_loader_batches_per_epoch(loader), 10);
    size_t counts[T_SAMPLES_MAX] = {0}, order[T_SAMPLES_MAX] = {0};
    assert_int_equal(t_epoch_counts(loader, 0, counts, order), 10);
    size_t seen = 0;
    for (size_t i = 0; i < 103; i++) {
        assert_true(counts[i] <= 1);
        seen += counts[i];
    }
    assert_int_equal(seen, 100); // the remainder of 3 is dropped
    train_loader_destroy(&loader);
}

static void test_drop_last_drops_remainder(void **state)
{
    (void)state;
    t_drop_last(0);
    t_drop_last(2);
}

static void test_order_changes_between_epochs_and_is_seeded(void **state)
{
    (void)state;
    t_probe_t p1 = {0}, p2 = {0};
    train_loader_t *a = t_loader(&p1, 100, 10, 2, false);
    train_loader_t *b = t_loader(&p2, 100, 10, 0, false);
    size_t counts[T_SAMPLES_MAX] = {0};
    size_t a0[T_SAMPLES_MAX] = {0}, a1[T_SAMPLES_MAX] = {0}, b1[T_SAMPLES_MAX] = {0};
    (void)t_epoch_counts(a, 0, counts, a0);
    (void)t_epoch_counts(a, 1, counts, a1);
    (void)t_epoch_counts(b, 1, counts, b1);
    assert_memory_not_equal(a0, a1, 100 * sizeof a0[0]); // reshuffled
    assert_memory_equal(a1, b1, 100 * sizeof a1[0]);     // same seed and epoch, same order
    size_t identity = 0;
    for (size_t i = 0; i < 100; i++) {
        identity += a0[i] == i;
    }
    assert_true(identity < 50); // shuffled, not sequential
    train_loader_destroy(&a);
    train_loader_destroy(&b);
}

static void test_max_batches_limits_epoch(void **state)
{
    (void)state;
    t_probe_t p = {0};
    train_loader_opts_t o = {.samples = 100,
                             .sample_floats = T_FLOATS,
                             .batch = 10,
                             .workers = 1,
                             .max_batches = 3,
                             .fetch = t_fetch,
                             .fetch_ctx = &p};
    (void)pthread_mutex_init(&p.lock, NULL);
    train_loader_t *loader = train_loader_new(&o, NULL);
    assert_non_null(loader);
    assert_int_equal(train_loader_batches_per_epoch(loader), 3);
    size_t counts[T_SAMPLES_MAX] = {0}, order[T_SAMPLES_MAX] = {0};
    assert_int_equal(t_epoch_counts(loader, 0, counts, order), 3);
    train_loader_destroy(&loader);
}

static bool t_overlaps(const t_interval_t *a, const t_interval_t *b)
{
    return a->start_us < b->end_us && b->start_us < a->end_us;
}

// Runs an epoch with slow compute; returns how many fetch intervals overlap a compute interval.
// Also checks the prefetch bound: before batch b is computed, at most (b + 1 + window) batches
// have been started.
static size_t t_count_overlaps(int workers)
{
    t_probe_t p = {.fetch_sleep_us = 300};
    train_loader_t *loader = t_loader(&p, 32, 4, workers, false);
    t_interval_t compute[8] = {{0}};
    jf_err_t err = {0};
    assert_int_equal(train_loader_epoch_start(loader, 0, &err), 0);
    const train_batch_t *b = NULL;
    for (size_t n = 0; train_loader_next(loader, &b, &err) == 0 && b; n++) {
        (void)pthread_mutex_lock(&p.lock);
        size_t window = (size_t)workers * 2;
        assert_true(p.calls <= (n + 1 + window) * 4);
        (void)pthread_mutex_unlock(&p.lock);
        compute[n].start_us = jf_clock_mono_us();
        t_sleep_us(4000); // the "model"
        compute[n].end_us = jf_clock_mono_us();
    }
    train_loader_destroy(&loader);
    size_t overlaps = 0;
    for (size_t i = 0; i < p.nfetches; i++) {
        for (size_t c = 0; c < 8; c++) {
            overlaps += t_overlaps(&p.fetches[i], &compute[c]);
        }
    }
    return overlaps;
}

static void test_workers_0_never_overlaps_fetch_and_compute(void **state)
{
    (void)state;
    assert_int_equal(t_count_overlaps(0), 0);
}

static void test_workers_overlap_fetch_and_compute(void **state)
{
    (void)state;
    assert_true(t_count_overlaps(1) > 4);
    assert_true(t_count_overlaps(2) > 4);
}

static void t_fetch_error(int workers)
{
    t_probe_t p = {.fail = true, .fail_index = 0};
    train_loader_t *loader = t_loader(&p, 50, 5, workers, false);
    jf_err_t err = {0};
    assert_int_equal(train_loader_epoch_start(loader, 0, &err), 0);
    const train_batch_t *b = NULL;
    int rc = 0;
    while ((rc = train_loader_next(loader, &b, &err)) == 0 && b) {
    }
    assert_int_equal(rc, -EIO);
    assert_non_null(strstr(err.msg, "probe: sample 0 unreadable"));
    // The failure ends the epoch: asking again is misuse, not a wait for a batch never made.
    assert_int_equal(train_loader_next(loader, &b, &err), -EINVAL);
    train_loader_destroy(&loader);
}

static void test_fetch_error_reaches_caller(void **state)
{
    (void)state;
    t_fetch_error(0);
    t_fetch_error(3);
}

static void test_destroy_mid_epoch_joins_workers(void **state)
{
    (void)state;
    t_probe_t p = {0};
    train_loader_t *loader = t_loader(&p, 200, 2, 4, false);
    jf_err_t err = {0};
    assert_int_equal(train_loader_epoch_start(loader, 0, &err), 0);
    const train_batch_t *b = NULL;
    assert_int_equal(train_loader_next(loader, &b, &err), 0);
    assert_non_null(b);
    train_loader_destroy(&loader); // workers are blocked on the prefetch bound: must not hang
    assert_null(loader);
}

static void test_bad_options_and_misuse(void **state)
{
    (void)state;
    t_probe_t p = {0};
    (void)pthread_mutex_init(&p.lock, NULL);
    const struct {
        train_loader_opts_t opts;
        const char *fragment;
    } rows[] = {
        {{.samples = 10, .sample_floats = 1, .batch = 0, .fetch = t_fetch}, "batch must be"},
        {{.samples = 10, .sample_floats = 1, .batch = 2, .workers = 17, .fetch = t_fetch},
         "workers must be"},
        {{.samples = 10, .sample_floats = 1, .batch = 2, .prefetch = 99, .fetch = t_fetch},
         "prefetch must be"},
        {{.samples = 3, .sample_floats = 1, .batch = 4, .drop_last = true, .fetch = t_fetch},
         "no whole minibatch"},
        {{.samples = 3, .sample_floats = 1, .batch = 4}, "fetch are required"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        jf_err_t err = {0};
        assert_null(train_loader_new(&rows[i].opts, &err));
        assert_int_equal(err.code, -EINVAL);
        assert_non_null(strstr(err.msg, rows[i].fragment));
    }
    train_loader_t *loader = t_loader(&p, 10, 2, 0, false);
    const train_batch_t *b = NULL;
    jf_err_t err = {0};
    assert_int_equal(train_loader_next(loader, &b, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "no epoch started"));
    train_loader_destroy(&loader);
    train_loader_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_sample_once_workers_0),
        cmocka_unit_test(test_every_sample_once_workers_3),
        cmocka_unit_test(test_drop_last_drops_remainder),
        cmocka_unit_test(test_order_changes_between_epochs_and_is_seeded),
        cmocka_unit_test(test_max_batches_limits_epoch),
        cmocka_unit_test(test_workers_0_never_overlaps_fetch_and_compute),
        cmocka_unit_test(test_workers_overlap_fetch_and_compute),
        cmocka_unit_test(test_fetch_error_reaches_caller),
        cmocka_unit_test(test_destroy_mid_epoch_joins_workers),
        cmocka_unit_test(test_bad_options_and_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
