/* Store: each board's clock offset estimate and the copy a run keeps of it when it starts
 * (docs/protocol.md §4.2.1, docs/store.md). Columns from migration 5 -> 6. */
#include "coord_store_internal.h"

int coord_store_board_set_clock(coord_store_t *self, const char *name, int64_t offset_us,
                                int64_t rtt_us, int64_t at_us, jf_err_t *err)
{
    return coord_store_exec(
        self,
        "UPDATE boards SET clock_offset_us = ?, clock_rtt_us = ?, "
        "clock_at_us = ? WHERE name = ?",
        COORD_BINDS(coord_int(offset_us), coord_int(rtt_us), coord_int(at_us), coord_text(name)),
        err);
}

int coord_store_run_set_clock(coord_store_t *self, const char *run, int64_t attempt, jf_err_t *err)
{
    // From the board's row, so that the run keeps exactly what was stored as in force.
    return coord_store_exec(self,
                            "UPDATE runs SET (clock_offset_us, clock_rtt_us, clock_at_us) = "
                            "(SELECT clock_offset_us, clock_rtt_us, clock_at_us FROM boards "
                            "WHERE boards.name = runs.board) WHERE id = ? AND attempt = ?",
                            COORD_BINDS(coord_text(run), coord_int(attempt)), err);
}
