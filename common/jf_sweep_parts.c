/* A sweep's workloads (each a pair of the catalogue, jf_workload.h), shared run settings and
 * run-id set (jf_sweep_parts.h; docs/sweeps.md "Keys" and "workloads[]"). */
#include "jf_sweep_parts.h"

#include "jf_units.h"
#include "jf_workload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_CONTEXT_MAX 48

static const char *const s_workload_keys[] = {"name", "model", "dataset", "epochs", "inference"};
static const char *const s_inference_keys[] = {"model", "batch", "rate_per_s", "budget_ms"};

#define S_N_WORKLOAD_KEYS (sizeof s_workload_keys / sizeof s_workload_keys[0])

int jf_sweep_check_vocab(const jf_yaml_node_t *v, bool (*is)(const char *), const char *what,
                         const char *list, jf_err_t *err)
{
    int rc = jf_yaml_node_expect(v, JF_YAML_SCALAR, err);
    if (rc == 0 && !is(jf_yaml_node_text(v))) {
        return jf_yaml_error(err, -EINVAL, v, "unknown %s '%.64s', expected one of: %s", what,
                             jf_yaml_node_text(v), list);
    }
    return rc;
}

// w's name: given, or "<model>-<dataset>"; unique among the n workloads before it.
static int s_workload_name(const jf_sweep_workload_t *ws, size_t n, const jf_yaml_node_t *node,
                           jf_sweep_workload_t *w, jf_err_t *err)
{
    const jf_yaml_node_t *v = jf_yaml_node_get(node, "name");
    int rc = 0;
    if (v) {
        rc = jf_yaml_node_to_ident(v, w->name, sizeof w->name, err);
    } else {
        char name[2 * JF_IDENT_MAX + 2] = {0}; // two identifiers and the '-' always fit
        (void) snprintf(name, sizeof name, "%s-%s", w->model, w->dataset);
        if (strlen(name) >= sizeof w->name) {
            return jf_yaml_error(err, -EINVAL, node,
                                 "workload name '%s' is too long; give a 'name'", name);
        }
        memcpy(w->name, name, strlen(name) + 1);
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (strcmp(ws[i].name, w->name) == 0) {
            return jf_yaml_error(err, -EINVAL, v ? v : node,
                                 "duplicate workload name '%s'; give each workload a 'name'",
                                 w->name);
        }
    }
    return rc;
}

// The model must train on the dataset (the workload catalogue), else the run would be planned and
// then refused by every board. The position is the workload's own.
static int s_check_pair(const jf_yaml_node_t *node, const char *what, const jf_sweep_workload_t *w,
                        jf_err_t *err)
{
    jf_err_t pair = {0};
    if (jf_workload_check_pair(w->model, w->dataset, &pair) < 0) {
        return jf_yaml_error(err, -EINVAL, node, "%s: %s", what, pair.msg);
    }
    return 0;
}

// A workload's optional `inference:` (docs/concurrent.md): every key required.
static int s_parse_inference(const jf_yaml_node_t *node, const char *what, jf_run_concurrent_t *c,
                             jf_err_t *err)
{
    const jf_yaml_node_t *v[4] = {NULL};
    int rc = jf_yaml_check_keys(node, s_inference_keys, 4, what, err);
    for (size_t i = 0; rc == 0 && i < 4; i++) {
        rc = jf_yaml_node_require(node, s_inference_keys[i], what, &v[i], err);
    }
    rc = rc ? rc
            : jf_sweep_check_vocab(v[0], jf_run_spec_is_model, "model", jf_run_spec_models(),
                                   err);
    rc = rc ? rc : jf_yaml_node_to_str(v[0], c->infer_model, sizeof c->infer_model, err);
    rc = rc ? rc : jf_yaml_node_to_int(v[1], 1, JF_BATCH_MAX, &c->infer_batch, err);
    rc = rc ? rc : jf_yaml_node_to_double(v[2], 0.001, JF_RUN_RATE_MAX, &c->rate_per_s, err);
    int64_t ms = 0;
    rc = rc ? rc : jf_yaml_node_to_i64(v[3], 1, JF_RUN_BUDGET_MAX_MS, &ms, err);
    c->budget_us = ms * JF_US_PER_MS;
    return rc;
}

