/* Integration: the coordinator's InfluxDB exporter against a real influxd (Debian's influxdb
 * 1.x) that the test starts on 127.0.0.1 with ephemeral ports and its own directories. Three
 * simulated boards run a sweep; mid-stream influxd is stopped, the sweep goes on, the coordinator
 * is killed (SIGKILL) and started again, influxd is started again on the same data, and once the
 * sweep is done every minibatch, epoch, telemetry sample and run result of the store is in
 * InfluxDB with the same sums (docs/metrics.md). Then the dashboards/ JSON is checked and every
 * query in it run against that data.
 * Skipped, saying so, only when influxd is not installed (scripts/deps.sh installs it). */
#include "jft_check.h"
#include "jft_fleet.h"
#include "jft_fs.h"
#include "jft_proc.h"
#include "jft_sweep.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define S_INFLUXD        "/usr/bin/influxd"
#define S_SIMS           3
#define S_DB             "jf"
#define S_GRAFANA_SCHEMA 39  // dashboards/*.json: Grafana's dashboard schema version (Grafana 10.4)
#define S_OUTAGE_MB      100 // minibatches the boards store while influxd is down, at least
#define S_OUTAGE_MS      3000 // and how long it is down, at least (many exporter ticks)

static const char *const s_types[] = {"xavier-nx", "agx-xavier", "nano"};
static const char *const s_agent_args[] = {
    "--sim-speed", "25", "--sim-scale", "0.05", "--sim-seed", "7", "--log-level", "notice", NULL};
static const char s_sweep[] = "name: influx\n"
                              "target:\n  device_types: [xavier-nx, agx-xavier, nano]\n"
                              "workloads:\n  - {model: resnet18, dataset: cifar10, epochs: 2}\n"
                              "power_modes: [MODE_15W_6CORE, MAXN]\n"
                              "storage: [nvme]\nworkers: [1]\nbatch_sizes: [8, 16]\n"
                              "telemetry_hz: 10\n";

typedef struct s_ctx {
    jft_fleet_t fleet;
    jft_proc_t influxd;
    char influx_conf[PATH_MAX];
    char influx_url[64];
    int starts; // influxd starts, for its log names
} s_ctx_t;

typedef struct s_buf {
    char data[1 << 23]; // a raw query of every minibatch of the sweep fits
    size_t len;
} s_buf_t;

static size_t s_on_body(char *p, size_t size, size_t n, void *arg)
{
    s_buf_t *b = arg;
    size_t take = size * n < sizeof b->data - 1 - b->len ? size * n : sizeof b->data - 1 - b->len;
    memcpy(b->data + b->len, p, take);
    b->len += take;
    b->data[b->len] = '\0';
    return size * n;
}

// GET (post NULL) or POST form to url; returns the HTTP status, 0 without an answer.
static long s_http(const char *url, const char *post, s_buf_t *body)
{
    CURL *c = curl_easy_init();
    body->len = 0;
    body->data[0] = '\0';
    (void) curl_easy_setopt(c, CURLOPT_URL, url);
    (void) curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
    (void) curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    (void) curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, s_on_body);
    (void) curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
    if (post) {
        (void) curl_easy_setopt(c, CURLOPT_POSTFIELDS, post);
    }
    long status = 0;
    if (curl_easy_perform(c) == CURLE_OK) {
        (void) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    }
    curl_easy_cleanup(c);
    return status;
}

// The first value of the first series of an InfluxQL query (0 when there is no series).
static double s_query(s_ctx_t *x, const char *q)
{
    CURL *c = curl_easy_init();
    char *esc = curl_easy_escape(c, q, 0);
    char url[1024];
    (void) snprintf(url, sizeof url, "%s/query?db=%s&q=%s", x->influx_url, S_DB, esc);
    curl_free(esc);
    curl_easy_cleanup(c);
    s_buf_t *body = calloc(1, sizeof *body);
    long status = s_http(url, NULL, body);
    json_t *j = status == 200 ? json_loads(body->data, 0, NULL) : NULL;
    json_t *series = json_object_get(json_array_get(json_object_get(j, "results"), 0), "series");
    json_t *v =
        json_array_get(json_array_get(json_object_get(json_array_get(series, 0), "values"), 0), 1);
    double d = json_is_number(v) ? json_number_value(v) : status == 200 ? 0 : -1;
    json_decref(j);
    free(body);
    return d;
}

