/* Unit tests for the record schemas (jf_schema.h), table-driven: every schema in s_schemas is
 * walked field by field. Its table must be sane (names fit, ranges fit the C type, columns and
 * headers unique); decode(encode(x)) == x at each field's bounds; an out-of-range value, a wrong
 * type, a missing required member and an unknown member are each refused with the right code
 * and a message naming the field. A small test-only schema covers what the run spec lacks. */
#include "jf_msg_run.h"
#include "jf_run_spec.h"
#include "jf_schema.h"
#include "jf_units.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define T_REC_MAX 1024 // bytes: larger than every record struct under test

// ---------------------------------------------------------------------------------------------
// A test-only schema: numbers with has_ flags, nullable, uint64, member wording, also_allowed.

typedef struct t_rec {
    int64_t t_us;   // required
    bool has_loss;  // loss present
    double loss;    // nullable
    uint64_t count; // 0..2^40
    bool flag;      // optional
    char tag[8];    // optional, any text
} t_rec_t;

static const jf_schema_field_t s_t_fields[] = {
    {.name = "t_us",
     .type = JF_SCHEMA_I64,
     .offset = offsetof(t_rec_t, t_us),
     .size = sizeof(int64_t),
     .lo = 1,
     .hi = INT64_C(1) << 62,
     .unit = "us",
     .column = "t_us",
     .header = "t_s",
     .header_scale = JF_US_PER_S},
    {.name = "loss",
     .type = JF_SCHEMA_NUM,
     .offset = offsetof(t_rec_t, loss),
     .size = sizeof(double),
     .lo_num = -1e9,
     .hi_num = 1e9,
     .optional = true,
     .nullable = true,
     .has_flag = true,
     .has_offset = offsetof(t_rec_t, has_loss),
     .column = "loss",
     .header = "loss"},
    {.name = "count",
     .type = JF_SCHEMA_U64,
     .offset = offsetof(t_rec_t, count),
     .size = sizeof(uint64_t),
     .lo = 0,
     .hi = INT64_C(1) << 40,
     .column = "count",
     .header = "count"},
    {.name = "flag",
     .type = JF_SCHEMA_BOOL,
     .offset = offsetof(t_rec_t, flag),
     .size = sizeof(bool),
     .optional = true,
     .omit_zero = true,
     .column = "flag",
     .header = "flag"},
    {.name = "tag",
     .type = JF_SCHEMA_STR,
     .offset = offsetof(t_rec_t, tag),
     .size = sizeof(((t_rec_t *)0)->tag),
     .optional = true,
     .omit_zero = true},
};

static const char *const s_t_also[] = {"kind", NULL};

static const jf_schema_t s_t_schema = {
    .name = "test record",
    JF_SCHEMA_FIELDS(s_t_fields),
    .words = JF_SCHEMA_WORDS_MEMBER,
    .also_allowed = s_t_also,
};

static void t_rec_example(void *rec)
{
    *(t_rec_t *)rec = (t_rec_t){.t_us = 1700000000000000,
                                .has_loss = true,
                                .loss = 0.25,
                                .count = 12,
                                .flag = true,
                                .tag = "abc"};
}

// ---------------------------------------------------------------------------------------------
// Every schema under test, with a valid example record that has every optional part set.

static void t_run_example(void *rec)
{
    jf_run_spec_t s = {
        .board = "nx-01",
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
        .threads = 2,
        .seed = 42,
        .drop_caches = true,
        .telemetry_hz = 1,
        .timeout_us = 2 * 3600 * JF_US_PER_S,
        .custom = {.n_cores = 4, .cpu_hz = 1420800000, .gpu_hz = 803250000, .emc_hz = 1600000000},
        .dvfs_off = true,
        .concurrent = {.infer_model = "mobilenetv3",
                       .infer_batch = 4,
                       .rate_per_s = 30.0,
                       .budget_us = 200 * JF_US_PER_MS},
        // The federated round's fields; shard 0 of the most shards, so that each of the two is
        // valid at both its bounds with the other as here.
        .minibatches = 20,
        .init_weights = "2f1ad3288c1baa3d369060da18a24b99ececb5852b0dfacfaa1aadb6e275f97a",
        .return_weights = true,
        .fl_round = "fl1.2",
        .shards = JF_RUN_SHARDS_MAX};
    jf_run_spec_compute_id(&s);
    memcpy(rec, &s, sizeof s);
}

