/* Integration (issue #13): two simulated Xavier NX boards run a small sweep (LeNet-5 on MNIST,
 * one power mode, loader workers 0 and 2); the real `jetfleet report` writes the HTML page; then
 * Debian's chromium opens it headless, offline (file://): every figure section must have
 * rendered (a chart or table with data points, or a "no data: <why>" line), each one with data
 * carry the SIMULATED mark, the page's script must have counted no error and chromium must have
 * logged no console message. A screenshot is saved (copied to $JF_REPORT_SCREENSHOT when set,
 * which is how docs/img/report.png is made). Bad requests exit 1 or 2 with a message. Skipped,
 * saying so, when chromium is not installed (scripts/deps.sh installs it). */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define S_SIMS        2
#define S_CLI_MS      60000
#define S_CHROMIUM_MS 60000
#define S_CHROMIUM    "/usr/bin/chromium"
#define S_FIGS_MAX    32
#define S_WINDOW      "--window-size=1280,3300"

static const char *const s_types[S_SIMS] = {"xavier-nx", "xavier-nx"};

// As integration.variability: speed 20 and telemetry at 1 Hz keep the runs valid on a loaded
// machine (jetfleet check), and each run has tens of telemetry samples to draw.
static const char *const s_agent_args[] = {
    "--sim-speed", "20", "--sim-scale", "2", "--sim-seed", "7", "--log-level", "notice", NULL};

static const char s_sweep[] = "name: rep\n"
                              "target:\n  device_types: [xavier-nx]\n"
                              "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 3}\n"
                              "power_modes: [MODE_15W_6CORE]\n"
                              "storage: [nvme]\nworkers: [0, 2]\nbatch_sizes: [64]\n"
                              "telemetry_hz: 1\n";

// One figure section of the rendered page.
typedef struct s_fig {
    char id[128];
    char state[16];
    long points;
    bool sim_mark;
    bool no_data_text;
} s_fig_t;

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

// The value of attribute name inside the tag starting at tag (up to its '>'), into out.
static bool s_attr(const char *tag, const char *name, char *out, size_t size)
{
    const char *end = strchr(tag, '>');
    char key[64];
    (void) snprintf(key, sizeof key, " %s=\"", name);
    const char *at = strstr(tag, key);
    if (!end || !at || at > end) {
        return false;
    }
    at += strlen(key);
    const char *q = strchr(at, '"');
    size_t n = q ? (size_t) (q - at) : 0;
    if (!q || n >= size) {
        return false;
    }
    memcpy(out, at, n);
    out[n] = '\0';
    return true;
}

// The figure sections of the dumped DOM, in page order.
static size_t s_sections(const char *dom, s_fig_t *figs)
{
    static const char open[] = "<section class=\"jf-fig\"";
    size_t n = 0;
    for (const char *p = strstr(dom, open); p && n < S_FIGS_MAX; n++) {
        const char *next = strstr(p + 1, open);
        const char *close = strstr(p, "</section>");
        s_fig_t *fig = &figs[n];
        char points[32] = "";
        assert_true(s_attr(p, "id", fig->id, sizeof fig->id));
        assert_true(s_attr(p, "data-state", fig->state, sizeof fig->state));
        assert_true(s_attr(p, "data-points", points, sizeof points));
        fig->points = strtol(points, NULL, 10);
        const char *mark = strstr(p, "class=\"jf-sim\"");
        const char *nodata = strstr(p, "no data: ");
        fig->sim_mark = mark && close && mark < close;
        fig->no_data_text = nodata && close && nodata < close;
        p = next;
    }
    return n;
}

static long s_chromium(jft_fleet_t *f, const char *url, const char *extra, const char *out)
{
    char profile[PATH_MAX + 32], home[PATH_MAX + 8];
    (void) snprintf(profile, sizeof profile, "--user-data-dir=%s/chromium-profile", f->dir);
    (void) snprintf(home, sizeof home, "HOME=%s", f->dir);
    char *const argv[] = {S_CHROMIUM,
                          "--headless",
                          "--disable-gpu",
                          "--no-sandbox",
                          "--no-first-run",
                          "--disable-dev-shm-usage",
                          "--enable-logging=stderr",
                          "--v=0",
                          profile,
                          S_WINDOW,
                          "--hide-scrollbars",
                          (char *) extra,
                          (char *) url,
                          NULL};
    char *const env[] = {home, NULL};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = jft_run(argv, out, S_CHROMIUM_MS * jft_timeout_scale(), env);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc != 0) {
        char *text = jft_read_file(out, NULL);
        fprintf(stderr, "chromium %s exited %d:\n%s\n", extra, rc, text ? text : "");
        free(text);
    }
    assert_int_equal(rc, 0);
    return (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
}

// Chromium's console lines ("...:CONSOLE(12)] "message", source: ...") in its output.
static int s_console_lines(const char *text)
{
    int n = 0;
    for (const char *p = strstr(text, ":CONSOLE"); p; p = strstr(p + 1, ":CONSOLE")) {
        const char *eol = strchr(p, '\n');
        fprintf(stderr, "console: %.*s\n", eol ? (int) (eol - p) : 200, p);
        n++;
    }
    return n;
}

