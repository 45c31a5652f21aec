/* Run spec: stable id, validation and the JSON form (docs/protocol.md §5.2). */
#include "jf_run_spec.h"

#include "jf_units.h"
#include "jf_workload.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JF_SEED_MAX (INT64_C(1) << 53) // exactly representable in every JSON reader

static const char *const s_media[] = {"sd", "emmc", "nvme", "usb-hdd", "usb-ssd",
                                      "ssd", "hdd", "local"};

static bool s_in_list(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; name && i < n; i++) {
        if (strcmp(name, list[i]) == 0) {
            return true;
        }
    }
    return false;
}

// Models and datasets are the workload catalogue's, so that a name is valid exactly when some
// supported pair uses it.
bool jf_run_spec_is_model(const char *name)
{
    return jf_workload_is_model(name);
}

bool jf_run_spec_is_dataset(const char *name)
{
    return jf_workload_is_dataset(name);
}

bool jf_run_spec_is_medium(const char *name)
{
    return s_in_list(name, s_media, sizeof s_media / sizeof s_media[0]);
}

const char *jf_run_spec_models(void)
{
    return jf_workload_models();
}

const char *jf_run_spec_datasets(void)
{
    return jf_workload_datasets();
}

const char *jf_run_spec_media(void)
{
    return "sd, emmc, nvme, usb-hdd, usb-ssd, ssd, hdd, local";
}

bool jf_run_spec_is_run_id(const char *text)
{
    if (!text || strlen(text) != JF_RUN_ID_LEN || text[0] != 'r') {
        return false;
    }
    for (size_t i = 1; i < JF_RUN_ID_LEN; i++) {
        char c = text[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            return false;
        }
    }
    return true;
}

bool jf_run_spec_has_power_extras(const jf_run_spec_t *spec)
{
    return spec->custom.n_cores != 0 || spec->dvfs_off;
}

// The canonical text of the power extras, appended to version 1's text only when there are any.
static void s_extras_text(const jf_run_spec_t *spec, char *buf, size_t size)
{
    const jf_run_custom_t *c = &spec->custom;
    int n = 0;
    if (c->n_cores != 0) {
        n = snprintf(buf, size, "|custom=%d,%" PRId64 ",%" PRId64 ",%" PRId64, c->n_cores,
                     c->cpu_hz, c->gpu_hz, c->emc_hz);
    }
    if (spec->dvfs_off && n >= 0 && (size_t) n < size) {
        (void) snprintf(buf + n, size - (size_t) n, "|dvfs=off");
    }
}

void jf_run_spec_compute_id(jf_run_spec_t *spec)
{
    // Version 1 of the canonical form. Changing it changes every id: bump the version instead.
    // Later fields are appended only when not at their default, which keeps every earlier id.
    char text[1024] = {0};
    char extras[256] = {0};
    s_extras_text(spec, extras, sizeof extras);
    (void) snprintf(text, sizeof text,
                    "jf-run-v1|%s|%s|%s|%s|%d|%d|%s|%s|%d|%d|%d|%d|%d|%" PRIu64 "|%d|%d|%" PRId64
                    "%s",
                    spec->board, spec->workload, spec->model, spec->dataset, spec->epochs,
                    spec->power_mode_id, spec->power_mode, spec->storage, spec->workers,
                    spec->prefetch, spec->batch_size, spec->repeat, spec->threads, spec->seed,
                    spec->drop_caches ? 1 : 0, spec->telemetry_hz, spec->timeout_us, extras);
    uint64_t h = UINT64_C(14695981039346656037); // FNV-1a 64 offset basis
    for (const unsigned char *p = (const unsigned char *) text; *p; p++) {
        h ^= *p;
        h *= UINT64_C(1099511628211);
    }
    (void) snprintf(spec->run_id, sizeof spec->run_id, "r%016" PRIx64, h);
}

// A clock as GHz to 3 significant digits, "1.42G".
static void s_ghz(char *buf, size_t size, const char *what, int64_t hz)
{
    if (hz > 0) {
        (void) snprintf(buf, size, " %s%.3gG", what, (double) hz / 1e9);
    }
}

void jf_run_spec_power_label(const jf_run_spec_t *spec, char *buf, size_t size)
{
    const jf_run_custom_t *c = &spec->custom;
    char cpu[24] = "", gpu[24] = "", emc[24] = "";
    const char *dvfs = spec->dvfs_off ? " +dvfs-off" : "";
    if (c->n_cores == 0) {
        (void) snprintf(buf, size, "%s%s", spec->power_mode, dvfs);
        return;
    }
    s_ghz(cpu, sizeof cpu, "cpu", c->cpu_hz);
    s_ghz(gpu, sizeof gpu, "gpu", c->gpu_hz);
    s_ghz(emc, sizeof emc, "emc", c->emc_hz);
    (void) snprintf(buf, size, "custom %dc%s%s%s on %s%s", c->n_cores, cpu, gpu, emc,
                    spec->power_mode, dvfs);
}

