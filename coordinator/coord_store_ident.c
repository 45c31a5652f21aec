/* Store identity (coord_store_ident.h): the store id in meta, the identity file in the data
 * directory (JSON through jansson), and the refuse-to-start rule of docs/store.md, "Identity";
 * on a PostgreSQL store (§10) the database's tables stand for the file. */
#include "coord_store_ident.h"

#include "coord_store_admin.h"
#include "coord_store_internal.h"
#include "jf_units.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define S_ID_HEX_LEN 16

typedef struct s_ident {
    uint64_t store_id;         // the store's meta 'store_id'
    char store_path[PATH_MAX]; // where the store was
    int64_t runs;              // counts when last saved
    int64_t runs_done;
    int64_t sweeps;
    int64_t updated_us; // wall clock of the save
} s_ident_t;

static void s_file_path(const char *data_dir, const char *suffix, char *out, size_t size)
{
    (void)snprintf(out, size, "%s/%s%s", data_dir, COORD_IDENT_FILE, suffix);
}

static int s_parse_id(const char *hex, uint64_t *ret_id)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(hex, &end, 16);
    if (strlen(hex) != S_ID_HEX_LEN || errno != 0 || *end != '\0') {
        return -EINVAL;
    }
    *ret_id = (uint64_t)v;
    return 0;
}

static int s_unpack(json_t *root, const char *path, s_ident_t *ret, jf_err_t *err)
{
    json_error_t jerr;
    const char *id = NULL, *store = NULL;
    json_int_t runs = 0, done = 0, sweeps = 0, updated = 0;
    if (json_unpack_ex(root, &jerr, JSON_STRICT, "{s:s, s:s, s:I, s:I, s:I, s:I}", "store_id", &id,
                       "store_path", &store, "runs", &runs, "runs_done", &done, "sweeps", &sweeps,
                       "updated_us", &updated) != 0) {
        return jf_err_set(err, -EINVAL, "%s: %s", path, jerr.text);
    }
    if (s_parse_id(id, &ret->store_id) != 0) {
        return jf_err_set(err, -EINVAL, "%s: 'store_id' must be %d hex digits, got '%.40s'", path,
                          S_ID_HEX_LEN, id);
    }
    ret->runs = runs;
    ret->runs_done = done;
    ret->sweeps = sweeps;
    ret->updated_us = updated;
    (void)snprintf(ret->store_path, sizeof ret->store_path, "%s", store);
    return 0;
}

// *ret_found false (and 0) when the data directory has no identity file yet.
static int s_load(const char *data_dir, s_ident_t *ret, bool *ret_found, jf_err_t *err)
{
    char path[PATH_MAX + 64];
    s_file_path(data_dir, "", path, sizeof path);
    *ret_found = false;
    if (access(path, F_OK) != 0 && errno == ENOENT) {
        return 0;
    }
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root) {
        return jf_err_set(err, -EINVAL, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
    }
    int rc = s_unpack(root, path, ret, err);
    json_decref(root);
    if (rc != 0) {
        return jf_err_prefix(err, "store identity (fix or remove the file, or start with "
                                  "--new-store)");
    }
    *ret_found = true;
    return 0;
}

// "store id 1a2b... (120 runs, 96 done, 3 sweeps; saved 2026-11-24 15:00 UTC)": short, so that
// a refusal fits jf_err_t with the path and what to do.
static void s_describe(const s_ident_t *id, char *out, size_t size)
{
    time_t t = (time_t)(id->updated_us / JF_US_PER_S);
    struct tm tm = {0};
    char when[32] = "?";
    if (gmtime_r(&t, &tm)) {
        (void)strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm);
    }
    (void)snprintf(out, size,
                   "store id %016" PRIx64 " (%" PRId64 " runs, %" PRId64 " done, %" PRId64
                   " sweeps; saved %s)",
                   id->store_id, id->runs, id->runs_done, id->sweeps, when);
}

static int s_refuse(const char *store_path, int code, const char *what, const s_ident_t *known,
                    jf_err_t *err)
{
    char desc[160], moved[128] = "";
    s_describe(known, desc, sizeof desc);
    if (strcmp(known->store_path, store_path) != 0) {
        (void)snprintf(moved, sizeof moved, " (it was at '%.80s')", known->store_path);
    }
    return jf_err_set(err, code,
                      "store %s; expected %s%s; restore a backup or use --new-store "
                      "(docs/store.md): '%s'",
                      what, desc, moved, store_path);
}

