/* Unit tests for coord_clock: the NTP-style offset/rtt computation from tables (symmetric and
 * asymmetric delays, negative offsets, stamps near 2^62, refused stamps) and the min-rtt window. */
#include "coord_clock.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define T_BASE_US INT64_C(1700000000000000)
#define T_MAX_US  (INT64_C(1) << 62)

typedef struct t_case {
    const char *what;
    coord_clock_stamps_t s;
    int rc;
    int64_t offset_us;
    int64_t rtt_us;
    const char *msg; // fragment of err.msg when rc != 0
} t_case_t;

// Agent clock = coordinator clock + off; d_out/d_back one-way delays; turn the agent's turnaround.
#define T_X(off, d_out, turn, d_back)                                                              \
    {                                                                                              \
        T_BASE_US, T_BASE_US + (d_out) + (off), T_BASE_US + (d_out) + (turn) + (off),              \
            T_BASE_US + (d_out) + (turn) + (d_back)                                                \
    }

static const t_case_t s_cases[] = {
    {"symmetric, no offset", T_X(0, 500, 100, 500), 0, 0, 1000, NULL},
    {"symmetric, agent ahead", T_X(7000, 400, 50, 400), 0, 7000, 800, NULL},
    {"symmetric, agent behind", T_X(-12345, 300, 0, 300), 0, -12345, 600, NULL},
    // Asymmetry shows as an error of half the difference of the one-way delays, as in NTP.
    {"asymmetric, out slower", T_X(2000, 900, 10, 100), 0, 2400, 1000, NULL},
    {"asymmetric, back slower", T_X(2000, 100, 10, 900), 0, 1600, 1000, NULL},
    {"odd halves round toward zero", T_X(0, 1, 0, 0), 0, 0, 1, NULL},
    {"agent at 0, coordinator at 2^62",
     {T_MAX_US - 10, 0, 0, T_MAX_US},
     0,
     -(T_MAX_US - 5),
     10,
     NULL},
    {"agent at 2^62, coordinator at 0", {0, T_MAX_US, T_MAX_US, 10}, 0, T_MAX_US - 5, 10, NULL},
    {"stamp negative", {-1, 0, 0, 0}, -EINVAL, 0, 0, "outside 0 .. 2^62"},
    {"stamp above 2^62", {0, T_MAX_US + 1, T_MAX_US + 1, 0}, -EINVAL, 0, 0, "outside"},
    {"coordinator clock stepped back",
     {T_BASE_US, T_BASE_US, T_BASE_US, T_BASE_US - 1},
     -EINVAL,
     0,
     0,
     "answer before request"},
    {"agent clock stepped back",
     {T_BASE_US, T_BASE_US + 5, T_BASE_US + 4, T_BASE_US + 9},
     -EINVAL,
     0,
     0,
     "answer before request"},
    {"negative rtt",
     {T_BASE_US, T_BASE_US, T_BASE_US + 100, T_BASE_US + 50},
     -EINVAL,
     0,
     0,
     "exceeds the round trip"},
    {"stale echo",
     {T_BASE_US, T_BASE_US, T_BASE_US, T_BASE_US + COORD_CLOCK_RTT_MAX_US + 1},
     -EINVAL,
     0,
     0,
     "stale"},
};

static void t_compute_table(void **state)
{
    (void) state;
    for (size_t i = 0; i < sizeof s_cases / sizeof s_cases[0]; i++) {
        const t_case_t *c = &s_cases[i];
        coord_clock_sample_t got = {.offset_us = 424242, .rtt_us = 424242};
        jf_err_t err = {0};
        int rc = coord_clock_compute(&c->s, &got, &err);
        printf("case=%zu what='%s' rc=%d offset_us=%lld rtt_us=%lld msg='%s'\n", i, c->what, rc,
               (long long) got.offset_us, (long long) got.rtt_us, err.msg);
        assert_int_equal(rc, c->rc);
        if (rc == 0) {
            assert_int_equal(got.offset_us, c->offset_us);
            assert_int_equal(got.rtt_us, c->rtt_us);
            assert_int_equal(got.at_us, c->s.t4_us);
        } else {
            assert_non_null(strstr(err.msg, c->msg));
            assert_int_equal(got.offset_us, 424242); // untouched on failure
        }
    }
}

// Adds one exchange with a zero turnaround; returns coord_clock_add's result.
static int s_add(coord_clock_t *clk, int64_t t1_us, int64_t off_us, int64_t d_out, int64_t d_back)
{
    coord_clock_stamps_t s = {t1_us, t1_us + d_out + off_us, t1_us + d_out + off_us,
                              t1_us + d_out + d_back};
    return coord_clock_add(clk, &s, NULL);
}

static void t_min_rtt_filter(void **state)
{
    (void) state;
    coord_clock_t clk;
    coord_clock_init(&clk);
    coord_clock_sample_t best = {0};
    assert_false(coord_clock_has_estimate(&clk, &best)); // absent members: no estimate at all

    // A queued (slow, asymmetric) exchange must not hide the fast one next to it.
    int64_t t = T_BASE_US;
    assert_int_equal(s_add(&clk, t, 3000, 9000, 200), 0);
    assert_int_equal(s_add(&clk, t + 1000000, 3000, 150, 150), 0);
    assert_int_equal(s_add(&clk, t + 2000000, 3000, 200, 7000), 0);
    assert_true(coord_clock_has_estimate(&clk, &best));
    printf("filter offset_us=%lld rtt_us=%lld\n", (long long) best.offset_us,
           (long long) best.rtt_us);
    assert_int_equal(best.offset_us, 3000);
    assert_int_equal(best.rtt_us, 300);

    // A refused sample leaves the window as it was.
    coord_clock_stamps_t bad = {t, t, t + 10, t + 5};
    assert_int_equal(coord_clock_add(&clk, &bad, NULL), -EINVAL);
    assert_int_equal(clk.n, 3);

    // The fast sample leaves the window after COORD_CLOCK_WINDOW newer ones: the estimate follows
    // the slower samples that remain (a clock that was stepped is not held forever).
    for (int i = 0; i < COORD_CLOCK_WINDOW - 1; i++) {
        assert_int_equal(s_add(&clk, t + 3000000 + i, -500, 400, 400 + i), 0);
    }
    assert_true(coord_clock_has_estimate(&clk, &best));
    assert_int_equal(best.rtt_us, 800);
    assert_int_equal(best.offset_us, -500);
    assert_int_equal(clk.n, COORD_CLOCK_WINDOW);

    coord_clock_init(&clk);
    assert_false(coord_clock_has_estimate(&clk, &best));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_compute_table),
        cmocka_unit_test(t_min_rtt_filter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
