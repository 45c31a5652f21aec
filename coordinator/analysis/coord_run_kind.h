/* What kind of run a stored run is, decided in this one place from its stored run spec fields
 * (runs.roofline, runs.idle_s, runs.concurrent_infer_model, runs.runtime), so that every analysis
 * that assumes training epochs can leave the other kinds out and say so (docs/analysis.md "Run
 * kinds"). */
#ifndef COORD_RUN_KIND_H
#define COORD_RUN_KIND_H

#include <stdbool.h>

typedef enum coord_run_kind {
    COORD_RUN_TRAINING = 0, // plain training, bare runtime
    COORD_RUN_CONTAINER,    // plain training inside a container (runtime container)
    COORD_RUN_ROOFLINE,     // roofline microbenchmark epochs (docs/roofline.md)
    COORD_RUN_IDLE,         // idle baseline (idle_s > 0; docs/baseline.md)
    COORD_RUN_CONCURRENT,   // training interleaved with inference (docs/concurrent.md)
    COORD_RUN_KIND_COUNT,
} coord_run_kind_t;

// The kind of a run from its stored fields; the first that applies of roofline, idle (idle_s >
// 0), concurrent, container (runtime "container"), else training. runtime may be NULL (bare).
coord_run_kind_t coord_run_kind_of(bool roofline, int idle_s, bool concurrent, const char *runtime);

// Short names for output: "training", "container", "roofline", "idle", "concurrent". Static.
const char *coord_run_kind_name(coord_run_kind_t kind);

#endif