static void t_epoch_example(void *rec)
{
    *(jf_epoch_rec_t *)rec = (jf_epoch_rec_t){.epoch = 2,
                                              .e2e_us = 9000000,
                                              .fetch_stall_us = 100,
                                              .compute_us = 8000000,
                                              .samples = 60000,
                                              .has_loss = true,
                                              .loss = 0.3,
                                              .has_energy = true,
                                              .energy_mj = 1e5,
                                              .avg_power_mw = 9000,
                                              .has_peak = true,
                                              .peak_power_mw = 12000,
                                              .has_concurrent = true,
                                              .concurrent = {.requests = 900,
                                                             .infer_batches = 225,
                                                             .infer_us = 400000,
                                                             .switch_us = 90000,
                                                             .latency_p50_us = 90000,
                                                             .latency_p99_us = 180000,
                                                             .latency_max_us = 250000,
                                                             .within_budget = 0.995}};
}

static void t_minibatch_example(void *rec)
{
    *(jf_minibatch_rec_t *)rec = (jf_minibatch_rec_t){.epoch = 1,
                                                      .index = 5,
                                                      .samples = 64,
                                                      .fetch_stall_us = 3,
                                                      .compute_us = 900,
                                                      .has_loss = true,
                                                      .loss = 2.25};
}

typedef struct t_schema {
    const char *tag;                 // for the figures printed
    const jf_schema_t *(*get)(void); // the schema
    void (*example)(void *rec);      // fills a valid record
    size_t size;                     // sizeof the record
} t_schema_t;

static const jf_schema_t *t_test_schema(void)
{
    return &s_t_schema;
}

static const t_schema_t s_schemas[] = {
    {"run_spec", jf_run_spec_schema, t_run_example, sizeof(jf_run_spec_t)},
    {"test_record", t_test_schema, t_rec_example, sizeof(t_rec_t)},
    {"epoch", jf_epoch_rec_schema, t_epoch_example, sizeof(jf_epoch_rec_t)},
    {"minibatch", jf_minibatch_rec_schema, t_minibatch_example, sizeof(jf_minibatch_rec_t)},
};

#define T_N_SCHEMAS (sizeof s_schemas / sizeof s_schemas[0])

// ---------------------------------------------------------------------------------------------
// Table sanity

typedef struct t_seen {
    char names[128][JF_SCHEMA_NAME_MAX + 1]; // columns or headers seen so far
    size_t n;                                // how many
} t_seen_t;

static void t_unique(t_seen_t *seen, const char *what, const char *name)
{
    for (size_t i = 0; i < seen->n; i++) {
        if (strcmp(seen->names[i], name) == 0) {
            fail_msg("%s '%s' appears twice", what, name);
        }
    }
    assert_true(seen->n < 128);
    (void)snprintf(seen->names[seen->n++], JF_SCHEMA_NAME_MAX + 1, "%s", name);
}

typedef struct t_sanity {
    t_seen_t columns; // store columns
    t_seen_t headers; // export headers
} t_sanity_t;

static void t_check_range(const jf_schema_field_t *f, const char *name)
{
    int64_t scale = f->scale > 0 ? f->scale : 1;
    if (f->lo > f->hi || f->hi > INT64_MAX / scale || f->lo < INT64_MIN / scale) {
        fail_msg("'%s': range [%lld, %lld] x %lld does not fit int64_t", name, (long long)f->lo,
                 (long long)f->hi, (long long)scale);
    }
    if (f->type == JF_SCHEMA_INT && (f->lo * scale < INT_MIN || f->hi * scale > INT_MAX)) {
        fail_msg("'%s': range does not fit int", name);
    }
    if (f->type == JF_SCHEMA_INT || f->type == JF_SCHEMA_BOOL) {
        assert_int_equal(f->size, f->type == JF_SCHEMA_INT ? sizeof(int) : sizeof(bool));
    }
    if (f->type == JF_SCHEMA_I64 || f->type == JF_SCHEMA_U64) {
        assert_int_equal(f->size, sizeof(int64_t));
    }
}