// Before opening: opening would create a missing file and take an empty one as a new store.
static int s_check_present(const char *store_path, const s_ident_t *known, jf_err_t *err)
{
    struct stat st;
    if (stat(store_path, &st) != 0) {
        return errno == ENOENT ? s_refuse(store_path, -ENOENT, "missing", known, err)
                               : jf_err_set(err, -errno, "%s: %s", store_path, strerror(errno));
    }
    return st.st_size == 0 ? s_refuse(store_path, -ENODATA, "empty (0 bytes)", known, err) : 0;
}

// The PostgreSQL form of s_check_present: a database that does not exist or cannot be reached
// fails to connect (coord_db_open says why); one without jetfleet's tables is refused before
// opening the store would create them. Messages name the URI without its password.
static int s_check_present_pg(const char *uri, const s_ident_t *known, jf_err_t *err)
{
    coord_db_t *db = NULL;
    int rc = coord_db_open(uri, true, &db, err);
    coord_db_stmt_t *st =
        rc ? NULL
           : coord_db_prepare(db,
                              "SELECT count(*) FROM information_schema.tables WHERE"
                              " table_schema = current_schema() AND table_name = 'meta'",
                              err);
    if (rc == 0 && !st) {
        rc = -EIO;
    } else if (rc == 0 && coord_db_step(st) != COORD_DB_ROW) {
        rc = jf_err_set(err, -EIO, "%s: looking for the store's tables: %s", coord_db_target(db),
                        coord_db_errmsg(db));
    } else if (rc == 0 && coord_db_col_int64(st, 0) == 0) {
        rc = s_refuse(coord_db_target(db), -ENODATA, "empty (a database without jetfleet's tables)",
                      known, err);
    }
    coord_db_finalize(st);
    coord_db_close(&db);
    return rc;
}

// SQLite's quick_check reads the store file's pages; a PostgreSQL server checks its own pages
// (checksums, amcheck), which the coordinator's connection does not run: skipped there, and the
// coordinator says so when it starts (coord_server.c, docs/store.md §10).
static int s_check_sound(coord_store_t *self, jf_err_t *err)
{
    if (coord_store_is_postgres(self)) {
        return 0;
    }
    coord_store_check_report_t r = {0};
    int rc = coord_store_check_open(self, true, &r, err);
    if (rc == 0 && r.problems > 0) {
        rc = jf_err_set(err, -EBADMSG, "%s: quick_check: %zu problem(s), first '%.60s'%s",
                        self->path, r.problems, r.problem[0], COORD_STORE_CORRUPT_HINT);
    }
    return rc;
}

static int s_count(coord_store_t *self, s_ident_t *ret, jf_err_t *err)
{
    int64_t id = 0;
    int rc =
        coord_store_scalar(self, "SELECT value FROM meta WHERE key = 'store_id'", COORD_NO_BINDS, &id, err);
    rc = rc ? rc : coord_store_scalar(self, "SELECT count(*) FROM runs", COORD_NO_BINDS, &ret->runs, err);
    rc = rc ? rc
            : coord_store_scalar(self, "SELECT count(*) FROM runs WHERE state = 'done'", COORD_NO_BINDS, &ret->runs_done, err);
    rc = rc ? rc : coord_store_scalar(self, "SELECT count(*) FROM sweeps", COORD_NO_BINDS, &ret->sweeps, err);
    ret->store_id = (uint64_t)id;
    (void)snprintf(ret->store_path, sizeof ret->store_path, "%s", self->path);
    ret->updated_us = jf_clock_wall_us();
    return rc;
}

// A store without an id (new, or made before ids existed) gets a random one.
static int s_ensure_id(coord_store_t *self, char *note, jf_err_t *err)
{
    int64_t id = 0;
    int rc =
        coord_store_scalar(self, "SELECT value FROM meta WHERE key = 'store_id'", COORD_NO_BINDS, &id, err);
    if (rc != -ENOENT) {
        return rc;
    }
    // Made here, not by SQL's random() (an integer in SQLite, a fraction in PostgreSQL): 64 bits
    // from the kernel, the same on both back ends.
    int64_t fresh = 0;
    if (getrandom(&fresh, sizeof fresh, 0) != (ssize_t) sizeof fresh) {
        return jf_err_set(err, -EIO, "store '%.200s': getrandom for a store id: %s", self->path,
                          strerror(errno));
    }
    // Another coordinator sharing a new PostgreSQL database may make its id at the same moment
    // (docs/store.md §10): the first one stored is the store's, and the other takes it.
    rc = coord_store_exec(self,
                          "INSERT INTO meta(key, value) VALUES('store_id', ?) ON CONFLICT(key) DO"
                          " NOTHING",
                          COORD_BINDS(coord_int(fresh)), err);
    bool made = rc == 0 && coord_db_changes(self->db) == 1;
    rc = rc ? rc
            : coord_store_scalar(self, "SELECT value FROM meta WHERE key = 'store_id'", COORD_NO_BINDS, &id, err);
    if (rc == 0 && made) {
        (void)snprintf(note, COORD_IDENT_NOTE_LEN,
                       "store: new store id %016" PRIx64 " for '%.200s'", (uint64_t)id, self->path);
    }
    return rc;
}

