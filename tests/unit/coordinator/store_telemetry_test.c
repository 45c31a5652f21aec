/* Unit tests for typed telemetry storage (coord_telemetry_pack, coord_store_telemetry;
 * docs/store.md, "Telemetry storage"): packing gives back the fixture samples and edge values
 * exactly, a sample of another shape or a damaged blob is refused; the store gives back what
 * went in (telemetry_json and the export's values), a version-8 store's rows migrate unchanged,
 * per-second means in bounded batches, and the store's bytes per sample from its page count.
 * Built with JF_DB_TEST_PG (unit.store_telemetry_postgres) the store cases run on PostgreSQL,
 * which keeps each sample's JSON text (docs/store.md §10); the store is read back through the
 * coord_db seam on both. */
#include "coord_db.h"
#include "coord_store_retention.h"
#include "coord_telemetry_pack.h"
#include "jf_rng.h"

#include "store_support.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#define T_SAMPLES_MAX 32
#define T_T0_US       INT64_C(1700000000050000) // 50 ms into a second
#define T_PERIOD_US   INT64_C(100000)           // 10 Hz
// The bound for a Xavier's sample (#17 §4).
#define T_BYTES_PER_SAMPLE_MAX 100
#define T_SIZE_BOARDS          4
#define T_SIZE_SAMPLES         600 // per board: a minute at 10 Hz

typedef struct t_samples {
    size_t n;
    json_t *s[T_SAMPLES_MAX];  // owned
    char *text[T_SAMPLES_MAX]; // owned: each as stored
} t_samples_t;

static void t_add(t_samples_t *ts, json_t *s)
{
    assert_non_null(s);
    assert_true(ts->n < T_SAMPLES_MAX);
    ts->text[ts->n] = json_dumps(s, JSON_COMPACT);
    ts->s[ts->n++] = s;
}

