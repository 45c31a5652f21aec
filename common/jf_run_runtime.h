/* Where a run's trainer executes (the run spec's `runtime`, docs/containers.md): on the board
 * itself or inside a container. The closed vocabulary, in one place. */
#ifndef JF_RUN_RUNTIME_H
#define JF_RUN_RUNTIME_H

#include <stdbool.h>

#define JF_RUN_RUNTIME_MAX       15          // longest runtime name, without the NUL
#define JF_RUN_RUNTIME_BARE      "bare"      // the trainer as a child of the agent (the default)
#define JF_RUN_RUNTIME_CONTAINER "container" // the trainer in the agent's container engine

// True for "bare" and "container".
bool jf_run_runtime_is_valid(const char *name);

// True when name asks for a container (NULL and "" are bare).
bool jf_run_runtime_is_container(const char *name);

#endif
