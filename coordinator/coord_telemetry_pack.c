/* Telemetry sample packing (coord_telemetry_pack.h; docs/store.md, "Telemetry storage"). The
 * base and the sample are walked together in document order; every number of the sample
 * becomes one varint: an integer its difference from a prediction (the base's value), with a
 * power-of-1000 scale, a real its shortest exact decimal (or its 8 bytes). Not SQL. */
#include "coord_telemetry_pack.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define S_BUF_START      256
#define S_REAL_DIGITS    14                  // reals: decimals tried, 0..14
#define S_REAL_RAW       15                  // the tag of a real stored as its 8 bytes
#define S_REAL_EXACT_MAX 9007199254740992.0  // 2^53: a scaled real is exact below this
#define S_VARINT_MAX     10                  // bytes of a 64-bit LEB128 varint
#define S_ZZ_MAX         (UINT64_C(1) << 61) // a scaled difference must fit 62 bits + 2 tag bits

static const int64_t s_scale[4] = {1, 1000, 1000000, 1000000000};
static const double s_pow10[S_REAL_DIGITS + 1] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6, 1e7,
                                                  1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14};

// Members that are counters or running figures: a mean keeps the last sample's value
// (docs/store.md, "Retention"). Matched by key at any depth.
static const char *const s_last_keys[] = {"rapl_energy_uj", "rapl_max_energy_range_uj", "disk",
                                          "avg_power_mw"};

// What an integer is predicted from (docs/store.md, "Telemetry storage"): the base's value
// moved by an offset (an array element: by its previous sibling's difference, since the cores
// of a cluster share a clock), the sample's time column (t_us), the base's monotonic time moved
// by the time since the base (mono_us), or a value derived from members before it (s_derived).
typedef enum s_pred { S_PRED_BASE = 0, S_PRED_T, S_PRED_MONO, S_PRED_ABS } s_pred_t;

typedef struct s_hint {
    s_pred_t how;
    int64_t value; // S_PRED_BASE: the offset; S_PRED_ABS: the prediction
} s_hint_t;

// Members predicted from two members before them in the same object: a rail's power from its
// voltage and current (mV x mA / 1000), available RAM from total minus used.
typedef struct s_derived {
    const char *key, *a, *b;
    char op; // '*': a * b / 1000; '-': a - b
} s_derived_t;

static const s_derived_t s_derived[] = {
    {"power_mw", "voltage_mv", "current_ma", '*'},
    {"ram_available_bytes", "ram_total_bytes", "ram_used_bytes", '-'},
};
#define S_N_DERIVED (sizeof s_derived / sizeof s_derived[0])

// The operands of s_derived seen so far in one object (the sample's values).
typedef struct s_seen {
    bool has_a[S_N_DERIVED], has_b[S_N_DERIVED];
    int64_t a[S_N_DERIVED], b[S_N_DERIVED];
} s_seen_t;

typedef struct s_io {
    unsigned char *buf;      // pack: owned, grows; unpack: borrowed
    size_t len, cap, pos;    // bytes written (pack) or the blob's length and the read position
    int64_t base_t_us, t_us; // the time columns of the base and the sample
} s_io_t;

static uint64_t s_zigzag(int64_t v)
{
    return v < 0 ? ~((uint64_t) v << 1) : (uint64_t) v << 1;
}

static int64_t s_unzigzag(uint64_t u)
{
    return (u & 1) ? (int64_t) ~(u >> 1) : (int64_t) (u >> 1);
}

static int s_put(s_io_t *io, uint64_t v)
{
    if (io->cap - io->len < S_VARINT_MAX + 8) {
        size_t cap = io->cap ? io->cap * 2 : S_BUF_START;
        unsigned char *b = realloc(io->buf, cap);
        if (!b) {
            return -ENOMEM;
        }
        io->buf = b;
        io->cap = cap;
    }
    do {
        unsigned char byte = v & 0x7f;
        v >>= 7;
        io->buf[io->len++] = byte | (v ? 0x80 : 0);
    } while (v);
    return 0;
}

static int s_get(s_io_t *io, uint64_t *ret)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (io->pos >= io->len) {
            return -EPROTO;
        }
        unsigned char byte = io->buf[io->pos++];
        v |= (uint64_t) (byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *ret = v;
            return 0;
        }
    }
    return -EPROTO;
}

