/* The run spec's schema table: every run parameter once, with its JSON member, range, unit,
 * store column and trainer option (docs/schema.md "Run spec"; docs/protocol.md §run.assign for
 * the JSON form). The JSON codec and the validation of jf_run_spec.h come from it. */
#include "jf_run_spec.h"

#include "jf_schema.h"
#include "jf_units.h"

#include <errno.h>
#include <stddef.h>

#define JF_SEED_MAX (INT64_C(1) << 53) // exactly representable in every JSON reader

// Tables read best one field to a row block; clang-format would put every member on a line.
// clang-format off
#define S_STR(member) .type = JF_SCHEMA_STR, .offset = offsetof(jf_run_spec_t, member), \
                      .size = sizeof(((jf_run_spec_t *) 0)->member)
#define S_INT(member, l, h) .type = JF_SCHEMA_INT, .offset = offsetof(jf_run_spec_t, member), \
                            .size = sizeof(int), .lo = (l), .hi = (h)
#define S_BOOL(member) .type = JF_SCHEMA_BOOL, .offset = offsetof(jf_run_spec_t, member), \
                       .size = sizeof(bool)
#define S_CLOCK(member, l) .type = JF_SCHEMA_I64, .offset = offsetof(jf_run_custom_t, member), \
                           .size = sizeof(int64_t), .lo = (l), .hi = JF_RUN_CLOCK_MAX_HZ, \
                           .unit = "Hz", .say_unit = true

static const jf_schema_field_t s_custom_fields[] = {
    {.name = "cores", .type = JF_SCHEMA_INT, .offset = offsetof(jf_run_custom_t, n_cores),
     .size = sizeof(int), .lo = 1, .hi = JF_RUN_CORES_MAX, .column = "cores",
     .header = "custom_cores", .doc = "CPU cores online (cpu0..cores-1)"},
    {.name = "cpu_hz", S_CLOCK(cpu_hz, 1000), .column = "cpu_hz", .header = "custom_cpu_hz",
     .doc = "every online CPU cluster pinned here; whole kHz"},
    {.name = "gpu_hz", S_CLOCK(gpu_hz, 0), .optional = true, .omit_zero = true,
     .null_zero = true, .column = "gpu_hz", .header = "custom_gpu_hz",
     .doc = "GPU pinned here; 0: the mode's range"},
    {.name = "emc_hz", S_CLOCK(emc_hz, 0), .optional = true, .omit_zero = true,
     .null_zero = true, .column = "emc_hz", .header = "custom_emc_hz",
     .doc = "EMC locked here; 0: the mode's"},
};

static const jf_schema_t s_custom_schema = {
    .name = "custom point",
    JF_SCHEMA_FIELDS(s_custom_fields),
};

// Concurrent training and inference (issue #15, docs/concurrent.md). Every leaf is id_append:
// a concurrent run is another run than the training alone.
static const jf_schema_field_t s_concurrent_fields[] = {
    {.name = "infer_model", .type = JF_SCHEMA_STR,
     .offset = offsetof(jf_run_concurrent_t, infer_model),
     .size = sizeof(((jf_run_concurrent_t *) 0)->infer_model), .is_valid = jf_run_spec_is_model,
     .must = "must be one of lenet5, resnet18, vgg11, mobilenetv3", .column = "infer_model",
     .header = "infer_model", .flag = "--infer-model", .id_append = true,
     .doc = "model whose forward pass serves the requests"},
    {.name = "infer_batch", .type = JF_SCHEMA_INT,
     .offset = offsetof(jf_run_concurrent_t, infer_batch), .size = sizeof(int), .lo = 1,
     .hi = JF_BATCH_MAX, .column = "infer_batch", .header = "infer_batch",
     .flag = "--infer-batch", .id_append = true, .doc = "requests per inference minibatch"},
    {.name = "rate_per_s", .type = JF_SCHEMA_NUM,
     .offset = offsetof(jf_run_concurrent_t, rate_per_s), .size = sizeof(double),
     .lo_num = 0.001, .hi_num = JF_RUN_RATE_MAX, .column = "rate_per_s",
     .header = "infer_rate_per_s", .flag = "--infer-rate", .id_append = true,
     .doc = "mean request arrival rate (Poisson), per s"},
    {.name = "budget_ms", .type = JF_SCHEMA_I64,
     .offset = offsetof(jf_run_concurrent_t, budget_us), .size = sizeof(int64_t), .lo = 1,
     .hi = JF_RUN_BUDGET_MAX_MS, .scale = JF_US_PER_MS, .unit = "us", .column = "budget_us",
     .header = "infer_budget_s", .header_scale = JF_US_PER_S, .flag = "--infer-budget-ms",
     .id_append = true, .doc = "latency budget of one request (ms on the wire)"},
};

static const jf_schema_t s_concurrent_schema = {
    .name = "concurrent",
    JF_SCHEMA_FIELDS(s_concurrent_fields),
};

