/* The run runtimes (jf_run_runtime.h, docs/containers.md). */
#include "jf_run_runtime.h"

#include <string.h>

bool jf_run_runtime_is_valid(const char *name)
{
    return name &&
           (strcmp(name, JF_RUN_RUNTIME_BARE) == 0 || strcmp(name, JF_RUN_RUNTIME_CONTAINER) == 0);
}

bool jf_run_runtime_is_container(const char *name)
{
    return name && strcmp(name, JF_RUN_RUNTIME_CONTAINER) == 0;
}
