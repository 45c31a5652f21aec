/* What one request will do, decided before anything is done: an ordered list of steps (writes of
 * numbers to paths built from privhelper_paths, nvpmodel, sync, state slots). Planning only
 * reads; a request that fails planning has written nothing. A plain record and its builders. */
#ifndef PRIVHELPER_PLAN_H
#define PRIVHELPER_PLAN_H

#include "jf_err.h"
#include "privhelper_paths.h"

#include <stddef.h>
#include <stdint.h>

#define PRIVHELPER_STEPS_MAX      256   // steps in one plan (dvfs off on 12 cores needs ~120)
#define PRIVHELPER_STATE_TEXT_MAX 16384 // a saved state's text, in bytes
#define PRIVHELPER_NOTE_MAX       32    // the reply's extra words

typedef enum privhelper_step_kind {
    PRIVHELPER_STEP_WRITE = 0, // value -> path
    PRIVHELPER_STEP_RANGE,     // value -> path (a min file), value2 -> path2 (its max file), in
                               // the order the kernel accepts from the min read at that moment
    PRIVHELPER_STEP_NVPMODEL,  // run `nvpmodel -m <value>`
    PRIVHELPER_STEP_SYNC,      // sync(2), so drop_caches can drop what was dirty
    PRIVHELPER_STEP_STORE,     // save the plan's state text in slot <value>
    PRIVHELPER_STEP_FORGET,    // remove slot <value>
} privhelper_step_kind_t;

typedef struct privhelper_step {
    privhelper_step_kind_t kind;     // what the step does
    char path[PRIVHELPER_PATH_MAX];  // WRITE, RANGE: relative to the root
    char path2[PRIVHELPER_PATH_MAX]; // RANGE: the max file
    int64_t value;                   // number written, mode id or slot
    int64_t value2;                  // RANGE: the max
} privhelper_step_t;

typedef struct privhelper_plan {
    size_t n_steps;                                // entries used in steps
    privhelper_step_t steps[PRIVHELPER_STEPS_MAX]; // in execution order
    size_t state_len;                              // bytes used in state
    char state[PRIVHELPER_STATE_TEXT_MAX];         // for STORE steps
    int reply_slot;                                // > 0: the reply names it ("state=N")
    char note[PRIVHELPER_NOTE_MAX];                // extra reply words ("emc=locked"), or ""
} privhelper_plan_t;

// Empties the plan.
void privhelper_plan_init(privhelper_plan_t *plan);

// Appends a WRITE step. 0, or -ENOSPC when the plan is full.
int privhelper_plan_write(privhelper_plan_t *plan, const char *path, int64_t value, jf_err_t *err);

// Appends a RANGE step setting min_path to min and max_path to max. 0 or -ENOSPC.
int privhelper_plan_range(privhelper_plan_t *plan, const char *min_path, const char *max_path,
                          int64_t min, int64_t max, jf_err_t *err);

// Appends a NVPMODEL, SYNC, STORE or FORGET step with its number. 0 or -ENOSPC.
int privhelper_plan_step(privhelper_plan_t *plan, privhelper_step_kind_t kind, int64_t value,
                         jf_err_t *err);

#endif