// The prediction of an integer whose base value is b.
static int64_t s_predict(const s_io_t *io, s_hint_t h, int64_t b)
{
    int64_t p = 0;
    switch (h.how) {
    case S_PRED_T:
        return io->t_us;
    case S_PRED_ABS:
        return h.value;
    case S_PRED_MONO:
        return !__builtin_sub_overflow(io->t_us, io->base_t_us, &p) &&
                       !__builtin_add_overflow(b, p, &p)
                   ? p
                   : b;
    default:
        return !__builtin_add_overflow(b, h.value, &p) ? p : b;
    }
}

// A difference d as one varint: bit 0 clear, zigzag(d) above it; bit 0 set, d = m x 1000^k
// (k 1..3 in the next two bits, zigzag(m) above), for the round kHz and MHz of clocks.
static int s_pack_int(s_io_t *io, int64_t pred, int64_t x, int64_t *ret_d)
{
    int64_t d = 0;
    if (__builtin_sub_overflow(x, pred, &d)) {
        return -ENOMSG;
    }
    *ret_d = d;
    unsigned k = 0;
    while (d != 0 && k < 3 && d % s_scale[k + 1] == 0) {
        k++;
    }
    uint64_t zz = s_zigzag(d / s_scale[k]);
    if (k == 0) {
        return zz >= S_ZZ_MAX << 2 ? -ENOMSG : s_put(io, zz << 1);
    }
    return zz >= S_ZZ_MAX ? -ENOMSG : s_put(io, (zz << 2 | (k - 1)) << 1 | 1);
}

static int s_unpack_int(s_io_t *io, int64_t pred, int64_t *ret)
{
    uint64_t v = 0;
    int64_t d = 0;
    if (s_get(io, &v) != 0) {
        return -EPROTO;
    }
    if (!(v & 1)) {
        d = s_unzigzag(v >> 1);
    } else if (__builtin_mul_overflow(s_unzigzag(v >> 3), s_scale[((v >> 1) & 3) + 1], &d)) {
        return -EPROTO;
    }
    return __builtin_add_overflow(pred, d, ret) ? -EPROTO : 0;
}

// A real as the fewest decimals that give it back exactly, else its IEEE-754 bits.
static int s_pack_real(s_io_t *io, double x)
{
    for (unsigned p = 0; p <= S_REAL_DIGITS && !(x == 0.0 && signbit(x)); p++) {
        double scaled = x * s_pow10[p];
        if (!(fabs(scaled) < S_REAL_EXACT_MAX)) {
            break;
        }
        long long m = llround(scaled);
        if ((double) m / s_pow10[p] == x) {
            return s_put(io, s_zigzag(m) << 4 | p);
        }
    }
    uint64_t bits = 0;
    memcpy(&bits, &x, sizeof bits);
    int rc = s_put(io, S_REAL_RAW);
    for (int i = 0; rc == 0 && i < 8; i++) {
        io->buf[io->len++] = (unsigned char) (bits >> (8 * i)); // s_put left room for 8
    }
    return rc;
}

static int s_unpack_real(s_io_t *io, double *ret)
{
    uint64_t v = 0;
    if (s_get(io, &v) != 0) {
        return -EPROTO;
    }
    if ((v & 15) != S_REAL_RAW) {
        *ret = (double) s_unzigzag(v >> 4) / s_pow10[v & 15];
        return 0;
    }
    if (io->len - io->pos < 8) {
        return -EPROTO;
    }
    uint64_t bits = 0;
    for (int i = 0; i < 8; i++) {
        bits |= (uint64_t) io->buf[io->pos++] << (8 * i);
    }
    memcpy(ret, &bits, sizeof *ret);
    return 0;
}