// The fixture samples (tests/fixtures/samples/README.md) and hand-made edge cases.
static void t_fixtures(t_samples_t *ts)
{
    *ts = (t_samples_t){0};
    const char *dir = getenv("JF_FIXTURES");
    assert_non_null(dir);
    char path[PATH_MAX];
    json_error_t jerr;
    (void) snprintf(path, sizeof path, "%s/samples/sim-agx-xavier.json", dir);
    t_add(ts, json_load_file(path, 0, &jerr));
    (void) snprintf(path, sizeof path, "%s/samples/host.json", dir);
    t_add(ts, json_load_file(path, 0, &jerr));
    (void) snprintf(path, sizeof path, "%s/samples/tegrastats.jsonl", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[8192];
    while (fgets(line, sizeof line, f) && ts->n < T_SAMPLES_MAX - 3) {
        t_add(ts, json_loads(line, 0, &jerr));
    }
    fclose(f);
    t_add(ts, json_loads("{\"t_us\":1,\"a\":-9223372036854775807,\"b\":9223372036854775807,"
                         "\"r\":[0.1,1e300,22.22222222,3.141592653589793,5e-324,-7.25],"
                         "\"n\":[null,true,false],\"o\":{\"x\":{\"y\":\"z\"}},\"e\":{},"
                         "\"s\":\"str\",\"unknown_member\":[[1,2],[3000000000]]}",
                         0, &jerr));
    t_add(ts, json_loads("{\"t_us\":2}", 0, &jerr));
    t_add(ts, json_loads("{}", 0, &jerr));
}

static void t_free(t_samples_t *ts)
{
    for (size_t i = 0; i < ts->n; i++) {
        json_decref(ts->s[i]);
        free(ts->text[i]);
    }
    ts->n = 0;
}

static json_t *t_roundtrip(const json_t *base, int64_t base_t_us, const json_t *s, int64_t t_us)
{
    unsigned char *blob = NULL;
    size_t len = 0;
    assert_int_equal(coord_tpack_pack(base, base_t_us, s, t_us, &blob, &len), 0);
    json_t *back = NULL;
    assert_int_equal(coord_tpack_unpack(base, base_t_us, t_us, blob, len, &back), 0);
    free(blob);
    return back;
}

// Every number moved: integers by k (within range), reals scaled.
static void t_perturb(json_t *v, int64_t k)
{
    if (json_is_object(v)) {
        const char *key;
        json_t *m;
        json_object_foreach(v, key, m)
        {
            t_perturb(m, k);
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            t_perturb(json_array_get(v, i), k);
        }
    } else if (json_is_integer(v) && llabs(json_integer_value(v)) < INT64_C(1) << 60) {
        (void) json_integer_set(v, json_integer_value(v) + k);
    } else if (json_is_real(v)) {
        (void) json_real_set(v, json_real_value(v) * 1.5 + 0.001);
    }
}

static void test_pack_lossless(void **state)
{
    (void) state;
    t_samples_t ts;
    t_fixtures(&ts);
    for (size_t i = 0; i < ts.n; i++) {
        json_t *back = t_roundtrip(ts.s[i], 5, ts.s[i], 5);
        assert_true(json_equal(back, ts.s[i]));
        json_decref(back);
        // Against a base whose every number differs, and at another time.
        json_t *moved = json_deep_copy(ts.s[i]);
        t_perturb(moved, -1234567);
        back = t_roundtrip(ts.s[i], 5, moved, 5 + 987654321);
        assert_true(json_equal(back, moved));
        char *a = json_dumps(back, JSON_COMPACT), *b = json_dumps(moved, JSON_COMPACT);
        assert_string_equal(a, b); // the same members in the same order
        free(a);
        free(b);
        json_decref(back);
        json_decref(moved);
    }
    // -0.0 keeps its sign (json_equal would not see it).
    json_t *neg = json_pack("{s:f}", "x", -0.0);
    json_t *back = t_roundtrip(neg, 0, neg, 0);
    assert_true(signbit(json_real_value(json_object_get(back, "x"))));
    json_decref(back);
    json_decref(neg);
    t_free(&ts);
}

static void test_pack_refuses_other_shapes(void **state)
{
    (void) state;
    static const struct {
        const char *base, *sample;
    } rows[] = {
        {"{\"a\":1,\"b\":2}", "{\"b\":2,\"a\":1}"},                      // key order
        {"{\"a\":1}", "{\"a\":1,\"b\":2}"},                              // a member more
        {"{\"a\":[1,2]}", "{\"a\":[1]}"},                                // array length
        {"{\"a\":\"x\"}", "{\"a\":\"y\"}"},                              // a string
        {"{\"a\":1}", "{\"a\":1.5}"},                                    // integer and real
        {"{\"a\":true}", "{\"a\":false}"},                               // a boolean
        {"{\"a\":null}", "{\"a\":0}"},                                   // null and a number
        {"{\"a\":9223372036854775807}", "{\"a\":-9223372036854775807}"}, // past the range
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        json_t *b = json_loads(rows[i].base, 0, NULL);
        json_t *s = json_loads(rows[i].sample, 0, NULL);
        unsigned char *blob = NULL;
        size_t len = 0;
        if (coord_tpack_pack(b, 0, s, 0, &blob, &len) != -ENOMSG) {
            fail_msg("row %zu: %s against %s packed", i, rows[i].sample, rows[i].base);
        }
        json_decref(b);
        json_decref(s);
    }
}

static void test_unpack_damaged(void **state)
{
    (void) state;
    json_t *b = json_loads("{\"a\":1,\"b\":[2,3.5]}", 0, NULL);
    unsigned char *blob = NULL;
    size_t len = 0;
    assert_int_equal(coord_tpack_pack(b, 0, b, 0, &blob, &len), 0);
    json_t *v = NULL;
    assert_int_equal(coord_tpack_unpack(b, 0, 0, blob, len - 1, &v), -EPROTO); // cut short
    unsigned char longer[64] = {0};
    assert_true(len < sizeof longer);
    memcpy(longer, blob, len);
    assert_int_equal(coord_tpack_unpack(b, 0, 0, longer, len + 1, &v), -EPROTO); // a byte more
    unsigned char bad[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    assert_int_equal(coord_tpack_unpack(b, 0, 0, bad, sizeof bad, &v), -EPROTO);
    assert_null(v);
    free(blob);
    json_decref(b);
}

static void test_mean(void **state)
{
    (void) state;
    json_t *s[3] = {
        json_loads("{\"t_us\":10,\"p\":[1,2],\"rapl_energy_uj\":{\"pkg\":100},\"x\":1.5,"
                   "\"rails\":[{\"name\":\"IN\",\"power_mw\":10,\"avg_power_mw\":7}]}",
                   0, NULL),
        json_loads("{\"t_us\":20,\"p\":[2,2],\"rapl_energy_uj\":{\"pkg\":200},\"x\":2.5,"
                   "\"rails\":[{\"name\":\"IN\",\"power_mw\":20,\"avg_power_mw\":8}]}",
                   0, NULL),
        json_loads("{\"t_us\":30,\"p\":[2,5],\"rapl_energy_uj\":{\"pkg\":300},\"x\":3.5,"
                   "\"rails\":[{\"name\":\"IN\",\"power_mw\":33,\"avg_power_mw\":9}]}",
                   0, NULL),
    };
    json_t *m = NULL;
    assert_int_equal(coord_tpack_mean(s, 3, &m), 0);
    json_t *want = json_loads("{\"t_us\":20,\"p\":[2,3],\"rapl_energy_uj\":{\"pkg\":300},"
                              "\"x\":2.5,\"rails\":[{\"name\":\"IN\",\"power_mw\":21,"
                              "\"avg_power_mw\":9}]}",
                              0, NULL);
    if (!json_equal(m, want)) {
        char *got = json_dumps(m, JSON_COMPACT);
        fail_msg("mean: %s", got);
    }
    json_decref(want);
    json_decref(m);
    json_t *other = json_loads("{\"t_us\":10,\"p\":[1]}", 0, NULL);
    json_t *two[2] = {s[0], other};
    assert_int_equal(coord_tpack_mean(two, 2, &m), -EINVAL);
    assert_int_equal(coord_tpack_mean(s, 0, &m), -EINVAL);
    json_decref(other);
    for (int i = 0; i < 3; i++) {
        json_decref(s[i]);
    }
}

// ---- Through the store ----

// The store on a connection of its own, through the seam (a file or a PostgreSQL URI); on
// SQLite with the telemetry SQL function registered, as the store's own connections have it.
static coord_db_t *t_side_db(const tstore_ctx_t *c)
{
    coord_db_t *db = NULL;
    jf_err_t err = {0};
    if (coord_db_open(c->path, false, &db, &err) != 0) {
        fail_msg("open %s: %s", c->path, err.msg);
    }
    if (coord_db_sqlite(db)) {
        assert_int_equal(coord_tpack_sql_register(coord_db_sqlite(db)), 0);
    }
    return db;
}

static coord_db_stmt_t *t_prepare(coord_db_t *db, const char *sql)
{
    jf_err_t err = {0};
    coord_db_stmt_t *st = coord_db_prepare(db, sql, &err);
    if (!st) {
        fail_msg("prepare %s: %s", sql, err.msg);
    }
    return st;
}

static int64_t t_int(coord_db_t *db, const char *sql)
{
    coord_db_stmt_t *st = t_prepare(db, sql);
    if (coord_db_step(st) != COORD_DB_ROW) {
        fail_msg("%s: %s", sql, coord_db_errmsg(db));
    }
    int64_t v = coord_db_col_int64(st, 0);
    coord_db_finalize(st);
    return v;
}

// Every stored sample of the run (telemetry_json, seq order) equals ts's, and there are n.
static void t_expect_stored(const tstore_ctx_t *c, const t_samples_t *ts)
{
    coord_db_t *db = t_side_db(c);
    coord_db_stmt_t *st = t_prepare(db, "SELECT seq, sample FROM telemetry_json ORDER BY seq");
    size_t n = 0;
    int rc = 0;
    while ((rc = coord_db_step(st)) == COORD_DB_ROW) {
        assert_true(n < ts->n);
        assert_int_equal(coord_db_col_int64(st, 0), (int64_t) n + 1);
        json_t *got = json_loads(coord_db_col_text(st, 1), 0, NULL);
        if (!json_equal(got, ts->s[n])) {
            fail_msg("sample %zu: stored %s, sent %s", n, coord_db_col_text(st, 1), ts->text[n]);
        }
        json_decref(got);
        n++;
    }
    if (rc != COORD_DB_DONE) {
        fail_msg("reading telemetry_json: %s", coord_db_errmsg(db));
    }
    assert_int_equal(n, ts->n);
    coord_db_finalize(st);
    coord_db_close(&db);
}

static int64_t t_time_of(const json_t *s, size_t i)
{
    json_t *t = json_object_get(s, "t_us");
    return json_is_integer(t) ? json_integer_value(t) : T_T0_US + (int64_t) i;
}

static int64_t t_store_all(tstore_ctx_t *c, const char *run, int64_t attempt, const t_samples_t *ts)
{
    for (size_t i = 0; i < ts->n; i++) {
        jf_err_t err = {0};
        if (coord_store_add_telemetry(c->store, run, attempt, (int64_t) i + 1, 0,
                                      t_time_of(ts->s[i], i), ts->text[i], &err) != 0) {
            fail_msg("sample %zu: %s", i, err.msg);
        }
    }
    return (int64_t) ts->n;
}

typedef struct t_lines {
    char *text; // owned: "seq|metric|value\n" per exported value
    size_t len;
} t_lines_t;

static void t_append(t_lines_t *l, const char *seq, const char *metric, const char *value)
{
    size_t more = strlen(seq) + strlen(metric) + strlen(value) + 4;
    l->text = realloc(l->text, l->len + more);
    assert_non_null(l->text);
    l->len += (size_t) snprintf(l->text + l->len, more, "%s|%s|%s\n", seq, metric, value);
}

static int t_on_export_row(int ncols, const char *const *names, const char *const *values,
                           const coord_value_kind_t *kinds, void *arg)
{
    (void) kinds;
    const char *seq = NULL, *metric = NULL, *value = NULL;
    for (int i = 0; i < ncols; i++) {
        seq = strcmp(names[i], "seq") == 0 ? values[i] : seq;
        metric = strcmp(names[i], "metric") == 0 ? values[i] : metric;
        value = strcmp(names[i], "value") == 0 ? values[i] : value;
    }
    assert_true(seq && metric && value);
    t_append(arg, seq, metric, value);
    return 0;
}

// One exported value line, "seq|metric|value": equal, or with tolerant (PostgreSQL, whose text
// has as many digits as give the double back, where SQLite's json_tree prints 15) the same seq
// and metric and values within 1e-14 relative.
static bool t_same_line(const char *g, int glen, const char *w, int wlen, bool tolerant)
{
    if (glen == wlen && strncmp(g, w, (size_t) glen) == 0) {
        return true;
    }
    const char *gv = memrchr(g, '|', (size_t) glen), *wv = memrchr(w, '|', (size_t) wlen);
    if (!tolerant || !gv || !wv || gv - g != wv - w || strncmp(g, w, (size_t) (gv - g)) != 0) {
        return false;
    }
    double a = strtod(gv + 1, NULL), b = strtod(wv + 1, NULL);
    return fabs(a - b) <= 1e-14 * fmax(fabs(a), fabs(b));
}

// got equals want line by line (t_same_line), or the test fails naming the first that differs.
static void t_expect_same_lines(const char *got, const char *want, bool tolerant)
{
    size_t line = 1;
    const char *g = got, *w = want;
    while (*g || *w) {
        int glen = (int) strcspn(g, "\n"), wlen = (int) strcspn(w, "\n");
        if (!t_same_line(g, glen, w, wlen, tolerant)) {
            fail_msg("export line %zu: got '%.*s', expected '%.*s'", line, glen, g, wlen, w);
        }
        g += glen + (g[glen] == '\n');
        w += wlen + (w[wlen] == '\n');
        line++;
    }
}

// What the version-8 export printed for these samples: the same expressions over each text
// (SQLite's json_tree, on a connection of its own whatever the store's back end).
static void t_old_export(const t_samples_t *ts, t_lines_t *want)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           "SELECT replace(substr(j.fullkey, 3), '\"', ''), j.value FROM "
                           "json_tree(?1) j WHERE j.type IN ('integer', 'real') AND j.parent IS "
                           "NOT NULL AND j.key IS NOT 't_us' ORDER BY j.id",
                           -1, &st, NULL),
        SQLITE_OK);
    for (size_t i = 0; i < ts->n; i++) {
        char seq[32];
        (void) snprintf(seq, sizeof seq, "%zu", i + 1);
        assert_int_equal(sqlite3_bind_text(st, 1, ts->text[i], -1, SQLITE_STATIC), SQLITE_OK);
        while (sqlite3_step(st) == SQLITE_ROW) {
            t_append(want, seq, (const char *) sqlite3_column_text(st, 0),
                     (const char *) sqlite3_column_text(st, 1));
        }
        assert_int_equal(sqlite3_reset(st), SQLITE_OK);
    }
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