static int s_check_range(const char *field, int64_t v, int64_t lo, int64_t hi, jf_err_t *err)
{
    if (v < lo || v > hi) {
        return jf_err_set(err, -EINVAL, "'%s' must be in [%lld, %lld], got %lld", field,
                          (long long) lo, (long long) hi, (long long) v);
    }
    return 0;
}

// The wire carries whole milliseconds, so a timeout must be one exactly (else it would not
// survive the JSON form), and the range is checked on microseconds before any division.
static int s_check_timeout(int64_t timeout_us, jf_err_t *err)
{
    if (timeout_us < JF_US_PER_S || timeout_us > JF_RUN_TIMEOUT_MAX_US) {
        return jf_err_set(err, -EINVAL, "'timeout_ms' must be in [1000, %lld], got %lld.%03lld",
                          (long long) (JF_RUN_TIMEOUT_MAX_US / JF_US_PER_MS),
                          (long long) (timeout_us / JF_US_PER_MS),
                          (long long) llabs(timeout_us % JF_US_PER_MS));
    }
    if (timeout_us % JF_US_PER_MS != 0) {
        return jf_err_set(err, -EINVAL, "'timeout_ms' must be whole milliseconds, got %lld us",
                          (long long) timeout_us);
    }
    return 0;
}

static int s_validate_names(const jf_run_spec_t *s, jf_err_t *err)
{
    if (!jf_parse_is_ident(s->board)) {
        return jf_err_set(err, -EINVAL, "'board' is not a valid name");
    }
    if (!jf_parse_is_ident(s->workload)) {
        return jf_err_set(err, -EINVAL, "'workload' is not a valid name");
    }
    if (!jf_run_spec_is_model(s->model)) {
        return jf_err_set(err, -EINVAL, "'model' must be one of %s", jf_run_spec_models());
    }
    if (!jf_run_spec_is_dataset(s->dataset)) {
        return jf_err_set(err, -EINVAL, "'dataset' must be one of %s", jf_run_spec_datasets());
    }
    if (!jf_board_is_mode_name(s->power_mode)) {
        return jf_err_set(err, -EINVAL, "'power_mode' must be 1..32 of [A-Za-z0-9_]");
    }
    if (!jf_run_spec_is_medium(s->storage)) {
        return jf_err_set(err, -EINVAL, "'storage' must be one of %s", jf_run_spec_media());
    }
    return 0;
}

static int s_check_clock(const char *field, int64_t hz, int64_t lo, jf_err_t *err)
{
    if (hz < lo || hz > JF_RUN_CLOCK_MAX_HZ) {
        return jf_err_set(err, -EINVAL, "'%s' must be in [%lld, %lld] Hz, got %lld", field,
                          (long long) lo, (long long) JF_RUN_CLOCK_MAX_HZ, (long long) hz);
    }
    return 0;
}

static int s_validate_custom(const jf_run_custom_t *c, jf_err_t *err)
{
    if (c->n_cores == 0) {
        bool clean = c->cpu_hz == 0 && c->gpu_hz == 0 && c->emc_hz == 0;
        return clean ? 0
                     : jf_err_set(err, -EINVAL, "'custom' has clocks but no 'cores': give both");
    }
    int rc = s_check_range("custom.cores", c->n_cores, 1, JF_RUN_CORES_MAX, err);
    rc = rc ? rc : s_check_clock("custom.cpu_hz", c->cpu_hz, 1000, err);
    if (rc == 0 && c->cpu_hz % 1000 != 0) {
        rc = jf_err_set(err, -EINVAL, "'custom.cpu_hz' must be whole kHz (cpufreq), got %lld",
                        (long long) c->cpu_hz);
    }
    rc = rc ? rc : s_check_clock("custom.gpu_hz", c->gpu_hz, 0, err);
    rc = rc ? rc : s_check_clock("custom.emc_hz", c->emc_hz, 0, err);
    return rc;
}

