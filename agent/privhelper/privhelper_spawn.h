/* Runs a program to completion with an explicit argv and environment through posix_spawn (no
 * shell, no PATH search), feeds it a few bytes on stdin, keeps the start of its stdout and
 * stderr, and kills it at a deadline. The helper runs nvpmodel with it; the agent runs the
 * helper with it. Blocking: call it where waiting up to the timeout is acceptable. */
#ifndef PRIVHELPER_SPAWN_H
#define PRIVHELPER_SPAWN_H

#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PRIVHELPER_SPAWN_INPUT_MAX  4000 // stdin bytes; below PIPE_BUF, so writing never blocks
#define PRIVHELPER_SPAWN_OUTPUT_MAX 1024 // bytes kept of stdout and of stderr each

typedef struct privhelper_spawn_opts {
    const char *const *argv; // argv[0] is the program's absolute path; NULL-terminated; borrowed
    const char *const *envp; // the whole environment; NULL-terminated; borrowed
    const char *input;       // written to stdin, then end of file; NULL: stdin is /dev/null
    size_t input_len;        // at most PRIVHELPER_SPAWN_INPUT_MAX
    bool input_socket;       // stdin is one end of a unix socket pair, so that the child can
                             // check SO_PEERCRED, instead of a pipe
    int64_t timeout_us;      // the child gets SIGKILL after this
} privhelper_spawn_opts_t;

typedef struct privhelper_spawn_result {
    int exit_code;                             // 0..255 after a normal exit; -1 otherwise
    int signal;                                // the signal that ended it, or 0
    bool timed_out;                            // it was killed at the deadline
    char out[PRIVHELPER_SPAWN_OUTPUT_MAX + 1]; // start of stdout, NUL-terminated
    char err[PRIVHELPER_SPAWN_OUTPUT_MAX + 1]; // start of stderr, NUL-terminated
} privhelper_spawn_result_t;

// Runs the program and waits for it. Returns 0 when it ran (whatever its exit status; see
// *ret_result), or -errno with err when it could not be started (pipes, posix_spawn) or the
// options are invalid (-EINVAL: a relative argv[0], input too long).
int privhelper_spawn_run(const privhelper_spawn_opts_t *opts, privhelper_spawn_result_t *ret_result,
                         jf_err_t *err);

#endif
