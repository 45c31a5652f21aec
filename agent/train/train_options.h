/* jetfleet-train's command line (getopt_long) and its JF_TRAIN_FAULT test hook, into the run
 * options. Kept out of train_main.c so that main stays short and the parser is unit-tested.
 * The run's own options (--model, --workers, --batch, ...) are the run spec's fields with a
 * trainer flag (docs/schema.md), parsed and checked (range, vocabulary) by the schema table;
 * train_run checks device and dataset. */
#ifndef TRAIN_OPTIONS_H
#define TRAIN_OPTIONS_H

#include "jf_err.h"
#include "train_run.h"

#include <stdbool.h>
#include <stdio.h>

#define TRAIN_OPTIONS_MAX_BATCHES_MAX 1000000000 // largest --max-batches

// Parses argv and the JF_TRAIN_FAULT environment variable into *ret_opts (strings borrowed from
// argv; the run's options into ret_opts->run, copied to workers, prefetch, batch, epochs,
// threads and seed). Required: --model, --data, --workers, --batch, --epochs; with --simulate,
// --data is not but --sim-params, --sim-board-type, --sim-board, --sim-seed, --sim-mode and
// --sim-medium are (ret_opts->simulate and ret_opts->sim; --sim-scale and --sim-speed default to
// 1), and --data is required with --init-weights or --out-weights (the model then trains for
// real) and refused without. --minibatches N sets max_batches as --max-batches does (a run spec
// field with that trainer flag, if the schema table has one, takes the option); --shard K/N sets
// ret_opts->shard. Sets *ret_help when --help is given (ret_opts is then not written). Returns 0,
// or -EINVAL with err naming the option (unknown option, missing value, number out of range, a
// model not in the catalogue, stray argument, missing required option, a --sim-* option without
// --simulate, a real run's option with it (--data without a weights option, --device, --threads,
// --drop-last, --loader-only), a weights option with --loader-only, bad --shard, bad hook
// value). Uses getopt's global state: call from one thread.
int train_options_parse(int argc, char *argv[], train_run_opts_t *ret_opts, bool *ret_help,
                        jf_err_t *err);

// Writes the usage text, including the test hook, to out.
void train_options_usage(FILE *out);

// Writes the usage text of a simulated run alone (jetfleet-train-sim).
void train_options_usage_simulate(FILE *out);

#endif
