/* Store: connection, transactions, epoch, events and boards. Runs and sweeps are in
 * coord_store_runs.c, records in coord_store_records.c, CLI tables in coord_store_query.c, the
 * statement cache and typed binds in coord_store_stmt.c. */
#include "coord_store_internal.h"
#include "coord_telemetry_pack.h"

#include "jf_units.h"

#include <errno.h>
#include <sqlite3.h> // the result codes coord_store_corrupt_hint reads
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
    bool corrupt = coord_db_errclass(self->db) == COORD_DB_ERR_CORRUPT;
    return jf_err_set(err, corrupt ? -EBADMSG : -EIO, "%s: %s: %s%s", self->path, what,
                      coord_db_errmsg(self->db), corrupt ? COORD_STORE_CORRUPT_HINT : "");
}

// The connection's settings for the coordinator's writes (the busy timeout is coord_db's).
// PostgreSQL: see coord_db_pg (these PRAGMAs are SQLite's).
static int s_pragmas(coord_store_t *self, jf_err_t *err)
{
    static const char *const rw =
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;";
    if (!self->read_only && coord_db_kind(self->db) == COORD_DB_SQLITE &&
        coord_db_exec_script(self->db, rw, NULL) != 0) {
        return coord_store_fail(self, err, "setting up the store");
    }
    return 0;
}

// Registers the SQL function that unpacks a stored telemetry sample (the telemetry view and the
// export call it). Not on PostgreSQL, which stores samples as JSON text (coord_store_telemetry.c)
// and whose compat script defines the function (coord_db_pg_compat.c).
static int s_register_functions(coord_store_t *self, jf_err_t *err)
{
    sqlite3 *db = coord_db_sqlite(self->db);
    if (db && coord_tpack_sql_register(db) != 0) {
        return jf_err_set(err, -EIO, "%s: registering a SQL function: %s", self->path,
                          sqlite3_errmsg(db));
    }
    return 0;
}

int coord_store_data_version(coord_store_t *self, int64_t *ret_version, jf_err_t *err)
{
    // PostgreSQL: see coord_db_pg (PRAGMA data_version is SQLite's).
    return coord_store_scalar(self, "PRAGMA data_version", COORD_NO_BINDS, ret_version, err);
}

// The CLI's reader: a store of another schema is refused, and a damaged one is called corrupt
// rather than "not a jetfleet store", which would send the user looking in the wrong place.
static int s_check_readable(coord_store_t *self, jf_err_t *err)
{
    int64_t version = -1;
    int rc = coord_store_user_version(self, &version, err);
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
    self->read_only = read_only;
    if (coord_db_open(path, read_only, &self->db, err) != 0) {
        goto fail_destroy;
    }
    // For messages: the path, or a PostgreSQL URI without its password.
    (void) snprintf(self->path, sizeof self->path, "%s", coord_db_target(self->db));
    if (s_pragmas(self, err) != 0) {
        goto fail_destroy;
    }
    if (s_register_functions(self, err) != 0) {
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
    coord_store_tcache_clear(self, true);
    coord_store_stmts_finalize(self); // before the connection closes
    coord_db_close(&self->db);
    free(self);
    *self_p = NULL;
}

int coord_store_begin(coord_store_t *self, jf_err_t *err)
{
    int rc = coord_store_exec(self, "BEGIN IMMEDIATE", COORD_NO_BINDS, err);
    int64_t version = 0;
    // Inside the transaction no other connection can write, so a version read here holds
    // until COMMIT: a change means another writer (jetfleet store prune) committed since.
    rc = rc ? rc : coord_store_data_version(self, &version, err);
    if (rc == 0 && version != self->data_version) {
        coord_store_tcache_clear(self, false);
        self->data_version = version;
    }
    return rc;
}

int coord_store_commit(coord_store_t *self, jf_err_t *err)
{
    return coord_store_exec(self, "COMMIT", COORD_NO_BINDS, err);
}

void coord_store_rollback(coord_store_t *self)
{
    coord_store_tcache_clear(self, false); // it may hold rows of the transaction undone
    if (coord_db_in_transaction(self->db)) {
        (void)coord_store_exec(self, "ROLLBACK", COORD_NO_BINDS,
                               NULL); // nothing more to do if it fails
    }
}

bool coord_store_in_transaction(coord_store_t *self)
{
    return coord_db_in_transaction(self->db);
}

int coord_store_bump_epoch(coord_store_t *self, int64_t *ret_epoch, jf_err_t *err)
{
    int rc =
        coord_store_exec(self, "UPDATE meta SET value = value + 1 WHERE key = 'coordinator_epoch'",
                         COORD_NO_BINDS, err);
    if (rc == 0) {
        rc = coord_store_scalar(self, "SELECT value FROM meta WHERE key = 'coordinator_epoch'",
                                COORD_NO_BINDS, ret_epoch, err);
    }
    return rc;
}

int coord_store_event(coord_store_t *self, const char *kind, const char *board, const char *run,
                      int64_t attempt, const char *detail, jf_err_t *err)
{
    return coord_store_exec(self,
                            "INSERT INTO events(t_us, kind, board, run, attempt, detail) "
                            "VALUES(?, ?, ?, ?, ?, ?)",
                            COORD_BINDS(coord_int(jf_clock_wall_us()), coord_text(kind),
                                        coord_text(board), coord_text(run), coord_int(attempt),
                                        coord_text(detail)),
                            err);
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
        COORD_BINDS(coord_text(name), coord_text(type), coord_text(platform),
                    coord_text(facts_json), coord_int(now)),
        err);
}

