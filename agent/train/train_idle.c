/* jetfleet-train --idle-s: an idle baseline (docs/baseline.md). Sleeps on an absolute
 * CLOCK_MONOTONIC deadline and writes the record lines of a one-epoch run without minibatches.
 * Not the simulated trainer's idle epoch (train_sim.c). */
#include "train_idle.h"

#include "jf_units.h"
#include "train_records.h"

#include <errno.h>
#include <time.h>

#define S_NS_PER_US 1000

static int64_t s_mono_us(void)
{
    struct timespec ts = {0};
    (void) clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * JF_US_PER_S + ts.tv_nsec / S_NS_PER_US;
}

static void s_sleep_until(int64_t deadline_us)
{
    struct timespec at = {.tv_sec = (time_t) (deadline_us / JF_US_PER_S),
                          .tv_nsec = (long) (deadline_us % JF_US_PER_S) * S_NS_PER_US};
    // clock_nanosleep returns the error rather than setting errno; only EINTR can occur here.
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR) {
    }
}

int train_idle_exec(const train_run_opts_t *opts, FILE *out, jf_err_t *err)
{
    if (opts->run.idle_s <= 0 || opts->epochs != 1) {
        return jf_err_set(err, -EINVAL, "idle: --idle-s must be > 0 with --epochs 1, got %d and %d",
                          opts->run.idle_s, opts->epochs);
    }
    // Nothing is trained: no device, BLAS or torch, no samples (the start line says "none").
    train_records_params_t p = {.model = opts->run.model,
                                .dataset = opts->run.dataset[0] ? opts->run.dataset : "none",
                                .device = "none",
                                .blas = "none",
                                .torch_version = "none",
                                .workers = opts->workers,
                                .prefetch = opts->prefetch,
                                .batch = opts->batch,
                                .epochs = 1,
                                .seed = opts->seed};
    train_records_t *rec = train_records_new(&p, out, err);
    int rc = rec ? train_records_start(rec, err) : err->code;
    int64_t t0_us = s_mono_us();
    if (rc == 0) {
        train_records_epoch_begin(rec, 0);
        s_sleep_until(t0_us + (int64_t) opts->run.idle_s * JF_US_PER_S);
        rc = train_records_epoch_end(rec, s_mono_us() - t0_us, err);
    }
    rc = rc ? rc : train_records_done(rec, err);
    train_records_destroy(&rec);
    return rc;
}
