/* The one unit per quantity inside the programs (STYLE.md §3): durations and timestamps in int64_t
 * microseconds, power mW, energy mJ, frequency Hz, memory bytes. Readers convert at the boundary. */
#ifndef JF_UNITS_H
#define JF_UNITS_H

#include <stdint.h>

#define JF_US_PER_MS INT64_C(1000)
#define JF_US_PER_S  INT64_C(1000000)

// Monotonic clock in microseconds (CLOCK_MONOTONIC): for deadlines and durations.
int64_t jf_clock_mono_us(void);

// Wall clock in microseconds since the Unix epoch (CLOCK_REALTIME): for records humans read.
int64_t jf_clock_wall_us(void);

#endif
