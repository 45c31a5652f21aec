/* The lowest-power idle state of each board family as data (STYLE.md §7), for idle baselines
 * (docs/baseline.md): the nvpmodel mode with the smallest power budget and the fewest cores
 * online, from ../shared/reference/jetson-platforms.md §4.4. */
#ifndef JF_BOARD_IDLE_H
#define JF_BOARD_IDLE_H

#include "jf_board.h"

// The id of the family's lowest-power nvpmodel mode (its cores offlined as that mode does); -1
// for sim (use the simulated type) or an invalid type. A host has one mode, DEFAULT (0).
int jf_board_lowest_mode_id(jf_board_type_t type);

#endif
