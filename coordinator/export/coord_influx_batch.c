/* One batch of the InfluxDB exporter (docs/metrics.md): reads, after the cursor, each run
 * attempt's telemetry samples, minibatches and epochs, then a finished run's result, up to the
 * batch size, and the fleet and sweep snapshot, into line protocol, moving a copy of the cursor
 * along. Sending and saving the cursor are coord_influx's. */
#include "coord_influx_batch.h"

#include "coord_influx_points.h"
#include "jf_log.h"
#include "jf_units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_KEY_MAX 160 // "<run id>/<attempt>"

typedef struct s_builder {
    coord_store_t *store;       // borrowed
    coord_influx_line_t *lines; // borrowed
    json_t *staged;             // borrowed: the cursor, moved along
    int batch;                  // points at most
} s_builder_t;

// ---- one attempt's rows ----

typedef struct s_attempt {
    char run[JF_IDENT_MAX + 1 + 64];
    int64_t attempt, current; // this attempt; the run's current one
    char state[16];
    char board[JF_IDENT_MAX + 1 + 64];
    char board_type[32];
    bool simulated;
    char workload[JF_IDENT_MAX + 1 + 64];
    int64_t started_us, finished_us; // 0 when NULL
    char fail_reason[64];            // "" when NULL
} s_attempt_t;

typedef struct s_pass {
    s_builder_t *x;
    coord_influx_run_tags_t tags;
    int64_t base_us;
    json_t *entry; // borrowed: the attempt's staged cursor entry
    size_t rows;   // rows read by the query
    bool full;     // the batch filled up
} s_pass_t;

static int64_t s_room(const s_builder_t *x)
{
    size_t points = coord_influx_line_points(x->lines);
    return points >= (size_t) x->batch ? 0 : (int64_t) ((size_t) x->batch - points);
}

// After a point could not be added: -ENOSPC ends the batch; any other reason skips the row, said
// in the log (a row line protocol cannot carry, or a stored sample that is not JSON).
static int s_after_add(s_pass_t *p, int rc, const jf_err_t *err)
{
    if (rc == -ENOSPC) {
        p->full = true;
        return rc;
    }
    if (rc != 0) {
        jf_log_warn("influx: %s; skipping that row of run '%s' attempt %" PRId64, err->msg,
                    p->tags.run, p->tags.attempt);
    }
    return 0;
}

static void s_set_pair(json_t *entry, const char *key, int64_t a, int64_t b)
{
    (void) json_object_set_new(entry, key, json_pack("[I, I]", (json_int_t) a, (json_int_t) b));
}

static int s_on_telemetry(const coord_export_row_t *row, void *arg)
{
    s_pass_t *p = arg;
    jf_err_t err = {0};
    int rc = row->kind[3] == COORD_VALUE_TEXT
                 ? coord_influx_points_telemetry(p->x->lines, &p->tags, row->i[2], row->s[3], &err)
                 : jf_err_set(&err, -EPROTO, "influx: stored sample without text");
    if (s_after_add(p, rc, &err) != 0) {
        return -ENOSPC;
    }
    p->rows++;
    s_set_pair(p->entry, "t", row->i[0], row->i[1]);
    return 0;
}

static int s_on_minibatch(const coord_export_row_t *row, void *arg)
{
    s_pass_t *p = arg;
    jf_err_t err = {0};
    int rc = coord_influx_points_minibatch(p->x->lines, &p->tags, p->base_us, row, &err);
    if (s_after_add(p, rc, &err) != 0) {
        return -ENOSPC;
    }
    p->rows++;
    s_set_pair(p->entry, "m", row->i[0], row->i[1]);
    return 0;
}

static int s_on_epoch(const coord_export_row_t *row, void *arg)
{
    s_pass_t *p = arg;
    jf_err_t err = {0};
    int rc = coord_influx_points_epoch(p->x->lines, &p->tags, p->base_us, row, &err);
    if (s_after_add(p, rc, &err) != 0) {
        return -ENOSPC;
    }
    p->rows++;
    s_set_pair(p->entry, "e", row->i[0], 0);
    return 0;
}

static int64_t s_pair(const json_t *entry, const char *key, size_t i)
{
    const json_t *v = json_array_get(json_object_get(entry, key), i);
    return v ? json_integer_value(v) : -1;
}

