/* Unit tests for the typed payloads jf_msg_decode leaves in jf_msg_t for the coordinator's
 * stream (issue #10, decode once): run.progress records (start, epoch, minibatch, measure on the
 * heap) and telemetry samples (their checked compact text and time), that a refused batch
 * frees what it had decoded, and that jf_msg_fini frees the payload (the ASan build fails the
 * test on a leak). The corpora are msg_test.c; the builders' round trips msg_roundtrip_test.c. */
#include "jf_msg.h"
#include "jf_msg_measure.h"
#include "jf_msg_run.h"
#include "msg_support.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define T_EPOCH_REC                                                                                \
    "{\"kind\":\"epoch\",\"epoch\":1,\"warmup\":false,\"e2e_us\":5,\"fetch_stall_us\":1,"          \
    "\"compute_us\":3,\"samples\":64}"

static tmsg_decoded_t t_decode_fixture(const char *name)
{
    size_t len = 0;
    char *data = tmsg_read_fixture("good", name, &len);
    assert_non_null(data);
    tmsg_decoded_t d = tmsg_decode(data, len, JF_MSG_TO_COORD);
    free(data);
    assert_int_equal(d.rc, 0);
    return d;
}

static void t_expect_freed(jf_msg_t *m)
{
    jf_msg_fini(m);
    assert_null(m->body);
    assert_null(m->progress);
    assert_null(m->telemetry);
    assert_null(m->assign);
}

static void test_progress_records_typed(void **state)
{
    (void) state;
    tmsg_decoded_t d = t_decode_fixture("run-progress.json");
    assert_null(d.msg.telemetry);
    assert_null(d.msg.assign);
    const jf_msg_run_progress_t *p = d.msg.progress;
    assert_non_null(p);
    assert_int_equal(p->n_records, 3);
    const jf_record_t *start = &p->records[0].rec;
    assert_int_equal(start->kind, JF_REC_START);
    assert_string_equal(json_string_value(json_object_get(start->info, "device")), "cuda");
    const jf_epoch_rec_t *e = &p->records[1].rec.epoch;
    assert_int_equal(p->records[1].rec.kind, JF_REC_EPOCH);
    assert_true(e->warmup);
    assert_int_equal(e->e2e_us, 12500000);
    assert_int_equal(e->compute_us, 11000000);
    assert_true(e->has_loss);
    assert_float_equal(e->loss, 0.61, 1e-12);
    assert_false(e->has_energy);
    const jf_minibatch_rec_t *mb = &p->records[2].rec.minibatch;
    assert_int_equal(p->records[2].rec.kind, JF_REC_MINIBATCH);
    assert_int_equal(mb->epoch, 1);
    assert_int_equal(mb->samples, 64);
    assert_int_equal(mb->fetch_stall_us, 1200);
    assert_false(mb->has_loss);
    for (size_t i = 0; i < p->n_records; i++) {
        assert_null(p->records[i].measure);
    }
    t_expect_freed(&d.msg);
}

static void test_progress_measure_typed(void **state)
{
    (void) state;
    tmsg_decoded_t d = t_decode_fixture("run-progress-measure.json");
    const jf_msg_run_progress_t *p = d.msg.progress;
    assert_non_null(p);
    assert_int_equal(p->n_records, 2);
    assert_null(p->records[0].measure);
    assert_true(p->records[0].rec.epoch.has_energy);
    assert_float_equal(p->records[0].rec.epoch.energy_mj, 82963.5, 1e-9);
    const jf_msg_progress_rec_t *r = &p->records[1];
    assert_int_equal(r->rec.kind, JF_REC_MEASURE);
    assert_ptr_equal(r->rec.measure, json_array_get(json_object_get(d.msg.body, "records"), 1));
    const jf_measure_t *m = r->measure;
    assert_non_null(m);
    assert_string_equal(m->source, "sysfs");
    assert_int_equal(m->rate_hz, 1);
    assert_int_equal(m->samples, 19);
    assert_int_equal(m->n_rails, 3);
    assert_string_equal(m->input_rail, "VDD_IN");
    assert_int_equal(m->disk_reads, 1204);
    assert_int_equal(m->dataset_bytes, 47341568);
    assert_int_equal(m->n_cache, 2);
    assert_int_equal(m->cache[1].epoch, 1);
    t_expect_freed(&d.msg);
}

