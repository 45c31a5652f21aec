/* Store administration (coord_store_admin.h): integrity check, online backup and salvage of a
 * store file. Reads the source through its own read-only connection and never writes to it; the
 * tables salvage copies are listed here by name (docs/store.md, "Check, backup, salvage").
 * SQLite only: these use SQLite's own tools (integrity_check, the online backup API, ATTACH)
 * through coord_db_sqlite(), and refuse a PostgreSQL store with a clear error. */
#include "coord_store_admin.h"

#include "coord_store_internal.h"

#include <sqlite3.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define S_BACKUP_BUSY_TRIES 100 // x S_BACKUP_BUSY_MS: how long a busy source is waited for
#define S_BACKUP_BUSY_MS    50

static bool s_is_damage(int sqlite_rc)
{
    return coord_store_corrupt_hint(sqlite_rc)[0] != '\0';
}

// what (e.g. "jetfleet store check") on a PostgreSQL store: refused, never skipped. The URI is
// not printed (it may hold a password).
static int s_not_on_postgres(const char *what, jf_err_t *err)
{
    return jf_err_set(err, -ENOTSUP,
                      "%s is not supported on a PostgreSQL store (it uses SQLite's own tools); "
                      "use PostgreSQL's (pg_dump, pg_amcheck)",
                      what);
}

// The store file at path, read-only (coord_db_open: the store's own flags and busy timeout).
static int s_open_ro(const char *path, coord_db_t **ret_db, jf_err_t *err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        return jf_err_set(err, -errno, "%s: %s", path, strerror(errno));
    }
    return coord_db_open(path, true, ret_db, err);
}

// Creates out_path, which must not exist: a backup or salvage never overwrites a file.
static int s_create_new(const char *out_path, jf_err_t *err)
{
    int fd = open(out_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        int code = -errno;
        return jf_err_set(err, code, "%s: %s%s", out_path, strerror(errno),
                          code == -EEXIST ? " (not overwriting; name a new file)" : "");
    }
    (void)close(fd); // nothing was written through it
    return 0;
}

static void s_remove_db(const char *path)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    char name[PATH_MAX + 16];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        (void)snprintf(name, sizeof name, "%s%s", path, suffixes[i]);
        (void)unlink(name); // best effort: most of these do not exist
    }
}

static bool s_int(sqlite3 *db, const char *sql, int64_t *ret_value)
{
    sqlite3_stmt *st = NULL;
    bool ok = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
              sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER;
    if (ok) {
        *ret_value = sqlite3_column_int64(st, 0);
    }
    (void)sqlite3_finalize(st);
    return ok;
}

static void s_keep_problem(coord_store_check_report_t *r, const char *line)
{
    if (r->n_kept < COORD_CHECK_PROBLEMS_MAX) {
        char *kept = r->problem[r->n_kept++];
        (void)snprintf(kept, COORD_CHECK_PROBLEM_LEN, "%s", line);
        for (char *nl = strchr(kept, '\n'); nl; nl = strchr(nl, '\n')) {
            *nl = ' '; // SQLite puts several findings in one row; one line each in a report
        }
    }
    r->problems++;
}

static int s_integrity(sqlite3 *db, const char *path, bool quick, coord_store_check_report_t *r,
                       jf_err_t *err)
{
    sqlite3_stmt *st = NULL;
    const char *sql = quick ? "PRAGMA quick_check" : "PRAGMA integrity_check";
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    for (rc = rc == SQLITE_OK ? sqlite3_step(st) : rc; rc == SQLITE_ROW; rc = sqlite3_step(st)) {
        const char *line = (const char *)sqlite3_column_text(st, 0);
        if (line && strcmp(line, "ok") != 0) {
            s_keep_problem(r, line);
        }
    }
    int ret = 0;
    if (rc != SQLITE_DONE && s_is_damage(sqlite3_extended_errcode(db))) {
        s_keep_problem(r, sqlite3_errmsg(db)); // too damaged for the check to run at all
    } else if (rc != SQLITE_DONE) {
        ret = jf_err_set(err, -EIO, "%s: %s: %s", path, sql, sqlite3_errmsg(db));
    }
    (void)sqlite3_finalize(st);
    return ret;
}

