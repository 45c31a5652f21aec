/* Board registry (in memory). */
#include "coord_registry.h"

#include "jf_units.h"

#include <czmq.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct coord_registry {
    size_t n_boards;
    coord_board_t *boards;  // owned; fleet order
    coord_board_t **byname; // owned (the array; the boards are borrowed from boards): sorted by
                            // name, for lookups in O(log n) on every message
    zhashx_t *routes;       // owned map (the boards borrowed): hex of a routing id -> its board
};

#define S_ROUTE_KEY_MAX (2 * COORD_ROUTE_MAX + 1)

// The map key of a routing id: its bytes in hex (a routing id may hold any byte, a NUL too).
static void s_route_key(const void *id, size_t len, char key[S_ROUTE_KEY_MAX])
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *b = id;
    for (size_t i = 0; i < len; i++) {
        key[2 * i] = hex[b[i] >> 4];
        key[2 * i + 1] = hex[b[i] & 0xf];
    }
    key[2 * len] = '\0';
}

static int s_cmp_board(const void *a, const void *b)
{
    const coord_board_t *const *x = a, *const *y = b;
    return strcmp((*x)->spec->name, (*y)->spec->name);
}

static int s_cmp_key(const void *key, const void *elem)
{
    const coord_board_t *const *b = elem;
    return strcmp(key, (*b)->spec->name);
}

coord_registry_t *coord_registry_new(const jf_fleet_config_t *fleet)
{
    coord_registry_t *self = calloc(1, sizeof *self);
    if (!self) {
        return NULL;
    }
    self->boards = calloc(fleet->n_boards ? fleet->n_boards : 1, sizeof *self->boards);
    self->byname = calloc(fleet->n_boards ? fleet->n_boards : 1, sizeof *self->byname);
    if (!self->boards || !self->byname) {
        coord_registry_destroy(&self);
        return NULL;
    }
    self->routes = zhashx_new();
    if (!self->routes) {
        coord_registry_destroy(&self);
        return NULL;
    }
    self->n_boards = fleet->n_boards;
    for (size_t i = 0; i < fleet->n_boards; i++) {
        self->boards[i].spec = &fleet->boards[i];
        coord_clock_init(&self->boards[i].clock);
        // The clock warning repeats at most once a minute per board (docs/protocol.md §4.2.1).
        self->boards[i].rl_clock.interval_us = COORD_CLOCK_WARN_EVERY_US;
        coord_limits_peer_init(&self->boards[i].limits, &fleet->coord.limits, jf_clock_mono_us());
        self->byname[i] = &self->boards[i];
    }
    // Names are unique (the fleet.yaml loader refuses a repeated one), so bsearch finds the one.
    qsort(self->byname, self->n_boards, sizeof *self->byname, s_cmp_board);
    return self;
}

void coord_registry_destroy(coord_registry_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    zhashx_destroy(&(*self_p)->routes);
    free((*self_p)->boards);
    free((*self_p)->byname);
    free(*self_p);
    *self_p = NULL;
}

coord_board_t *coord_registry_board(coord_registry_t *self, const char *name)
{
    if (!name || self->n_boards == 0) {
        return NULL;
    }
    coord_board_t **found =
        bsearch(name, self->byname, self->n_boards, sizeof *self->byname, s_cmp_key);
    return found ? *found : NULL;
}

coord_board_t *coord_registry_board_by_route(coord_registry_t *self, const void *id, size_t len)
{
    if (len == 0 || len > COORD_ROUTE_MAX) {
        return NULL;
    }
    char key[S_ROUTE_KEY_MAX];
    s_route_key(id, len, key);
    return zhashx_lookup(self->routes, key);
}

int coord_registry_set_route(coord_registry_t *self, coord_board_t *board, const void *id,
                             size_t len)
{
    if (len == 0 || len > COORD_ROUTE_MAX) {
        return -EINVAL;
    }
    if (board->route_len == len && memcmp(board->route, id, len) == 0) {
        return 0;
    }
    char key[S_ROUTE_KEY_MAX];
    s_route_key(id, len, key);
    coord_board_t *had = zhashx_lookup(self->routes, key);
    if (zhashx_insert(self->routes, key, board) != 0 && !had) {
        return -ENOMEM;
    }
    if (had) {
        zhashx_update(self->routes, key, board);
        had->route_len = 0;
    }
    if (board->route_len > 0) {
        char old[S_ROUTE_KEY_MAX];
        s_route_key(board->route, board->route_len, old);
        zhashx_delete(self->routes, old);
    }
    memcpy(board->route, id, len);
    board->route_len = len;
    return 0;
}

void coord_board_set_quarantine(coord_board_t *board, const char *reason,
                                const jf_limits_t *limits)
{
    board->quarantined = reason != NULL;
    (void) snprintf(board->quarantine_reason, sizeof board->quarantine_reason, "%s",
                    reason ? reason : "");
    if (!reason) {
        coord_limits_peer_t kept = board->limits;
        coord_limits_peer_init(&board->limits, limits, jf_clock_mono_us());
        board->limits.passed = kept.passed;
        memcpy(board->limits.dropped, kept.dropped, sizeof kept.dropped);
    }
}

size_t coord_registry_size(const coord_registry_t *self)
{
    return self->n_boards;
}

coord_board_t *coord_registry_at(coord_registry_t *self, size_t i)
{
    return i < self->n_boards ? &self->boards[i] : NULL;
}

void coord_board_set_run(coord_board_t *board, coord_board_run_t state, const char *run,
                         int64_t attempt)
{
    bool same = state != COORD_BOARD_IDLE && run && strcmp(run, board->run) == 0 &&
                attempt == board->attempt;
    if (!same) {
        board->cancel_next_mono_us = 0; // a cancel due is for the run it had
    }
    board->run_state = state;
    board->attempt = state == COORD_BOARD_IDLE ? 0 : attempt;
    (void) snprintf(board->run, sizeof board->run, "%s",
                    state == COORD_BOARD_IDLE || !run ? "" : run);
    board->assign_next_mono_us = 0;
    if (state != COORD_BOARD_ASSIGNED) {
        board->assign_tries = 0;
    }
}

int coord_board_clock_add(coord_board_t *board, const coord_clock_stamps_t *stamps, jf_err_t *err)
{
    int rc = coord_clock_add(&board->clock, stamps, err);
    if (rc == 0) {
        board->clock_known = coord_clock_has_estimate(&board->clock, &board->clock_est);
    }
    return rc;
}

size_t coord_registry_online(const coord_registry_t *self)
{
    size_t n = 0;
    for (size_t i = 0; i < self->n_boards; i++) {
        n += self->boards[i].online;
    }
    return n;
}
