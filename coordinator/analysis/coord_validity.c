/* Measurement validity of a sweep's done runs (coord_validity.h): rules on the measure record
 * and the clock offset per run, then on the run's epochs (energy present, time within the
 * board's own distribution). The store supplies the facts (coord_store_run_facts_each,
 * coord_store_obs_each); the thresholds are the named constants of the header. */
#include "coord_validity.h"

#include "coord_stats.h"
#include "jf_fleet_config.h"
#include "jf_parse.h"
#include "jf_units.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_KEY_MAX    (6 * (COORD_OBS_NAME_MAX + 1))
#define S_SIM_PREFIX "simulated, speed "
#define S_GROW_MIN   16

static const char *const s_names[COORD_INVALID_COUNT] = {
    "no-measure", "telemetry",     "power-mode", "clock-offset", "energy-missing",
    "no-epochs",  "epoch-outlier", "throttled",  "other-load"};

// A run being checked: its verdict and the configuration key its epochs are compared within.
typedef struct s_run {
    coord_run_validity_t v;
    char key[S_KEY_MAX]; // board and configuration, set from its first epoch
} s_run_t;

// One measured epoch: its run (index) and time; key borrowed from the run.
typedef struct s_epoch {
    const char *key;
    size_t run;
    int epoch;
    double e2e_us;
} s_epoch_t;

typedef struct s_check {
    const coord_validity_opts_t *opts; // borrowed from the caller
    s_run_t *runs;                     // owned; does not move once the runs are read
    size_t n_runs;                     // runs read
    size_t cap_runs;                   // runs allocated
    s_run_t **by_id;   // owned array of borrowed pointers: the runs sorted by run id
    s_epoch_t *epochs; // owned
    size_t n_epochs;   // epochs read
    size_t cap_epochs; // epochs allocated
    size_t last;       // run of the last epoch seen: a run's epochs come together
} s_check_t;

const char *coord_invalid_name(coord_invalid_t reason)
{
    return reason < COORD_INVALID_COUNT ? s_names[reason] : "?";
}

