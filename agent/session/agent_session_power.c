/* Agent session: custom power modes and DVFS off (docs/protocol.md §5.2.1, "custom" and
 * "dvfs_off"). Before a run is accepted its custom point is checked against the board's own
 * custom-mode space: the CPU and GPU tables its sysfs shows (read once at start, on the loop
 * thread, before the worker takes the power handle), and for the EMC, which sysfs does not list
 * (jetson-platforms.md §6), the family's table in jf_board_clocks. A board without a power
 * handle gets its tables from the platform, if it has any; a host has no power modes to change. */
#include "agent_session_internal.h"

#include "jf_board_clocks.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

bool agent_session_hello_clocks(const agent_session_t *self, jf_board_clocks_t *ret)
{
    const agent_power_tables_t *t = &self->clocks;
    if (!self->has_clocks || t->n_cpus < 1 || t->n_cpus > JF_BOARD_CORES_MAX ||
        t->n_cpu_steps < 1 || t->n_cpu_steps > JF_BOARD_CLOCK_STEPS_MAX ||
        t->n_gpu_steps > JF_BOARD_CLOCK_STEPS_MAX || t->n_emc_steps > JF_BOARD_CLOCK_STEPS_MAX) {
        return false;
    }
    *ret = (jf_board_clocks_t){.type = agent_platform_board_type(self->platform),
                               .n_cpus = t->n_cpus,
                               .n_cpu_steps = t->n_cpu_steps,
                               .n_gpu_steps = t->n_gpu_steps,
                               .n_emc_steps = t->n_emc_steps};
    memcpy(ret->cpu_steps_hz, t->cpu_steps_hz, t->n_cpu_steps * sizeof t->cpu_steps_hz[0]);
    memcpy(ret->gpu_steps_hz, t->gpu_steps_hz, t->n_gpu_steps * sizeof t->gpu_steps_hz[0]);
    memcpy(ret->emc_steps_hz, t->emc_steps_hz, t->n_emc_steps * sizeof t->emc_steps_hz[0]);
    return true;
}

void agent_session_power_tables(agent_session_t *self, const agent_power_t *power)
{
    jf_err_t err = {0};
    if (power) {
        self->has_clocks = agent_power_read_tables(power, &self->clocks, &err) == 0;
    } else {
        self->has_clocks = agent_platform_clock_tables(self->platform, &self->clocks, &err) == 0;
    }
    if (!self->has_clocks) {
        (void) snprintf(self->clocks_error, sizeof self->clocks_error, "%s", err.msg);
    }
    // sysfs does not list the EMC's rates: a Jetson's are its family's (jetson-platforms.md §6).
    const jf_board_clocks_t *family = jf_board_clocks(agent_platform_board_type(self->platform));
    if (self->has_clocks && self->clocks.n_emc_steps == 0 && family) {
        self->clocks.n_emc_steps = family->n_emc_steps;
        memcpy(self->clocks.emc_steps_hz, family->emc_steps_hz,
               family->n_emc_steps * sizeof family->emc_steps_hz[0]);
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
