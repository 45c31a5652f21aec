/* jetfleet-train: argv -> train_run (or train_sim with --simulate) -> exit code. Record lines go
 * to stdout (train_records.h), logs to stderr. Exit codes: 0 ok, 1 failure, 2 invalid input or
 * usage, 3 out of memory (real, or the simulated board's). */
#include "jf_err.h"
#include "jf_log.h"
#include "train_alloc.h"
#include "train_options.h"
#include "train_records.h"
#include "train_run.h"
#include "train_sim.h"

#include <stdio.h>
#include <string.h>

enum { S_EXIT_OK = 0, S_EXIT_FAILED = 1, S_EXIT_INVALID = 2, S_EXIT_OOM = 3 };

// Reports a failure (log line and error record) and chooses the exit code.
static int s_fail(const jf_err_t *err, const char *reason)
{
    jf_log_error("train: %s", err->msg);
    (void)train_records_emit_error(stdout, reason, err->msg); // stdout gone: nothing to do
    if (strcmp(reason, "oom") == 0) {
        return S_EXIT_OOM;
    }
    return strcmp(reason, "invalid") == 0 ? S_EXIT_INVALID : S_EXIT_FAILED;
}

// Runs the training, or its simulation, to the end. Returns 0 or the failure, reported in err.
static int s_execute(const train_run_opts_t *opts, jf_err_t *err)
{
    if (opts->simulate) {
        train_sim_t *sim = train_sim_new(opts, stdout, err);
        int rc = sim ? train_sim_exec(sim, err) : err->code;
        train_sim_destroy(&sim);
        return rc;
    }
    train_run_t *run = train_run_new(opts, stdout, err);
    int rc = run ? train_run_exec(run, err) : err->code;
    train_run_destroy(&run);
    return rc;
}

int main(int argc, char *argv[])
{
    jf_log_open("jetfleet-train", JF_LOG_SINK_STDERR, JF_LOG_NOTICE);
    if (!train_alloc_tune()) {
        jf_log_warn("train: glibc refused the allocator settings; running with its defaults");
    }
    train_run_opts_t opts = {0};
    bool help = false;
    jf_err_t err = {0};
    if (train_options_parse(argc, argv, &opts, &help, &err) < 0) {
        (void)fprintf(stderr, "jetfleet-train: %s (try --help)\n", err.msg);
        int code = s_fail(&err, "invalid");
        jf_log_close();
        return code;
    }
    if (help) {
        train_options_usage(stdout);
        jf_log_close();
        return S_EXIT_OK;
    }
    int rc = s_execute(&opts, &err);
    int code = rc < 0 ? s_fail(&err, train_run_failure_reason(rc)) : S_EXIT_OK;
    jf_log_close();
    return code;
}