// Marks v invalid for reason and appends the reason's text to its detail.
static void s_flag(coord_run_validity_t *v, coord_invalid_t reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void s_flag(coord_run_validity_t *v, coord_invalid_t reason, const char *fmt, ...)
{
    v->valid = false;
    v->reason[reason] = true;
    size_t used = strlen(v->detail);
    if (used > 0 && used + 2 < sizeof v->detail) {
        (void) snprintf(v->detail + used, sizeof v->detail - used, "; ");
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    (void) vsnprintf(v->detail + used, sizeof v->detail - used, fmt, ap);
    va_end(ap);
}

static int64_t s_int(const json_t *obj, const char *key, int64_t dflt)
{
    const json_t *x = json_object_get(obj, key);
    return json_is_integer(x) ? (int64_t) json_integer_value(x) : dflt;
}

// The sampling period the record's times are in: on a simulated board every time is modelled
// (time_base "simulated, speed N") and the sampler ran at wall_rate_hz of wall time, so one
// period is N / wall_rate_hz modelled seconds; elsewhere 1 / rate_hz.
static double s_period_us(const json_t *tel, int asked_hz)
{
    const char *base = json_string_value(json_object_get(tel, "time_base"));
    int64_t rate_hz = s_int(tel, "rate_hz", asked_hz);
    int64_t wall_hz = s_int(tel, "wall_rate_hz", 0);
    double speed = 0.0;
    if (base && strncmp(base, S_SIM_PREFIX, strlen(S_SIM_PREFIX)) == 0 && wall_hz > 0 &&
        jf_parse_double(base + strlen(S_SIM_PREFIX), 1e-6, 1e9, &speed, NULL) == 0) {
        return speed * (double) JF_US_PER_S / (double) wall_hz;
    }
    return rate_hz > 0 ? (double) JF_US_PER_S / (double) rate_hz : 0.0;
}

static void s_check_telemetry(const json_t *measure, const coord_run_facts_t *f,
                              coord_run_validity_t *v)
{
    const json_t *tel = json_object_get(measure, "telemetry");
    int64_t samples = s_int(tel, "samples", 0);
    if (!json_is_object(tel) || samples <= 0) {
        s_flag(v, COORD_INVALID_TELEMETRY, "no telemetry samples");
        return;
    }
    int64_t late = s_int(tel, "late", 0);
    int64_t missed = s_int(tel, "missed", 0);
    double missed_pct = 100.0 * (double) missed / (double) (samples + missed);
    double late_pct = 100.0 * (double) late / (double) samples;
    if (missed_pct > COORD_VALIDITY_MAX_MISSED_PCT) {
        s_flag(v, COORD_INVALID_TELEMETRY,
               "%lld of %lld sampling deadlines missed (%.1f%% > %.0f%%)", (long long) missed,
               (long long) (samples + missed), missed_pct, COORD_VALIDITY_MAX_MISSED_PCT);
    }
    if (late_pct > COORD_VALIDITY_MAX_LATE_PCT) {
        s_flag(v, COORD_INVALID_TELEMETRY, "%lld of %lld samples late (%.1f%% > %.0f%%)",
               (long long) late, (long long) samples, late_pct, COORD_VALIDITY_MAX_LATE_PCT);
    }
    double period_us = s_period_us(tel, f->telemetry_hz);
    int64_t gap_us = s_int(tel, "max_gap_us", 0);
    if (period_us > 0.0 && (double) gap_us > COORD_VALIDITY_MAX_GAP_PERIODS * period_us) {
        s_flag(
            v, COORD_INVALID_TELEMETRY, "longest telemetry gap %.3f s (> %.0f periods of %.3f s)",
            (double) gap_us / JF_US_PER_S, COORD_VALIDITY_MAX_GAP_PERIODS, period_us / JF_US_PER_S);
    }
}

// The mode the agent read back after setting it. A custom point reads back as no named mode;
// the agent checks the point's clocks itself and fails the run when they differ.
static void s_check_mode(const json_t *measure, const coord_run_facts_t *f, coord_run_validity_t *v)
{
    const json_t *pm = json_object_get(measure, "power_mode");
    const char *name = json_string_value(json_object_get(pm, "mode_name"));
    const json_t *id = json_object_get(pm, "mode_id");
    if (f->custom) {
        return;
    }
    if (!json_is_object(pm) || (!name && !json_is_integer(id))) {
        s_flag(v, COORD_INVALID_POWER_MODE, "power mode not read back (asked %d %s)",
               f->power_mode_id, f->power_mode);
        return;
    }
    bool name_ok = !name || strcmp(name, f->power_mode) == 0;
    bool id_ok = !json_is_integer(id) || json_integer_value(id) == f->power_mode_id;
    if (!name_ok || !id_ok) {
        s_flag(v, COORD_INVALID_POWER_MODE, "power mode read back %lld %s, asked %d %s",
               json_is_integer(id) ? (long long) json_integer_value(id) : -1LL,
               name ? name : "(no name)", f->power_mode_id, f->power_mode);
    }
}

// The zone with the highest temperature of the record's thermal object, for the detail.
static void s_hottest(const json_t *th, char *buf, size_t size)
{
    const char *name = NULL;
    const char *best = NULL;
    json_t *v = NULL;
    int64_t best_mc = 0;
    json_object_foreach((json_t *) json_object_get(th, "max_temps_mc"), name, v)
    {
        if (json_is_integer(v) && (!best || json_integer_value(v) > best_mc)) {
            best = name;
            best_mc = json_integer_value(v);
        }
    }
    buf[0] = '\0';
    if (best) {
        (void) snprintf(buf, size, "; hottest zone %.64s %.1f C", best, (double) best_mc / 1000.0);
    }
}

// Pinned clocks (dvfs_off, or a sim board: its model always runs at the mode's caps) read back
// below the mode's: the board lowered them, which is throttling. With DVFS on a governor lowers
// them too, so nothing is concluded there. Records without the thermal object (older agents)
// are not checked.
static void s_check_throttle(const json_t *measure, const coord_run_facts_t *f,
                             coord_run_validity_t *v)
{
    const json_t *th = json_object_get(measure, "thermal");
    const json_t *pm = json_object_get(measure, "power_mode");
    bool pinned = json_is_true(json_object_get(pm, "dvfs_off")) || strcmp(f->platform, "sim") == 0;
    if (!json_is_object(th) || !pinned) {
        return;
    }
    char hot[96];
    s_hottest(th, hot, sizeof hot);
    int64_t gn = s_int(th, "gpu_samples", 0);
    int64_t gb = s_int(th, "gpu_below", 0);
    if (gn > 0 && 100.0 * (double) gb / (double) gn > COORD_VALIDITY_MAX_BELOW_PCT) {
        s_flag(v, COORD_INVALID_THROTTLED,
               "GPU below the mode's %.0f MHz in %lld of %lld samples (%.1f%% > %.0f%%), lowest "
               "%.0f MHz%s",
               (double) s_int(th, "gpu_cap_hz", 0) / 1e6, (long long) gb, (long long) gn,
               100.0 * (double) gb / (double) gn, COORD_VALIDITY_MAX_BELOW_PCT,
               (double) s_int(th, "gpu_lowest_hz", 0) / 1e6, hot);
    }
    int64_t cn = s_int(th, "cpu_samples", 0);
    int64_t cb = s_int(th, "cpu_below", 0);
    const json_t *sf = json_object_get(th, "cpu_max_shortfall_pct");
    if (cn > 0 && 100.0 * (double) cb / (double) cn > COORD_VALIDITY_MAX_BELOW_PCT) {
        s_flag(v, COORD_INVALID_THROTTLED,
               "CPU cores below their cluster's cap in %lld of %lld readings (%.1f%% > %.0f%%), "
               "up to %.1f%% below%s",
               (long long) cb, (long long) cn, 100.0 * (double) cb / (double) cn,
               COORD_VALIDITY_MAX_BELOW_PCT, json_is_number(sf) ? json_number_value(sf) : 0.0, hot);
    }
}

// GPU load before epoch 0 (measure.gpu_before) beyond its bound, on real boards.
static void s_check_gpu_before(const json_t *measure, bool sim, coord_run_validity_t *v)
{
    const json_t *g = json_object_get(measure, "gpu_before");
    const json_t *mean = json_object_get(g, "mean_pct");
    if (sim || !json_is_number(mean) ||
        json_number_value(mean) <= COORD_VALIDITY_MAX_GPU_BEFORE_PCT) {
        return;
    }
    const json_t *max = json_object_get(g, "max_pct");
    s_flag(v, COORD_INVALID_OTHER_LOAD,
           "GPU load %.1f%% on average before epoch 0 began (> %.0f%%: another process), at most "
           "%.1f%%, over %lld samples",
           json_number_value(mean), COORD_VALIDITY_MAX_GPU_BEFORE_PCT,
           json_is_number(max) ? json_number_value(max) : 0.0,
           (long long) json_integer_value(json_object_get(g, "samples")));
}

// CPU time used outside the agent's process tree (measure.other_load) beyond the bound. A record
// without the figures (older agents, /proc unreadable) is not checked. Then the GPU's.
static void s_check_other_load(const json_t *measure, const coord_run_facts_t *f,
                               const coord_validity_opts_t *opts, coord_run_validity_t *v)
{
    const json_t *mean = json_object_get(json_object_get(measure, "other_load"), "mean_pct");
    const json_t *max = json_object_get(json_object_get(measure, "other_load"), "max_pct");
    bool sim = strcmp(f->platform, "sim") == 0;
    s_check_gpu_before(measure, sim, v);
    double bound = opts->other_load_max_pct > 0.0 ? opts->other_load_max_pct
                                                  : COORD_VALIDITY_MAX_OTHER_LOAD_PCT;
    if (!json_is_number(mean) || (sim && opts->other_load_max_pct <= 0.0)) {
        return;
    }
    if (json_number_value(mean) > bound) {
        s_flag(v, COORD_INVALID_OTHER_LOAD,
               "other load %.1f%% of the CPUs' time on average (> %.0f%%), at most %.1f%%%s",
               json_number_value(mean), bound, json_is_number(max) ? json_number_value(max) : 0.0,
               sim ? " (a sim board: the host's load)" : "");
    }
}

static void s_check_clock(const coord_run_facts_t *f, const coord_validity_opts_t *opts,
                          coord_run_validity_t *v)
{
    int64_t bound_us =
        opts->clock_offset_bound_us > 0 ? opts->clock_offset_bound_us : JF_DEFAULT_CLOCK_WARN_US;
    if (f->has_clock_offset && llabs(f->clock_offset_us) > bound_us) {
        s_flag(v, COORD_INVALID_CLOCK_OFFSET, "clock offset %.3f ms beyond the bound %.3f ms",
               (double) f->clock_offset_us / JF_US_PER_MS, (double) bound_us / JF_US_PER_MS);
    }
}

static void s_check_facts(const coord_run_facts_t *f, const coord_validity_opts_t *opts,
                          coord_run_validity_t *v)
{
    if (strcmp(f->platform, "imported") == 0) {
        // Measured elsewhere (jetfleet import, docs/import.md): no telemetry, mode read-back or
        // clock record to check; only the epoch-outlier rule, later, applies. Said, not hidden.
        (void) snprintf(v->detail, sizeof v->detail,
                        "imported: only the epoch-outlier rule is checked");
        return;
    }
    s_check_clock(f, opts, v);
    if (!f->measure_json) {
        s_flag(v, COORD_INVALID_NO_MEASURE, "no measure record");
        return;
    }
    json_error_t jerr;
    json_t *measure = json_loads(f->measure_json, 0, &jerr);
    if (!measure) {
        s_flag(v, COORD_INVALID_NO_MEASURE, "measure record unreadable: %d:%d: %s", jerr.line,
               jerr.column, jerr.text);
        return;
    }
    if (!json_is_object(measure)) {
        s_flag(v, COORD_INVALID_NO_MEASURE, "measure record unreadable: not an object");
        json_decref(measure);
        return;
    }
    s_check_telemetry(measure, f, v);
    s_check_mode(measure, f, v);
    s_check_throttle(measure, f, v);
    s_check_other_load(measure, f, opts, v);
    json_decref(measure);
}

// Makes room for one more element in *arr (n used of *cap, size bytes each); 0 or -ENOMEM.
static int s_grow(void **arr, size_t n, size_t *cap, size_t size)
{
    size_t want = *cap ? *cap * 2 : S_GROW_MIN;
    void *p = n < *cap ? *arr : realloc(*arr, want * size);
    if (!p) {
        return -ENOMEM;
    }
    *cap = n < *cap ? *cap : want;
    *arr = p;
    return 0;
}

static int s_on_facts(const coord_run_facts_t *f, void *arg)
{
    s_check_t *c = arg;
    if (s_grow((void **) &c->runs, c->n_runs, &c->cap_runs, sizeof *c->runs) != 0) {
        return -ENOMEM;
    }
    s_run_t *r = &c->runs[c->n_runs++];
    memset(r, 0, sizeof *r);
    coord_run_validity_t *v = &r->v;
    memcpy(v->run, f->run, sizeof v->run);
    memcpy(v->board, f->board, sizeof v->board);
    memcpy(v->board_type, f->board_type, sizeof v->board_type);
    memcpy(v->platform, f->platform, sizeof v->platform);
    v->valid = true;
    v->kind = coord_run_kind_of(f->roofline, f->idle_s, f->concurrent, f->runtime);
    s_check_facts(f, c->opts, v);
    return 0;
}

static int s_cmp_by_id(const void *a, const void *b)
{
    return strcmp((*(s_run_t *const *) a)->v.run, (*(s_run_t *const *) b)->v.run);
}

// Called once the runs are all read: the runs array does not move after this.
static int s_index_runs(s_check_t *c)
{
    c->by_id = malloc((c->n_runs ? c->n_runs : 1) * sizeof *c->by_id);
    if (!c->by_id) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < c->n_runs; i++) {
        c->by_id[i] = &c->runs[i];
    }
    qsort(c->by_id, c->n_runs, sizeof *c->by_id, s_cmp_by_id);
    return 0;
}

static s_run_t *s_find_run(s_check_t *c, const char *run)
{
    if (c->last < c->n_runs && strcmp(c->runs[c->last].v.run, run) == 0) {
        return &c->runs[c->last];
    }
    size_t lo = 0;
    size_t hi = c->n_runs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(c->by_id[mid]->v.run, run);
        if (cmp == 0) {
            c->last = (size_t) (c->by_id[mid] - c->runs);
            return c->by_id[mid];
        }
        lo = cmp < 0 ? mid + 1 : lo;
        hi = cmp < 0 ? hi : mid;
    }
    return NULL;
}

