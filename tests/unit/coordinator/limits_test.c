/* Unit tests for coord_limits (token buckets, size classes, repeat offenders) and the
 * coordinator.limits section of fleet.yaml (jf_limits): defaults, values, and every error with
 * its file:line:col (docs/protocol.md §1.9, docs/fleet-yaml.md). */
#include "coord_limits.h"
#include "jf_fleet_config.h"
#include "jf_units.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define T_BOARD                                                                                    \
    "boards:\n  - {name: b, type: host, storage: [{medium: local, mount: /, "                      \
    "dataset_root: /d}]}\n"
#define T_T0_US INT64_C(1000000000)

static jf_fleet_config_t *t_parse(const char *limits, jf_err_t *err)
{
    char text[1024] = {0};
    (void) snprintf(text, sizeof text, "coordinator:\n  limits:\n%s" T_BOARD, limits);
    return jf_fleet_config_parse(text, strlen(text), "t.yaml", "/", err);
}

// A small configuration whose figures are easy to follow.
static jf_limits_t t_small(void)
{
    jf_limits_t l;
    jf_limits_defaults(&l);
    l.messages_per_s = 10;
    l.message_burst = 5;
    l.bytes_per_s = 10000;
    l.byte_burst = 20000;
    l.max_stream_bytes = 8000;
    l.max_other_bytes = 2000;
    l.quarantine_after = 4;
    l.quarantine_window_us = 2 * JF_US_PER_S;
    return l;
}

static void test_defaults(void **state)
{
    (void) state;
    jf_err_t err = {0};
    const char *text = T_BOARD;
    jf_fleet_config_t *f = jf_fleet_config_parse(text, strlen(text), "t.yaml", "/", &err);
    assert_non_null(f);
    const jf_limits_t *l = &f->coord.limits;
    assert_int_equal(l->messages_per_s, JF_LIMITS_MESSAGES_PER_S);
    assert_int_equal(l->message_burst, JF_LIMITS_MESSAGE_BURST);
    assert_int_equal(l->bytes_per_s, JF_LIMITS_BYTES_PER_S);
    assert_int_equal(l->byte_burst, JF_LIMITS_BYTE_BURST);
    assert_int_equal(l->max_stream_bytes, JF_LIMITS_MAX_STREAM_BYTES);
    assert_int_equal(l->max_other_bytes, JF_LIMITS_MAX_OTHER_BYTES);
    assert_int_equal(l->quarantine_after, JF_LIMITS_QUARANTINE_AFTER);
    assert_int_equal(l->quarantine_window_us, JF_LIMITS_QUARANTINE_WINDOW_US);
    assert_int_equal(l->unregistered_per_s, JF_LIMITS_UNREGISTERED_PER_S);
    assert_int_equal(l->unregistered_burst, JF_LIMITS_UNREGISTERED_BURST);
    jf_fleet_config_destroy(&f);
}

static void test_values(void **state)
{
    (void) state;
    jf_err_t err = {0};
    jf_fleet_config_t *f = t_parse("    messages_per_s: 50\n    message_burst: 100\n"
                                   "    bytes_per_s: 65536\n    byte_burst: 1048576\n"
                                   "    max_stream_bytes: 524288\n    max_other_bytes: 4096\n"
                                   "    quarantine_after: 64\n    quarantine_window: 1m\n"
                                   "    unregistered_per_s: 7\n    unregistered_burst: 9\n",
                                   &err);
    assert_non_null(f);
    const jf_limits_t *l = &f->coord.limits;
    assert_int_equal(l->messages_per_s, 50);
    assert_int_equal(l->message_burst, 100);
    assert_int_equal(l->bytes_per_s, 65536);
    assert_int_equal(l->byte_burst, 1048576);
    assert_int_equal(l->max_stream_bytes, 524288);
    assert_int_equal(l->max_other_bytes, 4096);
    assert_int_equal(l->quarantine_after, 64);
    assert_int_equal(l->quarantine_window_us, 60 * JF_US_PER_S);
    assert_int_equal(l->unregistered_per_s, 7);
    assert_int_equal(l->unregistered_burst, 9);
    jf_fleet_config_destroy(&f);
}

