/* The order of a tick's read agent messages (coord_pending.h). */
#include "coord_pending.h"

#include <stdlib.h>

uint64_t coord_pending_peer_key(const void *routing_id, size_t len)
{
    uint64_t h = UINT64_C(14695981039346656037);
    const unsigned char *p = routing_id;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ p[i]) * UINT64_C(1099511628211);
    }
    return h;
}

// An open-addressing table: peer key -> 1 + index of its last urgent message (0: empty slot).
typedef struct s_slot {
    uint64_t key;
    size_t last;
} s_slot_t;

static s_slot_t *s_find(s_slot_t *t, size_t mask, uint64_t key)
{
    size_t i = (size_t) (key ^ (key >> 29)) & mask;
    while (t[i].last != 0 && t[i].key != key) {
        i = (i + 1) & mask;
    }
    return &t[i];
}

size_t coord_pending_first_pass(const uint64_t *peer, const bool *urgent, size_t n,
                                size_t *ret_order)
{
    size_t n_urgent = 0;
    for (size_t i = 0; i < n; i++) {
        n_urgent += urgent[i];
    }
    if (n_urgent == 0) {
        return 0;
    }
    size_t size = 16;
    while (size < 2 * n_urgent) {
        size *= 2;
    }
    s_slot_t *t = calloc(size, sizeof *t);
    if (!t) {
        return SIZE_MAX;
    }
    for (size_t i = 0; i < n; i++) {
        if (urgent[i]) {
            s_slot_t *s = s_find(t, size - 1, peer[i]);
            *s = (s_slot_t){.key = peer[i], .last = i + 1};
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        s_slot_t *s = s_find(t, size - 1, peer[i]);
        if (s->last > i) {
            ret_order[k++] = i;
        }
    }
    free(t);
    return k;
}

int64_t coord_pending_bulk_until(int64_t drain_start_us, int64_t budget_us, int64_t pass_end_us,
                                 bool dispatch_waits, int64_t cut_us)
{
    int64_t until = drain_start_us + budget_us;
    if (dispatch_waits && pass_end_us + cut_us < until) {
        until = pass_end_us + cut_us;
    }
    return until;
}
