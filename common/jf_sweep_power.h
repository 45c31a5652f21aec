/* A sweep's custom power-mode points (docs/sweeps.md "Custom power modes and DVFS"): the mapping
 * form of a `power_modes` entry, {custom: {cores, cpu_freq, gpu_freq, emc_freq, base}}, parsed
 * and checked against a board type's custom-mode space (jf_board_clocks.h). Used by jf_sweep
 * only. */
#ifndef JF_SWEEP_POWER_H
#define JF_SWEEP_POWER_H

#include "jf_err.h"
#include "jf_fleet_config.h"
#include "jf_run_spec.h"
#include "jf_yaml.h"

// One custom entry of a sweep (a plain value record; nodes borrowed from the document).
typedef struct jf_sweep_custom {
    jf_run_custom_t point;                 // cores and clocks; gpu/emc 0 leave the base mode's
    char base[JF_POWER_MODE_NAME_MAX + 1]; // base mode, name or id; "" = the type's default mode
    const jf_yaml_node_t *node;            // the entry, for messages
    const jf_yaml_node_t *cores_node;      // each key's value, for messages; NULL if absent
    const jf_yaml_node_t *cpu_node;
    const jf_yaml_node_t *gpu_node;
    const jf_yaml_node_t *emc_node;
    const jf_yaml_node_t *base_node;
} jf_sweep_custom_t;

// Parses the entry (a mapping with the one key `custom`) into *ret: shape, keys and units, not
// boards. Returns 0, or -EINVAL with err "<file>:<line>:<col>: <what>".
int jf_sweep_custom_parse(const jf_yaml_node_t *entry, jf_sweep_custom_t *ret, jf_err_t *err);

// Checks the point against board's type (its cores and clock steps) and that board has the base
// mode. Returns 0, or -EINVAL with err naming the value's position, the board and its type.
int jf_sweep_custom_check(const jf_sweep_custom_t *c, const jf_board_spec_t *board,
                          jf_err_t *err);

// The board's mode the point is applied on: base, or the default mode of the board's type.
// NULL if the board lacks it (borrowed from board).
const jf_power_mode_t *jf_sweep_custom_base(const jf_sweep_custom_t *c,
                                            const jf_board_spec_t *board);

// True if the two entries ask for the same point on the same base.
bool jf_sweep_custom_same(const jf_sweep_custom_t *a, const jf_sweep_custom_t *b);

#endif