// What can still be read of the store's identity; each figure stays unknown (-1) if not.
static void s_facts(sqlite3 *db, coord_store_check_report_t *r)
{
    int64_t v = -1;
    r->schema_version = s_int(db, "PRAGMA user_version", &v) ? (int)v : -1;
    r->has_store_id = s_int(db, "SELECT value FROM meta WHERE key = 'store_id'", &r->store_id);
    r->runs = -1;
    (void)s_int(db, "SELECT count(*) FROM runs", &r->runs); // stays -1 when unreadable
}

int coord_store_check(const char *path, bool quick, coord_store_check_report_t *ret_report,
                      jf_err_t *err)
{
    if (coord_db_is_postgres_uri(path)) {
        return s_not_on_postgres("jetfleet store check", err);
    }
    coord_db_t *db = NULL;
    int rc = s_open_ro(path, &db, err);
    if (rc != 0) {
        return rc;
    }
    *ret_report = (coord_store_check_report_t){0};
    rc = s_integrity(coord_db_sqlite(db), path, quick, ret_report, err);
    s_facts(coord_db_sqlite(db), ret_report);
    coord_db_close(&db); // read-only: nothing to lose
    return rc;
}

int coord_store_check_open(coord_store_t *self, bool quick, coord_store_check_report_t *ret_report,
                           jf_err_t *err)
{
    *ret_report = (coord_store_check_report_t){0};
    sqlite3 *db = coord_db_sqlite(self->db);
    if (!db) {
        return s_not_on_postgres("the store's integrity check", err);
    }
    int rc = s_integrity(db, self->path, quick, ret_report, err);
    s_facts(db, ret_report);
    return rc;
}