static void test_store_roundtrip_and_export(void **state)
{
    tstore_ctx_t *c = *state;
    t_samples_t ts;
    t_fixtures(&ts);
    jf_run_spec_t run = tstore_spec(TSTORE_BOARD, 1);
    tstore_put(c->store, &run, 1);
    int64_t a = tstore_complete(c->store, run.run_id, true);
    t_store_all(c, run.run_id, a, &ts);
    // A resent sample is ignored, even with other content.
    jf_err_t err = {0};
    assert_int_equal(
        coord_store_add_telemetry(c->store, run.run_id, a, 1, 0, 7, "{\"other\":[1]}", &err), 0);
    t_expect_stored(c, &ts);
    t_lines_t got = {0}, want = {0};
    assert_int_equal(coord_store_select(c->store, COORD_TABLE_TELEMETRY, NULL, NULL,
                                        t_on_export_row, &got, &err),
                     0);
    t_old_export(&ts, &want);
    assert_non_null(got.text);
    t_expect_same_lines(got.text, want.text, tstore_on_postgres());
    free(got.text);
    free(want.text);
    // Not an object: refused, naming the sample.
    assert_int_equal(coord_store_add_telemetry(c->store, run.run_id, a, 99, 3, 7, "[1,2]", &err),
                     -EPROTO);
    assert_non_null(strstr(err.msg, "sample 99/3 of run"));
    t_free(&ts);
}

