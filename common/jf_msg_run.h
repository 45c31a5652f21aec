/* Run family: run.assign / run.accept / run.reject / run.cancel / run.progress / telemetry /
 * run.done / run.failed / ack (docs/protocol.md §5). Every message about a run carries
 * (run, attempt); the agent->coordinator stream of one attempt (progress, telemetry, done,
 * failed) is numbered by seq = 1, 2, 3... and acknowledged cumulatively. */
#ifndef JF_MSG_RUN_H
#define JF_MSG_RUN_H

#include "jf_err.h"
#include "jf_msg.h"
#include "jf_run_spec.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define JF_SEQ_MAX (INT64_C(1) << 53)
// Credit (docs/protocol.md §5.3.6): stream messages a session may have in flight per stream, as
// granted in welcome and ack. The most a coordinator may grant is the window of agents without
// credit, so a grant never lets an agent send more than it did before.
#define JF_CREDIT_MAX 32
// The hello's `software` key by which an agent says it understands credit members.
#define JF_CREDIT_SOFTWARE_KEY "credit"
#define JF_REC_ENERGY_MAX_MJ 1e15 // largest energy figure accepted on the wire (mJ; ~32 kW-years)
#define JF_REC_POWER_MAX_MW  1e7 // largest power figure accepted (mW; as AGENT_ENERGY_POWER_MAX_MW)

typedef struct jf_msg_run_ref {
    char run[JF_RUN_ID_LEN + 1]; // run id
    int64_t attempt;             // 1-based attempt
    int64_t seq;                 // stream position; 0 where the type carries none
} jf_msg_run_ref_t;

typedef enum jf_fail_reason {
    JF_FAIL_OOM = 0,
    JF_FAIL_CRASHED,
    JF_FAIL_TIMEOUT,
    JF_FAIL_CANCELLED,
    JF_FAIL_INVALID,
    JF_FAIL_INFEASIBLE,
    JF_FAIL_BUSY, // run.reject only: the agent is running another run
    JF_FAIL_REASON_COUNT,
} jf_fail_reason_t;

// What the inference beside training did during a concurrent run's epoch (docs/concurrent.md;
// a plain value record). Latencies run from a request's arrival to the end of its minibatch.
typedef struct jf_epoch_concurrent {
    int64_t requests;       // requests that arrived (every one is served)
    int64_t infer_batches;  // inference minibatches
    int64_t infer_us;       // time in inference minibatches
    int64_t switch_us;      // time lost handing the GPU between training and inference
    int64_t latency_p50_us; // request latency: median
    int64_t latency_p99_us; // 99th percentile
    int64_t latency_max_us; // largest
    double within_budget;   // share of the requests within the run's budget, 0..1
} jf_epoch_concurrent_t;
#define JF_EPOCH_BENCH_MAX 31 // longest roofline benchmark name, without the NUL

typedef struct jf_epoch_rec {
    int epoch;              // 0-based; epoch 0 is the warm-up
    bool warmup;
    int64_t e2e_us;         // end-to-end epoch time
    int64_t fetch_stall_us; // sum over minibatches of the time compute waited for data
    int64_t compute_us;     // sum over minibatches of forward + backward + step
    int64_t samples;        // samples trained in the epoch
    bool has_loss;          // false when the loss was not finite
    double loss;            // mean training loss
    bool has_energy;        // energy_mj and avg_power_mw were measured (absent: no power
                            // readable)
    double energy_mj;       // board energy over [end - e2e, end], mJ (docs/telemetry.md)
    double avg_power_mw;    // mean power over the covered part of that interval, mW
    bool has_peak;          // peak_power_mw was measured (needs a sample inside the interval)
    double peak_power_mw;   // highest sampled power inside it, mW
    bool has_concurrent;    // a concurrent run's epoch: concurrent is set
    jf_epoch_concurrent_t concurrent; // inference beside training (has_concurrent)
    char bench[JF_EPOCH_BENCH_MAX + 1]; // roofline run: its microbenchmark ("matmul-cpu", ...;
                                        // docs/roofline.md); "" for a training epoch
    bool has_work;                      // work_flop and work_bytes are given (roofline run)
    double work_flop;                   // FLOPs the epoch's benchmark did
    double work_bytes;                  // bytes it moved (read plus written)
} jf_epoch_rec_t;

typedef struct jf_minibatch_rec {
    int epoch;
    int64_t index;          // 0-based within the epoch
    int64_t samples;
    int64_t fetch_stall_us;
    int64_t compute_us;
    bool has_loss;
    double loss;
} jf_minibatch_rec_t;

typedef enum jf_record_kind {
    JF_REC_START = 0, // trainer facts: device, threads, BLAS, versions
    JF_REC_EPOCH,
    JF_REC_MINIBATCH,
    JF_REC_MEASURE, // how the attempt was measured, once before the final message (agent)
} jf_record_kind_t;

typedef struct jf_record {
    jf_record_kind_t kind;
    jf_epoch_rec_t epoch;         // kind == JF_REC_EPOCH
    jf_minibatch_rec_t minibatch; // kind == JF_REC_MINIBATCH
    const json_t *info;           // kind == JF_REC_START: object of scalars; borrowed
    const json_t *measure;        // kind == JF_REC_MEASURE: the checked record; borrowed
                                  // (jf_msg_measure.h reads it)
} jf_record_t;

const char *jf_fail_reason_name(jf_fail_reason_t reason);
bool jf_fail_reason_parse(const char *name, jf_fail_reason_t *ret_reason);

