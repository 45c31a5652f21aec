/* Private to sim_params*.c: the field tables that map a YAML mapping's keys onto a record (one
 * row per key: where it goes, its range in file units, its conversion to SI units), and the
 * board part of the loader (sim_params_board.c, its thermal part sim_params_thermal.c). */
#ifndef SIM_PARAMS_INTERNAL_H
#define SIM_PARAMS_INTERNAL_H

#include "jf_yaml.h"
#include "sim_params.h"

#include <stddef.h>

#define SIM_PARAMS_CTX_MAX  96                   // "board 'agx-xavier'" and the like
#define SIM_PARAMS_FILE_CTX "the parameter file" // context of the top-level keys

// File unit -> record unit, applied once while loading.
#define SIM_PARAMS_ONE 1.0
#define SIM_PARAMS_MHZ 1e6       // MHz -> Hz
#define SIM_PARAMS_MIB 1048576.0 // MiB -> bytes
#define SIM_PARAMS_GB  1e9       // GB/s, GFLOP -> bytes/s, FLOP
#define SIM_PARAMS_MB  1e6       // MB/s, MB, Mcycles -> bytes/s, bytes, cycles
#define SIM_PARAMS_US  1e-6      // us -> s

// Sanity bounds of the tables, in file units; not hardware facts.
#define SIM_PARAMS_FREQ_MAX  1e5  // MHz
#define SIM_PARAMS_BYTES_MAX 1e12 // bytes or MiB
#define SIM_PARAMS_COUNT_MAX 1e12 // samples, parameters, operations, cycles
#define SIM_PARAMS_RATIO_MAX 100.0
#define SIM_PARAMS_CORES_MAX 256

typedef enum sim_params_kind {
    SIM_PARAMS_DOUBLE = 0, // stored as double, times scale
    SIM_PARAMS_INT,        // stored as int
} sim_params_kind_t;

// One key of a record.
typedef struct sim_params_field {
    const char *key;
    sim_params_kind_t kind;
    size_t offset; // of the member in the record
    double min;    // file units
    double max;
    double scale; // file unit -> record unit (doubles only)
} sim_params_field_t;

// A record kind: its fields, and the keys of nested values that the caller parses itself.
typedef struct sim_params_table {
    const sim_params_field_t *fields;
    size_t n_fields;
    const char *const *nested;
    size_t n_nested;
} sim_params_table_t;

#define SIM_PARAMS_N(array) (sizeof(array) / sizeof((array)[0]))
#define SIM_PARAMS_D(key, type, member, lo, hi, sc)                                                \
    {                                                                                              \
        key, SIM_PARAMS_DOUBLE, offsetof(type, member), lo, hi, sc                                 \
    }
#define SIM_PARAMS_I(key, type, member, lo, hi)                                                    \
    {                                                                                              \
        key, SIM_PARAMS_INT, offsetof(type, member), lo, hi, SIM_PARAMS_ONE                        \
    }

// Reads a mapping with exactly the table's keys (all required) plus its nested ones into
// record. Returns 0 or -EINVAL with err "<pos>: <what> in <ctx>".
int sim_params_record(const jf_yaml_node_t *map, const sim_params_table_t *table, const char *ctx,
                      void *record, jf_err_t *err);

// Reads root's `boards` into p->boards: every Jetson type of jf_board.h, nothing else. Returns 0
// or -EINVAL with err naming the position.
int sim_params_parse_boards(sim_params_t *p, const jf_yaml_node_t *root, jf_err_t *err);

// Reads a board's `thermal` mapping (board_map's key; board_ctx names the board) into
// b->ambient_c and b->zones: the modelled zones, then the offline ones. Returns 0 or -EINVAL with
// err naming the position.
int sim_params_parse_thermal(sim_board_params_t *b, const jf_yaml_node_t *board_map,
                             const char *board_ctx, jf_err_t *err);

#endif
