/* Integration: `jetfleet rounds run` (issue #14, docs/rounds.md "Execution", "Stragglers",
 * "Records"). A coordinator on an ipc endpoint in the test's directory and three simulated
 * boards named for this test (an AGX Xavier, a Xavier NX, a Nano). test_rounds_fedavg: 3 rounds
 * of real LeNet-5 training on disjoint shards; every round's stored average must equal, element
 * by element, the sample-weighted mean the test computes itself from the weights each board
 * returned (jf_torch_weights_flatten), and each round must start from the previous average.
 * test_rounds_straggler: the Nano's agent is killed (SIGKILL) while its round-2 run is under way;
 * the round ends at its timeout with the Nano dropped (policy drop), and the restarted agent
 * trains in round 3. Figures are printed as name=value lines (simulated boards). */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"
#include "jf_torch.h"

#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S_BOARDS 3
#define S_CLI_MS 240000

static const char *const s_names[S_BOARDS] = {"rrun-agx", "rrun-nx", "rrun-nano"};
static const char *const s_types[S_BOARDS] = {"agx-xavier", "xavier-nx", "nano"};

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    *state = f;
    if (!f || jft_fleet_setup(f, 0) != 0) {
        return -1;
    }
    // Boards named for this test, behind an ipc endpoint in its directory. The heartbeat
    // timeout is shorter than the straggler test's round timeout, so that the killed board is
    // offline when its run is cancelled.
    static char yaml[4096];
    int n = snprintf(yaml, sizeof yaml,
                     "coordinator:\n  agent_endpoint: ipc://%s/agents.sock\n  data_dir: state\n"
                     "  heartbeat_interval: 500ms\n  heartbeat_timeout: 6s\n  run_timeout: 5m\n"
                     "boards:\n",
                     f->dir);
    for (int i = 0; i < S_BOARDS && n > 0 && (size_t) n < sizeof yaml; i++) {
        n += snprintf(yaml + n, sizeof yaml - (size_t) n,
                      "  - name: %s\n    type: sim\n    simulates: %s\n    storage:\n"
                      "      - medium: nvme\n        mount: /\n        dataset_root: %s/data\n",
                      s_names[i], s_types[i], f->dir);
    }
    char path[PATH_MAX];
    return n > 0 && (size_t) n < sizeof yaml && jft_fleet_write(f, "fleet.yaml", yaml, path) == 0
               ? 0
               : -1;
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

// scale: the agent's --sim-scale, which sizes its modelled shard (docs/workloads.md --shard).
static int s_start_agent(jft_fleet_t *f, size_t i, const char *scale)
{
    char platform[64];
    (void) snprintf(platform, sizeof platform, "sim:%s", s_types[i]);
    const char *args[] = {"--platform",  platform, "--sim-speed", "20",   "--sim-seed", "7",
                          "--sim-scale", scale,    "--log-level", "info", NULL};
    return jft_fleet_start_agent_named(f, i, s_names[i], args);
}

static void s_start(jft_fleet_t *f, const char *const *scales)
{
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    for (size_t i = 0; i < S_BOARDS; i++) {
        assert_int_equal(s_start_agent(f, i, scales[i]), 0);
    }
    assert_true(jft_fleet_wait_online(f, S_BOARDS, 30000 * jft_timeout_scale()));
}

static void s_rounds_file(jft_fleet_t *f, const char *name, const char *extra, char *path)
{
    char text[1024];
    (void) snprintf(text, sizeof text,
                    "name: %s\nboards: [{name: rrun-agx}, {name: rrun-nx}, {name: rrun-nano}]\n"
                    "workload: {model: lenet5, dataset: mnist}\nbatch_size: 16\nrounds: 3\n"
                    "local: {minibatches: 4}\npolicy: maxn\nseed: 5\n%s",
                    name, extra);
    assert_int_equal(jft_fleet_write(f, "rounds.yaml", text, path), 0);
}

// A blob from the store (caller frees).
static void *s_blob(sqlite3 *db, const char *sha, size_t *ret_len)
{
    sqlite3_stmt *st = NULL;
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT data FROM blobs WHERE sha256 = ?", -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    size_t n = (size_t) sqlite3_column_bytes(st, 0);
    void *p = malloc(n);
    assert_non_null(p);
    memcpy(p, sqlite3_column_blob(st, 0), n);
    sqlite3_finalize(st);
    *ret_len = n;
    return p;
}

