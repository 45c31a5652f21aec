/* The sweep loader's private types, shared by its parsing (jf_sweep.c: keys, axes, rules) and
 * its expansion into runs (jf_sweep_expand.c). Not part of the API: jf_sweep.h is. */
#ifndef JF_SWEEP_INTERNAL_H
#define JF_SWEEP_INTERNAL_H

#include "jf_fleet_config.h"
#include "jf_run_spec.h"
#include "jf_sweep.h"
#include "jf_sweep_parts.h"
#include "jf_sweep_power.h"
#include "jf_yaml.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JF_SWEEP_AXIS_MAX 128 // values in one axis list, target list or rule key

// Rule keys, in the order that lets a plan filter boards (first three) and workloads (next three)
// before it walks the axes.
typedef enum jf_sweep_key {
    JF_SWEEP_KEY_BOARD = 0,
    JF_SWEEP_KEY_DEVICE_TYPE,
    JF_SWEEP_KEY_LABEL,
    JF_SWEEP_KEY_WORKLOAD,
    JF_SWEEP_KEY_MODEL,
    JF_SWEEP_KEY_DATASET,
    JF_SWEEP_KEY_POWER_MODE,
    JF_SWEEP_KEY_DVFS,
    JF_SWEEP_KEY_STORAGE,
    JF_SWEEP_KEY_WORKERS,
    JF_SWEEP_KEY_BATCH_SIZE,
    JF_SWEEP_KEY_REPEAT,
    JF_SWEEP_KEY_RUNTIME,
    JF_SWEEP_KEY_COUNT,
} jf_sweep_key_t;

// A list of values for one axis or rule key.
typedef struct jf_sweep_axis {
    size_t n;
    const jf_yaml_node_t *nodes[JF_SWEEP_AXIS_MAX]; // borrowed; NULL for built-in defaults
    const char *texts[JF_SWEEP_AXIS_MAX];           // borrowed from the document; NULL for numbers
    int64_t nums[JF_SWEEP_AXIS_MAX];                // the number, a power mode's id (-1 for a name,
                                     // JF_SWEEP_CUSTOM_NUM(k) for custom entry k), dvfs off 1
} jf_sweep_axis_t;

// A custom entry's number in the power-mode axis, and back.
#define JF_SWEEP_CUSTOM_NUM(k)   (-2 - (int64_t) (k))
#define JF_SWEEP_CUSTOM_INDEX(n) ((size_t) (-2 - (n)))
#define JF_SWEEP_CUSTOM_TEXT     "custom" // what rules name every custom point by

typedef struct jf_sweep_rule {
    bool has[JF_SWEEP_KEY_COUNT];
    jf_sweep_axis_t values[JF_SWEEP_KEY_COUNT];
} jf_sweep_rule_t;

// A matrix to expand: the sweep's own, or one per include rule.
typedef struct jf_sweep_plan {
    const jf_sweep_rule_t
        *filter; // borrowed; include rule that filters boards and workloads, or NULL
    bool apply_excludes;
    bool all_modes; // each board's own list, else modes
    jf_sweep_axis_t modes;
    jf_sweep_axis_t dvfs;
    jf_sweep_axis_t storage;
    jf_sweep_axis_t workers;
    jf_sweep_axis_t batches;
    jf_sweep_axis_t repeats;
    jf_sweep_axis_t runtimes; // texts: "" or "bare" for bare, "container"
} jf_sweep_plan_t;

typedef struct jf_sweep_combo {
    const jf_board_spec_t *board;        // borrowed from the fleet
    const jf_sweep_workload_t *workload; // borrowed from the context
    const jf_power_mode_t *mode;     // borrowed from the board; NULL if it lacks the one asked for
                                     // (or cannot run the custom point)
    const jf_sweep_custom_t *custom; // borrowed from the context; NULL: the mode alone
    bool dvfs_off;
    const char *storage; // borrowed from the document
    int workers;
    int batch_size;
    int repeat;
    const char *runtime; // borrowed from the plan's runtimes axis; "" or "bare": bare
} jf_sweep_combo_t;

typedef struct jf_sweep_ctx {
    const jf_fleet_config_t *fleet; // borrowed
    jf_sweep_t *sweep;              // borrowed; being filled
    const jf_yaml_node_t *root;     // borrowed from the document
    bool *targeted;                 // owned; one per fleet board
    size_t n_workloads;
    jf_sweep_workload_t workloads[JF_SWEEP_WORKLOADS_MAX];
    size_t n_customs;
    jf_sweep_custom_t customs[JF_SWEEP_AXIS_MAX]; // the power_modes axis' custom entries
    jf_run_spec_t base;                           // the settings every run shares
    jf_sweep_plan_t main;
    jf_sweep_plan_t scratch; // the include plan being expanded
    size_t n_excludes;
    jf_sweep_rule_t *excludes; // owned
    size_t n_includes;
    jf_sweep_rule_t *includes; // owned
    size_t runs_cap;
    size_t combinations; // examined so far, against S_COMBINATIONS_MAX
    size_t n_runtimes;   // the runtime list (docs/containers.md): 1 or 2
    char runtimes[JF_SWEEP_RUNTIMES_MAX][JF_RUN_RUNTIME_MAX + 1]; // "" for bare
    jf_sweep_ids_t ids;
} jf_sweep_ctx_t;

// Whether the combination matches every key of rule from first to end (exclusive) that the rule
// has.
bool jf_sweep_rule_matches(const jf_sweep_rule_t *rule, const jf_sweep_combo_t *c,
                           jf_sweep_key_t first, jf_sweep_key_t end);

// Expands the parsed sweep (its own matrix, then one per include rule, excludes applied to the
// first) into ctx->sweep's runs. 0, or -EINVAL/-ENOMEM with err (too many combinations or runs,
// an invalid run, no run at all).
int jf_sweep_expand(jf_sweep_ctx_t *ctx, jf_err_t *err);

#endif
