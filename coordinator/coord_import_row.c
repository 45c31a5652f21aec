/* Import: the columns of an import file as data (their spellings and units, docs/import.md,
 * "Columns") and the conversion of one row to the store's units (µs, mJ, mW, Hz). */
#include "coord_import_internal.h"

#include "jf_board_clocks.h"
#include "jf_parse.h"
#include "jf_units.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define S_HZ_PER_KHZ   INT64_C(1000)
#define S_HZ_PER_MHZ   INT64_C(1000000)
#define S_FREQ_MAX_HZ  INT64_C(10000000000) // 10 GHz: no Jetson clock is near it
#define S_TIME_MAX_S   1e7                  // 116 days per epoch
#define S_POWER_MAX_W  1000.0               // no Jetson draws a kilowatt
#define S_ENERGY_MAX_J 1e10
#define S_REPEAT_MAX   1000000

typedef struct s_spelling {
    const char *name;    // header text
    coord_icol_t col;    // the column it names
    int64_t hz_per_unit; // clock columns: Hz per unit of the spelling; else 1
} s_spelling_t;

static const s_spelling_t s_spellings[] = {
    {"board", COORD_ICOL_BOARD, 1},
    {"board_type", COORD_ICOL_TYPE, 1},
    {"workload", COORD_ICOL_WORKLOAD, 1},
    {"cores", COORD_ICOL_CORES, 1},
    {"cpu_freq_hz", COORD_ICOL_CPU, 1},
    {"cpu_freq_khz", COORD_ICOL_CPU, S_HZ_PER_KHZ},
    {"cpu_freq_mhz", COORD_ICOL_CPU, S_HZ_PER_MHZ},
    {"cpu_hz", COORD_ICOL_CPU, 1},
    {"cpu_khz", COORD_ICOL_CPU, S_HZ_PER_KHZ},
    {"cpu_mhz", COORD_ICOL_CPU, S_HZ_PER_MHZ},
    {"gpu_freq_hz", COORD_ICOL_GPU, 1},
    {"gpu_freq_khz", COORD_ICOL_GPU, S_HZ_PER_KHZ},
    {"gpu_freq_mhz", COORD_ICOL_GPU, S_HZ_PER_MHZ},
    {"gpu_hz", COORD_ICOL_GPU, 1},
    {"gpu_khz", COORD_ICOL_GPU, S_HZ_PER_KHZ},
    {"gpu_mhz", COORD_ICOL_GPU, S_HZ_PER_MHZ},
    {"emc_freq_hz", COORD_ICOL_EMC, 1},
    {"emc_freq_khz", COORD_ICOL_EMC, S_HZ_PER_KHZ},
    {"emc_freq_mhz", COORD_ICOL_EMC, S_HZ_PER_MHZ},
    {"emc_hz", COORD_ICOL_EMC, 1},
    {"emc_khz", COORD_ICOL_EMC, S_HZ_PER_KHZ},
    {"emc_mhz", COORD_ICOL_EMC, S_HZ_PER_MHZ},
    {"workers", COORD_ICOL_WORKERS, 1},
    {"batch_size", COORD_ICOL_BATCH, 1},
    {"epoch", COORD_ICOL_EPOCH, 1},
    {"epoch_time_s", COORD_ICOL_TIME, 1},
    {"mean_power_w", COORD_ICOL_POWER, 1},
    {"energy_j", COORD_ICOL_ENERGY, 1},
    {"storage", COORD_ICOL_STORAGE, 1},
    {"repeat", COORD_ICOL_REPEAT, 1},
    {"fetch_stall_s", COORD_ICOL_STALL, 1},
    {"compute_s", COORD_ICOL_COMPUTE, 1},
    {"power_mode", COORD_ICOL_MODE, 1},
    {"source", COORD_ICOL_SOURCE, 1},
};

#define S_N_SPELLINGS (sizeof s_spellings / sizeof s_spellings[0])

// The first spelling of a column, for messages.
static const char *s_col_name(coord_icol_t col)
{
    for (size_t i = 0; i < S_N_SPELLINGS; i++) {
        if (s_spellings[i].col == col) {
            return s_spellings[i].name;
        }
    }
    return "?";
}

