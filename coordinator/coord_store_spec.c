/* Store: records on a schema table (docs/schema.md), one column per leaf: a run's spec in runs
 * (the columns are its one stored copy), epochs and minibatches. The statements and their binds
 * are built from the tables: a new field needs no edit here. */
#include "coord_store_internal.h"

#include "jf_units.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h> // sqlite3_str and sqlite3_mprintf: string building only
#include <string.h>

#define S_SPEC_COLS_MAX 64 // columns of one run spec; jf_run_spec_schema's n_columns must fit

typedef struct s_cols {
    sqlite3_str *sql; // the statement being built
    size_t n;         // columns so far
    const char *what; // "%s" for the column names, "?" for the placeholders
} s_cols_t;

static int s_append_col(const jf_schema_leaf_t *leaf, void *arg)
{
    s_cols_t *c = arg;
    if (leaf->column[0] == '\0') {
        return 0;
    }
    sqlite3_str_appendf(c->sql, c->n ? ", %s" : "%s", c->what[0] == '?' ? "?" : leaf->column);
    c->n++;
    return 0;
}

// A statement around one schema's columns: head, the columns, mid, then for an INSERT one "?"
// per column, then tail.
typedef struct s_stmt_def {
    const jf_schema_t *(*schema)(void); // whose columns
    const char *head;                   // up to the column list
    const char *mid;                    // after it
    bool insert;                        // placeholders follow mid
    const char *tail;                   // the rest
} s_stmt_def_t;

static const s_stmt_def_t s_defs[COORD_SPEC_SQL_COUNT] = {
    [COORD_SPEC_SQL_INSERT] = {jf_run_spec_schema, "INSERT INTO runs(",
                               ", ord, state, created_us, power) VALUES(", true,
                               ", ?, 'pending', ?, ?) ON CONFLICT(id) DO NOTHING"},
    [COORD_SPEC_SQL_BY_ID] = {jf_run_spec_schema, "SELECT ", " FROM runs WHERE id = ?", false, ""},
    [COORD_SPEC_SQL_NEXT] = {jf_run_spec_schema, "SELECT ",
                             " FROM runs WHERE board = ? AND state = 'pending' ORDER BY ord "
                             "LIMIT 1",
                             false, ""},
    [COORD_SPEC_SQL_EPOCH] = {jf_epoch_rec_schema, "INSERT INTO epochs(run, attempt, ",
                              ") VALUES(?, ?, ", true, ") ON CONFLICT DO NOTHING"},
    [COORD_SPEC_SQL_MINIBATCH] = {jf_minibatch_rec_schema, "INSERT INTO minibatches(run, attempt, ",
                                  ") VALUES(?, ?, ", true, ") ON CONFLICT DO NOTHING"},
};

static char *s_build(coord_spec_sql_t which)
{
    const s_stmt_def_t *d = &s_defs[which];
    s_cols_t c = {.sql = sqlite3_str_new(NULL), .what = "%s"};
    sqlite3_str_appendall(c.sql, d->head);
    (void)jf_schema_each_leaf(d->schema(), s_append_col, &c); // s_append_col cannot fail
    sqlite3_str_appendall(c.sql, d->mid);
    if (d->insert) {
        c = (s_cols_t){.sql = c.sql, .what = "?"};
        (void)jf_schema_each_leaf(d->schema(), s_append_col, &c);
    }
    sqlite3_str_appendall(c.sql, d->tail);
    return sqlite3_str_finish(c.sql); // NULL when out of memory
}

static const char *s_sql(coord_store_t *self, coord_spec_sql_t which, jf_err_t *err)
{
    if (jf_schema_n_columns(s_defs[which].schema()) > S_SPEC_COLS_MAX) {
        jf_err_set(err, -E2BIG, "store: a record has more than %d columns", S_SPEC_COLS_MAX);
        return NULL;
    }
    if (!self->spec_sql[which]) {
        self->spec_sql[which] = s_build(which);
    }
    if (!self->spec_sql[which]) {
        jf_err_set(err, -ENOMEM, "store: out of memory building a statement");
    }
    return self->spec_sql[which];
}

