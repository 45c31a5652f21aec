/* Loader of the simulator's parameter file (sim_params.h): jf_yaml for the tree, then one field
 * table per record kind (sim_params_internal.h), so that a key, its range and its unit
 * conversion live in one row; the boards are read by sim_params_board.c. Media are checked
 * against jf_run_spec.h's vocabulary. docs/simulator.md documents the format. */
#include "sim_params_internal.h"

#include "jf_run_spec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_KEYS_MAX       32 // keys of the largest record, with its nested ones
#define S_VERSION_MAX    255
#define S_BW_MAX         1e7 // MB/s
#define S_LATENCY_MAX    1e8 // us
#define S_PARALLEL_MAX   1024
#define S_GFLOP_MAX      1e6
#define S_ACT_MAX        1e6 // MB per sample
#define S_COPIES_MAX     16
#define S_MCYCLES_MAX    1e6
#define S_CV_MAX         10.0
#define S_EFFICIENCY_MIN 1e-6
#define S_DEFAULT_SOURCE "<input>" // as jf_yaml names an unnamed input

static const char *const s_top_keys[] = {"version", "model",     "variability", "boards",
                                         "media",   "workloads", "concurrent"};
// The study's four workloads (docs/protocol.md: which model trains on which dataset).
static const char *const s_required_workloads[] = {"lenet5-mnist", "resnet18-cifar10",
                                                   "vgg11-cifar10", "mobilenetv3-gld23k"};

static const sim_params_field_t s_global_fields[] = {
    SIM_PARAMS_D("page_bytes", sim_global_params_t, page_bytes, 512, 1048576, SIM_PARAMS_ONE),
    SIM_PARAMS_D("cache_share", sim_global_params_t, cache_share, 0, 1, SIM_PARAMS_ONE),
    SIM_PARAMS_D("launch_cycles", sim_global_params_t, launch_cycles, 0, SIM_PARAMS_COUNT_MAX,
                 SIM_PARAMS_ONE),
    SIM_PARAMS_D("activation_traffic", sim_global_params_t, activation_traffic, 0,
                 SIM_PARAMS_RATIO_MAX, SIM_PARAMS_ONE),
    SIM_PARAMS_D("parameter_traffic", sim_global_params_t, parameter_traffic, 0,
                 SIM_PARAMS_RATIO_MAX, SIM_PARAMS_ONE),
    SIM_PARAMS_D("allocator_overhead", sim_global_params_t, allocator_overhead, 1,
                 SIM_PARAMS_RATIO_MAX, SIM_PARAMS_ONE),
    SIM_PARAMS_D("worker_mib", sim_global_params_t, worker_bytes, 0, SIM_PARAMS_BYTES_MAX,
                 SIM_PARAMS_MIB),
    SIM_PARAMS_D("worker_spawn_mcycles", sim_global_params_t, worker_spawn_cycles, 0,
                 SIM_PARAMS_COUNT_MAX, SIM_PARAMS_MB),
    SIM_PARAMS_D("main_process_cores", sim_global_params_t, main_process_cores, 0,
                 SIM_PARAMS_CORES_MAX, SIM_PARAMS_ONE),
    SIM_PARAMS_D("dvfs_exponent", sim_global_params_t, dvfs_exponent, 0, 4, SIM_PARAMS_ONE),
    SIM_PARAMS_D("step_cv", sim_global_params_t, step_cv, 0, 1, SIM_PARAMS_ONE),
    SIM_PARAMS_D("handoff_cycles_per_byte", sim_global_params_t, handoff_cycles_per_byte, 0,
                 SIM_PARAMS_RATIO_MAX, SIM_PARAMS_ONE),
    SIM_PARAMS_D("interference_per_core", sim_global_params_t, interference_per_core, 0,
                 SIM_PARAMS_RATIO_MAX, SIM_PARAMS_ONE),
};

static const sim_params_field_t s_variability_fields[] = {
    SIM_PARAMS_D("run_compute_sigma", sim_variability_params_t, run_compute_sigma, 0, 1,
                 SIM_PARAMS_ONE),
    SIM_PARAMS_D("run_fetch_sigma", sim_variability_params_t, run_fetch_sigma, 0, 1,
                 SIM_PARAMS_ONE),
};

