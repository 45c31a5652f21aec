/* CURVE key files shared by the coordinator and the agent: generating a keypair (czmq zcert, the
 * secret part mode 0600) and loading a pinned public key or an own keypair. Not the allow-list:
 * that is coordinator/coord_auth. docs/protocol.md §1.7. */
#ifndef JF_CURVE_H
#define JF_CURVE_H

#include "jf_err.h"

#include <czmq.h>

#define JF_CURVE_KEY_TXT 40 // Z85 text of a 32-byte key, without the NUL

// Creates path's directory (mode 0700) if missing, then writes a new keypair to path (public part, mode 0644 under the caller's umask) and
// path + "_secret" (mode 0600), with the metadata board=NAME when board is not NULL. Refuses to
// overwrite an existing secret (-EEXIST). Returns 0 or a negative errno with err.
int jf_curve_keygen(const char *path, const char *board, jf_err_t *err);

// Loads the keypair written by jf_curve_keygen (path without "_secret"), checking that the secret
// file is not readable by group or others. Caller owns the result; release with zcert_destroy.
// NULL on failure with err.
zcert_t *jf_curve_load_pair(const char *path, jf_err_t *err);

// Loads a public certificate (a pinned key). Caller owns the result; release with zcert_destroy.
// NULL on failure with err.
zcert_t *jf_curve_load_public(const char *path, jf_err_t *err);

#endif