// How many series an InfluxQL query returns: -1 when it fails (HTTP or an "error" member).
static int s_query_series(s_ctx_t *x, const char *q)
{
    CURL *c = curl_easy_init();
    char *esc = curl_easy_escape(c, q, 0);
    char url[4096];
    (void) snprintf(url, sizeof url, "%s/query?db=%s&q=%s", x->influx_url, S_DB, esc);
    curl_free(esc);
    curl_easy_cleanup(c);
    s_buf_t *body = calloc(1, sizeof *body);
    long status = s_http(url, NULL, body);
    json_t *j = status == 200 ? json_loads(body->data, 0, NULL) : NULL;
    json_t *r0 = json_array_get(json_object_get(j, "results"), 0);
    int n = !r0 || json_object_get(r0, "error")
                ? -1
                : (int) json_array_size(json_object_get(r0, "series"));
    if (n <= 0) {
        printf("dashboard query '%s': HTTP %ld %.300s\n", q, status, body->data);
    }
    json_decref(j);
    free(body);
    return n;
}

static int s_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *) &a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *) &a, &len) == 0) {
        port = ntohs(a.sin_port);
    }
    if (fd >= 0) {
        (void) close(fd);
    }
    return port;
}

static bool s_influx_up(void *arg)
{
    s_ctx_t *x = arg;
    char url[128];
    (void) snprintf(url, sizeof url, "%s/ping", x->influx_url);
    s_buf_t *body = calloc(1, sizeof *body);
    bool up = s_http(url, NULL, body) == 204;
    free(body);
    return up;
}

// Writes influxd's configuration: every directory under the test's, loopback ports only.
static int s_influx_config(s_ctx_t *x)
{
    const char *dir = x->fleet.dir;
    int http_port = s_free_port(), rpc_port = s_free_port();
    if (http_port < 0 || rpc_port < 0) {
        return -1;
    }
    (void) snprintf(x->influx_url, sizeof x->influx_url, "http://127.0.0.1:%d", http_port);
    char text[4096];
    (void) snprintf(text, sizeof text,
                    "reporting-disabled = true\nbind-address = \"127.0.0.1:%d\"\n"
                    "[meta]\n  dir = \"%s/influx/meta\"\n"
                    "[data]\n  dir = \"%s/influx/data\"\n  wal-dir = \"%s/influx/wal\"\n"
                    "  query-log-enabled = false\n"
                    "[http]\n  bind-address = \"127.0.0.1:%d\"\n  log-enabled = false\n"
                    "[monitor]\n  store-enabled = false\n"
                    "[continuous_queries]\n  enabled = false\n",
                    rpc_port, dir, dir, dir, http_port);
    (void) snprintf(x->influx_conf, sizeof x->influx_conf, "%s/influxd.conf", dir);
    return jft_write_file(x->influx_conf, text);
}

static int s_influx_start(s_ctx_t *x)
{
    char log[PATH_MAX];
    (void) snprintf(log, sizeof log, "%s/influxd-%d.log", x->fleet.dir, ++x->starts);
    char *argv[] = {S_INFLUXD, "-config", x->influx_conf, NULL};
    if (jft_proc_start(&x->influxd, log, argv, NULL) != 0) {
        return -1;
    }
    return jft_wait_until(s_influx_up, x, 30000 * jft_timeout_scale()) ? 0 : -1;
}

