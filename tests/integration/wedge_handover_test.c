/* Integration (issue #11, reliability): a board whose old connection is still open can register
 * again. A raw DEALER holds the routing id of board sim-1 (as a half-open connection of a board
 * that rebooted would: it never reads and never reconnects); then the real agent of sim-1
 * starts, and must be welcomed within one hello retry, its hello never refused. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"
#include "jft_zmq.h"

#include "jf_units.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

// The agent's first hello retry comes 1 s after its first hello (plus up to 25 % jitter,
// jf_hello_backoff_us in common/jf_msg_session.h); the agent's start-up on a loaded machine gets
// 2 s more.
#define S_REREGISTER_MAX_MS 3250
#define S_WAIT_MS           15000

static const char *const s_agent_args[] = {"--sim-speed", "200", "--log-level", "info", NULL};

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    const char *types[] = {"xavier-nx"};
    *state = f;
    return f && jft_fleet_setup_sims(f, 0, types, 1) == 0 ? 0 : -1;
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

static bool s_online(void *arg)
{
    return jft_fleet_sql_int(arg, "SELECT count(*) FROM boards WHERE name = 'sim-1' AND "
                                  "online = 1") == 1;
}

// Counts lines of the coordinator's log that contain what.
static int s_log_count(jft_fleet_t *f, const char *what)
{
    char *text = jft_read_file(f->coord.log_path, NULL);
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, what)) != NULL; p += strlen(what)) {
        n++;
    }
    free(text);
    return n;
}

// A DEALER that claims sim-1, is answered once (so the coordinator has its connection), and
// then neither reads nor reconnects.
static zsock_t *s_squatter(jft_fleet_t *f)
{
    zsock_t *d = jft_dealer_new(f->endpoint, "sim-1");
    assert_non_null(d);
    zsock_set_reconnect_ivl(d, -1);
    const char hb[] = "{\"v\":1,\"type\":\"heartbeat\",\"id\":1,\"t_us\":1}";
    assert_int_equal(jft_send_raw(d, NULL, hb, strlen(hb)), 0);
    json_t *e = jft_recv_type(d, "error", 5000 * jft_timeout_scale(), NULL);
    assert_non_null(e);
    assert_string_equal(json_string_value(json_object_get(e, "code")), "not_registered");
    json_decref(e);
    return d;
}

static void test_new_connection_takes_over(void **state)
{
    jft_fleet_t *f = *state;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    zsock_t *squatter = s_squatter(f);
    int64_t t0 = jf_clock_mono_us();
    assert_int_equal(jft_fleet_start_sim_agent(f, 0, s_agent_args), 0);
    bool online = jft_wait_until(s_online, f, S_WAIT_MS);
    double reregister_s = (double)(jf_clock_mono_us() - t0) / (double)JF_US_PER_S;
    int refused = s_log_count(f, "refused hello");
    printf("reregister_s=%.2f\nrefused_hellos=%d\n", online ? reregister_s : -1.0, refused);
    fflush(stdout);
    assert_true(online);
    assert_int_equal(refused, 0);
    assert_true(reregister_s * 1000 <= (double)S_REREGISTER_MAX_MS * jft_timeout_scale());
    zsock_destroy(&squatter);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_new_connection_takes_over, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
