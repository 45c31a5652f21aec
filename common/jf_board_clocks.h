/* The custom power-mode space of each Jetson family as data (STYLE.md §7): cores, and the CPU,
 * GPU and EMC clock steps a custom mode may pin, from ../shared/reference/jetson-platforms.md §6.
 * The coordinator checks sweep points against these tables; a real agent checks against its own
 * sysfs tables, which win (they can differ between L4T releases and module SKUs). */
#ifndef JF_BOARD_CLOCKS_H
#define JF_BOARD_CLOCKS_H

#include "jf_board.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JF_BOARD_CLOCK_STEPS_MAX 32 // steps of one clock table
#define JF_BOARD_CORES_MAX       12 // most CPU cores of any family (AGX Orin)

// One family's custom-mode space (a plain value record; static tables).
typedef struct jf_board_clocks {
    jf_board_type_t type;
    int n_cpus;                                     // cores of the largest SKU; 1..n_cpus online
    size_t n_cpu_steps;                           // entries used in cpu_steps_hz
    int64_t cpu_steps_hz[JF_BOARD_CLOCK_STEPS_MAX]; // scaling_available_frequencies, ascending
    size_t n_gpu_steps;
    int64_t gpu_steps_hz[JF_BOARD_CLOCK_STEPS_MAX]; // devfreq available_frequencies, ascending
    size_t n_emc_steps;
    int64_t emc_steps_hz[JF_BOARD_CLOCK_STEPS_MAX]; // rates the EMC can be locked at, ascending
} jf_board_clocks_t;

// The table of a Jetson family (borrowed, static); NULL for host, sim or an invalid type, which
// have no custom-mode space.
const jf_board_clocks_t *jf_board_clocks(jf_board_type_t type);

// True if hz is one of the n steps.
bool jf_board_clocks_has_step(const int64_t *steps_hz, size_t n, int64_t hz);

#endif
