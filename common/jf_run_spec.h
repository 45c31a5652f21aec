/* One run: the plain value record that a sweep expands into, the coordinator stores and sends in
 * run.assign, and the agent validates. Also the stable run id and the closed vocabularies (models,
 * datasets, storage media). docs/protocol.md §5.2 documents the JSON form. */
#ifndef JF_RUN_SPEC_H
#define JF_RUN_SPEC_H

#include "jf_blob.h"
#include "jf_board.h"
#include "jf_err.h"
#include "jf_parse.h"
#include "jf_run_runtime.h"
#include "jf_schema.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define JF_RUN_ID_LEN        17 // "r" + 16 lowercase hex digits
#define JF_WORKERS_MAX       16
#define JF_BATCH_MAX         4096
#define JF_EPOCHS_MAX        1000
#define JF_REPEATS_MAX       100
#define JF_PREFETCH_MAX      16
#define JF_THREADS_MAX       256
#define JF_TELEMETRY_HZ_MAX  50
#define JF_RUN_TIMEOUT_MAX_US (INT64_C(7) * 24 * 3600 * 1000000) // one week
#define JF_RUN_CORES_MAX      64                                   // custom cores online
#define JF_RUN_CLOCK_MAX_HZ   INT64_C(10000000000)                 // 10 GHz: a sanity bound
#define JF_IDLE_S_MAX          3600 // longest idle baseline phase, s (docs/baseline.md)
#define JF_RUN_ROOFLINE_EPOCHS     5 // a roofline run: warm-up, matmul and copy on CPU and CUDA
#define JF_RUN_ROOFLINE_EPOCHS_MIN 3 // and the fewest it reports: warm-up, one device's two
#define JF_RUN_POWER_LABEL_MAX 127 // longest jf_run_spec_power_label text, without the NUL
#define JF_RUN_MINIBATCHES_MAX 1000000 // local minibatches per epoch of a federated round
#define JF_RUN_SHARDS_MAX      1024    // parts a federated round splits the dataset into

// A custom power-mode point (jetson-platforms.md §6), applied on top of the run's nvpmodel mode
// (power_mode_id), which sets everything the point leaves alone. A plain value record.
typedef struct jf_run_custom {
    int n_cores;    // cpu0..n_cores-1 online, the rest offline; 1..JF_RUN_CORES_MAX; 0: no point
    int64_t cpu_hz; // every online cluster pinned (min = max) here; whole kHz
    int64_t gpu_hz; // the GPU pinned here; 0 leaves the mode's GPU range
    int64_t emc_hz; // the EMC locked here; 0 leaves the mode's EMC
} jf_run_custom_t;

#define JF_RUN_RATE_MAX      100000.0 // requests per s of a concurrent run
#define JF_RUN_BUDGET_MAX_MS 3600000  // latency budget of a concurrent run: one hour

// Concurrent training and inference (docs/concurrent.md): inference minibatches of a second
// model, serving requests that arrive at rate_per_s (Poisson), interleaved with the training
// minibatches on the one GPU. A plain value record; infer_model "" means a training-only run.
typedef struct jf_run_concurrent {
    char infer_model[JF_IDENT_MAX + 1]; // model whose forward pass serves requests
    int infer_batch;                    // requests per inference minibatch, 1..JF_BATCH_MAX
    double rate_per_s;                  // mean request arrival rate, (0, JF_RUN_RATE_MAX]
    int64_t budget_us;                  // latency budget of one request; whole ms
} jf_run_concurrent_t;

