/* Schema value checks: ranges and vocabularies from the field table, on wire values (decode)
 * and on struct values (validate). The messages are the ones the hand-written checkers gave
 * (tests/fixtures/messages/bad/ and run_spec_test pin them). docs/schema.md. */
#include "jf_schema_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

// Called for every field of every decoded record (a telemetry sample has hundreds): three
// copies, not snprintf, which cost the coordinator a tenth of its time at 10,000 samples/s.
int jf_schema_join(char *dst, size_t size, const char *a, const char *sep, const char *b)
{
    size_t la = strlen(a), ls = strlen(sep), lb = strlen(b);
    if (la + ls + lb >= size) {
        if (size > 0) {
            dst[0] = '\0';
        }
        return -ENAMETOOLONG;
    }
    memcpy(dst, a, la);
    memcpy(dst + la, sep, ls);
    memcpy(dst + la + ls, b, lb + 1);
    return 0;
}

int64_t jf_schema_scale(const jf_schema_field_t *f)
{
    return f->scale > 0 ? f->scale : 1;
}

void *jf_schema_member(const jf_schema_field_t *f, void *base)
{
    return (char *) base + f->offset;
}

const void *jf_schema_cmember(const jf_schema_field_t *f, const void *base)
{
    return (const char *) base + f->offset;
}

static const char *s_unit(const jf_schema_field_t *f)
{
    return f->say_unit && f->unit ? f->unit : "";
}

int jf_schema_check_int(const jf_schema_field_t *f, const char *name, int64_t v, jf_err_t *err)
{
    if (v < f->lo || v > f->hi) {
        return jf_err_set(err, -EINVAL,
                          "'%s' must be in [%" PRId64 ", %" PRId64 "]%s%s, got %" PRId64, name,
                          f->lo, f->hi, f->say_unit ? " " : "", s_unit(f), v);
    }
    return 0;
}

int jf_schema_check_u64(const jf_schema_field_t *f, const char *name, uint64_t v, jf_err_t *err)
{
    if (v > (uint64_t) f->hi || (f->lo > 0 && v < (uint64_t) f->lo)) {
        return jf_err_set(err, -EINVAL, "'%s' must be in [%" PRId64 ", %" PRId64 "], got %" PRIu64,
                          name, f->lo, f->hi, v);
    }
    return 0;
}

int jf_schema_check_num(const jf_schema_field_t *f, const char *name, double v, jf_err_t *err)
{
    if (!isfinite(v)) {
        return jf_err_set(err, -EINVAL, "'%s' must be a finite number", name);
    }
    if (v < f->lo_num || v > f->hi_num) {
        return jf_err_set(err, -EINVAL, "'%s' must be in [%g, %g], got %g", name, f->lo_num,
                          f->hi_num, v);
    }
    return 0;
}

int jf_schema_check_str(const jf_schema_field_t *f, const char *name, const char *s, jf_err_t *err)
{
    if (f->is_valid && !f->is_valid(s)) {
        return jf_err_set(err, -EINVAL, "'%s' %s", name, f->must ? f->must : "is not valid");
    }
    return 0;
}

// A struct value in the unit inside (us) is checked in the wire's (ms), and must be whole.
static int s_validate_scaled(const jf_schema_field_t *f, const char *name, int64_t v, jf_err_t *err)
{
    int64_t scale = jf_schema_scale(f);
    int rc = jf_schema_check_int(f, name, v / scale, err);
    if (rc == 0 && (v < f->lo * scale || v > f->hi * scale)) {
        // Truncation brought a value just outside the range inside it (999999 us -> 999 ms).
        rc = jf_err_set(err, -EINVAL,
                        "'%s' must be in [%" PRId64 ", %" PRId64 "], got %" PRId64 " %s", name,
                        f->lo, f->hi, v, f->unit ? f->unit : "");
    }
    if (rc == 0 && v % scale != 0) {
        rc = jf_err_set(err, -EINVAL,
                        "'%s' must be whole (a multiple of %" PRId64 " %s), got %" PRId64 " %s",
                        name, scale, f->unit ? f->unit : "", v, f->unit ? f->unit : "");
    }
    return rc;
}

