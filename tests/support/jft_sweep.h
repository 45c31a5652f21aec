/* Test support for the reliability tests (issue #11): how long `jetfleet status` takes to answer,
 * and a tally of a finished sweep's runs — lost, stuck, stored twice, missing samples — computed
 * from the coordinator's store, never typed in. */
#ifndef JFT_SWEEP_H
#define JFT_SWEEP_H

#include "jft_fleet.h"

#include <stdbool.h>

// What the store holds about the runs of a fleet's sweeps (every run in the store).
typedef struct jft_sweep_tally {
    long long total;           // runs in the store
    long long done;            // runs stored done
    long long lost;            // expected runs missing from the store, plus runs stored failed
    long long stuck;           // runs still pending, assigned or running
    long long duplicates;      // run.done events beyond one per run, plus runs run more than once
    long long missing_samples; // done runs' epochs not stored, plus done runs without telemetry
} jft_sweep_tally_t;

// Fills t from the store of f, for n_expected submitted runs. Fails the test when a query fails.
void jft_sweep_tally(jft_fleet_t *f, long long n_expected, jft_sweep_tally_t *t);

// Prints t as name=value lines (lost_runs=, stuck_runs=, duplicate_results=, missing_samples=).
void jft_sweep_tally_print(const jft_sweep_tally_t *t);

// True once every run in the store is done or failed (and there is at least one).
bool jft_sweep_finished(jft_fleet_t *f);

// Runs `jetfleet status` (output into <f->dir>/status.out) and returns how long it took in ms,
// or -1 when it failed or did not answer within timeout_ms (not scaled here).
int jft_status_ms(jft_fleet_t *f, int timeout_ms);

#endif