static int t_sanity_leaf(const jf_schema_leaf_t *leaf, void *arg)
{
    t_sanity_t *s = arg;
    const jf_schema_field_t *f = leaf->field;
    assert_non_null(f->name);
    assert_true(f->size > 0);
    if (f->has_flag && !f->optional) {
        fail_msg("'%s' has a has_ flag but is required", leaf->name);
    }
    if ((f->omit_zero || f->nullable) && !f->optional) {
        fail_msg("'%s' can be left out but is required", leaf->name);
    }
    t_check_range(f, leaf->name);
    if (f->type == JF_SCHEMA_NUM && !(f->lo_num <= f->hi_num)) {
        fail_msg("'%s': number range is empty", leaf->name);
    }
    if (leaf->column[0]) {
        // Columns are written into SQL text (coord_store_spec.c): plain identifiers only.
        assert_int_equal(strspn(leaf->column, "abcdefghijklmnopqrstuvwxyz0123456789_"),
                         strlen(leaf->column));
        t_unique(&s->columns, "column", leaf->column);
    }
    if (leaf->outer) {
        for (size_t i = 0; i < leaf->outer->n_fields; i++) {
            assert_int_not_equal(leaf->outer->fields[i].type, JF_SCHEMA_OBJ); // one level
        }
    }
    if (f->header) {
        t_unique(&s->headers, "header", f->header);
    }
    return 0;
}

static void test_tables_are_sane(void **state)
{
    (void)state;
    for (size_t i = 0; i < T_N_SCHEMAS; i++) {
        const jf_schema_t *schema = s_schemas[i].get();
        t_sanity_t *s = calloc(1, sizeof *s);
        assert_non_null(s);
        assert_int_equal(jf_schema_each_leaf(schema, t_sanity_leaf, s), 0);
        assert_int_equal(s->columns.n, jf_schema_n_columns(schema));
        assert_true(jf_schema_n_leaves(schema) >= s->columns.n);
        free(s);
    }
}

// ---------------------------------------------------------------------------------------------
// Round trips at each field's bounds

typedef struct t_pair {
    const void *a; // one record
    const void *b; // the other
} t_pair_t;

static int t_leaf_equal(const jf_schema_leaf_t *leaf, void *arg)
{
    const t_pair_t *p = arg;
    bool pa = jf_schema_leaf_is_present(leaf, p->a), pb = jf_schema_leaf_is_present(leaf, p->b);
    if (pa != pb) {
        fail_msg("'%s': present %d, back %d", leaf->name, pa, pb);
    }
    if (leaf->field->type == JF_SCHEMA_STR) {
        assert_string_equal(jf_schema_leaf_str(leaf, p->a), jf_schema_leaf_str(leaf, p->b));
    } else if (leaf->field->type == JF_SCHEMA_NUM) {
        assert_true(!pa || jf_schema_leaf_num(leaf, p->a) == jf_schema_leaf_num(leaf, p->b));
    } else if (jf_schema_leaf_int(leaf, p->a) != jf_schema_leaf_int(leaf, p->b)) {
        fail_msg("'%s': %lld came back as %lld", leaf->name,
                 (long long)jf_schema_leaf_int(leaf, p->a),
                 (long long)jf_schema_leaf_int(leaf, p->b));
    }
    return 0;
}

static void t_roundtrip(const jf_schema_t *schema, const void *rec, size_t size, const char *what)
{
    jf_err_t err = {0};
    if (jf_schema_validate(schema, rec, &err) != 0) {
        fail_msg("%s: %s refused by validate: %s", schema->name, what, err.msg);
    }
    json_t *j = jf_schema_encode(schema, rec);
    assert_non_null(j);
    unsigned char back[T_REC_MAX] = {0};
    assert_true(size <= sizeof back);
    if (jf_schema_decode(schema, j, back, &err) != 0) {
        fail_msg("%s: %s refused by decode: %s", schema->name, what, err.msg);
    }
    json_t *again = jf_schema_encode(schema, back);
    assert_true(json_equal(j, again));
    t_pair_t pair = {rec, back};
    assert_int_equal(jf_schema_each_leaf(schema, t_leaf_equal, &pair), 0);
    json_decref(again);
    json_decref(j);
}