typedef struct jf_run_spec {
    char run_id[JF_RUN_ID_LEN + 1];       // stable id: jf_run_spec_compute_id
    char board[JF_IDENT_MAX + 1];         // board name
    char workload[JF_IDENT_MAX + 1];      // workload name from the sweep, e.g. "lenet5-mnist"
    char model[JF_IDENT_MAX + 1];         // jf_run_spec_is_model
    char dataset[JF_IDENT_MAX + 1];       // jf_run_spec_is_dataset
    int epochs;                           // 1..JF_EPOCHS_MAX, epoch 0 counts (it is the warm-up)
    int power_mode_id;                    // nvpmodel id
    char power_mode[JF_POWER_MODE_NAME_MAX + 1]; // its name
    char storage[JF_IDENT_MAX + 1];       // medium name, jf_run_spec_is_medium
    int workers;                          // DataLoader workers, 0..JF_WORKERS_MAX
    int prefetch;                         // batches prefetched per worker, 1..JF_PREFETCH_MAX
    int batch_size;                       // 1..JF_BATCH_MAX
    int repeat;                           // 0-based repeat index
    int threads;                          // intra-op threads, 0 = the trainer's default
    uint64_t seed;                        // training seed (sweep seed + repeat)
    bool drop_caches;                     // drop the page cache before the run
    int telemetry_hz;                     // 1..JF_TELEMETRY_HZ_MAX
    int64_t timeout_us;                   // kill the run after this long, 1 s .. one week
    jf_run_custom_t custom;               // custom point on top of the mode; n_cores 0: none
    bool dvfs_off;                        // DVFS off (jetson_clocks-like pinning at the caps in
                                          // force) after the mode and the custom point
    jf_run_concurrent_t concurrent;       // inference beside training; infer_model "": none
    int idle_s;         // idle baseline (docs/baseline.md): measure the idle board this many
                        // seconds instead of training, 0..JF_IDLE_S_MAX; 0: a training run
    bool telemetry_off; // idle baseline: sample only at the run's start and end, not at
                        // telemetry_hz (the cost of measuring, docs/baseline.md)
    char runtime[JF_RUN_RUNTIME_MAX + 1]; // where the trainer runs: "bare" or "container"
                                          // (docs/containers.md); "" = bare
    bool roofline;                        // a roofline run: the microbenchmarks of
                                          // docs/roofline.md instead of training
    // Federated rounds (docs/rounds.md "Execution"; issue 14). All optional: zero/"" = unused.
    int minibatches;                      // minibatches per epoch, 0..JF_RUN_MINIBATCHES_MAX;
                                          // 0: the whole dataset
    char init_weights[JF_BLOB_SHA256_HEX_LEN + 1]; // blob (sha256 hex) the trainer starts from,
                                                  // fetched by the agent (blob.get); "": seeded
    bool return_weights;                  // send the final weights back (run.weights)
    char fl_round[JF_IDENT_MAX + 1];      // the round this run belongs to, "<rounds>.<n>";
                                          // "": none (keeps runs of two rounds apart)
    int shard;                            // the part of the dataset it trains on, 0..shards-1
    int shards;                           // parts the dataset is split into (samples i with
                                          // i mod shards = shard); 0: the whole dataset
#ifdef JF_SCHEMA_TEST_FIELD
    int test_knob; // test-only optional field (schema_field_test): 0..1000, 0 = absent
#endif
} jf_run_spec_t;

// The run spec's schema table (docs/schema.md): JSON members, ranges, store columns, export
// headers and trainer options of every field. Static; never NULL.
const jf_schema_t *jf_run_spec_schema(void);

// Fills spec->run_id from every field that defines the run (all fields but run_id): FNV-1a 64
// over a canonical, versioned text form. Same parameters and board, same id, on every machine.
// The custom point and dvfs_off enter the text only when set, so that every run spec without
// them keeps the id it had before they existed.
void jf_run_spec_compute_id(jf_run_spec_t *spec);

// Checks every field's range and vocabulary. Returns 0, or -EINVAL with err naming the field.
int jf_run_spec_validate(const jf_run_spec_t *spec, jf_err_t *err);

// The JSON object form (docs/protocol.md). Caller owns the result; release with json_decref.
json_t *jf_run_spec_to_json(const jf_run_spec_t *spec);

// Decodes and validates the JSON object form strictly (unknown members are an error).
// Writes *ret_spec only on success. Returns 0, -EPROTO (shape) or -EINVAL (values).
int jf_run_spec_from_json(const json_t *obj, jf_run_spec_t *ret_spec, jf_err_t *err);

// True if the run asks for a custom point or DVFS off: more than an nvpmodel mode.
bool jf_run_spec_has_power_extras(const jf_run_spec_t *spec);

// A short readable form of the run's power setting into buf (at most size - 1 bytes):
// "MODE_15W_6CORE", "MODE_15W_6CORE +dvfs-off", "custom 4c cpu1.42G gpu0.803G on
// MODE_15W_6CORE +dvfs-off" (GHz to 3 digits; a clock left alone is not named).
void jf_run_spec_power_label(const jf_run_spec_t *spec, char *buf, size_t size);

bool jf_run_spec_is_model(const char *name);   // a model of the catalogue (jf_workload.h)
bool jf_run_spec_is_dataset(const char *name); // a dataset of the catalogue (jf_workload.h)
bool jf_run_spec_is_medium(const char *name);  // sd, emmc, nvme, usb-hdd, usb-ssd, ssd, hdd, local
bool jf_run_spec_is_run_id(const char *text);  // "r" + 16 lowercase hex

// Comma-separated vocabularies for error messages (static strings).
const char *jf_run_spec_models(void);
const char *jf_run_spec_datasets(void);
const char *jf_run_spec_media(void);

#endif