typedef struct s_binds {
    const void *rec;                     // the record
    coord_bind_t b[S_SPEC_COLS_MAX + 8]; // lead binds, its columns, trailing binds, END
    size_t n;                            // binds so far
} s_binds_t;

static int s_bind_leaf(const jf_schema_leaf_t *leaf, void *arg)
{
    s_binds_t *sb = arg;
    if (leaf->column[0] == '\0') {
        return 0;
    }
    const jf_schema_field_t *f = leaf->field;
    bool present = jf_schema_leaf_is_present(leaf, sb->rec);
    bool is_null = !present || (f->null_zero && jf_schema_leaf_int(leaf, sb->rec) == 0);
    if (is_null) {
        sb->b[sb->n++] = coord_text(NULL); // a NULL text binds SQL NULL
    } else if (f->type == JF_SCHEMA_STR) {
        sb->b[sb->n++] = coord_text(jf_schema_leaf_str(leaf, sb->rec));
    } else if (f->type == JF_SCHEMA_NUM) {
        sb->b[sb->n++] = coord_real(jf_schema_leaf_num(leaf, sb->rec)); // NaN binds NULL
    } else {
        sb->b[sb->n++] = coord_int(jf_schema_leaf_int(leaf, sb->rec));
    }
    return 0;
}

static void s_add_binds(s_binds_t *sb, const coord_bind_t *binds)
{
    for (size_t i = 0; binds && binds[i].type != COORD_BIND_END && sb->n < S_SPEC_COLS_MAX + 7;
         i++) {
        sb->b[sb->n++] = binds[i];
    }
}

int coord_store_rec_insert(coord_store_t *self, coord_spec_sql_t which, const coord_bind_t *lead,
                           const void *rec, const coord_bind_t *trail, jf_err_t *err)
{
    const char *sql = s_sql(self, which, err);
    if (!sql) {
        return -ENOMEM;
    }
    s_binds_t sb = {.rec = rec};
    s_add_binds(&sb, lead);
    (void)jf_schema_each_leaf(s_defs[which].schema(), s_bind_leaf, &sb); // cannot fail
    s_add_binds(&sb, trail);
    sb.b[sb.n] = (coord_bind_t){.type = COORD_BIND_END};
    return coord_store_exec(self, sql, sb.b, err);
}

int coord_store_spec_insert(coord_store_t *self, const jf_run_spec_t *spec, int64_t ord,
                            jf_err_t *err)
{
    char power[JF_RUN_POWER_LABEL_MAX + 1];
    jf_run_spec_power_label(spec, power, sizeof power);
    return coord_store_rec_insert(
        self, COORD_SPEC_SQL_INSERT, COORD_NO_BINDS, spec,
        COORD_BINDS(coord_int(ord), coord_int(jf_clock_wall_us()), coord_text(power)), err);
}

typedef struct s_row {
    coord_db_stmt_t *st; // positioned on the row
    int col;             // next column
    jf_run_spec_t *spec; // being filled
    jf_err_t *err;       // where a bad value is reported
} s_row_t;

// A NULL column is an absent or zero value (null_zero); anything else must fit the member.
static int s_read_leaf(const jf_schema_leaf_t *leaf, void *arg)
{
    s_row_t *r = arg;
    if (leaf->column[0] == '\0') {
        return 0;
    }
    int i = r->col++;
    if (coord_db_col_is_null(r->st, i)) {
        return 0;
    }
    switch (leaf->field->type) {
    case JF_SCHEMA_STR: {
        const char *text = coord_db_col_text(r->st, i);
        return jf_schema_leaf_set_str(leaf, r->spec, text ? (const char *)text : "", r->err);
    }
    case JF_SCHEMA_NUM:
        jf_schema_leaf_set_num(leaf, r->spec, coord_db_col_double(r->st, i));
        return 0;
    default:
        if (jf_schema_leaf_set_int(leaf, r->spec, coord_db_col_int64(r->st, i)) != 0) {
            return jf_err_set(r->err, -ERANGE, "'%s' is out of range", leaf->name);
        }
        return 0;
    }
}

