/* Test support: a fleet on loopback. */
#include "jft_fleet.h"

#include "coord_telemetry_pack.h"

#include "jft_fs.h"

#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define S_DATAGEN_TIMEOUT_MS 30000

static int s_make_dataset(jft_fleet_t *f)
{
    char bin[PATH_MAX], out[PATH_MAX], log[PATH_MAX + 16];
    jft_bin("jetfleet-datagen", bin);
    (void) snprintf(out, sizeof out, "%s/data/mnist", f->dir);
    (void) snprintf(log, sizeof log, "%s/datagen.log", f->dir);
    char *argv[] = {bin, "--kind", "mnist", "--scale", "0.005", "--seed", "7", "--out", out, NULL};
    return jft_run(argv, log, S_DATAGEN_TIMEOUT_MS, NULL) == 0 ? 0 : -EIO;
}

static const char *s_hb_timeout(const jft_fleet_t *f)
{
    if (f->hb_timeout[0]) {
        return f->hb_timeout;
    }
    return f->n_sims > 0 ? JFT_FLEET_SIM_HEARTBEAT_TIMEOUT : "3s";
}

static bool s_on_tcp(const jft_fleet_t *f)
{
    return strncmp(f->agent_endpoint, "tcp://", 6) == 0;
}

// The default endpoint: ipc in the fleet's directory, which no other test's agent can reach;
// TCP when the path would not fit a socket address.
static void s_default_endpoint(jft_fleet_t *f)
{
    if (f->agent_endpoint[0]) {
        return;
    }
    size_t n = strlen(f->dir) + sizeof "/" JFT_FLEET_IPC_NAME;
    if (n < JFT_FLEET_IPC_PATH_MAX) {
        (void) snprintf(f->agent_endpoint, sizeof f->agent_endpoint, "ipc://%.*s/%s",
                        JFT_FLEET_IPC_PATH_MAX, f->dir, JFT_FLEET_IPC_NAME);
    } else {
        (void) snprintf(f->agent_endpoint, sizeof f->agent_endpoint, "tcp://127.0.0.1:*");
    }
}

// Board names by slot: on TCP each carries the fleet's tag, so that an agent of this fleet that
// reaches another test's coordinator (which took a port this one freed) is not one of its boards.
static void s_name_boards(jft_fleet_t *f)
{
    const char *prefix = s_on_tcp(f) ? f->tag : "";
    const char *dash = s_on_tcp(f) ? "-" : "";
    for (size_t i = 0; i < f->n_boards + f->n_sims; i++) {
        bool host = i < f->n_boards;
        (void) snprintf(f->names[i], sizeof f->names[i], "%s%s%s-%zu", prefix, dash,
                        host ? "host" : "sim", host ? i + 1 : i - f->n_boards + 1);
    }
}

const char *jft_fleet_board(const jft_fleet_t *f, const char *base)
{
    size_t k = 0;
    char rest = 0;
    bool host = sscanf(base, "host-%zu%c", &k, &rest) == 1;
    bool sim = !host && sscanf(base, "sim-%zu%c", &k, &rest) == 1;
    if (host && k >= 1 && k <= f->n_boards) {
        return f->names[k - 1];
    }
    if (sim && k >= 1 && k <= f->n_sims) {
        return f->names[f->n_boards + k - 1];
    }
    return base;
}

static int s_write_config(jft_fleet_t *f)
{
    s_default_endpoint(f);
    s_name_boards(f);
    size_t cap = 4096 + (f->n_boards + f->n_sims) * 512;
    char *yaml = malloc(cap);
    if (!yaml) {
        return -ENOMEM;
    }
    // Many simulated boards start many trainers at once (each loads libtorch), which can starve
    // a 2-core machine for seconds: their fleet tolerates longer silences.
    int n = snprintf(yaml, cap,
                     "coordinator:\n  agent_endpoint: %s\n  data_dir: state\n"
                     "  heartbeat_interval: %s\n  heartbeat_timeout: %s\n  run_timeout: 5m\n"
                     "%sboards:\n",
                     f->agent_endpoint, f->hb_interval[0] ? f->hb_interval : "500ms",
                     s_hb_timeout(f), f->coord_extra);
    for (size_t i = 0; i < f->n_boards && n > 0 && (size_t) n < cap; i++) {
        n += snprintf(yaml + n, cap - (size_t) n,
                      "  - name: %s\n    type: host\n    storage:\n      - medium: local\n"
                      "        mount: /\n        dataset_root: %s/data\n",
                      f->names[i], f->dir);
    }
    for (size_t i = 0; i < f->n_sims && n > 0 && (size_t) n < cap; i++) {
        n += snprintf(yaml + n, cap - (size_t) n,
                      "  - name: %s\n    type: sim\n    simulates: %s\n    storage:\n"
                      "      - medium: nvme\n        mount: /\n        dataset_root: %s/data\n",
                      f->names[f->n_boards + i], f->sim_types[i], f->dir);
    }
    int rc = jft_write_file(f->config, yaml);
    free(yaml);
    return rc;
}