// The hint of member key of an object at depth, given the members seen before it.
static s_hint_t s_member_hint(const char *key, int depth, const s_seen_t *seen)
{
    if (depth == 1 && strcmp(key, "t_us") == 0) {
        return (s_hint_t){.how = S_PRED_T};
    }
    if (depth == 1 && strcmp(key, "mono_us") == 0) {
        return (s_hint_t){.how = S_PRED_MONO};
    }
    for (size_t i = 0; i < S_N_DERIVED; i++) {
        const s_derived_t *r = &s_derived[i];
        int64_t p = 0;
        if (strcmp(key, r->key) != 0 || !seen->has_a[i] || !seen->has_b[i]) {
            continue;
        }
        bool over = r->op == '*' ? __builtin_mul_overflow(seen->a[i], seen->b[i], &p)
                                 : __builtin_sub_overflow(seen->a[i], seen->b[i], &p);
        if (!over) {
            return (s_hint_t){.how = S_PRED_ABS, .value = r->op == '*' ? p / 1000 : p};
        }
    }
    return (s_hint_t){.how = S_PRED_BASE};
}

// Notes member key's value v (an integer of the sample) as an operand of s_derived.
static void s_member_seen(s_seen_t *seen, const char *key, const json_t *v)
{
    for (size_t i = 0; json_is_integer(v) && i < S_N_DERIVED; i++) {
        if (strcmp(key, s_derived[i].a) == 0) {
            seen->has_a[i] = true;
            seen->a[i] = json_integer_value(v);
        } else if (strcmp(key, s_derived[i].b) == 0) {
            seen->has_b[i] = true;
            seen->b[i] = json_integer_value(v);
        }
    }
}

static int s_pack_walk(s_io_t *io, const json_t *b, const json_t *x, s_hint_t h, int depth,
                       int64_t *ret_d);

// jansson's iterators take non-const objects; nothing is modified through them.
static int s_pack_object(s_io_t *io, const json_t *b, const json_t *x, int depth)
{
    s_seen_t seen = {0};
    void *ib = json_object_iter((json_t *) b);
    void *ix = json_object_iter((json_t *) x);
    for (; ib && ix; ib = json_object_iter_next((json_t *) b, ib),
                     ix = json_object_iter_next((json_t *) x, ix)) {
        const char *key = json_object_iter_key(ib);
        if (strcmp(key, json_object_iter_key(ix)) != 0) {
            return -ENOMSG;
        }
        int64_t d = 0;
        int rc = s_pack_walk(io, json_object_iter_value(ib), json_object_iter_value(ix),
                             s_member_hint(key, depth + 1, &seen), depth + 1, &d);
        if (rc != 0) {
            return rc;
        }
        s_member_seen(&seen, key, json_object_iter_value(ix));
    }
    return ib || ix ? -ENOMSG : 0;
}

static int s_pack_array(s_io_t *io, const json_t *b, const json_t *x, int depth)
{
    if (json_array_size(b) != json_array_size(x)) {
        return -ENOMSG;
    }
    s_hint_t h = {.how = S_PRED_BASE};
    for (size_t i = 0; i < json_array_size(b); i++) {
        int64_t d = 0;
        int rc = s_pack_walk(io, json_array_get(b, i), json_array_get(x, i), h, depth + 1, &d);
        if (rc != 0) {
            return rc;
        }
        // The next element is predicted to move as this one did (0 when this is no integer).
        h.value = json_is_integer(json_array_get(b, i)) ? d : 0;
    }
    return 0;
}

// *ret_d: an integer's difference from its base value (for its next sibling), else 0.
static int s_pack_walk(s_io_t *io, const json_t *b, const json_t *x, s_hint_t h, int depth,
                       int64_t *ret_d)
{
    *ret_d = 0;
    if (json_typeof(b) != json_typeof(x)) {
        return -ENOMSG;
    }
    switch (json_typeof(b)) {
    case JSON_OBJECT:
        return s_pack_object(io, b, x, depth);
    case JSON_ARRAY:
        return s_pack_array(io, b, x, depth);
    case JSON_STRING:
        return json_equal(b, x) ? 0 : -ENOMSG;
    case JSON_INTEGER: {
        int64_t d = 0;
        int rc = s_pack_int(io, s_predict(io, h, json_integer_value(b)), json_integer_value(x), &d);
        if (rc == 0 &&
            __builtin_sub_overflow(json_integer_value(x), json_integer_value(b), ret_d)) {
            *ret_d = 0;
        }
        return rc;
    }
    case JSON_REAL:
        return s_pack_real(io, json_real_value(x));
    default: // true, false, null: the type is the value
        return 0;
    }
}