int coord_store_board_facts(coord_store_t *self, const char *name, char **ret_json, jf_err_t *err)
{
    *ret_json = NULL;
    coord_db_stmt_t *st = coord_store_stmt(self, "SELECT facts FROM boards WHERE name = ?",
                                           COORD_BINDS(coord_text(name)), err);
    if (!st) {
        return -EIO;
    }
    int step = coord_db_step(st);
    const char *t = step == COORD_DB_ROW ? coord_db_col_text(st, 0) : NULL;
    int rc = step == COORD_DB_ROW || step == COORD_DB_DONE
                 ? 0
                 : coord_store_fail(self, err, "reading a board's facts");
    *ret_json = rc == 0 && t ? strdup(t) : NULL;
    if (rc == 0 && t && !*ret_json) {
        rc = jf_err_set(err, -ENOMEM, "out of memory");
    }
    coord_db_reset(st);
    return rc;
}

int coord_store_board_set_online(coord_store_t *self, const char *name, bool online,
                                 jf_err_t *err)
{
    return coord_store_exec(
        self, "UPDATE boards SET online = ?, last_change_us = ? WHERE name = ?",
        COORD_BINDS(coord_int((int64_t)online), coord_int(jf_clock_wall_us()), coord_text(name)),
        err);
}

int coord_store_boards_all_offline(coord_store_t *self, jf_err_t *err)
{
    return coord_store_exec(self, "UPDATE boards SET online = 0", COORD_NO_BINDS, err);
}

bool coord_store_is_postgres(const coord_store_t *self)
{
    return coord_db_kind(self->db) == COORD_DB_POSTGRES;
}

const char *coord_store_target(const coord_store_t *self)
{
    return self->path;
}

// The advisory lock class of board claims (the first of PostgreSQL's two int4 keys; the second
// is the name's hashtext). Two names with one hash would refuse each other: the message says so.
#define S_BOARD_LOCK_CLASS 1246979074

static int s_claim_board(coord_store_t *self, const char *name, jf_err_t *err)
{
    int64_t got = 0;
    int rc = coord_store_scalar(
        self, "SELECT count(*) FROM (SELECT pg_advisory_lock(?, hashtext(?))) AS claim",
        COORD_BINDS(coord_int(S_BOARD_LOCK_CLASS), coord_text(name)), &got, err);
    if (rc != 0 && coord_db_errclass(self->db) == COORD_DB_ERR_BUSY) {
        return jf_err_set(err, -EBUSY,
                          "%s: board '%.200s' is claimed by another coordinator on this database "
                          "(board names must be unique among the coordinators that share a "
                          "store, docs/store.md §10; a name with the same hash would also clash)",
                          self->path, name);
    }
    return rc ? rc : coord_store_board_set_online(self, name, false, err);
}

// Sets the session's lock_timeout (PostgreSQL's text form: "3s", "0" for none).
static int s_lock_timeout(coord_store_t *self, const char *value, jf_err_t *err)
{
    int64_t len = 0;
    return coord_store_scalar(self, "SELECT length(set_config('lock_timeout', ?, false))",
                              COORD_BINDS(coord_text(value)), &len, err);
}

int coord_store_claim_boards(coord_store_t *self, const char *const *names, size_t n, jf_err_t *err)
{
    if (!coord_store_is_postgres(self)) {
        return coord_store_boards_all_offline(self, err);
    }
    // A claim waits a little for its holder to go: a coordinator restarted at once may start
    // before the server has ended its predecessor's session.
    int rc = s_lock_timeout(self, COORD_CLAIM_WAIT, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = s_claim_board(self, names[i], err);
    }
    if (rc == 0) {
        rc = s_lock_timeout(self, "0", err);
    }
    return rc;
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