static const s_spelling_t *s_spelling(const char *name)
{
    for (size_t i = 0; i < S_N_SPELLINGS; i++) {
        if (strcmp(s_spellings[i].name, name) == 0) {
            return &s_spellings[i];
        }
    }
    return NULL;
}

static int s_missing(const coord_iheader_t *h, const char *path, bool type_given, jf_err_t *err)
{
    for (int c = 0; c < COORD_ICOL_STORAGE; c++) {
        if (h->field_of[c] < 0 && !(c == COORD_ICOL_TYPE && type_given)) {
            return jf_err_set(err, -EINVAL,
                              "%s:1: required column '%s' is missing (docs/import.md lists the "
                              "columns)",
                              path, s_col_name((coord_icol_t) c));
        }
    }
    return 0;
}

int coord_iheader_parse(coord_iheader_t *h, char (*fields)[COORD_IMPORT_FIELD_MAX + 1], size_t n,
                        const char *path, bool type_given, jf_err_t *err)
{
    memset(h, 0, sizeof *h);
    for (int c = 0; c < COORD_ICOL_COUNT; c++) {
        h->field_of[c] = -1;
    }
    for (size_t i = 0; i < n; i++) {
        const s_spelling_t *sp = s_spelling(fields[i]);
        if (!sp) {
            return jf_err_set(err, -EINVAL,
                              "%s:1: unknown column '%.64s' (field %zu; docs/import.md lists the "
                              "columns)",
                              path, fields[i], i + 1);
        }
        if (h->field_of[sp->col] >= 0) {
            return jf_err_set(err, -EINVAL, "%s:1: column '%s' is given twice (fields %d and %zu)",
                              path, s_col_name(sp->col), h->field_of[sp->col] + 1, i + 1);
        }
        h->field_of[sp->col] = (int) i;
        h->col[i] = sp->col;
        h->scale[i] = sp->hz_per_unit;
    }
    h->n = n;
    return s_missing(h, path, type_given, err);
}

typedef struct s_ctx {
    const coord_iheader_t *h;                   // the header
    char (*fields)[COORD_IMPORT_FIELD_MAX + 1]; // the record
    char *why;                                  // where a problem is written
    size_t why_size;
} s_ctx_t;

// The field of column col, or NULL when the file has no such column.
static const char *s_field(const s_ctx_t *c, coord_icol_t col)
{
    int i = c->h->field_of[col];
    return i < 0 ? NULL : c->fields[i];
}

static int s_bad(const s_ctx_t *c, coord_icol_t col, const char *what)
{
    (void) snprintf(c->why, c->why_size, "column '%s': %s", s_col_name(col), what);
    return -EINVAL;
}

static int s_ident(const s_ctx_t *c, coord_icol_t col, const char *dflt, char *dst, size_t size)
{
    const char *t = s_field(c, col);
    if (!t) {
        t = dflt;
    }
    if (!jf_parse_is_ident(t)) {
        char what[COORD_IMPORT_FIELD_MAX + 96];
        (void) snprintf(what, sizeof what,
                        "'%.64s' is not a name (1 to 64 of a-z, 0-9, '.', '_', '-')", t);
        return s_bad(c, col, what);
    }
    (void) snprintf(dst, size, "%s", t);
    return 0;
}

static int s_int(const s_ctx_t *c, coord_icol_t col, int64_t dflt, int64_t min, int64_t max,
                 int64_t *ret)
{
    const char *t = s_field(c, col);
    jf_err_t e = {0};
    if (!t) {
        *ret = dflt;
        return 0;
    }
    return jf_parse_i64(t, min, max, ret, &e) == 0 ? 0 : s_bad(c, col, e.msg);
}

// A clock in the unit its header spelling names, to whole Hz (rounded).
static int s_freq(const s_ctx_t *c, coord_icol_t col, int64_t *ret_hz)
{
    int i = c->h->field_of[col];
    int64_t scale = c->h->scale[i];
    double v = 0;
    jf_err_t e = {0};
    if (jf_parse_double(c->fields[i], 0, (double) (S_FREQ_MAX_HZ / scale), &v, &e) != 0) {
        return s_bad(c, col, e.msg);
    }
    int64_t hz = llround(v * (double) scale);
    if (hz <= 0) {
        return s_bad(c, col, "a clock must be above 0 Hz");
    }
    *ret_hz = hz;
    return 0;
}