static int s_setup(void **state)
{
    *state = NULL;
    if (access(S_INFLUXD, X_OK) != 0) {
        return 0; // the test says it is skipped
    }
    s_ctx_t *x = calloc(1, sizeof *x);
    *state = x;
    const char *types[S_SIMS];
    for (size_t i = 0; i < S_SIMS; i++) {
        types[i] = s_types[i % 3];
    }
    return x && jft_fleet_setup_sims(&x->fleet, 0, types, S_SIMS) == 0 && s_influx_config(x) == 0
               ? 0
               : -1;
}

static int s_teardown(void **state)
{
    s_ctx_t *x = *state;
    if (!x) {
        return 0;
    }
    (void) jft_proc_stop(&x->influxd);
    int rc = jft_fleet_teardown(&x->fleet);
    free(x);
    return rc;
}

static long long s_sql(s_ctx_t *x, const char *sql)
{
    return jft_fleet_sql_int(&x->fleet, sql);
}

typedef struct s_pair {
    const char *what;
    const char *store_sql; // integer
    const char *influx_q;  // number
} s_pair_t;

// What the store holds and InfluxDB must hold too (docs/metrics.md).
static const s_pair_t s_pairs[] = {
    {"minibatches", "SELECT count(*) FROM minibatches",
     "SELECT count(compute_us) FROM jetfleet_minibatch"},
    {"minibatch_compute_us", "SELECT sum(compute_us) FROM minibatches",
     "SELECT sum(compute_us) FROM jetfleet_minibatch"},
    {"minibatch_fetch_stall_us", "SELECT sum(fetch_stall_us) FROM minibatches",
     "SELECT sum(fetch_stall_us) FROM jetfleet_minibatch"},
    {"epochs", "SELECT count(*) FROM epochs", "SELECT count(e2e_us) FROM jetfleet_epoch"},
    {"epoch_e2e_us", "SELECT sum(e2e_us) FROM epochs", "SELECT sum(e2e_us) FROM jetfleet_epoch"},
    {"telemetry_samples", "SELECT count(*) FROM telemetry",
     "SELECT count(ram_used_bytes) FROM jetfleet_telemetry"},
    {"telemetry_ram_used_bytes",
     "SELECT sum(json_extract(sample, '$.ram_used_bytes')) FROM telemetry_json",
     "SELECT sum(ram_used_bytes) FROM jetfleet_telemetry"},
    {"telemetry_rail_points",
     "SELECT sum(json_array_length(sample, '$.rails')) FROM telemetry_json",
     "SELECT count(power_mw) FROM jetfleet_rail"},
    {"runs_finished", "SELECT count(*) FROM runs WHERE state IN ('done', 'failed')",
     "SELECT count(epochs) FROM jetfleet_run"},
};
#define S_NPAIRS (sizeof s_pairs / sizeof s_pairs[0])

static bool s_caught_up(void *arg)
{
    s_ctx_t *x = arg;
    for (size_t i = 0; i < S_NPAIRS; i++) {
        if ((double) s_sql(x, s_pairs[i].store_sql) != s_query(x, s_pairs[i].influx_q)) {
            return false;
        }
    }
    return true;
}

static bool s_some_points(void *arg)
{
    return s_query(arg, "SELECT count(compute_us) FROM jetfleet_minibatch") > 0;
}

static int64_t s_now_ms(void)
{
    struct timespec ts;
    (void) clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long long s_outage_mb; // minibatches stored when influxd was stopped
static int64_t s_outage_t0_ms;

static bool s_grew_during_outage(void *arg)
{
    return s_now_ms() - s_outage_t0_ms >= S_OUTAGE_MS &&
           s_sql(arg, "SELECT count(*) FROM minibatches") > s_outage_mb + S_OUTAGE_MB;
}

// Replaces every `from` in text (a malloc'd string, freed) by `to`; returns the new string.
static char *s_replace(char *text, const char *from, const char *to)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, from)) != NULL; p += strlen(from)) {
        n++;
    }
    char *out = malloc(strlen(text) + n * strlen(to) + 1);
    char *o = out;
    const char *p = text;
    for (const char *hit; (hit = strstr(p, from)) != NULL; p = hit + strlen(from)) {
        memcpy(o, p, (size_t) (hit - p));
        o += hit - p;
        memcpy(o, to, strlen(to));
        o += strlen(to);
    }
    memcpy(o, p, strlen(p) + 1);
    free(text);
    return out;
}

