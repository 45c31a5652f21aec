/* The part of train_run.h that real and simulated runs share (train_run_drive.c): the epoch
 * driver, the JF_TRAIN_FAULT hook and the failure reasons. Kept apart from train_run.c, which
 * needs torch and the loader, so that jetfleet-train-sim links neither. */
#include "train_run.h"

#include "train_records.h"

#include <errno.h>
#include <signal.h>

const char *train_run_failure_reason(int code)
{
    switch (code) {
    case -ENOMEM:
        return "oom";
    case -EINVAL:
    case -EPROTO:
    case -ENOENT:
    case -ENOTSUP:
    case -ENODEV:
        return "invalid";
    default:
        return "crashed";
    }
}

int train_run_fault(train_fault_t fault, FILE *out, jf_err_t *err)
{
    switch (fault) {
    case TRAIN_FAULT_CRASH:
        (void)fflush(out); // the epoch line is already flushed; be sure of it
        // Restore the default action so the process dies by the signal even when a sanitizer
        // runtime has installed its own SIGSEGV handler, as a real crash of this build would.
        (void)signal(SIGSEGV, SIG_DFL);
        (void)raise(SIGSEGV);
        return jf_err_set(err, -EIO, "run: %s=crash: SIGSEGV did not end the process",
                          TRAIN_RUN_FAULT_ENV);
    case TRAIN_FAULT_OOM:
        return jf_err_set(err, -ENOMEM, "out of memory (test hook %s=oom)", TRAIN_RUN_FAULT_ENV);
    case TRAIN_FAULT_NONE:
        break;
    }
    return 0;
}

int train_run_drive(const train_run_driver_t *d, jf_err_t *err)
{
    jf_err_t local = {0};
    err = err ? err : &local;
    int rc = train_records_start(d->records, err);
    for (int epoch = 0; rc == 0 && epoch < d->opts->epochs; epoch++) {
        rc = d->epoch(d->ctx, epoch, err);
        if (rc == 0 && epoch == 0) {
            rc = train_run_fault(d->opts->fault, d->out, err);
        }
    }
    rc = rc < 0 || !d->finish ? rc : d->finish(d->ctx, err);
    rc = rc < 0 ? rc : train_records_done(d->records, err);
    if (d->opts->json_out) {
        rc = train_records_finish_file(d->records, d->opts->json_out, rc,
                                       train_run_failure_reason(rc), err);
    }
    return rc;
}
