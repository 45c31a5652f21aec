/* Unit tests for jf_run_spec: the stable run id (pinned, deterministic, sensitive to every
 * field), validation of every field's range and vocabulary, and the strict JSON form. Field edits
 * are table rows {field, value} applied to a known-good spec. */
#include "jf_run_spec.h"

#include "jf_units.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

// The id of t_base(), computed independently (Python, FNV-1a 64 over the v1 canonical text).
// If this changes, every stored run id changes: bump the canonical form's version instead.
#define T_BASE_ID "r9877e260a432210b"
// t_power(): t_base() with a custom point and DVFS off, computed the same way over the v1 text
// plus "|custom=4,1420800000,803250000,1600000000|dvfs=off".
#define T_POWER_ID "red5b77714528af56"
// t_base() with DVFS off alone: v1 text plus "|dvfs=off".
#define T_DVFS_ID "rd908a1a148e8bf1c"

static jf_run_spec_t t_base(void)
{
    jf_run_spec_t s = {.board = "nx-01",
                       .workload = "lenet5-mnist",
                       .model = "lenet5",
                       .dataset = "mnist",
                       .epochs = 3,
                       .power_mode_id = 8,
                       .power_mode = "MODE_20W_6CORE",
                       .storage = "nvme",
                       .workers = 4,
                       .prefetch = 2,
                       .batch_size = 64,
                       .repeat = 0,
                       .threads = 0,
                       .seed = 42,
                       .drop_caches = true,
                       .telemetry_hz = 1,
                       .timeout_us = 2 * 3600 * JF_US_PER_S};
    jf_run_spec_compute_id(&s);
    return s;
}

static jf_run_spec_t t_power(void)
{
    jf_run_spec_t s = t_base();
    s.custom = (jf_run_custom_t){
        .n_cores = 4, .cpu_hz = 1420800000, .gpu_hz = 803250000, .emc_hz = 1600000000};
    s.dvfs_off = true;
    jf_run_spec_compute_id(&s);
    return s;
}

// ---------------------------------------------------------------------------------------------
// Field edits as data

typedef enum t_kind { T_STR, T_INT, T_U64, T_BOOL, T_I64 } t_kind_t;

typedef struct t_set {
    const char *field;
    size_t off, size;
    t_kind_t kind;
    const char *s; // T_STR
    int64_t v;     // the numeric kinds
    uint64_t u;    // T_U64
} t_set_t;

#define T_MEMBER(f) offsetof(jf_run_spec_t, f), sizeof(((jf_run_spec_t *) 0)->f)
#define T_SET_STR(f, x)                                                                            \
    {                                                                                              \
#f, T_MEMBER(f), T_STR, (x), 0, 0                                                          \
    }
#define T_SET_INT(f, x)                                                                            \
    {                                                                                              \
#f, T_MEMBER(f), T_INT, NULL, (x), 0                                                       \
    }
#define T_SET_I64(f, x)                                                                            \
    {                                                                                              \
#f, T_MEMBER(f), T_I64, NULL, (x), 0                                                       \
    }
#define T_SET_BOOL(f, x)                                                                           \
    {                                                                                              \
#f, T_MEMBER(f), T_BOOL, NULL, (x), 0                                                      \
    }
#define T_SET_U64(f, x)                                                                            \
    {                                                                                              \
#f, T_MEMBER(f), T_U64, NULL, 0, (x)                                                       \
    }

static void t_apply(jf_run_spec_t *spec, const t_set_t *set)
{
    char *p = (char *) spec + set->off;
    switch (set->kind) {
    case T_STR:
        (void) snprintf(p, set->size, "%s", set->s);
        break;
    case T_INT: {
        int v = (int) set->v;
        memcpy(p, &v, sizeof v);
        break;
    }
    case T_I64:
        memcpy(p, &set->v, sizeof set->v);
        break;
    case T_BOOL: {
        bool v = set->v != 0;
        memcpy(p, &v, sizeof v);
        break;
    }
    case T_U64:
        memcpy(p, &set->u, sizeof set->u);
        break;
    }
}