typedef struct t_bounds {
    const t_schema_t *ts; // the schema under test
    size_t n;             // round trips done
} t_bounds_t;

static void t_at_bound(t_bounds_t *b, const jf_schema_leaf_t *leaf, int64_t wire, double num)
{
    const jf_schema_field_t *f = leaf->field;
    unsigned char rec[T_REC_MAX] = {0};
    b->ts->example(rec);
    if (f->type == JF_SCHEMA_NUM) {
        jf_schema_leaf_set_num(leaf, rec, num);
    } else {
        assert_int_equal(jf_schema_leaf_set_int(leaf, rec, wire * (f->scale > 0 ? f->scale : 1)),
                         0);
    }
    char what[128] = {0};
    (void)snprintf(what, sizeof what, "'%s' = %lld / %g", leaf->name, (long long)wire, num);
    t_roundtrip(b->ts->get(), rec, b->ts->size, what);
    b->n++;
}

static int t_bounds_leaf(const jf_schema_leaf_t *leaf, void *arg)
{
    const jf_schema_field_t *f = leaf->field;
    switch (f->type) {
    case JF_SCHEMA_INT:
    case JF_SCHEMA_I64:
    case JF_SCHEMA_U64:
        t_at_bound(arg, leaf, f->lo, 0);
        t_at_bound(arg, leaf, f->hi, 0);
        break;
    case JF_SCHEMA_NUM:
        t_at_bound(arg, leaf, 0, f->lo_num);
        t_at_bound(arg, leaf, 0, f->hi_num);
        break;
    case JF_SCHEMA_BOOL:
        t_at_bound(arg, leaf, 0, 0);
        t_at_bound(arg, leaf, 1, 0);
        break;
    default:
        break; // strings: the example's (vocabularies have no bounds to generate)
    }
    return 0;
}

static void test_roundtrip_at_bounds(void **state)
{
    (void)state;
    for (size_t i = 0; i < T_N_SCHEMAS; i++) {
        unsigned char rec[T_REC_MAX] = {0};
        s_schemas[i].example(rec);
        t_roundtrip(s_schemas[i].get(), rec, s_schemas[i].size, "the example");
        t_bounds_t b = {.ts = &s_schemas[i]};
        assert_int_equal(jf_schema_each_leaf(s_schemas[i].get(), t_bounds_leaf, &b), 0);
        printf("roundtrips_%s=%zu\n", s_schemas[i].tag, b.n);
        assert_true(b.n > 0);
    }
}

// ---------------------------------------------------------------------------------------------
// Refusals: out of range, wrong type, missing, unknown

// The object that holds leaf's member in j ("custom.cores" -> j["custom"]), and the member name.
static json_t *t_parent(json_t *j, const char *dotted, const char **ret_member)
{
    const char *dot = strchr(dotted, '.');
    if (!dot) {
        *ret_member = dotted;
        return j;
    }
    char head[JF_SCHEMA_NAME_MAX + 1] = {0};
    memcpy(head, dotted, (size_t)(dot - dotted));
    return t_parent(json_object_get(j, head), dot + 1, ret_member);
}

typedef struct t_refusal {
    const t_schema_t *ts; // the schema under test
    size_t n;             // refusals checked
} t_refusal_t;