// The concurrent training and inference model (sim_concurrent.h).
static const sim_params_field_t s_concurrent_fields[] = {
    SIM_PARAMS_D("switch_us", sim_concurrent_params_t, switch_s, 0, 1e6, SIM_PARAMS_US),
    SIM_PARAMS_D("forward_flop_share", sim_concurrent_params_t, forward_flop_share, 0.01, 1,
                 SIM_PARAMS_ONE),
    SIM_PARAMS_D("forward_kernel_share", sim_concurrent_params_t, forward_kernel_share, 0.01, 1,
                 SIM_PARAMS_ONE),
    SIM_PARAMS_D("forward_activation_traffic", sim_concurrent_params_t, forward_activation_traffic,
                 0, SIM_PARAMS_RATIO_MAX, SIM_PARAMS_ONE),
    SIM_PARAMS_D("forward_parameter_traffic", sim_concurrent_params_t, forward_parameter_traffic, 0,
                 SIM_PARAMS_RATIO_MAX, SIM_PARAMS_ONE),
    SIM_PARAMS_D("forward_live_share", sim_concurrent_params_t, forward_live_share, 0, 1,
                 SIM_PARAMS_ONE),
};

static const sim_params_field_t s_medium_fields[] = {
    SIM_PARAMS_D("bandwidth_mb_per_s", sim_medium_params_t, bytes_per_s, 0.001, S_BW_MAX,
                 SIM_PARAMS_MB),
    SIM_PARAMS_D("latency_us", sim_medium_params_t, latency_s, 0, S_LATENCY_MAX, SIM_PARAMS_US),
    SIM_PARAMS_I("queue_depth", sim_medium_params_t, queue_depth, 1, S_PARALLEL_MAX),
    SIM_PARAMS_D("queue_gain", sim_medium_params_t, queue_gain, 0, 1, SIM_PARAMS_ONE),
};

static const sim_params_field_t s_workload_fields[] = {
    SIM_PARAMS_D("samples", sim_workload_params_t, samples, 1, SIM_PARAMS_COUNT_MAX,
                 SIM_PARAMS_ONE),
    SIM_PARAMS_D("sample_bytes", sim_workload_params_t, sample_bytes, 1, SIM_PARAMS_BYTES_MAX,
                 SIM_PARAMS_ONE),
    SIM_PARAMS_D("input_bytes", sim_workload_params_t, input_bytes, 1, SIM_PARAMS_BYTES_MAX,
                 SIM_PARAMS_ONE),
    SIM_PARAMS_D("train_gflop_per_sample", sim_workload_params_t, train_flops, 0, S_GFLOP_MAX,
                 SIM_PARAMS_GB),
    SIM_PARAMS_D("parameters", sim_workload_params_t, parameters, 1, SIM_PARAMS_COUNT_MAX,
                 SIM_PARAMS_ONE),
    SIM_PARAMS_D("optimizer_copies", sim_workload_params_t, optimizer_copies, 1, S_COPIES_MAX,
                 SIM_PARAMS_ONE),
    SIM_PARAMS_D("activation_mb_per_sample", sim_workload_params_t, activation_bytes, 0, S_ACT_MAX,
                 SIM_PARAMS_MB),
    SIM_PARAMS_D("kernels_per_step", sim_workload_params_t, kernels_per_step, 0,
                 SIM_PARAMS_COUNT_MAX, SIM_PARAMS_ONE),
    SIM_PARAMS_D("cpu_mcycles_per_sample", sim_workload_params_t, cpu_cycles, 0, S_MCYCLES_MAX,
                 SIM_PARAMS_MB),
    SIM_PARAMS_D("fetch_cv", sim_workload_params_t, fetch_cv, 0, S_CV_MAX, SIM_PARAMS_ONE),
    SIM_PARAMS_D("gpu_efficiency", sim_workload_params_t, gpu_efficiency, S_EFFICIENCY_MIN, 1,
                 SIM_PARAMS_ONE),
};

