/* The newest fitted time and power models of a workload on a board or its type
 * (coord_model_pick.h). */
#include "coord_model_pick.h"

#include <string.h>

// What the walk over the store's models looks for, and the newest ids found per scope.
typedef struct s_walk {
    const char *workload, *board, *type; // borrowed; type may be NULL
    int64_t board_id[2], type_id[2];     // [0] time, [1] power; 0 = none
} s_walk_t;

static int s_walk_fn(const coord_model_row_t *row, void *arg)
{
    s_walk_t *w = arg;
    int t = strcmp(row->target, "time") == 0 ? 0 : strcmp(row->target, "power") == 0 ? 1 : -1;
    if (t < 0 || strcmp(row->workload, w->workload) != 0) {
        return 0;
    }
    if (strcmp(row->scope, "board") == 0 && strcmp(row->scope_value, w->board) == 0) {
        w->board_id[t] = row->id > w->board_id[t] ? row->id : w->board_id[t];
    } else if (w->type && strcmp(row->scope, "type") == 0 &&
               strcmp(row->scope_value, w->type) == 0) {
        w->type_id[t] = row->id > w->type_id[t] ? row->id : w->type_id[t];
    }
    return 0;
}

int coord_model_pick_newest(coord_store_t *store, const char *workload, const char *board,
                            const char *type, coord_model_pick_t *ret_pick, jf_err_t *err)
{
    s_walk_t w = {.workload = workload, .board = board, .type = type};
    int rc = coord_store_models_each(store, s_walk_fn, &w, err);
    if (rc != 0) {
        return rc;
    }
    bool by_type = !(w.board_id[0] && w.board_id[1]);
    coord_model_pick_t p = {.time_id = by_type ? w.type_id[0] : w.board_id[0],
                            .power_id = by_type ? w.type_id[1] : w.board_id[1],
                            .by_type = by_type};
    *ret_pick = coord_model_pick_is_found(&p) ? p : (coord_model_pick_t){0};
    return 0;
}

bool coord_model_pick_is_found(const coord_model_pick_t *pick)
{
    return pick->time_id > 0 && pick->power_id > 0;
}
