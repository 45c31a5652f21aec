/* The store's identity (docs/store.md, "Identity"): a random store id kept in the store's meta
 * table and, beside it in the data directory, the id and last known counts of the store this
 * coordinator uses. A store that went missing, was emptied or was replaced is refused instead of
 * being started on silently. Not a lock: coordinator.lock keeps a second coordinator out. */
#ifndef COORD_STORE_IDENT_H
#define COORD_STORE_IDENT_H

#include "coord_store.h"
#include "jf_err.h"

#include <stdbool.h>

#define COORD_IDENT_FILE     "store-identity.json" // in the data directory
#define COORD_IDENT_NOTE_LEN 512
#define COORD_IDENT_SAVE_US  (INT64_C(30) * 1000000) // how often the coordinator saves counts

// Opens the coordinator's store at store_path (creating and migrating it like coord_store_open),
// runs PRAGMA quick_check, and compares it with <data_dir>/COORD_IDENT_FILE:
// - no identity file (a new data directory): the store is taken as it is; one without a store id
//   gets a new random one;
// - an identity file: the store must exist, be non-empty and carry the recorded store id, else
//   NULL with -ENOENT (missing), -ENODATA (empty) or -ESTALE (another id, or none), and a message
//   that says what was expected (id, path, last counts) and how to go on;
// - new_store: the identity file is ignored and the store at store_path is taken as it is (an
//   empty one is created if the file is missing or empty; an existing store is never cleared).
// A damaged store is -EBADMSG (the message says corrupt). On success the identity file is
// rewritten, and ret_note (COORD_IDENT_NOTE_LEN bytes) holds what an operator should hear: a new
// identity, or fewer runs than last seen (a restored backup or a salvage); "" if nothing. Caller
// owns the result; release with coord_store_destroy.
coord_store_t *coord_store_open_owned(const char *store_path, const char *data_dir, bool new_store,
                                      char *ret_note, jf_err_t *err);

// Rewrites <data_dir>/COORD_IDENT_FILE (atomically: temporary file, fsync, rename) with the open
// store's id and its current counts of runs, done runs and sweeps. Call it outside a write
// transaction. Returns 0, or -EIO with err naming the file.
int coord_store_ident_save(coord_store_t *self, const char *data_dir, jf_err_t *err);

#endif
