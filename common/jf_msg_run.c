/* Run family codecs (docs/protocol.md §5). */
#include "jf_msg_run.h"

#include "jf_msg_family.h"
#include "jf_msg_measure.h"
#include "jf_telemetry_sample.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define JF_SAMPLE_MEMBERS_MAX 128
#define JF_SAMPLE_ARRAY_MAX   256
#define JF_SAMPLE_STR_MAX     64

static const char *const s_reasons[JF_FAIL_REASON_COUNT] = {
    "oom", "crashed", "timeout", "cancelled", "invalid", "infeasible", "busy",
};

const char *jf_fail_reason_name(jf_fail_reason_t reason)
{
    return (unsigned) reason < JF_FAIL_REASON_COUNT ? s_reasons[reason] : "?";
}

bool jf_fail_reason_parse(const char *name, jf_fail_reason_t *ret_reason)
{
    for (int i = 0; name && i < JF_FAIL_REASON_COUNT; i++) {
        if (strcmp(name, s_reasons[i]) == 0) {
            *ret_reason = (jf_fail_reason_t) i;
            return true;
        }
    }
    return false;
}

int jf_msg_run_ref_parse(const json_t *body, jf_msg_run_ref_t *ret_ref, jf_err_t *err)
{
    jf_msg_run_ref_t r = {0};
    int rc = jf_msg_get_str(body, "run", false, r.run, sizeof r.run, err);
    rc = rc ? rc : jf_msg_get_int(body, "attempt", 1, INT32_MAX, &r.attempt, err);
    if (rc == 0 && json_object_get(body, "seq")) {
        rc = jf_msg_get_int(body, "seq", 1, JF_SEQ_MAX, &r.seq, err);
    }
    if (rc == 0 && !jf_run_spec_is_run_id(r.run)) {
        rc = jf_err_set(err, -EINVAL, "'run' must be 'r' followed by 16 lowercase hex digits");
    }
    if (rc == 0) {
        *ret_ref = r;
    }
    return rc;
}

int jf_msg_check_run_ref(const json_t *body, jf_err_t *err)
{
    jf_msg_run_ref_t r;
    int rc = jf_msg_run_ref_parse(body, &r, err);
    json_t *re = json_object_get(body, "re");
    if (rc == 0 && re && !json_is_integer(re)) {
        rc = jf_err_set(err, -EPROTO, "'re' must be an integer");
    }
    return rc;
}

static int s_check_seq_ref(const json_t *body, jf_err_t *err)
{
    if (!json_object_get(body, "seq")) {
        return jf_err_set(err, -EPROTO, "'seq' must be an integer");
    }
    jf_msg_run_ref_t r;
    return jf_msg_run_ref_parse(body, &r, err);
}

int jf_msg_credit_parse(const json_t *body, int64_t *ret_credit, jf_err_t *err)
{
    int64_t credit = 0;
    if (json_object_get(body, "credit") != NULL) {
        int rc = jf_msg_get_int(body, "credit", 1, JF_CREDIT_MAX, &credit, err);
        if (rc != 0) {
            return rc;
        }
    }
    *ret_credit = credit;
    return 0;
}

int jf_msg_set_credit(json_t *msg, int64_t credit)
{
    if (credit == 0) {
        return 0;
    }
    if (credit < 1 || credit > JF_CREDIT_MAX) {
        return -EINVAL;
    }
    return json_object_set_new(msg, "credit", json_integer(credit)) == 0 ? 0 : -ENOMEM;
}

int jf_msg_check_ack(const json_t *body, jf_err_t *err)
{
    int64_t credit = 0;
    int rc = s_check_seq_ref(body, err);
    return rc ? rc : jf_msg_credit_parse(body, &credit, err);
}

json_t *jf_msg_run_ref_new(jf_msg_type_t type, int64_t id, const char *run, int64_t attempt)
{
    json_t *msg = jf_msg_new(type, id);
    if (msg && json_object_update_new(msg, json_pack("{s:s, s:I}", "run", run, "attempt",
                                                      (json_int_t) attempt)) != 0) {
        json_decref(msg);
        return NULL;
    }
    return msg;
}