static const jf_schema_field_t s_fields[] = {
    {.name = "run", S_STR(run_id), .derived = true, .is_valid = jf_run_spec_is_run_id,
     .must = "must be 'r' followed by 16 lowercase hex digits", .column = "id", .header = "run",
     .doc = "stable run id (jf_run_spec_compute_id)"},
    {.name = "board", S_STR(board), .is_valid = jf_parse_is_ident, .must = "is not a valid name",
     .column = "board", .header = "board", .doc = "board name"},
    {.name = "workload", S_STR(workload), .is_valid = jf_parse_is_ident,
     .must = "is not a valid name", .column = "workload", .header = "workload",
     .doc = "workload name from the sweep"},
    {.name = "model", S_STR(model), .is_valid = jf_run_spec_is_model,
     .must = "must be one of lenet5, resnet18, vgg11, mobilenetv3", .column = "model",
     .header = "model", .flag = "--model", .doc = "DNN model"},
    {.name = "dataset", S_STR(dataset), .is_valid = jf_run_spec_is_dataset,
     .must = "must be one of mnist, cifar10, gld23k", .column = "dataset", .header = "dataset",
     .doc = "dataset"},
    {.name = "epochs", S_INT(epochs, 1, JF_EPOCHS_MAX), .column = "epochs", .header = "epochs",
     .flag = "--epochs", .doc = "epochs including the warm-up epoch 0"},
    {.name = "power_mode_id", S_INT(power_mode_id, 0, 255), .column = "power_mode_id",
     .header = "power_mode_id", .doc = "nvpmodel mode id"},
    {.name = "power_mode", S_STR(power_mode), .is_valid = jf_board_is_mode_name,
     .must = "must be 1..32 of [A-Za-z0-9_]", .column = "power_mode", .header = "power_mode",
     .doc = "nvpmodel mode name"},
    {.name = "storage", S_STR(storage), .is_valid = jf_run_spec_is_medium,
     .must = "must be one of sd, emmc, nvme, usb-hdd, usb-ssd, ssd, hdd, local",
     .column = "storage", .header = "storage", .doc = "storage medium the dataset is read from"},
    {.name = "workers", S_INT(workers, 0, JF_WORKERS_MAX), .column = "workers",
     .header = "workers", .flag = "--workers", .doc = "DataLoader worker processes"},
    {.name = "prefetch", S_INT(prefetch, 1, JF_PREFETCH_MAX), .column = "prefetch",
     .header = "prefetch", .flag = "--prefetch", .doc = "batches prefetched per worker"},
    {.name = "batch_size", S_INT(batch_size, 1, JF_BATCH_MAX), .column = "batch_size",
     .header = "batch_size", .flag = "--batch", .doc = "minibatch size (samples)"},
    {.name = "repeat", S_INT(repeat, 0, JF_REPEATS_MAX - 1), .column = "repeat",
     .header = "repeat", .doc = "0-based repeat index"},
    {.name = "threads", S_INT(threads, 0, JF_THREADS_MAX), .column = "threads",
     .header = "threads", .flag = "--threads", .doc = "intra-op threads; 0: the trainer's default"},
    {.name = "seed", .type = JF_SCHEMA_U64, .offset = offsetof(jf_run_spec_t, seed),
     .size = sizeof(uint64_t), .lo = 0, .hi = JF_SEED_MAX, .column = "seed", .header = "seed",
     .flag = "--seed", .doc = "training seed (sweep seed + repeat)"},
    {.name = "drop_caches", S_BOOL(drop_caches), .column = "drop_caches",
     .header = "drop_caches", .doc = "drop the page cache before the run"},
    {.name = "telemetry_hz", S_INT(telemetry_hz, 1, JF_TELEMETRY_HZ_MAX),
     .column = "telemetry_hz", .header = "telemetry_hz", .unit = "Hz",
     .doc = "telemetry sampling rate"},
    {.name = "timeout_ms", .type = JF_SCHEMA_I64, .offset = offsetof(jf_run_spec_t, timeout_us),
     .size = sizeof(int64_t), .lo = 1000, .hi = JF_RUN_TIMEOUT_MAX_US / JF_US_PER_MS,
     .scale = JF_US_PER_MS, .unit = "us", .column = "timeout_us", .header = "timeout_s",
     .header_scale = JF_US_PER_S, .doc = "kill the run after this long (ms on the wire)"},
    {.name = "custom", .type = JF_SCHEMA_OBJ, .offset = offsetof(jf_run_spec_t, custom),
     .size = sizeof(jf_run_custom_t), .optional = true, .sub = &s_custom_schema,
     .column = "custom", .doc = "custom power point on top of the mode (absent: none)"},
    {.name = "dvfs_off", S_BOOL(dvfs_off), .optional = true, .omit_zero = true,
     .column = "dvfs_off", .header = "dvfs_off",
     .doc = "DVFS off after the mode and the custom point"},
    {.name = "concurrent", .type = JF_SCHEMA_OBJ, .offset = offsetof(jf_run_spec_t, concurrent),
     .size = sizeof(jf_run_concurrent_t), .optional = true, .sub = &s_concurrent_schema,
     .column = "concurrent", .doc = "inference beside training (absent: training only)"},
    // Idle baselines (docs/baseline.md): a run that measures the idle board instead of training.
    {.name = "idle_s", S_INT(idle_s, 0, JF_IDLE_S_MAX), .optional = true, .omit_zero = true,
     .column = "idle_s", .header = "idle_s", .flag = "--idle-s", .id_append = true,
     .unit = "s", .doc = "idle baseline: measure the idle board this long; 0: a training run"},
    {.name = "telemetry_off", S_BOOL(telemetry_off), .optional = true, .omit_zero = true,
     .column = "telemetry_off", .header = "telemetry_off", .id_append = true,
     .doc = "sample only at the run's start and end (idle baseline)"},
    // Containers (docs/containers.md): where the trainer runs.
    {.name = "runtime", S_STR(runtime), .optional = true, .omit_zero = true,
     .is_valid = jf_run_runtime_is_valid, .must = "must be one of bare, container",
     .column = "runtime", .header = "runtime", .id_append = true,
     .doc = "where the trainer runs: bare (default) or container"},
    {.name = "roofline", S_BOOL(roofline), .optional = true, .omit_zero = true,
     .column = "roofline", .header = "roofline", .flag = "--roofline", .id_append = true,
     .doc = "roofline microbenchmarks instead of training (docs/roofline.md)"},
    // Federated rounds (issue 14). No trainer flag: the agent passes --minibatches and the
    // weight files itself (the blob must be fetched first; agent_session_trainer.c).
    {.name = "minibatches", S_INT(minibatches, 0, JF_RUN_MINIBATCHES_MAX), .optional = true,
     .omit_zero = true, .column = "minibatches", .header = "minibatches", .id_append = true,
     .doc = "minibatches per epoch (a federated round's local work); 0: the whole dataset"},
    {.name = "init_weights", S_STR(init_weights), .optional = true, .omit_zero = true,
     .is_valid = jf_blob_is_sha256, .must = "must be 64 lowercase hex digits (sha256)",
     .column = "init_weights", .header = "init_weights", .id_append = true,
     .doc = "sha256 of the weight blob to start from (blob.get); absent: seeded init"},
    {.name = "return_weights", S_BOOL(return_weights), .optional = true, .omit_zero = true,
     .column = "return_weights", .header = "return_weights", .id_append = true,
     .doc = "send the final weights back in the result stream (run.weights)"},
    {.name = "fl_round", S_STR(fl_round), .optional = true, .omit_zero = true,
     .is_valid = jf_parse_is_ident, .must = "is not a valid name", .column = "fl_round",
     .header = "fl_round", .id_append = true,
     .doc = "federated round the run belongs to, <rounds-id>.<round>"},
    {.name = "shard", S_INT(shard, 0, JF_RUN_SHARDS_MAX - 1), .optional = true, .omit_zero = true,
     .column = "shard", .header = "shard", .id_append = true,
     .doc = "the dataset part it trains on (samples i with i mod shards = shard)"},
    {.name = "shards", S_INT(shards, 0, JF_RUN_SHARDS_MAX), .optional = true, .omit_zero = true,
     .column = "shards", .header = "shards", .id_append = true,
     .doc = "parts the dataset is split into; 0: the whole dataset"},
#ifdef JF_SCHEMA_TEST_FIELD
    // Test-only (tests/unit/common/schema_field_test.c): a field added in this one place.
    {.name = "test_knob", S_INT(test_knob, 0, 1000), .optional = true, .omit_zero = true,
     .column = "test_knob", .header = "test_knob", .flag = "--test-knob", .id_append = true,
     .doc = "test-only optional field"},
#endif
};
// clang-format on