static int s_on_obs(const coord_obs_t *o, void *arg)
{
    s_check_t *c = arg;
    s_run_t *r = s_find_run(c, o->run);
    if (!r) {
        return 0; // a run that became done between the two reads: judged next time
    }
    if (!o->has_energy && !r->v.reason[COORD_INVALID_ENERGY_MISSING]) {
        s_flag(&r->v, COORD_INVALID_ENERGY_MISSING, "epoch %d has no energy", o->epoch);
    }
    if (r->v.epochs++ == 0) {
        // The kind is part of the key: a roofline or idle run's epochs are not training epochs
        // and a container's may differ from bare ones; each is compared with its own kind.
        (void) snprintf(r->key, sizeof r->key, "%s|%s|%s|%s|%d|%d|%d|%d", o->board, o->workload,
                        o->power_mode, o->storage, o->workers, o->batch_size, o->dvfs_off,
                        (int) r->v.kind);
    }
    if (s_grow((void **) &c->epochs, c->n_epochs, &c->cap_epochs, sizeof *c->epochs) != 0) {
        return -ENOMEM;
    }
    c->epochs[c->n_epochs++] = (s_epoch_t){.key = r->key,
                                           .run = (size_t) (r - c->runs),
                                           .epoch = o->epoch,
                                           .e2e_us = (double) o->e2e_us};
    return 0;
}

