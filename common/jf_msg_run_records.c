/* The epoch and minibatch records' schema tables (docs/protocol.md §5.4, docs/schema.md): each
 * field once, with its range, unit and store column; jf_record_parse and the record encoders
 * come from them. The start record is not on a schema (jf_msg_run.c); the measure record's
 * table is jf_measure_schema.c. */
#include "jf_msg_run.h"

#include "jf_units.h"

#include <errno.h>
#include <float.h>
#include <stddef.h>

#define S_DURATION_MAX_US (INT64_C(1) << 50)
#define S_SAMPLES_MAX     (INT64_C(1) << 40)

static const char *const s_kind[] = {"kind", NULL}; // the record's kind, read by jf_record_parse

// Tables read best one field to a row block; clang-format would put every member on a line.
// clang-format off
#define S_US(rec, member, hdr) .type = JF_SCHEMA_I64, .offset = offsetof(rec, member),           \
        .size = sizeof(int64_t), .lo = 0, .hi = S_DURATION_MAX_US, .unit = "us",                 \
        .column = #member, .header = hdr, .header_scale = JF_US_PER_S
#define S_LOSS(rec) .type = JF_SCHEMA_NUM, .offset = offsetof(rec, loss), .size = sizeof(double), \
        .lo_num = -DBL_MAX, .hi_num = DBL_MAX, .optional = true, .nullable = true,               \
        .has_flag = true, .has_offset = offsetof(rec, has_loss), .column = "loss",               \
        .header = "loss", .doc = "mean training loss; null when not finite"
#define S_EPOCH(rec) .type = JF_SCHEMA_INT, .offset = offsetof(rec, epoch), .size = sizeof(int), \
        .lo = 0, .hi = JF_EPOCHS_MAX - 1, .column = "epoch", .header = "epoch",                  \
        .doc = "0-based; epoch 0 is the warm-up"

// A concurrent run's inference during the epoch (issue #15, docs/concurrent.md).
static const jf_schema_field_t s_concurrent_fields[] = {
    {.name = "requests", .type = JF_SCHEMA_I64,
     .offset = offsetof(jf_epoch_concurrent_t, requests), .size = sizeof(int64_t), .lo = 0,
     .hi = S_SAMPLES_MAX, .column = "requests", .header = "infer_requests",
     .doc = "inference requests that arrived"},
    {.name = "infer_batches", .type = JF_SCHEMA_I64,
     .offset = offsetof(jf_epoch_concurrent_t, infer_batches), .size = sizeof(int64_t), .lo = 0,
     .hi = S_SAMPLES_MAX, .column = "infer_batches", .header = "infer_batches",
     .doc = "inference minibatches"},
    {.name = "infer_us", S_US(jf_epoch_concurrent_t, infer_us, "infer_s"),
     .doc = "time in inference minibatches"},
    {.name = "switch_us", S_US(jf_epoch_concurrent_t, switch_us, "switch_s"),
     .doc = "time handing the GPU between training and inference"},
    {.name = "latency_p50_us", S_US(jf_epoch_concurrent_t, latency_p50_us, "latency_p50_s"),
     .doc = "request latency, median"},
    {.name = "latency_p99_us", S_US(jf_epoch_concurrent_t, latency_p99_us, "latency_p99_s"),
     .summary_mean = true, .doc = "request latency, 99th percentile"},
    {.name = "latency_max_us", S_US(jf_epoch_concurrent_t, latency_max_us, "latency_max_s"),
     .doc = "request latency, largest"},
    {.name = "within_budget", .type = JF_SCHEMA_NUM,
     .offset = offsetof(jf_epoch_concurrent_t, within_budget), .size = sizeof(double),
     .lo_num = 0, .hi_num = 1, .column = "within_budget", .header = "within_budget",
     .summary_mean = true, .doc = "share of the requests within the latency budget"},
};

static const jf_schema_t s_concurrent_schema = {
    .name = "concurrent",
    JF_SCHEMA_FIELDS(s_concurrent_fields),
};