static void t_expect_same_spec(const jf_run_spec_t *a, const jf_run_spec_t *b)
{
    assert_string_equal(a->run_id, b->run_id);
    assert_string_equal(a->board, b->board);
    assert_string_equal(a->workload, b->workload);
    assert_string_equal(a->model, b->model);
    assert_string_equal(a->dataset, b->dataset);
    assert_string_equal(a->power_mode, b->power_mode);
    assert_string_equal(a->storage, b->storage);
    assert_int_equal(a->epochs, b->epochs);
    assert_int_equal(a->power_mode_id, b->power_mode_id);
    assert_int_equal(a->workers, b->workers);
    assert_int_equal(a->prefetch, b->prefetch);
    assert_int_equal(a->batch_size, b->batch_size);
    assert_int_equal(a->repeat, b->repeat);
    assert_int_equal(a->threads, b->threads);
    assert_int_equal(a->seed, b->seed);
    assert_int_equal(a->drop_caches, b->drop_caches);
    assert_int_equal(a->telemetry_hz, b->telemetry_hz);
    assert_int_equal(a->timeout_us, b->timeout_us);
    assert_int_equal(a->custom.n_cores, b->custom.n_cores);
    assert_int_equal(a->custom.cpu_hz, b->custom.cpu_hz);
    assert_int_equal(a->custom.gpu_hz, b->custom.gpu_hz);
    assert_int_equal(a->custom.emc_hz, b->custom.emc_hz);
    assert_int_equal(a->dvfs_off, b->dvfs_off);
    assert_int_equal(a->minibatches, b->minibatches);
    assert_string_equal(a->init_weights, b->init_weights);
    assert_int_equal(a->return_weights, b->return_weights);
    assert_string_equal(a->fl_round, b->fl_round);
    assert_int_equal(a->shard, b->shard);
    assert_int_equal(a->shards, b->shards);
}

// ---------------------------------------------------------------------------------------------
// Run id

static void test_id_is_pinned(void **state)
{
    (void) state;
    jf_run_spec_t s = t_base();
    assert_true(jf_run_spec_is_run_id(s.run_id));
    assert_string_equal(s.run_id, T_BASE_ID);
}

// Same fields, same id: bytes after the strings' NULs and the old run_id do not count.
static void test_id_is_deterministic(void **state)
{
    (void) state;
    jf_run_spec_t a = t_base();
    jf_run_spec_t b;
    memset(&b, 0xa5, sizeof b);
    const jf_run_spec_t base = t_base();
    memcpy(b.board, base.board, strlen(base.board) + 1);
    memcpy(b.workload, base.workload, strlen(base.workload) + 1);
    memcpy(b.model, base.model, strlen(base.model) + 1);
    memcpy(b.dataset, base.dataset, strlen(base.dataset) + 1);
    memcpy(b.power_mode, base.power_mode, strlen(base.power_mode) + 1);
    memcpy(b.storage, base.storage, strlen(base.storage) + 1);
    b.epochs = base.epochs;
    b.power_mode_id = base.power_mode_id;
    b.workers = base.workers;
    b.prefetch = base.prefetch;
    b.batch_size = base.batch_size;
    b.repeat = base.repeat;
    b.threads = base.threads;
    b.seed = base.seed;
    b.drop_caches = base.drop_caches;
    b.telemetry_hz = base.telemetry_hz;
    b.timeout_us = base.timeout_us;
    b.custom = base.custom;
    b.dvfs_off = base.dvfs_off;
    b.concurrent = base.concurrent;
    b.idle_s = base.idle_s;
    b.telemetry_off = base.telemetry_off;
    memcpy(b.runtime, base.runtime, strlen(base.runtime) + 1);
    b.roofline = base.roofline;
    b.minibatches = base.minibatches;
    memcpy(b.init_weights, base.init_weights, strlen(base.init_weights) + 1);
    b.return_weights = base.return_weights;
    memcpy(b.fl_round, base.fl_round, strlen(base.fl_round) + 1);
    b.shard = base.shard;
    b.shards = base.shards;
    jf_run_spec_compute_id(&b);
    assert_string_equal(a.run_id, b.run_id);
    jf_run_spec_compute_id(&a); // recomputing over an existing id gives the same id
    assert_string_equal(a.run_id, T_BASE_ID);
}