static int s_cmp_epoch(const void *a, const void *b)
{
    const s_epoch_t *x = a;
    const s_epoch_t *y = b;
    int cmp = strcmp(x->key, y->key);
    return cmp ? cmp : (x->run > y->run) - (x->run < y->run);
}

// The epochs [from, to) share board and configuration: flag the ones far outside the rest.
static int s_flag_outliers(s_check_t *c, size_t from, size_t to, double *work, jf_err_t *err)
{
    size_t n = to - from;
    for (size_t i = 0; i < n; i++) {
        work[i] = c->epochs[from + i].e2e_us;
    }
    coord_stats_t s = {0};
    int rc = coord_stats_compute(work, n, &s, err);
    for (size_t i = from; rc == 0 && i < to; i++) {
        const s_epoch_t *e = &c->epochs[i];
        double z = 0.0;
        double dev_pct = s.median > 0.0 ? 100.0 * fabs(e->e2e_us - s.median) / s.median : 0.0;
        if (coord_stats_is_outlier(&s, e->e2e_us, &z) &&
            dev_pct > COORD_VALIDITY_EPOCH_MIN_DEV_PCT) {
            s_flag(&c->runs[e->run].v, COORD_INVALID_EPOCH_OUTLIER,
                   "epoch %d e2e %.3f s vs median %.3f s of the board's %zu epochs in this "
                   "configuration (modified z %.1f)",
                   e->epoch, e->e2e_us / JF_US_PER_S, s.median / JF_US_PER_S, n, z);
        }
    }
    return rc;
}

