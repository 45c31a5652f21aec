/* Integration (issue #13, docs/store.md §10): two coordinators share one PostgreSQL store. One
 * real server (jft_pg), two fleets of two simulated Xavier NX boards each, their own data
 * directories and fleet.yaml naming the same postgresql:// store, both started at once on the
 * empty database; each runs a sweep of its own to completion. Then the CLI of one fleet reads both
 * sweeps from the shared store (results, the telemetry export), the counts match what was run, and
 * the telemetry stored can be read back (telemetry_json); each sweep ran on its own fleet's boards,
 * every run in one attempt. A third coordinator naming boards already claimed is refused, `jetfleet
 * store check` names PostgreSQL's tools, `jetfleet model fit` opens the store for writing, and a
 * coordinator pointed at another, empty database is refused by its data directory's identity
 * record. */
#include "coord_db.h"
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"
#include "jft_pg.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define S_FLEETS    2
#define S_SIMS      2
#define S_REPEATS   2
#define S_RUNS      (S_SIMS * S_REPEATS) // per fleet
#define S_EPOCHS    2                    // measured epochs after the warm-up
#define S_CLI_MS    60000
#define S_ONLINE_MS 30000
#define S_REFUSE_MS 20000 // a coordinator that refuses its store exits within a second

static const char *const s_types[S_SIMS] = {"xavier-nx", "xavier-nx"};

// As variability_test: the sampler at 20 Hz of wall time, a few dozen samples per run.
static const char *const s_agent_args[] = {
    "--sim-speed", "20", "--sim-scale", "1", "--sim-seed", "7", "--log-level", "notice", NULL};

// One sweep per fleet, its name filled in (pga, pgb).
static const char s_sweep_fmt[] = "name: %s\n"
                                  "target:\n  device_types: [xavier-nx]\n"
                                  "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 3}\n"
                                  "power_modes: [MODE_15W_6CORE]\n"
                                  "storage: [nvme]\nworkers: [2]\nbatch_sizes: [64]\n"
                                  "repeats: 2\ntelemetry_hz: 1\n";

static const char *const s_sweeps[S_FLEETS] = {"pga", "pgb"};

typedef struct s_ctx {
    jft_pg_t *pg;
    jft_fleet_t fleets[S_FLEETS];
    bool set_up[S_FLEETS];
} s_ctx_t;

