/* The agent spool's SQLite file: schema, durable appends and acks, loading after a restart.
 * Durability follows shared/reference/reliability-security.md §3.2: WAL with synchronous=FULL,
 * so a committed message survives a power cut, not only a process crash. */
#include "agent_spool_db.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_WHAT_TO_DO                                                                               \
    "; the agent will not start on it: move the file (and its -wal) aside to start with an "       \
    "empty spool, which gives up its unacknowledged results"

enum {
    S_APPEND,
    S_ADVANCE,
    S_DELETE_ROWS,
    S_DELETE_STREAM,
    S_READ,
    S_MARK,
    S_DELETE_TRAINER,
    S_N_STMTS
};

static const char *const s_sql[S_N_STMTS] = {
    [S_APPEND] = "INSERT INTO message(run, attempt, seq, final, body) VALUES (?1, ?2, ?3, ?4, ?5)",
    [S_ADVANCE] = "UPDATE stream SET next_seq = ?3, final = ?4 WHERE run = ?1 AND attempt = ?2",
    [S_DELETE_ROWS] = "DELETE FROM message WHERE run = ?1 AND attempt = ?2 AND seq <= ?3",
    [S_DELETE_STREAM] = "DELETE FROM stream WHERE run = ?1 AND attempt = ?2",
    [S_READ] = "SELECT body FROM message WHERE run = ?1 AND attempt = ?2 AND seq = ?3",
    [S_MARK] = "UPDATE trainer SET mark = ?3 WHERE run = ?1 AND attempt = ?2",
    [S_DELETE_TRAINER] = "DELETE FROM trainer WHERE run = ?1 AND attempt = ?2",
};

// Schema 2 adds the trainer table (one row per attempt whose trainer writes to a file the agent
// reads, for re-attaching after an agent restart). A schema 1 file is taken as it is: the table
// is added, and its streams have no trainer row, so they end as crashed as before.
// Rows of the message table carry their own final flag so that a reader of the file alone (an
// operator, a test) sees which message ends its stream.
static const char s_schema[] =
    "CREATE TABLE IF NOT EXISTS stream(run TEXT NOT NULL, attempt INTEGER NOT NULL,"
    " next_seq INTEGER NOT NULL, final INTEGER NOT NULL, PRIMARY KEY(run, attempt)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS message(run TEXT NOT NULL, attempt INTEGER NOT NULL,"
    " seq INTEGER NOT NULL, final INTEGER NOT NULL, body BLOB NOT NULL,"
    " PRIMARY KEY(run, attempt, seq)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS trainer(run TEXT NOT NULL, attempt INTEGER NOT NULL,"
    " pid INTEGER NOT NULL, start_ticks INTEGER NOT NULL, out_path TEXT NOT NULL,"
    " spec TEXT NOT NULL, power TEXT, mark TEXT NOT NULL, PRIMARY KEY(run, attempt))"
    " WITHOUT ROWID;"
    "PRAGMA user_version = 2;";

struct agent_spool_db {
    char path[4096];
    sqlite3 *db;                    // owned
    sqlite3_stmt *stmts[S_N_STMTS]; // owned
};

static int s_fail(agent_spool_db_t *self, int code, const char *what, jf_err_t *err)
{
    int sqlite_code = self->db ? sqlite3_errcode(self->db) : SQLITE_NOMEM;
    if (sqlite_code == SQLITE_BUSY || sqlite_code == SQLITE_LOCKED) {
        return jf_err_set(err, -EBUSY,
                          "spool '%s': in use by another process (%s); run one agent per "
                          "--state-dir",
                          self->path, sqlite3_errmsg(self->db));
    }
    return jf_err_set(err, code, "spool '%s': %s: %s%s", self->path, what,
                      self->db ? sqlite3_errmsg(self->db) : "out of memory", S_WHAT_TO_DO);
}

void agent_spool_db_destroy(agent_spool_db_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    agent_spool_db_t *self = *self_p;
    for (size_t i = 0; i < S_N_STMTS; i++) {
        sqlite3_finalize(self->stmts[i]);
    }
    (void)sqlite3_close(self->db); // statements are finalized: it cannot be busy
    free(self);
    *self_p = NULL;
}