// The store's write cache (series and latest layout per attempt) may hold rows of the current
// transaction: a rollback must empty it, or the next sample would name a series and layout that
// no longer exist; so must a commit by another connection (jetfleet store prune), seen at BEGIN.
static void test_cache_rollback_and_other_writer(void **state)
{
    tstore_ctx_t *c = *state;
    t_samples_t ts;
    t_fixtures(&ts);
    jf_run_spec_t run = tstore_spec(TSTORE_BOARD, 1);
    tstore_put(c->store, &run, 1);
    int64_t a = tstore_complete(c->store, run.run_id, true);
    jf_err_t err = {0};
    assert_int_equal(coord_store_begin(c->store, &err), 0);
    assert_int_equal(coord_store_add_telemetry(c->store, run.run_id, a, 1, 0, t_time_of(ts.s[0], 0),
                                               ts.text[0], &err),
                     0);
    coord_store_rollback(c->store);
    assert_int_equal(coord_store_begin(c->store, &err), 0);
    t_store_all(c, run.run_id, a, &ts);
    assert_int_equal(coord_store_commit(c->store, &err), 0);
    t_expect_stored(c, &ts);
    coord_db_t *db = t_side_db(c);
    assert_int_equal(coord_db_exec_script(db,
                                          "DELETE FROM telemetry_sample; DELETE FROM"
                                          " telemetry_layout; DELETE FROM telemetry_series;",
                                          &err),
                     0);
    coord_db_close(&db);
    assert_int_equal(coord_store_begin(c->store, &err), 0);
    t_store_all(c, run.run_id, a, &ts);
    assert_int_equal(coord_store_commit(c->store, &err), 0);
    t_expect_stored(c, &ts);
    t_free(&ts);
}

