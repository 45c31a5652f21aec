/* Allocator settings for the trainer process. libtorch frees and re-allocates large tensors every
 * minibatch; with glibc's defaults those go to mmap/munmap and the heap is trimmed each time, so
 * every step pays for fresh page faults (../shared/reference/performance-notes.md measured
 * ResNet-18 at 43.5 samples/s with the defaults and 55.0 with these settings; Python 51.7). */
#ifndef TRAIN_ALLOC_H
#define TRAIN_ALLOC_H

#include <stdbool.h>

#define TRAIN_ALLOC_MMAP_THRESHOLD_BYTES (32 * 1024 * 1024)  // glibc's largest allowed on 64-bit
#define TRAIN_ALLOC_TRIM_THRESHOLD_BYTES (512 * 1024 * 1024) // keep freed memory for reuse
#define TRAIN_ALLOC_TOP_PAD_BYTES        (64 * 1024 * 1024)  // grow the heap in large steps

// Applies the settings above with mallopt. Returns true if glibc accepted all three; call once,
// before any large allocation.
bool train_alloc_tune(void);

#endif
