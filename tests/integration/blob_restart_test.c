/* Integration: the coordinator SIGKILLed in the middle of a weight transfer (issue #14,
 * docs/protocol.md §5.7, §5.3). One simulated Xavier NX trains ResNet-18 for real on a tiny
 * generated CIFAR-10 for two minibatches and returns its weights, ~45 MB: some 455 run.weights
 * chunks, which the agent's spool sends at most 8 at a time (the coordinator's credit), so the
 * transfer spans many of the coordinator's commits. The test kills the coordinator once a tenth of
 * the chunks is stored (checked in the store after the kill: some, not all, and no weights yet),
 * restarts it, and checks the run ends done with its weights assembled once and intact (sha256 of
 * the stored bytes equal to their name, one blob, one run_weights row, no chunk left). Round 2
 * starts from those weights: the coordinator is killed while the agent fetches them (blob.get),
 * and the fetch resumes after the restart. Figures are printed as name=value lines. */
#include "jf_blob.h"
#include "jf_units.h"
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"

#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S_WAIT_MS         90000 // bound of each wait (jft_wait_until scales it)
#define S_KILL_CHUNKS     45    // chunks stored when the coordinator is killed (~10 %)
#define S_DATAGEN_MS      30000
#define S_FETCH_LOG       "fetching the initial weights" // the agent starts a fetch (info)
#define S_FETCH_RETRY_LOG "no answer to blob.get"        // the agent asks again (warn)

static const char *const s_types[] = {"xavier-nx"};

static const char s_sweep_fmt[] =
    "name: %s\ntarget:\n  boards: [sim-1]\n"
    "workloads:\n  - model: resnet18\n    dataset: cifar10\n"
    "    epochs: 1\nstorage: [nvme]\nbatch_sizes: [4]\n"
    "power_modes: [MODE_20W_6CORE]\n"
    "fl_round: {round: fl7.%d, minibatches: 2, return_weights: true%s%s"
    "}\n";

typedef struct s_ctx {
    jft_fleet_t *fleet;
    char run[64]; // the run being watched
} s_ctx_t;

static void s_datagen(jft_fleet_t *f)
{
    char bin[PATH_MAX], out[PATH_MAX + 32], log[PATH_MAX + 32];
    jft_bin("jetfleet-datagen", bin);
    (void) snprintf(out, sizeof out, "%s/data/cifar10", f->dir);
    (void) snprintf(log, sizeof log, "%s/datagen-cifar.log", f->dir);
    char *argv[] = {bin,      "--kind", "cifar10", "--scale", "0.001",
                    "--seed", "7",      "--out",   out,       NULL};
    assert_int_equal(jft_run(argv, log, S_DATAGEN_MS, NULL), 0);
}

// Submits round r's one-run sweep (from init, a blob name, or "" for none); its run id into ctx.
static void s_submit(s_ctx_t *ctx, int r, const char *init)
{
    char name[32], yaml[1024], path[PATH_MAX];
    (void) snprintf(name, sizeof name, "restart-%d", r);
    (void) snprintf(yaml, sizeof yaml, s_sweep_fmt, name, r, init[0] ? ", init_weights: " : "",
                    init);
    assert_int_equal(jft_fleet_write(ctx->fleet, "restart.yaml", yaml, path), 0);
    char *out = jft_cli_expect(ctx->fleet, 0, S_WAIT_MS,
                               (const char *const[]){"sweep", "submit", path, NULL});
    free(out);
    char sql[256];
    (void) snprintf(sql, sizeof sql, "SELECT run FROM sweep_runs WHERE sweep = '%s'", name);
    char *run = jft_fleet_sql_text(ctx->fleet, sql);
    assert_non_null(run);
    (void) snprintf(ctx->run, sizeof ctx->run, "%s", run);
    free(run);
}

// Rows of table (weight_chunks, run_weights) for the watched run.
static long long s_rows_of_run(const s_ctx_t *ctx, const char *table)
{
    char sql[256];
    (void) snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE run = '%s'", table, ctx->run);
    return jft_fleet_sql_int(ctx->fleet, sql);
}

static bool s_chunks_stored(void *arg)
{
    return s_rows_of_run(arg, "weight_chunks") >= S_KILL_CHUNKS;
}

static bool s_run_ended(void *arg)
{
    const s_ctx_t *ctx = arg;
    char sql[256];
    (void) snprintf(sql, sizeof sql,
                    "SELECT count(*) FROM runs WHERE id = '%s' AND state IN ('done', 'failed')",
                    ctx->run);
    return jft_fleet_sql_int(ctx->fleet, sql) == 1;
}

static bool s_agent_logs(jft_fleet_t *f, const char *what)
{
    char *log = jft_read_file(f->agents[0].log_path, NULL);
    bool found = log && strstr(log, what);
    free(log);
    return found;
}

static bool s_fetching(void *arg)
{
    return s_agent_logs(((s_ctx_t *) arg)->fleet, S_FETCH_LOG);
}

static void s_restart(jft_fleet_t *f)
{
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
}

// The sha256 of the blob named sha as stored, into ret_hex; its size.
static int64_t s_stored_sha256(jft_fleet_t *f, const char *sha, char *ret_hex)
{
    char path[PATH_MAX + 16];
    (void) snprintf(path, sizeof path, "%s/jetfleet.db", f->data_dir);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT data FROM blobs WHERE sha256 = ?", -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t size = sqlite3_column_bytes(st, 0);
    assert_int_equal(jf_blob_sha256(sqlite3_column_blob(st, 0), (size_t) size, ret_hex, NULL), 0);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE); // one blob of that name
    sqlite3_finalize(st);
    sqlite3_close(db);
    return size;
}