static void s_check_figures(const s_fig_t *figs, size_t n, long want_figs)
{
    assert_int_equal((long) n, want_figs);
    const char *const want[] = {"fig-epoch_breakdown", "fig-epoch_series",
                                "fig-pareto_lenet5-mnist_xavier-nx", "fig-variability_xavier-nx",
                                "fig-run_series"};
    size_t charts = 0;
    long points = 0;
    for (size_t i = 0; i < n; i++) {
        const s_fig_t *fig = &figs[i];
        bool drawn = strcmp(fig->state, "chart") == 0 || strcmp(fig->state, "table") == 0;
        printf("figure_%s_state=%s\nfigure_%s_points=%ld\n", fig->id + 4, fig->state, fig->id + 4,
               fig->points);
        assert_true(drawn || strcmp(fig->state, "no-data") == 0);
        assert_true(drawn ? fig->points > 0 && fig->sim_mark : fig->no_data_text);
        charts += drawn;
        points += drawn ? fig->points : 0;
    }
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        bool found = false;
        for (size_t i = 0; i < n; i++) {
            found =
                found || (strcmp(figs[i].id, want[w]) == 0 && strcmp(figs[i].state, "chart") == 0);
        }
        if (!found) {
            fprintf(stderr, "figure %s was not drawn as a chart\n", want[w]);
        }
        assert_true(found);
    }
    // No model was fitted on this sweep: the table must say so rather than be absent.
    bool models = false;
    for (size_t i = 0; i < n; i++) {
        models = models || (strcmp(figs[i].id, "fig-models") == 0 && figs[i].no_data_text);
    }
    assert_true(models);
    printf("figures=%zu\ncharts=%zu\npoints_drawn=%ld\n", n, charts, points);
}

static void s_bad_requests(jft_fleet_t *f, const char *html)
{
    char *out = jft_cli_expect(
        f, 1, S_CLI_MS, (const char *const[]){"report", "--sweep", "nope", "-o", html, NULL});
    assert_non_null(strstr(out, "no sweep named 'nope'"));
    free(out);
    out = jft_cli_expect(
        f, 1, S_CLI_MS,
        (const char *const[]){"report", "--sweep", "rep", "--run", "r0", "-o", html, NULL});
    assert_non_null(strstr(out, "run 'r0' is not a done run of sweep 'rep'"));
    free(out);
    out = jft_cli_expect(f, 2, S_CLI_MS, (const char *const[]){"report", "--sweep", "rep", NULL});
    assert_non_null(strstr(out, "usage: jetfleet report"));
    free(out);
}

// The drawn point counts of the epoch series and of the run figure against the store, counted
// here with SQL: E2E of every epoch plus every measured residency, and the power and load
// samples of the run the figure names in its note.
// The valid runs as `jetfleet check` lists them, as an SQL list: ('r1','r2').
static void s_valid_list(jft_fleet_t *f, char *out, size_t size)
{
    char *csv = jft_cli_expect(
        f, 0, S_CLI_MS, (const char *const[]){"check", "--sweep", "rep", "--format", "csv", NULL});
    size_t at = (size_t) snprintf(out, size, "('");
    int n = 0;
    for (const char *p = csv; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        char run[32] = "", valid[8] = "";
        if (sscanf(p, "%31[a-z0-9],%*[^,],%*[^,],%*[^,],%7[a-z]", run, valid) == 2 &&
            strcmp(valid, "yes") == 0 && at + 40 < size) {
            at += (size_t) snprintf(out + at, size - at, "%s%s", n++ ? "','" : "", run);
        }
    }
    (void) snprintf(out + at, size - at, "')");
    free(csv);
    printf("valid_runs=%d\n", n);
    assert_true(n > 0);
}

static void s_check_against_store(jft_fleet_t *f, const char *dom, const s_fig_t *figs, size_t n)
{
    long series = -1, run_pts = -1;
    for (size_t i = 0; i < n; i++) {
        series = strcmp(figs[i].id, "fig-epoch_series") == 0 ? figs[i].points : series;
        run_pts = strcmp(figs[i].id, "fig-run_series") == 0 ? figs[i].points : run_pts;
    }
    char valid[2048], sql[4096];
    s_valid_list(f, valid, sizeof valid);
    (void) snprintf(sql, sizeof sql,
                    "SELECT count(*) + count(e.cache_resident_after) FROM epochs e JOIN runs r ON "
                    "r.id = e.run AND r.attempt = e.attempt WHERE r.id IN %s",
                    valid);
    long long want_series = jft_fleet_sql_int(f, sql);
    printf("epoch_series_points=%ld\nepoch_series_points_store=%lld\n", series, want_series);
    assert_int_equal(series, want_series);
    const char *note = strstr(dom, "<p class=\"jf-note\">run ");
    assert_non_null(note);
    char run[32] = "";
    assert_int_equal(sscanf(note + strlen("<p class=\"jf-note\">run "), "%31[a-z0-9]", run), 1);
    (void) snprintf(sql, sizeof sql,
                    "SELECT count(json_extract(t.sample, '$.input_power_mw')) + "
                    "count(json_extract(t.sample, '$.cpu_load_pct')) + "
                    "count(json_extract(t.sample, '$.gpu_load_pct')) FROM telemetry_json t JOIN "
                    "runs r ON r.id = t.run AND r.attempt = t.attempt WHERE t.run = '%s'",
                    run);
    long long want_run = jft_fleet_sql_int(f, sql);
    printf("run_series_points=%ld\nrun_series_points_store=%lld\n", run_pts, want_run);
    assert_int_equal(run_pts, want_run);
}