json_t *jf_msg_ack_new(int64_t id, const char *run, int64_t attempt, int64_t seq)
{
    json_t *msg = jf_msg_run_ref_new(JF_MSG_ACK, id, run, attempt);
    if (msg && json_object_set_new(msg, "seq", json_integer(seq)) != 0) {
        json_decref(msg);
        return NULL;
    }
    return msg;
}

json_t *jf_msg_run_assign_new(int64_t id, const jf_run_spec_t *spec, int64_t attempt)
{
    json_t *msg = jf_msg_run_ref_new(JF_MSG_RUN_ASSIGN, id, spec->run_id, attempt);
    if (msg && json_object_set_new(msg, "params", jf_run_spec_to_json(spec)) != 0) {
        json_decref(msg);
        return NULL;
    }
    return msg;
}

int jf_msg_run_assign_parse(const json_t *body, jf_run_spec_t *ret_spec, int64_t *ret_attempt,
                            jf_err_t *err)
{
    jf_msg_run_ref_t ref;
    jf_run_spec_t spec;
    int rc = jf_msg_run_ref_parse(body, &ref, err);
    if (rc == 0 && !json_is_object(json_object_get(body, "params"))) {
        rc = jf_err_set(err, -EPROTO, "'params' must be an object");
    }
    rc = rc ? rc : jf_run_spec_from_json(json_object_get(body, "params"), &spec, err);
    if (rc == 0 && strcmp(spec.run_id, ref.run) != 0) {
        rc = jf_err_set(err, -EINVAL, "'params.run' differs from 'run'");
    }
    if (rc == 0) {
        *ret_spec = spec;
        *ret_attempt = ref.attempt;
    }
    return rc;
}

int jf_msg_decode_run_assign(const json_t *body, jf_msg_t *msg, jf_err_t *err)
{
    jf_msg_run_assign_t a = {0};
    int rc = jf_msg_run_assign_parse(body, &a.spec, &a.attempt, err);
    if (rc != 0) {
        return rc;
    }
    msg->assign = malloc(sizeof *msg->assign);
    if (!msg->assign) {
        return jf_err_set(err, -ENOMEM, "out of memory");
    }
    *msg->assign = a;
    return 0;
}

static json_t *s_failure_new(json_t *msg, jf_fail_reason_t reason, const char *detail)
{
    char cut[JF_MSG_TEXT_MAX + 1] = {0};
    for (size_t i = 0; detail && detail[i] && i < JF_MSG_TEXT_MAX; i++) {
        unsigned char c = (unsigned char) detail[i];
        cut[i] = (c < 0x20 || c >= 0x7f) ? '?' : (char) c;
    }
    if (msg && (json_object_set_new(msg, "reason", json_string(jf_fail_reason_name(reason))) != 0 ||
                json_object_set_new(msg, "detail", json_string(cut)) != 0)) {
        json_decref(msg);
        return NULL;
    }
    return msg;
}

json_t *jf_msg_run_reject_new(int64_t id, const char *run, int64_t attempt,
                              jf_fail_reason_t reason, const char *detail)
{
    return s_failure_new(jf_msg_run_ref_new(JF_MSG_RUN_REJECT, id, run, attempt), reason, detail);
}

json_t *jf_msg_run_failed_new(int64_t id, const jf_msg_run_ref_t *ref, jf_fail_reason_t reason,
                              const char *detail)
{
    json_t *msg = jf_msg_run_ref_new(JF_MSG_RUN_FAILED, id, ref->run, ref->attempt);
    if (msg && json_object_set_new(msg, "seq", json_integer(ref->seq)) != 0) {
        json_decref(msg);
        return NULL;
    }
    return s_failure_new(msg, reason, detail);
}

int jf_msg_run_failure_parse(const json_t *body, jf_fail_reason_t *ret_reason, char *detail,
                             size_t detail_size, jf_err_t *err)
{
    char reason[JF_IDENT_MAX + 1] = {0};
    int rc = jf_msg_get_str(body, "reason", false, reason, sizeof reason, err);
    rc = rc ? rc : jf_msg_get_str(body, "detail", true, detail, detail_size, err);
    if (rc == 0 && !jf_fail_reason_parse(reason, ret_reason)) {
        rc = jf_err_set(err, -EINVAL,
                        "'reason' must be one of oom, crashed, timeout, cancelled, invalid, "
                        "infeasible, busy");
    }
    return rc;
}