// What spans fields: clocks need cores, cpufreq takes whole kHz, a shard lies in the shards.
static int s_check(const void *rec, jf_err_t *err)
{
    const jf_run_custom_t *c = &((const jf_run_spec_t *)rec)->custom;
    if (c->n_cores == 0 && (c->cpu_hz != 0 || c->gpu_hz != 0 || c->emc_hz != 0)) {
        return jf_err_set(err, -EINVAL, "'custom' has clocks but no 'cores': give both");
    }
    const jf_run_spec_t *s = rec;
    if (s->shards != 0 ? s->shard >= s->shards : s->shard != 0) {
        return jf_err_set(err, -EINVAL, "'shard' %d must be below 'shards' %d", s->shard,
                          s->shards);
    }
    if (c->n_cores != 0 && c->cpu_hz % 1000 != 0) {
        return jf_err_set(err, -EINVAL, "'custom.cpu_hz' must be whole kHz (cpufreq), got %lld",
                          (long long)c->cpu_hz);
    }
    return 0;
}

static const jf_schema_t s_schema = {
    .name = "run spec",
    .context = "run parameters",
    JF_SCHEMA_FIELDS(s_fields),
    .words = JF_SCHEMA_WORDS_UNPACK,
    .check = s_check,
};

const jf_schema_t *jf_run_spec_schema(void)
{
    return &s_schema;
}
