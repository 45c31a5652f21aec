/* The custom-mode space a CLI search or profiling sweep covers on one board: the clock tables
 * the board's agent reported in its last hello (docs/protocol.md §4.1.1 `clocks`), else its
 * family's table (common/jf_board_clocks.c). */
#ifndef CLI_BOARD_CLOCKS_H
#define CLI_BOARD_CLOCKS_H

#include "cli_ctx.h"
#include "jf_board_clocks.h"

#include <stdbool.h>

// Where a board's space came from.
typedef enum cli_clocks_source {
    CLI_CLOCKS_FAMILY = 0, // the family's table: the store has no hello clocks of the board
    CLI_CLOCKS_BOARD,      // the board's own tables, as its last hello reported them
} cli_clocks_source_t;

// The space of board b into *ret: its own tables from the store's facts, each step kept only
// where its family's table has it too (the sweep loader checks custom points against that
// table, jf_sweep_power.c, and would refuse the others), its cores at most the family's; or the
// family's table when the board never sent clocks (or one of its tables shares no step with the
// family's).
// *ret_source says which. Returns 0; -ENOTSUP with err for a type without custom power modes
// (a host); -EIO when the store cannot be read.
int cli_board_clocks(cli_ctx_t *ctx, const jf_board_spec_t *b, jf_board_clocks_t *ret,
                     cli_clocks_source_t *ret_source, jf_err_t *err);

// "the board's own tables (its hello)" or "the family's table (no hello clocks stored)".
const char *cli_clocks_source_text(cli_clocks_source_t source);

#endif