int jft_fleet_setup(jft_fleet_t *f, size_t n_boards)
{
    return jft_fleet_setup_sims(f, n_boards, NULL, 0);
}

int jft_fleet_setup_sims(jft_fleet_t *f, size_t n_boards, const char *const *sim_types,
                         size_t n_sims)
{
    memset(f, 0, sizeof *f);
    if (n_boards + n_sims > JFT_FLEET_AGENTS_MAX) {
        return -EINVAL;
    }
    f->n_boards = n_boards;
    f->n_sims = n_sims;
    for (size_t i = 0; i < n_sims; i++) {
        f->sim_types[i] = sim_types[i];
    }
    static unsigned s_fleets; // fleets this test process made: with the pid, unique on the machine
    (void) snprintf(f->tag, sizeof f->tag, "t%ldx%u", (long) getpid(), s_fleets++);
    int rc = jft_tmpdir_new_sized(f->dir, sizeof f->dir);
    if (rc != 0) {
        return rc;
    }
    (void) snprintf(f->config, sizeof f->config, "%s/fleet.yaml", f->dir);
    (void) snprintf(f->data_dir, sizeof f->data_dir, "%s/state", f->dir);
    rc = s_make_dataset(f);
    return rc ? rc : s_write_config(f);
}

int jft_fleet_set_coord(jft_fleet_t *f, const char *agent_endpoint, const char *extra_lines)
{
    (void) snprintf(f->agent_endpoint, sizeof f->agent_endpoint, "%s",
                    agent_endpoint ? agent_endpoint : ""); // "": the default again
    (void) snprintf(f->coord_extra, sizeof f->coord_extra, "%s", extra_lines ? extra_lines : "");
    return s_write_config(f);
}

int jft_fleet_set_heartbeat(jft_fleet_t *f, const char *interval, const char *timeout)
{
    (void) snprintf(f->hb_interval, sizeof f->hb_interval, "%s", interval);
    (void) snprintf(f->hb_timeout, sizeof f->hb_timeout, "%s", timeout);
    return s_write_config(f);
}

static bool s_endpoint_ready(void *arg)
{
    jft_fleet_t *f = arg;
    char path[PATH_MAX + 16];
    (void) snprintf(path, sizeof path, "%s/endpoint", f->data_dir);
    char *text = jft_read_file(path, NULL);
    if (!text) {
        return false;
    }
    (void) snprintf(f->endpoint, sizeof f->endpoint, "%s", text);
    f->endpoint[strcspn(f->endpoint, "\n")] = '\0';
    free(text);
    return f->endpoint[0] != '\0';
}

// Plaintext on loopback, or CURVE with the coordinator's key pinned (f->curve). Fills up to two
// argv slots and returns how many.
static size_t s_security_args(jft_fleet_t *f, char **argv)
{
    if (!f->curve) {
        argv[0] = "--insecure-loopback";
        return 1;
    }
    if (snprintf(f->curve_arg, sizeof f->curve_arg, "%s/keys/coordinator", f->data_dir) >=
        (int) sizeof f->curve_arg) {
        f->curve_arg[0] = 0; // the agent then refuses to start, naming the empty key
    }
    argv[0] = "--coordinator-key";
    argv[1] = f->curve_arg;
    return 2;
}

int jft_fleet_spawn_coordinator(jft_fleet_t *f)
{
    char bin[PATH_MAX], log[PATH_MAX + 16];
    jft_bin("jetfleet-coordinator", bin);
    (void) snprintf(log, sizeof log, "%s/coordinator.log", f->dir);
    char *argv[] = {bin, "--config", f->config, "--log-level", "info",
                    f->curve ? NULL : "--insecure-loopback", NULL};
    return jft_proc_start(&f->coord, log, argv, NULL);
}

int jft_fleet_wait_coordinator(jft_fleet_t *f)
{
    return jft_wait_until(s_endpoint_ready, f, 10000) ? 0 : -ETIMEDOUT;
}

int jft_fleet_start_coordinator(jft_fleet_t *f)
{
    int rc = jft_fleet_spawn_coordinator(f);
    return rc ? rc : jft_fleet_wait_coordinator(f);
}