int coord_tpack_pack(const json_t *base, int64_t base_t_us, const json_t *sample, int64_t t_us,
                     unsigned char **ret_blob, size_t *ret_len)
{
    s_io_t io = {.base_t_us = base_t_us, .t_us = t_us};
    int64_t d = 0;
    int rc = s_pack_walk(&io, base, sample, (s_hint_t){.how = S_PRED_BASE}, 0, &d);
    if (rc == 0 && !io.buf) {
        rc = s_put(&io, 0) == 0 ? 0 : -ENOMEM; // a sample without numbers: one byte, not NULL
    }
    if (rc != 0) {
        free(io.buf);
        return rc;
    }
    *ret_blob = io.buf;
    *ret_len = io.len;
    return 0;
}

// Sets the numbers of v (a copy of the base) from the blob, in the packer's order, with the
// packer's hints. *ret_d as for s_pack_walk.
static int s_unpack_walk(s_io_t *io, json_t *v, s_hint_t h, int depth, int64_t *ret_d)
{
    *ret_d = 0;
    int rc = 0;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        s_seen_t seen = {0};
        for (void *it = json_object_iter(v); it && rc == 0; it = json_object_iter_next(v, it)) {
            const char *key = json_object_iter_key(it);
            int64_t d = 0;
            rc = s_unpack_walk(io, json_object_iter_value(it), s_member_hint(key, depth + 1, &seen),
                               depth + 1, &d);
            s_member_seen(&seen, key, json_object_iter_value(it));
        }
        return rc;
    }
    case JSON_ARRAY: {
        s_hint_t eh = {.how = S_PRED_BASE};
        for (size_t i = 0; i < json_array_size(v) && rc == 0; i++) {
            int64_t d = 0;
            bool is_int = json_is_integer(json_array_get(v, i));
            rc = s_unpack_walk(io, json_array_get(v, i), eh, depth + 1, &d);
            eh.value = is_int ? d : 0;
        }
        return rc;
    }
    case JSON_INTEGER: {
        int64_t x = 0, b = json_integer_value(v);
        rc = s_unpack_int(io, s_predict(io, h, b), &x);
        if (rc == 0 && __builtin_sub_overflow(x, b, ret_d)) {
            *ret_d = 0;
        }
        return rc ? rc : json_integer_set(v, x) == 0 ? 0 : -ENOMEM;
    }
    case JSON_REAL: {
        double x = 0;
        rc = s_unpack_real(io, &x);
        return rc ? rc : json_real_set(v, x) == 0 ? 0 : -EPROTO;
    }
    default:
        return 0;
    }
}

int coord_tpack_unpack(const json_t *base, int64_t base_t_us, int64_t t_us,
                       const unsigned char *blob, size_t len, json_t **ret)
{
    json_t *v = json_deep_copy(base);
    if (!v) {
        return -ENOMEM;
    }
    s_io_t io = {
        .buf = (unsigned char *) blob, .len = blob ? len : 0, .base_t_us = base_t_us, .t_us = t_us};
    int64_t d = 0;
    int rc = s_unpack_walk(&io, v, (s_hint_t){.how = S_PRED_BASE}, 0, &d);
    bool empty_ok = io.pos == 0 && io.len == 1 && blob[0] == 0; // a sample without numbers
    if (rc == -ENOMEM) {
        json_decref(v);
        return rc;
    }
    if (rc != 0 || (io.pos != io.len && !empty_ok)) {
        json_decref(v);
        return -EPROTO;
    }
    *ret = v;
    return 0;
}

static bool s_is_last_key(const char *key)
{
    for (size_t i = 0; key && i < sizeof s_last_keys / sizeof s_last_keys[0]; i++) {
        if (strcmp(key, s_last_keys[i]) == 0) {
            return true;
        }
    }
    return false;
}

// The mean of one number over nodes[0..n) into out (a copy of the last sample's node).
static int s_mean_number(json_t *out, json_t *const *nodes, size_t n)
{
    double sum = 0.0;
    if (json_is_integer(out)) {
        int64_t first = json_integer_value(nodes[0]);
        for (size_t i = 0; i < n; i++) {
            sum += (double) json_integer_value(nodes[i]) - (double) first;
        }
        return json_integer_set(out, first + llround(sum / (double) n)) == 0 ? 0 : -EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        sum += json_real_value(nodes[i]);
    }
    return json_real_set(out, sum / (double) n) == 0 ? 0 : -EINVAL;
}