static double *s_flat(sqlite3 *db, const char *sha, size_t *ret_n)
{
    size_t len = 0;
    void *b = s_blob(db, sha, &len);
    double *v = NULL;
    jf_err_t err = {0};
    if (jf_torch_weights_flatten(b, len, &v, ret_n, &err) != 0) {
        fail_msg("flatten %.16s: %s", sha, err.msg);
    }
    free(b);
    return v;
}

// Checks round r's average against the weighted mean of its boards' weights; the largest
// relative difference found.
static double s_check_round(sqlite3 *db, int r)
{
    sqlite3_stmt *st = NULL;
    char sql[256];
    (void) snprintf(sql, sizeof sql,
                    "SELECT b.blob, b.samples, x.avg_blob FROM fl_round_board b JOIN fl_round x "
                    "ON x.rounds = b.rounds AND x.round = b.round WHERE b.round = %d AND "
                    "b.status = 'in' ORDER BY b.board",
                    r);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    double *sum = NULL, *avg = NULL, wsum = 0.0;
    size_t n = 0, boards = 0;
    bool differ = false;
    double *first = NULL;
    int64_t samples[S_BOARDS] = {0};
    while (sqlite3_step(st) == SQLITE_ROW) {
        size_t m = 0;
        double *v = s_flat(db, (const char *) sqlite3_column_text(st, 0), &m);
        double w = (double) sqlite3_column_int64(st, 1);
        if (boards < S_BOARDS) {
            samples[boards] = sqlite3_column_int64(st, 1);
        }
        if (!sum) {
            n = m;
            sum = calloc(n, sizeof *sum);
            avg = s_flat(db, (const char *) sqlite3_column_text(st, 2), &m);
            assert_int_equal(m, n);
            first = malloc(n * sizeof *first);
            memcpy(first, v, n * sizeof *first);
        }
        assert_int_equal(m, n);
        for (size_t k = 0; k < n; k++) {
            sum[k] += w * v[k];
            differ = differ || v[k] != first[k];
        }
        wsum += w;
        boards++;
        free(v);
    }
    sqlite3_finalize(st);
    assert_int_equal(boards, S_BOARDS);
    assert_true(differ); // the boards trained on their own shards: a mean that means something
    printf("rounds_samples_round%d=%lld,%lld,%lld (boards by name)\n", r, (long long) samples[0],
           (long long) samples[1], (long long) samples[2]);
    // Different sample counts, so that the weighted mean is not the plain mean.
    assert_true(samples[0] != samples[1] || samples[1] != samples[2]);
    double worst = 0.0;
    for (size_t k = 0; k < n; k++) {
        double want = sum[k] / wsum;
        double rel = fabs(avg[k] - want) / fmax(fabs(want), 1e-6);
        worst = fmax(worst, rel);
    }
    free(sum);
    free(avg);
    free(first);
    return worst;
}

// A run whose initial weights the coordinator does not hold is refused by its agent, saying so,
// and nothing is trained.
static void s_unknown_blob(jft_fleet_t *f)
{
    static const char yaml[] =
        "name: rrun-noblob\ntarget: {boards: [rrun-agx]}\n"
        "workloads: [{model: lenet5, dataset: mnist, epochs: 1}]\npower_modes: [MAXN]\n"
        "storage: [nvme]\nfl_round: {round: noblob, minibatches: 2, return_weights: true, "
        "init_weights: \"0000000000000000000000000000000000000000000000000000000000000000\"}\n";
    char file[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "noblob.yaml", yaml, file), 0);
    char *out =
        jft_cli_expect(f, 1, 60000, (const char *[]){"sweep", "submit", file, "--wait", NULL});
    free(out);
    char *why = jft_fleet_sql_text(f, "SELECT r.fail_reason || ': ' || r.fail_detail FROM runs r "
                                      "JOIN sweep_runs s ON s.run = r.id WHERE s.sweep = "
                                      "'rrun-noblob'");
    printf("rounds_unknown_blob='%s'\n", why ? why : "(none)");
    assert_non_null(why);
    assert_non_null(strstr(why, "infeasible: initial weights 0000000000000000... cannot be "
                                "fetched: unknown_blob"));
    free(why);
}

