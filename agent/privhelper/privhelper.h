/* jetfleet-privhelper's work: one request, checked against what is read below the root (the
 * board's nvpmodel conf, cpufreq and devfreq tables, the SoC's EMC rates, the saved states),
 * planned in full, then executed. A request that fails a check writes nothing. The vocabulary
 * and the rules are in docs/privileges.md; jetson-platforms.md §4-§7 and §9 are the facts. */
#ifndef PRIVHELPER_H
#define PRIVHELPER_H

#include "jf_err.h"
#include "privhelper_plan.h"
#include "privhelper_request.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define PRIVHELPER_NVPMODEL_TIMEOUT_US (INT64_C(30) * 1000000) // nvpmodel -m is killed after 30 s
#define PRIVHELPER_REPLY_MAX           64

typedef struct privhelper privhelper_t;

// Where the helper works (a plain value record; strings are copied by privhelper_new).
typedef struct privhelper_config {
    const char *root;            // "/" on a board; a fixture tree in tests
    const char *nvpmodel;        // absolute path of nvpmodel (PRIVHELPER_NVPMODEL_BIN)
    int64_t nvpmodel_timeout_us; // PRIVHELPER_NVPMODEL_TIMEOUT_US
} privhelper_config_t;

typedef enum privhelper_outcome {
    PRIVHELPER_APPLIED = 0, // every step done
    PRIVHELPER_REJECTED,    // the request or a value failed a check; nothing was written
    PRIVHELPER_FAILED,      // a step failed while applying; the steps before it stay done
} privhelper_outcome_t;

// Opens the root, makes it the working directory (nvpmodel runs there), and learns the SoC, the
// GPU devfreq node and the EMC cap file from it; locks the state directory when there is one.
// Caller owns the result; release with privhelper_destroy. NULL with err.
privhelper_t *privhelper_new(const privhelper_config_t *config, jf_err_t *err);

// Releases everything (and the state directory's lock); accepts NULL and *self_p == NULL.
void privhelper_destroy(privhelper_t **self_p);

// Checks req against the root and fills *ret_plan. Reads only. 0, or -EINVAL (a value not in
// its table, a cpu that does not exist or is not a cluster's first core, a mode not in the conf,
// a state not stored), -ENOENT (a file the request needs is missing), -ELOOP or -EXDEV (a file
// it would write is not reached beneath the root without a symlink), -EIO; err says which.
int privhelper_plan(privhelper_t *self, const privhelper_request_t *req,
                    privhelper_plan_t *ret_plan, jf_err_t *err);

// Executes the steps in order and stops at the first failure. 0, or the step's -errno with err
// naming the step (a refused write, nvpmodel's exit status or timeout, a state file).
int privhelper_execute(privhelper_t *self, const privhelper_plan_t *plan, jf_err_t *err);

// Parses, plans and executes len bytes of request. On PRIVHELPER_APPLIED reply (size bytes)
// gets "ok", plus " state=N" after clocks-store and the plan's note; otherwise err says why.
privhelper_outcome_t privhelper_handle(privhelper_t *self, const char *buf, size_t len, char *reply,
                                       size_t size, jf_err_t *err);

#endif
