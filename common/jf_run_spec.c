/* Run spec: stable id, validation and the JSON form (docs/protocol.md §5.2). */
#include "jf_run_spec.h"

#include "jf_units.h"
#include "jf_workload.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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

typedef struct s_id_text {
    const jf_run_spec_t *spec; // the run
    char *buf;                 // the text so far (NUL-terminated)
    size_t size;               // its buffer's size
} s_id_text_t;

// A field added after version 1 (id_append in the schema table) enters the text only when set,
// as "|name=value", so that every run without it keeps its id.
static int s_append_leaf(const jf_schema_leaf_t *leaf, void *arg)
{
    s_id_text_t *t = arg;
    const jf_schema_field_t *f = leaf->field;
    size_t used = strlen(t->buf);
    if (!f->id_append || !jf_schema_leaf_is_present(leaf, t->spec) || used >= t->size) {
        return 0;
    }
    if (f->type == JF_SCHEMA_STR && jf_schema_leaf_str(leaf, t->spec)[0] != '\0') {
        (void)snprintf(t->buf + used, t->size - used, "|%s=%s", leaf->name,
                       jf_schema_leaf_str(leaf, t->spec));
    } else if (f->type == JF_SCHEMA_NUM && jf_schema_leaf_num(leaf, t->spec) != 0.0) {
        (void)snprintf(t->buf + used, t->size - used, "|%s=%.17g", leaf->name,
                       jf_schema_leaf_num(leaf, t->spec));
    } else if (f->type != JF_SCHEMA_STR && f->type != JF_SCHEMA_NUM &&
               jf_schema_leaf_int(leaf, t->spec) != 0) {
        (void)snprintf(t->buf + used, t->size - used, "|%s=%" PRId64, leaf->name,
                       jf_schema_leaf_int(leaf, t->spec));
    }
    return 0;
}

static void s_appended_text(const jf_run_spec_t *spec, char *buf, size_t size)
{
    s_id_text_t t = {.spec = spec, .buf = buf, .size = size};
    (void)jf_schema_each_leaf(jf_run_spec_schema(), s_append_leaf, &t); // cannot fail
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
    s_appended_text(spec, buf, size);
}

void jf_run_spec_compute_id(jf_run_spec_t *spec)
{
    // Version 1 of the canonical form. Changing it changes every id: bump the version instead.
    // Later fields are appended only when not at their default, which keeps every earlier id.
    char text[1024] = {0};
    char extras[512] = {0}; // the power extras and every appended field, set at once
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

int jf_run_spec_validate(const jf_run_spec_t *s, jf_err_t *err)
{
    return jf_schema_validate(jf_run_spec_schema(), s, err);
}

json_t *jf_run_spec_to_json(const jf_run_spec_t *s)
{
    return jf_schema_encode(jf_run_spec_schema(), s);
}

int jf_run_spec_from_json(const json_t *obj, jf_run_spec_t *ret_spec, jf_err_t *err)
{
    jf_run_spec_t s = {0};
    int rc = jf_schema_decode(jf_run_spec_schema(), obj, &s, err);
    if (rc == 0) {
        *ret_spec = s;
    }
    return rc;
}