// One backup step over the whole file: one read transaction on the source, so one snapshot.
static int s_backup_copy(sqlite3 *src, sqlite3 *dst, const char *out_path, jf_err_t *err)
{
    sqlite3_backup *b = sqlite3_backup_init(dst, "main", src, "main");
    if (!b) {
        return jf_err_set(err, -EIO, "%s: cannot start the backup: %s", out_path,
                          sqlite3_errmsg(dst));
    }
    int rc = sqlite3_backup_step(b, -1);
    for (int i = 0; (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && i < S_BACKUP_BUSY_TRIES; i++) {
        (void)sqlite3_sleep(S_BACKUP_BUSY_MS); // the writer holds a lock for a moment
        rc = sqlite3_backup_step(b, -1);
    }
    (void)sqlite3_backup_finish(b); // its result repeats the step's
    if (rc != SQLITE_DONE) {
        int code = sqlite3_extended_errcode(src);
        return jf_err_set(err, s_is_damage(code) ? -EBADMSG : -EIO, "%s: backup failed: %s%s",
                          out_path, sqlite3_errstr(rc), coord_store_corrupt_hint(code));
    }
    return 0;
}

static int s_verify_copy(sqlite3 *db, const char *out_path, int64_t *ret_runs, jf_err_t *err)
{
    coord_store_check_report_t r = {0};
    int rc = s_integrity(db, out_path, false, &r, err);
    if (rc == 0 && r.problems > 0) {
        rc = jf_err_set(err, -EBADMSG, "%s: the copy fails integrity_check: %s%s", out_path,
                        r.problem[0], COORD_STORE_CORRUPT_HINT);
    }
    int64_t runs = -1;
    if (rc == 0 && ret_runs) {
        *ret_runs = s_int(db, "SELECT count(*) FROM runs", &runs) ? runs : -1;
    }
    return rc;
}

int coord_store_backup(const char *path, const char *out_path, int64_t *ret_runs, jf_err_t *err)
{
    if (coord_db_is_postgres_uri(path) || coord_db_is_postgres_uri(out_path)) {
        return s_not_on_postgres("jetfleet store backup", err);
    }
    coord_db_t *src_db = NULL;
    sqlite3 *dst = NULL;
    int rc = s_open_ro(path, &src_db, err);
    bool created = rc == 0 && s_create_new(out_path, err) == 0;
    if (rc == 0 && !created) {
        coord_db_close(&src_db);
        return err ? err->code : -EIO;
    }
    if (rc == 0 && sqlite3_open_v2(out_path, &dst, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        rc = jf_err_set(err, -EIO, "%s: cannot open: %s", out_path,
                        dst ? sqlite3_errmsg(dst) : "no memory");
    }
    rc = rc ? rc : s_backup_copy(coord_db_sqlite(src_db), dst, out_path, err);
    coord_db_close(&src_db); // read-only: nothing to lose
    rc = rc ? rc : s_verify_copy(dst, out_path, ret_runs, err);
    if (dst && sqlite3_close(dst) != SQLITE_OK && rc == 0) {
        rc = jf_err_set(err, -EIO, "%s: closing the copy: %s", out_path, sqlite3_errmsg(dst));
    }
    if (rc != 0 && created) {
        s_remove_db(out_path);
    }
    return rc;
}

// ---------------------------------------------------------------------------------------------
// Salvage

typedef struct s_table {
    const char *name;
    const char *max_sql;  // rowid tables: the highest rowid; NULL for per-run tables
    const char *copy_sql; // rowid tables bind ?1..?2 (a rowid range), per-run tables ?1 (run id)
    const char *row_sql;  // rowid tables: one row, ?1 (see s_copy_range)
} s_table_t;

#define S_ROWID_TABLE(t, verb)                                                                     \
    {                                                                                              \
        t, "SELECT max(rowid) FROM src." t,                                                        \
            "INSERT OR " verb " INTO main." t " SELECT * FROM src." t                              \
            " WHERE rowid BETWEEN ?1 AND ?2",                                                      \
            "INSERT OR " verb " INTO main." t " SELECT * FROM src." t " WHERE rowid = ?1"          \
    }
#define S_RUN_TABLE(t, extra)                                                                      \
    {                                                                                              \
        t, NULL, "INSERT OR IGNORE INTO main." t " SELECT * FROM src." t " WHERE run = ?1" extra,  \
            NULL                                                                                   \
    }
// A table keyed by telemetry series, copied with the series of the run ?1.
#define S_SERIES_TABLE(t)                                                                          \
    {                                                                                              \
        t, NULL,                                                                                   \
            "INSERT OR IGNORE INTO main." t " SELECT * FROM src." t " WHERE series IN"             \
            " (SELECT id FROM src.telemetry_series WHERE run = ?1)",                               \
            NULL                                                                                   \
    }

// Copy order: runs before the tables copied run by run. meta replaces the new store's rows, so
// the salvaged store keeps the damaged one's store id and coordinator epoch. A sweep_runs row
// whose sweep was lost is left out rather than left dangling.
static const s_table_t s_tables[] = {
    S_ROWID_TABLE("meta", "REPLACE"),
    S_ROWID_TABLE("boards", "IGNORE"),
    S_ROWID_TABLE("sweeps", "IGNORE"),
    S_ROWID_TABLE("runs", "IGNORE"),
    S_ROWID_TABLE("events", "IGNORE"),
    S_ROWID_TABLE("models", "IGNORE"),
    S_RUN_TABLE("sweep_runs", " AND sweep IN (SELECT name FROM main.sweeps)"),
    S_RUN_TABLE("epochs", ""),
    S_RUN_TABLE("minibatches", ""),
    S_RUN_TABLE("telemetry_series", ""),
    S_SERIES_TABLE("telemetry_layout"),
    S_SERIES_TABLE("telemetry_sample"),
    // Federated rounds (issue 14): blobs before the weights that name them, rounds before
    // their rows.
    S_ROWID_TABLE("blobs", "IGNORE"),
    S_RUN_TABLE("run_weights", ""),
    S_RUN_TABLE("weight_chunks", ""),
    S_ROWID_TABLE("fl_rounds", "IGNORE"),
    S_ROWID_TABLE("fl_round", "IGNORE"),
    S_ROWID_TABLE("fl_round_board", "IGNORE"),
};
#define S_N_TABLES (sizeof s_tables / sizeof s_tables[0])

_Static_assert(S_N_TABLES <= COORD_SALVAGE_TABLES_MAX, "salvage report too small");

typedef struct s_salvage {
    sqlite3 *db;              // the new store, with the source attached as src
    const char *out_path;     // for messages
    coord_salvage_table_t *t; // the table being copied (borrowed; in the report)
    int64_t failed_reads;     // for t
    jf_err_t *err;
} s_salvage_t;

static int s_db_fail(s_salvage_t *s, const char *what)
{
    return jf_err_set(s->err, -EIO, "%s: %s: %s", s->out_path, what, sqlite3_errmsg(s->db));
}

// A failed read of a damaged range: the caller halves it, or counts a single row as lost.
static bool s_read_failed(s_salvage_t *s)
{
    if (++s->failed_reads >= COORD_SALVAGE_PROBES_MAX) {
        s->t->gave_up = true;
    }
    return !s->t->gave_up;
}

typedef struct s_copy_stmts {
    sqlite3_stmt *range; // copy_sql
    sqlite3_stmt *row;   // row_sql
} s_copy_stmts_t;

// A range scan steps past its last row, into the next page, so the row before a damaged page
// would be lost with it; a single row is therefore read by a point lookup, which does not.
static int s_copy_range(s_salvage_t *s, const s_copy_stmts_t *cs, int64_t lo, int64_t hi)
{
    sqlite3_stmt *st = lo == hi ? cs->row : cs->range;
    (void)sqlite3_reset(st); // the previous step's error is handled already
    if (sqlite3_bind_int64(st, 1, lo) != SQLITE_OK ||
        (lo != hi && sqlite3_bind_int64(st, 2, hi) != SQLITE_OK)) {
        return s_db_fail(s, "binding a rowid range");
    }
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        s->t->rows += sqlite3_changes(s->db);
        return 0;
    }
    if (!s_is_damage(sqlite3_extended_errcode(s->db))) {
        return s_db_fail(s, "copying rows");
    }
    if (!s_read_failed(s)) {
        return 0;
    }
    if (lo == hi) {
        s->t->unreadable++;
        return 0;
    }
    int64_t mid = lo + (hi - lo) / 2;
    int ret = s_copy_range(s, cs, lo, mid);
    return ret ? ret : s_copy_range(s, cs, mid + 1, hi);
}

// The highest rowid: 0 for an empty table, a guess when a damaged right edge hides it.
static int64_t s_max_rowid(s_salvage_t *s, const s_table_t *tab)
{
    sqlite3_stmt *st = NULL;
    int64_t max = COORD_SALVAGE_ROWID_GUESS;
    if (sqlite3_prepare_v2(s->db, tab->max_sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        max = sqlite3_column_int64(st, 0); // NULL (empty table) reads as 0
    }
    (void)sqlite3_finalize(st);
    return max;
}

static int s_copy_rowid_table(s_salvage_t *s, const s_table_t *tab)
{
    int64_t max = s_max_rowid(s, tab);
    s_copy_stmts_t cs = {0};
    int rc = 0;
    if (sqlite3_prepare_v2(s->db, tab->copy_sql, -1, &cs.range, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, tab->row_sql, -1, &cs.row, NULL) != SQLITE_OK) {
        rc = s_db_fail(s, "preparing a copy");
    }
    for (int64_t lo = 1; rc == 0 && lo <= max && !s->t->gave_up; lo += COORD_SALVAGE_CHUNK_ROWIDS) {
        rc = s_copy_range(s, &cs, lo, lo + COORD_SALVAGE_CHUNK_ROWIDS - 1);
    }
    (void)sqlite3_finalize(cs.range);
    (void)sqlite3_finalize(cs.row);
    return rc;
}

static int s_copy_run_rows(s_salvage_t *s, sqlite3_stmt *copy, const char *run)
{
    (void)sqlite3_reset(copy); // the previous step's error is handled already
    if (sqlite3_bind_text(copy, 1, run, -1, SQLITE_TRANSIENT) != SQLITE_OK) {
        return s_db_fail(s, "binding a run id");
    }
    if (sqlite3_step(copy) == SQLITE_DONE) {
        s->t->rows += sqlite3_changes(s->db);
        return 0;
    }
    if (!s_is_damage(sqlite3_extended_errcode(s->db))) {
        return s_db_fail(s, "copying rows");
    }
    if (s_read_failed(s)) {
        s->t->unreadable++;
    }
    return 0;
}

// Rows of the saved runs only: a run that was lost has nothing to hang its records on.
static int s_copy_run_table(s_salvage_t *s, const s_table_t *tab)
{
    sqlite3_stmt *runs = NULL, *copy = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT id FROM main.runs", -1, &runs, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, tab->copy_sql, -1, &copy, NULL) != SQLITE_OK) {
        (void)sqlite3_finalize(runs);
        return s_db_fail(s, "preparing a copy");
    }
    int rc = 0, step = SQLITE_ROW;
    while (rc == 0 && !s->t->gave_up && (step = sqlite3_step(runs)) == SQLITE_ROW) {
        rc = s_copy_run_rows(s, copy, (const char *)sqlite3_column_text(runs, 0));
    }
    if (rc == 0 && step != SQLITE_ROW && step != SQLITE_DONE) {
        rc = s_db_fail(s, "reading the saved runs");
    }
    (void)sqlite3_finalize(copy);
    (void)sqlite3_finalize(runs);
    return rc;
}

// file:<path>?mode=ro with the path percent-encoded, so that SQLite opens the source read-only
// whatever characters its name has.
static int s_ro_uri(const char *path, char *out, size_t size)
{
    size_t n = (size_t)snprintf(out, size, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p && n + 4 < size; p++) {
        bool plain = isalnum(*p) || strchr("/-._~", *p);
        n += (size_t)snprintf(out + n, size - n, plain ? "%c" : "%%%02X", *p);
    }
    int len = snprintf(out + n, size - n, "?mode=ro");
    return len < 0 || n + (size_t)len >= size ? -ENAMETOOLONG : 0;
}

static int s_attach_source(s_salvage_t *s, const char *path)
{
    char uri[3 * PATH_MAX + 32];
    if (s_ro_uri(path, uri, sizeof uri) != 0) {
        return jf_err_set(s->err, -ENAMETOOLONG, "%s: path too long", path);
    }
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, "ATTACH DATABASE ?1 AS src", -1, &st, NULL);
    rc = rc == SQLITE_OK ? sqlite3_bind_text(st, 1, uri, -1, SQLITE_TRANSIENT) : rc;
    rc = rc == SQLITE_OK ? sqlite3_step(st) : rc;
    (void)sqlite3_finalize(st);
    if (rc != SQLITE_DONE && s_is_damage(sqlite3_extended_errcode(s->db))) {
        return jf_err_set(s->err, -EPROTO,
                          "%s: %s: its header is damaged, which salvage needs; the sqlite3 "
                          "shell's .recover may get further",
                          path, sqlite3_errmsg(s->db));
    }
    if (rc != SQLITE_DONE) {
        return jf_err_set(s->err, -EIO, "%s: cannot open: %s", path, sqlite3_errmsg(s->db));
    }
    int64_t version = -1;
    if (!s_int(s->db, "PRAGMA src.user_version", &version) ||
        !s_int(s->db, "SELECT count(*) FROM src.sqlite_schema", &(int64_t){0})) {
        return jf_err_set(s->err, -EPROTO,
                          "%s: its schema cannot be read (%s): the damage is in the file's "
                          "header or schema pages, which salvage needs; the sqlite3 shell's "
                          ".recover may get further",
                          path, sqlite3_errmsg(s->db));
    }
    if (version != coord_store_schema_latest()) {
        return jf_err_set(s->err, -EPROTO, "%s: schema version %lld; salvage reads version %d",
                          path, (long long)version, coord_store_schema_latest());
    }
    return 0;
}

