/* Unit tests for coord_registry: one offline board per fleet entry (fleet built by hand, no
 * YAML), lookup by name and index, the busy/idle run record, the online count and routes. */
#include "coord_registry.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define T_RUN "r0123456789abcdef"

static const char *const s_names[] = {"agx-01", "nx-01", "nano-03", "orin-1"};

#define T_N_BOARDS (sizeof s_names / sizeof s_names[0])

static int t_setup(void **state)
{
    jf_fleet_config_t *fleet = calloc(1, sizeof *fleet);
    jf_board_spec_t *boards = calloc(T_N_BOARDS, sizeof *boards);
    if (!fleet || !boards) {
        free(fleet);
        free(boards);
        return -1;
    }
    for (size_t i = 0; i < T_N_BOARDS; i++) {
        (void)snprintf(boards[i].name, sizeof boards[i].name, "%s", s_names[i]);
        boards[i].type = (jf_board_type_t)i;
        boards[i].simulates = boards[i].type;
        boards[i].line = (int)(10 * i + 3);
    }
    fleet->n_boards = T_N_BOARDS;
    fleet->boards = boards;
    *state = fleet;
    return 0;
}

static int t_teardown(void **state)
{
    jf_fleet_config_t *fleet = *state;
    free(fleet->boards);
    free(fleet);
    return 0;
}

static void test_new_has_one_offline_board_per_entry(void **state)
{
    const jf_fleet_config_t *fleet = *state;
    coord_registry_t *reg = coord_registry_new(fleet);
    assert_non_null(reg);
    assert_int_equal(coord_registry_size(reg), T_N_BOARDS);
    assert_int_equal(coord_registry_online(reg), 0);
    for (size_t i = 0; i < T_N_BOARDS; i++) {
        coord_board_t *b = coord_registry_at(reg, i);
        assert_non_null(b);
        assert_ptr_equal(b->spec, &fleet->boards[i]); // borrowed, fleet order
        assert_false(b->online);
        assert_string_equal(b->session, "");
        assert_int_equal(b->run_state, COORD_BOARD_IDLE);
        assert_string_equal(b->run, "");
        assert_int_equal(b->attempt + b->assign_tries + (int64_t)b->n_modes, 0);
    }
    assert_null(coord_registry_at(reg, T_N_BOARDS));
    assert_null(coord_registry_at(reg, SIZE_MAX));
    coord_registry_destroy(&reg);
    assert_null(reg);
    coord_registry_destroy(&reg);
    coord_registry_destroy(NULL);
}

static void test_empty_fleet(void **state)
{
    (void)state;
    jf_fleet_config_t empty = {0};
    coord_registry_t *reg = coord_registry_new(&empty);
    assert_non_null(reg);
    assert_int_equal(coord_registry_size(reg), 0);
    assert_int_equal(coord_registry_online(reg), 0);
    assert_null(coord_registry_at(reg, 0));
    assert_null(coord_registry_board(reg, "nx-01"));
    coord_registry_destroy(&reg);
}

static void test_lookup_by_name(void **state)
{
    const jf_fleet_config_t *fleet = *state;
    coord_registry_t *reg = coord_registry_new(fleet);
    assert_non_null(reg);
    for (size_t i = 0; i < T_N_BOARDS; i++) {
        coord_board_t *b = coord_registry_board(reg, s_names[i]);
        assert_ptr_equal(b, coord_registry_at(reg, i));
        assert_string_equal(b->spec->name, s_names[i]);
    }
    static const char *const unknown[] = {"nx-02", "NX-01", "nx-01 ", "nx", "", "agx-01x"};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        if (coord_registry_board(reg, unknown[i])) {
            fail_msg("'%s' is not in the fleet but was found", unknown[i]);
        }
    }
    assert_null(coord_registry_board(reg, NULL));
    coord_registry_destroy(&reg);
}

static void test_set_run(void **state)
{
    coord_registry_t *reg = coord_registry_new(*state);
    assert_non_null(reg);
    coord_board_t *b = coord_registry_board(reg, "nx-01");
    coord_board_t *other = coord_registry_board(reg, "nano-03");
    b->assign_next_mono_us = 123;
    b->assign_tries = 2;
    coord_board_set_run(b, COORD_BOARD_ASSIGNED, T_RUN, 3);
    assert_int_equal(b->run_state, COORD_BOARD_ASSIGNED);
    assert_string_equal(b->run, T_RUN);
    assert_int_equal(b->attempt, 3);
    assert_int_equal(b->assign_next_mono_us, 0);
    assert_int_equal(b->assign_tries, 2); // still counting run.assign sends for this attempt
    coord_board_set_run(b, COORD_BOARD_RUNNING, T_RUN, 3);
    assert_int_equal(b->run_state, COORD_BOARD_RUNNING);
    assert_string_equal(b->run, T_RUN);
    assert_int_equal(b->assign_tries, 0);
    assert_int_equal(other->run_state, COORD_BOARD_IDLE); // boards are independent
    coord_board_set_run(b, COORD_BOARD_IDLE, T_RUN, 3);
    assert_int_equal(b->run_state, COORD_BOARD_IDLE);
    assert_string_equal(b->run, "");
    assert_int_equal(b->attempt, 0);
    coord_board_set_run(b, COORD_BOARD_ASSIGNED, NULL, 1);
    assert_string_equal(b->run, "");
    // A too-long run id is cut to the field, never overflowing it.
    coord_board_set_run(b, COORD_BOARD_ASSIGNED, "r0123456789abcdef0123456789", 1);
    assert_int_equal(strlen(b->run), JF_RUN_ID_LEN);
    coord_registry_destroy(&reg);
}