static void test_telemetry_samples_typed(void **state)
{
    (void) state;
    tmsg_decoded_t d = t_decode_fixture("telemetry.json");
    assert_null(d.msg.progress);
    const jf_msg_telemetry_t *t = d.msg.telemetry;
    assert_non_null(t);
    assert_int_equal(t->n_samples, 1);
    assert_int_equal(t->samples[0].t_us, INT64_C(1700000000100000));
    // The checked sample itself, lent from the body, unknown members kept (telemetry is open).
    json_t *sample = json_array_get(json_object_get(d.msg.body, "samples"), 0);
    assert_ptr_equal(t->samples[0].json, sample);
    assert_non_null(json_object_get(t->samples[0].json, "throttled")); // not in the schema
    t_expect_freed(&d.msg);
}

// A full batch of JF_MSG_ARRAY_MAX samples, each with its own time, in message order.
static void test_telemetry_full_batch(void **state)
{
    (void) state;
    json_t *items = json_array();
    for (int i = 0; i < JF_MSG_ARRAY_MAX; i++) {
        json_array_append_new(items, json_pack("{s:I, s:i}", "t_us",
                                               (json_int_t) (INT64_C(1700000000000000) + i),
                                               "gpu_pct", i % 100));
    }
    jf_msg_run_ref_t ref = {.run = TMSG_RUN, .attempt = 2, .seq = 9};
    jf_msg_t m = tmsg_roundtrip(jf_msg_telemetry_new(7, &ref, &items), JF_MSG_TO_COORD);
    assert_non_null(m.telemetry);
    assert_int_equal(m.telemetry->n_samples, JF_MSG_ARRAY_MAX);
    for (int i = 0; i < JF_MSG_ARRAY_MAX; i++) {
        assert_int_equal(m.telemetry->samples[i].t_us, INT64_C(1700000000000000) + i);
        assert_int_equal(
            json_integer_value(json_object_get(m.telemetry->samples[i].json, "gpu_pct")), i % 100);
        // The parsed sample is lent from the body, not copied.
        assert_ptr_equal(m.telemetry->samples[i].json,
                         json_array_get(json_object_get(m.body, "samples"), (size_t) i));
    }
    t_expect_freed(&m);
}

// A batch refused part-way frees the items it had decoded (ASan: a leak fails the test) and
// names the item by index, as before the typed payload.
static void test_refused_batch_frees_partial(void **state)
{
    (void) state;
    size_t len = 0;
    char *good = tmsg_read_fixture("good", "run-progress-measure.json", &len);
    assert_non_null(good);
    json_t *body = json_loadb(good, len, 0, NULL);
    free(good);
    json_t *recs = json_object_get(body, "records");
    json_t *bad_measure = json_deep_copy(json_array_get(recs, 1));
    json_object_set_new(bad_measure, "dataset_bytes", json_integer(-1));
    json_array_append_new(recs, bad_measure);
    char *text = json_dumps(body, JSON_COMPACT);
    tmsg_decoded_t d = tmsg_decode(text, strlen(text), JF_MSG_TO_COORD);
    tmsg_expect_fail("measure then bad measure", &d, -EPROTO, JF_MSG_E_BAD_FIELD, "records[2]", 12);
    assert_null(d.msg.progress);
    free(text);
    json_decref(body);

    const char *tele = "{\"v\":1,\"type\":\"telemetry\",\"id\":3,\"run\":\"" TMSG_RUN
                       "\",\"attempt\":1,\"seq\":1,\"samples\":[{\"t_us\":5},{\"t_us\":6},"
                       "{\"t_us\":0}]}";
    d = tmsg_decode(tele, strlen(tele), JF_MSG_TO_COORD);
    tmsg_expect_fail("third sample bad", &d, -EPROTO, JF_MSG_E_BAD_FIELD, "samples[2]", 3);
    assert_null(d.msg.telemetry);

    const char *prog = "{\"v\":1,\"type\":\"run.progress\",\"id\":4,\"run\":\"" TMSG_RUN
                       "\",\"attempt\":1,\"seq\":1,\"records\":[" T_EPOCH_REC ",{\"kind\":\"x\"}]}";
    d = tmsg_decode(prog, strlen(prog), JF_MSG_TO_COORD);
    tmsg_expect_fail("second record bad", &d, -EPROTO, JF_MSG_E_BAD_FIELD,
                     "records[1]: record kind 'x'", 4);
    assert_null(d.msg.progress);
}

// Other types carry no stream payload.
static void test_other_types_no_payload(void **state)
{
    (void) state;
    tmsg_decoded_t d = t_decode_fixture("run-done.json");
    assert_null(d.msg.progress);
    assert_null(d.msg.telemetry);
    t_expect_freed(&d.msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_progress_records_typed),
        cmocka_unit_test(test_progress_measure_typed),
        cmocka_unit_test(test_telemetry_samples_typed),
        cmocka_unit_test(test_telemetry_full_batch),
        cmocka_unit_test(test_refused_batch_frees_partial),
        cmocka_unit_test(test_other_types_no_payload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