static const sim_params_table_t s_global = {s_global_fields, SIM_PARAMS_N(s_global_fields), NULL,
                                            0};
static const sim_params_table_t s_variability = {s_variability_fields,
                                                 SIM_PARAMS_N(s_variability_fields), NULL, 0};
static const sim_params_table_t s_concurrent = {s_concurrent_fields,
                                                SIM_PARAMS_N(s_concurrent_fields), NULL, 0};
static const sim_params_table_t s_medium = {s_medium_fields, SIM_PARAMS_N(s_medium_fields), NULL,
                                            0};
static const sim_params_table_t s_workload = {s_workload_fields, SIM_PARAMS_N(s_workload_fields),
                                              NULL, 0};

// Appends " in <ctx>" to a value error from jf_yaml, which names only the key.
static int s_in_ctx(jf_err_t *err, int rc, const char *ctx)
{
    if (err) {
        size_t n = strlen(err->msg);
        (void) snprintf(err->msg + n, sizeof err->msg - n, " in %s", ctx); // may truncate
    }
    return rc;
}

// Checks map's keys against the table's fields and nested keys.
static int s_check_keys(const jf_yaml_node_t *map, const sim_params_table_t *t, const char *ctx,
                        jf_err_t *err)
{
    const char *keys[S_KEYS_MAX] = {0};
    size_t k = 0;
    for (size_t i = 0; i < t->n_nested && k < S_KEYS_MAX; i++) {
        keys[k++] = t->nested[i];
    }
    for (size_t i = 0; i < t->n_fields && k < S_KEYS_MAX; i++) {
        keys[k++] = t->fields[i].key;
    }
    return jf_yaml_check_keys(map, keys, k, ctx, err);
}

static int s_read_field(const jf_yaml_node_t *v, const sim_params_field_t *f, void *record,
                        jf_err_t *err)
{
    char *at = (char *) record + f->offset;
    if (f->kind == SIM_PARAMS_INT) {
        int value = 0;
        int rc = jf_yaml_node_to_int(v, (int) f->min, (int) f->max, &value, err);
        if (rc == 0) {
            memcpy(at, &value, sizeof value);
        }
        return rc;
    }
    double value = 0;
    int rc = jf_yaml_node_to_double(v, f->min, f->max, &value, err);
    if (rc == 0) {
        value *= f->scale;
        memcpy(at, &value, sizeof value);
    }
    return rc;
}

int sim_params_record(const jf_yaml_node_t *map, const sim_params_table_t *table, const char *ctx,
                      void *record, jf_err_t *err)
{
    int rc = s_check_keys(map, table, ctx, err);
    for (size_t i = 0; rc == 0 && i < table->n_fields; i++) {
        const jf_yaml_node_t *v = NULL;
        rc = jf_yaml_node_require(map, table->fields[i].key, ctx, &v, err);
        if (rc == 0 && s_read_field(v, &table->fields[i], record, err) != 0) {
            rc = s_in_ctx(err, -EINVAL, ctx);
        }
    }
    return rc;
}

// The first name of jf_run_spec_media() that is not in p's media, into out; false if none.
static bool s_missing_medium(const sim_params_t *p, char *out, size_t size)
{
    const char *names = jf_run_spec_media(); // "sd, emmc, nvme, ..."
    while (*names) {
        size_t len = strcspn(names, ", ");
        (void) snprintf(out, size, "%.*s", (int) len, names);
        if (!sim_params_medium(p, out)) {
            return true;
        }
        names += len;
        names += strspn(names, ", ");
    }
    return false;
}

static int s_parse_medium(sim_params_t *p, const jf_yaml_node_t *key, const jf_yaml_node_t *map,
                          jf_err_t *err)
{
    const char *name = jf_yaml_node_text(key);
    if (!jf_run_spec_is_medium(name) || p->n_media >= SIM_MEDIA_MAX) {
        return jf_yaml_error(err, -EINVAL, key,
                             "unknown medium '%.64s' in media, expected one of: %s", name,
                             jf_run_spec_media());
    }
    sim_medium_params_t *m = &p->media[p->n_media];
    char ctx[SIM_PARAMS_CTX_MAX];
    (void) snprintf(ctx, sizeof ctx, "medium '%s'", name);
    int rc = sim_params_record(map, &s_medium, ctx, m, err);
    if (rc == 0) {
        (void) snprintf(m->name, sizeof m->name, "%s", name); // fits: an identifier
        p->n_media++;
    }
    return rc;
}