static void test_online_count(void **state)
{
    coord_registry_t *reg = coord_registry_new(*state);
    assert_non_null(reg);
    static const struct {
        const char *name;
        bool online;
        size_t want;
    } steps[] = {
        {"nx-01", true, 1},   {"orin-1", true, 2}, {"nx-01", true, 2},   {"agx-01", true, 3},
        {"orin-1", false, 2}, {"nx-01", false, 1}, {"agx-01", false, 0}, {"nano-03", true, 1},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        coord_registry_board(reg, steps[i].name)->online = steps[i].online;
        if (coord_registry_online(reg) != steps[i].want) {
            fail_msg("step %zu: %zu online, expected %zu", i, coord_registry_online(reg),
                     steps[i].want);
        }
    }
    coord_registry_destroy(&reg);
}

// Routes (docs/protocol.md §1.3): a routing id maps to the board whose hello was welcomed on it
// last; a board's new route replaces its old one; a route taken by another board leaves the first
// without one; routing ids are bytes, NULs included, never names.
static void test_routes(void **state)
{
    coord_registry_t *reg = coord_registry_new(*state);
    assert_non_null(reg);
    coord_board_t *nx = coord_registry_board(reg, "nx-01");
    coord_board_t *orin = coord_registry_board(reg, "orin-1");
    static const unsigned char r1[] = {0, 0x12, 0x34, 0x56, 0x78};
    static const unsigned char r2[] = {0, 0x12, 0x34, 0x56, 0x79};
    static const unsigned char r3[] = {0, 0x12, 0x34, 0x56, 0x78, 0}; // r1 and one more byte
    assert_null(coord_registry_board_by_route(reg, r1, sizeof r1));
    assert_null(coord_registry_board_by_route(reg, "nx-01", 5)); // a name is no route
    assert_int_equal(nx->route_len, 0);

    assert_int_equal(coord_registry_set_route(reg, nx, r1, sizeof r1), 0);
    assert_ptr_equal(coord_registry_board_by_route(reg, r1, sizeof r1), nx);
    assert_null(coord_registry_board_by_route(reg, r3, sizeof r3));
    assert_null(coord_registry_board_by_route(reg, r1, sizeof r1 - 1));
    assert_int_equal(nx->route_len, sizeof r1);
    assert_memory_equal(nx->route, r1, sizeof r1);
    assert_int_equal(coord_registry_set_route(reg, nx, r1, sizeof r1), 0); // again: no change
    assert_ptr_equal(coord_registry_board_by_route(reg, r1, sizeof r1), nx);

    // The board's new connection: the old routing id maps to nothing.
    assert_int_equal(coord_registry_set_route(reg, nx, r2, sizeof r2), 0);
    assert_ptr_equal(coord_registry_board_by_route(reg, r2, sizeof r2), nx);
    assert_null(coord_registry_board_by_route(reg, r1, sizeof r1));

    // Another board on the same routing id: nx is left without a route.
    assert_int_equal(coord_registry_set_route(reg, orin, r2, sizeof r2), 0);
    assert_ptr_equal(coord_registry_board_by_route(reg, r2, sizeof r2), orin);
    assert_int_equal(nx->route_len, 0);
    assert_int_equal(coord_registry_set_route(reg, nx, r3, sizeof r3), 0);
    assert_ptr_equal(coord_registry_board_by_route(reg, r3, sizeof r3), nx);
    assert_ptr_equal(coord_registry_board_by_route(reg, r2, sizeof r2), orin);

    unsigned char big[COORD_ROUTE_MAX + 1];
    memset(big, 'x', sizeof big);
    assert_int_equal(coord_registry_set_route(reg, nx, big, 0), -EINVAL);
    assert_int_equal(coord_registry_set_route(reg, nx, big, sizeof big), -EINVAL);
    assert_int_equal(coord_registry_set_route(reg, nx, big, COORD_ROUTE_MAX), 0);
    assert_ptr_equal(coord_registry_board_by_route(reg, big, COORD_ROUTE_MAX), nx);
    assert_null(coord_registry_board_by_route(reg, big, sizeof big));
    assert_null(coord_registry_board_by_route(reg, r3, sizeof r3));
    coord_registry_destroy(&reg);
}

#define T_TEST(f) cmocka_unit_test_setup_teardown(f, t_setup, t_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T_TEST(test_new_has_one_offline_board_per_entry),
        cmocka_unit_test(test_empty_fleet),
        T_TEST(test_lookup_by_name),
        T_TEST(test_set_run),
        T_TEST(test_online_count),
        T_TEST(test_routes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