static int s_validate_value(const jf_schema_field_t *f, const char *name, const void *m,
                            jf_err_t *err)
{
    switch (f->type) {
    case JF_SCHEMA_STR:
        return jf_schema_check_str(f, name, m, err);
    case JF_SCHEMA_INT:
        return s_validate_scaled(f, name, *(const int *) m, err);
    case JF_SCHEMA_I64:
        if (f->nullable && !f->has_flag && *(const int64_t *) m == JF_SCHEMA_NULL_I64) {
            return 0; // an array element that is null: not read
        }
        return s_validate_scaled(f, name, *(const int64_t *) m, err);
    case JF_SCHEMA_U64:
        return jf_schema_check_u64(f, name, *(const uint64_t *) m, err);
    case JF_SCHEMA_NUM:
        if (f->nullable && !f->has_flag && isnan(*(const double *) m)) {
            return 0; // an array element that is null: not read (a member has its has_ flag)
        }
        return jf_schema_check_num(f, name, *(const double *) m, err);
    case JF_SCHEMA_ENUM:
        return jf_schema_check_enum(f, name, *(const int *) m, err);
    default:
        return 0; // booleans have no range; nested records are walked by the caller
    }
}

bool jf_schema_is_set(const jf_schema_t *schema, const void *base)
{
    // A nested record is present when its first (key) field is: custom.cores 0 is no point.
    const jf_schema_field_t *f = &schema->fields[0];
    const void *m = jf_schema_cmember(f, base);
    switch (f->type) {
    case JF_SCHEMA_STR:
        return ((const char *) m)[0] != '\0';
    case JF_SCHEMA_INT:
        return *(const int *) m != 0;
    case JF_SCHEMA_I64:
        return *(const int64_t *) m != 0;
    case JF_SCHEMA_U64:
        return *(const uint64_t *) m != 0;
    case JF_SCHEMA_BOOL:
        return *(const bool *) m;
    case JF_SCHEMA_NUM:
        return *(const double *) m != 0.0;
    case JF_SCHEMA_ENUM:
        return *(const int *) m != 0;
    case JF_SCHEMA_ARR:
        return jf_schema_arr_count(f, base) != 0;
    default:
        return false;
    }
}

bool jf_schema_field_is_present(const jf_schema_field_t *f, const void *base)
{
    if (f->has_flag) {
        return *(const bool *) ((const char *) base + f->has_offset);
    }
    // A required nested record is always there; an optional one when its key field is set.
    return f->type != JF_SCHEMA_OBJ || !f->optional ||
           jf_schema_is_set(f->sub, jf_schema_cmember(f, base));
}

static int s_validate_fields(const jf_schema_t *schema, const void *base, const char *prefix,
                             jf_err_t *err);

// Every element of an array, named "name[i]".
static int s_validate_arr(const jf_schema_field_t *f, const char *name, const void *base,
                          jf_err_t *err)
{
    size_t n = jf_schema_arr_count(f, base);
    if (n > f->max_count) {
        return jf_err_set(err, -EINVAL, "'%s' must have at most %zu items, got %zu", name,
                          f->max_count, n);
    }
    const char *arr = jf_schema_cmember(f, base);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const void *e = arr + i * f->elem_size;
        rc = f->sub ? s_validate_fields(f->sub, e, "", err) : s_validate_value(f->elem, "", e, err);
        rc = rc || !f->sub || !f->sub->check ? rc : f->sub->check(e, err);
        if (rc != 0) {
            (void) jf_err_prefix(err, "%s[%zu]", name, i);
        }
    }
    return rc;
}

static int s_validate_fields(const jf_schema_t *schema, const void *base, const char *prefix,
                             jf_err_t *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < schema->n_fields; i++) {
        const jf_schema_field_t *f = &schema->fields[i];
        char name[JF_SCHEMA_NAME_MAX + 1] = {0};
        const jf_schema_t one = {.fields = f, .n_fields = 1};
        bool omitted = f->omit_zero && f->type != JF_SCHEMA_OBJ && !jf_schema_is_set(&one, base);
        if (f->derived || omitted || !jf_schema_field_is_present(f, base) ||
            jf_schema_join(name, sizeof name, prefix, "", f->name) != 0) {
            continue; // absent (an omit_zero field at zero is left out of the JSON form too), or
                      // a name too long for the buffer: the table test refuses such a table
        }
        if (f->type == JF_SCHEMA_OBJ) {
            char sub[JF_SCHEMA_NAME_MAX + 2] = {0};
            rc = jf_schema_join(sub, sizeof sub, name, ".", "");
            rc = rc ? rc : s_validate_fields(f->sub, jf_schema_cmember(f, base), sub, err);
            rc = rc || !f->sub->check ? rc : f->sub->check(jf_schema_cmember(f, base), err);
        } else if (f->type == JF_SCHEMA_ARR) {
            rc = s_validate_arr(f, name, base, err);
        } else {
            rc = s_validate_value(f, name, jf_schema_cmember(f, base), err);
        }
    }
    return rc;
}

int jf_schema_validate(const jf_schema_t *schema, const void *rec, jf_err_t *err)
{
    int rc = s_validate_fields(schema, rec, "", err);
    if (rc == 0 && schema->check) {
        rc = schema->check(rec, err);
    }
    return rc;
}
