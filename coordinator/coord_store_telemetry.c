/* Store: telemetry samples in typed tables (docs/store.md, "Telemetry storage"): a series per
 * run attempt, layouts (base samples) per series, one packed row per sample
 * (coord_telemetry_pack.c; on PostgreSQL the row holds the sample's JSON text instead, §10),
 * and the per-second means that retention puts in place of a finished run's samples
 * (coord_store_retention.h). Deleting samples is coord_store_retention.c's.
 */
#include "coord_store_internal.h"
#include "coord_store_retention.h"
#include "coord_telemetry_pack.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_US_PER_S INT64_C(1000000)
// Significant digits of a real in a sample's JSON text on PostgreSQL (s_json_text): 17 always
// gives a double back exactly.
#define S_REAL_DIGITS_MIN 15
#define S_REAL_DIGITS_MAX 17

typedef struct s_layout {
    int64_t n;    // its number in the series; -1: the series has none yet
    int64_t t_us; // the base sample's time column, us
    json_t *base; // owned; NULL with n = -1
} s_layout_t;

// One row of telemetry_sample.
typedef struct s_row {
    int64_t series, seq, idx;
    int64_t t_us;    // the sample's time column (t0_us + t_rel_us), us
    int64_t layout;  // the layout's number in the series
    int64_t mean_of; // 0 for a sample; the samples a mean stands for
} s_row_t;

// The series of (run, attempt): its id and t0_us, created with t0_us = t_us when new.
static int s_series(coord_store_t *self, const char *run, int64_t attempt, int64_t t_us,
                    int64_t *ret_id, int64_t *ret_t0_us, jf_err_t *err)
{
    coord_db_stmt_t *st = coord_store_stmt(
        self, "SELECT id, t0_us FROM telemetry_series WHERE run = ? AND attempt = ?",
        COORD_BINDS(coord_text(run), coord_int(attempt)), err);
    if (!st) {
        return -EIO;
    }
    int rc = coord_db_step(st);
    if (rc == COORD_DB_ROW) {
        *ret_id = coord_db_col_int64(st, 0);
        *ret_t0_us = coord_db_col_int64(st, 1);
    }
    coord_db_reset(st);
    if (rc != COORD_DB_ROW) {
        if (rc != COORD_DB_DONE) {
            return coord_store_fail(self, err, "reading a telemetry series");
        }
        int64_t id = 0;
        rc = coord_store_scalar(
            self, "INSERT INTO telemetry_series(run, attempt, t0_us) VALUES(?, ?, ?) RETURNING id",
            COORD_BINDS(coord_text(run), coord_int(attempt), coord_int(t_us)), &id, err);
        if (rc != 0) {
            return rc == -ENOENT
                       ? jf_err_set(err, -EIO, "%s: telemetry series: no id returned", self->path)
                       : rc;
        }
        *ret_id = id;
        *ret_t0_us = t_us;
    }
    return 0;
}

static void s_layout_fini(s_layout_t *l)
{
    json_decref(l->base);
    *l = (s_layout_t){.n = -1};
}

// Reads one layout (series, and n, or the latest when n < 0) into *l (released first).
static int s_layout_read(coord_store_t *self, int64_t series, int64_t n, s_layout_t *l,
                         jf_err_t *err)
{
    s_layout_fini(l);
    coord_db_stmt_t *st =
        coord_store_stmt(self,
                         "SELECT n, t_us, base FROM telemetry_layout WHERE series = ?"
                         " AND (?2 < 0 OR n = ?2) ORDER BY n DESC LIMIT 1",
                         COORD_BINDS(coord_int(series), coord_int(n)), err);
    if (!st) {
        return -EIO;
    }
    int rc = coord_db_step(st);
    int ret = 0;
    if (rc == COORD_DB_ROW) {
        json_error_t jerr;
        l->n = coord_db_col_int64(st, 0);
        l->t_us = coord_db_col_int64(st, 1);
        l->base = json_loads(coord_db_col_text(st, 2), 0, &jerr);
        ret = l->base ? 0
                      : jf_err_set(err, -EPROTO, "telemetry: layout %lld of series %lld: %s",
                                   (long long) l->n, (long long) series, jerr.text);
    } else if (rc != COORD_DB_DONE) {
        ret = coord_store_fail(self, err, "reading a telemetry layout");
    } else if (n >= 0) {
        ret = jf_err_set(err, -EPROTO, "telemetry: series %lld has no layout %lld",
                         (long long) series, (long long) n);
    }
    coord_db_reset(st);
    return ret;
}

