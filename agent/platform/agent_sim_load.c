/* The load counters of a sim board (agent_sim_load.h): utilisation from the model integrated
 * over modelled time into /proc/stat's tick counters, and the GPU's load file value. */
#include "agent_sim_load.h"

#include <math.h>
#include <stdio.h>

#define S_PERMILLE   1000.0
#define S_US_PER_S   1e6
#define S_START_IDLE 1.0 // s of idle time every core starts with

void agent_sim_load_init(agent_sim_load_t *self, int n_cpus)
{
    int n = n_cpus < 1 ? 1 : (n_cpus > AGENT_SIM_LOAD_CPUS_MAX ? AGENT_SIM_LOAD_CPUS_MAX : n_cpus);
    *self = (agent_sim_load_t){.n_cpus = n, .n_online = n};
    for (int i = 0; i < n; i++) {
        self->idle_s[i] = S_START_IDLE;
    }
}

double agent_sim_load_core_share(const agent_sim_load_t *self, int i)
{
    if (i < 0 || i >= self->n_online) {
        return 0.0;
    }
    // The training process holds core 0; the workers' share is spread over the other cores,
    // or shares core 0 when it is the only one online.
    double main = fmin(1.0, self->busy_cores);
    if (self->n_online == 1) {
        return fmin(1.0, self->busy_cores);
    }
    double rest = (self->busy_cores - main) / (self->n_online - 1);
    return i == 0 ? main : fmin(1.0, rest);
}

void agent_sim_load_advance(agent_sim_load_t *self, int64_t now_us)
{
    if (now_us <= self->at_us) {
        return;
    }
    double dt_s = (double) (now_us - self->at_us) / S_US_PER_S;
    for (int i = 0; i < self->n_online; i++) {
        double share = agent_sim_load_core_share(self, i);
        self->busy_s[i] += share * dt_s;
        self->idle_s[i] += (1.0 - share) * dt_s;
    }
    self->at_us = now_us;
}

void agent_sim_load_set(agent_sim_load_t *self, double gpu_load, double busy_cores, int64_t now_us)
{
    agent_sim_load_advance(self, now_us);
    self->gpu_load = isfinite(gpu_load) ? fmin(1.0, fmax(0.0, gpu_load)) : 0.0;
    busy_cores = isfinite(busy_cores) ? busy_cores : 0.0;
    self->busy_cores = fmin((double) self->n_online, fmax(0.0, busy_cores));
}

void agent_sim_load_set_online(agent_sim_load_t *self, int n_online)
{
    self->n_online = n_online < 1 ? 1 : (n_online > self->n_cpus ? self->n_cpus : n_online);
    self->busy_cores = fmin(self->busy_cores, (double) self->n_online);
}

int64_t agent_sim_load_gpu_permille(const agent_sim_load_t *self)
{
    return llround(self->gpu_load * S_PERMILLE);
}

static long long s_ticks(double seconds)
{
    return llround(floor(seconds * AGENT_SIM_LOAD_USER_HZ));
}

// One "cpu..." line: busy as user, idle; the other fields 0.
static size_t s_line(char *buf, size_t size, const char *name, double busy_s, double idle_s)
{
    int n =
        snprintf(buf, size, "%-5s %*lld 0 0 %*lld 0 0 0 0 0 0\n", name, AGENT_SIM_LOAD_STAT_WIDTH,
                 s_ticks(busy_s), AGENT_SIM_LOAD_STAT_WIDTH, s_ticks(idle_s));
    return n < 0 || (size_t) n >= size ? 0 : (size_t) n;
}

size_t agent_sim_load_stat_text(const agent_sim_load_t *self, char *buf, size_t size)
{
    double busy_s = 0.0, idle_s = 0.0;
    for (int i = 0; i < self->n_cpus; i++) {
        busy_s += self->busy_s[i];
        idle_s += self->idle_s[i];
    }
    size_t len = s_line(buf, size, "cpu", busy_s, idle_s);
    for (int i = 0; len > 0 && i < self->n_cpus; i++) {
        char name[16];
        (void) snprintf(name, sizeof name, "cpu%d", i);
        size_t n = s_line(buf + len, size - len, name, self->busy_s[i], self->idle_s[i]);
        len = n == 0 ? 0 : len + n;
    }
    return len;
}
