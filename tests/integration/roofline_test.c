/* Integration: the rooflines end to end (docs/roofline.md). A coordinator, a host board that
 * runs the microbenchmarks for real on this CPU through libtorch, and a simulated Xavier NX
 * whose trainer models them; both run a roofline sweep, the sim board also a short LeNet-5
 * training sweep. The store must hold each benchmark epoch with its work and measured energy,
 * and `jetfleet roofline` must print both boards' rooflines (the sim one labelled simulated),
 * every workload on them, and the sim board's measured LeNet-5 against its prediction. The
 * board names are this test's own. Prints host_peak_gflop_s, host_peak_gb_s, sim_peak_gflop_s,
 * sim_peak_gb_s, lenet5_time_err_pct as name=value lines. `jetfleet recommend` without fitted
 * models (none given, or none stored for the workload) must choose from the rooflines and say
 * why, and refuse a budget no setting meets. */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"

#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#define S_HOST "roofline-itest-host"
#define S_SIM  "roofline-itest-sim"
#define S_MODE "MODE_20W_6CORE"

static const char *const s_sim_args[] = {"--platform",  "sim:xavier-nx", "--sim-speed", "50",
                                         "--sim-scale", "0.05",          NULL};

static const char s_sweeps[][400] = {
    "name: roofline-host\ntarget:\n  boards: [" S_HOST "]\n"
    "workloads:\n  - {model: lenet5, dataset: mnist}\nstorage: [local]\nroofline: true\n"
    "telemetry_hz: 10\n",
    "name: roofline-sim\ntarget:\n  boards: [" S_SIM "]\n"
    "workloads:\n  - {model: lenet5, dataset: mnist}\npower_modes: [" S_MODE "]\n"
    "storage: [nvme]\nroofline: true\ntelemetry_hz: 10\n",
    "name: roofline-train\ntarget:\n  boards: [" S_SIM "]\n"
    "workloads:\n  - {model: lenet5, dataset: mnist, epochs: 2}\npower_modes: [" S_MODE "]\n"
    "storage: [nvme]\nbatch_sizes: [64]\ntelemetry_hz: 10\n",
};

// The fleet of this test: its own board names, a host and a sim board on one dataset root.
static int s_setup(void **state)
{
    jft_fleet_t *f = calloc(1, sizeof *f);
    *state = f;
    if (!f || jft_fleet_setup(f, 0) != 0) {
        return -1;
    }
    char yaml[4096], path[PATH_MAX];
    (void) snprintf(yaml, sizeof yaml,
                    "coordinator:\n  agent_endpoint: tcp://127.0.0.1:*\n  data_dir: state\n"
                    "  heartbeat_interval: 500ms\n  heartbeat_timeout: %s\n  run_timeout: 5m\n"
                    "boards:\n"
                    "  - name: " S_HOST "\n    type: host\n    storage:\n"
                    "      - medium: local\n        mount: /\n        dataset_root: %s/data\n"
                    "  - name: " S_SIM "\n    type: sim\n    simulates: xavier-nx\n    storage:\n"
                    "      - medium: nvme\n        mount: /\n        dataset_root: %s/data\n",
                    JFT_FLEET_SIM_HEARTBEAT_TIMEOUT, f->dir, f->dir);
    return jft_fleet_write(f, "fleet.yaml", yaml, path);
}

static int s_teardown(void **state)
{
    int rc = jft_fleet_teardown(*state);
    free(*state);
    return rc;
}

static double s_real(jft_fleet_t *f, const char *sql)
{
    char *text = jft_fleet_sql_text(f, sql); // the query casts its number to text
    if (!text) {
        fail_msg("no value from: %s", sql);
    }
    double v = strtod(text, NULL);
    free(text);
    return v;
}

// The fields of the first line of out that holds every one of words (at most 16 fields).
static int s_row_fields(const char *out, const char *const *words, char fields[16][64])
{
    for (const char *l = out; l && *l;) {
        const char *end = strchr(l, '\n');
        char line[1024];
        (void) snprintf(line, sizeof line, "%.*s", (int) (end ? end - l : (long) strlen(l)), l);
        bool all = true;
        for (size_t i = 0; words[i]; i++) {
            all = all && strstr(line, words[i]) != NULL;
        }
        if (all) {
            int n = 0, used = 0;
            while (n < 16 && sscanf(line + used, "%63s%n", fields[n], &(int){0}) == 1) {
                char *at = strstr(line + used, fields[n]);
                used = (int) (at - line) + (int) strlen(fields[n]);
                n++;
            }
            return n;
        }
        l = end ? end + 1 : NULL;
    }
    fail_msg("no line with all of the words in:\n%s", out);
    return 0;
}