// Makes sample (whose time column is t_us) the series' next layout.
static int s_layout_add(coord_store_t *self, int64_t series, const json_t *sample, int64_t t_us,
                        s_layout_t *l, jf_err_t *err)
{
    char *text = json_dumps(sample, JSON_COMPACT);
    if (!text) {
        return jf_err_set(err, -ENOMEM, "telemetry: out of memory");
    }
    int64_t n = l->n + 1;
    int rc = coord_store_exec(
        self, "INSERT INTO telemetry_layout(series, n, t_us, base) VALUES(?, ?, ?, ?)",
        COORD_BINDS(coord_int(series), coord_int(n), coord_int(t_us), coord_text(text)), err);
    free(text);
    if (rc != 0) {
        return rc;
    }
    s_layout_fini(l);
    *l = (s_layout_t){.n = n, .t_us = t_us, .base = json_deep_copy(sample)};
    return l->base ? 0 : jf_err_set(err, -ENOMEM, "telemetry: out of memory");
}

// True when samples are stored packed (SQLite). On PostgreSQL a row's vals holds the sample's
// compact JSON text (UTF-8): no SQL function there can unpack, and its coord_telemetry_json
// returns vals as text (coord_db_pg_compat.c), so every reader of telemetry_json works
// (docs/store.md §10). Layouts are kept alike on both: retention averages within one layout.
static bool s_packs(const coord_store_t *self)
{
    return coord_db_kind(self->db) == COORD_DB_SQLITE;
}

// The sample as compact JSON text whose reals have the fewest significant digits, 15 (what
// SQLite's JSON functions print) to 17 (jansson's default), that give every value back exactly.
// Caller frees; NULL without memory.
static char *s_json_text(const json_t *sample)
{
    for (int digits = S_REAL_DIGITS_MIN; digits < S_REAL_DIGITS_MAX; digits++) {
        char *text = json_dumps(sample, JSON_COMPACT | JSON_REAL_PRECISION(digits));
        json_t *back = text ? json_loads(text, 0, NULL) : NULL;
        bool exact = back && json_equal(back, sample);
        json_decref(back);
        if (exact) {
            return text;
        }
        free(text);
    }
    return json_dumps(sample, JSON_COMPACT | JSON_REAL_PRECISION(S_REAL_DIGITS_MAX));
}

// On PostgreSQL, replaces the packed *blob by the sample's JSON text; on SQLite keeps it.
static int s_vals_for_backend(const coord_store_t *self, const json_t *sample, unsigned char **blob,
                              size_t *len)
{
    if (s_packs(self)) {
        return 0;
    }
    free(*blob);
    *blob = (unsigned char *) s_json_text(sample);
    *len = *blob ? strlen((const char *) *blob) : 0;
    return *blob ? 0 : -ENOMEM;
}

// The sample a row's vals hold (packed against layout l, or JSON text on PostgreSQL), in *ret.
static int s_vals_read(const coord_store_t *self, const s_layout_t *l, int64_t t_us,
                       const void *vals, size_t len, json_t **ret)
{
    if (s_packs(self)) {
        return coord_tpack_unpack(l->base, l->t_us, t_us, vals, len, ret);
    }
    json_t *v = json_loadb(vals, len, 0, NULL);
    if (!json_is_object(v)) {
        json_decref(v);
        return -EPROTO;
    }
    *ret = v;
    return 0;
}

