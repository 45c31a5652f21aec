/* The load counters of a sim board (docs/simulator.md, "Load"): the GPU's load and each CPU
 * core's busy and idle time, advanced in modelled time from the utilisation the model gives for
 * the epoch in progress (sim_epoch_out_t.gpu_load, .cpu_busy_cores), so that the jetson readers
 * report gpu_load_pct and cpu_load_pct for a sim board as for a real one. The training process
 * is on core 0; the workers' decoding is spread evenly over the other online cores, as the
 * scheduler balances them. A plain value record: no files (agent_sim_tree.c writes them). */
#ifndef AGENT_SIM_LOAD_H
#define AGENT_SIM_LOAD_H

#include <stddef.h>
#include <stdint.h>

#define AGENT_SIM_LOAD_CPUS_MAX   16   // cores of the largest simulated family, and some room
#define AGENT_SIM_LOAD_USER_HZ    100  // /proc/stat's tick rate (USER_HZ)
#define AGENT_SIM_LOAD_STAT_WIDTH 14   // digits of every counter: the file keeps its length
#define AGENT_SIM_LOAD_STAT_MAX   2048 // bytes of the /proc/stat text, with the NUL

// The counters (plain value record; fill with agent_sim_load_init).
typedef struct agent_sim_load {
    int n_cpus;                             // cores of the board
    int n_online;                           // cores online (0..n_online-1), 1..n_cpus
    double gpu_load;                        // GPU load now, 0..1
    double busy_cores;                      // busy cores now, 0..n_online
    int64_t at_us;                          // modelled time the counters are at, us
    double busy_s[AGENT_SIM_LOAD_CPUS_MAX]; // each core's busy time so far, modelled s
    double idle_s[AGENT_SIM_LOAD_CPUS_MAX]; // and its idle time
} agent_sim_load_t;

// Idle counters at modelled time 0 for n_cpus cores (clamped to 1..AGENT_SIM_LOAD_CPUS_MAX), all
// online; every core starts with one idle second, so a reader sees every core online from its
// first reading (a core without ticks reads as offline).
void agent_sim_load_init(agent_sim_load_t *self, int n_cpus);

// Advances the counters to modelled time now_us under the load in force (a time before the
// counters' changes nothing).
void agent_sim_load_advance(agent_sim_load_t *self, int64_t now_us);

// From now_us on (after advancing to it): GPU load gpu_load (clamped to 0..1) and busy_cores
// busy cores (clamped to 0..the online cores).
void agent_sim_load_set(agent_sim_load_t *self, double gpu_load, double busy_cores, int64_t now_us);

// Cores 0..n_online-1 online from now on (clamped to 1..n_cpus); offline cores' counters stop.
void agent_sim_load_set_online(agent_sim_load_t *self, int n_online);

// The busy share of core i now, 0..1 (0 for an offline core).
double agent_sim_load_core_share(const agent_sim_load_t *self, int i);

// The GPU load file's value now: per mille, 0..1000.
int64_t agent_sim_load_gpu_permille(const agent_sim_load_t *self);

// /proc/stat's CPU lines for the counters into buf (the total line, then one per core, busy
// time as user, every counter AGENT_SIM_LOAD_STAT_WIDTH digits wide so that the text always has
// the same length). Returns the length, or 0 if buf is too small.
size_t agent_sim_load_stat_text(const agent_sim_load_t *self, char *buf, size_t size);

#endif
