/* Unit: the order a coordinator tick handles the agent messages it read in (coord_pending.h,
 * docs/protocol.md §1.8): each peer's messages up to its last urgent one first, in the order
 * read; a peer without an urgent message, and what a peer sent after its last urgent one, wait
 * for the second pass. Tables of peers and urgency, with the expected first pass. */
#include "coord_pending.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define T_MAX 16

typedef struct t_case {
    const char *what;
    const char *peers;  // one letter per message, in the order read
    const char *urgent; // 'u' urgent, '.' bulk, per message
    const char *expect; // the first pass's indexes as digits or letters (10 = 'a', ...)
} t_case_t;

static const t_case_t s_cases[] = {
    {"nothing urgent: no first pass", "ABAB", "....", ""},
    {"one run end behind the fleet's telemetry, after its own", "ABCABCB", "......u", "146"},
    {"two peers' ends, each after its own earlier messages", "ABACBA", "..u.u.", "0124"},
    {"what a peer sent after its last urgent one waits", "AAAA", ".u..", "01"},
    {"urgent first in the list", "ABB", "u..", "0"},
    {"a hello among telemetry of others", "CCCDDDE", "......u", "6"},
    {"several urgent of one peer: up to the last; the other's bulk waits", "AXAXAXA", "u.u...u",
     "0246"},
};

static void test_first_pass(void **state)
{
    (void) state;
    for (size_t c = 0; c < sizeof s_cases / sizeof s_cases[0]; c++) {
        const t_case_t *t = &s_cases[c];
        size_t n = strlen(t->peers);
        uint64_t peer[T_MAX];
        bool urgent[T_MAX];
        size_t order[T_MAX];
        for (size_t i = 0; i < n; i++) {
            peer[i] = coord_pending_peer_key(&t->peers[i], 1);
            urgent[i] = t->urgent[i] == 'u';
        }
        size_t k = coord_pending_first_pass(peer, urgent, n, order);
        char got[T_MAX + 1] = "";
        for (size_t j = 0; j < k && j < T_MAX; j++) {
            got[j] = (char) (order[j] < 10 ? '0' + order[j] : 'a' + order[j] - 10);
        }
        if (strcmp(got, t->expect) != 0) {
            fail_msg("case %zu (%s): first pass '%s', expected '%s'", c, t->what, got, t->expect);
        }
    }
}

// Routing ids as keys: equal bytes, equal keys; a byte more or different, another key.
static void test_peer_key(void **state)
{
    (void) state;
    assert_true(coord_pending_peer_key("nx-01", 5) == coord_pending_peer_key("nx-01", 5));
    assert_true(coord_pending_peer_key("nx-01", 5) != coord_pending_peer_key("nx-02", 5));
    assert_true(coord_pending_peer_key("nx-01", 4) != coord_pending_peer_key("nx-01", 5));
    const unsigned char bin[] = {0, 1, 2, 0};
    assert_true(coord_pending_peer_key(bin, 4) != coord_pending_peer_key(bin, 3));
}

// Many peers, one urgent message each at the end of a long list: every peer's whole prefix.
static void test_many(void **state)
{
    (void) state;
    enum { N = 4000, PEERS = 1000 };
    static uint64_t peer[N];
    static bool urgent[N];
    static size_t order[N];
    for (size_t i = 0; i < N; i++) {
        peer[i] = coord_pending_peer_key(&(uint32_t){(uint32_t) (i % PEERS)}, sizeof(uint32_t));
        urgent[i] = false;
    }
    for (size_t p = 0; p < 10; p++) { // ten peers end a run in the last round
        urgent[N - PEERS + p * 7] = true;
    }
    size_t k = coord_pending_first_pass(peer, urgent, N, order);
    assert_int_equal(k, 10 * (N / PEERS));
    for (size_t j = 1; j < k; j++) {
        assert_true(order[j] > order[j - 1]);
    }
}

// The rest of a tick gets the drain's budget, cut short after a pass that left a board to
// dispatch to, and never extended by the cut.
static void test_bulk_until(void **state)
{
    (void) state;
    // Nothing to dispatch: the whole budget from the drain's start.
    assert_int_equal(coord_pending_bulk_until(1000, 50000, 3000, false, 10000), 51000);
    // A run's end or a hello in the pass: 10 ms after the pass.
    assert_int_equal(coord_pending_bulk_until(1000, 50000, 3000, true, 10000), 13000);
    // A pass that ended late: the budget still bounds the tick.
    assert_int_equal(coord_pending_bulk_until(1000, 50000, 45000, true, 10000), 51000);
    // A pass that used the whole budget leaves nothing for the rest.
    assert_true(coord_pending_bulk_until(1000, 50000, 60000, true, 10000) <= 60000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_pass),
        cmocka_unit_test(test_peer_key),
        cmocka_unit_test(test_many),
        cmocka_unit_test(test_bulk_until),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
