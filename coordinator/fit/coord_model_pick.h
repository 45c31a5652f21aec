/* Which stored fitted models describe a workload on a board: the newest time and power models at
 * the board's own scope, else at its board type's (docs/analysis.md "Models"). The rounds planner
 * (docs/rounds.md "Planning") and `jetfleet recommend` without model ids share this choice. Not
 * the fitting (coord_model.c) nor the store's model rows (coord_store_models.c). */
#ifndef COORD_MODEL_PICK_H
#define COORD_MODEL_PICK_H

#include "coord_store.h"
#include "jf_err.h"

#include <stdbool.h>
#include <stdint.h>

// The chosen pair of model ids (plain value record).
typedef struct coord_model_pick {
    int64_t time_id;  // the time model's id; 0 = none
    int64_t power_id; // the power model's id; 0 = none
    bool by_type;     // the pair is at board-type scope: the board lacks one of its own
} coord_model_pick_t;

// Finds the newest (highest id) time model and the newest power model of workload at board scope
// for board. When the board lacks either, takes both from type scope for type instead (type NULL:
// no type scope). *ret_pick has both ids 0 when neither scope holds both targets. Returns 0, or
// the store's negative errno with err. Strings are borrowed for the call.
int coord_model_pick_newest(coord_store_t *store, const char *workload, const char *board,
                            const char *type, coord_model_pick_t *ret_pick, jf_err_t *err);

// Whether the pick holds a time and a power model.
bool coord_model_pick_is_found(const coord_model_pick_t *pick);

#endif
