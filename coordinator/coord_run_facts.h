/* What the store knows about how one done run was measured, for the measurement-validity check
 * (analysis/coord_validity.h; docs/analysis.md "Measurement validity"): the mode asked for, the
 * clock offset in force, and the agent's measure record (docs/protocol.md §5.4.1) as stored.
 * A plain value record; the store fills it (coord_store_run_facts_each). */
#ifndef COORD_RUN_FACTS_H
#define COORD_RUN_FACTS_H

#include "coord_obs.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct coord_run_facts {
    char run[COORD_OBS_NAME_MAX + 1];        // run id
    char board[COORD_OBS_NAME_MAX + 1];      // board name
    char board_type[COORD_OBS_NAME_MAX + 1]; // "" when the board never said hello
    char platform[COORD_OBS_NAME_MAX + 1];   // "sim", "jetson", ...; "" when unknown
    char power_mode[COORD_OBS_NAME_MAX + 1]; // nvpmodel mode name asked for
    int power_mode_id;                       // nvpmodel mode id asked for
    bool custom;                             // a custom point was set on top of that mode
    int telemetry_hz;                        // sampling rate asked for, samples per second
    bool has_clock_offset;                   // clock_offset_us is known
    int64_t clock_offset_us;                 // the board's clock minus the coordinator's, µs
    const char *measure_json; // borrowed, valid during the callback; NULL when none stored
    // What kind of run it is (the run spec's fields; analysis/coord_run_kind.h decides the kind)
    bool roofline;                        // a roofline run: microbenchmark epochs
    int idle_s;                           // > 0: an idle baseline phase comes first
    bool concurrent;                      // concurrent_infer_model set: inference beside training
    char runtime[COORD_OBS_NAME_MAX + 1]; // "bare", "container"; "" when not set (bare)
} coord_run_facts_t;

#endif
