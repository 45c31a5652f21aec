/* The platform interface: what the agent knows about its board and how it samples it. Board
 * differences live behind it: host now; jetson and sim (issues #4, #5) implement the same ops.
 * A quantity the platform cannot read is left out of the sample, never reported as zero. */
#ifndef AGENT_PLATFORM_H
#define AGENT_PLATFORM_H

#include "jf_board.h"
#include "jf_err.h"

#include <jansson.h>
#include <stddef.h>

typedef struct agent_platform agent_platform_t;

typedef struct agent_platform_opts {
    const char *proc_root;   // "/proc" unless testing against a fixture tree
} agent_platform_opts_t;

// The host platform: any Linux machine; board type host, one power mode DEFAULT; telemetry from
// /proc. Caller owns the result; release with agent_platform_destroy.
agent_platform_t *agent_platform_host_new(const agent_platform_opts_t *opts, jf_err_t *err);

void agent_platform_destroy(agent_platform_t **self_p);

// "host", "jetson" or "sim" (the hello's platform field).
const char *agent_platform_name(const agent_platform_t *self);
jf_board_type_t agent_platform_board_type(const agent_platform_t *self);

// The board's power modes. Borrowed; *ret_count entries.
const jf_power_mode_t *agent_platform_modes(const agent_platform_t *self, size_t *ret_count);

// Puts the board in a power mode for a run. Returns 0, or a negative errno with err (a mode the
// board does not have is -EINVAL).
int agent_platform_set_mode(agent_platform_t *self, int mode_id, jf_err_t *err);

// Adds one telemetry sample's quantities (units in the key names) to sample, which already has
// t_us. Returns 0, or a negative errno if nothing could be read.
int agent_platform_sample(agent_platform_t *self, json_t *sample, jf_err_t *err);

// Software facts for the hello (an object of strings). Caller owns the result.
json_t *agent_platform_software(const agent_platform_t *self);

#endif