// Seconds (or W, J) as a number in [min, max]; absent: dflt.
static int s_real(const s_ctx_t *c, coord_icol_t col, double dflt, double min, double max,
                  double *ret)
{
    const char *t = s_field(c, col);
    jf_err_t e = {0};
    if (!t) {
        *ret = dflt;
        return 0;
    }
    return jf_parse_double(t, min, max, ret, &e) == 0 ? 0 : s_bad(c, col, e.msg);
}

// The fields that make the run id: board, workload, storage, operating point, workers, batch,
// repeat.
static int s_key(const s_ctx_t *c, coord_import_run_t *r)
{
    int64_t cores = 0, workers = 0, batch = 0, repeat = 0;
    int rc = s_ident(c, COORD_ICOL_BOARD, NULL, r->board, sizeof r->board);
    rc = rc ? rc : s_ident(c, COORD_ICOL_WORKLOAD, NULL, r->workload, sizeof r->workload);
    rc = rc ? rc : s_ident(c, COORD_ICOL_STORAGE, "unknown", r->storage, sizeof r->storage);
    rc = rc ? rc : s_int(c, COORD_ICOL_CORES, 0, 1, JF_BOARD_CORES_MAX, &cores);
    rc = rc ? rc : s_freq(c, COORD_ICOL_CPU, &r->cpu_hz);
    rc = rc ? rc : s_freq(c, COORD_ICOL_GPU, &r->gpu_hz);
    rc = rc ? rc : s_freq(c, COORD_ICOL_EMC, &r->emc_hz);
    rc = rc ? rc : s_int(c, COORD_ICOL_WORKERS, 0, 0, JF_WORKERS_MAX, &workers);
    rc = rc ? rc : s_int(c, COORD_ICOL_BATCH, 0, 1, JF_BATCH_MAX, &batch);
    rc = rc ? rc : s_int(c, COORD_ICOL_REPEAT, 0, 0, S_REPEAT_MAX, &repeat);
    r->cores = (int) cores;
    r->workers = (int) workers;
    r->batch_size = (int) batch;
    r->repeat = (int) repeat;
    return rc;
}

// The board type: a known type other than 'sim' (a simulated board is imported under the type
// it simulates), with room for the row's cores.
static int s_type(const s_ctx_t *c, const char *given, coord_import_run_t *r)
{
    const char *t = s_field(c, COORD_ICOL_TYPE);
    jf_board_type_t type = JF_BOARD_TYPE_COUNT;
    char what[COORD_IMPORT_FIELD_MAX + 256];
    if (!t || (given && strcmp(t, given) == 0)) {
        t = given;
    } else if (given) {
        (void) snprintf(what, sizeof what, "'%.64s' differs from --board-type '%s'", t, given);
        return s_bad(c, COORD_ICOL_TYPE, what);
    }
    if (!jf_board_type_parse(t, &type) || type == JF_BOARD_SIM) {
        (void) snprintf(what, sizeof what,
                        "unknown board type '%.64s' (expected one of %s; not "
                        "'sim')",
                        t, jf_board_type_names());
        return s_bad(c, COORD_ICOL_TYPE, what);
    }
    const jf_board_clocks_t *clocks = jf_board_clocks(type);
    int max_cores = clocks ? clocks->n_cpus : JF_BOARD_CORES_MAX;
    if (r->cores > max_cores) {
        (void) snprintf(what, sizeof what, "%d cores, but a %s has at most %d", r->cores, t,
                        max_cores);
        return s_bad(c, COORD_ICOL_CORES, what);
    }
    (void) snprintf(r->board_type, sizeof r->board_type, "%s", t);
    return 0;
}