static int s_parse_workload(jf_sweep_workload_t *ws, size_t n, const jf_yaml_node_t *node,
                            jf_err_t *err)
{
    jf_sweep_workload_t *w = &ws[n];
    char what[S_CONTEXT_MAX] = {0};
    (void) snprintf(what, sizeof what, "workload #%zu", n + 1);
    const jf_yaml_node_t *model = NULL;
    const jf_yaml_node_t *dataset = NULL;
    int rc = jf_yaml_check_keys(node, s_workload_keys, S_N_WORKLOAD_KEYS, what, err);
    rc = rc ? rc : jf_yaml_node_require(node, "model", what, &model, err);
    rc = rc ? rc
            : jf_sweep_check_vocab(model, jf_run_spec_is_model, "model", jf_run_spec_models(),
                                   err);
    rc = rc ? rc : jf_yaml_node_to_str(model, w->model, sizeof w->model, err);
    rc = rc ? rc : jf_yaml_node_require(node, "dataset", what, &dataset, err);
    rc = rc ? rc
            : jf_sweep_check_vocab(dataset, jf_run_spec_is_dataset, "dataset",
                                   jf_run_spec_datasets(), err);
    rc = rc ? rc : jf_yaml_node_to_str(dataset, w->dataset, sizeof w->dataset, err);
    rc = rc ? rc : s_check_pair(node, what, w, err);
    const jf_yaml_node_t *epochs = jf_yaml_node_get(node, "epochs");
    w->epochs = JF_SWEEP_DEFAULT_EPOCHS;
    if (rc == 0 && epochs) {
        rc = jf_yaml_node_to_int(epochs, 1, JF_EPOCHS_MAX, &w->epochs, err);
    }
    const jf_yaml_node_t *inference = jf_yaml_node_get(node, "inference");
    if (rc == 0 && inference) {
        char sub[S_CONTEXT_MAX + 16] = {0};
        (void) snprintf(sub, sizeof sub, "%s inference", what);
        rc = s_parse_inference(inference, sub, &w->concurrent, err);
    }
    return rc ? rc : s_workload_name(ws, n, node, w, err);
}

int jf_sweep_workloads_parse(const jf_yaml_node_t *root, jf_sweep_workload_t *ws, size_t max,
                             size_t *ret_n, jf_err_t *err)
{
    const jf_yaml_node_t *v = NULL;
    *ret_n = 0;
    int rc = jf_yaml_node_require(root, "workloads", "the sweep", &v, err);
    rc = rc ? rc : jf_yaml_node_expect(v, JF_YAML_SEQUENCE, err);
    size_t n = rc ? 0 : jf_yaml_node_size(v);
    if (rc == 0 && (n == 0 || n > max)) {
        return jf_yaml_error(err, -EINVAL, v, "'workloads' must list 1..%zu workloads, got %zu",
                             max, n);
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = s_parse_workload(ws, i, jf_yaml_node_item(v, i), err);
        *ret_n += rc == 0 ? 1 : 0;
    }
    return rc;
}

static int s_parse_ints(const jf_yaml_node_t *root, const jf_fleet_config_t *fleet,
                        jf_run_spec_t *b, jf_err_t *err)
{
    b->prefetch = JF_SWEEP_DEFAULT_PREFETCH;
    b->threads = 0;
    b->telemetry_hz = fleet->coord.telemetry_hz;
    const jf_yaml_node_t *v = jf_yaml_node_get(root, "prefetch");
    int rc = v ? jf_yaml_node_to_int(v, 1, JF_PREFETCH_MAX, &b->prefetch, err) : 0;
    v = jf_yaml_node_get(root, "threads");
    if (rc == 0 && v) {
        rc = jf_yaml_node_to_int(v, 0, JF_THREADS_MAX, &b->threads, err);
    }
    v = jf_yaml_node_get(root, "telemetry_hz");
    if (rc == 0 && v) {
        rc = jf_yaml_node_to_int(v, 1, JF_TELEMETRY_HZ_MAX, &b->telemetry_hz, err);
    }
    // An idle baseline sweep (docs/baseline.md): every run measures the idle board instead.
    v = jf_yaml_node_get(root, "idle_s");
    if (rc == 0 && v) {
        rc = jf_yaml_node_to_int(v, 1, JF_IDLE_S_MAX, &b->idle_s, err);
    }
    return rc;
}