// Sets leaf's member (NULL: deletes it) in the example's JSON form and expects decode to refuse
// with rc and a message containing frag.
static void t_refused(t_refusal_t *r, const jf_schema_leaf_t *leaf, json_t *value, int rc,
                      const char *frag)
{
    unsigned char rec[T_REC_MAX] = {0};
    r->ts->example(rec);
    json_t *j = jf_schema_encode(r->ts->get(), rec);
    const char *member = NULL;
    json_t *parent = t_parent(j, leaf->name, &member);
    assert_non_null(parent);
    assert_int_equal(
        value ? json_object_set_new(parent, member, value) : json_object_del(parent, member), 0);
    unsigned char back[T_REC_MAX] = {0};
    jf_err_t err = {0};
    int got = jf_schema_decode(r->ts->get(), j, back, &err);
    if (got != rc || !strstr(err.msg, frag)) {
        fail_msg("%s '%s': rc %d msg '%s', expected %d with '%s'", r->ts->get()->name, leaf->name,
                 got, err.msg, rc, frag);
    }
    json_decref(j);
    r->n++;
}

static void t_refuse_range(t_refusal_t *r, const jf_schema_leaf_t *leaf)
{
    const jf_schema_field_t *f = leaf->field;
    char frag[JF_SCHEMA_NAME_MAX + 32] = {0};
    (void)snprintf(frag, sizeof frag, "'%s' must be in [", leaf->name);
    if (f->type == JF_SCHEMA_NUM) {
        // A range as wide as the doubles (any finite loss) has no number outside it to write.
        if (isfinite(f->hi_num * 2 + 1)) {
            t_refused(r, leaf, json_real(f->hi_num * 2 + 1), -EINVAL, frag);
        }
        if (isfinite(f->lo_num * 2 - 1)) {
            t_refused(r, leaf, json_real(f->lo_num * 2 - 1), -EINVAL, frag);
        }
    } else if (f->type == JF_SCHEMA_STR) {
        char *longer = calloc(1, f->size + 1);
        assert_non_null(longer);
        memset(longer, 'a', f->size);
        (void)snprintf(frag, sizeof frag, "'%s' is longer than", leaf->name);
        t_refused(r, leaf, json_string(longer), -EINVAL, frag);
        free(longer);
        if (f->is_valid) {
            (void)snprintf(frag, sizeof frag, "'%s' %s", leaf->name, f->must);
            t_refused(r, leaf, json_string("no/such thing"), -EINVAL, frag);
        }
    } else if (f->type != JF_SCHEMA_BOOL) {
        if (f->hi < INT64_MAX) {
            t_refused(r, leaf, json_integer(f->hi + 1), -EINVAL, frag);
        }
        if (f->lo > INT64_MIN) {
            t_refused(r, leaf, json_integer(f->lo - 1), -EINVAL, frag);
        }
    }
}

static int t_refusal_leaf(const jf_schema_leaf_t *leaf, void *arg)
{
    t_refusal_t *r = arg;
    const jf_schema_field_t *f = leaf->field;
    char frag[JF_SCHEMA_NAME_MAX + 8] = {0};
    (void)snprintf(frag, sizeof frag, "'%s'", leaf->name);
    json_t *wrong = f->type == JF_SCHEMA_STR ? json_integer(7) : json_string("7");
    t_refused(r, leaf, wrong, -EPROTO, frag);
    t_refuse_range(r, leaf);
    if (!f->optional) {
        const char *member = strrchr(leaf->name, '.');
        t_refused(r, leaf, NULL, -EPROTO, member ? member + 1 : leaf->name);
    }
    return 0;
}

static void test_refusals(void **state)
{
    (void)state;
    for (size_t i = 0; i < T_N_SCHEMAS; i++) {
        t_refusal_t r = {.ts = &s_schemas[i]};
        assert_int_equal(jf_schema_each_leaf(s_schemas[i].get(), t_refusal_leaf, &r), 0);
        // An unknown member, at the top.
        unsigned char rec[T_REC_MAX] = {0};
        s_schemas[i].example(rec);
        json_t *j = jf_schema_encode(s_schemas[i].get(), rec);
        assert_int_equal(json_object_set_new(j, "zz_unknown", json_true()), 0);
        unsigned char back[T_REC_MAX] = {0};
        jf_err_t err = {0};
        assert_int_equal(jf_schema_decode(s_schemas[i].get(), j, back, &err), -EPROTO);
        assert_non_null(strstr(err.msg, "zz_unknown"));
        json_decref(j);
        printf("refusals_%s=%zu\n", s_schemas[i].tag, r.n + 1);
    }
}

