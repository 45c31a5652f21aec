/* jetfleet-train: argv -> train_run (or train_sim with --simulate) -> exit code. Record lines go
 * to stdout (train_records.h), logs to stderr. Exit codes (train_cli.h): 0 ok, 1 failure, 2
 * invalid input or usage, 3 out of memory. Simulated boards' agents run jetfleet-train-sim, the
 * same simulation without libtorch; --simulate here is the same code, kept for hand use. */
#include "jf_log.h"
#include "jf_run_spec.h"
#include "train_alloc.h"
#include "train_cli.h"
#include "train_idle.h"
#include "train_learn.h"
#include "train_options.h"
#include "train_roofline.h"
#include "train_run.h"

#include <errno.h>

// Runs the training, or its simulation, to the end. Returns 0 or the failure, reported in err.
static int s_execute(const train_run_opts_t *opts, jf_err_t *err)
{
    if (opts->simulate && (opts->init_weights || opts->out_weights)) {
        return train_learn_exec_sim(opts, stdout, err); // the model also trains, for real
    }
    if (opts->simulate) {
        return train_cli_exec_sim(opts, err); // a roofline run too (train_sim.c)
    }
    if (opts->run.roofline) {
        return train_roofline_exec(opts, stdout, err);
    }
    if (opts->run.idle_s > 0) {
        return train_idle_exec(opts, stdout, err); // an idle baseline: no torch, no data
    }
    if (!train_alloc_tune()) {
        jf_log_warn("train: glibc refused the allocator settings; running with its defaults");
    }
    train_run_t *run = train_run_new(opts, stdout, err);
    int rc = run ? train_run_exec(run, err) : err->code;
    train_run_destroy(&run);
    return rc;
}

int main(int argc, char *argv[])
{
    return (int)train_cli_main("jetfleet-train", argc, argv, s_execute, train_options_usage);
}
