/* Host platform: any Linux machine. Telemetry from /proc (CPU load, memory), cpufreq per core
 * and the powercap RAPL energy counters where the machine exposes and lets us read them
 * (agent_board_table_host's layout through agent_sysfs). One power mode, DEFAULT. */
#include "agent_platform_internal.h"

#include <stdio.h>

static const jf_power_mode_t s_host_mode = {0, "DEFAULT"};

static int s_set_mode(agent_platform_t *self, int mode_id, jf_err_t *err)
{
    (void) self;
    (void) mode_id;
    (void) err;
    return 0; // DEFAULT is the only mode: the host stays as it is configured
}

static const agent_platform_ops_t s_ops = {
    .name = "host",
    .set_mode = s_set_mode,
    .add_software = NULL,
};

agent_platform_t *agent_platform_host_new(const agent_platform_opts_t *opts, jf_err_t *err)
{
    agent_platform_t *self = agent_platform_alloc(&s_ops, JF_BOARD_HOST, err);
    if (!self) {
        return NULL;
    }
    self->modes[0] = s_host_mode;
    self->n_modes = 1;
    agent_sysfs_opts_t so = {.sysfs_root = opts->sysfs_root, .proc_root = opts->proc_root,
                             .layout = agent_board_table_host(), .n_cpus = 0, .source = "proc"};
    self->sysfs = agent_sysfs_new(&so, err);
    if (!self->sysfs) {
        goto fail_destroy;
    }
    (void) snprintf(self->describe, sizeof self->describe, "host: %zu cores",
                    agent_sysfs_n_cpus(self->sysfs));
    agent_platform_describe_missing(self);
    return self;

fail_destroy:
    agent_platform_destroy(&self);
    return NULL;
}