static void test_errors(void **state)
{
    (void) state;
    static const struct {
        const char *limits;
        const char *fragment;
    } rows[] = {
        {"    messages_per_sec: 5\n", "t.yaml:3:5: unknown key 'messages_per_sec' in limits"},
        {"    messages_per_s: 0\n", "t.yaml:3:21: 'messages_per_s'"},
        {"    max_stream_bytes: 5000000\n", "t.yaml:3:23: 'max_stream_bytes'"},
        {"    max_other_bytes: 10\n", "t.yaml:3:22: 'max_other_bytes'"},
        {"    quarantine_after: 65\n", "t.yaml:3:23: 'quarantine_after'"},
        {"    quarantine_window: 10\n", "t.yaml:3:24: 'quarantine_window': expected a duration"},
        {"    byte_burst: 4096\n",
         "t.yaml:3:17: 'byte_burst' (4096) must be at least the largest message allowed"},
        {"    [1]\n", "t.yaml:3:5: 'limits' must be a mapping, got a sequence"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        jf_err_t err = {0};
        jf_fleet_config_t *f = t_parse(rows[i].limits, &err);
        if (f || err.code != -EINVAL || !strstr(err.msg, rows[i].fragment)) {
            fail_msg("row %zu: code %d, message '%s', expected '%s'", i, err.code, err.msg,
                     rows[i].fragment);
        }
    }
}

static void test_message_bucket(void **state)
{
    (void) state;
    jf_limits_t l = t_small();
    coord_limits_peer_t p;
    coord_limits_peer_init(&p, &l, T_T0_US);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(coord_limits_peer_admit(&p, &l, 100, T_T0_US), COORD_LIMITS_PASS);
    }
    assert_int_equal(coord_limits_peer_admit(&p, &l, 100, T_T0_US), COORD_LIMITS_OVER_RATE);
    // 10 per second: one token back after 100 ms, not before.
    assert_int_equal(coord_limits_peer_admit(&p, &l, 100, T_T0_US + 99000), COORD_LIMITS_OVER_RATE);
    assert_int_equal(coord_limits_peer_admit(&p, &l, 100, T_T0_US + 100000), COORD_LIMITS_PASS);
    assert_int_equal(coord_limits_peer_admit(&p, &l, 100, T_T0_US + 100000),
                     COORD_LIMITS_OVER_RATE);
    // A long silence refills only up to the burst.
    int passed = 0;
    for (int i = 0; i < 20; i++) {
        passed +=
            coord_limits_peer_admit(&p, &l, 100, T_T0_US + 100 * JF_US_PER_S) == COORD_LIMITS_PASS;
    }
    assert_int_equal(passed, 5);
    assert_int_equal(p.dropped[COORD_LIMITS_OVER_RATE], 3 + 15);
    assert_int_equal(coord_limits_peer_dropped(&p), 18);
}

