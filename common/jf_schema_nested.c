/* Schema enums and arrays: an enum's wire names, and arrays of records (rails, cache entries)
 * or of scalars (online CPUs) with a maximum count, in the struct as a fixed array and a count.
 * Also an open schema's kept members. Used by jf_schema_json.c; docs/schema.md. */
#include "jf_schema_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int jf_schema_check_enum(const jf_schema_field_t *f, const char *name, int v, jf_err_t *err)
{
    for (int i = 0; f->names[i]; i++) {
        if (i == v) {
            return 0;
        }
    }
    return jf_err_set(err, -EINVAL, "'%s' %s", name, f->must ? f->must : "is not a known name");
}

int jf_schema_decode_enum(const jf_schema_field_t *f, const char *name, const json_t *v, void *m,
                          jf_err_t *err)
{
    const char *text = json_string_value(v);
    for (int i = 0; text && f->names[i]; i++) {
        if (strcmp(text, f->names[i]) == 0) {
            *(int *) m = i;
            return 0;
        }
    }
    return jf_schema_check_enum(f, name, -1, err);
}

json_t *jf_schema_encode_enum(const jf_schema_field_t *f, const void *m)
{
    int v = *(const int *) m;
    return jf_schema_check_enum(f, f->name, v, NULL) == 0 ? json_string(f->names[v]) : NULL;
}

size_t jf_schema_arr_count(const jf_schema_field_t *f, const void *base)
{
    return *(const size_t *) ((const char *) base + f->count_offset);
}

// A record element's errors are prefixed "label[i]: "; a scalar's name it ("'cpus[3]' must ...").
static int s_decode_elem(const jf_schema_field_t *f, const char *label, size_t i, const json_t *x,
                         void *e, jf_err_t *err)
{
    if (!f->sub) {
        const jf_schema_field_t *t = f->elem;
        bool is_int = t->type == JF_SCHEMA_INT || t->type == JF_SCHEMA_I64;
        bool null_ok = t->nullable && json_is_null(x);
        bool int_bad = is_int && !null_ok &&
                       (!json_is_integer(x) || json_integer_value(x) < t->lo ||
                        json_integer_value(x) > t->hi);
        // The element's name is made only for an error: arrays of telemetry samples are long.
        if (!int_bad && jf_schema_decode_scalar(t, "", x, e, NULL) == 0) {
            return 0;
        }
        char name[JF_SCHEMA_NAME_MAX + 24] = {0};
        (void) snprintf(name, sizeof name, "%s[%zu]", label, i); // a long label is cut, not lost
        if (int_bad) {
            // The words the measure checker gave an online CPU ("'online_cpus[0]' must be ...").
            return jf_err_set(err, -EINVAL, "'%s' must be an integer in [%lld, %lld]", name,
                              (long long) t->lo, (long long) t->hi);
        }
        return jf_schema_decode_scalar(t, name, x, e, err);
    }
    int rc = json_is_object(x) ? jf_schema_decode_level(f->sub, x, e, "", err)
                               : jf_err_set(err, -EPROTO, "must be an object");
    rc = rc || !f->sub->check ? rc : f->sub->check(e, err);
    return rc ? jf_err_prefix(err, "%s[%zu]", label, i) : 0;
}

// A map's member: its name into the record's first field, its value into the second.
static int s_decode_entry(const jf_schema_field_t *f, const char *label, const char *key,
                          const json_t *x, void *e, jf_err_t *err)
{
    const jf_schema_field_t *kf = &f->sub->fields[0], *vf = &f->sub->fields[1];
    size_t len = strlen(key);
    if (len < kf->size) {
        memcpy(jf_schema_member(kf, e), key, len + 1);
        if (jf_schema_decode_scalar(vf, "", x, jf_schema_member(vf, e), NULL) == 0) {
            return 0; // the member's name is made only for an error
        }
    }
    char name[JF_SCHEMA_NAME_MAX + 80] = {0};
    (void) snprintf(name, sizeof name, "%s.%.64s", label, key); // cut, not lost, when long
    if (len >= kf->size) {
        return jf_err_set(err, -EINVAL, "'%s': the name is longer than %zu bytes", name,
                          kf->size - 1);
    }
    return jf_schema_decode_scalar(vf, name, x, jf_schema_member(vf, e), err);
}

