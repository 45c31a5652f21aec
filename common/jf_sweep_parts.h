/* Self-contained pieces of jf_sweep, apart so that jf_sweep.c stays readable: the workloads, the
 * settings every run of a sweep shares (prefetch, threads, telemetry_hz, seed, drop_caches,
 * timeout), and the set of run ids produced so far (an open-addressing hash over the runs). */
#ifndef JF_SWEEP_PARTS_H
#define JF_SWEEP_PARTS_H

#include "jf_err.h"
#include "jf_fleet_config.h"
#include "jf_run_spec.h"
#include "jf_yaml.h"

#include <stddef.h>

#define JF_SWEEP_DEFAULT_PREFETCH 2
#define JF_SWEEP_DEFAULT_SEED     1
#define JF_SWEEP_SEED_MAX         (INT64_C(1) << 53)
#define JF_SWEEP_IDS_MIN_SLOTS    256
#define JF_SWEEP_WORKLOADS_MAX    64
#define JF_SWEEP_DEFAULT_EPOCHS   3

// One workload of a sweep (a plain value record).
typedef struct jf_sweep_workload {
    char name[JF_IDENT_MAX + 1];    // unique in the sweep; default "<model>-<dataset>"
    char model[JF_IDENT_MAX + 1];   // jf_run_spec_is_model
    char dataset[JF_IDENT_MAX + 1]; // jf_run_spec_is_dataset
    int epochs;                     // 1..JF_EPOCHS_MAX
    jf_run_concurrent_t concurrent; // `inference:` beside training (docs/concurrent.md);
                                    // infer_model "": none
} jf_sweep_workload_t;

// Run ids produced so far (indices into the sweep's runs, plus one; 0 is an empty slot).
// Zero-initialise; release with jf_sweep_ids_fini.
typedef struct jf_sweep_ids {
    size_t n_slots; // 0 or a power of two
    size_t *slots;  // owned
} jf_sweep_ids_t;

// Checks that v is a scalar for which is() holds. 0, or -EINVAL "<pos>: unknown <what> '<v>',
// expected one of: <list>".
int jf_sweep_check_vocab(const jf_yaml_node_t *v, bool (*is)(const char *), const char *what,
                         const char *list, jf_err_t *err);

// Parses the sweep's required `workloads` list into ws (max entries) and *ret_n (written as
// workloads are added, also on failure). Each model must train on its dataset
// (jf_workload_check_pair). 0, or -EINVAL with err "<file>:<line>:<col>: ..." (for a pair that
// does not train, the workload's position: "workload #2: model 'vgg11' does not train on ...").
int jf_sweep_workloads_parse(const jf_yaml_node_t *root, jf_sweep_workload_t *ws, size_t max,
                             size_t *ret_n, jf_err_t *err);

// Fills the shared settings of base from the sweep's root mapping, with the fleet's defaults.
// Returns 0, or -EINVAL with err "<file>:<line>:<col>: ...".
int jf_sweep_settings_parse(const jf_yaml_node_t *root, const jf_fleet_config_t *fleet,
                            jf_run_spec_t *base, jf_err_t *err);

// Makes room for n_runs ids (runs[0..n_runs - 1) already in the set). 0 or -ENOMEM.
int jf_sweep_ids_reserve(jf_sweep_ids_t *ids, const jf_run_spec_t *runs, size_t n_runs);

// The slot for run_id: either empty (*slot == 0: the id is new; store index + 1 there) or
// holding the run with that id. Needs a reserved set.
size_t *jf_sweep_ids_slot(const jf_sweep_ids_t *ids, const jf_run_spec_t *runs,
                          const char *run_id);

// Frees the slots. Accepts a zeroed set.
void jf_sweep_ids_fini(jf_sweep_ids_t *ids);

// Parses the sweep's optional `runtime` list (docs/containers.md): values bare and container,
// a scalar counting as a one-element list. ret_runtimes[i] is "" for bare (so that bare runs keep
// the ids they had before the key existed) and "container"; *ret_n is 1 or 2 (distinct, in file
// order); without the key, one bare runtime. 0, or -EINVAL with err "<file>:<line>:<col>: ...".
#define JF_SWEEP_RUNTIMES_MAX 2
int jf_sweep_runtimes_parse(const jf_yaml_node_t *root,
                            char ret_runtimes[JF_SWEEP_RUNTIMES_MAX][JF_RUN_RUNTIME_MAX + 1],
                            size_t *ret_n, jf_err_t *err);

#endif