static int s_exec(agent_spool_db_t *self, const char *sql, const char *what, jf_err_t *err)
{
    int rc = sqlite3_exec(self->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : s_fail(self, -EIO, what, err);
}

static int s_int_query(agent_spool_db_t *self, const char *sql, int64_t *ret_value, jf_err_t *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(self->db, sql, -1, &st, NULL);
    rc = rc == SQLITE_OK ? sqlite3_step(st) : rc;
    if (rc == SQLITE_ROW) {
        *ret_value = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : s_fail(self, -EIO, "cannot read it", err);
}

// A file with tables but no schema number is some other program's database.
static int s_check_schema(agent_spool_db_t *self, jf_err_t *err)
{
    int64_t version = 0, tables = 0;
    if (s_int_query(self, "PRAGMA user_version", &version, err) != 0 ||
        s_int_query(self, "SELECT count(*) FROM sqlite_schema", &tables, err) != 0) {
        return -EIO;
    }
    if (version > AGENT_SPOOL_DB_SCHEMA || (version == 0 && tables > 0)) {
        return jf_err_set(err, -EIO,
                          "spool '%s': schema %lld with %lld tables is not a spool of "
                          "this agent (schema %d)%s",
                          self->path, (long long)version, (long long)tables, AGENT_SPOOL_DB_SCHEMA,
                          S_WHAT_TO_DO);
    }
    return 0;
}

static int s_check_integrity(agent_spool_db_t *self, jf_err_t *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(self->db, "PRAGMA quick_check", -1, &st, NULL);
    rc = rc == SQLITE_OK ? sqlite3_step(st) : rc;
    const unsigned char *verdict = rc == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
    bool ok = verdict && strcmp((const char *)verdict, "ok") == 0;
    if (!ok && verdict) {
        jf_err_set(err, -EIO, "spool '%s': damaged (quick_check: %.120s)%s", self->path,
                   (const char *)verdict, S_WHAT_TO_DO);
    }
    sqlite3_finalize(st);
    if (!ok && !verdict) {
        return s_fail(self, -EIO, "cannot check it", err);
    }
    return ok ? 0 : -EIO;
}

// EXCLUSIVE locking keeps the file locked while this process lives (no second agent on it) and
// lets WAL work without the shared-memory file; the lock dies with the process, even on SIGKILL.
static int s_setup(agent_spool_db_t *self, jf_err_t *err)
{
    int rc = s_exec(self, "PRAGMA locking_mode = EXCLUSIVE", "cannot lock it", err);
    rc = rc ? rc : s_check_integrity(self, err);
    rc = rc ? rc : s_check_schema(self, err);
    rc = rc ? rc : s_exec(self, "PRAGMA journal_mode = WAL", "cannot switch to WAL", err);
    rc = rc ? rc : s_exec(self, "PRAGMA synchronous = FULL", "cannot set synchronous", err);
    rc = rc ? rc : s_exec(self, "BEGIN IMMEDIATE", "cannot lock it", err);
    rc = rc ? rc : s_exec(self, s_schema, "cannot create its tables", err);
    rc = rc ? rc : s_exec(self, "COMMIT", "cannot create its tables", err);
    for (size_t i = 0; rc == 0 && i < S_N_STMTS; i++) {
        if (sqlite3_prepare_v2(self->db, s_sql[i], -1, &self->stmts[i], NULL) != SQLITE_OK) {
            rc = s_fail(self, -EIO, "cannot prepare its statements", err);
        }
    }
    return rc;
}

agent_spool_db_t *agent_spool_db_new(const char *path, jf_err_t *err)
{
    agent_spool_db_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "spool: out of memory");
        return NULL;
    }
    (void)snprintf(self->path, sizeof self->path, "%s", path);
    int rc = sqlite3_open_v2(path, &self->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc != SQLITE_OK) {
        s_fail(self, rc == SQLITE_CANTOPEN ? -ENOENT : -EIO, "cannot open it", err);
        goto fail_destroy;
    }
    sqlite3_extended_result_codes(self->db, 0);
    if (s_setup(self, err) != 0) {
        goto fail_destroy;
    }
    return self;
fail_destroy:
    agent_spool_db_destroy(&self);
    return NULL;
}

const char *agent_spool_db_path(const agent_spool_db_t *self)
{
    return self->path;
}

static void s_bind_stream(sqlite3_stmt *st, const char *run, int64_t attempt)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    (void)sqlite3_bind_text(st, 1, run, -1, SQLITE_TRANSIENT); // cannot fail: index in range
    (void)sqlite3_bind_int64(st, 2, attempt);
}