// A dashboard query as Grafana would send it: the macros filled in and every variable set to
// "all" (its allValue, `.*`).
static int s_run_dashboard_query(s_ctx_t *x, const char *query)
{
    char *q = strdup(query);
    q = s_replace(q, "$timeFilter", "time > 0");
    q = s_replace(q, "$__interval", "10s");
    q = s_replace(q, "$board", ".*");
    q = s_replace(q, "$run", ".*");
    int n = s_query_series(x, q);
    free(q);
    return n;
}

// The parts of Grafana's dashboard model (schema version S_GRAFANA_SCHEMA) that an import
// needs, checked: every panel on the 24-column grid, with an InfluxDB data source, unique ids
// and refIds, and raw InfluxQL targets; then every query run. Returns the number of queries.
static int s_check_panel(s_ctx_t *x, const json_t *panel, json_t *ids)
{
    static const char *const types[] = {"timeseries", "table", "bargauge", "barchart", "stat"};
    const char *type = json_string_value(json_object_get(panel, "type"));
    bool known = false;
    for (size_t i = 0; type && i < sizeof types / sizeof types[0]; i++) {
        known = known || strcmp(type, types[i]) == 0;
    }
    assert_true(known);
    char id[32];
    (void) snprintf(id, sizeof id, "%lld",
                    (long long) json_integer_value(json_object_get(panel, "id")));
    assert_true(json_is_integer(json_object_get(panel, "id")));
    assert_null(json_object_get(ids, id));
    (void) json_object_set_new(ids, id, json_true());
    assert_true(json_is_string(json_object_get(panel, "title")));
    const json_t *pos = json_object_get(panel, "gridPos");
    json_int_t w = json_integer_value(json_object_get(pos, "w"));
    json_int_t px = json_integer_value(json_object_get(pos, "x"));
    assert_true(w > 0 && px >= 0 && px + w <= 24);
    assert_true(json_integer_value(json_object_get(pos, "h")) > 0);
    assert_true(json_is_integer(json_object_get(pos, "y")));
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(panel, "datasource"), "type")),
        "influxdb");
    const json_t *targets = json_object_get(panel, "targets");
    assert_true(json_array_size(targets) > 0);
    json_t *refs = json_object();
    size_t i = 0;
    const json_t *t = NULL;
    json_array_foreach(targets, i, t)
    {
        const char *ref = json_string_value(json_object_get(t, "refId"));
        assert_non_null(ref);
        assert_null(json_object_get(refs, ref));
        (void) json_object_set_new(refs, ref, json_true());
        assert_true(json_is_true(json_object_get(t, "rawQuery")));
        const char *q = json_string_value(json_object_get(t, "query"));
        assert_non_null(q);
        assert_true(s_run_dashboard_query(x, q) > 0);
    }
    json_decref(refs);
    return (int) json_array_size(targets);
}

static int s_check_dashboard(s_ctx_t *x, const char *path)
{
    json_error_t jerr;
    json_t *d = json_load_file(path, 0, &jerr);
    if (!d) {
        printf("%s:%d:%d: %s\n", path, jerr.line, jerr.column, jerr.text);
    }
    assert_true(json_is_object(d));
    assert_int_equal(json_integer_value(json_object_get(d, "schemaVersion")), S_GRAFANA_SCHEMA);
    assert_true(json_is_string(json_object_get(d, "title")));
    const char *uid = json_string_value(json_object_get(d, "uid"));
    assert_true(uid && strlen(uid) > 0 && strlen(uid) <= 40);
    assert_true(json_is_object(json_object_get(d, "time")));
    int queries = 0;
    size_t i = 0;
    const json_t *v = NULL;
    json_array_foreach(json_object_get(json_object_get(d, "templating"), "list"), i, v)
    {
        const char *type = json_string_value(json_object_get(v, "type"));
        assert_non_null(type);
        if (strcmp(type, "query") == 0) {
            assert_true(s_run_dashboard_query(x, json_string_value(json_object_get(v, "query"))) >
                        0);
            queries++;
        }
    }
    json_t *ids = json_object();
    const json_t *panels = json_object_get(d, "panels");
    assert_true(json_array_size(panels) > 0);
    json_array_foreach(panels, i, v)
    {
        queries += s_check_panel(x, v, ids);
    }
    json_decref(ids);
    json_decref(d);
    return queries;
}