int jf_run_spec_validate(const jf_run_spec_t *s, jf_err_t *err)
{
    int rc = s_validate_names(s, err);
    if (rc == 0) {
        rc = s_check_range("epochs", s->epochs, 1, JF_EPOCHS_MAX, err);
    }
    if (rc == 0) {
        rc = s_check_range("power_mode_id", s->power_mode_id, 0, 255, err);
    }
    if (rc == 0) {
        rc = s_check_range("workers", s->workers, 0, JF_WORKERS_MAX, err);
    }
    if (rc == 0) {
        rc = s_check_range("prefetch", s->prefetch, 1, JF_PREFETCH_MAX, err);
    }
    if (rc == 0) {
        rc = s_check_range("batch_size", s->batch_size, 1, JF_BATCH_MAX, err);
    }
    if (rc == 0) {
        rc = s_check_range("repeat", s->repeat, 0, JF_REPEATS_MAX - 1, err);
    }
    if (rc == 0) {
        rc = s_check_range("threads", s->threads, 0, JF_THREADS_MAX, err);
    }
    if (rc == 0 && s->seed > (uint64_t) JF_SEED_MAX) {
        // Unsigned compare: masking or casting would let seeds at or above 2^63 through.
        rc = jf_err_set(err, -EINVAL, "'seed' must be in [0, %lld], got %llu",
                        (long long) JF_SEED_MAX, (unsigned long long) s->seed);
    }
    if (rc == 0) {
        rc = s_check_range("telemetry_hz", s->telemetry_hz, 1, JF_TELEMETRY_HZ_MAX, err);
    }
    if (rc == 0) {
        rc = s_check_timeout(s->timeout_us, err);
    }
    if (rc == 0) {
        rc = s_validate_custom(&s->custom, err);
    }
    return rc;
}

