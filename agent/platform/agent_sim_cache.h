/* A simulated board's page cache between runs (docs/simulator.md "The page cache between runs"):
 * for each dataset a run has read, the bytes the model says are still resident, so that the next
 * run of that dataset starts warm unless the run drops caches. The model gives each run's end
 * state for its own dataset; the other datasets' pages, older than every page the run read, are
 * evicted first: they keep what room the run's cache had left beside its dataset, the most
 * recently used first. A plain value record (zero-initialised: an empty cache), embedded in the
 * sim platform. Pure bookkeeping: no I/O, no clock. */
#ifndef AGENT_SIM_CACHE_H
#define AGENT_SIM_CACHE_H

#include "jf_parse.h"

#include <stddef.h>
#include <stdint.h>

#define AGENT_SIM_CACHE_DATASETS_MAX 8 // datasets remembered (the vocabulary has 3)

typedef struct agent_sim_cache_entry {
    char dataset[JF_IDENT_MAX + 1]; // the dataset's name (jf_run_spec vocabulary)
    int64_t resident_bytes;         // its bytes in the page cache, 0..dataset_bytes
    int64_t dataset_bytes;          // its size at the board's scale, > 0
    uint64_t used;                  // when a run last read it (the cache's clock), for LRU
} agent_sim_cache_entry_t;

typedef struct agent_sim_cache {
    size_t n;                                                 // entries used
    agent_sim_cache_entry_t entry[AGENT_SIM_CACHE_DATASETS_MAX];
    uint64_t clock;                                           // counts updates
} agent_sim_cache_t;

// Empties the cache (drop_caches: the whole page cache, as the privileged helper drops it).
void agent_sim_cache_drop(agent_sim_cache_t *self);

// The share of dataset in the cache, 0..1 (0 for a dataset no run has read).
double agent_sim_cache_resident(const agent_sim_cache_t *self, const char *dataset);

// A run of dataset has read an epoch and left resident_after of it (0..1) in the cache, whose
// room for the run's data was cache_bytes; the dataset has dataset_bytes (> 0). Updates the
// dataset's entry and evicts the others down to the room left, most recently used kept first.
// Out-of-range inputs are clamped (resident 0..1, bytes >= 0); dataset_bytes <= 0 is ignored.
void agent_sim_cache_update(agent_sim_cache_t *self, const char *dataset, double resident_after,
                            int64_t cache_bytes, int64_t dataset_bytes);

#endif