static void s_check_dashboards(s_ctx_t *x)
{
    DIR *dir = opendir(JF_DASHBOARDS_DIR);
    assert_non_null(dir);
    int files = 0, queries = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) {
            char path[PATH_MAX];
            (void) snprintf(path, sizeof path, "%s/%s", JF_DASHBOARDS_DIR, e->d_name);
            queries += s_check_dashboard(x, path);
            files++;
        }
    }
    (void) closedir(dir);
    printf("dashboards=%d\ndashboard_queries_with_series=%d\n", files, queries);
    assert_true(files >= 3);
}

// influxd with an empty database, the coordinator exporting to it, three sim boards, a sweep.
static void s_start(s_ctx_t *x)
{
    int scale = jft_timeout_scale();
    assert_int_equal(s_influx_start(x), 0);
    s_buf_t *body = calloc(1, sizeof *body);
    char url[128];
    (void) snprintf(url, sizeof url, "%s/query", x->influx_url);
    assert_int_equal(s_http(url, "q=CREATE%20DATABASE%20" S_DB, body), 200);
    free(body);
    char extra[256];
    (void) snprintf(extra, sizeof extra,
                    "  influx: {url: '%s', db: %s, flush_interval: 200ms, batch: 2000}\n",
                    x->influx_url, S_DB);
    // An ipc endpoint keeps its path when the coordinator restarts: the agents come back.
    char agents[PATH_MAX];
    (void) snprintf(agents, sizeof agents, "ipc://%s/agents.sock", x->fleet.dir);
    assert_int_equal(jft_fleet_set_coord(&x->fleet, agents, extra), 0);
    assert_int_equal(jft_fleet_start_coordinator(&x->fleet), 0);
    for (size_t i = 0; i < S_SIMS; i++) {
        assert_int_equal(jft_fleet_start_sim_agent(&x->fleet, i, s_agent_args), 0);
    }
    assert_true(jft_fleet_wait_online(&x->fleet, S_SIMS, 30000 * scale));
    char sweep[PATH_MAX];
    assert_int_equal(jft_fleet_write(&x->fleet, "influx.yaml", s_sweep, sweep), 0);
    free(
        jft_cli_expect(&x->fleet, 0, 30000, (const char *const[]){"sweep", "submit", sweep, NULL}));
}

// The coordinator is killed (SIGKILL), and its batch in memory with it: the new one starts from
// the cursor saved before the outage.
static void s_kill_coordinator(s_ctx_t *x)
{
    jft_proc_signal(&x->fleet.coord, SIGKILL);
    int status = 0;
    assert_int_equal(jft_proc_wait(&x->fleet.coord, 10000, &status), 0);
    char endpoint[PATH_MAX + 16];
    (void) snprintf(endpoint, sizeof endpoint, "%s/endpoint", x->fleet.data_dir);
    assert_int_equal(unlink(endpoint), 0); // else the stale endpoint is taken for readiness
    assert_int_equal(jft_fleet_start_coordinator(&x->fleet), 0);
    assert_true(jft_fleet_wait_online(&x->fleet, S_SIMS, 30000 * jft_timeout_scale()));
}

