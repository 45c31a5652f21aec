/* Test support: start our binaries as real processes in their own process group (output to a
 * log file), stop them with SIGTERM then SIGKILL after 5 s, and run short commands to the end.
 * Children die with the test process (PR_SET_PDEATHSIG), so a crashed test leaves nothing. */
#ifndef JFT_PROC_H
#define JFT_PROC_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#define JFT_STOP_GRACE_MS 5000

typedef struct jft_proc {
    pid_t pid;               // 0 when not started or reaped
    int status;              // waitpid status once reaped
    char log_path[PATH_MAX]; // stdout and stderr of the process
} jft_proc_t;

// Starts argv[0] (a path) with the current environment plus env_extra ("K=V", NULL-terminated,
// may be NULL). Returns 0 or -errno.
int jft_proc_start(jft_proc_t *p, const char *log_path, char *const argv[],
                   char *const env_extra[]);

// True while the process has not exited.
bool jft_proc_alive(jft_proc_t *p);

// Waits up to timeout_ms for the process to exit; 0 and *ret_status, or -ETIMEDOUT.
int jft_proc_wait(jft_proc_t *p, int timeout_ms, int *ret_status);

// SIGTERM to the process group, SIGKILL after JFT_STOP_GRACE_MS; returns the waitpid status
// (or -1 if it was not running). Safe on a stopped or never-started process.
int jft_proc_stop(jft_proc_t *p);

// Sends sig to the process group.
void jft_proc_signal(jft_proc_t *p, int sig);

// Runs argv to completion with stdout+stderr into out_path; returns its exit code, 128 + signal,
// or -ETIMEDOUT (the process is killed) after timeout_ms.
int jft_run(char *const argv[], const char *out_path, int timeout_ms, char *const env_extra[]);

#endif
