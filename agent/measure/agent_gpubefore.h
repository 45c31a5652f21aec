/* GPU load before a run's first epoch began (docs/telemetry.md, "Other load"): from the sampler's
 * start to epoch 0's start the trainer is starting (libtorch, the dataset, the model) and does
 * not compute, so load on the GPU then is another process's. Samples' loads are kept, in the
 * run's time base, until epoch 0's record gives its start; those before it are then summed and
 * the rest forgotten. Bookkeeping only: no I/O, no clock. One thread. */
#ifndef AGENT_GPUBEFORE_H
#define AGENT_GPUBEFORE_H

#include <stdbool.h>
#include <stdint.h>

// Samples kept at most while waiting for epoch 0 (ten minutes at the sampler's 50 Hz cap): a
// longer start keeps its first ones.
#define AGENT_GPUBEFORE_MAX (600 * 50)

typedef struct agent_gpubefore agent_gpubefore_t;

// The figures once settled.
typedef struct agent_gpubefore_result {
    int64_t samples; // samples before epoch 0's start
    double mean_pct; // their mean GPU load, %
    double max_pct;  // their highest, %
} agent_gpubefore_result_t;

// Caller owns the result; release with agent_gpubefore_destroy. NULL when out of memory.
agent_gpubefore_t *agent_gpubefore_new(void);

// Accepts NULL and *self_p == NULL.
void agent_gpubefore_destroy(agent_gpubefore_t **self_p);

// One sample's GPU load at t_us (the run's time base). Ignored once settled, when full, when
// load_pct is outside 0..100, or when memory runs out (the figure then covers fewer samples).
void agent_gpubefore_add(agent_gpubefore_t *self, int64_t t_us, double load_pct);

// Epoch 0 began at start_us (the run's time base): sums the samples before it and frees the
// rest. Only the first call counts.
void agent_gpubefore_settle(agent_gpubefore_t *self, int64_t start_us);

// True with *ret filled when settled with at least one sample before epoch 0's start.
bool agent_gpubefore_result(const agent_gpubefore_t *self, agent_gpubefore_result_t *ret);

#endif