// One valid edit per field: each must give a new id.
static const t_set_t s_each_field[] = {
    T_SET_STR(board, "nx-02"),
    T_SET_STR(workload, "lenet5-mnist-b"),
    T_SET_STR(model, "vgg11"),
    T_SET_STR(dataset, "cifar10"),
    T_SET_INT(epochs, 4),
    T_SET_INT(power_mode_id, 7),
    T_SET_STR(power_mode, "MODE_20W_4CORE"),
    T_SET_STR(storage, "sd"),
    T_SET_INT(workers, 5),
    T_SET_INT(prefetch, 3),
    T_SET_INT(batch_size, 65),
    T_SET_INT(repeat, 1),
    T_SET_INT(threads, 1),
    T_SET_U64(seed, 43),
    T_SET_BOOL(drop_caches, false),
    T_SET_INT(telemetry_hz, 2),
    T_SET_I64(timeout_us, 2 * 3600 * JF_US_PER_S + JF_US_PER_S),
    T_SET_BOOL(dvfs_off, true),
    T_SET_INT(minibatches, 20),
    T_SET_STR(init_weights, "2f1ad3288c1baa3d369060da18a24b99ececb5852b0dfacfaa1aadb6e275f97a"),
    T_SET_BOOL(return_weights, true),
    T_SET_STR(fl_round, "fl-1.2"),
    T_SET_INT(shards, 3),
};

#define T_N_FIELDS (sizeof s_each_field / sizeof s_each_field[0])

static void test_id_changes_with_every_field(void **state)
{
    (void) state;
    char ids[T_N_FIELDS][JF_RUN_ID_LEN + 1];
    for (size_t i = 0; i < T_N_FIELDS; i++) {
        jf_run_spec_t s = t_base();
        t_apply(&s, &s_each_field[i]);
        assert_int_equal(jf_run_spec_validate(&s, NULL), 0); // the edit is a real, valid run
        jf_run_spec_compute_id(&s);
        assert_true(jf_run_spec_is_run_id(s.run_id));
        if (strcmp(s.run_id, T_BASE_ID) == 0) {
            fail_msg("changing '%s' did not change the run id", s_each_field[i].field);
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(ids[j], s.run_id) == 0) {
                fail_msg("'%s' and '%s' edits give the same id", s_each_field[j].field,
                         s_each_field[i].field);
            }
        }
        memcpy(ids[i], s.run_id, sizeof ids[i]);
    }
}