static const jf_schema_field_t s_epoch_fields[] = {
    {.name = "epoch", S_EPOCH(jf_epoch_rec_t)},
    {.name = "warmup", .type = JF_SCHEMA_BOOL, .offset = offsetof(jf_epoch_rec_t, warmup),
     .size = sizeof(bool), .column = "warmup", .header = "warmup", .doc = "epoch 0"},
    {.name = "e2e_us", S_US(jf_epoch_rec_t, e2e_us, "e2e_s"), .summary_mean = true,
     .doc = "end-to-end epoch time"},
    {.name = "fetch_stall_us", S_US(jf_epoch_rec_t, fetch_stall_us, "fetch_stall_s"),
     .summary_mean = true, .doc = "time compute waited for data, summed over minibatches"},
    {.name = "compute_us", S_US(jf_epoch_rec_t, compute_us, "compute_s"), .summary_mean = true,
     .doc = "forward + backward + step, summed over minibatches"},
    {.name = "samples", .type = JF_SCHEMA_I64, .offset = offsetof(jf_epoch_rec_t, samples),
     .size = sizeof(int64_t), .lo = 0, .hi = S_SAMPLES_MAX, .column = "samples",
     .header = "samples", .doc = "samples trained"},
    {.name = "loss", S_LOSS(jf_epoch_rec_t)},
    {.name = "energy_mj", .type = JF_SCHEMA_NUM, .offset = offsetof(jf_epoch_rec_t, energy_mj),
     .size = sizeof(double), .lo_num = 0, .hi_num = JF_REC_ENERGY_MAX_MJ, .unit = "mJ",
     .optional = true, .has_flag = true, .has_offset = offsetof(jf_epoch_rec_t, has_energy),
     .column = "energy_mj", .header = "energy_mj", .summary_mean = true,
     .doc = "board energy over the epoch"},
    {.name = "avg_power_mw", .type = JF_SCHEMA_NUM,
     .offset = offsetof(jf_epoch_rec_t, avg_power_mw), .size = sizeof(double), .lo_num = 0,
     .hi_num = JF_REC_POWER_MAX_MW, .unit = "mW", .optional = true, .has_flag = true,
     .has_offset = offsetof(jf_epoch_rec_t, has_energy), .column = "avg_power_mw",
     .header = "avg_power_mw", .summary_mean = true,
     .doc = "mean power over the covered part of the epoch"},
    {.name = "peak_power_mw", .type = JF_SCHEMA_NUM,
     .offset = offsetof(jf_epoch_rec_t, peak_power_mw), .size = sizeof(double), .lo_num = 0,
     .hi_num = JF_REC_POWER_MAX_MW, .unit = "mW", .optional = true, .has_flag = true,
     .has_offset = offsetof(jf_epoch_rec_t, has_peak), .column = "peak_power_mw",
     .header = "peak_power_mw", .doc = "highest sampled power inside the epoch"},
    {.name = "concurrent", .type = JF_SCHEMA_OBJ, .offset = offsetof(jf_epoch_rec_t, concurrent),
     .size = sizeof(jf_epoch_concurrent_t), .optional = true, .has_flag = true,
     .has_offset = offsetof(jf_epoch_rec_t, has_concurrent), .sub = &s_concurrent_schema,
     .column = "concurrent", .doc = "a concurrent run's inference during the epoch"},
    {.name = "bench", .type = JF_SCHEMA_STR, .offset = offsetof(jf_epoch_rec_t, bench),
     .size = sizeof(((jf_epoch_rec_t *) 0)->bench), .optional = true, .omit_zero = true,
     .is_valid = jf_parse_is_ident, .must = "is not a valid name", .column = "bench",
     .header = "bench", .doc = "roofline run: the epoch's microbenchmark"},
    {.name = "work_flop", .type = JF_SCHEMA_NUM, .offset = offsetof(jf_epoch_rec_t, work_flop),
     .size = sizeof(double), .lo_num = 0, .hi_num = 1e21, .optional = true, .has_flag = true,
     .has_offset = offsetof(jf_epoch_rec_t, has_work), .column = "work_flop",
     .header = "work_flop", .doc = "roofline run: FLOPs the benchmark did"},
    {.name = "work_bytes", .type = JF_SCHEMA_NUM, .offset = offsetof(jf_epoch_rec_t, work_bytes),
     .size = sizeof(double), .lo_num = 0, .hi_num = 1e21, .optional = true, .has_flag = true,
     .has_offset = offsetof(jf_epoch_rec_t, has_work), .column = "work_bytes",
     .header = "work_bytes", .doc = "roofline run: bytes the benchmark moved"},
};