// `fl_round`: the federated round's run parameters for every run of the sweep (docs/sweeps.md
// "Federated rounds"; `jetfleet rounds run` writes such sweeps).
static int s_parse_fl_round(const jf_yaml_node_t *root, jf_run_spec_t *b, jf_err_t *err)
{
    static const char *const keys[] = {"round",          "minibatches", "init_weights",
                                       "return_weights", "shard",       "shards"};
    const jf_yaml_node_t *m = jf_yaml_node_get(root, "fl_round");
    if (!m) {
        return 0;
    }
    int rc = jf_yaml_node_expect(m, JF_YAML_MAPPING, err);
    rc = rc ? rc : jf_yaml_check_keys(m, keys, sizeof keys / sizeof keys[0], "fl_round", err);
    const jf_yaml_node_t *round = NULL;
    rc = rc ? rc : jf_yaml_node_require(m, "round", "fl_round", &round, err);
    rc = rc ? rc : jf_yaml_node_to_ident(round, b->fl_round, sizeof b->fl_round, err);
    const jf_yaml_node_t *v = jf_yaml_node_get(m, "minibatches");
    if (rc == 0 && v) {
        rc = jf_yaml_node_to_int(v, 0, JF_RUN_MINIBATCHES_MAX, &b->minibatches, err);
    }
    v = jf_yaml_node_get(m, "init_weights");
    if (rc == 0 && v) {
        rc = jf_yaml_node_to_str(v, b->init_weights, sizeof b->init_weights, err);
        if (rc == 0 && !jf_blob_is_sha256(b->init_weights)) {
            rc = jf_yaml_error(err, -EINVAL, v, "'init_weights' must be a sha256 (64 lowercase "
                                                "hex digits)");
        }
    }
    v = jf_yaml_node_get(m, "return_weights");
    if (rc == 0 && v) {
        rc = jf_yaml_node_to_bool(v, &b->return_weights, err);
    }
    v = jf_yaml_node_get(m, "shards");
    if (rc == 0 && v) {
        rc = jf_yaml_node_to_int(v, 1, JF_RUN_SHARDS_MAX, &b->shards, err);
    }
    v = jf_yaml_node_get(m, "shard");
    if (rc == 0 && v) {
        rc = jf_yaml_node_to_int(v, 0, b->shards > 0 ? b->shards - 1 : 0, &b->shard, err);
    }
    return rc;
}

int jf_sweep_settings_parse(const jf_yaml_node_t *root, const jf_fleet_config_t *fleet,
                            jf_run_spec_t *b, jf_err_t *err)
{
    int64_t seed = JF_SWEEP_DEFAULT_SEED;
    b->drop_caches = false;
    b->timeout_us = fleet->coord.run_timeout_us;
    int rc = s_parse_ints(root, fleet, b, err);
    const jf_yaml_node_t *v = jf_yaml_node_get(root, "seed");
    if (rc == 0 && v) {
        rc = jf_yaml_node_to_i64(v, 0, JF_SWEEP_SEED_MAX, &seed, err);
    }
    b->seed = (uint64_t) seed;
    v = jf_yaml_node_get(root, "drop_caches");
    if (rc == 0 && v) {
        rc = jf_yaml_node_to_bool(v, &b->drop_caches, err);
    }
    v = jf_yaml_node_get(root, "roofline");
    b->roofline = false;
    if (rc == 0 && v) {
        rc = jf_yaml_node_to_bool(v, &b->roofline, err);
    }
    v = jf_yaml_node_get(root, "timeout");
    if (rc == 0 && v) {
        rc =
            jf_yaml_node_to_duration_us(v, JF_US_PER_S, JF_RUN_TIMEOUT_MAX_US, &b->timeout_us, err);
    }
    return rc ? rc : s_parse_fl_round(root, b, err);
}