// Packs sample into layout *l, or, when it does not fit, into a new layout made of itself
// (which *l becomes); then inserts row (its layout set here).
static int s_store_row(coord_store_t *self, s_row_t *row, const json_t *sample, int64_t t0_us,
                       s_layout_t *l, jf_err_t *err)
{
    unsigned char *blob = NULL;
    size_t len = 0;
    int rc = l->base ? coord_tpack_pack(l->base, l->t_us, sample, row->t_us, &blob, &len) : -ENOMSG;
    if (rc == -ENOMSG) {
        rc = s_layout_add(self, row->series, sample, row->t_us, l, err);
        rc = rc ? rc : coord_tpack_pack(l->base, l->t_us, sample, row->t_us, &blob, &len);
    }
    rc = rc ? rc : s_vals_for_backend(self, sample, &blob, &len);
    if (rc != 0) {
        return rc == -ENOMEM ? jf_err_set(err, rc, "telemetry: out of memory") : rc;
    }
    row->layout = l->n;
    rc = coord_store_exec(self,
                          "INSERT INTO telemetry_sample(series, seq, idx, t_rel_us, layout,"
                          " mean_of, vals) VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                          COORD_BINDS(coord_int(row->series), coord_int(row->seq),
                                      coord_int(row->idx), coord_int(row->t_us - t0_us),
                                      coord_int(row->layout),
                                      row->mean_of ? coord_int(row->mean_of) : coord_text(NULL),
                                      coord_blob(blob, len)),
                          err);
    free(blob);
    return rc;
}

void coord_store_tcache_clear(coord_store_t *self, bool release)
{
    for (size_t i = 0; self->tcache && i < COORD_TCACHE_SLOTS; i++) {
        json_decref(self->tcache[i].layout_base);
        self->tcache[i] = (coord_tcache_slot_t){.layout_n = -1};
    }
    if (release) {
        free(self->tcache);
        self->tcache = NULL;
    }
}

// The cache slot of (run, attempt) (FNV-1a), or NULL without memory for the cache (then every
// sample reads its series and layout from the store, as without a cache).
static coord_tcache_slot_t *s_slot(coord_store_t *self, const char *run, int64_t attempt)
{
    if (!self->tcache) {
        self->tcache = calloc(COORD_TCACHE_SLOTS, sizeof *self->tcache);
        for (size_t i = 0; self->tcache && i < COORD_TCACHE_SLOTS; i++) {
            self->tcache[i].layout_n = -1;
        }
    }
    uint64_t h = UINT64_C(14695981039346656037);
    for (const char *p = run; *p; p++) {
        h = (h ^ (unsigned char) *p) * UINT64_C(1099511628211);
    }
    h = (h ^ (uint64_t) attempt) * UINT64_C(1099511628211);
    return self->tcache ? &self->tcache[h % COORD_TCACHE_SLOTS] : NULL;
}

static bool s_slot_is(const coord_tcache_slot_t *c, const char *run, int64_t attempt)
{
    return c && c->run[0] && c->attempt == attempt && strcmp(c->run, run) == 0;
}

// Keeps the series and its latest layout l (taken over) in slot c; without a slot l is released.
static void s_slot_keep(coord_tcache_slot_t *c, const char *run, int64_t attempt, int64_t series,
                        int64_t t0_us, s_layout_t *l)
{
    if (!c || strlen(run) > JF_RUN_ID_LEN) {
        s_layout_fini(l);
        return;
    }
    json_decref(c->layout_base);
    *c = (coord_tcache_slot_t){.attempt = attempt,
                               .series = series,
                               .t0_us = t0_us,
                               .layout_n = l->n,
                               .layout_t_us = l->t_us,
                               .layout_base = l->base};
    (void) snprintf(c->run, sizeof c->run, "%s", run);
    *l = (s_layout_t){.n = -1}; // the slot owns the base now
}

