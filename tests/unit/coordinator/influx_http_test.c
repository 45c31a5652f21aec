/* unit.influx_http: the requests the InfluxDB exporter's HTTP side sends (coord_influx_http.h,
 * docs/metrics.md), for both API versions, as a recorder of HTTP requests on 127.0.0.1 receives
 * them (tests/fixtures/http/recorder.py, not InfluxDB): InfluxDB 2.x's
 * /api/v2/write?org=&bucket=&precision=ns with "Authorization: Token", 1.x's /write?db=&rp=, the
 * body gzip-compressed and unchanged once decompressed; and how the answer's status maps to the
 * result (2xx accepted, 400 refused for good, 401 and 5xx worth retrying). integration.influx
 * checks the 1.x path against a real influxd; Debian 12 has no InfluxDB 2.x server, so the 2.x
 * path is checked here against the write API's documented form. */
#include "coord_influx_http.h"
#include "jft_fs.h"
#include "jft_proc.h"

#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define T_PYTHON "/usr/bin/python3"
#define T_TOKEN  "s3cr3t-T0ken=="
#define T_LINES                                                                                    \
    "jetfleet_telemetry,board=nx-01,simulated=true cpu_load_pct=41.5 1700000000000000000\n"        \
    "jetfleet_epoch,board=nx-01,run=r1 e2e_s=12.25,epoch=1i 1700000000500000000\n"

typedef struct t_ctx {
    char dir[PATH_MAX];
    char port_file[PATH_MAX + 16], record[PATH_MAX + 16], status[PATH_MAX + 16];
    jft_proc_t server;
    int port;
} t_ctx_t;

static bool t_listening(void *arg)
{
    t_ctx_t *c = arg;
    return access(c->port_file, R_OK) == 0 || !jft_proc_alive(&c->server);
}

static int t_teardown(void **state);

static int t_setup(void **state)
{
    if (access(T_PYTHON, X_OK) != 0) {
        fprintf(stderr, "influx_http: %s is missing (scripts/deps.sh installs python3)\n",
                T_PYTHON);
        return -1;
    }
    t_ctx_t *c = calloc(1, sizeof *c);
    if (!c || jft_tmpdir_new(c->dir) != 0) {
        free(c);
        return -1;
    }
    *state = c; // from here t_teardown cleans up, after a failed start too
    (void) snprintf(c->port_file, sizeof c->port_file, "%s/port", c->dir);
    (void) snprintf(c->record, sizeof c->record, "%s/requests.jsonl", c->dir);
    (void) snprintf(c->status, sizeof c->status, "%s/status", c->dir);
    char script[PATH_MAX], log[PATH_MAX + 16];
    jft_fixture("http/recorder.py", script);
    (void) snprintf(log, sizeof log, "%s/recorder.log", c->dir);
    char *argv[] = {T_PYTHON, script, c->port_file, c->record, c->status, NULL};
    if (jft_proc_start(&c->server, log, argv, NULL) != 0 ||
        !jft_wait_until(t_listening, c, 10000 * jft_timeout_scale()) ||
        !jft_proc_alive(&c->server)) {
        char *text = jft_read_file(log, NULL);
        fprintf(stderr, "influx_http: the recorder did not start: %s\n", text ? text : "");
        free(text);
        (void) t_teardown(state);
        return -1;
    }
    char *port = jft_read_file(c->port_file, NULL);
    c->port = port ? atoi(port) : 0;
    free(port);
    if (c->port <= 0) {
        (void) t_teardown(state);
        return -1;
    }
    return 0;
}

static int t_teardown(void **state)
{
    t_ctx_t *c = *state;
    (void) jft_proc_stop(&c->server);
    jft_tmpdir_remove(c->dir);
    free(c);
    return 0;
}

// The recorded requests, one JSON object per line; fails the test if there are not n.
static json_t *t_requests(const t_ctx_t *c, size_t n)
{
    json_t *all = json_array();
    char *text = jft_read_file(c->record, NULL);
    for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        json_t *r = json_loads(line, 0, NULL);
        assert_non_null(r);
        json_array_append_new(all, r);
    }
    free(text);
    if (json_array_size(all) != n) {
        fail_msg("%zu requests recorded, %zu expected", json_array_size(all), n);
    }
    return all;
}

static const char *t_member(const json_t *req, const char *group, const char *key)
{
    const json_t *g = group ? json_object_get(req, group) : req;
    return json_string_value(json_object_get(g, key));
}