static void test_byte_bucket_and_sizes(void **state)
{
    (void) state;
    jf_limits_t l = t_small();
    coord_limits_peer_t p;
    coord_limits_peer_init(&p, &l, T_T0_US);
    // Larger than any class: refused before decoding, and it takes nothing.
    assert_int_equal(coord_limits_peer_admit(&p, &l, 8001, T_T0_US), COORD_LIMITS_OVER_SIZE);
    assert_int_equal(coord_limits_peer_admit(&p, &l, 8000, T_T0_US), COORD_LIMITS_PASS);
    assert_int_equal(coord_limits_peer_admit(&p, &l, 8000, T_T0_US), COORD_LIMITS_PASS);
    // 4000 bytes left of the 20000: a message of 8000 must wait for 400 ms of refill.
    assert_int_equal(coord_limits_peer_admit(&p, &l, 8000, T_T0_US), COORD_LIMITS_OVER_BYTES);
    assert_int_equal(coord_limits_peer_admit(&p, &l, 8000, T_T0_US + 399000),
                     COORD_LIMITS_OVER_BYTES);
    assert_int_equal(coord_limits_peer_admit(&p, &l, 8000, T_T0_US + 400000), COORD_LIMITS_PASS);
    // After decoding: the stream classes may be large, the others not.
    assert_int_equal(coord_limits_peer_check_type(&p, &l, JF_MSG_TELEMETRY, 8000, T_T0_US),
                     COORD_LIMITS_PASS);
    assert_int_equal(coord_limits_peer_check_type(&p, &l, JF_MSG_RUN_PROGRESS, 8000, T_T0_US),
                     COORD_LIMITS_PASS);
    assert_int_equal(coord_limits_peer_check_type(&p, &l, JF_MSG_HEARTBEAT, 2001, T_T0_US),
                     COORD_LIMITS_OVER_SIZE);
    assert_int_equal(coord_limits_peer_check_type(&p, &l, JF_MSG_HELLO, 2000, T_T0_US),
                     COORD_LIMITS_PASS);
    assert_int_equal(p.dropped[COORD_LIMITS_OVER_SIZE], 2);
    assert_int_equal(p.dropped[COORD_LIMITS_OVER_BYTES], 2);
    assert_int_equal(p.passed, 3);
    assert_int_equal(p.largest_bytes[COORD_LIMITS_STREAM], 8000);
    assert_int_equal(p.largest_bytes[COORD_LIMITS_OTHER], 2000);
    assert_int_equal(p.peak_msgs_per_s, 3);
    assert_int_equal(p.peak_bytes_per_s, 18000);
}

static void test_repeat_offender(void **state)
{
    (void) state;
    jf_limits_t l = t_small();
    coord_limits_peer_t p;
    coord_limits_peer_init(&p, &l, T_T0_US);
    // Violations 1 s apart: at most 3 fall within any 2 s window, never 4.
    for (int i = 0; i < 10; i++) {
        int64_t t = T_T0_US + i * JF_US_PER_S;
        assert_int_equal(coord_limits_peer_admit(&p, &l, 9000, t), COORD_LIMITS_OVER_SIZE);
        assert_false(coord_limits_peer_is_offender(&p, &l, t));
    }
    // Then 4 within 2 s: an offender.
    int64_t t = T_T0_US + 20 * JF_US_PER_S;
    for (int i = 0; i < 3; i++) {
        (void) coord_limits_peer_admit(&p, &l, 9000, t + i * 500000);
        assert_false(coord_limits_peer_is_offender(&p, &l, t + i * 500000));
    }
    (void) coord_limits_peer_admit(&p, &l, 9000, t + 1500000);
    assert_true(coord_limits_peer_is_offender(&p, &l, t + 1500000));
    assert_true(p.limited);
    // A message that passes ends the run of drops.
    assert_int_equal(coord_limits_peer_admit(&p, &l, 10, t + 1500000), COORD_LIMITS_PASS);
    assert_int_equal(coord_limits_peer_check_type(&p, &l, JF_MSG_HEARTBEAT, 10, t + 1500000),
                     COORD_LIMITS_PASS);
    assert_false(p.limited);
}

static void test_anonymous_bucket(void **state)
{
    (void) state;
    jf_limits_t l = t_small();
    coord_limits_peer_t p;
    coord_limits_peer_init(&p, &l, T_T0_US);
    int passed = 0;
    for (int i = 0; i < 1000; i++) {
        passed += coord_limits_peer_admit_anonymous(&p, 100, 50, T_T0_US);
    }
    assert_int_equal(passed, 5); // the first refill is capped by the smaller of both depths
    passed = 0;
    for (int i = 0; i < 1000; i++) {
        passed += coord_limits_peer_admit_anonymous(&p, 100, 50, T_T0_US + JF_US_PER_S);
    }
    assert_int_equal(passed, 50);
    assert_int_equal(p.dropped[COORD_LIMITS_OVER_RATE], 995 + 950);
}