// The peak of bench on board from the store: its work over its time (the CLI's arithmetic).
static double s_peak(jft_fleet_t *f, const char *board, const char *bench, const char *work)
{
    char sql[512];
    (void) snprintf(sql, sizeof sql,
                    "SELECT CAST(sum(e.%s) * 1e6 / sum(e.e2e_us) / 1e9 AS TEXT) FROM epochs e"
                    " JOIN runs r ON r.id = e.run AND r.attempt = e.attempt WHERE r.board = '%s'"
                    " AND e.bench = '%s' AND e.warmup = 0",
                    work, board, bench);
    return s_real(f, sql);
}

static void s_submit(jft_fleet_t *f)
{
    for (size_t i = 0; i < sizeof s_sweeps / sizeof s_sweeps[0]; i++) {
        char name[32], path[PATH_MAX];
        (void) snprintf(name, sizeof name, "sweep-%zu.yaml", i);
        assert_int_equal(jft_fleet_write(f, name, s_sweeps[i], path), 0);
        free(jft_cli_expect(f, 0, 120000,
                            (const char *const[]){"sweep", "submit", path, "--wait", NULL}));
    }
}

static void test_roofline_end_to_end(void **state)
{
    jft_fleet_t *f = *state;
    assert_int_equal(jft_fleet_start_coordinator(f), 0);
    assert_int_equal(jft_fleet_start_agent_named(f, 0, S_HOST, NULL), 0);
    assert_int_equal(jft_fleet_start_agent_named(f, 1, S_SIM, s_sim_args), 0);
    assert_true(jft_fleet_wait_online(f, 2, 30000));
    s_submit(f);
    // Every benchmark epoch is stored with its work; the sim board's with its energy (a host
    // without a readable power monitor has none, and says so by its absence).
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM runs WHERE state <> 'done'"), 0);
    assert_int_equal(jft_fleet_sql_int(f, "SELECT count(*) FROM epochs e JOIN runs r ON"
                                          " r.id = e.run WHERE r.roofline = 1 AND e.warmup = 0"
                                          " AND (e.bench IS NULL OR e.work_flop IS NULL OR"
                                          " (r.board = '" S_SIM "' AND e.energy_mj IS NULL))"),
                     0);
    printf("host_energy_measured=%lld\n",
           jft_fleet_sql_int(f, "SELECT count(e.energy_mj) > 0 FROM epochs e JOIN runs r ON"
                                " r.id = e.run WHERE r.board = '" S_HOST "'"));
    double host_gflop = s_peak(f, S_HOST, "matmul-cpu", "work_flop");
    double host_gb = s_peak(f, S_HOST, "copy-cpu", "work_bytes");
    double sim_gflop = s_peak(f, S_SIM, "matmul-cuda", "work_flop");
    double sim_gb = s_peak(f, S_SIM, "copy-cuda", "work_bytes");
    assert_true(host_gflop > 0 && host_gb > 0 && sim_gflop > 0 && sim_gb > 0);
    printf("host_peak_gflop_s=%.3f\nhost_peak_gb_s=%.3f\nsim_peak_gflop_s=%.3f\n"
           "sim_peak_gb_s=%.3f\n",
           host_gflop, host_gb, sim_gflop, sim_gb);

    char *out =
        jft_cli_expect(f, 0, 60000, (const char *const[]){"roofline", "--board", S_HOST, NULL});
    char fl[16][64];
    // power device source peak_gflop_s peak_gb_s ...: the store's figures, measured.
    assert_true(s_row_fields(out, (const char *const[]){"cpu", "measured", NULL}, fl) >= 5);
    assert_true(strtod(fl[3], NULL) > 0.99 * host_gflop && strtod(fl[3], NULL) < 1.01 * host_gflop);
    assert_true(strtod(fl[4], NULL) > 0.99 * host_gb && strtod(fl[4], NULL) < 1.01 * host_gb);
    for (size_t k = 0; k < 4; k++) {
        const char *models[] = {"lenet5", "resnet18", "vgg11", "mobilenetv3"};
        assert_non_null(strstr(out, models[k]));
    }
    free(out);

    out = jft_cli_expect(
        f, 0, 60000, (const char *const[]){"roofline", "--board", S_SIM, "--mode", S_MODE, NULL});
    assert_non_null(strstr(out, "rows marked simulated"));
    assert_true(s_row_fields(out, (const char *const[]){"cuda", "simulated", NULL}, fl) >= 5);
    assert_true(strtod(fl[3], NULL) > 0.99 * sim_gflop && strtod(fl[3], NULL) < 1.01 * sim_gflop);
    // LeNet-5 at batch 64 was measured: all 14 cells, the time error last but one.
    int n = s_row_fields(out, (const char *const[]){"lenet5", " 64 ", NULL}, fl);
    assert_int_equal(n, 14);
    printf("lenet5_pred_ms=%s\nlenet5_meas_ms=%s\nlenet5_time_err_pct=%s\n"
           "lenet5_energy_err_pct=%s\n",
           fl[8], fl[10], fl[12], fl[13]);
    printf("%s", out);
    free(out);

    // The report of the training sweep has the board's roofline figure, drawn (not no-data).
    char html[PATH_MAX + 32];
    (void) snprintf(html, sizeof html, "%s/report.html", f->dir);
    free(jft_cli_expect(
        f, 0, 60000,
        (const char *const[]){"report", "--sweep", "roofline-train", "-o", html, NULL}));
    char *page = jft_read_file(html, NULL);
    assert_non_null(page);
    const char *open = strstr(page, "id=\"jf-data\">");
    assert_non_null(open);
    open += strlen("id=\"jf-data\">");
    json_error_t jerr;
    json_t *data = json_loadb(open, (size_t) (strstr(open, "</script>") - open), 0, &jerr);
    assert_non_null(data);
    size_t i;
    json_t *fig, *roof = NULL;
    json_array_foreach(json_object_get(data, "figures"), i, fig)
    {
        if (strcmp(json_string_value(json_object_get(fig, "id")), "roofline") == 0) {
            roof = fig;
        }
    }
    assert_non_null(roof);
    assert_null(json_object_get(roof, "no_data"));
    assert_true(json_is_true(json_object_get(roof, "simulated")));
    // The measured LeNet-5 steps and the mode's line of 7 points.
    json_t *ds = json_object_get(roof, "datasets");
    assert_int_equal(json_array_size(ds), 2);
    assert_int_equal(json_array_size(json_object_get(json_array_get(ds, 0), "data")), 1);
    assert_int_equal(json_array_size(json_object_get(json_array_get(ds, 1), "data")), 7);
    json_decref(data);
    free(page);

    // recommend without fitted models: from the rooflines, and it says so.
    out = jft_cli_expect(f, 0, 60000,
                         (const char *const[]){"recommend", "--board", S_SIM, "--model", "resnet18",
                                               "--power-budget", "1000", NULL});
    assert_non_null(strstr(out, "source=roofline (no --workload given to look up fitted models: "));
    assert_non_null(strstr(out, "power=" S_MODE));
    free(out);
    // With a workload and no fitted model of it in the store: the rooflines too, saying why, with
    // the work of the workload's model.
    out = jft_cli_expect(f, 0, 60000,
                         (const char *const[]){"recommend", "--workload", "lenet5-mnist", "--board",
                                               S_SIM, "--power-budget", "1000", NULL});
    assert_non_null(strstr(out, "source=roofline (no fitted time and power models of "
                                "'lenet5-mnist' for board '" S_SIM "' or type 'xavier-nx': "
                                "predictions from the board's rooflines and the work counted "
                                "from lenet5's layers"));
    assert_non_null(strstr(out, "power=" S_MODE));
    free(out);
    out = jft_cli_expect(f, 1, 60000,
                         (const char *const[]){"recommend", "--board", S_SIM, "--model", "resnet18",
                                               "--power-budget", "0.001", NULL});
    assert_non_null(strstr(out, "no setting meets a power budget"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_roofline_end_to_end, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