static int s_add(coord_store_t *self, const char *run, int64_t attempt, s_row_t *row,
                 const json_t *sample, jf_err_t *err)
{
    int64_t t0_us = 0, found = 0;
    coord_tcache_slot_t *c = s_slot(self, run, attempt);
    bool hit = s_slot_is(c, run, attempt);
    int rc = 0;
    if (hit) {
        row->series = c->series;
        t0_us = c->t0_us;
    } else {
        rc = s_series(self, run, attempt, row->t_us, &row->series, &t0_us, err);
    }
    // A repeated sample is ignored before it could make a layout of its own.
    rc = rc ? rc
            : coord_store_scalar(
                  self,
                  "SELECT count(*) FROM telemetry_sample WHERE series = ? AND "
                  "seq = ? AND idx = ?",
                  COORD_BINDS(coord_int(row->series), coord_int(row->seq), coord_int(row->idx)),
                  &found, err);
    if (rc != 0 || found) {
        return rc;
    }
    s_layout_t l = {.n = -1};
    if (hit && c->layout_base) {
        // Take the cached layout: the series' latest, as no one else adds layouts to a series
        // while the cache holds it (see COORD_TCACHE_SLOTS).
        l = (s_layout_t){.n = c->layout_n, .t_us = c->layout_t_us, .base = c->layout_base};
        c->layout_base = NULL;
        c->layout_n = -1;
    } else {
        rc = s_layout_read(self, row->series, -1, &l, err);
    }
    rc = rc ? rc : s_store_row(self, row, sample, t0_us, &l, err);
    if (rc == 0) {
        s_slot_keep(c, run, attempt, row->series, t0_us, &l);
    } else {
        s_layout_fini(&l);
    }
    return rc;
}

int coord_store_add_telemetry(coord_store_t *self, const char *run, int64_t attempt, int64_t seq,
                              int64_t index, int64_t t_us, const char *sample_json, jf_err_t *err)
{
    json_error_t jerr;
    json_t *sample = json_loads(sample_json, 0, &jerr);
    if (!json_is_object(sample)) {
        json_decref(sample);
        return jf_err_set(err, -EPROTO,
                          "telemetry: sample %lld/%lld of run '%.200s' attempt %lld is not a "
                          "JSON object: %s",
                          (long long) seq, (long long) index, run, (long long) attempt,
                          sample ? "another JSON type" : jerr.text);
    }
    s_row_t row = {.seq = seq, .idx = index, .t_us = t_us};
    int rc = s_add(self, run, attempt, &row, sample, err);
    json_decref(sample);
    return rc;
}

int coord_store_add_telemetry_obj(coord_store_t *self, const char *run, int64_t attempt,
                                  int64_t seq, int64_t index, int64_t t_us, const json_t *sample,
                                  jf_err_t *err)
{
    if (!json_is_object(sample)) {
        return jf_err_set(err, -EPROTO,
                          "telemetry: sample %lld/%lld of run '%.200s' attempt %lld is not a "
                          "JSON object",
                          (long long) seq, (long long) index, run, (long long) attempt);
    }
    s_row_t row = {.seq = seq, .idx = index, .t_us = t_us};
    return s_add(self, run, attempt, &row, sample, err);
}

int coord_store_telemetry_migrate_v8(coord_store_t *self, jf_err_t *err)
{
    coord_db_stmt_t *st = coord_db_prepare(self->db,
                                           "SELECT run, attempt, seq, idx, t_us, sample FROM "
                                           "telemetry_v8 ORDER BY run, attempt, seq, idx",
                                           NULL);
    if (!st) {
        return coord_store_fail(self, err, "migration 8 -> 9: reading telemetry");
    }
    int rc = 0, step = 0;
    while (rc == 0 && (step = coord_db_step(st)) == COORD_DB_ROW) {
        rc = coord_store_add_telemetry(self, coord_db_col_text(st, 0), coord_db_col_int64(st, 1),
                                       coord_db_col_int64(st, 2), coord_db_col_int64(st, 3),
                                       coord_db_col_int64(st, 4), coord_db_col_text(st, 5), err);
    }
    if (rc == 0 && step != COORD_DB_DONE) {
        rc = coord_store_fail(self, err, "migration 8 -> 9: reading telemetry");
    }
    coord_db_finalize(st);
    if (rc == 0 && coord_db_exec_script(self->db, "DROP TABLE telemetry_v8", NULL) != 0) {
        rc = coord_store_fail(self, err, "migration 8 -> 9: dropping the old telemetry table");
    }
    return rc;
}

// ---- Per-second means (docs/store.md, "Retention") ----