static int s_check_epochs(s_check_t *c, jf_err_t *err)
{
    if (c->n_epochs > 1) { // qsort wants a non-NULL array even for 0 elements
        qsort(c->epochs, c->n_epochs, sizeof *c->epochs, s_cmp_epoch);
    }
    double *work = malloc((c->n_epochs ? c->n_epochs : 1) * sizeof *work);
    if (!work) {
        return jf_err_set(err, -ENOMEM, "validity: out of memory");
    }
    int rc = 0;
    for (size_t from = 0, to = 0; rc == 0 && from < c->n_epochs; from = to) {
        for (to = from + 1; to < c->n_epochs && strcmp(c->epochs[to].key, c->epochs[from].key) == 0;
             to++) {
        }
        rc = s_flag_outliers(c, from, to, work, err);
    }
    free(work);
    for (size_t i = 0; i < c->n_runs; i++) {
        if (c->runs[i].v.epochs == 0) {
            s_flag(&c->runs[i].v, COORD_INVALID_NO_EPOCHS, "no measured epoch");
        }
    }
    return rc;
}

int coord_validity_check_sweep(coord_store_t *store, const char *sweep,
                               const coord_validity_opts_t *opts, coord_validity_fn fn, void *arg,
                               jf_err_t *err)
{
    static const coord_validity_opts_t defaults = {0};
    s_check_t c = {.opts = opts ? opts : &defaults};
    int rc = coord_store_run_facts_each(store, sweep, s_on_facts, &c, err);
    if (rc == 0 && s_index_runs(&c) != 0) {
        rc = jf_err_set(err, -ENOMEM, "validity: out of memory");
    }
    rc = rc == 0 ? coord_store_obs_each(store, sweep, s_on_obs, &c, err) : rc;
    if (rc == -ENOMEM && err && !err->msg[0]) {
        jf_err_set(err, -ENOMEM, "validity: out of memory");
    }
    rc = rc == 0 ? s_check_epochs(&c, err) : rc;
    for (size_t i = 0; rc == 0 && i < c.n_runs; i++) {
        rc = fn(&c.runs[i].v, arg);
    }
    free(c.runs);
    free(c.by_id);
    free(c.epochs);
    return rc;
}

