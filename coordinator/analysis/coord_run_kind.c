/* The kind of a stored run (coord_run_kind.h). */
#include "coord_run_kind.h"

#include <string.h>

coord_run_kind_t coord_run_kind_of(bool roofline, int idle_s, bool concurrent, const char *runtime)
{
    if (roofline) {
        return COORD_RUN_ROOFLINE;
    }
    if (idle_s > 0) {
        return COORD_RUN_IDLE;
    }
    if (concurrent) {
        return COORD_RUN_CONCURRENT;
    }
    if (runtime && strcmp(runtime, "container") == 0) {
        return COORD_RUN_CONTAINER;
    }
    return COORD_RUN_TRAINING;
}

const char *coord_run_kind_name(coord_run_kind_t kind)
{
    static const char *const names[COORD_RUN_KIND_COUNT] = {"training", "container", "roofline",
                                                            "idle", "concurrent"};
    return kind >= 0 && kind < COORD_RUN_KIND_COUNT ? names[kind] : "unknown";
}
