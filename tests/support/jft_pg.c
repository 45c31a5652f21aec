/* A real PostgreSQL server for one test (jft_pg.h): initdb, a postmaster on a Unix socket in the
 * test's own directory, one database; stopped and removed at teardown. */
#include "jft_pg.h"

#include "jft_fs.h"
#include "jft_proc.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpq-fe.h>

#define S_SETPRIV       "/usr/bin/setpriv"
#define S_URI_MAX       (PATH_MAX + 128)
#define S_ARGV_MAX      32
#define S_PROG_PATH_MAX (PATH_MAX + 32) // the binaries' directory and a program's name

struct jft_pg {
    char dir[PATH_MAX];  // the test's own directory: socket, logs, data/
    char bin[PATH_MAX];  // the server binaries' directory
    char uri[S_URI_MAX]; // postgresql:///<db>?host=<dir>
    bool as_postgres;    // root: the programs run as the postgres system user
    jft_proc_t server;   // the postmaster (through setpriv when as_postgres)
};

static bool s_executable(const char *dir, const char *prog)
{
    char path[PATH_MAX] = {0};
    int n = snprintf(path, sizeof path, "%s/%s", dir, prog);
    return n > 0 && (size_t) n < sizeof path && access(path, X_OK) == 0;
}

static bool s_find_bin(char *out)
{
    const char *env = getenv("JF_PG_BIN");
    const char *const dirs[] = {env,
                                "/usr/lib/postgresql/15/bin",
                                "/usr/lib/postgresql/16/bin",
                                "/usr/lib/postgresql/17/bin",
                                "/usr/lib/postgresql/14/bin",
                                "/usr/lib/postgresql/13/bin"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        if (dirs[i] && s_executable(dirs[i], "initdb") && s_executable(dirs[i], "postgres")) {
            (void) snprintf(out, PATH_MAX, "%s", dirs[i]);
            return true;
        }
    }
    return false;
}

// Fills argv with prog from the server's binaries, behind setpriv when running as root, then
// the NULL-terminated args. Returns the paths' storage (caller frees) or NULL.
static char *s_argv(const jft_pg_t *pg, const char *prog, const char *const args[], char **argv)
{
    char *path = malloc(S_PROG_PATH_MAX);
    if (!path) {
        return NULL;
    }
    (void) snprintf(path, S_PROG_PATH_MAX, "%s/%s", pg->bin, prog);
    int n = 0;
    if (pg->as_postgres) {
        static char *const priv[] = {S_SETPRIV,        "--reuid=postgres", "--regid=postgres",
                                     "--clear-groups", "--pdeathsig=KILL", "--"};
        for (size_t i = 0; i < sizeof priv / sizeof priv[0]; i++) {
            argv[n++] = priv[i];
        }
    }
    argv[n++] = path;
    for (size_t i = 0; args[i] && n < S_ARGV_MAX - 1; i++) {
        argv[n++] = (char *) args[i];
    }
    argv[n] = NULL;
    return path;
}

// The last line-ish part of a log file, for messages.
static void s_log_tail(const char *path, char *out, size_t size)
{
    size_t len = 0;
    char *text = jft_read_file(path, &len);
    while (text && len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' ')) {
        text[--len] = '\0';
    }
    const char *tail = text ? (len > 160 ? text + len - 160 : text) : "(no log)";
    (void) snprintf(out, size, "%s", tail);
    for (char *p = out; *p; p++) {
        *p = *p == '\n' ? '|' : *p;
    }
    free(text);
}

static int s_initdb(jft_pg_t *pg, jf_err_t *err)
{
    char data[PATH_MAX + 8] = {0}, log[PATH_MAX + 16] = {0}, user_opt[160] = {0};
    (void) snprintf(data, sizeof data, "%s/data", pg->dir);
    (void) snprintf(log, sizeof log, "%s/initdb.log", pg->dir);
    const struct passwd *me = getpwuid(geteuid());
    (void) snprintf(user_opt, sizeof user_opt, "--username=%s", me ? me->pw_name : "postgres");
    const char *const args[] = {
        "-D", data, user_opt, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", NULL};
    char *argv[S_ARGV_MAX] = {0};
    char *path = s_argv(pg, "initdb", args, argv);
    if (!path) {
        return jf_err_set(err, -ENOMEM, "jft_pg: out of memory");
    }
    int rc = jft_run(argv, log, JFT_PG_INITDB_TIMEOUT_MS * jft_timeout_scale(), NULL);
    free(path);
    if (rc != 0) {
        char tail[200] = {0};
        s_log_tail(log, tail, sizeof tail);
        return jf_err_set(err, -EIO, "jft_pg: initdb in %s exited %d: %s", pg->dir, rc, tail);
    }
    return 0;
}

static int s_start_server(jft_pg_t *pg, jf_err_t *err)
{
    char data[PATH_MAX + 8] = {0}, log[PATH_MAX + 16] = {0};
    (void) snprintf(data, sizeof data, "%s/data", pg->dir);
    (void) snprintf(log, sizeof log, "%s/server.log", pg->dir);
    // Only the socket in our directory; durability does not matter for a test's database.
    const char *const args[] = {"-D", data,
                                "-k", pg->dir,
                                "-c", "listen_addresses=",
                                "-c", "fsync=off",
                                "-c", "synchronous_commit=off",
                                "-c", "full_page_writes=off",
                                "-c", "shared_buffers=16MB",
                                "-c", "max_connections=20",
                                NULL};
    char *argv[S_ARGV_MAX] = {0};
    char *path = s_argv(pg, "postgres", args, argv);
    if (!path) {
        return jf_err_set(err, -ENOMEM, "jft_pg: out of memory");
    }
    int rc = jft_proc_start(&pg->server, log, argv, NULL);
    free(path);
    return rc ? jf_err_set(err, rc, "jft_pg: cannot start postgres: %s", strerror(-rc)) : 0;
}

typedef struct s_ready {
    jft_pg_t *pg;
    char conninfo[PATH_MAX + 64];
} s_ready_t;

static bool s_is_ready(void *arg)
{
    s_ready_t *r = arg;
    return !jft_proc_alive(&r->pg->server) || PQping(r->conninfo) == PQPING_OK;
}

static int s_create_db(jft_pg_t *pg, const char *db_name, jf_err_t *err)
{
    s_ready_t r = {.pg = pg};
    (void) snprintf(r.conninfo, sizeof r.conninfo, "host=%s dbname=postgres", pg->dir);
    if (!jft_wait_until(s_is_ready, &r, JFT_PG_READY_TIMEOUT_MS) || !jft_proc_alive(&pg->server)) {
        char log[PATH_MAX + 16] = {0}, tail[200] = {0};
        (void) snprintf(log, sizeof log, "%s/server.log", pg->dir);
        s_log_tail(log, tail, sizeof tail);
        return jf_err_set(err, -ETIMEDOUT, "jft_pg: the server in %s did not get ready: %s",
                          pg->dir, tail);
    }
    PGconn *c = PQconnectdb(r.conninfo);
    char sql[128] = {0};
    (void) snprintf(sql, sizeof sql, "CREATE DATABASE \"%s\"", db_name);
    PGresult *res = PQstatus(c) == CONNECTION_OK ? PQexec(c, sql) : NULL;
    int rc = 0;
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        const char *why = PQerrorMessage(c);
        rc = jf_err_set(err, -EIO, "jft_pg: creating database '%s': %.*s", db_name,
                        (int) strcspn(why, "\n"), why);
    }
    PQclear(res);
    PQfinish(c);
    return rc;
}