static int s_decode_map(const jf_schema_field_t *f, const char *label, const json_t *v, void *base,
                        jf_err_t *err)
{
    if (!json_is_object(v) || json_object_size(v) > f->max_count) {
        return jf_err_set(err, -EPROTO, "'%s' must be an object of at most %zu members", label,
                          f->max_count);
    }
    char *arr = jf_schema_member(f, base);
    size_t i = 0;
    const char *k = NULL;
    json_t *x = NULL;
    json_object_foreach((json_t *) v, k, x)
    {
        int rc = s_decode_entry(f, label, k, x, arr + i++ * f->elem_size, err);
        if (rc != 0) {
            return rc;
        }
    }
    *(size_t *) ((char *) base + f->count_offset) = i;
    return 0;
}

int jf_schema_decode_arr(const jf_schema_field_t *f, const char *label, const json_t *v, void *base,
                         jf_err_t *err)
{
    if (f->map) {
        return s_decode_map(f, label, v, base, err);
    }
    if (!json_is_array(v) || json_array_size(v) > f->max_count) {
        return jf_err_set(err, -EPROTO, "'%s' must be an array of at most %zu items", label,
                          f->max_count);
    }
    char *arr = jf_schema_member(f, base);
    size_t i = 0;
    const json_t *x = NULL;
    json_array_foreach(v, i, x)
    {
        int rc = s_decode_elem(f, label, i, x, arr + i * f->elem_size, err);
        if (rc != 0) {
            return rc;
        }
    }
    *(size_t *) ((char *) base + f->count_offset) = json_array_size(v);
    return 0;
}

static json_t *s_encode_map(const jf_schema_field_t *f, const void *base)
{
    const char *arr = jf_schema_cmember(f, base);
    size_t n = jf_schema_arr_count(f, base);
    json_t *o = n <= f->max_count ? json_object() : NULL;
    for (size_t i = 0; o && i < n; i++) {
        const void *e = arr + i * f->elem_size;
        const jf_schema_field_t *kf = &f->sub->fields[0], *vf = &f->sub->fields[1];
        json_t *x = jf_schema_encode_scalar(vf, jf_schema_cmember(vf, e));
        if (!x || json_object_set_new(o, jf_schema_cmember(kf, e), x) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

json_t *jf_schema_encode_arr(const jf_schema_field_t *f, const void *base)
{
    if (f->map) {
        return s_encode_map(f, base);
    }
    const char *arr = jf_schema_cmember(f, base);
    size_t n = jf_schema_arr_count(f, base);
    json_t *a = n <= f->max_count ? json_array() : NULL;
    for (size_t i = 0; a && i < n; i++) {
        const void *e = arr + i * f->elem_size;
        json_t *x =
            f->sub ? jf_schema_encode_level(f->sub, e) : jf_schema_encode_scalar(f->elem, e);
        if (!x || json_array_append_new(a, x) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static bool s_is_known(const jf_schema_t *schema, const char *key)
{
    for (size_t i = 0; i < schema->n_fields; i++) {
        if (strcmp(schema->fields[i].name, key) == 0) {
            return true;
        }
    }
    return false;
}

int jf_schema_keep_extra(const jf_schema_t *schema, const json_t *obj, void *base)
{
    json_t **extra = (json_t **) ((char *) base + schema->extra_offset);
    const char *k = NULL;
    json_t *v = NULL;
    json_object_foreach((json_t *) obj, k, v)
    {
        if (s_is_known(schema, k)) {
            continue;
        }
        *extra = *extra ? *extra : json_object();
        if (!*extra || json_object_set_new(*extra, k, json_deep_copy(v)) != 0) {
            return -ENOMEM;
        }
    }
    return 0;
}

void jf_schema_fini(const jf_schema_t *schema, void *rec)
{
    if (schema->keep_extra) {
        json_t **extra = (json_t **) ((char *) rec + schema->extra_offset);
        json_decref(*extra);
        *extra = NULL;
    }
}