// The test schema's own points: null is an absent loss, "kind" is allowed, the member wording.
static void test_member_wording_and_null(void **state)
{
    (void)state;
    json_t *j = json_pack("{s:s, s:I, s:n, s:I}", "kind", "x", "t_us", (json_int_t)5, "loss",
                          "count", (json_int_t)3);
    t_rec_t back = {0};
    jf_err_t err = {0};
    assert_int_equal(jf_schema_decode(&s_t_schema, j, &back, &err), 0);
    assert_false(back.has_loss);
    json_t *out = jf_schema_encode(&s_t_schema, &back);
    assert_true(json_is_null(json_object_get(out, "loss")));
    assert_null(json_object_get(out, "flag")); // omit_zero
    assert_int_equal(json_object_set_new(j, "extra", json_true()), 0);
    assert_int_equal(jf_schema_decode(&s_t_schema, j, &back, &err), -EPROTO);
    assert_string_equal(err.msg, "unknown member 'extra'");
    json_decref(out);
    json_decref(j);
}

static void test_field_lookup(void **state)
{
    (void)state;
    const jf_schema_field_t *f = jf_schema_field(jf_run_spec_schema(), "custom.cpu_hz");
    assert_non_null(f);
    assert_string_equal(f->name, "cpu_hz");
    assert_null(jf_schema_field(jf_run_spec_schema(), "cpu_hz"));
    assert_null(jf_schema_field(jf_run_spec_schema(), "custom"));
}

// The trainer's options from the run spec's flags, and back: each "--flag value" parses into the
// same field; a skipped flag is left out; an unknown flag and a bad value are refused.
static void test_trainer_argv(void **state)
{
    (void)state;
    jf_run_spec_t spec = {0};
    t_run_example(&spec);
    jf_schema_argv_t a;
    assert_int_equal(jf_schema_to_argv(jf_run_spec_schema(), &spec, NULL, &a), 0);
    static const char *const want[] = {"--model",    "lenet5", "--epochs", "3",  "--workers", "4",
                                       "--prefetch", "2",      "--batch",  "64", "--threads", "2",
                                       "--seed",     "42",     "--infer-model", "mobilenetv3",
                                       "--infer-batch", "4",   "--infer-rate", "30",
                                       "--infer-budget-ms", "200", NULL};
    for (size_t i = 0; want[i]; i++) {
        assert_string_equal(a.args[i], want[i]);
    }
    assert_null(a.args[22]);
    jf_run_spec_t back = {0};
    for (size_t i = 0; i + 1 < a.n; i += 2) {
        assert_int_equal(
            jf_schema_from_flag(jf_run_spec_schema(), &back, a.args[i], a.args[i + 1], NULL), 0);
    }
    assert_string_equal(back.model, spec.model);
    assert_int_equal(back.batch_size, spec.batch_size);
    assert_int_equal(back.seed, spec.seed);
    static const char *const skip[] = {"--threads", NULL};
    assert_int_equal(jf_schema_to_argv(jf_run_spec_schema(), &spec, skip, &a), 0);
    assert_int_equal(a.n, 20);
    assert_int_equal(back.concurrent.budget_us, spec.concurrent.budget_us);
    assert_true(back.concurrent.rate_per_s == spec.concurrent.rate_per_s);
    jf_err_t err = {0};
    assert_int_equal(jf_schema_from_flag(jf_run_spec_schema(), &back, "--nope", "1", &err),
                     -ENOENT);
    assert_int_equal(jf_schema_from_flag(jf_run_spec_schema(), &back, "--batch", "0", &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "--batch"));
    assert_int_equal(jf_schema_from_flag(jf_run_spec_schema(), &back, "--model", "alexnet", &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "'model' must be one of"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables_are_sane), cmocka_unit_test(test_roundtrip_at_bounds),
        cmocka_unit_test(test_refusals),        cmocka_unit_test(test_member_wording_and_null),
        cmocka_unit_test(test_field_lookup),    cmocka_unit_test(test_trainer_argv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