static int s_read_row(coord_db_stmt_t *st, const char *key, jf_run_spec_t *ret_spec, jf_err_t *err)
{
    jf_run_spec_t spec = {0};
    s_row_t r = {.st = st, .spec = &spec, .err = err};
    int rc = jf_schema_each_leaf(jf_run_spec_schema(), s_read_leaf, &r);
    rc = rc ? rc : jf_run_spec_validate(&spec, err);
    if (rc == 0 && !jf_run_spec_is_run_id(spec.run_id)) {
        rc = jf_err_set(err, -EINVAL, "'run' must be 'r' followed by 16 lowercase hex digits");
    }
    if (rc != 0) {
        (void)jf_err_prefix(err, "store: the run of '%s' has a bad spec", key);
        return -EIO;
    }
    *ret_spec = spec;
    return 0;
}

int coord_store_spec_read(coord_store_t *self, coord_spec_sql_t which, const char *key,
                          jf_run_spec_t *ret_spec, jf_err_t *err)
{
    const char *sql = s_sql(self, which, err);
    coord_db_stmt_t *st =
        sql ? coord_store_stmt(self, sql, COORD_BINDS(coord_text(key)), err) : NULL;
    if (!st) {
        return -EIO;
    }
    int rc = coord_db_step(st);
    int ret = 0;
    if (rc == COORD_DB_ROW) {
        ret = s_read_row(st, key, ret_spec, err);
    } else {
        ret = rc == COORD_DB_DONE ? -ENOENT : coord_store_fail(self, err, "reading a run");
    }
    coord_db_reset(st);
    return ret;
}

typedef struct s_sync {
    coord_store_t *self; // the store
    jf_err_t *err;       // where a failure is reported
    size_t added;        // columns added
} s_sync_t;

static int s_sync_leaf(const jf_schema_leaf_t *leaf, void *arg)
{
    s_sync_t *s = arg;
    int64_t n = 0;
    if (leaf->column[0] == '\0') {
        return 0;
    }
    // PostgreSQL: see coord_db_pg (pragma_table_info is SQLite's).
    int rc =
        coord_store_scalar(s->self, "SELECT count(*) FROM pragma_table_info('runs') WHERE name = ?",
                           COORD_BINDS(coord_text(leaf->column)), &n, s->err);
    if (rc != 0 || n != 0) {
        return rc;
    }
    // Column names are plain identifiers from the static table (schema_test checks them). On
    // PostgreSQL another coordinator sharing the database may add it meanwhile (IF NOT EXISTS
    // waits for its lock, then skips; SQLite has one writer and no such clause).
    bool pg = coord_db_kind(s->self->db) == COORD_DB_POSTGRES;
    char *sql = sqlite3_mprintf("ALTER TABLE runs ADD COLUMN %s%s %s", pg ? "IF NOT EXISTS " : "",
                                leaf->column, jf_schema_sql_type(leaf->field->type));
    rc = sql ? coord_db_exec_script(s->self->db, sql, NULL) : -ENOMEM;
    sqlite3_free(sql);
    if (rc != 0) {
        rc = jf_err_set(s->err, -EIO, "%s: adding column '%s': %s", s->self->path, leaf->column,
                        rc == -ENOMEM ? "out of memory" : coord_db_errmsg(s->self->db));
    }
    s->added += rc == 0;
    return rc;
}

int coord_store_spec_sync_columns(coord_store_t *self, jf_err_t *err)
{
    s_sync_t s = {.self = self, .err = err};
    return jf_schema_each_leaf(jf_run_spec_schema(), s_sync_leaf, &s);
}
