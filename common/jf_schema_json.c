/* Schema JSON codec: decode a JSON object into the typed struct a schema describes, checking
 * shape then values, and encode the struct back. Not for messages' envelopes (jf_msg.c). The
 * forms are docs/protocol.md's; docs/schema.md lists the fields. */
#include "jf_schema_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *s_json_kind(const json_t *v)
{
    static const char *const names[] = {"object", "array", "string", "integer",
                                        "real",   "true",  "false",  "null"};
    return names[json_typeof(v)];
}

static const char *s_wanted(const jf_schema_field_t *f)
{
    static const char *const wanted[] = {
        [JF_SCHEMA_STR] = "a string",   [JF_SCHEMA_INT] = "an integer",
        [JF_SCHEMA_I64] = "an integer", [JF_SCHEMA_U64] = "an integer",
        [JF_SCHEMA_BOOL] = "a boolean", [JF_SCHEMA_NUM] = "a finite number",
        [JF_SCHEMA_OBJ] = "an object",  [JF_SCHEMA_ENUM] = "a string",
        [JF_SCHEMA_ARR] = "an array",
    };
    return f->nullable ? "a number or null" : wanted[f->type];
}

static bool s_type_ok(const jf_schema_field_t *f, const json_t *v)
{
    switch (f->type) {
    case JF_SCHEMA_STR:
        return json_is_string(v);
    case JF_SCHEMA_INT:
    case JF_SCHEMA_I64:
    case JF_SCHEMA_U64:
        return json_is_integer(v);
    case JF_SCHEMA_BOOL:
        return json_is_boolean(v);
    case JF_SCHEMA_NUM:
        return json_is_number(v) || (f->nullable && json_is_null(v));
    case JF_SCHEMA_ENUM:
        return json_is_string(v);
    case JF_SCHEMA_ARR:
        return f->map ? json_is_object(v) : json_is_array(v);
    default:
        return json_is_object(v);
    }
}

// A member of the wrong type or missing. An enum says its names; an array its most items,
// prefixed with the path ("measure: 'cache' ..."); a nested record in a schema with a path is
// prefixed with the path and its name ("measure.telemetry: 'telemetry' must be an object").
static int s_member_type_error(const jf_schema_t *schema, const jf_schema_field_t *f,
                               const char *prefix, const char *got, jf_err_t *err)
{
    // The run parameters' words put a colon after the member (jansson's did).
    const char *colon = schema->words == JF_SCHEMA_WORDS_UNPACK ? ":" : "";
    int rc = 0;
    if (f->type == JF_SCHEMA_ENUM && f->must) {
        rc = jf_err_set(err, -EPROTO, "'%s%s' %s, got %s", prefix, f->name, f->must, got);
    } else if (f->type == JF_SCHEMA_ARR) {
        rc = jf_err_set(err, -EPROTO, "'%s%s' must be %s of at most %zu %s, got %s", prefix,
                        f->name, f->map ? "an object" : "an array", f->max_count,
                        f->map ? "members" : "items", got);
    } else {
        rc = jf_err_set(err, -EPROTO, "'%s%s'%s must be %s, got %s", prefix, f->name, colon,
                        s_wanted(f), got);
    }
    if (schema->path && f->type == JF_SCHEMA_ARR) {
        return jf_err_prefix(err, "%s", schema->path);
    }
    if (schema->path && f->type == JF_SCHEMA_OBJ) {
        return jf_err_prefix(err, "%s.%s", schema->path, f->name);
    }
    return rc;
}

// Presence and type of every field, before any value is looked at (as json_unpack did).
static int s_check_members(const jf_schema_t *schema, const json_t *obj, const char *prefix,
                           jf_err_t *err)
{
    for (size_t i = 0; i < schema->n_fields; i++) {
        const jf_schema_field_t *f = &schema->fields[i];
        const json_t *v = json_object_get(obj, f->name);
        if (!v && !f->optional && schema->words == JF_SCHEMA_WORDS_UNPACK) {
            return jf_err_set(err, -EPROTO, "Object item not found: %s", f->name);
        }
        if ((v || !f->optional) && !s_type_ok(f, v)) {
            const char *got = v ? s_json_kind(v) : "nothing";
            return s_member_type_error(schema, f, prefix, got, err);
        }
    }
    return 0;
}

static bool s_is_known(const jf_schema_t *schema, const char *key)
{
    for (size_t i = 0; i < schema->n_fields; i++) {
        if (strcmp(schema->fields[i].name, key) == 0) {
            return true;
        }
    }
    for (const char *const *p = schema->also_allowed; p && *p; p++) {
        if (strcmp(*p, key) == 0) {
            return true;
        }
    }
    return false;
}