static int s_label(const s_ctx_t *c, coord_irow_t *row)
{
    const char *mode = s_field(c, COORD_ICOL_MODE);
    if (mode && !jf_board_is_mode_name(mode)) {
        return s_bad(c, COORD_ICOL_MODE, "a power-mode name is 1 to 32 of A-Z, a-z, 0-9, '_'");
    }
    (void) snprintf(row->run.power_mode, sizeof row->run.power_mode, "%s",
                    mode ? mode : "imported");
    const char *src = s_field(c, COORD_ICOL_SOURCE);
    if (src && (src[0] == '\0' || strlen(src) > COORD_IMPORT_SOURCE_MAX)) {
        return s_bad(c, COORD_ICOL_SOURCE, "a source label is 1 to 64 characters");
    }
    (void) snprintf(row->source, sizeof row->source, "%s", src ? src : "");
    return 0;
}

// The epoch's figures, converted to µs, mJ and mW. Stall and compute are parts of the epoch.
static int s_figures(const s_ctx_t *c, coord_import_epoch_t *e)
{
    int64_t epoch = 0;
    double time_s = 0, power_w = 0, energy_j = 0, stall_s = 0, compute_s = 0;
    int rc = s_int(c, COORD_ICOL_EPOCH, 0, 0, JF_EPOCHS_MAX, &epoch);
    rc = rc ? rc : s_real(c, COORD_ICOL_TIME, 0, 1e-6, S_TIME_MAX_S, &time_s);
    rc = rc ? rc : s_real(c, COORD_ICOL_POWER, 0, 1e-6, S_POWER_MAX_W, &power_w);
    rc = rc ? rc : s_real(c, COORD_ICOL_ENERGY, 0, 0, S_ENERGY_MAX_J, &energy_j);
    rc = rc ? rc : s_real(c, COORD_ICOL_STALL, 0, 0, time_s, &stall_s);
    rc = rc ? rc : s_real(c, COORD_ICOL_COMPUTE, 0, 0, time_s, &compute_s);
    if (rc != 0) {
        return rc;
    }
    e->epoch = (int) epoch;
    e->e2e_us = llround(time_s * (double) JF_US_PER_S);
    e->fetch_stall_us = llround(stall_s * (double) JF_US_PER_S);
    e->compute_us = llround(compute_s * (double) JF_US_PER_S);
    e->energy_mj = energy_j * 1000.0;   // J -> mJ
    e->avg_power_mw = power_w * 1000.0; // W -> mW
    return 0;
}

int coord_irow_parse(const coord_iheader_t *h, char (*fields)[COORD_IMPORT_FIELD_MAX + 1], size_t n,
                     const char *sweep, const char *type, coord_irow_t *row, char *why,
                     size_t why_size)
{
    s_ctx_t c = {.h = h, .fields = fields, .why = why, .why_size = why_size};
    row->keyed = false;
    if (n != h->n) {
        (void) snprintf(why, why_size, "%zu fields, but the header has %zu", n, h->n);
        return -EINVAL;
    }
    int rc = s_key(&c, &row->run);
    if (rc != 0) {
        return rc;
    }
    row->run.ord = row->line;
    coord_import_run_id(sweep, &row->run, row->run.id);
    row->keyed = true;
    rc = s_type(&c, type, &row->run);
    rc = rc ? rc : s_label(&c, row);
    return rc ? rc : s_figures(&c, &row->epoch);
}

static uint64_t s_fnv(uint64_t h, const char *text)
{
    for (const unsigned char *p = (const unsigned char *) text; *p; p++) {
        h = (h ^ *p) * UINT64_C(1099511628211);
    }
    return (h ^ 0x1f) * UINT64_C(1099511628211); // a unit separator between fields
}

void coord_import_run_id(const char *sweep, const coord_import_run_t *run, char *buf)
{
    char nums[160];
    (void) snprintf(nums, sizeof nums, "%d/%lld/%lld/%lld/%d/%d/%d", run->cores,
                    (long long) run->cpu_hz, (long long) run->gpu_hz, (long long) run->emc_hz,
                    run->workers, run->batch_size, run->repeat);
    uint64_t h = UINT64_C(14695981039346656037); // FNV-1a 64 offset basis
    const char *parts[] = {sweep, run->board, run->workload, run->storage, nums};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        h = s_fnv(h, parts[i]);
    }
    (void) snprintf(buf, JF_RUN_ID_LEN + 1, "r%016llx", (unsigned long long) h);
}