// Tables of this schema that s_tables does not list, so the report can say they were not copied.
static void s_list_not_copied(s_salvage_t *s, coord_salvage_report_t *r)
{
    sqlite3_stmt *st = NULL;
    const char *sql = "SELECT group_concat(name, ', ') FROM main.sqlite_schema WHERE type = "
                      "'table' AND name NOT IN ('meta', 'boards', 'sweeps', 'runs', 'events', "
                      "'models', 'sweep_runs', 'epochs', 'minibatches', 'telemetry_series', "
                      "'telemetry_layout', 'telemetry_sample', 'blobs', 'run_weights', 'weight_chunks', "
                      "'fl_rounds', 'fl_round', 'fl_round_board')";
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
        (void)snprintf(r->not_copied, sizeof r->not_copied, "%s", sqlite3_column_text(st, 0));
    }
    (void)sqlite3_finalize(st);
}

static int s_copy_all(s_salvage_t *s, coord_salvage_report_t *r)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < S_N_TABLES; i++) {
        s->t = &r->table[r->n_tables++];
        s->failed_reads = 0;
        (void)snprintf(s->t->name, sizeof s->t->name, "%s", s_tables[i].name);
        rc = s_tables[i].max_sql ? s_copy_rowid_table(s, &s_tables[i])
                                 : s_copy_run_table(s, &s_tables[i]);
    }
    s_list_not_copied(s, r);
    return rc;
}

