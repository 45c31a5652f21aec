/* Shared run settings and the run-id set of a sweep (jf_sweep_parts.h; docs/sweeps.md "Keys"). */
#include "jf_sweep_parts.h"

#include "jf_units.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
    v = jf_yaml_node_get(root, "timeout");
    if (rc == 0 && v) {
        rc =
            jf_yaml_node_to_duration_us(v, JF_US_PER_S, JF_RUN_TIMEOUT_MAX_US, &b->timeout_us, err);
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