static int s_parse_media(sim_params_t *p, const jf_yaml_node_t *root, jf_err_t *err)
{
    const jf_yaml_node_t *media = NULL;
    int rc = jf_yaml_node_require(root, "media", SIM_PARAMS_FILE_CTX, &media, err);
    rc = rc != 0 ? rc : jf_yaml_node_expect(media, JF_YAML_MAPPING, err);
    for (size_t i = 0; rc == 0 && i < jf_yaml_node_size(media); i++) {
        rc = s_parse_medium(p, jf_yaml_node_key(media, i), jf_yaml_node_value(media, i), err);
    }
    char missing[JF_IDENT_MAX + 1] = {0};
    if (rc == 0 && s_missing_medium(p, missing, sizeof missing)) {
        rc = jf_yaml_error(err, -EINVAL, media, "medium '%s' is missing from media", missing);
    }
    return rc;
}

// Splits "<model>-<dataset>" at its first '-' and checks both against jf_run_spec.h.
static int s_workload_key(const jf_yaml_node_t *key, sim_workload_params_t *w, jf_err_t *err)
{
    const char *name = jf_yaml_node_text(key);
    size_t len = strcspn(name, "-");
    bool ok = name[len] == '-' && len < sizeof w->model;
    if (ok) {
        (void) snprintf(w->model, sizeof w->model, "%.*s", (int) len, name);
        (void) snprintf(w->dataset, sizeof w->dataset, "%.64s", name + len + 1);
        ok = jf_run_spec_is_model(w->model) && jf_run_spec_is_dataset(w->dataset);
    }
    if (!ok) {
        return jf_yaml_error(err, -EINVAL, key,
                             "workload '%.64s' must be named <model>-<dataset> with a model of "
                             "%s and a dataset of %s",
                             name, jf_run_spec_models(), jf_run_spec_datasets());
    }
    return 0;
}

static int s_parse_workload(sim_params_t *p, const jf_yaml_node_t *key, const jf_yaml_node_t *map,
                            jf_err_t *err)
{
    if (p->n_workloads >= SIM_WORKLOADS_MAX) {
        return jf_yaml_error(err, -EINVAL, key, "more than %d workloads", SIM_WORKLOADS_MAX);
    }
    sim_workload_params_t *w = &p->workloads[p->n_workloads];
    int rc = s_workload_key(key, w, err);
    char ctx[SIM_PARAMS_CTX_MAX];
    (void) snprintf(ctx, sizeof ctx, "workload '%.64s'", jf_yaml_node_text(key));
    rc = rc != 0 ? rc : sim_params_record(map, &s_workload, ctx, w, err);
    if (rc == 0) {
        p->n_workloads++;
    }
    return rc;
}

static int s_parse_workloads(sim_params_t *p, const jf_yaml_node_t *root, jf_err_t *err)
{
    const jf_yaml_node_t *list = NULL;
    int rc = jf_yaml_node_require(root, "workloads", SIM_PARAMS_FILE_CTX, &list, err);
    rc = rc != 0 ? rc : jf_yaml_node_expect(list, JF_YAML_MAPPING, err);
    for (size_t i = 0; rc == 0 && i < jf_yaml_node_size(list); i++) {
        rc = s_parse_workload(p, jf_yaml_node_key(list, i), jf_yaml_node_value(list, i), err);
    }
    for (size_t i = 0; rc == 0 && i < SIM_PARAMS_N(s_required_workloads); i++) {
        if (!jf_yaml_node_get(list, s_required_workloads[i])) {
            rc = jf_yaml_error(err, -EINVAL, list, "workload '%s' is missing from workloads",
                               s_required_workloads[i]);
        }
    }
    return rc;
}