// --run draws the run asked for: the last done run, not the first one drawn by default.
static void s_chosen_run(jft_fleet_t *f)
{
    char *run = jft_fleet_sql_text(f, "SELECT id FROM runs WHERE state = 'done' ORDER BY ord DESC "
                                      "LIMIT 1");
    assert_non_null(run);
    char html[PATH_MAX + 16], want[128];
    (void) snprintf(html, sizeof html, "%s/run.html", f->dir);
    free(jft_cli_expect(
        f, 0, S_CLI_MS,
        (const char *const[]){"report", "--sweep", "rep", "--run", run, "-o", html, NULL}));
    char *page = jft_read_file(html, NULL);
    assert_non_null(page);
    (void) snprintf(want, sizeof want, "\"note\":\"run %s on board ", run);
    assert_non_null(strstr(page, want));
    printf("chosen_run=%s\n", run);
    free(page);
    free(run);
}

static void test_report_renders(void **state)
{
    jft_fleet_t *f = *state;
    int scale = jft_timeout_scale();
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    for (size_t i = 0; i < S_SIMS; i++) {
        assert_int_equal(jft_fleet_start_sim_agent(f, i, s_agent_args), 0);
    }
    assert_true(jft_fleet_wait_online(f, S_SIMS, 60000 * scale));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, "rep.yaml", s_sweep, sweep), 0);
    free(jft_cli_expect(f, 0, 90000 * scale,
                        (const char *const[]){"sweep", "submit", sweep, "--wait", NULL}));
    char html[PATH_MAX + 16];
    (void) snprintf(html, sizeof html, "%s/report.html", f->dir);
    char *out = jft_cli_expect(f, 0, S_CLI_MS,
                               (const char *const[]){"report", "--sweep", "rep", "-o", html, NULL});
    const char *line = strstr(out, "figures=");
    long want_figs = line ? strtol(line + strlen("figures="), NULL, 10) : -1;
    printf("%s", out);
    free(out);
    struct stat st;
    assert_int_equal(stat(html, &st), 0);
    printf("report_bytes=%lld\n", (long long) st.st_size);
    s_bad_requests(f, html);
    s_chosen_run(f);

    if (access(S_CHROMIUM, X_OK) != 0) {
        printf("SKIP: %s not installed (scripts/deps.sh installs chromium): page not rendered\n",
               S_CHROMIUM);
        skip();
    }
    char url[PATH_MAX + 32], dom[PATH_MAX + 16], png[PATH_MAX + 16], shot[PATH_MAX + 32],
        log[PATH_MAX + 16];
    (void) snprintf(url, sizeof url, "file://%s", html);
    (void) snprintf(dom, sizeof dom, "%s/dom.html", f->dir);
    (void) snprintf(png, sizeof png, "%s/report.png", f->dir);
    (void) snprintf(shot, sizeof shot, "--screenshot=%s", png);
    (void) snprintf(log, sizeof log, "%s/chromium.log", f->dir);
    long dom_ms = s_chromium(f, url, "--dump-dom", dom);
    long shot_ms = s_chromium(f, url, shot, log);
    char *text = jft_read_file(dom, NULL);
    char *shot_log = jft_read_file(log, NULL);
    assert_non_null(text);
    assert_non_null(shot_log);
    int console = s_console_lines(text) + s_console_lines(shot_log);
    printf("chromium_dump_ms=%ld\nchromium_screenshot_ms=%ld\nconsole_messages=%d\n", dom_ms,
           shot_ms, console);
    assert_int_equal(console, 0);
    assert_non_null(strstr(text, "data-errors=\"0\""));
    static s_fig_t figs[S_FIGS_MAX];
    size_t nfigs = s_sections(text, figs);
    s_check_figures(figs, nfigs, want_figs);
    s_check_against_store(f, text, figs, nfigs);
    free(text);
    free(shot_log);
    assert_int_equal(stat(png, &st), 0);
    printf("screenshot_bytes=%lld\n", (long long) st.st_size);
    assert_true(st.st_size > 10000);
    const char *keep = getenv("JF_REPORT_SCREENSHOT");
    if (keep && *keep) {
        char *bytes = jft_read_file(png, NULL);
        FILE *o = fopen(keep, "wb");
        assert_non_null(o);
        assert_int_equal(fwrite(bytes, 1, (size_t) st.st_size, o), (size_t) st.st_size);
        assert_int_equal(fclose(o), 0);
        free(bytes);
        printf("screenshot_copied_to=%s\n", keep);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_report_renders, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