// A version-8 store (one JSON text row per sample) migrates to the typed tables unchanged.
static const char s_to_v8[] =
    "ALTER TABLE epochs DROP COLUMN bench; ALTER TABLE epochs DROP COLUMN work_flop;" // roofline
    " ALTER TABLE epochs DROP COLUMN work_bytes;"
    " DROP VIEW telemetry_json; DROP VIEW telemetry; DROP TABLE telemetry_sample;"
    " DROP TABLE telemetry_layout; DROP TABLE telemetry_series;"
    // the tables of later migrations (federated rounds, issue 14)
    " DROP TABLE fl_round_board; DROP TABLE fl_round; DROP TABLE fl_rounds;"
    " DROP TABLE run_weights; DROP TABLE weight_chunks; DROP TABLE blobs;"
    " CREATE TABLE telemetry(run TEXT NOT NULL REFERENCES runs(id), attempt INTEGER NOT NULL,"
    " seq INTEGER NOT NULL, idx INTEGER NOT NULL, t_us INTEGER NOT NULL, sample TEXT NOT NULL,"
    " PRIMARY KEY(run, attempt, seq, idx)) WITHOUT ROWID;"
    // The concurrent run kind's epoch columns (issue #15) came after version 8.
    " ALTER TABLE epochs DROP COLUMN concurrent_requests;"
    " ALTER TABLE epochs DROP COLUMN concurrent_infer_batches;"
    " ALTER TABLE epochs DROP COLUMN concurrent_infer_us;"
    " ALTER TABLE epochs DROP COLUMN concurrent_switch_us;"
    " ALTER TABLE epochs DROP COLUMN concurrent_latency_p50_us;"
    " ALTER TABLE epochs DROP COLUMN concurrent_latency_p99_us;"
    " ALTER TABLE epochs DROP COLUMN concurrent_latency_max_us;"
    " ALTER TABLE epochs DROP COLUMN concurrent_within_budget;"
    " PRAGMA user_version = 8;";