static int s_check_unknown(const jf_schema_t *schema, const json_t *obj, jf_err_t *err)
{
    if (schema->open) {
        return 0; // a telemetry sample: members the table does not know are kept, not refused
    }
    char list[JF_ERR_MSG_MAX] = {0};
    size_t n = 0, used = 0;
    const char *k = NULL;
    json_t *v = NULL;
    json_object_foreach((json_t *) obj, k, v)
    {
        (void) v;
        if (s_is_known(schema, k)) {
            continue;
        }
        if (schema->words == JF_SCHEMA_WORDS_MEMBER) {
            return jf_err_set(err, -EPROTO, "unknown member '%.64s'", k);
        }
        int w = snprintf(list + used, sizeof list - used, "%s%.64s", n ? ", " : "", k);
        used = w > 0 && used + (size_t) w < sizeof list ? used + (size_t) w : used;
        n++;
    }
    return n == 0 ? 0 : jf_err_set(err, -EPROTO, "%zu object item(s) left unpacked: %s", n, list);
}

static int s_decode_str(const jf_schema_field_t *f, const char *name, const json_t *v, void *m,
                        jf_err_t *err)
{
    size_t n = json_string_length(v);
    if (n >= f->size) {
        return jf_err_set(err, -EINVAL, "'%s' is longer than %zu bytes", name, f->size - 1);
    }
    memcpy(m, json_string_value(v), n + 1);
    return jf_schema_check_str(f, name, m, err);
}

static int s_decode_int(const jf_schema_field_t *f, const char *name, const json_t *v, void *m,
                        jf_err_t *err)
{
    int64_t x = json_integer_value(v);
    int rc = jf_schema_check_int(f, name, x, err);
    if (rc != 0) {
        return rc;
    }
    // The table test checks that hi * scale fits the member, so these cannot overflow.
    int64_t inside = x * jf_schema_scale(f);
    if (f->type == JF_SCHEMA_INT) {
        *(int *) m = (int) inside;
    } else if (f->type == JF_SCHEMA_I64) {
        *(int64_t *) m = inside;
    } else {
        *(uint64_t *) m = (uint64_t) inside;
    }
    return 0;
}

int jf_schema_decode_scalar(const jf_schema_field_t *f, const char *name, const json_t *v, void *m,
                            jf_err_t *err)
{
    if (f->nullable && json_is_null(v) && f->type == JF_SCHEMA_I64) {
        *(int64_t *) m = JF_SCHEMA_NULL_I64; // an array element that could not be read
        return 0;
    }
    if (f->nullable && json_is_null(v) && f->type == JF_SCHEMA_NUM) {
        *(double *) m = NAN;
        return 0;
    }
    if (!s_type_ok(f, v) || f->type == JF_SCHEMA_OBJ || f->type == JF_SCHEMA_ARR) {
        return jf_err_set(err, -EPROTO, "'%s' must be %s, got %s", name, s_wanted(f),
                          s_json_kind(v));
    }
    switch (f->type) {
    case JF_SCHEMA_STR:
        return s_decode_str(f, name, v, m, err);
    case JF_SCHEMA_BOOL:
        *(bool *) m = json_is_true(v);
        return 0;
    case JF_SCHEMA_NUM:
        *(double *) m = json_number_value(v);
        return jf_schema_check_num(f, name, *(double *) m, err);
    case JF_SCHEMA_ENUM:
        return jf_schema_decode_enum(f, name, v, m, err);
    default:
        return s_decode_int(f, name, v, m, err);
    }
}

// A nested record. In a schema with a path its errors name the member bare, prefixed with the
// path ("measure.energy: 'total' ..."); otherwise by its dotted name ("'custom.cores' ...").
static int s_decode_obj(const jf_schema_t *schema, const jf_schema_field_t *f, const char *name,
                        const json_t *v, void *base, jf_err_t *err)
{
    char sub[JF_SCHEMA_NAME_MAX + 2] = {0};
    int rc = jf_schema_join(sub, sizeof sub, schema->path ? "" : name, schema->path ? "" : ".", "");
    rc = rc ? rc : jf_schema_decode_level(f->sub, v, jf_schema_member(f, base), sub, err);
    rc = rc || !f->sub->check ? rc : f->sub->check(jf_schema_member(f, base), err);
    if (rc != 0 && schema->path) {
        return jf_err_prefix(err, "%s.%s", schema->path, f->name);
    }
    if (rc == -EPROTO) {
        (void) jf_err_prefix(err, "'%s'", name); // "'custom': ... left unpacked: x"
    }
    return rc;
}

static int s_decode_field(const jf_schema_t *schema, const jf_schema_field_t *f, const char *name,
                          const json_t *v, void *base, jf_err_t *err)
{
    if (f->type == JF_SCHEMA_OBJ) {
        return s_decode_obj(schema, f, name, v, base, err);
    }
    if (f->type != JF_SCHEMA_ARR) {
        return jf_schema_decode_scalar(f, name, v, jf_schema_member(f, base), err);
    }
    char label[JF_SCHEMA_NAME_MAX + 1] = {0};
    int rc = schema->path ? jf_schema_join(label, sizeof label, schema->path, ".", f->name)
                          : jf_schema_join(label, sizeof label, name, "", "");
    return rc ? rc : jf_schema_decode_arr(f, label, v, base, err);
}

