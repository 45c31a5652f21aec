/* Clock offset and round-trip time of one agent, NTP-style, from the four timestamps of a
 * coordinator heartbeat and the agent's answer (docs/protocol.md §4.2.1). A pure estimator: no
 * clock reads, no I/O; the caller takes the timestamps and decides what to store or warn about. */
#ifndef COORD_CLOCK_H
#define COORD_CLOCK_H

#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COORD_CLOCK_WINDOW     8                       // samples the min-rtt filter looks at
#define COORD_CLOCK_WARN_MIN_SAMPLES 3 // judge the offset only once the filter has a choice
#define COORD_CLOCK_WARN_EVERY_US (INT64_C(60) * 1000000) // repeat of the offset warning
#define COORD_CLOCK_RTT_MAX_US (INT64_C(60) * 1000000) // older echoes are stale, not a sample

// The four timestamps of one exchange, each a wall clock in µs (0 .. 2^62).
typedef struct coord_clock_stamps {
    int64_t t1_us; // coordinator sends its heartbeat (coordinator clock, echoed by the agent)
    int64_t t2_us; // agent receives it (agent clock)
    int64_t t3_us; // agent sends its answer (agent clock)
    int64_t t4_us; // coordinator receives the answer (coordinator clock)
} coord_clock_stamps_t;

// One estimate. Plain value record.
typedef struct coord_clock_sample {
    int64_t offset_us; // agent clock minus coordinator clock
    int64_t rtt_us;    // network round trip, without the agent's own turnaround
    int64_t at_us;     // t4: when it was measured (coordinator wall clock)
} coord_clock_sample_t;

// Min-rtt filter over the last COORD_CLOCK_WINDOW samples. Plain value record; embed it and
// start it with coord_clock_init.
typedef struct coord_clock {
    coord_clock_sample_t win[COORD_CLOCK_WINDOW]; // ring of the latest samples
    size_t n;                                     // samples held (<= COORD_CLOCK_WINDOW)
    size_t next;                                  // ring index the next sample goes to
} coord_clock_t;

// Empties the filter (a new session: the agent's clock may have been stepped meanwhile).
void coord_clock_init(coord_clock_t *self);

// Computes offset = ((t2 - t1) + (t3 - t4)) / 2 and rtt = (t4 - t1) - (t3 - t2) into
// *ret_sample. Returns 0, or -EINVAL with err saying why when the stamps cannot be one exchange:
// a stamp outside 0 .. 2^62, t4 before t1, t3 before t2, a negative rtt, or t4 - t1 above
// COORD_CLOCK_RTT_MAX_US (an echo of an old heartbeat).
int coord_clock_compute(const coord_clock_stamps_t *s, coord_clock_sample_t *ret_sample,
                        jf_err_t *err);

// Computes a sample as coord_clock_compute and adds it to the window, pushing out the oldest.
// Returns 0, or the -EINVAL of coord_clock_compute (the window is then unchanged).
int coord_clock_add(coord_clock_t *self, const coord_clock_stamps_t *s, jf_err_t *err);

// True, with the window's sample of the smallest rtt in *ret_best (the latest of equal ones),
// when the window holds at least one sample; false (ret_best untouched) when it is empty.
bool coord_clock_has_estimate(const coord_clock_t *self, coord_clock_sample_t *ret_best);

#endif