// Runs without the power extras keep their ids (T_BASE_ID above is pinned from before the extras
// existed); with them, the id is pinned too, and each of the point's fields changes it.
static void test_id_power_extras(void **state)
{
    (void) state;
    jf_run_spec_t s = t_power();
    assert_string_equal(s.run_id, T_POWER_ID);
    assert_int_equal(jf_run_spec_validate(&s, NULL), 0);
    jf_run_spec_t d = t_base();
    d.dvfs_off = true;
    jf_run_spec_compute_id(&d);
    assert_string_equal(d.run_id, T_DVFS_ID);
    d.dvfs_off = false;
    jf_run_spec_compute_id(&d);
    assert_string_equal(d.run_id, T_BASE_ID);
    static const t_set_t edits[] = {
        T_SET_INT(custom.n_cores, 2),        T_SET_I64(custom.cpu_hz, 1190400000),
        T_SET_I64(custom.gpu_hz, 0),         T_SET_I64(custom.emc_hz, 0),
        T_SET_BOOL(dvfs_off, false),
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        jf_run_spec_t e = t_power();
        t_apply(&e, &edits[i]);
        assert_int_equal(jf_run_spec_validate(&e, NULL), 0);
        jf_run_spec_compute_id(&e);
        if (strcmp(e.run_id, T_POWER_ID) == 0 || strcmp(e.run_id, T_BASE_ID) == 0) {
            fail_msg("changing '%s' did not give a new run id", edits[i].field);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Validation

typedef struct t_invalid {
    t_set_t set;
    const char *frag;
} t_invalid_t;

static const t_invalid_t s_invalid[] = {
    {T_SET_STR(board, "NX-01"), "'board' is not a valid name"},
    {T_SET_STR(board, ""), "'board' is not a valid name"},
    {T_SET_STR(workload, "../w"), "'workload' is not a valid name"},
    {T_SET_STR(model, "alexnet"), "'model' must be one of lenet5, resnet18, vgg11, mobilenetv3"},
    {T_SET_STR(model, "LeNet5"), "'model' must be one of"},
    {T_SET_STR(dataset, "imagenet"), "'dataset' must be one of mnist, cifar10, gld23k"},
    {T_SET_STR(power_mode, "MODE 15W"), "'power_mode' must be 1..32 of [A-Za-z0-9_]"},
    {T_SET_STR(power_mode, ""), "'power_mode' must be 1..32"},
    {T_SET_STR(storage, "floppy"), "'storage' must be one of sd, emmc, nvme"},
    {T_SET_STR(storage, "/etc/passwd"), "'storage' must be one of"},
    {T_SET_INT(epochs, 0), "'epochs' must be in [1, 1000], got 0"},
    {T_SET_INT(epochs, 1001), "'epochs' must be in [1, 1000], got 1001"},
    {T_SET_INT(power_mode_id, -1), "'power_mode_id' must be in [0, 255], got -1"},
    {T_SET_INT(power_mode_id, 256), "'power_mode_id' must be in [0, 255], got 256"},
    {T_SET_INT(workers, -1), "'workers' must be in [0, 16], got -1"},
    {T_SET_INT(workers, 17), "'workers' must be in [0, 16], got 17"},
    {T_SET_INT(prefetch, 0), "'prefetch' must be in [1, 16], got 0"},
    {T_SET_INT(prefetch, 17), "'prefetch' must be in [1, 16], got 17"},
    {T_SET_INT(batch_size, 0), "'batch_size' must be in [1, 4096], got 0"},
    {T_SET_INT(batch_size, 4097), "'batch_size' must be in [1, 4096], got 4097"},
    {T_SET_INT(repeat, -1), "'repeat' must be in [0, 99], got -1"},
    {T_SET_INT(repeat, 100), "'repeat' must be in [0, 99], got 100"},
    {T_SET_INT(threads, -1), "'threads' must be in [0, 256], got -1"},
    {T_SET_INT(threads, 257), "'threads' must be in [0, 256], got 257"},
    {T_SET_U64(seed, (UINT64_C(1) << 53) + 1), "'seed' must be in [0, 9007199254740992]"},
    {T_SET_U64(seed, UINT64_MAX), "'seed' must be in [0, 9007199254740992]"},
    // Seeds at or above 2^63 cannot travel in the JSON form (a signed integer): refused too.
    {T_SET_U64(seed, UINT64_C(1) << 63), "'seed' must be in [0, 9007199254740992]"},
    {T_SET_U64(seed, (UINT64_C(1) << 63) + 42), "'seed' must be in [0, 9007199254740992]"},
    {T_SET_INT(telemetry_hz, 0), "'telemetry_hz' must be in [1, 50], got 0"},
    {T_SET_INT(telemetry_hz, 51), "'telemetry_hz' must be in [1, 50], got 51"},
    {T_SET_I64(timeout_us, 999999), "'timeout_ms' must be in [1000, 604800000], got 999"},
    {T_SET_I64(timeout_us, -1), "'timeout_ms' must be in [1000, 604800000]"},
    // jf_run_spec.h: timeout_us is 1 s .. one week, so one microsecond more is refused.
    {T_SET_I64(timeout_us, JF_RUN_TIMEOUT_MAX_US + 1), "'timeout_ms' must be in [1000, 604800000]"},
    {T_SET_I64(timeout_us, JF_RUN_TIMEOUT_MAX_US + 999), "'timeout_ms' must be in [1000, "},
};

static void test_validate_rejects(void **state)
{
    (void) state;
    size_t failed = 0;
    for (size_t i = 0; i < sizeof s_invalid / sizeof s_invalid[0]; i++) {
        jf_run_spec_t s = t_base();
        t_apply(&s, &s_invalid[i].set);
        jf_err_t err = {0};
        int rc = jf_run_spec_validate(&s, &err);
        if (rc != -EINVAL || err.code != -EINVAL || !strstr(err.msg, s_invalid[i].frag)) {
            print_error("row %zu (%s): rc %d msg '%s', expected -EINVAL with '%s'\n", i,
                        s_invalid[i].set.field, rc, err.msg, s_invalid[i].frag);
            failed++;
        }
    }
    assert_int_equal(failed, 0);
}

// Rows applied to t_power(), whose point is valid.
static const t_invalid_t s_invalid_power[] = {
    {T_SET_INT(custom.n_cores, -1), "'custom.cores' must be in [1, 64], got -1"},
    {T_SET_INT(custom.n_cores, 65), "'custom.cores' must be in [1, 64], got 65"},
    {T_SET_I64(custom.cpu_hz, 0), "'custom.cpu_hz' must be in [1000, 10000000000] Hz, got 0"},
    {T_SET_I64(custom.cpu_hz, 1420800001), "'custom.cpu_hz' must be whole kHz"},
    {T_SET_I64(custom.cpu_hz, INT64_C(10000001000)), "'custom.cpu_hz' must be in [1000, "},
    {T_SET_I64(custom.gpu_hz, -1), "'custom.gpu_hz' must be in [0, 10000000000] Hz, got -1"},
    {T_SET_I64(custom.emc_hz, INT64_C(10000000001)), "'custom.emc_hz' must be in [0, "},
};

static void test_validate_rejects_power(void **state)
{
    (void) state;
    size_t failed = 0;
    for (size_t i = 0; i < sizeof s_invalid_power / sizeof s_invalid_power[0]; i++) {
        jf_run_spec_t s = t_power();
        t_apply(&s, &s_invalid_power[i].set);
        jf_err_t err = {0};
        int rc = jf_run_spec_validate(&s, &err);
        if (rc != -EINVAL || !strstr(err.msg, s_invalid_power[i].frag)) {
            print_error("row %zu (%s): rc %d msg '%s', expected -EINVAL with '%s'\n", i,
                        s_invalid_power[i].set.field, rc, err.msg, s_invalid_power[i].frag);
            failed++;
        }
    }
    // Clocks without cores: no point, yet not nothing either.
    jf_run_spec_t s = t_power();
    s.custom.n_cores = 0;
    jf_err_t err = {0};
    assert_int_equal(jf_run_spec_validate(&s, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "'custom' has clocks but no 'cores'"));
    assert_int_equal(failed, 0);
}

static const t_set_t s_boundaries[] = {
    T_SET_STR(board, "a"),
    T_SET_STR(board, "1234567890123456789012345678901234567890123456789012345678901234"),
    T_SET_STR(power_mode, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_01234"),
    T_SET_INT(epochs, 1),
    T_SET_INT(epochs, JF_EPOCHS_MAX),
    T_SET_INT(power_mode_id, 0),
    T_SET_INT(power_mode_id, 255),
    T_SET_INT(workers, 0),
    T_SET_INT(workers, JF_WORKERS_MAX),
    T_SET_INT(prefetch, JF_PREFETCH_MAX),
    T_SET_INT(batch_size, 1),
    T_SET_INT(batch_size, JF_BATCH_MAX),
    T_SET_INT(repeat, JF_REPEATS_MAX - 1),
    T_SET_INT(threads, JF_THREADS_MAX),
    T_SET_U64(seed, 0),
    T_SET_U64(seed, UINT64_C(1) << 53),
    T_SET_INT(telemetry_hz, JF_TELEMETRY_HZ_MAX),
    T_SET_I64(timeout_us, JF_US_PER_S),
    T_SET_I64(timeout_us, JF_RUN_TIMEOUT_MAX_US),
    T_SET_BOOL(dvfs_off, true),
};

#define T_N_BOUNDARIES (sizeof s_boundaries / sizeof s_boundaries[0])

static void test_validate_accepts_boundaries(void **state)
{
    (void) state;
    jf_run_spec_t s = t_base();
    assert_int_equal(jf_run_spec_validate(&s, NULL), 0);
    for (size_t i = 0; i < T_N_BOUNDARIES; i++) {
        s = t_base();
        t_apply(&s, &s_boundaries[i]);
        jf_err_t err = {0};
        if (jf_run_spec_validate(&s, &err) != 0) {
            fail_msg("boundary %zu (%s) refused: %s", i, s_boundaries[i].field, err.msg);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// JSON form

static void t_roundtrip(const jf_run_spec_t *s)
{
    json_t *obj = jf_run_spec_to_json(s);
    assert_non_null(obj);
    jf_run_spec_t back;
    memset(&back, 0, sizeof back);
    jf_err_t err = {0};
    if (jf_run_spec_from_json(obj, &back, &err) != 0) {
        fail_msg("round trip of %s refused: %s", s->run_id, err.msg);
    }
    json_decref(obj);
    t_expect_same_spec(s, &back);
    jf_run_spec_compute_id(&back);
    assert_string_equal(back.run_id, s->run_id);
}

static void test_json_roundtrip(void **state)
{
    (void) state;
    jf_run_spec_t s = t_base();
    t_roundtrip(&s);
    for (size_t i = 0; i < T_N_BOUNDARIES; i++) {
        s = t_base();
        t_apply(&s, &s_boundaries[i]);
        jf_run_spec_compute_id(&s);
        t_roundtrip(&s);
    }
}

// Without the extras the JSON form is exactly the one from before them (an older agent reads
// it); with them, "custom" carries only the clocks it pins, and "dvfs_off" is true.
static void test_json_power_extras(void **state)
{
    (void) state;
    jf_run_spec_t s = t_base();
    json_t *o = jf_run_spec_to_json(&s);
    assert_int_equal(json_object_size(o), 18);
    assert_null(json_object_get(o, "custom"));
    assert_null(json_object_get(o, "dvfs_off"));
    json_decref(o);
    s = t_power();
    t_roundtrip(&s);
    s.custom.gpu_hz = 0;
    s.custom.emc_hz = 0;
    s.dvfs_off = false;
    jf_run_spec_compute_id(&s);
    t_roundtrip(&s);
    o = jf_run_spec_to_json(&s);
    char *text = json_dumps(json_object_get(o, "custom"), JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(text, "{\"cores\":4,\"cpu_hz\":1420800000}");
    assert_null(json_object_get(o, "dvfs_off"));
    free(text);
    // dvfs_off false, given explicitly, is the default.
    assert_int_equal(json_object_set_new(o, "dvfs_off", json_false()), 0);
    jf_run_spec_t back = {0};
    assert_int_equal(jf_run_spec_from_json(o, &back, NULL), 0);
    assert_false(back.dvfs_off);
    json_decref(o);
}

static void test_power_label(void **state)
{
    (void) state;
    char buf[JF_RUN_POWER_LABEL_MAX + 1];
    jf_run_spec_t s = t_base();
    jf_run_spec_power_label(&s, buf, sizeof buf);
    assert_string_equal(buf, "MODE_20W_6CORE");
    s.dvfs_off = true;
    jf_run_spec_power_label(&s, buf, sizeof buf);
    assert_string_equal(buf, "MODE_20W_6CORE +dvfs-off");
    s = t_power();
    jf_run_spec_power_label(&s, buf, sizeof buf);
    assert_string_equal(buf, "custom 4c cpu1.42G gpu0.803G emc1.6G on MODE_20W_6CORE +dvfs-off");
    s.custom.gpu_hz = 0;
    s.custom.emc_hz = 0;
    s.dvfs_off = false;
    jf_run_spec_power_label(&s, buf, sizeof buf);
    assert_string_equal(buf, "custom 4c cpu1.42G on MODE_20W_6CORE");
    assert_true(jf_run_spec_has_power_extras(&s));
    s = t_base();
    assert_false(jf_run_spec_has_power_extras(&s));
}

// Every spec that validates survives the JSON form unchanged (the coordinator stores and sends
// it in that form, and the agent checks its id).
static void test_json_roundtrip_of_every_valid_timeout(void **state)
{
    (void) state;
    static const int64_t timeouts_us[] = {JF_US_PER_S + 1, 1500500, 7200000999};
    for (size_t i = 0; i < sizeof timeouts_us / sizeof timeouts_us[0]; i++) {
        jf_run_spec_t s = t_base();
        s.timeout_us = timeouts_us[i];
        jf_run_spec_compute_id(&s);
        if (jf_run_spec_validate(&s, NULL) == 0) {
            print_message("valid spec with timeout_us %lld\n", (long long) s.timeout_us);
            t_roundtrip(&s);
        }
    }
}

typedef struct t_bad_json {
    const char *key;
    const char *value; // JSON text; NULL deletes the member
    int rc;
    const char *frag;
} t_bad_json_t;

static const t_bad_json_t s_bad_json[] = {
    {"gpu", "1", -EPROTO, "run parameters: 1 object item(s) left unpacked: gpu"},
    {"seed", NULL, -EPROTO, "run parameters: Object item not found: seed"},
    {"run", NULL, -EPROTO, "Object item not found: run"},
    {"epochs", "\"3\"", -EPROTO, "run parameters:"},
    {"epochs", "3.0", -EPROTO, "run parameters:"},
    {"drop_caches", "1", -EPROTO, "run parameters:"},
    {"model", "null", -EPROTO, "run parameters:"},
    {"seed", "-1", -EINVAL, "'seed' must be in [0, 9007199254740992]"},
    {"seed", "9007199254740993", -EINVAL, "'seed' must be in [0, 9007199254740992]"},
    {"timeout_ms", "999", -EINVAL, "'timeout_ms' must be in [1000, 604800000]"},
    {"timeout_ms", "604800001", -EINVAL, "'timeout_ms' must be in [1000, 604800000]"},
    {"timeout_ms", "-9223372036854775807", -EINVAL, "'timeout_ms' must be in [1000, "},
    {"run", "\"R0123456789ABCDEF\"", -EINVAL, "'run' must be 'r' followed by 16 lowercase hex"},
    {"run", "\"r0123\"", -EINVAL, "'run' must be 'r' followed by 16"},
    {"run", "\"r0123456789abcdef0\"", -EINVAL, "'run' is longer than 17 bytes"},
    {"board", "\"12345678901234567890123456789012345678901234567890123456789012345\"", -EINVAL,
     "'board' is longer than 64 bytes"},
    {"power_mode", "\"ABCDEFGHIJKLMNOPQRSTUVWXYZ_012345\"", -EINVAL,
     "'power_mode' is longer than 32 bytes"},
    {"epochs", "1099511627776", -EINVAL, "'epochs' must be in [1, 1000], got 1099511627776"},
    {"batch_size", "-4294967296", -EINVAL, "'batch_size' must be in [1, 4096], got -4294967296"},
    {"workers", "17", -EINVAL, "'workers' must be in [0, 16], got 17"},
    {"model", "\"vgg16\"", -EINVAL, "'model' must be one of"},
    {"storage", "\"/etc/passwd\"", -EINVAL, "'storage' must be one of"},
    {"board", "\"../x\"", -EINVAL, "'board' is not a valid name"},
    {"dvfs_off", "1", -EPROTO, "run parameters:"},
    {"dvfs_off", "\"off\"", -EPROTO, "run parameters:"},
    {"custom", "null", -EPROTO, "run parameters: 'custom':"},
    {"custom", "{\"cores\":4}", -EPROTO, "run parameters: 'custom': Object item not found: cpu_hz"},
    {"custom", "{\"cores\":4,\"cpu_hz\":1420800000,\"cpu\":1}", -EPROTO,
     "'custom': 1 object item(s) left unpacked: cpu"},
    {"custom", "{\"cores\":4,\"cpu_hz\":\"1.4GHz\"}", -EPROTO, "run parameters: 'custom':"},
    {"custom", "{\"cores\":0,\"cpu_hz\":1420800000}", -EINVAL,
     "'custom.cores' must be in [1, 64], got 0"},
    {"custom", "{\"cores\":4,\"cpu_hz\":1420800001}", -EINVAL, "'custom.cpu_hz' must be whole kHz"},
    {"custom", "{\"cores\":4,\"cpu_hz\":1420800000,\"gpu_hz\":-5}", -EINVAL,
     "'custom.gpu_hz' must be in [0, 10000000000] Hz, got -5"},
};

static void test_from_json_rejects(void **state)
{
    (void) state;
    const jf_run_spec_t base = t_base();
    for (size_t i = 0; i < sizeof s_bad_json / sizeof s_bad_json[0]; i++) {
        const t_bad_json_t *r = &s_bad_json[i];
        json_t *obj = jf_run_spec_to_json(&base);
        if (r->value) {
            json_t *v = json_loads(r->value, JSON_DECODE_ANY, NULL);
            assert_non_null(v);
            assert_int_equal(json_object_set_new(obj, r->key, v), 0);
        } else {
            assert_int_equal(json_object_del(obj, r->key), 0);
        }
        jf_run_spec_t out = {.epochs = -7};
        jf_err_t err = {0};
        int rc = jf_run_spec_from_json(obj, &out, &err);
        if (rc != r->rc || !strstr(err.msg, r->frag) || out.epochs != -7) {
            fail_msg("%s = %s: rc %d msg '%s' (epochs %d); expected %d with '%s'", r->key,
                     r->value ? r->value : "(deleted)", rc, err.msg, out.epochs, r->rc, r->frag);
        }
        json_decref(obj);
    }
}

static void test_from_json_not_an_object(void **state)
{
    (void) state;
    static const char *const texts[] = {"[]", "42", "\"params\"", "null", "{}"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        json_t *v = json_loads(texts[i], JSON_DECODE_ANY, NULL);
        assert_non_null(v);
        jf_run_spec_t out = {.epochs = -7};
        jf_err_t err = {0};
        assert_int_equal(jf_run_spec_from_json(v, &out, &err), -EPROTO);
        assert_non_null(strstr(err.msg, "run parameters: "));
        assert_int_equal(out.epochs, -7);
        json_decref(v);
    }
}

// ---------------------------------------------------------------------------------------------
// Vocabularies

static void test_vocabularies(void **state)
{
    (void) state;
    static const struct {
        bool (*is)(const char *);
        const char *(*list)(void);
        const char *good[8];
        const char *bad[5];
    } rows[] = {
        {jf_run_spec_is_model,
         jf_run_spec_models,
         {"lenet5", "resnet18", "vgg11", "mobilenetv3"},
         {"resnet", "Lenet5", "lenet5 ", "", NULL}},
        {jf_run_spec_is_dataset,
         jf_run_spec_datasets,
         {"mnist", "cifar10", "gld23k"},
         {"cifar100", "MNIST", "mnist\n", "", NULL}},
        {jf_run_spec_is_medium,
         jf_run_spec_media,
         {"sd", "emmc", "nvme", "usb-hdd", "usb-ssd", "ssd", "hdd", "local"},
         {"usb", "tmpfs", "/mnt/nvme", "", NULL}},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        for (size_t j = 0; j < 8 && rows[i].good[j]; j++) {
            assert_true(rows[i].is(rows[i].good[j]));
            assert_non_null(strstr(rows[i].list(), rows[i].good[j]));
        }
        for (size_t j = 0; j < 5; j++) {
            if (rows[i].is(rows[i].bad[j])) {
                fail_msg("'%s' should not be in the vocabulary", rows[i].bad[j]);
            }
        }
    }
}

static void test_is_run_id(void **state)
{
    (void) state;
    static const struct {
        const char *text;
        bool ok;
    } rows[] = {
        {"r0123456789abcdef", true},
        {"rffffffffffffffff", true},
        {"r0000000000000000", true},
        {"R0123456789abcdef", false},
        {"r0123456789ABCDEF", false},
        {"r0123456789abcde", false},
        {"r0123456789abcdef0", false},
        {"x0123456789abcdef", false},
        {"r0123456789abcdeg", false},
        {"r0123456789abcd-f", false},
        {"", false},
        {NULL, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (jf_run_spec_is_run_id(rows[i].text) != rows[i].ok) {
            fail_msg("jf_run_spec_is_run_id('%s') should be %d",
                     rows[i].text ? rows[i].text : "(null)", rows[i].ok);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_id_is_pinned),
        cmocka_unit_test(test_id_is_deterministic),
        cmocka_unit_test(test_id_changes_with_every_field),
        cmocka_unit_test(test_id_power_extras),
        cmocka_unit_test(test_validate_rejects_power),
        cmocka_unit_test(test_json_power_extras),
        cmocka_unit_test(test_power_label),
        cmocka_unit_test(test_validate_rejects),
        cmocka_unit_test(test_validate_accepts_boundaries),
        cmocka_unit_test(test_json_roundtrip),
        cmocka_unit_test(test_json_roundtrip_of_every_valid_timeout),
        cmocka_unit_test(test_from_json_rejects),
        cmocka_unit_test(test_from_json_not_an_object),
        cmocka_unit_test(test_vocabularies),
        cmocka_unit_test(test_is_run_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
