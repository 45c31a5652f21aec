/* glibc malloc tuning for jetfleet-train (see train_alloc.h for why). */
#include "train_alloc.h"

#include <malloc.h>

bool train_alloc_tune(void)
{
    // mallopt returns 1 on success and 0 on error.
    int ok = mallopt(M_MMAP_THRESHOLD, TRAIN_ALLOC_MMAP_THRESHOLD_BYTES);
    ok &= mallopt(M_TRIM_THRESHOLD, TRAIN_ALLOC_TRIM_THRESHOLD_BYTES);
    ok &= mallopt(M_TOP_PAD, TRAIN_ALLOC_TOP_PAD_BYTES);
    return ok == 1;
}