// Reads one record table of the attempt after the entry's cursor; -ENOSPC when the batch is full.
static int s_records(s_pass_t *p, coord_export_query_t q, const char *key, coord_export_row_fn fn,
                     jf_err_t *err)
{
    int64_t room = s_room(p->x);
    if (room == 0) {
        p->full = true;
        return -ENOSPC;
    }
    coord_export_key_t k = {.run = p->tags.run,
                            .attempt = p->tags.attempt,
                            .a = s_pair(p->entry, key, 0),
                            .b = s_pair(p->entry, key, 1),
                            .limit = room};
    int rc = coord_store_export_each(p->x->store, q, &k, fn, p, err);
    return rc == -ENOSPC || p->full ? -ENOSPC : rc;
}

static int s_on_scalar(const coord_export_row_t *row, void *arg)
{
    *(int64_t *) arg = row->kind[0] == COORD_VALUE_INT ? row->i[0] : 0;
    return 0;
}

// When the attempt's records are timed from (docs/metrics.md, "Timestamps"): kept in the cursor
// once known, so that it never changes.
static int64_t s_base_us(s_builder_t *x, const s_attempt_t *a, json_t *entry, jf_err_t *err)
{
    json_int_t kept = json_integer_value(json_object_get(entry, "base_us"));
    if (kept > 0) {
        return kept;
    }
    int64_t base = a->attempt == a->current ? a->started_us : 0;
    if (base == 0) {
        coord_export_key_t k = {.run = a->run, .attempt = a->attempt};
        if (coord_store_export_each(x->store, COORD_EXPORT_T0, &k, s_on_scalar, &base, err) != 0) {
            return -1;
        }
    }
    if (base > 0) {
        (void) json_object_set_new(entry, "base_us", json_integer(base));
    }
    return base;
}

static bool s_is_final(const s_attempt_t *a)
{
    return a->attempt < a->current || strcmp(a->state, "done") == 0 ||
           strcmp(a->state, "failed") == 0;
}

typedef struct s_result_arg {
    s_pass_t *p;
    const s_attempt_t *a;
    int rc;
} s_result_arg_t;

static int s_on_result(const coord_export_row_t *row, void *arg)
{
    s_result_arg_t *r = arg;
    coord_influx_result_t result = {.state = r->a->state,
                                    .fail_reason = r->a->fail_reason[0] ? r->a->fail_reason : NULL,
                                    .finished_us = r->a->finished_us};
    jf_err_t err = {0};
    r->rc = coord_influx_points_result(r->p->x->lines, &r->p->tags, &result, row, &err);
    return s_after_add(r->p, r->rc, &err);
}

// A final attempt with nothing left to read: its result (the current attempt of a finished run)
// and the entry marked done, so later ticks skip it.
static int s_finish(s_pass_t *p, const s_attempt_t *a, jf_err_t *err)
{
    if (a->attempt == a->current && a->finished_us > 0) {
        if (s_room(p->x) == 0) {
            p->full = true;
            return -ENOSPC;
        }
        s_result_arg_t r = {.p = p, .a = a};
        coord_export_key_t k = {.run = a->run, .attempt = a->attempt};
        int rc =
            coord_store_export_each(p->x->store, COORD_EXPORT_RESULT, &k, s_on_result, &r, err);
        if (rc != 0) {
            return rc;
        }
    }
    (void) json_object_set_new(p->entry, "done", json_true());
    return 0;
}

static int s_attempt(s_builder_t *x, const s_attempt_t *a, jf_err_t *err)
{
    char key[S_KEY_MAX];
    (void) snprintf(key, sizeof key, "%s/%" PRId64, a->run, a->attempt);
    json_t *all = json_object_get(x->staged, "attempts");
    json_t *entry = json_object_get(all, key);
    if (!entry) {
        entry = json_object();
        if (!entry || json_object_set_new(all, key, entry) != 0) {
            return jf_err_set(err, -ENOMEM, "influx: out of memory");
        }
    }
    if (json_is_true(json_object_get(entry, "done"))) {
        return 0;
    }
    s_pass_t p = {.x = x,
                  .tags = {.board = a->board,
                           .board_type = a->board_type,
                           .run = a->run,
                           .workload = a->workload,
                           .attempt = a->attempt,
                           .simulated = a->simulated},
                  .entry = entry};
    p.base_us = s_base_us(x, a, entry, err);
    if (p.base_us < 0) {
        return -EIO;
    }
    int rc = s_records(&p, COORD_EXPORT_TELEMETRY, "t", s_on_telemetry, err);
    if (p.base_us > 0) { // records wait until the attempt has a start time
        rc = rc ? rc : s_records(&p, COORD_EXPORT_MINIBATCHES, "m", s_on_minibatch, err);
        rc = rc ? rc : s_records(&p, COORD_EXPORT_EPOCHS, "e", s_on_epoch, err);
    }
    if (rc == 0 && p.rows == 0 && s_is_final(a)) {
        rc = s_finish(&p, a, err);
    }
    return rc;
}