int jf_msg_check_run_reject(const json_t *body, jf_err_t *err)
{
    jf_fail_reason_t reason;
    char detail[JF_MSG_TEXT_MAX + 1];
    int rc = jf_msg_check_run_ref(body, err);
    return rc ? rc : jf_msg_run_failure_parse(body, &reason, detail, sizeof detail, err);
}

int jf_msg_check_run_failed(const json_t *body, jf_err_t *err)
{
    jf_fail_reason_t reason = JF_FAIL_CRASHED;
    char detail[JF_MSG_TEXT_MAX + 1];
    int rc = s_check_seq_ref(body, err);
    rc = rc ? rc : jf_msg_run_failure_parse(body, &reason, detail, sizeof detail, err);
    if (rc == 0 && reason == JF_FAIL_BUSY) {
        // "busy" refuses an assignment; a run that started cannot fail for being busy.
        rc = jf_err_set(err, -EINVAL,
                        "'reason' of run.failed must be one of oom, crashed, timeout, cancelled, "
                        "invalid, infeasible; 'busy' is for run.reject only");
    }
    return rc;
}

json_t *jf_msg_run_done_new(int64_t id, const jf_msg_run_ref_t *ref, int64_t epochs)
{
    json_t *msg = jf_msg_run_ref_new(JF_MSG_RUN_DONE, id, ref->run, ref->attempt);
    if (msg && json_object_update_new(msg, json_pack("{s:I, s:I}", "seq", (json_int_t) ref->seq,
                                                      "epochs", (json_int_t) epochs)) != 0) {
        json_decref(msg);
        return NULL;
    }
    return msg;
}

int jf_msg_check_run_done(const json_t *body, jf_err_t *err)
{
    int64_t epochs = 0;
    int rc = s_check_seq_ref(body, err);
    return rc ? rc : jf_msg_get_int(body, "epochs", 0, JF_EPOCHS_MAX, &epochs, err);
}

static json_t *s_stream_new(jf_msg_type_t type, const char *key, int64_t id,
                            const jf_msg_run_ref_t *ref, json_t **items_p)
{
    json_t *msg = jf_msg_run_ref_new(type, id, ref->run, ref->attempt);
    if (!msg || json_object_set_new(msg, "seq", json_integer(ref->seq)) != 0 ||
        json_object_set(msg, key, *items_p) != 0) {
        json_decref(msg);
        return NULL;
    }
    json_decref(*items_p);
    *items_p = NULL;
    return msg;
}

json_t *jf_msg_run_progress_new(int64_t id, const jf_msg_run_ref_t *ref, json_t **items_p)
{
    return s_stream_new(JF_MSG_RUN_PROGRESS, "records", id, ref, items_p);
}

json_t *jf_msg_telemetry_new(int64_t id, const jf_msg_run_ref_t *ref, json_t **items_p)
{
    return s_stream_new(JF_MSG_TELEMETRY, "samples", id, ref, items_p);
}

// A start record's info is a flat object of scalars (device, threads, BLAS, versions).
static int s_check_info(const json_t *info, jf_err_t *err)
{
    if (!json_is_object(info) || json_object_size(info) > 32) {
        return jf_err_set(err, -EPROTO, "'info' must be an object of at most 32 members");
    }
    const char *k = NULL;
    json_t *v = NULL;
    json_object_foreach((json_t *) info, k, v) {
        bool ok = json_is_number(v) || json_is_boolean(v) || json_is_null(v) ||
                  (json_is_string(v) && json_string_length(v) <= 256);
        if (!ok || strlen(k) > JF_IDENT_MAX) {
            return jf_err_set(err, -EPROTO, "'info.%.64s' must be a scalar", k);
        }
    }
    return 0;
}