// One runtime value into its spec form ("" for bare), unless already in the list.
static int s_add_runtime(const jf_yaml_node_t *item,
                         char list[JF_SWEEP_RUNTIMES_MAX][JF_RUN_RUNTIME_MAX + 1], size_t *n,
                         jf_err_t *err)
{
    int rc = jf_sweep_check_vocab(item, jf_run_runtime_is_valid, "runtime", "bare, container", err);
    const char *text = rc ? NULL : jf_yaml_node_text(item);
    const char *spec = text && jf_run_runtime_is_container(text) ? JF_RUN_RUNTIME_CONTAINER : "";
    for (size_t i = 0; text && i < *n; i++) {
        if (strcmp(list[i], spec) == 0) {
            return 0;
        }
    }
    if (text) {
        (void) snprintf(list[(*n)++], JF_RUN_RUNTIME_MAX + 1, "%s", spec);
    }
    return rc;
}

int jf_sweep_runtimes_parse(const jf_yaml_node_t *root,
                            char ret_runtimes[JF_SWEEP_RUNTIMES_MAX][JF_RUN_RUNTIME_MAX + 1],
                            size_t *ret_n, jf_err_t *err)
{
    const jf_yaml_node_t *v = jf_yaml_node_get(root, "runtime");
    *ret_n = 0;
    if (!v) {
        ret_runtimes[(*ret_n)++][0] = '\0';
        return 0;
    }
    if (jf_yaml_node_kind(v) != JF_YAML_SEQUENCE) {
        return s_add_runtime(v, ret_runtimes, ret_n, err);
    }
    if (jf_yaml_node_size(v) == 0) {
        return jf_yaml_error(err, -EINVAL, v, "'runtime' must list bare and/or container");
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < jf_yaml_node_size(v); i++) {
        rc = s_add_runtime(jf_yaml_node_item(v, i), ret_runtimes, ret_n, err);
    }
    return rc;
}

static uint64_t s_id_hash(const char *run_id)
{
    uint64_t h = UINT64_C(14695981039346656037); // FNV-1a 64
    for (const unsigned char *p = (const unsigned char *) run_id; *p; p++) {
        h = (h ^ *p) * UINT64_C(1099511628211);
    }
    return h;
}

static int s_grow(jf_sweep_ids_t *ids, const jf_run_spec_t *runs)
{
    size_t n_slots = ids->n_slots ? 2 * ids->n_slots : JF_SWEEP_IDS_MIN_SLOTS;
    size_t *slots = calloc(n_slots, sizeof *slots);
    if (!slots) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < ids->n_slots; i++) {
        if (ids->slots[i]) {
            size_t j = (size_t) s_id_hash(runs[ids->slots[i] - 1].run_id) & (n_slots - 1);
            while (slots[j]) {
                j = (j + 1) & (n_slots - 1);
            }
            slots[j] = ids->slots[i];
        }
    }
    free(ids->slots);
    ids->slots = slots;
    ids->n_slots = n_slots;
    return 0;
}

int jf_sweep_ids_reserve(jf_sweep_ids_t *ids, const jf_run_spec_t *runs, size_t n_runs)
{
    // At most half full, so that probing stays short and always ends at an empty slot.
    return 2 * n_runs > ids->n_slots ? s_grow(ids, runs) : 0;
}

size_t *jf_sweep_ids_slot(const jf_sweep_ids_t *ids, const jf_run_spec_t *runs,
                          const char *run_id)
{
    size_t mask = ids->n_slots - 1;
    size_t j = (size_t) s_id_hash(run_id) & mask;
    while (ids->slots[j] && strcmp(runs[ids->slots[j] - 1].run_id, run_id) != 0) {
        j = (j + 1) & mask;
    }
    return &ids->slots[j];
}

void jf_sweep_ids_fini(jf_sweep_ids_t *ids)
{
    free(ids->slots);
    ids->slots = NULL;
    ids->n_slots = 0;
}