static int s_setup(void **state)
{
    s_ctx_t *c = calloc(1, sizeof *c);
    *state = c;
    if (!c) {
        return -1;
    }
    jf_err_t err = {0};
    int rc = jft_pg_start("jft_shared", &c->pg, &err);
    if (rc != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    // TCP endpoints: each fleet's boards get a prefix unique to it, so the two fleets' board
    // names differ, as coordinators sharing a store require.
    char extra[512];
    (void) snprintf(extra, sizeof extra, "  store: \"%s\"\n", jft_pg_uri(c->pg));
    for (size_t i = 0; i < S_FLEETS; i++) {
        jft_fleet_t *f = &c->fleets[i];
        if (jft_fleet_setup_sims(f, 0, s_types, S_SIMS) != 0) {
            return -1;
        }
        c->set_up[i] = true;
        if (jft_fleet_set_coord(f, "tcp://127.0.0.1:*", extra) != 0) {
            return -1;
        }
    }
    return 0;
}

static int s_teardown(void **state)
{
    s_ctx_t *c = *state;
    int rc = 0;
    for (size_t i = 0; c && i < S_FLEETS; i++) {
        if (c->set_up[i] && jft_fleet_teardown(&c->fleets[i]) != 0) {
            rc = -1;
        }
    }
    if (c) {
        jft_pg_destroy(&c->pg);
    }
    free(c);
    return rc;
}

// One integer from the database at uri, on a connection of the test's own, with ?1 and ?2 bound
// to param and param2 when they are not NULL. -1 on any failure.
static long long s_uri_int2(const char *uri, const char *sql, const char *param, const char *param2)
{
    coord_db_t *db = NULL;
    jf_err_t err = {0};
    long long v = -1;
    if (coord_db_open(uri, true, &db, &err) != 0) {
        print_error("open: %s\n", err.msg);
        return -1;
    }
    coord_db_stmt_t *st = coord_db_prepare(db, sql, &err);
    if (st && (!param || coord_db_bind_text(st, 1, param) == 0) &&
        (!param2 || coord_db_bind_text(st, 2, param2) == 0) && coord_db_step(st) == COORD_DB_ROW &&
        !coord_db_col_is_null(st, 0)) {
        v = coord_db_col_int64(st, 0);
    } else {
        print_error("%s: %s\n", sql, st ? coord_db_errmsg(db) : err.msg);
    }
    coord_db_finalize(st);
    coord_db_close(&db);
    return v;
}

static long long s_uri_int(const char *uri, const char *sql, const char *param)
{
    return s_uri_int2(uri, sql, param, NULL);
}

// One integer from the shared store.
static long long s_sql_int(const s_ctx_t *c, const char *sql)
{
    return s_uri_int(jft_pg_uri(c->pg), sql, NULL);
}

// A figure of one sweep (?1 in sql is its name, ?2 param2 if not NULL), printed as
// <sweep>_<name>=<value>.
static long long s_figure(const s_ctx_t *c, const char *sweep, const char *name, const char *sql,
                          const char *param2)
{
    long long v = s_uri_int2(jft_pg_uri(c->pg), sql, sweep, param2);
    printf("%s_%s=%lld\n", sweep, name, v);
    return v;
}

typedef struct s_online {
    const s_ctx_t *c;
    const jft_fleet_t *f;
} s_online_t;

// Both sim boards of fleet f (named with its tag) are online in the shared store.
static bool s_fleet_online(void *arg)
{
    const s_online_t *o = arg;
    char like[64];
    (void) snprintf(like, sizeof like, "%s-%%", o->f->tag);
    return s_uri_int(jft_pg_uri(o->c->pg),
                     "SELECT count(*) FROM boards WHERE online = 1 AND name LIKE ?1",
                     like) == S_SIMS;
}

static void s_start_agents(s_ctx_t *c, size_t i)
{
    jft_fleet_t *f = &c->fleets[i];
    for (size_t k = 0; k < S_SIMS; k++) {
        assert_int_equal(jft_fleet_start_sim_agent(f, k, s_agent_args), 0);
    }
    s_online_t o = {c, f};
    assert_true(jft_wait_until(s_fleet_online, &o, S_ONLINE_MS));
}

// `jetfleet --config <fleet i> sweep submit [--wait]` of the fleet's own sweep; with wait, every
// run must end done.
static void s_submit(s_ctx_t *c, size_t i, bool wait)
{
    jft_fleet_t *f = &c->fleets[i];
    char text[1024], path[PATH_MAX], file[64];
    (void) snprintf(text, sizeof text, s_sweep_fmt, s_sweeps[i]);
    (void) snprintf(file, sizeof file, "%s.yaml", s_sweeps[i]);
    assert_int_equal(jft_fleet_write(f, file, text, path), 0);
    char *out = jft_cli_expect(
        f, 0, S_CLI_MS * 2,
        (const char *const[]){"sweep", "submit", path, wait ? "--wait" : NULL, NULL});
    assert_true(!wait || strstr(out, "4 done, 0 failed"));
    free(out);
}

static size_t s_lines_containing(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; p && *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t) (end - p) : strlen(p);
        const char *hit = strstr(p, what);
        n += hit && hit < p + len;
        p = end ? end + 1 : NULL;
    }
    return n;
}

// Through fleet 0's CLI: sweep i's results, read from the shared store.
static void s_check_results(s_ctx_t *c, size_t i)
{
    const char *sweep = s_sweeps[i];
    char *out = jft_cli_expect(&c->fleets[0], 0, S_CLI_MS,
                               (const char *const[]){"results", "--sweep", sweep, NULL});
    // One row per done run, each naming its board (whose name carries its fleet's tag).
    size_t rows = s_lines_containing(out, c->fleets[i].tag);
    free(out);
    printf("%s_results_rows=%zu\n", sweep, rows);
    assert_int_equal(rows, S_RUNS);
    char like[64];
    (void) snprintf(like, sizeof like, "%s-%%", c->fleets[i].tag);
    assert_int_equal(s_figure(c, sweep, "runs_on_own_boards",
                              "SELECT count(*) FROM runs r JOIN sweep_runs s ON s.run = r.id"
                              " WHERE s.sweep = ?1 AND r.board LIKE ?2",
                              like),
                     S_RUNS);
    assert_int_equal(s_figure(c, sweep, "measured_epochs",
                              "SELECT count(*) FROM epochs e JOIN sweep_runs s ON s.run = e.run"
                              " WHERE s.sweep = ?1 AND e.warmup = 0",
                              NULL),
                     S_RUNS * S_EPOCHS);
}