int jf_schema_decode_level(const jf_schema_t *schema, const json_t *obj, void *base,
                           const char *prefix, jf_err_t *err)
{
    int rc = s_check_members(schema, obj, prefix, err);
    rc = rc ? rc : s_check_unknown(schema, obj, err);
    rc = rc || !schema->check_json ? rc : schema->check_json(obj, err);
    for (size_t i = 0; rc == 0 && i < schema->n_fields; i++) {
        const jf_schema_field_t *f = &schema->fields[i];
        const json_t *v = json_object_get(obj, f->name);
        if (!v || json_is_null(v)) {
            continue; // optional (s_check_members refused a missing required one): stays zero
        }
        char name[JF_SCHEMA_NAME_MAX + 1] = {0};
        rc = jf_schema_join(name, sizeof name, prefix, "", f->name);
        rc = rc ? rc : s_decode_field(schema, f, name, v, base, err);
        if (rc == 0 && f->has_flag) {
            *(bool *) ((char *) base + f->has_offset) = true;
        }
    }
    if (rc == 0 && schema->keep_extra) {
        rc = jf_schema_keep_extra(schema, obj, base) == 0
                 ? 0
                 : jf_err_set(err, -ENOMEM, "out of memory");
    }
    return rc;
}

int jf_schema_decode(const jf_schema_t *schema, const json_t *obj, void *rec, jf_err_t *err)
{
    int rc = json_is_object(obj) ? jf_schema_decode_level(schema, obj, rec, "", err)
                                 : jf_err_set(err, -EPROTO, "must be an object");
    if (rc == -EPROTO && schema->context) {
        (void) jf_err_prefix(err, "%s", schema->context);
    }
    if (rc == 0 && schema->check) {
        rc = schema->check(rec, err);
    }
    return rc;
}

// omit_zero: a field at zero is left out (so a run without a custom point keeps the form it
// had before the point existed). jf_schema_is_set reads the first field of a table of one.
static bool s_is_zero(const jf_schema_field_t *f, const void *base)
{
    const jf_schema_t one = {.fields = f, .n_fields = 1};
    return f->type != JF_SCHEMA_OBJ && !jf_schema_is_set(&one, base);
}

json_t *jf_schema_encode_scalar(const jf_schema_field_t *f, const void *m)
{
    int64_t scale = jf_schema_scale(f);
    switch (f->type) {
    case JF_SCHEMA_STR:
        return json_string(m);
    case JF_SCHEMA_INT:
        return json_integer(*(const int *) m / scale);
    case JF_SCHEMA_I64:
        if (f->nullable && *(const int64_t *) m == JF_SCHEMA_NULL_I64) {
            return json_null();
        }
        return json_integer(*(const int64_t *) m / scale);
    case JF_SCHEMA_U64:
        return json_integer((json_int_t) (*(const uint64_t *) m / (uint64_t) scale));
    case JF_SCHEMA_BOOL:
        return json_boolean(*(const bool *) m);
    case JF_SCHEMA_NUM:
        // JSON has no NaN or infinity: a nullable number that is not finite is absent (null).
        if (!isfinite(*(const double *) m)) {
            return f->nullable ? json_null() : NULL;
        }
        return json_real(*(const double *) m);
    case JF_SCHEMA_ENUM:
        return jf_schema_encode_enum(f, m);
    default:
        return NULL; // records and arrays: jf_schema_encode_level
    }
}

static json_t *s_encode_value(const jf_schema_field_t *f, const void *base)
{
    if (f->type == JF_SCHEMA_OBJ) {
        return jf_schema_encode_level(f->sub, jf_schema_cmember(f, base));
    }
    if (f->type == JF_SCHEMA_ARR) {
        return jf_schema_encode_arr(f, base);
    }
    return jf_schema_encode_scalar(f, jf_schema_cmember(f, base));
}

// An open schema's kept members go back as they came, after the known ones.
static int s_encode_extra(const jf_schema_t *schema, const void *base, json_t *o)
{
    const json_t *extra = *(json_t *const *) ((const char *) base + schema->extra_offset);
    return !schema->keep_extra || !extra ? 0 : json_object_update_missing(o, (json_t *) extra);
}

json_t *jf_schema_encode_level(const jf_schema_t *schema, const void *base)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < schema->n_fields; i++) {
        const jf_schema_field_t *f = &schema->fields[i];
        bool present = jf_schema_field_is_present(f, base);
        if ((!present && !f->nullable) || (present && f->omit_zero && s_is_zero(f, base))) {
            continue;
        }
        json_t *v = present ? s_encode_value(f, base) : json_null();
        if (!v || json_object_set_new(o, f->name, v) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    if (o && s_encode_extra(schema, base, o) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *jf_schema_encode(const jf_schema_t *schema, const void *rec)
{
    return jf_schema_encode_level(schema, rec);
}
