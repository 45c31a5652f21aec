/* The InfluxDB exporter's thread (coord_influx.h; docs/metrics.md). Each tick it reads, after the
 * cursor, what the store holds of every run attempt (telemetry samples, minibatches, epochs, then
 * the run's result once it finished), up to `batch` points, plus a fleet and sweep snapshot,
 * sends them, and only then moves the cursor and saves it. A failed send is retried as is, with
 * backoff; the store keeps everything after the cursor meanwhile. */
#include "coord_influx.h"

#include "coord_influx_http.h"
#include "coord_influx_batch.h"
#include "coord_store_export.h"
#include "jf_log.h"
#include "jf_units.h"

#include <czmq.h>
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S_CURSOR_VERSION 1
#define S_BACKOFF_MIN_US JF_US_PER_S

struct coord_influx {
    zactor_t *actor; // owned: the exporter thread
};

// The thread's state; the thread owns it.
typedef struct s_exporter {
    jf_influx_config_t cfg;     // copy
    char store_path[PATH_MAX];  // the store, opened read-only
    char cursor_path[PATH_MAX]; // <data_dir>/COORD_INFLUX_CURSOR_FILE
    char *token;                // owned; NULL without token_file
    coord_store_t *store;       // owned; NULL until it opens
    coord_influx_http_t *http;  // owned
    coord_influx_line_t *lines; // owned: the batch being built or retried
    json_t *cursor;             // owned: what InfluxDB has accepted
    json_t *staged;             // owned: the cursor once the batch in lines is accepted; NULL: none
    int64_t backoff_us;         // 0 when the last send worked
    jf_log_ratelimit_t rl;      // send failures
    uint64_t points_sent;       // since start, for the notice on recovery
} s_exporter_t;

static void s_exporter_destroy(s_exporter_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    s_exporter_t *self = *self_p;
    if (self->token) {
        memset(self->token, 0, strlen(self->token));
        free(self->token);
    }
    coord_store_destroy(&self->store);
    coord_influx_http_destroy(&self->http);
    coord_influx_line_destroy(&self->lines);
    json_decref(self->cursor);
    json_decref(self->staged);
    free(self);
    *self_p = NULL;
}

// Reads the token (first line, without its line end) from path.
static char *s_read_token(const char *path, jf_err_t *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        jf_err_set(err, -errno, "influx: cannot read token_file '%s': %s", path, strerror(errno));
        return NULL;
    }
    char *token = calloc(1, COORD_INFLUX_TOKEN_MAX + 1);
    if (token && !fgets(token, COORD_INFLUX_TOKEN_MAX + 1, f)) {
        token[0] = '\0';
    }
    (void) fclose(f);
    if (token) {
        token[strcspn(token, "\r\n")] = '\0';
    }
    if (!token || !token[0]) {
        jf_err_set(err, -EINVAL, "influx: token_file '%s' is empty", path);
        free(token);
        return NULL;
    }
    return token;
}

static json_t *s_cursor_load(const char *path, jf_err_t *err)
{
    if (access(path, F_OK) != 0) {
        return json_pack("{s:i, s:{}}", "version", S_CURSOR_VERSION, "attempts");
    }
    json_error_t jerr;
    json_t *c = json_load_file(path, 0, &jerr);
    if (!json_is_object(c) || !json_is_object(json_object_get(c, "attempts")) ||
        json_integer_value(json_object_get(c, "version")) != S_CURSOR_VERSION) {
        json_decref(c);
        jf_err_set(err, -EINVAL,
                   "influx: cursor file '%s' is not a version %d cursor (%s:%d:%d); remove it to "
                   "export the whole store again",
                   path, S_CURSOR_VERSION, jerr.text, jerr.line, jerr.column);
        return NULL;
    }
    return c;
}

// Writes the cursor to a temporary file, syncs it and renames it over the old one.
static int s_cursor_save(const s_exporter_t *self, const json_t *cursor, jf_err_t *err)
{
    char tmp[PATH_MAX + 8];
    (void) snprintf(tmp, sizeof tmp, "%s.tmp", self->cursor_path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        return jf_err_set(err, -errno, "influx: cannot write '%s': %s", tmp, strerror(errno));
    }
    int rc = json_dumpf(cursor, f, JSON_COMPACT) == 0 && fflush(f) == 0 && fsync(fileno(f)) == 0;
    rc = (fclose(f) == 0 && rc) ? 0 : -EIO;
    if (rc == 0 && rename(tmp, self->cursor_path) != 0) {
        rc = -errno;
    }
    return rc == 0 ? 0
                   : jf_err_set(err, rc, "influx: cannot save cursor '%s': %s", self->cursor_path,
                                strerror(-rc));
}