typedef struct s_raw {
    s_row_t row;
    json_t *sample; // owned
} s_raw_t;

// The next finished series (ended at or before cutoff_us) not yet averaged; -ENOENT if none.
static int s_due_series(coord_store_t *self, int64_t cutoff_us, int64_t *ret_id, int64_t *ret_t0_us,
                        jf_err_t *err)
{
    coord_db_stmt_t *st = coord_store_stmt(
        self,
        "SELECT s.id, s.t0_us FROM runs r CROSS JOIN telemetry_series s ON s.run = r.id"
        " WHERE r.state IN ('done', 'failed') AND r.finished_us <= ? AND s.averaged = 0 LIMIT 1",
        COORD_BINDS(coord_int(cutoff_us)), err);
    if (!st) {
        return -EIO;
    }
    int rc = coord_db_step(st);
    if (rc == COORD_DB_ROW) {
        *ret_id = coord_db_col_int64(st, 0);
        *ret_t0_us = coord_db_col_int64(st, 1);
    }
    coord_db_reset(st);
    return rc == COORD_DB_ROW    ? 0
           : rc == COORD_DB_DONE ? -ENOENT
                                 : coord_store_fail(self, err, "reading the series due");
}

// Reads up to max raw samples of a series in key order, unpacked. *ret_n is how many.
static int s_read_raw(coord_store_t *self, int64_t series, int64_t t0_us, s_raw_t *raw, int64_t max,
                      int64_t *ret_n, jf_err_t *err)
{
    coord_db_stmt_t *st = coord_store_stmt(
        self,
        "SELECT seq, idx, t_rel_us, layout, vals FROM telemetry_sample WHERE series = ? AND"
        " mean_of IS NULL ORDER BY seq, idx LIMIT ?",
        COORD_BINDS(coord_int(series), coord_int(max)), err);
    if (!st) {
        return -EIO;
    }
    s_layout_t l = {.n = -1};
    int64_t n = 0;
    int rc = 0, step = 0;
    while (rc == 0 && (step = coord_db_step(st)) == COORD_DB_ROW) {
        s_row_t r = {.series = series,
                     .seq = coord_db_col_int64(st, 0),
                     .idx = coord_db_col_int64(st, 1),
                     .t_us = t0_us + coord_db_col_int64(st, 2),
                     .layout = coord_db_col_int64(st, 3)};
        rc = r.layout == l.n ? 0 : s_layout_read(self, series, r.layout, &l, err);
        if (rc != 0) {
            break;
        }
        json_t *s = NULL;
        rc = s_vals_read(self, &l, r.t_us, coord_db_col_blob(st, 4), coord_db_col_bytes(st, 4), &s);
        if (rc != 0) {
            rc = jf_err_set(err, rc, "telemetry: sample %lld/%lld of series %lld: %s",
                            (long long) r.seq, (long long) r.idx, (long long) series,
                            rc == -ENOMEM   ? "out of memory"
                            : s_packs(self) ? "does not fit its layout"
                                            : "is not a JSON object");
            break;
        }
        raw[n++] = (s_raw_t){.row = r, .sample = s};
    }
    if (rc == 0 && step != COORD_DB_DONE) {
        rc = coord_store_fail(self, err, "reading samples to average");
    }
    coord_db_reset(st);
    s_layout_fini(&l);
    *ret_n = n;
    return rc;
}