static int s_compare(coord_store_t *self, const s_ident_t *known, char *note, jf_err_t *err)
{
    s_ident_t now = {0};
    int rc = s_count(self, &now, err);
    if (rc == -ENOENT) {
        return s_refuse(self->path, -ESTALE, "without a store id (another store)", known, err);
    }
    if (rc == 0 && now.store_id != known->store_id) {
        char what[64];
        (void)snprintf(what, sizeof what, "is another (store id %016" PRIx64 ")", now.store_id);
        return s_refuse(self->path, -ESTALE, what, known, err);
    }
    if (rc == 0 && (now.runs < known->runs || now.sweeps < known->sweeps)) {
        (void)snprintf(note, COORD_IDENT_NOTE_LEN,
                       "store: '%.200s' holds %" PRId64 " runs in %" PRId64 " sweeps, fewer than "
                       "the %" PRId64 " in %" PRId64 " last seen (a restored backup or a "
                       "salvage?); going on with what it holds",
                       self->path, now.runs, now.sweeps, known->runs, known->sweeps);
    }
    return rc;
}

static int s_claim(coord_store_t *self, const s_ident_t *known, char *note, jf_err_t *err)
{
    int rc = s_check_sound(self, err);
    if (rc == 0 && known) {
        rc = s_compare(self, known, note, err);
    } else if (rc == 0) {
        rc = s_ensure_id(self, note, err);
    }
    return rc;
}

coord_store_t *coord_store_open_owned(const char *store_path, const char *data_dir, bool new_store,
                                      char *ret_note, jf_err_t *err)
{
    s_ident_t known = {0};
    bool found = false;
    ret_note[0] = '\0';
    bool pg = coord_db_is_postgres_uri(store_path);
    if (!new_store && (s_load(data_dir, &known, &found, err) != 0 ||
                       (found && (pg ? s_check_present_pg(store_path, &known, err)
                                     : s_check_present(store_path, &known, err)) != 0))) {
        return NULL;
    }
    coord_store_t *self = coord_store_open(store_path, false, err);
    if (self && (s_claim(self, found ? &known : NULL, ret_note, err) != 0 ||
                 coord_store_ident_save(self, data_dir, err) != 0)) {
        coord_store_destroy(&self);
    }
    if (self && new_store && !ret_note[0]) {
        (void) snprintf(ret_note, COORD_IDENT_NOTE_LEN,
                        "store: --new-store: '%.200s' is this data directory's store from now on",
                        self->path); // a URI without its password
    }
    return self;
}

static int s_write(const char *path, const char *tmp, const s_ident_t *id, jf_err_t *err)
{
    char hex[S_ID_HEX_LEN + 1];
    (void)snprintf(hex, sizeof hex, "%016" PRIx64, id->store_id);
    json_t *root =
        json_pack("{s:s, s:s, s:I, s:I, s:I, s:I}", "store_id", hex, "store_path", id->store_path,
                  "runs", (json_int_t)id->runs, "runs_done", (json_int_t)id->runs_done, "sweeps",
                  (json_int_t)id->sweeps, "updated_us", (json_int_t)id->updated_us);
    FILE *f = root ? fopen(tmp, "w") : NULL;
    int bad = !f || json_dumpf(root, f, JSON_INDENT(2) | JSON_SORT_KEYS) != 0;
    bad |= f && (fputc('\n', f) == EOF || fflush(f) != 0 || fsync(fileno(f)) != 0);
    bad |= f && fclose(f) != 0;
    json_decref(root);
    if (bad || rename(tmp, path) != 0) {
        (void)unlink(tmp); // best effort: a stale temporary file is rewritten next time
        return jf_err_set(err, -EIO, "%s: cannot write the store identity: %s", path,
                          strerror(errno));
    }
    return 0;
}

int coord_store_ident_save(coord_store_t *self, const char *data_dir, jf_err_t *err)
{
    s_ident_t id = {0};
    int rc = s_count(self, &id, err);
    if (rc != 0) {
        return rc == -ENOENT ? jf_err_set(err, -EIO, "%s: no store id", self->path) : rc;
    }
    char path[PATH_MAX + 64], tmp[PATH_MAX + 64];
    s_file_path(data_dir, "", path, sizeof path);
    s_file_path(data_dir, ".tmp", tmp, sizeof tmp);
    return s_write(path, tmp, &id, err);
}