int jf_record_parse(const json_t *rec, jf_record_t *ret_record, jf_err_t *err)
{
    jf_record_t r = {0};
    const char *kind = json_string_value(json_object_get(rec, "kind"));
    int rc = 0;
    if (!json_is_object(rec) || !kind) {
        return jf_err_set(err, -EPROTO, "a record must be an object with a string 'kind'");
    }
    if (strcmp(kind, "epoch") == 0) {
        r.kind = JF_REC_EPOCH;
        rc = jf_schema_decode(jf_epoch_rec_schema(), rec, &r.epoch, err);
    } else if (strcmp(kind, "minibatch") == 0) {
        r.kind = JF_REC_MINIBATCH;
        rc = jf_schema_decode(jf_minibatch_rec_schema(), rec, &r.minibatch, err);
    } else if (strcmp(kind, "measure") == 0) {
        r.kind = JF_REC_MEASURE;
        r.measure = rec;
        rc = jf_measure_check(rec, err);
    } else if (strcmp(kind, "start") == 0) {
        r.kind = JF_REC_START;
        r.info = json_object_get(rec, "info");
        rc = json_object_size(rec) == 2 ? s_check_info(r.info, err)
                                         : jf_err_set(err, -EPROTO, "start record: {kind, info}");
    } else {
        rc = jf_err_set(err, -EPROTO,
                        "record kind '%.32s' is not start, epoch, minibatch or measure", kind);
    }
    if (rc == 0) {
        *ret_record = r;
    }
    return rc;
}

int jf_record_epoch_set_energy(json_t *rec, const jf_epoch_rec_t *e)
{
    json_t *v = json_pack("{s:f, s:f}", "energy_mj", e->energy_mj, "avg_power_mw",
                          e->avg_power_mw);
    if (v && e->has_peak && json_object_set_new(v, "peak_power_mw", json_real(e->peak_power_mw))) {
        json_decref(v);
        return -ENOMEM;
    }
    return v && json_object_update_new(rec, v) == 0 ? 0 : -ENOMEM;
}

json_t *jf_record_start_to_json(const json_t *info)
{
    return json_pack("{s:s, s:O}", "kind", "start", "info", info);
}

static int s_check_items(const json_t *arr, const char *key, jf_err_t *err)
{
    if (!json_is_array(arr) || json_array_size(arr) == 0 ||
        json_array_size(arr) > JF_MSG_ARRAY_MAX) {
        return jf_err_set(err, -EPROTO, "'%s' must be an array of 1..%d items", key,
                          JF_MSG_ARRAY_MAX);
    }
    return 0;
}

// A batch message's envelope: seq and ref, then key, an array of 1..JF_MSG_ARRAY_MAX items
// (each item is then decoded by its type's function and named by index: "records[3]: ...").
static int s_check_batch(const json_t *body, const char *key, jf_err_t *err)
{
    int rc = s_check_seq_ref(body, err);
    return rc ? rc : s_check_items(json_object_get(body, key), key, err);
}

// A measure record is decoded straight into its struct: jf_record_parse would only check it
// (decoding into a scratch copy), and the receiver would then decode it a second time.
static int s_decode_record(const json_t *rec, jf_msg_progress_rec_t *ret, jf_err_t *err)
{
    const char *kind = json_string_value(json_object_get(rec, "kind"));
    if (!json_is_object(rec) || !kind || strcmp(kind, "measure") != 0) {
        return jf_record_parse(rec, &ret->rec, err);
    }
    jf_measure_t *m = malloc(sizeof *m);
    int rc = m ? jf_measure_decode(rec, m, err) : jf_err_set(err, -ENOMEM, "out of memory");
    if (rc != 0) {
        free(m);
        return rc;
    }
    ret->rec = (jf_record_t){.kind = JF_REC_MEASURE, .measure = rec};
    ret->measure = m;
    return 0;
}

void jf_msg_run_progress_free(jf_msg_run_progress_t *progress)
{
    if (!progress) {
        return;
    }
    for (size_t i = 0; progress->records && i < progress->n_records; i++) {
        free(progress->records[i].measure);
    }
    free(progress->records);
    free(progress);
}

int jf_msg_decode_run_progress(const json_t *body, jf_msg_t *msg, jf_err_t *err)
{
    const json_t *arr = json_object_get(body, "records");
    int rc = s_check_batch(body, "records", err);
    if (rc != 0) {
        return rc;
    }
    jf_msg_run_progress_t *p = calloc(1, sizeof *p);
    jf_msg_progress_rec_t *recs = calloc(json_array_size(arr), sizeof *recs);
    if (!p || !recs) {
        free(recs);
        free(p);
        return jf_err_set(err, -ENOMEM, "out of memory");
    }
    p->records = recs;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        if ((rc = s_decode_record(json_array_get(arr, i), &recs[i], err)) != 0) {
            (void) jf_err_prefix(err, "records[%zu]", i); // err may be NULL: keep rc
            jf_msg_run_progress_free(p);
            return rc;
        }
        p->n_records = i + 1;
    }
    msg->progress = p;
    return 0;
}