// ---- a tick ----

typedef struct s_attempts {
    s_attempt_t *v; // owned (malloc)
    size_t n, cap;
} s_attempts_t;

static void s_copy(char *dst, size_t size, const coord_export_row_t *row, int col)
{
    (void) snprintf(dst, size, "%s", row->kind[col] == COORD_VALUE_NULL ? "" : row->s[col]);
}

static int s_on_attempt_row(const coord_export_row_t *row, void *arg)
{
    // Columns: id, attempt, state, board, board type, platform, workload, started_us,
    // finished_us, fail_reason.
    s_attempts_t *all = arg;
    if (all->n == all->cap) {
        size_t cap = all->cap ? 2 * all->cap : 64;
        s_attempt_t *grown = realloc(all->v, cap * sizeof *grown);
        if (!grown) {
            return -ENOMEM;
        }
        all->v = grown;
        all->cap = cap;
    }
    s_attempt_t *a = &all->v[all->n++];
    *a = (s_attempt_t){.current = row->i[1], .started_us = row->i[7], .finished_us = row->i[8]};
    s_copy(a->run, sizeof a->run, row, 0);
    s_copy(a->state, sizeof a->state, row, 2);
    s_copy(a->board, sizeof a->board, row, 3);
    s_copy(a->board_type, sizeof a->board_type, row, 4);
    a->simulated = row->kind[5] == COORD_VALUE_TEXT && strcmp(row->s[5], "sim") == 0;
    s_copy(a->workload, sizeof a->workload, row, 6);
    s_copy(a->fail_reason, sizeof a->fail_reason, row, 9);
    return 0;
}

static int s_on_fleet(const coord_export_row_t *row, void *arg)
{
    s_builder_t *x = arg;
    jf_err_t err = {0};
    (void) coord_influx_points_fleet(x->lines, jf_clock_wall_us(), row, &err); // full: next time
    return 0;
}

static int s_on_sweep(const coord_export_row_t *row, void *arg)
{
    s_builder_t *x = arg;
    jf_err_t err = {0};
    (void) coord_influx_points_sweep(x->lines, jf_clock_wall_us(), row, &err); // full: next time
    return 0;
}

static int s_build(s_builder_t *x, jf_err_t *err)
{
    s_attempts_t all = {0};
    int rc = coord_store_export_each(x->store, COORD_EXPORT_ATTEMPTS, &(coord_export_key_t){0},
                                     s_on_attempt_row, &all, err);
    for (size_t i = 0; rc == 0 && i < all.n; i++) {
        for (int64_t n = 1; rc == 0 && n <= all.v[i].current; n++) {
            s_attempt_t a = all.v[i];
            a.attempt = n;
            rc = s_attempt(x, &a, err);
        }
    }
    free(all.v);
    if (rc == -ENOMEM) {
        return jf_err_set(err, rc, "influx: out of memory listing run attempts");
    }
    if (rc != 0 && rc != -ENOSPC) {
        return rc;
    }
    coord_export_key_t none = {0};
    rc = coord_store_export_each(x->store, COORD_EXPORT_FLEET, &none, s_on_fleet, x, err);
    return rc ? rc
              : coord_store_export_each(x->store, COORD_EXPORT_SWEEPS, &none, s_on_sweep, x, err);
}

int coord_influx_batch_build(coord_store_t *store, coord_influx_line_t *lines, json_t *cursor,
                             int batch, jf_err_t *err)
{
    s_builder_t x = {.store = store, .lines = lines, .staged = cursor, .batch = batch};
    return s_build(&x, err);
}
