/* The clock state stored before a run, handed from one agent process to the next: a record of
 * the helper's slot, the nvpmodel mode its status file named and what was in force, which an
 * agent restarted during the run takes over so that it can restore the state when the run it
 * re-attached to ends (docs/protocol.md §4.4.1, docs/privileges.md). The record is the agent's
 * own (kept in its spool's trainer row), not a wire message. */
#include "agent_power_internal.h"

#include "privhelper_request.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define S_CPUS_MAX 64 // bits of agent_power_state_t.online_mask

static json_t *s_clusters(const agent_power_state_t *st)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < st->n_clusters; i++) {
        const agent_power_cluster_t *c = &st->clusters[i];
        if (json_array_append_new(a, json_pack("[i, I, I]", c->first_core, (json_int_t) c->min_hz,
                                               (json_int_t) c->max_hz)) != 0) {
            json_decref(a);
            a = NULL;
        }
    }
    return a;
}

json_t *agent_power_stored_json(const agent_power_t *self)
{
    const agent_power_state_t *st = &self->stored;
    json_t *clusters = self->stored_slot != 0 ? s_clusters(st) : NULL;
    if (!clusters) {
        return NULL;
    }
    // The online mask as a signed integer: 64 cores at most, and bit 63 reads back the same.
    return json_pack("{s:i, s:i, s:i, s:s, s:i, s:I, s:o, s:b, s:I, s:I}", "slot",
                     self->stored_slot, "pmode", self->stored_pmode, "mode_id", st->mode_id,
                     "mode_name", st->mode_name, "n_cpus", st->n_cpus, "online_mask",
                     (json_int_t) st->online_mask, "clusters", clusters, "has_gpu", st->has_gpu,
                     "gpu_min_hz", (json_int_t) st->gpu_min_hz, "gpu_max_hz",
                     (json_int_t) st->gpu_max_hz);
}

// One cluster [first_core, min_hz, max_hz] into *c: 0, or -EINVAL with err.
static int s_cluster_parse(json_t *v, size_t i, agent_power_cluster_t *c, jf_err_t *err)
{
    json_error_t jerr;
    json_int_t lo = 0, hi = 0;
    if (json_unpack_ex(v, &jerr, JSON_STRICT, "[i, I, I]", &c->first_core, &lo, &hi) != 0 ||
        c->first_core < 0 || c->first_core >= S_CPUS_MAX || lo < 0 || hi < lo) {
        return jf_err_set(err, -EINVAL,
                          "power: stored record: clusters[%zu] is not [core, min, "
                          "max]",
                          i);
    }
    c->min_hz = lo;
    c->max_hz = hi;
    return 0;
}

// The record's state into *st: 0, or -EINVAL with err.
static int s_state_parse(const json_t *o, int *ret_slot, int *ret_pmode, agent_power_state_t *st,
                         jf_err_t *err)
{
    json_error_t jerr;
    const char *name = NULL;
    json_t *clusters = NULL;
    json_int_t mask = 0, gmin = 0, gmax = 0;
    int has_gpu = 0;
    if (json_unpack_ex((json_t *) o, &jerr, JSON_STRICT,
                       "{s:i, s:i, s:i, s:s, s:i, s:I, s:o, s:b, s:I, s:I}", "slot", ret_slot,
                       "pmode", ret_pmode, "mode_id", &st->mode_id, "mode_name", &name, "n_cpus",
                       &st->n_cpus, "online_mask", &mask, "clusters", &clusters, "has_gpu",
                       &has_gpu, "gpu_min_hz", &gmin, "gpu_max_hz", &gmax) != 0) {
        return jf_err_set(err, -EINVAL, "power: stored record: %s", jerr.text);
    }
    if (*ret_slot < 1 || *ret_slot > PRIVHELPER_STATES_MAX ||
        strlen(name) > JF_POWER_MODE_NAME_MAX || !json_is_array(clusters) ||
        json_array_size(clusters) > AGENT_POWER_CLUSTERS_MAX || st->n_cpus < 0 ||
        st->n_cpus > S_CPUS_MAX) {
        return jf_err_set(err, -EINVAL,
                          "power: stored record: slot %d (1..%d), mode name, "
                          "cores or clusters out of range",
                          *ret_slot, PRIVHELPER_STATES_MAX);
    }
    memcpy(st->mode_name, name, strlen(name) + 1);
    st->online_mask = (uint64_t) mask;
    st->has_gpu = has_gpu;
    st->gpu_min_hz = gmin;
    st->gpu_max_hz = gmax;
    st->n_clusters = json_array_size(clusters);
    for (size_t i = 0; i < st->n_clusters; i++) {
        if (s_cluster_parse(json_array_get(clusters, i), i, &st->clusters[i], err) != 0) {
            return -EINVAL;
        }
    }
    return 0;
}

int agent_power_adopt(agent_power_t *self, const json_t *stored, jf_err_t *err)
{
    if (self->stored_slot != 0) {
        return jf_err_set(err, -EBUSY, "power: state %d is stored already; restore it first",
                          self->stored_slot);
    }
    agent_power_state_t st = {0};
    int slot = 0, pmode = -1;
    int rc = s_state_parse(stored, &slot, &pmode, &st, err);
    if (rc != 0) {
        return rc;
    }
    self->stored = st;
    self->stored_slot = slot;
    self->stored_pmode = pmode;
    self->stored_adopted = true;
    return 0;
}
