/* Store: connection, statement cache, transactions, epoch, events and boards. Runs and sweeps
 * are in coord_store_runs.c, records in coord_store_records.c, CLI tables in coord_store_query.c. */
#include "coord_store_internal.h"

#include "jf_units.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *coord_store_corrupt_hint(int sqlite_rc)
{
    int primary = sqlite_rc & 0xff; // extended codes keep the primary code in the low byte
    return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB ? COORD_STORE_CORRUPT_HINT : "";
}

int coord_store_fail(coord_store_t *self, jf_err_t *err, const char *what)
{
    int code = sqlite3_extended_errcode(self->db);
    return jf_err_set(err, coord_store_corrupt_hint(code)[0] ? -EBADMSG : -EIO, "%s: %s: %s%s",
                      self->path, what, sqlite3_errmsg(self->db), coord_store_corrupt_hint(code));
}

static int s_bind(coord_store_t *self, sqlite3_stmt *st, const char *fmt, va_list ap,
                  jf_err_t *err)
{
    int rc = SQLITE_OK;
    for (int i = 0; fmt[i] && rc == SQLITE_OK; i++) {
        switch (fmt[i]) {
        case 't': {
            const char *s = va_arg(ap, const char *);
            rc = s ? sqlite3_bind_text(st, i + 1, s, -1, SQLITE_TRANSIENT)
                   : sqlite3_bind_null(st, i + 1);
            break;
        }
        case 'i':
            rc = sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
            break;
        case 'd':
            rc = sqlite3_bind_double(st, i + 1, va_arg(ap, double));
            break;
        default:
            rc = SQLITE_MISUSE;
            break;
        }
    }
    return rc == SQLITE_OK ? 0 : coord_store_fail(self, err, "binding a parameter");
}

static sqlite3_stmt *s_cached(coord_store_t *self, const char *sql, jf_err_t *err)
{
    for (size_t i = 0; i < self->n_stmts; i++) {
        if (self->stmts[i].sql == sql) {
            sqlite3_stmt *st = self->stmts[i].stmt;
            (void) sqlite3_reset(st); // its error was reported by the step that failed
            (void) sqlite3_clear_bindings(st);
            return st;
        }
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v3(self->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
        coord_store_fail(self, err, "preparing a statement");
        return NULL;
    }
    if (self->n_stmts < COORD_STMT_CACHE_MAX) {
        self->stmts[self->n_stmts++] = (coord_stmt_slot_t){.sql = sql, .stmt = st};
        return st;
    }
    sqlite3_finalize(st);
    jf_err_set(err, -ENOMEM, "store: statement cache full (%d)", COORD_STMT_CACHE_MAX);
    return NULL;
}

static sqlite3_stmt *s_vstmt(coord_store_t *self, const char *sql, jf_err_t *err,
                             const char *fmt, va_list ap)
{
    sqlite3_stmt *st = s_cached(self, sql, err);
    if (st && s_bind(self, st, fmt, ap, err) != 0) {
        return NULL;
    }
    return st;
}

sqlite3_stmt *coord_store_stmt(coord_store_t *self, const char *sql, jf_err_t *err,
                               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sqlite3_stmt *st = s_vstmt(self, sql, err, fmt, ap);
    va_end(ap);
    return st;
}

int coord_store_exec(coord_store_t *self, const char *sql, jf_err_t *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sqlite3_stmt *st = s_vstmt(self, sql, err, fmt, ap);
    va_end(ap);
    if (!st) {
        return -EIO;
    }
    int rc = sqlite3_step(st);
    while (rc == SQLITE_ROW) {
        rc = sqlite3_step(st);
    }
    int ret = rc == SQLITE_DONE ? 0 : coord_store_fail(self, err, "executing a statement");
    (void) sqlite3_reset(st);
    return ret;
}

int coord_store_scalar(coord_store_t *self, const char *sql, int64_t *ret_value, jf_err_t *err,
                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sqlite3_stmt *st = s_vstmt(self, sql, err, fmt, ap);
    va_end(ap);
    if (!st) {
        return -EIO;
    }
    int rc = sqlite3_step(st);
    int ret = 0;
    if (rc == SQLITE_ROW) {
        *ret_value = sqlite3_column_int64(st, 0);
    } else if (rc == SQLITE_DONE) {
        ret = -ENOENT;
    } else {
        ret = coord_store_fail(self, err, "querying");
    }
    (void) sqlite3_reset(st);
    return ret;
}

static int s_pragmas(coord_store_t *self, jf_err_t *err)
{
    static const char *const rw =
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;";
    char *msg = NULL;
    (void) sqlite3_busy_timeout(self->db, COORD_BUSY_TIMEOUT_MS);
    if (!self->read_only && sqlite3_exec(self->db, rw, NULL, NULL, &msg) != SQLITE_OK) {
        const char *hint = coord_store_corrupt_hint(sqlite3_extended_errcode(self->db));
        int code = hint[0] ? -EBADMSG : -EIO;
        jf_err_set(err, code, "%s: setting up the store: %s%s", self->path, msg, hint);
        sqlite3_free(msg);
        return code;
    }
    return 0;
}

// The CLI's reader: a store of another schema is refused, and a damaged one is called corrupt
// rather than "not a jetfleet store", which would send the user looking in the wrong place.
static int s_check_readable(coord_store_t *self, jf_err_t *err)
{
    int64_t version = -1;
    int rc = coord_store_scalar(self, "PRAGMA user_version", &version, err, "");
    if (rc != 0) {
        return rc == -ENOENT ? jf_err_set(err, -EPROTO, "%s: no schema version", self->path)
                             : jf_err_prefix(err, "reading the schema version");
    }
    if (version == 0) {
        return jf_err_set(err, -EPROTO,
                          "%s: empty, not a jetfleet store (has the coordinator run with this "
                          "fleet.yaml?)",
                          self->path);
    }
    if (version != coord_store_schema_latest()) {
        return jf_err_set(err, -EPROTO, "%s: store schema version %lld, this jetfleet reads %d",
                          self->path, (long long)version, coord_store_schema_latest());
    }
    return 0;
}

coord_store_t *coord_store_open(const char *path, bool read_only, jf_err_t *err)
{
    coord_store_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "store: out of memory");
        return NULL;
    }
    (void) snprintf(self->path, sizeof self->path, "%s", path);
    self->read_only = read_only;
    int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    if (sqlite3_open_v2(path, &self->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        jf_err_set(err, -EIO, "%s: cannot open the store: %s", path,
                   self->db ? sqlite3_errmsg(self->db) : "out of memory");
        goto fail_destroy;
    }
    if (s_pragmas(self, err) != 0) {
        goto fail_destroy;
    }
    if (!read_only && coord_store_migrate(self, err) != 0) {
        goto fail_destroy;
    }
    if (read_only && s_check_readable(self, err) != 0) {
        goto fail_destroy;
    }
    return self;
fail_destroy:
    coord_store_destroy(&self);
    return NULL;
}