void coord_validity_reasons_format(const coord_run_validity_t *v, char *buf, size_t size)
{
    size_t used = 0;
    if (size == 0) {
        return;
    }
    buf[0] = '\0';
    for (int r = 0; r < COORD_INVALID_COUNT && used < size; r++) {
        if (v->reason[r]) {
            int n = snprintf(buf + used, size - used, "%s%s", used ? "," : "", s_names[r]);
            used += n > 0 ? (size_t) n : 0;
        }
    }
}

void coord_validity_summary_add(coord_validity_summary_t *self, const coord_run_validity_t *v)
{
    self->runs++;
    self->valid += v->valid;
    for (int r = 0; r < COORD_INVALID_COUNT; r++) {
        self->by_reason[r] += v->reason[r];
    }
}

void coord_validity_summary_format(const coord_validity_summary_t *self, char *buf, size_t size)
{
    int used = snprintf(buf, size, "%zu runs, %zu valid, %zu left out", self->runs, self->valid,
                        self->runs - self->valid);
    const char *sep = ": ";
    for (int r = 0; r < COORD_INVALID_COUNT; r++) {
        if (self->by_reason[r] > 0 && used >= 0 && (size_t) used < size) {
            used += snprintf(buf + used, size - (size_t) used, "%s%s %zu", sep, s_names[r],
                             self->by_reason[r]);
            sep = ", ";
        }
    }
}