// After the run ended: done, its weights stored once and intact, no chunk left. Returns the
// blob's name (caller frees).
static char *s_check_weights(s_ctx_t *ctx, const char *prefix)
{
    char sql[256];
    (void) snprintf(sql, sizeof sql,
                    "SELECT state || '/' || coalesce(fail_detail, '') FROM runs WHERE id = '%s'",
                    ctx->run);
    char *end = jft_fleet_sql_text(ctx->fleet, sql);
    assert_non_null(end);
    if (strcmp(end, "done/") != 0) {
        fail_msg("run %s ended %s; logs in %s", ctx->run, end, ctx->fleet->dir);
    }
    free(end);
    assert_int_equal(s_rows_of_run(ctx, "run_weights"), 1);
    assert_int_equal(jft_fleet_sql_int(ctx->fleet, "SELECT count(*) FROM weight_chunks"), 0);
    (void) snprintf(sql, sizeof sql, "SELECT blob FROM run_weights WHERE run = '%s'", ctx->run);
    char *sha = jft_fleet_sql_text(ctx->fleet, sql);
    assert_non_null(sha);
    char got[JF_BLOB_SHA256_HEX_LEN + 1] = {0};
    int64_t size = s_stored_sha256(ctx->fleet, sha, got);
    printf("%s_weights_bytes=%lld\n%s_weights_chunks=%lld\n%s_sha256_equal=%d\n", prefix,
           (long long) size, prefix,
           (long long) ((size + JF_BLOB_CHUNK_MAX_BYTES - 1) / JF_BLOB_CHUNK_MAX_BYTES), prefix,
           strcmp(got, sha) == 0);
    assert_string_equal(got, sha);
    return sha;
}

// Round 1: the kill while run.weights chunks stream in.
static char *s_kill_during_return(s_ctx_t *ctx)
{
    jft_fleet_t *f = ctx->fleet;
    s_submit(ctx, 1, "");
    if (!jft_wait_until(s_chunks_stored, ctx, S_WAIT_MS)) {
        fail_msg("no %d chunks of run %s's weights stored; logs in %s", S_KILL_CHUNKS, ctx->run,
                 f->dir);
    }
    assert_int_equal(jft_fleet_kill_coordinator(f), 0);
    // The store as the killed coordinator left it: the transfer was under way.
    long long at_kill = s_rows_of_run(ctx, "weight_chunks");
    long long total = jft_fleet_sql_int(f, "SELECT (max(size_bytes) + 98303) / 98304 FROM "
                                           "weight_chunks");
    long long assembled = s_rows_of_run(ctx, "run_weights");
    printf("return_chunks_at_kill=%lld\nreturn_chunks_total=%lld\n", at_kill, total);
    assert_true(at_kill >= S_KILL_CHUNKS);
    assert_true(at_kill < total);
    assert_int_equal(assembled, 0);
    int64_t t0_us = jf_clock_mono_us();
    s_restart(f);
    assert_true(jft_wait_until(s_run_ended, ctx, S_WAIT_MS));
    printf("return_restart_to_done_s=%.2f\n", (double) (jf_clock_mono_us() - t0_us) / 1e6);
    return s_check_weights(ctx, "return");
}

// Round 2: the kill while the agent fetches round 1's weights as its initial ones.
static void s_kill_during_fetch(s_ctx_t *ctx, const char *init)
{
    jft_fleet_t *f = ctx->fleet;
    s_submit(ctx, 2, init);
    if (!jft_wait_until(s_fetching, ctx, S_WAIT_MS)) {
        fail_msg("the agent did not fetch %s; logs in %s", init, f->dir);
    }
    assert_int_equal(jft_fleet_kill_coordinator(f), 0);
    s_restart(f);
    assert_true(jft_wait_until(s_run_ended, ctx, S_WAIT_MS));
    // The request the killed coordinator never answered is asked again, past offset 0: the
    // fetch resumed where it stood.
    char *log = jft_read_file(f->agents[0].log_path, NULL);
    const char *retry = log ? strstr(log, S_FETCH_RETRY_LOG) : NULL;
    const char *at = retry ? strstr(retry, " at ") : NULL;
    long long resumed_at = at ? strtoll(at + 4, NULL, 10) : -1;
    free(log);
    printf("fetch_resumed_at_bytes=%lld\n", resumed_at);
    assert_true(resumed_at >= 0);
    char *sha = s_check_weights(ctx, "fetch");
    free(sha);
}

static void test_coordinator_killed_mid_transfer(void **state)
{
    jft_fleet_t *f = *state;
    setvbuf(stdout, NULL, _IOLBF, 0); // the figures so far, even if the test is killed
    s_datagen(f);
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    const char *args[] = {"--sim-speed", "20", "--sim-seed", "7", "--log-level", "info", NULL};
    assert_int_equal(jft_fleet_start_sim_agent(f, 0, args), 0);
    assert_true(jft_fleet_wait_online(f, 1, S_WAIT_MS));
    s_ctx_t ctx = {.fleet = f};
    char *sha = s_kill_during_return(&ctx);
    s_kill_during_fetch(&ctx, sha);
    free(sha);
}

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    *state = f;
    return f && jft_fleet_setup_sims(f, 0, s_types, 1) == 0 ? 0 : -1;
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_coordinator_killed_mid_transfer, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
