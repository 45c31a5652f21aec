/* Board types and their facts as data: one table per board family (STYLE.md §7). The power-mode
 * lists are the NVIDIA nvpmodel defaults from ../shared/reference/jetson-platforms.md §4.4; a real
 * agent reports the modes of its own conf in its hello, which wins over this table. */
#ifndef JF_BOARD_H
#define JF_BOARD_H

#include <stdbool.h>
#include <stddef.h>

typedef enum jf_board_type {
    JF_BOARD_AGX_XAVIER = 0,
    JF_BOARD_XAVIER_NX,
    JF_BOARD_NANO,
    JF_BOARD_ORIN_AGX,
    JF_BOARD_ORIN_NANO,
    JF_BOARD_HOST, // any Linux machine training on its CPU (or a discrete GPU)
    JF_BOARD_SIM,  // a simulated board; the type it simulates is kept beside it
    JF_BOARD_TYPE_COUNT,
} jf_board_type_t;

#define JF_POWER_MODE_NAME_MAX 32 // longest power-mode name, without the NUL
#define JF_POWER_MODES_MAX     32 // most power modes one board may list
#define JF_POWER_MODE_ID_MAX   255 // largest nvpmodel mode id

typedef struct jf_power_mode {
    int id;                                 // nvpmodel mode id (0..255)
    char name[JF_POWER_MODE_NAME_MAX + 1];  // nvpmodel name, e.g. "MODE_15W_6CORE"
} jf_power_mode_t;

typedef struct jf_board_family {
    jf_board_type_t type;
    const char *name;              // wire and YAML name, e.g. "xavier-nx"
    const char *soc;               // "tegra194", or "" for host and sim
    int default_mode_id;           // nvpmodel default mode, -1 if none
    size_t n_modes;                // entries used in modes[]
    jf_power_mode_t modes[JF_POWER_MODES_MAX];
} jf_board_family_t;

// Looks a board type up by its name; false if unknown.
bool jf_board_type_parse(const char *name, jf_board_type_t *ret_type);

// The name of a board type ("agx-xavier", ...); "?" for an out-of-range value.
const char *jf_board_type_name(jf_board_type_t type);

// The family record for a type (borrowed, static). Never NULL for a valid type.
const jf_board_family_t *jf_board_family(jf_board_type_t type);

// A comma-separated list of all type names, for error messages. Static string.
const char *jf_board_type_names(void);

// True if name is a valid power-mode name: 1..32 of [A-Za-z0-9_].
bool jf_board_is_mode_name(const char *name);

#endif