static const jf_schema_field_t s_minibatch_fields[] = {
    {.name = "epoch", S_EPOCH(jf_minibatch_rec_t)},
    {.name = "index", .type = JF_SCHEMA_I64, .offset = offsetof(jf_minibatch_rec_t, index),
     .size = sizeof(int64_t), .lo = 0, .hi = S_SAMPLES_MAX, .column = "idx",
     .header = "minibatch", .doc = "0-based within the epoch"},
    {.name = "samples", .type = JF_SCHEMA_I64, .offset = offsetof(jf_minibatch_rec_t, samples),
     .size = sizeof(int64_t), .lo = 0, .hi = JF_BATCH_MAX, .column = "samples",
     .header = "samples", .doc = "samples in the minibatch"},
    {.name = "fetch_stall_us", S_US(jf_minibatch_rec_t, fetch_stall_us, "fetch_stall_s"),
     .doc = "time compute waited for this minibatch"},
    {.name = "compute_us", S_US(jf_minibatch_rec_t, compute_us, "compute_s"),
     .doc = "forward + backward + step"},
    {.name = "loss", S_LOSS(jf_minibatch_rec_t)},
};
// clang-format on

// energy_mj and avg_power_mw come together or not at all; peak_power_mw only with them.
static int s_check_energy(const json_t *rec, jf_err_t *err)
{
    bool has_e = json_object_get(rec, "energy_mj") != NULL;
    bool has_a = json_object_get(rec, "avg_power_mw") != NULL;
    bool has_p = json_object_get(rec, "peak_power_mw") != NULL;
    if (has_e != has_a || (has_p && !has_e)) {
        return jf_err_set(err, -EPROTO,
                          "'energy_mj' and 'avg_power_mw' come together, and 'peak_power_mw' "
                          "only with them");
    }
    return 0;
}

static const jf_schema_t s_epoch_schema = {
    .name = "epoch record",
    JF_SCHEMA_FIELDS(s_epoch_fields),
    .words = JF_SCHEMA_WORDS_MEMBER,
    .also_allowed = s_kind,
    .check_json = s_check_energy,
};

static const jf_schema_t s_minibatch_schema = {
    .name = "minibatch record",
    JF_SCHEMA_FIELDS(s_minibatch_fields),
    .words = JF_SCHEMA_WORDS_MEMBER,
    .also_allowed = s_kind,
};

const jf_schema_t *jf_epoch_rec_schema(void)
{
    return &s_epoch_schema;
}

const jf_schema_t *jf_minibatch_rec_schema(void)
{
    return &s_minibatch_schema;
}

// {"kind": kind} followed by the record's fields in table order.
static json_t *s_with_kind(const char *kind, const jf_schema_t *schema, const void *rec)
{
    json_t *o = json_pack("{s:s}", "kind", kind);
    json_t *fields = jf_schema_encode(schema, rec);
    if (!o || !fields || json_object_update_new(o, fields) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *jf_record_epoch_to_json(const jf_epoch_rec_t *e)
{
    jf_epoch_rec_t rec = *e;
    rec.has_peak = rec.has_peak && rec.has_energy; // a peak only with the energy (s_check_energy)
    return s_with_kind("epoch", &s_epoch_schema, &rec);
}

json_t *jf_record_minibatch_to_json(const jf_minibatch_rec_t *m)
{
    return s_with_kind("minibatch", &s_minibatch_schema, m);
}