// The custom point's object: cores and cpu_hz, and the clocks it pins besides.
static json_t *s_custom_to_json(const jf_run_custom_t *c)
{
    json_t *o = json_pack("{s:i, s:I}", "cores", c->n_cores, "cpu_hz", (json_int_t) c->cpu_hz);
    if (o && c->gpu_hz > 0 && json_object_set_new(o, "gpu_hz", json_integer(c->gpu_hz)) != 0) {
        json_decref(o);
        return NULL;
    }
    if (o && c->emc_hz > 0 && json_object_set_new(o, "emc_hz", json_integer(c->emc_hz)) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

// custom and dvfs_off are written only when set, so that a run without them has exactly the
// form it had before they existed (and an older agent still reads it).
static json_t *s_add_extras(json_t *o, const jf_run_spec_t *s)
{
    if (o && s->custom.n_cores != 0 &&
        json_object_set_new(o, "custom", s_custom_to_json(&s->custom)) != 0) {
        json_decref(o);
        return NULL;
    }
    if (o && s->dvfs_off && json_object_set_new(o, "dvfs_off", json_true()) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *jf_run_spec_to_json(const jf_run_spec_t *s)
{
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:s, s:s, s:i, s:i, s:i, s:i, s:i, "
        "s:I, s:b, s:i, s:I}",
        "run", s->run_id, "board", s->board, "workload", s->workload, "model", s->model,
        "dataset", s->dataset, "epochs", s->epochs, "power_mode_id", s->power_mode_id,
        "power_mode", s->power_mode, "storage", s->storage, "workers", s->workers, "prefetch",
        s->prefetch, "batch_size", s->batch_size, "repeat", s->repeat, "threads", s->threads,
        "seed", (json_int_t) s->seed, "drop_caches", s->drop_caches, "telemetry_hz",
        s->telemetry_hz, "timeout_ms", (json_int_t) (s->timeout_us / JF_US_PER_MS));
    return s_add_extras(o, s);
}

static int s_copy_str(char *dst, size_t size, const char *src, const char *field, jf_err_t *err)
{
    size_t n = strlen(src);
    if (n >= size) {
        return jf_err_set(err, -EINVAL, "'%s' is longer than %zu bytes", field, size - 1);
    }
    memcpy(dst, src, n + 1);
    return 0;
}

static int s_int_field(const char *field, json_int_t v, int *dst, jf_err_t *err)
{
    if (v < INT32_MIN || v > INT32_MAX) {
        return jf_err_set(err, -EINVAL, "'%s' is out of range", field);
    }
    *dst = (int) v;
    return 0;
}

// The custom object, strictly: cores and cpu_hz required, gpu_hz and emc_hz optional.
static int s_custom_from_json(const json_t *obj, jf_run_custom_t *ret, jf_err_t *err)
{
    json_int_t cores = 0, cpu_hz = 0, gpu_hz = 0, emc_hz = 0;
    json_error_t jerr;
    if (json_unpack_ex((json_t *) obj, &jerr, JSON_STRICT, "{s:I, s:I, s?I, s?I}", "cores", &cores,
                       "cpu_hz", &cpu_hz, "gpu_hz", &gpu_hz, "emc_hz", &emc_hz) != 0) {
        return jf_err_set(err, -EPROTO, "run parameters: 'custom': %s", jerr.text);
    }
    if (cores < 1 || cores > JF_RUN_CORES_MAX) {
        return jf_err_set(err, -EINVAL, "'custom.cores' must be in [1, %d], got %lld",
                          JF_RUN_CORES_MAX, (long long) cores);
    }
    // The clocks' ranges are jf_run_spec_validate's (json_int_t is int64_t here).
    *ret = (jf_run_custom_t){.n_cores = (int) cores, .cpu_hz = cpu_hz, .gpu_hz = gpu_hz,
                             .emc_hz = emc_hz};
    return 0;
}

int jf_run_spec_from_json(const json_t *obj, jf_run_spec_t *ret_spec, jf_err_t *err)
{
    const char *run = NULL, *board = NULL, *workload = NULL, *model = NULL, *dataset = NULL;
    const char *mode = NULL, *storage = NULL;
    json_int_t epochs = 0, mode_id = 0, workers = 0, prefetch = 0, batch = 0, repeat = 0;
    json_int_t threads = 0, seed = 0, hz = 0, timeout_ms = 0;
    int drop = 0, dvfs_off = 0;
    json_t *custom = NULL;
    json_error_t jerr;
    if (json_unpack_ex((json_t *) obj, &jerr, JSON_STRICT,
                       "{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:I, "
                       "s:I, s:b, s:I, s:I, s?o, s?b}",
                       "run", &run, "board", &board, "workload", &workload, "model", &model,
                       "dataset", &dataset, "epochs", &epochs, "power_mode_id", &mode_id,
                       "power_mode", &mode, "storage", &storage, "workers", &workers, "prefetch",
                       &prefetch, "batch_size", &batch, "repeat", &repeat, "threads", &threads,
                       "seed", &seed, "drop_caches", &drop, "telemetry_hz", &hz, "timeout_ms",
                       &timeout_ms, "custom", &custom, "dvfs_off", &dvfs_off) != 0) {
        return jf_err_set(err, -EPROTO, "run parameters: %s", jerr.text);
    }
    jf_run_spec_t s = {0};
    int rc = custom ? s_custom_from_json(custom, &s.custom, err) : 0;
    rc = rc ? rc : s_copy_str(s.run_id, sizeof s.run_id, run, "run", err);
    rc = rc ? rc : s_copy_str(s.board, sizeof s.board, board, "board", err);
    rc = rc ? rc : s_copy_str(s.workload, sizeof s.workload, workload, "workload", err);
    rc = rc ? rc : s_copy_str(s.model, sizeof s.model, model, "model", err);
    rc = rc ? rc : s_copy_str(s.dataset, sizeof s.dataset, dataset, "dataset", err);
    rc = rc ? rc : s_copy_str(s.power_mode, sizeof s.power_mode, mode, "power_mode", err);
    rc = rc ? rc : s_copy_str(s.storage, sizeof s.storage, storage, "storage", err);
    rc = rc ? rc : s_int_field("epochs", epochs, &s.epochs, err);
    rc = rc ? rc : s_int_field("power_mode_id", mode_id, &s.power_mode_id, err);
    rc = rc ? rc : s_int_field("workers", workers, &s.workers, err);
    rc = rc ? rc : s_int_field("prefetch", prefetch, &s.prefetch, err);
    rc = rc ? rc : s_int_field("batch_size", batch, &s.batch_size, err);
    rc = rc ? rc : s_int_field("repeat", repeat, &s.repeat, err);
    rc = rc ? rc : s_int_field("threads", threads, &s.threads, err);
    rc = rc ? rc : s_int_field("telemetry_hz", hz, &s.telemetry_hz, err);
    if (rc != 0) {
        return rc;
    }
    if (seed < 0 || seed > JF_SEED_MAX) {
        return jf_err_set(err, -EINVAL, "'seed' must be in [0, 2^53]");
    }
    if (timeout_ms < 1000 || timeout_ms > JF_RUN_TIMEOUT_MAX_US / JF_US_PER_MS) {
        return jf_err_set(err, -EINVAL, "'timeout_ms' must be in [1000, %lld]",
                          (long long) (JF_RUN_TIMEOUT_MAX_US / JF_US_PER_MS));
    }
    s.seed = (uint64_t) seed;
    s.drop_caches = drop != 0;
    s.dvfs_off = dvfs_off != 0;
    s.timeout_us = (int64_t) timeout_ms * JF_US_PER_MS;
    if (!jf_run_spec_is_run_id(s.run_id)) {
        return jf_err_set(err, -EINVAL, "'run' must be 'r' followed by 16 lowercase hex digits");
    }
    rc = jf_run_spec_validate(&s, err);
    if (rc == 0) {
        *ret_spec = s;
    }
    return rc;
}
