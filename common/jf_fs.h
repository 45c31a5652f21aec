/* Small file-system operations both daemons and the tools need: creating a directory with its
 * parents. Not for path validation of network input (names from the network never become paths;
 * see docs/protocol.md §8). */
#ifndef JF_FS_H
#define JF_FS_H

#include "jf_err.h"

#include <sys/types.h>

// Creates dir and any missing parents with the given mode (like `mkdir -p`). An existing
// directory is success; an existing non-directory is -ENOTDIR. 0 or a negative errno with err
// naming the component that failed.
int jf_fs_mkdir_p(const char *dir, mode_t mode, jf_err_t *err);

#endif