void coord_store_destroy(coord_store_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    coord_store_t *self = *self_p;
    for (size_t i = 0; i < self->n_stmts; i++) {
        sqlite3_finalize(self->stmts[i].stmt);
    }
    if (self->db && sqlite3_close(self->db) != SQLITE_OK) {
        // Only unfinalized statements can cause this, and all are finalized above.
        (void) sqlite3_close_v2(self->db);
    }
    free(self);
    *self_p = NULL;
}

int coord_store_begin(coord_store_t *self, jf_err_t *err)
{
    return coord_store_exec(self, "BEGIN IMMEDIATE", err, "");
}

int coord_store_commit(coord_store_t *self, jf_err_t *err)
{
    return coord_store_exec(self, "COMMIT", err, "");
}

void coord_store_rollback(coord_store_t *self)
{
    if (!sqlite3_get_autocommit(self->db)) {
        (void) coord_store_exec(self, "ROLLBACK", NULL, ""); // nothing more to do if it fails
    }
}

bool coord_store_in_transaction(coord_store_t *self)
{
    return !sqlite3_get_autocommit(self->db);
}

int coord_store_bump_epoch(coord_store_t *self, int64_t *ret_epoch, jf_err_t *err)
{
    int rc = coord_store_exec(
        self, "UPDATE meta SET value = value + 1 WHERE key = 'coordinator_epoch'", err, "");
    if (rc == 0) {
        rc = coord_store_scalar(self, "SELECT value FROM meta WHERE key = 'coordinator_epoch'",
                                ret_epoch, err, "");
    }
    return rc;
}

int coord_store_event(coord_store_t *self, const char *kind, const char *board, const char *run,
                      int64_t attempt, const char *detail, jf_err_t *err)
{
    return coord_store_exec(self,
                            "INSERT INTO events(t_us, kind, board, run, attempt, detail) "
                            "VALUES(?, ?, ?, ?, ?, ?)",
                            err, "itttit", jf_clock_wall_us(), kind, board, run, attempt, detail);
}

int coord_store_board_hello(coord_store_t *self, const char *name, const char *type,
                            const char *platform, const char *facts_json, jf_err_t *err)
{
    int64_t now = jf_clock_wall_us();
    return coord_store_exec(
        self,
        "INSERT INTO boards(name, type, platform, facts, online, first_seen_us, last_change_us) "
        "VALUES(?1, ?2, ?3, ?4, 1, ?5, ?5) ON CONFLICT(name) DO UPDATE SET type = ?2, "
        "platform = ?3, facts = ?4, online = 1, last_change_us = ?5",
        err, "tttti", name, type, platform, facts_json, now);
}

int coord_store_board_set_online(coord_store_t *self, const char *name, bool online,
                                 jf_err_t *err)
{
    return coord_store_exec(self,
                            "UPDATE boards SET online = ?, last_change_us = ? WHERE name = ?",
                            err, "iit", (int64_t) online, jf_clock_wall_us(), name);
}

int coord_store_boards_all_offline(coord_store_t *self, jf_err_t *err)
{
    return coord_store_exec(self, "UPDATE boards SET online = 0", err, "");
}

static const char *const s_state_names[COORD_RUN_STATE_COUNT] = {"pending", "assigned", "running",
                                                                 "done", "failed"};

const char *coord_run_state_name(coord_run_state_t state)
{
    return (unsigned) state < COORD_RUN_STATE_COUNT ? s_state_names[state] : "?";
}

bool coord_run_state_parse(const char *name, coord_run_state_t *ret_state)
{
    for (int i = 0; name && i < COORD_RUN_STATE_COUNT; i++) {
        if (strcmp(name, s_state_names[i]) == 0) {
            *ret_state = (coord_run_state_t) i;
            return true;
        }
    }
    return false;
}
