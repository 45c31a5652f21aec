/* Test support: status timing and sweep tallies. */
#include "jft_sweep.h"

#include "jf_units.h"
#include "jft_fs.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

static long long s_sql(jft_fleet_t *f, const char *sql)
{
    long long v = jft_fleet_sql_int(f, sql);
    if (v < 0) {
        fail_msg("query failed: %s", sql);
    }
    return v;
}

void jft_sweep_tally(jft_fleet_t *f, long long n_expected, jft_sweep_tally_t *t)
{
    t->total = s_sql(f, "SELECT count(*) FROM runs");
    t->done = s_sql(f, "SELECT count(*) FROM runs WHERE state = 'done'");
    t->lost = n_expected - t->total + s_sql(f, "SELECT count(*) FROM runs WHERE state = 'failed'");
    t->stuck = s_sql(f, "SELECT count(*) FROM runs WHERE state IN ('pending', 'assigned', "
                        "'running')");
    t->duplicates = s_sql(f, "SELECT (SELECT count(*) FROM events WHERE kind = 'run.done') - "
                             "(SELECT count(DISTINCT run) FROM events WHERE kind = 'run.done') + "
                             "(SELECT count(*) FROM runs WHERE attempt > 1)");
    t->missing_samples =
        s_sql(f, "SELECT coalesce(sum(r.epochs - (SELECT count(*) FROM epochs e WHERE e.run = "
                 "r.id AND e.attempt = r.attempt)), 0) + (SELECT count(*) FROM runs r2 WHERE "
                 "r2.state = 'done' AND NOT EXISTS (SELECT 1 FROM telemetry m WHERE m.run = "
                 "r2.id AND m.attempt = r2.attempt)) FROM runs r WHERE r.state = 'done'");
}

void jft_sweep_tally_print(const jft_sweep_tally_t *t)
{
    printf("runs=%lld done_runs=%lld\nlost_runs=%lld\nstuck_runs=%lld\nduplicate_results=%lld\n"
           "missing_samples=%lld\n",
           t->total, t->done, t->lost, t->stuck, t->duplicates, t->missing_samples);
    fflush(stdout);
}

bool jft_sweep_finished(jft_fleet_t *f)
{
    long long open = jft_fleet_sql_int(f, "SELECT count(*) FROM runs WHERE state IN ('pending', "
                                          "'assigned', 'running')");
    return open == 0 && jft_fleet_sql_int(f, "SELECT count(*) FROM runs") > 0;
}

int jft_status_ms(jft_fleet_t *f, int timeout_ms)
{
    char bin[PATH_MAX], out[PATH_MAX + 16];
    jft_bin("jetfleet", bin);
    (void)snprintf(out, sizeof out, "%s/status.out", f->dir);
    char *argv[] = {bin, "--config", f->config, "status", NULL};
    int64_t t0 = jf_clock_mono_us();
    int rc = jft_run(argv, out, timeout_ms, NULL);
    int64_t ms = (jf_clock_mono_us() - t0) / JF_US_PER_MS;
    return rc == 0 ? (int)ms : -1;
}
