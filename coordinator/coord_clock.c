/* NTP-style clock offset and round-trip estimator with a min-rtt filter (docs/protocol.md
 * §4.2.1). Not a clock discipline: nothing here steers a clock, it only measures. */
#include "coord_clock.h"

#include <errno.h>
#include <string.h>

#define COORD_CLOCK_STAMP_MAX_US (INT64_C(1) << 62)

void coord_clock_init(coord_clock_t *self)
{
    memset(self, 0, sizeof *self);
}

static bool s_in_range(int64_t t_us)
{
    return t_us >= 0 && t_us <= COORD_CLOCK_STAMP_MAX_US;
}

// Half the sum of two differences, each within ±2^62: halving first keeps the sum within int64.
static int64_t s_half_sum(int64_t a, int64_t b)
{
    return a / 2 + b / 2 + (a % 2 + b % 2) / 2;
}

int coord_clock_compute(const coord_clock_stamps_t *s, coord_clock_sample_t *ret_sample,
                        jf_err_t *err)
{
    if (!s_in_range(s->t1_us) || !s_in_range(s->t2_us) || !s_in_range(s->t3_us) ||
        !s_in_range(s->t4_us)) {
        return jf_err_set(err, -EINVAL, "clock: a timestamp is outside 0 .. 2^62 us");
    }
    if (s->t4_us < s->t1_us || s->t3_us < s->t2_us) {
        return jf_err_set(err, -EINVAL,
                          "clock: answer before request (t4 - t1 = %lld us, t3 - t2 = %lld us)",
                          (long long) (s->t4_us - s->t1_us), (long long) (s->t3_us - s->t2_us));
    }
    int64_t round_us = s->t4_us - s->t1_us;
    int64_t turn_us = s->t3_us - s->t2_us;
    if (round_us > COORD_CLOCK_RTT_MAX_US) {
        return jf_err_set(err, -EINVAL, "clock: echo of a heartbeat sent %lld us ago is stale",
                          (long long) round_us);
    }
    if (turn_us > round_us) {
        return jf_err_set(err, -EINVAL,
                          "clock: agent turnaround %lld us exceeds the round trip %lld us",
                          (long long) turn_us, (long long) round_us);
    }
    *ret_sample = (coord_clock_sample_t){
        .offset_us = s_half_sum(s->t2_us - s->t1_us, s->t3_us - s->t4_us),
        .rtt_us = round_us - turn_us,
        .at_us = s->t4_us,
    };
    return 0;
}

int coord_clock_add(coord_clock_t *self, const coord_clock_stamps_t *s, jf_err_t *err)
{
    coord_clock_sample_t sample = {0};
    int rc = coord_clock_compute(s, &sample, err);
    if (rc != 0) {
        return rc;
    }
    self->win[self->next] = sample;
    self->next = (self->next + 1) % COORD_CLOCK_WINDOW;
    if (self->n < COORD_CLOCK_WINDOW) {
        self->n++;
    }
    return 0;
}

bool coord_clock_has_estimate(const coord_clock_t *self, coord_clock_sample_t *ret_best)
{
    if (self->n == 0) {
        return false;
    }
    const coord_clock_sample_t *best = NULL;
    for (size_t i = 0; i < self->n; i++) {
        const coord_clock_sample_t *c = &self->win[i];
        if (!best || c->rtt_us < best->rtt_us ||
            (c->rtt_us == best->rtt_us && c->at_us > best->at_us)) {
            best = c;
        }
    }
    *ret_best = *best;
    return true;
}
