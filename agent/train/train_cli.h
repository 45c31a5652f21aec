/* What jetfleet-train and jetfleet-train-sim share around their run: the exit codes, the failure
 * report (a log line and the error record) and the parse-run-report sequence of their mains.
 * Not an option parser (train_options.h) and not a run (train_run.h, train_sim.h). */
#ifndef TRAIN_CLI_H
#define TRAIN_CLI_H

#include "jf_err.h"
#include "train_run.h"

#include <stdio.h>

typedef enum train_cli_exit {
    TRAIN_CLI_EXIT_OK = 0,      // the run completed
    TRAIN_CLI_EXIT_FAILED = 1,  // it failed (crash, I/O)
    TRAIN_CLI_EXIT_INVALID = 2, // invalid input or usage
    TRAIN_CLI_EXIT_OOM = 3,     // out of memory (real, or the simulated board's)
} train_cli_exit_t;

// Runs the parsed options; returns 0 or the failure, reported in err.
typedef int (*train_cli_exec_fn)(const train_run_opts_t *opts, jf_err_t *err);

// Logs err, writes the error record with reason ("oom", "invalid", "crashed") to stdout and
// returns the exit code for it.
train_cli_exit_t train_cli_fail(const jf_err_t *err, const char *reason);

// A main's whole life: opens the log (stderr, as program), parses argv (train_options_parse),
// prints usage with --help, runs exec, reports a failure, closes the log. Returns the exit code.
train_cli_exit_t train_cli_main(const char *program, int argc, char *argv[], train_cli_exec_fn exec,
                                void (*usage)(FILE *out));

// The simulated run opts describes (train_sim_new, train_sim_exec), for exec.
int train_cli_exec_sim(const train_run_opts_t *opts, jf_err_t *err);

#define TRAIN_CLI_TRAINER "jetfleet-train" // the trainer with libtorch, beside jetfleet-train-sim

// jetfleet-train-sim's hand-off of a run that trains for real (--init-weights or --out-weights,
// docs/simulator.md "Local rounds"): when argv (with --simulate) parses and has either option,
// replaces the process (execv, same pid and streams) by TRAIN_CLI_TRAINER from the directory
// of the running executable with the same arguments. Returns 0 without doing anything for any
// other argv (train_cli_main then runs or refuses it); -EIO with err when the exec fails (it
// does not return otherwise).
int train_cli_handoff(int argc, char *argv[], jf_err_t *err);

#endif
