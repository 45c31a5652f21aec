/* The helper's saved states: one file "state-<N>" per slot (0 for dvfs off, 1..16 for
 * clocks-store) in the root-owned state directory PRIVHELPER_STATE_DIR. A slot is written through
 * a temporary file and link(2), so it is never half written and never replaced. Opening the store
 * takes an exclusive flock on the directory, which serialises helper runs. */
#ifndef PRIVHELPER_STORE_H
#define PRIVHELPER_STORE_H

#include "jf_err.h"
#include "privhelper_root.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct privhelper_store privhelper_store_t;

// Opens and locks the state directory below root. It must exist (it is made at install), be a
// real directory owned by the effective user and not writable by group or others. Caller owns
// the result; release with privhelper_store_destroy. NULL with err (-ENOENT, -EPERM, ...).
privhelper_store_t *privhelper_store_open(const privhelper_root_t *root, jf_err_t *err);

// Unlocks and closes; accepts NULL and *self_p == NULL; sets *self_p to NULL.
void privhelper_store_destroy(privhelper_store_t **self_p);

// True if slot holds a saved state.
bool privhelper_store_has(const privhelper_store_t *self, int slot);

// The lowest empty slot in 1..PRIVHELPER_STATES_MAX into *ret_slot. 0, or -ENOSPC.
int privhelper_store_free_slot(const privhelper_store_t *self, int *ret_slot, jf_err_t *err);

// Reads slot into buf (size bytes, NUL-terminated). 0, -ENOENT, -EPERM (a file the helper did
// not write: wrong owner or mode), -EFBIG, -EIO.
int privhelper_store_read(const privhelper_store_t *self, int slot, char *buf, size_t size,
                          size_t *ret_len, jf_err_t *err);

// Saves text in the empty slot. 0, -EEXIST if it holds a state, or -errno.
int privhelper_store_write(privhelper_store_t *self, int slot, const char *text, size_t len,
                           jf_err_t *err);

// Empties slot. 0 or -errno (-ENOENT if it was empty).
int privhelper_store_remove(privhelper_store_t *self, int slot, jf_err_t *err);

#endif