static void t_make_v8(tstore_ctx_t *c, const char *run, int64_t a, const t_samples_t *ts,
                      const char *bad_text)
{
    coord_store_destroy(&c->store);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(c->path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, s_to_v8, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(
        sqlite3_prepare_v2(db, "INSERT INTO telemetry VALUES(?, ?, ?, 0, ?, ?)", -1, &st, NULL),
        SQLITE_OK);
    for (size_t i = 0; i <= ts->n; i++) {
        const char *text = i < ts->n ? ts->text[i] : bad_text;
        if (!text) {
            break;
        }
        assert_int_equal(sqlite3_bind_text(st, 1, run, -1, SQLITE_STATIC), SQLITE_OK);
        assert_int_equal(sqlite3_bind_int64(st, 2, a), SQLITE_OK);
        assert_int_equal(sqlite3_bind_int64(st, 3, (int64_t) i + 1), SQLITE_OK);
        assert_int_equal(sqlite3_bind_int64(st, 4, i < ts->n ? t_time_of(ts->s[i], i) : 1),
                         SQLITE_OK);
        assert_int_equal(sqlite3_bind_text(st, 5, text, -1, SQLITE_STATIC), SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_DONE);
        assert_int_equal(sqlite3_reset(st), SQLITE_OK);
    }
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

static void test_migrates_version_8(void **state)
{
    tstore_ctx_t *c = *state;
    tstore_skip_on_postgres("it builds a version-8 store file with SQLite");
    t_samples_t ts;
    t_fixtures(&ts);
    jf_run_spec_t run = tstore_spec(TSTORE_BOARD, 1);
    tstore_put(c->store, &run, 1);
    int64_t a = tstore_complete(c->store, run.run_id, true);
    // A row that is not JSON stops the migration, which is rolled back whole.
    t_make_v8(c, run.run_id, a, &ts, "{not json");
    jf_err_t err = {0};
    assert_null(coord_store_open(c->path, false, &err));
    assert_non_null(strstr(err.msg, "migration 8 -> 9 failed"));
    assert_non_null(strstr(err.msg, "is not a JSON object"));
    coord_db_t *db = t_side_db(c);
    assert_int_equal(t_int(db, "PRAGMA user_version"), 8);
    assert_int_equal(t_int(db, "SELECT count(*) FROM telemetry"), (int64_t) ts.n + 1);
    coord_db_close(&db);
    // Without it: every row moves, unchanged.
    assert_int_equal(unlink(c->path), 0);
    c->store = coord_store_open(c->path, false, &err);
    assert_non_null(c->store);
    tstore_put(c->store, &run, 1);
    a = tstore_complete(c->store, run.run_id, true);
    t_make_v8(c, run.run_id, a, &ts, NULL);
    c->store = coord_store_open(c->path, false, &err);
    if (!c->store) {
        fail_msg("%s", err.msg);
    }
    assert_int_equal(coord_store_schema_version(c->store), coord_store_schema_latest());
    t_expect_stored(c, &ts);
    db = t_side_db(c);
    assert_int_equal(t_int(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'telemetry_v8'"),
                     0);
    coord_db_close(&db);
    t_free(&ts);
}

// ---- Per-second means ----

static json_t *t_xavier(void)
{
    char path[PATH_MAX];
    (void) snprintf(path, sizeof path, "%s/samples/sim-agx-xavier.json", getenv("JF_FIXTURES"));
    json_t *s = json_load_file(path, 0, NULL);
    assert_non_null(s);
    return s;
}

static void t_set_int(json_t *s, const char *path1, size_t i, const char *member, int64_t v)
{
    json_t *arr = json_object_get(s, path1);
    json_t *o = member ? json_array_get(arr, i) : s;
    assert_int_equal(json_object_set_new(o, member ? member : path1, json_integer(v)), 0);
}

static void t_add_xavier(tstore_ctx_t *c, const char *run, int64_t a, int64_t seq, int64_t t_us,
                         int64_t power_mw)
{
    json_t *s = t_xavier();
    t_set_int(s, "t_us", 0, NULL, t_us);
    t_set_int(s, "rails", 0, "power_mw", power_mw);
    char *text = json_dumps(s, JSON_COMPACT);
    jf_err_t err = {0};
    if (coord_store_add_telemetry(c->store, run, a, seq, 0, t_us, text, &err) != 0) {
        fail_msg("%s", err.msg);
    }
    free(text);
    json_decref(s);
}

static int64_t t_means(tstore_ctx_t *c, int64_t max_rows)
{
    int64_t n = -1;
    jf_err_t err = {0};
    if (coord_store_age_telemetry(c->store, JF_RETENTION_MEANS, INT64_MAX, max_rows, &n, &err) !=
        0) {
        fail_msg("means: %s", err.msg);
    }
    return n;
}

static void test_means(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[2] = {tstore_spec(TSTORE_BOARD, 1), tstore_spec(TSTORE_BOARD, 2)};
    tstore_put(c->store, runs, 2);
    int64_t a = tstore_complete(c->store, runs[0].run_id, true);
    for (int64_t i = 0; i < 25; i++) { // 10, 10 and 5 samples in three wall-clock seconds
        t_add_xavier(c, runs[0].run_id, a, i + 1, T_T0_US + i * T_PERIOD_US, 100 + i);
    }
    int64_t b = tstore_assign(c->store, runs[1].run_id);
    assert_int_equal(coord_store_run_start(c->store, runs[1].run_id, b, NULL), 0);
    for (int64_t i = 0; i < 5; i++) { // a running run: never averaged
        t_add_xavier(c, runs[1].run_id, b, i + 1, T_T0_US + i * T_PERIOD_US, 7);
    }
    int64_t due = -1;
    assert_int_equal(
        coord_store_agable_telemetry(c->store, JF_RETENTION_MEANS, INT64_MAX, &due, NULL), 0);
    assert_int_equal(due, 25);
    // Batches of 15 rows: a second cut by the batch's end waits for the next batch.
    assert_int_equal(t_means(c, 15), 10);
    assert_int_equal(t_means(c, 15), 10);
    assert_int_equal(t_means(c, 15), 5);
    assert_int_equal(t_means(c, 15), 1); // the series is marked averaged
    assert_int_equal(t_means(c, 15), 0);
    assert_int_equal(
        coord_store_agable_telemetry(c->store, JF_RETENTION_MEANS, INT64_MAX, &due, NULL), 0);
    assert_int_equal(due, 0);
    coord_db_t *db = t_side_db(c);
    coord_db_stmt_t *st = t_prepare(
        db, "SELECT mean_of, t_us, CAST(json_extract(sample, '$.rails[0].power_mw') AS INTEGER),"
            " CAST(json_extract(sample, '$.t_us') AS INTEGER), sample FROM telemetry_json"
            " WHERE run = ?1 ORDER BY seq");
    assert_int_equal(coord_db_bind_text(st, 1, runs[0].run_id), 0);
    static const int64_t want[3][3] = {
        {10, 450000, 105}, {10, 1450000, 115}, {5, 2200000, 122}}; // mean_of, t - T0, power
    json_t *x = t_xavier();
    for (int i = 0; i < 3; i++) {
        if (coord_db_step(st) != COORD_DB_ROW) {
            fail_msg("mean %d: %s", i, coord_db_errmsg(db));
        }
        assert_int_equal(coord_db_col_int64(st, 0), want[i][0]);
        assert_int_equal(coord_db_col_int64(st, 1), T_T0_US + want[i][1]);
        assert_int_equal(coord_db_col_int64(st, 2), want[i][2]);
        assert_int_equal(coord_db_col_int64(st, 3), T_T0_US + want[i][1]);
        // Everything else of these samples was constant: the mean is the sample.
        json_t *m = json_loads(coord_db_col_text(st, 4), 0, NULL);
        t_set_int(m, "t_us", 0, NULL, json_integer_value(json_object_get(x, "t_us")));
        t_set_int(m, "rails", 0, "power_mw", 480);
        assert_true(json_equal(m, x));
        json_decref(m);
    }
    assert_int_equal(coord_db_step(st), COORD_DB_DONE);
    coord_db_finalize(st);
    json_decref(x);
    assert_int_equal(t_int(db, "SELECT count(*) FROM telemetry WHERE mean_of IS NULL"), 5);
    coord_db_close(&db);
}

// ---- Size: bytes per stored sample, from the store's page count ----

// A simulated AGX Xavier sample (the fixture) moved by a seeded model of a board under load:
// time at 10 Hz with up to 2 ms of jitter, the CPU clock among three steps every 5 s and the
// GPU's among two every 3 s, RAM in random pages, each thermal zone and each rail's current
// in a random walk (power from the rail's voltage). Not a measurement of a board.
typedef struct t_board {
    json_t *s; // owned: the board's current sample
    jf_rng_t rng;
    int64_t t_us, mono_us, k;
} t_board_t;

static int64_t t_walk(jf_rng_t *rng, int64_t v, int64_t step, int64_t lo, int64_t hi)
{
    v += (int64_t) jf_rng_below(rng, (uint64_t) (2 * step + 1)) - step;
    return v < lo ? lo : v > hi ? hi : v;
}

static void t_board_step(t_board_t *b)
{
    static const int64_t cpu_hz[] = {1190400000, 1728000000, 2265600000};
    static const int64_t gpu_hz[] = {675750000, 1377000000};
    b->k++;
    int64_t jitter = (int64_t) jf_rng_below(&b->rng, 2000);
    b->t_us += T_PERIOD_US;
    b->mono_us += T_PERIOD_US;
    t_set_int(b->s, "t_us", 0, NULL, b->t_us + jitter);
    t_set_int(b->s, "mono_us", 0, NULL, b->mono_us + jitter);
    json_t *cores = json_object_get(b->s, "cpu_core_freq_hz");
    for (size_t i = 0; i < json_array_size(cores); i++) {
        (void) json_integer_set(json_array_get(cores, i), cpu_hz[(b->k / 50) % 3]);
    }
    t_set_int(b->s, "gpu_freq_hz", 0, NULL, gpu_hz[(b->k / 30) % 2]);
    int64_t total = json_integer_value(json_object_get(b->s, "ram_total_bytes"));
    int64_t used = json_integer_value(json_object_get(b->s, "ram_used_bytes"));
    used = t_walk(&b->rng, used / 4096, 256, 1, total / 4096 - 1) * 4096;
    t_set_int(b->s, "ram_used_bytes", 0, NULL, used);
    t_set_int(b->s, "ram_available_bytes", 0, NULL, total - used);
    const char *zone;
    json_t *mc;
    json_object_foreach(json_object_get(b->s, "temps_mc"), zone, mc)
    {
        (void) json_integer_set(mc, t_walk(&b->rng, json_integer_value(mc), 250, 20000, 95000));
    }
    json_t *rails = json_object_get(b->s, "rails");
    for (size_t i = 0; i < json_array_size(rails); i++) {
        json_t *r = json_array_get(rails, i);
        int64_t ma =
            t_walk(&b->rng, json_integer_value(json_object_get(r, "current_ma")), 40, 0, 3000);
        int64_t mv = json_integer_value(json_object_get(r, "voltage_mv"));
        (void) json_integer_set(json_object_get(r, "current_ma"), ma);
        (void) json_integer_set(json_object_get(r, "power_mw"), mv * ma / 1000);
    }
}

// The store's size: SQLite's pages, or on PostgreSQL the telemetry tables' (with their indexes
// and TOAST).
static int64_t t_store_bytes(coord_db_t *db)
{
    if (coord_db_kind(db) == COORD_DB_POSTGRES) {
        return t_int(db, "SELECT pg_total_relation_size('telemetry_sample')"
                         " + pg_total_relation_size('telemetry_layout')"
                         " + pg_total_relation_size('telemetry_series')");
    }
    return t_int(db, "PRAGMA page_count") * t_int(db, "PRAGMA page_size");
}

static void test_bytes_per_sample(void **state)
{
    tstore_ctx_t *c = *state;
    jf_run_spec_t runs[T_SIZE_BOARDS];
    t_board_t boards[T_SIZE_BOARDS];
    int64_t attempts[T_SIZE_BOARDS];
    for (int i = 0; i < T_SIZE_BOARDS; i++) {
        runs[i] = tstore_spec(TSTORE_BOARD, i + 1);
    }
    tstore_put(c->store, runs, T_SIZE_BOARDS);
    for (int i = 0; i < T_SIZE_BOARDS; i++) {
        attempts[i] = tstore_complete(c->store, runs[i].run_id, true);
        boards[i] = (t_board_t){.s = t_xavier(), .t_us = T_T0_US, .mono_us = 6841673031};
        jf_rng_seed(&boards[i].rng, 17, (uint64_t) i);
    }
    coord_db_t *db = t_side_db(c);
    int64_t before = t_store_bytes(db);
    // The boards' samples interleaved, one second's batch per board in turn, as a fleet sends.
    assert_int_equal(coord_store_begin(c->store, NULL), 0);
    for (int64_t k = 0; k < T_SIZE_SAMPLES; k++) {
        for (int i = 0; i < T_SIZE_BOARDS; i++) {
            t_board_step(&boards[i]);
            char *text = json_dumps(boards[i].s, JSON_COMPACT);
            jf_err_t err = {0};
            if (coord_store_add_telemetry(c->store, runs[i].run_id, attempts[i], k / 10 + 1, k % 10,
                                          boards[i].t_us, text, &err) != 0) {
                fail_msg("%s", err.msg);
            }
            free(text);
        }
    }
    assert_int_equal(coord_store_commit(c->store, NULL), 0);
    int64_t samples = t_int(db, "SELECT count(*) FROM telemetry");
    assert_int_equal(samples, T_SIZE_BOARDS * T_SIZE_SAMPLES);
    int64_t grown = t_store_bytes(db) - before;
    int64_t layouts = t_int(db, "SELECT count(*) FROM telemetry_layout");
    int64_t vals_bytes = t_int(db, "SELECT sum(length(vals)) FROM telemetry_sample");
    double per = (double) grown / (double) samples;
    printf("backend=%s model=sim-agx-xavier-random-walk boards=%d samples=%lld layouts=%lld "
           "store_bytes=%lld bytes_per_sample=%.1f vals_bytes_per_sample=%.1f\n",
           coord_db_kind(db) == COORD_DB_POSTGRES ? "postgresql" : "sqlite", T_SIZE_BOARDS,
           (long long) samples, (long long) layouts, (long long) grown, per,
           (double) vals_bytes / (double) samples);
    for (int i = 0; i < T_SIZE_BOARDS; i++) {
        json_decref(boards[i].s);
    }
    bool pg = coord_db_kind(db) == COORD_DB_POSTGRES;
    coord_db_close(&db);
    assert_int_equal(layouts, T_SIZE_BOARDS); // one shape per board: names never repeat
    // The bound is the packed format's (SQLite); PostgreSQL keeps each sample's JSON text.
    assert_true(pg || per <= T_BYTES_PER_SAMPLE_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack_lossless),
        cmocka_unit_test(test_pack_refuses_other_shapes),
        cmocka_unit_test(test_unpack_damaged),
        cmocka_unit_test(test_mean),
        cmocka_unit_test_setup_teardown(test_store_roundtrip_and_export, tstore_setup,
                                        tstore_teardown),
        cmocka_unit_test_setup_teardown(test_migrates_version_8, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_cache_rollback_and_other_writer, tstore_setup,
                                        tstore_teardown),
        cmocka_unit_test_setup_teardown(test_means, tstore_setup, tstore_teardown),
        cmocka_unit_test_setup_teardown(test_bytes_per_sample, tstore_setup, tstore_teardown),
    };
    int rc = tstore_main_begin();
    if (rc != 0) {
        return rc;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    tstore_main_end();
    return rc;
}
