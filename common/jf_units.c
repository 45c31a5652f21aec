/* Clocks in the project's one time unit (microseconds). */
#include "jf_units.h"

#include <time.h>

static int64_t s_clock_us(clockid_t id)
{
    struct timespec ts = {0};
    (void) clock_gettime(id, &ts); // cannot fail for these clock ids
    return (int64_t) ts.tv_sec * JF_US_PER_S + ts.tv_nsec / 1000;
}

int64_t jf_clock_mono_us(void)
{
    return s_clock_us(CLOCK_MONOTONIC);
}

int64_t jf_clock_wall_us(void)
{
    return s_clock_us(CLOCK_REALTIME);
}