static jf_influx_config_t t_config(const t_ctx_t *c, bool v2)
{
    jf_influx_config_t cfg = {.enabled = true, .batch = 10, .timeout_us = 5000000};
    (void) snprintf(cfg.url, sizeof cfg.url, "http://127.0.0.1:%d", c->port);
    if (v2) {
        (void) snprintf(cfg.org, sizeof cfg.org, "lab one");
        (void) snprintf(cfg.bucket, sizeof cfg.bucket, "jetfleet/raw");
    } else {
        (void) snprintf(cfg.db, sizeof cfg.db, "jetfleet");
        (void) snprintf(cfg.rp, sizeof cfg.rp, "week");
    }
    return cfg;
}

static void test_v2_write(void **state)
{
    t_ctx_t *c = *state;
    jf_influx_config_t cfg = t_config(c, true);
    jf_err_t err = {0};
    coord_influx_http_t *h = coord_influx_http_new(&cfg, T_TOKEN, &err);
    assert_non_null(h);
    assert_int_equal(coord_influx_http_write(h, T_LINES, strlen(T_LINES), &err), 0);
    coord_influx_http_destroy(&h);
    json_t *reqs = t_requests(c, 1);
    const json_t *r = json_array_get(reqs, 0);
    // The organisation and bucket are URL-escaped (a space, a slash).
    assert_string_equal(t_member(r, NULL, "path"),
                        "/api/v2/write?org=lab%20one&bucket=jetfleet%2Fraw&precision=ns");
    assert_string_equal(t_member(r, "headers", "authorization"), "Token " T_TOKEN);
    assert_string_equal(t_member(r, "headers", "content-encoding"), "gzip");
    assert_string_equal(t_member(r, NULL, "body"), T_LINES);
    json_decref(reqs);
}

static void test_v1_write_without_token(void **state)
{
    t_ctx_t *c = *state;
    jf_influx_config_t cfg = t_config(c, false);
    jf_err_t err = {0};
    coord_influx_http_t *h = coord_influx_http_new(&cfg, NULL, &err);
    assert_non_null(h);
    assert_int_equal(coord_influx_http_write(h, T_LINES, strlen(T_LINES), &err), 0);
    coord_influx_http_destroy(&h);
    json_t *reqs = t_requests(c, 1);
    const json_t *r = json_array_get(reqs, 0);
    assert_string_equal(t_member(r, NULL, "path"), "/write?db=jetfleet&rp=week&precision=ns");
    assert_null(t_member(r, "headers", "authorization"));
    assert_string_equal(t_member(r, NULL, "body"), T_LINES);
    json_decref(reqs);
}

// 400: the data is refused for good (-EBADMSG); 401, 404, 503: worth retrying (-EIO); each
// error says the status.
static void test_status_mapping(void **state)
{
    t_ctx_t *c = *state;
    jf_influx_config_t cfg = t_config(c, true);
    jf_err_t err = {0};
    coord_influx_http_t *h = coord_influx_http_new(&cfg, T_TOKEN, &err);
    assert_non_null(h);
    const struct {
        const char *status;
        int rc;
    } rows[] = {{"400", -EBADMSG}, {"401", -EIO}, {"404", -EIO}, {"503", -EIO}, {"204", 0}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        assert_int_equal(jft_write_file(c->status, rows[i].status), 0);
        memset(&err, 0, sizeof err);
        int rc = coord_influx_http_write(h, T_LINES, strlen(T_LINES), &err);
        if (rc != rows[i].rc || (rc != 0 && !strstr(err.msg, rows[i].status))) {
            fail_msg("status %s: rc %d (want %d), '%s'", rows[i].status, rc, rows[i].rc, err.msg);
        }
    }
    coord_influx_http_destroy(&h);
    json_decref(t_requests(c, 5));
}

// Nothing listens: -EIO, saying so.
static void test_no_server(void **state)
{
    t_ctx_t *c = *state;
    jf_influx_config_t cfg = t_config(c, true);
    (void) jft_proc_stop(&c->server);
    jf_err_t err = {0};
    coord_influx_http_t *h = coord_influx_http_new(&cfg, T_TOKEN, &err);
    assert_non_null(h);
    assert_int_equal(coord_influx_http_write(h, T_LINES, strlen(T_LINES), &err), -EIO);
    assert_true(err.msg[0] != '\0');
    coord_influx_http_destroy(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_v2_write, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_v1_write_without_token, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_status_mapping, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_no_server, t_setup, t_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