// Sweep i's telemetry: every run has samples, each readable through telemetry_json (its t_us
// member is its row's time), as many as the agents' measure records say they sent; and the CLI's
// telemetry export (fleet 0's) reads the same view: one row per sample and metric.
static void s_check_telemetry(s_ctx_t *c, size_t i)
{
    const char *sweep = s_sweeps[i];
    long long samples = s_figure(c, sweep, "telemetry_samples",
                                 "SELECT count(*) FROM telemetry t JOIN sweep_runs s ON"
                                 " s.run = t.run WHERE s.sweep = ?1",
                                 NULL);
    assert_true(samples > 0);
    assert_int_equal(s_figure(c, sweep, "telemetry_readable",
                              "SELECT count(*) FROM telemetry_json t JOIN sweep_runs s ON"
                              " s.run = t.run WHERE s.sweep = ?1 AND"
                              " CAST(json_extract(t.sample, '$.t_us') AS INTEGER) = t.t_us",
                              NULL),
                     samples);
    assert_int_equal(s_figure(c, sweep, "runs_with_telemetry",
                              "SELECT count(DISTINCT t.run) FROM telemetry t JOIN sweep_runs s"
                              " ON s.run = t.run WHERE s.sweep = ?1",
                              NULL),
                     S_RUNS);
    assert_int_equal(s_figure(c, sweep, "measure_samples",
                              "SELECT sum(CAST(json_extract(r.measure, '$.telemetry.samples')"
                              " AS INTEGER)) FROM runs r JOIN sweep_runs s ON s.run = r.id"
                              " WHERE s.sweep = ?1",
                              NULL),
                     samples);
    char *out = jft_cli_expect(&c->fleets[0], 0, S_CLI_MS,
                               (const char *const[]){"export", "--sweep", sweep, "--what",
                                                     "telemetry", "--format", "csv", NULL});
    size_t lines = s_lines_containing(out, c->fleets[i].tag);
    free(out);
    printf("%s_telemetry_export_rows=%zu\n", sweep, lines);
    assert_true(lines > (size_t) samples); // several metrics per sample
}

// Runs the coordinator binary with config (in fleet f's directory) in the foreground and expects it
// to refuse to start: exit 1, its output containing what.
static void s_coordinator_refuses(jft_fleet_t *f, const char *config, const char *what)
{
    char bin[PATH_MAX], out_path[PATH_MAX + 16];
    jft_bin("jetfleet-coordinator", bin);
    (void) snprintf(out_path, sizeof out_path, "%s/refused.out", f->dir);
    char *argv[] = {bin, "--config", (char *) config, "--insecure-loopback", NULL};
    int rc = jft_run(argv, out_path, S_REFUSE_MS * jft_timeout_scale(), NULL);
    char *out = jft_read_file(out_path, NULL);
    assert_non_null(out);
    if (rc != 1 || !strstr(out, what)) {
        fail_msg("coordinator with %s: exit %d, expected 1 and '%s'; output:\n%s", config, rc, what,
                 out);
    }
    free(out);
}

// A coordinator whose fleet.yaml names fleet 0's boards, in a data directory of its own, on the
// same store: refused while fleet 0's coordinator holds them.
static void s_third_refused(s_ctx_t *c)
{
    jft_fleet_t *f = &c->fleets[0];
    char *yaml = jft_read_file(f->config, NULL);
    assert_non_null(yaml);
    char *at = strstr(yaml, "data_dir: state");
    assert_non_null(at);
    char dup[16384], path[PATH_MAX];
    (void) snprintf(dup, sizeof dup, "%.*sdata_dir: state-dup%s", (int) (at - yaml), yaml,
                    at + strlen("data_dir: state"));
    free(yaml);
    assert_int_equal(jft_fleet_write(f, "fleet-dup.yaml", dup, path), 0);
    s_coordinator_refuses(f, path, "is claimed by another coordinator");
    printf("third_coordinator_refused=1\n");
}