// The new store gets the latest schema from the same migrations as the coordinator's.
static int s_make_store(const char *out_path, jf_err_t *err)
{
    int rc = s_create_new(out_path, err);
    coord_store_t *store = rc == 0 ? coord_store_open(out_path, false, err) : NULL;
    if (rc == 0 && !store) {
        rc = err ? err->code : -EIO;
        s_remove_db(out_path);
    }
    coord_store_destroy(&store);
    return rc;
}

// Commits are not synced while copying (a failed salvage is simply run again); the final
// checkpoint with synchronous=FULL makes the result durable before we report it.
static const char s_fast[] = "PRAGMA synchronous=OFF;";
static const char s_durable[] = "DETACH DATABASE src; PRAGMA synchronous=FULL; "
                                "PRAGMA wal_checkpoint(TRUNCATE);";

int coord_store_salvage(const char *path, const char *out_path, coord_salvage_report_t *ret_report,
                        jf_err_t *err)
{
    if (coord_db_is_postgres_uri(path) || coord_db_is_postgres_uri(out_path)) {
        return s_not_on_postgres("jetfleet store salvage", err);
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        return jf_err_set(err, -errno, "%s: %s", path, strerror(errno));
    }
    int rc = s_make_store(out_path, err);
    if (rc != 0) {
        return rc;
    }
    s_salvage_t s = {.out_path = out_path, .err = err};
    *ret_report = (coord_salvage_report_t){0};
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(out_path, &s.db, flags, NULL) != SQLITE_OK ||
        sqlite3_exec(s.db, s_fast, NULL, NULL, NULL) != SQLITE_OK) {
        rc = s.db ? s_db_fail(&s, "opening") : jf_err_set(err, -ENOMEM, "out of memory");
    }
    rc = rc ? rc : s_attach_source(&s, path);
    rc = rc ? rc : s_copy_all(&s, ret_report);
    if (rc == 0 && sqlite3_exec(s.db, s_durable, NULL, NULL, NULL) != SQLITE_OK) {
        rc = s_db_fail(&s, "writing the new store to disk");
    }
    (void)sqlite3_close(s.db); // every statement is finalized; a failure left nothing to keep
    if (rc != 0) {
        s_remove_db(out_path);
    }
    return rc;
}