// Fills lines with what follows the cursor, and x->staged with the cursor after it.
static int s_build(s_exporter_t *x, jf_err_t *err)
{
    x->staged = json_deep_copy(x->cursor);
    if (!x->staged) {
        return jf_err_set(err, -ENOMEM, "influx: out of memory");
    }
    return coord_influx_batch_build(x->store, x->lines, x->staged, x->cfg.batch, err);
}

static int s_on_scalar(const coord_export_row_t *row, void *arg)
{
    *(int64_t *) arg = row->kind[0] == COORD_VALUE_INT ? row->i[0] : 0;
    return 0;
}

static void s_commit(s_exporter_t *x)
{
    jf_err_t err = {0};
    bool moved = !json_equal(x->cursor, x->staged);
    json_decref(x->cursor);
    x->cursor = x->staged;
    x->staged = NULL;
    x->points_sent += coord_influx_line_points(x->lines);
    coord_influx_line_clear(x->lines);
    if (moved && s_cursor_save(x, x->cursor, &err) != 0) {
        // The next start sends these rows again; InfluxDB keeps one point per series and time.
        jf_log_warn("%s; rows already sent will be sent again after a restart", err.msg);
    }
}

static void s_send(s_exporter_t *x)
{
    jf_err_t err = {0};
    size_t points = coord_influx_line_points(x->lines);
    int rc = points == 0 ? 0
                         : coord_influx_http_write(x->http, coord_influx_line_text(x->lines),
                                                   coord_influx_line_len(x->lines), &err);
    if (rc == -EIO) {
        x->backoff_us = x->backoff_us ? x->backoff_us * 2 : S_BACKOFF_MIN_US;
        x->backoff_us = x->backoff_us > COORD_INFLUX_BACKOFF_MAX_US ? COORD_INFLUX_BACKOFF_MAX_US
                                                                    : x->backoff_us;
        uint64_t more = 0;
        if (jf_log_ratelimit_allow(&x->rl, &more)) {
            jf_log_warn("%s (%" PRIu64 " more); keeping %zu points and the store's rows after "
                        "them, retrying in %" PRId64 " ms",
                        err.msg, more, points, x->backoff_us / JF_US_PER_MS);
        }
        return;
    }
    if (rc == -EBADMSG) {
        jf_log_error("%s; InfluxDB refused this batch of %zu points as bad data, going on past "
                     "it",
                     err.msg, points);
    } else if (rc != 0) {
        jf_log_error("%s; going on past this batch of %zu points", err.msg, points);
    }
    if (x->backoff_us != 0) {
        jf_log_notice("influx: InfluxDB reachable again, sending from the store");
    }
    x->backoff_us = 0;
    s_commit(x);
}

// A cursor belongs to one store: run ids are digests of their parameters, so a new store holds
// the same ids, and an old cursor would pass over its rows unsent.
static int s_check_store_id(s_exporter_t *x, jf_err_t *err)
{
    int64_t id = 0;
    int rc = coord_store_export_each(x->store, COORD_EXPORT_STORE_ID, &(coord_export_key_t){0},
                                     s_on_scalar, &id, err);
    json_t *kept = json_object_get(x->cursor, "store_id");
    if (rc != 0 || (kept && json_integer_value(kept) == id)) {
        return rc;
    }
    if (kept) {
        jf_log_notice("influx: cursor '%s' is of another store; exporting this store from its "
                      "start",
                      x->cursor_path);
    }
    json_decref(x->cursor);
    x->cursor = json_pack("{s:i, s:I, s:{}}", "version", S_CURSOR_VERSION, "store_id",
                          (json_int_t) id, "attempts");
    return x->cursor ? 0 : jf_err_set(err, -ENOMEM, "influx: out of memory");
}

