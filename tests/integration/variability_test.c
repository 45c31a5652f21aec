/* Integration: four simulated Xavier NX boards run a small sweep (LeNet-5 on MNIST, 2 repeats, 2
 * measured epochs after the warm-up); then the real `jetfleet check` and `jetfleet variability`
 * run on the store. Their CSV is compared with what the test computes itself from the store
 * with sqlite3 (per board means over the valid runs' epochs, then two-pass mean and sd, min,
 * max, spread, and the median of the boards' repeat CVs). Bad requests: an unknown sweep, a
 * sweep with no done runs (agents stopped before it was submitted), bad options. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"
#include "jf_units.h"

#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S_SIMS     4
#define S_REPEATS  2
#define S_RUNS     (S_SIMS * S_REPEATS)
#define S_CLI_MS   60000
#define S_COLS_MAX 32
#define S_LINE_MAX 4096
#define S_REL_TOL  1e-6 // the CSV prints 9 significant digits

static const char *const s_types[S_SIMS] = {"xavier-nx", "xavier-nx", "xavier-nx", "xavier-nx"};

// Speed 20 and telemetry at 1 Hz: the sampler runs at 20 Hz of wall time (at speed 2000 it would
// run at the 50 Hz cap, where a loaded machine makes samples late and check rightly leaves the
// runs out); scale 2 gives each run about 50 samples, so one late sample does not decide.
static const char *const s_agent_args[] = {
    "--sim-speed", "20", "--sim-scale", "2", "--sim-seed", "7", "--log-level", "notice", NULL};

static const char s_sweep[] = "name: var\n"
                              "target:\n  device_types: [xavier-nx]\n"
                              "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 3}\n"
                              "power_modes: [MODE_15W_6CORE]\n"
                              "storage: [nvme]\nworkers: [2]\nbatch_sizes: [64]\n"
                              "repeats: 2\ntelemetry_hz: 1\n";

static const char s_sweep_pending[] = "name: never\n"
                                      "target:\n  device_types: [xavier-nx]\n"
                                      "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 2}\n"
                                      "power_modes: [MODE_15W_6CORE]\n"
                                      "storage: [nvme]\nworkers: [0]\nbatch_sizes: [32]\n";

static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    *state = f;
    return f && jft_fleet_setup_sims(f, 0, s_types, S_SIMS) == 0 ? 0 : -1;
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

// A CSV table as the CLI printed it: the header (the line starting with first_col) and the rows
// starting with row_prefix (other lines, such as the summaries on stderr, are skipped). Cells are
// split at commas; the columns read here never hold one.
typedef struct s_csv {
    char header[S_LINE_MAX];
    const char *names[S_COLS_MAX];
    int ncols;
    char rows[S_RUNS * 2][S_LINE_MAX];
    const char *cells[S_RUNS * 2][S_COLS_MAX];
    int nrows;
} s_csv_t;

static int s_split(char *line, const char **cells)
{
    int n = 0;
    for (char *p = line; n < S_COLS_MAX; p++) {
        cells[n++] = p;
        p = strchr(p, ',');
        if (!p) {
            break;
        }
        *p = '\0';
    }
    return n;
}

static void s_csv_parse(const char *text, const char *first_col, const char *row_prefix, s_csv_t *t)
{
    memset(t, 0, sizeof *t);
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t) (end - line) : strlen(line);
        char buf[S_LINE_MAX];
        assert_true(len < sizeof buf);
        memcpy(buf, line, len);
        buf[len] = '\0';
        if (t->ncols == 0 && strncmp(buf, first_col, strlen(first_col)) == 0) {
            memcpy(t->header, buf, len + 1);
            t->ncols = s_split(t->header, t->names);
        } else if (t->ncols > 0 && strncmp(buf, row_prefix, strlen(row_prefix)) == 0) {
            assert_true(t->nrows < S_RUNS * 2);
            memcpy(t->rows[t->nrows], buf, len + 1);
            s_split(t->rows[t->nrows], t->cells[t->nrows]);
            t->nrows++;
        }
        line = end ? end + 1 : NULL;
    }
    assert_true(t->ncols > 0);
}

static const char *s_cell(const s_csv_t *t, int row, const char *name)
{
    for (int c = 0; c < t->ncols; c++) {
        if (strcmp(t->names[c], name) == 0) {
            return t->cells[row][c];
        }
    }
    fail_msg("no column '%s'", name);
    return NULL;
}

static double s_num(const s_csv_t *t, int row, const char *name)
{
    const char *v = s_cell(t, row, name);
    char *end = NULL;
    double d = strtod(v, &end);
    if (!*v || *end) {
        fail_msg("column '%s': '%s' is not a number", name, v);
    }
    return d;
}

static void s_close(const char *what, double got, double want)
{
    printf("%s=%.9g (expected %.9g)\n", what, got, want);
    if (fabs(got - want) > S_REL_TOL * fmax(1e-9, fabs(want))) {
        fail_msg("%s: got %.9g, want %.9g", what, got, want);
    }
}

// The valid runs of `jetfleet check` as an SQL list ('r1','r2'), their count in *ret_n. Runs
// it marks valid must pass the coverage and mode rules when the test applies them in SQL.
static void s_check(jft_fleet_t *f, char *in_list, size_t size, int *ret_n)
{
    char *out = jft_cli_expect(
        f, 0, S_CLI_MS, (const char *const[]){"check", "--sweep", "var", "--format", "csv", NULL});
    static s_csv_t t;
    s_csv_parse(out, "run,", "r", &t);
    assert_non_null(strstr(out, "8 runs, "));
    free(out);
    assert_int_equal(t.nrows, jft_fleet_sql_int(f, "SELECT count(*) FROM runs WHERE state = "
                                                   "'done' AND id IN (SELECT run FROM sweep_runs "
                                                   "WHERE sweep = 'var')"));
    size_t used = (size_t) snprintf(in_list, size, "(");
    *ret_n = 0;
    for (int r = 0; r < t.nrows; r++) {
        if (strcmp(s_cell(&t, r, "valid"), "yes") != 0) {
            printf("left out: %s\n", t.rows[r]);
            continue;
        }
        used += (size_t) snprintf(in_list + used, size - used, "%s'%s'", *ret_n ? "," : "",
                                  s_cell(&t, r, "run"));
        (*ret_n)++;
        assert_true(used < size);
    }
    (void) snprintf(in_list + used, size - used, ")");
    char sql[8192];
    (void) snprintf(sql, sizeof sql,
                    "SELECT count(*) FROM runs WHERE id IN %s AND ("
                    "json_extract(measure, '$.power_mode.mode_name') IS NOT 'MODE_15W_6CORE' OR "
                    "100 * json_extract(measure, '$.telemetry.missed') > 5 * "
                    "(json_extract(measure, '$.telemetry.samples') + "
                    "json_extract(measure, '$.telemetry.missed')) OR "
                    "100 * json_extract(measure, '$.telemetry.late') > 5 * "
                    "json_extract(measure, '$.telemetry.samples'))",
                    in_list);
    assert_int_equal(jft_fleet_sql_int(f, sql), 0);
    printf("runs_checked=%d\nruns_valid=%d\n", t.nrows, *ret_n);
}

// results and the runs and results exports carry check's verdict for every run (the same code):
// valid yes exactly for the runs in in_list. Every run's measure record has the thermal object,
// its clocks compared with the mode's caps; the figures are printed.
static void s_export_agrees(jft_fleet_t *f, const char *in_list, int n_valid)
{
    static const char *const what[] = {"runs", "results"};
    for (size_t w = 0; w < 2; w++) {
        char *out = jft_cli_expect(f, 0, S_CLI_MS,
                                   (const char *const[]){"export", "--sweep", "var", "--what",
                                                         what[w], "--format", "json", NULL});
        json_error_t jerr;
        json_t *rows = json_loads(out, 0, &jerr);
        if (!json_is_array(rows)) {
            fail_msg("export %s: not a JSON array: %s", what[w], jerr.text);
        }
        free(out);
        int yes = 0;
        size_t i;
        json_t *row;
        json_array_foreach(rows, i, row)
        {
            char quoted[80];
            (void) snprintf(quoted, sizeof quoted, "'%s'",
                            json_string_value(json_object_get(row, "run")));
            bool in = strstr(in_list, quoted) != NULL;
            assert_string_equal(json_string_value(json_object_get(row, "valid")),
                                in ? "yes" : "no");
            assert_true(in == json_is_null(json_object_get(row, "invalid_reasons")));
            yes += in;
        }
        assert_int_equal(yes, n_valid);
        printf("export_%s_rows=%zu\nexport_%s_valid=%d\n", what[w], json_array_size(rows), what[w],
               yes);
        json_decref(rows);
    }
    char *out =
        jft_cli_expect(f, 0, S_CLI_MS, (const char *const[]){"results", "--sweep", "var", NULL});
    assert_non_null(strstr(out, "invalid_reasons"));
    free(out);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM runs WHERE state = 'done' AND "
                                          "(json_extract(measure, '$.thermal.samples') IS NULL "
                                          "OR json_extract(measure, '$.thermal.gpu_samples') "
                                          "IS NULL)"),
                     0);
    printf("thermal_gpu_below_samples=%lld\nthermal_gpu_samples=%lld\nthermal_cpu_below=%lld\n"
           "thermal_max_gpu_mc=%lld\n",
           jft_fleet_sql_int(f, "SELECT sum(json_extract(measure, '$.thermal.gpu_below')) "
                                "FROM runs WHERE state = 'done'"),
           jft_fleet_sql_int(f, "SELECT sum(json_extract(measure, '$.thermal.gpu_samples')) "
                                "FROM runs WHERE state = 'done'"),
           jft_fleet_sql_int(f, "SELECT coalesce(sum(json_extract(measure, "
                                "'$.thermal.cpu_below')), -1) FROM runs WHERE state = 'done'"),
           jft_fleet_sql_int(f, "SELECT max(json_extract(measure, '$.thermal.max_temps_mc.GPU')) "
                                "FROM runs WHERE state = 'done'"));
    // The host's other load beside the sim agents (a sim board measures the real machine).
    printf("other_load_runs=%lld\nother_load_mean_pct_min=%lld\nother_load_mean_pct_max=%lld\n",
           jft_fleet_sql_int(f, "SELECT count(*) FROM runs WHERE state = 'done' AND "
                                "json_extract(measure, '$.other_load.intervals') > 0"),
           jft_fleet_sql_int(f, "SELECT CAST(min(json_extract(measure, '$.other_load.mean_pct')) "
                                "AS INTEGER) FROM runs WHERE state = 'done'"),
           jft_fleet_sql_int(f, "SELECT CAST(max(json_extract(measure, '$.other_load.mean_pct')) "
                                "AS INTEGER) FROM runs WHERE state = 'done'"));
}

// Per-board figures from the store: "board=value;..." of a column averaged per board (repeat
// -1) or per board and repeat, over the valid runs' measured epochs.
typedef struct s_board_ref {
    char name[32];
    double mean;    // pooled over its epochs
    double reps[8]; // per-repeat means
    int n_reps;
} s_board_ref_t;

static int s_board_index(s_board_ref_t *b, int *n, const char *name)
{
    for (int i = 0; i < *n; i++) {
        if (strcmp(b[i].name, name) == 0) {
            return i;
        }
    }
    assert_true(*n < S_SIMS);
    (void) snprintf(b[*n].name, sizeof b[*n].name, "%s", name);
    return (*n)++;
}

static int s_board_refs(jft_fleet_t *f, const char *in_list, const char *col, s_board_ref_t *b)
{
    int n = 0;
    for (int per_repeat = 0; per_repeat < 2; per_repeat++) {
        char sql[8192];
        (void) snprintf(sql, sizeof sql,
                        "SELECT group_concat(v, ';') FROM (SELECT r.board || '=' || %s || '=' || "
                        "printf('%%.17g', avg(e.%s)) AS v FROM runs r JOIN epochs e ON e.run = "
                        "r.id AND e.attempt = r.attempt WHERE e.warmup = 0 AND r.id IN %s "
                        "GROUP BY r.board%s ORDER BY r.board, r.repeat)",
                        per_repeat ? "r.repeat" : "-1", col, in_list,
                        per_repeat ? ", r.repeat" : "");
        char *text = jft_fleet_sql_text(f, sql);
        assert_non_null(text);
        for (char *item = text; item && *item;) {
            char *next = strchr(item, ';');
            if (next) {
                *next++ = '\0';
            }
            char *rep = strchr(item, '=');
            char *val = rep ? strchr(rep + 1, '=') : NULL;
            assert_non_null(val);
            *rep = '\0';
            int i = s_board_index(b, &n, item);
            if (per_repeat) {
                b[i].reps[b[i].n_reps++] = strtod(val + 1, NULL);
            } else {
                b[i].mean = strtod(val + 1, NULL);
            }
            item = next;
        }
        free(text);
    }
    return n;
}

static int s_cmp(const void *a, const void *b)
{
    double x = *(const double *) a;
    double y = *(const double *) b;
    return (x > y) - (x < y);
}

static double s_median(double *x, int n)
{
    if (n < 1) {
        fail_msg("median of no values");
        return 0.0;
    }
    qsort(x, (size_t) n, sizeof *x, s_cmp);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2.0;
}

static void s_mean_sd(const double *x, int n, double *mean, double *sd)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        sum += x[i];
    }
    *mean = sum / n;
    double ss = 0.0;
    for (int i = 0; i < n; i++) {
        ss += (x[i] - *mean) * (x[i] - *mean);
    }
    *sd = sqrt(ss / (n - 1));
}

// The variability row of metric (column col of epochs, shown divided by scale with unit u)
// against the test's own figures from the store.
static void s_compare(jft_fleet_t *f, const s_csv_t *t, const char *metric, const char *in_list,
                      const char *col, double scale, const char *u)
{
    s_board_ref_t b[S_SIMS] = {0};
    int n = s_board_refs(f, in_list, col, b);
    int row = -1;
    for (int r = 0; r < t->nrows; r++) {
        row = strcmp(s_cell(t, r, "metric"), metric) == 0 ? r : row;
    }
    assert_true(row >= 0);
    assert_int_equal((int) s_num(t, row, "boards"), n);
    double means[S_SIMS];
    double cvs[S_SIMS];
    int n_cvs = 0;
    for (int i = 0; i < n; i++) {
        means[i] = b[i].mean / scale;
        if (b[i].n_reps >= 2) {
            double m = 0.0;
            double sd = 0.0;
            s_mean_sd(b[i].reps, b[i].n_reps, &m, &sd);
            cvs[n_cvs++] = 100.0 * sd / m;
        }
    }
    double mean = 0.0;
    double sd = 0.0;
    s_mean_sd(means, n, &mean, &sd);
    double median = s_median(means, n); // sorts means
    char name[64];
    const struct {
        const char *col;
        double want;
    } figs[] = {
        {"mean", mean}, {"sd", sd}, {"min", means[0]}, {"max", means[n - 1]}, {"median", median}};
    for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
        (void) snprintf(name, sizeof name, "%s_%s", figs[i].col, u);
        char what[96];
        (void) snprintf(what, sizeof what, "%s_%s", metric, name);
        s_close(what, s_num(t, row, name), figs[i].want);
    }
    (void) snprintf(name, sizeof name, "%s_cv_pct", metric);
    s_close(name, s_num(t, row, "cv_pct"), 100.0 * sd / mean);
    (void) snprintf(name, sizeof name, "%s_spread_pct", metric);
    s_close(name, s_num(t, row, "spread_pct"), 100.0 * (means[n - 1] / means[0] - 1.0));
    if (n_cvs > 0) {
        (void) snprintf(name, sizeof name, "%s_repeat_cv_pct", metric);
        s_close(name, s_num(t, row, "repeat_cv_pct"), s_median(cvs, n_cvs));
    }
}

static void s_bad_requests(jft_fleet_t *f)
{
    char *out = jft_cli_expect(f, 1, S_CLI_MS,
                               (const char *const[]){"variability", "--sweep", "nope", NULL});
    assert_string_equal(out, "jetfleet: no sweep named 'nope'\n");
    free(out);
    out = jft_cli_expect(f, 1, S_CLI_MS, (const char *const[]){"check", "--sweep", "nope", NULL});
    assert_string_equal(out, "jetfleet: no sweep named 'nope'\n");
    free(out);
    out = jft_cli_expect(
        f, 2, S_CLI_MS,
        (const char *const[]){"variability", "--sweep", "var", "--metric", "power", NULL});
    assert_non_null(strstr(out, "usage: jetfleet variability"));
    free(out);
    out = jft_cli_expect(f, 2, S_CLI_MS, (const char *const[]){"check", NULL});
    assert_non_null(strstr(out, "usage: jetfleet check"));
    free(out);
    // No agent runs any more: the new sweep's runs stay pending.
    for (size_t i = 0; i < S_SIMS; i++) {
        assert_int_equal(jft_proc_stop(&f->agents[i]), 0);
    }
    char path[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "never.yaml", s_sweep_pending, path), 0);
    free(jft_cli_expect(f, 0, S_CLI_MS, (const char *const[]){"sweep", "submit", path, NULL}));
    out = jft_cli_expect(f, 1, S_CLI_MS,
                         (const char *const[]){"variability", "--sweep", "never", NULL});
    assert_string_equal(out, "jetfleet: sweep 'never' has no done runs: nothing measured to "
                             "analyse\n");
    free(out);
    out = jft_cli_expect(f, 1, S_CLI_MS, (const char *const[]){"check", "--sweep", "never", NULL});
    assert_non_null(strstr(out, "has no done runs"));
    free(out);
}

static void test_variability_and_check(void **state)
{
    jft_fleet_t *f = *state;
    int64_t t0 = jf_clock_mono_us();
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    for (size_t i = 0; i < S_SIMS; i++) {
        assert_int_equal(jft_fleet_start_sim_agent(f, i, s_agent_args), 0);
    }
    assert_true(jft_fleet_wait_online(f, S_SIMS, 60000));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "var.yaml", s_sweep, sweep), 0);
    free(jft_cli_expect(f, 0, 120000,
                        (const char *const[]){"sweep", "submit", sweep, "--wait", NULL}));
    static char in_list[4096];
    int n_valid = 0;
    s_check(f, in_list, sizeof in_list, &n_valid);
    s_export_agrees(f, in_list, n_valid);
    if (n_valid < 2 * S_REPEATS) { // at least two boards' runs to compare
        fail_msg("only %d of %d runs valid (reasons above): nothing to compare", n_valid, S_RUNS);
    }
    char *out = jft_cli_expect(
        f, 0, S_CLI_MS,
        (const char *const[]){"variability", "--sweep", "var", "--format", "csv", NULL});
    static s_csv_t t;
    s_csv_parse(out, "metric,", "e", &t); // the e2e and energy rows
    assert_non_null(strstr(out, "valid runs only: 8 runs, "));
    free(out);
    s_compare(f, &t, "e2e", in_list, "e2e_us", 1e6, "s");
    s_compare(f, &t, "energy", in_list, "energy_mj", 1e3, "j");
    out = jft_cli_expect(f, 0, S_CLI_MS,
                         (const char *const[]){"variability", "--sweep", "var", NULL});
    assert_non_null(strstr(out, "mean_s"));
    assert_non_null(strstr(out, "repeat_cv_pct"));
    assert_non_null(strstr(out, "groups of sim boards are simulated"));
    free(out);
    s_bad_requests(f);
    printf("variability_test_s=%.1f\n", (double) (jf_clock_mono_us() - t0) / 1e6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_variability_and_check, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
