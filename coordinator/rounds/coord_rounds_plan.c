/* The rounds planner (coord_rounds_plan.h; docs/rounds.md "Planning"). */
#include "coord_rounds_plan.h"

#include <errno.h>
#include <stdlib.h>

int coord_rounds_boards_load(coord_store_t *store, const jf_rounds_t *cfg,
                             const jf_board_spec_t *const *boards, size_t n,
                             coord_rounds_board_t **ret, size_t *ret_n, jf_err_t *err)
{
    (void) store;
    (void) cfg;
    (void) boards;
    (void) n;
    (void) ret;
    (void) ret_n;
    return jf_err_set(err, -ENOSYS, "rounds: not implemented yet");
}

void coord_rounds_boards_free(coord_rounds_board_t **boards, size_t n)
{
    if (!boards || !*boards) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        free((*boards)[i].modes);
    }
    free(*boards);
    *boards = NULL;
}

int coord_rounds_plan(const jf_rounds_t *cfg, const coord_rounds_board_t *boards, size_t n,
                      coord_rounds_choice_t *ret_choices, jf_err_t *err)
{
    (void) cfg;
    (void) boards;
    (void) n;
    (void) ret_choices;
    return jf_err_set(err, -ENOSYS, "rounds: not implemented yet");
}

void coord_rounds_summarise(const coord_rounds_choice_t *choices, size_t n,
                            coord_rounds_summary_t *ret)
{
    (void) choices;
    (void) n;
    *ret = (coord_rounds_summary_t){0};
}