// Replaces raw[0..n) (one layout, one second) by their mean, under the first's key.
static int s_average(coord_store_t *self, const s_raw_t *raw, size_t n, int64_t t0_us,
                     jf_err_t *err)
{
    json_t **samples = malloc(n * sizeof *samples);
    if (!samples) {
        return jf_err_set(err, -ENOMEM, "telemetry: out of memory");
    }
    double dt_us = 0.0;
    for (size_t i = 0; i < n; i++) {
        samples[i] = raw[i].sample;
        dt_us += (double) (raw[i].row.t_us - raw[0].row.t_us);
    }
    json_t *mean = NULL;
    int rc = coord_tpack_mean(samples, n, &mean);
    free(samples);
    if (rc != 0) {
        return jf_err_set(err, rc, "telemetry: averaging series %lld from sample %lld/%lld: %s",
                          (long long) raw[0].row.series, (long long) raw[0].row.seq,
                          (long long) raw[0].row.idx,
                          rc == -ENOMEM ? "out of memory" : "samples of one layout differ");
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = coord_store_exec(
            self, "DELETE FROM telemetry_sample WHERE series = ? AND seq = ? AND idx = ?",
            COORD_BINDS(coord_int(raw[i].row.series), coord_int(raw[i].row.seq),
                        coord_int(raw[i].row.idx)),
            err);
    }
    s_row_t row = raw[0].row;
    row.t_us += llround(dt_us / (double) n);
    row.mean_of = (int64_t) n;
    s_layout_t l = {.n = -1};
    rc = rc ? rc : s_layout_read(self, row.series, row.layout, &l, err);
    rc = rc ? rc : s_store_row(self, &row, mean, t0_us, &l, err);
    s_layout_fini(&l);
    json_decref(mean);
    return rc;
}

static bool s_same_group(const s_raw_t *a, const s_raw_t *b)
{
    return a->row.layout == b->row.layout && a->row.t_us / S_US_PER_S == b->row.t_us / S_US_PER_S;
}

// Averages the raw samples read, group by group (consecutive in key order, one layout, one
// wall-clock second). When the read was cut at max, its last group may go on past it: that
// group waits for the next batch, unless it is the only one. *ret_rows counts those averaged.
static int s_average_groups(coord_store_t *self, const s_raw_t *raw, int64_t n, bool cut,
                            int64_t t0_us, int64_t *ret_rows, jf_err_t *err)
{
    int64_t end = n;
    while (cut && end > 1 && s_same_group(&raw[end - 1], &raw[end - 2])) {
        end--;
    }
    if (cut && end > 1) {
        end--;
    } else if (cut) {
        end = n; // one second holds the whole batch: average it as it is
    }
    int rc = 0;
    int64_t g0 = 0;
    for (int64_t i = 1; rc == 0 && i <= end; i++) {
        if (i == end || !s_same_group(&raw[i], &raw[g0])) {
            rc = s_average(self, &raw[g0], (size_t) (i - g0), t0_us, err);
            g0 = i;
        }
    }
    *ret_rows = rc == 0 ? end : 0;
    return rc;
}

int coord_store_telemetry_means(coord_store_t *self, int64_t cutoff_us, int64_t max_rows,
                                int64_t *ret_rows, jf_err_t *err)
{
    if (max_rows < 1) {
        return jf_err_set(err, -EINVAL, "prune: max_rows must be at least 1, got %lld",
                          (long long) max_rows);
    }
    coord_store_tcache_clear(self, false); // means add layouts and delete samples
    int64_t series = 0, t0_us = 0, n = 0, done = 0;
    int rc = 0;
    // A series with no raw samples left is marked, and the next one looked at.
    while ((rc = s_due_series(self, cutoff_us, &series, &t0_us, err)) == 0) {
        s_raw_t *raw = calloc((size_t) max_rows, sizeof *raw);
        if (!raw) {
            return jf_err_set(err, -ENOMEM, "telemetry: out of memory");
        }
        rc = s_read_raw(self, series, t0_us, raw, max_rows, &n, err);
        rc = rc || n == 0 ? rc : s_average_groups(self, raw, n, n == max_rows, t0_us, &done, err);
        for (int64_t i = 0; i < n; i++) {
            json_decref(raw[i].sample);
        }
        free(raw);
        if (rc != 0 || n > 0) {
            break;
        }
        rc = coord_store_exec(self, "UPDATE telemetry_series SET averaged = 1 WHERE id = ?",
                              COORD_BINDS(coord_int(series)), err);
        if (rc != 0) {
            break;
        }
        if (++done >= max_rows) { // a series marked is progress: the caller comes back
            break;
        }
    }
    if (rc == -ENOENT) {
        rc = 0;
    }
    *ret_rows = rc == 0 ? done : 0;
    return rc;
}