// (run, attempt[, seq]) of any validated run-family body.
int jf_msg_run_ref_parse(const json_t *body, jf_msg_run_ref_t *ret_ref, jf_err_t *err);

// run.accept or run.cancel (type selects). Caller owns.
json_t *jf_msg_run_ref_new(jf_msg_type_t type, int64_t id, const char *run, int64_t attempt);
json_t *jf_msg_ack_new(int64_t id, const char *run, int64_t attempt, int64_t seq);

// Sets the optional `credit` member (1..JF_CREDIT_MAX) of a welcome or ack being built; credit 0
// leaves the message without it. Returns 0, or -EINVAL (credit out of range) or -ENOMEM.
int jf_msg_set_credit(json_t *msg, int64_t credit);
// Reads the optional `credit` member of a welcome or ack body: *ret_credit is 0 when absent.
// Returns 0, or -EPROTO with err naming the member when it is present but out of range.
int jf_msg_credit_parse(const json_t *body, int64_t *ret_credit, jf_err_t *err);

// A run.assign's typed form: what jf_msg_decode leaves in jf_msg_t.assign.
struct jf_msg_run_assign {
    jf_run_spec_t spec; // the run, decoded and validated from params
    int64_t attempt;    // 1-based attempt
};

// The typed form of a run.progress (jf_msg_t.progress): each record decoded once, by the
// decoder, so the coordinator stores the structs without walking the JSON again.
typedef struct jf_measure jf_measure_t; // jf_msg_measure.h

typedef struct jf_msg_progress_rec {
    jf_record_t rec;       // kind and fields; rec.info and rec.measure borrow the message body
    jf_measure_t *measure; // kind == JF_REC_MEASURE: the decoded record (~40 kB, so on the
                           // heap); owned by the payload; else NULL
} jf_msg_progress_rec_t;

struct jf_msg_run_progress {
    size_t n_records;
    jf_msg_progress_rec_t *records; // n_records, in message order; owned
};

// One checked telemetry sample as the coordinator stores it. The store packs a sample from its
// JSON (docs/store.md, "Telemetry storage") and a sample is open (members the schema does not
// know are kept), so the decoder keeps the JSON it checked rather than the typed struct (about
// 10 kB each), and no copy of it: the coordinator stores from the message's own tree.
typedef struct jf_msg_sample {
    int64_t t_us;       // the sample's wall-clock time, us
    const json_t *json; // the sample; borrowed from the message's body (valid while
                        // jf_msg_t.body is)
} jf_msg_sample_t;

struct jf_msg_telemetry {
    size_t n_samples;
    jf_msg_sample_t *samples; // n_samples, in message order; owned
};

json_t *jf_msg_run_assign_new(int64_t id, const jf_run_spec_t *spec, int64_t attempt);
// The spec and attempt of a run.assign body. jf_msg_decode already calls it (the result is in
// jf_msg_t.assign); this is for code that holds the JSON alone (tests, tools).
int jf_msg_run_assign_parse(const json_t *body, jf_run_spec_t *ret_spec, int64_t *ret_attempt,
                            jf_err_t *err);

// run.reject (seq ignored) or run.failed. detail is cut to JF_MSG_TEXT_MAX printable bytes.
json_t *jf_msg_run_reject_new(int64_t id, const char *run, int64_t attempt,
                              jf_fail_reason_t reason, const char *detail);
json_t *jf_msg_run_failed_new(int64_t id, const jf_msg_run_ref_t *ref, jf_fail_reason_t reason,
                              const char *detail);
// Reason and detail of a validated run.reject or run.failed body.
int jf_msg_run_failure_parse(const json_t *body, jf_fail_reason_t *ret_reason, char *detail,
                             size_t detail_size, jf_err_t *err);

json_t *jf_msg_run_done_new(int64_t id, const jf_msg_run_ref_t *ref, int64_t epochs);

// run.progress / telemetry: takes over items (an array of records or samples) on success and
// sets *items_p to NULL; on failure the caller still owns it.
json_t *jf_msg_run_progress_new(int64_t id, const jf_msg_run_ref_t *ref, json_t **items_p);
json_t *jf_msg_telemetry_new(int64_t id, const jf_msg_run_ref_t *ref, json_t **items_p);

// The epoch and minibatch records' schema tables (docs/schema.md). Static; never NULL.
const jf_schema_t *jf_epoch_rec_schema(void);
const jf_schema_t *jf_minibatch_rec_schema(void);

// One progress record from its JSON form. ret->info borrows from rec.
int jf_record_parse(const json_t *rec, jf_record_t *ret_record, jf_err_t *err);
json_t *jf_record_epoch_to_json(const jf_epoch_rec_t *rec);
// Adds rec's energy_mj and avg_power_mw, and peak_power_mw when has_peak (has_energy is not
// looked at), to the epoch record json. Returns 0 or -ENOMEM.
int jf_record_epoch_set_energy(json_t *json, const jf_epoch_rec_t *rec);
json_t *jf_record_minibatch_to_json(const jf_minibatch_rec_t *rec);
json_t *jf_record_start_to_json(const json_t *info);

// One telemetry sample: an object with integer "t_us" (wall clock) and at most 128 members whose
// values are numbers, strings (<= 64 bytes), booleans or arrays/objects of those, two levels deep;
// then the members the sample schema knows are checked by type and range
// (jf_telemetry_sample.h). Members it does not know are kept (telemetry is tolerant).
int jf_telemetry_sample_check(const json_t *sample, jf_err_t *err);

#endif