static void s_tick(s_exporter_t *x)
{
    jf_err_t err = {0};
    if (!x->store && !(x->store = coord_store_open(x->store_path, true, &err))) {
        jf_log_warn("influx: %s; trying again in the next interval", err.msg);
        return;
    }
    if (!x->staged && s_check_store_id(x, &err) != 0) {
        jf_log_warn("influx: %s; trying again in the next interval", err.msg);
        return;
    }
    if (x->staged) { // a batch InfluxDB has not accepted yet: the same again
        s_send(x);
        return;
    }
    if (s_build(x, &err) != 0) {
        jf_log_warn("influx: %s; trying again in the next interval", err.msg);
        coord_influx_line_clear(x->lines);
        json_decref(x->staged);
        x->staged = NULL;
        return;
    }
    s_send(x);
}

static void s_actor(zsock_t *pipe, void *arg)
{
    s_exporter_t *x = arg;
    (void) zsock_signal(pipe, 0);
    zpoller_t *poller = zpoller_new(pipe, NULL);
    int64_t next_us = jf_clock_mono_us();
    while (poller) {
        int64_t now_us = jf_clock_mono_us();
        if (now_us >= next_us) {
            s_tick(x);
            now_us = jf_clock_mono_us();
            next_us = now_us + (x->backoff_us ? x->backoff_us : x->cfg.flush_interval_us);
        }
        void *which = zpoller_wait(poller, (int) ((next_us - now_us) / JF_US_PER_MS) + 1);
        if (which == pipe) {
            char *cmd = zstr_recv(pipe);
            bool stop = !cmd || strcmp(cmd, "$TERM") == 0;
            zstr_free(&cmd);
            if (stop) {
                break;
            }
        } else if (zpoller_terminated(poller)) {
            break;
        }
    }
    zpoller_destroy(&poller);
    s_exporter_destroy(&x);
}

static s_exporter_t *s_exporter_new(const jf_influx_config_t *cfg, const char *store_path,
                                    const char *data_dir, jf_err_t *err)
{
    s_exporter_t *x = calloc(1, sizeof *x);
    if (!x) {
        jf_err_set(err, -ENOMEM, "influx: out of memory");
        return NULL;
    }
    x->cfg = *cfg;
    (void) snprintf(x->store_path, sizeof x->store_path, "%s", store_path);
    int n = snprintf(x->cursor_path, sizeof x->cursor_path, "%s/%s", data_dir,
                     COORD_INFLUX_CURSOR_FILE);
    if (n < 0 || (size_t) n >= sizeof x->cursor_path) {
        jf_err_set(err, -ENAMETOOLONG, "influx: cursor path in '%s' is too long", data_dir);
        goto fail_destroy;
    }
    if (cfg->token_file[0] && !(x->token = s_read_token(cfg->token_file, err))) {
        goto fail_destroy;
    }
    x->http = coord_influx_http_new(cfg, x->token, err);
    x->lines = x->http ? coord_influx_line_new(COORD_INFLUX_BATCH_MAX_BYTES) : NULL;
    if (x->http && !x->lines) {
        jf_err_set(err, -ENOMEM, "influx: out of memory");
    }
    if (!x->lines || !(x->cursor = s_cursor_load(x->cursor_path, err))) {
        goto fail_destroy;
    }
    return x;
fail_destroy:
    s_exporter_destroy(&x);
    return NULL;
}

coord_influx_t *coord_influx_new(const jf_influx_config_t *cfg, const char *store_path,
                                 const char *data_dir, jf_err_t *err)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) { // before any thread uses curl
        jf_err_set(err, -EIO, "influx: curl_global_init failed");
        return NULL;
    }
    s_exporter_t *x = s_exporter_new(cfg, store_path, data_dir, err);
    coord_influx_t *self = x ? calloc(1, sizeof *self) : NULL;
    if (x && !self) {
        jf_err_set(err, -ENOMEM, "influx: out of memory");
    }
    if (self && !(self->actor = zactor_new(s_actor, x))) { // the actor owns x from here on
        jf_err_set(err, -ENOMEM, "influx: cannot start the exporter thread");
        free(self);
        self = NULL;
        x = NULL; // who owns x after a failed zactor_new is unknown: leak it, never free twice
    }
    if (!self) {
        s_exporter_destroy(&x);
    }
    return self;
}

void coord_influx_destroy(coord_influx_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    zactor_destroy(&(*self_p)->actor);
    free(*self_p);
    *self_p = NULL;
    curl_global_cleanup(); // pairs with coord_influx_new's curl_global_init
}
