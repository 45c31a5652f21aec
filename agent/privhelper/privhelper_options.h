/* jetfleet-privhelper's command line. A production helper takes no options at all (the sudoers
 * rule forbids arguments); --root, --nvpmodel and --allow-uid exist only in test builds
 * (JF_PRIVHELPER_TEST_HOOKS) and never when the kernel marks the process secure (setuid or file
 * capabilities): they would let a caller choose what root writes or runs. */
#ifndef PRIVHELPER_OPTIONS_H
#define PRIVHELPER_OPTIONS_H

#include "jf_err.h"
#include "privhelper_caller.h"

#include <limits.h>
#include <stdbool.h>

typedef struct privhelper_options {
    char root[PATH_MAX];        // --root DIR (test builds): "/" otherwise
    char nvpmodel[PATH_MAX];    // --nvpmodel PATH (test builds): PRIVHELPER_NVPMODEL_BIN
    privhelper_caller_t caller; // --allow-uid UID (test builds): root and jetfleet otherwise
    bool help;                  // --help, as the only argument
    bool version;               // --version, as the only argument
} privhelper_options_t;

// Parses argv. test_hooks says whether the test options are accepted. Returns 0, or -EINVAL
// with err naming the option (a test option in a production build, a relative path, a bad
// uid, an unknown option, any non-option argument: the request comes on stdin). --help and
// --version are accepted only as the one argument (argc == 2); anywhere else they are refused.
int privhelper_options_parse(int argc, char **argv, bool test_hooks, privhelper_options_t *ret_opts,
                             jf_err_t *err);

// The usage text with the request vocabulary. Static string.
const char *privhelper_options_usage(void);

#endif