static int s_mean_walk(json_t *out, json_t *const *nodes, size_t n);

// The children of nodes[0..n) under key (an object member) or index (key NULL).
static int s_mean_child(json_t *out_child, json_t *const *nodes, size_t n, const char *key,
                        size_t index)
{
    json_t **kids = malloc(n * sizeof *kids);
    if (!kids) {
        return -ENOMEM;
    }
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        kids[i] = key ? json_object_get(nodes[i], key) : json_array_get(nodes[i], index);
        rc = kids[i] && json_typeof(kids[i]) == json_typeof(out_child) ? 0 : -EINVAL;
    }
    rc = rc ? rc : s_mean_walk(out_child, kids, n);
    free(kids);
    return rc;
}

// The samples' node sizes (members, elements) must be out's: one shape.
static bool s_same_size(const json_t *out, json_t *const *nodes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t size = json_is_object(out) ? json_object_size(nodes[i]) : json_array_size(nodes[i]);
        if (json_typeof(nodes[i]) != json_typeof(out) ||
            size != (json_is_object(out) ? json_object_size(out) : json_array_size(out))) {
            return false;
        }
    }
    return true;
}

static int s_mean_walk(json_t *out, json_t *const *nodes, size_t n)
{
    if ((json_is_object(out) || json_is_array(out)) && !s_same_size(out, nodes, n)) {
        return -EINVAL;
    }
    switch (json_typeof(out)) {
    case JSON_OBJECT:
        for (void *it = json_object_iter(out); it; it = json_object_iter_next(out, it)) {
            const char *key = json_object_iter_key(it);
            int rc =
                s_is_last_key(key) ? 0 : s_mean_child(json_object_iter_value(it), nodes, n, key, 0);
            if (rc != 0) {
                return rc;
            }
        }
        return 0;
    case JSON_ARRAY:
        for (size_t i = 0; i < json_array_size(out); i++) {
            int rc = s_mean_child(json_array_get(out, i), nodes, n, NULL, i);
            if (rc != 0) {
                return rc;
            }
        }
        return 0;
    case JSON_INTEGER:
    case JSON_REAL:
        return s_mean_number(out, nodes, n);
    default:
        return 0;
    }
}

int coord_tpack_mean(json_t *const *samples, size_t n, json_t **ret)
{
    if (n == 0) {
        return -EINVAL;
    }
    json_t *out = json_deep_copy(samples[n - 1]);
    int rc = out ? s_mean_walk(out, samples, n) : -ENOMEM;
    if (rc != 0) {
        json_decref(out);
        return rc;
    }
    *ret = out;
    return 0;
}

static void s_sql_json(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void) argc; // registered with 4
    const char *text = (const char *) sqlite3_value_text(argv[0]);
    json_error_t jerr;
    json_t *base = text ? json_loads(text, 0, &jerr) : NULL;
    json_t *v = NULL;
    int rc = base ? coord_tpack_unpack(base, sqlite3_value_int64(argv[1]),
                                       sqlite3_value_int64(argv[2]), sqlite3_value_blob(argv[3]),
                                       (size_t) sqlite3_value_bytes(argv[3]), &v)
                  : -EPROTO;
    char *out = rc == 0 ? json_dumps(v, JSON_COMPACT) : NULL;
    if (out) {
        sqlite3_result_text(ctx, out, -1, free);
    } else if (rc == -ENOMEM || rc == 0) {
        sqlite3_result_error_nomem(ctx);
    } else {
        sqlite3_result_error(ctx,
                             base ? "telemetry: a packed sample does not fit its layout"
                                  : "telemetry: a layout is not JSON",
                             -1);
    }
    json_decref(v);
    json_decref(base);
}

int coord_tpack_sql_register(sqlite3 *db)
{
    return sqlite3_create_function_v2(db, COORD_TPACK_SQL_FN, 4, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                      NULL, s_sql_json, NULL, NULL, NULL) == SQLITE_OK
               ? 0
               : -EIO;
}