int jft_fleet_kill_coordinator(jft_fleet_t *f)
{
    jft_proc_signal(&f->coord, SIGKILL);
    int status = 0;
    int rc = jft_proc_wait(&f->coord, 10000, &status);
    char endpoint[PATH_MAX + 16];
    (void) snprintf(endpoint, sizeof endpoint, "%s/endpoint", f->data_dir);
    if (rc == 0 && unlink(endpoint) != 0) {
        rc = -errno;
    }
    return rc;
}

int jft_fleet_start_coordinator_nofile(jft_fleet_t *f, long soft, long hard)
{
    static const char prlimit[] = "/usr/bin/prlimit"; // util-linux, in every Debian install
    char bin[PATH_MAX], log[PATH_MAX + 16], nofile[64];
    jft_bin("jetfleet-coordinator", bin);
    (void) snprintf(log, sizeof log, "%s/coordinator.log", f->dir);
    (void) snprintf(nofile, sizeof nofile, "--nofile=%ld:%ld", soft, hard);
    if (access(prlimit, X_OK) != 0) {
        return -ENOENT;
    }
    char *argv[] = {(char *) prlimit, nofile, "--", bin, "--config", f->config,
                    "--log-level", "info", "--insecure-loopback", NULL};
    f->endpoint[0] = '\0';
    int rc = jft_proc_start(&f->coord, log, argv, NULL);
    if (rc == 0 && !jft_wait_until(s_endpoint_ready, f, 10000)) {
        rc = -ETIMEDOUT;
    }
    return rc;
}

// An agent's extra environment: extra (at most JFT_FLEET_ENV_MAX entries) and, unless it sets
// TMPDIR, TMPDIR in the fleet's directory (removed at teardown). Valid until the next call.
static char *const *s_agent_env(jft_fleet_t *f, char *const *extra)
{
    size_t n = 0;
    bool has_tmpdir = false;
    for (; extra && extra[n] && n < JFT_FLEET_ENV_MAX; n++) {
        f->env_buf[n] = extra[n];
        has_tmpdir = has_tmpdir || strncmp(extra[n], "TMPDIR=", 7) == 0;
    }
    if (!has_tmpdir) {
        (void) snprintf(f->tmpdir_env, sizeof f->tmpdir_env, "TMPDIR=%s", f->dir);
        f->env_buf[n++] = f->tmpdir_env;
    }
    f->env_buf[n] = NULL;
    return f->env_buf;
}

int jft_fleet_start_agent(jft_fleet_t *f, size_t i, char *const env_extra[])
{
    return jft_fleet_start_agent_at(f, i, f->endpoint, env_extra);
}

int jft_fleet_start_agent_at(jft_fleet_t *f, size_t i, const char *endpoint,
                             char *const env_extra[])
{
    if (i >= JFT_FLEET_AGENTS_MAX) {
        return -EINVAL;
    }
    char bin[PATH_MAX], log[PATH_MAX + 64], name[JFT_FLEET_NAME_MAX], state[PATH_MAX + 64];
    jft_bin("jetfleet-agent", bin);
    (void) snprintf(name, sizeof name, "%s",
                    i < f->n_boards ? f->names[i] : ""); // a slot past the hosts: host-<i+1>
    if (!name[0]) {
        (void) snprintf(name, sizeof name, "host-%zu", i + 1);
    }
    (void) snprintf(log, sizeof log, "%s/agent-%s.log", f->dir, name);
    (void) snprintf(state, sizeof state, JFT_FLEET_AGENT_STATE_FMT, f->dir, name);
    char *argv[] = {bin,         "--coordinator", (char *) endpoint, "--name", name, "--config",
                    f->config,   "--log-level",   "info",            "--state-dir", state, NULL, NULL, NULL};
    s_security_args(f, argv + 11);
    return jft_proc_start(&f->agents[i], log, argv,
                          s_agent_env(f, env_extra ? env_extra : f->agent_env));
}

int jft_fleet_start_agent_named(jft_fleet_t *f, size_t i, const char *name,
                                const char *const *extra_args)
{
    return jft_fleet_start_agent_named_at(f, i, name, f->endpoint, extra_args);
}