static int s_parse_version(const jf_yaml_node_t *root, jf_err_t *err)
{
    const jf_yaml_node_t *v = NULL;
    int version = 0;
    int rc = jf_yaml_node_require(root, "version", SIM_PARAMS_FILE_CTX, &v, err);
    rc = rc != 0 ? rc : jf_yaml_node_to_int(v, 0, S_VERSION_MAX, &version, err);
    if (rc == 0 && version != SIM_PARAMS_VERSION) {
        rc = jf_yaml_error(err, -EINVAL, v, "unsupported version %d, expected %d", version,
                           SIM_PARAMS_VERSION);
    }
    return rc;
}

static int s_parse_root(sim_params_t *p, const jf_yaml_node_t *root, jf_err_t *err)
{
    const char *ctx = SIM_PARAMS_FILE_CTX;
    const jf_yaml_node_t *model = NULL;
    const jf_yaml_node_t *var = NULL;
    const jf_yaml_node_t *conc = NULL;
    int rc = jf_yaml_check_keys(root, s_top_keys, SIM_PARAMS_N(s_top_keys), ctx, err);
    rc = rc != 0 ? rc : s_parse_version(root, err);
    rc = rc != 0 ? rc : jf_yaml_node_require(root, "model", ctx, &model, err);
    rc = rc != 0 ? rc : sim_params_record(model, &s_global, "model", &p->model, err);
    rc = rc != 0 ? rc : jf_yaml_node_require(root, "variability", ctx, &var, err);
    rc = rc != 0 ? rc : sim_params_record(var, &s_variability, "variability", &p->variability, err);
    rc = rc != 0 ? rc : sim_params_parse_boards(p, root, err);
    rc = rc != 0 ? rc : s_parse_media(p, root, err);
    rc = rc != 0 ? rc : s_parse_workloads(p, root, err);
    rc = rc != 0 ? rc : jf_yaml_node_require(root, "concurrent", ctx, &conc, err);
    return rc != 0 ? rc : sim_params_record(conc, &s_concurrent, "concurrent", &p->concurrent, err);
}

// Parses a loaded document into *ret_params (written only on success) and destroys it.
static int s_from_doc(jf_yaml_t **doc_p, const char *source, sim_params_t *ret_params,
                      jf_err_t *err)
{
    // About 20 kB: on the heap rather than the caller's stack, copied out only on success.
    sim_params_t *p = calloc(1, sizeof *p);
    int rc = p ? s_parse_root(p, jf_yaml_root(*doc_p), err)
               : jf_err_set(err, -ENOMEM, "%s: out of memory", source);
    if (rc == 0) {
        *ret_params = *p;
    }
    free(p);
    jf_yaml_destroy(doc_p);
    return rc;
}

int sim_params_parse(const char *text, size_t len, const char *source, sim_params_t *ret_params,
                     jf_err_t *err)
{
    jf_yaml_t *doc = jf_yaml_parse(text, len, source, SIM_PARAMS_FILE_MAX_BYTES, err);
    if (!doc) {
        return err ? err->code : -EINVAL;
    }
    return s_from_doc(&doc, source ? source : S_DEFAULT_SOURCE, ret_params, err);
}

int sim_params_load(const char *path, sim_params_t *ret_params, jf_err_t *err)
{
    jf_yaml_t *doc = jf_yaml_load(path, SIM_PARAMS_FILE_MAX_BYTES, err);
    if (!doc) {
        return err ? err->code : -EIO;
    }
    return s_from_doc(&doc, path, ret_params, err);
}

const sim_medium_params_t *sim_params_medium(const sim_params_t *params, const char *name)
{
    for (size_t i = 0; name && i < params->n_media; i++) {
        if (strcmp(params->media[i].name, name) == 0) {
            return &params->media[i];
        }
    }
    return NULL;
}

const sim_workload_params_t *sim_params_workload(const sim_params_t *params, const char *model,
                                                 const char *dataset)
{
    for (size_t i = 0; model && dataset && i < params->n_workloads; i++) {
        const sim_workload_params_t *w = &params->workloads[i];
        if (strcmp(w->model, model) == 0 && strcmp(w->dataset, dataset) == 0) {
            return w;
        }
    }
    return NULL;
}