// The bucket of peers that are no board yet: fleet.yaml's figures, raised per board only when
// boards are anonymous until their hello (docs/protocol.md §1.9).
static void test_anonymous_floor(void **state)
{
    (void) state;
    jf_limits_t l;
    jf_limits_defaults(&l);
    int64_t per_s = 0, burst = 0;
    coord_limits_anonymous(&l, 1000, false, &per_s, &burst); // CURVE: the key names the board
    assert_int_equal(per_s, l.unregistered_per_s);
    assert_int_equal(burst, l.unregistered_burst);
    coord_limits_anonymous(&l, 2, true, &per_s, &burst); // a small fleet: the defaults are more
    assert_int_equal(per_s, l.unregistered_per_s);
    assert_int_equal(burst, l.unregistered_burst);
    coord_limits_anonymous(&l, 1000, true, &per_s, &burst);
    assert_int_equal(per_s, 1000); // the default, 1000/s, and the floor meet
    assert_int_equal(burst, 4000);
    coord_limits_anonymous(&l, 3000, true, &per_s, &burst);
    assert_int_equal(per_s, 3000);
    assert_int_equal(burst, 12000);
}

static void test_json(void **state)
{
    (void) state;
    jf_limits_t l = t_small();
    coord_limits_peer_t p;
    coord_limits_peer_init(&p, &l, T_T0_US);
    (void) coord_limits_peer_admit(&p, &l, 9000, T_T0_US);
    json_t *o = coord_limits_peer_json(&p);
    assert_non_null(o);
    assert_int_equal(json_integer_value(json_object_get(o, "over_size")), 1);
    assert_int_equal(json_integer_value(json_object_get(o, "dropped")), 1);
    assert_int_equal(json_integer_value(json_object_get(o, "passed")), 0);
    json_decref(o);
    assert_string_equal(coord_limits_verdict_name(COORD_LIMITS_OVER_BYTES), "over_bytes");
}

// Protocol refusals count towards a quarantine like drops, in their own counters, and neither
// start a run of drops (the next rate drop is still answered) nor count as dropped.
static void test_refused(void **state)
{
    (void) state;
    jf_limits_t l = t_small();
    coord_limits_peer_t p;
    coord_limits_peer_init(&p, &l, T_T0_US);
    coord_limits_peer_refused(&p, COORD_LIMITS_INVALID, T_T0_US);
    coord_limits_peer_refused(&p, COORD_LIMITS_OTHER_BOARD_RUN, T_T0_US + 1);
    coord_limits_peer_refused(&p, COORD_LIMITS_OVER_RATE, T_T0_US + 2); // not a refusal: ignored
    assert_int_equal(p.n_violations, 2);
    assert_false(p.limited);
    coord_limits_peer_refused(&p, COORD_LIMITS_INVALID, T_T0_US + 3);
    assert_false(coord_limits_peer_is_offender(&p, &l, T_T0_US + 3));
    coord_limits_peer_refused(&p, COORD_LIMITS_INVALID, T_T0_US + 4);
    assert_true(coord_limits_peer_is_offender(&p, &l, T_T0_US + 4)); // quarantine_after is 4
    json_t *o = coord_limits_peer_json(&p);
    assert_non_null(o);
    assert_int_equal(json_integer_value(json_object_get(o, "invalid")), 3);
    assert_int_equal(json_integer_value(json_object_get(o, "other_board_run")), 1);
    assert_int_equal(json_integer_value(json_object_get(o, "refused")), 4);
    assert_int_equal(json_integer_value(json_object_get(o, "dropped")), 0);
    json_decref(o);
    assert_string_equal(coord_limits_verdict_name(COORD_LIMITS_OTHER_BOARD_RUN), "other_board_run");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_values),          cmocka_unit_test(test_errors),
        cmocka_unit_test(test_message_bucket),  cmocka_unit_test(test_byte_bucket_and_sizes),
        cmocka_unit_test(test_repeat_offender), cmocka_unit_test(test_anonymous_bucket),
        cmocka_unit_test(test_anonymous_floor), cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
