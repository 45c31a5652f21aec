/* Agent session: custom power modes and DVFS off (docs/protocol.md §5.2.1, "custom" and
 * "dvfs_off"). Before a run is accepted its custom point is checked against the board's own
 * custom-mode space: the CPU and GPU tables its sysfs shows (read once at start, on the loop
 * thread, before the worker takes the power handle), and for the EMC, which sysfs does not list
 * (jetson-platforms.md §6), the family's table in jf_board_clocks. A sim board uses the family
 * table throughout; a host has no power modes to change. */
#include "agent_session_internal.h"

#include "jf_board_clocks.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void s_tables_from_family(agent_power_tables_t *t, const jf_board_clocks_t *f)
{
    *t = (agent_power_tables_t){.n_cpus = f->n_cpus, .n_cpu_steps = f->n_cpu_steps,
                                .n_gpu_steps = f->n_gpu_steps};
    memcpy(t->cpu_steps_hz, f->cpu_steps_hz, f->n_cpu_steps * sizeof f->cpu_steps_hz[0]);
    memcpy(t->gpu_steps_hz, f->gpu_steps_hz, f->n_gpu_steps * sizeof f->gpu_steps_hz[0]);
}

void agent_session_power_tables(agent_session_t *self, const agent_power_t *power)
{
    jf_err_t err = {0};
    const jf_board_clocks_t *family = jf_board_clocks(agent_platform_board_type(self->platform));
    self->has_clocks = false;
    if (power) {
        self->has_clocks = agent_power_read_tables(power, &self->clocks, &err) == 0;
    } else if (agent_platform_sim(self->platform) && family) {
        s_tables_from_family(&self->clocks, family);
        self->has_clocks = true;
    } else {
        (void) jf_err_set(&err, -ENOTSUP, "no power handle");
    }
    if (!self->has_clocks) {
        (void) snprintf(self->clocks_error, sizeof self->clocks_error, "%s", err.msg);
    }
    if (!self->has_clocks && power) {
        jf_log_warn("power: cannot read the frequency tables (%s); runs with a custom power "
                    "mode will be refused as infeasible",
                    err.msg);
    }
}

static int s_check_point(const agent_session_t *self, const jf_run_custom_t *c, char *why,
                         size_t size)
{
    if (!self->has_clocks) {
        (void) snprintf(why, size, "this board's frequency tables could not be read: %.200s",
                        self->clocks_error);
        return JF_FAIL_INFEASIBLE;
    }
    agent_power_custom_t point = {
        .n_cores = c->n_cores, .cpu_hz = c->cpu_hz, .gpu_hz = c->gpu_hz, .emc_hz = c->emc_hz};
    jf_err_t err = {0};
    if (agent_power_tables_check(&self->clocks, agent_platform_board_type(self->platform), &point,
                                 &err) != 0) {
        (void) snprintf(why, size, "%s", err.msg);
        return JF_FAIL_INFEASIBLE;
    }
    return -1;
}

int agent_session_check_power(const agent_session_t *self, const jf_run_spec_t *s, char *why,
                              size_t why_size)
{
    if (!jf_run_spec_has_power_extras(s)) {
        return -1;
    }
    if (agent_platform_board_type(self->platform) == JF_BOARD_HOST) {
        (void) snprintf(why, why_size, "a host has no power modes to change: custom power modes "
                        "and DVFS off need a Jetson (or a sim board)");
        return JF_FAIL_INFEASIBLE;
    }
    if (self->has_power && !self->has_helper) {
        (void) snprintf(why, why_size, "no privileged helper configured (jetfleet-agent "
                        "--privhelper): custom power modes and DVFS off cannot be set");
        return JF_FAIL_INFEASIBLE;
    }
    return s->custom.n_cores != 0 ? s_check_point(self, &s->custom, why, why_size) : -1;
}

// The operating point in the keys of a Jetson's record (agent_power_state_json): the cores
// online, one cluster pinned at the CPU clock, the GPU pinned, the EMC at its rate. The model
// runs at fixed clocks, so min == max throughout.
static int s_add_point(json_t *o, const agent_platform_point_t *op)
{
    json_t *cpus = json_array();
    for (int i = 0; cpus && i < op->n_cores; i++) {
        if (json_array_append_new(cpus, json_integer(i)) != 0) {
            json_decref(cpus);
            return -ENOMEM;
        }
    }
    json_t *clusters = json_pack("[{s:i, s:I, s:I}]", "first_core", 0, "min_hz",
                                 (json_int_t) op->cpu_hz, "max_hz", (json_int_t) op->cpu_hz);
    int bad = json_object_set_new(o, "online_cpus", cpus);
    bad |= json_object_set_new(o, "cpu_clusters", clusters);
    bad |= json_object_set_new(o, "gpu_min_hz", json_integer(op->gpu_hz));
    bad |= json_object_set_new(o, "gpu_max_hz", json_integer(op->gpu_hz));
    bad |= json_object_set_new(o, "emc_cap_hz", json_integer(op->emc_hz));
    return bad ? -ENOMEM : 0;
}

json_t *agent_session_sim_power_json(const agent_session_t *self, const char *note)
{
    const jf_run_spec_t *s = &self->run.spec;
    agent_platform_point_t op = {0};
    bool custom = s->custom.n_cores != 0;
    // As a Jetson's record: a custom point has no nvpmodel id.
    json_t *o = json_pack("{s:s, s:b, s:s}", "mode_name", custom ? "custom" : s->power_mode,
                          "dvfs_off", s->dvfs_off, "note", note);
    int rc = o ? 0 : -ENOMEM;
    if (rc == 0 && !custom) {
        rc = json_object_set_new(o, "mode_id", json_integer(s->power_mode_id)) ? -ENOMEM : 0;
    }
    if (rc == 0 && agent_platform_sim_point(self->platform, &op, NULL) == 0) {
        rc = s_add_point(o, &op);
    }
    if (rc != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}