int jft_fleet_start_agent_named_at(jft_fleet_t *f, size_t i, const char *name, const char *endpoint,
                                   const char *const *extra_args)
{
    if (i >= JFT_FLEET_AGENTS_MAX) {
        return -EINVAL;
    }
    char bin[PATH_MAX], log[PATH_MAX + 64], state[PATH_MAX + 64];
    jft_bin("jetfleet-agent", bin);
    (void) snprintf(log, sizeof log, "%s/agent-%s.log", f->dir, name);
    (void) snprintf(state, sizeof state, JFT_FLEET_AGENT_STATE_FMT, f->dir, name);
    char *argv[40] = {bin,        "--coordinator", (char *) endpoint, "--name", (char *) name,
                      "--config", f->config,       "--log-level",     "info",   "--state-dir",
                      state};
    size_t n = 11 + s_security_args(f, argv + 11);
    for (size_t k = 0; extra_args && extra_args[k] && n < 39; k++) {
        argv[n++] = (char *) extra_args[k];
    }
    argv[n] = NULL;
    return jft_proc_start(&f->agents[i], log, argv, s_agent_env(f, f->agent_env));
}

int jft_fleet_start_sim_agent(jft_fleet_t *f, size_t i, const char *const *extra_args)
{
    if (i >= f->n_sims) {
        return -EINVAL;
    }
    char platform[64];
    (void) snprintf(platform, sizeof platform, "sim:%s", f->sim_types[i]);
    const char *args[32] = {"--platform", platform};
    size_t n = 2;
    for (size_t k = 0; extra_args && extra_args[k] && n < 31; k++) {
        args[n++] = extra_args[k];
    }
    args[n] = NULL;
    return jft_fleet_start_agent_named(f, f->n_boards + i, f->names[f->n_boards + i], args);
}

static sqlite3_stmt *s_sql_row(jft_fleet_t *f, const char *sql, sqlite3 **ret_db)
{
    char path[PATH_MAX + 16];
    (void) snprintf(path, sizeof path, "%s/jetfleet.db", f->data_dir);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    // The store's SQL function, so that tests can read the view telemetry_json.
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        coord_tpack_sql_register(db) == 0 && sqlite3_busy_timeout(db, 2000) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        *ret_db = db;
        return st;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return NULL;
}

long long jft_fleet_sql_int(jft_fleet_t *f, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = s_sql_row(f, sql, &db);
    long long v = -1;
    if (st && sqlite3_column_type(st, 0) == SQLITE_INTEGER) {
        v = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

char *jft_fleet_sql_text(jft_fleet_t *f, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = s_sql_row(f, sql, &db);
    char *v = NULL;
    if (st && sqlite3_column_type(st, 0) == SQLITE_TEXT) {
        v = strdup((const char *) sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

typedef struct s_online {
    jft_fleet_t *f;
    long long n;
} s_online_t;

static bool s_online(void *arg)
{
    s_online_t *o = arg;
    return jft_fleet_sql_int(o->f, "SELECT count(*) FROM boards WHERE online = 1") >= o->n;
}

bool jft_fleet_wait_online(jft_fleet_t *f, size_t n, int timeout_ms)
{
    s_online_t o = {f, (long long) n};
    return jft_wait_until(s_online, &o, timeout_ms);
}

int jft_fleet_cli(jft_fleet_t *f, const char *out_path, int timeout_ms, const char *const *args)
{
    char bin[PATH_MAX];
    jft_bin("jetfleet", bin);
    char *argv[32] = {bin, "--config", f->config};
    size_t n = 3;
    for (size_t i = 0; args[i] && n < 31; i++) {
        argv[n++] = (char *) args[i];
    }
    argv[n] = NULL;
    return jft_run(argv, out_path, timeout_ms * jft_timeout_scale(), NULL);
}

int jft_fleet_write(jft_fleet_t *f, const char *name, const char *text, char *out)
{
    (void) snprintf(out, PATH_MAX, "%s/%s", f->dir, name);
    return jft_write_file(out, text);
}

// A daemon that was running must stop cleanly on SIGTERM: exit 0, no signal (a sanitizer report
// or a crash at shutdown shows up here). 0 if it did or was not running, else -1 with a line.
static int s_stop_clean(jft_proc_t *p, const char *what)
{
    bool was_running = p->pid > 0 && jft_proc_alive(p);
    int status = jft_proc_stop(p);
    if (!was_running || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        return 0;
    }
    fprintf(stderr, "%s did not stop cleanly (status 0x%x); see %s\n", what, (unsigned) status,
            p->log_path);
    return -1;
}

int jft_fleet_teardown(jft_fleet_t *f)
{
    int rc = 0;
    for (size_t i = 0; i < JFT_FLEET_AGENTS_MAX; i++) {
        rc |= s_stop_clean(&f->agents[i], "an agent");
    }
    rc |= s_stop_clean(&f->coord, "the coordinator");
    if (getenv("JF_KEEP_TEST_DIR") || rc != 0) {
        fprintf(stderr, "test directory kept: %s\n", f->dir);
        return rc;
    }
    jft_tmpdir_remove(f->dir);
    return rc;
}