// The Nano's shard holds 40 samples, 3 minibatches of 16, fewer than the 4 asked: rounds show
// says so (asked against trained, a note in the text table, the trained_minibatches column).
static void s_short_shard(jft_fleet_t *f)
{
    char *out = jft_cli_expect(f, 0, 30000, (const char *[]){"rounds", "show", "1", NULL});
    printf("%s\n", out);
    assert_non_null(strstr(out, "note: rounds 1 round 2: board 'rrun-nano' trained 3 of the 4 "
                                "minibatches asked (its shard holds fewer"));
    assert_null(strstr(out, "board 'rrun-agx' trained")); // the others trained what was asked
    free(out);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM fl_round_board WHERE board = "
                                          "'rrun-nano' AND minibatches = 4 AND samples = 40"),
                     3);
    out = jft_cli_expect(
        f, 0, 30000, (const char *[]){"rounds", "show", "1", "--boards", "--format", "json", NULL});
    assert_non_null(strstr(out, "\"trained_minibatches\": 3"));
    assert_non_null(strstr(out, "\"trained_minibatches\": 4"));
    assert_null(strstr(out, "note:")); // JSON on stdout is data only
    free(out);
}

// export --what rounds: the rows and columns of rounds show --boards, in CSV and JSON; its
// usage errors.
static void s_export(jft_fleet_t *f)
{
    const char *formats[2] = {"csv", "json"};
    for (int i = 0; i < 2; i++) {
        char *show = jft_cli_expect(
            f, 0, 30000,
            (const char *[]){"rounds", "show", "1", "--boards", "--format", formats[i], NULL});
        char *exp = jft_cli_expect(f, 0, 30000,
                                   (const char *[]){"export", "--what", "rounds", "--rounds", "1",
                                                    "--format", formats[i], NULL});
        char *all = jft_cli_expect(
            f, 0, 30000,
            (const char *[]){"export", "--what", "rounds", "--format", formats[i], NULL});
        assert_string_equal(exp, show);
        assert_string_equal(all, show); // one rounds run in this store: all of them is the same
        if (i == 0) {
            assert_non_null(strstr(exp, "rounds,round,board,status"));
            assert_non_null(strstr(exp, ",trained_minibatches\n"));
            size_t lines = 0;
            for (const char *p = exp; (p = strchr(p, '\n')); p++) {
                lines++;
            }
            printf("rounds_export_csv_lines=%zu\n", lines);
            assert_int_equal(lines, 1 + 3 * S_BOARDS); // header, 3 rounds of 3 boards
        }
        free(all);
        free(exp);
        free(show);
    }
    char *out = jft_cli_expect(
        f, 2, 30000, (const char *[]){"export", "--what", "rounds", "--sweep", "x", NULL});
    assert_non_null(strstr(out, "usage: jetfleet export"));
    free(out);
    out = jft_cli_expect(f, 2, 30000,
                         (const char *[]){"export", "--what", "rounds", "--rounds", "7", NULL});
    assert_non_null(strstr(out, "no rounds run 7"));
    free(out);
    out = jft_cli_expect(f, 2, 30000,
                         (const char *[]){"export", "--what", "rounds", "--rounds", "x", NULL});
    assert_non_null(strstr(out, "--rounds 'x'"));
    free(out);
}