static bool s_is_leaf(const json_t *v)
{
    return json_is_number(v) || json_is_boolean(v) || json_is_null(v) ||
           (json_is_string(v) && json_string_length(v) <= JF_SAMPLE_STR_MAX);
}

// Values: leaves, or arrays/objects of leaves, or arrays of objects of leaves (rails[]).
static bool s_sample_value_ok(const json_t *v, int depth)
{
    if (s_is_leaf(v)) {
        return true;
    }
    if (depth >= 2) {
        return false;
    }
    size_t n = json_is_array(v) ? json_array_size(v) : json_object_size(v);
    if ((!json_is_array(v) && !json_is_object(v)) || n > JF_SAMPLE_ARRAY_MAX) {
        return false;
    }
    size_t i = 0;
    const char *k = NULL;
    json_t *x = NULL;
    if (json_is_array(v)) {
        json_array_foreach(v, i, x) {
            if (!s_sample_value_ok(x, depth + 1)) {
                return false;
            }
        }
        return true;
    }
    json_object_foreach((json_t *) v, k, x) {
        if (strlen(k) > JF_IDENT_MAX || !s_sample_value_ok(x, depth + 1)) {
            return false;
        }
    }
    return true;
}

int jf_telemetry_sample_check(const json_t *sample, jf_err_t *err)
{
    int64_t t_us = 0;
    if (!json_is_object(sample) || json_object_size(sample) > JF_SAMPLE_MEMBERS_MAX) {
        return jf_err_set(err, -EPROTO, "a sample must be an object of at most %d members",
                          JF_SAMPLE_MEMBERS_MAX);
    }
    int rc = jf_msg_get_int(sample, "t_us", 1, INT64_C(1) << 62, &t_us, err);
    const char *k = NULL;
    json_t *v = NULL;
    json_object_foreach((json_t *) sample, k, v) {
        if (rc == 0 && (strlen(k) > JF_IDENT_MAX || !s_sample_value_ok(v, 0))) {
            rc = jf_err_set(err, -EPROTO, "member '%.64s' is not a number, short string or "
                                          "a shallow array/object of those", k);
        }
    }
    // Then the members the sample schema knows, by type and range (the rest stay open).
    return rc ? rc : jf_telemetry_sample_check_typed(sample, err);
}

void jf_msg_telemetry_free(jf_msg_telemetry_t *telemetry)
{
    if (!telemetry) {
        return;
    }
    free(telemetry->samples);
    free(telemetry);
}

// A sample is checked, then lent to the payload as it is (jf_msg_run.h says why).
static int s_decode_sample(const json_t *sample, jf_msg_sample_t *ret, jf_err_t *err)
{
    int rc = jf_telemetry_sample_check(sample, err);
    if (rc != 0) {
        return rc;
    }
    ret->t_us = json_integer_value(json_object_get(sample, "t_us"));
    ret->json = sample;
    return 0;
}

int jf_msg_decode_telemetry(const json_t *body, jf_msg_t *msg, jf_err_t *err)
{
    const json_t *arr = json_object_get(body, "samples");
    int rc = s_check_batch(body, "samples", err);
    if (rc != 0) {
        return rc;
    }
    jf_msg_telemetry_t *t = calloc(1, sizeof *t);
    jf_msg_sample_t *samples = calloc(json_array_size(arr), sizeof *samples);
    if (!t || !samples) {
        free(samples);
        free(t);
        return jf_err_set(err, -ENOMEM, "out of memory");
    }
    t->samples = samples;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        t->n_samples = i + 1;
        if ((rc = s_decode_sample(json_array_get(arr, i), &samples[i], err)) != 0) {
            (void) jf_err_prefix(err, "samples[%zu]", i); // err may be NULL: keep rc
            jf_msg_telemetry_free(t);
            return rc;
        }
    }
    msg->telemetry = t;
    return 0;
}
