/* Other load on the board during a run (issue #12; docs/telemetry.md "Other load"): CPU time
 * used on the machine outside the agent's own process tree (the agent, the trainer and its
 * loader workers, the helpers it runs), from /proc/stat's totals minus the tree's
 * /proc/PID/stat times (utime + stime + cutime + cstime: a reaped child's time moves into its
 * parent's cutime, so it is not lost). On a sim board /proc is the real host's: the load of
 * everything else running on that machine. Used by the sampler's thread only. */
#ifndef AGENT_OTHERLOAD_H
#define AGENT_OTHERLOAD_H

#include "jf_err.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define AGENT_OTHERLOAD_MIN_INTERVAL_US                                                            \
    INT64_C(1000000)                    // read at most once per second: a
                                        // walk of /proc is not free
#define AGENT_OTHERLOAD_PROCS_MAX 65536 // processes read per walk, at most

typedef struct agent_otherload agent_otherload_t;

// Over the intervals between reads (a plain value record).
typedef struct agent_otherload_result {
    int64_t intervals; // intervals measured (reads - 1)
    double mean_pct;   // 100 x other ticks / all ticks (busy + idle of every CPU) over them
    double max_pct;    // the highest interval's share
} agent_otherload_result_t;

// For proc_root ("/proc"; copied) and the tree rooted at root_pid (the agent: getpid()).
// Caller owns; release with agent_otherload_destroy. NULL when out of memory.
agent_otherload_t *agent_otherload_new(const char *proc_root, pid_t root_pid);
void agent_otherload_destroy(agent_otherload_t **self_p);

// Reads /proc/stat and the tree's times at mono_us (monotonic), unless the last read is less
// than AGENT_OTHERLOAD_MIN_INTERVAL_US ago (then nothing, 0). From the second read on, each
// read closes one interval. Returns 0, or -EIO/-EINVAL with err when /proc/stat cannot be read
// or parsed (the interval is then skipped).
int agent_otherload_read(agent_otherload_t *self, int64_t mono_us, jf_err_t *err);

void agent_otherload_result(const agent_otherload_t *self, agent_otherload_result_t *ret);

// Parses one /proc/PID/stat line: *ret_ppid and *ret_ticks = utime + stime + cutime + cstime.
// Returns 0, or -EINVAL with err for a line that is not one (proc(5)).
int agent_otherload_parse_pid_stat(const char *text, pid_t *ret_ppid, uint64_t *ret_ticks,
                                   jf_err_t *err);

#endif