// Mid-stream: points arrive, then influxd goes away while the boards go on, and the coordinator
// is killed and restarted during the outage. Returns the minibatches stored meanwhile;
// *ret_stop_ms gets when influxd was stopped.
static long long s_outage(s_ctx_t *x, int64_t *ret_stop_ms)
{
    int scale = jft_timeout_scale();
    assert_true(jft_wait_until(s_some_points, x, 60000 * scale));
    *ret_stop_ms = s_now_ms();
    (void) jft_proc_stop(&x->influxd);
    s_outage_mb = s_sql(x, "SELECT count(*) FROM minibatches");
    long long mb_at_stop = s_outage_mb;
    s_outage_t0_ms = s_now_ms();
    assert_true(jft_wait_until(s_grew_during_outage, x, 60000 * scale));
    s_kill_coordinator(x);
    s_outage_mb = s_sql(x, "SELECT count(*) FROM minibatches");
    s_outage_t0_ms = s_now_ms() - S_OUTAGE_MS; // now only more rows are needed
    assert_true(jft_wait_until(s_grew_during_outage, x, 60000 * scale));
    assert_false(jft_sweep_finished(&x->fleet)); // the outage was mid-stream
    return s_sql(x, "SELECT count(*) FROM minibatches") - mb_at_stop;
}

static void s_print_exporter_log(s_ctx_t *x)
{
    char *log = jft_read_file(x->fleet.coord.log_path, NULL);
    printf("coordinator log, exporter lines:\n");
    for (char *line = log; line && *line;) {
        char *end = strchr(line, '\n');
        if (end) {
            *end = '\0';
        }
        if (strstr(line, "influx")) {
            printf("  %.300s\n", line);
        }
        line = end ? end + 1 : NULL;
    }
    free(log);
}

// Store and InfluxDB hold the same: counts and sums, all of it labelled simulated.
static void s_compare(s_ctx_t *x, bool caught_up)
{
    for (size_t i = 0; i < S_NPAIRS; i++) {
        long long store = s_sql(x, s_pairs[i].store_sql);
        double influx = s_query(x, s_pairs[i].influx_q);
        printf("%s_store=%lld\n%s_influx=%.0f\n", s_pairs[i].what, store, s_pairs[i].what, influx);
    }
    if (!caught_up) {
        s_print_exporter_log(x);
    }
    assert_true(caught_up);
    for (size_t i = 0; i < S_NPAIRS; i++) {
        assert_true(s_sql(x, s_pairs[i].store_sql) > 0);
    }
    assert_true(s_query(x, "SELECT count(compute_us) FROM jetfleet_minibatch WHERE "
                           "simulated = 'true'") ==
                (double) s_sql(x, "SELECT count(*) FROM minibatches"));
    char *log = jft_read_file(x->fleet.coord.log_path, NULL);
    assert_non_null(log);
    assert_non_null(strstr(log, "retrying in"));
    assert_non_null(strstr(log, "InfluxDB reachable again"));
    free(log);
}

static void test_export_survives_outage(void **state)
{
    s_ctx_t *x = *state;
    if (!x) {
        printf("influx: SKIPPED: %s is not installed (scripts/deps.sh installs the influxdb "
               "package)\n",
               S_INFLUXD);
        skip();
    }
    s_start(x);
    int64_t t_stop = 0;
    long long mb_outage = s_outage(x, &t_stop);
    assert_int_equal(s_influx_start(x), 0);
    int64_t t_up = s_now_ms();
    assert_true(jft_wait_until((bool (*)(void *)) jft_sweep_finished, &x->fleet,
                               110000 * jft_timeout_scale()));
    bool caught_up = jft_wait_until(s_caught_up, x, 60000 * jft_timeout_scale());
    int64_t t_done = s_now_ms();
    s_compare(x, caught_up);
    s_check_dashboards(x);
    printf("outage_ms=%lld\nminibatches_stored_during_outage=%lld\ncatch_up_ms=%lld\n",
           (long long) (t_up - t_stop), mb_outage, (long long) (t_done - t_up));
}

int main(void)
{
    (void) curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_export_survives_outage, s_setup, s_teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