static int s_step_done(agent_spool_db_t *self, sqlite3_stmt *st, const char *what, jf_err_t *err)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : s_fail(self, -EIO, what, err);
}

// Ends a write transaction: commits if everything before succeeded, else rolls back.
static int s_end(agent_spool_db_t *self, int rc, jf_err_t *err)
{
    if (rc == 0) {
        return s_exec(self, "COMMIT", "cannot commit", err);
    }
    (void)sqlite3_exec(self->db, "ROLLBACK", NULL, NULL, NULL); // the first failure is reported
    return rc;
}

int agent_spool_db_open_stream(agent_spool_db_t *self, const char *run, int64_t attempt,
                               jf_err_t *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(self->db,
                                "INSERT INTO stream(run, attempt, next_seq, final) "
                                "VALUES (?1, ?2, 1, 0) ON CONFLICT DO NOTHING",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(st);
        return s_fail(self, -EIO, "cannot add a stream", err);
    }
    s_bind_stream(st, run, attempt);
    rc = s_step_done(self, st, "cannot add a stream", err);
    sqlite3_finalize(st);
    return rc;
}

// Within the append's transaction: the trainer row's read mark (if the stream has a row) moves
// with the message.
static int s_set_mark(agent_spool_db_t *self, const agent_spool_db_stream_t *after,
                      const char *mark, jf_err_t *err)
{
    sqlite3_stmt *st = self->stmts[S_MARK];
    s_bind_stream(st, after->run, after->attempt);
    (void)sqlite3_bind_text(st, 3, mark, -1, SQLITE_TRANSIENT);
    // A stream without a trainer row has no mark to move: the message is stored all the same.
    return s_step_done(self, st, "cannot store the trainer's read mark", err);
}

int agent_spool_db_append(agent_spool_db_t *self, const agent_spool_db_stream_t *after,
                          const char *text, size_t len, const char *mark, jf_err_t *err)
{
    sqlite3_stmt *ins = self->stmts[S_APPEND], *adv = self->stmts[S_ADVANCE];
    int rc = s_exec(self, "BEGIN IMMEDIATE", "cannot start a transaction", err);
    if (rc != 0) {
        return rc;
    }
    s_bind_stream(ins, after->run, after->attempt);
    (void)sqlite3_bind_int64(ins, 3, after->next_seq - 1);
    (void)sqlite3_bind_int(ins, 4, after->final);
    if (sqlite3_bind_blob64(ins, 5, text, len, SQLITE_STATIC) != SQLITE_OK) {
        rc = s_fail(self, -EIO, "cannot bind a message", err);
    }
    rc = rc ? rc : s_step_done(self, ins, "cannot store a message", err);
    sqlite3_clear_bindings(ins); // the blob is the caller's: drop the reference
    s_bind_stream(adv, after->run, after->attempt);
    (void)sqlite3_bind_int64(adv, 3, after->next_seq);
    (void)sqlite3_bind_int(adv, 4, after->final);
    rc = rc ? rc : s_step_done(self, adv, "cannot advance a stream", err);
    if (rc == 0 && sqlite3_changes(self->db) != 1) {
        rc = jf_err_set(err, -EIO, "spool '%s': stream of run %s attempt %lld is not in the file",
                        self->path, after->run, (long long)after->attempt);
    }
    if (rc == 0 && mark) {
        rc = s_set_mark(self, after, mark, err);
    }
    return s_end(self, rc, err);
}

int agent_spool_db_ack(agent_spool_db_t *self, const char *run, int64_t attempt, int64_t seq,
                       bool forget, jf_err_t *err)
{
    int rc = s_exec(self, "BEGIN IMMEDIATE", "cannot start a transaction", err);
    if (rc != 0) {
        return rc;
    }
    s_bind_stream(self->stmts[S_DELETE_ROWS], run, attempt);
    (void)sqlite3_bind_int64(self->stmts[S_DELETE_ROWS], 3, seq);
    rc = s_step_done(self, self->stmts[S_DELETE_ROWS], "cannot delete acknowledged rows", err);
    if (rc == 0 && forget) {
        s_bind_stream(self->stmts[S_DELETE_STREAM], run, attempt);
        rc = s_step_done(self, self->stmts[S_DELETE_STREAM], "cannot delete a stream", err);
        s_bind_stream(self->stmts[S_DELETE_TRAINER], run, attempt);
        rc = rc ? rc
                : s_step_done(self, self->stmts[S_DELETE_TRAINER], "cannot delete a trainer row",
                              err);
    }
    return s_end(self, rc, err);
}