static bool s_valid_name(const char *name)
{
    size_t n = strlen(name);
    return n > 0 && n < 60 && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

// The directory, given to the postgres user when running as root.
static int s_make_dir(jft_pg_t *pg, jf_err_t *err)
{
    int rc = jft_tmpdir_new_sized(pg->dir, sizeof pg->dir);
    if (rc != 0) {
        return jf_err_set(err, rc, "jft_pg: cannot create a directory: %s", strerror(-rc));
    }
    if (!pg->as_postgres) {
        return 0;
    }
    const struct passwd *pw = getpwnam("postgres");
    if (!pw || chown(pg->dir, pw->pw_uid, pw->pw_gid) != 0) {
        return jf_err_set(err, -EPERM,
                          "jft_pg: running as root, and the 'postgres' system user (Debian's "
                          "postgresql package creates it) %s",
                          pw ? "cannot be given the directory" : "does not exist");
    }
    return 0;
}

static int s_missing(jf_err_t *err)
{
    const char *allow = getenv("JF_ALLOW_SKIP_PG");
    bool skip = allow && strcmp(allow, "1") == 0;
    return jf_err_set(err, skip ? JFT_PG_SKIP : -ENOENT,
                      "jft_pg: no PostgreSQL server binaries (initdb, postgres) in $JF_PG_BIN or "
                      "/usr/lib/postgresql/*/bin: install Debian's postgresql (scripts/deps.sh)%s",
                      skip ? "; skipped (JF_ALLOW_SKIP_PG=1)" : "");
}

int jft_pg_start(const char *db_name, jft_pg_t **ret_pg, jf_err_t *err)
{
    *ret_pg = NULL;
    if (!s_valid_name(db_name)) {
        return jf_err_set(err, -EINVAL, "jft_pg: database name '%.60s' is not [a-z0-9_]+", db_name);
    }
    jft_pg_t *pg = calloc(1, sizeof *pg);
    if (!pg) {
        return jf_err_set(err, -ENOMEM, "jft_pg: out of memory");
    }
    if (!s_find_bin(pg->bin)) {
        free(pg);
        return s_missing(err);
    }
    pg->as_postgres = geteuid() == 0;
    int rc = s_make_dir(pg, err);
    rc = rc ? rc : s_initdb(pg, err);
    rc = rc ? rc : s_start_server(pg, err);
    rc = rc ? rc : s_create_db(pg, db_name, err);
    if (rc != 0) {
        jft_pg_destroy(&pg);
        return rc;
    }
    (void) snprintf(pg->uri, sizeof pg->uri, "postgresql:///%s?host=%s", db_name, pg->dir);
    *ret_pg = pg;
    return 0;
}

const char *jft_pg_uri(const jft_pg_t *pg)
{
    return pg->uri;
}

const char *jft_pg_dir(const jft_pg_t *pg)
{
    return pg->dir;
}

void jft_pg_stop(jft_pg_t *pg)
{
    if (!pg || pg->server.pid <= 0) {
        return;
    }
    // SIGQUIT is PostgreSQL's immediate shutdown (pg_ctl stop -m immediate sends it).
    jft_proc_signal(&pg->server, SIGQUIT);
    int status = 0;
    if (jft_proc_wait(&pg->server, JFT_PG_STOP_TIMEOUT_MS * jft_timeout_scale(), &status) != 0) {
        jft_proc_signal(&pg->server, SIGKILL);
        (void) jft_proc_wait(&pg->server, JFT_PG_STOP_TIMEOUT_MS, &status);
    }
}

void jft_pg_destroy(jft_pg_t **pg_p)
{
    if (!pg_p || !*pg_p) {
        return;
    }
    jft_pg_t *pg = *pg_p;
    jft_pg_stop(pg);
    if (pg->dir[0]) {
        jft_tmpdir_remove(pg->dir);
    }
    free(pg);
    *pg_p = NULL;
}