// Fleet 1's coordinator stopped and pointed at a new, empty database of the same server: its data
// directory's identity record refuses it, before any store table is made there (every
// connection makes the back end's compat functions and its jf_pragma table, coord_db_pg.c).
static void s_empty_database_refused(s_ctx_t *c)
{
    jft_fleet_t *f = &c->fleets[1];
    assert_int_equal(jft_proc_stop(&f->coord), 0);
    const char *uri = jft_pg_uri(c->pg); // "postgresql:///jft_shared?host=..."
    const char *query = strchr(uri, '?');
    assert_non_null(query);
    coord_db_t *db = NULL;
    jf_err_t err = {0};
    assert_int_equal(coord_db_open(uri, false, &db, &err), 0);
    assert_int_equal(coord_db_exec_script(db, "CREATE DATABASE jft_other", &err), 0);
    coord_db_close(&db);
    char other[1024], extra[1200];
    (void) snprintf(other, sizeof other, "postgresql:///jft_other%s", query);
    (void) snprintf(extra, sizeof extra, "  store: \"%s\"\n", other);
    assert_int_equal(jft_fleet_set_coord(f, "tcp://127.0.0.1:*", extra), 0);
    s_coordinator_refuses(f, f->config, "store empty (a database without jetfleet's tables)");
    long long tables = s_uri_int(other,
                                 "SELECT count(*) FROM information_schema.tables WHERE"
                                 " table_schema = current_schema() AND table_name <> 'jf_pragma'",
                                 NULL);
    printf("empty_database_refused=1\nempty_database_tables_after=%lld\n", tables);
    assert_int_equal(tables, 0);
}

// The shared store's totals: every run of both sweeps done, each in one attempt (no run was
// leased twice), both fleets' boards, no sweep with the other's runs.
static void s_check_totals(const s_ctx_t *c)
{
    long long runs = s_sql_int(c, "SELECT count(*) FROM runs WHERE state = 'done'");
    long long boards = s_sql_int(c, "SELECT count(*) FROM boards");
    long long crossed = s_sql_int(c, "SELECT count(*) FROM runs r JOIN sweep_runs s ON"
                                     " s.run = r.id GROUP BY s.sweep ORDER BY 1 DESC LIMIT 1");
    long long attempts = s_sql_int(c, "SELECT max(attempt) FROM runs");
    printf("runs_done=%lld\nboards=%lld\nmax_runs_per_sweep=%lld\nmax_attempt=%lld\n", runs, boards,
           crossed, attempts);
    assert_int_equal(runs, S_FLEETS * S_RUNS);
    assert_int_equal(boards, S_FLEETS * S_SIMS);
    assert_int_equal(crossed, S_RUNS);
    assert_int_equal(attempts, 1);
}

static double s_now_s(void)
{
    struct timespec ts;
    (void) clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void test_two_coordinators_share_a_store(void **state)
{
    s_ctx_t *c = *state;
    double t0 = s_now_s();
    // Both coordinators start at once on the empty database: one creates the store, the other
    // finds it (the migrations' advisory lock, docs/store.md §10).
    for (size_t i = 0; i < S_FLEETS; i++) {
        assert_int_equal(jft_fleet_spawn_coordinator(&c->fleets[i]), 0);
    }
    for (size_t i = 0; i < S_FLEETS; i++) {
        assert_int_equal(jft_fleet_wait_coordinator(&c->fleets[i]), 0);
    }
    for (size_t i = 0; i < S_FLEETS; i++) {
        s_start_agents(c, i);
    }
    // Both fleets run at once: fleet 0's sweep is submitted, fleet 1's runs to its end, then
    // fleet 0's is waited for (submitting it again adds nothing).
    s_submit(c, 0, false);
    s_submit(c, 1, true);
    s_submit(c, 0, true);
    printf("sweeps_wall_s=%.1f\n", s_now_s() - t0);
    s_check_totals(c);
    for (size_t i = 0; i < S_FLEETS; i++) {
        s_check_results(c, i);
        s_check_telemetry(c, i);
    }
    s_third_refused(c);
    char *out =
        jft_cli_expect(&c->fleets[1], 1, S_CLI_MS, (const char *const[]){"store", "check", NULL});
    assert_non_null(strstr(out, "pg_amcheck"));
    free(out);
    // A command that writes to the store (model fit) opens a postgresql:// store as well (it
    // once refused it as a missing file): the sweep has one mode, so the fit stops at its point
    // count, after the store was opened.
    out = jft_cli_expect(&c->fleets[0], 1, S_CLI_MS,
                         (const char *const[]){"model", "fit", "--sweep", s_sweeps[0], "--workload",
                                               "lenet5-mnist", "--type", "xavier-nx", "--target",
                                               "time", NULL});
    printf("model_fit_on_postgres=%s\n", strstr(out, "too few points to fit") ? "opened" : out);
    assert_non_null(strstr(out, "too few points to fit"));
    free(out);
    s_empty_database_refused(c);
    printf("total_wall_s=%.1f\n", s_now_s() - t0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_two_coordinators_share_a_store, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