int agent_spool_db_read(agent_spool_db_t *self, const char *run, int64_t attempt, int64_t seq,
                        char **ret_text, size_t *ret_len, jf_err_t *err)
{
    sqlite3_stmt *st = self->stmts[S_READ];
    s_bind_stream(st, run, attempt);
    (void)sqlite3_bind_int64(st, 3, seq);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_reset(st);
        return rc == SQLITE_DONE ? jf_err_set(err, -ENOENT,
                                              "spool '%s': run %s attempt %lld has "
                                              "no row of seq %lld",
                                              self->path, run, (long long)attempt, (long long)seq)
                                 : s_fail(self, -EIO, "cannot read a message", err);
    }
    size_t len = (size_t)sqlite3_column_bytes(st, 0);
    const void *body = sqlite3_column_blob(st, 0);
    char *text = malloc(len + 1);
    if (text && len > 0) {
        memcpy(text, body, len);
    }
    if (text) {
        text[len] = '\0';
    }
    sqlite3_reset(st);
    if (!text) {
        return jf_err_set(err, -ENOMEM, "spool: out of memory");
    }
    *ret_text = text;
    *ret_len = len;
    return 0;
}

static int s_damaged(agent_spool_db_t *self, const agent_spool_db_stream_t *s, const char *why,
                     int64_t seq, jf_err_t *err)
{
    return jf_err_set(err, -EIO, "spool '%s': run %s attempt %lld: %s (seq %lld)%s", self->path,
                      s->run, (long long)s->attempt, why, (long long)seq, S_WHAT_TO_DO);
}

// Hands the rows of one stream to the visitor, checking they make a whole stream.
static int s_load_rows(agent_spool_db_t *self, sqlite3_stmt *st, const agent_spool_db_stream_t *s,
                       const agent_spool_db_visitor_t *v, jf_err_t *err)
{
    s_bind_stream(st, s->run, s->attempt);
    int64_t prev = -1;
    bool prev_final = false;
    int rc = 0, step = 0;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        agent_spool_db_row_t row = {.seq = sqlite3_column_int64(st, 0),
                                    .len = (size_t)sqlite3_column_int64(st, 1)};
        if (row.seq < 1 || (prev >= 0 && row.seq != prev + 1) || prev_final) {
            rc = s_damaged(self, s, "rows are not one consecutive stream", row.seq, err);
        }
        prev = row.seq;
        prev_final = sqlite3_column_int(st, 2) != 0;
        rc = rc ? rc : v->on_row(&row, v->arg, err);
    }
    sqlite3_reset(st);
    if (rc == 0 && step != SQLITE_DONE) {
        return s_fail(self, -EIO, "cannot read its rows", err);
    }
    if (rc == 0 && prev >= 0 && (prev != s->next_seq - 1 || prev_final != s->final)) {
        rc = s_damaged(self, s, "the last row does not match the stream's next seq or end", prev,
                       err);
    }
    return rc;
}

static int s_load_streams(agent_spool_db_t *self, sqlite3_stmt *streams, sqlite3_stmt *rows,
                          const agent_spool_db_visitor_t *v, jf_err_t *err)
{
    int rc = 0, step = 0;
    while (rc == 0 && (step = sqlite3_step(streams)) == SQLITE_ROW) {
        agent_spool_db_stream_t s = {.attempt = sqlite3_column_int64(streams, 1),
                                     .next_seq = sqlite3_column_int64(streams, 2),
                                     .final = sqlite3_column_int(streams, 3) != 0};
        const unsigned char *run = sqlite3_column_text(streams, 0);
        (void)snprintf(s.run, sizeof s.run, "%s", run ? (const char *)run : "");
        if (!run || strlen((const char *)run) >= sizeof s.run || s.next_seq < 1) {
            rc = s_damaged(self, &s, "invalid stream row", s.next_seq, err);
        }
        rc = rc ? rc : v->on_stream(&s, v->arg, err);
        rc = rc ? rc : s_load_rows(self, rows, &s, v, err);
    }
    if (rc == 0 && step != SQLITE_DONE) {
        rc = s_fail(self, -EIO, "cannot read its streams", err);
    }
    return rc;
}

