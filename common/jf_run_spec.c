/* Run spec: stable id, validation and the JSON form (docs/protocol.md, "Run parameters"). */
#include "jf_run_spec.h"

#include "jf_units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JF_SEED_MAX (INT64_C(1) << 53) // exactly representable in every JSON reader

static const char *const s_models[] = {"lenet5", "resnet18", "vgg11", "mobilenetv3"};
static const char *const s_datasets[] = {"mnist", "cifar10", "gld23k"};
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

bool jf_run_spec_is_model(const char *name)
{
    return s_in_list(name, s_models, sizeof s_models / sizeof s_models[0]);
}

bool jf_run_spec_is_dataset(const char *name)
{
    return s_in_list(name, s_datasets, sizeof s_datasets / sizeof s_datasets[0]);
}

bool jf_run_spec_is_medium(const char *name)
{
    return s_in_list(name, s_media, sizeof s_media / sizeof s_media[0]);
}

const char *jf_run_spec_models(void)
{
    return "lenet5, resnet18, vgg11, mobilenetv3";
}

const char *jf_run_spec_datasets(void)
{
    return "mnist, cifar10, gld23k";
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

void jf_run_spec_compute_id(jf_run_spec_t *spec)
{
    // Version 1 of the canonical form. Changing it changes every id: bump the version instead.
    char text[1024] = {0};
    (void) snprintf(text, sizeof text,
                    "jf-run-v1|%s|%s|%s|%s|%d|%d|%s|%s|%d|%d|%d|%d|%d|%" PRIu64 "|%d|%d|%" PRId64,
                    spec->board, spec->workload, spec->model, spec->dataset, spec->epochs,
                    spec->power_mode_id, spec->power_mode, spec->storage, spec->workers,
                    spec->prefetch, spec->batch_size, spec->repeat, spec->threads, spec->seed,
                    spec->drop_caches ? 1 : 0, spec->telemetry_hz, spec->timeout_us);
    uint64_t h = UINT64_C(14695981039346656037); // FNV-1a 64 offset basis
    for (const unsigned char *p = (const unsigned char *) text; *p; p++) {
        h ^= *p;
        h *= UINT64_C(1099511628211);
    }
    (void) snprintf(spec->run_id, sizeof spec->run_id, "r%016" PRIx64, h);
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
    return rc;
}

json_t *jf_run_spec_to_json(const jf_run_spec_t *s)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:s, s:s, s:i, s:i, s:i, s:i, s:i, "
                     "s:I, s:b, s:i, s:I}",
                     "run", s->run_id, "board", s->board, "workload", s->workload, "model",
                     s->model, "dataset", s->dataset, "epochs", s->epochs, "power_mode_id",
                     s->power_mode_id, "power_mode", s->power_mode, "storage", s->storage,
                     "workers", s->workers, "prefetch", s->prefetch, "batch_size", s->batch_size,
                     "repeat", s->repeat, "threads", s->threads, "seed", (json_int_t) s->seed,
                     "drop_caches", s->drop_caches, "telemetry_hz", s->telemetry_hz, "timeout_ms",
                     (json_int_t) (s->timeout_us / JF_US_PER_MS));
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

int jf_run_spec_from_json(const json_t *obj, jf_run_spec_t *ret_spec, jf_err_t *err)
{
    const char *run = NULL, *board = NULL, *workload = NULL, *model = NULL, *dataset = NULL;
    const char *mode = NULL, *storage = NULL;
    json_int_t epochs = 0, mode_id = 0, workers = 0, prefetch = 0, batch = 0, repeat = 0;
    json_int_t threads = 0, seed = 0, hz = 0, timeout_ms = 0;
    int drop = 0;
    json_error_t jerr;
    if (json_unpack_ex((json_t *) obj, &jerr, JSON_STRICT,
                       "{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:I, "
                       "s:I, s:b, s:I, s:I}",
                       "run", &run, "board", &board, "workload", &workload, "model", &model,
                       "dataset", &dataset, "epochs", &epochs, "power_mode_id", &mode_id,
                       "power_mode", &mode, "storage", &storage, "workers", &workers, "prefetch",
                       &prefetch, "batch_size", &batch, "repeat", &repeat, "threads", &threads,
                       "seed", &seed, "drop_caches", &drop, "telemetry_hz", &hz, "timeout_ms",
                       &timeout_ms) != 0) {
        return jf_err_set(err, -EPROTO, "run parameters: %s", jerr.text);
    }
    jf_run_spec_t s = {0};
    int rc = s_copy_str(s.run_id, sizeof s.run_id, run, "run", err);
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