static void test_rounds_fedavg(void **state)
{
    jft_fleet_t *f = *state;
    // The Nano models MNIST at scale 0.002: its shard of a third is 40 samples, fewer than the
    // 4 x 16 the others train, so the boards' FedAvg weights differ (an unweighted mean fails).
    s_start(f, (const char *const[]){"1", "1", "0.002"});
    char file[PATH_MAX];
    s_rounds_file(f, "rrun", "timeout: 5m\n", file);
    char *out = jft_cli_expect(f, 0, S_CLI_MS, (const char *[]){"rounds", "run", file, NULL});
    printf("%s\n", out);
    assert_non_null(strstr(out, "round=3 boards=3 boards_in=3"));
    free(out);
    char path[PATH_MAX + 16];
    (void) snprintf(path, sizeof path, "%s/jetfleet.db", f->data_dir);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    double worst = 0.0;
    for (int r = 1; r <= 3; r++) {
        worst = fmax(worst, s_check_round(db, r));
    }
    sqlite3_close(db);
    // Round r + 1 started from round r's average, and its runs were told so.
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM fl_round a JOIN fl_round b ON "
                                          "b.round = a.round + 1 WHERE b.init_blob = a.avg_blob"),
                     2);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM runs r JOIN fl_round x ON "
                                          "r.init_weights = x.avg_blob"),
                     2 * S_BOARDS);
    char *l1 = jft_fleet_sql_text(f, "SELECT printf('%.6f', loss) FROM fl_round WHERE round = 1");
    char *l3 = jft_fleet_sql_text(f, "SELECT printf('%.6f', loss) FROM fl_round WHERE round = 3");
    printf("rounds_fedavg_max_rel_err=%.3g rounds_loss_1=%s rounds_loss_3=%s (simulated boards, "
           "real LeNet-5 training)\n",
           worst, l1, l3);
    assert_true(worst < 1e-6);
    assert_true(strtod(l3, NULL) < strtod(l1, NULL));
    free(l1);
    free(l3);
    out = jft_cli_expect(f, 0, 30000, (const char *[]){"rounds", "show", "1", "--boards", NULL});
    assert_non_null(strstr(out, "rrun-nano"));
    free(out);
    out = jft_cli_expect(f, 2, 30000, (const char *[]){"rounds", "show", "7", NULL});
    assert_non_null(strstr(out, "no rounds run 7"));
    free(out);
    s_short_shard(f);
    s_export(f);
    s_unknown_blob(f);
}

static bool s_round2_running(void *arg)
{
    jft_fleet_t *f = arg;
    return jft_fleet_sql_int(f, "SELECT count(*) FROM runs WHERE board = 'rrun-nano' AND "
                                "fl_round = 'fl1.2' AND state = 'running'") == 1;
}

static bool s_round2_recorded(void *arg)
{
    jft_fleet_t *f = arg;
    return jft_fleet_sql_int(f, "SELECT count(*) FROM fl_round WHERE round = 2") == 1;
}

static void test_rounds_straggler(void **state)
{
    jft_fleet_t *f = *state;
    s_start(f, (const char *const[]){"1", "1", "1"});
    char file[PATH_MAX], log[PATH_MAX + 32], bin[PATH_MAX];
    s_rounds_file(f, "rdrop", "timeout: 40s\nstraggler: drop\n", file);
    (void) snprintf(log, sizeof log, "%s/rounds-run.log", f->dir);
    jft_bin("jetfleet", bin);
    char *argv[] = {bin, "--config", f->config, "rounds", "run", file, NULL};
    jft_proc_t cli = {0};
    assert_int_equal(jft_proc_start(&cli, log, argv, NULL), 0);
    int scale = jft_timeout_scale();
    bool seen = jft_wait_until(s_round2_running, f, 120000 * scale);
    if (seen) {
        jft_proc_signal(&f->agents[2], SIGKILL); // the Nano's agent, mid-round
    }
    bool recorded = seen && jft_wait_until(s_round2_recorded, f, 120000 * scale);
    if (recorded) {
        assert_int_equal(s_start_agent(f, 2, "1"), 0); // it comes back for round 3
    }
    int status = -1;
    int rc = jft_proc_wait(&cli, 240000 * scale, &status);
    (void) jft_proc_stop(&cli);
    assert_true(seen);
    assert_true(recorded);
    assert_int_equal(rc, 0);
    char *drop = jft_fleet_sql_text(f, "SELECT status || ' ' || coalesce(detail, '') FROM "
                                       "fl_round_board WHERE round = 2 AND board = 'rrun-nano'");
    char *back = jft_fleet_sql_text(f, "SELECT status FROM fl_round_board WHERE round = 3 AND "
                                       "board = 'rrun-nano'");
    long long in2 = jft_fleet_sql_int(f, "SELECT boards_in FROM fl_round WHERE round = 2");
    long long in3 = jft_fleet_sql_int(f, "SELECT boards_in FROM fl_round WHERE round = 3");
    printf("rounds_straggler_round2='%s' rounds_straggler_round3=%s rounds_boards_in_2=%lld "
           "rounds_boards_in_3=%lld\n",
           drop, back, in2, in3);
    assert_non_null(strstr(drop, "dropped"));
    assert_string_equal(back, "in");
    assert_int_equal(in2, 2);
    assert_int_equal(in3, 3);
    free(drop);
    free(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rounds_fedavg, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_rounds_straggler, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