int agent_spool_db_load(agent_spool_db_t *self, const agent_spool_db_visitor_t *v, jf_err_t *err)
{
    sqlite3_stmt *streams = NULL, *rows = NULL;
    int rc = sqlite3_prepare_v2(self->db,
                                "SELECT run, attempt, next_seq, final FROM stream "
                                "ORDER BY run, attempt",
                                -1, &streams, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_prepare_v2(self->db,
                                "SELECT seq, length(body), final FROM message "
                                "WHERE run = ?1 AND attempt = ?2 ORDER BY seq",
                                -1, &rows, NULL);
    }
    int64_t orphans = 0;
    rc = rc == SQLITE_OK ? s_int_query(self,
                                       "SELECT count(*) FROM message AS m WHERE NOT EXISTS "
                                       "(SELECT 1 FROM stream AS s WHERE s.run = m.run "
                                       "AND s.attempt = m.attempt)",
                                       &orphans, err)
                         : s_fail(self, -EIO, "cannot read it", err);
    if (rc == 0 && orphans > 0) {
        rc = jf_err_set(err, -EIO, "spool '%s': %lld rows belong to no stream%s", self->path,
                        (long long)orphans, S_WHAT_TO_DO);
    }
    rc = rc ? rc : s_load_streams(self, streams, rows, v, err);
    sqlite3_finalize(streams);
    sqlite3_finalize(rows);
    return rc;
}

int agent_spool_db_put_trainer(agent_spool_db_t *self, const char *run, int64_t attempt,
                               const agent_spool_db_trainer_t *t, jf_err_t *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(self->db,
                                "INSERT OR REPLACE INTO trainer(run, attempt, pid, start_ticks, "
                                "out_path, spec, power, mark) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                                "?8)",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(st);
        return s_fail(self, -EIO, "cannot add a trainer row", err);
    }
    s_bind_stream(st, run, attempt);
    (void)sqlite3_bind_int64(st, 3, t->pid);
    (void)sqlite3_bind_int64(st, 4, t->start_ticks);
    (void)sqlite3_bind_text(st, 5, t->out_path, -1, SQLITE_TRANSIENT);
    (void)sqlite3_bind_text(st, 6, t->spec, -1, SQLITE_TRANSIENT);
    (void)sqlite3_bind_text(st, 7, t->power, -1, SQLITE_TRANSIENT); // NULL binds NULL
    (void)sqlite3_bind_text(st, 8, t->mark, -1, SQLITE_TRANSIENT);
    rc = s_step_done(self, st, "cannot add a trainer row", err);
    sqlite3_finalize(st);
    return rc;
}

static char *s_column_dup(sqlite3_stmt *st, int col)
{
    const unsigned char *v = sqlite3_column_text(st, col);
    return v ? strdup((const char *)v) : NULL;
}

int agent_spool_db_trainer(agent_spool_db_t *self, const char *run, int64_t attempt,
                           agent_spool_db_trainer_t *ret_trainer, jf_err_t *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(self->db,
                                "SELECT pid, start_ticks, out_path, spec, power, mark FROM trainer "
                                "WHERE run = ?1 AND attempt = ?2",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(st);
        return s_fail(self, -EIO, "cannot read a trainer row", err);
    }
    s_bind_stream(st, run, attempt);
    rc = sqlite3_step(st);
    agent_spool_db_trainer_t t = {0};
    if (rc == SQLITE_ROW) {
        t.pid = sqlite3_column_int64(st, 0);
        t.start_ticks = sqlite3_column_int64(st, 1);
        t.out_path = s_column_dup(st, 2);
        t.spec = s_column_dup(st, 3);
        t.power = s_column_dup(st, 4);
        t.mark = s_column_dup(st, 5);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE) {
        return -ENOENT;
    }
    if (rc != SQLITE_ROW || !t.out_path || !t.spec || !t.mark) {
        agent_spool_db_trainer_fini(&t);
        return rc == SQLITE_ROW ? jf_err_set(err, -EIO, "spool '%s': run %s attempt %lld: "
                                                        "incomplete trainer row",
                                             self->path, run, (long long)attempt)
                                : s_fail(self, -EIO, "cannot read a trainer row", err);
    }
    *ret_trainer = t;
    return 0;
}

void agent_spool_db_trainer_fini(agent_spool_db_trainer_t *t)
{
    free(t->out_path);
    free(t->spec);
    free(t->power);
    free(t->mark);
    *t = (agent_spool_db_trainer_t){0};
}
