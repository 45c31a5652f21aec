/* The lowest-power idle modes (jf_board_idle.h). Each entry is the mode of
 * ../shared/reference/jetson-platforms.md §4.4 with the smallest budget in its name; between
 * modes of one budget, the one with the fewest cores online. */
#include "jf_board_idle.h"

static const int s_lowest[JF_BOARD_TYPE_COUNT] = {
    [JF_BOARD_AGX_XAVIER] = 1, // MODE_10W: 2 cores, CPU 1200 MHz, GPU 520 MHz
    [JF_BOARD_XAVIER_NX] = 3,  // MODE_10W_2CORE: 2 cores (MODE_10W_4CORE keeps 4 online)
    [JF_BOARD_NANO] = 1,       // 5W: 2 cores, CPU 918 MHz
    [JF_BOARD_ORIN_AGX] = 1,   // MODE_15W: 4 cores, CPU 1113.6 MHz
    [JF_BOARD_ORIN_NANO] = 1,  // 7W
    [JF_BOARD_HOST] = 0,       // DEFAULT, the only one
    [JF_BOARD_SIM] = -1,       // a sim board's modes are those of the type it simulates
};

int jf_board_lowest_mode_id(jf_board_type_t type)
{
    return type >= 0 && type < JF_BOARD_TYPE_COUNT ? s_lowest[type] : -1;
}
